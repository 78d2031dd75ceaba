#include "models/ratelimittablemodel.h"

#include "models/palettecolors.h"
#include <QBrush>
#include <QColor>

namespace cmq::admingui {

RateLimitTableModel::RateLimitTableModel(QObject *parent) : JsonTableModel(parent)
{
}

QString RateLimitTableModel::keyOf(const QJsonObject &row) const
{
    return row.value(u"scope").toString() + ':' + row.value(u"key").toString();
}

QStringList RateLimitTableModel::headers() const
{
    return {tr("Scope"),         tr("Key"),         tr("Connections"),
            tr("Global tokens"), tr("Global rate"), tr("Publish tokens"),
            tr("Publish rate"),  tr("Accepted"),    tr("Rejected")};
}

double RateLimitTableModel::fraction(const QJsonObject &bucket)
{
    const double burst = bucket.value(u"burst").toDouble();
    return burst > 0 ? std::clamp(bucket.value(u"tokens").toDouble() / burst, 0.0, 1.0) : 0.0;
}

QVariant RateLimitTableModel::cell(const QJsonObject &row, int column) const
{
    const QJsonObject global = row.value(u"global").toObject();
    const QJsonObject publish = row.value(u"publish").toObject();
    switch (column) {
    case Scope:
        return row.value(u"scope").toString().toUpper();
    case Key:
        return row.value(u"key").toString();
    case Connections:
        return QStringLiteral("%1 / %2")
            .arg(row.value(u"connections").toInt())
            .arg(row.value(u"connection_limit").toInt());
    case GlobalTokens:
        return QStringLiteral("%1 / %2")
            .arg(global.value(u"tokens").toDouble(), 0, 'f', 0)
            .arg(global.value(u"burst").toDouble());
    case GlobalRate:
        return global.value(u"rate").toDouble();
    case PublishTokens:
        return QStringLiteral("%1 / %2")
            .arg(publish.value(u"tokens").toDouble(), 0, 'f', 0)
            .arg(publish.value(u"burst").toDouble());
    case PublishRate:
        return publish.value(u"rate").toDouble();
    case Accepted:
        return global.value(u"accepted").toDouble() + publish.value(u"accepted").toDouble();
    case Rejected:
        return global.value(u"rejected").toDouble() + publish.value(u"rejected").toDouble();
    default:
        return {};
    }
}

bool RateLimitTableModel::nearExhaustion(const QJsonObject &row) const
{
    const double limit = row.value(u"connection_limit").toDouble();
    const bool connectionsHot =
        limit > 0 && row.value(u"connections").toDouble() >= limit * (1 - NearExhaustion);
    return connectionsHot || fraction(row.value(u"global").toObject()) < NearExhaustion ||
           fraction(row.value(u"publish").toObject()) < NearExhaustion;
}

QVariant RateLimitTableModel::extraData(const QJsonObject &row, int column, int role) const
{
    if (role == FractionRole) {
        if (column == GlobalTokens)
            return fraction(row.value(u"global").toObject());
        if (column == PublishTokens)
            return fraction(row.value(u"publish").toObject());
        return {};
    }
    if (role == Qt::BackgroundRole && nearExhaustion(row))
        return QBrush(warningBackground());
    return {};
}

} // namespace cmq::admingui
