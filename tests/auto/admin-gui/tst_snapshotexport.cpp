// The export formats, the exchange tree, the rate history and the error sentences the
// console shows — the pure parts, table-driven.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "models/adminsession.h"
#include "models/exchangetreemodel.h"
#include "models/ratehistory.h"
#include "models/snapshotexport.h"

using namespace cmq::admingui;

class tst_SnapshotExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parseFormat_data();
    void parseFormat();
    void csv();
    void exchangeTree();
    void rateHistory();
    void describeError_data();
    void describeError();
};

void tst_SnapshotExport::parseFormat_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("format"); // -1: refused
    QTest::newRow("prom") << "prom" << int(ExportFormat::Prometheus);
    QTest::newRow("prometheus") << "Prometheus" << int(ExportFormat::Prometheus);
    QTest::newRow("json") << "json" << int(ExportFormat::Json);
    QTest::newRow("csv") << "csv" << int(ExportFormat::Csv);
    QTest::newRow("xml") << "xml" << -1;
}

void tst_SnapshotExport::parseFormat()
{
    QFETCH(QString, text);
    QFETCH(int, format);
    const auto parsed = parseExportFormat(text);
    QCOMPARE(parsed.ok(), format >= 0);
    if (format >= 0)
        QCOMPARE(int(parsed.value()), format);
    else
        QCOMPARE(parsed.error(),
                 QStringLiteral("Unknown export format 'xml': expected prom, json or csv"));
}

void tst_SnapshotExport::csv()
{
    const QJsonObject snapshot{
        {"queues", QJsonArray{QJsonObject{{"name", "q1"}, {"owner", "receiver_1"}, {"ready", 3}}}},
        {"connections",
         QJsonArray{QJsonObject{{"id", 7}, {"cn", "a,b"}, {"address", "::1"}, {"port", 5}}}}};
    const QList<QByteArray> lines = snapshotToCsv(snapshot).split('\n');
    QCOMPARE(lines.size(), 4); // header, queue, connection, trailing empty
    const int columns = int(lines[0].split(',').size());
    QCOMPARE(columns, 16);
    QCOMPARE(lines[1], QByteArray("queue,q1,receiver_1,3,,,,,,,,,,,,"));
    QCOMPARE(lines[2], QByteArray("connection,7,,,,,,,,\"a,b\",::1:5,,,,,"));
}

void tst_SnapshotExport::exchangeTree()
{
    ExchangeTreeModel model;
    const QJsonArray exchanges{QJsonObject{{"name", "ex"}, {"type", "direct"}}};
    const QJsonArray bindings{
        QJsonObject{{"exchange", "ex"}, {"routing_key", "k1"}, {"queue", "q1"}},
        QJsonObject{{"exchange", "ex"}, {"routing_key", "k1"}, {"queue", "q2"}},
        QJsonObject{{"exchange", "ex"}, {"routing_key", "k2"}, {"queue", "q1"}},
        QJsonObject{{"exchange", "gone"}, {"routing_key", "k"}, {"queue", "q"}}};
    QVERIFY(model.updateTopology(exchanges, bindings));
    QCOMPARE(model.rowCount(), 1);
    const QStandardItem *ex = model.item(0);
    QCOMPARE(ex->text(), QStringLiteral("ex"));
    QCOMPARE(ex->rowCount(), 2);
    QCOMPARE(ex->child(0)->text(), QStringLiteral("k1"));
    QCOMPARE(ex->child(0)->rowCount(), 2);
    QCOMPARE(ex->child(0)->child(1)->text(), QStringLiteral("q2"));
    QVERIFY(!model.updateTopology(exchanges, bindings)); // unchanged: no rebuild
}

void tst_SnapshotExport::rateHistory()
{
    RateHistory history(3);
    for (int i = 1; i <= 5; ++i)
        history.add({double(i), double(i * 10), 0, 0, double(i)});
    QCOMPARE(history.samples().size(), 3);
    QCOMPARE(history.samples().first().seconds, 3.0);
    QCOMPARE(history.maxRate(), 50.0);
    history.add({1.0, 1, 0, 0, 0}); // uptime went back: the broker restarted
    QCOMPARE(history.samples().size(), 1);
}

void tst_SnapshotExport::describeError_data()
{
    QTest::addColumn<QString>("raw");
    QTest::addColumn<QString>("contains");
    QTest::addColumn<bool>("retryable");
    QTest::newRow("not an admin")
        << "Unauthorized: certificate CN 'sender_1' does not have the Admin role"
        << "The broker refused this certificate: certificate CN 'sender_1' does not have the "
           "Admin role"
        << false;
    QTest::newRow("broker down") << "Connection refused"
                                 << "The broker is unreachable at localhost:9091" << true;
    QTest::newRow("wrong CA")
        << "The issuer certificate of a locally looked up certificate could not be found"
        << "not signed by the selected CA" << false;
    QTest::newRow("shutting down") << "Server shutting down"
                                   << "closed the connection" << true;
    QTest::newRow("timeout") << "Socket operation timed out"
                             << "timed out" << true;
}

void tst_SnapshotExport::describeError()
{
    QFETCH(QString, raw);
    QFETCH(QString, contains);
    QFETCH(bool, retryable);
    ConnectionOptions options;
    options.caPath = "/etc/ca.crt";
    const QString text = AdminSession::describeError(raw, options);
    QVERIFY2(text.contains(contains), qPrintable(text));
    QCOMPARE(AdminSession::isRetryable(raw), retryable);
}

QTEST_GUILESS_MAIN(tst_SnapshotExport)
#include "tst_snapshotexport.moc"
