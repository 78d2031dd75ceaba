#include "admin/admincommands.h"

#include <QJsonDocument>
#include <QPointer>

#include "admin/adminlog.h"
#include "admin/adminserver.h"
#include "admin/adminsession.h"
#include "admin/auditlog.h"
#include "admin/snapshot.h"
#include "core/router.h"
#include "handlers/refusalreplies.h"
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

static bool isAction(AdminCommand command)
{
    return command == AdminCommand::Purge || command == AdminCommand::DeleteQueue ||
           command == AdminCommand::Disconnect || command == AdminCommand::Reload ||
           command == AdminCommand::Requeue || command == AdminCommand::DefinitionsImport;
}

// What an action is about: the queue, the connection id, or the configuration file.
static QString targetOf(const admin::AdminRequest &request, const Config &config)
{
    if (request.command == AdminCommand::Disconnect)
        return QString::number(request.connectionId);
    if (request.command == AdminCommand::DefinitionsImport)
        return QStringLiteral("definitions");
    return request.command == AdminCommand::Reload ? config.sourcePath : request.queue;
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
    if (isAction(request.command) && !mayAct(session))
        return refuseReadOnly(session, request);
    switch (request.command) {
    case AdminCommand::Help:
        return session.sendReply(line(QJsonObject{
            {QStringLiteral("commands"), QJsonArray::fromStringList(admin::adminCommandNames())}}));
    case AdminCommand::Metrics:
        return session.sendReply(m_context.metrics.prometheusText() + "# EOF\n");
    case AdminCommand::Json: {
        QJsonObject object =
            snapshot::full(m_context, m_server.sessions(), admin::AllSections, request.paging);
        addSessionFields(object, session);
        return session.sendReply(line(object));
    }
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
    case AdminCommand::Talkers: {
        if (!request.paging.talkers.paged)
            return session.sendReply(line(snapshot::talkers(m_context)));
        // A page needs its totals beside it: an object instead of the bare array.
        const snapshot::Page page =
            snapshot::talkerPage(m_context.metrics.talkers(), request.paging.talkers);
        return session.sendReply(line(QJsonObject{{QStringLiteral("talkers"), page.rows},
                                                  {QStringLiteral("talkers_page"), page.info}}));
    }
    case AdminCommand::Purge:
        return purge(session, request.queue);
    case AdminCommand::DeleteQueue:
        return deleteQueue(session, request.queue);
    case AdminCommand::Disconnect:
        return disconnect(session, request.connectionId);
    case AdminCommand::Reload:
        return reload(session);
    case AdminCommand::Audit:
        return audit(session, request.count);
    case AdminCommand::Requeue:
        return requeue(session, request.queue, request.count);
    case AdminCommand::DeadLetters: {
        Queue *queue = m_context.router.queues().value(request.queue);
        if (!queue)
            return session.sendReply(handlers::refusalLine(Refusal::queueNotFound(request.queue)));
        return session.sendReply(line(snapshot::deadLetters(*queue, request.count)));
    }
    case AdminCommand::QueueMessages:
        return queueMessages(session, request);
    case AdminCommand::Definitions:
        return exportDefinitions(session);
    case AdminCommand::DefinitionsImport:
        return importDefinitions(session, request.definitions);
    case AdminCommand::Watch:
        session.startWatch(request.intervalMs, request.sections, request.paging);
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
    QJsonObject object = snapshot::full(m_context, m_server.sessions(), session.watchSections(),
                                        session.watchPaging());
    object.insert(QStringLiteral("sequence"), qint64(sequence));
    addSessionFields(object, session);
    session.sendSnapshot(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

void AdminCommands::purge(AdminSession &session, const QString &queue)
{
    QPointer<AdminSession> guard(&session);
    m_context.router.purgeQueue(queue, [this, guard, queue](Outcome<qint64> purged) {
        if (!guard)
            return;
        if (!purged)
            return refused(*guard, "purge", queue, purged.refusal());
        finishAction(*guard, "purge", queue, "ok", QStringLiteral("purged=%1").arg(purged.value()),
                     line(QJsonObject{{QStringLiteral("ok"), true},
                                      {QStringLiteral("action"), QStringLiteral("purge")},
                                      {QStringLiteral("queue"), queue},
                                      {QStringLiteral("purged"), purged.value()}}));
    });
}

void AdminCommands::requeue(AdminSession &session, const QString &queue, int max)
{
    QPointer<AdminSession> guard(&session);
    m_context.router.requeueDeadLetters(queue, max, [this, guard, queue](Outcome<qint64> moved) {
        if (!guard)
            return;
        if (!moved)
            return refused(*guard, "requeue", queue, moved.refusal());
        finishAction(*guard, "requeue", queue, "ok",
                     QStringLiteral("requeued=%1").arg(moved.value()),
                     line(QJsonObject{{QStringLiteral("ok"), true},
                                      {QStringLiteral("action"), QStringLiteral("requeue")},
                                      {QStringLiteral("queue"), queue},
                                      {QStringLiteral("requeued"), moved.value()}}));
    });
}

void AdminCommands::deleteQueue(AdminSession &session, const QString &queue)
{
    QPointer<AdminSession> guard(&session);
    m_context.router.deleteQueue(
        queue, [this, guard, queue](Outcome<Router::DeleteOutcome> deleted) {
            if (!guard)
                return;
            if (!deleted)
                return refused(*guard, "delete_queue", queue, deleted.refusal());
            const Router::DeleteOutcome &d = deleted.value();
            finishAction(
                *guard, "delete_queue", queue, "ok",
                QStringLiteral("messages_dropped=%1 consumers_cancelled=%2 bindings_removed=%3")
                    .arg(d.messagesDropped)
                    .arg(d.consumersCancelled)
                    .arg(d.bindingsRemoved),
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
    const QString target = QString::number(id);
    if (Session *data = m_context.dataSessions.value(id)) {
        qCInfo(lcAdmin, "disconnecting connection %llu (%s) on request of %s", id,
               qPrintable(data->identity().cn), qPrintable(session.identity().cn));
        const QString cn = data->identity().cn;
        data->closeWithError(protocol::reply::error("Disconnected by an administrator"));
        return finishAction(session, "disconnect", target, "ok",
                            QStringLiteral("cn=%1 listener=data").arg(cn), ok(cn, "data"));
    }
    if (AdminSession *other = m_server.session(id)) {
        const QString cn = other->identity().cn;
        finishAction(session, "disconnect", target, "ok",
                     QStringLiteral("cn=%1 listener=admin").arg(cn), ok(cn, "admin"));
        // Queued, and a busy session sends its notice after its reply: the requester's own
        // connection gets the reply first.
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
    const QString missing = QStringLiteral("Connection %1 not found").arg(id);
    finishAction(session, "disconnect", target, "error", missing, errorLine(missing));
}

void AdminCommands::reload(AdminSession &session)
{
    const Result<QJsonObject> reloaded = m_context.reload();
    const QString file = m_context.config.sourcePath;
    if (!reloaded)
        return finishAction(session, "reload", file, "error", reloaded.error(),
                            errorLine(reloaded.error()));
    const qint64 closed = reloaded->value(QStringLiteral("connections_closed")).toInteger();
    finishAction(session, "reload", file, "ok", QStringLiteral("connections_closed=%1").arg(closed),
                 line(reloaded.value()));
}

bool AdminCommands::mayAct(const AdminSession &session) const
{
    return !m_context.config.admin.readonlyCns.contains(session.identity().cn);
}

void AdminCommands::refuseReadOnly(AdminSession &session, const admin::AdminRequest &request)
{
    const char *action = admin::adminCommandName(request.command);
    const QString text =
        QStringLiteral("Forbidden: certificate CN '%1' is read-only (admin.readonly_cns); '%2' "
                       "refused")
            .arg(session.identity().cn, QString::fromLatin1(action));
    // The trail's result says "refused"; its detail only why.
    finishAction(session, action, targetOf(request, m_context.config), "refused",
                 QStringLiteral("read-only (admin.readonly_cns)"), errorLine(text));
}

void AdminCommands::finishAction(AdminSession &session, const char *action, const QString &target,
                                 const char *result, const QString &detail, const QByteArray &reply)
{
    storage::AuditRecord record;
    record.cn = session.identity().cn;
    record.address = session.identity().address.toString();
    record.action = QString::fromLatin1(action);
    record.target = target;
    record.result = QString::fromLatin1(result);
    record.detail = detail;
    QPointer<AdminSession> guard(&session);
    m_context.audit.record(std::move(record), [guard, reply] {
        if (guard)
            guard->sendReply(reply);
    });
}

void AdminCommands::refused(AdminSession &session, const char *action, const QString &target,
                            const Refusal &refusal)
{
    const QByteArray text = handlers::refusalText(refusal);
    finishAction(session, action, target, "error", QString::fromUtf8(text),
                 protocol::reply::error(text));
}

void AdminCommands::audit(AdminSession &session, int count)
{
    session.sendReply(line(AuditLog::toJson(m_context.audit.latest(count))));
}

void AdminCommands::addSessionFields(QJsonObject &snapshot, const AdminSession &session) const
{
    snapshot.insert(
        QStringLiteral("session"),
        QJsonObject{{QStringLiteral("cn"), session.identity().cn},
                    {QStringLiteral("connection_id"), qint64(session.identity().connectionId)},
                    {QStringLiteral("read_only"), !mayAct(session)}});
    snapshot.insert(QStringLiteral("audit"),
                    QJsonObject{{QStringLiteral("last_id"), m_context.audit.lastId()},
                                {QStringLiteral("held"), qint64(m_context.audit.size())},
                                {QStringLiteral("capacity"), m_context.audit.capacity()}});
}

} // namespace cmq
