// The mTLS listener against the real broker: every way a client can be refused (during the
// handshake, or right after it by identity) leaves the broker serving everyone else; the server
// key may be PKCS#8 or PKCS#1 RSA, SEC1 or PKCS#8 EC; TLS below 1.2 is refused.

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::TestClient;

static QString quoted(const QString &text)
{
    return u'"' + text + u'"';
}

class tst_Tls : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void validClientServed();
    void refusedInHandshake_data();
    void refusedInHandshake();
    void refusedByIdentity_data();
    void refusedByIdentity();
    void tls11Refused();
    void serverKeyForms_data();
    void serverKeyForms();

private:
    // A valid client still gets an answer: the refusal before did not hurt the broker.
    void verifyBrokerServes(BrokerProcess &broker);
    BrokerProcess m_broker;
};

void tst_Tls::initTestCase()
{
    // notyet-client joins the senders so that only its validity period can refuse it
    // (expired-client is a sender in the default test ACL for the same reason).
    m_broker.set("acl.sender_cns",
                 R"(["sender_1", "publisher-svc-1", "expired-client", "notyet-client"])");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
}

void tst_Tls::cleanupTestCase()
{
    QVERIFY(m_broker.terminate());
    QCOMPARE(m_broker.exitStatus(), QProcess::NormalExit);
    QCOMPARE(m_broker.exitCode(), 0);
}

void tst_Tls::verifyBrokerServes(BrokerProcess &broker)
{
    QVERIFY2(broker.isRunning(), broker.output().constData());
    TestClient client("sender_1");
    QVERIFY2(client.connectTo(broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
}

void tst_Tls::validClientServed()
{
    // The baseline every refusal below is measured against: the same request, answered.
    verifyBrokerServes(m_broker);
}

void tst_Tls::refusedInHandshake_data()
{
    QTest::addColumn<QString>("identity");
    QTest::newRow("no client certificate") << QString();
    // CN publisher-svc-1 is a sender: only the signature of another CA refuses it.
    QTest::newRow("certificate from another CA") << QStringLiteral("wrongca-client");
    QTest::newRow("expired certificate") << QStringLiteral("expired");
    QTest::newRow("not yet valid certificate") << QStringLiteral("notyet");
}

void tst_Tls::refusedInHandshake()
{
    QFETCH(QString, identity);
    TestClient client(identity);
    // With TLS 1.3 the client completes its side of the handshake before the server has
    // checked the client certificate, so the refusal may only show on the first read: either
    // way, no request is ever answered and the connection ends. (Had the handshake passed,
    // the request would get "Public key not found", or an Unauthorized line for no CN.)
    if (client.connectTo(m_broker.port())) {
        client.send("get_public_key nobody");
        const QByteArray line = client.readLine();
        QVERIFY2(line.isNull(), line.constData());
        QVERIFY(client.waitForDisconnected());
    }
    QCOMPARE(client.socket().state(), QAbstractSocket::UnconnectedState);
    verifyBrokerServes(m_broker);
}

void tst_Tls::refusedByIdentity_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("refusal");
    QTest::newRow("no Common Name")
        << QStringLiteral("nocn")
        << QByteArray("Error: Unauthorized: the client certificate has no Common Name");
    // receiver_1 and receiver_2 are both receivers: neither CN may be picked.
    QTest::newRow("two Common Names")
        << QStringLiteral("twocn")
        << QByteArray("Error: Unauthorized: the client certificate has more than one Common "
                      "Name");
    QTest::newRow("unknown CN") << QStringLiteral("stranger")
                                << QByteArray("Error: Unauthorized: certificate CN 'stranger' "
                                              "has no role");
}

void tst_Tls::refusedByIdentity()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, refusal);
    TestClient client(identity);
    // Signed by our CA: the handshake itself succeeds.
    QVERIFY2(client.connectTo(m_broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.readLine(), refusal);
    QVERIFY(client.waitForDisconnected());
    const QByteArray more = client.readLine(0);
    QVERIFY2(more.isNull(), more.constData()); // exactly one line
    verifyBrokerServes(m_broker);
}

void tst_Tls::tls11Refused()
{
    // A valid identity that offers TLS 1.1 only. The client must really send a TLS 1.1
    // ClientHello (OpenSSL 3 needs security level 0 for that), so that the failure below is
    // the broker's protocol_version alert and not the client giving up before it starts.
    TestClient client("sender_1");
    QSslConfiguration config = client.socket().sslConfiguration();
    QT_WARNING_PUSH
    QT_WARNING_DISABLE_DEPRECATED
    config.setProtocol(QSsl::TlsV1_1);
    QT_WARNING_POP
    config.setBackendConfigurationOption("CipherString", QByteArray("DEFAULT@SECLEVEL=0"));
    client.socket().setSslConfiguration(config);
    QVERIFY(!client.connectTo(m_broker.port()));
    // OpenSSL reports the broker's protocol_version alert, or just the close that follows it.
    QVERIFY2(client.errorString().contains(QLatin1String("alert protocol version"))
                 || client.errorString().contains(QLatin1String("closed")),
             qPrintable(client.errorString()));
    verifyBrokerServes(m_broker);
}

void tst_Tls::serverKeyForms_data()
{
    QTest::addColumn<QString>("certificate");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QByteArray>("pemHeader");
    QTest::newRow("RSA PKCS#8") << "server.crt"
                                << "server.key" << QByteArray("-----BEGIN PRIVATE KEY-----");
    QTest::newRow("RSA PKCS#1") << "server.crt"
                                << "server-pkcs1.key"
                                << QByteArray("-----BEGIN RSA PRIVATE KEY-----");
    QTest::newRow("EC SEC1") << "server-ec.crt"
                             << "server-ec.key" << QByteArray("-----BEGIN EC PRIVATE KEY-----");
    QTest::newRow("EC PKCS#8") << "server-ec.crt"
                               << "server-ec-pkcs8.key"
                               << QByteArray("-----BEGIN PRIVATE KEY-----");
}

void tst_Tls::serverKeyForms()
{
    QFETCH(QString, certificate);
    QFETCH(QString, key);
    QFETCH(QByteArray, pemHeader);
    // The fixture really holds the key form this row is about.
    QFile keyFile(certFile(key));
    QVERIFY2(keyFile.open(QIODevice::ReadOnly), qPrintable(keyFile.fileName()));
    QVERIFY(keyFile.readAll().startsWith(pemHeader));

    BrokerProcess broker;
    broker.set("tls.cert_path", quoted(certFile(certificate)));
    broker.set("tls.key_path", quoted(certFile(key)));
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient client("sender_1");
    QVERIFY2(client.connectTo(broker.port()), qPrintable(client.errorString()));
    // The broker proved possession of this very certificate's key.
    const QList<QSslCertificate> expected = QSslCertificate::fromPath(certFile(certificate));
    QVERIFY(!expected.isEmpty());
    QCOMPARE(client.socket().peerCertificate(), expected.constFirst());
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
    client.disconnect();
    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitCode(), 0);
}

QTEST_GUILESS_MAIN(tst_Tls)
#include "tst_03_tls.moc"
