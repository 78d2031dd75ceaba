#include "admin/adminrequest.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "protocol/request.h"
#include "protocol/words.h"

namespace cmq::admin {

namespace {

// Ordered like the enum, so adminCommandName() can index it.
constexpr protocol::words::CommandWord<AdminCommand> commands[] = {
    {"help", AdminCommand::Help},
    {"metrics", AdminCommand::Metrics},
    {"json", AdminCommand::Json},
    {"queues", AdminCommand::Queues},
    {"exchanges", AdminCommand::Exchanges},
    {"bindings", AdminCommand::Bindings},
    {"connections", AdminCommand::Connections},
    {"ratelimits", AdminCommand::RateLimits},
    {"purge", AdminCommand::Purge},
    {"delete_queue", AdminCommand::DeleteQueue},
    {"disconnect", AdminCommand::Disconnect},
    {"reload", AdminCommand::Reload},
    {"watch", AdminCommand::Watch},
    {"unwatch", AdminCommand::Unwatch},
    {"audit", AdminCommand::Audit},
    {"requeue", AdminCommand::Requeue},
    {"dead_letters", AdminCommand::DeadLetters},
    {"queue_messages", AdminCommand::QueueMessages},
    {"definitions", AdminCommand::Definitions},
    {"definitions_import", AdminCommand::DefinitionsImport},
    {"talkers", AdminCommand::Talkers},
};
static_assert(std::size(commands) == static_cast<size_t>(AdminCommand::Unknown));

struct SectionEntry
{
    const char *name;
    Section section;
};

constexpr SectionEntry sections[] = {
    {"queues", Section::Queues},         {"exchanges", Section::Exchanges},
    {"bindings", Section::Bindings},     {"connections", Section::Connections},
    {"ratelimits", Section::RateLimits}, {"talkers", Section::Talkers},
};

// An echo of client input in an error line: at most 64 characters, cut at a character.
QByteArray shortText(QByteArrayView text)
{
    return QString::fromUtf8(text).left(64).toUtf8();
}

AdminParseResult error(const QByteArray &text)
{
    AdminParseResult result;
    result.errorReply = "Error: " + text;
    return result;
}

AdminParseResult ok(AdminRequest request)
{
    AdminParseResult result;
    result.ok = true;
    result.request = std::move(request);
    return result;
}

// A decimal number without sign; false when not one or above `max`.
bool parseNumber(QByteArrayView text, quint64 max, quint64 &value)
{
    if (text.isEmpty() || text.size() > 20)
        return false;
    value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
        const quint64 digit = quint64(c - '0');
        if (value > (max - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    return true;
}

AdminParseResult parseQueueArgument(AdminCommand command, const QList<QByteArrayView> &args)
{
    if (args.isEmpty())
        return error("Missing queue name");
    if (args.size() > 1)
        return error(QByteArray("Too many arguments for '") + adminCommandName(command) + "'");
    if (!protocol::isValidName(args[0])) {
        return error(args[0].size() > protocol::MaxNameLength
                         ? QByteArray("Invalid queue name: longer than 255 bytes")
                         : QByteArray("Invalid queue name: must not contain spaces or control "
                                      "characters"));
    }
    AdminRequest request;
    request.command = command;
    request.queue = QString::fromUtf8(args[0]);
    return ok(request);
}

constexpr const char *queueSorts[] = {
    "name",          "owner",          "ready",
    "unacked",       "depth",          "consumers",
    "bytes",         "counted",        "oldest_ready_age_ms",
    "published",     "delivered",      "acknowledged",
    "redelivered",   "evicted",        "expired",
    "dead_lettered", "inflight",       "max_length",
    "max_bytes",     "message_ttl_ms", "delivery_limit",
};
constexpr const char *connectionSorts[] = {
    "id",          "listener",     "cn",       "address",   "connected_at", "requests",
    "messages_in", "messages_out", "bytes_in", "bytes_out", "not_after",
};

template <size_t N> QStringList keyList(const char *const (&keys)[N])
{
    QStringList list;
    for (const char *key : keys)
        list.append(QString::fromLatin1(key));
    return list;
}

// A bucket's fields; `accepted` and `rejected` are its two buckets' sums (the console's columns).
constexpr const char *rateLimitSorts[] = {
    "scope",
    "key",
    "connections",
    "connection_limit",
    "idle_seconds",
    "global_tokens",
    "global_accepted",
    "global_rejected",
    "publish_tokens",
    "publish_accepted",
    "publish_rejected",
    "accepted",
    "rejected",
};

constexpr const char *pageOptionNames[] = {"filter", "sort", "order", "offset", "limit"};

// The lists that take page options: their name, the section that carries them, their sort
// keys and where a request keeps their page.
struct PagedList
{
    const char *name;
    Section section;
    const QStringList &(*sortKeys)();
    ListPage SnapshotPaging::*page;
};
const PagedList pagedLists[] = {
    {"queues", Section::Queues, &queueSortKeys, &SnapshotPaging::queues},
    {"connections", Section::Connections, &connectionSortKeys, &SnapshotPaging::connections},
    {"ratelimits", Section::RateLimits, &rateLimitSortKeys, &SnapshotPaging::ratelimits},
};

// One `<list>.<option>=<value>` argument into `paging`; an "Error: ..." text when it is not
// one. `seen` has a bit per list and option, so a repeated option is refused.
QByteArray parsePageOption(QByteArrayView arg, Sections allowed, SnapshotPaging &paging,
                           quint32 &seen)
{
    const qsizetype equals = arg.indexOf('=');
    const QByteArrayView name = arg.first(equals);
    const QByteArrayView value = arg.sliced(equals + 1);
    const qsizetype dot = name.indexOf('.');
    const QByteArrayView list = dot < 0 ? QByteArrayView() : name.first(dot);
    const QByteArrayView option = dot < 0 ? QByteArrayView() : name.sliced(dot + 1);
    const auto paged = std::find_if(std::begin(pagedLists), std::end(pagedLists),
                                    [&](const PagedList &l) { return list == l.name; });
    if (paged == std::end(pagedLists))
        return "Invalid page option '" + shortText(arg) +
               "': expected queues.<option>=<value>, connections.<option>=<value> or "
               "ratelimits.<option>=<value>";
    const auto known = std::find_if(std::begin(pageOptionNames), std::end(pageOptionNames),
                                    [&](const char *o) { return option == o; });
    if (known == std::end(pageOptionNames))
        return "Invalid page option '" + shortText(arg) +
               "': the options are filter, sort, order, offset and limit";
    if (!(allowed & paged->section))
        return "Page option '" + shortText(name) + "' for a list the watch leaves out";
    const quint32 bit =
        1u << (8 * (paged - std::begin(pagedLists)) + (known - std::begin(pageOptionNames)));
    if (seen & bit)
        return "Repeated page option '" + shortText(name) + "'";
    seen |= bit;
    ListPage &page = paging.*(paged->page);
    page.paged = true;
    quint64 number = 0;
    if (option == "filter") {
        if (value.isEmpty() || value.size() > MaxPageFilterBytes)
            return "Invalid filter: expected 1 to " + QByteArray::number(MaxPageFilterBytes) +
                   " bytes";
        page.filter = QString::fromUtf8(value);
    } else if (option == "sort") {
        const QStringList &keys = paged->sortKeys();
        page.sort = QString::fromUtf8(value);
        if (!keys.contains(page.sort))
            return "Invalid sort key '" + shortText(value) + "' for " + list.toByteArray() +
                   ": expected one of " + keys.join(QStringLiteral(", ")).toUtf8();
    } else if (option == "order") {
        if (value != "asc" && value != "desc")
            return "Invalid order '" + shortText(value) + "': expected asc or desc";
        page.descending = value == "desc";
    } else if (option == "offset") {
        if (!parseNumber(value, MaxPageOffset, number))
            return "Invalid offset: expected a number from 0 to " +
                   QByteArray::number(MaxPageOffset);
        page.offset = int(number);
    } else {
        if (!parseNumber(value, MaxPageRows, number) || number == 0)
            return "Invalid limit: expected a number from 1 to " + QByteArray::number(MaxPageRows);
        page.limit = int(number);
    }
    return {};
}

// The arguments of `json` and `watch` after the interval and sections: page options only; a
// word that is not one is one argument too many, as before paging.
AdminParseResult parsePageOptions(AdminRequest request, const QList<QByteArrayView> &args)
{
    quint32 seen = 0;
    for (const QByteArrayView arg : args) {
        if (!arg.contains('='))
            return error(QByteArray("Too many arguments for '") +
                         adminCommandName(request.command) + "'");
        const QByteArray problem = parsePageOption(arg, request.sections, request.paging, seen);
        if (!problem.isEmpty())
            return error(problem);
    }
    return ok(std::move(request));
}

AdminParseResult parseWatch(const QList<QByteArrayView> &args)
{
    if (args.isEmpty())
        return error("Missing interval");
    quint64 interval = 0;
    if (!parseNumber(args[0], MaxWatchIntervalMs, interval) || interval < MinWatchIntervalMs)
        return error("Invalid interval: expected milliseconds from 100 to 60000");
    AdminRequest request;
    request.command = AdminCommand::Watch;
    request.intervalMs = int(interval);
    const bool hasSections = args.size() > 1 && !args[1].contains('=');
    if (hasSections) {
        request.sections = {};
        for (const QByteArrayView name : args[1].toByteArray().split(',')) {
            const auto found = std::find_if(std::begin(sections), std::end(sections),
                                            [&](const SectionEntry &e) { return name == e.name; });
            if (found == std::end(sections)) {
                return error("Invalid section '" + shortText(name) +
                             "': expected queues, exchanges, bindings, connections, "
                             "ratelimits or talkers");
            }
            request.sections |= found->section;
        }
    }
    return parsePageOptions(std::move(request), args.mid(hasSections ? 2 : 1));
}

// requeue <queue> [n], dead_letters <queue> [n]
AdminParseResult parseQueueAndCount(AdminCommand command, const QList<QByteArrayView> &args,
                                    int defaultCount, int maxCount)
{
    if (args.size() > 2)
        return error(QByteArray("Too many arguments for '") + adminCommandName(command) + "'");
    AdminParseResult result = parseQueueArgument(command, args.mid(0, 1));
    if (!result.ok)
        return result;
    result.request.count = defaultCount;
    if (args.size() < 2)
        return result;
    quint64 count = 0;
    if (!parseNumber(args[1], quint64(maxCount), count) || count == 0)
        return error("Invalid message count: expected a number from 1 to " +
                     QByteArray::number(maxCount));
    result.request.count = int(count);
    return result;
}

AdminParseResult parseAudit(const QList<QByteArrayView> &args)
{
    if (args.size() > 1)
        return error("Too many arguments for 'audit'");
    AdminRequest request;
    request.command = AdminCommand::Audit;
    request.count = DefaultAuditEntries;
    if (!args.isEmpty()) {
        quint64 count = 0;
        if (!parseNumber(args[0], MaxAuditEntries, count) || count == 0)
            return error("Invalid entry count: expected a number from 1 to " +
                         QByteArray::number(MaxAuditEntries));
        request.count = int(count);
    }
    return ok(request);
}

AdminParseResult parseQueueMessages(const QList<QByteArrayView> &args)
{
    if (args.isEmpty())
        return error("Missing queue name");
    if (args.size() > 4)
        return error("Too many arguments for 'queue_messages'");
    AdminParseResult parsed = parseQueueArgument(AdminCommand::QueueMessages, args.first(1));
    if (!parsed.ok)
        return parsed;
    AdminRequest &request = parsed.request;
    request.count = DefaultMessagePageRows;
    if (args.size() > 1 &&
        !parseNumber(args[1], std::numeric_limits<qint64>::max(), request.afterId))
        return error("Invalid after_id '" + shortText(args[1]) +
                     "': expected an entry id (0 = from the oldest)");
    if (args.size() > 2) {
        quint64 rows = 0;
        if (!parseNumber(args[2], MaxMessagePageRows, rows) || rows == 0)
            return error("Invalid limit: expected a number from 1 to " +
                         QByteArray::number(MaxMessagePageRows));
        request.count = int(rows);
    }
    if (args.size() > 3)
        request.filter = QString::fromUtf8(args[3]);
    return parsed;
}

// The JSON is the rest of the line, as it is (JSON may hold blanks in strings).
AdminParseResult parseDefinitionsImport(QByteArrayView line, QByteArrayView word)
{
    const QByteArrayView rest = line.trimmed().sliced(word.size()).trimmed();
    if (rest.isEmpty())
        return error("Missing definitions (one JSON object on the line)");
    AdminRequest request;
    request.command = AdminCommand::DefinitionsImport;
    request.definitions = rest.toByteArray();
    return ok(request);
}

} // namespace

const char *adminCommandName(AdminCommand command)
{
    if (command == AdminCommand::Unknown)
        return "unknown";
    return commands[static_cast<size_t>(command)].name.data();
}

QStringList adminCommandNames()
{
    QStringList names;
    for (const auto &entry : commands)
        names.append(QString::fromLatin1(entry.name.data(), entry.name.size()));
    names.sort();
    return names;
}

const QStringList &queueSortKeys()
{
    static const QStringList keys = keyList(queueSorts);
    return keys;
}

const QStringList &connectionSortKeys()
{
    static const QStringList keys = keyList(connectionSorts);
    return keys;
}

const QStringList &rateLimitSortKeys()
{
    static const QStringList keys = keyList(rateLimitSorts);
    return keys;
}

static void appendPageArguments(QStringList &out, const char *list, const ListPage &page)
{
    if (!page.paged)
        return;
    const QString prefix = QString::fromLatin1(list) + u'.';
    if (!page.filter.isEmpty())
        out.append(prefix + QStringLiteral("filter=") + page.filter);
    if (!page.sort.isEmpty())
        out.append(prefix + QStringLiteral("sort=") + page.sort);
    if (page.descending)
        out.append(prefix + QStringLiteral("order=desc"));
    if (page.offset != 0)
        out.append(prefix + QStringLiteral("offset=") + QString::number(page.offset));
    // Always written: a paged list with every other option at its default still says so.
    out.append(prefix + QStringLiteral("limit=") + QString::number(page.limit));
}

QString pagingArguments(const SnapshotPaging &paging)
{
    QStringList out;
    appendPageArguments(out, "queues", paging.queues);
    appendPageArguments(out, "connections", paging.connections);
    appendPageArguments(out, "ratelimits", paging.ratelimits);
    return out.join(u' ');
}

QStringList sectionNames(Sections selected)
{
    QStringList names;
    for (const SectionEntry &entry : sections) {
        if (selected & entry.section)
            names.append(QString::fromLatin1(entry.name));
    }
    return names;
}

AdminParseResult parseAdminRequest(QByteArrayView line)
{
    // Spaces and tabs separate words (protocol/words.h).
    const QList<QByteArrayView> all = protocol::words::split<protocol::words::isBlank>(line);
    if (all.isEmpty())
        return error("Empty request");
    const QByteArrayView word = all.first();
    const QList<QByteArrayView> args = all.mid(1);
    const AdminCommand command = protocol::words::lookup(commands, word, AdminCommand::Unknown);
    if (command == AdminCommand::Unknown) {
        // A word the data listener knows is refused by name: the two protocols never mix.
        if (protocol::parseRequest(word).status != protocol::ParseStatus::UnknownCommand)
            return error("'" + word.toByteArray() +
                         "' is a data-path command; the admin listener accepts only admin "
                         "commands");
        return error("Unknown admin command '" + shortText(word) + "' (try help)");
    }
    switch (command) {
    case AdminCommand::Purge:
    case AdminCommand::DeleteQueue:
        return parseQueueArgument(command, args);
    case AdminCommand::Disconnect: {
        if (args.isEmpty())
            return error("Missing connection id");
        if (args.size() > 1)
            return error("Too many arguments for 'disconnect'");
        quint64 id = 0;
        if (!parseNumber(args[0], std::numeric_limits<quint64>::max(), id) || id == 0)
            return error("Invalid connection id '" + shortText(args[0]) + "'");
        AdminRequest request;
        request.command = command;
        request.connectionId = id;
        return ok(request);
    }
    case AdminCommand::Watch:
        return parseWatch(args);
    case AdminCommand::Json: {
        AdminRequest request;
        request.command = command;
        return parsePageOptions(std::move(request), args);
    }
    case AdminCommand::Audit:
        return parseAudit(args);
    case AdminCommand::Requeue:
        return parseQueueAndCount(command, args, 0, MaxRequeueMessages);
    case AdminCommand::DeadLetters:
        return parseQueueAndCount(command, args, DefaultDeadLetterEntries, MaxDeadLetterEntries);
    case AdminCommand::QueueMessages:
        return parseQueueMessages(args);
    case AdminCommand::DefinitionsImport:
        return parseDefinitionsImport(line, word);
    default:
        if (!args.isEmpty())
            return error(QByteArray("Too many arguments for '") + adminCommandName(command) + "'");
        AdminRequest request;
        request.command = command;
        return ok(request);
    }
}

} // namespace cmq::admin
