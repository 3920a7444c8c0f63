// SPDX-License-Identifier: Apache-2.0
#include "service/summary.h"

#include "common/health.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr float busyThreshold = 5.0F; // utilisation above this counts as busy

struct Totals
{
    double utilSum = 0; // utilisation x hours, online samples only
    double onlineHours = 0;
    double totalHours = 0;
    double busyHours = 0;
    uint32_t unhealthy = 0;
    uint64_t failures = 0;

    void add(const Totals &o)
    {
        utilSum += o.utilSum;
        onlineHours += o.onlineHours;
        totalHours += o.totalHours;
        busyHours += o.busyHours;
        unhealthy += o.unhealthy;
        failures += o.failures;
    }
};

void fill(pb::Rollup *out, const std::string &name, uint32_t gpus, const Totals &t)
{
    out->set_name(name);
    out->set_gpu_count(gpus);
    out->set_mean_utilisation(t.onlineHours > 0 ? t.utilSum / t.onlineHours : 0.0);
    out->set_busy_gpu_hours(t.busyHours);
    out->set_idle_gpu_hours(t.onlineHours - t.busyHours);
    out->set_unhealthy_gpus(t.unhealthy);
    out->set_availability(t.totalHours > 0 ? t.onlineHours / t.totalHours : 0.0);
    out->set_failures(t.failures);
}

// Schedulable units, as GPU ranges: an NVL72 rack (one NVLink domain) whole, otherwise each node.
std::vector<std::pair<uint32_t, uint32_t>> schedulableUnits(const FleetShape &shape)
{
    std::vector<std::pair<uint32_t, uint32_t>> units;
    auto add = [&](uint32_t first, uint32_t count) {
        if (count > 0 && first <= shape.gpuCount && count <= shape.gpuCount - first) {
            units.emplace_back(first, count);
        }
    };
    for (const auto &rack : shape.racks) {
        if (rack.nodeCount == 0 || rack.firstNode + rack.nodeCount > shape.nodes.size()) {
            continue;
        }
        if (rack.nvlinkDomain) {
            const auto &last = shape.nodes[rack.firstNode + rack.nodeCount - 1];
            const uint32_t first = shape.nodes[rack.firstNode].firstGpu;
            add(first, last.firstGpu + last.gpuCount - first);
        } else {
            for (uint32_t k = rack.firstNode; k < rack.firstNode + rack.nodeCount; ++k) {
                add(shape.nodes[k].firstGpu, shape.nodes[k].gpuCount);
            }
        }
    }
    return units;
}

// A unit's healthy GPUs in a frame: state OK with no ECC or XID flag (as the console's capacity at risk counts).
uint32_t healthyIn(const Frame &f, std::pair<uint32_t, uint32_t> unit)
{
    uint32_t ok = 0;
    for (uint32_t g = unit.first; g < unit.first + unit.second; ++g) {
        const uint8_t h = f.health[g];
        ok += health::stateOf(h) == health::Ok && (h & (health::eccFlag | health::xidFlag)) == 0 ? 1 : 0;
    }
    return ok;
}

// GPU-hours lost in units not fully healthy over the range, and the healthy units of the newest frame.
void fillUnits(pb::Summary *summary, const FleetShape &shape, const std::vector<std::shared_ptr<const Frame>> &frames,
    int64_t fromMs, int64_t toMs)
{
    const auto units = schedulableUnits(shape);
    double lost = 0;
    double stranded = 0;
    uint32_t healthyAtEnd = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
        const auto &f = *frames[i];
        if (f.health.size() < shape.gpuCount) {
            continue;
        }
        const int64_t start = std::max(fromMs, f.sampleTimeMs);
        const int64_t until = std::min(toMs, i + 1 < frames.size() ? frames[i + 1]->sampleTimeMs : toMs);
        const double hours = static_cast<double>(std::max<int64_t>(0, until - start)) / 3.6e6;
        const bool last = i + 1 == frames.size();
        if (hours <= 0 && !last) {
            continue;
        }
        for (const auto &unit : units) {
            const uint32_t ok = healthyIn(f, unit);
            if (ok < unit.second) {
                lost += unit.second * hours;
                stranded += ok * hours;
            } else if (last) {
                ++healthyAtEnd;
            }
        }
    }
    summary->set_unit_gpu_hours_lost(lost);
    summary->set_stranded_gpu_hours(stranded);
    summary->set_units(static_cast<uint32_t>(units.size()));
    summary->set_healthy_units_at_end(healthyAtEnd);
}

Totals sumRange(const std::vector<Totals> &perGpu, uint32_t first, uint32_t count)
{
    Totals t;
    for (uint32_t g = first; g < first + count; ++g) {
        t.add(perGpu[g]);
    }
    return t;
}
} // namespace

pb::Summary summarise(const FleetShape &shape, const std::vector<std::shared_ptr<const Frame>> &frames,
    const std::vector<TimedEvent> &events, const std::vector<JobInfo> &jobs, int64_t fromMs, int64_t toMs,
    uint32_t topOffenders)
{
    pb::Summary summary;
    const uint32_t n = shape.gpuCount;
    std::vector<Totals> perGpu(n);
    for (size_t i = 0; i < frames.size(); ++i) {
        const auto &f = *frames[i];
        const int64_t start = std::max(fromMs, f.sampleTimeMs);
        const int64_t until = std::min(toMs, i + 1 < frames.size() ? frames[i + 1]->sampleTimeMs : toMs);
        const double hours = static_cast<double>(std::max<int64_t>(0, until - start)) / 3.6e6;
        const auto &util = f.plane(MetricId::GpuUtil);
        for (uint32_t g = 0; g < n; ++g) {
            auto &t = perGpu[g];
            t.totalHours += hours;
            if ((f.health[g] & 0x07U) == health::Offline || std::isnan(util[g])) {
                continue;
            }
            t.onlineHours += hours;
            t.utilSum += static_cast<double>(util[g]) * hours;
            if (util[g] > busyThreshold) {
                t.busyHours += hours;
            }
        }
    }
    if (!frames.empty()) {
        const auto &last = *frames.back();
        for (uint32_t g = 0; g < n; ++g) {
            perGpu[g].unhealthy = (last.health[g] & 0x07U) != health::Ok ? 1 : 0;
        }
        summary.set_from_ms(std::max(fromMs, frames.front()->sampleTimeMs));
        summary.set_to_ms(toMs);
    }
    summary.set_frames(static_cast<uint32_t>(frames.size()));
    fillUnits(&summary, shape, frames, fromMs, toMs);
    for (const auto &timed : events) {
        const auto &e = timed.event;
        if ((e.kind == FleetEvent::Kind::Xid || e.kind == FleetEvent::Kind::EccDoubleBit) && e.gpu >= 0
            && e.gpu < static_cast<int64_t>(n)) {
            ++perGpu[static_cast<size_t>(e.gpu)].failures;
        }
    }

    const Totals fleet = sumRange(perGpu, 0, n);
    fill(summary.mutable_fleet(), "fleet", n, fleet);
    summary.set_total_failures(fleet.failures);
    auto rackRange = [&](const FleetShape::Rack &rack) {
        const uint32_t first = shape.nodes[rack.firstNode].firstGpu;
        const auto &last = shape.nodes[rack.firstNode + rack.nodeCount - 1];
        return std::pair { first, last.firstGpu + last.gpuCount - first };
    };
    for (const auto &row : shape.rows) {
        const auto [first, ignored] = rackRange(shape.racks[row.firstRack]);
        const auto [lastFirst, lastCount] = rackRange(shape.racks[row.firstRack + row.rackCount - 1]);
        const uint32_t count = lastFirst + lastCount - first;
        fill(summary.add_rows(), row.name, count, sumRange(perGpu, first, count));
    }
    for (const auto &rack : shape.racks) {
        const auto [first, count] = rackRange(rack);
        fill(summary.add_racks(), rack.name, count, sumRange(perGpu, first, count));
    }
    for (const auto &job : jobs) {
        if (job.endMs != 0) {
            continue;
        }
        // A job read from Prometheus may hold any GPUs, not one contiguous range: sum the ones it names.
        const std::vector<uint32_t> gpus = job.gpuList();
        if (std::any_of(gpus.begin(), gpus.end(), [n](uint32_t g) { return g >= n; })) {
            continue;
        }
        Totals t;
        for (const uint32_t g : gpus) {
            t.add(perGpu[g]);
        }
        fill(summary.add_jobs(), job.name, static_cast<uint32_t>(gpus.size()), t);
    }

    std::vector<uint32_t> failing;
    for (uint32_t g = 0; g < n; ++g) {
        if (perGpu[g].failures > 0) {
            failing.push_back(g);
        }
    }
    const size_t top = std::min<size_t>(failing.size(), topOffenders);
    std::partial_sort(
        failing.begin(), failing.begin() + static_cast<ptrdiff_t>(top), failing.end(), [&](uint32_t a, uint32_t b) {
            return perGpu[a].failures != perGpu[b].failures ? perGpu[a].failures > perGpu[b].failures : a < b;
        });
    for (size_t i = 0; i < top; ++i) {
        auto *o = summary.add_offenders();
        o->set_gpu(failing[i]);
        o->set_failures(perGpu[failing[i]].failures);
    }
    // The repeat offenders as the newest frame of the range scored them (frames from before the backend started
    // were not scored and have none).
    if (!frames.empty() && frames.back()->offenders) {
        const RepeatOffenders &repeat = *frames.back()->offenders;
        for (const auto &e : repeat.top) {
            if (summary.repeat_offenders_size() >= static_cast<int>(topOffenders)) {
                break;
            }
            if (e.gpu >= n) {
                continue;
            }
            auto *o = summary.add_repeat_offenders();
            o->set_gpu(e.gpu);
            o->set_score(e.score);
            o->set_xids(e.xids);
            o->set_serious_xids(e.seriousXids);
            o->set_ecc_double_bit(e.eccDoubleBit);
            o->set_remapped_rows(e.remappedRows);
            o->set_remapped_rows_correctable(e.remappedRowsCorrectable);
            o->set_pcie_replays(e.pcieReplays);
            o->set_throttle_hours(e.throttleHours);
        }
        summary.set_top_percent_failure_share(repeat.topPercentFailureShare);
    }
    return summary;
}

} // namespace fleetscope::backend
