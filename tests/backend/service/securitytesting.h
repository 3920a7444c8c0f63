// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the suites of who may call the backend share (tst_security, tst_accessgate, tst_standardservices): a small
// simulated fleet served on loopback, one call through the console's channel code, and the token files and
// certificates they are made with (certificates by the openssl tool, tests/backend/testing/testcertificates.h).
#include "client/channelsecurity.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/testcertificates.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QFile>
#include <QObject>

#include <chrono>
#include <memory>
#include <string>

namespace fleetscope::testing {

inline backend::SimulationOptions smallFleet()
{
    backend::SimulationOptions options;
    options.gpuCount = 64;
    return options;
}

inline std::unique_ptr<backend::BackendServer> serve(const backend::BackendServer::Security &security, QString *error)
{
    auto server = std::make_unique<backend::BackendServer>(backend::simulatedSource(smallFleet()), security);
    std::string why;
    if (!server->start("127.0.0.1:0", &why)) {
        *error = QString::fromStdString(why);
        return nullptr;
    }
    return server;
}

// One unary call through the console's channel; its status.
inline grpc::Status listMetrics(const std::string &address, const ChannelSecurity &security)
{
    QString error;
    auto channel = createChannel(address, security, grpc::ChannelArguments(), &error);
    if (!channel) {
        return { grpc::StatusCode::INVALID_ARGUMENT, error.toStdString() };
    }
    auto stub = telemetry::v1::Telemetry::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    telemetry::v1::ListMetricsResponse response;
    return stub->ListMetrics(&context, telemetry::v1::ListMetricsRequest(), &response);
}

// The suites' token files and certificates: the backend's tokens ("s3cret-one" and "other-token", readable by their
// owner only, as a token file should be: one others may read is a warning, which the gate's logs would count), a
// console's good token and a wrong one.
class SecuritySuite : public QObject
{
protected:
    // The token files; false if one could not be written.
    bool writeTokens()
    {
        m_goodToken = m_certificates.write(QStringLiteral("console.token"), "# the wall's token\n s3cret-one \n");
        m_wrongToken = m_certificates.write(QStringLiteral("wrong.token"), "not-the-token\n");
        m_backendTokens = writeTokenFile(QStringLiteral("backend.tokens"), "# consoles\ns3cret-one\nother-token\n");
        return !m_goodToken.isEmpty() && !m_wrongToken.isEmpty() && !m_backendTokens.isEmpty();
    }

    // A backend's token file, readable by its owner only; its path, or empty when it could not be written.
    QString writeTokenFile(const QString &name, const QByteArray &text) const
    {
        const QString path = m_certificates.write(name, text);
        return !path.isEmpty() && QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner) ? path : QString();
    }

    // TLS with the "server" certificate from "ca", and the backend's tokens (after m_certificates.make()).
    backend::BackendServer::Security tlsWithTokens() const
    {
        backend::BackendServer::Security security;
        security.tlsCertFile = m_certificates.crt(QStringLiteral("server")).toStdString();
        security.tlsKeyFile = m_certificates.key(QStringLiteral("server")).toStdString();
        security.access.tokenFile = m_backendTokens.toStdString();
        return security;
    }

    TestCertificates m_certificates;
    QString m_goodToken;
    QString m_wrongToken;
    QString m_backendTokens;
};

} // namespace fleetscope::testing
