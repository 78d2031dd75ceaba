// PostgreSQL failover under a broker (docs/OPERATIONS.md, High availability, "Procedure"): a
// primary with a synchronous streaming standby, two local clusters on free ports; the broker
// lists both in database.host/port. Mid-stream the primary dies (pg_ctl stop -m immediate) and
// the standby is promoted (pg_ctl promote); the broker finds the new primary through its host
// list by itself, every ACKed message is delivered from it, and none that got an error is.

#include <QtTest>

#include "brokerprocess.h"
#include "hatest.h"
#include "testpostgres.h"

using namespace cmq::test;

class tst_PgFailover : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void primaryFailsMidStream();
};

void tst_PgFailover::primaryFailsMidStream()
{
    PrivatePostgres pg;
    QVERIFY2(pg.isValid(), qPrintable(pg.error()));
    const QString standbyError = pg.startStandby();
    QVERIFY2(standbyError.isEmpty(), qPrintable(standbyError));
    const quint16 primary = pg.server().port, standby = pg.standby().port;

    BrokerProcess broker;
    broker.usePostgres(pg.server().host, primary, pg.server().user, QStringLiteral("postgres"));
    broker.set("database.host", QStringLiteral(R"(["127.0.0.1", "127.0.0.1"])"));
    broker.set("database.port", QStringLiteral("[%1, %2]").arg(primary).arg(standby));
    broker.set("cluster.lease_ms", "15000");
    broker.set("cluster.poll_ms", "500");
    broker.set("performance.max_queue_size", "100000");
    broker.set("rate_limit.enabled", "false");
    QVERIFY2(broker.start(), broker.output().constData());
    QVERIFY(haDeclare(broker.port(), "receiver_1_pgfo"));

    // The broker stays reachable: the publisher waits out the outage (no stall limit to speak of).
    HaPublisher publisher({broker.port()}, "receiver_1_pgfo", "pgfo", 32, 60000);
    QVERIFY2(publisher.pump(60000, [&] { return publisher.acked().size() >= 300; }),
             "the stream did not get going");
    QVERIFY2(pg.crashServer().isEmpty(), "cannot crash the primary");
    const qsizetype ackedBefore = publisher.acked().size();
    publisher.pump(500); // publishes meet the dead primary
    const QString promoted = pg.promoteStandby();
    QVERIFY2(promoted.isEmpty(), qPrintable(promoted));
    // The broker carries on with the promoted standby: new publishes are ACKed again.
    QVERIFY2(publisher.pump(90000, [&] { return publisher.acked().size() >= ackedBefore + 300; }),
             broker.output().constData());
    QTRY_VERIFY2_WITH_TIMEOUT(broker.output().contains("database available again"),
                              broker.output().constData(), 10000);

    const QString wrong = haCheckDelivery(publisher, broker.port(), "receiver_1_pgfo", ackedBefore);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

QTEST_GUILESS_MAIN(tst_PgFailover)
#include "tst_35_pg_failover.moc"
