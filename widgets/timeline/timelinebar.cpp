// SPDX-License-Identifier: Apache-2.0
#include "widgets/timeline/timelinebar.h"

#include "model/flightrecorder.h"
#include "model/replaycontroller.h"
#include "widgets/style/fixedtextsize.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolButton>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {

QString clockText(qint64 timeMs)
{
    return QDateTime::fromMSecsSinceEpoch(timeMs).toString(QStringLiteral("HH:mm:ss"));
}

QColor severityColour(FleetEvent::Severity severity, const QPalette &palette)
{
    switch (severity) {
    case FleetEvent::Severity::Critical:
        return QColor(0xc6, 0x28, 0x28); // as the event table
    case FleetEvent::Severity::Warning:
        return QColor(0xe0, 0x8a, 0x00); // the table's amber, lighter to stand out from the groove
    case FleetEvent::Severity::Info:
        break;
    }
    return palette.color(QPalette::PlaceholderText);
}

} // namespace

// The bar proper: groove, markers, play head. Geometry comes from the font, so that it reads on a wall display.
class TimelineBar::Track : public QWidget
{
public:
    explicit Track(TimelineBar *bar)
        : QWidget(bar)
        , m_bar(bar)
    {
        setObjectName(QStringLiteral("timelineTrack"));
        setMouseTracking(false);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        setCursor(Qt::PointingHandCursor);
    }

    // Half the play head's knob: the bar's ends lie this far in, so that the knob stays whole at either end.
    int margin() const { return std::max(3, fontMetrics().height() / 4); }
    // How far from a marker a click still means the marker.
    int reach() const { return std::max(3, fontMetrics().height() / 3); }
    int usable() const { return std::max(1, width() - 2 * margin()); }

    QSize sizeHint() const override
    {
        const int h = fontMetrics().height();
        return { 20 * h, 2 * h };
    }
    QSize minimumSizeHint() const override
    {
        const int h = fontMetrics().height();
        return { 6 * h, 2 * h };
    }

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *event) override
    {
        if (event->button() == Qt::LeftButton) {
            m_dragging = true;
            m_bar->pressAt(event->position().toPoint().x());
        }
    }
    void mouseMoveEvent(QMouseEvent *event) override
    {
        if (m_dragging && (event->buttons() & Qt::LeftButton)) {
            m_bar->dragTo(event->position().toPoint().x());
        }
    }
    void mouseReleaseEvent(QMouseEvent *event) override
    {
        if (event->button() == Qt::LeftButton) {
            m_dragging = false;
        }
    }
    bool event(QEvent *event) override
    {
        if (event->type() == QEvent::ToolTip) {
            const auto *help = static_cast<QHelpEvent *>(event);
            QToolTip::showText(help->globalPos(), toolTipAt(help->pos().x()), this);
            return true;
        }
        return QWidget::event(event);
    }

private:
    QString toolTipAt(int x) const
    {
        constexpr int most = 6;
        QStringList lines;
        int more = 0;
        // Markers are held by severity; a tooltip reads best in time order.
        std::vector<const TimelineMarker *> near;
        for (const auto &m : m_bar->m_markers) {
            if (std::abs(m_bar->xForTime(m.timeMs) - x) <= reach()) {
                near.push_back(&m);
            }
        }
        std::sort(near.begin(), near.end(), [](auto *a, auto *b) { return a->timeMs < b->timeMs; });
        for (const auto *m : near) {
            if (lines.size() < most) {
                lines << clockText(m->timeMs) % QStringLiteral("  ") % m->text;
            } else {
                ++more;
            }
        }
        if (more > 0) {
            lines << QStringLiteral("… and %1 more").arg(more);
        }
        if (lines.isEmpty()) {
            lines << clockText(m_bar->timeAtX(x));
        }
        return lines.join(QLatin1Char('\n'));
    }

    TimelineBar *m_bar;
    bool m_dragging = false;
};

void TimelineBar::Track::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const int h = height();
    const int m = margin();
    const QRect groove(m, h / 4, usable(), h / 2);
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(palette().color(QPalette::Base));
    p.drawRoundedRect(groove, 3, 3);

    ReplayController *controller = m_bar->m_controller;
    const bool hasHistory = m_bar->m_latestMs > m_bar->m_earliestMs || (controller && controller->position() != 0);
    const int head = controller ? m_bar->xForTime(controller->position()) : groove.right();
    if (hasHistory) {
        QColor played = palette().color(QPalette::Highlight);
        played.setAlpha(70);
        p.fillRect(QRect(groove.left(), groove.top(), head - groove.left(), groove.height()), played);
    }

    const int tick = std::max(2, fontMetrics().height() / 8);
    for (const auto &marker : m_bar->m_markers) {
        if (marker.timeMs < m_bar->m_earliestMs || marker.timeMs > m_bar->m_latestMs) {
            continue;
        }
        const int x = m_bar->xForTime(marker.timeMs);
        p.fillRect(QRect(x - tick / 2, groove.top() - tick, tick, groove.height() + 2 * tick),
            severityColour(marker.severity, palette()));
    }

    const auto drawCompare = [&](const std::optional<qint64> &t, const QString &label) {
        if (!t) {
            return;
        }
        const int x = m_bar->xForTime(*t);
        p.setPen(QPen(palette().color(QPalette::Link), 2, Qt::DashLine));
        p.drawLine(x, 0, x, h);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.setPen(palette().color(QPalette::Link));
        const int w = QFontMetrics(bold).horizontalAdvance(label);
        p.drawText(QRect(std::min(x + 2, width() - w), 0, w, h / 4 + fontMetrics().descent()),
            Qt::AlignLeft | Qt::AlignBottom, label);
    };
    drawCompare(m_bar->m_compareA, QStringLiteral("A"));
    drawCompare(m_bar->m_compareB, QStringLiteral("B"));

    if (controller && hasHistory) {
        const QColor colour = controller->mode() == ReplayController::Mode::Live ? QColor(0xc6, 0x28, 0x28)
                                                                                 : palette().color(QPalette::Highlight);
        p.setPen(QPen(palette().color(QPalette::Base), 1));
        p.setBrush(colour);
        p.drawRoundedRect(QRect(head - m, 1, 2 * m, h - 2), m / 2.0, m / 2.0);
    }
}

TimelineBar::TimelineBar(ReplayController *controller, QWidget *parent)
    : QWidget(parent)
    , m_live(new QToolButton(this))
    , m_play(new QToolButton(this))
    , m_speed(new QComboBox(this))
    , m_compare(new QToolButton(this))
    , m_startLabel(new QLabel(this))
    , m_endLabel(new QLabel(this))
    , m_positionLabel(new QLabel(this))
    , m_track(new Track(this))
{
    m_live->setObjectName(QStringLiteral("liveButton"));
    m_live->setText(QStringLiteral("LIVE"));
    m_live->setCheckable(true);
    m_live->setToolTip(QStringLiteral("Follow the live stream"));
    QFont bold = m_live->font();
    bold.setBold(true);
    m_live->setFont(bold);

    m_play->setObjectName(QStringLiteral("playButton"));
    m_speed->setObjectName(QStringLiteral("speedCombo"));
    m_speed->setToolTip(QStringLiteral("Replay speed"));
    for (const double s : speeds) {
        m_speed->addItem(QString::number(s) % QStringLiteral("×"), s);
    }
    m_compare->setObjectName(QStringLiteral("compareButton"));
    m_compare->setText(QStringLiteral("Compare"));
    m_compare->setCheckable(true);
    m_compare->setToolTip(QStringLiteral("Click two times on the timeline, A then B: the map shows the change A→B"));
    m_startLabel->setObjectName(QStringLiteral("startLabel"));
    m_endLabel->setObjectName(QStringLiteral("endLabel"));
    m_positionLabel->setObjectName(QStringLiteral("positionLabel"));
    m_positionLabel->setAlignment(Qt::AlignCenter);
    m_positionLabel->setFont(bold); // the time shown, set apart from the range's ends beside it
    // Sized once for the widest text each label shows ("00:00:00 ▶ 60×" whatever the time), so that the bar does not
    // jump while playing, and a new time, every frame, repaints the label and not the map's whole page.
    fixSizeForText(m_positionLabel, QStringLiteral("00:00:00 ▶ 60×  "));
    fixSizeForText(m_startLabel, QStringLiteral("00:00:00"));
    fixSizeForText(m_endLabel, QStringLiteral("00:00:00"));

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_live);
    layout->addWidget(m_play);
    layout->addWidget(m_speed);
    layout->addWidget(m_positionLabel);
    layout->addWidget(m_startLabel);
    layout->addWidget(m_track, 1);
    layout->addWidget(m_endLabel);
    layout->addWidget(m_compare);

    connect(m_live, &QToolButton::clicked, this, [this] {
        if (m_controller) {
            m_controller->goLive();
        }
        sync(); // the button reflects the mode, not its own toggling
    });
    connect(m_play, &QToolButton::clicked, this, &TimelineBar::onPlayClicked);
    connect(m_speed, qOverload<int>(&QComboBox::activated), this, &TimelineBar::onSpeedChosen);
    connect(m_compare, &QToolButton::toggled, this, &TimelineBar::onCompareToggled);

    setController(controller);
}

TimelineBar::~TimelineBar() = default;

void TimelineBar::setController(ReplayController *controller)
{
    for (const auto &c : m_connections) {
        disconnect(c);
    }
    m_connections.clear();
    m_controller = controller;
    if (controller) {
        m_connections.push_back(connect(controller, &ReplayController::modeChanged, this, &TimelineBar::sync));
        m_connections.push_back(connect(controller, &ReplayController::positionChanged, this, &TimelineBar::sync));
        const int index = m_speed->findData(controller->speed());
        if (index >= 0) {
            m_speed->setCurrentIndex(index);
        }
    }
    sync();
}

void TimelineBar::setRange(qint64 earliestMs, qint64 latestMs)
{
    m_earliestMs = earliestMs;
    m_latestMs = std::max(earliestMs, latestMs);
    m_startLabel->setText(clockText(m_earliestMs));
    m_endLabel->setText(clockText(m_latestMs));
    m_track->update();
}

void TimelineBar::setEvents(std::vector<TimelineMarker> markers)
{
    std::stable_sort(markers.begin(), markers.end(),
        [](const TimelineMarker &a, const TimelineMarker &b) { return a.severity < b.severity; });
    m_markers = std::move(markers);
    m_track->update();
}

std::vector<TimelineMarker> TimelineBar::markersFrom(const std::vector<FleetEvent> &events)
{
    std::vector<TimelineMarker> markers;
    markers.reserve(events.size());
    for (const auto &e : events) {
        markers.push_back({ e.timeMs, e.severity, e.text });
    }
    return markers;
}

void TimelineBar::setCompare(qint64 aMs, qint64 bMs)
{
    m_compareA = aMs;
    m_compareB = bMs;
    m_track->update();
}

void TimelineBar::clearCompare()
{
    const bool had = m_compareA || m_compareB;
    m_compareA.reset();
    m_compareB.reset();
    m_track->update();
    if (had) {
        Q_EMIT compareCleared();
    }
}

QWidget *TimelineBar::track() const
{
    return m_track;
}

int TimelineBar::xForTime(qint64 timeMs) const
{
    const int m = m_track->margin();
    const qint64 span = m_latestMs - m_earliestMs;
    if (span <= 0) {
        return m + m_track->usable();
    }
    const double f = std::clamp(static_cast<double>(timeMs - m_earliestMs) / static_cast<double>(span), 0.0, 1.0);
    return m + static_cast<int>(std::lround(f * m_track->usable()));
}

qint64 TimelineBar::timeAtX(int x) const
{
    const double f = std::clamp(static_cast<double>(x - m_track->margin()) / m_track->usable(), 0.0, 1.0);
    return m_earliestMs + static_cast<qint64>(std::llround(f * static_cast<double>(m_latestMs - m_earliestMs)));
}

const TimelineMarker *TimelineBar::markerNear(int x) const
{
    const TimelineMarker *best = nullptr;
    int bestDistance = m_track->reach() + 1;
    for (const auto &m : m_markers) {
        if (m.timeMs < m_earliestMs || m.timeMs > m_latestMs) {
            continue;
        }
        const int d = std::abs(xForTime(m.timeMs) - x);
        // Ties go to the later in m_markers: the more severe, painted on top.
        if (d <= bestDistance) {
            best = &m;
            bestDistance = d;
        }
    }
    return best;
}

qint64 TimelineBar::timeForClick(int x) const
{
    const TimelineMarker *marker = markerNear(x);
    return marker ? marker->timeMs : timeAtX(x);
}

void TimelineBar::pressAt(int x)
{
    const qint64 t = timeForClick(x);
    if (m_compare->isChecked()) {
        if (!m_compareA || m_compareB) {
            m_compareA = t;
            m_compareB.reset();
        } else {
            m_compareB = t;
            Q_EMIT compareRequested(*m_compareA, t);
        }
        m_track->update();
        return;
    }
    if (m_controller) {
        m_controller->seek(t);
    }
}

void TimelineBar::dragTo(int x)
{
    // A drag follows the pointer without snapping to markers, and does not move compare markers.
    if (!m_compare->isChecked() && m_controller) {
        m_controller->seek(timeAtX(x));
    }
}

double TimelineBar::selectedSpeed() const
{
    return m_speed->currentData().toDouble();
}

void TimelineBar::onPlayClicked()
{
    if (!m_controller) {
        return;
    }
    if (m_controller->mode() == ReplayController::Mode::Paused) {
        m_controller->play(selectedSpeed());
    } else {
        m_controller->pause();
    }
}

void TimelineBar::onSpeedChosen()
{
    if (m_controller) {
        m_controller->play(selectedSpeed()); // in live and while playing only the speed changes; paused starts
    }
}

void TimelineBar::onCompareToggled(bool on)
{
    if (!on) {
        clearCompare();
    }
}

void TimelineBar::refreshRange()
{
    const FlightRecorder *recorder = m_controller ? m_controller->recorder() : nullptr;
    if (!recorder || recorder->frameCount() == 0) {
        return;
    }
    // A live frame may be shown before the recorder has stored it.
    setRange(recorder->earliestMs(), std::max<qint64>(recorder->latestMs(), m_controller->position()));
}

void TimelineBar::sync()
{
    refreshRange();
    const auto mode = m_controller ? m_controller->mode() : ReplayController::Mode::Live;
    const bool live = mode == ReplayController::Mode::Live;
    m_live->setChecked(live);
    QPalette palette = this->palette();
    if (live) {
        palette.setColor(QPalette::Button, QColor(0xc6, 0x28, 0x28));
        palette.setColor(QPalette::ButtonText, Qt::white);
    }
    m_live->setPalette(palette);

    const bool paused = mode == ReplayController::Mode::Paused;
    m_play->setText(paused ? QStringLiteral("▶") : QStringLiteral("❚❚"));
    m_play->setToolTip(paused ? QStringLiteral("Play from here") : QStringLiteral("Pause"));
    m_play->setEnabled(!m_controller.isNull());
    m_live->setEnabled(!m_controller.isNull());

    if (!m_controller || live) {
        m_positionLabel->setText(QStringLiteral("live"));
    } else if (paused) {
        m_positionLabel->setText(clockText(m_controller->position()));
    } else {
        m_positionLabel->setText(clockText(m_controller->position()) % QStringLiteral(" ▶ ")
            % QString::number(m_controller->speed()) % QStringLiteral("×"));
    }
    m_track->update();
}

} // namespace fleetscope
