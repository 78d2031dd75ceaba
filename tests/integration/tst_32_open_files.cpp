// The broker raises its soft open-file limit (RLIMIT_NOFILE) to the hard limit at start-up:
// started with a soft limit far below the connections it is asked to hold, it holds them all.

#include <memory>
#include <vector>

#include <sys/resource.h>

#include <QFile>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

// "Max open files  <soft>  <hard>  files" from /proc/<pid>/limits.
QList<QByteArray> openFileLimits(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/limits").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (line.startsWith("Max open files"))
            return line.mid(int(qstrlen("Max open files"))).simplified().split(' ');
    }
    return {};
}

} // namespace

class TestOpenFiles : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void holdsMoreConnectionsThanTheInheritedSoftLimit();
};

void TestOpenFiles::holdsMoreConnectionsThanTheInheritedSoftLimit()
{
    constexpr int kConnections = 120;
    constexpr rlim_t kInheritedSoftLimit = 64;
    rlimit saved = {};
    QCOMPARE(::getrlimit(RLIMIT_NOFILE, &saved), 0);
    if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 4 * kConnections)
        QSKIP("the hard open-file limit of this process is too low for the test");

    BrokerProcess broker;
    broker.set(QStringLiteral("rate_limit.enabled"), QStringLiteral("false"));
    // The child inherits the limit at fork: lower only the soft limit, only for the start.
    rlimit low = saved;
    low.rlim_cur = kInheritedSoftLimit;
    QCOMPARE(::setrlimit(RLIMIT_NOFILE, &low), 0);
    const bool started = broker.start();
    QCOMPARE(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    QVERIFY2(started, broker.output().constData());

    const QList<QByteArray> limits = openFileLimits(broker.pid());
    QCOMPARE(limits.size(), 3); // soft, hard, "files"
    QCOMPARE(limits.at(0), limits.at(1));

    std::vector<std::unique_ptr<TestClient>> clients;
    for (int i = 0; i < kConnections; ++i) {
        auto client = std::make_unique<TestClient>(QStringLiteral("receiver_1"));
        QVERIFY2(client->connectTo(broker.port()),
                 qPrintable(QStringLiteral("connection %1: %2").arg(i).arg(client->errorString())));
        QCOMPARE(client->request("heartbeat 60"), QByteArray("Heartbeat 60"));
        clients.push_back(std::move(client));
    }
    // All of them are still served.
    for (auto &client : clients)
        QCOMPARE(client->request("heartbeat 60"), QByteArray("Heartbeat 60"));
}

QTEST_GUILESS_MAIN(TestOpenFiles)
#include "tst_32_open_files.moc"
