// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the remote-write benchmarks push: the simulator's dcgm-exporter page (8 fields a GPU, the pod labels of its
// running jobs) cut into WriteRequests as vmagent pushes them.
#include "core/clock.h"
#include "core/framesource.h"
#include "promanswer.h"
#include "remotewrite/remotewritesource.h"
#include "sim/exporterpage.h"
#include "sim/simulatedfleet.h"

#include "prometheus/remote.pb.h"

#include <snappy.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fleetscope::bench {

// The gauges of the catalogue a dcgm-exporter page has: what is pushed for each GPU.
inline const std::vector<backend::MetricId> &pushedFields()
{
    using backend::MetricId;
    static const std::vector<MetricId> fields = { MetricId::GpuTemp, MetricId::MemTemp, MetricId::Power,
        MetricId::GpuUtil, MetricId::MemCopyUtil, MetricId::SmClock, MetricId::FbUsed, MetricId::ThrottleReasons };
    return fields;
}

// The page of a simulated fleet of gpus after half an hour, with its running jobs (for the pod labels), holding
// pushedFields() only.
inline std::string simulatedPage(uint32_t gpus)
{
    backend::SimulationOptions options;
    options.gpuCount = gpus;
    options.interval = std::chrono::hours(1);
    options.history = std::chrono::minutes(30);
    const auto simulation = backend::simulatedSource(options);
    const auto simulated = simulation->latest();
    const auto jobs = simulation->jobs();
    const backend::FleetShape shape = simulation->shape();
    simulation->stop();
    backend::Frame onlyPushed;
    onlyPushed.health = simulated->health;
    onlyPushed.rawErrors = simulated->rawErrors;
    for (const auto id : pushedFields()) {
        onlyPushed.planes[static_cast<size_t>(id)] = simulated->plane(id);
    }
    return backend::ExporterPage::render(shape, onlyPushed, jobs, {}).text;
}

// The page's series as vmagent pushes them: blocks of 10,000 series (its -remoteWrite.maxRowsPerBlock), labels sorted
// with __name__, instance and job added, one sample at timeMs. Each block snappy-compressed; *rawBytes the protobuf.
inline std::vector<std::string> pushedBlocks(const std::string &page, int64_t timeMs, size_t *rawBytes, size_t *samples)
{
    std::vector<std::string> blocks;
    prometheus::WriteRequest request;
    PageSeries series;
    std::string_view rest(page);
    *rawBytes = 0;
    *samples = 0;
    auto flush = [&] {
        const std::string bytes = request.SerializeAsString();
        *rawBytes += bytes.size();
        std::string compressed;
        snappy::Compress(bytes.data(), bytes.size(), &compressed);
        blocks.push_back(std::move(compressed));
        request.Clear();
    };
    while (!rest.empty()) {
        const size_t eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
        if (line.empty() || line.front() == '#' || !parsePageLine(line, &series)) {
            continue;
        }
        auto labels = series.labels;
        labels.emplace_back("__name__", series.name);
        labels.emplace_back("instance", "dcgm-exporter:9400");
        labels.emplace_back("job", "dcgm");
        std::sort(labels.begin(), labels.end());
        auto *ts = request.add_timeseries();
        for (const auto &[name, value] : labels) {
            auto *l = ts->add_labels();
            l->set_name(name);
            l->set_value(value);
        }
        auto *sample = ts->add_samples();
        sample->set_timestamp(timeMs);
        sample->set_value(series.value);
        ++*samples;
        if (request.timeseries_size() == 10000) {
            flush();
        }
    }
    if (request.timeseries_size() > 0) {
        flush();
    }
    return blocks;
}

// Starts receiver on options (its start() returns once it has learnt the fleet's layout) while pushing page's blocks
// through post (which says whether one was taken) until they all are: the listener comes up meanwhile.
inline bool startLearningFrom(backend::RemoteWriteSource &receiver, const backend::RemoteWriteSource::Options &options,
    const std::string &page, const std::function<bool(const std::string &block)> &post, std::string *error)
{
    bool started = false;
    std::thread starter([&] { started = receiver.start(options, error); });
    size_t raw = 0;
    size_t count = 0;
    const auto discovery = pushedBlocks(page, backend::nowUnixMs(), &raw, &count);
    for (int attempt = 0; attempt < 200; ++attempt) {
        bool all = true;
        for (const auto &block : discovery) {
            all = all && post(block);
        }
        if (all) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    starter.join();
    return started;
}

} // namespace fleetscope::bench
