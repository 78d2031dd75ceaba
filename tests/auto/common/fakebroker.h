#pragma once
// A scripted broker on loopback (mTLS with the test certificates) for the Client's tests, and
// what those tests share: sealed delivery lines, our keys, the client's options.

#include <functional>
#include <optional>

#include <QDateTime>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSslServer>
#include <QSslSocket>
#include <QTemporaryDir>

#include "client/client.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"
#include "testenv.h"
#include "tls/tlsidentity.h"

namespace clienttest {

using namespace cmq::client;
namespace crypto = cmq::crypto;
using cmq::test::certFile;

constexpr int Patience = 15000; // QTRY limit: local, but the CI machine is shared

// A broker that speaks the line protocol from a script: by default it answers every command
// as the real broker would on success; a test overrides lines it cares about. Every line it
// receives is recorded per connection.
class FakeBroker
{
public:
    // Returns the reply lines for a request, or nullopt for the default answer.
    using Script = std::function<std::optional<QList<QByteArray>>(const QByteArray &line)>;

    FakeBroker()
    {
        const auto config = cmq::tls::serverConfiguration(
            {certFile("server.crt"), certFile("server.key"), certFile("ca.crt")});
        if (!config)
            qFatal("server TLS: %s", qPrintable(config.error()));
        m_server.setSslConfiguration(config.value());
        QObject::connect(&m_server, &QSslServer::pendingConnectionAvailable, &m_server, [this] {
            while (m_server.hasPendingConnections()) {
                auto *socket = qobject_cast<QSslSocket *>(m_server.nextPendingConnection());
                const int index = int(sockets.size());
                sockets.append(socket);
                received.append(QList<QByteArray>());
                QObject::connect(socket, &QSslSocket::readyRead, socket,
                                 [this, socket, index] { onRead(socket, index); });
            }
        });
        if (!m_server.listen(QHostAddress::LocalHost, 0))
            qFatal("fake broker cannot listen");
    }

    quint16 port() const { return m_server.serverPort(); }
    BrokerAddress address() const { return {QStringLiteral("127.0.0.1"), port()}; }

    void push(const QByteArray &line, int connection = -1)
    {
        QSslSocket *socket = connection < 0 ? sockets.last() : sockets.at(connection);
        socket->write(line + '\n');
    }
    void closeLast() { sockets.last()->disconnectFromHost(); }
    void stop()
    {
        m_server.close();
        for (QSslSocket *socket : std::as_const(sockets))
            socket->abort();
    }

    // Lines of one connection that start with `prefix`.
    QList<QByteArray> lines(const QByteArray &prefix, int connection = -1) const
    {
        QList<QByteArray> found;
        if (received.isEmpty())
            return found;
        for (const QByteArray &line :
             received.at(connection < 0 ? received.size() - 1 : connection))
            if (line.startsWith(prefix))
                found.append(line);
        return found;
    }
    int count(const QByteArray &prefix) const
    {
        int n = 0;
        for (int i = 0; i < received.size(); ++i)
            n += int(lines(prefix, i).size());
        return n;
    }

    Script script;
    QHash<QByteArray, QByteArray> keys; // client id → base64 public key
    bool silent = false;                // answer nothing at all after the heartbeat
    QByteArray refuseWith;              // answer the first line with this, then close
    bool withoutHeartbeats = false;     // a broker that does not know the extension
    QList<QSslSocket *> sockets;
    QList<QList<QByteArray>> received;

private:
    void onRead(QSslSocket *socket, int index)
    {
        m_buffers[index] += socket->readAll();
        for (qsizetype end; (end = m_buffers[index].indexOf('\n')) >= 0;) {
            const QByteArray line = m_buffers[index].left(end);
            m_buffers[index].remove(0, end + 1);
            received[index].append(line);
            if (qEnvironmentVariableIsSet("FAKE_BROKER_TRACE"))
                qDebug("fake %d <- %s", index, line.left(120).constData());
            if (!refuseWith.isEmpty()) {
                socket->write(refuseWith + '\n');
                socket->disconnectFromHost();
                return;
            }
            for (const QByteArray &reply : answer(line))
                socket->write(reply + '\n');
        }
    }

    QList<QByteArray> answer(const QByteArray &line)
    {
        if (line.startsWith("heartbeat "))
            return {withoutHeartbeats ? QByteArray("Unknown command")
                                      : "Heartbeat " + line.mid(10)};
        if (silent)
            return {};
        if (script) {
            if (auto scripted = script(line))
                return *scripted;
        }
        const qsizetype space = line.indexOf(' ');
        const QByteArray command = space < 0 ? line : line.left(space);
        const QByteArray rest = space < 0 ? QByteArray() : line.mid(space + 1);
        if (command == "register_public_key")
            return {"Public key registered"};
        if (command == "declare_exchange")
            return {"Exchange declared"};
        if (command == "declare_queue")
            return {"Queue declared"};
        if (command == "bind")
            return {"Queue bound"};
        if (command == "qos")
            return {"Qos set to " + rest};
        if (command == "consume")
            return {"Subscribed to queue"};
        if (command == "get_public_key")
            return {keys.contains(rest) ? "Public key: " + keys.value(rest)
                                        : QByteArray("Public key not found")};
        if (command == "publish")
            return {"ACK " + envelopeId(line)};
        if (command == "ack")
            return {"ACK_CONFIRMED " + rest};
        if (command == "nack")
            return {"NACK_CONFIRMED " + rest.left(rest.indexOf(' '))};
        if (command == "pong")
            return {};
        return {"Unknown command"};
    }

public:
    static QByteArray envelopeJson(const QByteArray &publishLine)
    {
        // "publish <exchange> <routing key> <json>"
        qsizetype at = -1;
        for (int spaces = 0; spaces < 3; ++spaces)
            at = publishLine.indexOf(' ', at + 1);
        return publishLine.mid(at + 1);
    }
    static QByteArray envelopeId(const QByteArray &publishLine)
    {
        return QJsonDocument::fromJson(envelopeJson(publishLine))
            .object()
            .value("message_id")
            .toString()
            .toUtf8();
    }

private:
    QSslServer m_server;
    QHash<int, QByteArray> m_buffers;
};

// A "Message:" line sealed for `receiver`, as the broker would push it.
inline QByteArray deliveryLine(const QString &id, const QByteArray &payload,
                               const QByteArray &receiverKey, const QJsonObject &extra = {})
{
    const auto sealed = crypto::seal(payload, receiverKey);
    const QByteArray json = crypto::buildEnvelopeJson(id, QStringLiteral("svc-a"), sealed.value(),
                                                      QDateTime::currentDateTimeUtc(), extra);
    return "Message: " + id.toUtf8() + ' ' + json;
}

} // namespace clienttest

namespace cmq::client {
// For QCOMPARE's failure messages.
inline char *toString(MessageState state)
{
    return qstrdup(qPrintable(stateName(state)));
}
} // namespace cmq::client

namespace clienttest {

// What every Client test starts from: our key pair (svc-a, the client under test) saved where
// the options point, a peer's (svc-b), and options for a client talking to fake brokers.
class ClientFixture
{
protected:
    bool prepareKeys()
    {
        if (!m_dir.isValid())
            return false;
        m_ourKeys = crypto::generateKeyPair().value();
        m_peerKeys = crypto::generateKeyPair().value();
        m_keyPath = m_dir.filePath("svc-a.key");
        return crypto::saveKeyPair(m_ourKeys, m_keyPath).ok();
    }

    ClientOptions options(const QList<FakeBroker *> &brokers) const
    {
        ClientOptions o;
        for (FakeBroker *broker : brokers)
            o.brokers.append(broker->address());
        o.tls = {certFile("svc-a.crt"), certFile("svc-a.key"), certFile("ca.crt")};
        o.keyPairPath = m_keyPath;
        o.heartbeatSec = 1;
        o.connectTimeoutMs = 3000;
        o.backoffInitialMs = 50;
        o.backoffMaxMs = 200;
        o.retryDelayMs = 50;
        return o;
    }

    QTemporaryDir m_dir;
    crypto::KeyPair m_ourKeys;  // svc-a, the client under test
    crypto::KeyPair m_peerKeys; // svc-b
    QString m_keyPath;
};

} // namespace clienttest
