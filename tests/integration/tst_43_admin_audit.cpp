// The audit trail of admin actions and read-only operators against the real broker
// (docs/ADMIN-PROTOCOL.md, "audit" and admin.readonly_cns): every action is recorded with
// who, from where, what, on what and how it ended; the ring is bounded; the trail survives a
// restart (and kill -9 after the reply) on both drivers; a read-only identity watches but
// every action is refused, and the refusal is on the trail too; `cmq admin audit` prints it.

#include <memory>
#include <vector>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
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

// action, target and result of each entry, "purge receiver_1_a ok".
QStringList summary(const QJsonArray &entries)
{
    QStringList out;
    for (const QJsonValue &v : entries) {
        const QJsonObject e = v.toObject();
        out << QStringLiteral("%1 %2 %3")
                   .arg(e.value("action").toString(), e.value("target").toString(),
                        e.value("result").toString());
    }
    return out;
}

} // namespace

class tst_AdminAudit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void everyActionIsRecorded();
    void readOnlyIdentityIsRefused();
    void readOnlyAppliesOnReload();
    void ringIsBounded();
    void survivesRestart_data();
    void survivesRestart();
    void cmqAdminAudit();

private:
    // A broker with the admin listener on a free port; `driver` sqlite or postgresql.
    std::unique_ptr<BrokerProcess> newBroker(const QString &driver = QStringLiteral("sqlite"));
    std::unique_ptr<TestClient> admin(const QString &identity = QStringLiteral("ops-admin"));
    // A queue receiver_1_<name> holding `messages` messages.
    void queueWithMessages(const QByteArray &name, int messages);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
    BrokerProcess *m_broker = nullptr;
    quint16 m_adminPort = 0;
};

void tst_AdminAudit::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

std::unique_ptr<BrokerProcess> tst_AdminAudit::newBroker(const QString &driver)
{
    auto broker = std::make_unique<BrokerProcess>();
    if (driver == QLatin1String("postgresql")) {
        const auto &database = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        if (!database->isValid())
            qFatal("%s", qPrintable(database->error()));
        broker->usePostgres(m_fixture.host, m_fixture.port, m_fixture.user, database->name());
    }
    m_adminPort = freePort();
    broker->set("admin.enabled", "true");
    broker->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    m_broker = broker.get();
    return broker;
}

std::unique_ptr<TestClient> tst_AdminAudit::admin(const QString &identity)
{
    auto client = std::make_unique<TestClient>(identity);
    if (!client->connectTo(m_adminPort))
        qFatal("cannot connect to the admin listener: %s", qPrintable(client->errorString()));
    return client;
}

void tst_AdminAudit::queueWithMessages(const QByteArray &name, int messages)
{
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(m_broker->port()));
    const QByteArray queue = "receiver_1_" + name;
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_broker->port()));
    for (int i = 0; i < messages; ++i) {
        const QByteArray id = name + '-' + QByteArray::number(i);
        QCOMPARE(sender.request("publish CipherMQ_exchange " + queue + R"( {"message_id":")" + id +
                                R"(","receiver_client_id":"receiver_1","enc_session_key":"ZQ==",)"
                                R"("nonce":"bg==","ciphertext":"Yw=="})"),
                 "ACK " + id);
    }
}

void tst_AdminAudit::everyActionIsRecorded()
{
    const auto broker = newBroker();
    QVERIFY2(broker->start(), broker->output().constData());
    queueWithMessages("audited", 3);
    queueWithMessages("deleted", 1);
    const auto ops = admin();
    TestClient data("receiver_2");
    QVERIFY(data.connectTo(broker->port()));
    // A reply means the broker has admitted the connection.
    QCOMPARE(data.request("declare_queue receiver_2_victim"), "Queue declared");
    const qint64 dataId = [&] {
        for (const QJsonValue &c : parse(ops->request("connections")).toArray()) {
            if (c.toObject().value("cn") == QLatin1String("receiver_2"))
                return c.toObject().value("id").toInteger();
        }
        return qint64(0);
    }();
    QVERIFY(dataId > 0);
    QVERIFY(parse(ops->request("audit")).toArray().isEmpty());

    QVERIFY(ops->request("purge receiver_1_audited").contains(R"("purged":3)"));
    QVERIFY(ops->request("delete_queue receiver_1_deleted").contains(R"("ok":true)"));
    QVERIFY(ops->request("disconnect " + QByteArray::number(dataId)).contains(R"("ok":true)"));
    QCOMPARE(ops->request("purge receiver_1_nothing"),
             "Error: Queue 'receiver_1_nothing' not found");
    QVERIFY(ops->request("reload").contains(R"("action":"reload")"));

    const QJsonArray entries = parse(ops->request("audit")).toArray();
    QCOMPARE(summary(entries),
             (QStringList{
                 "purge receiver_1_audited ok", "delete_queue receiver_1_deleted ok",
                 QStringLiteral("disconnect %1 ok").arg(dataId), "purge receiver_1_nothing error",
                 QStringLiteral("reload %1 ok").arg(entries.last()["target"].toString())}));
    for (int i = 0; i < entries.size(); ++i) {
        const QJsonObject e = entries[i].toObject();
        QCOMPARE(e.value("id").toInteger(), i + 1);
        QCOMPARE(e.value("cn").toString(), QStringLiteral("ops-admin"));
        QCOMPARE(e.value("address").toString(), QStringLiteral("127.0.0.1"));
        const QDateTime time = QDateTime::fromString(e.value("time").toString(), Qt::ISODateWithMs);
        QVERIFY(time.isValid());
        QVERIFY(qAbs(time.secsTo(QDateTime::currentDateTimeUtc())) < 600);
    }
    QCOMPARE(entries[0]["detail"].toString(), QStringLiteral("purged=3"));
    QCOMPARE(entries[3]["detail"].toString(),
             QStringLiteral("Queue 'receiver_1_nothing' not found"));
    QVERIFY(entries[4]["target"].toString().endsWith(QLatin1String(".toml")));
    QCOMPARE(summary(parse(ops->request("audit 2")).toArray()), summary(entries).mid(3));

    // The snapshot names the requester's role and the newest entry.
    const QJsonObject snapshot = parse(ops->request("json")).toObject();
    QCOMPARE(snapshot["session"]["cn"].toString(), QStringLiteral("ops-admin"));
    QCOMPARE(snapshot["session"]["read_only"].toBool(true), false);
    QCOMPARE(snapshot["audit"]["last_id"].toInteger(), 5);
    // And the JSON log has each action.
    QTRY_VERIFY_WITH_TIMEOUT(broker->output().contains("ciphermq.audit: admin action 5: "
                                                       "ops-admin from 127.0.0.1: reload"),
                             15000);
}

void tst_AdminAudit::readOnlyIdentityIsRefused()
{
    const auto broker = newBroker();
    broker->set("admin.readonly_cns", R"(["ops-admin-2"])");
    QVERIFY2(broker->start(), broker->output().constData());
    queueWithMessages("kept", 2);
    const auto watcher = admin(QStringLiteral("ops-admin-2"));
    // Watching and exporting work.
    QVERIFY(watcher->request("queues").contains(R"("ready":2)"));
    const QJsonObject snapshot = parse(watcher->request("json")).toObject();
    QCOMPARE(snapshot["session"]["read_only"].toBool(), true);
    QVERIFY(watcher->request("audit").startsWith('['));
    // Every action is refused, and nothing happens.
    for (const QByteArray &action :
         {QByteArray("purge receiver_1_kept"), QByteArray("delete_queue receiver_1_kept"),
          QByteArray("disconnect 1"), QByteArray("reload")}) {
        const QByteArray word =
            action.left(action.indexOf(' ') < 0 ? action.size() : action.indexOf(' '));
        QCOMPARE(watcher->request(action),
                 "Error: Forbidden: certificate CN 'ops-admin-2' is read-only "
                 "(admin.readonly_cns); '" +
                     word + "' refused");
    }
    const auto ops = admin();
    QVERIFY(ops->request("queues").contains(R"("ready":2)"));
    const QJsonArray entries = parse(ops->request("audit")).toArray();
    const QStringList all = summary(entries);
    QCOMPARE(all.mid(0, 3),
             (QStringList{"purge receiver_1_kept refused", "delete_queue receiver_1_kept refused",
                          "disconnect 1 refused"}));
    QVERIFY2(all.value(3).startsWith("reload /") && all.value(3).endsWith(".toml refused"),
             qPrintable(all.join(u'|')));
    QCOMPARE(entries[0]["cn"].toString(), QStringLiteral("ops-admin-2"));
    QCOMPARE(entries[0]["detail"].toString(), QStringLiteral("read-only (admin.readonly_cns)"));
    // A full admin still acts.
    QVERIFY(ops->request("purge receiver_1_kept").contains(R"("purged":2)"));
}

void tst_AdminAudit::readOnlyAppliesOnReload()
{
    const auto broker = newBroker();
    QVERIFY2(broker->start(), broker->output().constData());
    queueWithMessages("later", 1);
    const auto ops2 = admin(QStringLiteral("ops-admin-2"));
    QCOMPARE(parse(ops2->request("json"))["session"]["read_only"].toBool(true), false);
    broker->set("admin.readonly_cns", R"(["ops-admin-2"])");
    broker->writeConfig();
    QVERIFY(ops2->request("reload").contains(R"("ok":true)"));
    QVERIFY(ops2->request("purge receiver_1_later").startsWith("Error: Forbidden: "));
    QCOMPARE(parse(ops2->request("json"))["session"]["read_only"].toBool(), true);
}

void tst_AdminAudit::ringIsBounded()
{
    const auto broker = newBroker();
    broker->set("admin.audit_entries", "3");
    QVERIFY2(broker->start(), broker->output().constData());
    const auto ops = admin();
    for (int i = 0; i < 7; ++i)
        QVERIFY(ops->request("purge receiver_1_q" + QByteArray::number(i)).startsWith("Error: "));
    const QJsonArray entries = parse(ops->request("audit 100")).toArray();
    QCOMPARE(summary(entries),
             (QStringList{"purge receiver_1_q4 error", "purge receiver_1_q5 error",
                          "purge receiver_1_q6 error"}));
    QCOMPARE(entries.last()["id"].toInteger(), 7);
    const QJsonObject snapshot = parse(ops->request("json")).toObject();
    QCOMPARE(snapshot["audit"]["held"].toInteger(), 3);
    QCOMPARE(snapshot["audit"]["capacity"].toInteger(), 3);
}

void tst_AdminAudit::survivesRestart_data()
{
    QTest::addColumn<QString>("driver");
    QTest::addColumn<bool>("kill");
    QTest::newRow("sqlite, SIGTERM") << "sqlite" << false;
    QTest::newRow("sqlite, kill -9") << "sqlite" << true;
    QTest::newRow("postgresql, SIGTERM") << "postgresql" << false;
    QTest::newRow("postgresql, kill -9") << "postgresql" << true;
}

void tst_AdminAudit::survivesRestart()
{
    QFETCH(QString, driver);
    QFETCH(bool, kill);
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    queueWithMessages("restart", 2);
    QStringList before;
    {
        const auto ops = admin();
        QVERIFY(ops->request("purge receiver_1_restart").contains(R"("purged":2)"));
        QVERIFY(ops->request("purge receiver_1_none").startsWith("Error: "));
        before = summary(parse(ops->request("audit")).toArray());
        // The reply to an action means the database has its record: kill -9 loses nothing.
        if (kill)
            broker->kill();
        else
            QVERIFY(broker->terminate());
    }
    QCOMPARE(before.size(), 2);
    QVERIFY2(broker->start(), broker->output().constData());
    const auto ops = admin();
    QCOMPARE(summary(parse(ops->request("audit")).toArray()), before);
    // Numbering goes on after the restored entries.
    QVERIFY(ops->request("purge receiver_1_restart").contains(R"("purged":0)"));
    const QJsonArray after = parse(ops->request("audit")).toArray();
    QCOMPARE(after.size(), 3);
    QCOMPARE(after.last()["id"].toInteger(), 3);
}

void tst_AdminAudit::cmqAdminAudit()
{
    const auto broker = newBroker();
    QVERIFY2(broker->start(), broker->output().constData());
    queueWithMessages("cli", 1);
    QVERIFY(admin()->request("purge receiver_1_cli").contains(R"("purged":1)"));
    QProcess cmq;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CMQ_CERT"), certFile(QStringLiteral("ops-admin.crt")));
    env.insert(QStringLiteral("CMQ_KEY"), certFile(QStringLiteral("ops-admin.key")));
    env.insert(QStringLiteral("CMQ_CA"), certFile(QStringLiteral("ca.crt")));
    env.insert(QStringLiteral("CMQ_ADMIN_ADDRESS"),
               QStringLiteral("127.0.0.1:%1").arg(m_adminPort));
    cmq.setProcessEnvironment(env);
    cmq.start(QStringLiteral(CMQ_CLI_BIN),
              {QStringLiteral("admin"), QStringLiteral("audit"), QStringLiteral("10")});
    QVERIFY(cmq.waitForFinished(30000));
    const QByteArray out = cmq.readAllStandardOutput();
    QVERIFY2(cmq.exitCode() == 0, (out + cmq.readAllStandardError()).constData());
    const QJsonArray entries = QJsonDocument::fromJson(out).array();
    QCOMPARE(summary(entries), (QStringList{"purge receiver_1_cli ok"}));
    QCOMPARE(entries[0]["detail"].toString(), QStringLiteral("purged=1"));
}

QTEST_GUILESS_MAIN(tst_AdminAudit)
#include "tst_43_admin_audit.moc"
