#include <sys/stat.h>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "crypto/keypair.h"

using namespace cmq::crypto;

// X25519 key pair generation, key files (format, permissions, atomic replacement) and public keys
// as the broker hands them out.
class tst_KeyPair : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void generate();
    void saveAndLoad();
    void saveReplacesOpenFileWithPrivateOne();
    void saveRejectsBadKeys();
    void loadChecksPermissions_data();
    void loadChecksPermissions();
    void loadRejectsBadContent_data();
    void loadRejectsBadContent();
    void loadReadsPythonClientKeyFile();
    void loadRejectsMismatchedPublicKeyFile();
    void loadRejectsMissingFile();
    void publicKeyFromBase64_data();
    void publicKeyFromBase64();

private:
    static int mode(const QString &path);
    static void writeFile(const QString &path, const QByteArray &content, int mode);
};

int tst_KeyPair::mode(const QString &path)
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return -1;
    return int(info.st_mode & 07777);
}

void tst_KeyPair::writeFile(const QString &path, const QByteArray &content, int mode)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(content), content.size());
    file.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode_t(mode)), 0);
}

void tst_KeyPair::generate()
{
    const auto first = generateKeyPair();
    const auto second = generateKeyPair();
    QVERIFY2(first.ok(), qPrintable(first.error()));
    QVERIFY2(second.ok(), qPrintable(second.error()));
    QCOMPARE(first->publicKey.size(), KeySize);
    QCOMPARE(first->secretKey.size(), KeySize);
    QVERIFY(first->secretKey != second->secretKey);
    QVERIFY(first->publicKey != second->publicKey);
}

void tst_KeyPair::saveAndLoad()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    const auto keys = generateKeyPair();
    QVERIFY(keys.ok());

    const auto saved = saveKeyPair(keys.value(), path);
    QVERIFY2(saved.ok(), qPrintable(saved.error()));
    QCOMPARE(mode(path), 0600);

    // The formats the existing clients read: one base64 line per key.
    QFile secretFile(path);
    QVERIFY(secretFile.open(QIODevice::ReadOnly));
    QCOMPARE(secretFile.readAll(), keys->secretKey.toBase64() + '\n');
    QFile publicFile(path + QStringLiteral(".pub"));
    QVERIFY(publicFile.open(QIODevice::ReadOnly));
    QCOMPARE(publicFile.readAll(), keys->publicKey.toBase64() + '\n');
    QCOMPARE(mode(publicFile.fileName()), 0644);

    const auto loaded = loadKeyPair(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->secretKey, keys->secretKey);
    QCOMPARE(loaded->publicKey, keys->publicKey);
}

void tst_KeyPair::saveReplacesOpenFileWithPrivateOne()
{
    // An old key file left world-readable must not pass its mode on to the new key.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    writeFile(path, "old\n", 0644);
    const auto keys = generateKeyPair();
    QVERIFY(keys.ok());
    const auto saved = saveKeyPair(keys.value(), path);
    QVERIFY2(saved.ok(), qPrintable(saved.error()));
    QCOMPARE(mode(path), 0600);
    const auto loaded = loadKeyPair(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->secretKey, keys->secretKey);
}

void tst_KeyPair::saveRejectsBadKeys()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    const auto shortKey = saveKeyPair(KeyPair{QByteArray(32, 'p'), QByteArray(31, 's')}, path);
    QVERIFY(!shortKey.ok());
    QVERIFY(!QFile::exists(path));

    const auto keys = generateKeyPair();
    QVERIFY(keys.ok());
    const auto noDirectory =
        saveKeyPair(keys.value(), dir.filePath(QStringLiteral("missing/receiver.key")));
    QVERIFY(!noDirectory.ok());
    QVERIFY2(noDirectory.error().contains(QStringLiteral("missing/receiver.key")),
             qPrintable(noDirectory.error()));
}

void tst_KeyPair::loadChecksPermissions_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<bool>("accepted");

    QTest::newRow("0600") << 0600 << true;
    QTest::newRow("0400") << 0400 << true;
    QTest::newRow("0700") << 0700 << true;
    QTest::newRow("0644") << 0644 << false;
    QTest::newRow("0640") << 0640 << false;
    QTest::newRow("0604") << 0604 << false;
    QTest::newRow("0620 group-writable") << 0620 << false;
    QTest::newRow("0601 other-executable") << 0601 << false;
}

void tst_KeyPair::loadChecksPermissions()
{
    QFETCH(int, mode);
    QFETCH(bool, accepted);

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    const auto keys = generateKeyPair();
    QVERIFY(keys.ok());
    QVERIFY(saveKeyPair(keys.value(), path).ok());
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode_t(mode)), 0);

    const auto loaded = loadKeyPair(path);
    QCOMPARE(loaded.ok(), accepted);
    if (accepted) {
        QCOMPARE(loaded->secretKey, keys->secretKey);
    } else {
        const QString expected = QStringLiteral("permissions 0%1").arg(mode, 0, 8);
        QVERIFY2(loaded.error().contains(expected), qPrintable(loaded.error()));
        QVERIFY2(loaded.error().contains(QStringLiteral("too open")), qPrintable(loaded.error()));
    }
}

void tst_KeyPair::loadRejectsBadContent_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("error");

    QTest::newRow("empty") << QByteArray() << QStringLiteral("has 0 bytes, expected 32");
    QTest::newRow("31 bytes") << QByteArray(31, 'k').toBase64() + '\n'
                              << QStringLiteral("has 31 bytes, expected 32");
    QTest::newRow("33 bytes") << QByteArray(33, 'k').toBase64()
                              << QStringLiteral("has 33 bytes, expected 32");
    QTest::newRow("64-byte ed25519-style key")
        << QByteArray(64, 'k').toBase64() << QStringLiteral("has 64 bytes, expected 32");
    QTest::newRow("raw binary key") << QByteArray(32, '\x01') << QStringLiteral("not valid base64");
    QTest::newRow("PEM") << QByteArray("-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n")
                         << QStringLiteral("not valid base64");
    QTest::newRow("no padding") << QByteArray(32, 'k').toBase64().chopped(1)
                                << QStringLiteral("not valid base64");
    QTest::newRow("too large") << QByteArray(5000, 'A') << QStringLiteral("too large");
}

void tst_KeyPair::loadRejectsBadContent()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, error);

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    writeFile(path, content, 0600);
    const auto loaded = loadKeyPair(path);
    QVERIFY(!loaded.ok());
    QVERIFY2(loaded.error().contains(error), qPrintable(loaded.error()));
}

void tst_KeyPair::loadReadsPythonClientKeyFile()
{
    // The existing Python receiver writes base64 without a newline and keeps its public key
    // elsewhere; the public key must then be derived from the secret key.
    const auto keys = generateKeyPair();
    QVERIFY(keys.ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver_private.key"));
    writeFile(path, keys->secretKey.toBase64(), 0600);

    const auto loaded = loadKeyPair(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->secretKey, keys->secretKey);
    QCOMPARE(loaded->publicKey, keys->publicKey);
}

void tst_KeyPair::loadRejectsMismatchedPublicKeyFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("receiver.key"));
    const auto keys = generateKeyPair();
    const auto other = generateKeyPair();
    QVERIFY(keys.ok() && other.ok());
    QVERIFY(saveKeyPair(keys.value(), path).ok());
    writeFile(path + QStringLiteral(".pub"), other->publicKey.toBase64() + '\n', 0644);

    const auto loaded = loadKeyPair(path);
    QVERIFY(!loaded.ok());
    QVERIFY2(loaded.error().contains(QStringLiteral("does not belong")),
             qPrintable(loaded.error()));
}

void tst_KeyPair::loadRejectsMissingFile()
{
    QTemporaryDir dir;
    const auto loaded = loadKeyPair(dir.filePath(QStringLiteral("nothing.key")));
    QVERIFY(!loaded.ok());
    QVERIFY2(loaded.error().contains(QStringLiteral("does not exist")), qPrintable(loaded.error()));
}

void tst_KeyPair::publicKeyFromBase64_data()
{
    QTest::addColumn<QByteArray>("base64");
    QTest::addColumn<QByteArray>("expected"); // empty: refused
    QTest::addColumn<QString>("error");

    const QByteArray key =
        QByteArray::fromHex("68e4d28d4e1ac64040a1956fb8e140aebb037700a7ffd7fec2206770ee220c15");
    QTest::newRow("valid") << key.toBase64() << key << QString();
    QTest::newRow("trailing newline") << key.toBase64() + '\n' << key << QString();
    QTest::newRow("empty") << QByteArray() << QByteArray() << QStringLiteral("has 0 bytes");
    QTest::newRow("31 bytes") << key.left(31).toBase64() << QByteArray()
                              << QStringLiteral("has 31 bytes, expected 32");
    QTest::newRow("hex instead of base64")
        << key.toHex() << QByteArray() << QStringLiteral("has 48 bytes, expected 32");
    QTest::newRow("url-safe alphabet") << key.toBase64(QByteArray::Base64UrlEncoding)
                                       << QByteArray() << QStringLiteral("not valid base64");
    QTest::newRow("garbage") << QByteArray("not a key!") << QByteArray()
                             << QStringLiteral("not valid base64");
}

void tst_KeyPair::publicKeyFromBase64()
{
    QFETCH(QByteArray, base64);
    QFETCH(QByteArray, expected);
    QFETCH(QString, error);

    const auto key = cmq::crypto::publicKeyFromBase64(base64);
    QCOMPARE(key.ok(), !expected.isEmpty());
    if (key.ok())
        QCOMPARE(key.value(), expected);
    else
        QVERIFY2(key.error().contains(error), qPrintable(key.error()));
}

QTEST_GUILESS_MAIN(tst_KeyPair)
#include "tst_keypair.moc"
