#include "admin/admincommands.h"

#include <QJsonDocument>
#include <QPointer>

#include "admin/adminlog.h"
#include "admin/adminserver.h"
#include "admin/adminsession.h"
#include "admin/snapshot.h"
#include "core/router.h"
#include "metrics/brokermetrics.h"
#include "net/session.h"
#include "protocol/replies.h"

namespace cmq {

using admin::AdminCommand;

static QByteArray line(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

static QByteArray line(const QJsonArray &array)
{
    return QJsonDocument(array).toJson(QJsonDocument::Compact) + '\n';
}

static QByteArray errorLine(const QString &text)
{
    return "Error: " + text.toUtf8() + '\n';
}

AdminCommands::AdminCommands(AdminContext &context, AdminServer &server)
    : m_context(context), m_server(server)
{
}

void AdminCommands::execute(AdminSession &session, const admin::AdminRequest &request)
{
    const ClientIdentity &who = session.identity();
    qCInfo(lcAdmin, "admin %s (connection %llu): %s%s%s", qPrintable(who.cn), who.connectionId,
           admin::adminCommandName(request.command), request.queue.isEmpty() ? "" : " ",
           qPrintable(request.queue));
    switch (request.command) {
    case AdminCommand::Help:
        return session.sendReply(line(QJsonObject{
            {QStringLiteral("commands"), QJsonArray::fromStringList(admin::adminCommandNames())}}));
    case AdminCommand::Metrics:
        return session.sendReply(m_context.metrics.prometheusText() + "# EOF\n");
    case AdminCommand::Json:
        return session.sendReply(line(snapshot::full(m_context, m_server.sessions())));
    case AdminCommand::Queues:
        return session.sendReply(line(snapshot::queues(m_context.router)));
    case AdminCommand::Exchanges:
        return session.sendReply(line(snapshot::exchanges(m_context.router)));
    case AdminCommand::Bindings:
        return session.sendReply(line(snapshot::bindings(m_context.router)));
    case AdminCommand::Connections:
        return session.sendReply(line(snapshot::connections(m_context, m_server.sessions())));
    case AdminCommand::RateLimits:
        return session.sendReply(line(snapshot::rateLimits(m_context)));
    case AdminCommand::Purge:
        return purge(session, request.queue);
    case AdminCommand::DeleteQueue:
        return deleteQueue(session, request.queue);
    case AdminCommand::Disconnect:
        return disconnect(session, request.connectionId);
    case AdminCommand::Reload: {
        const Result<QJsonObject> reloaded = m_context.reload();
        return session.sendReply(reloaded ? line(reloaded.value()) : errorLine(reloaded.error()));
    }
    case AdminCommand::Watch:
        session.startWatch(request.intervalMs, request.sections);
        session.sendReply(
            line(QJsonObject{{QStringLiteral("ok"), true},
                             {QStringLiteral("action"), QStringLiteral("watch")},
                             {QStringLiteral("interval_ms"), request.intervalMs},
                             {QStringLiteral("sections"),
                              QJsonArray::fromStringList(admin::sectionNames(request.sections))}}));
        return watchDue(session); // the first snapshot right away, after the reply
    case AdminCommand::Unwatch:
        session.stopWatch();
        return session.sendReply(line(QJsonObject{
            {QStringLiteral("ok"), true}, {QStringLiteral("action"), QStringLiteral("unwatch")}}));
    case AdminCommand::Unknown:
        break;
    }
    session.sendReply(errorLine(QStringLiteral("Unknown admin command (try help)")));
}

void AdminCommands::watchDue(AdminSession &session)
{
    const quint64 sequence = session.nextSnapshotSequence();
    if (!session.isKeepingUp())
        return; // skipped: the gap in "sequence" tells the client
    QJsonObject object = snapshot::full(m_context, m_server.sessions(), session.watchSections());
    object.insert(QStringLiteral("sequence"), qint64(sequence));
    session.sendSnapshot(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

void AdminCommands::purge(AdminSession &session, const QString &queue)
{
    QPointer<AdminSession> guard(&session);
    m_context.router.purgeQueue(queue, [guard, queue](Result<qint64> purged) {
        if (!guard)
            return;
        if (!purged)
            return guard->sendReply(errorLine(purged.error()));
        guard->sendReply(line(QJsonObject{{QStringLiteral("ok"), true},
                                          {QStringLiteral("action"), QStringLiteral("purge")},
                                          {QStringLiteral("queue"), queue},
                                          {QStringLiteral("purged"), purged.value()}}));
    });
}

void AdminCommands::deleteQueue(AdminSession &session, const QString &queue)
{
    QPointer<AdminSession> guard(&session);
    m_context.router.deleteQueue(queue, [guard, queue](Result<Router::DeleteOutcome> deleted) {
        if (!guard)
            return;
        if (!deleted)
            return guard->sendReply(errorLine(deleted.error()));
        const Router::DeleteOutcome &d = deleted.value();
        guard->sendReply(
            line(QJsonObject{{QStringLiteral("ok"), true},
                             {QStringLiteral("action"), QStringLiteral("delete_queue")},
                             {QStringLiteral("queue"), queue},
                             {QStringLiteral("messages_dropped"), d.messagesDropped},
                             {QStringLiteral("consumers_cancelled"), d.consumersCancelled},
                             {QStringLiteral("bindings_removed"), d.bindingsRemoved}}));
    });
}

void AdminCommands::disconnect(AdminSession &session, quint64 id)
{
    const auto ok = [id](const QString &cn, const char *listener) {
        return line(QJsonObject{{QStringLiteral("ok"), true},
                                {QStringLiteral("action"), QStringLiteral("disconnect")},
                                {QStringLiteral("connection_id"), qint64(id)},
                                {QStringLiteral("cn"), cn},
                                {QStringLiteral("listener"), QString::fromLatin1(listener)}});
    };
    if (Session *data = m_context.dataSessions.value(id)) {
        qCInfo(lcAdmin, "disconnecting connection %llu (%s) on request of %s", id,
               qPrintable(data->identity().cn), qPrintable(session.identity().cn));
        const QString cn = data->identity().cn;
        data->closeWithError(protocol::reply::error("Disconnected by an administrator"));
        return session.sendReply(ok(cn, "data"));
    }
    if (AdminSession *other = m_server.session(id)) {
        const QString cn = other->identity().cn;
        session.sendReply(ok(cn, "admin"));
        // After the reply has been written, in case it is the requester's own connection.
        QPointer<AdminSession> guard(other);
        QMetaObject::invokeMethod(
            other,
            [guard] {
                if (guard)
                    guard->closeWithNotice("Disconnected by an administrator");
            },
            Qt::QueuedConnection);
        return;
    }
    session.sendReply(errorLine(QStringLiteral("Connection %1 not found").arg(id)));
}

} // namespace cmq
