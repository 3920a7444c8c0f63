// SPDX-License-Identifier: Apache-2.0
#include "widgets/job/jobheader.h"

#include "widgets/job/jobtables.h"
#include "widgets/job/jobtimeline.h"
#include "widgets/style/fontscale.h"
#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QStringBuilder>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {

QString clock(int64_t ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss"));
}

// "6 h 02 min", "14 min", "40 s".
QString lengthText(int64_t ms)
{
    const int64_t s = std::max<int64_t>(0, ms / 1000);
    if (s < 60) {
        return JobHeader::tr("%1 s").arg(s);
    }
    if (s < 3600) {
        return JobHeader::tr("%1 min").arg(s / 60);
    }
    return JobHeader::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QLabel *label(QWidget *parent, const QString &name, QLabel *l = nullptr)
{
    l = l != nullptr ? l : new QLabel(parent);
    l->setObjectName(name);
    l->setTextFormat(Qt::PlainText);
    return l;
}

// One line cut with "…" where its room ends, rather than a line that widens the page: a job's name may be 128
// characters, 46 px tall on the wall, and the page must fit a 1280 px screen. Its text stays whole (text(), the
// tooltip).
class ElidingLabel : public QLabel
{
public:
    using QLabel::QLabel;

    QSize minimumSizeHint() const override
    {
        const QSize whole = QLabel::minimumSizeHint();
        const QMargins m = contentsMargins();
        const int least = fontMetrics().horizontalAdvance(QStringLiteral("Mm…")) + m.left() + m.right();
        return { std::min(whole.width(), least), whole.height() };
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        const QRect room = contentsRect();
        painter.setFont(font());
        painter.setPen(palette().color(foregroundRole()));
        painter.drawText(room, static_cast<int>(alignment()) | Qt::TextSingleLine,
            fontMetrics().elidedText(text(), Qt::ElideRight, room.width()));
    }
};

// "1 straggler", "3 stragglers": without a translation loaded, tr's %n does not choose the singular.
QString counted(qulonglong n, const QString &one, const QString &many)
{
    return n == 1 ? one : many.arg(QLocale().toString(n));
}

} // namespace

JobHeader::JobHeader(QWidget *parent)
    : QWidget(parent)
    , m_title(label(this, QStringLiteral("jobTitle"), new ElidingLabel(this)))
    , m_facts(label(this, QStringLiteral("jobFacts")))
    , m_stats(label(this, QStringLiteral("jobStats")))
    , m_goodput(label(this, QStringLiteral("goodput")))
    , m_hours(label(this, QStringLiteral("goodputHours"), new ElidingLabel(this)))
    , m_close(new QToolButton(this))
{
    m_facts->setTextFormat(Qt::RichText);
    m_close->setObjectName(QStringLiteral("closeJob"));
    m_close->setText(QStringLiteral("✕"));
    m_close->setToolTip(tr("Close the job's page"));
    m_close->setAutoRaise(true);
    connect(m_close, &QToolButton::clicked, this, &JobHeader::closeRequested);
    m_goodput->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_hours->setAlignment(Qt::AlignRight | Qt::AlignTop);
    // The facts and figures wrap rather than widen the page (the title and the hours are cut, whole in their
    // tooltips).
    for (QLabel *l : { m_facts, m_stats }) {
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        l->setWordWrap(true);
    }
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setVerticalSpacing(2);
    grid->addWidget(m_title, 0, 0);
    grid->addWidget(m_facts, 1, 0);
    grid->addWidget(m_stats, 2, 0);
    grid->addWidget(m_goodput, 0, 1, 2, 1);
    grid->addWidget(m_hours, 2, 1);
    grid->addWidget(m_close, 0, 2, Qt::AlignTop);
    grid->setColumnStretch(0, 1);
    setWallMode(false);
}

void JobHeader::setWallMode(bool wall)
{
    m_wall = wall;
    m_close->setVisible(!wall);
    const QFont base = font();
    if (wall) {
        m_title->setFont(wallstyle::sized(base, 46, true));
        m_facts->setFont(wallstyle::sized(base, 28, false));
        m_stats->setFont(wallstyle::sized(base, 28, false));
        m_goodput->setFont(wallstyle::sized(base, 72, true));
        m_hours->setFont(wallstyle::sized(base, 26, false));
    } else {
        QFont title = scaledFont(base, 1.5);
        title.setBold(true);
        QFont big = scaledFont(base, 2.4);
        big.setBold(true);
        m_title->setFont(title);
        m_facts->setFont(base);
        m_stats->setFont(base);
        m_goodput->setFont(big);
        m_hours->setFont(base);
    }
}

void JobHeader::setReport(const JobReportPtr &report)
{
    if (!report) {
        for (QLabel *l : { m_title, m_facts, m_stats, m_goodput, m_hours }) {
            l->clear();
        }
        return;
    }
    const JobReport &r = *report;
    const Job &job = r.job;
    const QLocale locale;
    m_title->setText(job.name.isEmpty() ? tr("job %1").arg(job.id) : job.name);
    m_title->setToolTip(m_title->text());

    QStringList facts;
    facts << tr("job %1").arg(job.id).toHtmlEscaped();
    if (!job.owner.isEmpty()) {
        // Cut: one word the line cannot wrap (up to 128 characters) would widen the page past the screen.
        constexpr int ownerShown = 24;
        const QString owner
            = job.owner.size() > ownerShown ? job.owner.left(ownerShown - 1) + QStringLiteral("…") : job.owner;
        facts << owner.toHtmlEscaped();
    }
    facts << counted(job.gpus.size(), tr("1 GPU"), tr("%1 GPUs"));
    if (job.isRunning()) {
        facts << tr("running since %1 (%2)").arg(clock(job.startTimeMs), lengthText(r.asOfMs - job.startTimeMs));
    } else {
        facts << tr("ended %1 after %2").arg(clock(job.endTimeMs), lengthText(job.endTimeMs - job.startTimeMs));
    }
    // The phase now, with the swatch the timeline's strip draws it in.
    facts << QStringLiteral("<span style=\"color:%1\">■</span> %2")
                 .arg(jobPhaseColor(r.phase).name(), tr("now %1").arg(jobPhaseName(r.phase)).toHtmlEscaped());
    m_facts->setText(facts.join(QStringLiteral(" · ")));

    QStringList stats;
    stats << tr("restarts %1").arg(r.restarts);
    if (r.stepSeconds > 0 && std::isfinite(r.stepSeconds)) {
        stats << tr("step %1 s").arg(locale.toString(r.stepSeconds, 'f', r.stepSeconds < 10 ? 2 : 1));
    }
    if (std::isfinite(r.allReduceShare)) {
        stats << tr("all-reduce %1 % of compute")
                     .arg(locale.toString(std::clamp(r.allReduceShare, 0.0, 1.0) * 100.0, 'f', 1));
    }
    if (r.watchedFromMs > job.startTimeMs) {
        stats << tr("watched since %1").arg(clock(r.watchedFromMs));
    }
    if (job.stragglerCount > 0 || !r.stragglers.empty()) {
        stats << counted(
            std::max<size_t>(job.stragglerCount, r.stragglers.size()), tr("1 straggler"), tr("%1 stragglers"));
    }
    m_stats->setText(stats.join(QStringLiteral(" · ")));

    const double goodput = std::clamp(std::isfinite(r.goodput) ? r.goodput : 0.0, 0.0, 1.0);
    m_goodput->setText(tr("Goodput %1 %").arg(locale.toString(goodput * 100.0, 'f', 1)));
    m_goodput->setToolTip(tr("Productive GPU-time over GPU-time watched"));
    m_hours->setText(
        tr("%1 of %2 GPU-hours productive").arg(gpuHoursText(r.productiveGpuHours), gpuHoursText(r.gpuHours)));
    m_hours->setToolTip(m_hours->text());
}

} // namespace fleetscope
