// SPDX-License-Identifier: Apache-2.0
#include "app/livescreenshot.h"

#include "app/consolesession.h"
#include "widgets/heatmap/heatmapview.h"

#include <QTimer>

#include <cstdio>

namespace fleetscope {

LiveScreenshot::LiveScreenshot(ConsoleSession *session, HeatmapView *map, std::function<QPixmap()> grab, QString file,
    int timeoutS, QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_map(map)
    , m_grab(std::move(grab))
    , m_file(std::move(file))
{
    connect(session, &ConsoleSession::liveFrame, this, &LiveScreenshot::onLiveFrame);
    QTimer::singleShot(timeoutS * 1000, this, [this, timeoutS] {
        if (m_armed) {
            m_armed = false;
            std::fprintf(stderr, "fleetscope: no live frame arrived within %d s (%s); no screenshot taken\n", timeoutS,
                qPrintable(m_session->client()->stateDetail()));
            Q_EMIT done(1);
        }
    });
}

void LiveScreenshot::onLiveFrame()
{
    const FramePtr shown = m_map->frame();
    if (!m_armed || !shown || shown->plane(m_map->metric().id) == nullptr) {
        return;
    }
    m_armed = false;
    // Saved after this frame has been painted, not before.
    connect(
        m_map, &HeatmapView::framePresented, this,
        [this] {
            const bool saved = m_grab().save(m_file, "PNG");
            if (!saved) {
                std::fprintf(stderr, "fleetscope: cannot write %s\n", qPrintable(m_file));
            }
            Q_EMIT done(saved ? 0 : 1);
        },
        Qt::SingleShotConnection);
    m_map->update();
}

} // namespace fleetscope
