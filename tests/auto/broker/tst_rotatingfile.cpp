// Log file rotation on a hand-moved clock: hourly, daily and never, by size, the names the
// rotated files get, how many are kept, and content from an earlier run.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "logging/rotatingfile.h"

using cmq::logging::RotatingFile;

namespace {

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

QStringList names(const QStringList &paths)
{
    QStringList out;
    for (const QString &p : paths)
        out.append(QFileInfo(p).fileName());
    return out;
}

} // namespace

class tst_RotatingFile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void byTime_data();
    void byTime();
    void bySize();
    void neverRotatesBySizeOnly();
    void keepsOnlyMaxFiles();
    void oldContentBelongsToItsPeriod();
    void openFailsClearly();

private:
    QTemporaryDir m_dir;
};

void tst_RotatingFile::byTime_data()
{
    QTest::addColumn<QString>("rotation");
    QTest::addColumn<int>("stepMinutes");
    QTest::addColumn<QStringList>("rotated");
    // Writes at 23:10, then +step, +step: the rotated names are the periods that ended.
    QTest::newRow("hourly") << "hourly" << 60
                            << QStringList{"app.log.2025-01-31T23", "app.log.2025-02-01T00"};
    QTest::newRow("hourly, across midnight")
        << "hourly" << 30 << QStringList{"app.log.2025-01-31T23"};
    QTest::newRow("hourly, same hour") << "hourly" << 20 << QStringList{};
    QTest::newRow("daily") << "daily" << 30 << QStringList{"app.log.2025-01-31"};
    QTest::newRow("daily, same day") << "daily" << 10 << QStringList{};
    QTest::newRow("never") << "never" << 600 << QStringList{};
}

void tst_RotatingFile::byTime()
{
    QFETCH(QString, rotation);
    QFETCH(int, stepMinutes);
    QFETCH(QStringList, rotated);
    const QString dir = m_dir.filePath(QStringLiteral("time-") + QTest::currentDataTag());
    QDateTime now(QDate(2025, 1, 31), QTime(23, 10), Qt::UTC);
    RotatingFile file(
        {dir + QStringLiteral("/app.log"), RotatingFile::periodFromConfig(rotation), 1 << 20, 0},
        [&now] { return now; });
    QVERIFY(file.open());
    file.write("one\n");
    now = now.addSecs(stepMinutes * 60);
    file.write("two\n");
    now = now.addSecs(stepMinutes * 60);
    file.write("three\n");
    QCOMPARE(names(file.rotatedFiles()), rotated);
    // Nothing lost: the live file and the rotated ones hold the three lines in order.
    QByteArray all;
    for (const QString &path : file.rotatedFiles())
        all += read(path);
    all += read(file.path());
    QCOMPARE(all, QByteArray("one\ntwo\nthree\n"));
}

void tst_RotatingFile::bySize()
{
    const QString dir = m_dir.filePath(QStringLiteral("size"));
    const QDateTime now(QDate(2025, 3, 1), QTime(12, 0), Qt::UTC);
    RotatingFile file({dir + QStringLiteral("/info.log"), RotatingFile::Period::Daily, 10, 0},
                      [now] { return now; });
    QVERIFY(file.open());
    file.write("12345\n");         // 6
    file.write("1234\n");          // 11 > 10: rotates first
    file.write("123\n");           // 9
    file.write("1\n");             // 11: rotates
    file.write("0123456789abc\n"); // larger than the limit alone: rotates, then written whole
    QCOMPARE(
        names(file.rotatedFiles()),
        (QStringList{"info.log.2025-03-01", "info.log.2025-03-01.1", "info.log.2025-03-01.2"}));
    QCOMPARE(read(dir + QStringLiteral("/info.log.2025-03-01")), QByteArray("12345\n"));
    QCOMPARE(read(dir + QStringLiteral("/info.log.2025-03-01.1")), QByteArray("1234\n123\n"));
    QCOMPARE(read(dir + QStringLiteral("/info.log.2025-03-01.2")), QByteArray("1\n"));
    QCOMPARE(read(file.path()), QByteArray("0123456789abc\n"));
}

void tst_RotatingFile::neverRotatesBySizeOnly()
{
    const QString dir = m_dir.filePath(QStringLiteral("never"));
    QDateTime now(QDate(2025, 3, 1), QTime(12, 0, 5), Qt::UTC);
    RotatingFile file({dir + QStringLiteral("/e.log"), RotatingFile::Period::Never, 4, 0},
                      [&now] { return now; });
    QVERIFY(file.open());
    file.write("ab\n");
    now = now.addDays(40);
    file.write("cd\n");
    QCOMPARE(names(file.rotatedFiles()), QStringList{"e.log.2025-04-10T12-00-05"});
}

void tst_RotatingFile::keepsOnlyMaxFiles()
{
    const QString dir = m_dir.filePath(QStringLiteral("prune"));
    QDateTime now(QDate(2025, 1, 1), QTime(0, 0), Qt::UTC);
    RotatingFile file({dir + QStringLiteral("/d.log"), RotatingFile::Period::Hourly, 1 << 20, 3},
                      [&now] { return now; });
    QVERIFY(file.open());
    for (int hour = 0; hour < 8; ++hour) {
        file.write(QByteArray::number(hour) + '\n');
        now = now.addSecs(3600);
    }
    QCOMPARE(names(file.rotatedFiles()),
             (QStringList{"d.log.2025-01-01T04", "d.log.2025-01-01T05", "d.log.2025-01-01T06"}));
    QCOMPARE(read(file.path()), QByteArray("7\n"));
}

void tst_RotatingFile::oldContentBelongsToItsPeriod()
{
    // A file left by a run on an earlier day is rotated under that day's name at the first
    // write of this run.
    const QString dir = m_dir.filePath(QStringLiteral("restart"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = dir + QStringLiteral("/i.log");
    {
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("yesterday\n");
        old.close();
        QVERIFY(old.open(QIODevice::ReadWrite));
        QVERIFY(old.setFileTime(QDateTime(QDate(2025, 5, 4), QTime(22, 0), Qt::UTC),
                                QFileDevice::FileModificationTime));
    }
    const QDateTime now(QDate(2025, 5, 5), QTime(8, 0), Qt::UTC);
    RotatingFile file({path, RotatingFile::Period::Daily, 1 << 20, 0}, [now] { return now; });
    QVERIFY(file.open());
    file.write("today\n");
    QCOMPARE(names(file.rotatedFiles()), QStringList{"i.log.2025-05-04"});
    QCOMPARE(read(path), QByteArray("today\n"));
}

void tst_RotatingFile::openFailsClearly()
{
    const QString blocker = m_dir.filePath(QStringLiteral("blocker"));
    QFile f(blocker);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    RotatingFile file({blocker + QStringLiteral("/x.log"), RotatingFile::Period::Daily, 10, 0});
    const cmq::Status opened = file.open();
    QVERIFY(!opened);
    QVERIFY2(opened.error().contains(blocker), qPrintable(opened.error()));
}

QTEST_APPLESS_MAIN(tst_RotatingFile)
#include "tst_rotatingfile.moc"
