#pragma once
// Rate-limit buckets per CN and per IP: tokens against burst (drawn as bars), accepted and
// rejected requests, connections against their cap; rows near exhaustion are highlighted.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class RateLimitTableModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RateLimitTableModel)

public:
    enum Column {
        Scope,
        Key,
        Connections,
        GlobalTokens,
        GlobalRate,
        PublishTokens,
        PublishRate,
        Accepted,
        Rejected,
        ColumnCount
    };
    // Below this share of the burst (or above 1 - it for connections) a row counts as hot.
    static constexpr double NearExhaustion = 0.2;

    explicit RateLimitTableModel(QObject *parent = nullptr);

    void updateBuckets(const QJsonObject &rateLimits)
    {
        update(rateLimits.value("buckets").toArray());
    }
    bool nearExhaustion(int row) const { return nearExhaustion(rowObject(row)); }

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    QVariant extraData(const QJsonObject &row, int column, int role) const override;

private:
    static double fraction(const QJsonObject &bucket);
    // "tokens / burst", the tokens rounded.
    static QString tokensText(const QJsonObject &bucket);
    bool nearExhaustion(const QJsonObject &row) const;
};

} // namespace cmq::admingui
