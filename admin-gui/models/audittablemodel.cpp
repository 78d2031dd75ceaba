#include "models/audittablemodel.h"

#include <QBrush>
#include <QDateTime>

#include "models/palettecolors.h"

namespace cmq::admingui {

AuditTableModel::AuditTableModel(QObject *parent) : JsonTableModel(parent)
{
}

QString AuditTableModel::keyOf(const QJsonObject &row) const
{
    return QString::number(row.value(u"id").toInteger());
}

QStringList AuditTableModel::headers() const
{
    return {tr("#"),      tr("Time (UTC)"), tr("Admin"),  tr("Address"),
            tr("Action"), tr("Target"),     tr("Result"), tr("Detail")};
}

bool AuditTableModel::isFailure(int row) const
{
    return rowObject(row).value(u"result").toString() != QLatin1String("ok");
}

QVariant AuditTableModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case Id:
        return row.value(u"id").toInteger();
    case Time: {
        // ISO text sorts as time; shown without the date's "T" and the zone letter.
        const QDateTime time =
            QDateTime::fromString(row.value(u"time").toString(), Qt::ISODateWithMs);
        return time.isValid() ? time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                              : row.value(u"time").toString();
    }
    case Admin:
        return row.value(u"cn").toString();
    case Address:
        return row.value(u"address").toString();
    case Action:
        return row.value(u"action").toString();
    case Target:
        return row.value(u"target").toString();
    case Result:
        return row.value(u"result").toString();
    case Detail:
        return row.value(u"detail").toString();
    default:
        return {};
    }
}

QVariant AuditTableModel::extraData(const QJsonObject &row, int column, int role) const
{
    if (role == Qt::ForegroundRole && row.value(u"result").toString() != QLatin1String("ok"))
        return QBrush(errorText());
    return JsonTableModel::extraData(row, column, role);
}

} // namespace cmq::admingui
