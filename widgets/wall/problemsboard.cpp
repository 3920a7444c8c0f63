// SPDX-License-Identifier: Apache-2.0
#include "widgets/wall/problemsboard.h"

#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QFontMetricsF>
#include <QLocale>
#include <QPainter>

#include <algorithm>

namespace fleetscope {

using namespace wallstyle;

ProblemsBoard::ProblemsBoard(QWidget *parent)
    : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void ProblemsBoard::setProblems(std::vector<Problem> problems, TopologyPtr topology, JobsPtr jobs, qint64 nowMs)
{
    m_problems = std::move(problems);
    m_topology = std::move(topology);
    m_jobs = std::move(jobs);
    m_nowMs = nowMs;
    update();
}

int ProblemsBoard::criticalCount() const
{
    return static_cast<int>(std::count_if(
        m_problems.begin(), m_problems.end(), [](const Problem &p) { return p.severity == EventSeverity::Critical; }));
}

QString ProblemsBoard::jobsText(const Problem &p) const
{
    if (p.jobIds.empty()) {
        return tr("no job");
    }
    QString first = tr("job %1").arg(p.jobIds.front());
    if (m_jobs) {
        const auto found = std::find_if(
            m_jobs->jobs.begin(), m_jobs->jobs.end(), [&p](const Job &j) { return j.id == p.jobIds.front(); });
        if (found != m_jobs->jobs.end() && !found->name.isEmpty()) {
            first = found->name;
        }
    }
    const QString more = p.jobIds.size() > 1 ? tr(" +%1").arg(p.jobIds.size() - 1) : QString();
    return tr("%1%2 · %L3 GPUs").arg(first, more).arg(p.blastGpus);
}

QString ProblemsBoard::sinceText(const Problem &p) const
{
    const qint64 minutes = std::max<qint64>(0, (m_nowMs - p.sinceMs) / 60000);
    return tr("since %1 (%2 min)")
        .arg(QDateTime::fromMSecsSinceEpoch(p.sinceMs).toString(QStringLiteral("HH:mm")))
        .arg(minutes);
}

QStringList ProblemsBoard::rowTexts() const
{
    QStringList rows;
    for (const auto &p : m_problems) {
        rows << QStringLiteral("%1  %2  %3  %4")
                    .arg(problemPlace(p, m_topology.get()), problemSummary(p), sinceText(p), jobsText(p));
    }
    return rows;
}

void ProblemsBoard::paintEvent(QPaintEvent * /*event*/)
{
    QPainter painter(this);
    beginBoard(painter, rect());
    const double row = rowHeight(height());
    const double pad = row * 0.35;
    double y = pad;

    const int critical = criticalCount();
    painter.setFont(sized(font(), row * 0.62, true));
    painter.setPen(m_problems.empty() ? QColor(0x8f, 0xd0, 0x9f) : text);
    const QString headline = m_problems.empty()
        ? tr("No open problems")
        : tr("%n open problem(s): %1 critical", nullptr, static_cast<int>(m_problems.size())).arg(critical);
    painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 1.1), Qt::AlignLeft | Qt::AlignVCenter, headline);
    y += row * 1.2;
    painter.setFont(sized(font(), row * 0.4, false));
    painter.setPen(dim);
    painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 0.6), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Ranked: critical first, then by the GPUs of the running jobs they hit"));
    y += row * 0.8;

    const QFont whereFont = sized(font(), row * 0.5, true);
    const QFont whatFont = sized(font(), row * 0.5, false);
    const QFont smallFont = sized(font(), row * 0.38, false);
    const double whereWidth
        = QFontMetricsF(whereFont).horizontalAdvance(QStringLiteral("rack r00-k00 (00 GPUs) ")) + pad;
    const double sinceWidth
        = QFontMetricsF(smallFont).horizontalAdvance(QStringLiteral("since 00:00 (000 min) ")) + pad;
    size_t shown = 0;
    for (const auto &p : m_problems) {
        if (y + 2 * row > height() && shown + 1 < m_problems.size()) {
            break; // keep a line for "and N more"
        }
        if (y + row > height()) {
            break;
        }
        const QRectF line(pad, y, width() - 2 * pad, row * 0.9);
        painter.fillRect(QRectF(line.left(), line.top(), row * 0.18, line.height()),
            p.severity == EventSeverity::Critical ? wallstyle::critical : warning);
        double x = line.left() + row * 0.4;
        painter.setFont(whereFont);
        painter.setPen(text);
        const QRectF whereRect(x, line.top(), whereWidth, line.height());
        painter.drawText(whereRect, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(whereFont).elidedText(problemPlace(p, m_topology.get()), Qt::ElideRight, whereRect.width()));
        x += whereWidth;
        // The jobs at the right, the time before them, the problem in what is left.
        painter.setFont(smallFont);
        painter.setPen(dim);
        const QString jobs = jobsText(p);
        const double jobsWidth = line.width() / 4; // the same on every line: the times stand in one column
        const QRectF jobsRect(line.right() - jobsWidth, line.top(), jobsWidth, line.height());
        painter.drawText(jobsRect, Qt::AlignRight | Qt::AlignVCenter,
            QFontMetricsF(smallFont).elidedText(jobs, Qt::ElideMiddle, jobsRect.width()));
        const QRectF sinceRect(jobsRect.left() - sinceWidth, line.top(), sinceWidth, line.height());
        painter.drawText(sinceRect, Qt::AlignLeft | Qt::AlignVCenter, sinceText(p));
        painter.setFont(whatFont);
        painter.setPen(text);
        const QRectF whatRect(x, line.top(), sinceRect.left() - x - pad, line.height());
        painter.drawText(whatRect, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(whatFont).elidedText(problemSummary(p), Qt::ElideRight, whatRect.width()));
        y += row;
        ++shown;
    }
    if (shown < m_problems.size()) {
        painter.setFont(sized(font(), row * 0.45, false));
        painter.setPen(dim);
        painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 0.9), Qt::AlignLeft | Qt::AlignVCenter,
            tr("and %L1 more, less severe or hitting fewer GPUs").arg(m_problems.size() - shown));
    }
}

} // namespace fleetscope
