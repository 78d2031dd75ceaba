#pragma once
// Open connections (both listeners) with their certificate details; certificates that expire
// within the warning window are highlighted so operators renew them in time.

#include <QDateTime>

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class ConnectionTableModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConnectionTableModel)

public:
    enum Column {
        Id,
        Listener,
        Cn,
        Roles,
        Address,
        ConnectedSince,
        MessagesIn, // traffic before the certificate details, which are long and read less
        MessagesOut,
        BytesIn,
        BytesOut,
        Expiry,
        Subject,
        Issuer,
        Serial,
        ColumnCount
    };
    static constexpr int ExpiryWarningDays = 30;

    explicit ConnectionTableModel(QObject *parent = nullptr);

    // The clock expiry is judged against; tests pin it.
    void setNow(const QDateTime &now) { m_now = now; }
    bool expiresSoon(int row) const;

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    QVariant extraData(const QJsonObject &row, int column, int role) const override;

private:
    bool expiresSoon(const QJsonObject &row) const;
    QDateTime m_now;
};

} // namespace cmq::admingui
