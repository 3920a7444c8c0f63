// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the real-chain tests (simulator page -> Prometheus or VictoriaMetrics -> Prometheus source -> client) share:
// asking the server, and comparing what the client received with what the simulator holds.
#include "core/framesource.h"
#include "model/fleetmodel.h"
#include "prometheusprocess.h"
#include "sim/exporterpage.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include <cmath>
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

inline bool online(const backend::Frame &frame, uint32_t g)
{
    return (frame.health[g] & 0x07U) != fleetscope::health::Offline;
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

} // namespace fleetscope::testing
