// ConnectionTableModel (certificate expiry highlighting) and RateLimitTableModel (bars and
// near-exhaustion), table-driven.

#include <QBrush>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "models/connectiontablemodel.h"
#include "models/ratelimittablemodel.h"

using cmq::admingui::ConnectionTableModel;
using cmq::admingui::JsonTableModel;
using cmq::admingui::RateLimitTableModel;

class tst_ConnectionTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void expiry_data();
    void expiry();
    void columns();
    void rateLimitBuckets_data();
    void rateLimitBuckets();
};

void tst_ConnectionTableModel::expiry_data()
{
    QTest::addColumn<QString>("notAfter");
    QTest::addColumn<bool>("highlighted");
    QTest::newRow("years away") << "2030-01-01T00:00:00.000Z" << false;
    QTest::newRow("in 31 days") << "2026-02-01T00:00:00.000Z" << false;
    QTest::newRow("in 10 days") << "2026-01-11T00:00:00.000Z" << true;
    QTest::newRow("already expired") << "2025-06-01T00:00:00.000Z" << true;
    QTest::newRow("no certificate date") << "" << false;
}

void tst_ConnectionTableModel::expiry()
{
    QFETCH(QString, notAfter);
    QFETCH(bool, highlighted);
    ConnectionTableModel model;
    model.setNow(QDateTime(QDate(2026, 1, 1), QTime(0, 0), Qt::UTC));
    model.update(QJsonArray{QJsonObject{
        {"id", 7}, {"cn", "receiver_1"}, {"certificate", QJsonObject{{"not_after", notAfter}}}}});
    QCOMPARE(model.expiresSoon(0), highlighted);
    QCOMPARE(model.index(0, ConnectionTableModel::Expiry).data(Qt::BackgroundRole).isValid(),
             highlighted);
}

void tst_ConnectionTableModel::columns()
{
    ConnectionTableModel model;
    model.update(QJsonArray{
        QJsonObject{{"id", 7},
                    {"listener", "data"},
                    {"cn", "receiver_1"},
                    {"roles", QJsonArray{"receiver", "sender"}},
                    {"address", "127.0.0.1"},
                    {"port", 50514},
                    {"connected_at", "2025-01-31T10:00:00.123Z"},
                    {"certificate", QJsonObject{{"subject", "CN=receiver_1"}, {"serial", "4a:1f"}}},
                    {"messages_out", 108}}});
    auto cell = [&](int column) { return model.index(0, column).data().toString(); };
    QCOMPARE(cell(ConnectionTableModel::Id), QStringLiteral("7"));
    QCOMPARE(cell(ConnectionTableModel::Roles), QStringLiteral("receiver, sender"));
    QCOMPARE(cell(ConnectionTableModel::Address), QStringLiteral("127.0.0.1:50514"));
    QCOMPARE(cell(ConnectionTableModel::ConnectedSince), QStringLiteral("2025-01-31 10:00:00"));
    QCOMPARE(cell(ConnectionTableModel::Subject), QStringLiteral("CN=receiver_1"));
    QCOMPARE(cell(ConnectionTableModel::MessagesOut), QStringLiteral("108"));
    QCOMPARE(model.index(0, 0).data(JsonTableModel::KeyRole).toString(), QStringLiteral("7"));
}

void tst_ConnectionTableModel::rateLimitBuckets_data()
{
    QTest::addColumn<double>("globalTokens");
    QTest::addColumn<double>("publishTokens");
    QTest::addColumn<int>("connections");
    QTest::addColumn<double>("globalFraction");
    QTest::addColumn<bool>("hot");
    QTest::newRow("full") << 200.0 << 100.0 << 1 << 1.0 << false;
    QTest::newRow("half") << 100.0 << 50.0 << 1 << 0.5 << false;
    QTest::newRow("global nearly empty") << 10.0 << 100.0 << 1 << 0.05 << true;
    QTest::newRow("publish nearly empty") << 200.0 << 5.0 << 1 << 1.0 << true;
    QTest::newRow("negative after a batch") << -40.0 << 100.0 << 1 << 0.0 << true;
    QTest::newRow("connections near the cap") << 200.0 << 100.0 << 17 << 1.0 << true;
    QTest::newRow("fractional tokens") << 187.5 << 92.25 << 1 << 0.9375 << false;
}

void tst_ConnectionTableModel::rateLimitBuckets()
{
    QFETCH(double, globalTokens);
    QFETCH(double, publishTokens);
    QFETCH(int, connections);
    QFETCH(double, globalFraction);
    QFETCH(bool, hot);
    RateLimitTableModel model;
    const QJsonObject bucket{{"scope", "cn"},
                             {"key", "sender_1"},
                             {"connections", connections},
                             {"connection_limit", 20},
                             {"global", QJsonObject{{"tokens", globalTokens},
                                                    {"rate", 100},
                                                    {"burst", 200},
                                                    {"accepted", 14},
                                                    {"rejected", 1}}},
                             {"publish", QJsonObject{{"tokens", publishTokens},
                                                     {"rate", 50},
                                                     {"burst", 100},
                                                     {"accepted", 9},
                                                     {"rejected", 0}}}};
    model.updateBuckets(QJsonObject{{"buckets", QJsonArray{bucket}}});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, RateLimitTableModel::GlobalTokens)
                 .data(JsonTableModel::FractionRole)
                 .toDouble(),
             globalFraction);
    QVERIFY(!model.index(0, RateLimitTableModel::Key).data(JsonTableModel::FractionRole).isValid());
    QCOMPARE(model.nearExhaustion(0), hot);
    QCOMPARE(model.index(0, RateLimitTableModel::Key).data().toString(),
             QStringLiteral("sender_1"));
    QCOMPARE(model.index(0, RateLimitTableModel::Accepted).data().toString(), QStringLiteral("23"));
    QCOMPARE(model.index(0, RateLimitTableModel::Connections).data().toString(),
             QStringLiteral("%1 / 20").arg(connections));
    // The texts the model used to build with arg(): tokens rounded, then the burst.
    QCOMPARE(model.index(0, RateLimitTableModel::GlobalTokens).data().toString(),
             QStringLiteral("%1 / %2").arg(globalTokens, 0, 'f', 0).arg(200.0));
    QCOMPARE(model.index(0, RateLimitTableModel::PublishTokens).data().toString(),
             QStringLiteral("%1 / %2").arg(publishTokens, 0, 'f', 0).arg(100.0));
}

QTEST_GUILESS_MAIN(tst_ConnectionTableModel)
#include "tst_connectiontablemodel.moc"
