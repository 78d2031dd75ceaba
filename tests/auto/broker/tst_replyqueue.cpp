// The session's output framing: replies leave in request order, deliveries pushed while a
// reply is pending wait behind it, and every byte held counts toward the connection's bound.
// Driven by scripts of operations, without sockets.
#include <QTest>

#include "net/replyqueue.h"

using namespace cmq;

namespace {

// A script is a list of steps:
//   "r"      reserve the next request's slot (slots are numbered from 0 in this script)
//   "c<n>:X" complete slot n with the line "X\n" ("c<n>:" with no line: a request not answered)
//   "d:X"    push the delivery line "X\n"
//   "t"      take what is ready; the lines written are appended to the output
//   "x"      clear (the connection is gone)
struct Run
{
    QByteArray written;
    qint64 heldBytes = 0;
    qsizetype size = 0;
};

Run play(const QStringList &script)
{
    ReplyQueue queue;
    QList<quint64> slots;
    Run run;
    for (const QString &step : script) {
        if (step == u"r") {
            slots << queue.reserve();
        } else if (step.startsWith(u'c')) {
            const qsizetype colon = step.indexOf(u':');
            const int index = step.mid(1, colon - 1).toInt();
            const QString text = step.mid(colon + 1);
            const QByteArray line = text.isEmpty() ? QByteArray() : text.toUtf8() + '\n';
            queue.complete(slots.at(index), line);
        } else if (step.startsWith(u"d:")) {
            queue.pushReady(step.mid(2).toUtf8() + '\n');
        } else if (step == u"t") {
            queue.takeReady([&run](const QByteArray &lines) { run.written += lines; });
        } else if (step == u"x") {
            queue.clear();
        } else {
            qFatal("unknown step %s", qPrintable(step));
        }
    }
    run.heldBytes = queue.heldBytes();
    run.size = queue.size();
    return run;
}

} // namespace

class TestReplyQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ordering_data();
    void ordering();
    void completionAfterClearIsIgnored();
    void slotsStayValidAcrossTakes();
};

void TestReplyQueue::ordering_data()
{
    QTest::addColumn<QStringList>("script");
    QTest::addColumn<QByteArray>("written");
    QTest::addColumn<qint64>("heldBytes");
    QTest::addColumn<qsizetype>("pending");

    QTest::newRow("one reply") << QStringList{"r", "c0:ACK a", "t"} << QByteArray("ACK a\n")
                               << qint64(0) << qsizetype(0);
    QTest::newRow("nothing leaves before its reply")
        << QStringList{"r", "t"} << QByteArray() << qint64(0) << qsizetype(1);
    QTest::newRow("replies leave in request order, not completion order")
        << QStringList{"r", "r", "c1:ACK b", "t", "c0:ACK a", "t"} << QByteArray("ACK a\nACK b\n")
        << qint64(0) << qsizetype(0);
    QTest::newRow("a later reply waits for an earlier one, and is held")
        << QStringList{"r", "r", "c1:ACK b", "t"} << QByteArray() << qint64(6) << qsizetype(2);
    QTest::newRow("a delivery with nothing pending leaves at once")
        << QStringList{"d:Message: m1", "t"} << QByteArray("Message: m1\n") << qint64(0)
        << qsizetype(0);
    QTest::newRow("a delivery waits behind a pending publish reply")
        << QStringList{"r", "d:Message: m1", "t"} << QByteArray() << qint64(12) << qsizetype(2);
    QTest::newRow("then follows it")
        << QStringList{"r", "d:Message: m1", "t", "c0:ACK a", "t"}
        << QByteArray("ACK a\nMessage: m1\n") << qint64(0) << qsizetype(0);
    QTest::newRow("a delivery pushed before a request is not held back by it")
        << QStringList{"d:Message: m1", "r", "t"} << QByteArray("Message: m1\n") << qint64(0)
        << qsizetype(1);
    QTest::newRow("an empty reply (a request with no answer) frees the way")
        << QStringList{"r", "d:Message: m1", "c0:", "t"} << QByteArray("Message: m1\n") << qint64(0)
        << qsizetype(0);
    QTest::newRow("clear drops what is held")
        << QStringList{"r", "c0:ACK a", "r", "d:Message: m1", "x", "t"} << QByteArray() << qint64(0)
        << qsizetype(0);
    QTest::newRow("a reply of several lines leaves whole")
        << QStringList{"r", "c0:ACK a\nACK b", "t"} << QByteArray("ACK a\nACK b\n") << qint64(0)
        << qsizetype(0);
}

void TestReplyQueue::ordering()
{
    QFETCH(QStringList, script);
    QFETCH(QByteArray, written);
    QFETCH(qint64, heldBytes);
    QFETCH(qsizetype, pending);

    const Run run = play(script);
    QCOMPARE(run.written, written);
    QCOMPARE(run.heldBytes, heldBytes);
    QCOMPARE(run.size, pending);
}

// A handler that answers after its connection was cleared (a commit finishing after the peer
// left) must not write into slots that now belong to nobody.
void TestReplyQueue::completionAfterClearIsIgnored()
{
    ReplyQueue queue;
    const quint64 slot = queue.reserve();
    queue.clear();
    QVERIFY(queue.complete(slot, "ACK late\n") == nullptr);
    QCOMPARE(queue.heldBytes(), 0);
    const quint64 next = queue.reserve();
    QVERIFY(next != slot);
    QVERIFY(queue.complete(next, "ACK next\n") != nullptr);
    QByteArray written;
    queue.takeReady([&written](const QByteArray &lines) { written += lines; });
    QCOMPARE(written, QByteArray("ACK next\n"));
}

// Slot ids are absolute: taking replies off the front does not renumber the ones behind.
void TestReplyQueue::slotsStayValidAcrossTakes()
{
    ReplyQueue queue;
    QList<quint64> slots;
    for (int i = 0; i < 100; ++i)
        slots << queue.reserve();
    QByteArray written;
    const auto take = [&] {
        queue.takeReady([&written](const QByteArray &lines) { written += lines; });
    };
    for (int i = 0; i < 100; i += 2) {
        queue.complete(slots[i], QByteArray::number(i) + '\n');
        take();
        queue.complete(slots[i + 1], QByteArray::number(i + 1) + '\n');
        take();
    }
    QByteArray expected;
    for (int i = 0; i < 100; ++i)
        expected += QByteArray::number(i) + '\n';
    QCOMPARE(written, expected);
    QVERIFY(queue.empty());
}

QTEST_GUILESS_MAIN(TestReplyQueue)
#include "tst_replyqueue.moc"
