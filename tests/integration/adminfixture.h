#pragma once
// What the admin listener's integration tests share (tst_10_admin, tst_42_admin_access,
// tst_46_admin_actions): a broker with its admin listener on, clients on either listener that
// are closed at the end, and small helpers to ask and to publish.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

namespace cmq::test {

inline QByteArray adminTestEnvelope(const QByteArray &id,
                                    const QByteArray &receiver = "receiver_1")
{
    return R"({"message_id":")" + id + R"(","receiver_client_id":")" + receiver +
           R"(","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

inline QJsonValue parseAdminReply(const QByteArray &line)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON (%s): %s", qPrintable(error.errorString()), line.left(300).constData());
    return doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
}

inline QJsonObject findBy(const QJsonArray &array, const QString &field, const QJsonValue &value)
{
    for (const QJsonValue &v : array) {
        if (v.toObject().value(field) == value)
            return v.toObject();
    }
    return {};
}

class AdminFixture
{
protected:
    // Starts the broker with the admin listener on (ops-admin-2 holds the Admin role but is not
    // in the allow-list) and declares the exchange the tests publish to.
    bool startBroker()
    {
        m_adminPort = freePort();
        m_broker.set("admin.enabled", "true");
        m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
        m_broker.set("admin.allowed_cns", R"(["ops-admin"])");
        if (!m_broker.start()) {
            qWarning("%s", m_broker.output().constData());
            return false;
        }
        m_admin = adminClient();
        m_sender = dataClient("sender_1");
        TestClient *receiver = dataClient("receiver_1");
        return receiver->request("declare_exchange CipherMQ_exchange") == "Exchange declared";
    }

    bool stopBroker()
    {
        qDeleteAll(m_clients);
        m_clients.clear();
        return m_broker.terminate() && m_broker.exitCode() == 0;
    }

    TestClient *dataClient(const QString &identity)
    {
        auto *client = new TestClient(identity);
        m_clients.append(client);
        if (!client->connectTo(m_broker.port()))
            qFatal("cannot connect as %s: %s", qPrintable(identity),
                   qPrintable(client->errorString()));
        return client;
    }

    TestClient *adminClient(const QString &identity = QStringLiteral("ops-admin"))
    {
        auto *client = new TestClient(identity);
        m_clients.append(client);
        if (!client->connectTo(m_adminPort))
            qFatal("cannot connect to the admin listener as %s: %s", qPrintable(identity),
                   qPrintable(client->errorString()));
        return client;
    }

    QJsonValue ask(const QByteArray &request)
    {
        const QByteArray line = m_admin->request(request);
        if (line.startsWith("Error: "))
            qWarning("%s -> %s", request.constData(), line.constData());
        return parseAdminReply(line);
    }

    // The `metrics` reply: its lines up to "# EOF" (or the error line).
    static QByteArray readMetrics(TestClient *client)
    {
        QByteArray text;
        for (;;) {
            const QByteArray line = client->readLine();
            if (line.isNull())
                return text + "<timeout>";
            text += line + '\n';
            if (line == "# EOF" || line.startsWith("Error: "))
                return text;
        }
    }

    // A queue receiver_1_<name> bound to CipherMQ_exchange with key receiver_1_<name>.
    void ownQueue(const QByteArray &name)
    {
        TestClient *receiver = dataClient("receiver_1");
        QCOMPARE(receiver->request("declare_queue receiver_1_" + name), "Queue declared");
        QCOMPARE(
            receiver->request("bind receiver_1_" + name + " CipherMQ_exchange receiver_1_" + name),
            "Queue bound");
    }

    void publish(const QByteArray &key, const QByteArray &id)
    {
        QCOMPARE(
            m_sender->request("publish CipherMQ_exchange " + key + ' ' + adminTestEnvelope(id)),
            "ACK " + id);
    }

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    QList<TestClient *> m_clients;
    TestClient *m_admin = nullptr;
    TestClient *m_sender = nullptr;
};

} // namespace cmq::test
