// SPDX-License-Identifier: Apache-2.0
#include "app/deskstatus.h"

#include "app/consolesession.h"
#include "app/healthstrip.h"
#include "app/pages/mappage.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/style/fixedtextsize.h"

#include <QDateTime>
#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>

#include <algorithm>

namespace fleetscope {

DeskStatus::DeskStatus(ConsoleSession *session, MapPage *page, QStatusBar *bar)
    : QObject(bar)
    , m_session(session)
    , m_page(page)
    , m_map(page->heatmap())
    , m_bar(bar)
{
    m_connection = new QLabel(bar);
    m_gpus = new QLabel(bar);
    m_age = new QLabel(bar);
    m_fps = new QLabel(bar);
    // Sized once for their widest text: a new age or rate, every second, repaints the label and does not reformat
    // the status bar (widgets/style/fixedtextsize.h).
    fixSizeForText(m_age, tr("data as of 00:00:00 (0000.0 s old)"));
    fixSizeForText(m_fps, tr("000.0 fps"));
    bar->addWidget(m_connection, 1);
    m_loading = new QProgressBar(bar);
    m_loading->setRange(0, 0); // busy: QueryRange streams without a known size
    m_loading->setMaximumWidth(120);
    m_loading->setToolTip(tr("Loading history from the backend"));
    m_loading->hide();
    bar->addPermanentWidget(m_loading);
    // How many GPUs are critical, warning, offline, throttled, anomalous; a click outlines them on the map.
    m_health = new HealthStrip(bar);
    bar->addPermanentWidget(m_health);
    connect(
        session, &ConsoleSession::shownChanged, m_health, [this](const ShownState &shown, ShownState::Changes changes) {
            if (changes & ShownState::Frame) {
                m_health->setFrame(shown.raw ? shown.raw : shown.frame);
            }
        });
    connect(session, &ConsoleSession::fleetEventsChanged, m_health,
        [this] { m_health->setAnomalousGpus(m_session->anomalousGpus()); });
    connect(m_health, &HealthStrip::gpusChosen, this, [this](const std::vector<uint32_t> &gpus, const QString &what) {
        m_map->setMarkedGpus(gpus);
        if (!what.isEmpty()) {
            m_bar->showMessage(
                tr("%L1 %2 GPUs outlined on the map; click the count again to clear").arg(gpus.size()).arg(what),
                10000);
        }
    });
    bar->addPermanentWidget(m_gpus);
    bar->addPermanentWidget(m_age);
    bar->addPermanentWidget(m_fps);
    // A message (a place that does not fit, a view made on another fleet, an export done) takes the room of what a
    // glance can spare, the fleet's size and the frame rate, so that it reads in full in a window of the default
    // width; the data's age and the health counts stay. The whole message is the status bar's tooltip meanwhile.
    connect(bar, &QStatusBar::messageChanged, this, [this](const QString &message) {
        m_gpus->setVisible(message.isEmpty());
        m_fps->setVisible(message.isEmpty());
        m_bar->setToolTip(message);
    });

    connect(
        session, &ConsoleSession::connectionChanged, this, [this](TelemetryClient::State state, const QString &detail) {
            showConnection(QStringLiteral("● ") + detail,
                state == TelemetryClient::State::Live               ? QStringLiteral("#4caf50")
                    : state == TelemetryClient::State::Reconnecting ? QStringLiteral("#e0603a")
                                                                    : QStringLiteral("#d6a400"));
        });
    connect(session, &ConsoleSession::topologyChanged, this, [this](const TopologyPtr &topology) {
        m_gpus->setText(tr("%L1 GPUs · %L2 nodes · %L3 racks")
                            .arg(topology->gpuCount)
                            .arg(topology->nodes.size())
                            .arg(topology->racks.size()));
    });
    connect(session, &ConsoleSession::problemReported, this,
        [this](const QString &text) { m_bar->showMessage(text, 10000); });
    connect(session, &ConsoleSession::message, this,
        [this](const QString &text, int timeoutMs) { m_bar->showMessage(text, timeoutMs); });
    connect(session, &ConsoleSession::historyLoadingChanged, m_loading, &QWidget::setVisible);
    connect(session, &ConsoleSession::liveFrame, this, &DeskStatus::refresh);
    connect(session->replay(), &ReplayController::modeChanged, this, &DeskStatus::refresh);
    connect(session, &ConsoleSession::shownChanged, this, [this](const ShownState &, ShownState::Changes changes) {
        if (changes & ShownState::Metric) {
            refresh();
        }
    });
    // Every 1.1 s without a frame: each frame refreshes at once and starts the wait again, so that with frames a
    // second apart the age changes with the frame's other news, in one repaint (on a software renderer every repaint
    // of the window recomposites the whole GL map).
    m_timer.setInterval(1100);
    connect(&m_timer, &QTimer::timeout, this, &DeskStatus::refresh);
    m_timer.start();
    m_fpsClock.start();
}

void DeskStatus::showConnection(const QString &detail, const QString &colour)
{
    m_connection->setText(detail);
    m_connection->setStyleSheet(QStringLiteral("color: %1;").arg(colour));
}

void DeskStatus::showProblem(const QString &message)
{
    showConnection(QStringLiteral("⚠ ") + message, QStringLiteral("#e0603a; font-weight: bold"));
}

void DeskStatus::refresh()
{
    m_timer.start();
    const qint64 elapsed = m_fpsClock.elapsed();
    if (elapsed >= 1000) {
        m_fpsValue = static_cast<double>(m_map->paintCount() - m_fpsPaints) * 1000.0 / static_cast<double>(elapsed);
        m_fpsPaints = m_map->paintCount();
        m_fpsClock.restart();
    }
    m_fps->setText(m_fpsValue < 0 ? tr("– fps") : tr("%1 fps").arg(m_fpsValue, 0, 'f', 1));
    const FramePtr frame = m_map->frame();
    if (!frame) {
        m_age->setText(tr("no data yet"));
        return;
    }
    const double age = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs) / 1000.0;
    const QString when = QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm:ss"));
    m_age->setText(tr("data as of %1 (%2 s old)").arg(when).arg(std::max(0.0, age), 0, 'f', 1));
    // Past three intervals the age turns into a warning and the map is patterned, counted by this machine's clock
    // since the data came, with the client's full detail; a replay or a comparison shows old data on purpose, and
    // says so in its own banner.
    const bool stale = m_session->isStale();
    const qint64 silentS = m_session->msSinceNewData() / 1000;
    const bool live = m_page->showDataNote(stale,
        tr("No new data for %1 s (as of %2) · %3").arg(silentS).arg(when, m_session->connectionDetail()),
        tr(" (LIVE returns to now)"));
    m_age->setStyleSheet(live && stale ? QStringLiteral("color: #e0603a; font-weight: bold;") : QString());
}

} // namespace fleetscope
