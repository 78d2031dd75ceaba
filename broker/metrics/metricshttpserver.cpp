#include "metrics/metricshttpserver.h"

#include <QSslSocket>
#include <QTimer>

#include "metrics/brokermetrics.h"
#include "metrics/metricslog.h"
#include "tls/tlsidentity.h"

namespace cmq::metrics {

constexpr qsizetype kMaxRequestHead = 8192;
constexpr int kRequestTimeoutMs = 10000;
// Scrapers are few; this bounds what a stray client can hold.
constexpr int kMaxOpen = 32;

MetricsHttpServer::MetricsHttpServer(BrokerMetrics &metrics, QObject *parent)
    : QObject(parent), m_metrics(metrics)
{
}

MetricsHttpServer::~MetricsHttpServer() = default;

quint16 MetricsHttpServer::port() const
{
    return m_plain.isListening() ? m_plain.serverPort() : m_tls.serverPort();
}

Status MetricsHttpServer::startPlain(const HostPort &address)
{
    connect(&m_plain, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_plain.nextPendingConnection()) {
            TlsListener::setAcceptedSocketOptions(socket); // the TLS listener does its own
            serve(socket, QString());
        }
    });
    if (!m_plain.listen(address.host, address.port))
        return failure(QStringLiteral("cannot listen on %1 (metrics): %2")
                           .arg(address.text, m_plain.errorString()));
    qCInfo(lcMetricsHttp, "/metrics over HTTP on %s:%u", qPrintable(address.host.toString()),
           unsigned(m_plain.serverPort()));
    return success();
}

Status MetricsHttpServer::startTls(const HostPort &address, const QSslConfiguration &tls,
                                   const TlsListener::Limits &limits, Authorizer authorize)
{
    m_authorize = std::move(authorize);
    m_tls.setSslConfiguration(tls);
    m_tls.setLimits(limits);
    connect(&m_tls, &TlsListener::ready, this, [this](QSslSocket *socket) {
        const QString cn = tls::commonName(socket->peerCertificate());
        const Status allowed = m_authorize ? m_authorize(cn) : success();
        serve(socket, allowed ? QString() : allowed.error());
    });
    if (!m_tls.listen(address.host, address.port))
        return failure(QStringLiteral("cannot listen on %1 (metrics): %2")
                           .arg(address.text, m_tls.errorString()));
    qCInfo(lcMetricsHttp, "/metrics over HTTPS (client certificates required) on %s:%u",
           qPrintable(address.host.toString()), unsigned(m_tls.serverPort()));
    return success();
}

QByteArray MetricsHttpServer::response(int status, const char *reason,
                                       const QByteArray &contentType, const QByteArray &body)
{
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason +
           "\r\nContent-Type: " + contentType +
           "\r\nContent-Length: " + QByteArray::number(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

QByteArray MetricsHttpServer::respond(const QByteArray &requestHead, const QByteArray &metricsBody)
{
    const QByteArray text = "text/plain; charset=utf-8";
    const qsizetype end = requestHead.indexOf("\r\n");
    const QList<QByteArray> parts = requestHead.left(end < 0 ? requestHead.size() : end).split(' ');
    if (parts.size() != 3 || !parts[2].startsWith("HTTP/1."))
        return response(400, "Bad Request", text, "bad request\n");
    const QByteArray &method = parts[0];
    QByteArray path = parts[1];
    if (const qsizetype query = path.indexOf('?'); query >= 0)
        path.truncate(query);
    if (path != "/metrics")
        return response(404, "Not Found", text, "only /metrics is served here\n");
    if (method != "GET" && method != "HEAD")
        return response(405, "Method Not Allowed", text, "GET only\n");
    QByteArray reply = response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", metricsBody);
    if (method == "HEAD")
        reply.truncate(reply.indexOf("\r\n\r\n") + 4);
    return reply;
}

namespace {
// What one connection has sent so far; a child of its socket, so it goes with it.
struct RequestState final : QObject
{
    using QObject::QObject;
    QByteArray head;
    bool answered = false;
};
} // namespace

void MetricsHttpServer::serve(QTcpSocket *socket, const QString &refusal)
{
    socket->setParent(this);
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    if (m_open >= kMaxOpen) {
        socket->abort();
        socket->deleteLater();
        return;
    }
    ++m_open;
    connect(socket, &QObject::destroyed, this, [this] { --m_open; });
    // A client that never finishes its request does not keep the connection.
    QTimer::singleShot(kRequestTimeoutMs, socket, [socket] { socket->abort(); });

    auto *state = new RequestState(socket);
    const auto onReadable = [this, socket, state, refusal] {
        if (state->answered) {
            socket->readAll(); // whatever follows the request is not for us
            return;
        }
        state->head += socket->read(kMaxRequestHead + 1 - state->head.size());
        const qsizetype end = state->head.indexOf("\r\n\r\n");
        if (end < 0 && state->head.size() <= kMaxRequestHead)
            return;
        QByteArray reply;
        if (end < 0)
            reply = response(431, "Request Header Fields Too Large", "text/plain; charset=utf-8",
                             "request head too large\n");
        else if (!refusal.isEmpty())
            reply =
                response(403, "Forbidden", "text/plain; charset=utf-8", refusal.toUtf8() + '\n');
        else
            reply = respond(state->head.left(end + 4), m_metrics.prometheusText());
        state->answered = true;
        socket->write(reply);
        socket->disconnectFromHost();
    };
    connect(socket, &QTcpSocket::readyRead, state, onReadable);
    if (socket->bytesAvailable() > 0)
        onReadable();
}

} // namespace cmq::metrics
