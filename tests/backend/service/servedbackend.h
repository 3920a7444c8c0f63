// SPDX-License-Identifier: Apache-2.0
// A simulated backend serving gRPC on a free loopback port, and a stub talking to it, for the service's tests.
#pragma once

#include "service/backendserver.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QtGlobal>

#include <memory>
#include <string>

namespace fleetscope::testing {

struct ServedBackend
{
    std::unique_ptr<backend::BackendServer> server;
    std::unique_ptr<telemetry::v1::Telemetry::Stub> stub;
};

// The stub takes answers up to maxReceiveBytes (more than the contract's limit lets a test see an oversized one).
inline ServedBackend serveSimulation(const backend::SimulationOptions &options, int maxReceiveBytes = 16 << 20)
{
    ServedBackend b;
    b.server = std::make_unique<backend::BackendServer>(backend::simulatedSource(options));
    std::string error;
    if (!b.server->start("127.0.0.1:0", &error)) {
        qFatal("backend did not start: %s", error.c_str());
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(maxReceiveBytes);
    b.stub = telemetry::v1::Telemetry::NewStub(
        grpc::CreateCustomChannel(b.server->listeningAddress(), grpc::InsecureChannelCredentials(), args));
    return b;
}

} // namespace fleetscope::testing
