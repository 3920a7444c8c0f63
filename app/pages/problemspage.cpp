// SPDX-License-Identifier: Apache-2.0
#include "app/pages/problemspage.h"

#include "app/consolesession.h"
#include "app/healthstrip.h"
#include "app/pages/mappage.h"
#include "app/problemsmodel.h"
#include "app/session/fleetalerts.h"
#include "model/alertproblems.h"
#include "model/domainhighlight.h"
#include "model/navigation.h"
#include "widgets/alerts/silencedialog.h"
#include "widgets/alerts/silencesview.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/wall/problemsboard.h"

#include <QComboBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace fleetscope {

ProblemsPage::ProblemsPage(ConsoleSession *session, Look look, MapPage *map, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_map(map)
    , m_look(look)
{
    if (look == Look::Desk) {
        makeTable();
    } else {
        m_board = new ProblemsBoard(this);
        auto *layout = new QVBoxLayout(this);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(m_board);
    }
    connect(m_session, &ConsoleSession::fleetEventsChanged, this, &ProblemsPage::refresh);
    connect(m_session, &ConsoleSession::jobsChanged, this, &ProblemsPage::refresh);
    connect(m_session, &ConsoleSession::topologyChanged, this, &ProblemsPage::refresh);
    followAlerts(m_session->alerts());
    if (look == Look::Desk) {
        connect(m_session, &ConsoleSession::shownChanged, this,
            [this](const ShownState &shown, ShownState::Changes changes) {
                if (!m_shown || (changes & ShownState::Frame) == 0) {
                    return;
                }
                const FramePtr frame = shown.raw ? shown.raw : shown.frame; // as the health strip takes it
                const uint32_t critical = frame ? HealthStrip::count(*frame)[HealthStrip::Critical] : 0;
                if (critical != m_gpusCritical) {
                    m_gpusCritical = critical;
                    showCount();
                }
            });
    }
    // Bursts end and durations grow with time alone: the wall, read from across the room as what is wrong now, looks
    // again every 5 s; the desk's dock each half minute.
    m_clock.setInterval(look == Look::Wall ? 5000 : 30000);
    connect(&m_clock, &QTimer::timeout, this, &ProblemsPage::refresh);
    if (m_map != nullptr) {
        // Another outline took the domain's highlight away: so goes its key.
        connect(m_map->heatmap(), &HeatmapView::domainGpusChanged, this, [this](size_t count) {
            if (count == 0) {
                m_map->legend()->setDomainNote({});
            }
        });
    }
    setShown(look == Look::Desk);
}

void ProblemsPage::makeTable()
{
    m_model = new ProblemsModel(this);
    m_kinds = new QComboBox(this);
    m_count = new QLabel(this);
    m_count->setWordWrap(true);
    m_table = new QTableView(this);
    m_kinds->addItem(tr("All kinds"), -1);
    for (int k = 0; k < Problem::kindCount; ++k) {
        m_kinds->addItem(describe(static_cast<Problem::Kind>(k)), k);
    }
    m_kinds->setToolTip(tr("Show one kind of problem only"));
    connect(m_kinds, &QComboBox::currentIndexChanged, this, &ProblemsPage::applyFilter);

    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->verticalHeader()->hide();
    // Two columns: the entry, its lines wrapped to what the dock leaves it, and how long it has been open. The
    // others say the same facts one each (ProblemsModel); in a dock of 300 px six columns cut every one of them.
    QHeaderView *header = m_table->horizontalHeader();
    for (int c = 0; c < ProblemsModel::ColumnCount; ++c) {
        m_table->setColumnHidden(c, c != ProblemsModel::EntryColumn && c != ProblemsModel::SinceColumn);
    }
    header->setSectionResizeMode(ProblemsModel::EntryColumn, QHeaderView::Stretch);
    // "open for" as wide as its longest text: never measured against the rows (at a million GPUs there are thousands
    // of problems, and laying out each cell's text on every refresh held the GUI thread for 50-120 ms).
    header->setSectionResizeMode(ProblemsModel::SinceColumn, QHeaderView::Fixed);
    header->resizeSection(ProblemsModel::SinceColumn,
        std::max(
            fontMetrics().horizontalAdvance(tr("23 h 59 min")), header->fontMetrics().horizontalAdvance(tr("open for")))
            + 4 * style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header));
    // Rows not measured (past maxFittedRows) show three lines: where, what and the jobs of most entries.
    m_table->verticalHeader()->setDefaultSectionSize(3 * fontMetrics().lineSpacing() + 8);
    m_table->setWordWrap(true);
    m_table->setTextElideMode(Qt::ElideNone);
    connect(header, &QHeaderView::sectionResized, this, [this](int section) {
        if (section == ProblemsModel::EntryColumn) {
            fitRows();
        }
    });
    m_table->setToolTip(tr("Ranked: incidents first (a shared cause), then critical, then by the GPUs of the jobs "
                           "they hit. Click one to show it."));
    connect(m_table, &QTableView::clicked, this, &ProblemsPage::choose);
    connect(m_table, &QTableView::activated, this, &ProblemsPage::choose);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ProblemsPage::updateActions);

    // What an operator does about the chosen problem: silence it (in Alertmanager, through the backend), read its
    // runbook. The same from the table's context menu.
    m_silenceButton = new QPushButton(tr("Silence…"), this);
    m_runbookButton = new QPushButton(tr("Open runbook"), this);
    connect(m_silenceButton, &QPushButton::clicked, this, &ProblemsPage::silenceChosen);
    connect(m_runbookButton, &QPushButton::clicked, this, &ProblemsPage::openChosenRunbook);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint &at) {
        const QModelIndex index = m_table->indexAt(at);
        if (!index.isValid()) {
            return;
        }
        m_table->selectRow(index.row());
        QMenu menu(this);
        menu.setToolTipsVisible(true); // a greyed-out entry says why
        menu.addAction(tr("Show on map"), this, [this, index] { choose(index); });
        QAction *silence = menu.addAction(m_silenceButton->text(), this, &ProblemsPage::silenceChosen);
        silence->setEnabled(m_silenceButton->isEnabled());
        silence->setToolTip(m_silenceButton->toolTip());
        QAction *runbook = menu.addAction(m_runbookButton->text(), this, &ProblemsPage::openChosenRunbook);
        runbook->setEnabled(m_runbookButton->isEnabled());
        runbook->setToolTip(m_runbookButton->toolTip());
        addJobPageActions(&menu, index.row());
        menu.exec(m_table->viewport()->mapToGlobal(at));
    });

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_count, 1);
    top->addWidget(m_kinds);
    auto *actions = new QHBoxLayout;
    actions->setContentsMargins(0, 0, 0, 0);
    actions->addWidget(m_silenceButton);
    actions->addWidget(m_runbookButton);
    actions->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);
    layout->addLayout(actions);
    updateActions();
}

void ProblemsPage::setShown(bool shown)
{
    m_shown = shown;
    if (!shown && m_look == Look::Desk) {
        m_clock.stop();
        return;
    }
    if (!m_clock.isActive()) {
        m_clock.start();
    }
    refresh();
}

void ProblemsPage::refresh()
{
    if (!m_shown && m_look == Look::Desk) {
        return;
    }
    const int64_t now = QDateTime::currentMSecsSinceEpoch();
    const TopologyPtr topology = m_session->topology();
    const JobsPtr jobs = m_session->jobs();
    std::vector<Problem> problems = withAlerts(m_session->problems(now), m_alerts, topology.get(), jobs.get(), now);
    if (m_board != nullptr) {
        // A wall shows what is wrong: information stays on the desk.
        problems.erase(std::remove_if(problems.begin(), problems.end(),
                           [](const Problem &p) { return p.severity == EventSeverity::Info; }),
            problems.end());
        m_tally = tallyProblems(problems);
        m_lead = leadIncidentLine(problems, m_tally, &m_leadSeverity);
        m_board->setProblems(std::move(problems), topology, jobs, now);
        Q_EMIT tallied(m_tally);
        return;
    }
    m_tally = tallyProblems(problems);
    // The chosen problem stays chosen if it is still open.
    std::optional<Problem::Key> chosen;
    if (const auto rows = m_table->selectionModel()->selectedRows(); !rows.isEmpty()) {
        if (const Problem *p = m_model->problemAt(rows.first().row())) {
            chosen = p->key();
        }
    }
    m_model->setProblems(std::move(problems), topology, jobs, now);
    if (chosen) {
        if (const int row = m_model->rowOf(*chosen); row >= 0) {
            m_table->selectRow(row);
        }
    }
    updateActions();
    const ShownState &state = m_session->shown();
    const FramePtr frame = state.raw ? state.raw : state.frame;
    m_gpusCritical = frame ? HealthStrip::count(*frame)[HealthStrip::Critical] : 0;
    showCount();
    fitRows();
    Q_EMIT tallied(m_tally);
}

void ProblemsPage::showCount()
{
    // Two units, each named: the problems listed (the wall's words too) and the GPUs critical in the frame shown,
    // counted as the health strip counts them, so that "GPUs: 1 critical" there reads beside "12 problems (5
    // critical)" here without seeming to disagree.
    const int total = m_model->totalCount();
    const int shown = m_model->shownCount();
    const QString tally = tallyText(m_tally);
    const QString problems = shown == total ? tally : tr("%1 shown of %2").arg(shown).arg(tally);
    m_count->setText(tr("%1 · %L2 GPUs critical now").arg(problems).arg(m_gpusCritical));
    if (!m_alertsNote.isEmpty()) {
        m_count->setText(m_count->text() + QLatin1Char('\n') + alertsNote());
    }
}

void ProblemsPage::fitRows()
{
    if (m_table == nullptr) {
        return;
    }
    const int rows = std::min(m_model->rowCount(), maxFittedRows);
    for (int row = 0; row < rows; ++row) {
        m_table->resizeRowToContents(row);
    }
}

void ProblemsPage::applyFilter()
{
    const int kind = m_kinds->currentData().toInt();
    std::vector<Problem::Kind> kinds;
    if (kind >= 0) {
        kinds.push_back(static_cast<Problem::Kind>(kind));
    }
    m_model->setKindFilter(std::move(kinds));
    refresh();
}

void ProblemsPage::choose(const QModelIndex &index)
{
    const Problem *p = m_model->problemAt(index.row());
    const TopologyPtr topology = m_session->topology();
    if (p == nullptr || !topology || m_map == nullptr) {
        return;
    }
    if (p->gpus.empty()) {
        return;
    }
    const Problem problem = *p; // a copy: the model may be refreshed while the map moves
    // Outlined as a job's blast radius is: the GPUs of anything more than one GPU's.
    m_map->heatmap()->setMarkedGpus(problem.gpu >= 0 ? std::vector<uint32_t>() : problem.gpus);
    m_map->navigation()->goTo(placeToShow(problem, *topology));
    if (problem.kind == Problem::Kind::Incident && problem.incident) {
        // The domain it names, all of its GPUs, highlighted beside the GPUs it hits: "these are the GPUs behind leaf
        // su03-l5; these of them are hit".
        const auto domain = highlightDomain(*topology, problem.incident->domain, problem.gpus);
        m_map->heatmap()->setDomainGpus(domain ? domain->runs : std::vector<std::pair<uint32_t, uint32_t>>());
        Q_EMIT incidentChosen(problem.incident->id, gpuRuns(problem.gpus));
        QString text = tr("%1 · %2: %n GPU(s) outlined", nullptr, static_cast<int>(problem.gpus.size()))
                           .arg(incidentCauseLabel(problem), ProblemsModel::summary(problem));
        // The legend keeps saying it while the highlight is shown (the status line's words go after 10 s).
        m_map->legend()->setDomainNote(domain ? domain->text() : QString());
        if (domain) {
            text += tr(" · %1 (its racks outlined in cyan)").arg(domain->text());
        }
        Q_EMIT message(text, 10000);
        return;
    }
    if (problem.kind == Problem::Kind::Alert) {
        Q_EMIT message(tr("ALERT %1 at %2: %n GPU(s) outlined%3", nullptr, static_cast<int>(problem.gpus.size()))
                           .arg(ProblemsModel::summary(problem), ProblemsModel::placeName(problem, topology.get()),
                               problem.quietNote.isEmpty() ? QString() : QStringLiteral(" · ") + problem.quietNote),
            10000);
        return;
    }
    Q_EMIT message(
        tr("%1 at %2").arg(ProblemsModel::summary(problem), ProblemsModel::placeName(problem, topology.get())), 10000);
}

void ProblemsPage::addJobPageActions(QMenu *menu, int row)
{
    // The jobs it hits, each with a page of its own: one entry for one job, a submenu for several (the first few; the
    // rest are a search away).
    constexpr size_t listed = 12;
    const Problem *p = m_model->problemAt(row);
    if (p == nullptr || p->jobIds.empty()) {
        return;
    }
    menu->addSeparator();
    QMenu *jobs = p->jobIds.size() == 1 ? menu : menu->addMenu(tr("Open job page"));
    for (size_t i = 0; i < p->jobIds.size() && i < listed; ++i) {
        const quint64 id = p->jobIds[i];
        const QString text
            = p->jobIds.size() == 1 ? tr("Open job page (%1)").arg(m_model->jobName(id)) : m_model->jobName(id);
        jobs->addAction(text, this, [this, id] { Q_EMIT jobPageRequested(id); });
    }
    if (p->jobIds.size() > listed) {
        jobs->addAction(tr("%L1 more: Find job:<id>").arg(p->jobIds.size() - listed))->setEnabled(false);
    }
}

bool ProblemsPage::showIncident(quint64 incidentId)
{
    if (m_table == nullptr) {
        return false;
    }
    auto find = [this, incidentId] {
        for (int row = 0; row < m_model->rowCount(); ++row) {
            const Problem *p = m_model->problemAt(row);
            if (p != nullptr && p->incident && p->incident->id == incidentId) {
                return row;
            }
        }
        return -1;
    };
    int row = find();
    if (row < 0) { // opened since the last refresh, or filtered away: every kind, read again
        m_kinds->setCurrentIndex(0);
        refresh();
        row = find();
    }
    if (row < 0) {
        return false;
    }
    const QModelIndex index = m_model->index(row, ProblemsModel::EntryColumn);
    m_table->selectRow(row);
    m_table->scrollTo(index);
    choose(index);
    return true;
}

void ProblemsPage::followAlerts(FleetAlerts *alerts)
{
    if (alerts == nullptr) {
        return;
    }
    connect(alerts, &FleetAlerts::boardChanged, this,
        [this, alerts] { setAlerts(std::make_shared<const AlertBoard>(alerts->board())); });
    connect(alerts, &FleetAlerts::accessChanged, this, [this, alerts] { setAccess(alerts->access()); });
    connect(alerts, &FleetAlerts::freshnessChanged, this, [this, alerts] {
        setAlertsNote(alerts->freshness() == FleetAlerts::Freshness::Old ? alerts->freshnessText() : QString());
    });
    connect(this, &ProblemsPage::silenceRequested, alerts, &FleetAlerts::createSilence);
    connect(this, &ProblemsPage::expireRequested, alerts, &FleetAlerts::expireSilence);
    connect(alerts, &FleetAlerts::silenceDone, this, [this](bool ok, const QString &text) {
        // FleetAlerts says it whole ("Silence 4f2… made", "Silence not made: …").
        Q_EMIT message(text.isEmpty() ? (ok ? tr("Silence made") : tr("Silence not made")) : text, 10000);
    });
    m_access = alerts->access();
    m_alertsNote = alerts->freshness() == FleetAlerts::Freshness::Old ? alerts->freshnessText() : QString();
    setAlerts(std::make_shared<const AlertBoard>(alerts->board()));
}

void ProblemsPage::setAlerts(std::shared_ptr<const AlertBoard> board)
{
    m_alerts = board ? std::move(board) : std::make_shared<const AlertBoard>();
    showSilences();
    refresh();
}

void ProblemsPage::setAccess(const BackendAccess &access)
{
    m_access = access;
    updateActions();
    showSilences();
}

void ProblemsPage::setAlertsNote(const QString &note)
{
    m_alertsNote = note;
    showSilences();
    if (m_count != nullptr) {
        showCount();
    }
}

QString ProblemsPage::silenceRefusal() const
{
    return fleetscope::silenceRefusal(m_access);
}

QString ProblemsPage::alertsNote() const
{
    return m_alertsNote.isEmpty() ? QString() : tr("Alerts are old: %1").arg(m_alertsNote);
}

const Problem *ProblemsPage::chosen() const
{
    if (m_table == nullptr) {
        return nullptr;
    }
    const auto rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? nullptr : m_model->problemAt(rows.first().row());
}

bool ProblemsPage::canSilenceChosen() const
{
    return chosen() != nullptr && silenceRefusal().isEmpty();
}

bool ProblemsPage::canOpenChosenRunbook() const
{
    const Problem *p = chosen();
    return p != nullptr && p->alert && runbookUrl(*p->alert).isValid();
}

void ProblemsPage::updateActions()
{
    if (m_silenceButton == nullptr) {
        return;
    }
    const Problem *p = chosen();
    const QString refusal = silenceRefusal();
    m_silenceButton->setEnabled(canSilenceChosen());
    m_silenceButton->setToolTip(!refusal.isEmpty() ? refusal
            : p == nullptr                         ? tr("Choose a problem, an incident or an alert to silence")
                                                   : tr("Silence the alerts of this problem in Alertmanager"));
    m_runbookButton->setEnabled(canOpenChosenRunbook());
    m_runbookButton->setToolTip(canOpenChosenRunbook() ? runbookUrl(*p->alert).toString()
            : p != nullptr && p->alert                 ? tr("This alert has no runbook_url annotation")
                                                       : tr("Only an alert has a runbook"));
}

void ProblemsPage::silenceChosen()
{
    const Problem *p = chosen();
    if (p == nullptr || !silenceRefusal().isEmpty()) {
        return;
    }
    const TopologyPtr topology = m_session->topology();
    const SilenceProposal proposal = proposeSilence(*p, topology.get());
    if (m_dialog) {
        m_dialog->close();
    }
    m_dialog = new SilenceDialog(this);
    m_dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_dialog->setSubject(proposal.subject);
    m_dialog->setMatchers(proposal.matchers);
    m_dialog->setAlerts(m_alerts->alerts);
    m_dialog->setCreator(m_access.name);
    connect(
        m_dialog, &QDialog::accepted, this, [this, dialog = m_dialog] { Q_EMIT silenceRequested(dialog->draft()); });
    m_dialog->open();
}

SilenceDialog *ProblemsPage::silenceDialog() const
{
    return m_dialog;
}

void ProblemsPage::openChosenRunbook()
{
    const Problem *p = chosen();
    const QUrl url = p != nullptr && p->alert ? runbookUrl(*p->alert) : QUrl();
    if (url.isValid()) {
        QDesktopServices::openUrl(url);
    }
}

SilencesView *ProblemsPage::silencesView()
{
    if (m_silences == nullptr) {
        m_silences = new SilencesView;
        connect(m_silences, &SilencesView::expireRequested, this, &ProblemsPage::expireRequested);
        connect(this, &QObject::destroyed, m_silences, &QObject::deleteLater);
        showSilences();
    }
    return m_silences;
}

void ProblemsPage::showSilences()
{
    if (m_silences == nullptr) {
        return;
    }
    m_silences->setSilences(m_alerts->silences, QDateTime::currentMSecsSinceEpoch());
    m_silences->setRefusal(silenceRefusal());
    m_silences->setNote(alertsNote());
}

Place ProblemsPage::placeToShow(const Problem &problem, const Topology &topology)
{
    if (problem.gpu >= 0 && static_cast<uint64_t>(problem.gpu) < topology.gpuCount) {
        return Place::gpu(static_cast<uint32_t>(problem.gpu));
    }
    if (problem.node >= 0 && static_cast<uint64_t>(problem.node) < topology.nodes.size()) {
        return Place::node(static_cast<uint32_t>(problem.node));
    }
    return smallestPlaceHolding(problem.gpus, topology);
}

} // namespace fleetscope
