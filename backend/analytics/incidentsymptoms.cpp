// SPDX-License-Identifier: Apache-2.0
// The incident folder's reading of a frame: every GPU's symptoms from its planes and the events so far, and their
// onsets.
#include "analytics/incidentfolder.h"

#include "common/health.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope::backend {

namespace {
// DCGM's clock-event reasons (ThrottleReasons): software and hardware thermal slowdown; the software power cap and
// the hardware power brake.
constexpr uint32_t reasonsThermal = 0x20 | 0x40;
constexpr uint32_t reasonsPower = 0x4 | 0x80;

const float *planeOf(const Frame &frame, MetricId id, uint32_t gpus)
{
    const auto &plane = frame.plane(id);
    return plane.size() == gpus ? plane.data() : nullptr;
}
} // namespace

void IncidentFolder::readEvents(const std::vector<FleetEvent> &events, size_t count, double now)
{
    const auto remember = [&](uint32_t key, const std::string &text) {
        if (m_textOf.size() < m_options.maxOpen) {
            m_textOf.emplace(key, text);
        }
    };
    for (size_t i = 0; i < count; ++i) {
        const FleetEvent &e = events[i];
        const bool gpuValid = e.gpu >= 0 && e.gpu < static_cast<int64_t>(m_gpus);
        const bool nodeValid = e.node >= 0 && e.node < static_cast<int64_t>(m_nodeDown.size());
        const auto g = static_cast<uint32_t>(gpuValid ? e.gpu : 0);
        const auto setBit = [&](uint16_t bit, bool on) {
            if (gpuValid) {
                m_eventBits[g] = static_cast<uint16_t>(on ? (m_eventBits[g] | bit) : (m_eventBits[g] & ~bit));
            }
        };
        switch (e.kind) {
        case EventKind::NodeDown:
        case EventKind::NodeUp:
            if (nodeValid) {
                m_nodeDown[static_cast<size_t>(e.node)] = e.kind == EventKind::NodeDown ? 1 : 0;
                if (e.kind == EventKind::NodeDown) {
                    remember(nodeKey | static_cast<uint32_t>(e.node), e.text);
                }
            }
            break;
        case EventKind::ThermalThrottleStart:
        case EventKind::ThermalThrottleEnd:
            setBit(Thermal, e.kind == EventKind::ThermalThrottleStart);
            break;
        case EventKind::PowerThrottleStart:
        case EventKind::PowerThrottleEnd:
            setBit(PowerBrake, e.kind == EventKind::PowerThrottleStart);
            break;
        case EventKind::AnomalyStart:
        case EventKind::AnomalyEnd:
            setBit(Anomalous, e.kind == EventKind::AnomalyStart);
            break;
        case EventKind::Xid:
        case EventKind::EccDoubleBit:
            if (!gpuValid || (e.kind == EventKind::Xid && e.severity != EventSeverity::Critical)) {
                break;
            }
            remember(g, e.text);
            if ((m_eventBits[g] & GpuError) != 0) {
                for (auto &entry : m_errorUntil) {
                    if (entry.first == g) {
                        entry.second = now + m_options.errorSymptomSeconds;
                    }
                }
            } else if (m_errorUntil.size() < m_options.maxPending) {
                setBit(GpuError, true);
                m_errorUntil.emplace_back(g, now + m_options.errorSymptomSeconds);
            } else {
                ++m_dropped;
            }
            break;
        default:
            break;
        }
    }
    const auto expired = std::remove_if(m_errorUntil.begin(), m_errorUntil.end(), [&](const auto &entry) {
        if (entry.second > now) {
            return false;
        }
        m_eventBits[entry.first] = static_cast<uint16_t>(m_eventBits[entry.first] & ~GpuError);
        return true;
    });
    m_errorUntil.erase(expired, m_errorUntil.end());
}

void IncidentFolder::scan(const Frame &frame, double now)
{
    m_prev.swap(m_cur);
    m_onsets.clear();
    if (m_epoch < 0) {
        m_epoch = now;
    }
    const float *throttle = planeOf(frame, MetricId::ThrottleReasons, m_gpus);
    const float *link = planeOf(frame, MetricId::RailLinkState, m_gpus);
    const float *downs = planeOf(frame, MetricId::RailLinkDowns, m_gpus);
    const float *symbols = planeOf(frame, MetricId::RailSymbolErrors, m_gpus);
    const float *leak = planeOf(frame, MetricId::LeakDetected, m_gpus);
    const float *supply = planeOf(frame, MetricId::CoolantSupplyTemp, m_gpus);
    const uint8_t *healthBytes = frame.health.size() == m_gpus ? frame.health.data() : nullptr;
    if (supply != nullptr && m_coolantBase.empty()) {
        m_coolantBase.assign(m_gpus, std::numeric_limits<float>::quiet_NaN());
    }
    m_supply = supply;
    const double dt = m_lastNow < 0 ? 0.0 : std::clamp(now - m_lastNow, 0.0, m_options.coolantLearnSeconds);
    const auto learn = static_cast<float>(dt / m_options.coolantLearnSeconds);
    const float linkDowns = m_options.linkDownsPerWindow;
    const float symbolErrors = m_options.symbolErrorsPerWindow;

    for (uint32_t g = 0; g < m_gpus; ++g) {
        const uint16_t fromEvents = m_eventBits[g];
        auto s = static_cast<uint16_t>(fromEvents & (Anomalous | GpuError));
        if (m_nodeDown[m_shape.nodeOfGpu[g]] != 0
            || (healthBytes != nullptr && health::stateOf(healthBytes[g]) == health::Offline)) {
            s |= Down;
        }
        const float reasons = throttle != nullptr ? throttle[g] : std::numeric_limits<float>::quiet_NaN();
        if (std::isnan(reasons)) {
            s |= fromEvents & (Thermal | PowerBrake);
        } else if (reasons > 0) {
            const auto r = static_cast<uint32_t>(reasons);
            s |= (r & reasonsThermal) != 0 ? Thermal : 0;
            s |= (r & reasonsPower) != 0 ? PowerBrake : 0;
        }
        if (link != nullptr && link[g] < 0.5F) {
            s |= LinkDown;
        }
        if ((downs != nullptr && downs[g] >= linkDowns) || (symbols != nullptr && symbols[g] >= symbolErrors)) {
            s |= LinkErrors;
        }
        if (leak != nullptr && leak[g] >= 0.5F) {
            s |= Leak;
        }
        if (supply != nullptr && !std::isnan(supply[g])) {
            float &base = m_coolantBase[g];
            if (std::isnan(base)) {
                base = supply[g];
            } else if (supply[g] - base >= m_options.coolantRiseC) {
                s |= CoolantWarm; // the average holds still while it is warm
            } else {
                base += (supply[g] - base) * learn;
            }
        }
        if ((s & Down) != 0) {
            // A node that is down shows no throttling or link of its own: those are its being down.
            s &= Down | Leak | GpuError | Anomalous;
        }
        m_cur[g] = s;
        const auto onset = static_cast<uint16_t>(s & ~m_prev[g]);
        if (onset != 0) {
            m_onsets.push_back(Pending { g, onset, now });
            if ((onset & Thermal) != 0) {
                m_heatSince[g] = static_cast<float>(now - m_epoch);
            }
        }
    }
}

} // namespace fleetscope::backend
