// ciphermq-bench as bench/compare.sh runs it, against a real broker: many publishers with a
// window, a fixed rate, a backlog drained after publishing, and a broker killed mid-run. The
// benchmark's figures are only as good as its bookkeeping: every confirmed message delivered and
// counted once, the schedule kept, and a failure reported as one instead of a hang.

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "processrun.h"
#include "testenv.h"

using namespace cmq::test;

class tst_BenchHarness : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void windowedPublishersDeliverEverything();
    void fixedRateKeepsItsSchedule();
    void backlogIsDrainedAfterPublishing();
    void missingCertificatesAreReported();
    void refusedConsumerEndsTheRun();
    void brokerKilledMidRunEndsTheRun();

private:
    // The certificates and a broker's address, as the benchmark scripts pass them.
    static QStringList connection(quint16 port)
    {
        return {"--certs", QFileInfo(certFile("ca.crt")).path(), "--broker",
                QStringLiteral("127.0.0.1:%1").arg(port)};
    }
    // Runs the benchmark to its end; its JSON result in `result`.
    ProcessRun bench(const QStringList &args, QJsonObject *result)
    {
        const ProcessRun run =
            runProcess(QStringLiteral(CMQ_BENCH_BIN),
                       connection(m_broker.port()) + QStringList{"--json"} + args);
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        *result = QJsonDocument::fromJson(lines.constLast()).object();
        return run;
    }

    BrokerProcess m_broker;
};

void tst_BenchHarness::initTestCase()
{
    QVERIFY2(m_broker.start(), m_broker.output().constData());
}

void tst_BenchHarness::windowedPublishersDeliverEverything()
{
    QJsonObject result;
    const ProcessRun run = bench({"-p", "8", "-w", "16", "-n", "2000", "-s", "512"}, &result);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(result.value("confirmed").toInteger(), 2000);
    QCOMPARE(result.value("delivered").toInteger(), 2000);
    QCOMPARE(result.value("refused").toInteger(), 0);
    QVERIFY(result.value("publish_rate").toInteger() > 0);
    QVERIFY(result.value("confirm_p50_ms").toDouble() > 0);
    QVERIFY(result.value("e2e_p99_ms").toDouble() > 0);
}

void tst_BenchHarness::fixedRateKeepsItsSchedule()
{
    // 300 publishes at 400 msg/s in total take at least 0.75 s whatever the machine does: a
    // publisher that sent ahead of its schedule would show a higher rate.
    QJsonObject result;
    const ProcessRun run = bench({"-p", "3", "-w", "32", "-n", "300", "--rate", "400"}, &result);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(result.value("confirmed").toInteger(), 300);
    QCOMPARE(result.value("delivered").toInteger(), 300);
    const qint64 rate = result.value("publish_rate").toInteger();
    QVERIFY2(rate > 0 && rate <= 420, QByteArray::number(rate).constData());
}

void tst_BenchHarness::backlogIsDrainedAfterPublishing()
{
    QJsonObject result;
    const ProcessRun run = bench({"-p", "2", "-w", "64", "--backlog", "1000"}, &result);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(result.value("confirmed").toInteger(), 1000);
    QCOMPARE(result.value("delivered").toInteger(), 1000);
    QVERIFY(result.value("drain_rate").toInteger() > 0);
}

void tst_BenchHarness::missingCertificatesAreReported()
{
    const ProcessRun run =
        runProcess(QStringLiteral(CMQ_BENCH_BIN),
                   connection(m_broker.port()) + QStringList{"--sender", "no-such-identity"});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("no-such-identity"), run.err.constData());
}

void tst_BenchHarness::refusedConsumerEndsTheRun()
{
    // One consumer connection per CN: the second of `-c 2` gets "Error: ..." and is closed
    // before it ever subscribes. The run must end as failed (with the broker's reason when that
    // line arrived before the close) instead of waiting for that consumer to subscribe.
    BrokerProcess broker;
    broker.set("rate_limit.enabled", "true");
    broker.set("rate_limit.max_connections_per_cn", "1");
    QVERIFY2(broker.start(), broker.output().constData());
    const ProcessRun run =
        runProcess(QStringLiteral(CMQ_BENCH_BIN),
                   connection(broker.port()) + QStringList{"-c", "2", "-n", "10"},
                   QProcessEnvironment(QProcessEnvironment::InheritFromParent), {}, 60000);
    QVERIFY2(run.exitCode == 1, run.err.constData());
    QVERIFY2(run.err.contains("consumer: "), run.err.constData());
}

void tst_BenchHarness::brokerKilledMidRunEndsTheRun()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    QProcess process;
    process.start(QStringLiteral(CMQ_BENCH_BIN),
                  connection(broker.port()) +
                      QStringList{"--json", "-p", "4", "-w", "4", "-d", "600"});
    QVERIFY(process.waitForStarted());
    // Killed once publishing is under way: messages are in the broker's database.
    BrokerDatabase database(broker, nullptr);
    QVERIFY2(database.isOpen(), qPrintable(database.error()));
    const QDeadlineTimer deadline(60000);
    while (database.number("SELECT count(*) FROM message_metadata") < 20) {
        QVERIFY2(!deadline.hasExpired(), process.readAllStandardError().constData());
        QVERIFY(process.state() == QProcess::Running);
        QTest::qWait(20);
    }
    broker.kill();
    // Every connection sees the broker gone: the run ends, reported as failed.
    QVERIFY2(process.waitForFinished(60000), "ciphermq-bench still running");
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    // Whichever connection saw the broker go first says so; the others may just stop, since the
    // run is abandoned as soon as one connection has failed.
    const QByteArray err = process.readAllStandardError();
    QVERIFY2(err.contains("publisher:") || err.contains("consumer:"), err.constData());
}

QTEST_GUILESS_MAIN(tst_BenchHarness)
#include "tst_72_bench_harness.moc"
