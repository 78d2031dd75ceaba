// Per-CN quotas (performance.max_queues_per_cn, max_exchanges_per_cn, max_bindings_per_cn):
// beyond them a declare or bind is refused with an error, other CNs are unaffected, and the
// counts survive a restart (they are rebuilt from what is stored).

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

class tst_Quotas : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void quotasPerCn();
};

void tst_Quotas::quotasPerCn()
{
    BrokerProcess broker;
    broker.set("performance.max_queues_per_cn", "3");
    broker.set("performance.max_exchanges_per_cn", "2");
    broker.set("performance.max_bindings_per_cn", "2");
    QVERIFY2(broker.start(), broker.output().constData());
    {
        TestClient r1("receiver_1");
        QVERIFY(r1.connectTo(broker.port()));
        for (int i = 0; i < 3; ++i)
            QCOMPARE(r1.request("declare_queue receiver_1_q" + QByteArray::number(i)),
                     "Queue declared");
        QCOMPARE(r1.request("declare_queue receiver_1_q3"),
                 "Error: Queue quota of 'receiver_1' reached (3 queues)");
        QCOMPARE(r1.request("consume receiver_1_q4"),
                 "Error: Queue quota of 'receiver_1' reached (3 queues)");
        QCOMPARE(r1.request("declare_queue receiver_1_q0"), "Queue declared"); // exists: free

        QCOMPARE(r1.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
        QCOMPARE(r1.request("declare_exchange receiver_1_x1"), "Exchange declared");
        QCOMPARE(r1.request("declare_exchange receiver_1_x2"),
                 "Error: Exchange quota of 'receiver_1' reached (2 exchanges)");
        QCOMPARE(r1.request("declare_exchange CipherMQ_exchange"), "Exchange declared");

        QCOMPARE(r1.request("bind receiver_1_q0 CipherMQ_exchange receiver_1_q0"), "Queue bound");
        QCOMPARE(r1.request("bind receiver_1_q1 CipherMQ_exchange receiver_1_q1"), "Queue bound");
        QCOMPARE(r1.request("bind receiver_1_q2 CipherMQ_exchange receiver_1_q2"),
                 "Error: Binding quota of 'receiver_1' reached (2 bindings)");
        QCOMPARE(r1.request("bind receiver_1_q0 CipherMQ_exchange receiver_1_q0"), "Queue bound");

        // Another CN has its own allowance.
        TestClient r2("receiver_2");
        QVERIFY(r2.connectTo(broker.port()));
        QCOMPARE(r2.request("declare_queue receiver_2_q0"), "Queue declared");
        QCOMPARE(r2.request("declare_exchange receiver_2_x1"), "Exchange declared");
        QCOMPARE(r2.request("bind receiver_2_q0 CipherMQ_exchange receiver_2_q0"), "Queue bound");
    }
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient r1("receiver_1");
    QVERIFY(r1.connectTo(broker.port()));
    QCOMPARE(r1.request("declare_queue receiver_1_q3"),
             "Error: Queue quota of 'receiver_1' reached (3 queues)");
    QCOMPARE(r1.request("declare_exchange receiver_1_x2"),
             "Error: Exchange quota of 'receiver_1' reached (2 exchanges)");
    QCOMPARE(r1.request("bind receiver_1_q2 CipherMQ_exchange receiver_1_q2"),
             "Error: Binding quota of 'receiver_1' reached (2 bindings)");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Quotas)
#include "tst_18_quotas.moc"
