// SPDX-License-Identifier: Apache-2.0
#include "service/alertsencoder.h"

#include "common/incidentlimits.h"

#include <algorithm>

namespace fleetscope::backend {

namespace {

pb::Severity toProto(EventSeverity severity)
{
    switch (severity) {
    case EventSeverity::Critical:
        return pb::SEVERITY_CRITICAL;
    case EventSeverity::Warning:
        return pb::SEVERITY_WARNING;
    case EventSeverity::Info:
        break;
    }
    return pb::SEVERITY_INFO;
}

pb::SilenceState toProto(AlertmanagerSilence::State state)
{
    switch (state) {
    case AlertmanagerSilence::State::Active:
        return pb::SILENCE_STATE_ACTIVE;
    case AlertmanagerSilence::State::Pending:
        return pb::SILENCE_STATE_PENDING;
    case AlertmanagerSilence::State::Expired:
        return pb::SILENCE_STATE_EXPIRED;
    }
    return pb::SILENCE_STATE_UNSPECIFIED;
}

void encodeLabels(const std::vector<AlertLabel> &labels, google::protobuf::RepeatedPtrField<pb::Label> *out)
{
    out->Reserve(static_cast<int>(labels.size()));
    for (const auto &l : labels) {
        auto *label = out->Add();
        label->set_name(l.name);
        label->set_value(l.value);
    }
}

pb::AlertsPart partHeader(const AlertsState &state)
{
    pb::AlertsPart part;
    part.set_generation(state.generation);
    return part;
}

} // namespace

void encodeAlert(const AlertmanagerAlert &alert, pb::Alert *out)
{
    out->set_fingerprint(alert.fingerprint);
    encodeLabels(alert.labels, out->mutable_labels());
    encodeLabels(alert.annotations, out->mutable_annotations());
    out->set_state(
        alert.state == AlertmanagerAlert::State::Suppressed ? pb::ALERT_STATE_SUPPRESSED : pb::ALERT_STATE_ACTIVE);
    for (const auto &id : alert.silencedBy) {
        out->add_silenced_by(id);
    }
    for (const auto &fingerprint : alert.inhibitedBy) {
        out->add_inhibited_by(fingerprint);
    }
    out->set_starts_at_ms(alert.startsAtMs);
    out->set_ends_at_ms(alert.endsAtMs);
    out->set_updated_at_ms(alert.updatedAtMs);
    out->set_generator_url(alert.generatorUrl);
    out->set_severity(toProto(alert.severity));
    out->set_gpu_count(alert.gpuCount);
    const size_t runs = std::min(alert.gpuRuns.size(), maxIncidentRuns);
    out->mutable_gpu_runs()->Reserve(static_cast<int>(runs));
    for (size_t i = 0; i < runs; ++i) {
        auto *run = out->add_gpu_runs();
        run->set_first(alert.gpuRuns[i].first);
        run->set_count(alert.gpuRuns[i].second);
    }
    out->set_node(alert.node);
    if (alert.domain >= 0) {
        out->set_domain(static_cast<uint32_t>(alert.domain));
    }
    out->set_placed_by(alert.placedBy);
}

void encodeSilence(const AlertmanagerSilence &silence, pb::Silence *out)
{
    out->set_id(silence.id);
    for (const auto &m : silence.matchers) {
        auto *matcher = out->add_matchers();
        matcher->set_name(m.name);
        matcher->set_value(m.value);
        matcher->set_is_regex(m.isRegex);
        matcher->set_is_equal(m.isEqual);
    }
    out->set_starts_at_ms(silence.startsAtMs);
    out->set_ends_at_ms(silence.endsAtMs);
    out->set_updated_at_ms(silence.updatedAtMs);
    out->set_created_by(silence.createdBy);
    out->set_comment(silence.comment);
    out->set_state(toProto(silence.state));
}

std::vector<pb::AlertsPart> encodeAlerts(const AlertsState &state, size_t partBytes)
{
    std::vector<pb::AlertsPart> parts;
    parts.push_back(partHeader(state));
    auto *status = parts.front().mutable_status();
    status->set_url(state.status.url);
    status->set_reachable(state.status.reachable);
    status->set_last_success_ms(state.status.lastSuccessMs);
    status->set_error(state.status.error);
    status->set_poll_interval_ms(state.status.pollIntervalMs);
    status->set_alerts_left_out(state.status.alertsLeftOut);
    status->set_silences_left_out(state.status.silencesLeftOut);
    status->set_sending(state.status.sending);
    parts.front().set_alert_count(static_cast<uint32_t>(state.alerts.size()));
    parts.front().set_silence_count(static_cast<uint32_t>(state.silences.size()));
    // A part's size grows by each entry's own plus a few bytes of framing; a new part starts before it would pass
    // partBytes. One entry alone is far below it: its text, labels and runs are bounded.
    size_t bytes = parts.front().ByteSizeLong();
    const auto room = [&](size_t entry) {
        if (bytes + entry + 8 > partBytes && bytes > 16) {
            parts.push_back(partHeader(state));
            bytes = parts.back().ByteSizeLong();
        }
        bytes += entry + 8;
    };
    for (const auto &alert : state.alerts) {
        pb::Alert encoded;
        encodeAlert(alert, &encoded);
        room(encoded.ByteSizeLong());
        *parts.back().add_alerts() = std::move(encoded);
    }
    for (const auto &silence : state.silences) {
        pb::Silence encoded;
        encodeSilence(silence, &encoded);
        room(encoded.ByteSizeLong());
        *parts.back().add_silences() = std::move(encoded);
    }
    parts.back().set_last_part(true);
    return parts;
}

} // namespace fleetscope::backend
