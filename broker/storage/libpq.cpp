#include "libpq.h"

#include <atomic>

#include <QSqlDriver>
#include <QVarLengthArray>
#include <QVariant>
#include <QtEndian>

#include "loadedlibrary.h"
#include "storagelog.h"

namespace cmq::storage::pq {

namespace {

Api resolve(bool *ok)
{
    Api api{};
    LoadedLibrary library(QStringLiteral("pq"), 5);
    auto get = [&](auto &function, const char *name) { library.get(function, name); };
    get(api.prepare, "PQprepare");
    get(api.execPrepared, "PQexecPrepared");
    get(api.execParams, "PQexecParams");
    get(api.resultStatus, "PQresultStatus");
    get(api.resultErrorMessage, "PQresultErrorMessage");
    get(api.resultErrorField, "PQresultErrorField");
    get(api.ntuples, "PQntuples");
    get(api.getvalue, "PQgetvalue");
    get(api.getlength, "PQgetlength");
    get(api.getisnull, "PQgetisnull");
    get(api.clear, "PQclear");
    *ok = library.ok();
    if (!*ok) {
        qCWarning(lcStorage).noquote()
            << "libpq not resolvable, using plain QtSql statements only:" << library.errorString();
    }
    return api;
}

void appendInt32(QByteArray &out, qint32 value)
{
    const qint32 big = qToBigEndian(value);
    out.append(reinterpret_cast<const char *>(&big), sizeof big);
}

std::atomic<bool> g_enabled{true};

} // namespace

const Api *api()
{
    return resolvedOnce<Api, resolve>(g_enabled);
}

void setEnabled(bool enabled)
{
    g_enabled = enabled;
}

QString errorText(const Api &api, ResultSet *result)
{
    const QString text =
        result ? QString::fromUtf8(api.resultErrorMessage(result)).simplified() : QString();
    return text.isEmpty() ? QStringLiteral("lost the connection to PostgreSQL") : text;
}

Connection *connectionOf(const QSqlDatabase &db)
{
    // The pattern QSqlDriver::handle() documents for QPSQL; Qt 6 names the type after the
    // struct behind libpq's typedef.
    const QVariant handle = db.driver() ? db.driver()->handle() : QVariant();
    if (!handle.isValid() ||
        (qstrcmp(handle.typeName(), "pg_conn*") != 0 && qstrcmp(handle.typeName(), "PGconn*") != 0))
        return nullptr;
    return *static_cast<Connection *const *>(handle.constData());
}

Link linkOf(const QSqlDatabase &db)
{
    const Api *resolved = api();
    Connection *connection = resolved ? connectionOf(db) : nullptr;
    return connection ? Link{resolved, connection} : Link{};
}

ResultSet *execPrepared(const Link &link, const char *name, const QList<QByteArray> &binary,
                        const QList<QByteArray> &text)
{
    const qsizetype count = binary.size() + text.size();
    QVarLengthArray<const char *, 16> values(count);
    QVarLengthArray<int, 16> lengths(count);
    QVarLengthArray<int, 16> formats(count);
    for (qsizetype i = 0; i < count; ++i) {
        const bool isBinary = i < binary.size();
        const QByteArray &value = isBinary ? binary[i] : text[i - binary.size()];
        values[i] = value.constData();
        lengths[i] = isBinary ? int(value.size()) : 0; // text parameters end at their NUL
        formats[i] = isBinary ? 1 : 0;
    }
    return link.api->execPrepared(link.connection, name, int(count), values.constData(),
                                  lengths.constData(), formats.constData(), 0);
}

void BinaryArray::append(const QByteArray &element)
{
    appendInt32(m_elements, qint32(element.size()));
    m_elements.append(element);
    ++m_count;
}

void BinaryArray::appendInt64(qint64 value)
{
    appendInt32(m_elements, 8);
    const qint64 big = qToBigEndian(value);
    m_elements.append(reinterpret_cast<const char *>(&big), sizeof big);
    ++m_count;
}

void BinaryArray::appendNull()
{
    appendInt32(m_elements, -1); // a NULL element is its length alone
    m_hasNull = true;
    ++m_count;
}

QByteArray BinaryArray::finish() const
{
    QByteArray out;
    out.reserve(20 + m_elements.size());
    if (m_count == 0) { // PostgreSQL's empty array has no dimensions
        appendInt32(out, 0);
        appendInt32(out, 0);
        appendInt32(out, qint32(m_elementType));
        return out;
    }
    appendInt32(out, 1); // dimensions
    appendInt32(out, m_hasNull ? 1 : 0);
    appendInt32(out, qint32(m_elementType));
    appendInt32(out, m_count);
    appendInt32(out, 1); // lower bound
    out.append(m_elements);
    return out;
}

} // namespace cmq::storage::pq
