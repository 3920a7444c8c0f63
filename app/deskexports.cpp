// SPDX-License-Identifier: Apache-2.0
#include "app/deskexports.h"

#include "app/consolesession.h"
#include "app/pages/mappage.h"
#include "model/csvexport.h"
#include "model/navigation.h"
#include "model/savefile.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/summary/goodputpanel.h"
#include "widgets/summary/summaryview.h"

#include <QBuffer>
#include <QDateTime>
#include <QFileDevice>
#include <QFileDialog>
#include <QImageWriter>
#include <QMenu>

#include <algorithm>
#include <utility>

namespace fleetscope {

DeskExports::DeskExports(ConsoleSession *session, MapPage *map, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_session(session)
    , m_map(map)
    , m_dialogParent(dialogParent)
{ }

DeskExports::~DeskExports()
{
    // Every export the user chose is written before the desk goes (the results are no longer shown).
    m_worker.finishJobs();
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

void DeskExports::addSummaryActionsTo(QMenu *menu, SummaryView *summary)
{
    m_summary = summary;
    menu->addAction(tr("Export the &offenders (most failures) as CSV…"), this, [this] {
        const QString file
            = askFile(tr("Export offenders"), QStringLiteral("fleetscope-offenders.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportOffendersTo(file);
        }
    });
    menu->addAction(tr("Export the &repeat offenders (lasting score) as CSV…"), this, [this] {
        const QString file = askFile(
            tr("Export repeat offenders"), QStringLiteral("fleetscope-repeat-offenders.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportRepeatOffendersTo(file);
        }
    });
    menu->addAction(tr("Export the jobs' &goodput (day and week) as CSV…"), this, [this] {
        const QString file
            = askFile(tr("Export goodput"), QStringLiteral("fleetscope-goodput.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportGoodputTo(file);
        }
    });
    menu->addAction(tr("Export &where goodput went (losses by cause) as CSV…"), this, [this] {
        const QString file = askFile(
            tr("Export goodput losses"), QStringLiteral("fleetscope-goodput-losses.csv"), tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            exportGoodputLossesTo(file);
        }
    });
}

void DeskExports::exportOffendersTo(const QString &file)
{
    Q_EMIT finished(file, m_summary->exportOffendersCsv(file), tr("%L1 GPUs").arg(m_summary->figures().worst.size()));
}

void DeskExports::exportRepeatOffendersTo(const QString &file)
{
    const auto week = m_summary->weekSummary();
    Q_EMIT finished(
        file, m_summary->exportRepeatOffendersCsv(file), tr("%L1 GPUs").arg(week ? week->repeatOffenders.size() : 0));
}

void DeskExports::exportGoodputTo(const QString &file)
{
    Q_EMIT finished(file, m_summary->exportGoodputCsv(file), {});
}

void DeskExports::exportGoodputLossesTo(const QString &file)
{
    Q_EMIT finished(file, m_summary->exportGoodputLossesCsv(file),
        tr("%L1 losses").arg(m_summary->goodput()->figures().losses.size()));
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
    const QImage image = m_map->heatmap()->grabMap();
    run(file, [image, file] {
        // Encoded in memory, then written whole (model/savefile.h): a few MB, and every byte's write is checked.
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        QImageWriter writer(&buffer, "PNG");
        if (!writer.write(image)) {
            return std::pair { tr("could not encode the map as PNG: %1").arg(writer.errorString()), QString() };
        }
        return std::pair { SaveFile::write(file, png), QString() };
    });
}

void DeskExports::exportValuesTo(const QString &file)
{
    const TopologyPtr topology = m_map->navigation()->topology();
    const FramePtr frame = m_session->latestFrame();
    if (!topology || !frame) {
        Q_EMIT finished(file, tr("nothing to export yet: no frame has arrived"), {});
        return;
    }
    const std::vector<MetricInfo> metrics = m_session->backendMetrics();
    std::vector<uint32_t> gpus = m_map->gpusOfCurrentPlace();
    run(file, [file, topology, frame, metrics, gpus = std::move(gpus)] {
        const QString error = SaveFile::write(file,
            [&](QFileDevice &out) { return CsvExport::writeCurrentValues(out, *topology, *frame, metrics, gpus); });
        return std::pair { error, tr("%L1 GPUs").arg(gpus.size()) };
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
    const std::vector<uint32_t> gpus
        = selected >= 0 ? std::vector<uint32_t> { static_cast<uint32_t>(selected) } : m_map->gpusOfCurrentPlace();
    const std::vector<MetricInfo> metrics = m_session->backendMetrics();
    const FlightRecorder *recorder = &m_session->recorder(); // outlives the worker: see ~MainWindow
    run(file, [file, topology, gpus, metrics, recorder] {
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
        const QString error = SaveFile::write(
            file, [&](QFileDevice &out) { return CsvExport::writeTimeSeries(out, *topology, frames, metrics, gpus); });
        return std::pair { error, tr("%L1 samples").arg(frames.size()) };
    });
}

void DeskExports::run(const QString &file, std::function<std::pair<QString, QString>()> work)
{
    ++m_running;
    // The worker goes before this object does and delivers no result after it: `this` outlives the job.
    m_worker.run([this, file, work = std::move(work)]() -> Worker::Result {
        std::pair<QString, QString> result = work();
        return [this, file, result = std::move(result)] {
            --m_running;
            Q_EMIT finished(file, result.first, result.second);
        };
    });
}

} // namespace fleetscope
