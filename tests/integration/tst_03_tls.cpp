// The mTLS listener against the real broker: every way a client can be refused (during the
// handshake, or right after it by identity) leaves the broker serving everyone else; the server
// key may be PKCS#8 or PKCS#1 RSA, SEC1 or PKCS#8 EC; TLS below 1.2 is refused, and TLS 1.2
// only with forward-secret AEAD suites; a reload (SIGHUP) rotates the server certificate and
// the CRL without a restart, and keeps the old material when a new file is broken.

#include <csignal>

#include <QSslCipher>
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
    void tls12Suites_data();
    void tls12Suites();
    void tls13Served();
    void keepAliveOnAcceptedSockets();
    void reloadRotatesServerCertificate();
    void reloadedCrlClosesRevokedConnection();
    void reloadWithBrokenFileKeepsOldMaterial_data();
    void reloadWithBrokenFileKeepsOldMaterial();

private:
    // Copies a file of the test PKI into dir under a fixed name (replacing it), for tests that
    // change the broker's files under it.
    static QString place(const QTemporaryDir &dir, const QString &source, const QString &name);
    // Sends SIGHUP and waits until the broker logged the outcome of that reload.
    static bool reloadBySighup(BrokerProcess &broker, const QByteArray &outcome);
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

void tst_Tls::tls12Suites_data()
{
    // OpenSSL names; the broker's certificate is RSA (server.crt).
    QTest::addColumn<QByteArray>("cipher");
    QTest::addColumn<bool>("accepted");
    QTest::newRow("RSA key exchange, CBC") << QByteArray("AES128-SHA256") << false;
    QTest::newRow("RSA key exchange, CBC, SHA-1") << QByteArray("AES256-SHA") << false;
    QTest::newRow("RSA key exchange, GCM") << QByteArray("AES128-GCM-SHA256") << false;
    QTest::newRow("ECDHE, CBC") << QByteArray("ECDHE-RSA-AES128-SHA256") << false;
    QTest::newRow("ECDHE, CBC, SHA-1") << QByteArray("ECDHE-RSA-AES256-SHA") << false;
    QTest::newRow("finite-field DHE, GCM") << QByteArray("DHE-RSA-AES128-GCM-SHA256") << false;
    QTest::newRow("ECDHE, AES-128-GCM") << QByteArray("ECDHE-RSA-AES128-GCM-SHA256") << true;
    QTest::newRow("ECDHE, AES-256-GCM") << QByteArray("ECDHE-RSA-AES256-GCM-SHA384") << true;
    QTest::newRow("ECDHE, ChaCha20-Poly1305") << QByteArray("ECDHE-RSA-CHACHA20-POLY1305") << true;
}

void tst_Tls::tls12Suites()
{
    QFETCH(QByteArray, cipher);
    QFETCH(bool, accepted);
    // A valid identity offering TLS 1.2 with this one suite only.
    TestClient client("sender_1");
    QSslConfiguration config = client.socket().sslConfiguration();
    config.setProtocol(QSsl::TlsV1_2);
    config.setBackendConfigurationOption("CipherString", cipher + "@SECLEVEL=0");
    client.socket().setSslConfiguration(config);
    const bool connected = client.connectTo(m_broker.port());
    QVERIFY2(connected == accepted, qPrintable(client.errorString()));
    if (accepted) {
        QCOMPARE(client.socket().sessionCipher().name().toLatin1(), cipher);
        QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
    } else {
        // No shared suite: the broker's handshake_failure alert, or the close after it.
        QVERIFY2(client.errorString().contains(QLatin1String("handshake failure")) ||
                     client.errorString().contains(QLatin1String("closed")),
                 qPrintable(client.errorString()));
    }
    verifyBrokerServes(m_broker);
}

void tst_Tls::tls13Served()
{
    // TLS 1.3 with OpenSSL's suites, as they are: all of them are forward-secret AEAD.
    TestClient client("sender_1");
    QSslConfiguration config = client.socket().sslConfiguration();
    config.setProtocol(QSsl::TlsV1_3);
    client.socket().setSslConfiguration(config);
    QVERIFY2(client.connectTo(m_broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.socket().sessionProtocol(), QSsl::TlsV1_3);
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
}

// The timer the kernel runs for the TCP connection from localPort to remotePort, as
// /proc/net/tcp{,6} shows it ("tr": 0 none, 1 retransmit, 2 keepalive, ...); -1 if not found.
static int tcpTimer(quint16 localPort, quint16 remotePort)
{
    const QByteArray local =
        ':' + QByteArray::number(localPort, 16).toUpper().rightJustified(4, '0');
    const QByteArray remote =
        ':' + QByteArray::number(remotePort, 16).toUpper().rightJustified(4, '0');
    for (const char *table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        QFile file(QString::fromLatin1(table));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        // Not readLine(): procfs files report size 0, so read them through to the end.
        const QList<QByteArray> lines = file.readAll().split('\n');
        for (const QByteArray &line : lines) {
            const QList<QByteArray> fields = line.simplified().split(' ');
            if (fields.size() > 5 && fields.at(1).endsWith(local) && fields.at(2).endsWith(remote))
                return fields.at(5).split(':').constFirst().toInt(nullptr, 16);
        }
    }
    return -1;
}

void tst_Tls::keepAliveOnAcceptedSockets()
{
    // An idle connection with SO_KEEPALIVE has the kernel's keepalive timer running on the
    // broker's side; without it, no timer at all.
    TestClient client("sender_1");
    QVERIFY2(client.connectTo(m_broker.port()), qPrintable(client.errorString()));
    QCOMPARE(client.request("get_public_key nobody"), "Public key not found");
    QTRY_COMPARE_WITH_TIMEOUT(tcpTimer(m_broker.port(), client.socket().localPort()), 2, 10000);
}

QString tst_Tls::place(const QTemporaryDir &dir, const QString &source, const QString &name)
{
    const QString target = dir.filePath(name);
    QFile::remove(target);
    if (!QFile::copy(certFile(source), target))
        qFatal("cannot copy %s to %s", qPrintable(source), qPrintable(target));
    return target;
}

bool tst_Tls::reloadBySighup(BrokerProcess &broker, const QByteArray &outcome)
{
    const qsizetype before = broker.output().count(outcome);
    if (::kill(pid_t(broker.pid()), SIGHUP) != 0)
        return false;
    QDeadlineTimer deadline(30000);
    while (!deadline.hasExpired()) {
        if (broker.output().count(outcome) > before)
            return true;
        QTest::qWait(20);
    }
    return false;
}

void tst_Tls::reloadRotatesServerCertificate()
{
    QTemporaryDir files;
    QVERIFY(files.isValid());
    BrokerProcess broker;
    broker.set("tls.cert_path", quoted(place(files, "server.crt", "broker.crt")));
    broker.set("tls.key_path", quoted(place(files, "server.key", "broker.key")));
    QVERIFY2(broker.start(), broker.output().constData());
    const QList<QSslCertificate> before = QSslCertificate::fromPath(certFile("server.crt"));
    const QList<QSslCertificate> after = QSslCertificate::fromPath(certFile("server-ec.crt"));
    QVERIFY(!before.isEmpty() && !after.isEmpty());

    TestClient open("sender_1");
    QVERIFY2(open.connectTo(broker.port()), qPrintable(open.errorString()));
    QCOMPARE(open.socket().peerCertificate(), before.constFirst());

    // The new pair replaces the old one under the same paths, as certificate renewal does.
    place(files, "server-ec.crt", "broker.crt");
    place(files, "server-ec.key", "broker.key");
    QVERIFY2(reloadBySighup(broker, "configuration reloaded"), broker.output().constData());
    // The log names the certificate now in force.
    QVERIFY2(
        broker.output().contains("server certificate serial " + after.constFirst().serialNumber()),
        broker.output().constData());

    TestClient fresh("sender_1");
    QVERIFY2(fresh.connectTo(broker.port()), qPrintable(fresh.errorString()));
    QCOMPARE(fresh.socket().peerCertificate(), after.constFirst());
    QCOMPARE(fresh.request("get_public_key nobody"), "Public key not found");
    // The connection made before the rotation goes on undisturbed.
    QCOMPARE(open.request("get_public_key nobody"), "Public key not found");
    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitCode(), 0);
}

void tst_Tls::reloadedCrlClosesRevokedConnection()
{
    QTemporaryDir files;
    QVERIFY(files.isValid());
    BrokerProcess broker; // revoked-client is a sender in the default test ACL
    broker.set("tls.crl_path", quoted(place(files, "ca-empty.crl", "ca.crl")));
    QVERIFY2(broker.start(), broker.output().constData());

    TestClient revoked("revoked");
    QVERIFY2(revoked.connectTo(broker.port()), qPrintable(revoked.errorString()));
    QCOMPARE(revoked.request("get_public_key nobody"), "Public key not found");
    TestClient other("sender_1");
    QVERIFY2(other.connectTo(broker.port()), qPrintable(other.errorString()));

    place(files, "ca.crl", "ca.crl"); // now lists revoked.crt
    QVERIFY2(reloadBySighup(broker, "configuration reloaded"), broker.output().constData());
    QCOMPARE(revoked.readLine(), "Error: Unauthorized: the client certificate has been revoked");
    QVERIFY(revoked.waitForDisconnected());
    QCOMPARE(other.request("get_public_key nobody"), "Public key not found");

    TestClient again("revoked");
    QVERIFY(again.connectTo(broker.port()));
    QCOMPARE(again.readLine(), "Error: Unauthorized: the client certificate has been revoked");
    QVERIFY(broker.terminate());
}

void tst_Tls::reloadWithBrokenFileKeepsOldMaterial_data()
{
    // What replaces the broker's files (empty: left alone), and what the log must say.
    QTest::addColumn<QString>("certificate");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("crl");
    QTest::addColumn<QByteArray>("why");
    QTest::newRow("certificate not PEM")
        << "server.key" << QString() << QString() << QByteArray("holds no PEM certificate");
    QTest::newRow("key of another certificate")
        << "server-ec.crt" << QString() << QString() << QByteArray("does not belong to");
    QTest::newRow("key not PEM") << QString() << "ca.crt" << QString()
                                 << QByteArray("holds a certificate, not a private key");
    QTest::newRow("CRL file holds a certificate")
        << QString() << QString() << "other-ca.crt" << QByteArray("holds no PEM CRL");
}

void tst_Tls::reloadWithBrokenFileKeepsOldMaterial()
{
    QFETCH(QString, certificate);
    QFETCH(QString, key);
    QFETCH(QString, crl);
    QFETCH(QByteArray, why);
    QTemporaryDir files;
    QVERIFY(files.isValid());
    BrokerProcess broker;
    broker.set("tls.cert_path", quoted(place(files, "server.crt", "broker.crt")));
    broker.set("tls.key_path", quoted(place(files, "server.key", "broker.key")));
    broker.set("tls.crl_path", quoted(place(files, "ca.crl", "ca.crl")));
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient open("sender_1");
    QVERIFY2(open.connectTo(broker.port()), qPrintable(open.errorString()));

    if (!certificate.isEmpty())
        place(files, certificate, "broker.crt");
    if (!key.isEmpty())
        place(files, key, "broker.key");
    if (!crl.isEmpty())
        place(files, crl, "ca.crl");
    QVERIFY2(reloadBySighup(broker, "reload failed"), broker.output().constData());
    const QByteArray log = broker.output();
    QVERIFY2(log.contains(why), log.constData());

    // The old certificate and the old CRL are still in force, and the broker serves.
    const QList<QSslCertificate> old = QSslCertificate::fromPath(certFile("server.crt"));
    QVERIFY(!old.isEmpty());
    TestClient fresh("sender_1");
    QVERIFY2(fresh.connectTo(broker.port()), qPrintable(fresh.errorString()));
    QCOMPARE(fresh.socket().peerCertificate(), old.constFirst());
    QCOMPARE(open.request("get_public_key nobody"), "Public key not found");
    TestClient revoked("revoked");
    QVERIFY(revoked.connectTo(broker.port()));
    QCOMPARE(revoked.readLine(), "Error: Unauthorized: the client certificate has been revoked");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Tls)
#include "tst_03_tls.moc"
