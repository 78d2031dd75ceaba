// /metrics over HTTP for Prometheus: the plain endpoint on loopback and the mutual-TLS one
// (admin identities only), checked by hand and then scraped by a real Prometheus server
// (Debian's `prometheus` package), whose query API must report both targets up and the
// broker's own counter values.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "tls/tlsidentity.h"

using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

struct HttpReply
{
    int status = 0;
    QByteArray head;
    QByteArray body;
};

// One request over a connected socket; the server closes after its reply.
HttpReply exchange(QTcpSocket &socket, const QByteArray &request)
{
    socket.write(request);
    QByteArray all;
    QDeadlineTimer deadline(10000);
    while (socket.state() == QAbstractSocket::ConnectedState && !deadline.hasExpired()) {
        socket.waitForReadyRead(int(qMin<qint64>(500, deadline.remainingTime())));
        all += socket.readAll();
    }
    all += socket.readAll();
    HttpReply reply;
    const qsizetype split = all.indexOf("\r\n\r\n");
    reply.head = all.left(split);
    reply.body = split < 0 ? QByteArray() : all.mid(split + 4);
    reply.status = reply.head.mid(9, 3).toInt();
    return reply;
}

HttpReply get(quint16 port, const QByteArray &path, const QByteArray &method = "GET")
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(5000))
        return {};
    return exchange(socket, method + ' ' + path +
                                " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
}

// Over mutual TLS as `identity` (empty: no client certificate).
HttpReply getTls(quint16 port, const QString &identity)
{
    QSslSocket socket;
    QSslConfiguration config;
    if (identity.isEmpty()) {
        config = QSslConfiguration::defaultConfiguration();
        config.setCaCertificates(QSslCertificate::fromPath(certFile(QStringLiteral("ca.crt"))));
    } else {
        config = cmq::tls::clientConfiguration({certFile(identity + QStringLiteral(".crt")),
                                                certFile(identity + QStringLiteral(".key")),
                                                certFile(QStringLiteral("ca.crt"))})
                     .value();
    }
    socket.setSslConfiguration(config);
    socket.connectToHostEncrypted(QStringLiteral("localhost"), port);
    if (!socket.waitForEncrypted(5000))
        return {};
    return exchange(socket, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

QString quoted(const QString &text)
{
    return u'"' + text + u'"';
}

} // namespace

class tst_Prometheus : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void plainEndpoint();
    void otherRequests_data();
    void otherRequests();
    void tlsEndpoint_data();
    void tlsEndpoint();
    void prometheusScrapesBoth();

private:
    QJsonArray query(const QByteArray &promql);

    BrokerProcess m_plain;
    BrokerProcess m_tls;
    quint16 m_plainMetrics = 0;
    quint16 m_tlsMetrics = 0;
    QTemporaryDir m_promDir;
    QProcess m_prometheus;
    quint16 m_promPort = 0;
};

void tst_Prometheus::initTestCase()
{
    m_plainMetrics = freePort();
    m_plain.set("admin.metrics_http_address",
                quoted(QStringLiteral("127.0.0.1:%1").arg(m_plainMetrics)));
    QVERIFY2(m_plain.start(), m_plain.output().constData());
    m_tlsMetrics = freePort();
    m_tls.set("admin.metrics_http_address",
              quoted(QStringLiteral("127.0.0.1:%1").arg(m_tlsMetrics)));
    m_tls.set("admin.metrics_http_tls", "true");
    QVERIFY2(m_tls.start(), m_tls.output().constData());

    // Some traffic, so the counters have values worth comparing.
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(m_plain.port()));
    QCOMPARE(receiver.request("declare_queue receiver_1_prom"), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind receiver_1_prom CipherMQ_exchange receiver_1_prom"),
             "Queue bound");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_plain.port()));
    for (int i = 0; i < 7; ++i) {
        const QByteArray id = "prom-" + QByteArray::number(i);
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_prom {\"message_id\":\"" +
                                id +
                                "\",\"receiver_client_id\":\"receiver_1\",\"enc_session_key\":"
                                "\"ZW5j\",\"nonce\":\"bm9uY2U=\",\"ciphertext\":\"Y2lw\"}"),
                 "ACK " + id);
    }
}

void tst_Prometheus::cleanupTestCase()
{
    if (m_prometheus.state() != QProcess::NotRunning) {
        m_prometheus.terminate();
        if (!m_prometheus.waitForFinished(10000))
            m_prometheus.kill();
    }
    QVERIFY(m_plain.terminate());
    QVERIFY(m_tls.terminate());
}

void tst_Prometheus::plainEndpoint()
{
    const HttpReply reply = get(m_plainMetrics, "/metrics");
    QCOMPARE(reply.status, 200);
    QVERIFY2(reply.head.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8"),
             reply.head.constData());
    QVERIFY(reply.head.contains("\r\nContent-Length: " + QByteArray::number(reply.body.size())));
    QVERIFY(reply.body.contains("\nciphermq_messages_routed_total 7\n"));
    QVERIFY(reply.body.contains("ciphermq_queue_messages_ready{queue=\"receiver_1_prom\"} 7\n"));
    QVERIFY(!reply.body.contains("# EOF")); // the admin protocol's terminator only
    // The query string is ignored, as Prometheus' own exporters do.
    QCOMPARE(get(m_plainMetrics, "/metrics?x=1").status, 200);
}

void tst_Prometheus::otherRequests_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<int>("status");
    QTest::newRow("root") << QByteArray("GET") << QByteArray("/") << 404;
    QTest::newRow("other path") << QByteArray("GET") << QByteArray("/api") << 404;
    QTest::newRow("post") << QByteArray("POST") << QByteArray("/metrics") << 405;
    QTest::newRow("head") << QByteArray("HEAD") << QByteArray("/metrics") << 200;
}

void tst_Prometheus::otherRequests()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(int, status);
    const HttpReply reply = get(m_plainMetrics, path, method);
    QCOMPARE(reply.status, status);
    if (method == "HEAD")
        QVERIFY(reply.body.isEmpty());
}

void tst_Prometheus::tlsEndpoint_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<int>("status"); // 0: the TLS handshake itself fails
    QTest::newRow("admin") << "ops-admin" << 200;
    QTest::newRow("sender") << "sender_1" << 403;
    QTest::newRow("unknown CN") << "stranger" << 403;
    QTest::newRow("no certificate") << QString() << 0;
}

void tst_Prometheus::tlsEndpoint()
{
    QFETCH(QString, identity);
    QFETCH(int, status);
    const HttpReply reply = getTls(m_tlsMetrics, identity);
    QCOMPARE(reply.status, status);
    if (status == 200)
        QVERIFY(reply.body.contains("# TYPE ciphermq_messages_routed_total counter"));
    if (status == 403)
        QVERIFY2(reply.body.contains("does not have the Admin role"), reply.body.constData());
    // Plain HTTP to the TLS port is not answered.
    if (identity == QLatin1String("ops-admin"))
        QCOMPARE(get(m_tlsMetrics, "/metrics").status, 0);
}

QJsonArray tst_Prometheus::query(const QByteArray &promql)
{
    const HttpReply reply =
        get(m_promPort, "/api/v1/query?query=" + QUrl::toPercentEncoding(promql));
    if (reply.status != 200)
        return {};
    const QJsonObject o = QJsonDocument::fromJson(reply.body).object();
    return o.value("data").toObject().value("result").toArray();
}

void tst_Prometheus::prometheusScrapesBoth()
{
    const QString binary = QStringLiteral("/usr/bin/prometheus");
    QVERIFY2(QFile::exists(binary), "prometheus is missing: apt-get install prometheus");
    m_promPort = freePort();
    const QString config = m_promDir.filePath(QStringLiteral("prometheus.yml"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"(global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ciphermq-plain
    static_configs:
      - targets: ['127.0.0.1:%1']
  - job_name: ciphermq-mtls
    scheme: https
    tls_config:
      ca_file: %2
      cert_file: %3
      key_file: %4
      server_name: localhost
    static_configs:
      - targets: ['127.0.0.1:%5']
)")
                   .arg(m_plainMetrics)
                   .arg(certFile("ca.crt"), certFile("ops-admin.crt"), certFile("ops-admin.key"))
                   .arg(m_tlsMetrics)
                   .toUtf8());
    file.close();
    m_prometheus.setProcessChannelMode(QProcess::MergedChannels);
    m_prometheus.start(binary,
                       {QStringLiteral("--config.file=") + config,
                        QStringLiteral("--storage.tsdb.path=") + m_promDir.filePath("data"),
                        QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(m_promPort)});
    QVERIFY(m_prometheus.waitForStarted());

    // Both targets up: the query API answers "up" = 1 for each job once it has scraped.
    QElapsedTimer timer;
    timer.start();
    QHash<QString, QString> up;
    while (timer.elapsed() < 60000) {
        up.clear();
        for (const QJsonValue &v : query("up")) {
            const QJsonObject o = v.toObject();
            up[o.value("metric").toObject().value("job").toString()] =
                o.value("value").toArray().at(1).toString();
        }
        if (up.value("ciphermq-plain") == u"1" && up.value("ciphermq-mtls") == u"1")
            break;
        QVERIFY2(m_prometheus.state() == QProcess::Running, m_prometheus.readAll().constData());
        QTest::qWait(200);
    }
    QVERIFY2(up.value("ciphermq-plain") == u"1" && up.value("ciphermq-mtls") == u"1",
             m_prometheus.readAll().right(3000).constData());

    // What Prometheus stored is what the broker counted.
    const QJsonArray routed = query("ciphermq_messages_routed_total{job=\"ciphermq-plain\"}");
    QCOMPARE(routed.size(), 1);
    QCOMPARE(routed.at(0).toObject().value("value").toArray().at(1).toString(),
             QStringLiteral("7"));
    const QJsonArray ready = query("ciphermq_queue_messages_ready{queue=\"receiver_1_prom\"}");
    QCOMPARE(ready.size(), 1);
    QCOMPARE(ready.at(0).toObject().value("value").toArray().at(1).toString(), QStringLiteral("7"));
    const QJsonArray latency =
        query("ciphermq_publish_ack_latency_seconds_count{job=\"ciphermq-plain\"}");
    QCOMPARE(latency.size(), 1);
    QCOMPARE(latency.at(0).toObject().value("value").toArray().at(1).toString(),
             QStringLiteral("7"));
}

QTEST_GUILESS_MAIN(tst_Prometheus)
#include "tst_11_prometheus.moc"
