#pragma once
// /metrics over HTTP for Prometheus scrapers (admin.metrics_http_address). Plain HTTP is only
// allowed on a loopback address; with admin.metrics_http_tls the client must present a
// certificate from our CA whose CN may use the admin listener. A deliberately tiny HTTP/1.1
// responder (one GET per connection, Connection: close): the broker needs one read-only
// endpoint, and owning the accept path keeps the same handshake caps and request bounds as
// the other listeners (docs/METRICS.md says more).

#include <functional>

#include <QObject>
#include <QSslConfiguration>
#include <QTcpServer>

#include "config/config.h"
#include "net/tlslistener.h"
#include "util/result.h"

class QTcpSocket;

namespace cmq::metrics {

class BrokerMetrics;

class MetricsHttpServer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MetricsHttpServer)

public:
    // Returns why a CN may not scrape (empty Status = allowed); TLS mode only.
    using Authorizer = std::function<Status(const QString &cn)>;

    explicit MetricsHttpServer(BrokerMetrics &metrics, QObject *parent = nullptr);
    ~MetricsHttpServer() override;

    Status startPlain(const HostPort &address);
    // For TLS handshakes from now on (reload); no effect on a plain-HTTP server.
    void setSslConfiguration(const QSslConfiguration &tls) { m_tls.setSslConfiguration(tls); }
    Status startTls(const HostPort &address, const QSslConfiguration &tls,
                    const TlsListener::Limits &limits, Authorizer authorize);
    quint16 port() const;

    // The whole HTTP response for one request head (pure, for tests).
    static QByteArray respond(const QByteArray &requestHead, const QByteArray &metricsBody);
    static QByteArray response(int status, const char *reason, const QByteArray &contentType,
                               const QByteArray &body);

private:
    void serve(QTcpSocket *socket, const QString &refusal);

    BrokerMetrics &m_metrics;
    QTcpServer m_plain;
    TlsListener m_tls;
    Authorizer m_authorize;
    int m_open = 0;
};

} // namespace cmq::metrics
