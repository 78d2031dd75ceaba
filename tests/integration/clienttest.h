#pragma once
// Shared by the client library's integration tests (tst_2x_*): client options for the test
// identities against BrokerProcess instances, X25519 key files, an inbox that counts what the
// application receives per message id (the exactly-once check), and running cmq / the test
// service as processes.

#include <QHash>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "client/client.h"
#include "crypto/keypair.h"
#include "testenv.h"

namespace cmq::test {

// A fresh X25519 key pair saved as <dir>/<name>.x25519 (and .pub); returns the private key path.
inline QString makeKeyPair(const QTemporaryDir &dir, const QString &name)
{
    const QString path = dir.filePath(name + QStringLiteral(".x25519"));
    const auto keys = crypto::generateKeyPair();
    if (!keys || !crypto::saveKeyPair(keys.value(), path))
        qFatal("cannot create a key pair for %s", qPrintable(name));
    return path;
}

inline QString brokerList(const QList<quint16> &ports)
{
    QStringList entries;
    for (quint16 port : ports)
        entries << QStringLiteral("127.0.0.1:%1").arg(port);
    return entries.join(u',');
}

// Options for a test identity (its certificate from tests/certs) and brokers on localhost. Quick
// reconnects: the tests restart brokers and want the clients back within a second or two.
inline client::ClientOptions clientOptions(const QString &identity, const QList<quint16> &ports,
                                           const QString &keyPairPath = {})
{
    client::ClientOptions options;
    options.brokers = client::parseBrokerList(brokerList(ports)).value();
    options.tls = {certFile(identity + QStringLiteral(".crt")),
                   certFile(identity + QStringLiteral(".key")), certFile(QStringLiteral("ca.crt"))};
    options.keyPairPath = keyPairPath;
    options.heartbeatSec = 2;
    options.connectTimeoutMs = 5000;
    options.backoffInitialMs = 100;
    options.backoffMaxMs = 1000;
    options.retryDelayMs = 200;
    return options;
}

// What the application behind a listening client saw: every call of its handler, by id.
struct Inbox
{
    QHash<QString, int> timesById;
    QHash<QString, QByteArray> payloadById;

    client::Client::Handler handler()
    {
        return [this](const client::IncomingMessage &message) -> std::optional<QByteArray> {
            ++timesById[message.messageId];
            payloadById.insert(message.messageId, message.payload);
            return std::nullopt;
        };
    }
    int distinct() const { return int(timesById.size()); }
    // Ids handed to the application more than once.
    QStringList repeated() const
    {
        QStringList ids;
        for (auto it = timesById.cbegin(); it != timesById.cend(); ++it)
            if (it.value() > 1)
                ids << QStringLiteral("%1 (%2 times)").arg(it.key()).arg(it.value());
        return ids;
    }
};

// The connection flags of cmq for a test identity.
inline QStringList cmqConnection(const QString &identity, const QList<quint16> &ports)
{
    return {QStringLiteral("--broker"), brokerList(ports),
            QStringLiteral("--cert"),   certFile(identity + QStringLiteral(".crt")),
            QStringLiteral("--key"),    certFile(identity + QStringLiteral(".key")),
            QStringLiteral("--ca"),     certFile(QStringLiteral("ca.crt"))};
}

// A process whose output lines are collected as they come.
class LineProcess
{
public:
    LineProcess()
    {
        QObject::connect(&process, &QProcess::readyReadStandardOutput, &process, [this] {
            m_out += process.readAllStandardOutput();
            qsizetype end;
            while ((end = m_out.indexOf('\n')) >= 0) {
                lines.append(m_out.left(end));
                m_out.remove(0, end + 1);
            }
        });
    }
    ~LineProcess()
    {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(10000);
        }
    }
    void start(const QString &program, const QStringList &arguments)
    {
        process.start(program, arguments);
    }
    bool finished(int timeoutMs)
    {
        // Waits in the event loop, so output keeps being collected.
        if (process.state() == QProcess::NotRunning)
            return true;
        QSignalSpy exited(&process, &QProcess::finished);
        return exited.wait(timeoutMs) || process.state() == QProcess::NotRunning;
    }
    QByteArray errors() { return m_err += process.readAllStandardError(); }

    QProcess process;
    QList<QByteArray> lines;

private:
    QByteArray m_out;
    QByteArray m_err;
};

} // namespace cmq::test
