#pragma once
// A line-oriented mTLS client for tests, blocking with deadlines (no event loop needed):
// connect with one of the generated test identities, send lines, read reply lines.

#include <QByteArray>
#include <QList>
#include <QSslSocket>
#include <QString>

namespace cmq::test {

class TestClient
{
public:
    // `identity` names <identity>.crt/.key in the test certificate directory; empty = connect
    // without a client certificate. `caFile` is the CA the server is verified against.
    explicit TestClient(const QString &identity, const QString &caFile = QStringLiteral("ca.crt"));

    // True once the TLS handshake completed (the server may still refuse us right after).
    bool connectTo(quint16 port, int timeoutMs = 15000);
    // To another address (a test's own network namespace); the certificate is still checked
    // for "localhost".
    bool connectTo(const QString &address, quint16 port, int timeoutMs = 15000);
    QString errorString() const { return m_socket.errorString(); }

    void send(const QByteArray &line); // adds "\n"
    void sendRaw(const QByteArray &bytes);
    // The next line without its "\n"; a null QByteArray on timeout or disconnect.
    QByteArray readLine(int timeoutMs = 15000);
    QList<QByteArray> readLines(int count, int timeoutMs = 15000);
    QByteArray request(const QByteArray &line, int timeoutMs = 15000);
    // Reads lines until one starts with `prefix` (others are returned through `skipped`).
    QByteArray readLineStartingWith(const QByteArray &prefix, int timeoutMs = 15000,
                                    QList<QByteArray> *skipped = nullptr);
    // True if the server closed the connection within the time.
    bool waitForDisconnected(int timeoutMs = 15000);
    void disconnect();
    // Nothing must arrive: checks for silence over a short window.
    bool nothingWithin(int ms);

    QSslSocket &socket() { return m_socket; }

private:
    bool fill(int timeoutMs);
    QSslSocket m_socket;
    QByteArray m_buffer;
};

} // namespace cmq::test
