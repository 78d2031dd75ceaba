// Size padding inside the encryption (crypto/padding.h): the buckets, the padding itself, and
// padded envelopes: what the broker sees of their size, and that the `padding` field cannot be
// added or stripped without the body failing to open.
#include <QTest>

#include "crypto/envelopecrypto.h"
#include "crypto/padding.h"

using namespace cmq::crypto;

class tst_Padding : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void buckets_data();
    void buckets();
    void padRoundTrip_data();
    void padRoundTrip();
    void unpadRefuses_data();
    void unpadRefuses();
    void sealedSizeIsTheBucket();
    void paddedEnvelopeRoundTrip();
    void paddingFieldCannotBeStripped();
    void paddingFieldCannotBeAdded();
    void unpaddedEnvelopeHasNoField();
    void unknownSchemeRefused();

private:
    KeyPair m_receiver;
};

void tst_Padding::initTestCase()
{
    const auto keys = generateKeyPair();
    QVERIFY(keys);
    m_receiver = keys.value();
}

void tst_Padding::buckets_data()
{
    QTest::addColumn<qsizetype>("plaintext");
    QTest::addColumn<qsizetype>("bucket");
    const qsizetype KiB64 = qsizetype(64) << 10;
    QTest::newRow("empty") << qsizetype(0) << qsizetype(256);
    QTest::newRow("1") << qsizetype(1) << qsizetype(256);
    QTest::newRow("255: one byte of padding fits") << qsizetype(255) << qsizetype(256);
    QTest::newRow("256: needs the next bucket") << qsizetype(256) << qsizetype(512);
    QTest::newRow("1000") << qsizetype(1000) << qsizetype(1024);
    QTest::newRow("1024") << qsizetype(1024) << qsizetype(2048);
    QTest::newRow("64 KiB - 1") << KiB64 - 1 << KiB64;
    QTest::newRow("64 KiB: whole 64 KiB from here") << KiB64 << 2 * KiB64;
    QTest::newRow("2.5 x 64 KiB") << KiB64 * 5 / 2 << 3 * KiB64;
    QTest::newRow("1 MiB") << 16 * KiB64 << 17 * KiB64;
    QTest::newRow("1 MiB - 1") << 16 * KiB64 - 1 << 16 * KiB64;
}

void tst_Padding::buckets()
{
    QFETCH(qsizetype, plaintext);
    QFETCH(qsizetype, bucket);
    QCOMPARE(paddedSize(plaintext), bucket);
    QVERIFY(isBucketSize(bucket));
}

void tst_Padding::padRoundTrip_data()
{
    QTest::addColumn<QByteArray>("plaintext");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("text") << QByteArray("hello, svc-b");
    QTest::newRow("ends like padding") << QByteArray("abc\x80\0\0", 6);
    QTest::newRow("a bucket's size") << QByteArray(256, '\x80');
    QTest::newRow("zeros") << QByteArray(300, '\0');
    QTest::newRow("over 64 KiB") << QByteArray((64 << 10) + 7, 'x');
    QTest::newRow("over 1 MiB") << QByteArray((1 << 20) + 7, 'x');
}

void tst_Padding::padRoundTrip()
{
    QFETCH(QByteArray, plaintext);
    const QByteArray padded = pad(plaintext);
    QCOMPARE(padded.size(), paddedSize(plaintext.size()));
    QVERIFY(padded.startsWith(plaintext));
    const auto back = unpad(padded);
    QVERIFY2(back, qPrintable(back.error()));
    QCOMPARE(back.value(), plaintext);
}

void tst_Padding::unpadRefuses_data()
{
    QTest::addColumn<QByteArray>("padded");
    QTest::addColumn<QString>("error");
    QTest::newRow("not a bucket") << QByteArray(300, '\0')
                                  << "the padded body has 300 bytes, which is no padding bucket";
    QTest::newRow("too small") << QByteArray(128, '\0')
                               << "the padded body has 128 bytes, which is no padding bucket";
    QTest::newRow("no marker") << QByteArray(256, '\0') << "the body's padding is not valid";
    QTest::newRow("data after the marker")
        << (QByteArray(250, 'a') + QByteArray("\x80\0\0\0\0z", 6))
        << "the body's padding is not valid";
}

void tst_Padding::unpadRefuses()
{
    QFETCH(QByteArray, padded);
    QFETCH(QString, error);
    const auto result = unpad(padded);
    QVERIFY(!result);
    QCOMPARE(result.error(), error);
}

// The broker and the network see the bucket: a 10-byte and a 200-byte message look the same.
void tst_Padding::sealedSizeIsTheBucket()
{
    const auto small = seal(QByteArray(10, 's'), m_receiver.publicKey, Padding::Buckets);
    const auto large = seal(QByteArray(200, 'l'), m_receiver.publicKey, Padding::Buckets);
    QVERIFY(small && large);
    QCOMPARE(QByteArray::fromBase64(small->ciphertext).size(), 256 + TagSize);
    QCOMPARE(small->ciphertext.size(), large->ciphertext.size());
    const auto unpadded = seal(QByteArray(10, 's'), m_receiver.publicKey);
    QVERIFY(unpadded);
    QCOMPARE(QByteArray::fromBase64(unpadded->ciphertext).size(), 10 + TagSize);
}

void tst_Padding::paddedEnvelopeRoundTrip()
{
    const auto sealed = seal("hello, padded", m_receiver.publicKey, Padding::Buckets);
    QVERIFY(sealed);
    QVERIFY(sealed->padded);
    const QByteArray json = buildEnvelopeJson("m-1", "svc-b", sealed.value(), {});
    QVERIFY(json.contains(R"(,"padding":"buckets-v1")"));
    const auto parsed = parseEnvelopeJson(json);
    QVERIFY2(parsed, qPrintable(parsed.error()));
    QVERIFY(parsed->sealed.padded);
    QVERIFY(parsed->extraFields.isEmpty());
    const auto opened = open(parsed->sealed, m_receiver);
    QVERIFY2(opened, qPrintable(opened.error()));
    QCOMPARE(opened.value(), "hello, padded");
}

// Whoever strips the field (to have the padding read as part of the message) breaks the body's
// authentication; it does not open as a longer message.
void tst_Padding::paddingFieldCannotBeStripped()
{
    auto sealed = seal("hello", m_receiver.publicKey, Padding::Buckets);
    QVERIFY(sealed);
    QByteArray json = buildEnvelopeJson("m-1", "svc-b", sealed.value(), {});
    json.replace(R"(,"padding":"buckets-v1")", "");
    const auto parsed = parseEnvelopeJson(json);
    QVERIFY(parsed);
    QVERIFY(!parsed->sealed.padded);
    const auto opened = open(parsed->sealed, m_receiver);
    QVERIFY(!opened);
    QVERIFY2(opened.error().contains("failed authentication"), qPrintable(opened.error()));
}

void tst_Padding::paddingFieldCannotBeAdded()
{
    QByteArray plaintext = pad("hello"); // looks padded, but was sealed as it is
    const auto sealed = seal(plaintext, m_receiver.publicKey);
    QVERIFY(sealed);
    SealedEnvelope forged = sealed.value();
    forged.padded = true;
    const auto opened = open(forged, m_receiver);
    QVERIFY(!opened);
    QVERIFY2(opened.error().contains("failed authentication"), qPrintable(opened.error()));
}

// Without padding the envelope is the existing clients' form, field for field.
void tst_Padding::unpaddedEnvelopeHasNoField()
{
    const auto sealed = seal("hello", m_receiver.publicKey);
    QVERIFY(sealed);
    QVERIFY(!sealed->padded);
    const QByteArray json = buildEnvelopeJson("m-1", "svc-b", sealed.value(), {});
    QVERIFY(!json.contains("padding"));
}

void tst_Padding::unknownSchemeRefused()
{
    const auto sealed = seal("hello", m_receiver.publicKey, Padding::Buckets);
    QVERIFY(sealed);
    QByteArray json = buildEnvelopeJson("m-1", "svc-b", sealed.value(), {});
    json.replace("buckets-v1", "buckets-v9");
    const auto parsed = parseEnvelopeJson(json);
    QVERIFY(!parsed);
    QCOMPARE(parsed.error(),
             "unknown padding scheme 'buckets-v9' (this client reads 'buckets-v1')");
}

QTEST_GUILESS_MAIN(tst_Padding)
#include "tst_padding.moc"
