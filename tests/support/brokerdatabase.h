#pragma once
// The database a BrokerProcess writes, opened by a test to check rows: the broker's SQLite file
// (read-only) or its PostgreSQL database. Closed and removed on destruction.

#include <QSqlDatabase>
#include <QString>

namespace cmq::test {

class BrokerProcess;
class TestDatabase;

class BrokerDatabase
{
public:
    // `postgres` null: the broker runs on SQLite.
    BrokerDatabase(const BrokerProcess &broker, TestDatabase *postgres);
    ~BrokerDatabase();
    BrokerDatabase(const BrokerDatabase &) = delete;
    BrokerDatabase &operator=(const BrokerDatabase &) = delete;

    bool isOpen() const { return m_db.isOpen(); }
    QString error() const;
    // The first column of the first row of `sql` as a number; -1 (with a warning) on failure.
    qint64 number(const QString &sql);

private:
    QString m_name;
    QSqlDatabase m_db;
};

} // namespace cmq::test
