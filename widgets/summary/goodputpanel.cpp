// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/goodputpanel.h"

#include "widgets/style/fontscale.h"
#include "widgets/summary/summarycharts.h"
#include "widgets/summary/summaryreport.h"
#include "widgets/summary/summarytables.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QStandardItemModel>
#include <QTableView>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
constexpr int64_t dayMs = 24LL * 3600 * 1000;
constexpr int gpuRole = Qt::UserRole + 1; // the GPU a loss names, on its What cell

QLabel *figure(const QString &name, QWidget *parent)
{
    auto *label = new QLabel(QStringLiteral("–"), parent);
    label->setObjectName(name);
    label->setProperty("figure", true); // sized with the page's figures (SummaryView::setBaseFont)
    QFont f = scaledFont(label->font(), 2.0);
    f.setBold(true);
    label->setFont(f);
    return label;
}

QStandardItem *textItem(const QString &text)
{
    auto *item = new QStandardItem(text);
    item->setData(text, Qt::UserRole); // the tables sort on UserRole
    item->setEditable(false);
    return item;
}
} // namespace

GoodputPanel::GoodputPanel(QWidget *parent)
    : QWidget(parent)
    , m_font(font())
{
    m_dayFigure = figure(QStringLiteral("dayGoodput"), this);
    m_weekFigure = figure(QStringLiteral("weekGoodput"), this);
    m_lostFigure = figure(QStringLiteral("goodputLostCost"), this);
    const QString why = tr("Of the GPU-time of the jobs that ran, the share spent computing: not checkpointing, "
                           "stalled, restarting, redoing lost work or held back by a straggler. The target is the "
                           "field's published reference: ByteRobust's 97 % effective training time ratio over three "
                           "months on 9,600 GPUs.");
    m_dayFigure->setToolTip(why);
    m_weekFigure->setToolTip(why);

    m_title = new QLabel(tr("Where goodput went, last week"), this);
    m_title->setObjectName(QStringLiteral("goodputTitle"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_line = new QLabel(tr("waiting for the summary"), this);
    m_line->setObjectName(QStringLiteral("goodputLine"));
    m_line->setWordWrap(true);

    const QStringList headers = { tr("Cause"), tr("What"), tr("GPU-h lost"), tr("Share"), tr("Jobs"), tr("Cost") };
    m_model = new QStandardItemModel(0, static_cast<int>(headers.size()), this);
    m_model->setHorizontalHeaderLabels(headers);
    m_model->setHeaderData(3, Qt::Horizontal, tr("Of the jobs' GPU-time over the week"), Qt::ToolTipRole);
    m_model->setHeaderData(4, Qt::Horizontal, tr("The jobs it cost"), Qt::ToolTipRole);
    m_model->setHeaderData(5, Qt::Horizontal, tr("At the page's price per GPU-hour"), Qt::ToolTipRole);
    m_table = sortableTable(m_model, QStringLiteral("goodputLossTable"), this);
    m_table->sortByColumn(2, Qt::DescendingOrder); // most lost first until someone clicks a header
    m_table->setWordWrap(false);
    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex &index) {
        bool ok = false;
        const qlonglong gpu = m_table->model()->index(index.row(), 1).data(gpuRole).toLongLong(&ok);
        if (ok && gpu >= 0 && gpu <= static_cast<qlonglong>(UINT32_MAX)) {
            Q_EMIT gpuChosen(static_cast<uint32_t>(gpu));
        }
    });

    m_trendView = newSummaryChartView(QStringLiteral("goodputTrendChart"), this);
    m_causeView = newSummaryChartView(QStringLiteral("goodputCauseChart"), this);

    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, QFontMetrics(m_font).height() / 2, 0, 0); // apart from the figures' note above
    grid->addWidget(m_title, 0, 0, 1, 3);
    grid->addWidget(m_line, 1, 0, 1, 3);
    grid->addWidget(m_table, 2, 0);
    grid->addWidget(m_trendView, 2, 1);
    grid->addWidget(m_causeView, 2, 2);
    // The table takes the width its names need; the trend wants more room than five bars.
    grid->setColumnStretch(0, 4);
    grid->setColumnStretch(1, 3);
    grid->setColumnStretch(2, 2);
    setLook(m_font, m_dark);
    update();
}

void GoodputPanel::addFiguresTo(QFormLayout *form)
{
    m_form = form;
    const QString target = QString::number(targetGoodput, 'f', 0);
    form->addRow(tr("Goodput of jobs, last day"), m_dayFigure);
    form->addRow(tr("Goodput of jobs, last week (target %1 %)").arg(target), m_weekFigure);
    form->addRow(tr("Cost of job-hours lost, last week"), m_lostFigure);
    updateFigureRows();
}

void GoodputPanel::useWallLayout()
{
    m_wall = true;
    hide();
    updateFigureRows();
}

void GoodputPanel::setSummaries(SummaryPtr day, SummaryPtr week)
{
    m_day = std::move(day);
    m_week = std::move(week);
    update();
}

void GoodputPanel::setTrend(const std::vector<SummaryTrendPoint> &day, const std::vector<SummaryTrendPoint> &week)
{
    m_dayTrend = day;
    m_weekTrend = week;
    updateTrendChart();
}

void GoodputPanel::setTopology(TopologyPtr topology)
{
    m_topology = std::move(topology);
    updateTable();
}

void GoodputPanel::setPricePerGpuHour(double price)
{
    m_price = price;
    update();
}

void GoodputPanel::setLook(const QFont &font, bool dark)
{
    m_font = font;
    m_dark = dark;
    QFont bold = font;
    bold.setBold(true);
    m_title->setFont(bold);
    // As the page's other tables (SummaryView::setBaseFont), the subject taking the spare width; tall enough for the
    // ten largest losses without scrolling.
    const int row = QFontMetrics(font).height() * 14 / 10;
    m_table->verticalHeader()->setDefaultSectionSize(row);
    m_table->horizontalHeader()->setFont(font);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->setMinimumHeight(row * 11 + 2 * m_table->frameWidth());
    updateTrendChart();
    updateCauseChart();
}

void GoodputPanel::update()
{
    m_figures = m_day && m_week ? computeGoodputFigures(*m_day, *m_week, m_price) : GoodputFigures();
    const auto &f = m_figures;
    if (!m_day || !m_week) {
        m_line->setText(tr("waiting for the summary"));
    } else if (!f.hasWeek) {
        m_line->setText(tr("No job ran this week, or the backend does not account jobs: no goodput to show."));
    } else {
        const double share = f.weekJobGpuHours > 0 ? 100 * f.weekLostGpuHours / f.weekJobGpuHours : 0;
        m_line->setText(
            tr("%1 jobs lost %2 of their %3 (%4), %5 at %6 per GPU-hour; the causes the backend "
               "found, most first:")
                .arg(f.weekJobs)
                .arg(formatSummaryHours(f.weekLostGpuHours), formatSummaryHours(f.weekJobGpuHours),
                    formatSummaryPercent(share), formatSummaryMoney(f.weekLostCost), formatSummaryMoney(m_price)));
    }
    for (QWidget *shown : std::initializer_list<QWidget *> { m_table, m_trendView, m_causeView }) {
        shown->setVisible(f.hasWeek);
    }
    updateFigureRows();
    updateTable();
    updateTrendChart();
    updateCauseChart();
}

void GoodputPanel::updateFigureRows()
{
    const auto &f = m_figures;
    m_dayFigure->setText(f.hasDay ? formatSummaryPercent(f.dayGoodput) : tr("no job ran"));
    m_weekFigure->setText(f.hasWeek ? formatSummaryPercent(f.weekGoodput) : tr("no job ran"));
    m_lostFigure->setText(f.hasWeek ? formatSummaryMoney(f.weekLostCost) : QString());
    m_lostFigure->setToolTip(f.hasWeek
            ? tr("%1 lost at %2 per GPU-hour").arg(formatSummaryHours(f.weekLostGpuHours), formatSummaryMoney(m_price))
            : QString());
    if (m_form == nullptr) {
        return;
    }
    // Before any summary the rows show a dash as the others do; a week without jobs has nothing to say per day.
    const bool waiting = !m_day || !m_week;
    m_form->setRowVisible(m_dayFigure, !m_wall && (waiting || f.hasWeek));
    m_form->setRowVisible(m_weekFigure, true);
    m_form->setRowVisible(m_lostFigure, !m_wall && (waiting || f.hasWeek));
}

void GoodputPanel::updateTable()
{
    m_model->setRowCount(0); // the sort is kept while rows are replaced
    const auto &f = m_figures;
    for (const auto &loss : f.losses) {
        const double share = f.weekJobGpuHours > 0 ? loss.gpuHours / f.weekJobGpuHours : 0;
        auto *what = textItem(goodputLossSubject(loss, m_topology.get()));
        what->setToolTip(loss.what);
        if (loss.gpu >= 0) {
            what->setData(static_cast<qlonglong>(loss.gpu), gpuRole);
        }
        m_model->appendRow({ textItem(goodputCauseName(loss.cause)), what,
            numberItem(loss.gpuHours, QString::number(loss.gpuHours, 'f', 1)),
            // A share under 0.05 % is not nothing: said as such rather than 0.0 %.
            numberItem(share, share > 0 && share < 0.0005 ? tr("< 0.1 %") : formatSummaryPercent(100 * share)),
            numberItem(loss.jobs, QString::number(loss.jobs)),
            numberItem(loss.gpuHours * m_price, formatSummaryMoney(loss.gpuHours * m_price)) });
    }
}

void GoodputPanel::updateTrendChart()
{
    QChart *chart = newSummaryChart(m_font, m_dark);
    chart->setTitle(tr("Goodput of jobs against the %1 % target").arg(targetGoodput));
    auto *time = new QDateTimeAxis;
    time->setFormat(QStringLiteral("dd MMM HH:mm"));
    auto *value = summaryPercentAxis();
    chart->addAxis(time, Qt::AlignBottom);
    chart->addAxis(value, Qt::AlignLeft);
    int64_t first = 0;
    int64_t last = 0;
    double lowest = targetGoodput;
    auto addLine = [&](const std::vector<SummaryTrendPoint> &points, const QString &name) {
        auto *series = new QLineSeries;
        series->setName(name);
        for (const auto &p : points) {
            if (!p.hasGoodput) {
                continue; // no job ran in that bucket: a gap, not a 0 %
            }
            series->append(static_cast<qreal>(p.endMs), p.goodput);
            first = first == 0 ? p.endMs : std::min(first, p.endMs);
            last = std::max(last, p.endMs);
            lowest = std::min(lowest, p.goodput);
        }
        series->setPointsVisible(true);
        chart->addSeries(series);
        series->attachAxis(time);
        series->attachAxis(value);
    };
    // Shorter names than the utilisation chart's: this chart shares its row with the table.
    addLine(m_weekTrend, tr("Week, daily"));
    addLine(m_dayTrend, tr("Day, hourly"));
    if (first == last) {
        first = last - dayMs;
        last = last == 0 ? dayMs : last;
    }
    time->setFormat(last - first > 2 * dayMs ? QStringLiteral("dd MMM") : QStringLiteral("HH:mm"));
    addSummaryTarget(chart, time, value, first, last, static_cast<int>(targetGoodput));
    // Goodput lives near the top: from the next ten below the lowest point (5 points of room), not from 0.
    const double floorAt = std::clamp(std::floor((lowest - 5) / 10) * 10, 0.0, 90.0);
    value->setRange(floorAt, 100);
    const double step = 100 - floorAt > 20 ? 10 : 5; // ticks on round numbers
    value->setTickCount(static_cast<int>((100 - floorAt) / step) + 1);
    styleSummaryAxes(chart, m_font);
    replaceSummaryChart(m_trendView, chart);
}

void GoodputPanel::updateCauseChart()
{
    QChart *chart = newSummaryChart(m_font, m_dark);
    chart->setTitle(tr("GPU-hours lost by cause, last week"));
    chart->legend()->hide();
    auto *bars = new QBarSet(tr("GPU-h lost"));
    QStringList categories;
    double most = 1;
    // A horizontal chart lists its categories from the bottom up: the first cause on top.
    for (auto it = goodputCauses.rbegin(); it != goodputCauses.rend(); ++it) {
        const double hours = m_figures.weekByCause[static_cast<size_t>(*it)];
        if (*it == LossCause::Unspecified && hours <= 0) {
            continue; // "Other" only when the backend lumped some together
        }
        // To a tenth of a GPU-hour, as the table shows them: the label prints the value as it is ("35.6768").
        *bars << std::round(hours * 10) / 10;
        categories << goodputCauseName(*it);
        most = std::max(most, hours);
    }
    auto *series = new QHorizontalBarSeries;
    series->append(bars);
    series->setLabelsVisible(true);
    // Past each bar's end, in the chart's text colour: a small loss's bar is too short to hold its number.
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(6);
    bars->setLabelColor(chart->titleBrush().color());
    bars->setLabelFont(scaledFont(m_font, 0.8));
    chart->addSeries(series);
    auto *causes = new QBarCategoryAxis;
    causes->append(categories);
    auto *hours = new QValueAxis;
    hours->setRange(0, most * 1.25); // room for the largest bar's number
    hours->applyNiceNumbers();
    hours->setLabelFormat(QStringLiteral("%.0f"));
    hours->setTitleText(tr("GPU-h"));
    chart->addAxis(causes, Qt::AlignLeft);
    chart->addAxis(hours, Qt::AlignBottom);
    series->attachAxis(causes);
    series->attachAxis(hours);
    styleSummaryAxes(chart, m_font);
    replaceSummaryChart(m_causeView, chart);
}

QStringList GoodputPanel::reportLines() const
{
    const auto &f = m_figures;
    if (!m_day || !m_week) {
        return {};
    }
    if (!f.hasWeek) {
        return { tr("Goodput of jobs: no job ran this week (or the backend does not account jobs)") };
    }
    return { tr("Goodput of jobs, last day: %1; last week: %2 (target %3 %, ByteRobust's effective training time)")
                 .arg(f.hasDay ? formatSummaryPercent(f.dayGoodput) : tr("no job ran"),
                     formatSummaryPercent(f.weekGoodput))
                 .arg(targetGoodput),
        tr("Job-hours lost, last week: %1 of %2 over %3 jobs, costing %4")
            .arg(formatSummaryHours(f.weekLostGpuHours), formatSummaryHours(f.weekJobGpuHours))
            .arg(f.weekJobs)
            .arg(formatSummaryMoney(f.weekLostCost)) };
}

std::vector<QStringList> GoodputPanel::lossRows() const
{
    std::vector<QStringList> rows;
    QStringList header;
    for (int c = 0; c < m_model->columnCount(); ++c) {
        header << m_model->headerData(c, Qt::Horizontal).toString();
    }
    rows.push_back(header);
    // The model holds the losses in the figures' order (most first), whatever the table's sort.
    for (int r = 0; r < m_model->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < m_model->columnCount(); ++c) {
            cells << m_model->item(r, c)->text();
        }
        rows.push_back(cells);
    }
    return rows;
}

QPixmap GoodputPanel::trendChart() const
{
    return m_trendView->grab();
}

QPixmap GoodputPanel::causeChart() const
{
    return m_causeView->grab();
}

QByteArray GoodputPanel::figuresCsv() const
{
    return SummaryReport::goodputCsv(m_day.get(), m_week.get());
}

QByteArray GoodputPanel::lossesCsv() const
{
    return SummaryReport::goodputLossesCsv(m_figures, m_topology.get(), m_price);
}

} // namespace fleetscope
