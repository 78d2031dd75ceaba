// The on-disk outbox: one private file per message, written atomically; what was saved is read
// back by the next process in outbox order; an interrupted save leaves nothing half-written;
// two live processes cannot share one outbox, but a dead one's lock is taken over.

#include <sys/stat.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "client/fileoutbox.h"

using namespace cmq::client;

class tst_FileOutbox : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void saveReadRemove();
    void survivesReopen();
    void privateFiles();
    void interruptedSaveLeavesNothing();
    void corruptFileSetAside();
    void lockedWhileOpen();
    void staleLockTakenOver();
    void idsThatAreNotFileNames();

private:
    static OutboxEntry entry(const QString &id, qint64 sequence, const QByteArray &payload = {});
    static int mode(const QString &path);
    static QStringList messageFiles(const QString &dir);
};

OutboxEntry tst_FileOutbox::entry(const QString &id, qint64 sequence, const QByteArray &payload)
{
    OutboxEntry e;
    e.messageId = id;
    e.receiver = QStringLiteral("svc-b");
    e.exchange = QStringLiteral("CipherMQ_exchange");
    e.routingKey = QStringLiteral("svc-b_key");
    if (payload.isEmpty())
        e.envelope = R"({"message_id":")" + id.toUtf8() + R"("})";
    else
        e.payload = payload;
    e.sequence = sequence;
    e.createdAt = QDateTime::currentDateTimeUtc();
    return e;
}

int tst_FileOutbox::mode(const QString &path)
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return -1;
    return int(info.st_mode & 07777);
}

QStringList tst_FileOutbox::messageFiles(const QString &dir)
{
    return QDir(dir).entryList({QStringLiteral("*.msg")}, QDir::Files);
}

void tst_FileOutbox::saveReadRemove()
{
    QTemporaryDir dir;
    auto box = FileOutbox::open(dir.filePath("outbox"));
    QVERIFY2(box.ok(), qPrintable(box.error()));
    for (int i = 10; i > 0; --i)
        QVERIFY(box.value()->save(entry(QStringLiteral("m%1").arg(i), i)).ok());
    QVERIFY(box.value()->save(entry("m3", 3, "now unsealed")).ok()); // replaces m3
    auto all = box.value()->readAll();
    QVERIFY2(all.ok(), qPrintable(all.error()));
    QCOMPARE(all->size(), 10);
    for (int i = 0; i < 10; ++i)
        QCOMPARE(all->at(i).messageId, QStringLiteral("m%1").arg(i + 1));
    QCOMPARE(all->at(2).payload, "now unsealed");
    QVERIFY(box.value()->remove("m5").ok());
    QVERIFY(box.value()->remove("m5").ok()); // gone already: fine
    QCOMPARE(box.value()->readAll()->size(), 9);
    QCOMPARE(messageFiles(dir.filePath("outbox")).size(), 9);
}

void tst_FileOutbox::survivesReopen()
{
    QTemporaryDir dir;
    {
        auto box = FileOutbox::open(dir.path());
        QVERIFY(box.ok());
        QVERIFY(box.value()->save(entry("kept-1", 1)).ok());
        QVERIFY(box.value()->save(entry("kept-2", 2, "plain")).ok());
    }
    auto again = FileOutbox::open(dir.path());
    QVERIFY2(again.ok(), qPrintable(again.error()));
    const auto all = again.value()->readAll();
    QCOMPARE(all->size(), 2);
    QCOMPARE(all->at(0).messageId, "kept-1");
    QCOMPARE(all->at(1).payload, "plain");
}

void tst_FileOutbox::privateFiles()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("box");
    auto box = FileOutbox::open(path);
    QVERIFY(box.ok());
    QVERIFY(box.value()->save(entry("p", 1, "secret until sealed")).ok());
    QCOMPARE(mode(path), 0700);
    const QStringList files = messageFiles(path);
    QCOMPARE(files.size(), 1);
    QCOMPARE(mode(QDir(path).filePath(files.first())), 0600);
}

void tst_FileOutbox::interruptedSaveLeavesNothing()
{
    // A crash between writing the temporary file and renaming it leaves a *.tmp file: it is
    // not an entry, and the next open clears it.
    QTemporaryDir dir;
    {
        QFile partial(dir.filePath("0123abcd.msg.tmp"));
        QVERIFY(partial.open(QIODevice::WriteOnly));
        partial.write(R"({"message_id":"half)");
    }
    auto box = FileOutbox::open(dir.path());
    QVERIFY(box.ok());
    QCOMPARE(box.value()->readAll()->size(), 0);
    QVERIFY(!QFile::exists(dir.filePath("0123abcd.msg.tmp")));
}

void tst_FileOutbox::corruptFileSetAside()
{
    QTemporaryDir dir;
    auto box = FileOutbox::open(dir.path());
    QVERIFY(box.ok());
    QVERIFY(box.value()->save(entry("good", 1)).ok());
    {
        QFile bad(dir.filePath("ffff.msg"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("not json");
    }
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("outbox: skipping .*ffff.msg"));
    const auto all = box.value()->readAll();
    QVERIFY(all.ok());
    QCOMPARE(all->size(), 1);
    QVERIFY(QFile::exists(dir.filePath("ffff.msg.corrupt")));
}

void tst_FileOutbox::lockedWhileOpen()
{
    QTemporaryDir dir;
    auto first = FileOutbox::open(dir.path());
    QVERIFY(first.ok());
    // A second opener is refused while the holder lives (QLockFile does not exempt its own
    // process), and gets in once the holder closes.
    const auto second = FileOutbox::open(dir.path());
    QVERIFY(!second.ok());
    QVERIFY2(second.error().contains("in use"), qPrintable(second.error()));
    first.value().reset();
    QVERIFY(FileOutbox::open(dir.path()).ok());
}

void tst_FileOutbox::staleLockTakenOver()
{
    // A lock file whose process is gone (the sender was killed) does not block the restart.
    QTemporaryDir dir;
    QProcess dead;
    dead.start(QStringLiteral("true"), {});
    QVERIFY(dead.waitForStarted());
    const qint64 deadPid = dead.processId();
    QVERIFY(dead.waitForFinished());
    {
        QFile lock(dir.filePath("outbox.lock"));
        QVERIFY(lock.open(QIODevice::WriteOnly));
        lock.write(QByteArray::number(deadPid) + "\ncmq\n" + QSysInfo::machineHostName().toUtf8() +
                   "\n");
    }
    const auto box = FileOutbox::open(dir.path());
    QVERIFY2(box.ok(), qPrintable(box.error()));
}

void tst_FileOutbox::idsThatAreNotFileNames()
{
    QTemporaryDir dir;
    auto box = FileOutbox::open(dir.path());
    QVERIFY(box.ok());
    const QString slashy = QStringLiteral("../../etc/passwd");
    const QString longId = QString(255, u'x');
    QVERIFY(box.value()->save(entry(slashy, 1)).ok());
    QVERIFY(box.value()->save(entry(longId, 2)).ok());
    const auto all = box.value()->readAll();
    QCOMPARE(all->size(), 2);
    QCOMPARE(all->at(0).messageId, slashy);
    QCOMPARE(all->at(1).messageId, longId);
    QVERIFY(box.value()->remove(slashy).ok());
    QCOMPARE(messageFiles(dir.path()).size(), 1);
}

QTEST_GUILESS_MAIN(tst_FileOutbox)
#include "tst_fileoutbox.moc"
