#include "lineconnection.h"

#include <QDir>

#include "tls/tlsidentity.h"

namespace cmq::bench {

LineConnection::LineConnection(const QString &certDir, const QString &identity, QObject *parent)
    : QObject(parent), m_socket(this)
{
    const QDir dir(certDir);
    const Result<QSslConfiguration> config = tls::clientConfiguration(
        tls::TlsFiles{dir.filePath(identity + ".crt"), dir.filePath(identity + ".key"),
                      dir.filePath("ca.crt")});
    if (!config)
        qFatal("%s", qPrintable(config.error()));
    m_socket.setSslConfiguration(config.value());
    m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
    connect(&m_socket, &QSslSocket::encrypted, this, [this] {
        if (onConnected)
            onConnected();
    });
    connect(&m_socket, &QSslSocket::readyRead, this, &LineConnection::readLines);
    connect(&m_socket, &QSslSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
        if (onError)
            onError(m_socket.errorString());
    });
}

void LineConnection::open(const QString &host, quint16 port)
{
    m_socket.connectToHostEncrypted(host, port);
}

void LineConnection::readLines()
{
    m_buffer += m_socket.readAll();
    qsizetype start = 0;
    for (;;) {
        const qsizetype end = m_buffer.indexOf('\n', start);
        if (end < 0)
            break;
        if (onLine)
            onLine(QByteArrayView(m_buffer).sliced(start, end - start));
        start = end + 1;
    }
    m_buffer.remove(0, start);
}

} // namespace cmq::bench
