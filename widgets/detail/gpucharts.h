// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"

#include <QChartView>

#include <vector>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace fleetscope {

// Per row of a range: the subject's value (one GPU's, or the median of a node's GPUs) and the spread of its peers.
struct PeerBand
{
    std::vector<qreal> times; // ms since the epoch
    std::vector<qreal> subject; // NaN where none of the subject's GPUs has a value
    std::vector<qreal> p25, median, p75; // over the peers; NaN where no peer has a value
};

// Linear-interpolated quantile (q in 0..1) of ascending values; the median of an even count is the mean of the middle
// two. NaN for none.
qreal quantile(const std::vector<float> &sorted, qreal q);
// The subject's columns and the peers' columns of one series, summarised per row. Columns of neither are ignored.
PeerBand summarise(const RangeSeries &series, const std::vector<uint32_t> &subject, const std::vector<uint32_t> &peers);

// One metric's chart: the subject's line over its peers' p25–p75 band and median line, against wall-clock time.
// Updates go through QXYSeries::replace, so a refresh is one repaint, not one per point.
class MetricChart : public QChartView
{
    Q_OBJECT
public:
    explicit MetricChart(QWidget *parent = nullptr);

    void setTitle(const QString &title, const QString &unit);
    void setSubjectName(const QString &name);
    // Shows the band over [fromMs, toMs]; rows with a NaN are left out of the line they would break.
    void setData(const PeerBand &band, qint64 fromMs, qint64 toMs);
    void clearData();

    QLineSeries *subjectSeries() const { return m_subject; }
    QLineSeries *medianSeries() const { return m_median; }
    QAreaSeries *bandSeries() const { return m_band; }

private:
    QLineSeries *m_subject;
    QLineSeries *m_median;
    QLineSeries *m_upper;
    QLineSeries *m_lower;
    QAreaSeries *m_band;
    QDateTimeAxis *m_timeAxis;
    QValueAxis *m_valueAxis;
};

} // namespace fleetscope
