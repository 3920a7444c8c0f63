// SPDX-License-Identifier: Apache-2.0
#include "widgets/job/jobpage.h"

#include "model/jobevents.h"
#include "widgets/job/jobheader.h"
#include "widgets/job/jobtables.h"
#include "widgets/job/jobtimeline.h"
#include "widgets/style/fontscale.h"
#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QFontInfo>
#include <QGraphicsOpacityEffect>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QStringBuilder>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace fleetscope {

namespace {

// On the wall: only the top rows, readable across a room.
constexpr size_t wallRows = 5;
constexpr double wallTextPixels = 26;
constexpr double wallTableTextPixels = 24;

QLabel *caption(const QString &text, const QString &name, QWidget *parent)
{
    auto *l = new QLabel(text, parent);
    l->setObjectName(name);
    QFont f = l->font();
    f.setBold(true);
    l->setFont(f);
    l->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum); // sits on its table, whatever the room left
    return l;
}

// A table as tall as its rows, with no scrollbar: the wall's.
void fitToRows(QTableWidget *table, bool fit)
{
    const Qt::ScrollBarPolicy policy = fit ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded;
    table->setVerticalScrollBarPolicy(policy);
    table->setHorizontalScrollBarPolicy(policy);
    if (!fit) {
        table->setMinimumHeight(0);
        table->setMaximumHeight(QWIDGETSIZE_MAX);
        return;
    }
    table->resizeRowsToContents();
    int height = table->horizontalHeader()->sizeHint().height() + 2 * table->frameWidth();
    for (int row = 0; row < table->rowCount(); ++row) {
        height += table->rowHeight(row);
    }
    table->setMinimumHeight(height);
    table->setMaximumHeight(height);
}

// One column takes the rest; the others fit their contents, on the wall with a gap a room away can see (fitted
// exactly, a right-aligned number ran into the next column's header).
void sizeColumns(QTableWidget *table, int stretch, bool wall)
{
    QHeaderView *header = table->horizontalHeader();
    const int gap = wall ? QFontInfo(table->font()).pixelSize() : 0;
    for (int c = 0; c < table->columnCount(); ++c) {
        if (c == stretch) {
            header->setSectionResizeMode(c, QHeaderView::Stretch);
        } else if (wall) {
            header->setSectionResizeMode(c, QHeaderView::Fixed);
            header->resizeSection(c,
                std::max(static_cast<QAbstractItemView *>(table)->sizeHintForColumn(c), header->sectionSizeHint(c))
                    + gap);
        } else {
            header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
        }
    }
}

std::optional<JobMark::Kind> markKind(EventKind kind)
{
    switch (kind) {
    case EventKind::Xid:
        return JobMark::Kind::Xid;
    case EventKind::EccDoubleBit:
        return JobMark::Kind::Ecc;
    case EventKind::ThermalThrottleStart:
    case EventKind::PowerThrottleStart:
        return JobMark::Kind::Throttle;
    case EventKind::NodeDown:
        return JobMark::Kind::NodeDown;
    case EventKind::AnomalyStart:
        return JobMark::Kind::Anomaly;
    case EventKind::IncidentOpen:
        return JobMark::Kind::IncidentOpen;
    case EventKind::IncidentClose:
        return JobMark::Kind::IncidentClose;
    default:
        return std::nullopt;
    }
}

// The topology that names the report's GPUs: the one its indices were checked against (a fleet that changed shape
// since would give another GPU's name); none names them "GPU 1234".
const Topology *namesOf(const TopologyPtr &topology, const JobReport &report)
{
    const bool same = topology
        && (report.topologyGeneration == 0 || topology->generation == 0
            || topology->generation == report.topologyGeneration);
    return same ? topology.get() : nullptr;
}

QTableWidgetItem *cell(const QString &text)
{
    auto *item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    item->setToolTip(text);
    return item;
}

} // namespace

JobPage::JobPage(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedWidget(this))
    , m_placeholder(new QLabel(this))
    , m_content(new QWidget(this))
    , m_banner(new QLabel(this))
    , m_header(new JobHeader(m_content))
    , m_timeline(new JobTimeline(m_content))
    , m_stragglersCaption(
          caption(tr("Stragglers, most holding the job back first"), QStringLiteral("stragglersCaption"), m_content))
    , m_stragglers(makeJobTable({ tr("#"), tr("GPU"), tr("Shows, vs the job's median"), tr("Holds back"), tr("Since"),
                                    tr("GPU-h lost"), tr("Reason") },
          QStringLiteral("stragglers")))
    , m_lossesCaption(caption(tr("GPU-hours lost"), QStringLiteral("lossesCaption"), m_content))
    , m_losses(makeJobTable({ tr("Cause"), tr("What"), tr("GPU-h"), tr("Share") }, QStringLiteral("losses")))
    , m_hitsCaption(caption(tr("What hit its GPUs, newest first"), QStringLiteral("hitsCaption"), m_content))
    , m_hits(makeJobTable({ tr("Time"), tr("What"), tr("GPU"), tr("Detail") }, QStringLiteral("jobHits")))
{
    setObjectName(QStringLiteral("jobPage"));
    m_placeholder->setObjectName(QStringLiteral("jobPlaceholder"));
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_banner->setObjectName(QStringLiteral("jobBanner"));
    m_banner->setWordWrap(true);
    m_banner->setAutoFillBackground(true);
    m_banner->setMargin(6);
    m_banner->hide();

    auto *tables = new QHBoxLayout;
    m_tablesRow = tables;
    // Their own spacing: a column's would otherwise be the row's, the wall's wide gap between the two tables.
    auto *left = new QVBoxLayout;
    left->setSpacing(4);
    left->addWidget(m_stragglersCaption);
    left->addWidget(m_stragglers, 1);
    left->addStretch(); // on the wall, where the tables are as tall as their rows
    auto *right = new QVBoxLayout;
    right->setSpacing(4);
    right->addWidget(m_lossesCaption);
    right->addWidget(m_losses, 1);
    right->addStretch();
    tables->addLayout(left, 3);
    tables->addLayout(right, 2);

    auto *content = new QVBoxLayout(m_content);
    content->setContentsMargins(0, 0, 0, 0);
    content->addWidget(m_header);
    content->addWidget(m_timeline, 3);
    content->addLayout(tables, 2);
    content->addWidget(m_hitsCaption);
    content->addWidget(m_hits, 1);
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_content);

    auto *page = new QVBoxLayout(this);
    page->addWidget(m_banner);
    page->addWidget(m_stack, 1);

    m_hits->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_hits->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);

    connect(m_header, &JobHeader::closeRequested, this, &JobPage::closeRequested);
    connect(m_timeline, &JobTimeline::timeActivated, this, &JobPage::timeActivated);
    connect(m_timeline, &JobTimeline::gpuActivated, this, &JobPage::gpuActivated);
    connect(m_timeline, &JobTimeline::incidentActivated, this, &JobPage::incidentActivated);
    for (QTableWidget *table : { m_stragglers, m_losses, m_hits }) {
        connect(table, &QTableWidget::cellClicked, this, [this, table](int row, int) { activateRow(table, row); });
    }
    refreshProblem();
}

void JobPage::setTopology(TopologyPtr topology)
{
    m_topology = std::move(topology);
    refreshTables();
    refreshHits();
    refreshProblem();
}

bool JobPage::otherShape() const
{
    return m_report && m_topology && !namesOf(m_topology, *m_report);
}

void JobPage::setReport(JobReportPtr report)
{
    // A report of the same job (JobWatch asks every 5 s) hits what the last one hit: the events and alerts are not
    // sifted and listed again (2,000 rows, ~10 ms) unless its life or GPUs changed.
    const bool sameJob = m_report && report && m_report->job.id == report->job.id
        && m_report->job.startTimeMs == report->job.startTimeMs && m_report->job.endTimeMs == report->job.endTimeMs
        && m_report->job.gpus == report->job.gpus && m_report->topologyGeneration == report->topologyGeneration;
    m_report = std::move(report);
    m_header->setReport(m_report);
    m_timeline->setReport(m_report);
    refreshTables();
    if (!sameJob) {
        refreshHits();
    }
    refreshProblem();
}

JobReportPtr JobPage::report() const
{
    return m_report;
}

void JobPage::setProblem(const QString &problem)
{
    m_problem = problem;
    refreshProblem();
}

void JobPage::setEvents(const std::vector<FleetEvent> &events)
{
    m_events = events;
    refreshHits();
}

void JobPage::setAlerts(const AlertBoard &alerts)
{
    m_alerts = alerts;
    refreshHits();
}

void JobPage::setWallMode(bool wall)
{
    m_wall = wall;
    setAttribute(Qt::WA_TransparentForMouseEvents, wall);
    m_header->setWallMode(wall);
    m_timeline->setWallMode(wall);
    QPalette palette = QWidget::palette();
    if (wall) {
        palette.setColor(QPalette::Window, wallstyle::background);
        palette.setColor(QPalette::Base, wallstyle::background);
        palette.setColor(QPalette::AlternateBase, QColor(0x16, 0x1a, 0x22));
        palette.setColor(QPalette::Button, wallstyle::background);
        for (const auto role : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText }) {
            palette.setColor(role, wallstyle::text);
        }
        palette.setColor(QPalette::PlaceholderText, wallstyle::dim);
        setPalette(palette);
    } else {
        setPalette(QPalette());
    }
    setAutoFillBackground(wall);
    const QFont base = parentWidget() ? parentWidget()->font() : QFont();
    // On the wall every part is sized here; on the desk they inherit the window's font again.
    setFont(wall ? wallstyle::sized(base, wallTextPixels, false) : QFont());
    const QFont text = wall ? wallstyle::sized(base, wallTableTextPixels, false) : base;
    const QFont bold = wall ? wallstyle::sized(base, wallTextPixels, true) : [&] {
        QFont f = base;
        f.setBold(true);
        return f;
    }();
    m_timeline->setFont(wall ? wallstyle::sized(base, 24, false) : base);
    m_placeholder->setFont(wall ? wallstyle::sized(base, 40, false) : scaledFont(base, 1.3));
    m_banner->setFont(wall ? wallstyle::sized(base, 32, true) : bold);
    for (QLabel *l : { m_stragglersCaption, m_lossesCaption, m_hitsCaption }) {
        l->setFont(bold);
    }
    for (QTableWidget *table : { m_stragglers, m_losses, m_hits }) {
        table->setFont(text);
        table->horizontalHeader()->setFont(wall ? wallstyle::sized(base, 22, true) : base);
        table->setShowGrid(!wall);
        table->setFrameShape(wall ? QFrame::NoFrame : QFrame::StyledPanel);
        table->setAlternatingRowColors(true);
    }
    m_stragglers->setColumnHidden(SinceColumn, wall);
    m_stragglers->setColumnHidden(ReasonColumn, wall);
    m_tablesRow->setSpacing(wall ? 48 : 6);
    // A table held to its rows' height sits under its caption, not centred in the room its neighbour's rows take.
    for (int i = 0; i < m_tablesRow->count(); ++i) {
        if (QLayout *column = m_tablesRow->itemAt(i)->layout()) {
            for (QTableWidget *table : { m_stragglers, m_losses }) {
                column->setAlignment(table, wall ? Qt::AlignTop : Qt::Alignment());
            }
        }
    }
    // The wall gives what the tables' few rows leave to the timeline, and the stragglers' wider rows more room.
    if (auto *content = qobject_cast<QBoxLayout *>(m_content->layout())) {
        content->setStretchFactor(m_tablesRow, wall ? 0 : 2);
    }
    m_tablesRow->setStretch(0, wall ? 11 : 3);
    m_tablesRow->setStretch(1, wall ? 9 : 2);
    m_hitsCaption->setVisible(!wall);
    m_hits->setVisible(!wall);
    refreshTables();
    refreshProblem();
}

void JobPage::refreshTables()
{
    const size_t rows = m_wall ? wallRows : JobReport::maxStragglers;
    if (m_report) {
        fillStragglers(m_stragglers, *m_report, namesOf(m_topology, *m_report), rows);
        fillLosses(m_losses, *m_report, namesOf(m_topology, *m_report), m_wall ? wallRows : JobReport::maxLosses);
    } else {
        m_stragglers->setRowCount(0);
        m_losses->setRowCount(0);
    }
    m_stragglersCaption->setText(m_report && m_report->stragglers.empty() ? tr("Stragglers: none holds the job back")
            : m_wall                                                      ? tr("Top stragglers")
                     : tr("Stragglers, most holding the job back first"));
    m_lossesCaption->setText(m_wall ? tr("Top GPU-hours lost") : tr("GPU-hours lost, by cause"));
    sizeColumns(m_stragglers, m_wall ? ShowsColumn : ReasonColumn, m_wall);
    sizeColumns(m_losses, WhatColumn, m_wall);
    fitToRows(m_stragglers, m_wall);
    fitToRows(m_losses, m_wall);
}

void JobPage::refreshHits()
{
    std::vector<JobMark> marks;
    struct Hit
    {
        int64_t timeMs;
        QString what;
        int64_t gpu;
        uint64_t incident;
        QString detail;
    };
    std::vector<Hit> hits;
    // The session's events and alerts index the fleet as it is now: against a report checked on another shape of it
    // they would hit GPUs the job never had, so none are matched until a report of this shape comes.
    if (m_report && !otherShape()) {
        const Job &job = m_report->job;
        const std::vector<uint32_t> &gpus = job.gpus;
        const std::vector<FleetEvent> kept = jobEvents(job, m_events, m_topology.get());
        for (const FleetEvent &e : kept) {
            int64_t gpu = e.gpu;
            if (gpu < 0 && e.incident) {
                // An incident names runs: the first of the job's GPUs it hits is the one to show.
                for (const auto &[first, count] : e.incident->gpuRuns) {
                    const auto it = std::lower_bound(gpus.begin(), gpus.end(), first);
                    if (it != gpus.end() && *it - first < count) {
                        gpu = *it;
                        break;
                    }
                }
            }
            const uint64_t incident = e.incident ? e.incident->id : 0;
            QString what = QString::fromLatin1(eventKindName(e.kind));
            if (e.xid != 0) {
                what += QStringLiteral(" ") % QString::number(e.xid);
            }
            if (incident != 0) {
                what += QStringLiteral(" ") % QString::number(incident);
            }
            QString where = gpu >= 0 ? jobGpuName(m_topology.get(), static_cast<uint32_t>(gpu)) : QString();
            if (where.isEmpty() && e.node >= 0 && m_topology
                && static_cast<uint64_t>(e.node) < m_topology->nodes.size()) {
                where = m_topology->nodes[static_cast<size_t>(e.node)].hostname;
            }
            hits.push_back({ e.timeMs, what, gpu, incident, e.text.isEmpty() ? where : e.text });
            if (const auto kind = markKind(e.kind)) {
                marks.push_back({ e.timeMs, *kind, e.severity, gpu, incident,
                    what % QStringLiteral(" · ") % (where.isEmpty() ? QString() : where % QStringLiteral(" · "))
                        % e.text });
            }
        }
        for (const JobAlert &a : jobAlerts(job, m_alerts)) {
            const FleetAlert &alert = m_alerts.alerts[a.index];
            const int64_t at = std::max(alert.startsAtMs, job.startTimeMs);
            QString summary = alert.annotation(QStringLiteral("summary"));
            if (summary.isEmpty()) {
                summary = alert.annotation(QStringLiteral("description"));
            }
            if (summary.isEmpty()) {
                summary
                    = tr("firing since %1")
                          .arg(QDateTime::fromMSecsSinceEpoch(alert.startsAtMs).toString(QStringLiteral("HH:mm:ss")));
            }
            const QString what = tr("alert %1 (%2)").arg(alert.name(), describe(alert.severity))
                % (alert.suppressed ? tr(", silenced") : QString());
            const QString where = jobGpuName(m_topology.get(), a.gpu);
            hits.push_back({ at, what, a.gpu, 0, summary.isEmpty() ? where : summary });
            marks.push_back({ at, JobMark::Kind::Alert, alert.severity, a.gpu, 0,
                what % QStringLiteral(" · ") % where
                    % (summary.isEmpty() ? QString() : QStringLiteral(" · ") % summary) });
        }
    }
    m_timeline->setMarks(std::move(marks));

    std::stable_sort(hits.begin(), hits.end(), [](const Hit &a, const Hit &b) { return a.timeMs > b.timeMs; });
    m_hits->setRowCount(static_cast<int>(hits.size()));
    for (size_t i = 0; i < hits.size(); ++i) {
        const Hit &h = hits[i];
        const int row = static_cast<int>(i);
        auto *time = cell(QDateTime::fromMSecsSinceEpoch(h.timeMs).toString(QStringLiteral("HH:mm:ss")));
        if (h.gpu >= 0) {
            time->setData(gpuRole, static_cast<uint32_t>(h.gpu));
        }
        if (h.incident != 0) {
            time->setData(incidentRole, static_cast<quint64>(h.incident));
        }
        m_hits->setItem(row, 0, time);
        m_hits->setItem(row, 1, cell(h.what));
        m_hits->setItem(
            row, 2, cell(h.gpu >= 0 ? jobGpuName(m_topology.get(), static_cast<uint32_t>(h.gpu)) : QString()));
        m_hits->setItem(row, 3, cell(h.detail));
    }
    m_hitsCaption->setText(hits.empty() ? tr("Nothing hit its GPUs") : tr("What hit its GPUs, newest first"));
}

void JobPage::refreshProblem()
{
    m_stack->setCurrentWidget(m_report ? m_content : static_cast<QWidget *>(m_placeholder));
    if (!m_report) {
        m_placeholder->setText(m_problem.isEmpty() ? tr("Loading the job…") : m_problem);
    }
    const bool shape = otherShape();
    const bool old = m_report && (!m_problem.isEmpty() || shape);
    if (old) {
        QStringList why;
        if (!m_problem.isEmpty()) {
            why << m_problem;
        }
        if (shape) {
            why << tr("checked against another shape of the fleet");
        }
        m_banner->setText(
            tr("Old: %1, as of %2")
                .arg(why.join(QStringLiteral("; ")),
                    QDateTime::fromMSecsSinceEpoch(m_report->asOfMs).toString(QStringLiteral("HH:mm:ss"))));
        QPalette p = m_banner->palette();
        p.setColor(QPalette::Window, m_wall ? wallstyle::warning : QColor(0xff, 0xe0, 0xa0));
        p.setColor(QPalette::WindowText, QColor(0x20, 0x18, 0x00));
        m_banner->setPalette(p);
    }
    m_banner->setVisible(old);
    // Greyed, not disabled: a report only late still answers clicks (its GPUs are still the job's); one of another
    // shape of the fleet stores no GPU in its rows (refreshTables), so they name none of today's.
    if (old && !m_content->graphicsEffect()) {
        // Faded into the page's ground rather than colourised grey: on the wall's near-black a grey tint lifted the
        // ground to mid-grey and left the text as bright as before.
        auto *faded = new QGraphicsOpacityEffect(m_content);
        faded->setOpacity(0.4);
        m_content->setGraphicsEffect(faded);
    } else if (!old && m_content->graphicsEffect()) {
        m_content->setGraphicsEffect(nullptr);
    }
}

void JobPage::activateRow(QTableWidget *table, int row)
{
    const QTableWidgetItem *item = table->item(row, 0);
    if (m_wall || !item) {
        return;
    }
    bool ok = false;
    const quint64 incident = item->data(incidentRole).toULongLong(&ok);
    if (ok && incident != 0) {
        Q_EMIT incidentActivated(incident);
        return;
    }
    const uint gpu = item->data(gpuRole).toUInt(&ok);
    if (ok && item->data(gpuRole).isValid()) {
        Q_EMIT gpuActivated(gpu);
    }
}

} // namespace fleetscope
