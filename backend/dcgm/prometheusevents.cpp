// SPDX-License-Identifier: Apache-2.0
#include "dcgm/prometheusevents.h"

#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

FleetEvent about(const FleetShape &shape, uint32_t gpu, uint64_t job)
{
    FleetEvent e;
    e.gpu = gpu;
    e.node = shape.nodeOfGpu[gpu];
    e.jobId = job;
    return e;
}

std::string where(const FleetShape &shape, uint32_t gpu)
{
    const auto &node = shape.nodes[shape.nodeOfGpu[gpu]];
    return fmt::format("{} GPU {}", node.hostname, gpu - node.firstGpu);
}

} // namespace

void PrometheusEvents::xidChanged(
    const FleetShape &shape, uint32_t gpu, double before, double after, uint64_t job, std::vector<FleetEvent> *events)
{
    if (!std::isfinite(after) || after <= 0 || after > 1e9 || after == before) {
        return;
    }
    const auto xid = static_cast<uint32_t>(std::llround(after));
    auto e = about(shape, gpu, job);
    e.kind = FleetEvent::Kind::Xid;
    e.severity = fleetscope::xidSerious(xid) ? FleetEvent::Severity::Critical : FleetEvent::Severity::Warning;
    e.xid = xid;
    e.text = fmt::format("XID {} on {}: {}", xid, where(shape, gpu), xidDescription(xid));
    events->push_back(std::move(e));
}

void PrometheusEvents::dbeIncreased(
    const FleetShape &shape, uint32_t gpu, double increase, uint64_t job, std::vector<FleetEvent> *events)
{
    if (!std::isfinite(increase) || increase <= 0) {
        return;
    }
    auto e = about(shape, gpu, job);
    e.kind = FleetEvent::Kind::EccDoubleBit;
    e.severity = FleetEvent::Severity::Critical;
    e.xid = 48; // the XID the driver logs for a double-bit error
    const auto count = std::llround(increase);
    e.text = count == 1 ? fmt::format("double-bit ECC error on {}", where(shape, gpu))
                        : fmt::format("{} double-bit ECC errors on {}", count, where(shape, gpu));
    events->push_back(std::move(e));
}

void PrometheusEvents::reasonsChanged(
    const FleetShape &shape, uint32_t gpu, double before, double after, uint64_t job, std::vector<FleetEvent> *events)
{
    auto bits = [](double v) { return std::isfinite(v) && v >= 0 && v < 1e18 ? static_cast<uint64_t>(v) : 0U; };
    const uint64_t was = bits(before);
    const uint64_t now = bits(after);
    auto edge = [&](uint64_t mask, FleetEvent::Kind start, FleetEvent::Kind end, const char *what) {
        const bool on = (now & mask) != 0;
        if (on == ((was & mask) != 0)) {
            return;
        }
        auto e = about(shape, gpu, job);
        e.kind = on ? start : end;
        e.severity = on ? FleetEvent::Severity::Warning : FleetEvent::Severity::Info;
        e.text = fmt::format("{} {} {} throttling (clock event reasons {:#x})", where(shape, gpu),
            on ? "started" : "stopped", what, now);
        events->push_back(std::move(e));
    };
    edge(thermalReasons, FleetEvent::Kind::ThermalThrottleStart, FleetEvent::Kind::ThermalThrottleEnd, "thermal");
    edge(powerReasons, FleetEvent::Kind::PowerThrottleStart, FleetEvent::Kind::PowerThrottleEnd, "power");
}

void PrometheusEvents::update(const std::vector<double> &xid, const std::vector<double> &dbe,
    const std::vector<double> &reasons, const FleetShape &shape, const std::vector<uint64_t> &jobOfGpu,
    std::vector<FleetEvent> *events)
{
    const size_t n = shape.gpuCount;
    if (m_first) {
        m_xid.assign(n, std::nan(""));
        m_dbe.assign(n, std::nan(""));
        m_reasons.assign(n, std::nan(""));
    }
    for (uint32_t g = 0; g < n; ++g) {
        const uint64_t job = g < jobOfGpu.size() ? jobOfGpu[g] : 0;
        if (std::isfinite(xid[g])) {
            if (!m_first && std::isfinite(m_xid[g])) {
                xidChanged(shape, g, m_xid[g], xid[g], job, events);
            }
            m_xid[g] = xid[g];
        }
        if (std::isfinite(dbe[g])) {
            if (!m_first && std::isfinite(m_dbe[g])) {
                dbeIncreased(shape, g, dbe[g] - m_dbe[g], job, events);
            }
            m_dbe[g] = dbe[g];
        }
        if (std::isfinite(reasons[g])) {
            if (!m_first && std::isfinite(m_reasons[g])) {
                reasonsChanged(shape, g, m_reasons[g], reasons[g], job, events);
            }
            m_reasons[g] = reasons[g];
        }
    }
    m_first = false;
}

} // namespace fleetscope::backend
