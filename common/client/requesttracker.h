#pragma once
// Requests waiting for their reply: matched by correlation id, each with its own deadline.

#include <functional>
#include <memory>

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include "util/result.h"

namespace cmq::client {

class RequestTracker final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RequestTracker)

public:
    using Callback = std::function<void(const Result<QByteArray> &reply)>;

    explicit RequestTracker(QObject *parent = nullptr);
    ~RequestTracker() override;

    void add(const QString &correlationId, const QString &messageId, const QString &receiver,
             int timeoutMs, Callback callback);
    enum class Resolution {
        Resolved,    // handed to its request
        Unknown,     // no request waits for it (late or unknown)
        WrongSender, // not from the service the request went to; the request keeps waiting
    };
    // Hands the reply to its request. `sender` is the broker's attested sender of the reply;
    // empty when the broker attests none (an older one): then it is taken on trust.
    Resolution resolve(const QString &correlationId, const QByteArray &payload,
                       const QString &sender = {});
    // Ends a request early with an error (its message was refused).
    void failByMessageId(const QString &messageId, const QString &error);
    int pendingCount() const { return int(m_pending.size()); }

Q_SIGNALS:
    // The request gave up waiting; its message, if still unsent, can be withdrawn.
    void timedOut(const QString &messageId);

private:
    struct Pending
    {
        QString messageId;
        QString receiver; // who may answer
        Callback callback;
        std::unique_ptr<QTimer> timer;
    };
    void complete(const QString &correlationId, const Result<QByteArray> &result);

    QHash<QString, std::shared_ptr<Pending>> m_pending; // by correlation id
};

} // namespace cmq::client
