#pragma once
// The ids of the last N messages handed to the application, so a redelivery (after a lost ack,
// a reconnect or a broker restart) is acknowledged again without reaching the application twice.

#include <QHash>
#include <QQueue>
#include <QString>

namespace cmq::client {

class DedupeWindow
{
public:
    explicit DedupeWindow(int capacity);

    bool contains(const QString &messageId) const { return m_ids.contains(messageId); }
    // Remembers an id; beyond capacity the oldest is forgotten. Re-adding a known id is a no-op.
    void add(const QString &messageId);
    int size() const { return int(m_order.size()); }
    int capacity() const { return m_capacity; }

private:
    int m_capacity;
    QHash<QString, char> m_ids;
    QQueue<QString> m_order;
};

} // namespace cmq::client
