// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"
#include "core/framesource.h"
#include "service/accessgate.h"
#include "service/auditlog.h"
#include "service/sharedencodings.h"

#include <future>
#include <memory>
#include <string>

namespace grpc {
class Server;
}

namespace fleetscope::backend {

class HealthReport;
class TelemetryService;

// A running backend: the fleet's frame source (simulated or polled) and the gRPC server that serves it.
//
// Besides the Telemetry service, the server answers the standard health service (grpc.health.v1.Health, gRPC's own;
// HealthReport says what it says) without a token or any other credential: Kubernetes' gRPC probes and load balancers
// ask it, and have none to give. It tells nothing about the fleet but whether the backend serves. Every other call
// passes the AccessGate, server reflection's (grpc.reflection.v1alpha, for grpcurl) too: see ReflectionGate.
class BackendServer
{
public:
    // Who may connect: TLS (1.2 or later, gRPC's floor), client certificates, tokens and per-client limits.
    struct Security
    {
        std::string tlsCertFile; // PEM certificate chain; with tlsKeyFile, the API is served over TLS only
        std::string tlsKeyFile;
        std::string tlsClientCaFile; // only clients with a certificate from this CA (needs TLS)
        AccessGate::Options access; // tokens (need TLS), per-client limits
        // Serve a non-loopback address without TLS and a token or client CA: anyone who reaches the port reads the
        // fleet. Refused unless this says so.
        bool insecureListen = false;

        bool tls() const { return !tlsCertFile.empty(); }
        bool authenticates() const { return !access.tokenFile.empty() || !tlsClientCaFile.empty(); }
    };

    // Serves a source: simulatedSource(options) (sim/simulatedfleet.h), or one over a real fleet's producer.
    explicit BackendServer(std::unique_ptr<FrameSource> source);
    BackendServer(std::unique_ptr<FrameSource> source, Security security);
    ~BackendServer();
    BackendServer(const BackendServer &) = delete;
    BackendServer &operator=(const BackendServer &) = delete;

    // Listens on address ("127.0.0.1:0" picks a free port). Returns false and sets error when it cannot: the address
    // is taken or not local, a TLS file cannot be read, or a non-loopback address is asked for without TLS and
    // credentials (and without insecureListen).
    bool start(const std::string &address, std::string *error);
    // Whether host names this machine's loopback only ("127.0.0.1", "::1", "localhost").
    static bool isLoopback(const std::string &host);
    // The port bound by start().
    int port() const { return m_port; }
    std::string listeningAddress() const;
    const FrameSource &source() const { return *m_source; }
    // The service answering the calls (what its calls share, what it cut).
    const TelemetryService &service() const { return *m_service; }
    // Serves the NOC's alerts from desk (StreamAlerts, the silence calls; null: none), each write logged to the
    // server's audit log. Before start(); the desk outlives the server.
    void setAlertDesk(AlertDesk *desk);
    AuditLog &auditLog() { return *m_audit; }
    // See TelemetryService::setTopologyAhead.
    void setTopologyAhead(uint64_t generation, std::future<SharedEncodings::TopologyParts> parts);
    // Cancels open streams and stops; safe to call twice.
    void stop();
    // Blocks until stop() is called from another thread.
    void wait();

private:
    std::string m_host;
    int m_port = 0;
    Security m_security;
    std::unique_ptr<AccessGate> m_gate;
    std::unique_ptr<AuditLog> m_audit;
    std::unique_ptr<FrameSource> m_source;
    std::unique_ptr<TelemetryService> m_service;
    std::unique_ptr<grpc::Server> m_server;
    std::unique_ptr<HealthReport> m_health; // reports to m_server's health service: goes before it
};

} // namespace fleetscope::backend
