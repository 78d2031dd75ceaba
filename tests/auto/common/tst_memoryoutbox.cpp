// The in-memory outbox: save / read in sequence order / remove, replacing by message id.

#include <QTest>

#include "client/memoryoutbox.h"

using namespace cmq::client;

class tst_MemoryOutbox : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void saveReadRemove();
};

static OutboxEntry entry(const QString &id, qint64 sequence, const QByteArray &envelope = "{}")
{
    OutboxEntry e;
    e.messageId = id;
    e.exchange = QStringLiteral("x");
    e.routingKey = QStringLiteral("k");
    e.envelope = envelope;
    e.sequence = sequence;
    return e;
}

void tst_MemoryOutbox::saveReadRemove()
{
    MemoryOutbox box;
    QVERIFY(box.save(entry("c", 3)).ok());
    QVERIFY(box.save(entry("a", 1)).ok());
    QVERIFY(box.save(entry("b", 2)).ok());
    QVERIFY(box.save(entry("a", 1, "{\"sealed\":1}")).ok()); // replaces
    auto all = box.readAll();
    QVERIFY(all.ok());
    QCOMPARE(all->size(), 3);
    QCOMPARE(all->at(0).messageId, "a");
    QCOMPARE(all->at(0).envelope, "{\"sealed\":1}");
    QCOMPARE(all->at(1).messageId, "b");
    QCOMPARE(all->at(2).messageId, "c");
    QVERIFY(box.remove("b").ok());
    QVERIFY(box.remove("nope").ok());
    all = box.readAll();
    QCOMPARE(all->size(), 2);
    QCOMPARE(all->at(1).messageId, "c");
}

QTEST_GUILESS_MAIN(tst_MemoryOutbox)
#include "tst_memoryoutbox.moc"
