#pragma once
// The dead letters waiting in one queue as the broker reports them (`dead_letters`,
// docs/ADMIN-PROTOCOL.md): why each was dead-lettered, where from, when, after how many
// deliveries — never the envelope. Also the texts of the Requeue… action (`requeue`): the
// request that moves exactly the listed messages back, its confirmation and its result.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class DeadLetterModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeadLetterModel)

public:
    enum Column {
        MessageId,
        Reason,
        OriginalQueue,
        DeadLetteredAt,
        Deliveries,
        Sender,
        RoutingKey,
        Size,
        ColumnCount
    };
    // How many the view asks for; a queue holding more says so, and requeues these first.
    static constexpr int FetchCount = 1000;

    explicit DeadLetterModel(QObject *parent = nullptr);

    void setQueue(const QString &queue) { m_queue = queue; }
    QString queue() const { return m_queue; }
    void setFetchCount(int count) { m_fetchCount = count; }

    // `dead_letters <queue> <count>`; the reply goes to applyReply() with the same line.
    QString request() const;
    // False (nothing changes) for the reply to another queue's or an older request.
    bool applyReply(const QString &requestLine, const QJsonArray &deadLetters);
    bool isLoaded() const { return m_loaded; }
    // The broker may hold more than were asked for.
    bool mayHoldMore() const { return m_loaded && rowCount() >= m_fetchCount; }

    // `requeue <queue> <n>` for the n listed (the first n dead letters, the ones shown);
    // empty when none is listed.
    QString requeueRequest() const;
    // Names the queue, the count and where the messages go.
    QString requeueConfirmation() const;
    // The line for the broker's reply to requeueRequest() (ok or error).
    static QString requeueResult(bool ok, const QString &reply);
    // "rejected (nack … drop)" for "rejected", and so on; unknown reasons as the broker wrote.
    static QString reasonText(const QString &reason);

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;

private:
    QString m_queue;
    int m_fetchCount = FetchCount;
    bool m_loaded = false;
};

} // namespace cmq::admingui
