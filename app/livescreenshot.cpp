// SPDX-License-Identifier: Apache-2.0
#include "app/livescreenshot.h"

#include "app/consolesession.h"
#include "model/savefile.h"
#include "widgets/heatmap/heatmapview.h"

#include <QBuffer>
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
                qPrintable(m_session->connectionDetail()));
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
            // Whole or not at all, as the desk's exports: a script that checks the exit code gets a whole PNG.
            QByteArray png;
            QBuffer buffer(&png);
            buffer.open(QIODevice::WriteOnly);
            const QString error = m_grab().save(&buffer, "PNG") ? SaveFile::write(m_file, png)
                                                                : QStringLiteral("cannot encode %1 as PNG").arg(m_file);
            if (!error.isEmpty()) {
                std::fprintf(stderr, "fleetscope: %s\n", qPrintable(error));
            }
            Q_EMIT done(error.isEmpty() ? 0 : 1);
        },
        Qt::SingleShotConnection);
    m_map->update();
}

} // namespace fleetscope
