// The session's input framing (net/requestframer.h): the steps a connection's input gives the
// session, for whole inputs and for the same input arriving in pieces. No sockets.

#include <QTest>

#include "net/requestframer.h"

using namespace cmq;
using Kind = RequestFrame::Kind;

namespace {

// Feeds `chunks` one after another into a buffer the way the session does and writes down each
// step but the NeedMore ones: "request <line>", "blank", "refused <reply>", "too long <reply>".
// What is left unframed at the end is "pending <n>".
QStringList frames(const QList<QByteArray> &chunks, qint64 maxLineBytes)
{
    QStringList steps;
    QByteArray buffer;
    qsizetype scanned = 0;
    for (const QByteArray &chunk : chunks) {
        buffer.append(chunk);
        for (;;) {
            const RequestFrame frame = nextRequestFrame(buffer, maxLineBytes, scanned);
            if (frame.kind == Kind::NeedMore) {
                scanned = frame.scanned;
                break;
            }
            scanned = 0;
            switch (frame.kind) {
            case Kind::Request:
                steps << QStringLiteral("request ") + QString::fromUtf8(frame.line);
                break;
            case Kind::Blank:
                steps << QStringLiteral("blank");
                break;
            case Kind::Refused:
                steps << QStringLiteral("refused ") + QString::fromUtf8(frame.replyLine);
                break;
            case Kind::TooLong:
                steps << QStringLiteral("too long ") + QString::fromUtf8(frame.replyLine);
                return steps; // the session closes the connection: nothing more is read
            case Kind::NeedMore:
                break;
            }
            buffer.remove(0, frame.consumed);
        }
    }
    if (!buffer.isEmpty())
        steps << QStringLiteral("pending %1").arg(buffer.size());
    return steps;
}

} // namespace

class tst_RequestFramer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void steps_data();
    void steps();
    void sameStepsInPieces_data();
    void sameStepsInPieces();
};

void tst_RequestFramer::steps_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<qint64>("maxLineBytes");
    QTest::addColumn<QStringList>("expected");

    const QString tooLong16 = QStringLiteral(
        "too long Error: Line too long: the limit is 16 bytes; closing the connection\n");
    const QString invalidUtf8 = QStringLiteral("refused Error: Invalid UTF-8 in request line\n");

    QTest::newRow("one request") << QByteArray("qos 5\n") << qint64(1024)
                                 << QStringList{"request qos 5"};
    QTest::newRow("crlf ends a line too") << QByteArray("qos 5\r\nconsume q\r\n") << qint64(1024)
                                          << QStringList{"request qos 5", "request consume q"};
    QTest::newRow("no line end yet")
        << QByteArray("declare_queue q") << qint64(1024) << QStringList{"pending 15"};
    QTest::newRow("blank lines are keep-alives")
        << QByteArray("\n  \n\r\nqos 1\n\t\n") << qint64(1024)
        << QStringList{"blank", "blank", "blank", "request qos 1", "blank"};
    QTest::newRow("invalid UTF-8 is refused, the next line still read")
        << QByteArray("bind q \xff\xfe k\nqos 2\n") << qint64(1024)
        << QStringList{invalidUtf8, "request qos 2"};
    QTest::newRow("a line of exactly the limit") << QByteArray("publish 12345678\n") << qint64(16)
                                                 << QStringList{"request publish 12345678"};
    QTest::newRow("one byte over the limit")
        << QByteArray("publish 123456789\n") << qint64(16) << QStringList{tooLong16};
    QTest::newRow("over the limit without a line end")
        << QByteArray(40, 'x') << qint64(16) << QStringList{tooLong16};
    QTest::newRow("requests before a line too long are still served")
        << QByteArray("qos 1\n") + QByteArray(40, 'x') + "\nqos 2\n"
        << qint64(16) << QStringList{"request qos 1", tooLong16};
    QTest::newRow("multi-byte UTF-8 is a request")
        << QByteArray("declare_queue caf\xc3\xa9\n") << qint64(1024)
        << QStringList{QStringLiteral("request declare_queue caf\u00e9")};
}

void tst_RequestFramer::steps()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxLineBytes);
    QFETCH(QStringList, expected);
    QCOMPARE(frames({input}, maxLineBytes), expected);
}

void tst_RequestFramer::sameStepsInPieces_data()
{
    steps_data();
}

// However the input is cut into reads (a byte at a time, or in threes), the session sees the
// same steps: a line split across reads is one request, scanned once.
void tst_RequestFramer::sameStepsInPieces()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxLineBytes);
    QFETCH(QStringList, expected);
    for (const qsizetype piece : {1, 3}) {
        QList<QByteArray> chunks;
        for (qsizetype at = 0; at < input.size(); at += piece)
            chunks.append(input.mid(at, piece));
        QCOMPARE(frames(chunks, maxLineBytes), expected);
    }
}

QTEST_GUILESS_MAIN(tst_RequestFramer)
#include "tst_requestframer.moc"
