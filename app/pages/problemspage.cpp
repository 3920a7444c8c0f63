// SPDX-License-Identifier: Apache-2.0
#include "app/pages/problemspage.h"

#include "app/consolesession.h"
#include "app/pages/mappage.h"
#include "app/problemsmodel.h"
#include "model/navigation.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/wall/problemsboard.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace fleetscope {

ProblemsPage::ProblemsPage(ConsoleSession *session, Look look, MapPage *map, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_map(map)
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
    // Bursts end and durations grow with time alone: the wall, read from across the room as what is wrong now, looks
    // again every 5 s; the desk's dock each half minute.
    m_clock.setInterval(look == Look::Wall ? 5000 : 30000);
    connect(&m_clock, &QTimer::timeout, this, &ProblemsPage::refresh);
    setShown(look == Look::Desk);
}

void ProblemsPage::makeTable()
{
    m_model = new ProblemsModel(this);
    m_kinds = new QComboBox(this);
    m_count = new QLabel(this);
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
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Columns fit at most 24 rows, those in view first, not every open problem: at a million GPUs there are
    // thousands, and laying out each cell's text on every refresh held the GUI thread for 50-120 ms.
    m_table->horizontalHeader()->setResizeContentsPrecision(24);
    m_table->setWordWrap(false);
    m_table->setToolTip(tr("Ranked: critical first, then by the GPUs of the jobs they hit. Click one to show it."));
    connect(m_table, &QTableView::clicked, this, &ProblemsPage::choose);
    connect(m_table, &QTableView::activated, this, &ProblemsPage::choose);

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_count, 1);
    top->addWidget(m_kinds);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);
}

void ProblemsPage::setShown(bool shown)
{
    m_shown = shown;
    if (!shown) {
        m_clock.stop();
        return;
    }
    m_clock.start();
    refresh();
}

void ProblemsPage::refresh()
{
    if (!m_shown) {
        return;
    }
    const int64_t now = QDateTime::currentMSecsSinceEpoch();
    if (m_board != nullptr) {
        // A wall shows what is wrong: information stays on the desk.
        std::vector<Problem> problems = m_session->problems(now);
        problems.erase(std::remove_if(problems.begin(), problems.end(),
                           [](const Problem &p) { return p.severity == EventSeverity::Info; }),
            problems.end());
        m_board->setProblems(std::move(problems), m_session->topology(), m_session->jobs(), now);
        return;
    }
    // The chosen problem stays chosen if it is still open.
    std::optional<Problem::Key> chosen;
    if (const auto rows = m_table->selectionModel()->selectedRows(); !rows.isEmpty()) {
        if (const Problem *p = m_model->problemAt(rows.first().row())) {
            chosen = p->key();
        }
    }
    m_model->setProblems(m_session->problems(now), m_session->topology(), m_session->jobs(), now);
    if (chosen) {
        if (const int row = m_model->rowOf(*chosen); row >= 0) {
            m_table->selectRow(row);
        }
    }
    const int total = m_model->totalCount();
    const int shown = m_model->shownCount();
    m_count->setText(total == 0 ? tr("No open problems")
            : shown == total    ? tr("%n open problem(s)", nullptr, total)
                                : tr("%1 of %n open problem(s)", nullptr, total).arg(shown));
    m_table->resizeColumnsToContents();
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
    m_map->heatmap()->setMarkedGpus(problem.gpu >= 0 ? std::vector<uint32_t>() : problem.gpus);
    Navigation *navigation = m_map->navigation();
    if (problem.gpu >= 0) {
        navigation->goTo(Place::gpu(static_cast<uint32_t>(problem.gpu)));
    } else if (problem.node >= 0) {
        navigation->goTo(Place::node(static_cast<uint32_t>(problem.node)));
    } else {
        navigation->goTo(Place::rack(topology->nodeOf(problem.gpus.front()).rack));
    }
    Q_EMIT message(
        tr("%1 at %2").arg(ProblemsModel::summary(problem), ProblemsModel::placeName(problem, topology.get())), 10000);
}

} // namespace fleetscope
