// The broker is blind: a marker sent through it by the client library appears nowhere on the
// broker's side — not in its console output, its log files (at trace level), nor its database
// (the SQLite files byte for byte; every table of the PostgreSQL database, dumped through
// QPSQL) — in the clear, in base64 or in hex. Positive controls make sure the search would find
// things: the marker does arrive decrypted at its receiver, and the id of a message still stored
// is found where we look.

#include <QDirIterator>
#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QtTest>

#include "brokerprocess.h"
#include "client/blockingclient.h"
#include "client/client.h"
#include "clienttest.h"
#include "testpostgres.h"

using namespace cmq::client;
using namespace cmq::test;

namespace {
constexpr int Patience = 30000;
}

class tst_NoPlaintext : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void neverInLogsOrDatabase_data();
    void neverInLogsOrDatabase();

private:
    static QList<QByteArray> forms(const QByteArray &secret);
};

QList<QByteArray> tst_NoPlaintext::forms(const QByteArray &secret)
{
    return {secret, secret.toBase64(), secret.toHex(),
            secret.toBase64(QByteArray::Base64UrlEncoding)};
}

void tst_NoPlaintext::neverInLogsOrDatabase_data()
{
    QTest::addColumn<bool>("postgres");
    QTest::newRow("sqlite") << false;
    QTest::newRow("postgresql") << true;
}

void tst_NoPlaintext::neverInLogsOrDatabase()
{
    QFETCH(bool, postgres);
    QTemporaryDir dir;
    std::unique_ptr<TestDatabase> database;
    BrokerProcess broker;
    broker.set("logging.level", "\"trace\"");
    if (postgres) {
        QString error;
        const PostgresServer server = fixturePostgres(&error);
        QVERIFY2(server.isValid(), qPrintable(error));
        database = std::make_unique<TestDatabase>(server);
        QVERIFY2(database->isValid(), qPrintable(database->error()));
        broker.usePostgres(database->name());
    }
    QVERIFY2(broker.start(), broker.output().constData());

    const QByteArray delivered =
        "MARKER-DELIVERED-7f3a9c-do-not-leak-" + QByteArray::number(postgres);
    const QByteArray stored = "MARKER-STORED-c41e08-do-not-leak-" + QByteArray::number(postgres);

    // svc-b receives the first marker; svc-c sets up its queue and goes away, so the second
    // marker stays stored in the broker's database, encrypted.
    Client receiver(clientOptions("svc-b", {broker.port()}, makeKeyPair(dir, "svc-b")));
    Inbox inbox;
    QVERIFY(receiver.listen(inbox.handler()).ok());
    QSignalSpy subscribed(&receiver, &Client::subscribed);
    QVERIFY(receiver.start().ok());
    {
        Client absent(clientOptions("svc-c", {broker.port()}, makeKeyPair(dir, "svc-c")));
        QVERIFY(absent
                    .listen([](const IncomingMessage &) -> std::optional<QByteArray> {
                        return std::nullopt;
                    })
                    .ok());
        QSignalSpy absentSubscribed(&absent, &Client::subscribed);
        QVERIFY(absent.start().ok());
        QTRY_COMPARE_WITH_TIMEOUT(absentSubscribed.size(), 1, Patience);
        absent.setListeningPaused(true); // nothing taken from the queue
    }
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);

    BlockingClient sender(clientOptions("svc-a", {broker.port()}));
    QVERIFY(sender.connect(Patience).ok());
    const auto first = sender.send("svc-b", "payload with " + delivered + " inside", Patience);
    QVERIFY2(first.ok(), qPrintable(first.error()));
    const auto second = sender.send("svc-c", stored, Patience);
    QVERIFY2(second.ok(), qPrintable(second.error()));
    // Request/reply and extra fields go through the same envelope.
    QTRY_COMPARE_WITH_TIMEOUT(inbox.distinct(), 1, Patience);
    QVERIFY(inbox.payloadById.value(first.value()).contains(delivered)); // positive control

    // Stopped gracefully, so every log line and database page is written out.
    receiver.stop();
    sender.client().stop();
    QVERIFY(broker.terminate());

    QByteArray haystack = broker.output();
    QDirIterator files(broker.dataDir(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    QStringList looked;
    while (files.hasNext()) {
        QFile file(files.next());
        if (file.fileName().endsWith("config.toml"))
            continue;
        QVERIFY(file.open(QIODevice::ReadOnly));
        haystack += file.readAll();
        looked << QFileInfo(file).fileName();
    }
    if (postgres) {
        QSqlDatabase db = database->connection();
        QVERIFY2(db.isOpen(), qPrintable(db.lastError().text()));
        QSqlQuery tables(db);
        QVERIFY(tables.exec("SELECT table_schema, table_name FROM information_schema.tables "
                            "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN "
                            "('pg_catalog', 'information_schema')"));
        while (tables.next()) {
            const QString table = QStringLiteral("\"%1\".\"%2\"")
                                      .arg(tables.value(0).toString(), tables.value(1).toString());
            looked << table;
            QSqlQuery rows(db);
            QVERIFY2(rows.exec("SELECT * FROM " + table), qPrintable(rows.lastError().text()));
            while (rows.next()) {
                for (int i = 0; i < rows.record().count(); ++i) {
                    const QVariant value = rows.value(i);
                    haystack += value.typeId() == QMetaType::QByteArray ? value.toByteArray()
                                                                        : value.toString().toUtf8();
                    haystack += '\n';
                }
            }
        }
    }
    qInfo("searched %lld bytes: %s", qlonglong(haystack.size()), qPrintable(looked.join(", ")));

    // The search can find things: the stored message's id is there in the clear.
    QVERIFY2(haystack.contains(second.value().toUtf8()), "the stored message is not where we look");
    for (const QByteArray &secret : {delivered, stored}) {
        for (const QByteArray &form : forms(secret))
            QVERIFY2(!haystack.contains(form), form.constData());
    }
}

QTEST_GUILESS_MAIN(tst_NoPlaintext)
#include "tst_25_no_plaintext.moc"
