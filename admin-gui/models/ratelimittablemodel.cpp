#include "models/ratelimittablemodel.h"

#include <QBrush>
#include <QColor>

namespace cmq::admingui {

RateLimitTableModel::RateLimitTableModel(QObject *parent) : JsonTableModel(parent) {}

QString RateLimitTableModel::keyOf(const QJsonObject &row) const
{
    return row.value("scope").toString() + ':' + row.value("key").toString();
}

QStringList RateLimitTableModel::headers() const
{
    return {tr("Scope"),       tr("Key"),      tr("Connections"), tr("Global tokens"),
            tr("Global rate"), tr("Publish tokens"), tr("Publish rate"), tr("Accepted"),
            tr("Rejected")};
}

double RateLimitTableModel::fraction(const QJsonObject &bucket)
{
    const double burst = bucket.value("burst").toDouble();
    return burst > 0 ? std::clamp(bucket.value("tokens").toDouble() / burst, 0.0, 1.0) : 0.0;
}

QVariant RateLimitTableModel::cell(const QJsonObject &row, int column) const
{
    const QJsonObject global = row.value("global").toObject();
    const QJsonObject publish = row.value("publish").toObject();
    switch (column) {
    case Scope: return row.value("scope").toString().toUpper();
    case Key: return row.value("key").toString();
    case Connections:
        return QStringLiteral("%1 / %2").arg(row.value("connections").toInt()).arg(
            row.value("connection_limit").toInt());
    case GlobalTokens:
        return QStringLiteral("%1 / %2").arg(global.value("tokens").toDouble(), 0, 'f', 0).arg(
            global.value("burst").toDouble());
    case GlobalRate: return global.value("rate").toDouble();
    case PublishTokens:
        return QStringLiteral("%1 / %2").arg(publish.value("tokens").toDouble(), 0, 'f', 0).arg(
            publish.value("burst").toDouble());
    case PublishRate: return publish.value("rate").toDouble();
    case Accepted:
        return global.value("accepted").toDouble() + publish.value("accepted").toDouble();
    case Rejected:
        return global.value("rejected").toDouble() + publish.value("rejected").toDouble();
    default: return {};
    }
}

bool RateLimitTableModel::nearExhaustion(const QJsonObject &row) const
{
    const double limit = row.value("connection_limit").toDouble();
    const bool connectionsHot = limit > 0
                                && row.value("connections").toDouble() >= limit * (1 - NearExhaustion);
    return connectionsHot || fraction(row.value("global").toObject()) < NearExhaustion
           || fraction(row.value("publish").toObject()) < NearExhaustion;
}

QVariant RateLimitTableModel::extraData(const QJsonObject &row, int column, int role) const
{
    if (role == FractionRole) {
        if (column == GlobalTokens)
            return fraction(row.value("global").toObject());
        if (column == PublishTokens)
            return fraction(row.value("publish").toObject());
        return {};
    }
    if (role == Qt::BackgroundRole && nearExhaustion(row))
        return QBrush(QColor(0xfd, 0xe2, 0xe2));
    return {};
}

} // namespace cmq::admingui
