// Line framing: terminators, the length limit, pipelined requests and strict UTF-8.

#include <QTest>

#include "protocol/lineframer.h"

using namespace cmq::protocol;

namespace cmq::protocol {
char *toString(FrameStatus status)
{
    switch (status) {
    case FrameStatus::Ok:
        return qstrdup("Ok");
    case FrameStatus::Incomplete:
        return qstrdup("Incomplete");
    case FrameStatus::TooLong:
        return qstrdup("TooLong");
    case FrameStatus::InvalidUtf8:
        return qstrdup("InvalidUtf8");
    }
    return qstrdup("?");
}
} // namespace cmq::protocol

class tst_LineFramer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void takeLine_data();
    void takeLine();
    void pipelined();
    void bytewiseDelivery();
    void resumedScan_data();
    void resumedScan();
    void isValidUtf8_data();
    void isValidUtf8();
    void longValidLine();
};

void tst_LineFramer::takeLine_data()
{
    QTest::addColumn<QByteArray>("buffer");
    QTest::addColumn<int>("maxLineLength");
    QTest::addColumn<FrameStatus>("status");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("consumed");

    const auto ok = FrameStatus::Ok;
    const auto incomplete = FrameStatus::Incomplete;
    const auto tooLong = FrameStatus::TooLong;
    const auto badUtf8 = FrameStatus::InvalidUtf8;

    QTest::newRow("empty buffer") << QByteArray() << 16 << incomplete << QByteArray() << 0;
    QTest::newRow("no newline yet")
        << QByteArray("declare_queue q") << 16 << incomplete << QByteArray() << 0;
    QTest::newRow("lf") << QByteArray("ack 1\n") << 16 << ok << QByteArray("ack 1") << 6;
    QTest::newRow("crlf") << QByteArray("ack 1\r\n") << 16 << ok << QByteArray("ack 1") << 7;
    QTest::newRow("only one cr stripped")
        << QByteArray("ack 1\r\r\n") << 16 << ok << QByteArray("ack 1\r") << 8;
    QTest::newRow("cr inside kept") << QByteArray("a\rb\n") << 16 << ok << QByteArray("a\rb") << 4;
    QTest::newRow("lone cr is no terminator")
        << QByteArray("ack 1\r") << 16 << incomplete << QByteArray() << 0;
    QTest::newRow("empty line") << QByteArray("\n") << 16 << ok << QByteArray() << 1;
    QTest::newRow("empty crlf line") << QByteArray("\r\nrest") << 16 << ok << QByteArray() << 2;
    QTest::newRow("first of two") << QByteArray("one\ntwo\n") << 16 << ok << QByteArray("one") << 4;
    QTest::newRow("spaces kept") << QByteArray("  x  \n") << 16 << ok << QByteArray("  x  ") << 6;

    // The limit: exactly maxLineLength bytes is fine with either terminator.
    QTest::newRow("exactly max, lf")
        << QByteArray("12345678\n") << 8 << ok << QByteArray("12345678") << 9;
    QTest::newRow("exactly max, crlf")
        << QByteArray("12345678\r\n") << 8 << ok << QByteArray("12345678") << 10;
    QTest::newRow("max+1, lf") << QByteArray("123456789\n") << 8 << tooLong << QByteArray() << 0;
    QTest::newRow("max+1 then cr is not max")
        << QByteArray("123456789\r\n") << 8 << tooLong << QByteArray() << 0;
    QTest::newRow("max bytes, waiting")
        << QByteArray("12345678") << 8 << incomplete << QByteArray() << 0;
    QTest::newRow("max bytes and cr, waiting")
        << QByteArray("12345678\r") << 8 << incomplete << QByteArray() << 0;
    QTest::newRow("max+2 bytes without lf")
        << QByteArray("1234567890") << 8 << tooLong << QByteArray() << 0;
    QTest::newRow("far too long") << QByteArray(100, 'x') << 8 << tooLong << QByteArray() << 0;
    QTest::newRow("newline after the window") << QByteArray(20, 'x') + '\n'
                                              << 8 << tooLong << QByteArray() << 0;
    QTest::newRow("limit zero, empty line") << QByteArray("\r\n") << 0 << ok << QByteArray() << 2;
    QTest::newRow("limit zero, one byte") << QByteArray("a\n") << 0 << tooLong << QByteArray() << 0;
    QTest::newRow("short line, long tail")
        << QByteArray("ok\n") + QByteArray(100, 'x') << 8 << ok << QByteArray("ok") << 3;

    // UTF-8 is checked per complete line; a bad line is skipped whole.
    QTest::newRow("utf8 line") << QByteArray("declare_queue \xc3\xa9t\xc3\xa9\n") << 64 << ok
                               << QByteArray("declare_queue \xc3\xa9t\xc3\xa9") << 20;
    QTest::newRow("invalid utf8") << QByteArray("ack \xff\r\nnext\n") << 64 << badUtf8
                                  << QByteArray("ack \xff") << 7;
    QTest::newRow("invalid utf8, incomplete")
        << QByteArray("ack \xff") << 64 << incomplete << QByteArray() << 0;
    QTest::newRow("truncated sequence at end of line")
        << QByteArray("x\xc3\n") << 64 << badUtf8 << QByteArray("x\xc3") << 3;
}

void tst_LineFramer::takeLine()
{
    QFETCH(QByteArray, buffer);
    QFETCH(int, maxLineLength);
    QFETCH(FrameStatus, status);
    QFETCH(QByteArray, line);
    QFETCH(int, consumed);

    const Frame frame = cmq::protocol::takeLine(buffer, maxLineLength);
    QCOMPARE(frame.status, status);
    QCOMPARE(frame.consumed, qsizetype(consumed));
    if (status == FrameStatus::Ok || status == FrameStatus::InvalidUtf8) {
        QCOMPARE(frame.line.toByteArray(), line);
        // The line is a view into the caller's buffer, not a copy.
        QCOMPARE(frame.line.data(), buffer.constData());
    }
}

void tst_LineFramer::pipelined()
{
    // Several requests in one read, the last one cut short, as a fast client produces them.
    QByteArray buffer("declare_queue q\r\nbind q e k\n\npublish e k {\"a\": 1}\nfetch");
    QList<QByteArray> lines;
    for (;;) {
        const Frame frame = cmq::protocol::takeLine(buffer, 1024);
        if (frame.status != FrameStatus::Ok)
            break;
        lines.append(frame.line.toByteArray());
        buffer.remove(0, frame.consumed);
    }
    QCOMPARE(lines,
             QList<QByteArray>({"declare_queue q", "bind q e k", "", "publish e k {\"a\": 1}"}));
    QCOMPARE(buffer, QByteArray("fetch"));

    buffer.append(" q\n");
    const Frame last = cmq::protocol::takeLine(buffer, 1024);
    QCOMPARE(last.status, FrameStatus::Ok);
    QCOMPARE(last.line.toByteArray(), QByteArray("fetch q"));
}

void tst_LineFramer::bytewiseDelivery()
{
    // A request arriving one byte per read yields the same line once "\n" arrives, and never
    // reports TooLong while it stays within the limit.
    const QByteArray request("publish ex rk {\"message_id\": \"m\"}\r\n");
    QByteArray buffer;
    qsizetype scanned = 0;
    for (qsizetype i = 0; i < request.size(); ++i) {
        buffer.append(request[i]);
        const Frame frame = cmq::protocol::takeLine(buffer, request.size() - 2, scanned);
        if (i + 1 < request.size()) {
            QCOMPARE(frame.status, FrameStatus::Incomplete);
            QCOMPARE(frame.consumed, qsizetype(0));
            // Everything seen so far is known to hold no "\n": the next call searches only
            // the byte that arrives next.
            QCOMPARE(frame.scanned, buffer.size());
            scanned = frame.scanned;
        } else {
            QCOMPARE(frame.status, FrameStatus::Ok);
            QCOMPARE(frame.line.toByteArray(), request.chopped(2));
            QCOMPARE(frame.consumed, request.size());
        }
    }
}

void tst_LineFramer::resumedScan_data()
{
    QTest::addColumn<QByteArray>("buffer");
    QTest::addColumn<int>("alreadyScanned");
    QTest::addColumn<FrameStatus>("status");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("consumed");
    QTest::addColumn<int>("scanned");

    const auto ok = FrameStatus::Ok;
    const auto incomplete = FrameStatus::Incomplete;
    const auto tooLong = FrameStatus::TooLong;

    // A session passes back what the previous Incomplete frame scanned; bytes before that are
    // not searched again (a "\n" planted there is not seen, which shows they are skipped).
    QTest::newRow("scanned prefix is not searched again")
        << QByteArray("ab\ncd") << 3 << incomplete << QByteArray() << 0 << 5;
    QTest::newRow("newline after the scanned part")
        << QByteArray("abcd\nrest") << 4 << ok << QByteArray("abcd") << 5 << 0;
    QTest::newRow("crlf split by the scanned part")
        << QByteArray("abcd\r\n") << 5 << ok << QByteArray("abcd") << 6 << 0;
    QTest::newRow("nothing new") << QByteArray("abcd") << 4 << incomplete << QByteArray() << 0 << 4;
    QTest::newRow("scanned beyond the buffer is clamped")
        << QByteArray("abcd") << 99 << incomplete << QByteArray() << 0 << 4;
    QTest::newRow("negative scanned is zero")
        << QByteArray("ab\n") << -5 << ok << QByteArray("ab") << 3 << 0;
    QTest::newRow("still too long")
        << QByteArray(12, 'x') << 9 << tooLong << QByteArray() << 0 << 0;
    QTest::newRow("exactly max after a resumed scan")
        << QByteArray("12345678\r\n") << 8 << ok << QByteArray("12345678") << 10 << 0;
    QTest::newRow("fresh line reports its scan")
        << QByteArray("1234567") << 0 << incomplete << QByteArray() << 0 << 7;
}

void tst_LineFramer::resumedScan()
{
    QFETCH(QByteArray, buffer);
    QFETCH(int, alreadyScanned);
    QFETCH(FrameStatus, status);
    QFETCH(QByteArray, line);
    QFETCH(int, consumed);
    QFETCH(int, scanned);

    const Frame frame = cmq::protocol::takeLine(buffer, 8, alreadyScanned);
    QCOMPARE(frame.status, status);
    QCOMPARE(frame.consumed, qsizetype(consumed));
    QCOMPARE(frame.scanned, qsizetype(scanned));
    if (status == FrameStatus::Ok)
        QCOMPARE(frame.line.toByteArray(), line);
}

void tst_LineFramer::isValidUtf8_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("valid");

    QTest::newRow("empty") << QByteArray() << true;
    QTest::newRow("ascii") << QByteArray("publish CipherMQ_exchange receiver_1_key {}") << true;
    QTest::newRow("nul is valid utf-8") << QByteArray("a\0b", 3) << true;
    QTest::newRow("2-byte") << QByteArray("\xc3\xa9") << true;
    QTest::newRow("3-byte") << QByteArray("\xe2\x82\xac") << true;
    QTest::newRow("4-byte") << QByteArray("\xf0\x9f\x98\x80") << true;
    QTest::newRow("U+D7FF") << QByteArray("\xed\x9f\xbf") << true;
    QTest::newRow("U+E000") << QByteArray("\xee\x80\x80") << true;
    QTest::newRow("U+FFFF") << QByteArray("\xef\xbf\xbf") << true;
    QTest::newRow("U+10FFFF") << QByteArray("\xf4\x8f\xbf\xbf") << true;
    QTest::newRow("non-ascii after long ascii run")
        << QByteArray(100, 'a') + "\xc3\xa9" + QByteArray(37, 'b') << true;

    QTest::newRow("lone continuation") << QByteArray("\x80") << false;
    QTest::newRow("0xff") << QByteArray("\xff") << false;
    QTest::newRow("0xfe") << QByteArray("\xfe") << false;
    QTest::newRow("overlong nul (c0 80)") << QByteArray("\xc0\x80") << false;
    QTest::newRow("overlong c1") << QByteArray("\xc1\xbf") << false;
    QTest::newRow("overlong 3-byte") << QByteArray("\xe0\x80\xaf") << false;
    QTest::newRow("overlong 3-byte max") << QByteArray("\xe0\x9f\xbf") << false;
    QTest::newRow("overlong 4-byte") << QByteArray("\xf0\x8f\xbf\xbf") << false;
    QTest::newRow("surrogate D800") << QByteArray("\xed\xa0\x80") << false;
    QTest::newRow("surrogate DFFF") << QByteArray("\xed\xbf\xbf") << false;
    QTest::newRow("surrogate pair as cesu-8") << QByteArray("\xed\xa0\xbd\xed\xb8\x80") << false;
    QTest::newRow("U+110000") << QByteArray("\xf4\x90\x80\x80") << false;
    QTest::newRow("f5 lead") << QByteArray("\xf5\x80\x80\x80") << false;
    QTest::newRow("5-byte form") << QByteArray("\xf8\x88\x80\x80\x80") << false;
    QTest::newRow("truncated 2-byte") << QByteArray("a\xc3") << false;
    QTest::newRow("truncated 3-byte") << QByteArray("\xe2\x82") << false;
    QTest::newRow("truncated 4-byte") << QByteArray("\xf0\x9f\x98") << false;
    QTest::newRow("bad continuation") << QByteArray("\xc3\x28") << false;
    QTest::newRow("bad third byte") << QByteArray("\xe2\x82\x28") << false;
    QTest::newRow("invalid after long ascii run") << QByteArray(100, 'a') + "\xff" << false;
}

void tst_LineFramer::isValidUtf8()
{
    QFETCH(QByteArray, bytes);
    QFETCH(bool, valid);
    QCOMPARE(cmq::protocol::isValidUtf8(bytes), valid);
}

void tst_LineFramer::longValidLine()
{
    // A 1 MiB publish body, the largest line the broker accepts by default.
    const qsizetype max = 1024 * 1024;
    QByteArray buffer = "publish e k " + QByteArray(max - 12, 'A') + "\r\n";
    const Frame frame = cmq::protocol::takeLine(buffer, max);
    QCOMPARE(frame.status, FrameStatus::Ok);
    QCOMPARE(frame.line.size(), max);
    QCOMPARE(frame.consumed, max + 2);

    buffer.insert(20, 'A');
    QCOMPARE(cmq::protocol::takeLine(buffer, max).status, FrameStatus::TooLong);
}

QTEST_APPLESS_MAIN(tst_LineFramer)

#include "tst_lineframer.moc"
