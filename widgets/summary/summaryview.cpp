// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summaryview.h"

#include "model/csvexport.h"
#include "widgets/style/fontscale.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFontMetrics>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPixmap>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
constexpr int64_t hourMs = 3600LL * 1000;
constexpr int64_t dayMs = 24 * hourMs;
constexpr uint32_t maxOffenders = 1000; // the most GetSummary lists
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

QStandardItem *numberItem(double value, const QString &text)
{
    auto *item = new QStandardItem(text);
    item->setData(value, Qt::UserRole); // sorted on the number, shown as text
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setEditable(false);
    return item;
}

QTableView *sortableTable(QStandardItemModel *model, const QString &name, QWidget *parent)
{
    auto *proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(Qt::UserRole);
    auto *table = new QTableView(parent);
    table->setObjectName(name);
    table->setModel(proxy);
    table->setSortingEnabled(true);
    table->horizontalHeader()->setStretchLastSection(true);
    table->verticalHeader()->hide();
    return table;
}

void replaceChart(QChartView *view, QChart *chart)
{
    // The view owns the chart; the one it had is deleted with its series (the default or the previous one).
    QChart *old = view->chart();
    view->setChart(chart);
    delete old;
}
// Charts go into the report as they look on screen: QChartView::render on a printer lays the chart out again at the
// printer's resolution and truncates its titles.
void drawChart(QPainter *painter, QChartView *view, const QRect &target)
{
    const QPixmap pixmap = view->grab();
    const QSize fitted = view->size().scaled(target.size(), Qt::KeepAspectRatio);
    painter->drawPixmap(QRect(target.topLeft(), fitted), pixmap);
}
} // namespace

SummaryView::Figures SummaryView::computeFigures(const Summary &day, const Summary &week, double pricePerGpuHour)
{
    Figures f;
    f.dayUtilisation = day.fleet.meanUtilisation;
    f.weekUtilisation = week.fleet.meanUtilisation;
    f.idleGpuHours = day.fleet.idleGpuHours;
    f.idleCost = f.idleGpuHours * pricePerGpuHour;
    f.gpus = day.fleet.gpuCount;
    f.healthyGpus = day.fleet.gpuCount - day.fleet.unhealthyGpus;
    f.availability = f.gpus > 0 ? static_cast<double>(f.healthyGpus) / f.gpus : 0.0;
    f.weekFailures = week.totalFailures;
    f.worstCount = std::max<uint32_t>(1, (week.fleet.gpuCount + 99) / 100);
    const size_t listed = std::min<size_t>(f.worstCount, week.offenders.size());
    f.worst.assign(week.offenders.begin(), week.offenders.begin() + static_cast<ptrdiff_t>(listed));
    for (const auto &o : f.worst) {
        f.worstFailures += o.failures;
    }
    f.worstShare = f.weekFailures > 0 ? static_cast<double>(f.worstFailures) / static_cast<double>(f.weekFailures) : 0;
    f.worstShareIsLowerBound = listed < f.worstCount && week.offenders.size() >= maxOffenders;
    return f;
}

QString SummaryView::formatPercent(double percent)
{
    return QString::number(percent, 'f', 1) + QStringLiteral(" %");
}

QString SummaryView::formatHours(double hours)
{
    return QString::number(hours, 'f', 1) + QStringLiteral(" GPU-h");
}

QString SummaryView::formatMoney(double amount)
{
    return QStringLiteral("USD ") + QString::number(amount, 'f', 2);
}

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
    figures->addRow(tr("Idle, last day"), m_idle);
    figures->addRow(tr("Price"), m_price);
    figures->addRow(tr("Cost of idle, last day"), m_cost);
    figures->addRow(tr("Availability (healthy / all GPUs)"), m_availability);
    figures->addRow(tr("Failures from the worst 1 % of GPUs"), m_worstShare);
    figures->addRow(m_note);

    m_trendView = new QChartView(this);
    m_trendView->setObjectName(QStringLiteral("trendChart"));
    m_trendView->setRenderHint(QPainter::Antialiasing);
    m_trendView->setMinimumHeight(260);
    m_trendView->setMinimumWidth(380); // a chart narrower than that is a smudge
    m_paretoView = new QChartView(this);
    m_paretoView->setObjectName(QStringLiteral("paretoChart"));
    m_paretoView->setRenderHint(QPainter::Antialiasing);
    m_paretoView->setMinimumHeight(260);
    m_paretoView->setMinimumWidth(380);

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
    grid->addWidget(m_offenderTable, 1, 0);
    grid->addWidget(m_paretoView, 1, 1);
    grid->addWidget(m_rowTable, 2, 0);
    grid->addWidget(m_jobTable, 2, 1);
    auto *risk = new QVBoxLayout;
    auto *riskTitle = new QLabel(tr("Capacity at risk now: GPUs in racks with thermal or hardware trouble"), this);
    risk->addWidget(riskTitle);
    risk->addWidget(m_riskLabel);
    risk->addWidget(m_riskRackTable, 1);
    grid->addLayout(risk, 3, 0);
    grid->addWidget(m_riskJobTable, 3, 1);
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
    }
}

void SummaryView::useWallLayout()
{
    for (QWidget *desk :
        std::initializer_list<QWidget *> { m_offenderTable, m_rowTable, m_jobTable, m_riskRackTable, m_note }) {
        desk->hide();
    }
    m_grid->removeWidget(m_paretoView);
    m_grid->addWidget(m_paretoView, 1, 0, 1, 2);
}

void SummaryView::setDark(bool dark)
{
    m_dark = dark;
    updateTrendChart();
    updateParetoChart();
}

void SummaryView::setClient(SummaryClient *client)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_pending.clear();
    if (client) {
        connect(client, &SummaryClient::summaryReady, this, &SummaryView::onSummary);
        connect(client, &SummaryClient::requestFailed, this, &SummaryView::onFailed);
    }
}

void SummaryView::refresh(int64_t nowMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_client) {
        return;
    }
    for (const quint64 id : m_pending) {
        m_client->cancel(id); // superseded
    }
    m_pending.clear();
    m_trendIds.clear();
    m_nextDayTrend.clear();
    m_nextWeekTrend.clear();
    m_nextDay.reset();
    m_nextWeek.reset();
    m_dayId = m_client->requestSummary(nowMs - dayMs, nowMs, maxOffenders);
    m_weekId = m_client->requestSummary(nowMs - 7 * dayMs, nowMs, maxOffenders);
    m_pending = { m_dayId, m_weekId };
    for (int i = 0; i < dayBuckets; ++i) {
        const int64_t end = nowMs - i * hourMs;
        const quint64 id = m_client->requestSummary(end - hourMs, end, 1);
        m_trendIds[id] = false;
        m_pending.insert(id);
    }
    for (int i = 0; i < weekBuckets; ++i) {
        const int64_t end = nowMs - i * dayMs;
        const quint64 id = m_client->requestSummary(end - dayMs, end, 1);
        m_trendIds[id] = true;
        m_pending.insert(id);
    }
}

void SummaryView::onSummary(const SummaryPtr &summary)
{
    const quint64 id = summary->requestId;
    if (!m_pending.count(id)) {
        return;
    }
    if (id == m_dayId) {
        m_nextDay = summary;
    } else if (id == m_weekId) {
        m_nextWeek = summary;
    } else if (const auto it = m_trendIds.find(id); it != m_trendIds.end()) {
        (it->second ? m_nextWeekTrend : m_nextDayTrend)
            .push_back({ summary->requestedToMs, summary->fleet.meanUtilisation });
    }
    settle(id);
}

void SummaryView::onFailed(quint64 id, const QString &message)
{
    if (!m_pending.count(id)) {
        return;
    }
    // A trend bucket before the held history fails (FAILED_PRECONDITION) and is simply left out.
    if (id == m_dayId || id == m_weekId) {
        Q_EMIT errorOccurred(tr("summary unavailable: %1").arg(message));
    }
    settle(id);
}

void SummaryView::settle(quint64 id)
{
    m_pending.erase(id);
    if (!m_pending.empty()) {
        return;
    }
    auto byTime = [](const TrendPoint &a, const TrendPoint &b) { return a.endMs < b.endMs; };
    std::sort(m_nextDayTrend.begin(), m_nextDayTrend.end(), byTime);
    std::sort(m_nextWeekTrend.begin(), m_nextWeekTrend.end(), byTime);
    // A refresh that got no trend at all (the backend away) keeps the one shown rather than blanking the charts.
    if (!m_nextDayTrend.empty() || !m_nextWeekTrend.empty()) {
        setTrend(std::move(m_nextDayTrend), std::move(m_nextWeekTrend));
    }
    if (m_nextDay && m_nextWeek) {
        setSummaries(m_nextDay, m_nextWeek);
    }
    m_nextDayTrend.clear();
    m_nextWeekTrend.clear();
    Q_EMIT refreshed();
}

void SummaryView::setSummaries(SummaryPtr day, SummaryPtr week)
{
    m_day = std::move(day);
    m_week = std::move(week);
    fillRollups(m_rowModel, m_day->rows);
    fillRollups(m_jobModel, m_day->jobs);
    updateFigures();
    updateParetoChart();
}

void SummaryView::setTrend(std::vector<TrendPoint> day, std::vector<TrendPoint> week)
{
    m_dayTrend = std::move(day);
    m_weekTrend = std::move(week);
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
    auto *chart = new QChart;
    // The theme first: it resets fonts and series colours, which are set after it.
    chart->setTheme(m_dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    QFont title = font();
    title.setBold(true);
    chart->setTitleFont(title);
    chart->legend()->setFont(font());
    return chart;
}

void SummaryView::styleChart(QChart *chart) const
{
    const QFont labels = scaledFont(font(), 0.8);
    for (QAbstractAxis *axis : chart->axes()) {
        axis->setLabelsFont(labels);
        axis->setTitleFont(labels);
    }
}

void SummaryView::updateTrendChart()
{
    QChart *chart = newChart();
    chart->setTitle(tr("Fleet utilisation against the %1 % target").arg(targetUtilisation));
    auto *time = new QDateTimeAxis;
    time->setFormat(QStringLiteral("dd MMM HH:mm"));
    auto *value = new QValueAxis;
    value->setRange(0, 100);
    value->setLabelFormat(QStringLiteral("%.0f %%"));
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
    auto *target = new QLineSeries;
    target->setName(tr("Target %1 %").arg(targetUtilisation));
    target->append(static_cast<qreal>(first), targetUtilisation);
    target->append(static_cast<qreal>(last), targetUtilisation);
    QPen pen(Qt::red);
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    target->setPen(pen);
    chart->addSeries(target);
    target->attachAxis(time);
    target->attachAxis(value);
    time->setRange(QDateTime::fromMSecsSinceEpoch(first), QDateTime::fromMSecsSinceEpoch(last));
    styleChart(chart);
    replaceChart(m_trendView, chart);
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
    auto *shareAxis = new QValueAxis;
    shareAxis->setRange(0, 100);
    shareAxis->setLabelFormat(QStringLiteral("%.0f %%"));
    chart->addAxis(gpuAxis, Qt::AlignBottom);
    chart->addAxis(countAxis, Qt::AlignLeft);
    chart->addAxis(shareAxis, Qt::AlignRight);
    barSeries->attachAxis(gpuAxis);
    barSeries->attachAxis(countAxis);
    cumulative->attachAxis(gpuAxis);
    cumulative->attachAxis(shareAxis);
    styleChart(chart);
    replaceChart(m_paretoView, chart);
}

QByteArray SummaryView::offendersCsv() const
{
    QByteArray out = "gpu,hostname,gpu_on_node,failures,share_of_week_failures\r\n";
    for (const auto &o : m_figures.worst) {
        const double share = m_figures.weekFailures > 0 ? static_cast<double>(o.failures) / m_figures.weekFailures : 0;
        QByteArray host;
        QByteArray onNode;
        if (m_topology && o.gpu < m_topology->gpuCount) {
            const auto &node = m_topology->nodeOf(o.gpu);
            host = CsvExport::field(node.hostname);
            onNode = QByteArray::number(o.gpu - node.firstGpu);
        }
        out += QByteArray::number(o.gpu) + ',' + host + ',' + onNode + ','
            + QByteArray::number(static_cast<qulonglong>(o.failures)) + ',' + QByteArray::number(share, 'g', 6)
            + "\r\n";
    }
    return out;
}

QString SummaryView::exportOffendersCsv(const QString &path) const
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        return file.errorString();
    }
    const QByteArray csv = offendersCsv();
    if (file.write(csv) != csv.size()) {
        return file.errorString();
    }
    return {};
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
          << tr("Utilisation, last week: %1").arg(formatPercent(f.weekUtilisation))
          << tr("Idle, last day: %1, costing %2 at %3 per GPU-hour")
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
        lines << tr("Capacity at risk now: %1").arg(m_riskLabel->text());
    }
    return lines;
}

QString SummaryView::exportPdf(const QString &path)
{
    QPdfWriter writer(path);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageOrientation(QPageLayout::Landscape);
    writer.setResolution(150);
    writer.setTitle(tr("Fleetscope executive summary"));
    QPainter painter;
    if (!painter.begin(&writer)) {
        return tr("cannot write %1").arg(path);
    }
    const QRect page = painter.viewport();
    QFont title = painter.font();
    title.setPointSize(20);
    title.setBold(true);
    QFont body = painter.font();
    body.setPointSize(12);

    painter.setFont(title);
    const int titleHeight = painter.fontMetrics().height() * 2;
    painter.drawText(QRect(page.left(), page.top(), page.width(), titleHeight), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Fleetscope executive summary"));
    painter.setFont(body);
    const int line = painter.fontMetrics().height() + 4;
    int y = page.top() + titleHeight;
    for (const QString &text : reportLines()) {
        painter.drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft | Qt::AlignVCenter, text);
        y += line;
    }
    y += line;
    drawChart(&painter, m_trendView, QRect(page.left(), y, page.width(), page.bottom() - y));

    writer.newPage();
    const int half = page.height() / 2;
    drawChart(&painter, m_paretoView, QRect(page.left(), page.top(), page.width(), half));
    y = page.top() + half + line;
    painter.drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft,
        tr("Worst 1 % of GPUs, to drain or RMA (GPU: failures)"));
    y += line;
    QStringList items;
    for (const auto &o : m_figures.worst) {
        items << QStringLiteral("%1: %2").arg(o.gpu).arg(o.failures);
    }
    painter.drawText(QRect(page.left(), y, page.width(), page.bottom() - y), Qt::TextWordWrap,
        items.isEmpty() ? tr("no failures") : items.join(QStringLiteral(", ")));
    if (!painter.end()) {
        return tr("cannot finish %1").arg(path);
    }
    return {};
}

QString SummaryView::exportPng(const QString &path)
{
    if (!grab().save(path, "PNG")) {
        return tr("cannot write %1").arg(path);
    }
    return {};
}

} // namespace fleetscope
