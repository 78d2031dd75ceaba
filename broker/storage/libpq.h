#pragma once
// The few libpq calls the PostgreSQL publish path makes itself, on the connection QPSQL opened:
// a prepared statement with binary array parameters, which QtSql cannot express (QPSQL formats
// every bound value into the statement text, so PostgreSQL lexes, hex-decodes and plans each
// batch afresh). Resolved at run time from the libpq that the QPSQL plugin has loaded, so the
// broker needs neither libpq headers nor a link dependency of its own.

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace cmq::storage::pq {

struct Connection; // libpq's PGconn
struct ResultSet;  // libpq's PGresult
using Oid = unsigned int;

// libpq's ABI (libpq.so.5): stable since PostgreSQL 8.
enum ExecStatus { CommandOk = 1, TuplesOk = 2 };
constexpr Oid TextOid = 25;
constexpr Oid Int8Oid = 20;
constexpr Oid ByteaOid = 17;

struct Api
{
    ResultSet *(*prepare)(Connection *, const char *name, const char *query, int nParams,
                          const Oid *paramTypes);
    ResultSet *(*execPrepared)(Connection *, const char *name, int nParams,
                               const char *const *values, const int *lengths, const int *formats,
                               int resultFormat);
    ResultSet *(*execParams)(Connection *, const char *command, int nParams, const Oid *paramTypes,
                             const char *const *values, const int *lengths, const int *formats,
                             int resultFormat);
    int (*resultStatus)(const ResultSet *);
    char *(*resultErrorMessage)(const ResultSet *);
    char *(*resultErrorField)(const ResultSet *, int field); // field 'C': the SQLSTATE
    int (*ntuples)(const ResultSet *);
    char *(*getvalue)(const ResultSet *, int row, int column);
    int (*getlength)(const ResultSet *, int row, int column);
    int (*getisnull)(const ResultSet *, int row, int column);
    void (*clear)(ResultSet *);
};

// Null when libpq cannot be resolved or is switched off; callers then use plain QtSql.
const Api *api();

// On by default. Tests switch it off to exercise the QtSql fallbacks.
void setEnabled(bool enabled);

// The server's error message of a failed call, one line; "lost the connection" without one.
QString errorText(const Api &api, ResultSet *result);

// The PGconn behind an open QPSQL connection, or null.
Connection *connectionOf(const QSqlDatabase &db);

// libpq and the connection it drives, for one open QPSQL connection.
struct Link
{
    const Api *api = nullptr;
    Connection *connection = nullptr;
};

// Empty (null connection) when libpq cannot be resolved, is switched off, or `db` is not an
// open QPSQL connection.
Link linkOf(const QSqlDatabase &db);

// Runs the prepared statement `name` with `binary` parameters in PostgreSQL's binary format
// followed by `text` ones in text format; the caller clears the result.
ResultSet *execPrepared(const Link &link, const char *name, const QList<QByteArray> &binary,
                        const QList<QByteArray> &text = {});

// A one-dimensional array parameter in PostgreSQL's binary format (array_send).
class BinaryArray
{
public:
    explicit BinaryArray(Oid elementType) : m_elementType(elementType) {}
    void append(const QByteArray &element);
    void appendInt64(qint64 value);
    void appendNull();
    QByteArray finish() const;

private:
    Oid m_elementType;
    int m_count = 0;
    bool m_hasNull = false;
    QByteArray m_elements;
};

} // namespace cmq::storage::pq
