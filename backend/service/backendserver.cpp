// SPDX-License-Identifier: Apache-2.0
#include "service/backendserver.h"

#include "service/telemetryservice.h"

#include <grpcpp/grpcpp.h>

#include <fmt/format.h>

namespace fleetscope::backend {

BackendServer::BackendServer(std::unique_ptr<FrameSource> source)
    : m_source(std::move(source))
    , m_service(std::make_unique<TelemetryService>(*m_source))
{ }

BackendServer::~BackendServer()
{
    stop();
}

bool BackendServer::start(const std::string &address, std::string *error)
{
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        *error = fmt::format("'{}' is not HOST:PORT", address);
        return false;
    }
    m_host = address.substr(0, colon);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &m_port);
    builder.RegisterService(m_service.get());
    // Frames are sent in parts under 4 MiB; keep gRPC's limit where the contract says it is.
    builder.SetMaxSendMessageSize(4 * 1024 * 1024);
    m_server = builder.BuildAndStart();
    if (!m_server || m_port == 0) {
        m_server.reset();
        *error = fmt::format("cannot listen on {} (address in use or not local?)", address);
        return false;
    }
    return true;
}

std::string BackendServer::listeningAddress() const
{
    return fmt::format("{}:{}", m_host, m_port);
}

void BackendServer::stop()
{
    if (m_server) {
        // Streams notice the shutdown within their 200 ms wake-up; after the deadline gRPC cancels what is left.
        m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
        m_server->Wait();
        m_server.reset();
    }
    m_source->stop();
}

void BackendServer::wait()
{
    if (m_server) {
        m_server->Wait();
    }
}

} // namespace fleetscope::backend
