// The envelope checks of publish and publish_batch: what is accepted, the error texts, and that
// the bytes forwarded are exactly the publisher's.

#include <QTest>

#include "protocol/envelope.h"

using namespace cmq::protocol;

class tst_Envelope : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void inspectEnvelope_data();
    void inspectEnvelope();
    void splitJsonArray_data();
    void splitJsonArray();
    void splitViewsPointIntoInput();
    void splitDepthLimit();
    void ttlField_data();
    void ttlField();
};

namespace {

// An envelope as the existing Python sender writes it (json.dumps: ", " and ": ").
QByteArray envelope(const QByteArray &messageId = "sender_1-7-receiver_1",
                    const QByteArray &extra = {})
{
    return R"({"message_id": ")" + messageId + R"(", "receiver_client_id": "receiver_1", )" +
           R"("enc_session_key": "c2Vzc2lvbg==", "nonce": "bm9uY2U=", )" +
           R"("ciphertext": "Y2lwaGVy", "sent_time": "2024-05-01T10:00:00Z")" + extra + "}";
}

} // namespace

void tst_Envelope::inspectEnvelope_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QByteArray>("messageId");
    QTest::addColumn<QByteArray>("receiverClientId");
    QTest::addColumn<QString>("error"); // exact text, or "~text" for "contains"

    const auto ok = [](const char *name, const QByteArray &json, const QByteArray &id,
                       const QByteArray &receiver) {
        QTest::newRow(name) << json << true << id << receiver << QString();
    };
    const auto bad = [](const char *name, const QByteArray &json, const QString &error) {
        QTest::newRow(name) << json << false << QByteArray() << QByteArray() << error;
    };

    ok("python client", envelope(), "sender_1-7-receiver_1", "receiver_1");
    ok("compact, no sent_time",
       R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","nonce":"n",)"
       R"("ciphertext":"c"})",
       "m", "r");
    ok("extra fields allowed", envelope("m", R"(, "priority": 5, "meta": {"a": [1, null]})"), "m",
       "receiver_1");
    ok("escaped id is unescaped", envelope(R"(caf\u00e9-\/1)"), "caf\xc3\xa9-/1", "receiver_1");
    ok("escaped receiver",
       R"({"message_id":"m","receiver_client_id":"r\u00e9","enc_session_key":"k","nonce":"n",)"
       R"("ciphertext":"c"})",
       "m", "r\xc3\xa9");
    ok("empty receiver is the handler's business",
       R"({"message_id":"m","receiver_client_id":"","enc_session_key":"","nonce":"",)"
       R"("ciphertext":""})",
       "m", "");
    ok("surrounding whitespace", "  \r\n" + envelope("m") + " \t", "m", "receiver_1");
    ok("255-byte id", envelope(QByteArray(255, 'i')), QByteArray(255, 'i'), "receiver_1");

    bad("empty input", "", "~at offset 0");
    bad("not json", "hello", "~at offset");
    bad("truncated", envelope().chopped(1), "~at offset");
    bad("trailing garbage", envelope() + "x", "~at offset");
    bad("array", "[" + envelope() + "]", "invalid type: expected a JSON object");
    bad("missing message_id",
        R"({"receiver_client_id":"r","enc_session_key":"k","nonce":"n","ciphertext":"c"})",
        "missing field `message_id`");
    bad("missing receiver",
        R"({"message_id":"m","enc_session_key":"k","nonce":"n","ciphertext":"c"})",
        "missing field `receiver_client_id`");
    bad("missing enc_session_key",
        R"({"message_id":"m","receiver_client_id":"r","nonce":"n","ciphertext":"c"})",
        "missing field `enc_session_key`");
    bad("missing nonce",
        R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","ciphertext":"c"})",
        "missing field `nonce`");
    bad("missing ciphertext",
        R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","nonce":"n"})",
        "missing field `ciphertext`");
    bad("numeric message_id",
        R"({"message_id":5,"receiver_client_id":"r","enc_session_key":"k","nonce":"n",)"
        R"("ciphertext":"c"})",
        "field `message_id` must be a string");
    bad("null nonce",
        R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","nonce":null,)"
        R"("ciphertext":"c"})",
        "field `nonce` must be a string");
    bad("array ciphertext",
        R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","nonce":"n",)"
        R"("ciphertext":["c"]})",
        "field `ciphertext` must be a string");
    bad("numeric sent_time",
        R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k","nonce":"n",)"
        R"("ciphertext":"c","sent_time":1714557600})",
        "field `sent_time` must be a string");
    bad("empty message_id", envelope(""), "field `message_id` must not be empty");
    bad("message_id with space", envelope("a b"),
        "field `message_id` must not contain spaces or control characters");
    bad("message_id with escaped newline", envelope(R"(a\nb)"),
        "field `message_id` must not contain spaces or control characters");
    bad("message_id with nbsp", envelope(R"(a\u00a0b)"),
        "field `message_id` must not contain spaces or control characters");
    bad("256-byte message_id", envelope(QByteArray(256, 'i')),
        "field `message_id` is longer than 255 bytes");
    // Valid JSON grammar, but out of a double's range: Qt refuses it, so publish does too.
    bad("number out of range in extra field", envelope("m", R"(, "ttl": 1e999)"), "~at offset");
    bad("message_id with lone surrogate", envelope(R"(a\ud800b)"),
        "field `message_id` contains an unpaired surrogate");
}

void tst_Envelope::inspectEnvelope()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, ok);
    QFETCH(QByteArray, messageId);
    QFETCH(QByteArray, receiverClientId);
    QFETCH(QString, error);

    const auto result = cmq::protocol::inspectEnvelope(json);
    QCOMPARE(result.ok(), ok);
    if (ok) {
        QCOMPARE(result->messageId, messageId);
        QCOMPARE(result->receiverClientId, receiverClientId);
    } else if (error.startsWith(u'~')) {
        QVERIFY2(result.error().contains(error.mid(1)), qPrintable(result.error()));
    } else {
        QCOMPARE(result.error(), error);
    }
}

void tst_Envelope::splitJsonArray_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QList<QByteArray>>("elements");
    QTest::addColumn<QString>("error"); // empty when the split must succeed

    const auto ok = [](const char *name, const QByteArray &json, const QList<QByteArray> &list) {
        QTest::newRow(name) << json << list << QString();
    };
    const auto bad = [](const char *name, const QByteArray &json, const QString &error) {
        QTest::newRow(name) << json << QList<QByteArray>() << error;
    };

    ok("empty array", "[]", {});
    ok("empty array with whitespace", " \r\n[ \t ] \n", {});
    ok("one envelope", "[" + envelope() + "]", {envelope()});
    ok("python batch", "[" + envelope("a") + ", " + envelope("b") + "]",
       {envelope("a"), envelope("b")});
    ok("elements trimmed, inner bytes exact", "[ {\"a\" : [ 1 , 2 ] }\n,\t{ }  ]",
       {"{\"a\" : [ 1 , 2 ] }", "{ }"});
    ok("scalars", R"([1, -0.5e+10, 0, 2E3, "s", true, false, null])",
       {"1", "-0.5e+10", "0", "2E3", "\"s\"", "true", "false", "null"});
    ok("strings with brackets and escapes", R"(["]", "\"[", "\\", "\u00e9\/\b\f\n\r\t", "{"])",
       {R"("]")", R"("\"[")", R"("\\")", R"("\u00e9\/\b\f\n\r\t")", R"("{")"});
    ok("nested", R"([[[]], {"a": {"b": [{}]}}])", {"[[]]", R"({"a": {"b": [{}]}})"});
    // The splitter checks grammar only; ranges are inspectEnvelope's business, per element.
    ok("number out of double range", "[1e999, -2.5e999999999993]", {"1e999", "-2.5e999999999993"});
    ok("raw utf-8 in strings", "[\"\xc3\xa9\"]", {"\"\xc3\xa9\""});

    bad("empty input", "", "expected a JSON array");
    bad("object", envelope(), "expected a JSON array");
    bad("scalar", "1", "expected a JSON array");
    bad("unclosed", "[1, 2", "unexpected end of input, expected `,` or `]`");
    bad("unclosed after comma", "[1,", "unexpected end of input, expected a value");
    bad("unclosed nested", "[{\"a\": 1", "unexpected end of input, expected `,` or `}`");
    bad("unclosed string", "[\"abc]", "unexpected end of input, unterminated string");
    bad("trailing comma", "[1,]", "expected a value at offset 3");
    bad("trailing comma in object", "[{\"a\":1,}]", "expected a member name at offset 8");
    bad("leading comma", "[,1]", "expected a value at offset 1");
    bad("missing comma", "[1 2]", "expected `,` or `]` at offset 3");
    bad("mismatched closer", "[{\"a\": 1]]", "expected `,` or `}` at offset 8");
    bad("trailing garbage", "[1] x", "trailing characters after the array at offset 4");
    bad("two arrays", "[][]", "trailing characters after the array at offset 2");
    bad("unquoted key", "[{a: 1}]", "expected a member name at offset 2");
    bad("missing colon", "[{\"a\" 1}]", "expected `:` at offset 6");
    bad("bad literal", "[tru]", "expected a value at offset 1");
    bad("capital literal", "[True]", "expected a value at offset 1");
    bad("bad escape", R"(["\x"])", "invalid escape at offset 3");
    bad("short unicode escape", R"(["\u12"])", "invalid \\u escape at offset 3");
    bad("raw control in string", "[\"a\tb\"]", "control character in string at offset 3");
    bad("leading zero", "[01]", "expected `,` or `]` at offset 2");
    bad("bare minus", "[-]", "invalid number at offset 2");
    bad("fraction without digits", "[1.]", "invalid number at offset 3");
    bad("exponent without digits", "[1e+]", "invalid number at offset 4");
    bad("nan", "[NaN]", "expected a value at offset 1");
}

void tst_Envelope::splitJsonArray()
{
    QFETCH(QByteArray, json);
    QFETCH(QList<QByteArray>, elements);
    QFETCH(QString, error);

    const auto result = cmq::protocol::splitJsonArray(json);
    if (!error.isEmpty()) {
        QVERIFY(!result.ok());
        QCOMPARE(result.error(), error);
        return;
    }
    QVERIFY2(result.ok(), qPrintable(result.error()));
    QList<QByteArray> actual;
    for (const QByteArrayView element : result.value())
        actual.append(element.toByteArray());
    QCOMPARE(actual, elements);
}

void tst_Envelope::splitViewsPointIntoInput()
{
    // publish_batch forwards each element's bytes; they must be the caller's, not a copy.
    const QByteArray json = "[" + envelope("a") + ",\n" + envelope("b") + "]";
    const auto result = cmq::protocol::splitJsonArray(json);
    QVERIFY(result.ok());
    QCOMPARE(result->size(), 2);
    QCOMPARE(result->at(0).data(), json.constData() + 1);
    QCOMPARE(result->at(1).data(), json.constData() + 1 + envelope("a").size() + 2);
    QCOMPARE(cmq::protocol::inspectEnvelope(result->at(1))->messageId, QByteArray("b"));
}

void tst_Envelope::splitDepthLimit()
{
    // 64 levels including the outer array are fine; one more is refused, not recursed into.
    const auto nested = [](int levels) {
        return QByteArray(levels, '[') + QByteArray(levels, ']');
    };
    QVERIFY(cmq::protocol::splitJsonArray(nested(64)).ok());
    const auto tooDeep = cmq::protocol::splitJsonArray(nested(65));
    QVERIFY(!tooDeep.ok());
    QCOMPARE(tooDeep.error(), QString("nested deeper than 64 levels at offset 64"));
    QVERIFY(!cmq::protocol::splitJsonArray(nested(100000)).ok());
    QVERIFY(!cmq::protocol::splitJsonArray(QByteArray(100000, '[')).ok());
}

void tst_Envelope::ttlField_data()
{
    QTest::addColumn<QByteArray>("extra");
    QTest::addColumn<qint64>("ttlMs"); // -1: refused
    QTest::newRow("absent") << QByteArray() << qint64(0);
    QTest::newRow("one ms") << QByteArray(R"(, "ttl_ms": 1)") << qint64(1);
    QTest::newRow("a minute") << QByteArray(R"(, "ttl_ms": 60000)") << qint64(60000);
    QTest::newRow("a year") << QByteArray(R"(, "ttl_ms": 31536000000)") << qint64(31536000000);
    QTest::newRow("exponent form") << QByteArray(R"(, "ttl_ms": 6e4)") << qint64(60000);
    QTest::newRow("zero") << QByteArray(R"(, "ttl_ms": 0)") << qint64(-1);
    QTest::newRow("negative") << QByteArray(R"(, "ttl_ms": -5)") << qint64(-1);
    QTest::newRow("fraction") << QByteArray(R"(, "ttl_ms": 1.5)") << qint64(-1);
    QTest::newRow("over a year") << QByteArray(R"(, "ttl_ms": 31536000001)") << qint64(-1);
    QTest::newRow("string") << QByteArray(R"(, "ttl_ms": "60")") << qint64(-1);
    QTest::newRow("null") << QByteArray(R"(, "ttl_ms": null)") << qint64(-1);
}

void tst_Envelope::ttlField()
{
    QFETCH(QByteArray, extra);
    QFETCH(qint64, ttlMs);
    const auto result = cmq::protocol::inspectEnvelope(envelope("m", extra));
    if (ttlMs < 0) {
        QVERIFY(!result.ok());
        QCOMPARE(result.error(),
                 QStringLiteral("field `ttl_ms` must be a whole number from 1 to 31536000000"));
    } else {
        QVERIFY2(result.ok(), qPrintable(result.error()));
        QCOMPARE(result->ttlMs, ttlMs);
    }
}

QTEST_APPLESS_MAIN(tst_Envelope)

#include "tst_envelope.moc"
