// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"

#include <memory>
#include <string>

namespace grpc {
class Server;
}

namespace fleetscope::backend {

class TelemetryService;

// A running backend: the fleet's frame source (simulated or polled) and the gRPC server that serves it.
class BackendServer
{
public:
    // Serves a source: simulatedSource(options) (sim/simulatedfleet.h), or one over a real fleet's producer.
    explicit BackendServer(std::unique_ptr<FrameSource> source);
    ~BackendServer();
    BackendServer(const BackendServer &) = delete;
    BackendServer &operator=(const BackendServer &) = delete;

    // Listens on address ("127.0.0.1:0" picks a free port). Returns false and sets error when it cannot.
    bool start(const std::string &address, std::string *error);
    // The port bound by start().
    int port() const { return m_port; }
    std::string listeningAddress() const;
    const FrameSource &source() const { return *m_source; }
    // Cancels open streams and stops; safe to call twice.
    void stop();
    // Blocks until stop() is called from another thread.
    void wait();

private:
    std::string m_host;
    int m_port = 0;
    std::unique_ptr<FrameSource> m_source;
    std::unique_ptr<TelemetryService> m_service;
    std::unique_ptr<grpc::Server> m_server;
};

} // namespace fleetscope::backend
