#pragma once
// The Audit tab: the broker's audit trail of admin actions (the `audit` command,
// docs/ADMIN-PROTOCOL.md), one row per entry keyed by its id; failed and refused actions are
// highlighted. Sorted newest first by the view.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class AuditTableModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AuditTableModel)

public:
    enum Column { Id, Time, Admin, Address, Action, Target, Result, Detail, ColumnCount };
    // Entries the console asks for: enough for an operator's screen, bounded for the broker.
    static constexpr int FetchCount = 1000;

    explicit AuditTableModel(QObject *parent = nullptr);

    // Whether the row records an action that did not happen (error or refused).
    bool isFailure(int row) const;

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    QVariant extraData(const QJsonObject &row, int column, int role) const override;
};

} // namespace cmq::admingui
