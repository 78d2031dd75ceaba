// Loading keys and certificates in every supported form, refusing the bad ones with a message
// that says why, the configurations built from them, the Common Name rule and revoked serials.
// The handshakes themselves: tst_tlshandshake.

#include <QSslSocket>
#include <QTemporaryDir>
#include <QtTest>

#include "testenv.h"
#include "tls/tlsidentity.h"
#include "tlstestfiles.h"

using cmq::test::certFile;
using cmq::test::clientFiles;
using cmq::test::identityFiles;
namespace tls = cmq::tls;

class tst_TlsIdentity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void loadPrivateKey_data();
    void loadPrivateKey();
    void loadPrivateKeyRefuses_data();
    void loadPrivateKeyRefuses();
    void loadCertificates_data();
    void loadCertificates();

    void configuration_data();
    void configuration();
    void configurationSettings();

    void commonName_data();
    void commonName();

    void revokedSerials();
    void revokedSerialsRefuses_data();
    void revokedSerialsRefuses();

private:
    // Writes content to a fresh file in the test's temporary directory and returns its path.
    QString scratchFile(const QString &name, const QByteArray &content);
    QByteArray readCertFile(const QString &name);

    QTemporaryDir m_scratch;
};

void tst_TlsIdentity::initTestCase()
{
    QVERIFY2(QSslSocket::supportsSsl(), "Qt has no working TLS backend");
    QCOMPARE(QSslSocket::activeBackend(), QStringLiteral("openssl"));
    QVERIFY(m_scratch.isValid());
    QVERIFY2(QFile::exists(certFile("ca.crt")), "run through ctest: fixture_certs makes them");
}

QString tst_TlsIdentity::scratchFile(const QString &name, const QByteArray &content)
{
    const QString path = m_scratch.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(content) != content.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

QByteArray tst_TlsIdentity::readCertFile(const QString &name)
{
    QFile file(certFile(name));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

void tst_TlsIdentity::loadPrivateKey_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<int>("bits");
    QTest::addColumn<QString>("sameKeyAs"); // another form of the same key, or empty

    QTest::newRow("RSA PKCS#8") << certFile("server.key") << int(QSsl::Rsa) << 2048 << QString();
    QTest::newRow("RSA PKCS#1") << certFile("server-pkcs1.key") << int(QSsl::Rsa) << 2048
                                << certFile("server.key");
    QTest::newRow("EC SEC1") << certFile("server-ec.key") << int(QSsl::Ec) << 256 << QString();
    QTest::newRow("EC PKCS#8") << certFile("server-ec-pkcs8.key") << int(QSsl::Ec) << 256
                               << certFile("server-ec.key");
    QTest::newRow("EC client PKCS#8")
        << certFile("publisher-svc-1.key") << int(QSsl::Ec) << 256 << QString();
    // What "openssl ecparam -genkey" writes unless told -noout.
    QTest::newRow("EC SEC1 after EC PARAMETERS")
        << scratchFile("ec-with-params.key", "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n"
                                             "-----END EC PARAMETERS-----\n" +
                                                 readCertFile("server-ec.key"))
        << int(QSsl::Ec) << 256 << certFile("server-ec.key");
    QTest::newRow("CRLF line ends")
        << scratchFile("crlf.key", readCertFile("server.key").replace("\n", "\r\n"))
        << int(QSsl::Rsa) << 2048 << certFile("server.key");
}

void tst_TlsIdentity::loadPrivateKey()
{
    QFETCH(QString, path);
    QFETCH(int, algorithm);
    QFETCH(int, bits);
    QFETCH(QString, sameKeyAs);

    const auto key = tls::loadPrivateKey(path);
    QVERIFY2(key.ok(), qPrintable(key.error()));
    QVERIFY(!key->isNull());
    QCOMPARE(key->type(), QSsl::PrivateKey);
    QCOMPARE(int(key->algorithm()), algorithm);
    QCOMPARE(key->length(), bits);
    if (!sameKeyAs.isEmpty()) {
        const auto other = tls::loadPrivateKey(sameKeyAs);
        QVERIFY2(other.ok(), qPrintable(other.error()));
        QCOMPARE(key.value(), other.value());
    }
}

void tst_TlsIdentity::loadPrivateKeyRefuses_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("errorContains");

    const QByteArray rsa = readCertFile("server.key");
    QTest::newRow("missing") << certFile("no-such.key") << "does not exist";
    QTest::newRow("empty path") << QString() << "no private key file configured";
    QTest::newRow("directory") << m_scratch.path() << "cannot read";
    QTest::newRow("empty file") << scratchFile("empty.key", {}) << "no PEM private key";
    QTest::newRow("garbage") << scratchFile("garbage.key", "this is not a key\n")
                             << "no PEM private key";
    QTest::newRow("truncated PEM")
        << scratchFile("truncated.key", rsa.left(rsa.size() / 2)) << "no PEM private key";
    QTest::newRow("encrypted PKCS#8") << certFile("encrypted.key") << "encrypted";
    QTest::newRow("encrypted PKCS#1 (Proc-Type)") << certFile("encrypted-pkcs1.key") << "encrypted";
    QTest::newRow("certificate instead of key") << certFile("server.crt") << "certificate";
    // A well-formed key of a type Qt's TLS stack cannot use.
    QTest::newRow("Ed25519")
        << scratchFile("ed25519.key",
                       "-----BEGIN PRIVATE KEY-----\n"
                       "MC4CAQAwBQYDK2VwBCIEIHXcSfQA6cBJKapkC6TFYZ1KWJyx64gjNsxiD0S9tk9Y\n"
                       "-----END PRIVATE KEY-----\n")
        << "only RSA and EC";
}

void tst_TlsIdentity::loadPrivateKeyRefuses()
{
    QFETCH(QString, path);
    QFETCH(QString, errorContains);

    const auto key = tls::loadPrivateKey(path);
    QVERIFY(!key.ok());
    QVERIFY2(key.error().contains(errorContains), qPrintable(key.error()));
    if (!path.isEmpty())
        QVERIFY2(key.error().contains(path), qPrintable(key.error()));
}

void tst_TlsIdentity::loadCertificates_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("count"); // 0: must fail
    QTest::addColumn<QString>("errorContains");

    QTest::newRow("CA") << certFile("ca.crt") << 1 << QString();
    QTest::newRow("leaf") << certFile("server.crt") << 1 << QString();
    QTest::newRow("leaf then chain")
        << scratchFile("chain.crt", readCertFile("server.crt") + readCertFile("ca.crt")) << 2
        << QString();
    QTest::newRow("two CAs") << scratchFile("two-cas.crt",
                                            readCertFile("ca.crt") + readCertFile("other-ca.crt"))
                             << 2 << QString();
    QTest::newRow("missing") << certFile("no-such.crt") << 0 << "does not exist";
    QTest::newRow("key instead") << certFile("server.key") << 0 << "no PEM certificate";
    QTest::newRow("garbage") << scratchFile("garbage.crt", "-----BEGIN NONSENSE-----\n") << 0
                             << "no PEM certificate";
}

void tst_TlsIdentity::loadCertificates()
{
    QFETCH(QString, path);
    QFETCH(int, count);
    QFETCH(QString, errorContains);

    const auto certificates = tls::loadCertificates(path);
    if (count == 0) {
        QVERIFY(!certificates.ok());
        QVERIFY2(certificates.error().contains(errorContains), qPrintable(certificates.error()));
        QVERIFY2(certificates.error().contains(path), qPrintable(certificates.error()));
        return;
    }
    QVERIFY2(certificates.ok(), qPrintable(certificates.error()));
    QCOMPARE(certificates->size(), count);
    for (const QSslCertificate &certificate : certificates.value())
        QVERIFY(!certificate.isNull());
}

void tst_TlsIdentity::configuration_data()
{
    QTest::addColumn<QString>("cert");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("ca");
    QTest::addColumn<QString>("errorContains"); // empty: must succeed

    QTest::newRow("RSA, PKCS#8 key") << "server.crt"
                                     << "server.key"
                                     << "ca.crt" << QString();
    QTest::newRow("RSA, PKCS#1 key") << "server.crt"
                                     << "server-pkcs1.key"
                                     << "ca.crt" << QString();
    QTest::newRow("EC, SEC1 key") << "server-ec.crt"
                                  << "server-ec.key"
                                  << "ca.crt" << QString();
    QTest::newRow("EC, PKCS#8 key") << "server-ec.crt"
                                    << "server-ec-pkcs8.key"
                                    << "ca.crt" << QString();
    QTest::newRow("client identity") << "receiver_1.crt"
                                     << "receiver_1.key"
                                     << "ca.crt" << QString();
    QTest::newRow("RSA cert, EC key") << "server.crt"
                                      << "server-ec.key"
                                      << "ca.crt"
                                      << "does not belong to certificate";
    QTest::newRow("EC cert, another EC key") << "publisher-svc-1.crt"
                                             << "worker-svc-1.key"
                                             << "ca.crt"
                                             << "does not belong to certificate";
    QTest::newRow("missing CA") << "server.crt"
                                << "server.key"
                                << "no-such-ca.crt"
                                << "does not exist";
    QTest::newRow("missing cert") << "no-such.crt"
                                  << "server.key"
                                  << "ca.crt"
                                  << "does not exist";
    QTest::newRow("encrypted key") << "server.crt"
                                   << "encrypted.key"
                                   << "ca.crt"
                                   << "encrypted";
}

void tst_TlsIdentity::configuration()
{
    QFETCH(QString, cert);
    QFETCH(QString, key);
    QFETCH(QString, ca);
    QFETCH(QString, errorContains);

    const tls::TlsFiles files = identityFiles(cert, key, ca);
    const auto server = tls::serverConfiguration(files);
    const auto client = tls::clientConfiguration(files);
    if (errorContains.isEmpty()) {
        QVERIFY2(server.ok(), qPrintable(server.error()));
        QVERIFY2(client.ok(), qPrintable(client.error()));
        return;
    }
    QVERIFY(!server.ok());
    QVERIFY(!client.ok());
    QVERIFY2(server.error().contains(errorContains), qPrintable(server.error()));
    QCOMPARE(client.error(), server.error());
    if (errorContains.contains("belong")) {
        // The operator must be told which two files disagree.
        QVERIFY2(server.error().contains(files.keyPath), qPrintable(server.error()));
        QVERIFY2(server.error().contains(files.certPath), qPrintable(server.error()));
    }
}

void tst_TlsIdentity::configurationSettings()
{
    const auto server = tls::serverConfiguration(identityFiles("server.crt", "server.key"));
    const auto client = tls::clientConfiguration(clientFiles("sender_1"));
    QVERIFY2(server.ok(), qPrintable(server.error()));
    QVERIFY2(client.ok(), qPrintable(client.error()));

    const QSslCertificate ca = tls::loadCertificates(certFile("ca.crt"))->constFirst();
    for (const QSslConfiguration &configuration : {server.value(), client.value()}) {
        QCOMPARE(configuration.peerVerifyMode(), QSslSocket::VerifyPeer);
        QCOMPARE(configuration.protocol(), QSsl::TlsV1_2OrLater);
        // Only our CA: none of the system's roots may vouch for a peer.
        QCOMPARE(configuration.caCertificates(), QList<QSslCertificate>{ca});
        QVERIFY(!configuration.privateKey().isNull());
    }
    QCOMPARE(tls::commonName(server->localCertificate()), QStringLiteral("localhost"));
    QCOMPARE(tls::commonName(client->localCertificate()), QStringLiteral("sender_1"));
    QVERIFY(server->missingCertificateIsFatal());
    // TLS 1.2: ECDHE with AES-GCM or ChaCha20-Poly1305 only (tst_03_tls tries each kind).
    for (const QSslConfiguration &configuration : {server.value(), client.value()})
        QCOMPARE(configuration.backendConfiguration().value("CipherString").toByteArray(),
                 QByteArray("ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!PSK"));
}

void tst_TlsIdentity::commonName_data()
{
    QTest::addColumn<QString>("cert");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<bool>("several"); // hasSeveralCommonNames

    QTest::newRow("client") << "publisher-svc-1.crt"
                            << "publisher-svc-1" << false;
    QTest::newRow("underscore") << "receiver_1.crt"
                                << "receiver_1" << false;
    QTest::newRow("server") << "server.crt"
                            << "localhost" << false;
    QTest::newRow("CA") << "ca.crt"
                        << "CipherMQ Test CA" << false;
    QTest::newRow("no CN, only O") << "nocn.crt"
                                   << "" << false;
    // Same CN as a real client, other CA: the CN alone proves nothing, verification does.
    QTest::newRow("other CA") << "wrongca-client.crt"
                              << "publisher-svc-1" << false;
    // Readers disagree on which of two CNs counts (the first or the last), so none does.
    QTest::newRow("two CNs") << "twocn.crt"
                             << "" << true;
}

void tst_TlsIdentity::commonName()
{
    QFETCH(QString, cert);
    QFETCH(QString, cn);
    QFETCH(bool, several);

    const auto certificates = tls::loadCertificates(certFile(cert));
    QVERIFY2(certificates.ok(), qPrintable(certificates.error()));
    QCOMPARE(tls::commonName(certificates->constFirst()), cn);
    QCOMPARE(tls::hasSeveralCommonNames(certificates->constFirst()), several);
    QCOMPARE(tls::commonName(QSslCertificate()), QString());
}

void tst_TlsIdentity::revokedSerials()
{
    const auto ca = tls::loadCertificates(certFile("ca.crt"));
    const auto otherCa = tls::loadCertificates(certFile("other-ca.crt"));
    QVERIFY(ca.ok() && otherCa.ok());

    // The issuer is picked by name among several trusted CAs.
    const auto serials = tls::loadRevokedSerials(certFile("ca.crl"), otherCa.value() + ca.value());
    QVERIFY2(serials.ok(), qPrintable(serials.error()));
    QCOMPARE(serials->size(), 1);

    const QSslCertificate revoked = tls::loadCertificates(certFile("revoked.crt"))->constFirst();
    QCOMPARE(serials->constFirst(), revoked.serialNumber());
    QVERIFY(tls::isRevoked(revoked, serials.value()));
    for (const char *name : {"publisher-svc-1.crt", "server.crt", "nocn.crt", "expired.crt"}) {
        const QSslCertificate certificate = tls::loadCertificates(certFile(name))->constFirst();
        QVERIFY2(!tls::isRevoked(certificate, serials.value()), name);
    }
    QVERIFY(!tls::isRevoked(QSslCertificate(), serials.value()));
}

void tst_TlsIdentity::revokedSerialsRefuses_data()
{
    QTest::addColumn<QString>("crlPath");
    QTest::addColumn<QString>("issuer"); // cert file name; empty: no issuers at all
    QTest::addColumn<QString>("errorContains");

    // The CRL with one byte of the revoked serial changed: still parses, signature breaks.
    const QByteArray serial = QByteArray::fromHex(tls::loadCertificates(certFile("revoked.crt"))
                                                      ->constFirst()
                                                      .serialNumber()
                                                      .replace(':', ""));
    QByteArray pem = readCertFile("ca.crl");
    const qsizetype begin = pem.indexOf('\n') + 1;
    const qsizetype end = pem.indexOf("-----END");
    QByteArray der = QByteArray::fromBase64(pem.mid(begin, end - begin));
    const qsizetype at = der.indexOf(serial);
    if (at < 0)
        qFatal("revoked serial not found in ca.crl");
    der[at + serial.size() - 1] = char(der[at + serial.size() - 1] ^ 0x01);
    const QByteArray tampered =
        "-----BEGIN X509 CRL-----\n" + der.toBase64() + "\n-----END X509 CRL-----\n";

    QTest::newRow("missing") << certFile("no-such.crl") << "ca.crt"
                             << "does not exist";
    QTest::newRow("signed by another CA") << certFile("ca.crl") << "other-ca.crt"
                                          << "not signed by the configured CA";
    QTest::newRow("no issuers") << certFile("ca.crl") << ""
                                << "not signed by the configured CA";
    QTest::newRow("tampered") << scratchFile("tampered.crl", tampered) << "ca.crt"
                              << "not signed by the configured CA";
    QTest::newRow("not a CRL") << certFile("ca.crt") << "ca.crt"
                               << "no PEM CRL";
}

void tst_TlsIdentity::revokedSerialsRefuses()
{
    QFETCH(QString, crlPath);
    QFETCH(QString, issuer);
    QFETCH(QString, errorContains);

    QList<QSslCertificate> issuers;
    if (!issuer.isEmpty())
        issuers = tls::loadCertificates(certFile(issuer)).value();
    const auto serials = tls::loadRevokedSerials(crlPath, issuers);
    QVERIFY(!serials.ok());
    QVERIFY2(serials.error().contains(errorContains), qPrintable(serials.error()));
    QVERIFY2(serials.error().contains(crlPath), qPrintable(serials.error()));
}

QTEST_MAIN(tst_TlsIdentity)
#include "tst_tlsidentity.moc"
