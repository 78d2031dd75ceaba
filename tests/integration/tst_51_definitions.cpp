// Definitions export and import against the real broker (docs/ADMIN-PROTOCOL.md,
// "definitions"): `cmq admin definitions export` from a broker with every exchange type,
// queue policies, bindings, messages and keys, then `cmq admin definitions import` into a
// fresh broker on the other driver gives the same definitions and nothing else (no messages,
// no keys); the import is audited, refused to a read-only operator, and a bad document changes
// nothing.

#include <memory>
#include <vector>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

QJsonValue parse(const QByteArray &line)
{
    const QJsonDocument doc = QJsonDocument::fromJson(line);
    if (doc.isNull())
        qWarning("not JSON: %s", line.left(300).constData());
    return doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
}

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZQ==","nonce":"bg==",)"
           R"("ciphertext":"c2VjcmV0LWJ5dGVz"})";
}

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

} // namespace

class tst_Definitions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void roundTripIntoFreshBroker();
    void badDocumentChangesNothing();
    void readOnlyCannotImport();

private:
    std::unique_ptr<BrokerProcess> newBroker(const QString &driver, quint16 *adminPort);
    Run cmqAdmin(quint16 adminPort, const QStringList &args, const QString &identity = "ops-admin");

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
    QTemporaryDir m_dir;
};

void tst_Definitions::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
    QVERIFY(m_dir.isValid());
}

std::unique_ptr<BrokerProcess> tst_Definitions::newBroker(const QString &driver, quint16 *adminPort)
{
    auto broker = std::make_unique<BrokerProcess>();
    if (driver == QLatin1String("postgresql")) {
        const auto &database = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        if (!database->isValid())
            qFatal("%s", qPrintable(database->error()));
        broker->usePostgres(m_fixture.host, m_fixture.port, m_fixture.user, database->name());
    }
    *adminPort = freePort();
    broker->set("admin.enabled", "true");
    broker->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(*adminPort));
    broker->set("admin.readonly_cns", R"(["ops-admin-2"])");
    return broker;
}

Run tst_Definitions::cmqAdmin(quint16 adminPort, const QStringList &args, const QString &identity)
{
    QProcess cmq;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CMQ_CERT"), certFile(identity + ".crt"));
    env.insert(QStringLiteral("CMQ_KEY"), certFile(identity + ".key"));
    env.insert(QStringLiteral("CMQ_CA"), certFile(QStringLiteral("ca.crt")));
    env.insert(QStringLiteral("CMQ_ADMIN_ADDRESS"), QStringLiteral("127.0.0.1:%1").arg(adminPort));
    cmq.setProcessEnvironment(env);
    cmq.start(QStringLiteral(CMQ_CLI_BIN), QStringList{QStringLiteral("admin")} + args);
    if (!cmq.waitForFinished(60000))
        return {};
    return {cmq.exitCode(), cmq.readAllStandardOutput(), cmq.readAllStandardError()};
}

void tst_Definitions::roundTripIntoFreshBroker()
{
    quint16 sourceAdmin = 0;
    const auto source = newBroker(QStringLiteral("sqlite"), &sourceAdmin);
    QVERIFY2(source->start(), source->output().constData());
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(source->port()));
        QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
        QCOMPARE(receiver.request("declare_exchange receiver_1_news fanout"), "Exchange declared");
        QCOMPARE(receiver.request("declare_exchange receiver_1_topics topic"), "Exchange declared");
        // Enough queues that the import takes several request lines.
        for (int i = 0; i < 40; ++i) {
            const QByteArray queue = "receiver_1_q" + QByteArray::number(i);
            QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
            QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue),
                     "Queue bound");
        }
        QCOMPARE(receiver.request("queue_policy receiver_1_q1 50 reject-publish 60000"),
                 "Queue policy set");
        QCOMPARE(receiver.request("queue_policy receiver_1_q2 7 drop-head"), "Queue policy set");
        // Dead-letter settings travel too (an export without them lost them on import). A
        // dead-letter exchange publishes for the queue's owner: an owner that may publish.
        TestClient both("both-svc");
        QVERIFY(both.connectTo(source->port()));
        QCOMPARE(both.request("declare_queue both-svc_in"), "Queue declared");
        QCOMPARE(both.request("queue_policy both-svc_in 0 drop-head dlx=receiver_1_news "
                              "dlx_key=receiver_1_dead delivery_limit=5 "
                              "dead_letter_overflow=on"),
                 "Queue policy set");
        QCOMPARE(receiver.request("bind receiver_1_q1 receiver_1_news receiver_1_any"),
                 "Queue bound");
        QCOMPARE(receiver.request("bind receiver_1_q2 receiver_1_topics receiver_1_orders.*.eu"),
                 "Queue bound");
        QCOMPARE(receiver.request("register_public_key "
                                  "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="),
                 "Public key registered");
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(source->port()));
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_q0 " + envelope("m-1")),
                 "ACK m-1");
    }
    const Run exported = cmqAdmin(sourceAdmin, {"definitions", "export"});
    QVERIFY2(exported.exitCode == 0, (exported.out + exported.err).constData());
    // Topology only: no envelope, no key.
    QVERIFY(!exported.out.contains("c2VjcmV0LWJ5dGVz"));
    QVERIFY(!exported.out.contains("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="));
    QVERIFY(!exported.out.contains("m-1"));
    const QJsonObject definitions = QJsonDocument::fromJson(exported.out).object();
    QCOMPARE(definitions.value("ciphermq_definitions").toInt(), 1);
    QCOMPARE(definitions.value("exchanges").toArray().size(), 3);
    QCOMPARE(definitions.value("queues").toArray().size(), 41);
    QCOMPARE(definitions.value("bindings").toArray().size(), 42);
    const QJsonObject q3 = [&] {
        for (const QJsonValue &q : definitions.value("queues").toArray()) {
            if (q.toObject().value("name") == QLatin1String("both-svc_in"))
                return q.toObject();
        }
        return QJsonObject();
    }();
    QCOMPARE(q3.value("dead_letter_exchange").toString(), QStringLiteral("receiver_1_news"));
    QCOMPARE(q3.value("dead_letter_routing_key").toString(), QStringLiteral("receiver_1_dead"));
    QCOMPARE(q3.value("delivery_limit").toInteger(), 5);
    QCOMPARE(q3.value("dead_letter_overflow").toBool(), true);
    const QString file = m_dir.filePath(QStringLiteral("defs.json"));
    {
        QFile out(file);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(exported.out);
    }

    quint16 targetAdmin = 0;
    const auto target = newBroker(QStringLiteral("postgresql"), &targetAdmin);
    QVERIFY2(target->start(), target->output().constData());
    const Run imported = cmqAdmin(targetAdmin, {"definitions", "import", file});
    QVERIFY2(imported.exitCode == 0, (imported.out + imported.err).constData());
    const QJsonObject summary = QJsonDocument::fromJson(imported.out).object();
    QCOMPARE(summary.value("exchanges").toInt(), 3);
    QCOMPARE(summary.value("queues").toInt(), 41);
    QCOMPARE(summary.value("bindings").toInt(), 42);
    QVERIFY2(summary.value("requests").toInt() > 1, imported.out.constData());

    TestClient ops("ops-admin");
    QVERIFY(ops.connectTo(targetAdmin));
    QCOMPARE(parse(ops.request("definitions")).toObject(), definitions);
    // Importing again changes nothing and reports no error.
    const Run again = cmqAdmin(targetAdmin, {"definitions", "import", file});
    QVERIFY2(again.exitCode == 0, (again.out + again.err).constData());
    QCOMPARE(parse(ops.request("definitions")).toObject(), definitions);
    for (const QJsonValue &q : parse(ops.request("queues")).toArray())
        QCOMPARE(q.toObject().value("ready").toInteger(), 0);
    QVERIFY(parse(ops.request("queue_messages receiver_1_q0"))
                .toObject()
                .value("messages")
                .toArray()
                .isEmpty());
    TestClient other("sender_1");
    QVERIFY(other.connectTo(target->port()));
    QCOMPARE(other.request("get_public_key receiver_1"), "Public key not found");
    // The policies hold: receiver_1_q2 keeps 7 messages at most.
    for (int i = 0; i < 9; ++i) {
        const QByteArray id = "t-" + QByteArray::number(i);
        QCOMPARE(other.request("publish CipherMQ_exchange receiver_1_q2 " + envelope(id)),
                 "ACK " + id);
    }
    QTRY_COMPARE_WITH_TIMEOUT(
        [&] {
            for (const QJsonValue &q : parse(ops.request("queues")).toArray()) {
                if (q.toObject().value("name") == QLatin1String("receiver_1_q2"))
                    return q.toObject().value("ready").toInteger();
            }
            return qint64(-1);
        }(),
        qint64(7), 15000);
    // On the audit trail, one entry per request line.
    const QJsonArray trail = parse(ops.request("audit")).toArray();
    QVERIFY(trail.size() >= 2);
    const QJsonObject first = trail.at(0).toObject();
    QCOMPARE(first.value("action").toString(), QStringLiteral("definitions_import"));
    QCOMPARE(first.value("target").toString(), QStringLiteral("definitions"));
    QCOMPARE(first.value("result").toString(), QStringLiteral("ok"));
    QVERIFY(first.value("detail").toString().startsWith("exchanges="));
}

void tst_Definitions::badDocumentChangesNothing()
{
    quint16 adminPort = 0;
    const auto broker = newBroker(QStringLiteral("sqlite"), &adminPort);
    QVERIFY2(broker->start(), broker->output().constData());
    TestClient ops("ops-admin");
    QVERIFY(ops.connectTo(adminPort));
    const QJsonObject before = parse(ops.request("definitions")).toObject();
    QCOMPARE(ops.request("definitions_import {\"exchanges\":[]}"),
             "Error: Invalid definitions: \"ciphermq_definitions\" must be 1");
    QCOMPARE(ops.request(R"(definitions_import {"ciphermq_definitions":1,"exchanges":[)"
                         R"({"name":"receiver_1_x","type":"direct"}],"queues":[)"
                         R"({"name":"receiver_1_y","owner":"receiver_1","overflow":"maybe"}]})"),
             "Error: Invalid definitions: queue 'receiver_1_y': \"overflow\" must be drop-head or "
             "reject-publish");
    QCOMPARE(ops.request(R"(definitions_import {"ciphermq_definitions":1,"exchanges":[)"
                         R"({"name":"receiver_1_x","type":"headers"}]})"),
             "Error: Invalid definitions: exchange 'receiver_1_x': unknown type 'headers'");
    QCOMPARE(ops.request("definitions_import [1,2]"),
             "Error: Invalid definitions: not a JSON object (an array)");
    QVERIFY(ops.request("definitions_import {oops")
                .startsWith("Error: Invalid definitions: not a JSON object ("));
    QCOMPARE(parse(ops.request("definitions")).toObject(), before);
    // A definition that cannot be applied is reported; the others are applied.
    const QJsonObject partial =
        parse(ops.request(R"(definitions_import {"ciphermq_definitions":1,)"
                          R"("queues":[{"name":"receiver_1_ok","owner":"receiver_1"}],)"
                          R"("bindings":[{"queue":"receiver_1_missing",)"
                          R"("exchange":"nowhere","routing_key":"receiver_1_k"}]})"))
            .toObject();
    QCOMPARE(partial.value("ok").toBool(), false);
    QCOMPARE(partial.value("queues").toInt(), 1);
    QCOMPARE(partial.value("bindings").toInt(), 0);
    QCOMPARE(partial.value("errors").toArray().size(), 1);
    QVERIFY(partial.value("errors")[0].toString().startsWith(
        "binding receiver_1_missing nowhere receiver_1_k: "));
    const QJsonArray trail = parse(ops.request("audit")).toArray();
    QCOMPARE(trail.size(), 6); // the five refused documents and the partial import
    QCOMPARE(trail.at(5)["result"].toString(), QStringLiteral("error"));
    QCOMPARE(trail.at(5)["detail"].toString(),
             QStringLiteral("exchanges=0 queues=1 bindings=0 errors=1"));
}

void tst_Definitions::readOnlyCannotImport()
{
    quint16 adminPort = 0;
    const auto broker = newBroker(QStringLiteral("sqlite"), &adminPort);
    QVERIFY2(broker->start(), broker->output().constData());
    const QString file = m_dir.filePath(QStringLiteral("one.json"));
    {
        QFile out(file);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(
            R"({"ciphermq_definitions":1,"queues":[{"name":"receiver_1_ro","owner":"receiver_1"}]})");
    }
    const Run refused = cmqAdmin(adminPort, {"definitions", "import", file}, "ops-admin-2");
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.contains("is read-only (admin.readonly_cns); 'definitions_import' "
                                  "refused"),
             refused.err.constData());
    // Export is a view: allowed.
    const Run exported = cmqAdmin(adminPort, {"definitions", "export"}, "ops-admin-2");
    QCOMPARE(exported.exitCode, 0);
    QVERIFY(QJsonDocument::fromJson(exported.out).object().value("queues").toArray().isEmpty());
}

QTEST_GUILESS_MAIN(tst_Definitions)
#include "tst_51_definitions.moc"
