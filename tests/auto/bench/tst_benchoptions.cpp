// ciphermq-bench's command line and payload: -s counts ciphertext bytes before base64 (so a run
// carries the same payload as another broker's bodies of that size), --rate and --backlog.

#include <QTest>

#include "benchoptions.h"
#include "payload.h"

using namespace cmq::bench;

class tst_BenchOptions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ciphertextIsSizeBytesBeforeBase64_data();
    void ciphertextIsSizeBytesBeforeBase64();
    void rateAndBacklog();
    void defaultsAreWindowedAndUnpaced();
    void rejectsNegativeRate();
};

void tst_BenchOptions::ciphertextIsSizeBytesBeforeBase64_data()
{
    QTest::addColumn<int>("bytes");
    for (int bytes : {1, 2, 3, 4, 5, 768, 1000, 1024, 4096})
        QTest::newRow(qPrintable(QString::number(bytes))) << bytes;
}

void tst_BenchOptions::ciphertextIsSizeBytesBeforeBase64()
{
    QFETCH(int, bytes);
    const QByteArray field = randomCiphertextField(bytes);
    const auto decoded =
        QByteArray::fromBase64Encoding(field, QByteArray::AbortOnBase64DecodingErrors);
    QVERIFY(decoded);
    QCOMPARE(decoded.decoded.size(), bytes);
    QCOMPARE(field.size(), (bytes + 2) / 3 * 4);
}

void tst_BenchOptions::rateAndBacklog()
{
    const auto parsed = parseOptions(
        {"ciphermq-bench", "--certs", "/tmp", "-s", "1024", "--rate", "1000", "--backlog", "5000"});
    QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error()));
    QCOMPARE(parsed.value().messageBytes, 1024);
    QCOMPARE(parsed.value().rate, 1000.0);
    QCOMPARE(parsed.value().backlog, 5000);
    QCOMPARE(parsed.value().count, 5000); // a drain run publishes exactly the backlog
}

void tst_BenchOptions::defaultsAreWindowedAndUnpaced()
{
    const auto parsed = parseOptions({"ciphermq-bench", "--certs", "/tmp"});
    QVERIFY(parsed);
    QCOMPARE(parsed.value().rate, 0.0);
    QCOMPARE(parsed.value().backlog, 0);
    QCOMPARE(parsed.value().window, 256);
}

void tst_BenchOptions::rejectsNegativeRate()
{
    QVERIFY(!parseOptions({"ciphermq-bench", "--certs", "/tmp", "--rate", "-1"}));
}

QTEST_GUILESS_MAIN(tst_BenchOptions)
#include "tst_benchoptions.moc"
