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

QString ProblemsBoard::evidenceText(const Problem &p) const
{
    QString evidence = p.incident ? p.incident->evidence : QString();
    if (evidence.isEmpty()) {
        evidence = problemPlace(p, m_topology.get());
    }
    return evidence;
}

QString ProblemsBoard::whatText(const Problem &p) const
{
    if (p.kind != Problem::Kind::Alert) {
        return problemSummary(p);
    }
    // The room reads that it is the NOC's alert, and whether someone is on it.
    QString what = tr("ALERT %1").arg(problemSummary(p));
    if (p.isQuietAlert()) {
        what += QStringLiteral(" — ") + p.quietNote;
    }
    return what;
}

QString ProblemsBoard::headline() const
{
    return tallyText(tallyProblems(m_problems));
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
        if (p.kind == Problem::Kind::Incident) {
            rows << QStringLiteral("%1 · %2  %3  %4%5  %6")
                        .arg(incidentCauseLabel(p), problemSummary(p), evidenceText(p),
                            p.isQuietAlert() ? p.quietNote + QStringLiteral("  ") : QString(), sinceText(p),
                            jobsText(p));
        } else if (p.kind == Problem::Kind::Alert) {
            rows << QStringLiteral("%1  %2  %3  %4")
                        .arg(problemPlace(p, m_topology.get()), whatText(p), sinceText(p), jobsText(p));
        } else {
            rows << QStringLiteral("%1  %2  %3  %4")
                        .arg(problemPlace(p, m_topology.get()), problemSummary(p), sinceText(p), jobsText(p));
        }
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

    painter.setFont(sized(font(), row * 0.62, true));
    painter.setPen(m_problems.empty() ? QColor(0x8f, 0xd0, 0x9f) : text);
    painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 1.1), Qt::AlignLeft | Qt::AlignVCenter, headline());
    y += row * 1.2;
    painter.setFont(sized(font(), row * 0.4, false));
    painter.setPen(dim);
    painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 0.6), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Incidents first (a shared cause); then critical, then by the GPUs of the running jobs they hit"));
    y += row * 0.8;

    // An incident: two lines, its cause and headline large, the evidence, since when and the jobs under them.
    const QFont causeFont = sized(font(), row * 0.56, true);
    const QFont evidenceFont = sized(font(), row * 0.42, false);
    size_t shown = 0;
    for (const auto &p : m_problems) {
        if (!isSharedIncident(p)) {
            break; // ranked first: the rest are a line each
        }
        if (y + 3.2 * row > height()) {
            break;
        }
        const QRectF block(pad, y, width() - 2 * pad, row * 2.3);
        // Its alert silenced in Alertmanager (the backend sends it there): someone is on it; the swatch says so and
        // the last line says who, until when and why.
        const bool quiet = p.isQuietAlert();
        painter.fillRect(QRectF(block.left(), block.top(), row * 0.18, block.height()),
            quiet                                       ? QColor(0x6a, 0x72, 0x80)
                : p.severity == EventSeverity::Critical ? wallstyle::critical
                                                        : warning);
        const double x = block.left() + row * 0.4;
        const QRectF first(x, block.top(), block.right() - x, row);
        painter.setFont(causeFont);
        const QFontMetricsF causeMetrics(causeFont);
        const QString cause = incidentCauseLabel(p) + QStringLiteral(" · ");
        painter.setPen(p.severity == EventSeverity::Critical ? wallstyle::critical : warning);
        painter.drawText(first, Qt::AlignLeft | Qt::AlignVCenter, cause);
        const double causeWidth = causeMetrics.horizontalAdvance(cause);
        painter.setPen(text);
        const QRectF headlineRect(first.left() + causeWidth, first.top(), first.width() - causeWidth, first.height());
        painter.drawText(headlineRect, Qt::AlignLeft | Qt::AlignVCenter,
            causeMetrics.elidedText(problemSummary(p), Qt::ElideRight, headlineRect.width()));
        // The evidence across the whole width (what makes it one cause), since when and the jobs under it.
        painter.setFont(evidenceFont);
        const QFontMetricsF evidenceMetrics(evidenceFont);
        const QRectF second(x, first.bottom(), first.width(), row * 0.65);
        painter.drawText(second, Qt::AlignLeft | Qt::AlignVCenter,
            evidenceMetrics.elidedText(evidenceText(p), Qt::ElideRight, second.width()));
        painter.setPen(dim);
        const QRectF third(x, second.bottom(), first.width(), row * 0.65);
        painter.drawText(third, Qt::AlignLeft | Qt::AlignVCenter,
            evidenceMetrics.elidedText((quiet ? p.quietNote + QStringLiteral("  ·  ") : QString())
                    + QStringLiteral("%1  ·  %2  ·  %3")
                          .arg(sinceText(p), p.gpusHit == 1 ? tr("1 GPU hit") : tr("%L1 GPUs hit").arg(p.gpusHit),
                              tr("jobs: %1").arg(jobsText(p))),
                Qt::ElideRight, third.width()));
        y += row * 2.5;
        ++shown;
    }

    const QFont whereFont = sized(font(), row * 0.5, true);
    const QFont whatFont = sized(font(), row * 0.5, false);
    const QFont smallFont = sized(font(), row * 0.38, false);
    const double whereWidth
        = QFontMetricsF(whereFont).horizontalAdvance(QStringLiteral("rack r00-k00 (00 GPUs) ")) + pad;
    const double sinceWidth
        = QFontMetricsF(smallFont).horizontalAdvance(QStringLiteral("since 00:00 (000 min) ")) + pad;
    for (size_t i = shown; i < m_problems.size(); ++i) {
        const Problem &p = m_problems[i];
        if (isSharedIncident(p)) {
            break; // one that did not fit above
        }
        // A silenced or inhibited alert: someone is on it, so it is drawn dim, its swatch grey, and who, until when
        // and why on a line of its own under it (beside the problem's words it would be cut first).
        const bool quiet = p.isQuietAlert();
        const double tall = quiet ? row * 1.5 : row;
        if (y + tall + row > height() && shown + 1 < m_problems.size()) {
            break; // keep a line for "and N more"
        }
        if (y + tall > height()) {
            break;
        }
        const QRectF line(pad, y, width() - 2 * pad, row * 0.9);
        painter.fillRect(QRectF(line.left(), line.top(), row * 0.18, tall - row * 0.1),
            quiet                                       ? QColor(0x6a, 0x72, 0x80)
                : p.severity == EventSeverity::Critical ? wallstyle::critical
                                                        : warning);
        double x = line.left() + row * 0.4;
        painter.setFont(whereFont);
        painter.setPen(quiet ? dim : text);
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
        painter.setPen(quiet ? dim : text);
        const QRectF whatRect(x, line.top(), sinceRect.left() - x - pad, line.height());
        painter.drawText(whatRect, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(whatFont).elidedText(
                quiet ? tr("ALERT %1").arg(problemSummary(p)) : whatText(p), Qt::ElideRight, whatRect.width()));
        if (quiet) {
            painter.setFont(smallFont);
            painter.setPen(dim);
            const double noteLeft = line.left() + row * 0.4;
            const QRectF noteRect(noteLeft, line.bottom() - row * 0.05, line.right() - noteLeft, row * 0.5);
            painter.drawText(noteRect, Qt::AlignLeft | Qt::AlignVCenter,
                QFontMetricsF(smallFont).elidedText(p.quietNote, Qt::ElideRight, noteRect.width()));
        }
        y += tall;
        ++shown;
    }
    if (shown < m_problems.size()) {
        painter.setFont(sized(font(), row * 0.45, false));
        painter.setPen(dim);
        painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 0.9), Qt::AlignLeft | Qt::AlignVCenter,
            !isSharedIncident(m_problems[shown])
                ? tr("and %L1 more, less severe or hitting fewer GPUs").arg(m_problems.size() - shown)
                : tr("and %L1 more, incidents and other problems").arg(m_problems.size() - shown));
    }
}

} // namespace fleetscope
