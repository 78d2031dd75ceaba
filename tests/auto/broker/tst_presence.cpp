// Presence without sockets: who is told what (groups), the debounce of a leaver who comes back,
// several connections of one identity, and subscribers whose output is backed up (they get the
// latest state of each identity once they can take output, never a growing log).
#include <QTest>

#include "core/presence.h"
#include "routerfakes.h"

using cmq::Presence;
using cmq::test::FakeEndpoint;

class tst_Presence : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void groupsDecideWhoSeesWhom_data();
    void groupsDecideWhoSeesWhom();
    void subscribeListsWhoIsOnline();
    void leaverWhoComesBackInTimeIsNotTold();
    void leaverIsToldAfterTheDebounce();
    void lastConnectionDecides();
    void backedUpSubscriberGetsLatestState();
    void unsubscribedIsToldNothing();
    void reloadDropsSubscribersOutsideEveryGroup();

private:
    qint64 m_now = 0;
    std::unique_ptr<Presence> make(const QList<QStringList> &groups, int debounceMs = 1000);
};

void tst_Presence::init()
{
    m_now = 1000;
}

std::unique_ptr<Presence> tst_Presence::make(const QList<QStringList> &groups, int debounceMs)
{
    auto presence = std::make_unique<Presence>(groups, debounceMs);
    presence->setClock([this] { return m_now; });
    return presence;
}

void tst_Presence::groupsDecideWhoSeesWhom_data()
{
    QTest::addColumn<QString>("subscriber");
    QTest::addColumn<QString>("comer");
    QTest::addColumn<QByteArray>("told");
    QTest::newRow("same group") << "svc-a"
                                << "svc-b" << QByteArray("Presence: svc-b online\n");
    QTest::newRow("other group") << "svc-a"
                                 << "svc-c" << QByteArray();
    QTest::newRow("in both groups sees both") << "svc-b"
                                              << "svc-c" << QByteArray("Presence: svc-c online\n");
    QTest::newRow("in no group") << "svc-a"
                                 << "stranger" << QByteArray();
}

void tst_Presence::groupsDecideWhoSeesWhom()
{
    QFETCH(QString, subscriber);
    QFETCH(QString, comer);
    QFETCH(QByteArray, told);
    auto presence = make({{"svc-a", "svc-b"}, {"svc-b", "svc-c"}});
    FakeEndpoint endpoint(1, subscriber);
    presence->connected(subscriber);
    QVERIFY(presence->mayUse(subscriber));
    QVERIFY(presence->subscribe(endpoint).isEmpty());
    presence->connected(comer);
    QCOMPARE(endpoint.received, told);
    QVERIFY(!presence->mayUse("stranger"));
}

void tst_Presence::subscribeListsWhoIsOnline()
{
    auto presence = make({{"svc-a", "svc-b", "svc-c", "svc-d"}});
    for (const char *cn : {"svc-d", "svc-b", "svc-a"})
        presence->connected(cn);
    FakeEndpoint a(1, "svc-a");
    QCOMPARE(presence->subscribe(a), (QStringList{"svc-b", "svc-d"})); // sorted, not itself
    QCOMPARE(a.received, QByteArray()); // the handler sends the list with its reply
    presence->connected("svc-b");       // a second connection: nothing new
    QCOMPARE(a.received, QByteArray());
}

void tst_Presence::leaverWhoComesBackInTimeIsNotTold()
{
    auto presence = make({{"svc-a", "svc-b"}}, 1000);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    presence->connected("svc-b");
    a.received.clear();
    presence->disconnected("svc-b");
    m_now += 999;
    presence->expireDue();
    presence->connected("svc-b");
    m_now += 5000;
    presence->expireDue();
    QCOMPARE(a.received, QByteArray());
    QVERIFY(presence->isOnline("svc-b"));
}

void tst_Presence::leaverIsToldAfterTheDebounce()
{
    auto presence = make({{"svc-a", "svc-b"}}, 1000);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    presence->connected("svc-b");
    presence->disconnected("svc-b");
    m_now += 999;
    presence->expireDue();
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\n"));
    m_now += 1;
    presence->expireDue();
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\nPresence: svc-b offline\n"));
    presence->connected("svc-b");
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\nPresence: svc-b offline\n"
                                    "Presence: svc-b online\n"));
}

void tst_Presence::lastConnectionDecides()
{
    auto presence = make({{"svc-a", "svc-b"}}, 0);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    presence->connected("svc-b");
    presence->connected("svc-b");
    presence->disconnected("svc-b");
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\n"));
    presence->disconnected("svc-b"); // debounce 0: at once
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\nPresence: svc-b offline\n"));
    presence->disconnected("svc-b"); // one too many (never happens): ignored
    QCOMPARE(a.received, QByteArray("Presence: svc-b online\nPresence: svc-b offline\n"));
}

void tst_Presence::backedUpSubscriberGetsLatestState()
{
    auto presence = make({{"svc-a", "svc-b", "svc-c"}}, 0);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    a.writable = false;
    for (int i = 0; i < 1000; ++i) { // svc-b flaps; svc-c comes and stays
        presence->connected("svc-b");
        presence->disconnected("svc-b");
    }
    presence->connected("svc-c");
    QCOMPARE(a.received, QByteArray());
    a.writable = true;
    presence->endpointWritable(a);
    // svc-b ended offline, as a was last told (nothing); svc-c is online.
    QCOMPARE(a.received, QByteArray("Presence: svc-c online\n"));
}

void tst_Presence::unsubscribedIsToldNothing()
{
    auto presence = make({{"svc-a", "svc-b"}}, 0);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    presence->unsubscribe(a);
    presence->connected("svc-b");
    QCOMPARE(a.received, QByteArray());
    QCOMPARE(presence->subscriberCount(), 0);
}

void tst_Presence::reloadDropsSubscribersOutsideEveryGroup()
{
    auto presence = make({{"svc-a", "svc-b"}}, 0);
    FakeEndpoint a(1, "svc-a");
    presence->subscribe(a);
    presence->configure({{"svc-b", "svc-c"}}, 0);
    QCOMPARE(presence->subscriberCount(), 0);
    presence->connected("svc-b");
    QCOMPARE(a.received, QByteArray());
}

QTEST_GUILESS_MAIN(tst_Presence)
#include "tst_presence.moc"
