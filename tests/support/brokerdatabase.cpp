#include "brokerdatabase.h"

#include <QAtomicInt>
#include <QSqlError>
#include <QSqlQuery>

#include "brokerprocess.h"
#include "testpostgres.h"

namespace cmq::test {

BrokerDatabase::BrokerDatabase(const BrokerProcess &broker, TestDatabase *postgres)
{
    if (postgres) {
        m_db = postgres->connection();
        return;
    }
    static QAtomicInt serial;
    m_name = QStringLiteral("broker-database-%1").arg(serial.fetchAndAddRelaxed(1));
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
    m_db.setDatabaseName(broker.dataDir() + QStringLiteral("/data/ciphermq.db"));
    m_db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
    if (!m_db.open())
        qWarning("cannot open the broker's SQLite file: %s", qPrintable(error()));
}

BrokerDatabase::~BrokerDatabase()
{
    if (m_name.isEmpty())
        return; // the TestDatabase's own connection
    m_db.close();
    m_db = QSqlDatabase();
    QSqlDatabase::removeDatabase(m_name);
}

QString BrokerDatabase::error() const
{
    return m_db.lastError().text();
}

qint64 BrokerDatabase::number(const QString &sql)
{
    QSqlQuery query(m_db);
    if (!query.exec(sql) || !query.next()) {
        qWarning("%s: %s", qPrintable(sql), qPrintable(query.lastError().text()));
        return -1;
    }
    return query.value(0).toLongLong();
}

} // namespace cmq::test
