// SPDX-License-Identifier: Apache-2.0
#include "app/deskexports.h"

#include "app/consolesession.h"
#include "app/mappage.h"
#include "model/csvexport.h"
#include "model/navigation.h"
#include "widgets/heatmap/heatmapview.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QPointer>
#include <QThreadPool>

#include <algorithm>

namespace fleetscope {

DeskExports::DeskExports(ConsoleSession *session, MapPage *map, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_session(session)
    , m_map(map)
    , m_dialogParent(dialogParent)
{
}

DeskExports::~DeskExports()
{
    m_pool.waitForDone();
}

void DeskExports::addActionsTo(QMenu *menu)
{
    menu->addAction(tr("Export the map as &PNG…"), this, &DeskExports::exportMap)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    menu->addAction(tr("Export the &values of this place as CSV…"), this, [this] {
        const QString file
            = askFile(tr("Export values"), QStringLiteral("fleetscope-values.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportValuesTo(file);
        }
    });
    menu->addAction(tr("Export the &time series of the selection as CSV…"), this, [this] {
        const QString file
            = askFile(tr("Export time series"), QStringLiteral("fleetscope-series.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportTimeSeriesTo(file);
        }
    });
}

QString DeskExports::askFile(const QString &title, const QString &name, const QString &filter)
{
    return QFileDialog::getSaveFileName(m_dialogParent, title, name, filter);
}

void DeskExports::exportMap()
{
    const QString file = askFile(tr("Export the map"),
        QStringLiteral("fleetscope-%1.png")
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))),
        tr("PNG images (*.png)"));
    if (file.isEmpty()) {
        return;
    }
    // The map at the screen's own resolution (physical pixels), labels included. A few megapixels at most: the
    // PNG encoding is the slow part and runs on a worker.
    const QImage image = m_map->heatmap()->grabFramebuffer();
    ++m_running;
    QPointer<DeskExports> self(this);
    m_pool.start([self, image, file] {
        const bool saved = image.save(file, "PNG");
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, file, saved] {
            if (self) {
                --self->m_running;
                Q_EMIT self->finished(file, saved ? QString() : tr("could not write %1").arg(file), {});
            }
        });
    });
}

void DeskExports::exportValuesTo(const QString &file)
{
    const TopologyPtr topology = m_map->navigation()->topology();
    const FramePtr frame = m_session->client()->latestFrame();
    if (!topology || !frame) {
        Q_EMIT finished(file, tr("nothing to export yet: no frame has arrived"), {});
        return;
    }
    const std::vector<MetricInfo> metrics = m_session->client()->metrics();
    std::vector<uint32_t> gpus = m_map->gpusOfCurrentPlace();
    ++m_running;
    QPointer<DeskExports> self(this);
    m_pool.start([self, file, topology, frame, metrics, gpus = std::move(gpus)] {
        QFile out(file);
        const QString error = out.open(QIODevice::WriteOnly | QIODevice::Truncate)
            ? CsvExport::writeCurrentValues(out, *topology, *frame, metrics, gpus)
            : out.errorString();
        const QString summary = tr("%L1 GPUs").arg(gpus.size());
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, file, error, summary] {
            if (self) {
                --self->m_running;
                Q_EMIT self->finished(file, error, summary);
            }
        });
    });
}

void DeskExports::exportTimeSeriesTo(const QString &file)
{
    const TopologyPtr topology = m_map->navigation()->topology();
    const int selected = m_map->heatmap()->selectedGpu();
    if (!topology || (selected < 0 && m_map->navigation()->current().level != Place::Level::Node)) {
        Q_EMIT finished(file, tr("select a GPU or open a node first"), {});
        return;
    }
    const std::vector<uint32_t> gpus = selected >= 0 ? std::vector<uint32_t> { static_cast<uint32_t>(selected) }
                                                     : m_map->gpusOfCurrentPlace();
    const std::vector<MetricInfo> metrics = m_session->client()->metrics();
    const FlightRecorder *recorder = &m_session->recorder(); // outlives the pool: see ~DeskExports
    ++m_running;
    QPointer<DeskExports> self(this);
    m_pool.start([self, file, topology, gpus, metrics, recorder] {
        // The recorded frames of the last 15 minutes, at most 900 of them, decoded here rather than on the GUI thread.
        std::vector<FramePtr> frames;
        const auto times = recorder->sampleTimes();
        const int64_t from = times.empty() ? 0 : times.back() - 15 * 60 * 1000;
        const size_t stride = std::max<size_t>(1, times.size() / 900);
        for (size_t i = 0; i < times.size(); i += stride) {
            if (times[i] >= from) {
                if (FramePtr frame = recorder->frameAt(times[i]);
                    frame && frame->topologyGeneration == topology->generation) {
                    frames.push_back(std::move(frame));
                }
            }
        }
        QFile out(file);
        const QString error = out.open(QIODevice::WriteOnly | QIODevice::Truncate)
            ? CsvExport::writeTimeSeries(out, *topology, frames, metrics, gpus)
            : out.errorString();
        const QString summary = tr("%L1 samples").arg(frames.size());
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, file, error, summary] {
            if (self) {
                --self->m_running;
                Q_EMIT self->finished(file, error, summary);
            }
        });
    });
}

} // namespace fleetscope
