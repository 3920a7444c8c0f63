// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/repeatoffenderspanel.h"

#include "widgets/summary/summaryfigures.h"
#include "widgets/summary/summaryreport.h"
#include "widgets/summary/summarytables.h"

#include <QHeaderView>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

namespace fleetscope {

namespace {
QString count(double value)
{
    // Decayed counts are fractions; one decimal says enough.
    return QString::number(value, 'f', 1);
}
} // namespace

RepeatOffendersPanel::RepeatOffendersPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *title = new QLabel(tr("Repeat offenders (lasting score, 7-day half-life)"), this);
    QFont bold = title->font();
    bold.setBold(true);
    title->setFont(bold);
    title->setToolTip(tr("Each XID, double-bit ECC error, remapped row, PCIe replay and hour of throttling adds to a "
                         "GPU's score, halved every 7 days: the GPUs that keep failing rise to the top."));
    m_share = new QLabel(tr("waiting for the summary"), this);
    m_share->setObjectName(QStringLiteral("repeatShare"));
    m_share->setWordWrap(true);
    const QStringList headers = { tr("GPU"), tr("Score"), tr("XIDs"), tr("Serious XIDs"), tr("Double-bit ECC"),
        tr("Remapped rows"), tr("PCIe replays"), tr("Throttle hours") };
    m_model = new QStandardItemModel(0, static_cast<int>(headers.size()), this);
    m_model->setHorizontalHeaderLabels(headers);
    m_table = sortableTable(m_model, QStringLiteral("repeatOffenderTable"), this);
    m_table->sortByColumn(1, Qt::DescendingOrder); // highest score first until someone clicks a header
    m_table->setMinimumHeight(200);
    // Eight columns of numbers: each as wide as it needs, hostnames whole.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    onGpuClicked(m_table, [this](uint32_t gpu) { Q_EMIT gpuChosen(gpu); });
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(title);
    layout->addWidget(m_share);
    layout->addWidget(m_table, 1);
}

QString RepeatOffendersPanel::gpuName(uint32_t gpu) const
{
    if (!m_topology || gpu >= m_topology->gpuCount) {
        return QString::number(gpu);
    }
    const auto &node = m_topology->nodeOf(gpu);
    return tr("%1 GPU %2").arg(node.hostname).arg(gpu - node.firstGpu);
}

void RepeatOffendersPanel::setSummary(SummaryPtr summary, TopologyPtr topology)
{
    m_summary = std::move(summary);
    m_topology = std::move(topology);
    m_model->setRowCount(0); // the sort is kept while rows are replaced
    if (!m_summary) {
        return;
    }
    m_share->setText(m_summary->repeatOffenders.empty()
            ? tr("No GPU has a repeat-offender score yet.")
            : tr("The worst 1 % of GPUs carry %1 of failures (XIDs and double-bit ECC errors, decayed alike).")
                  .arg(formatSummaryPercent(100 * m_summary->topPercentFailureShare)));
    for (const auto &o : m_summary->repeatOffenders) {
        // Remapped rows of both kinds in one column; the CSV keeps them apart.
        const double rows = o.remappedRows + o.remappedRowsCorrectable;
        m_model->appendRow({ numberItem(o.gpu, gpuName(o.gpu)), numberItem(o.score, QString::number(o.score, 'f', 2)),
            numberItem(o.xids, count(o.xids)), numberItem(o.seriousXids, count(o.seriousXids)),
            numberItem(o.eccDoubleBit, count(o.eccDoubleBit)), numberItem(rows, count(rows)),
            numberItem(o.pcieReplays, count(o.pcieReplays)), numberItem(o.throttleHours, count(o.throttleHours)) });
    }
}

QByteArray RepeatOffendersPanel::csv() const
{
    return SummaryReport::repeatOffendersCsv(
        m_summary ? m_summary->repeatOffenders : std::vector<SummaryRepeatOffender>(), m_topology.get());
}

} // namespace fleetscope
