// AdminCommands' data views and the definitions pair (admincommands.cpp holds the rest):
// `queue_messages` pages through a queue's message metadata as the database has it,
// `definitions` exports the topology, `definitions_import` applies one (an audited action).

#include <memory>

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>

#include "admin/admincommands.h"
#include "admin/adminsession.h"
#include "admin/definitions.h"
#include "core/exchangetype.h"
#include "core/router.h"
#include "handlers/refusalreplies.h"
#include "storage/messagelisting.h"

namespace cmq {

namespace {

QByteArray jsonLine(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

QJsonObject rowToJson(const storage::MessageListingRow &row, const QDateTime &now)
{
    // What the broker knows about a message, never its envelope. The database records whether
    // an entry was delivered, not how often: the count is 1 for a delivered entry until the
    // schema counts every delivery.
    return QJsonObject{
        {QStringLiteral("id"), row.entryId},
        {QStringLiteral("message_id"), row.messageId},
        {QStringLiteral("sender"), row.sender},
        {QStringLiteral("exchange"), row.exchange},
        {QStringLiteral("routing_key"), row.routingKey},
        {QStringLiteral("size"), row.size},
        {QStringLiteral("published"), row.published.toString(Qt::ISODateWithMs)},
        {QStringLiteral("age_ms"), std::max<qint64>(0, row.published.msecsTo(now))},
        {QStringLiteral("redelivered"), row.delivered},
        {QStringLiteral("delivery_count"), row.delivered ? 1 : 0},
    };
}

// Runs steps one after another (each reports through its Done), then `finished`.
struct StepRunner : std::enable_shared_from_this<StepRunner>
{
    using Step = std::function<void(Router::Done)>;
    QList<Step> steps;
    std::function<void()> finished;
    qsizetype next = 0;

    void run()
    {
        if (next == steps.size())
            return finished();
        const Step &step = steps[next++];
        step([self = shared_from_this()](const Verdict &) { self->run(); });
    }
};

// "<what>: <why>", one of the import's errors.
QString refusalNote(const QString &what, const Verdict &refused)
{
    return QStringLiteral("%1: %2").arg(
        what, QString::fromUtf8(handlers::refusalText(refused.refusal())));
}

} // namespace

void AdminCommands::queueMessages(AdminSession &session, const admin::AdminRequest &request)
{
    if (!m_context.router.hasQueue(request.queue))
        return session.sendReply("Error: Queue '" + request.queue.toUtf8() + "' not found\n");
    storage::MessageListingQuery query{request.queue, qint64(request.afterId), request.count,
                                       request.filter};
    QPointer<AdminSession> guard(&session);
    m_context.storage.listQueueMessages(
        query, [guard, query](Result<storage::MessageListingPage> page) {
            if (!guard)
                return;
            if (!page)
                return guard->sendReply(
                    "Error: Cannot list the queue's messages: " + page.error().toUtf8() + '\n');
            const QDateTime now = QDateTime::currentDateTimeUtc();
            QJsonArray rows;
            for (const storage::MessageListingRow &row : page->rows)
                rows.append(rowToJson(row, now));
            const QJsonValue next =
                page->more ? QJsonValue(page->nextAfterId) : QJsonValue(QJsonValue::Null);
            guard->sendReply(jsonLine(QJsonObject{{QStringLiteral("queue"), query.queue},
                                                  {QStringLiteral("after_id"), query.afterId},
                                                  {QStringLiteral("limit"), query.limit},
                                                  {QStringLiteral("filter"), query.filter},
                                                  {QStringLiteral("messages"), rows},
                                                  {QStringLiteral("more"), page->more},
                                                  {QStringLiteral("next_after_id"), next}}));
        });
}

void AdminCommands::exportDefinitions(AdminSession &session)
{
    session.sendReply(jsonLine(definitionsToJson(m_context.router)));
}

void AdminCommands::importDefinitions(AdminSession &session, const QByteArray &json)
{
    const Result<Definitions> parsed = parseDefinitions(json);
    if (!parsed)
        return finishAction(session, "definitions_import", QStringLiteral("definitions"), "error",
                            parsed.error(), "Error: " + parsed.error().toUtf8() + '\n');
    struct Tally
    {
        int exchanges = 0, queues = 0, bindings = 0;
        QStringList errors;
    };
    auto tally = std::make_shared<Tally>();
    auto runner = std::make_shared<StepRunner>();
    Router &router = m_context.router;
    // Each step counts itself or notes why not; one failure does not stop the others.
    const auto counted = [tally](int Tally::*field, const QString &what, Router::Done done) {
        return [tally, field, what, done](Verdict st) {
            if (st)
                ++(*tally.*field);
            else
                tally->errors << refusalNote(what, st);
            done(st);
        };
    };
    for (const storage::ExchangeRecord &e : parsed->exchanges) {
        runner->steps << [&router, e, counted](Router::Done done) {
            const QString creator = e.creator.isEmpty() ? QStringLiteral("admin") : e.creator;
            router.declareExchange(
                e.name, creator,
                counted(&Tally::exchanges, QStringLiteral("exchange ") + e.name, done),
                *findExchangeType(e.type));
        };
    }
    for (const storage::QueueRecord &q : parsed->queues) {
        runner->steps << [&router, q, counted, tally](Router::Done done) {
            const QString what = QStringLiteral("queue ") + q.name;
            router.declareQueue(
                q.name, q.owner, [&router, q, what, counted, tally, done](Verdict st) {
                    if (!st) {
                        tally->errors << refusalNote(what, st);
                        return done(st);
                    }
                    DeadLetterPolicyChange deadLetter;
                    deadLetter.exchange = q.deadLetterExchange;
                    deadLetter.routingKey = q.deadLetterRoutingKey;
                    deadLetter.deliveryLimit = q.deliveryLimit;
                    deadLetter.onOverflow = q.deadLetterOverflow;
                    router.setQueuePolicy(q.name, q.maxLength, q.overflow,
                                          counted(&Tally::queues, what, done), q.messageTtlMs,
                                          deadLetter);
                });
        };
    }
    for (const storage::BindingRecord &b : parsed->bindings) {
        runner->steps << [&router, b, counted](Router::Done done) {
            router.bind(
                b.queue, b.exchange, b.routingKey,
                counted(&Tally::bindings,
                        QStringLiteral("binding %1 %2 %3").arg(b.queue, b.exchange, b.routingKey),
                        done));
        };
    }
    QPointer<AdminSession> guard(&session);
    runner->finished = [this, guard, tally] {
        if (!guard)
            return;
        const QString detail = QStringLiteral("exchanges=%1 queues=%2 bindings=%3 errors=%4")
                                   .arg(tally->exchanges)
                                   .arg(tally->queues)
                                   .arg(tally->bindings)
                                   .arg(tally->errors.size());
        finishAction(*guard, "definitions_import", QStringLiteral("definitions"),
                     tally->errors.isEmpty() ? "ok" : "error", detail,
                     jsonLine(QJsonObject{
                         {QStringLiteral("ok"), tally->errors.isEmpty()},
                         {QStringLiteral("action"), QStringLiteral("definitions_import")},
                         {QStringLiteral("exchanges"), tally->exchanges},
                         {QStringLiteral("queues"), tally->queues},
                         {QStringLiteral("bindings"), tally->bindings},
                         {QStringLiteral("errors"), QJsonArray::fromStringList(tally->errors)}}));
    };
    runner->run();
}

} // namespace cmq
