// The one-pass reader of flat envelopes against QJsonDocument: which inputs it takes (the
// envelopes clients send) and which it leaves to QJsonDocument, and that whatever it takes,
// QJsonDocument reads to the same fields; also for many random mutations of an envelope.

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

#include "protocol/envelope.h"
#include "protocol/flatenvelope.h"

using namespace cmq::protocol;

namespace {

const QByteArray Envelope =
    R"({"message_id": "sender_1-7-receiver_1", "receiver_client_id": "receiver_1",)"
    R"( "enc_session_key": "a2V5", "nonce": "bm9uY2U=", "ciphertext": "Y2lwaGVy",)"
    R"( "sent_time": "2026-12-02T14:00:00Z"})";

// What QJsonDocument says the fields are, in the form the scanner gives them; false when it
// does not see a flat envelope with valid fields at all.
bool qtFields(const QByteArray &json, FlatEnvelope *out, QByteArray *id, QByteArray *receiver)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return false;
    const QJsonObject object = document.object();
    for (const char *name : {"message_id", "receiver_client_id", "enc_session_key", "nonce",
                             "ciphertext"}) {
        if (!object.value(QLatin1StringView(name)).isString())
            return false;
    }
    if (object.contains(u"sent_time") && !object.value(u"sent_time").isString())
        return false;
    *id = object.value(u"message_id").toString().toUtf8();
    *receiver = object.value(u"receiver_client_id").toString().toUtf8();
    out->ttlMs = qint64(object.value(u"ttl_ms").toDouble(0));
    return true;
}

void compareWithQt(const QByteArray &json)
{
    const std::optional<FlatEnvelope> flat = scanFlatEnvelope(json);
    if (!flat)
        return;
    FlatEnvelope qt;
    QByteArray id;
    QByteArray receiver;
    QVERIFY2(qtFields(json, &qt, &id, &receiver), json.constData());
    QCOMPARE(flat->messageId.toByteArray(), id);
    QCOMPARE(flat->receiverClientId.toByteArray(), receiver);
    QCOMPARE(flat->ttlMs, qt.ttlMs);
}

} // namespace

class tst_FlatEnvelope : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void takesOrLeaves_data();
    void takesOrLeaves();
    void randomMutationsAgreeWithQt();
};

void tst_FlatEnvelope::takesOrLeaves_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<bool>("taken");

    const auto with = [](const QByteArray &extra) {
        QByteArray json = Envelope;
        json.chop(1);
        return json + extra + "}";
    };
    QTest::newRow("a client's envelope") << Envelope << true;
    QTest::newRow("compact")
        << QByteArray(R"({"message_id":"m","receiver_client_id":"r","enc_session_key":"k",)"
                      R"("nonce":"n","ciphertext":"c"})")
        << true;
    QTest::newRow("whitespace around") << " \t\r\n" + Envelope + "\n " << true;
    QTest::newRow("ttl_ms") << with(R"(, "ttl_ms": 60000)") << true;
    QTest::newRow("other scalars") << with(R"(, "p": 5, "q": -3, "r": true, "s": null)") << true;
    QTest::newRow("empty message id")
        << QByteArray(R"({"message_id":"","receiver_client_id":"r","enc_session_key":"k",)"
                      R"("nonce":"n","ciphertext":"c"})")
        << true; // inspectEnvelope refuses it with the same text either way
    QTest::newRow("escape") << with(R"(, "x": "a\"b")") << false;
    QTest::newRow("non-ASCII") << with(", \"x\": \"\xc3\xa9\"") << false;
    QTest::newRow("nested") << with(R"(, "meta": {"a": [1]})") << false;
    QTest::newRow("fraction") << with(R"(, "p": 1.5)") << false;
    QTest::newRow("exponent") << with(R"(, "p": 1e3)") << false;
    QTest::newRow("16 digits") << with(R"(, "p": 1234567890123456)") << false;
    QTest::newRow("leading zero") << with(R"(, "p": 01)") << false;
    QTest::newRow("ttl 0") << with(R"(, "ttl_ms": 0)") << false;
    QTest::newRow("ttl over a year") << with(R"(, "ttl_ms": 31536000001)") << false;
    QTest::newRow("ttl as a string") << with(R"(, "ttl_ms": "5")") << false;
    QTest::newRow("duplicate message_id") << with(R"(, "message_id": "other")") << false;
    QTest::newRow("sent_time a number") << QByteArray(Envelope).replace(
                                                R"("2026-12-02T14:00:00Z")", "5")
                                        << false;
    QTest::newRow("nonce missing") << QByteArray(Envelope).replace("nonce", "nonse") << false;
    QTest::newRow("trailing comma") << with(",") << false;
    QTest::newRow("garbage after") << Envelope + "x" << false;
    QTest::newRow("array") << "[" + Envelope + "]" << false;
    QTest::newRow("control character") << with(", \"x\": \"a\tb\"") << false;
}

void tst_FlatEnvelope::takesOrLeaves()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, taken);
    QCOMPARE(scanFlatEnvelope(json).has_value(), taken);
    compareWithQt(json);
}

void tst_FlatEnvelope::randomMutationsAgreeWithQt()
{
    // Bytes a mutation puts in: JSON's own, digits, letters, a quote inside a value, non-ASCII.
    const QByteArray alphabet = "{}[]:,\" \t\n\\-.eE0123456789tfnulrasmgid_\x7f\xc3\xa9";
    QRandomGenerator random(20261202); // fixed: a failure repeats
    const QByteArray base = Envelope.left(Envelope.size() - 1) + R"(, "ttl_ms": 5000})";
    int taken = 0;
    for (int i = 0; i < 20000; ++i) {
        QByteArray json = base;
        const int edits = 1 + int(random.bounded(3));
        for (int e = 0; e < edits; ++e) {
            const qsizetype at = random.bounded(int(json.size()));
            const char c = alphabet.at(random.bounded(int(alphabet.size())));
            switch (random.bounded(3)) {
            case 0:
                json[at] = c;
                break;
            case 1:
                json.insert(at, c);
                break;
            default:
                json.remove(at, 1);
            }
        }
        compareWithQt(json);
        if (QTest::currentTestFailed()) {
            qWarning("input: %s", json.toPercentEncoding(" {}[]:,\"").constData());
            return;
        }
        taken += scanFlatEnvelope(json).has_value();
    }
    qInfo("%d of 20000 mutations read in one pass, all as QJsonDocument reads them", taken);
    QVERIFY(taken > 1000); // the mutations do reach the accepting paths
}

QTEST_APPLESS_MAIN(tst_FlatEnvelope)
#include "tst_flatenvelope.moc"
