#include "testclient.h"

#include <QDeadlineTimer>

#include "testenv.h"
#include "tls/tlsidentity.h"

namespace cmq::test {

TestClient::TestClient(const QString &identity, const QString &caFile)
{
    QSslConfiguration config;
    if (identity.isEmpty()) {
        config = QSslConfiguration::defaultConfiguration();
        config.setCaCertificates(QSslCertificate::fromPath(certFile(caFile)));
        config.setPeerVerifyMode(QSslSocket::VerifyPeer);
    } else {
        const Result<QSslConfiguration> built = tls::clientConfiguration(
            tls::TlsFiles{certFile(identity + QStringLiteral(".crt")),
                          certFile(identity + QStringLiteral(".key")), certFile(caFile)});
        if (!built)
            qFatal("test identity %s: %s", qPrintable(identity), qPrintable(built.error()));
        config = built.value();
    }
    m_socket.setSslConfiguration(config);
}

bool TestClient::connectTo(quint16 port, int timeoutMs)
{
    m_socket.connectToHostEncrypted(QStringLiteral("localhost"), port);
    return m_socket.waitForEncrypted(timeoutMs);
}

bool TestClient::connectTo(const QString &address, quint16 port, int timeoutMs)
{
    m_socket.connectToHostEncrypted(address, port, QStringLiteral("localhost"));
    return m_socket.waitForEncrypted(timeoutMs);
}

void TestClient::send(const QByteArray &line)
{
    sendRaw(line + '\n');
}

void TestClient::sendRaw(const QByteArray &bytes)
{
    m_socket.write(bytes);
    m_socket.flush();
}

bool TestClient::fill(int timeoutMs)
{
    if (m_socket.bytesAvailable() == 0 && !m_socket.waitForReadyRead(timeoutMs))
        return false;
    m_buffer += m_socket.readAll();
    return true;
}

QByteArray TestClient::readLine(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const qsizetype end = m_buffer.indexOf('\n');
        if (end >= 0) {
            QByteArray line = m_buffer.left(end);
            m_buffer.remove(0, end + 1);
            if (line.endsWith('\r'))
                line.chop(1);
            return line;
        }
        if (deadline.hasExpired() || !fill(int(qMax<qint64>(1, deadline.remainingTime()))))
            return {};
    }
}

QList<QByteArray> TestClient::readLines(int count, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    QList<QByteArray> lines;
    while (lines.size() < count) {
        const QByteArray line = readLine(int(qMax<qint64>(1, deadline.remainingTime())));
        if (line.isNull())
            break;
        lines.append(line);
    }
    return lines;
}

QByteArray TestClient::request(const QByteArray &line, int timeoutMs)
{
    send(line);
    return readLine(timeoutMs);
}

QByteArray TestClient::readLineStartingWith(const QByteArray &prefix, int timeoutMs,
                                            QList<QByteArray> *skipped)
{
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const QByteArray line = readLine(int(qMax<qint64>(1, deadline.remainingTime())));
        if (line.isNull() || line.startsWith(prefix))
            return line;
        if (skipped)
            skipped->append(line);
    }
}

bool TestClient::waitForDisconnected(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (m_socket.state() != QAbstractSocket::UnconnectedState) {
        if (deadline.hasExpired())
            return false;
        if (m_socket.waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime()))))
            m_buffer += m_socket.readAll();
    }
    return true;
}

void TestClient::disconnect()
{
    m_socket.disconnectFromHost();
    if (m_socket.state() != QAbstractSocket::UnconnectedState)
        m_socket.waitForDisconnected(5000);
}

bool TestClient::nothingWithin(int ms)
{
    if (m_buffer.contains('\n'))
        return false;
    if (m_socket.waitForReadyRead(ms))
        m_buffer += m_socket.readAll();
    return !m_buffer.contains('\n');
}

} // namespace cmq::test
