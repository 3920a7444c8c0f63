// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/pushedslurm.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

PushedSlurm::PushedSlurm(const FleetShape &shape)
    : m_shape(shape)
{
    m_nodeOfHost.reserve(shape.nodes.size());
    for (uint32_t k = 0; k < shape.nodes.size(); ++k) {
        m_nodeOfHost.emplace(shape.nodes[k].hostname, k);
    }
}

void PushedSlurm::read(const WriteRequestReader &reader, std::vector<Pushed> *batch)
{
    if (reader.samples().empty()) {
        return;
    }
    auto &pushed = batch->emplace_back();
    for (const auto &label : reader.labels()) {
        SlurmJobs::readLabel(label.name, label.value, &pushed.series);
    }
    for (const auto &sample : reader.samples()) {
        if (sample.timestampMs >= pushed.timeMs) {
            pushed.timeMs = sample.timestampMs;
            pushed.stale = std::isnan(sample.value);
        }
    }
}

void PushedSlurm::add(std::vector<Pushed> batch, int64_t receivedMs)
{
    const size_t bound = SlurmJobs::maxSeries(m_shape.nodes.size());
    std::lock_guard lock(m_mutex);
    m_everPushed = m_everPushed || !batch.empty();
    for (auto &pushed : batch) {
        const auto &s = pushed.series;
        std::string key;
        key.reserve(2 + s.jobId.size() + s.nodeName.size());
        key.push_back(s.kind == SlurmJobs::Series::Kind::NodeJob ? 'n' : 'i');
        key.append(s.jobId).push_back('\x1f');
        key.append(s.nodeName);
        pushed.timeMs = std::min(pushed.timeMs, receivedMs + maxSkewMs);
        const auto it = m_held.find(key);
        if (pushed.stale) {
            // Kept as the series' end, so that a retry of an older request (its marker or its sample) changes nothing.
            if (it != m_held.end() && pushed.timeMs >= it->second.timeMs) {
                it->second.stale = true;
                it->second.timeMs = pushed.timeMs;
            }
            continue;
        }
        if (it == m_held.end()) {
            if (m_held.size() >= bound) {
                ++m_dropped;
                continue;
            }
            m_held.emplace(std::move(key), std::move(pushed));
        } else if (pushed.timeMs > it->second.timeMs || (pushed.timeMs == it->second.timeMs && !it->second.stale)) {
            it->second = std::move(pushed); // a sender's retry of an older request does not go back
        }
    }
}

void PushedSlurm::join(int64_t atMs, SlurmJobs *jobs, std::vector<FleetEvent> *events)
{
    std::vector<SlurmJobs::Series> series;
    {
        std::lock_guard lock(m_mutex);
        if (!m_everPushed) {
            return;
        }
        for (auto it = m_held.begin(); it != m_held.end();) {
            if (it->second.timeMs < atMs - lookbackMs) {
                it = m_held.erase(it);
            } else {
                if (!it->second.stale) {
                    series.push_back(it->second.series);
                }
                ++it;
            }
        }
    }
    jobs->begin();
    for (const auto &s : series) {
        jobs->add(s);
    }
    jobs->finish(
        atMs, m_shape,
        [this](std::string_view host) {
            const auto it = m_nodeOfHost.find(host);
            return it == m_nodeOfHost.end() ? int64_t { -1 } : static_cast<int64_t>(it->second);
        },
        events);
}

size_t PushedSlurm::held() const
{
    std::lock_guard lock(m_mutex);
    return static_cast<size_t>(
        std::count_if(m_held.begin(), m_held.end(), [](const auto &entry) { return !entry.second.stale; }));
}

uint64_t PushedSlurm::dropped() const
{
    std::lock_guard lock(m_mutex);
    return m_dropped;
}

} // namespace fleetscope::backend
