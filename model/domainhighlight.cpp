// SPDX-License-Identifier: Apache-2.0
#include "model/domainhighlight.h"

#include <QLocale>

namespace fleetscope {

QString DomainHighlight::text() const
{
    const QString gpus
        = gpuCount == 1 ? QStringLiteral("1 GPU") : QLocale().toString(gpuCount) + QStringLiteral(" GPUs");
    return name + QStringLiteral(": ") + gpus + QStringLiteral("; ") + QLocale().toString(hitCount)
        + QStringLiteral(" hit");
}

std::optional<DomainHighlight> highlightDomain(
    const Topology &topology, int64_t domain, const std::vector<uint32_t> &hitGpus)
{
    if (domain < 0 || static_cast<uint64_t>(domain) >= topology.domains.size()) {
        return std::nullopt;
    }
    DomainHighlight out;
    out.domain = static_cast<uint32_t>(domain);
    out.runs = topology.gpuRunsOfDomain(out.domain, Topology::PowerBy::Cords); // the GPUs it powers, serves, cools
    if (out.runs.empty()) {
        return std::nullopt;
    }
    out.name = topology.domainName(out.domain);
    for (const auto &[first, count] : out.runs) {
        out.gpuCount += count;
    }
    // Both ascending: one walk along the runs.
    auto run = out.runs.begin();
    for (const uint32_t gpu : hitGpus) {
        while (run != out.runs.end() && uint64_t { run->first } + run->second <= gpu) {
            ++run;
        }
        if (run == out.runs.end()) {
            break;
        }
        if (gpu >= run->first) {
            ++out.hitCount;
        }
    }
    return out;
}

} // namespace fleetscope
