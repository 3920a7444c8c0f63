// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the real-chain tests (simulator page -> Prometheus or VictoriaMetrics -> Prometheus source -> client) share:
// asking the server, and comparing what the client received with what the simulator holds.
#include "client/telemetryclient.h"
#include "core/framesource.h"
#include "model/fleetmodel.h"
#include "prometheusprocess.h"
#include "sim/exporterpage.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace fleetscope::testing {

// The node-flap scenario's 256 GPUs after one simulated step of 130 s, which puts its node down (from 120 s, for a
// minute), so that a chain also carries a node that reports nothing; stopped on that frame, so that every scrape
// gets the same page. Null when the step does not come in time.
inline std::unique_ptr<backend::FrameSource> frozenNodeFlapFleet()
{
    backend::SimulationOptions options;
    options.gpuCount = 256;
    options.seed = 11;
    options.interval = std::chrono::milliseconds(1000);
    options.speed = 130;
    options.scenario = backend::Scenario::Kind::NodeFlap;
    auto simulator = backend::simulatedSource(options);
    simulator->waitForFrameAfter(0, std::chrono::milliseconds(5000));
    simulator->stop();
    return simulator->latest()->sequence >= 1 ? std::move(simulator) : nullptr;
}

inline bool online(const backend::Frame &frame, uint32_t g)
{
    return (frame.health[g] & 0x07U) != fleetscope::health::Offline;
}

// The frozen node-flap fleet served as a dcgm-exporter page on a free loopback port, the frame it serves and how many
// of its GPUs report. Members destroyed in reverse: the exporter before the simulator it serves.
struct FrozenFleetPage
{
    // Empty when the page is served with all GPUs but the flapping node's online; else why not.
    QString serve()
    {
        simulator = frozenNodeFlapFleet();
        if (!simulator) {
            return QStringLiteral("the simulator's step did not come in time");
        }
        frame = simulator->latest();
        exporter = std::make_unique<backend::ExporterServer>(*simulator, backend::ExporterPage::Options());
        std::string error;
        if (!exporter->start("127.0.0.1:0", &error)) {
            return QString::fromStdString(error);
        }
        const auto &shape = simulator->shape();
        online = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            online += testing::online(*frame, g) ? 1 : 0;
        }
        if (online != shape.gpuCount - backend::FleetShape::gpusPerNode) {
            return QStringLiteral("%1 of %2 GPUs online in the frozen frame (sequence %3); expected all but the "
                                  "flapping node's")
                .arg(online)
                .arg(shape.gpuCount)
                .arg(frame->sequence);
        }
        return {};
    }

    std::unique_ptr<backend::FrameSource> simulator;
    std::shared_ptr<const backend::Frame> frame;
    std::unique_ptr<backend::ExporterServer> exporter;
    uint32_t online = 0;
};

// The nodes a layout derived from the series' labels holds, in the simulator's order (its hostnames, r01-k01-n01, ...,
// are in the natural order the derived layout puts them in), each with its online GPUs: a node whose every GPU is
// offline has no series, so no place.
inline std::vector<std::pair<QString, uint32_t>> nodesWithSeries(
    const backend::FleetShape &shape, const backend::Frame &frame)
{
    std::vector<std::pair<QString, uint32_t>> nodes;
    for (const auto &node : shape.nodes) {
        uint32_t count = 0;
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            count += online(frame, g) ? 1 : 0;
        }
        if (count > 0) {
            nodes.emplace_back(QString::fromStdString(node.hostname), count);
        }
    }
    return nodes;
}

// A derived layout's GPUs matched to the simulator's: GPU i is the simulator's GPU with the same UUID, on the same
// host (*simulatorGpu: received index -> simulator index). Empty when every GPU matches, else the first that does not.
inline QString matchGpusByUuid(
    const Topology &topology, const backend::FleetShape &shape, std::vector<int64_t> *simulatorGpu)
{
    std::map<QString, uint32_t> simulatorGpuByUuid;
    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
        simulatorGpuByUuid[QString::fromStdString(shape.gpuUuid(g)).toLower()] = g;
    }
    simulatorGpu->assign(topology.gpuCount, -1);
    for (uint32_t i = 0; i < topology.gpuCount; ++i) {
        const auto it = simulatorGpuByUuid.find(topology.uuidText(i).toLower());
        if (it == simulatorGpuByUuid.end()) {
            return QStringLiteral("GPU %1's UUID %2 is none of the simulator's").arg(i).arg(topology.uuidText(i));
        }
        const QString host = QString::fromStdString(shape.nodes[shape.nodeOfGpu[it->second]].hostname);
        if (topology.nodeOf(i).hostname != host) {
            return QStringLiteral("GPU %1 on %2, the simulator's on %3").arg(i).arg(topology.nodeOf(i).hostname, host);
        }
        (*simulatorGpu)[i] = it->second;
    }
    return {};
}

// A layout read from a topology file written from the simulator's floor plan against that plan: the same rows, racks
// and hosts, in that order, each host with its GPUs where the simulator has them. Empty when equal, else the first
// difference.
inline QString layoutDifference(const Topology &topology, const backend::FleetShape &shape)
{
    if (topology.gpuCount != shape.gpuCount || topology.rows.size() != shape.rows.size()
        || topology.racks.size() != shape.racks.size() || topology.nodes.size() != shape.nodes.size()) {
        return QStringLiteral("%1 GPUs, %2 rows, %3 racks, %4 nodes received; %5, %6, %7, %8 simulated")
            .arg(topology.gpuCount)
            .arg(topology.rows.size())
            .arg(topology.racks.size())
            .arg(topology.nodes.size())
            .arg(shape.gpuCount)
            .arg(shape.rows.size())
            .arg(shape.racks.size())
            .arg(shape.nodes.size());
    }
    for (size_t r = 0; r < shape.rows.size(); ++r) {
        if (topology.rows[r].name != QString::fromStdString(shape.rows[r].name)
            || topology.rows[r].hall != QString::fromStdString(shape.rows[r].hall)) {
            return QStringLiteral("row %1: %2 in %3").arg(r).arg(topology.rows[r].name, topology.rows[r].hall);
        }
    }
    for (size_t r = 0; r < shape.racks.size(); ++r) {
        if (topology.racks[r].name != QString::fromStdString(shape.racks[r].name)
            || topology.racks[r].row != shape.racks[r].row || topology.racks[r].nodeCount != shape.racks[r].nodeCount) {
            return QStringLiteral("rack %1: %2 in row %3, %4 nodes")
                .arg(r)
                .arg(topology.racks[r].name)
                .arg(topology.racks[r].row)
                .arg(topology.racks[r].nodeCount);
        }
    }
    for (size_t n = 0; n < shape.nodes.size(); ++n) {
        if (topology.nodes[n].hostname != QString::fromStdString(shape.nodes[n].hostname)
            || topology.nodes[n].gpuCount != shape.nodes[n].gpuCount
            || topology.nodes[n].firstGpu != shape.nodes[n].firstGpu) {
            return QStringLiteral("node %1: %2, %3 GPUs from %4")
                .arg(n)
                .arg(topology.nodes[n].hostname)
                .arg(topology.nodes[n].gpuCount)
                .arg(topology.nodes[n].firstGpu);
        }
    }
    return {};
}

// Unix milliseconds as the `time` parameter of the HTTP API.
inline QByteArray apiTime(int64_t ms)
{
    return QByteArray::number(ms / 1000) + '.' + QByteArray::number(ms % 1000).rightJustified(3, '0');
}

// The vector an instant query answers (at evalMs when given), or an empty array while it has none.
inline QJsonArray instantQuery(int port, const QString &query, int64_t evalMs = 0)
{
    QByteArray target = "/api/v1/query?query=" + QUrl::toPercentEncoding(query);
    if (evalMs > 0) {
        target += "&time=" + apiTime(evalMs);
    }
    const auto doc = QJsonDocument::fromJson(httpGet(port, target)).object();
    if (doc.value(QStringLiteral("status")).toString() != QStringLiteral("success")) {
        return {};
    }
    return doc.value(QStringLiteral("data")).toObject().value(QStringLiteral("result")).toArray();
}

// A sample's value as the server prints it (a string), as a double; NaN when it is not a number.
inline double sampleValue(const QJsonValue &entry)
{
    bool ok = false;
    const double v = entry.toObject().value(QStringLiteral("value")).toArray().at(1).toString().toDouble(&ok);
    return ok ? v : std::nan("");
}

// The simulator's value after the trip the chain makes: the exporter prints integers for DCGM's int64 fields and
// power to the milliwatt with %f, the server parses the text into a float64, and the source narrows it to a float.
inline float throughTheChain(backend::MetricId id, float simulated)
{
    for (const auto &family : backend::ExporterPage::families()) {
        if (family.metric == id) {
            const double printed = family.isDouble ? std::round(static_cast<double>(simulated) * 1000.0) / 1000.0
                                                   : static_cast<double>(std::llround(simulated));
            return static_cast<float>(printed);
        }
    }
    return std::nanf("");
}

inline const std::vector<std::pair<backend::MetricId, QString>> &comparedMetrics()
{
    static const std::vector<std::pair<backend::MetricId, QString>> metrics
        = { { backend::MetricId::GpuTemp, QStringLiteral("gpu_temp") },
              { backend::MetricId::Power, QStringLiteral("power") },
              { backend::MetricId::GpuUtil, QStringLiteral("gpu_util") } };
    return metrics;
}

// Every compared metric of every GPU of a received frame against the simulator's frame (simulatorGpu: received index
// -> simulator index): online GPUs equal through the chain, offline ones without data (not on the page, so not in the
// server: no data, not a stale or made-up value). Empty when all hold, else the first difference; *compared counts
// the values compared.
inline QString frameDifference(
    const Frame &received, const backend::Frame &simulated, const std::vector<int64_t> &simulatorGpu, size_t *compared)
{
    *compared = 0;
    if (received.health.size() != simulatorGpu.size()) {
        return QStringLiteral("%1 GPUs received, %2 expected").arg(received.health.size()).arg(simulatorGpu.size());
    }
    for (const auto &[id, key] : comparedMetrics()) {
        const MetricPlane *plane = received.plane(key);
        if (plane == nullptr || plane->values.size() != simulatorGpu.size()) {
            return QStringLiteral("no %1 plane of the fleet's size").arg(key);
        }
        const auto &values = simulated.plane(id);
        for (size_t i = 0; i < simulatorGpu.size(); ++i) {
            const auto g = static_cast<uint32_t>(simulatorGpu[i]);
            const float got = plane->values[i];
            const auto state = fleetscope::health::stateOf(received.health[i]);
            if (!online(simulated, g)) {
                if (!std::isnan(got) || state != fleetscope::health::NoData) {
                    return QStringLiteral("%1 of offline GPU %2: %3 received, health %4")
                        .arg(key)
                        .arg(g)
                        .arg(static_cast<double>(got))
                        .arg(static_cast<int>(state));
                }
                continue;
            }
            const float expected = throughTheChain(id, values[g]);
            if (got != expected || state == fleetscope::health::NoData) {
                return QStringLiteral("%1 of GPU %2 (received as %3): %4 received, %5 simulated, health %6")
                    .arg(key)
                    .arg(g)
                    .arg(i)
                    .arg(static_cast<double>(got), 0, 'g', 9)
                    .arg(static_cast<double>(expected), 0, 'g', 9)
                    .arg(static_cast<int>(state));
            }
            ++*compared;
        }
    }
    return {};
}

// A frame received through the whole chain: every GPU against the frozen fleet's frame (simulatorGpu: received index
// -> simulator index), and its time a scrape's that the server on port holds: evaluated at that very millisecond,
// every online GPU's newest sample was taken then (a query time, or any other, would find the scrape before it); and a
// recent one, no newer than the newest the server holds now and a few intervals behind it at most. flushTarget, when
// given, is asked for before the newest (VictoriaMetrics' /internal/force_flush). Empty when all hold, else the first
// that does not.
inline QString chainDifference(int port, const Frame &received, const FrozenFleetPage &fleet,
    const std::vector<int64_t> &simulatorGpu, const QByteArray &flushTarget = {})
{
    size_t compared = 0;
    const QString difference = frameDifference(received, *fleet.frame, simulatorGpu, &compared);
    if (!difference.isEmpty()) {
        return difference;
    }
    if (compared != static_cast<size_t>(fleet.online) * comparedMetrics().size()) {
        return QStringLiteral("%1 values compared, %2 GPUs online").arg(compared).arg(fleet.online);
    }
    const int64_t t = received.sampleTimeMs;
    const auto stamps = instantQuery(port, QStringLiteral("timestamp(DCGM_FI_DEV_GPU_TEMP)"), t);
    if (t <= 0 || static_cast<uint32_t>(stamps.size()) != fleet.online) {
        return QStringLiteral("at the frame's time %1 the server holds %2 samples, %3 GPUs online")
            .arg(t)
            .arg(stamps.size())
            .arg(fleet.online);
    }
    for (const auto &stamp : stamps) {
        if (std::llround(sampleValue(stamp) * 1000.0) != t) {
            return QStringLiteral("a sample of %1 ms where the frame's time is %2 ms")
                .arg(std::llround(sampleValue(stamp) * 1000.0))
                .arg(t);
        }
    }
    if (!flushTarget.isEmpty()) {
        httpGet(port, flushTarget);
    }
    const auto newest = instantQuery(port, QStringLiteral("max(timestamp(DCGM_FI_DEV_GPU_TEMP))"));
    const int64_t newestMs = newest.size() == 1 ? std::llround(sampleValue(newest.at(0)) * 1000.0) : 0;
    if (!(t <= newestMs && newestMs - t < 15000)) {
        return QStringLiteral("frame time %1, newest scrape %2").arg(t).arg(newestMs);
    }
    return {};
}

// Waits on a client's frameReady spy for a frame with data (sequence 0 is the frame served before the first poll);
// returns the newest frame received, which still has sequence 0 (or is null) when none came in time.
inline FramePtr waitForFrameWithData(QSignalSpy &frames, FramePtr received, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while ((!received || received->sequence == 0) && !deadline.hasExpired()) {
        if (frames.isEmpty()) {
            frames.wait(static_cast<int>(std::max<qint64>(1, deadline.remainingTime())));
        }
        while (!frames.isEmpty()) {
            received = frames.takeFirst().at(0).value<FramePtr>();
        }
    }
    return received;
}

// Whether every GPU of frame has data: a sender's push may miss the first windows (two vmagents sharing the targets,
// each scraping in its own time; the sanitizers' slowness).
inline bool everyGpuHasData(const Frame &frame)
{
    return std::none_of(
        frame.health.begin(), frame.health.end(), [](uint8_t h) { return (h & health::stateMask) == health::NoData; });
}

// After waitForFrameWithData: the frames that follow until one has every GPU's data (or timeoutMs); the last one seen.
inline FramePtr waitForFrameWithEveryGpu(QSignalSpy &frames, FramePtr received, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (received && !everyGpuHasData(*received) && !deadline.hasExpired()) {
        if (frames.isEmpty()) {
            frames.wait(static_cast<int>(std::max<qint64>(1, deadline.remainingTime())));
        }
        while (!frames.isEmpty()) {
            received = frames.takeFirst().at(0).value<FramePtr>();
        }
    }
    return received;
}

// The frames a client receives from now until one has a finite value of metric for every GPU (or timeoutMs): the
// node_exporter pages are scraped in their own time, so the first frames may hold the GPUs' own fields only. The last
// frame seen, or null when none came.
inline FramePtr waitForPlaneOfEveryGpu(TelemetryClient &client, const QString &metric, int timeoutMs)
{
    QSignalSpy frames(&client, &TelemetryClient::frameReady);
    FramePtr received;
    auto whole = [&] {
        const MetricPlane *plane = received ? received->plane(metric) : nullptr;
        return plane != nullptr && !plane->values.empty()
            && std::all_of(plane->values.begin(), plane->values.end(), [](float v) { return std::isfinite(v); });
    };
    QDeadlineTimer deadline(timeoutMs);
    while (!whole() && !deadline.hasExpired()) {
        if (frames.isEmpty()) {
            frames.wait(static_cast<int>(std::max<qint64>(1, deadline.remainingTime())));
        }
        while (!frames.isEmpty()) {
            received = frames.takeFirst().at(0).value<FramePtr>();
        }
    }
    return received;
}

} // namespace fleetscope::testing
