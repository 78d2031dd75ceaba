// The admin protocol's request parser: every command, its arguments and the exact error line
// for each mistake, including data-path commands sent to the admin listener.

#include <QTest>

#include "admin/adminrequest.h"

using namespace cmq::admin;

class tst_AdminRequest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void names();
    void audit_data();
    void audit();
    void queueAndCount_data();
    void queueAndCount();
    void queueMessages_data();
    void queueMessages();
    void definitionsImport();
};

void tst_AdminRequest::valid_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("command");
    QTest::addColumn<QString>("queue");
    QTest::addColumn<quint64>("connectionId");
    QTest::addColumn<int>("intervalMs");
    QTest::addColumn<int>("sections");
    const int all = int(AllSections.toInt());
    const auto row = [&](const char *name, const char *line, AdminCommand c, QString queue = {},
                         quint64 id = 0, int interval = 0, int sections = -1) {
        QTest::newRow(name) << QByteArray(line) << int(c) << queue << id << interval
                            << (sections < 0 ? all : sections);
    };
    row("help", "help", AdminCommand::Help);
    row("metrics", "metrics", AdminCommand::Metrics);
    row("json", "json", AdminCommand::Json);
    row("queues", "queues", AdminCommand::Queues);
    row("exchanges", "exchanges", AdminCommand::Exchanges);
    row("bindings", "bindings", AdminCommand::Bindings);
    row("connections", "connections", AdminCommand::Connections);
    row("ratelimits", "ratelimits", AdminCommand::RateLimits);
    // The reply holds the talkers only: its page options may name no other list.
    row("talkers", "talkers", AdminCommand::Talkers, {}, 0, 0, int(Section::Talkers));
    row("reload", "reload", AdminCommand::Reload);
    row("unwatch", "unwatch", AdminCommand::Unwatch);
    row("spaces around", "  queues \t", AdminCommand::Queues);
    row("purge", "purge receiver_1_queue", AdminCommand::Purge, "receiver_1_queue");
    row("delete_queue", "delete_queue  q2", AdminCommand::DeleteQueue, "q2");
    row("unicode queue", "purge صف", AdminCommand::Purge, QStringLiteral("صف"));
    row("disconnect", "disconnect 42", AdminCommand::Disconnect, {}, 42);
    row("disconnect max", "disconnect 18446744073709551615", AdminCommand::Disconnect, {},
        18446744073709551615ULL);
    row("watch", "watch 1000", AdminCommand::Watch, {}, 0, 1000);
    row("watch min", "watch 100", AdminCommand::Watch, {}, 0, 100);
    row("watch max", "watch 60000", AdminCommand::Watch, {}, 0, 60000);
    row("watch sections", "watch 500 queues,connections", AdminCommand::Watch, {}, 0, 500,
        int((Section::Queues | Section::Connections).toInt()));
    row("watch one section", "watch 500 ratelimits", AdminCommand::Watch, {}, 0, 500,
        int(Sections(Section::RateLimits).toInt()));
    row("watch talkers", "watch 1000 talkers,connections", AdminCommand::Watch, {}, 0, 1000,
        int((Section::Talkers | Section::Connections).toInt()));
}

void tst_AdminRequest::valid()
{
    QFETCH(QByteArray, line);
    QFETCH(int, command);
    QFETCH(QString, queue);
    QFETCH(quint64, connectionId);
    QFETCH(int, intervalMs);
    QFETCH(int, sections);
    const AdminParseResult r = parseAdminRequest(line);
    QVERIFY2(r.ok, r.errorReply.constData());
    QCOMPARE(int(r.request.command), command);
    QCOMPARE(r.request.queue, queue);
    QCOMPARE(r.request.connectionId, connectionId);
    QCOMPARE(r.request.intervalMs, intervalMs);
    QCOMPARE(int(r.request.sections.toInt()), sections);
}

void tst_AdminRequest::invalid_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply");
    QTest::newRow("unknown") << QByteArray("stats")
                             << QByteArray("Error: Unknown admin command 'stats' (try help)");
    QTest::newRow("case matters") << QByteArray("QUEUES")
                                  << QByteArray("Error: Unknown admin command 'QUEUES' (try help)");
    QTest::newRow("data publish") << QByteArray("publish ex rk {}")
                                  << QByteArray("Error: 'publish' is a data-path command; the "
                                                "admin listener accepts only admin commands");
    QTest::newRow("data consume") << QByteArray("consume q")
                                  << QByteArray("Error: 'consume' is a data-path command; the "
                                                "admin listener accepts only admin commands");
    QTest::newRow("data declare_queue") << QByteArray("declare_queue")
                                        << QByteArray("Error: 'declare_queue' is a data-path "
                                                      "command; the admin listener accepts only "
                                                      "admin commands");
    QTest::newRow("data heartbeat") << QByteArray("heartbeat 5")
                                    << QByteArray("Error: 'heartbeat' is a data-path command; "
                                                  "the admin listener accepts only admin "
                                                  "commands");
    QTest::newRow("purge no queue")
        << QByteArray("purge") << QByteArray("Error: Missing queue name");
    QTest::newRow("delete no queue")
        << QByteArray("delete_queue ") << QByteArray("Error: Missing queue name");
    QTest::newRow("purge two") << QByteArray("purge a b")
                               << QByteArray("Error: Too many arguments for 'purge'");
    QTest::newRow("purge control")
        << QByteArray("purge a\x01")
        << QByteArray("Error: Invalid queue name: must not contain spaces or control characters");
    QTest::newRow("purge too long")
        << QByteArray("purge " + QByteArray(256, 'q'))
        << QByteArray("Error: Invalid queue name: longer than 255 bytes");
    QTest::newRow("queues extra") << QByteArray("queues now")
                                  << QByteArray("Error: Too many arguments for 'queues'");
    QTest::newRow("disconnect none")
        << QByteArray("disconnect") << QByteArray("Error: Missing connection id");
    QTest::newRow("disconnect text")
        << QByteArray("disconnect abc") << QByteArray("Error: Invalid connection id 'abc'");
    QTest::newRow("disconnect zero")
        << QByteArray("disconnect 0") << QByteArray("Error: Invalid connection id '0'");
    QTest::newRow("disconnect negative")
        << QByteArray("disconnect -1") << QByteArray("Error: Invalid connection id '-1'");
    QTest::newRow("disconnect overflow") << QByteArray("disconnect 18446744073709551616")
                                         << QByteArray("Error: Invalid connection id "
                                                       "'18446744073709551616'");
    QTest::newRow("watch none") << QByteArray("watch") << QByteArray("Error: Missing interval");
    QTest::newRow("watch too fast")
        << QByteArray("watch 99")
        << QByteArray("Error: Invalid interval: expected milliseconds from 100 to 60000");
    QTest::newRow("watch too slow")
        << QByteArray("watch 60001")
        << QByteArray("Error: Invalid interval: expected milliseconds from 100 to 60000");
    QTest::newRow("watch text")
        << QByteArray("watch 1s")
        << QByteArray("Error: Invalid interval: expected milliseconds from 100 to 60000");
    QTest::newRow("watch bad section")
        << QByteArray("watch 1000 queues,users")
        << QByteArray("Error: Invalid section 'users': expected queues, exchanges, bindings, "
                      "connections, ratelimits or talkers");
    QTest::newRow("watch three") << QByteArray("watch 1000 queues x")
                                 << QByteArray("Error: Too many arguments for 'watch'");
    QTest::newRow("long unknown word cut")
        << QByteArray(100, 'z')
        << QByteArray("Error: Unknown admin command '" + QByteArray(64, 'z') + "' (try help)");
}

void tst_AdminRequest::invalid()
{
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    const AdminParseResult r = parseAdminRequest(line);
    QVERIFY(!r.ok);
    QCOMPARE(r.errorReply, reply);
}

void tst_AdminRequest::names()
{
    const QStringList all = adminCommandNames();
    QCOMPARE(all.size(), 21);
    QVERIFY(all.contains(QStringLiteral("requeue")));
    QVERIFY(all.contains(QStringLiteral("dead_letters")));
    QVERIFY(all.contains(QStringLiteral("queue_messages")));
    QVERIFY(all.contains(QStringLiteral("definitions")));
    QVERIFY(all.contains(QStringLiteral("definitions_import")));
    QVERIFY(all.contains(QStringLiteral("audit")));
    QVERIFY(all.contains(QStringLiteral("delete_queue")));
    QCOMPARE(QByteArray(adminCommandName(AdminCommand::RateLimits)), QByteArray("ratelimits"));
    QCOMPARE(sectionNames(AllSections),
             (QStringList{"queues", "exchanges", "bindings", "connections", "ratelimits",
                          "talkers"}));
}

void tst_AdminRequest::audit_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("count");        // 0: refused
    QTest::addColumn<QByteArray>("reply"); // the error line when refused
    const QByteArray invalid = "Error: Invalid entry count: expected a number from 1 to 100000";
    QTest::newRow("default") << QByteArray("audit") << DefaultAuditEntries << QByteArray();
    QTest::newRow("count") << QByteArray("audit 5") << 5 << QByteArray();
    QTest::newRow("max") << QByteArray("audit 100000") << 100000 << QByteArray();
    QTest::newRow("zero") << QByteArray("audit 0") << 0 << invalid;
    QTest::newRow("above max") << QByteArray("audit 100001") << 0 << invalid;
    QTest::newRow("text") << QByteArray("audit all") << 0 << invalid;
    QTest::newRow("two") << QByteArray("audit 1 2") << 0
                         << QByteArray("Error: Too many arguments for 'audit'");
}

void tst_AdminRequest::audit()
{
    QFETCH(QByteArray, line);
    QFETCH(int, count);
    QFETCH(QByteArray, reply);
    const AdminParseResult r = parseAdminRequest(line);
    QCOMPARE(r.ok, count > 0);
    if (!r.ok) {
        QCOMPARE(r.errorReply, reply);
        return;
    }
    QCOMPARE(r.request.command, AdminCommand::Audit);
    QCOMPARE(r.request.count, count);
}

void tst_AdminRequest::queueAndCount_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("count");        // what the request carries
    QTest::addColumn<QByteArray>("reply"); // the error line when refused
    const QByteArray invalidRequeue =
        "Error: Invalid message count: expected a number from 1 to 1000000";
    QTest::newRow("requeue all") << QByteArray("requeue q_dlq") << true << 0 << QByteArray();
    QTest::newRow("requeue n") << QByteArray("requeue q_dlq 5") << true << 5 << QByteArray();
    QTest::newRow("requeue 0") << QByteArray("requeue q_dlq 0") << false << 0 << invalidRequeue;
    QTest::newRow("requeue above max")
        << QByteArray("requeue q_dlq 1000001") << false << 0 << invalidRequeue;
    QTest::newRow("requeue no queue")
        << QByteArray("requeue") << false << 0 << QByteArray("Error: Missing queue name");
    QTest::newRow("requeue three") << QByteArray("requeue q 1 2") << false << 0
                                   << QByteArray("Error: Too many arguments for 'requeue'");
    QTest::newRow("dead_letters default")
        << QByteArray("dead_letters q_dlq") << true << DefaultDeadLetterEntries << QByteArray();
    QTest::newRow("dead_letters n")
        << QByteArray("dead_letters q_dlq 10000") << true << 10000 << QByteArray();
    QTest::newRow("dead_letters above max")
        << QByteArray("dead_letters q_dlq 10001") << false << 0
        << QByteArray("Error: Invalid message count: expected a number from 1 to 10000");
}

void tst_AdminRequest::queueAndCount()
{
    QFETCH(QByteArray, line);
    QFETCH(bool, ok);
    QFETCH(int, count);
    QFETCH(QByteArray, reply);
    const AdminParseResult r = parseAdminRequest(line);
    QCOMPARE(r.ok, ok);
    if (!r.ok) {
        QCOMPARE(r.errorReply, reply);
        return;
    }
    QCOMPARE(r.request.queue, QStringLiteral("q_dlq"));
    QCOMPARE(r.request.count, count);
}

void tst_AdminRequest::queueMessages_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<quint64>("afterId");
    QTest::addColumn<int>("limit");
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QByteArray>("reply"); // the error line when refused, else empty
    const QByteArray badLimit = "Error: Invalid limit: expected a number from 1 to 1000";
    QTest::newRow("defaults") << QByteArray("queue_messages q") << quint64(0)
                              << DefaultMessagePageRows << QString() << QByteArray();
    QTest::newRow("after") << QByteArray("queue_messages q 42") << quint64(42)
                           << DefaultMessagePageRows << QString() << QByteArray();
    QTest::newRow("all") << QByteArray("queue_messages q 7 1000 svc_a") << quint64(7) << 1000
                         << QStringLiteral("svc_a") << QByteArray();
    QTest::newRow("no queue") << QByteArray("queue_messages") << quint64(0) << 0 << QString()
                              << QByteArray("Error: Missing queue name");
    QTest::newRow("after text")
        << QByteArray("queue_messages q next") << quint64(0) << 0 << QString()
        << QByteArray("Error: Invalid after_id 'next': expected an entry id (0 = from the "
                      "oldest)");
    QTest::newRow("negative after")
        << QByteArray("queue_messages q -1") << quint64(0) << 0 << QString()
        << QByteArray("Error: Invalid after_id '-1': expected an entry id (0 = from the "
                      "oldest)");
    QTest::newRow("limit 0") << QByteArray("queue_messages q 0 0") << quint64(0) << 0 << QString()
                             << badLimit;
    QTest::newRow("limit 1001") << QByteArray("queue_messages q 0 1001") << quint64(0) << 0
                                << QString() << badLimit;
    QTest::newRow("five") << QByteArray("queue_messages q 0 1 a b") << quint64(0) << 0 << QString()
                          << QByteArray("Error: Too many arguments for 'queue_messages'");
}

void tst_AdminRequest::queueMessages()
{
    QFETCH(QByteArray, line);
    QFETCH(quint64, afterId);
    QFETCH(int, limit);
    QFETCH(QString, filter);
    QFETCH(QByteArray, reply);
    const AdminParseResult r = parseAdminRequest(line);
    QCOMPARE(r.ok, reply.isEmpty());
    if (!r.ok) {
        QCOMPARE(r.errorReply, reply);
        return;
    }
    QCOMPARE(r.request.command, AdminCommand::QueueMessages);
    QCOMPARE(r.request.queue, QStringLiteral("q"));
    QCOMPARE(r.request.afterId, afterId);
    QCOMPARE(r.request.count, limit);
    QCOMPARE(r.request.filter, filter);
}

void tst_AdminRequest::definitionsImport()
{
    // The JSON is the rest of the line as sent, blanks inside strings included.
    const AdminParseResult r = parseAdminRequest("  definitions_import {\"a\": \"x  y\"}  ");
    QVERIFY(r.ok);
    QCOMPARE(r.request.command, AdminCommand::DefinitionsImport);
    QCOMPARE(r.request.definitions, QByteArray("{\"a\": \"x  y\"}"));
    QCOMPARE(parseAdminRequest("definitions_import").errorReply,
             QByteArray("Error: Missing definitions (one JSON object on the line)"));
    QCOMPARE(parseAdminRequest("definitions").request.command, AdminCommand::Definitions);
    QCOMPARE(parseAdminRequest("definitions x").errorReply,
             QByteArray("Error: Too many arguments for 'definitions'"));
}

QTEST_APPLESS_MAIN(tst_AdminRequest)
#include "tst_adminrequest.moc"
