// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "service/accessgate.h"

#include <grpcpp/support/server_interceptor.h>

#include <atomic>
#include <string>

namespace fleetscope::backend {

// Server reflection (grpc.reflection.v1alpha.ServerReflection, gRPC's own from libgrpc++_reflection: what grpcurl lists
// and describes the API with) behind the AccessGate, as every Telemetry call is: it tells the API's shape, not the
// fleet, but a backend that asks for a token gives nothing to a caller without one, and a guess sent to reflection
// counts against the guesser's address as any other.
//
// gRPC's reflection service is not ours to change, and Debian's gRPC installs neither its header nor its proto, so it
// is gated from outside, by a server interceptor on its one method. An interceptor cannot refuse a call before its
// handler runs, nor drop what the handler writes; so for a refused call it empties every request as it arrives (the
// handler looks nothing up), puts the refusal in place of every answer (as reflection's own ErrorResponse, which
// grpcurl shows as the status it carries) and sends the refusal's status at the end instead of OK. Nothing of the API
// leaves. The other methods get no interceptor at all.
//
// A refused call stays open for as long as its caller keeps it (the handler waits for requests), and each open one
// holds a thread of the synchronous server: past maxRefusedOpen at once, further refused calls are cancelled at once
// (CANCELLED, the refusal only in the log), so that callers without credentials cannot pile up threads. Admitted calls
// hold a stream slot of their client's instead (--max-streams-per-client).
class ReflectionGate final : public grpc::experimental::ServerInterceptorFactoryInterface
{
public:
    static constexpr const char *method = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
    static constexpr int maxRefusedOpen = 16;

    explicit ReflectionGate(AccessGate &gate)
        : m_gate(gate)
    { }
    grpc::experimental::Interceptor *CreateServerInterceptor(grpc::experimental::ServerRpcInfo *info) override;

    // A ServerReflectionResponse holding only an ErrorResponse with status's code and message (its wire form).
    static std::string errorResponse(const grpc::Status &status);

private:
    friend class ReflectionCall;
    AccessGate &m_gate;
    std::atomic<int> m_refusedOpen { 0 }; // refused calls open now, any thread's
};

} // namespace fleetscope::backend
