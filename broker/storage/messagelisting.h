#pragma once
// The metadata of the messages waiting in one queue, a page at a time, for the admin
// `queue_messages` command (docs/ADMIN-PROTOCOL.md). Keyset paging on the entry id (migration
// 10's (queue, id) index): a page of a queue with a million entries reads that page's rows,
// never the rest, and never an envelope (its size comes from the column, not its bytes).

#include <QDateTime>
#include <QList>
#include <QString>

#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

struct MessageListingQuery
{
    QString queue;
    qint64 afterId = 0; // entries with a larger id; 0 = from the oldest
    int limit = 100;
    QString filter; // substring of the sender CN or the routing key, case-insensitive; empty = all
};

struct MessageListingRow
{
    qint64 entryId = 0; // the queue entry's id: publish order, and the key of the next page
    QString messageId;
    QString sender; // the publishing connection's certificate CN
    QString exchange;
    QString routingKey;
    qint64 size = 0; // envelope bytes
    QDateTime published;
    bool delivered = false; // delivered at least once and not acknowledged
};

// A filtered page looks at most this many entries, so that a filter matching little in a long
// queue cannot hold the storage worker (and every publish behind it) for a whole-queue scan.
inline constexpr int MaxFilterScanEntries = 10000;

struct MessageListingPage
{
    QList<MessageListingRow> rows; // oldest first
    bool more = false;             // entries after nextAfterId may follow
    qint64 nextAfterId = 0;        // where the next page starts (when more)
};

Result<MessageListingPage> listQueueMessages(SqlSession &session, const MessageListingQuery &query);

} // namespace cmq::storage
