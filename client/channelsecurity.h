// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

#include <memory>
#include <string>

namespace grpc {
class Channel;
class ChannelArguments;
class Status;
} // namespace grpc

namespace fleetscope {

// How the console proves itself to the backend and checks the backend: files only, never the secrets themselves, so
// that a view string, a log line or the command line never holds one.
struct ChannelSecurity
{
    QString caFile; // PEM CAs that may sign the backend's certificate; empty: the system's (when TLS is on)
    QString certFile; // the console's own certificate (mutual TLS), with keyFile
    QString keyFile;
    QString tokenFile; // a bearer token (the first word of the first non-comment line), read again for each call

    // TLS is on when any of them is given: a token or a client key is never sent in clear text.
    bool tls() const { return !caFile.isEmpty() || !certFile.isEmpty() || !keyFile.isEmpty() || !tokenFile.isEmpty(); }
    bool operator==(const ChannelSecurity &other) const
    {
        return caFile == other.caFile && certFile == other.certFile && keyFile == other.keyFile
            && tokenFile == other.tokenFile;
    }
    bool operator!=(const ChannelSecurity &other) const { return !(*this == other); }
};

// The largest message the console takes from a backend: the contract keeps every message under 4 MiB (the backend's
// largest, a frame part of 32,768 GPUs with every metric, is 3.4 MiB), and 1 MiB more is room. Each byte can cost
// protobuf's parser fifty or more (an empty node or plane is two bytes on the wire and an object of a hundred in
// memory): at 16 MiB, which the console once took, one message of empty entries made about a GB before any check.
constexpr int maxReceiveMessageBytes = 5 << 20;

// A channel to address (HOST:PORT) with these credentials; null with an error that names the file when one cannot be
// read. The token goes with every call as "authorization: Bearer TOKEN", over TLS only (gRPC refuses to send call
// credentials over a channel without it).
std::shared_ptr<grpc::Channel> createChannel(
    const std::string &address, const ChannelSecurity &security, const grpc::ChannelArguments &args, QString *error);

// Why a call was refused, for people: "no token", "token refused", "certificate not trusted", "hostname mismatch",
// "client certificate refused", "the backend speaks TLS", … followed by the detail; empty when the status is not a
// refusal of the connection or the credentials.
QString describeRefusal(const grpc::Status &status, const ChannelSecurity &security);
// describeRefusal's words when the status is a refusal, else describeStatus's (client/grpcstatus.h).
QString describeCall(const grpc::Status &status, const ChannelSecurity &security);

} // namespace fleetscope
