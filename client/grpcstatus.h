// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/wiretext.h"

#include <QString>

#include <grpcpp/support/status.h>

namespace fleetscope {

// A call's or stream's end for people: "backend unavailable (…)", "backend did not answer in time", … The status's
// message is the backend's text (or gRPC's): cut and printable, as any text from the wire (wiretext.h).
inline QString describeStatus(const grpc::Status &status)
{
    switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
        return QStringLiteral("backend unavailable (%1)").arg(wireText(status.error_message(), maxMessageText));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
        return QStringLiteral("backend did not answer in time");
    case grpc::StatusCode::OK:
        return QStringLiteral("the backend ended the stream");
    default:
        return QStringLiteral("backend error %1: %2")
            .arg(static_cast<int>(status.error_code()))
            .arg(wireText(status.error_message(), maxMessageText));
    }
}

} // namespace fleetscope
