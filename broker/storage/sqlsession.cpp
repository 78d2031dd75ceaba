#include "sqlsession.h"

#include <QSqlDriver>
#include <QSqlError>
#include <QSqlField>

namespace cmq::storage {

SqlSession::SqlSession(QSqlDatabase db, const Dialect &dialect)
    : m_db(std::move(db)), m_dialect(&dialect)
{
    if (dialect.isPostgres())
        m_libpq = pq::linkOf(m_db);
}

Status SqlSession::prepareOnce(const char *name, const char *statement)
{
    if (m_prepared.contains(name))
        return success();
    const pq::Link *link = libpq();
    if (!link)
        return failure(
            QStringLiteral("no libpq connection to prepare %1 on").arg(QString::fromLatin1(name)));
    const pq::Api &api = *link->api;
    pq::ResultSet *prepared = api.prepare(link->connection, name, statement, 0, nullptr);
    // 42P05: prepared earlier on this connection by another session object; same text.
    const bool ok = prepared && (api.resultStatus(prepared) == pq::CommandOk ||
                                 qstrcmp(api.resultErrorField(prepared, 'C'), "42P05") == 0);
    const QString error = ok ? QString() : pq::errorText(api, prepared);
    if (prepared)
        api.clear(prepared);
    if (!ok)
        return failure(error);
    m_prepared.insert(name);
    return success();
}

QString SqlSession::text(const QString &value) const
{
    QSqlField field(QString(), QMetaType(QMetaType::QString));
    if (value.contains(QChar(0))) {
        QString cleaned = value;
        cleaned.replace(QChar(0), QChar::ReplacementCharacter);
        field.setValue(cleaned);
    } else {
        field.setValue(value.isNull() ? QStringLiteral("") : value); // empty, not NULL
    }
    return m_db.driver()->formatValue(field);
}

QString SqlSession::bytes(const QByteArray &value) const
{
    return m_dialect->bytesPrefix + QLatin1StringView(value.toHex()) + u'\'' +
           m_dialect->bytesSuffix;
}

QString SqlSession::time(const QDateTime &value) const
{
    return u'\'' + value.toUTC().toString(Qt::ISODateWithMs) + u'\'' + m_dialect->timeSuffix;
}

QDateTime SqlSession::toTime(const QVariant &value) const
{
    if (value.isNull())
        return {};
    if (value.metaType().id() == QMetaType::QDateTime)
        return value.toDateTime().toUTC();
    return QDateTime::fromString(value.toString(), Qt::ISODateWithMs).toUTC();
}

QSqlQuery SqlSession::newQuery(bool forwardOnly) const
{
    QSqlQuery query(m_db);
    query.setForwardOnly(forwardOnly);
    return query;
}

Status SqlSession::run(QSqlQuery &query, const QString &sql) const
{
    if (!query.exec(sql))
        return failure(errorText(query.lastError()));
    return success();
}

Status SqlSession::finish(QSqlQuery &query) const
{
    while (query.nextResult()) {
    }
    if (query.lastError().isValid())
        return failure(errorText(query.lastError()));
    return success();
}

Status SqlSession::exec(const QString &sql) const
{
    QSqlQuery query = newQuery();
    if (Status st = run(query, sql); !st)
        return st;
    return finish(query);
}

Status SqlSession::execTransaction(const QStringList &statements)
{
    if (statements.isEmpty())
        return success();
    if (m_dialect->scriptIsTransaction)
        return exec(statements.join(QStringLiteral(";\n")));

    if (Status st = begin(); !st)
        return st;
    for (const QString &sql : statements) {
        if (Status st = exec(sql); !st) {
            rollback();
            return st;
        }
    }
    return commit();
}

Status SqlSession::begin()
{
    if (!m_db.transaction())
        return failure(errorText(m_db.lastError()));
    return success();
}

Status SqlSession::commit()
{
    if (!m_db.commit()) {
        const QString error = errorText(m_db.lastError());
        rollback();
        return failure(error);
    }
    return success();
}

void SqlSession::rollback()
{
    m_db.rollback();
}

QString SqlSession::errorText(const QSqlError &error)
{
    QString text = error.databaseText().trimmed();
    if (text.isEmpty())
        text = error.driverText().trimmed();
    // libpq appends LINE/DETAIL/HINT lines; keep DETAIL (it names the offending key) only.
    QStringList lines = text.split(u'\n', Qt::SkipEmptyParts);
    QString result;
    for (const QString &raw : lines) {
        const QString line = raw.simplified();
        if (line.startsWith(u"LINE ") || line.startsWith(u"HINT:") || line == u"^")
            continue;
        if (line.startsWith(u'^'))
            continue;
        if (!result.isEmpty())
            result += u' ';
        result += line;
    }
    if (result.isEmpty())
        result = QStringLiteral("unknown database error");
    return result;
}

} // namespace cmq::storage
