// SPDX-License-Identifier: Apache-2.0
// The console's decoding of a job's account: GetJob's JobReport (decodeJobReport) against a fleet, and GetSummary's
// jobs' goodput and losses (decodeSummary). The first byte picks the fleet (bits 0-1: 8, 64, 8,192 or 1,048,576 GPUs
// in nodes of 8, with a few shared domains) and, bit 2, a Summary rather than a JobReport; the rest is the message.
// A report kept must index inside the fleet and the job (a GPU, node or domain past them, a straggler on a GPU that
// is not the job's or listed twice: trap), hold no list past JobReport's bounds, no figure that is not finite or
// outside its range, no time that is not sane, spans and band points in order, texts within their cuts and a bounded
// list of problems; a report refused says why. A summary's jobs' figures hold together the same way, its losses
// within maxSummaryLosses and its fleet rollup. An input of a few kB that makes the decoder allocate past libFuzzer's
// memory limit (a claimed count reserved before it is checked) is a finding.
#include "client/answerdecode.h"
#include "client/jobdecode.h"
#include "client/wiretext.h"
#include "fuzz/fuzzinput.h"
#include "model/viewstate.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace {

using namespace fleetscope;

constexpr std::array<uint32_t, 4> fleetGpus = { 8, 64, 8192, 1U << 20U };

// A fleet as the decoder reads it: its GPU count, nodes of 8 GPUs and a leaf switch for every 256 GPUs under a spine.
TopologyPtr topologyOf(uint32_t gpus)
{
    auto t = std::make_shared<Topology>();
    t->generation = 7;
    t->gpuCount = gpus;
    t->nodeOfGpu.resize(gpus);
    for (uint32_t n = 0; n < gpus / 8; ++n) {
        t->nodes.push_back({ QStringLiteral("n%1").arg(n), {}, {}, {}, 0, n * 8, 8 });
        std::fill_n(t->nodeOfGpu.begin() + n * 8, 8, n);
    }
    t->domains.push_back({ DomainKind::SpinePlane, QStringLiteral("spine"), -1, 0 });
    for (uint32_t leaf = 0; leaf < (gpus + 255) / 256; ++leaf) {
        t->domains.push_back({ DomainKind::LeafSwitch, QStringLiteral("leaf%1").arg(leaf), 0, 0 });
    }
    return t;
}

// Made once, before the first input: a million GPUs' fleet takes a while under the sanitizers.
std::array<TopologyPtr, 4> g_topologies;

bool displayable(const QString &text, int limit)
{
    return text.size() <= limit
        && std::none_of(text.begin(), text.end(), [](QChar c) { return c.category() == QChar::Other_Control; });
}

bool checkLoss(const GoodputLoss &l, uint64_t gpus, uint64_t nodes, uint64_t domains, double gpuHours)
{
    return std::isfinite(l.gpuHours) && l.gpuHours >= 0 && l.gpuHours <= gpuHours && l.gpu >= -1
        && l.gpu < static_cast<int64_t>(gpus) && l.node >= -1 && l.node < static_cast<int64_t>(nodes) && l.domain >= -1
        && l.domain < static_cast<int64_t>(domains) && displayable(l.what, maxJobReasonText);
}

bool share(double v)
{
    return v >= 0 && v <= 1;
}

void report(const uint8_t *data, size_t size, const Topology &topology)
{
    pb::JobReport answer;
    if (!answer.ParseFromArray(data, static_cast<int>(size))) {
        return;
    }
    QString failure;
    const auto r = decodeJobReport(answer, topology, &failure);
    if (!r) {
        if (failure.isEmpty()) {
            __builtin_trap(); // refused without a reason
        }
        return;
    }
    const uint32_t n = topology.gpuCount;
    const auto &gpus = r->job.gpus;
    if (r->topologyGeneration != topology.generation || !isSaneJobTime(r->asOfMs) || !isSaneJobTime(r->watchedFromMs)
        || r->asOfMs < r->watchedFromMs || !isSaneJobTime(r->job.startTimeMs) || !isSaneJobTime(r->job.endTimeMs)
        || !isSaneJobTime(r->job.lastCheckpointMs) || r->losses.size() > JobReport::maxLosses
        || r->stragglers.size() > JobReport::maxStragglers || r->phases.size() > JobReport::maxPhaseSpans
        || r->band.size() > JobReport::maxBandPoints || r->problems.size() > maxJobReportProblems + 1) {
        __builtin_trap();
    }
    size_t sum = 0;
    for (size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i] >= n || (i > 0 && gpus[i] <= gpus[i - 1])) {
            __builtin_trap(); // past the fleet, or not ascending
        }
    }
    if (!std::isfinite(r->gpuHours) || r->gpuHours < 0 || !std::isfinite(r->productiveGpuHours)
        || r->productiveGpuHours < 0 || r->productiveGpuHours > r->gpuHours * (1 + 1e-9) + 1e-9 || !share(r->goodput)
        || !share(r->allReduceShare) || !std::isfinite(r->stepSeconds) || r->stepSeconds < 0
        || !std::isfinite(r->checkpointLimitSeconds) || r->checkpointLimitSeconds < 0
        || !(r->job.goodput == -1 || share(r->job.goodput)) || r->job.stragglerCount > gpus.size()) {
        __builtin_trap(); // a figure not finite or out of its range
    }
    for (const auto &l : r->losses) {
        if (!checkLoss(l, n, topology.nodes.size(), topology.domains.size(), r->gpuHours * (1 + 1e-9) + 1e-9)) {
            __builtin_trap();
        }
        sum += l.gpu >= 0 ? topology.nodeOf(static_cast<uint32_t>(l.gpu)).firstGpu : 0;
        sum += l.domain >= 0 ? static_cast<size_t>(topology.domainName(static_cast<uint32_t>(l.domain)).size()) : 0;
    }
    for (size_t i = 0; i < r->stragglers.size(); ++i) {
        const Straggler &s = r->stragglers[i];
        if (!std::binary_search(gpus.begin(), gpus.end(), s.gpu) || !std::isfinite(s.score) || s.score < 0
            || !std::isfinite(s.value) || !std::isfinite(s.jobMedian) || !share(s.holdBack) || !isSaneJobTime(s.sinceMs)
            || !std::isfinite(s.gpuHoursLost) || s.gpuHoursLost < 0
            || (!s.metricId.isEmpty() && !ViewState::isIdentifier(s.metricId))
            || !displayable(s.reason, maxJobReasonText)) {
            __builtin_trap();
        }
        for (size_t j = 0; j < i; ++j) {
            if (r->stragglers[j].gpu == s.gpu) {
                __builtin_trap(); // one GPU twice
            }
        }
        sum += topology.nodeOf(s.gpu).firstGpu;
    }
    for (size_t i = 0; i < r->phases.size(); ++i) {
        const JobPhaseSpan &p = r->phases[i];
        if (!isSaneJobTime(p.fromMs) || !isSaneJobTime(p.toMs) || p.toMs < p.fromMs
            || (i > 0 && p.fromMs < r->phases[i - 1].toMs) || !displayable(p.why, maxJobReasonText)) {
            __builtin_trap(); // reversed, overlapping or out of order
        }
    }
    for (size_t i = 0; i < r->band.size(); ++i) {
        const JobBandPoint &b = r->band[i];
        if (!isSaneJobTime(b.timeMs) || (i > 0 && b.timeMs <= r->band[i - 1].timeMs) || !(b.p10 >= 0)
            || !(b.p10 <= b.median) || !(b.median <= b.p90) || !(b.p90 <= 100) || b.reporting > n) {
            __builtin_trap();
        }
    }
    fuzz::sink = sum + static_cast<size_t>(r->problems.size());
}

void summary(const uint8_t *data, size_t size)
{
    pb::Summary answer;
    if (!answer.ParseFromArray(data, static_cast<int>(size))) {
        return;
    }
    QString failure;
    const auto s = decodeSummary(answer, &failure);
    if (!s) {
        __builtin_trap();
    }
    if (!failure.isEmpty()) {
        return; // nothing of it is shown
    }
    const uint32_t n = s->fleet.gpuCount;
    if (s->jobsAccounted == 0) {
        if (s->goodput != 0 || s->jobGpuHours != 0 || s->productiveGpuHours != 0 || !s->losses.empty()) {
            __builtin_trap(); // figures kept that none were said for
        }
        return;
    }
    // Not bounded by the fleet's GPUs x the range: jobs may share GPUs (decodeJobsAccount).
    if (!share(s->goodput) || !std::isfinite(s->jobGpuHours) || s->jobGpuHours < 0 || !(s->productiveGpuHours >= 0)
        || s->productiveGpuHours > s->jobGpuHours * (1 + 1e-9) + 1e-9 || s->losses.size() > maxSummaryLosses) {
        __builtin_trap();
    }
    for (const auto &l : s->losses) {
        if (!checkLoss(l, n, n, maxDomains(n), s->jobGpuHours * (1 + 1e-9) + 1e-9) || l.jobId != 0) {
            __builtin_trap();
        }
    }
    fuzz::sink = s->losses.size() + static_cast<size_t>(s->problems.size());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // A string field that is not UTF-8 fails the parse, as on the wire, without protobuf's line on stderr each time.
    google::protobuf::SetLogHandler(nullptr);
    for (size_t i = 0; i < fleetGpus.size(); ++i) {
        g_topologies[i] = topologyOf(fleetGpus[i]);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if ((data[0] & 4U) != 0) {
        summary(data + 1, size - 1);
    } else {
        report(data + 1, size - 1, *g_topologies[data[0] & 3U]);
    }
    return 0;
}
