// SPDX-License-Identifier: Apache-2.0
#include "service/reflectiongate.h"

#include <cstring>

#include <google/protobuf/message.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>

namespace fleetscope::backend {

namespace {
using grpc::experimental::InterceptionHookPoints;

void appendVarint(std::string *out, uint64_t value)
{
    while (value >= 0x80) {
        out->push_back(static_cast<char>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out->push_back(static_cast<char>(value));
}

// A field of wire type 2 (length-delimited).
void appendBytes(std::string *out, uint32_t field, const std::string &bytes)
{
    appendVarint(out, (uint64_t { field } << 3) | 2);
    appendVarint(out, bytes.size());
    *out += bytes;
}

} // namespace

// One reflection call's: its admission (held for the call's life, as a stream's slot), and while it is refused the
// rewriting described in the header.
class ReflectionCall final : public grpc::experimental::Interceptor
{
public:
    ReflectionCall(ReflectionGate &owner, grpc::experimental::ServerRpcInfo *info)
        : m_owner(owner)
        , m_info(info)
    { }
    ~ReflectionCall() override
    {
        if (m_counted) {
            --m_owner.m_refusedOpen;
        }
    }
    ReflectionCall(const ReflectionCall &) = delete;
    ReflectionCall &operator=(const ReflectionCall &) = delete;

    void Intercept(grpc::experimental::InterceptorBatchMethods *methods) override
    {
        if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
            // Before the handler runs: the sync server runs this batch, then the method.
            m_admission
                = m_owner.m_gate.admit(m_info->server_context(), "ServerReflectionInfo", AccessGate::Call::Stream);
            if (!m_admission.ok()) {
                if (++m_owner.m_refusedOpen > ReflectionGate::maxRefusedOpen) {
                    --m_owner.m_refusedOpen;
                    // Runs this interceptor again with a cancel batch, which the checks below let through.
                    m_info->server_context()->TryCancel();
                } else {
                    m_counted = true;
                }
            }
        }
        if (!m_admission.ok()) {
            if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
                // The request, deserialized: a ServerReflectionRequest, whose one base is google::protobuf::Message
                // (at its start, single inheritance), which is all that is needed to empty it without its header.
                if (void *request = methods->GetRecvMessage()) {
                    static_cast<google::protobuf::Message *>(request)->Clear();
                }
            }
            if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
                if (grpc::ByteBuffer *answer = methods->GetSerializedSendMessage()) {
                    const std::string refusal = ReflectionGate::errorResponse(m_admission.status());
                    grpc::Slice slice(refusal);
                    *answer = grpc::ByteBuffer(&slice, 1);
                }
            }
            if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
                methods->ModifySendStatus(m_admission.status());
            }
        }
        methods->Proceed();
    }

private:
    ReflectionGate &m_owner;
    grpc::experimental::ServerRpcInfo *m_info;
    AccessGate::Admission m_admission;
    bool m_counted = false; // one of the refused calls open
};

grpc::experimental::Interceptor *ReflectionGate::CreateServerInterceptor(grpc::experimental::ServerRpcInfo *info)
{
    if (std::strcmp(info->method(), method) != 0) {
        return nullptr;
    }
    return new ReflectionCall(*this, info); // gRPC owns it for the call
}

std::string ReflectionGate::errorResponse(const grpc::Status &status)
{
    // ServerReflectionResponse { ErrorResponse error_response = 7; } and ErrorResponse { int32 error_code = 1;
    // string error_message = 2; }, as in grpc's reflection.proto (v1alpha).
    std::string error;
    appendVarint(&error, 1 << 3); // field 1, varint
    appendVarint(&error, static_cast<uint64_t>(status.error_code()));
    appendBytes(&error, 2, status.error_message());
    std::string response;
    appendBytes(&response, 7, error);
    return response;
}

} // namespace fleetscope::backend
