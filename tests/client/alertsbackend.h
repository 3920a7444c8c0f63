// SPDX-License-Identifier: Apache-2.0
// A backend for the alerts client's suites, written from the .proto alone (tst_alertsclient, tst_fleetalerts): it
// serves the states a test hands it, as the test cuts them into parts (lying ones included), answers GetAccess with
// the role the test sets and CreateSilence / ExpireSilence with the status the test chooses, and counts the calls. A
// real backend's StreamAlerts is tested against a real Alertmanager beside these.
#pragma once

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fleetscope::alertstesting {

namespace pb = fleetscope::telemetry::v1;

// A state of one part: these alert names, each on GPU run [4i, 4i + 4), Alertmanager read a second ago.
inline std::vector<pb::AlertsPart> oneState(uint64_t generation, const std::vector<std::string> &names,
    int64_t pollMs = 1000, bool reachable = true, int64_t lastSuccessMs = 0)
{
    pb::AlertsPart part;
    part.set_generation(generation);
    part.set_last_part(true);
    part.set_alert_count(static_cast<uint32_t>(names.size()));
    auto *status = part.mutable_status();
    status->set_url("http://127.0.0.1:9093");
    status->set_reachable(reachable);
    const int64_t now = QDateTime::currentMSecsSinceEpoch();
    status->set_last_success_ms(lastSuccessMs != 0 ? lastSuccessMs : now - 1000);
    status->set_poll_interval_ms(pollMs);
    if (!reachable) {
        status->set_error("connection refused");
    }
    uint32_t first = 0;
    for (const auto &name : names) {
        auto *a = part.add_alerts();
        a->set_fingerprint("fp-" + name);
        auto *label = a->add_labels();
        label->set_name("alertname");
        label->set_value(name);
        a->set_state(pb::ALERT_STATE_ACTIVE);
        a->set_starts_at_ms(now - 60000);
        a->set_severity(pb::SEVERITY_WARNING);
        a->set_node(-1);
        a->set_gpu_count(4);
        auto *run = a->add_gpu_runs();
        run->set_first(first);
        run->set_count(4);
        first += 4;
    }
    return { part };
}

class AlertsBackend final : public pb::Telemetry::Service
{
public:
    ~AlertsBackend() override { stop(); }

    // Serves on 127.0.0.1:port (0: a free one); the port it took.
    int start(int port = 0)
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = false;
        }
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &m_port);
        builder.RegisterService(this);
        m_server = builder.BuildAndStart();
        return m_server ? m_port : 0;
    }
    // As an outage: the streams end, the port closes.
    void stop()
    {
        if (!m_server) {
            return;
        }
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        m_server->Wait();
        m_server.reset();
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }

    // What streams send: the newest state's parts, to each stream once (a stream opened later gets the newest).
    void publish(std::vector<pb::AlertsPart> parts)
    {
        {
            std::lock_guard lock(m_mutex);
            m_parts = std::move(parts);
            ++m_version;
        }
        m_changed.notify_all();
    }
    // FAILED_PRECONDITION for StreamAlerts: no Alertmanager.
    void setConfigured(bool configured)
    {
        std::lock_guard lock(m_mutex);
        m_configured = configured;
    }
    void setAccess(pb::Role role, const std::string &name)
    {
        std::lock_guard lock(m_mutex);
        m_access.set_role(role);
        m_access.set_name(name);
        m_access.set_alertmanager(true);
        m_access.set_may_silence(role == pb::ROLE_OPERATOR);
    }
    // How CreateSilence and ExpireSilence answer (OK: made, with ids s-1, s-2, …); hold: they wait until released.
    void setSilenceAnswer(grpc::Status status, bool hold = false)
    {
        std::lock_guard lock(m_mutex);
        m_silenceAnswer = std::move(status);
        m_hold = hold;
    }
    void release()
    {
        {
            std::lock_guard lock(m_mutex);
            m_hold = false;
        }
        m_changed.notify_all();
    }

    int streams() const { return m_streams; }
    int accessCalls() const { return m_accessCalls; }
    std::vector<pb::CreateSilenceRequest> silencesAsked() const
    {
        std::lock_guard lock(m_mutex);
        return m_asked;
    }
    std::vector<std::string> expiresAsked() const
    {
        std::lock_guard lock(m_mutex);
        return m_expired;
    }

    grpc::Status StreamAlerts(grpc::ServerContext *context, const pb::StreamAlertsRequest * /*request*/,
        grpc::ServerWriter<pb::AlertsPart> *writer) override
    {
        ++m_streams;
        std::unique_lock lock(m_mutex);
        if (!m_configured) {
            return { grpc::StatusCode::FAILED_PRECONDITION, "no --alertmanager-url" };
        }
        uint64_t sent = 0;
        for (;;) {
            if (m_version != sent && !m_parts.empty()) {
                sent = m_version;
                const auto parts = m_parts;
                lock.unlock();
                for (const auto &part : parts) {
                    if (!writer->Write(part)) {
                        return grpc::Status::CANCELLED;
                    }
                }
                lock.lock();
                continue;
            }
            if (m_stopping || context->IsCancelled()) {
                return grpc::Status::CANCELLED;
            }
            // Woken by a new state or the end; the cancellation of a call wakes nothing, so it is looked at often.
            m_changed.wait_for(lock, std::chrono::milliseconds(50));
        }
    }

    grpc::Status GetAccess(
        grpc::ServerContext * /*context*/, const pb::GetAccessRequest * /*request*/, pb::Access *response) override
    {
        ++m_accessCalls;
        std::lock_guard lock(m_mutex);
        *response = m_access;
        return grpc::Status::OK;
    }

    grpc::Status CreateSilence(
        grpc::ServerContext *context, const pb::CreateSilenceRequest *request, pb::Silence *response) override
    {
        std::unique_lock lock(m_mutex);
        m_asked.push_back(*request);
        if (!waitWhileHeld(context, lock)) {
            return grpc::Status::CANCELLED;
        }
        if (!m_silenceAnswer.ok()) {
            return m_silenceAnswer;
        }
        response->set_id("s-" + std::to_string(m_asked.size()));
        *response->mutable_matchers() = request->matchers();
        return grpc::Status::OK;
    }

    grpc::Status ExpireSilence(grpc::ServerContext *context, const pb::ExpireSilenceRequest *request,
        pb::ExpireSilenceResponse * /*response*/) override
    {
        std::unique_lock lock(m_mutex);
        m_expired.push_back(request->id());
        if (!waitWhileHeld(context, lock)) {
            return grpc::Status::CANCELLED;
        }
        return m_silenceAnswer;
    }

private:
    bool waitWhileHeld(grpc::ServerContext *context, std::unique_lock<std::mutex> &lock)
    {
        while (m_hold && !m_stopping) {
            if (context->IsCancelled()) {
                return false;
            }
            m_changed.wait_for(lock, std::chrono::milliseconds(50));
        }
        return true;
    }

    std::unique_ptr<grpc::Server> m_server;
    int m_port = 0;
    std::atomic<int> m_streams { 0 };
    std::atomic<int> m_accessCalls { 0 };
    mutable std::mutex m_mutex; // guards what follows, shared by gRPC's threads and the test's
    std::condition_variable m_changed;
    bool m_stopping = false;
    bool m_configured = true;
    std::vector<pb::AlertsPart> m_parts;
    uint64_t m_version = 0;
    pb::Access m_access;
    grpc::Status m_silenceAnswer;
    bool m_hold = false;
    std::vector<pb::CreateSilenceRequest> m_asked;
    std::vector<std::string> m_expired;
};

} // namespace fleetscope::alertstesting
