// SPDX-License-Identifier: Apache-2.0
#include "widgets/detail/detailjobs.h"

#include <QDateTime>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace fleetscope {

DetailJobs::DetailJobs(QWidget *parent)
    : QGroupBox(QStringLiteral("Jobs"), parent)
    , m_table(new QTableWidget(this))
    , m_open(new QPushButton(QStringLiteral("Open job page"), this))
{
    auto *layout = new QVBoxLayout(this);
    m_table->setColumnCount(5);
    m_table->setHorizontalHeaderLabels({ QStringLiteral("Job"), QStringLiteral("Owner"), QStringLiteral("GPUs"),
        QStringLiteral("Started"), QStringLiteral("Ended") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setMinimumHeight(80);
    m_table->setMaximumHeight(160);
    layout->addWidget(m_table);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_open);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    connect(m_open, &QPushButton::clicked, this, [this] {
        if (const uint64_t job = jobToOpen(); job != 0) {
            Q_EMIT jobPageRequested(job);
        }
    });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row) {
        if (row >= 0 && static_cast<size_t>(row) < m_rowJobs.size() && m_rowJobs[static_cast<size_t>(row)] != 0) {
            Q_EMIT jobPageRequested(m_rowJobs[static_cast<size_t>(row)]);
        }
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &DetailJobs::updateButton);
    updateButton();
}

void DetailJobs::setSubject(const JobsPtr &jobs, const TopologyPtr &topology, const std::vector<uint32_t> &subject)
{
    m_table->setRowCount(0);
    m_rowJobs.clear();
    m_runningJob = 0;
    if (!jobs || subject.empty() || !topology || jobs->topologyGeneration != topology->generation) {
        updateButton();
        return;
    }
    if (subject.size() == 1) {
        const Job *running = jobs->runningJobOn(subject.front());
        m_runningJob = running != nullptr ? running->id : 0;
    }
    auto time = [](int64_t ms) {
        return ms == 0 ? QStringLiteral("running")
                       : QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    };
    for (const Job &job : jobs->jobs) {
        const bool served = std::any_of(subject.begin(), subject.end(),
            [&](uint32_t g) { return std::binary_search(job.gpus.begin(), job.gpus.end(), g); });
        if (!served) {
            continue;
        }
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto *name = new QTableWidgetItem(QStringLiteral("%1 (#%2)").arg(job.name).arg(job.id));
        name->setToolTip(QStringLiteral("Double-click to open the job's page"));
        m_table->setItem(row, 0, name);
        m_table->setItem(row, 1, new QTableWidgetItem(job.owner));
        m_table->setItem(row, 2, new QTableWidgetItem(QString::number(job.gpus.size())));
        m_table->setItem(row, 3, new QTableWidgetItem(time(job.startTimeMs)));
        m_table->setItem(row, 4, new QTableWidgetItem(time(job.endTimeMs)));
        m_rowJobs.push_back(job.id);
    }
    // Jobs the backend could not fit in its answer may have served this GPU too: say so rather than imply there are
    // none.
    QStringList leftOut;
    if (jobs->runningJobsLeftOut > 0) {
        leftOut << QStringLiteral("%1 running").arg(jobs->runningJobsLeftOut);
    }
    if (jobs->endedJobsLeftOut > 0) {
        leftOut << QStringLiteral("%1 older ended").arg(jobs->endedJobsLeftOut);
    }
    if (!leftOut.isEmpty()) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto *note = new QTableWidgetItem(QStringLiteral("Not listed: %1 job(s) the backend left out of its answer")
                                              .arg(leftOut.join(QStringLiteral(", "))));
        note->setForeground(palette().color(QPalette::PlaceholderText));
        m_table->setItem(row, 0, note);
        m_table->setSpan(row, 0, 1, m_table->columnCount());
        m_rowJobs.push_back(0);
    }
    updateButton();
}

uint64_t DetailJobs::jobToOpen() const
{
    const auto rows = m_table->selectionModel()->selectedRows();
    if (!rows.isEmpty() && static_cast<size_t>(rows.first().row()) < m_rowJobs.size()
        && m_rowJobs[static_cast<size_t>(rows.first().row())] != 0) {
        return m_rowJobs[static_cast<size_t>(rows.first().row())];
    }
    if (m_runningJob != 0) {
        return m_runningJob;
    }
    // A node's, or an idle GPU's: the only job listed, if there is one.
    const auto listed = std::count_if(m_rowJobs.begin(), m_rowJobs.end(), [](uint64_t id) { return id != 0; });
    return listed == 1 ? *std::find_if(m_rowJobs.begin(), m_rowJobs.end(), [](uint64_t id) { return id != 0; }) : 0;
}

void DetailJobs::updateButton()
{
    const uint64_t job = jobToOpen();
    m_open->setEnabled(job != 0);
    m_open->setToolTip(job != 0 ? QStringLiteral("Its stragglers, timeline and goodput (job #%1)").arg(job)
                                : QStringLiteral("Choose one of the jobs listed"));
}

} // namespace fleetscope
