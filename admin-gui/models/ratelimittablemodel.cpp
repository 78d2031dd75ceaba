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

QString RateLimitTableModel::tokensText(const QJsonObject &bucket)
{
    return QString::number(bucket.value(u"tokens").toDouble(), 'f', 0) + QLatin1StringView(" / ") +
           QString::number(bucket.value(u"burst").toDouble());
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
    // Concatenated, not arg()ed: the same texts ("%1 / %2"), built for 5,000 buckets a second.
    case Connections:
        return QString::number(row.value(u"connections").toInt()) + QLatin1StringView(" / ") +
               QString::number(row.value(u"connection_limit").toInt());
    case GlobalTokens:
        return tokensText(global);
    case GlobalRate:
        return global.value(u"rate").toDouble();
    case PublishTokens:
        return tokensText(publish);
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
