// SPDX-License-Identifier: Apache-2.0
#include "service/jobencoder.h"

#include <google/protobuf/io/coded_stream.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fleetscope::backend {

namespace {
using google::protobuf::io::CodedOutputStream;

constexpr std::string_view replacement = "\xEF\xBF\xBD"; // U+FFFD
constexpr std::string_view ellipsis = "\xE2\x80\xA6"; // U+2026

// The length of the UTF-8 character starting at text[i]; 0 when the bytes there are not one (the table of
// well-formed sequences in Unicode's chapter 3, which protobuf's check follows).
size_t characterLength(std::string_view text, size_t i)
{
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
        return 1;
    }
    size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        low = lead == 0xE0 ? 0xA0 : low; // no overlong forms
        high = lead == 0xED ? 0x9F : high; // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        low = lead == 0xF0 ? 0x90 : low;
        high = lead == 0xF4 ? 0x8F : high; // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (length > text.size() - i || byte(i + 1) < low || byte(i + 1) > high) {
        return 0;
    }
    for (size_t k = 2; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            return 0;
        }
    }
    return length;
}

// What the accounting computes, as the contract's fields take it: a count of hours or seconds is finite and not
// negative, a share within 0..1, a score finite.
double amount(double value)
{
    return std::isfinite(value) && value > 0 ? value : 0.0;
}
double share(double value)
{
    return std::isfinite(value) ? std::clamp(value, 0.0, 1.0) : 0.0;
}
float finite(float value)
{
    return std::isfinite(value) ? value : 0.0F;
}

// A repeated element's bytes in its message: the field's tag, the element's length and the element.
size_t elementBytes(const google::protobuf::MessageLite &element)
{
    const size_t size = element.ByteSizeLong();
    return 1 + CodedOutputStream::VarintSize64(size) + size;
}

void encodeStraggler(const Straggler &s, pb::Straggler *out)
{
    out->set_gpu(s.gpu);
    out->set_score(finite(s.score));
    const auto metric = static_cast<size_t>(s.metric);
    if (metric < static_cast<size_t>(MetricId::Count)) {
        out->set_metric_id(metricCatalog()[metric].key);
    }
    out->set_value(finite(s.value));
    out->set_job_median(finite(s.jobMedian));
    out->set_hold_back(static_cast<float>(share(s.holdBack)));
    out->set_since_ms(s.sinceMs);
    out->set_gpu_hours_lost(amount(s.gpuHoursLost));
    out->set_reason(wireText(s.reason));
}

void encodeBandPoint(const JobBandPoint &p, pb::JobBandPoint *out)
{
    out->set_time_ms(p.timeMs);
    out->set_p10(finite(p.p10));
    out->set_median(finite(p.median));
    out->set_p90(finite(p.p90));
    out->set_reporting(p.reporting);
}

pb::JobPhaseSpan encodeSpan(const JobPhaseSpan &span)
{
    pb::JobPhaseSpan out;
    out.set_phase(toProto(span.phase));
    out.set_from_ms(span.fromMs);
    out.set_to_ms(span.toMs);
    out.set_incident_id(span.incidentId);
    out.set_why(wireText(span.why));
    return out;
}

// The band's points, at most maxBandPoints of them: every one, or as many picked evenly from the oldest to the newest.
void encodeBand(const std::vector<JobBandPoint> &band, pb::JobReport *out)
{
    const size_t n = band.size();
    const size_t kept = std::min(n, JobReport::maxBandPoints);
    out->mutable_band()->Reserve(static_cast<int>(kept));
    for (size_t k = 0; k < kept; ++k) {
        const size_t i = kept == n ? k : k * (n - 1) / (kept - 1);
        encodeBandPoint(band[i], out->add_band());
    }
}

// The phase spans, the newest first until maxPhaseSpans or the bytes left are taken; the older ones are merged into
// the oldest one kept, which then starts where the first did.
void encodeSpans(const std::vector<JobPhaseSpan> &phases, size_t bytesLeft, pb::JobReport *out)
{
    // The oldest span kept may take the first one's start: a time takes at most 10 bytes, whatever it was.
    constexpr size_t startSlack = 10;
    bytesLeft = bytesLeft > startSlack ? bytesLeft - startSlack : 0;
    std::vector<pb::JobPhaseSpan> kept;
    for (auto it = phases.rbegin(); it != phases.rend() && kept.size() < JobReport::maxPhaseSpans; ++it) {
        auto span = encodeSpan(*it);
        const size_t bytes = elementBytes(span);
        if (bytes > bytesLeft) {
            break;
        }
        bytesLeft -= bytes;
        kept.push_back(std::move(span));
    }
    if (kept.empty()) {
        return;
    }
    kept.back().set_from_ms(phases.front().fromMs);
    out->mutable_phases()->Reserve(static_cast<int>(kept.size()));
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
        *out->add_phases() = std::move(*it);
    }
}
} // namespace

bool isUtf8(std::string_view text)
{
    for (size_t i = 0; i < text.size();) {
        const size_t length = characterLength(text, i);
        if (length == 0) {
            return false;
        }
        i += length;
    }
    return true;
}

std::string wireText(std::string_view text, size_t maxBytes)
{
    std::string out;
    out.reserve(std::min(text.size(), maxBytes));
    bool cut = false;
    for (size_t i = 0; i < text.size();) {
        const size_t length = characterLength(text, i);
        const std::string_view character = length == 0 ? replacement : text.substr(i, length);
        if (out.size() + character.size() > maxBytes) {
            cut = true;
            break;
        }
        out += character;
        i += length == 0 ? 1 : length;
    }
    if (cut && maxBytes >= ellipsis.size()) {
        // Whole characters off the end (out is UTF-8: its continuation bytes, then its lead) until the ellipsis fits.
        while (out.size() + ellipsis.size() > maxBytes) {
            while ((static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
                out.pop_back();
            }
            out.pop_back();
        }
        out += ellipsis;
    }
    return out;
}

pb::JobPhase toProto(JobPhase phase)
{
    switch (phase) {
    case JobPhase::Unwatched:
        break;
    case JobPhase::Compute:
        return pb::JOB_PHASE_COMPUTE;
    case JobPhase::Checkpoint:
        return pb::JOB_PHASE_CHECKPOINT;
    case JobPhase::Stall:
        return pb::JOB_PHASE_STALL;
    case JobPhase::Restart:
        return pb::JOB_PHASE_RESTART;
    case JobPhase::Ended:
        return pb::JOB_PHASE_ENDED;
    }
    return pb::JOB_PHASE_UNSPECIFIED;
}

pb::LossCause toProto(LossCause cause)
{
    switch (cause) {
    case LossCause::Unspecified:
        break;
    case LossCause::Incident:
        return pb::LOSS_CAUSE_INCIDENT;
    case LossCause::Straggler:
        return pb::LOSS_CAUSE_STRAGGLER;
    case LossCause::Restart:
        return pb::LOSS_CAUSE_RESTART;
    case LossCause::Checkpoint:
        return pb::LOSS_CAUSE_CHECKPOINT;
    case LossCause::Stall:
        return pb::LOSS_CAUSE_STALL;
    }
    return pb::LOSS_CAUSE_UNSPECIFIED;
}

void encodeLoss(const GoodputLoss &loss, pb::GoodputLoss *out)
{
    out->set_cause(toProto(loss.cause));
    out->set_gpu_hours(amount(loss.gpuHours));
    out->set_incident_id(loss.incidentId);
    if (loss.domain >= 0 && loss.domain <= std::numeric_limits<uint32_t>::max()) {
        out->set_domain(static_cast<uint32_t>(loss.domain));
    }
    out->set_gpu(loss.gpu >= 0 ? loss.gpu : -1);
    out->set_node(loss.node >= 0 ? loss.node : -1);
    out->set_job_id(loss.jobId);
    out->set_jobs(loss.jobs);
    out->set_what(wireText(loss.what));
}

void encodeBrief(const JobBrief &brief, pb::Job *out)
{
    out->set_goodput(share(brief.goodput));
    out->set_phase(toProto(brief.phase));
    out->set_straggler_count(brief.stragglerCount);
}

void encodeGoodput(const GoodputSummary &goodput, pb::Summary *out)
{
    out->set_jobs_accounted(goodput.jobs);
    if (goodput.jobs == 0) {
        return;
    }
    const double gpuHours = amount(goodput.jobGpuHours);
    const double productive = std::min(amount(goodput.productiveGpuHours), gpuHours);
    out->set_job_gpu_hours(gpuHours);
    out->set_productive_gpu_hours(productive);
    // Jobs that ran for no GPU-time at all (a range of one instant) have no share to say.
    if (gpuHours > 0) {
        out->set_goodput(productive / gpuHours);
    }
    const auto &losses = goodput.losses;
    const size_t most = GoodputSummary::maxLosses;
    const size_t listed = losses.size() <= most ? losses.size() : most - 1;
    out->mutable_losses()->Reserve(static_cast<int>(std::min(losses.size(), most)));
    for (size_t i = 0; i < listed; ++i) {
        encodeLoss(losses[i], out->add_losses());
    }
    if (listed == losses.size()) {
        return;
    }
    // The rest in one remainder. The jobs it cost are at least those of its largest part: the parts may share jobs.
    GoodputLoss rest;
    rest.what = "the rest";
    for (size_t i = listed; i < losses.size(); ++i) {
        rest.gpuHours += amount(losses[i].gpuHours);
        rest.jobs = std::max(rest.jobs, losses[i].jobs);
    }
    encodeLoss(rest, out->add_losses());
}

bool encodeJobReport(const JobReport &report, pb::JobReport *out, std::string *error, size_t maxBytes)
{
    auto *job = out->mutable_job();
    encodeJob(report.job, job);
    JobBrief brief;
    brief.goodput = report.goodput;
    brief.phase = report.phase;
    brief.stragglerCount
        = static_cast<uint32_t>(std::min<size_t>(report.stragglers.size(), std::numeric_limits<uint32_t>::max()));
    encodeBrief(brief, job);

    out->set_as_of_ms(report.asOfMs);
    out->set_watched_from_ms(report.watchedFromMs);
    const double gpuHours = amount(report.gpuHours);
    out->set_gpu_hours(gpuHours);
    out->set_productive_gpu_hours(std::min(amount(report.productiveGpuHours), gpuHours));
    out->set_goodput(share(report.goodput));
    const size_t losses = std::min(report.losses.size(), JobReport::maxLosses);
    out->mutable_losses()->Reserve(static_cast<int>(losses));
    for (size_t i = 0; i < losses; ++i) {
        encodeLoss(report.losses[i], out->add_losses());
    }
    const size_t stragglers = std::min(report.stragglers.size(), JobReport::maxStragglers);
    out->mutable_stragglers()->Reserve(static_cast<int>(stragglers));
    for (size_t i = 0; i < stragglers; ++i) {
        encodeStraggler(report.stragglers[i], out->add_stragglers());
    }
    encodeBand(report.band, out);
    out->set_phase(toProto(report.phase));
    out->set_step_seconds(amount(report.stepSeconds));
    out->set_all_reduce_share(share(report.allReduceShare));
    out->set_restarts(report.restarts);
    out->set_checkpoint_limit_seconds(amount(report.checkpointLimitSeconds));

    const size_t fixed = out->ByteSizeLong();
    if (fixed > maxBytes) {
        *error = fmt::format("job {}'s report takes {} bytes before its phases, over the limit of {} bytes",
            report.job.id, fixed, maxBytes);
        return false;
    }
    encodeSpans(report.phases, maxBytes - fixed, out);
    return true;
}

} // namespace fleetscope::backend
