#include "sqlsession.h"

#include <QSqlDriver>
#include <QSqlError>
#include <QSqlField>

#include "sqliteapi.h"

namespace cmq::storage {

SqlSession::SqlSession(QSqlDatabase db, const Dialect &dialect)
    : m_db(std::move(db)), m_dialect(&dialect)
{
    if (dialect.isPostgres())
        m_libpq = pq::linkOf(m_db);
    else
        m_sqliteStatements = std::make_shared<SqliteStatementCache>();
}

void SqlSession::close()
{
    if (m_sqliteStatements) {
        m_sqliteStatements->clear();
        m_sqliteStatements->attach(nullptr, nullptr); // a reopened connection is another one
    }
    m_db.close();
}

SqliteStatementCache *SqlSession::sqliteStatements()
{
    if (!m_sqliteStatements)
        return nullptr;
    const lite::Api *api = lite::api(); // null when switched off: the QtSql fallback
    if (!api)
        return nullptr;
    if (!m_sqliteStatements->isAttached()) {
        lite::Database *db = lite::connectionOf(m_db);
        if (!db)
            return nullptr;
        m_sqliteStatements->attach(api, db);
    }
    return m_sqliteStatements.get();
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
    return u'\'' + isoTime(value) + u'\'' + m_dialect->timeSuffix;
}

QString SqlSession::isoTime(const QDateTime &value)
{
    // QDateTime::toString formats through QString::asprintf and the calendar's locale-aware
    // code: on SQLite, where every stored time is text, that was a twentieth of the storage
    // thread at W=256. Years 1970 to 9999 are formatted here; anything else is left to Qt.
    constexpr qint64 msPerDay = 86'400'000;
    constexpr qint64 endOfYear9999 = 253'402'300'800'000;
    const qint64 ms = value.isValid() ? value.toMSecsSinceEpoch() : -1;
    if (ms < 0 || ms >= endOfYear9999)
        return value.isValid() ? value.toUTC().toString(Qt::ISODateWithMs) : QString();
    // The proleptic Gregorian date of a day count (H. Hinnant's civil_from_days).
    const qint64 days = ms / msPerDay + 719'468;
    const qint64 era = days / 146'097;
    const qint64 dayOfEra = days - era * 146'097;
    const qint64 yearOfEra =
        (dayOfEra - dayOfEra / 1'460 + dayOfEra / 36'524 - dayOfEra / 146'096) / 365;
    const qint64 dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    const qint64 monthIndex = (5 * dayOfYear + 2) / 153; // March = 0
    const int day = int(dayOfYear - (153 * monthIndex + 2) / 5 + 1);
    const int month = int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9);
    const int year = int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0));
    const qint64 msOfDay = ms % msPerDay;
    char text[24]; // yyyy-MM-ddTHH:mm:ss.zzzZ
    auto put = [&](int at, qint64 number, int width) {
        for (int i = width - 1; i >= 0; --i, number /= 10)
            text[at + i] = char('0' + number % 10);
    };
    put(0, year, 4);
    text[4] = '-';
    put(5, month, 2);
    text[7] = '-';
    put(8, day, 2);
    text[10] = 'T';
    put(11, msOfDay / 3'600'000, 2);
    text[13] = ':';
    put(14, msOfDay / 60'000 % 60, 2);
    text[16] = ':';
    put(17, msOfDay / 1'000 % 60, 2);
    text[19] = '.';
    put(20, msOfDay % 1'000, 3);
    text[23] = 'Z';
    return QString::fromLatin1(text, sizeof text);
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
