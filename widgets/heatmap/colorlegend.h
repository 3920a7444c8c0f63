// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/colormap.h"
#include "model/fleetmodel.h"

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
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void paintBar(QPainter &p, int right);
    void paintSwatches(QPainter &p, int right);
    // The key for the view's pattern: GPUs without a value (offline, no data) are hatched whatever the map; returns
    // where it starts.
    int paintNoDataKey(QPainter &p);

    MetricInfo m_metric;
    ColorMap m_map;
};

} // namespace fleetscope
