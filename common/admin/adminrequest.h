#pragma once
// The commands of the admin protocol (docs/ADMIN-PROTOCOL.md) and a pure parser for one
// request line. Shared by the broker (server side) and the admin clients, so both agree on
// names, arguments and error texts.

#include <QByteArray>
#include <QByteArrayView>
#include <QFlags>
#include <QList>
#include <QString>
#include <QStringList>

namespace cmq::admin {

enum class AdminCommand {
    Help,
    Metrics,
    Json,
    Queues,
    Exchanges,
    Bindings,
    Connections,
    RateLimits,
    Purge,
    DeleteQueue,
    Disconnect,
    Reload,
    Watch,
    Unwatch,
    Audit,
    Requeue,
    DeadLetters,
    QueueMessages,
    Definitions,
    DefinitionsImport,
    Talkers,
    Unknown,
};

// The list sections of a snapshot a `watch` may select.
enum class Section : quint8 {
    Queues = 0x01,
    Exchanges = 0x02,
    Bindings = 0x04,
    Connections = 0x08,
    RateLimits = 0x10,
    Talkers = 0x20,
};
Q_DECLARE_FLAGS(Sections, Section)
Q_DECLARE_OPERATORS_FOR_FLAGS(Sections)
inline constexpr Sections AllSections = Sections(0x3F);

inline constexpr int MinWatchIntervalMs = 100;
inline constexpr int MaxWatchIntervalMs = 60000;
inline constexpr qsizetype MaxRequestLineBytes = 4096;
// `audit [n]`: how many entries when n is left out, and the most one request may ask for.
inline constexpr int DefaultAuditEntries = 100;
inline constexpr int MaxAuditEntries = 100000;
// `requeue <queue> [n]`: the most dead letters one request may name (left out: all of them).
inline constexpr int MaxRequeueMessages = 1000000;
// `dead_letters <queue> [n]`: how many when n is left out, and the most one request may show.
inline constexpr int DefaultDeadLetterEntries = 100;
inline constexpr int MaxDeadLetterEntries = 10000;
// `queue_messages <queue> [after_id] [limit] [filter]`: rows per page by default and at most.
inline constexpr int DefaultMessagePageRows = 100;
inline constexpr int MaxMessagePageRows = 1000;

// Page options of a snapshot's queue, connection, rate-limit bucket and talker lists (`json`,
// `watch`), written `<list>.<option>=<value>` (docs/ADMIN-PROTOCOL.md, "Paging"): a console
// with 50,000 queues asks for the rows it shows instead of all of them.
inline constexpr int DefaultPageRows = 200;
inline constexpr int MaxPageRows = 10000;
inline constexpr int MaxPageOffset = 100000000;
inline constexpr int MaxPageFilterBytes = 255;

struct ListPage
{
    bool paged = false; // some option was given; otherwise the whole list, as before
    QString filter;     // case-insensitive substring (queues: name or owner; connections: cn,
                        // address or id; rate-limit buckets: key; talkers: cn); empty
                        // matches every row
    QString sort;       // one of queueSortKeys() / connectionSortKeys() / rateLimitSortKeys() /
                        // talkerSortKeys(); empty: name / id / scope / cn
    bool descending = false;
    int offset = 0;
    int limit = DefaultPageRows;
    bool operator==(const ListPage &) const = default;
};

struct SnapshotPaging
{
    ListPage queues;
    ListPage connections;
    ListPage ratelimits; // the buckets of the `ratelimits` object
    ListPage talkers;
    bool isPaged() const
    {
        return queues.paged || connections.paged || ratelimits.paged || talkers.paged;
    }
    bool operator==(const SnapshotPaging &) const = default;
};

struct AdminRequest
{
    AdminCommand command = AdminCommand::Unknown;
    QString queue;                   // purge, delete_queue, requeue, dead_letters
    quint64 connectionId = 0;        // disconnect
    int intervalMs = 0;              // watch
    Sections sections = AllSections; // watch; talkers: Talkers (what page options may name)
    int count = 0;       // audit, dead_letters; requeue (0 = all); queue_messages: the page's rows
    quint64 afterId = 0; // queue_messages: entries after this id
    QString filter;      // queue_messages: sender CN or routing key contains it
    QByteArray definitions; // definitions_import: one JSON object
    SnapshotPaging paging;  // json, watch
};

struct AdminParseResult
{
    bool ok = false;
    AdminRequest request;
    QByteArray errorReply; // the whole "Error: ..." line without "\n" when !ok
};

// One request line without its terminator (valid UTF-8). Leading/trailing spaces ignored.
AdminParseResult parseAdminRequest(QByteArrayView line);

// The wire name ("delete_queue"); "unknown" for Unknown.
const char *adminCommandName(AdminCommand command);
// Every command name, sorted (the `help` reply).
QStringList adminCommandNames();
// "queues", "connections", ... in a fixed order.
QStringList sectionNames(Sections sections);
// What a paged list may be sorted by: fields of its objects ("depth" = ready + unacked).
const QStringList &queueSortKeys();
const QStringList &connectionSortKeys();
const QStringList &rateLimitSortKeys();
// A talker's fields and its recent rates ("publish_rate", ...).
const QStringList &talkerSortKeys();
// The page options of `paging` as request arguments ("queues.sort=ready queues.limit=200"),
// empty when nothing is paged; options left at their defaults are left out.
QString pagingArguments(const SnapshotPaging &paging);

} // namespace cmq::admin
