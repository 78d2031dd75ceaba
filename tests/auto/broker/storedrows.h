#pragma once
// The rows a storage session left, in a form both drivers share (for the parity tests): times
// as milliseconds since the epoch, envelopes as hex, the delivered flag as 0/1, queue entry ids
// as their rank. Metadata and bodies are sorted: the two databases collate text differently.

#include <functional>

#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>

#include "storage/sqlsession.h"

namespace cmq::test {

inline QString hex(const QVariant &value)
{
    return QString::fromLatin1(value.toByteArray().toHex());
}

inline QStringList storedRows(storage::SqlSession &session)
{
    QStringList out;
    auto each = [&](const QString &sql, const std::function<QString(const QSqlQuery &)> &row,
                    bool sorted) {
        QSqlQuery query(session.database());
        if (!query.exec(sql)) {
            out << QStringLiteral("ERROR: ") + query.lastError().text();
            return;
        }
        QStringList section;
        while (query.next())
            section << row(query);
        if (sorted)
            section.sort();
        out << section;
    };
    auto time = [&](const QVariant &value) {
        const QDateTime t = session.toTime(value);
        return t.isValid() ? QString::number(t.toMSecsSinceEpoch()) : QStringLiteral("NULL");
    };
    each(
        QStringLiteral("SELECT message_id, client_id, exchange, routing_key, sent_time, "
                       "delivered_time, acknowledged_time, evicted_time, status, commit_token "
                       "FROM message_metadata"),
        [&](const QSqlQuery &q) {
            return QStringList{
                QStringLiteral("metadata"), q.value(0).toString(), q.value(1).toString(),
                q.value(2).toString(),      q.value(3).toString(), time(q.value(4)),
                time(q.value(5)),           time(q.value(6)),      time(q.value(7)),
                q.value(8).toString(),      q.value(9).toString()}
                .join(u'|');
        },
        true);
    each(
        QStringLiteral("SELECT message_id, envelope FROM message_bodies"),
        [&](const QSqlQuery &q) {
            return QStringLiteral("body|") + q.value(0).toString() + u'|' + hex(q.value(1));
        },
        true);
    int rank = 0;
    each(
        QStringLiteral("SELECT queue, message_id, delivered, envelope FROM queue_entries "
                       "ORDER BY id"),
        [&](const QSqlQuery &q) {
            // A message held by one queue has its envelope here, not in message_bodies.
            return QStringLiteral("entry|%1|%2|%3|%4|%5")
                .arg(rank++)
                .arg(q.value(0).toString(), q.value(1).toString())
                .arg(q.value(2).toBool() ? 1 : 0)
                .arg(q.value(3).isNull() ? QStringLiteral("NULL") : hex(q.value(3)));
        },
        false);
    return out;
}

} // namespace cmq::test
