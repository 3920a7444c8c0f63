// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summaryview.h"

#include "widgets/style/fontscale.h"
#include "widgets/summary/goodputpanel.h"
#include "widgets/summary/repeatoffenderspanel.h"
#include "widgets/summary/summarycharts.h"
#include "widgets/summary/summaryreport.h"
#include "widgets/summary/summarytables.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPainter>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
constexpr int64_t dayMs = 24LL * 3600 * 1000;
constexpr int paretoBars = 30;

QLabel *figureLabel(const QString &name, QWidget *parent)
{
    auto *label = new QLabel(QStringLiteral("–"), parent);
    label->setObjectName(name);
    label->setProperty("figure", true); // sized from the view's font: setBaseFont
    QFont f = scaledFont(label->font(), 2.0);
    f.setBold(true);
    label->setFont(f);
    return label;
}

} // namespace

SummaryView::SummaryView(QWidget *parent)
    : QWidget(parent)
{
    QFont base = font();
    if (base.pixelSize() <= 0) {
        base.setPointSizeF(std::max(base.pointSizeF(), 9.0));
    }
    setBaseFont(scaledFont(base, 1.4)); // read from across a room

    m_price = new QDoubleSpinBox(this);
    m_price->setObjectName(QStringLiteral("price"));
    m_price->setRange(0, 1000);
    m_price->setDecimals(2);
    m_price->setSingleStep(0.10);
    m_price->setPrefix(QStringLiteral("USD "));
    m_price->setSuffix(QStringLiteral(" / GPU-h"));
    m_price->setValue(2.50);
    connect(m_price, &QDoubleSpinBox::valueChanged, this, [this] { updateFigures(); });
    m_goodput = new GoodputPanel(this);
    m_goodput->setPricePerGpuHour(m_price->value());
    connect(m_goodput, &GoodputPanel::gpuChosen, this, &SummaryView::gpuChosen);

    m_dayUtil = figureLabel(QStringLiteral("dayUtilisation"), this);
    m_weekUtil = figureLabel(QStringLiteral("weekUtilisation"), this);
    m_idle = figureLabel(QStringLiteral("idleHours"), this);
    m_cost = figureLabel(QStringLiteral("idleCost"), this);
    m_availability = figureLabel(QStringLiteral("availability"), this);
    m_worstShare = figureLabel(QStringLiteral("worstShare"), this);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("note"));
    m_note->setWordWrap(true);

    auto *figures = new QFormLayout;
    figures->addRow(tr("Utilisation, last day"), m_dayUtil);
    figures->addRow(tr("Utilisation, last week"), m_weekUtil);
    m_goodput->addFiguresTo(figures); // beside utilisation: what the jobs made of it
    figures->addRow(tr("Idle, last day"), m_idle);
    figures->addRow(tr("Price"), m_price);
    figures->addRow(tr("Cost of idle, last day"), m_cost);
    figures->addRow(tr("Availability (healthy / all GPUs)"), m_availability);
    figures->addRow(tr("Failures from the worst 1 % of GPUs"), m_worstShare);
    figures->addRow(m_note);

    m_trendView = newSummaryChartView(QStringLiteral("trendChart"), this);
    m_paretoView = newSummaryChartView(QStringLiteral("paretoChart"), this);

    const QStringList rollupHeaders = { tr("Name"), tr("GPUs"), tr("Utilisation"), tr("Idle GPU-h"), tr("Availability"),
        tr("Unhealthy"), tr("Failures") };
    m_rowModel = new QStandardItemModel(0, static_cast<int>(rollupHeaders.size()), this);
    m_rowModel->setHorizontalHeaderLabels(rollupHeaders);
    m_jobModel = new QStandardItemModel(0, static_cast<int>(rollupHeaders.size()), this);
    m_jobModel->setHorizontalHeaderLabels(rollupHeaders);
    m_offenderModel = new QStandardItemModel(0, 3, this);
    m_offenderModel->setHorizontalHeaderLabels({ tr("GPU"), tr("Failures"), tr("Share") });
    m_rowTable = sortableTable(m_rowModel, QStringLiteral("rowTable"), this);
    m_jobTable = sortableTable(m_jobModel, QStringLiteral("jobTable"), this);
    m_offenderTable = sortableTable(m_offenderModel, QStringLiteral("offenderTable"), this);
    m_riskLabel = figureLabel(QStringLiteral("capacityAtRisk"), this);
    m_riskLabel->setWordWrap(true);
    m_unitsLabel = figureLabel(QStringLiteral("schedulableUnits"), this);
    m_unitsLabel->setWordWrap(true);
    m_unitsLabel->setToolTip(tr("What a scheduler hands out whole: an HGX node, or an NVL72 rack (one NVLink domain). "
                                "A unit is fully healthy when every GPU of it is OK, with no ECC or XID error in "
                                "the last five minutes; the healthy GPUs of the other units are stranded for jobs "
                                "that need whole units."));
    m_unitHoursLabel = new QLabel(this);
    m_unitHoursLabel->setObjectName(QStringLiteral("unitGpuHoursLost"));
    m_unitHoursLabel->setWordWrap(true);
    m_unitHoursLabel->setToolTip(tr("Over the last day, from the backend's frames: every GPU of a unit that was not "
                                    "fully healthy counts as lost while it was not; its healthy GPUs were stranded."));
    m_repeat = new RepeatOffendersPanel(this);
    connect(m_repeat, &RepeatOffendersPanel::gpuChosen, this, &SummaryView::gpuChosen);
    onGpuClicked(m_offenderTable, [this](uint32_t gpu) { Q_EMIT gpuChosen(gpu); });
    m_riskRackModel = new QStandardItemModel(0, 4, this);
    m_riskRackModel->setHorizontalHeaderLabels({ tr("Rack at risk"), tr("GPUs"), tr("Too hot"), tr("Hardware") });
    m_riskJobModel = new QStandardItemModel(0, 4, this);
    m_riskJobModel->setHorizontalHeaderLabels({ tr("Job at risk"), tr("Owner"), tr("GPUs"), tr("GPUs at risk") });
    m_riskRackTable = sortableTable(m_riskRackModel, QStringLiteral("riskRackTable"), this);
    m_riskJobTable = sortableTable(m_riskJobModel, QStringLiteral("riskJobTable"), this);

    auto *grid = new QGridLayout(this);
    m_grid = grid;
    // Worst first; rows and jobs by name until someone clicks a header.
    m_offenderTable->sortByColumn(1, Qt::DescendingOrder);
    m_rowTable->sortByColumn(0, Qt::AscendingOrder);
    m_jobTable->sortByColumn(0, Qt::AscendingOrder);
    grid->addLayout(figures, 0, 0);
    grid->addWidget(m_trendView, 0, 1);
    grid->addWidget(m_goodput, 1, 0, 1, 2);
    grid->addWidget(m_offenderTable, 2, 0);
    grid->addWidget(m_paretoView, 2, 1);
    grid->addWidget(m_rowTable, 3, 0);
    grid->addWidget(m_jobTable, 3, 1);
    auto *risk = new QVBoxLayout;
    auto *riskTitle = new QLabel(tr("Capacity at risk now: GPUs in racks with thermal or hardware trouble"), this);
    risk->addWidget(riskTitle);
    risk->addWidget(m_unitsLabel);
    risk->addWidget(m_unitHoursLabel);
    risk->addWidget(m_riskLabel);
    risk->addWidget(m_riskRackTable, 1);
    grid->addLayout(risk, 4, 0);
    grid->addWidget(m_riskJobTable, 4, 1);
    grid->addWidget(m_repeat, 5, 0, 1, 2);
    grid->setColumnStretch(1, 2);
    m_riskLabel->setText(tr("waiting for live data"));

    updateTrendChart();
    updateParetoChart();
}

SummaryView::~SummaryView() = default;

QString SummaryView::gpuName(uint32_t gpu) const
{
    if (!m_topology || gpu >= m_topology->gpuCount) {
        return QString::number(gpu);
    }
    const auto &node = m_topology->nodeOf(gpu);
    return tr("%1 GPU %2").arg(node.hostname).arg(gpu - node.firstGpu);
}

void SummaryView::setTopology(TopologyPtr topology)
{
    m_topology = std::move(topology);
    m_hasRisk = false;
    m_repeat->setSummary(m_week, m_topology);
    m_goodput->setTopology(m_topology);
    updateFigures();
    updateParetoChart();
}

void SummaryView::setLiveState(const FramePtr &frame, const JobsPtr &jobs)
{
    if (!m_topology || !frame) {
        return;
    }
    m_risk = computeCapacityAtRisk(*m_topology, *frame, jobs.get());
    m_hasRisk = frame->topologyGeneration == m_topology->generation;
    updateRisk();
}

void SummaryView::updateRisk()
{
    if (!m_hasRisk) {
        return;
    }
    const auto &r = m_risk;
    const double share = r.fleetGpus > 0 ? 100.0 * r.gpusAtRisk / r.fleetGpus : 0;
    m_riskLabel->setText(tr("%1 GPUs in %2 racks (%3 of the fleet), %4 running jobs")
                             .arg(r.gpusAtRisk)
                             .arg(r.racks.size())
                             .arg(formatPercent(share))
                             .arg(r.jobs.size()));
    // Schedulable units: "1,270 of 1,280 nodes fully healthy (99.2 %) · 74 healthy GPUs stranded in the others".
    QStringList units;
    if (r.units.nodes > 0) {
        units << tr("%L1 of %L2 nodes fully healthy (%3)")
                     .arg(r.units.healthyNodes)
                     .arg(r.units.nodes)
                     .arg(formatPercent(100.0 * r.units.healthyNodes / r.units.nodes));
    }
    if (r.units.racks > 0) {
        units << tr("%L1 of %L2 NVLink racks fully healthy (%3)")
                     .arg(r.units.healthyRacks)
                     .arg(r.units.racks)
                     .arg(formatPercent(100.0 * r.units.healthyRacks / r.units.racks));
    }
    units << tr("%L1 healthy GPUs stranded in the others").arg(r.units.strandedGpus);
    m_unitsLabel->setText(tr("Schedulable units: %1").arg(units.join(QStringLiteral(" · "))));
    // The tables keep their sort while rows are replaced.
    m_riskRackModel->setRowCount(0);
    for (const auto &rack : r.racks) {
        m_riskRackModel->appendRow({ new QStandardItem(m_topology->racks[rack.rack].name),
            numberItem(rack.gpus, QString::number(rack.gpus)), numberItem(rack.thermal, QString::number(rack.thermal)),
            numberItem(rack.hardware, QString::number(rack.hardware)) });
    }
    m_riskJobModel->setRowCount(0);
    for (const auto &job : r.jobs) {
        m_riskJobModel->appendRow({ new QStandardItem(job.name), new QStandardItem(job.owner),
            numberItem(job.gpus, QString::number(job.gpus)),
            numberItem(job.gpusAtRisk, QString::number(job.gpusAtRisk)) });
    }
}

void SummaryView::updateUnitHours()
{
    const SummaryUnitHours &u = m_day->unitHours;
    if (u.units == 0) {
        m_unitHoursLabel->clear(); // a backend that does not say
        return;
    }
    m_unitHoursLabel->setText(
        tr("GPU-hours lost in unhealthy units over the last day: %L1 (of which %L2 on healthy GPUs stranded) · %L3 of "
           "%L4 units fully healthy at its end")
            .arg(u.lostGpuHours, 0, 'f', 0)
            .arg(u.strandedGpuHours, 0, 'f', 0)
            .arg(u.healthyUnitsAtEnd)
            .arg(u.units));
}

void SummaryView::setBaseFont(const QFont &base)
{
    setFont(base);
    QFont figure = scaledFont(base, 2.0);
    figure.setBold(true);
    for (auto *label : findChildren<QLabel *>()) {
        if (label->property("figure").toBool()) {
            label->setFont(figure);
        }
    }
    // Rows and headers follow the font (their sizes are fixed when the view is made); names take the spare width.
    const int row = QFontMetrics(base).height() * 14 / 10;
    for (auto *table : findChildren<QTableView *>()) {
        table->horizontalHeader()->setFont(base);
        table->verticalHeader()->setDefaultSectionSize(row);
        table->horizontalHeader()->setStretchLastSection(false);
        table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    }
    if (m_trendView != nullptr) {
        updateTrendChart();
        updateParetoChart();
        m_goodput->setLook(base, m_dark);
    }
}

void SummaryView::useWallLayout()
{
    // The week's goodput stays among the figures; where it went is a desk's table.
    for (QWidget *desk : std::initializer_list<QWidget *> {
             m_offenderTable, m_rowTable, m_jobTable, m_riskRackTable, m_note, m_repeat }) {
        desk->hide();
    }
    m_goodput->useWallLayout();
    m_grid->removeWidget(m_paretoView);
    m_grid->addWidget(m_paretoView, 2, 0, 1, 2);
    // Nobody types at a wall: the price the costs use is shown, not edited (no arrows, no focus frame, no cursor).
    m_price->setReadOnly(true);
    m_price->setButtonSymbols(QAbstractSpinBox::NoButtons);
    m_price->setFocusPolicy(Qt::NoFocus);
    m_price->setFrame(false);
}

void SummaryView::setDark(bool dark)
{
    m_dark = dark;
    updateTrendChart();
    updateParetoChart();
    m_goodput->setLook(font(), m_dark);
}

void SummaryView::showFetch(const SummaryFetch &result)
{
    Q_ASSERT(QThread::currentThread() == thread());
    // A refresh that got no trend at all (the backend away) keeps the one shown rather than blanking the charts.
    if (!result.dayTrend.empty() || !result.weekTrend.empty()) {
        setTrend(result.dayTrend, result.weekTrend);
    }
    if (result.day && result.week) {
        setSummaries(result.day, result.week);
    }
    Q_EMIT refreshed();
}

void SummaryView::setSummaries(SummaryPtr day, SummaryPtr week)
{
    m_day = std::move(day);
    m_week = std::move(week);
    fillRollups(m_rowModel, m_day->rows);
    fillRollups(m_jobModel, m_day->jobs);
    // The scores are as of the range's end, the same for the day and the week.
    m_repeat->setSummary(m_week, m_topology);
    m_goodput->setSummaries(m_day, m_week);
    updateUnitHours();
    updateFigures();
    updateParetoChart();
}

void SummaryView::setTrend(std::vector<TrendPoint> day, std::vector<TrendPoint> week)
{
    m_dayTrend = std::move(day);
    m_weekTrend = std::move(week);
    m_goodput->setTrend(m_dayTrend, m_weekTrend);
    updateTrendChart();
}

double SummaryView::pricePerGpuHour() const
{
    return m_price->value();
}

void SummaryView::setPricePerGpuHour(double price)
{
    m_price->setValue(price);
}

void SummaryView::fillRollups(QStandardItemModel *model, const std::vector<SummaryRollup> &rollups)
{
    model->setRowCount(0);
    for (const auto &r : rollups) {
        auto *name = new QStandardItem(r.name);
        name->setData(r.name, Qt::UserRole);
        name->setEditable(false);
        model->appendRow({ name, numberItem(r.gpuCount, QString::number(r.gpuCount)),
            numberItem(r.meanUtilisation, formatPercent(r.meanUtilisation)),
            numberItem(r.idleGpuHours, QString::number(r.idleGpuHours, 'f', 1)),
            numberItem(r.availability, formatPercent(100 * r.availability)),
            numberItem(r.unhealthyGpus, QString::number(r.unhealthyGpus)),
            numberItem(static_cast<double>(r.failures), QString::number(r.failures)) });
    }
}

void SummaryView::updateFigures()
{
    if (!hasData()) {
        return;
    }
    m_figures = computeFigures(*m_day, *m_week, pricePerGpuHour());
    m_goodput->setPricePerGpuHour(pricePerGpuHour());
    const auto &f = m_figures;
    m_dayUtil->setText(formatPercent(f.dayUtilisation));
    m_weekUtil->setText(formatPercent(f.weekUtilisation));
    m_idle->setText(formatHours(f.idleGpuHours));
    m_cost->setText(formatMoney(f.idleCost));
    m_availability->setText(
        formatPercent(100 * f.availability) + QStringLiteral(" (%1 / %2)").arg(f.healthyGpus).arg(f.gpus));
    m_worstShare->setText(
        (f.worstShareIsLowerBound ? QStringLiteral("≥ ") : QString()) + formatPercent(100 * f.worstShare));
    m_note->setText(tr("Worst 1 % = %1 GPU(s); %2 of %3 failures over the last week. GetSummary gives aggregates per "
                       "range only; the trend is one call per hour (day) and per day (week).")
                        .arg(f.worstCount)
                        .arg(f.worstFailures)
                        .arg(f.weekFailures));
    m_offenderModel->setRowCount(0);
    for (const auto &o : f.worst) {
        const double share = f.weekFailures > 0 ? static_cast<double>(o.failures) / f.weekFailures : 0;
        m_offenderModel->appendRow({ numberItem(o.gpu, gpuName(o.gpu)),
            numberItem(static_cast<double>(o.failures), QString::number(o.failures)),
            numberItem(share, formatPercent(100 * share)) });
    }
}

QChart *SummaryView::newChart() const
{
    return newSummaryChart(font(), m_dark);
}

void SummaryView::updateTrendChart()
{
    QChart *chart = newChart();
    chart->setTitle(tr("Fleet utilisation against the %1 % target").arg(targetUtilisation));
    auto *time = new QDateTimeAxis;
    time->setFormat(QStringLiteral("dd MMM HH:mm"));
    auto *value = summaryPercentAxis();
    chart->addAxis(time, Qt::AlignBottom);
    chart->addAxis(value, Qt::AlignLeft);

    int64_t first = 0;
    int64_t last = 0;
    auto addLine = [&](const std::vector<TrendPoint> &points, const QString &name) {
        auto *series = new QLineSeries;
        series->setName(name);
        for (const auto &p : points) {
            series->append(static_cast<qreal>(p.endMs), p.utilisation);
            first = first == 0 ? p.endMs : std::min(first, p.endMs);
            last = std::max(last, p.endMs);
        }
        series->setPointsVisible(true);
        chart->addSeries(series);
        series->attachAxis(time);
        series->attachAxis(value);
    };
    addLine(m_weekTrend, tr("Last week, daily"));
    addLine(m_dayTrend, tr("Last day, hourly"));
    if (first == last) {
        first = last - dayMs; // one point or none: still a readable axis
        last = last == 0 ? dayMs : last;
    }
    addSummaryTarget(chart, time, value, first, last, static_cast<int>(targetUtilisation));
    styleSummaryAxes(chart, font());
    replaceSummaryChart(m_trendView, chart);
}

void SummaryView::updateParetoChart()
{
    QChart *chart = newChart();
    chart->setTitle(tr("Failures per GPU, last week (Pareto)"));
    auto *bars = new QBarSet(tr("Failures"));
    auto *cumulative = new QLineSeries;
    cumulative->setName(tr("Cumulative share"));
    QStringList categories;
    const uint64_t total = m_week ? m_week->totalFailures : 0;
    uint64_t sum = 0;
    double maxFailures = 1;
    if (m_week) {
        const int count = std::min<int>(paretoBars, static_cast<int>(m_week->offenders.size()));
        for (int i = 0; i < count; ++i) {
            const auto &o = m_week->offenders[static_cast<size_t>(i)];
            *bars << static_cast<qreal>(o.failures);
            categories << gpuName(o.gpu);
            sum += o.failures;
            cumulative->append(i, total > 0 ? 100.0 * static_cast<double>(sum) / static_cast<double>(total) : 0);
            maxFailures = std::max(maxFailures, static_cast<double>(o.failures));
        }
    }
    auto *barSeries = new QBarSeries;
    barSeries->append(bars);
    chart->addSeries(barSeries);
    chart->addSeries(cumulative);
    auto *gpuAxis = new QBarCategoryAxis;
    gpuAxis->append(categories);
    gpuAxis->setTitleText(tr("GPU (worst first)"));
    gpuAxis->setLabelsAngle(-90);
    auto *countAxis = new QValueAxis;
    countAxis->setRange(0, maxFailures);
    countAxis->setLabelFormat(QStringLiteral("%.0f"));
    auto *shareAxis = summaryPercentAxis();
    chart->addAxis(gpuAxis, Qt::AlignBottom);
    chart->addAxis(countAxis, Qt::AlignLeft);
    chart->addAxis(shareAxis, Qt::AlignRight);
    barSeries->attachAxis(gpuAxis);
    barSeries->attachAxis(countAxis);
    cumulative->attachAxis(gpuAxis);
    cumulative->attachAxis(shareAxis);
    styleSummaryAxes(chart, font());
    replaceSummaryChart(m_paretoView, chart);
}

QByteArray SummaryView::offendersCsv() const
{
    return SummaryReport::offendersCsv(m_figures, m_topology.get());
}

QString SummaryView::exportOffendersCsv(const QString &path) const
{
    return SummaryReport::writeFile(path, offendersCsv());
}

QByteArray SummaryView::repeatOffendersCsv() const
{
    return m_repeat->csv();
}

QString SummaryView::exportRepeatOffendersCsv(const QString &path) const
{
    return SummaryReport::writeFile(path, repeatOffendersCsv());
}

QByteArray SummaryView::goodputCsv() const
{
    return m_goodput->figuresCsv();
}

QString SummaryView::exportGoodputCsv(const QString &path) const
{
    return SummaryReport::writeFile(path, goodputCsv());
}

QByteArray SummaryView::goodputLossesCsv() const
{
    return m_goodput->lossesCsv();
}

QString SummaryView::exportGoodputLossesCsv(const QString &path) const
{
    return SummaryReport::writeFile(path, goodputLossesCsv());
}

QStringList SummaryView::reportLines() const
{
    const auto &f = m_figures;
    QStringList lines;
    if (m_day) {
        lines << tr("Range: %1 to %2 UTC")
                     .arg(QDateTime::fromMSecsSinceEpoch(m_day->fromMs, Qt::UTC).toString(Qt::ISODate),
                         QDateTime::fromMSecsSinceEpoch(m_day->toMs, Qt::UTC).toString(Qt::ISODate));
    }
    lines << tr("Utilisation, last day: %1 (target %2 %)").arg(formatPercent(f.dayUtilisation)).arg(targetUtilisation)
          << tr("Utilisation, last week: %1").arg(formatPercent(f.weekUtilisation));
    lines << m_goodput->reportLines();
    lines << tr("Idle, last day: %1, costing %2 at %3 per GPU-hour")
                 .arg(formatHours(f.idleGpuHours), formatMoney(f.idleCost), formatMoney(pricePerGpuHour()))
          << tr("Availability: %1 (%2 of %3 GPUs healthy)")
                 .arg(formatPercent(100 * f.availability))
                 .arg(f.healthyGpus)
                 .arg(f.gpus)
          << tr("Failures from the worst 1 % of GPUs (%1): %2 of %3 failures over the week")
                 .arg(f.worstCount)
                 .arg(formatPercent(100 * f.worstShare))
                 .arg(f.weekFailures);
    if (m_hasRisk) {
        lines << m_unitsLabel->text() << tr("Capacity at risk now: %1").arg(m_riskLabel->text());
    }
    if (!m_unitHoursLabel->text().isEmpty()) {
        lines << m_unitHoursLabel->text();
    }
    return lines;
}

QString SummaryView::exportPdf(const QString &path)
{
    SummaryReport::PdfContent content;
    content.lines = reportLines();
    content.trendChart = m_trendView->grab();
    content.paretoChart = m_paretoView->grab();
    content.worst = m_figures.worst;
    if (m_goodput->figures().hasWeek) {
        content.goodputTrendChart = m_goodput->trendChart();
        content.goodputCauseChart = m_goodput->causeChart();
        content.lossRows = m_goodput->lossRows();
    }
    return SummaryReport::writePdf(path, content);
}

QString SummaryView::exportPng(const QString &path)
{
    return SummaryReport::writePng(path, grab());
}

} // namespace fleetscope
