#include "models/deadlettermodel.h"

#include <QDateTime>
#include <QJsonDocument>

namespace cmq::admingui {

DeadLetterModel::DeadLetterModel(QObject *parent) : JsonTableModel(parent)
{
}

QString DeadLetterModel::request() const
{
    return QStringLiteral("dead_letters %1 %2").arg(m_queue).arg(m_fetchCount);
}

bool DeadLetterModel::applyReply(const QString &requestLine, const QJsonArray &deadLetters)
{
    if (requestLine != request())
        return false;
    update(deadLetters);
    m_loaded = true;
    return true;
}

QString DeadLetterModel::requeueRequest() const
{
    if (rowCount() == 0)
        return {};
    return QStringLiteral("requeue %1 %2").arg(m_queue).arg(rowCount());
}

QString DeadLetterModel::requeueConfirmation() const
{
    QStringList origins;
    for (int row = 0; row < rowCount(); ++row) {
        const QString origin = rowObject(row).value(u"original_queue").toString();
        if (!origins.contains(origin))
            origins.append(origin);
    }
    origins.sort();
    const QString more =
        mayHoldMore()
            ? tr(" The queue may hold more than these %1; the others stay.").arg(rowCount())
            : QString();
    return tr("Requeue %n dead letter(s) from '%1' back to the queue(s) they came from (%2)? "
              "They join the back of those queues as new messages, without their dead-letter "
              "record.",
              nullptr, rowCount())
               .arg(m_queue, origins.join(QStringLiteral(", "))) +
           more;
}

QString DeadLetterModel::requeueResult(bool ok, const QString &reply)
{
    if (!ok)
        return tr("Requeue failed: %1").arg(reply);
    const QJsonObject object = QJsonDocument::fromJson(reply.toUtf8()).object();
    return tr("Requeued %1 message(s) from '%2' to the queues they came from.")
        .arg(object.value(u"requeued").toInteger())
        .arg(object.value(u"queue").toString());
}

QString DeadLetterModel::reasonText(const QString &reason)
{
    if (reason == QLatin1String("rejected"))
        return tr("rejected (nack … drop)");
    if (reason == QLatin1String("expired"))
        return tr("expired (TTL)");
    if (reason == QLatin1String("overflow"))
        return tr("overflow (drop-head)");
    if (reason == QLatin1String("delivery_limit"))
        return tr("delivery limit");
    return reason;
}

QString DeadLetterModel::keyOf(const QJsonObject &row) const
{
    // The broker numbers no dead letter; one message dead-lettered twice from one queue at the
    // same millisecond is the only clash, and would show once.
    return row.value(u"message_id").toString() + u'\x1f' + row.value(u"original_queue").toString() +
           u'\x1f' + row.value(u"dead_lettered_at").toString();
}

QStringList DeadLetterModel::headers() const
{
    return {tr("Message id"), tr("Reason"), tr("Original queue"), tr("Dead-lettered (UTC)"),
            tr("Deliveries"), tr("Sender"), tr("Routing key"),    tr("Size")};
}

QVariant DeadLetterModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case MessageId:
        return row.value(u"message_id").toString();
    case Reason:
        return reasonText(row.value(u"reason").toString());
    case OriginalQueue:
        return row.value(u"original_queue").toString();
    case DeadLetteredAt: {
        const QString text = row.value(u"dead_lettered_at").toString();
        const QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
        return time.isValid() ? time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"))
                              : text;
    }
    case Deliveries:
        return row.value(u"delivery_count").toDouble();
    case Sender:
        return row.value(u"sender").toString();
    case RoutingKey:
        return row.value(u"routing_key").toString();
    case Size:
        return row.value(u"bytes").toDouble();
    default:
        return {};
    }
}

} // namespace cmq::admingui
