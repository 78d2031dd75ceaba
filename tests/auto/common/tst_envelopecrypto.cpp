#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include "crypto/envelopecrypto.h"

using namespace cmq::crypto;

// The client envelope: sealing and opening, every way an envelope can be wrong, and its JSON.
class tst_EnvelopeCrypto : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void roundTrip_data();
    void roundTrip();
    void sealIsRandomised();
    void opensPythonClientEnvelope();
    void wrongKey();
    void tampered_data();
    void tampered();
    void wrongSizes_data();
    void wrongSizes();
    void badBase64_data();
    void badBase64();
    void rejectsBadKeys();
    void buildJson();
    void buildJsonWithoutSentTime();
    void parseJsonRoundTrip();
    void parsePythonClientJson();
    void parseJsonSentTime_data();
    void parseJsonSentTime();
    void parseJsonErrors_data();
    void parseJsonErrors();

private:
    KeyPair m_receiver;
    KeyPair m_other;
};

namespace {

QByteArray flipBit(const QByteArray &base64, qsizetype index)
{
    QByteArray raw = QByteArray::fromBase64(base64);
    raw[index] = char(raw.at(index) ^ 0x01);
    return raw.toBase64();
}

QByteArray resized(const QByteArray &base64, qsizetype size)
{
    QByteArray raw = QByteArray::fromBase64(base64);
    raw.resize(size, '\0');
    return raw.toBase64();
}

QByteArray SealedEnvelope::*fieldByName(const QString &name)
{
    if (name == QLatin1String("enc_session_key"))
        return &SealedEnvelope::encSessionKey;
    if (name == QLatin1String("nonce"))
        return &SealedEnvelope::nonce;
    return &SealedEnvelope::ciphertext;
}

// Made by the existing Python sender's code (PyNaCl SealedBox + cryptography ChaCha20Poly1305)
// for the key pair below, so this test pins the format even where Python is not installed.
const QByteArray PythonSecretKey = "3XspTKLUftiFpR7yUBeEvnMLWxVUMi8ImFRZocs6uXQ=";
const QByteArray PythonPublicKey = "aOTSjU4axlBAoZVvuOFArrsDdwCn/9f+wiBncO4iDBU=";
const QByteArray PythonEnvelope =
    R"({"message_id": "python_sender-1a2b3c4d-receiver_1", "ciphertext": )"
    R"("EfFRaH3QOy/Kpv6eaEce4lbNS1OopxBNZJVwN777BiNwZXNXGxinxQqH5H/VOZOHVM5B", )"
    R"("receiver_client_id": "receiver_1", "enc_session_key": )"
    R"("XdwD2sr1A3ybuCo0h/CDmVnLZCvYYCNj9Gc+5/tVDGT6+THcJmWTzSCogdoQZhL/+nUaMHLgz6SDTA751v5Gej4v)"
    R"(HuS1+vkHBAznxdxt+7U=", "nonce": "wW27f+koPDmQLPWN", )"
    R"("sent_time": "2025-06-01T10:20:30.123456+00:00", "routing_key": "receiver_1_key"})";
const QByteArray PythonPlaintext = "Grüße from the Python sender 🔐";

} // namespace

void tst_EnvelopeCrypto::initTestCase()
{
    auto receiver = generateKeyPair();
    auto other = generateKeyPair();
    QVERIFY2(receiver.ok(), qPrintable(receiver.error()));
    QVERIFY2(other.ok(), qPrintable(other.error()));
    m_receiver = std::move(receiver).value();
    m_other = std::move(other).value();
}

void tst_EnvelopeCrypto::roundTrip_data()
{
    QTest::addColumn<QByteArray>("plaintext");

    QTest::newRow("empty") << QByteArray();
    QTest::newRow("ascii") << QByteArray("CipherMQ Sample message with ID: 1234abcd");
    QTest::newRow("non-ascii") << QStringLiteral("héllo wörld — привет, 你好, 🔐").toUtf8();
    QTest::newRow("binary with NULs") << QByteArray("\0\x01\xff\0tail", 8);
    QByteArray large(1024 * 1024, Qt::Uninitialized);
    for (qsizetype i = 0; i < large.size(); ++i)
        large[i] = char((i * 7919) >> 3);
    QTest::newRow("1 MiB") << large;
}

void tst_EnvelopeCrypto::roundTrip()
{
    QFETCH(QByteArray, plaintext);

    const auto sealed = seal(plaintext, m_receiver.publicKey);
    QVERIFY2(sealed.ok(), qPrintable(sealed.error()));
    QCOMPARE(QByteArray::fromBase64(sealed->encSessionKey).size(), SessionKeySize + SealOverhead);
    QCOMPARE(QByteArray::fromBase64(sealed->nonce).size(), NonceSize);
    QCOMPARE(QByteArray::fromBase64(sealed->ciphertext).size(), plaintext.size() + TagSize);
    if (!plaintext.isEmpty())
        QVERIFY(!QByteArray::fromBase64(sealed->ciphertext).contains(plaintext));

    const auto opened = open(sealed.value(), m_receiver);
    QVERIFY2(opened.ok(), qPrintable(opened.error()));
    QCOMPARE(opened.value(), plaintext);
}

void tst_EnvelopeCrypto::sealIsRandomised()
{
    const auto first = seal("same message", m_receiver.publicKey);
    const auto second = seal("same message", m_receiver.publicKey);
    QVERIFY(first.ok() && second.ok());
    QVERIFY(first->encSessionKey != second->encSessionKey);
    QVERIFY(first->nonce != second->nonce);
    QVERIFY(first->ciphertext != second->ciphertext);
}

void tst_EnvelopeCrypto::opensPythonClientEnvelope()
{
    const KeyPair python{QByteArray::fromBase64(PythonPublicKey),
                         QByteArray::fromBase64(PythonSecretKey)};
    const auto parsed = parseEnvelopeJson(PythonEnvelope);
    QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
    const auto opened = open(parsed->sealed, python);
    QVERIFY2(opened.ok(), qPrintable(opened.error()));
    QCOMPARE(opened.value(), PythonPlaintext);

    const auto misaddressed = open(parsed->sealed, m_receiver);
    QVERIFY(!misaddressed.ok());
}

void tst_EnvelopeCrypto::wrongKey()
{
    const auto sealed = seal("for the receiver only", m_receiver.publicKey);
    QVERIFY(sealed.ok());
    const auto opened = open(sealed.value(), m_other);
    QVERIFY(!opened.ok());
    QVERIFY2(opened.error().contains(QStringLiteral("session key does not open")),
             qPrintable(opened.error()));

    // The right secret key with someone else's public key: the sealed box nonce is derived from
    // the receiver public key, so this must fail too rather than half-work.
    const auto mixed = open(sealed.value(), KeyPair{m_other.publicKey, m_receiver.secretKey});
    QVERIFY(!mixed.ok());
}

void tst_EnvelopeCrypto::tampered_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("byte"); // negative: from the end
    QTest::addColumn<QString>("error");

    const QString sessionKeyError = QStringLiteral("session key does not open");
    const QString bodyError = QStringLiteral("failed authentication");
    QTest::newRow("enc_session_key ephemeral key") << "enc_session_key" << 0 << sessionKeyError;
    QTest::newRow("enc_session_key tag") << "enc_session_key" << 40 << sessionKeyError;
    QTest::newRow("enc_session_key last byte") << "enc_session_key" << -1 << sessionKeyError;
    QTest::newRow("nonce first byte") << "nonce" << 0 << bodyError;
    QTest::newRow("nonce last byte") << "nonce" << -1 << bodyError;
    QTest::newRow("ciphertext first byte") << "ciphertext" << 0 << bodyError;
    QTest::newRow("ciphertext tag") << "ciphertext" << -1 << bodyError;
}

void tst_EnvelopeCrypto::tampered()
{
    QFETCH(QString, field);
    QFETCH(int, byte);
    QFETCH(QString, error);

    const auto sealed = seal("transfer 100 to alice", m_receiver.publicKey);
    QVERIFY(sealed.ok());
    SealedEnvelope envelope = sealed.value();
    QByteArray &target = envelope.*fieldByName(field);
    const qsizetype size = QByteArray::fromBase64(target).size();
    target = flipBit(target, byte < 0 ? size + byte : byte);

    const auto opened = open(envelope, m_receiver);
    QVERIFY(!opened.ok());
    QVERIFY2(opened.error().contains(error), qPrintable(opened.error()));
}

void tst_EnvelopeCrypto::wrongSizes_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("size");
    QTest::addColumn<QString>("error");

    QTest::newRow("enc_session_key empty")
        << "enc_session_key" << 0 << QStringLiteral("enc_session_key has 0 bytes, expected 80");
    QTest::newRow("enc_session_key truncated")
        << "enc_session_key" << 79 << QStringLiteral("enc_session_key has 79 bytes, expected 80");
    QTest::newRow("enc_session_key unsealed (bare key)")
        << "enc_session_key" << 32 << QStringLiteral("enc_session_key has 32 bytes, expected 80");
    QTest::newRow("enc_session_key too long")
        << "enc_session_key" << 81 << QStringLiteral("enc_session_key has 81 bytes, expected 80");
    QTest::newRow("nonce truncated") << "nonce" << 11 << QStringLiteral("nonce has 11 bytes");
    QTest::newRow("nonce of XChaCha20 size") << "nonce" << 24 << QStringLiteral("nonce has 24");
    QTest::newRow("ciphertext empty") << "ciphertext" << 0 << QStringLiteral("ciphertext has 0");
    QTest::newRow("ciphertext shorter than tag")
        << "ciphertext" << 15 << QStringLiteral("fewer than its 16-byte authentication tag");
    // Long enough to parse, but the tag no longer matches: the body check catches it.
    QTest::newRow("ciphertext truncated to tag size")
        << "ciphertext" << 16 << QStringLiteral("failed authentication");
}

void tst_EnvelopeCrypto::wrongSizes()
{
    QFETCH(QString, field);
    QFETCH(int, size);
    QFETCH(QString, error);

    const auto sealed = seal("a message of some length", m_receiver.publicKey);
    QVERIFY(sealed.ok());
    SealedEnvelope envelope = sealed.value();
    QByteArray &target = envelope.*fieldByName(field);
    target = resized(target, size);

    const auto opened = open(envelope, m_receiver);
    QVERIFY(!opened.ok());
    QVERIFY2(opened.error().contains(error), qPrintable(opened.error()));
}

void tst_EnvelopeCrypto::badBase64_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QByteArray>("value");

    for (const char *field : {"enc_session_key", "nonce", "ciphertext"}) {
        const QString name = QString::fromLatin1(field);
        QTest::addRow("%s: invalid character", field) << name << QByteArray("AAAA*AAA");
        QTest::addRow("%s: url-safe alphabet", field) << name << QByteArray("ab-_ab-_");
        QTest::addRow("%s: missing padding", field) << name << QByteArray("QUI");
        QTest::addRow("%s: embedded newline", field) << name << QByteArray("QUJD\nQUJD");
        QTest::addRow("%s: data after padding", field) << name << QByteArray("QUI=QUJD");
    }
}

void tst_EnvelopeCrypto::badBase64()
{
    QFETCH(QString, field);
    QFETCH(QByteArray, value);

    const auto sealed = seal("message", m_receiver.publicKey);
    QVERIFY(sealed.ok());
    SealedEnvelope envelope = sealed.value();
    envelope.*fieldByName(field) = value;

    const auto opened = open(envelope, m_receiver);
    QVERIFY(!opened.ok());
    QCOMPARE(opened.error(), field + QStringLiteral(" is not valid base64"));
}

void tst_EnvelopeCrypto::rejectsBadKeys()
{
    for (const qsizetype size : {0, 31, 33, 64}) {
        const auto sealed = seal("message", QByteArray(size, 'k'));
        QVERIFY(!sealed.ok());
        QVERIFY2(sealed.error().contains(QStringLiteral("public key has %1 bytes").arg(size)),
                 qPrintable(sealed.error()));
    }

    const auto sealed = seal("message", m_receiver.publicKey);
    QVERIFY(sealed.ok());
    const auto opened = open(sealed.value(), KeyPair{m_receiver.publicKey, QByteArray()});
    QVERIFY(!opened.ok());
    QVERIFY2(opened.error().contains(QStringLiteral("key pair")), qPrintable(opened.error()));
}

void tst_EnvelopeCrypto::buildJson()
{
    const SealedEnvelope sealed{"c2Vzc2lvbg==", "bm9uY2U=", "Ym9keQ=="};
    // Not UTC on purpose: sent_time is always written in UTC.
    const QDateTime sentTime(QDate(2025, 1, 2), QTime(5, 34, 5, 678), Qt::OffsetFromUTC,
                             2 * 3600 + 30 * 60);
    const QJsonObject extras{
        {QStringLiteral("routing_key"), QStringLiteral("receiver_1_key")},
        {QStringLiteral("priority"), 5},
        {QStringLiteral("meta"), QJsonObject{{QStringLiteral("tags"), QJsonArray{1, true, {}}}}},
        {QStringLiteral("nonce"), QStringLiteral("must not override the real nonce")},
    };

    const QByteArray json = buildEnvelopeJson(
        QStringLiteral("s-\"q\"-ü"), QStringLiteral("receiver_1"), sealed, sentTime, extras);
    // Outside the macro: moc's preprocessor does not handle raw strings in macro arguments.
    const QByteArray expected = R"({"message_id":"s-\"q\"-ü","receiver_client_id":"receiver_1",)"
                                R"("enc_session_key":"c2Vzc2lvbg==","nonce":"bm9uY2U=",)"
                                R"("ciphertext":"Ym9keQ==","sent_time":"2025-01-02T03:04:05.678Z",)"
                                R"("meta":{"tags":[1,true,null]},"priority":5,)"
                                R"("routing_key":"receiver_1_key"})";
    QCOMPARE(json, expected);
}

void tst_EnvelopeCrypto::buildJsonWithoutSentTime()
{
    const QByteArray json =
        buildEnvelopeJson(QStringLiteral("id\nwith newline"), QStringLiteral("r"),
                          SealedEnvelope{"YQ==", "Yg==", "Yw=="}, QDateTime());
    const QByteArray expected = R"({"message_id":"id\nwith newline","receiver_client_id":"r",)"
                                R"("enc_session_key":"YQ==","nonce":"Yg==","ciphertext":"Yw=="})";
    QCOMPARE(json, expected);
    QVERIFY(!json.contains('\n'));
}

void tst_EnvelopeCrypto::parseJsonRoundTrip()
{
    const auto sealed = seal(QStringLiteral("ünïcode body").toUtf8(), m_receiver.publicKey);
    QVERIFY(sealed.ok());
    const QDateTime sentTime = QDateTime::currentDateTimeUtc();
    const QJsonObject extras{{QStringLiteral("routing_key"), QStringLiteral("k")},
                             {QStringLiteral("hops"), QJsonArray{QStringLiteral("a"), 2}}};
    const QByteArray json =
        buildEnvelopeJson(QStringLiteral("sender-1234-receiver_1"), QStringLiteral("receiver_1"),
                          sealed.value(), sentTime, extras);

    const auto parsed = parseEnvelopeJson(json);
    QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
    QCOMPARE(parsed->messageId, QStringLiteral("sender-1234-receiver_1"));
    QCOMPARE(parsed->receiverClientId, QStringLiteral("receiver_1"));
    QCOMPARE(parsed->sealed.encSessionKey, sealed->encSessionKey);
    QCOMPARE(parsed->sealed.nonce, sealed->nonce);
    QCOMPARE(parsed->sealed.ciphertext, sealed->ciphertext);
    QCOMPARE(parsed->sentTime, sentTime.addMSecs(0));
    QCOMPARE(parsed->sentTime.timeSpec(), Qt::UTC);
    QCOMPARE(parsed->extraFields, extras);

    const auto opened = open(parsed->sealed, m_receiver);
    QVERIFY2(opened.ok(), qPrintable(opened.error()));
    QCOMPARE(QString::fromUtf8(opened.value()), QStringLiteral("ünïcode body"));
}

void tst_EnvelopeCrypto::parsePythonClientJson()
{
    const auto parsed = parseEnvelopeJson(PythonEnvelope);
    QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
    QCOMPARE(parsed->messageId, QStringLiteral("python_sender-1a2b3c4d-receiver_1"));
    QCOMPARE(parsed->receiverClientId, QStringLiteral("receiver_1"));
    QCOMPARE(parsed->sealed.nonce, QByteArray("wW27f+koPDmQLPWN"));
    QCOMPARE(parsed->sentTimeText, QStringLiteral("2025-06-01T10:20:30.123456+00:00"));
    QCOMPARE(parsed->sentTime, QDateTime(QDate(2025, 6, 1), QTime(10, 20, 30, 123), Qt::UTC));
    QCOMPARE(parsed->extraFields,
             QJsonObject({{QStringLiteral("routing_key"), QStringLiteral("receiver_1_key")}}));
}

void tst_EnvelopeCrypto::parseJsonSentTime_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QDateTime>("expected"); // invalid: not usable as a time

    const QDateTime time(QDate(2025, 1, 2), QTime(3, 4, 5), Qt::UTC);
    QTest::newRow("Z") << "2025-01-02T03:04:05Z" << time;
    QTest::newRow("milliseconds") << "2025-01-02T03:04:05.250Z" << time.addMSecs(250);
    // Qt keeps milliseconds, rounding the microseconds Python writes.
    QTest::newRow("python isoformat") << "2025-01-02T03:04:05.250999+00:00" << time.addMSecs(251);
    QTest::newRow("offset") << "2025-01-02T05:04:05+02:00" << time;
    QTest::newRow("no offset") << "2025-01-02T03:04:05" << QDateTime();
    QTest::newRow("unix seconds as text") << "1735787045" << QDateTime();
    QTest::newRow("empty") << "" << QDateTime();
}

void tst_EnvelopeCrypto::parseJsonSentTime()
{
    QFETCH(QString, text);
    QFETCH(QDateTime, expected);

    QJsonObject object{{QStringLiteral("message_id"), QStringLiteral("m")},
                       {QStringLiteral("receiver_client_id"), QStringLiteral("r")},
                       {QStringLiteral("enc_session_key"), QStringLiteral("YQ==")},
                       {QStringLiteral("nonce"), QStringLiteral("Yg==")},
                       {QStringLiteral("ciphertext"), QStringLiteral("Yw==")},
                       {QStringLiteral("sent_time"), text}};
    const auto parsed = parseEnvelopeJson(QJsonDocument(object).toJson());
    // A time the receiver cannot read is not a reason to drop the message.
    QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
    QCOMPARE(parsed->sentTimeText, text);
    QCOMPARE(parsed->sentTime.isValid(), expected.isValid());
    if (expected.isValid())
        QCOMPARE(parsed->sentTime, expected);
    QVERIFY(parsed->extraFields.isEmpty());
}

void tst_EnvelopeCrypto::parseJsonErrors_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");

    const QByteArray fields = R"("enc_session_key":"YQ==","nonce":"Yg==","ciphertext":"Yw==")";
    QTest::newRow("not JSON") << QByteArray("publish x") << QStringLiteral("not valid JSON");
    QTest::newRow("truncated") << QByteArray(R"({"message_id":"m")")
                               << QStringLiteral("not valid JSON");
    QTest::newRow("array") << QByteArray("[1,2]") << QStringLiteral("not a JSON object");
    QTest::newRow("missing message_id") << R"({"receiver_client_id":"r",)" + fields + "}"
                                        << QStringLiteral("missing field message_id");
    QTest::newRow("empty message_id")
        << R"({"message_id":"","receiver_client_id":"r",)" + fields + "}"
        << QStringLiteral("message_id is empty");
    QTest::newRow("numeric receiver_client_id")
        << R"({"message_id":"m","receiver_client_id":7,)" + fields + "}"
        << QStringLiteral("field receiver_client_id is not a string");
    QTest::newRow("missing nonce")
        << QByteArray(R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"YQ==",)"
                      R"("ciphertext":"Yw=="})")
        << QStringLiteral("missing field nonce");
    QTest::newRow("ciphertext as array")
        << QByteArray(R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"YQ==",)"
                      R"("nonce":"Yg==","ciphertext":[1]})")
        << QStringLiteral("field ciphertext is not a string");
    QTest::newRow("numeric sent_time")
        << R"({"message_id":"m","receiver_client_id":"r",)" + fields + R"(,"sent_time":1.5})"
        << QStringLiteral("field sent_time is not a string");
}

void tst_EnvelopeCrypto::parseJsonErrors()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);

    const auto parsed = parseEnvelopeJson(json);
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().contains(error), qPrintable(parsed.error()));
}

QTEST_GUILESS_MAIN(tst_EnvelopeCrypto)
#include "tst_envelopecrypto.moc"
