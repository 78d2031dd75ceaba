// Real handshakes over loopback between a QSslServer and a QSslSocket built from
// serverConfiguration() and clientConfiguration(), with the certificates from gen.sh: who is
// admitted, and which error each side reports when one is refused.

#include <memory>

#include <QSignalSpy>
#include <QSslServer>
#include <QSslSocket>
#include <QtTest>

#include "testenv.h"
#include "tls/tlsidentity.h"
#include "tlstestfiles.h"

using cmq::test::certFile;
using cmq::test::clientFiles;
using cmq::test::identityFiles;
namespace tls = cmq::tls;

namespace {

// Generous: the handshakes are local, but the CI machine is shared and may be slow.
constexpr int timeoutMs = 15000;

QSslConfiguration anonymousClientConfiguration()
{
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setCaCertificates(tls::loadCertificates(certFile("ca.crt")).value());
    configuration.setPeerVerifyMode(QSslSocket::VerifyPeer);
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    return configuration;
}

QList<QSslError> reportedErrors(const QSignalSpy &sslErrorsSpy, int errorsArgument)
{
    QList<QSslError> all;
    for (const QList<QVariant> &emission : sslErrorsSpy)
        all += emission.at(errorsArgument).value<QList<QSslError>>();
    return all;
}

// A failure message listing what was reported instead of the expected error.
bool hasError(const QList<QSslError> &errors, QSslError::SslError expected, QByteArray *message)
{
    QStringList texts;
    for (const QSslError &error : errors) {
        if (error.error() == expected)
            return true;
        texts.append(QStringLiteral("%1 (%2)").arg(error.errorString()).arg(int(error.error())));
    }
    *message = QStringLiteral("expected SslError %1, got: %2")
                   .arg(int(expected))
                   .arg(texts.isEmpty() ? QStringLiteral("nothing") : texts.join(u"; "))
                   .toUtf8();
    return false;
}

// One QSslServer on 127.0.0.1 and one client connecting to it, with every signal that tells
// who gave up recorded.
struct Loopback
{
    Loopback(const QSslConfiguration &serverConfiguration,
             const QSslConfiguration &clientConfiguration)
        : pendingConnection(&server, &QSslServer::pendingConnectionAvailable),
          serverSslErrors(&server, &QSslServer::sslErrors),
          serverErrors(&server, &QSslServer::errorOccurred),
          clientEncrypted(&client, &QSslSocket::encrypted),
          clientSslErrors(&client, &QSslSocket::sslErrors),
          clientErrors(&client, &QSslSocket::errorOccurred)
    {
        server.setSslConfiguration(serverConfiguration);
        client.setSslConfiguration(clientConfiguration);
    }

    bool connect(const QString &peerName = QStringLiteral("localhost"))
    {
        if (!server.listen(QHostAddress::LocalHost, 0))
            return false;
        client.connectToHostEncrypted(QStringLiteral("127.0.0.1"), server.serverPort(), peerName);
        return true;
    }

    QSslServer server;
    QSslSocket client;
    // Not newConnection: in Qt 6.4 QTcpServer emits that on TCP accept, before QSslServer has
    // even started the handshake, and for connections whose handshake then fails.
    QSignalSpy pendingConnection;
    QSignalSpy serverSslErrors;
    QSignalSpy serverErrors;
    QSignalSpy clientEncrypted;
    QSignalSpy clientSslErrors;
    QSignalSpy clientErrors;
};

} // namespace

class tst_TlsHandshake : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void handshake_data();
    void handshake();
    void clientVerifiesServer_data();
    void clientVerifiesServer();
};

void tst_TlsHandshake::initTestCase()
{
    QVERIFY2(QSslSocket::supportsSsl(), "Qt has no working TLS backend");
    QCOMPARE(QSslSocket::activeBackend(), QStringLiteral("openssl"));
    QVERIFY2(QFile::exists(certFile("ca.crt")), "run through ctest: fixture_certs makes them");
}

void tst_TlsHandshake::handshake_data()
{
    QTest::addColumn<QString>("serverCert");
    QTest::addColumn<QString>("serverKey");
    QTest::addColumn<QString>("client"); // file base name; empty: no client certificate
    QTest::addColumn<bool>("accepted");
    QTest::addColumn<QString>("peerCn");
    QTest::addColumn<bool>("revoked");
    // For refusals: a verification error the server must report; NoError when the refusal
    // comes from OpenSSL itself (no certificate at all).
    QTest::addColumn<QSslError::SslError>("serverError");

    const auto ok = QSslError::NoError;
    QTest::newRow("RSA server, EC client")
        << "server.crt"
        << "server.key"
        << "publisher-svc-1" << true << "publisher-svc-1" << false << ok;
    QTest::newRow("RSA server with PKCS#1 key")
        << "server.crt"
        << "server-pkcs1.key"
        << "ops-admin" << true << "ops-admin" << false << ok;
    QTest::newRow("EC server with SEC1 key") << "server-ec.crt"
                                             << "server-ec.key"
                                             << "receiver_1" << true << "receiver_1" << false << ok;
    // TLS accepts a certificate without CN; refusing it is the ACL's job (empty CN = Unknown).
    QTest::newRow("client without CN") << "server.crt"
                                       << "server.key"
                                       << "nocn" << true << "" << false << ok;
    // TLS accepts it too: Qt 6.4 cannot check a CRL during the handshake, so the server must
    // call isRevoked() on the peer certificate afterwards.
    QTest::newRow("revoked client") << "server.crt"
                                    << "server.key"
                                    << "revoked" << true << "revoked-client" << true << ok;
    QTest::newRow("client signed by another CA")
        << "server.crt"
        << "server.key"
        << "wrongca-client" << false << "" << false << QSslError::UnableToGetLocalIssuerCertificate;
    QTest::newRow("expired client")
        << "server.crt"
        << "server.key"
        << "expired" << false << "" << false << QSslError::CertificateExpired;
    QTest::newRow("client not yet valid")
        << "server-ec.crt"
        << "server-ec.key"
        << "notyet" << false << "" << false << QSslError::CertificateNotYetValid;
    QTest::newRow("no client certificate") << "server.crt"
                                           << "server.key"
                                           << "" << false << "" << false << ok;
}

void tst_TlsHandshake::handshake()
{
    QFETCH(QString, serverCert);
    QFETCH(QString, serverKey);
    QFETCH(QString, client);
    QFETCH(bool, accepted);
    QFETCH(QString, peerCn);
    QFETCH(bool, revoked);
    QFETCH(QSslError::SslError, serverError);

    const auto serverConfiguration = tls::serverConfiguration(identityFiles(serverCert, serverKey));
    QVERIFY2(serverConfiguration.ok(), qPrintable(serverConfiguration.error()));
    QSslConfiguration clientConfiguration = anonymousClientConfiguration();
    if (!client.isEmpty()) {
        // Loading an out-of-date identity works, but is worth a warning to the operator.
        if (client == QLatin1String("expired") || client == QLatin1String("notyet"))
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression("is only valid from .* peers "
                                                                  "will reject it"));
        const auto configured = tls::clientConfiguration(clientFiles(client));
        QVERIFY2(configured.ok(), qPrintable(configured.error()));
        clientConfiguration = configured.value();
    }

    Loopback loopback(serverConfiguration.value(), clientConfiguration);
    QVERIFY(loopback.connect());

    if (accepted) {
        // QSslServer offers a connection only once its handshake has succeeded.
        QTRY_COMPARE_WITH_TIMEOUT(loopback.pendingConnection.size(), 1, timeoutMs);
        auto *peer = qobject_cast<QSslSocket *>(loopback.server.nextPendingConnection());
        QVERIFY(peer);
        QVERIFY(peer->isEncrypted());
        QTRY_VERIFY_WITH_TIMEOUT(loopback.client.isEncrypted(), timeoutMs);
        QVERIFY2(loopback.clientSslErrors.isEmpty(), "the client must trust the server");
        QVERIFY(loopback.serverSslErrors.isEmpty());
        QCOMPARE(tls::commonName(peer->peerCertificate()), peerCn);
        QCOMPARE(loopback.client.peerCertificate(),
                 tls::loadCertificates(certFile(serverCert))->constFirst());
        QVERIFY(peer->sessionProtocol() == QSsl::TlsV1_3 ||
                peer->sessionProtocol() == QSsl::TlsV1_2);

        const auto serials =
            tls::loadRevokedSerials(certFile("ca.crl"), serverConfiguration->caCertificates());
        QVERIFY2(serials.ok(), qPrintable(serials.error()));
        QCOMPARE(tls::isRevoked(peer->peerCertificate(), serials.value()), revoked);

        // Application data flows both ways.
        peer->write("hello client\n");
        QTRY_VERIFY_WITH_TIMEOUT(loopback.client.canReadLine(), timeoutMs);
        QCOMPARE(loopback.client.readLine(), QByteArray("hello client\n"));
        loopback.client.write("hello server\n");
        QTRY_VERIFY_WITH_TIMEOUT(peer->canReadLine(), timeoutMs);
        QCOMPARE(peer->readLine(), QByteArray("hello server\n"));
        delete peer;
        return;
    }

    // The server drops the connection; the client, which under TLS 1.3 may already consider
    // itself connected, sees an error and ends up disconnected.
    QTRY_VERIFY_WITH_TIMEOUT(
        !loopback.serverErrors.isEmpty() || !loopback.serverSslErrors.isEmpty(), timeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(loopback.client.state(), QAbstractSocket::UnconnectedState,
                              timeoutMs);
    QVERIFY(!loopback.clientErrors.isEmpty());
    QCOMPARE(loopback.pendingConnection.size(), 0);
    QVERIFY(!loopback.server.hasPendingConnections());
    QVERIFY2(loopback.client.bytesAvailable() == 0, "no application data before refusal");
    if (serverError != QSslError::NoError) {
        QByteArray message;
        QVERIFY2(hasError(reportedErrors(loopback.serverSslErrors, 1), serverError, &message),
                 message.constData());
    } else {
        // Refused by OpenSSL inside the handshake (missingCertificateIsFatal), not by Qt's
        // check after it.
        QTRY_VERIFY_WITH_TIMEOUT(!loopback.serverErrors.isEmpty(), timeoutMs);
        QCOMPARE(loopback.serverErrors.constFirst().at(1).value<QAbstractSocket::SocketError>(),
                 QAbstractSocket::SslHandshakeFailedError);
        QVERIFY(loopback.serverSslErrors.isEmpty());
    }
}

void tst_TlsHandshake::clientVerifiesServer_data()
{
    QTest::addColumn<QString>("clientCa");
    QTest::addColumn<QString>("peerName");
    QTest::addColumn<QSslError::SslError>("clientError"); // NoError: must connect

    QTest::newRow("DNS name in SAN") << "ca.crt"
                                     << "localhost" << QSslError::NoError;
    QTest::newRow("IP address in SAN") << "ca.crt"
                                       << "127.0.0.1" << QSslError::NoError;
    QTest::newRow("name not in certificate") << "ca.crt"
                                             << "broker.example.com" << QSslError::HostNameMismatch;
    // OpenSSL completes the server's chain from its trust store, so the client is sent our CA
    // as well and reports an untrusted self-signed root rather than a missing issuer.
    QTest::newRow("client trusts another CA")
        << "other-ca.crt"
        << "localhost" << QSslError::SelfSignedCertificateInChain;
}

void tst_TlsHandshake::clientVerifiesServer()
{
    QFETCH(QString, clientCa);
    QFETCH(QString, peerName);
    QFETCH(QSslError::SslError, clientError);

    const auto serverConfiguration =
        tls::serverConfiguration(identityFiles("server.crt", "server.key"));
    QVERIFY2(serverConfiguration.ok(), qPrintable(serverConfiguration.error()));
    const auto clientConfiguration =
        tls::clientConfiguration(identityFiles("sender_1.crt", "sender_1.key", clientCa));
    QVERIFY2(clientConfiguration.ok(), qPrintable(clientConfiguration.error()));

    Loopback loopback(serverConfiguration.value(), clientConfiguration.value());
    QVERIFY(loopback.connect(peerName));
    if (clientError == QSslError::NoError) {
        QTRY_VERIFY_WITH_TIMEOUT(loopback.client.isEncrypted(), timeoutMs);
        QTRY_COMPARE_WITH_TIMEOUT(loopback.pendingConnection.size(), 1, timeoutMs);
        return;
    }
    QTRY_COMPARE_WITH_TIMEOUT(loopback.client.state(), QAbstractSocket::UnconnectedState,
                              timeoutMs);
    QVERIFY(!loopback.client.isEncrypted());
    QCOMPARE(loopback.clientEncrypted.size(), 0);
    QByteArray message;
    QVERIFY2(hasError(reportedErrors(loopback.clientSslErrors, 0), clientError, &message),
             message.constData());
    QCOMPARE(loopback.pendingConnection.size(), 0);
}

QTEST_MAIN(tst_TlsHandshake)
#include "tst_tlshandshake.moc"
