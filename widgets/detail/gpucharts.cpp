// SPDX-License-Identifier: Apache-2.0
#include "widgets/detail/gpucharts.h"

#include <QAreaSeries>
#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope {

namespace {
constexpr qreal nan = std::numeric_limits<qreal>::quiet_NaN();

QList<QPointF> points(const std::vector<qreal> &times, const std::vector<qreal> &values)
{
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(times.size()));
    for (size_t i = 0; i < times.size(); ++i) {
        if (!std::isnan(values[i])) {
            out.append({ times[i], values[i] });
        }
    }
    return out;
}
} // namespace

qreal quantile(const std::vector<float> &sorted, qreal q)
{
    if (sorted.empty()) {
        return nan;
    }
    const qreal at = q * static_cast<qreal>(sorted.size() - 1);
    const auto below = static_cast<size_t>(std::floor(at));
    const size_t above = std::min(sorted.size() - 1, below + 1);
    const qreal lo = sorted[below];
    const qreal hi = sorted[above];
    const qreal fraction = at - static_cast<qreal>(below);
    return fraction == 0 ? lo : (fraction == 0.5 ? (lo + hi) / 2 : lo + (hi - lo) * fraction);
}

PeerBand summarise(const RangeSeries &series, const std::vector<uint32_t> &subject, const std::vector<uint32_t> &peers)
{
    std::vector<size_t> subjectColumns;
    std::vector<size_t> peerColumns;
    for (size_t c = 0; c < series.columns(); ++c) {
        const uint32_t gpu = series.gpus[c];
        if (std::find(subject.begin(), subject.end(), gpu) != subject.end()) {
            subjectColumns.push_back(c);
        } else if (std::find(peers.begin(), peers.end(), gpu) != peers.end()) {
            peerColumns.push_back(c);
        }
    }
    PeerBand band;
    const size_t rows = series.rows();
    band.times.reserve(rows);
    std::vector<float> values;
    auto sortedFinite = [&](size_t row, const std::vector<size_t> &columns) {
        values.clear();
        for (const size_t c : columns) {
            if (const float v = series.at(row, c); std::isfinite(v)) {
                values.push_back(v);
            }
        }
        std::sort(values.begin(), values.end());
    };
    for (size_t r = 0; r < rows; ++r) {
        band.times.push_back(static_cast<qreal>(series.times[r]));
        sortedFinite(r, subjectColumns);
        band.subject.push_back(quantile(values, 0.5));
        sortedFinite(r, peerColumns);
        band.p25.push_back(quantile(values, 0.25));
        band.median.push_back(quantile(values, 0.5));
        band.p75.push_back(quantile(values, 0.75));
    }
    return band;
}

MetricChart::MetricChart(QWidget *parent)
    : QChartView(parent)
    , m_subject(new QLineSeries(this))
    , m_median(new QLineSeries(this))
    , m_upper(new QLineSeries(this))
    , m_lower(new QLineSeries(this))
    , m_band(new QAreaSeries(m_upper, m_lower))
    , m_timeAxis(new QDateTimeAxis(this))
    , m_valueAxis(new QValueAxis(this))
{
    auto *chart = new QChart();
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setFont(font());
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setBackgroundRoundness(0);

    m_band->setName(QStringLiteral("rack peers p25–p75"));
    m_band->setColor(QColor(0x4c, 0x78, 0xa8, 70));
    m_band->setBorderColor(QColor(0x4c, 0x78, 0xa8, 110));
    m_median->setName(QStringLiteral("rack median"));
    QPen medianPen(QColor(0x4c, 0x78, 0xa8));
    medianPen.setStyle(Qt::DashLine);
    medianPen.setWidthF(1.5);
    m_median->setPen(medianPen);
    QPen subjectPen(QColor(0xe1, 0x57, 0x59));
    subjectPen.setWidthF(2.0);
    m_subject->setPen(subjectPen);

    // Drawn in order: band behind, then the median, the subject on top.
    chart->addSeries(m_band);
    chart->addSeries(m_median);
    chart->addSeries(m_subject);
    m_timeAxis->setFormat(QStringLiteral("HH:mm"));
    m_timeAxis->setTickCount(5);
    m_valueAxis->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(m_timeAxis, Qt::AlignBottom);
    chart->addAxis(m_valueAxis, Qt::AlignLeft);
    for (QAbstractSeries *series : { static_cast<QAbstractSeries *>(m_band), static_cast<QAbstractSeries *>(m_median),
             static_cast<QAbstractSeries *>(m_subject) }) {
        series->attachAxis(m_timeAxis);
        series->attachAxis(m_valueAxis);
    }
    // The view owns the chart, the chart its series; the default chart the view made is released, not deleted.
    QChart *initial = this->chart();
    setChart(chart);
    delete initial;
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(230);
}

void MetricChart::setTitle(const QString &title, const QString &unit)
{
    chart()->setTitle(unit.isEmpty() ? title : QStringLiteral("%1 (%2)").arg(title, unit));
}

void MetricChart::setSubjectName(const QString &name)
{
    m_subject->setName(name);
}

void MetricChart::setData(const PeerBand &band, qint64 fromMs, qint64 toMs)
{
    // The band needs its upper and lower edges on the same rows: only rows where the peers have a value.
    QList<QPointF> upper;
    QList<QPointF> lower;
    for (size_t i = 0; i < band.times.size(); ++i) {
        if (!std::isnan(band.p25[i])) {
            upper.append({ band.times[i], band.p75[i] });
            lower.append({ band.times[i], band.p25[i] });
        }
    }
    auto subject = points(band.times, band.subject);
    const auto median = points(band.times, band.median);
    qreal lo = std::numeric_limits<qreal>::max();
    qreal hi = std::numeric_limits<qreal>::lowest();
    for (const auto *list : { &subject, &upper, &lower }) {
        for (const auto &p : *list) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
    }
    m_subject->replace(subject);
    m_median->replace(median);
    m_upper->replace(upper);
    m_lower->replace(lower);
    m_timeAxis->setRange(QDateTime::fromMSecsSinceEpoch(fromMs), QDateTime::fromMSecsSinceEpoch(toMs));
    m_timeAxis->setFormat(toMs - fromMs > 12 * 3600 * 1000 ? QStringLiteral("dd HH:mm") : QStringLiteral("HH:mm"));
    if (lo <= hi) {
        // A flat line (a clock pinned at its limit) still gets a readable scale around it.
        const qreal pad = std::max({ (hi - lo) * 0.08, std::abs(hi) * 0.02, 1.0 });
        // Round ticks (1, 2 or 5 x 10^k) over three to five intervals: more labels than that do not fit.
        const qreal raw = (hi - lo + 2 * pad) / 3;
        const qreal magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        const qreal step = magnitude
            * (raw <= magnitude            ? 1
                    : raw <= 2 * magnitude ? 2
                    : raw <= 5 * magnitude ? 5
                                           : 10);
        const qreal bottom = std::floor((lo - pad) / step) * step;
        const qreal top = std::ceil((hi + pad) / step) * step;
        m_valueAxis->setRange(bottom, top);
        m_valueAxis->setTickCount(static_cast<int>(std::lround((top - bottom) / step)) + 1);
        m_valueAxis->setLabelFormat(step < 1 ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    }
}

void MetricChart::clearData()
{
    m_subject->clear();
    m_median->clear();
    m_upper->clear();
    m_lower->clear();
}

} // namespace fleetscope
