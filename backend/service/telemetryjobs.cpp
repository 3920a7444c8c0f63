// SPDX-License-Identifier: Apache-2.0
// The Telemetry service's job call: GetJob, one job's own account (the contract says what it answers). The accounts
// are the source's judge's (FrameSource::jobAccounts(): analytics/jobaccounting.h over a judged source); a source
// judged by nothing keeps none, and GetJob says so.
#include "service/jobencoder.h"
#include "service/telemetryservice.h"

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// A job's name is a scheduler's (Slurm's are at most 200 characters in practice); a longer one names no job held.
constexpr size_t maxJobNameBytes = 256;

// A client's name for a status message: its start only, since the message travels in a header (the name is UTF-8 by
// then, so the cut only has to keep it so).
std::string quotedName(const std::string &name)
{
    return fmt::format("'{}'", wireText(name, 64));
}
} // namespace

grpc::Status TelemetryService::GetJob(
    grpc::ServerContext *context, const pb::GetJobRequest *request, pb::JobReport *response)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "GetJob", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        return admitted.status();
    }
    const auto invalid = [](std::string message) {
        return grpc::Status { grpc::StatusCode::INVALID_ARGUMENT, std::move(message) };
    };
    const std::string &name = request->name();
    if (request->id() == 0 && name.empty()) {
        return invalid("GetJob names a job by its id, or by id 0 and its name; this request has neither");
    }
    if (name.size() > maxJobNameBytes) {
        return invalid(fmt::format("name is {} bytes, over the limit of {} bytes", name.size(), maxJobNameBytes));
    }
    if (!isUtf8(name)) {
        return invalid("name is not UTF-8");
    }
    const JobAccounts *accounts = m_source.jobAccounts();
    if (!accounts) {
        return { grpc::StatusCode::FAILED_PRECONDITION,
            "this backend keeps no job accounts: its frames are judged by nothing (docs/JOBS.md)" };
    }
    JobReport report;
    if (!accounts->report(request->id(), request->id() == 0 ? name : std::string(), &report)) {
        return { grpc::StatusCode::NOT_FOUND,
            request->id() != 0 ? fmt::format("no job {} is running or ended within the hour", request->id())
                               : fmt::format("no job named {} is running or ended within the hour", quotedName(name)) };
    }
    // A caller gone, or past its deadline, while the account was copied gets nothing encoded.
    if (context->IsCancelled()) {
        return { grpc::StatusCode::CANCELLED, "GetJob cancelled" };
    }
    std::string error;
    if (!encodeJobReport(report, response, &error)) {
        response->Clear();
        return { grpc::StatusCode::RESOURCE_EXHAUSTED, error };
    }
    return grpc::Status::OK;
}

} // namespace fleetscope::backend
