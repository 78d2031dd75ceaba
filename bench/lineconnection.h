#pragma once
// An mTLS connection that speaks in lines, for the benchmark's publishers and consumers. Lives
// in its own thread; hands every received line to `onLine` without copying more than needed.

#include <functional>

#include <QByteArray>
#include <QObject>
#include <QSslSocket>

namespace cmq::bench {

class LineConnection : public QObject
{
    Q_OBJECT

public:
    LineConnection(const QString &certDir, const QString &identity, QObject *parent = nullptr);

    void open(const QString &host, quint16 port);
    void write(const QByteArray &bytes) { m_socket.write(bytes); }
    qint64 pendingOutput() const { return m_socket.bytesToWrite(); }

    std::function<void(QByteArrayView line)> onLine;
    std::function<void()> onConnected;
    std::function<void(const QString &error)> onError;

private:
    void readLines();
    QSslSocket m_socket;
    QByteArray m_buffer;
};

} // namespace cmq::bench
