// Broker lists as users write them on the command line and in config files.

#include <QTest>

#include "client/brokeraddress.h"

using cmq::client::BrokerAddress;
using cmq::client::parseBrokerList;

class tst_BrokerAddress : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data();
    void parse();
    void toStringRoundTrips();
};

void tst_BrokerAddress::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected"); // "host:port|host:port", or "!" + error fragment
    QTest::newRow("one") << "localhost:5671"
                         << "localhost:5671";
    QTest::newRow("two") << "a:1,b:65535"
                         << "a:1|b:65535";
    QTest::newRow("spaces") << " a:1 , b:2 "
                            << "a:1|b:2";
    QTest::newRow("default port") << "broker.example"
                                  << "broker.example:5671";
    QTest::newRow("ipv4") << "127.0.0.1:5000"
                          << "127.0.0.1:5000";
    QTest::newRow("ipv6") << "[::1]:5671"
                          << "::1:5671";
    QTest::newRow("ipv6 default port") << "[fe80::1]"
                                       << "fe80::1:5671";
    QTest::newRow("empty entries skipped") << "a:1,,b:2,"
                                           << "a:1|b:2";
    QTest::newRow("empty") << ""
                           << "!no broker address";
    QTest::newRow("only commas") << " , "
                                 << "!no broker address";
    QTest::newRow("port zero") << "a:0"
                               << "!port";
    QTest::newRow("port too big") << "a:65536"
                                  << "!port";
    QTest::newRow("port not a number") << "a:x"
                                       << "!port";
    QTest::newRow("empty port") << "a:"
                                << "!port";
    QTest::newRow("empty host") << ":5671"
                                << "!host is empty";
    QTest::newRow("bare ipv6") << "::1:5671"
                               << "!brackets";
    QTest::newRow("unclosed bracket") << "[::1:5671"
                                      << "!']'";
    QTest::newRow("junk after bracket") << "[::1]5671"
                                        << "!':port'";
}

void tst_BrokerAddress::parse()
{
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const auto parsed = parseBrokerList(text);
    if (expected.startsWith(u'!')) {
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.error().contains(expected.mid(1)), qPrintable(parsed.error()));
        return;
    }
    QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
    QStringList got;
    for (const BrokerAddress &address : parsed.value())
        got << address.host + u':' + QString::number(address.port);
    QCOMPARE(got.join(u'|'), expected);
}

void tst_BrokerAddress::toStringRoundTrips()
{
    for (const QString &text : {QStringLiteral("a:1"), QStringLiteral("[::1]:5671")}) {
        const auto parsed = parseBrokerList(text);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->first().toString(), text);
        QCOMPARE(parseBrokerList(parsed->first().toString())->first(), parsed->first());
    }
}

QTEST_GUILESS_MAIN(tst_BrokerAddress)
#include "tst_brokeraddress.moc"
