#include "models/bulkaction.h"

#include <QJsonDocument>

#include "models/adminsession.h"

namespace cmq::admingui {

namespace {

// What a successful reply says was dropped.
qint64 droppedBy(const QString &reply)
{
    const QJsonObject o = QJsonDocument::fromJson(reply.toUtf8()).object();
    return o.value(u"purged").toInteger() + o.value(u"messages_dropped").toInteger();
}

} // namespace

BulkAction::BulkAction(AdminSession &session, QString verb, QList<Target> targets, QObject *parent)
    : QObject(parent), m_session(session), m_verb(std::move(verb)), m_targets(std::move(targets))
{
    connect(&m_session, &AdminSession::actionFinished, this, &BulkAction::onActionFinished);
}

QString BulkAction::confirmationText(const QString &verb, const QList<Target> &targets,
                                     const QString &consequence, int listed)
{
    qint64 messages = 0;
    QStringList lines;
    for (const Target &t : targets) {
        messages += t.messages;
        if (lines.size() < listed)
            lines << QStringLiteral("• %1 — %2 message(s)").arg(t.label).arg(t.messages);
    }
    if (targets.size() > listed)
        lines << tr("… and %1 more").arg(targets.size() - listed);
    return tr("%1 these %2 target(s), %3 message(s) in all?\n\n%4\n\n%5")
        .arg(verb)
        .arg(targets.size())
        .arg(messages)
        .arg(lines.join(u'\n'), consequence);
}

QString BulkAction::summaryText(const QString &verb, const QList<Outcome> &outcomes)
{
    int succeeded = 0;
    qint64 dropped = 0;
    QStringList failures;
    for (const Outcome &o : outcomes) {
        if (o.ok) {
            ++succeeded;
            dropped += droppedBy(o.message);
        } else {
            failures << QStringLiteral("%1 (%2)").arg(o.label, o.message);
        }
    }
    QString text = tr("%1: %2 of %3 done").arg(verb).arg(succeeded).arg(outcomes.size());
    if (dropped > 0)
        text += tr(", %1 message(s) dropped").arg(dropped);
    if (!failures.isEmpty())
        text += tr("; failed: %1").arg(failures.join(QStringLiteral("; ")));
    return text + u'.';
}

void BulkAction::start()
{
    if (m_next > 0)
        return;
    sendNext();
}

void BulkAction::sendNext()
{
    if (m_next == m_targets.size()) {
        m_done = true;
        bool allOk = true;
        for (const Outcome &o : std::as_const(m_outcomes))
            allOk = allOk && o.ok;
        Q_EMIT finished(summaryText(m_verb, m_outcomes), allOk);
        return;
    }
    const Target &target = m_targets[m_next++];
    Q_EMIT progress(int(m_next - 1), int(m_targets.size()), target.label);
    m_session.runAction(target.line);
}

void BulkAction::onActionFinished(const QString &line, bool ok, const QString &message)
{
    if (m_done || m_next == 0 || m_targets[m_next - 1].line != line)
        return; // not ours
    m_outcomes.append(Outcome{m_targets[m_next - 1].label, ok, message});
    sendNext();
}

} // namespace cmq::admingui
