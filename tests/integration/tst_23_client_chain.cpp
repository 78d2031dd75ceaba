// Mail Pigeon's multi-process test on our stack: three services in separate processes
// (cmq_test_service chain) pass encrypted messages along svc-a → svc-b → svc-c → svc-a, each
// link enriching them; the originator must get every chain back exactly once with the full
// trail. The broker runs on PostgreSQL.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "clienttest.h"
#include "testpostgres.h"

using namespace cmq::test;

class tst_ClientChain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void chainOfThreeProcesses();
};

void tst_ClientChain::chainOfThreeProcesses()
{
    constexpr int Chains = 10;
    constexpr int Patience = 90000;
    QString error;
    const PostgresServer server = fixturePostgres(&error);
    QVERIFY2(server.isValid(), qPrintable(error));
    TestDatabase database(server);
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess broker;
    broker.usePostgres(database.name());
    QVERIFY2(broker.start(), broker.output().constData());

    QTemporaryDir dir;
    const auto service = [&](const QString &name, const QString &next) {
        return QStringList{QStringLiteral("chain"),
                           QStringLiteral("--name"),
                           name,
                           QStringLiteral("--next"),
                           next,
                           QStringLiteral("--identity"),
                           makeKeyPair(dir, name)} +
               cmqConnection(name, {broker.port()});
    };
    LineProcess b;
    LineProcess c;
    LineProcess a;
    b.start(QStringLiteral(CMQ_SERVICE_BIN), service("svc-b", "svc-c"));
    c.start(QStringLiteral(CMQ_SERVICE_BIN), service("svc-c", "svc-a"));
    // The originator may start before the others are up: its messages wait for their receiver.
    a.start(QStringLiteral(CMQ_SERVICE_BIN),
            service("svc-a", "svc-b") +
                QStringList{"--origin", "--count", QString::number(Chains)});

    QVERIFY2(a.finished(Patience), a.errors().constData());
    QVERIFY2(a.process.exitCode() == 0, a.errors().constData());
    QVERIFY2(b.lines.contains("ready"), b.errors().constData());
    QVERIFY2(c.lines.contains("ready"), c.errors().constData());

    QSet<QString> chains;
    for (const QByteArray &line : std::as_const(a.lines)) {
        if (line == "ready")
            continue;
        const QJsonObject payload = QJsonDocument::fromJson(line).object();
        const QString chain = payload.value("chain").toString();
        QVERIFY2(!chains.contains(chain), qPrintable("came back twice: " + chain));
        chains.insert(chain);
        QVERIFY(payload.value("text").toString().startsWith("order "));
        const QJsonArray trail = payload.value("trail").toArray();
        QCOMPARE(trail.size(), 4);
        const QStringList expected{"svc-a", "svc-b", "svc-c", "svc-a"};
        for (int hop = 0; hop < 4; ++hop) {
            QCOMPARE(trail.at(hop).toObject().value("by").toString(), expected.at(hop));
            QCOMPARE(trail.at(hop).toObject().value("hop").toInt(), hop);
        }
        // Each link read the decrypted text (it counted its characters).
        const int length = payload.value("text").toString().size();
        for (int hop = 1; hop < 4; ++hop)
            QCOMPARE(trail.at(hop).toObject().value("seen").toInt(), length);
    }
    QCOMPARE(chains.size(), Chains);
    // Nothing from the application ever reached the broker in the clear.
    QVERIFY(!broker.output().contains("order 0 from svc-a"));
}

QTEST_GUILESS_MAIN(tst_ClientChain)
#include "tst_23_client_chain.moc"
