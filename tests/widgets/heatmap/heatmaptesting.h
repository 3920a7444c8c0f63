// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the heatmap's suites share: small fleets, frames and a metric to show, and waiting for a paint.

#include "model/fleetmodel.h"
#include "widgets/heatmap/heatmapview.h"

#include <QImage>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>

namespace fleetscope::heatmaptesting {

// rows x racksPerRow racks x 2 nodes x 8 GPUs.
inline TopologyPtr fleet(uint32_t rowCount, uint32_t racksPerRow)
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    const uint32_t racks = rowCount * racksPerRow;
    t->gpuCount = racks * 16;
    for (uint32_t r = 0; r < rowCount; ++r) {
        t->rows.push_back({ QStringLiteral("r%1").arg(r + 1, 2, 10, QLatin1Char('0')), QStringLiteral("hall-a") });
    }
    uint32_t gpu = 0;
    for (uint32_t k = 0; k < racks; ++k) {
        t->racks.push_back({ QStringLiteral("rack%1").arg(k), k / racksPerRow, k % racksPerRow, k * 2, 2 });
        for (uint32_t n = 0; n < 2; ++n) {
            t->nodes.push_back({ QStringLiteral("rack%1-n%2").arg(k).arg(n), QStringLiteral("H100"),
                QStringLiteral("550"), QStringLiteral("96.00"), k, gpu, 8 });
            gpu += 8;
        }
    }
    t->nodeOfGpu.resize(t->gpuCount);
    for (uint32_t g = 0; g < t->gpuCount; ++g) {
        t->nodeOfGpu[g] = g / 8;
    }
    return t;
}

// fleet() with its racks named by row and column, as on most floors (r01-k01, r01-k02, ..., r02-k01, ...).
inline std::shared_ptr<Topology> fleetWithRackColumns(uint32_t rowCount, uint32_t racksPerRow)
{
    auto topology = std::make_shared<Topology>(*fleet(rowCount, racksPerRow));
    for (auto &rack : topology->racks) {
        rack.name = QStringLiteral("%1-k%2")
                        .arg(topology->rows[rack.row].name)
                        .arg(rack.position + 1, 2, 10, QLatin1Char('0'));
    }
    return topology;
}

// 2 rows x 3 racks x 2 nodes x 8 GPUs = 96 GPUs.
inline TopologyPtr smallFleet()
{
    return fleet(2, 3);
}

inline MetricInfo temperature()
{
    MetricInfo m;
    m.id = QStringLiteral("gpu_temp");
    m.name = QStringLiteral("GPU temperature");
    m.unit = QStringLiteral("°C");
    m.rangeMin = 20;
    m.rangeMax = 100;
    m.colourMap = QStringLiteral("viridis");
    return m;
}

inline FramePtr frameWith(uint64_t sequence, float base)
{
    auto f = std::make_shared<Frame>();
    f->sequence = sequence;
    f->topologyGeneration = 1;
    MetricPlane plane;
    plane.metricId = QStringLiteral("gpu_temp");
    plane.values.resize(96);
    for (int g = 0; g < 96; ++g) {
        plane.values[static_cast<size_t>(g)] = base + static_cast<float>(g) * 0.75F; // 20..91 °C for base 20
    }
    f->planes.push_back(std::move(plane));
    f->health.assign(96, health::Ok);
    return f;
}

// Jobs on the small fleet: job 7 on GPUs 0..23, job 9 on 40..47 and 60..67; the rest idle.
inline JobsPtr someJobs()
{
    const auto addGpus = [](Job &job, uint32_t first, uint32_t end) {
        for (uint32_t g = first; g < end; ++g) {
            job.gpus.push_back(g);
        }
    };
    auto jobs = std::make_shared<JobList>();
    jobs->topologyGeneration = 1;
    Job a;
    a.id = 7;
    a.name = QStringLiteral("train-llm");
    a.owner = QStringLiteral("ana");
    addGpus(a, 0, 24);
    Job b;
    b.id = 9;
    b.name = QStringLiteral("eval");
    b.owner = QStringLiteral("bo");
    addGpus(b, 40, 48);
    addGpus(b, 60, 68);
    Job ended;
    ended.id = 3;
    ended.name = QStringLiteral("old");
    ended.gpus = { 90, 91 };
    ended.endTimeMs = 5;
    jobs->jobs = { a, b, ended };
    jobs->runningJobOfGpu.assign(96, -1);
    for (uint32_t g : jobs->jobs[0].gpus) {
        jobs->runningJobOfGpu[g] = 0;
    }
    for (uint32_t g : jobs->jobs[1].gpus) {
        jobs->runningJobOfGpu[g] = 1;
    }
    return jobs;
}

// A frame of scattered temperatures (20-99), a hash of the GPU and the sequence deciding: every 29th or so GPU
// without a value and, with offline, every 31st or so offline.
inline FramePtr scatteredFrame(const Topology &topology, uint64_t sequence, bool offline)
{
    auto f = std::make_shared<Frame>();
    f->sequence = sequence;
    f->sampleTimeMs = static_cast<int64_t>(sequence) * 1000;
    f->topologyGeneration = 1;
    std::vector<float> values(topology.gpuCount);
    f->health.assign(topology.gpuCount, health::Ok);
    for (uint32_t g = 0; g < topology.gpuCount; ++g) {
        const uint32_t h = (g * 2654435761U) ^ static_cast<uint32_t>(sequence * 40503U);
        values[g] = h % 29 == 0 ? std::numeric_limits<float>::quiet_NaN() : 20.0F + static_cast<float>(h % 80);
        if (offline && h % 31 == 0) {
            f->health[g] = health::Offline;
        }
    }
    f->planes.push_back({ QStringLiteral("gpu_temp"), std::move(values) });
    return FramePtr(f);
}

// How many pixels of two images of one size differ at all (-1 for images of different sizes).
inline int differingPixels(const QImage &first, const QImage &second)
{
    const QImage a = first.convertToFormat(QImage::Format_RGB32);
    const QImage b = second.convertToFormat(QImage::Format_RGB32);
    if (a.size() != b.size()) {
        return -1;
    }
    int differing = 0;
    for (int y = 0; y < a.height(); ++y) {
        for (int x = 0; x < a.width(); ++x) {
            differing += a.pixel(x, y) != b.pixel(x, y) ? 1 : 0;
        }
    }
    return differing;
}

inline bool closeTo(QRgb a, QRgb b)
{
    return std::abs(qRed(a) - qRed(b)) <= 2 && std::abs(qGreen(a) - qGreen(b)) <= 2
        && std::abs(qBlue(a) - qBlue(b)) <= 2;
}

// Shows the view and waits until it has painted the current state.
inline bool paint(HeatmapView &view)
{
    const quint64 before = view.paintCount();
    quint64 presented = 0; // the paints done when the map last reached the window
    const auto connection
        = QObject::connect(&view, &HeatmapView::framePresented, [&] { presented = view.paintCount(); });
    view.update();
    const bool painted = QTest::qWaitFor([&] { return presented > before; }, 5000);
    QObject::disconnect(connection);
    return painted;
}

// A point of the GPU's cell clear of the border and of the value text drawn in big cells.
inline QRgb pixelOf(HeatmapView &view, const QImage &image, int gpu)
{
    const QRectF r = view.cellRect(gpu);
    const QPointF c = (r.topLeft() + QPointF(r.width() * 0.3, r.height() * 0.3)) * view.devicePixelRatioF();
    return image.pixel(static_cast<int>(c.x()), static_cast<int>(c.y()));
}

// The small fleet in a view of this size, its first frame shown and painted.
// The small fleet at frame 1 (20 degrees and up) in a view of this size, not yet shown; the frame given it.
inline FramePtr setUpSmallFleet(HeatmapView &view, QSize size = QSize(640, 400))
{
    view.resize(size);
    view.setTopology(smallFleet());
    view.setMetric(temperature());
    FramePtr frame = frameWith(1, 20);
    view.setFrame(frame);
    return frame;
}

inline bool showSmallFleet(HeatmapView &view, QSize size = QSize(640, 400))
{
    setUpSmallFleet(view, size);
    view.show();
    return QTest::qWaitForWindowExposed(&view) && paint(view);
}

// How many pixels of the image in this rectangle are light: text over the dark map.
inline int lightPixels(const QImage &image, const QRect &area)
{
    const QRect inside = area & image.rect();
    int light = 0;
    for (int y = inside.top(); y <= inside.bottom(); ++y) {
        for (int x = inside.left(); x <= inside.right(); ++x) {
            light += qGray(image.pixel(x, y)) > 120 ? 1 : 0;
        }
    }
    return light;
}

// The aisle above the rack whose top-left cell is this GPU's, where the rack's name is drawn: 4 cells wide, 2 high, in
// the view's device pixels.
inline QRect aisleAbove(const HeatmapView &view, int gpu)
{
    const double dpr = view.devicePixelRatioF();
    const QRectF rack = view.cellRect(gpu);
    return QRectF(
        QPointF(rack.left(), rack.top() - 2 * rack.height()) * dpr, QSizeF(4 * rack.width(), 2 * rack.height()) * dpr)
        .toAlignedRect();
}

} // namespace fleetscope::heatmaptesting
