// SPDX-License-Identifier: Apache-2.0
// The Telemetry service's alerts calls: StreamAlerts, GetAccess, CreateSilence, ExpireSilence (the contract says what
// each answers). The alerts come from an AlertDesk (backend/alerting's AlertmanagerWatch); a write passes the gate's
// role check and is logged, granted or not, to the audit log.
#include "service/alertsencoder.h"
#include "service/telemetryservice.h"

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace std::chrono_literals;

namespace {

// What a console may ask for in one silence. Alertmanager checks again; these bound what is copied and sent at all.
constexpr int maxSilenceMatchers = 32;
constexpr size_t maxMatcherBytes = 1024;
constexpr size_t maxCommentBytes = 1024;
constexpr size_t maxSilenceIdBytes = 64;
constexpr int64_t minSilenceMs = 60'000;
constexpr int64_t maxSilenceMs = 30LL * 24 * 3600 * 1000;

grpc::Status noAlertmanager()
{
    return { grpc::StatusCode::FAILED_PRECONDITION,
        "this backend reads no Alertmanager: start it with --alertmanager-url (docs/ALERTS.md)" };
}

grpc::Status statusOf(AlertDesk::Failure failure, const std::string &error)
{
    switch (failure) {
    case AlertDesk::Failure::None:
        return grpc::Status::OK;
    case AlertDesk::Failure::InvalidArgument:
        return { grpc::StatusCode::INVALID_ARGUMENT, error };
    case AlertDesk::Failure::NotFound:
        return { grpc::StatusCode::NOT_FOUND, error };
    case AlertDesk::Failure::Unavailable:
        break;
    }
    return { grpc::StatusCode::UNAVAILABLE, error };
}

// The request's silence as the desk takes it, its sizes checked before anything is copied; INVALID_ARGUMENT naming the
// field otherwise.
grpc::Status readSilence(const pb::CreateSilenceRequest &request, SilenceRequest *out)
{
    const auto invalid = [](std::string message) {
        return grpc::Status { grpc::StatusCode::INVALID_ARGUMENT, std::move(message) };
    };
    if (request.matchers_size() == 0 || request.matchers_size() > maxSilenceMatchers) {
        return invalid(fmt::format(
            "a silence has 1 to {} matchers; this request has {}", maxSilenceMatchers, request.matchers_size()));
    }
    for (int i = 0; i < request.matchers_size(); ++i) {
        const auto &m = request.matchers(i);
        if (m.name().size() > maxMatcherBytes || m.value().size() > maxMatcherBytes) {
            return invalid(fmt::format("matchers[{}]: a name or value is at most {} bytes", i, maxMatcherBytes));
        }
        out->matchers.push_back({ m.name(), m.value(), m.is_regex(), m.is_equal() });
    }
    if (request.duration_ms() < minSilenceMs || request.duration_ms() > maxSilenceMs) {
        return invalid(fmt::format("duration_ms {} is outside 1 minute .. 30 days", request.duration_ms()));
    }
    out->duration = std::chrono::milliseconds(request.duration_ms());
    if (request.comment().empty() || request.comment().size() > maxCommentBytes) {
        return invalid(fmt::format("a silence needs a comment of at most {} bytes: say why", maxCommentBytes));
    }
    out->comment = request.comment();
    return grpc::Status::OK;
}

AuditLog::Outcome outcomeOf(AlertDesk::Failure failure)
{
    switch (failure) {
    case AlertDesk::Failure::None:
        return AuditLog::Outcome::Done;
    case AlertDesk::Failure::InvalidArgument:
        return AuditLog::Outcome::Invalid;
    case AlertDesk::Failure::NotFound:
        return AuditLog::Outcome::NotFound;
    case AlertDesk::Failure::Unavailable:
        break;
    }
    return AuditLog::Outcome::Failed;
}

} // namespace

TelemetryService::AlertParts TelemetryService::encodedAlerts(const std::shared_ptr<const AlertsState> &state)
{
    std::lock_guard lock(m_alertsMutex);
    if (m_alertParts && m_alertsGeneration == state->generation) {
        return m_alertParts;
    }
    auto parts = std::make_shared<const std::vector<pb::AlertsPart>>(encodeAlerts(*state));
    // A stream still sending an older state than the one kept encodes it for itself, leaving the newer one kept.
    if (!m_alertParts || state->generation > m_alertsGeneration) {
        m_alertParts = parts;
        m_alertsGeneration = state->generation;
    }
    return parts;
}

grpc::Status TelemetryService::StreamAlerts(grpc::ServerContext *context, const pb::StreamAlertsRequest * /*request*/,
    grpc::ServerWriter<pb::AlertsPart> *writer)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "StreamAlerts", AccessGate::Call::Stream);
    if (!admitted.ok()) {
        return admitted.status();
    }
    if (!m_alerts) {
        return noAlertmanager();
    }
    // The latest state at once (once the desk has read Alertmanager, or failed to, a first time), then each newer one;
    // a client still writing one when two more are published gets the newest after it.
    uint64_t sent = 0;
    while (!context->IsCancelled()) {
        const auto state = m_alerts->waitNewer(sent, std::chrono::steady_clock::now() + 200ms);
        if (!state || state->generation == sent || state->generation == 0) {
            continue;
        }
        const auto parts = encodedAlerts(state);
        for (const auto &part : *parts) {
            const auto writing = m_stalls.writing(context, "StreamAlerts part", state->generation);
            if (!writer->Write(part)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
        }
        sent = state->generation;
    }
    return { grpc::StatusCode::CANCELLED, "alerts stream cancelled" };
}

grpc::Status TelemetryService::GetAccess(
    grpc::ServerContext *context, const pb::GetAccessRequest * /*request*/, pb::Access *response)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "GetAccess", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        return admitted.status();
    }
    const auto &caller = admitted.caller();
    response->set_name(caller.name);
    response->set_role(caller.role == Role::Operator ? pb::ROLE_OPERATOR : pb::ROLE_VIEWER);
    response->set_alertmanager(m_alerts != nullptr);
    response->set_may_silence(m_alerts != nullptr && caller.role == Role::Operator);
    return grpc::Status::OK;
}

grpc::Status TelemetryService::CreateSilence(
    grpc::ServerContext *context, const pb::CreateSilenceRequest *request, pb::Silence *response)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "CreateSilence", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        if (m_audit) { // no credential, a wrong one, too many: an attempt at a write all the same
            m_audit->createSilence(
                admitted.caller(), SilenceRequest(), AuditLog::Outcome::Refused, admitted.status().error_message());
        }
        return admitted.status();
    }
    const auto &caller = admitted.caller();
    SilenceRequest silence;
    silence.createdBy = caller.name;
    auto status = readSilence(*request, &silence);
    auto outcome = status.ok() ? AuditLog::Outcome::Done : AuditLog::Outcome::Invalid;
    if (status.ok()) {
        status = m_gate->mayWrite(admitted, "silencing");
        outcome = status.ok() ? outcome : AuditLog::Outcome::Refused;
    }
    if (status.ok() && !m_alerts) {
        status = noAlertmanager();
        outcome = AuditLog::Outcome::Failed;
    }
    std::string id;
    if (status.ok()) {
        std::string error;
        const auto failure = m_alerts->createSilence(silence, &id, &error);
        status = statusOf(failure, error);
        outcome = outcomeOf(failure);
    }
    if (m_audit) {
        m_audit->createSilence(caller, silence, outcome, status.ok() ? id : status.error_message());
    }
    if (!status.ok()) {
        return status;
    }
    // As Alertmanager now holds it (the desk polled again before answering), else as asked.
    for (const auto &held : m_alerts->latest()->silences) {
        if (held.id == id) {
            encodeSilence(held, response);
            return grpc::Status::OK;
        }
    }
    AlertmanagerSilence asked;
    asked.id = id;
    asked.matchers = silence.matchers;
    asked.createdBy = silence.createdBy;
    asked.comment = silence.comment;
    encodeSilence(asked, response);
    return grpc::Status::OK;
}

grpc::Status TelemetryService::ExpireSilence(
    grpc::ServerContext *context, const pb::ExpireSilenceRequest *request, pb::ExpireSilenceResponse * /*response*/)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "ExpireSilence", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        if (m_audit) {
            m_audit->expireSilence(admitted.caller(), request->id().substr(0, maxSilenceIdBytes),
                AuditLog::Outcome::Refused, admitted.status().error_message());
        }
        return admitted.status();
    }
    const auto &caller = admitted.caller();
    grpc::Status status = grpc::Status::OK;
    auto outcome = AuditLog::Outcome::Done;
    if (request->id().empty() || request->id().size() > maxSilenceIdBytes) {
        status = { grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("a silence id is 1 to {} bytes (Alertmanager's are UUIDs)", maxSilenceIdBytes) };
        outcome = AuditLog::Outcome::Invalid;
    }
    if (status.ok()) {
        status = m_gate->mayWrite(admitted, "expiring a silence");
        outcome = status.ok() ? outcome : AuditLog::Outcome::Refused;
    }
    if (status.ok() && !m_alerts) {
        status = noAlertmanager();
        outcome = AuditLog::Outcome::Failed;
    }
    if (status.ok()) {
        std::string error;
        const auto failure = m_alerts->expireSilence(request->id(), &error);
        status = statusOf(failure, error);
        outcome = outcomeOf(failure);
    }
    if (m_audit) {
        m_audit->expireSilence(caller, request->id().substr(0, maxSilenceIdBytes), outcome,
            status.ok() ? std::string() : status.error_message());
    }
    return status;
}

} // namespace fleetscope::backend
