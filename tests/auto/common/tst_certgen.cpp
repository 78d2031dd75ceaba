// The certificates `cmq certs` makes: the chain verifies with OpenSSL for the purpose each leaf
// is for (and not for the other), keys are PKCS#8 of the requested type, extensions, serials
// and validity follow the profile, a leaf never outlives its CA, and bad input is refused.
// Also the atomic, mode-first file writer the command stores them with.

#include <memory>
#include <sys/stat.h>

#include <QSslCertificate>
#include <QTemporaryDir>
#include <QtTest>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "tls/certgen.h"
#include "tls/openssl.h"
#include "util/atomicfile.h"

namespace tls = cmq::tls;
using tls::CertificateRole;
using tls::KeyAlgorithm;

Q_DECLARE_METATYPE(CertificateRole)
Q_DECLARE_METATYPE(KeyAlgorithm)

namespace {

using tls::PkeyPtr;
using tls::X509Ptr;
using StorePtr = tls::OpenSslPtr<X509_STORE, X509_STORE_free>;
using StoreContextPtr = tls::OpenSslPtr<X509_STORE_CTX, X509_STORE_CTX_free>;

X509Ptr parseCertificate(const QByteArray &pem)
{
    const tls::BioPtr bio = tls::memoryBio(pem);
    return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

PkeyPtr parseKey(const QByteArray &pem)
{
    const tls::BioPtr bio = tls::memoryBio(pem);
    return PkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

// X509_verify_cert against `ca` as the only trust anchor, for one TLS purpose. Returns the
// verification error code (X509_V_OK when the chain is good).
int verify(const QByteArray &leafPem, const QByteArray &caPem, int purpose)
{
    const X509Ptr leaf = parseCertificate(leafPem);
    const X509Ptr ca = parseCertificate(caPem);
    if (!leaf || !ca)
        return -1;
    StorePtr store(X509_STORE_new());
    X509_STORE_add_cert(store.get(), ca.get());
    StoreContextPtr context(X509_STORE_CTX_new());
    X509_STORE_CTX_init(context.get(), store.get(), leaf.get(), nullptr);
    X509_STORE_CTX_set_purpose(context.get(), purpose);
    X509_STORE_CTX_set_flags(context.get(), X509_V_FLAG_X509_STRICT);
    X509_verify_cert(context.get());
    return X509_STORE_CTX_get_error(context.get());
}

QByteArray keyIdentifier(const QByteArray &pem, bool authority)
{
    const X509Ptr certificate = parseCertificate(pem);
    const ASN1_OCTET_STRING *id = authority ? X509_get0_authority_key_id(certificate.get())
                                            : X509_get0_subject_key_id(certificate.get());
    if (!id)
        return {};
    return QByteArray(reinterpret_cast<const char *>(ASN1_STRING_get0_data(id)),
                      ASN1_STRING_length(id));
}

tls::GeneratedCertificate makeAuthority(int days = tls::DefaultAuthorityDays,
                                        KeyAlgorithm algorithm = KeyAlgorithm::EcP256)
{
    tls::CertificateSpec spec;
    spec.role = CertificateRole::Authority;
    spec.commonName = QStringLiteral("CipherMQ Test Root");
    spec.validityDays = days;
    spec.keyAlgorithm = algorithm;
    auto ca = tls::createAuthority(spec);
    if (!ca)
        qFatal("createAuthority: %s", qPrintable(ca.error()));
    return ca.value();
}

tls::Authority authorityOf(const tls::GeneratedCertificate &ca)
{
    return {ca.certificatePem, ca.privateKeyPem};
}

tls::CertificateSpec leafSpec(CertificateRole role, const QString &cn,
                              KeyAlgorithm algorithm = KeyAlgorithm::EcP256)
{
    tls::CertificateSpec spec;
    spec.role = role;
    spec.commonName = cn;
    spec.keyAlgorithm = algorithm;
    return spec;
}

mode_t modeOf(const QString &path)
{
    struct stat info = {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return 0;
    return info.st_mode & 07777;
}

} // namespace

class tst_CertGen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void authorityProfile();
    void chainVerifies_data();
    void chainVerifies();
    void otherAuthorityDoesNotVerify();
    void serverNames();
    void serverNameDefaultsToCommonName();
    void serialsAreRandom128Bit();
    void leafNeverOutlivesAuthority();
    void refusesBadAuthority();
    void refusesBadSpec_data();
    void refusesBadSpec();
    void parseSubjectAltNames_data();
    void parseSubjectAltNames();
    void atomicFileModeAndRefusal();

private:
    tls::GeneratedCertificate m_ca;
};

void tst_CertGen::initTestCase()
{
    m_ca = makeAuthority();
}

void tst_CertGen::authorityProfile()
{
    const X509Ptr ca = parseCertificate(m_ca.certificatePem);
    QVERIFY(ca);
    QVERIFY(X509_check_ca(ca.get()) >= 1);
    QVERIFY(X509_get_extension_flags(ca.get()) & EXFLAG_SS); // self-signed
    QVERIFY(X509_get_key_usage(ca.get()) & KU_KEY_CERT_SIGN);
    QCOMPARE(X509_get_pathlen(ca.get()), 0L);
    QVERIFY(!keyIdentifier(m_ca.certificatePem, false).isEmpty());
    QCOMPARE(keyIdentifier(m_ca.certificatePem, true), keyIdentifier(m_ca.certificatePem, false));

    const QSslCertificate qt(m_ca.certificatePem, QSsl::Pem);
    QCOMPARE(qt.subjectInfo(QSslCertificate::CommonName),
             QStringList{QStringLiteral("CipherMQ Test Root")});
    const qint64 days = qt.effectiveDate().daysTo(qt.expiryDate());
    QVERIFY2(days >= 3650 && days <= 3651, qPrintable(QString::number(days)));
    QVERIFY(qt.effectiveDate() < QDateTime::currentDateTimeUtc()); // backdated for clock skew
    QCOMPARE(m_ca.notAfter, qt.expiryDate());
    QVERIFY(m_ca.privateKeyPem.startsWith("-----BEGIN PRIVATE KEY-----\n"));
}

void tst_CertGen::chainVerifies_data()
{
    QTest::addColumn<CertificateRole>("role");
    QTest::addColumn<KeyAlgorithm>("algorithm");
    QTest::addColumn<int>("purpose");
    QTest::addColumn<int>("otherPurpose");
    QTest::addColumn<int>("keyType");
    QTest::addColumn<int>("keyBits");
    QTest::newRow("server, EC") << CertificateRole::Server << KeyAlgorithm::EcP256
                                << X509_PURPOSE_SSL_SERVER << X509_PURPOSE_SSL_CLIENT << EVP_PKEY_EC
                                << 256;
    QTest::newRow("client, EC") << CertificateRole::Client << KeyAlgorithm::EcP256
                                << X509_PURPOSE_SSL_CLIENT << X509_PURPOSE_SSL_SERVER << EVP_PKEY_EC
                                << 256;
    QTest::newRow("server, RSA") << CertificateRole::Server << KeyAlgorithm::Rsa3072
                                 << X509_PURPOSE_SSL_SERVER << X509_PURPOSE_SSL_CLIENT
                                 << EVP_PKEY_RSA << 3072;
    QTest::newRow("client, RSA") << CertificateRole::Client << KeyAlgorithm::Rsa3072
                                 << X509_PURPOSE_SSL_CLIENT << X509_PURPOSE_SSL_SERVER
                                 << EVP_PKEY_RSA << 3072;
}

void tst_CertGen::chainVerifies()
{
    QFETCH(CertificateRole, role);
    QFETCH(KeyAlgorithm, algorithm);
    QFETCH(int, purpose);
    QFETCH(int, otherPurpose);
    QFETCH(int, keyType);
    QFETCH(int, keyBits);

    auto leaf = tls::issueCertificate(leafSpec(role, QStringLiteral("localhost"), algorithm),
                                      authorityOf(m_ca));
    QVERIFY2(leaf, qPrintable(leaf.error()));
    QCOMPARE(verify(leaf->certificatePem, m_ca.certificatePem, purpose), X509_V_OK);
    // A server certificate cannot log in as a client and a client certificate cannot serve.
    QCOMPARE(verify(leaf->certificatePem, m_ca.certificatePem, otherPurpose),
             X509_V_ERR_INVALID_PURPOSE);

    QVERIFY(leaf->privateKeyPem.startsWith("-----BEGIN PRIVATE KEY-----\n")); // PKCS#8
    const PkeyPtr key = parseKey(leaf->privateKeyPem);
    QVERIFY(key);
    QCOMPARE(EVP_PKEY_get_base_id(key.get()), keyType);
    QCOMPARE(EVP_PKEY_get_bits(key.get()), keyBits);
    const X509Ptr certificate = parseCertificate(leaf->certificatePem);
    QCOMPARE(X509_check_private_key(certificate.get(), key.get()), 1);
    QCOMPARE(X509_check_ca(certificate.get()), 0);
    QCOMPARE(keyIdentifier(leaf->certificatePem, true), keyIdentifier(m_ca.certificatePem, false));
    QVERIFY(!keyIdentifier(leaf->certificatePem, false).isEmpty());

    const QSslCertificate qt(leaf->certificatePem, QSsl::Pem);
    const qint64 days = qt.effectiveDate().daysTo(qt.expiryDate());
    QVERIFY2(days >= 825 && days <= 826, qPrintable(QString::number(days)));
}

void tst_CertGen::otherAuthorityDoesNotVerify()
{
    const tls::GeneratedCertificate other = makeAuthority();
    auto leaf = tls::issueCertificate(leafSpec(CertificateRole::Client, QStringLiteral("svc")),
                                      authorityOf(other));
    QVERIFY2(leaf, qPrintable(leaf.error()));
    QCOMPARE(verify(leaf->certificatePem, other.certificatePem, X509_PURPOSE_SSL_CLIENT),
             X509_V_OK);
    QCOMPARE(verify(leaf->certificatePem, m_ca.certificatePem, X509_PURPOSE_SSL_CLIENT),
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

void tst_CertGen::serverNames()
{
    tls::CertificateSpec spec = leafSpec(CertificateRole::Server, QStringLiteral("broker-1"));
    spec.subjectAltNames =
        tls::parseSubjectAltNames(QStringLiteral("DNS:broker-1.example.com,IP:10.0.0.5,IP:::1"))
            .value();
    auto leaf = tls::issueCertificate(spec, authorityOf(m_ca));
    QVERIFY2(leaf, qPrintable(leaf.error()));
    const X509Ptr certificate = parseCertificate(leaf->certificatePem);
    QCOMPARE(X509_check_host(certificate.get(), "broker-1.example.com", 0, 0, nullptr), 1);
    QCOMPARE(X509_check_ip_asc(certificate.get(), "10.0.0.5", 0), 1);
    QCOMPARE(X509_check_ip_asc(certificate.get(), "::1", 0), 1);
    // With a SAN present, the CN is not a host name any more.
    QCOMPARE(X509_check_host(certificate.get(), "broker-1", 0, 0, nullptr), 0);
    QCOMPARE(X509_check_host(certificate.get(), "other.example.com", 0, 0, nullptr), 0);
    QCOMPARE(leaf->subjectAltNames,
             (QStringList{"DNS:broker-1.example.com", "IP:10.0.0.5", "IP:::1"}));
}

void tst_CertGen::serverNameDefaultsToCommonName()
{
    auto byName = tls::issueCertificate(
        leafSpec(CertificateRole::Server, QStringLiteral("Broker.Example.com")), authorityOf(m_ca));
    QVERIFY2(byName, qPrintable(byName.error()));
    QCOMPARE(byName->subjectAltNames, QStringList{"DNS:broker.example.com"});
    const X509Ptr named = parseCertificate(byName->certificatePem);
    QCOMPARE(X509_check_host(named.get(), "broker.example.com", 0, 0, nullptr), 1);

    auto byAddress = tls::issueCertificate(
        leafSpec(CertificateRole::Server, QStringLiteral("192.168.1.20")), authorityOf(m_ca));
    QVERIFY2(byAddress, qPrintable(byAddress.error()));
    QCOMPARE(byAddress->subjectAltNames, QStringList{"IP:192.168.1.20"});

    auto notAHost = tls::issueCertificate(
        leafSpec(CertificateRole::Server, QStringLiteral("main broker")), authorityOf(m_ca));
    QVERIFY(!notAHost);
    QVERIFY2(notAHost.error().contains("subject alternative names"), qPrintable(notAHost.error()));
}

void tst_CertGen::serialsAreRandom128Bit()
{
    QSet<QByteArray> serials;
    for (int i = 0; i < 8; ++i) {
        auto leaf = tls::issueCertificate(leafSpec(CertificateRole::Client, QStringLiteral("c")),
                                          authorityOf(m_ca));
        QVERIFY2(leaf, qPrintable(leaf.error()));
        const X509Ptr certificate = parseCertificate(leaf->certificatePem);
        tls::OpenSslPtr<BIGNUM, BN_free> serial(
            ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate.get()), nullptr));
        QVERIFY(!BN_is_negative(serial.get()) && !BN_is_zero(serial.get()));
        QVERIFY(BN_num_bits(serial.get()) <= 128);
        // Eight draws of 128 bits: below 100 bits for all of them would mean a broken source.
        serials.insert(leaf->serialHex);
        if (BN_num_bits(serial.get()) > 100)
            serials.insert("long");
    }
    QVERIFY(serials.contains("long"));
    QCOMPARE(serials.size(), 9);
}

void tst_CertGen::leafNeverOutlivesAuthority()
{
    const tls::GeneratedCertificate shortCa = makeAuthority(30);
    auto leaf = tls::issueCertificate(leafSpec(CertificateRole::Client, QStringLiteral("c")),
                                      authorityOf(shortCa));
    QVERIFY2(leaf, qPrintable(leaf.error()));
    QCOMPARE(leaf->notAfter, shortCa.notAfter);
    QCOMPARE(leaf->warnings.size(), 1);
    QVERIFY(leaf->warnings.constFirst().contains("shortened"));
    QCOMPARE(verify(leaf->certificatePem, shortCa.certificatePem, X509_PURPOSE_SSL_CLIENT),
             X509_V_OK);

    // A shorter leaf keeps its own validity and gets no warning.
    tls::CertificateSpec spec = leafSpec(CertificateRole::Client, QStringLiteral("c"));
    spec.validityDays = 7;
    auto weekly = tls::issueCertificate(spec, authorityOf(shortCa));
    QVERIFY(weekly);
    QVERIFY(weekly->warnings.isEmpty());
    QVERIFY(weekly->notAfter < shortCa.notAfter);
}

void tst_CertGen::refusesBadAuthority()
{
    const tls::GeneratedCertificate other = makeAuthority();
    const tls::CertificateSpec spec = leafSpec(CertificateRole::Client, QStringLiteral("c"));

    auto mismatched = tls::issueCertificate(spec, {m_ca.certificatePem, other.privateKeyPem});
    QVERIFY(!mismatched);
    QVERIFY2(mismatched.error().contains("does not belong"), qPrintable(mismatched.error()));

    auto leaf = tls::issueCertificate(spec, authorityOf(m_ca)).value();
    auto notCa = tls::issueCertificate(spec, {leaf.certificatePem, leaf.privateKeyPem});
    QVERIFY(!notCa);
    QVERIFY2(notCa.error().contains("not a certificate authority"), qPrintable(notCa.error()));

    auto garbage = tls::issueCertificate(spec, {"not pem", m_ca.privateKeyPem});
    QVERIFY(!garbage);
    QVERIFY2(garbage.error().contains("not PEM"), qPrintable(garbage.error()));
}

void tst_CertGen::refusesBadSpec_data()
{
    QTest::addColumn<CertificateRole>("role");
    QTest::addColumn<QString>("commonName");
    QTest::addColumn<int>("days");
    QTest::addColumn<QString>("san");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty CN") << CertificateRole::Client << "" << 825 << ""
                              << "must not be empty";
    QTest::newRow("CN too long") << CertificateRole::Client << QString(65, u'a') << 825 << ""
                                 << "longer than 64";
    QTest::newRow("CN with newline") << CertificateRole::Client << "a\nb" << 825 << ""
                                     << "control characters";
    QTest::newRow("CN with edge space") << CertificateRole::Client << "svc " << 825 << ""
                                        << "compares names exactly";
    QTest::newRow("zero days") << CertificateRole::Client << "c" << 0 << ""
                               << "at least one day";
    QTest::newRow("client with SAN") << CertificateRole::Client << "c" << 825 << "DNS:c"
                                     << "only server certificates";
    QTest::newRow("CA role issued") << CertificateRole::Authority << "c" << 825 << ""
                                    << "createAuthority";
}

void tst_CertGen::refusesBadSpec()
{
    QFETCH(CertificateRole, role);
    QFETCH(QString, commonName);
    QFETCH(int, days);
    QFETCH(QString, san);
    QFETCH(QString, expected);
    tls::CertificateSpec spec = leafSpec(role, commonName);
    spec.validityDays = days;
    if (!san.isEmpty())
        spec.subjectAltNames = {san};
    auto result = tls::issueCertificate(spec, authorityOf(m_ca));
    QVERIFY(!result);
    QVERIFY2(result.error().contains(expected), qPrintable(result.error()));
}

void tst_CertGen::parseSubjectAltNames_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QStringList>("expected"); // empty = refused
    QTest::newRow("dns and ip") << "DNS:broker.example.com,IP:10.0.0.5"
                                << QStringList{"DNS:broker.example.com", "IP:10.0.0.5"};
    QTest::newRow("case and spaces") << " dns:Broker.Example.COM , ip:127.0.0.1 "
                                     << QStringList{"DNS:broker.example.com", "IP:127.0.0.1"};
    QTest::newRow("ipv6 normalised") << "IP:0:0:0:0:0:0:0:1" << QStringList{"IP:::1"};
    QTest::newRow("wildcard") << "DNS:*.brokers.example.com"
                              << QStringList{"DNS:*.brokers.example.com"};
    QTest::newRow("duplicates removed") << "DNS:a,DNS:a" << QStringList{"DNS:a"};
    QTest::newRow("localhost") << "DNS:localhost" << QStringList{"DNS:localhost"};
    QTest::newRow("empty") << "" << QStringList{};
    QTest::newRow("unknown type") << "URI:https://x" << QStringList{};
    QTest::newRow("no type") << "broker.example.com" << QStringList{};
    QTest::newRow("bad ip") << "IP:10.0.0.256" << QStringList{};
    QTest::newRow("ip with prefix") << "IP:10.0.0.0/8" << QStringList{};
    QTest::newRow("dns with space") << "DNS:my broker" << QStringList{};
    QTest::newRow("dns label with dash at end") << "DNS:broker-.example.com" << QStringList{};
    QTest::newRow("inner wildcard") << "DNS:a.*.example.com" << QStringList{};
}

void tst_CertGen::parseSubjectAltNames()
{
    QFETCH(QString, input);
    QFETCH(QStringList, expected);
    const auto parsed = tls::parseSubjectAltNames(input);
    if (expected.isEmpty()) {
        QVERIFY2(!parsed, qPrintable(parsed ? parsed->join(u',') : QString()));
        QVERIFY(!parsed.error().isEmpty());
    } else {
        QVERIFY2(parsed, qPrintable(parsed.error()));
        QCOMPARE(parsed.value(), expected);
    }
}

void tst_CertGen::atomicFileModeAndRefusal()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("secret.key"));
    const mode_t oldMask = ::umask(0); // the mode must not depend on the umask
    const cmq::Status written =
        cmq::writeFileAtomically(path, "secret", 0600, cmq::ExistingFile::Refuse);
    ::umask(oldMask);
    QVERIFY2(written, qPrintable(written.error()));
    QCOMPARE(modeOf(path), mode_t(0600));

    const cmq::Status again =
        cmq::writeFileAtomically(path, "other", 0600, cmq::ExistingFile::Refuse);
    QVERIFY(!again);
    QVERIFY2(again.error().contains("already exists"), qPrintable(again.error()));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("secret"));
    file.close();

    QVERIFY(cmq::writeFileAtomically(path, "replaced", 0644, cmq::ExistingFile::Replace));
    QCOMPARE(modeOf(path), mode_t(0644));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("replaced"));
    // No temporaries are left behind.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"secret.key"});

    const cmq::Status noDir =
        cmq::writeFileAtomically(dir.filePath("missing/x"), "x", 0600, cmq::ExistingFile::Refuse);
    QVERIFY(!noDir);
    QVERIFY2(noDir.error().contains("missing/x"), qPrintable(noDir.error()));
}

QTEST_GUILESS_MAIN(tst_CertGen)
#include "tst_certgen.moc"
