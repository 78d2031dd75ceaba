// Message ids in the existing clients' form, and reading the sender back out of them.

#include <QTest>

#include "client/messageid.h"

using namespace cmq::client;

class tst_MessageId : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void makeAndParse_data();
    void makeAndParse();
    void otherForms_data();
    void otherForms();
    void correlationIdsAreUnique();
};

void tst_MessageId::makeAndParse_data()
{
    QTest::addColumn<QString>("sender");
    QTest::addColumn<QString>("receiver");
    QTest::newRow("plain") << "sender_1"
                           << "receiver_1";
    QTest::newRow("dashes in names") << "svc-a"
                                     << "svc-b-backup";
    QTest::newRow("dots") << "billing.prod"
                          << "ledger.prod";
}

void tst_MessageId::makeAndParse()
{
    QFETCH(QString, sender);
    QFETCH(QString, receiver);
    const QString correlation = newCorrelationId();
    const QString id = makeMessageId(sender, correlation, receiver);
    QCOMPARE(id, sender + u'-' + correlation + u'-' + receiver);
    const MessageIdParts parts = parseMessageId(id);
    QCOMPARE(parts.sender, sender);
    QCOMPARE(parts.correlationId, correlation);
    QCOMPARE(parts.receiver, receiver);
}

void tst_MessageId::otherForms_data()
{
    QTest::addColumn<QString>("id");
    QTest::newRow("no uuid") << "sender_1-1234-receiver_1";
    QTest::newRow("empty") << "";
    QTest::newRow("uuid only") << "0b6e5a4c-1f2d-4e3a-9b8c-7d6e5f4a3b2c";
    QTest::newRow("braces") << "a-{0b6e5a4c-1f2d-4e3a-9b8c-7d6e5f4a3b2c}-b";
}

void tst_MessageId::otherForms()
{
    QFETCH(QString, id);
    const MessageIdParts parts = parseMessageId(id);
    QVERIFY(parts.sender.isEmpty());
    QVERIFY(parts.receiver.isEmpty());
}

void tst_MessageId::correlationIdsAreUnique()
{
    QSet<QString> ids;
    for (int i = 0; i < 1000; ++i)
        ids.insert(newCorrelationId());
    QCOMPARE(ids.size(), 1000);
    QCOMPARE(newCorrelationId().size(), 36);
}

QTEST_GUILESS_MAIN(tst_MessageId)
#include "tst_messageid.moc"
