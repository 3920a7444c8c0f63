// SPDX-License-Identifier: Apache-2.0
// The Prometheus source's Slurm jobs: the Slurm exporter's node-to-job series asked each poll and joined onto the
// layout's nodes (SlurmJobs), by hostname or by a pod name the node's GPU series carry.
#include "prometheus/prometheussource.h"

#include <fmt/format.h>

namespace fleetscope::backend {

void PrometheusSource::noteAliases(const std::vector<PromSample> &samples)
{
    const auto &shape = m_topology.shape();
    for (const auto &s : samples) {
        if (s.pod.empty()) {
            continue;
        }
        if (const int64_t g = m_topology.indexOf(s.hostname, s.gpu); g >= 0) {
            m_slurm.noteAlias(shape.nodeOfGpu[static_cast<size_t>(g)], s.pod, shape.nodes.size());
        }
    }
}

bool PrometheusSource::pollSlurm(int64_t evalMs, int64_t sampleMs, std::chrono::steady_clock::time_point deadline)
{
    const auto left
        = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const std::string promql = SlurmJobs::query();
    std::string problem;
    PrometheusHttp::Response response;
    if (left.count() <= 0) {
        problem = "no time left of the poll's time-out";
    } else if (const std::string target = fmt::format("/api/v1/query?query={}&time={}.{:03}",
                   PrometheusHttp::encode(promql), evalMs / 1000, evalMs % 1000);
               !m_http.get(target, left, &response, &problem)) {
    } else if (response.status != 200) {
        problem = fmt::format("HTTP {}: {}", response.status, printableExcerpt(response.body));
    } else {
        m_report.answerBytes += response.body.size();
        const auto &shape = m_topology.shape();
        m_slurm.begin();
        SlurmJobs::Series series;
        const bool parsed = m_json.parseVectorLabels(
            &response.body, SlurmJobs::maxSeries(shape.nodes.size()),
            [&](std::string_view name, std::string_view value) { SlurmJobs::readLabel(name, value, &series); },
            [&](double) {
                m_slurm.add(series);
                series = {};
            },
            &problem);
        if (parsed) {
            m_slurm.finish(
                sampleMs, shape, [&](std::string_view host) { return m_topology.nodeOf(host); }, &m_events);
            const auto &report = m_slurm.report();
            std::string dropped;
            if (report.unknownNodes > 0) {
                dropped += fmt::format("; {} node names are neither a host nor a pod of the fleet (e.g. {})",
                    report.unknownNodes, report.unknownExample);
            }
            if (report.badSeries > 0) {
                dropped += fmt::format("; {} series refused (e.g. {})", report.badSeries, report.badExample);
            }
            if (report.droppedJobs > 0) {
                dropped += fmt::format("; {} jobs past the bound of {}", report.droppedJobs, SlurmJobs::maxJobs);
            }
            if (report.badStartTimes > 0) {
                dropped += fmt::format("; {} start times unreadable or out of range", report.badStartTimes);
            }
            // Said when it changes (by kind, not by count), not once a poll.
            const std::string kinds = fmt::format("{}{}{}{}", report.unknownNodes > 0, report.badSeries > 0,
                report.droppedJobs > 0, report.badStartTimes > 0);
            if (kinds != m_loggedSlurm) {
                if (!dropped.empty()) {
                    log(fmt::format("prometheus: Slurm jobs: {} running{}", report.jobs, dropped));
                }
                m_loggedSlurm = kinds;
            }
            return true;
        }
    }
    if (problem != m_loggedSlurm) {
        log(fmt::format(
            "prometheus: the Slurm jobs query '{}' failed ({}); the Slurm jobs stay as they were", promql, problem));
        m_loggedSlurm = problem;
    }
    return false;
}

} // namespace fleetscope::backend
