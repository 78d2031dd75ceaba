// Client-side framing of admin replies: JSON lines, the metrics text up to "# EOF", errors,
// snapshots and notices interleaved between replies, refusals without a request, and bytes
// arriving in arbitrary pieces.

#include <QTest>

#include "admin/adminreplyreader.h"

using namespace cmq::admin;
using Kind = AdminMessage::Kind;

namespace {

// "R:queues:{...}" etc., one string per message, for compact expectations.
QStringList describe(const QList<AdminMessage> &messages)
{
    QStringList out;
    for (const AdminMessage &m : messages) {
        QString kind;
        switch (m.kind) {
        case Kind::Reply:
            kind = m.isError ? QStringLiteral("E") : QStringLiteral("R");
            break;
        case Kind::Snapshot:
            kind = QStringLiteral("S");
            break;
        case Kind::Notice:
            kind = QStringLiteral("N");
            break;
        case Kind::Unsolicited:
            kind = QStringLiteral("U");
            break;
        case Kind::Malformed:
            kind = QStringLiteral("M");
            break;
        }
        out.append(kind + u':' + QString::fromLatin1(adminCommandName(m.command)) + u':' +
                   QString::fromUtf8(m.body));
    }
    return out;
}

} // namespace

class tst_AdminReplyReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sequences_data();
    void sequences();
    void anySplitGivesTheSameMessages();
};

void tst_AdminReplyReader::sequences_data()
{
    QTest::addColumn<QList<int>>("expected"); // AdminCommand per request sent
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("messages");
    QTest::newRow("json reply") << QList<int>{int(AdminCommand::Queues)} << QByteArray("[]\n")
                                << QStringList{"R:queues:[]"};
    QTest::newRow("error reply") << QList<int>{int(AdminCommand::Purge)}
                                 << QByteArray("Error: Queue 'x' not found\n")
                                 << QStringList{"E:purge:Queue 'x' not found"};
    QTest::newRow("metrics text")
        << QList<int>{int(AdminCommand::Metrics), int(AdminCommand::Json)}
        << QByteArray("# HELP a A.\n# TYPE a gauge\na 1\n# EOF\n{\"v\":1}\n")
        << QStringList{"R:metrics:# HELP a A.\n# TYPE a gauge\na 1\n# EOF\n", "R:json:{\"v\":1}"};
    QTest::newRow("metrics error") << QList<int>{int(AdminCommand::Metrics)}
                                   << QByteArray("Error: busy\n") << QStringList{"E:metrics:busy"};
    QTest::newRow("snapshots between replies")
        << QList<int>{int(AdminCommand::Watch), int(AdminCommand::Unwatch)}
        << QByteArray("{\"ok\":true}\nSnapshot: {\"sequence\":1}\nSnapshot: {\"sequence\":2}\n"
                      "{\"ok\":true,\"action\":\"unwatch\"}\n")
        << QStringList{"R:watch:{\"ok\":true}", "S:watch:{\"sequence\":1}",
                       "S:watch:{\"sequence\":2}",
                       "R:unwatch:{\"ok\":true,\"action\":\"unwatch\"}"};
    QTest::newRow("refusal before any request")
        << QList<int>{}
        << QByteArray(
               "Error: Unauthorized: certificate CN 'sender_1' does not have the Admin role\n")
        << QStringList{
               "U:unknown:Unauthorized: certificate CN 'sender_1' does not have the Admin role"};
    QTest::newRow("notice") << QList<int>{}
                            << QByteArray("Notice: Disconnected by an administrator\n")
                            << QStringList{"N:unknown:Disconnected by an administrator"};
    QTest::newRow("stray line") << QList<int>{} << QByteArray("hello\n")
                                << QStringList{"M:unknown:hello"};
    QTest::newRow("crlf") << QList<int>{int(AdminCommand::Help)} << QByteArray("{}\r\n")
                          << QStringList{"R:help:{}"};
}

void tst_AdminReplyReader::sequences()
{
    QFETCH(QList<int>, expected);
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, messages);
    AdminReplyReader reader;
    for (int c : expected)
        reader.expect(AdminCommand(c));
    QCOMPARE(describe(reader.feed(bytes)), messages);
    QCOMPARE(reader.outstanding(), 0);
}

void tst_AdminReplyReader::anySplitGivesTheSameMessages()
{
    const QByteArray bytes = "# HELP a A.\na 1\n# EOF\nSnapshot: {\"s\":1}\n[1,2]\nError: no\n";
    const QList<AdminCommand> sent{AdminCommand::Metrics, AdminCommand::Queues,
                                   AdminCommand::Purge};
    QStringList whole;
    {
        AdminReplyReader reader;
        for (AdminCommand c : sent)
            reader.expect(c);
        whole = describe(reader.feed(bytes));
    }
    QCOMPARE(whole.size(), 4);
    for (qsizetype step = 1; step <= 7; ++step) {
        AdminReplyReader reader;
        for (AdminCommand c : sent)
            reader.expect(c);
        QList<AdminMessage> got;
        for (qsizetype i = 0; i < bytes.size(); i += step)
            got += reader.feed(QByteArrayView(bytes).sliced(i, qMin(step, bytes.size() - i)));
        QCOMPARE(describe(got), whole);
    }
}

QTEST_APPLESS_MAIN(tst_AdminReplyReader)
#include "tst_adminreplyreader.moc"
