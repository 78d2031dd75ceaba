#pragma once
// The Overview tab: key figures of the latest snapshot and live charts of the broker-wide
// rates and total depth over the last minutes.

#include <QHash>
#include <QJsonObject>
#include <QLabel>
#include <QWidget>

#include "models/ratehistory.h"

QT_BEGIN_NAMESPACE
class QChartView;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace cmq::admingui {

class OverviewPage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(OverviewPage)

public:
    explicit OverviewPage(QWidget *parent = nullptr);

    void showSnapshot(const QJsonObject &snapshot);
    const RateHistory &history() const { return m_history; }
    QString figure(const QString &name) const; // the text of a key figure, for tests

private:
    QChartView *makeChart(const QString &title, const QList<QLineSeries *> &series, QValueAxis **x,
                          QValueAxis **y);
    void refreshCharts();

    QHash<QString, QLabel *> m_figures;
    RateHistory m_history;
    QLineSeries *m_published = nullptr;
    QLineSeries *m_delivered = nullptr;
    QLineSeries *m_acknowledged = nullptr;
    QLineSeries *m_depth = nullptr;
    QValueAxis *m_rateX = nullptr;
    QValueAxis *m_rateY = nullptr;
    QValueAxis *m_depthX = nullptr;
    QValueAxis *m_depthY = nullptr;
};

} // namespace cmq::admingui
