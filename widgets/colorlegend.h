// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "colormap.h"
#include "fleetmodel.h"

#include <QWidget>

namespace fleetscope {

// A horizontal colour bar with the metric's range and unit, so a colour on the map reads as a number.
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
    MetricInfo m_metric;
    ColorMap m_map;
};

} // namespace fleetscope
