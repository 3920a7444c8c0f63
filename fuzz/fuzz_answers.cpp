// SPDX-License-Identifier: Apache-2.0
// The console's decoders of the backend's unary and history answers, against a topology made by the backend's
// encoder: QueryRange parts (rawRangePart, assembleRange), StreamEvents events (decodeEvent), ListJobs (decodeJobs)
// GetSummary (decodeSummary) and ListMetrics (decodeMetricCatalogue). The first byte picks the answer (bits 0-1, or
// bit 5 for the catalogue), the topology (bits 2-3: 8, 64 or 200 HGX GPUs, or 144 in NVL72 racks; with bit 6, 8,192,
// 65,536 or 131,072 HGX GPUs, or 9,216 in NVL72 racks, where runs of GPUs multiply: 260,000 ended jobs each run over
// 8,192 GPUs once expanded to billions of entries; not a million, where a list at its bound is 8 million entries, 32
// MB an input, and the fuzzer ran at 300 inputs a second) and, bit 4, none (a client not yet given one: events and
// range columns checked for sign only, an incident's runs against the most GPUs a fleet may have). Then messages with
// 16-bit length prefixes (fuzzinput.h): a QueryRangeRequest and its QueryRangePart answer, Events, one
// ListJobsResponse, one Summary or one ListMetricsResponse. A catalogue entry kept with an id a view cannot carry, an
// id seen before, a range with no finite span, or a name, unit or field past its limit or holding a control character:
// trap. Whatever is kept must index inside the topology: a GPU or node past it, a series whose values are not rows x
// columns or whose times go backwards, a GPU held by two running jobs, a job list of more GPU entries than
// maxJobGpuEntries, an incident's run out of order or past the fleet, its domain past the table, its lists past their
// bounds, trap. A summary is bounded by its own fleet rollup (decodeSummary is given no topology; its views check the
// GPUs against theirs): a GPU past that, a NaN or negative figure, offenders' failures over the total, trap.
#include "client/answerdecode.h"
#include "client/historydecode.h"
#include "client/topologydecode.h"
#include "client/wiretext.h"
#include "fuzz/fuzzinput.h"
#include "model/viewstate.h"
#include "service/frameencoder.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <QSet>
#include <QStringList>

#include <algorithm>
#include <array>
#include <cmath>

namespace {

using namespace fleetscope;

TopologyPtr topologyOf(uint32_t gpus, backend::Hardware hardware)
{
    QString error;
    auto topology
        = decodeTopology(backend::encodeTopology(backend::FleetShape::forGpuCount(gpus, 1, hardware), 7), &error);
    if (!topology || topology->gpuCount != gpus) {
        __builtin_trap();
    }
    return topology;
}

// Made once, before the first input: a million GPUs' topology takes seconds under the sanitizers, past libFuzzer's
// time limit for one input.
std::array<TopologyPtr, 8> g_topologies;

void range(const std::vector<std::string_view> &messages, const Topology *topology)
{
    if (messages.empty()) {
        return;
    }
    pb::QueryRangeRequest query;
    if (!query.ParseFromArray(messages[0].data(), static_cast<int>(messages[0].size()))) {
        return;
    }
    RangeRequest request;
    for (const auto &m : query.metric_ids()) {
        request.metricIds << QString::fromStdString(m);
    }
    request.gpus.assign(query.gpus().begin(), query.gpus().end());
    request.fromMs = query.from_ms();
    request.toMs = query.to_ms();
    request.stepMs = query.step_ms();
    std::vector<RawRangePart> raw;
    for (size_t i = 1; i < messages.size(); ++i) {
        pb::QueryRangePart part;
        if (!part.ParseFromArray(messages[i].data(), static_cast<int>(messages[i].size()))) {
            return;
        }
        raw.push_back(rawRangePart(&part));
    }
    const uint32_t gpuCount = topology ? topology->gpuCount : 0;
    QStringList problems;
    const auto series = assembleRange(raw, request, gpuCount, &problems);
    size_t sum = 0;
    for (size_t s = 0; s < series.size(); ++s) {
        const RangeSeries &r = series[s];
        if (r.gpus != request.gpus || r.sampleTimes.size() != r.rows() || r.values.size() != r.rows() * r.columns()) {
            __builtin_trap(); // columns not those asked for, or values not rows x columns
        }
        if (!request.metricIds.isEmpty() && !request.metricIds.contains(r.metricId)) {
            __builtin_trap();
        }
        for (size_t t = 0; t < s; ++t) {
            if (series[t].metricId == r.metricId) {
                __builtin_trap(); // one metric twice
            }
        }
        for (const uint32_t g : r.gpus) {
            if (topology && g >= gpuCount) {
                __builtin_trap();
            }
            sum += topology ? topology->nodeOf(g).firstGpu : g;
        }
        for (size_t row = 1; row < r.rows(); ++row) {
            if (r.times[row] <= r.times[row - 1]) {
                __builtin_trap();
            }
        }
        for (size_t row = 0; row < r.rows(); ++row) {
            for (size_t c = 0; c < r.columns(); ++c) {
                sum += std::isnan(r.at(row, c)) ? 1 : 0;
            }
        }
    }
    fuzz::sink = sum + static_cast<size_t>(problems.size());
}

// An incident kept only on an incident event, whole, its runs ascending and apart within the fleet (or the most GPUs
// a fleet may have), its lists within their bounds and counts, its domain one of the topology's and what a console
// asks of it (its name, its GPUs) answered.
size_t checkIncident(const FleetEvent &event, const Topology *topology)
{
    const bool incidentKind = event.kind == EventKind::IncidentOpen || event.kind == EventKind::IncidentUpdate
        || event.kind == EventKind::IncidentClose;
    if (incidentKind != (event.incident != nullptr)) {
        __builtin_trap(); // an incident event without its incident, or another event with one
    }
    if (!event.incident) {
        return 0;
    }
    const Incident &in = *event.incident;
    const uint64_t gpus = topology ? topology->gpuCount : maxGpus;
    if (in.gpuRuns.size() > maxIncidentRuns || in.jobs.size() > maxIncidentJobs || in.jobs.size() > in.jobCount
        || in.gpuCount > gpus || in.cause.size() > maxNameText || in.evidence.size() > maxMessageText
        || in.domain < -1) {
        __builtin_trap();
    }
    uint64_t next = 0;
    uint64_t listed = 0;
    for (const auto &[first, count] : in.gpuRuns) {
        if (count == 0 || first < next || uint64_t { first } + count > gpus) {
            __builtin_trap(); // runs out of order, overlapping or past the fleet
        }
        next = uint64_t { first } + count;
        listed += count;
    }
    if (listed > in.gpuCount) {
        __builtin_trap();
    }
    size_t sum = listed;
    if (topology && in.domain >= 0) {
        if (static_cast<uint64_t>(in.domain) >= topology->domains.size()) {
            __builtin_trap(); // a domain past the table kept
        }
        sum += static_cast<size_t>(topology->domainName(static_cast<uint32_t>(in.domain)).size());
        sum += topology->gpuRunsOfDomain(static_cast<uint32_t>(in.domain)).size();
    }
    return sum;
}

void events(const std::vector<std::string_view> &messages, const Topology *topology)
{
    size_t sum = 0;
    for (const auto bytes : messages) {
        pb::Event message;
        if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
            return;
        }
        QString problem;
        const auto event = decodeEvent(message, topology, &problem);
        if (!event) {
            if (problem.isEmpty()) {
                __builtin_trap(); // dropped without a reason
            }
            continue;
        }
        const auto kind = static_cast<int>(event->kind);
        const auto severity = static_cast<int>(event->severity);
        if (kind < 0 || kind >= eventKindCount || severity < 0 || severity > static_cast<int>(EventSeverity::Critical)
            || event->gpu < -1 || event->node < -1 || event->metric.size() > 64) {
            __builtin_trap();
        }
        if (topology) {
            if (event->gpu >= static_cast<int64_t>(topology->gpuCount)
                || event->node >= static_cast<int64_t>(topology->nodes.size())) {
                __builtin_trap(); // an index past the topology kept
            }
            if (event->node >= 0) {
                sum += static_cast<size_t>(topology->nodes[static_cast<size_t>(event->node)].hostname.size());
            }
            if (event->gpu >= 0) {
                sum += topology->nodeOf(static_cast<uint32_t>(event->gpu)).firstGpu;
            }
        }
        sum += checkIncident(*event, topology);
        sum += EventFilter { event->gpu, event->node, false }.matches(*event) ? 1 : 0;
        sum += static_cast<size_t>(std::char_traits<char>::length(eventKindName(event->kind)));
    }
    fuzz::sink = sum;
}

void jobs(const std::vector<std::string_view> &messages, const Topology &topology)
{
    if (messages.empty()) {
        return;
    }
    pb::ListJobsResponse response;
    if (!response.ParseFromArray(messages[0].data(), static_cast<int>(messages[0].size()))) {
        return;
    }
    QString error;
    const JobsPtr list = decodeJobs(response, topology, &error);
    if (!list || list->runningJobOfGpu.size() != topology.gpuCount || list->topologyGeneration != topology.generation
        || list->jobs.size() > static_cast<size_t>(response.jobs_size())
        || (list->jobs.size() < static_cast<size_t>(response.jobs_size()) && error.isEmpty())) {
        __builtin_trap(); // a job dropped without a reason
    }
    std::vector<int32_t> holder(topology.gpuCount, -1);
    uint64_t entries = 0;
    for (size_t j = 0; j < list->jobs.size(); ++j) {
        const Job &job = list->jobs[j];
        entries += job.gpus.size();
        if (entries > maxJobGpuEntries(topology.gpuCount)) {
            __builtin_trap(); // the list expanded past its bound
        }
        for (size_t k = 0; k < job.gpus.size(); ++k) {
            const uint32_t g = job.gpus[k];
            if (g >= topology.gpuCount || (k > 0 && g <= job.gpus[k - 1])) {
                __builtin_trap(); // past the topology, or not ascending
            }
            if (job.isRunning()) {
                if (holder[g] >= 0) {
                    __builtin_trap(); // one GPU in two running jobs
                }
                holder[g] = static_cast<int32_t>(j);
            }
        }
    }
    for (uint32_t g = 0; g < topology.gpuCount; ++g) {
        const Job *running = list->runningJobOn(g);
        if ((running == nullptr) != (holder[g] < 0)
            || (running && running != &list->jobs[static_cast<size_t>(holder[g])])) {
            __builtin_trap(); // the GPU index disagrees with the jobs
        }
    }
    fuzz::sink = list->jobs.size();
}

bool badRollup(const SummaryRollup &r, uint32_t fleetGpus)
{
    return r.gpuCount > fleetGpus || !(r.meanUtilisation >= 0 && r.meanUtilisation <= 100)
        || !(r.availability >= 0 && r.availability <= 1) || !(r.busyGpuHours >= 0) || !std::isfinite(r.busyGpuHours)
        || !std::isfinite(r.idleGpuHours) || r.unhealthyGpus > r.gpuCount;
}

void summary(const std::vector<std::string_view> &messages)
{
    if (messages.empty()) {
        return;
    }
    pb::Summary answer;
    if (!answer.ParseFromArray(messages[0].data(), static_cast<int>(messages[0].size()))) {
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
    if (n == 0 || badRollup(s->fleet, n) || s->totalFailures != s->fleet.failures) {
        __builtin_trap();
    }
    for (const auto *list : { &s->rows, &s->racks, &s->jobs }) {
        for (const auto &r : *list) {
            if (badRollup(r, n)) {
                __builtin_trap();
            }
        }
    }
    uint64_t failures = 0;
    for (size_t i = 0; i < s->offenders.size(); ++i) {
        const auto &o = s->offenders[i];
        if (o.gpu >= n || o.failures == 0 || (i > 0 && o.failures > s->offenders[i - 1].failures)) {
            __builtin_trap();
        }
        failures += o.failures;
    }
    if (failures > s->totalFailures) {
        __builtin_trap(); // offenders with more failures than the fleet
    }
    if (s->repeatOffenders.size() > maxRepeatOffenders) {
        __builtin_trap();
    }
    std::vector<bool> seen(n, false);
    for (const auto &o : s->repeatOffenders) {
        for (const double v : { o.score, o.xids, o.seriousXids, o.eccDoubleBit, o.remappedRows,
                 o.remappedRowsCorrectable, o.pcieReplays, o.throttleHours }) {
            if (!(v >= 0) || !std::isfinite(v)) {
                __builtin_trap(); // a NaN or negative count kept
            }
        }
        if (o.gpu >= n || seen[o.gpu]) {
            __builtin_trap();
        }
        seen[o.gpu] = true;
    }
    const auto &u = s->unitHours;
    if (!(s->topPercentFailureShare >= 0 && s->topPercentFailureShare <= 1) || !(u.lostGpuHours >= 0)
        || !std::isfinite(u.lostGpuHours) || !(u.strandedGpuHours >= 0) || u.strandedGpuHours > u.lostGpuHours
        || u.units > n || u.healthyUnitsAtEnd > u.units) {
        __builtin_trap();
    }
    fuzz::sink = s->rows.size() + s->racks.size() + s->jobs.size() + static_cast<size_t>(s->problems.size());
}

bool displayable(const QString &text, int limit)
{
    return text.size() <= limit
        && std::none_of(text.begin(), text.end(), [](QChar c) { return c.category() == QChar::Other_Control; });
}

void catalogue(const std::vector<std::string_view> &messages)
{
    if (messages.empty()) {
        return;
    }
    pb::ListMetricsResponse response;
    if (!response.ParseFromArray(messages[0].data(), static_cast<int>(messages[0].size()))) {
        return;
    }
    QStringList problems;
    const auto metrics = decodeMetricCatalogue(response, &problems);
    if (metrics.size() > static_cast<size_t>(maxCatalogueMetrics)
        || metrics.size() + static_cast<size_t>(problems.size())
            < static_cast<size_t>(std::min(response.metrics_size(), maxCatalogueMetrics))) {
        __builtin_trap(); // too many kept, or one dropped without a word
    }
    QSet<QString> ids;
    for (const auto &m : metrics) {
        if (!ViewState::isIdentifier(m.id) || ids.contains(m.id) || !std::isfinite(m.rangeMin)
            || !std::isfinite(m.rangeMax) || !(m.rangeMax > m.rangeMin) || !std::isfinite(m.rangeMax - m.rangeMin)
            || m.name.isEmpty() || !displayable(m.name, maxMetricNameLength)
            || !displayable(m.unit, maxMetricUnitLength) || !displayable(m.dcgmField, maxMetricFieldLength)
            || (!m.colourMap.isEmpty() && !ViewState::isIdentifier(m.colourMap))) {
            __builtin_trap();
        }
        ids.insert(m.id);
    }
    fuzz::sink = metrics.size() + static_cast<size_t>(problems.size());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // A string field that is not UTF-8 fails the parse, as on the wire, without protobuf's line on stderr each time.
    google::protobuf::SetLogHandler(nullptr);
    g_topologies = { topologyOf(8, backend::Hardware::HgxH100), topologyOf(64, backend::Hardware::HgxH100),
        topologyOf(200, backend::Hardware::HgxH100), topologyOf(144, backend::Hardware::Gb200Nvl72),
        topologyOf(8192, backend::Hardware::HgxH100), topologyOf(65536, backend::Hardware::HgxH100),
        topologyOf(131072, backend::Hardware::HgxH100), topologyOf(9216, backend::Hardware::Gb200Nvl72) };
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const Topology &topology = *g_topologies[((data[0] >> 2U) & 3U) | ((data[0] & 0x40U) != 0 ? 4U : 0U)];
    const bool withTopology = (data[0] & 0x10U) == 0;
    const auto messages = fuzz::splitParts(data + 1, size - 1, 64);
    if ((data[0] & 0x20U) != 0) {
        catalogue(messages);
        return 0;
    }
    switch (data[0] & 3U) {
    case 0:
        range(messages, withTopology ? &topology : nullptr);
        break;
    case 1:
        events(messages, withTopology ? &topology : nullptr);
        break;
    case 2:
        jobs(messages, topology);
        break;
    default:
        summary(messages);
        break;
    }
    return 0;
}
