#include "publishstore.h"

#include <QSqlQuery>
#include <QStringDecoder>

#include "publishwriter.h"

namespace cmq::storage {

namespace {

bool isValidUtf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString decoded = decoder.decode(bytes);
    return !decoder.hasError();
}

// Keys of the primary and unique indexes stay far below PostgreSQL's B-tree entry limit (about
// 2.7 kB), so one oversized record cannot fail the whole batch it shares with others.
constexpr qsizetype MaxKeyBytes = 1000;

QString invalidReason(const MessageRecord &record)
{
    const QChar nul(0);
    if (record.messageId.isEmpty())
        return QStringLiteral("empty message id");
    if (record.messageId.size() > MaxKeyBytes)
        return QStringLiteral("message id longer than %1 bytes").arg(MaxKeyBytes);
    if (record.messageId.contains('\0') || !isValidUtf8(record.messageId))
        return QStringLiteral("message id is not valid UTF-8 text");
    if (record.sender.contains(nul) || record.exchange.contains(nul) ||
        record.routingKey.contains(nul))
        return QStringLiteral("sender, exchange or routing key contains a NUL character");
    if (record.queues.isEmpty())
        return QStringLiteral("unroutable: no target queue");
    for (const QString &queue : record.queues) {
        if (queue.isEmpty() || queue.contains(nul) || queue.toUtf8().size() > MaxKeyBytes)
            return QStringLiteral("invalid target queue name");
    }
    if (!record.sentTime.isValid())
        return QStringLiteral("missing sent time");
    return {};
}

} // namespace

PublishPlan planPublish(const QList<MessageRecord> &records)
{
    PublishPlan plan;
    plan.results.resize(records.size());
    plan.ids.resize(records.size());
    plan.queues.resize(records.size());
    QSet<QString> seen;
    for (qsizetype i = 0; i < records.size(); ++i) {
        const MessageRecord &record = records[i];
        if (const QString reason = invalidReason(record); !reason.isEmpty()) {
            plan.results[i] = {PublishOutcome::Failed, reason};
            continue;
        }
        plan.ids[i] = QString::fromUtf8(record.messageId);
        if (seen.contains(plan.ids[i])) {
            plan.results[i] = {PublishOutcome::Duplicate, {}};
            continue;
        }
        seen.insert(plan.ids[i]);
        QStringList queues;
        for (const QString &queue : record.queues) {
            if (!queues.contains(queue))
                queues.append(queue);
        }
        plan.queues[i] = queues;
        plan.candidates.append(i);
    }
    return plan;
}

Result<QSet<QString>> writePublishBatch(SqlSession &session, const QList<MessageRecord> &records,
                                        const PublishPlan &plan, qint64 commitToken)
{
    if (plan.candidates.isEmpty())
        return QSet<QString>();
    return publishWriterFor(session).write(session, records, plan, commitToken);
}

Result<InDoubtResolution> resolveInDoubt(SqlSession &session, const PublishPlan &plan,
                                         qint64 commitToken)
{
    using R = Result<InDoubtResolution>;
    InDoubtResolution resolution;
    if (plan.candidates.isEmpty())
        return resolution;
    QString list;
    for (qsizetype index : plan.candidates) {
        if (!list.isEmpty())
            list += u',';
        list += session.text(plan.ids[index]);
    }
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, QStringLiteral("SELECT message_id, commit_token FROM "
                                                  "message_metadata WHERE message_id IN (") +
                                       list + u')');
    if (!st)
        return R::failure(st.error());
    while (query.next()) {
        const QString id = query.value(0).toString();
        const QVariant token = query.value(1);
        if (!token.isNull() && token.toLongLong() == commitToken)
            resolution.inserted.insert(id);
        else
            resolution.existing.insert(id);
    }
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return resolution;
}

void completePlan(PublishPlan &plan, const QSet<QString> &inserted)
{
    for (qsizetype index : plan.candidates) {
        plan.results[index] = inserted.contains(plan.ids[index])
                                  ? PublishResult{PublishOutcome::Stored, {}}
                                  : PublishResult{PublishOutcome::Duplicate, {}};
    }
}

} // namespace cmq::storage
