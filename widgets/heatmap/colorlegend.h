// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "widgets/heatmap/colormap.h"

#include <QWidget>

namespace fleetscope {

// The key to the map's colours. A sequential map is a horizontal bar with the metric's range and unit; a diverging
// map also labels its centre value; a categorical map is one swatch per category with its label.
class ColorLegend : public QWidget
{
    Q_OBJECT
public:
    explicit ColorLegend(QWidget *parent = nullptr);

    void setMetric(const MetricInfo &metric, const ColorMap &map);
    // What the map's cyan highlight is, beside a cyan key ("leaf su03-l5: 32 GPUs; 31 hit"); empty for none.
    void setDomainNote(const QString &note);
    QString domainNote() const { return m_domainNote; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void paintBar(QPainter &p, int right);
    void paintSwatches(QPainter &p, int right);
    // The key for the view's pattern: GPUs without a value (offline, no data) are hatched whatever the map; returns
    // where it starts.
    int paintNoDataKey(QPainter &p);
    // The key for a shared domain highlighted, left of right; returns where it starts.
    int paintDomainKey(QPainter &p, int right);

    MetricInfo m_metric;
    ColorMap m_map;
    QString m_domainNote;
};

} // namespace fleetscope
