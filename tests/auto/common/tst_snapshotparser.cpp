// The watch stream's snapshots are parsed on a worker thread: results come back on the owner's
// thread in order, a line overtaken by a newer one is skipped, and lines of an ended connection
// (discardPending) never arrive.

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

#include "admin/snapshotparser.h"

using cmq::admin::SnapshotParser;

namespace {

QByteArray line(int sequence)
{
    return QJsonDocument(QJsonObject{{"sequence", sequence}}).toJson(QJsonDocument::Compact);
}

} // namespace

class tst_SnapshotParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesOnWorkerThreadAndDeliversOnOwnerThread();
    void keepsOrderAndSkipsOvertakenLines();
    void discardPendingDropsOldLines();
};

void tst_SnapshotParser::parsesOnWorkerThreadAndDeliversOnOwnerThread()
{
    SnapshotParser parser;
    QVERIFY(parser.workerThread() != QThread::currentThread());
    QVERIFY(parser.workerThread()->isRunning());
    QThread *deliveredOn = nullptr;
    QJsonObject received;
    connect(&parser, &SnapshotParser::parsed, this, [&](const QJsonObject &snapshot) {
        deliveredOn = QThread::currentThread();
        received = snapshot;
    });
    parser.parse(line(7));
    QVERIFY(received.isEmpty()); // nothing parsed synchronously on this thread
    QTRY_COMPARE_WITH_TIMEOUT(received.value("sequence").toInt(), 7, 10000);
    QCOMPARE(deliveredOn, QThread::currentThread());
}

void tst_SnapshotParser::keepsOrderAndSkipsOvertakenLines()
{
    SnapshotParser parser;
    QList<int> sequences;
    connect(&parser, &SnapshotParser::parsed, this,
            [&](const QJsonObject &s) { sequences.append(s.value("sequence").toInt()); });
    for (int i = 1; i <= 200; ++i)
        parser.parse(line(i));
    QTRY_VERIFY_WITH_TIMEOUT(!sequences.isEmpty() && sequences.last() == 200, 10000);
    QVERIFY(std::is_sorted(sequences.cbegin(), sequences.cend()));
    QCOMPARE(std::adjacent_find(sequences.cbegin(), sequences.cend()), sequences.cend());
    // Spaced out, none is overtaken, so every one arrives.
    sequences.clear();
    for (int i = 1; i <= 5; ++i) {
        parser.parse(line(1000 + i));
        QTRY_COMPARE_WITH_TIMEOUT(sequences.size(), i, 10000);
    }
    QCOMPARE(sequences, (QList<int>{1001, 1002, 1003, 1004, 1005}));
}

void tst_SnapshotParser::discardPendingDropsOldLines()
{
    SnapshotParser parser;
    QList<int> sequences;
    connect(&parser, &SnapshotParser::parsed, this,
            [&](const QJsonObject &s) { sequences.append(s.value("sequence").toInt()); });
    parser.parse(line(1));
    parser.discardPending();
    parser.parse(line(2));
    QTRY_COMPARE_WITH_TIMEOUT(sequences, QList<int>{2}, 10000);
    parser.parse(line(3));
    parser.discardPending();
    // Give the worker time to finish line 3, then prove it was dropped by what follows it.
    parser.parse(line(4));
    QTRY_COMPARE_WITH_TIMEOUT(sequences, (QList<int>{2, 4}), 10000);
}

QTEST_MAIN(tst_SnapshotParser)
#include "tst_snapshotparser.moc"
