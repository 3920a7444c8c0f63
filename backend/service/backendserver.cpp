// SPDX-License-Identifier: Apache-2.0
#include "service/backendserver.h"

#include "service/healthreport.h"
#include "service/reflectiongate.h"
#include "service/telemetryservice.h"

#include "common/keepalive.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace fleetscope::backend {

namespace {
bool readPem(const std::string &path, const char *what, std::string *text, std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) {
        *error = fmt::format("cannot read the {} '{}'", what, path);
        return false;
    }
    *text = bytes.str();
    return true;
}

struct BioDeleter
{
    void operator()(BIO *bio) const { BIO_free(bio); }
};
struct X509Deleter
{
    void operator()(X509 *x) const { X509_free(x); }
};
struct KeyDeleter
{
    void operator()(EVP_PKEY *key) const { EVP_PKEY_free(key); }
};

std::unique_ptr<BIO, BioDeleter> memoryBio(const std::string &text)
{
    return std::unique_ptr<BIO, BioDeleter>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The certificate chain and key as gRPC will use them, checked first so that a wrong file is named at start (gRPC
// itself only fails to build the server): the first certificate parses, the key parses and belongs to it.
bool checkCertificateAndKey(
    const std::string &certificate, const std::string &key, const BackendServer::Security &s, std::string *error)
{
    std::unique_ptr<X509, X509Deleter> cert(PEM_read_bio_X509(memoryBio(certificate).get(), nullptr, nullptr, nullptr));
    if (!cert) {
        *error = fmt::format("--tls-cert '{}' holds no PEM certificate", s.tlsCertFile);
        return false;
    }
    std::unique_ptr<EVP_PKEY, KeyDeleter> pkey(
        PEM_read_bio_PrivateKey(memoryBio(key).get(), nullptr, nullptr, nullptr));
    if (!pkey) {
        *error = fmt::format("--tls-key '{}' holds no PEM private key (or one with a passphrase)", s.tlsKeyFile);
        return false;
    }
    if (X509_check_private_key(cert.get(), pkey.get()) != 1) {
        *error = fmt::format(
            "--tls-key '{}' is not the key of the certificate in --tls-cert '{}'", s.tlsKeyFile, s.tlsCertFile);
        return false;
    }
    ERR_clear_error();
    return true;
}

BackendServer::Security withClientCertificates(BackendServer::Security security)
{
    security.access.requireClientCertificate = !security.tlsClientCaFile.empty();
    return security;
}
} // namespace

BackendServer::BackendServer(std::unique_ptr<FrameSource> source)
    : BackendServer(std::move(source), Security())
{ }

BackendServer::BackendServer(std::unique_ptr<FrameSource> source, Security security)
    : m_security(withClientCertificates(std::move(security)))
    , m_gate(std::make_unique<AccessGate>(m_security.access))
    , m_audit(std::make_unique<AuditLog>())
    , m_source(std::move(source))
    , m_service(std::make_unique<TelemetryService>(*m_source, m_gate.get()))
{ }

void BackendServer::setAlertDesk(AlertDesk *desk)
{
    m_service->setAlertDesk(desk, m_audit.get());
}

void BackendServer::setTopologyAhead(uint64_t generation, std::future<SharedEncodings::TopologyParts> parts)
{
    m_service->setTopologyAhead(generation, std::move(parts));
}

bool BackendServer::isLoopback(const std::string &host)
{
    std::string bare = host;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
        bare = bare.substr(1, bare.size() - 2);
    }
    // 127.0.0.0/8 as a dotted address (not a host name that happens to start with "127.").
    const bool dotted = !bare.empty()
        && std::all_of(bare.begin(), bare.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    return bare == "localhost" || bare == "::1" || (dotted && bare.rfind("127.", 0) == 0);
}

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
    const Security &security = m_security;
    if (!security.tls()
        && (!security.tlsKeyFile.empty() || !security.tlsClientCaFile.empty() || !security.access.tokenFile.empty())) {
        *error = "a client CA, a key or a token file needs TLS: give --tls-cert and --tls-key";
        return false;
    }
    if (!isLoopback(m_host) && !(security.tls() && security.authenticates()) && !security.insecureListen) {
        *error = fmt::format("refusing to serve {} without TLS and a token file or client CA: anyone who reaches the "
                             "port would read the whole fleet. Give --tls-cert, --tls-key and --token-file (or "
                             "--tls-client-ca), listen on 127.0.0.1, or say --insecure-listen",
            address);
        return false;
    }
    if (!m_gate->load(error)) {
        return false;
    }
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (security.tls()) {
        std::string certificate;
        std::string key;
        if (security.tlsKeyFile.empty()) {
            *error = "--tls-cert needs --tls-key";
            return false;
        }
        if (!readPem(security.tlsCertFile, "certificate (--tls-cert)", &certificate, error)
            || !readPem(security.tlsKeyFile, "key (--tls-key)", &key, error)
            || !checkCertificateAndKey(certificate, key, security, error)) {
            return false;
        }
        // Verified if presented, its absence answered by the gate as UNAUTHENTICATED (a clearer refusal than a failed
        // handshake); a certificate from another CA fails the handshake.
        grpc::SslServerCredentialsOptions options(security.tlsClientCaFile.empty()
                ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
        if (!security.tlsClientCaFile.empty()
            && !readPem(security.tlsClientCaFile, "client CA (--tls-client-ca)", &options.pem_root_certs, error)) {
            return false;
        }
        options.pem_key_cert_pairs.push_back({ key, certificate });
        credentials = grpc::SslServerCredentials(options);
    }
    // gRPC's own health service, answered outside the Telemetry service and so outside the gate (see the class). The
    // switch is process-wide and read when a server is built.
    grpc::EnableDefaultHealthCheckService(true);
    // Reflection likewise (a builder plugin, process-wide), but behind the gate.
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, credentials, &m_port);
    builder.RegisterService(m_service.get());
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(std::make_unique<ReflectionGate>(*m_gate));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    // Frames are sent in parts under 4 MiB; keep gRPC's limit where the contract says it is.
    builder.SetMaxSendMessageSize(4 * 1024 * 1024);
    // Consoles probe a quiet stream with pings (their keepalive); accept them as often as a console may send them,
    // with room for timers' jitter, even between calls, rather than answer GOAWAY "too_many_pings".
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, keepalive::minTimeMs / 2);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    m_server = builder.BuildAndStart();
    if (!m_server || m_port == 0) {
        m_server.reset();
        *error = fmt::format("cannot listen on {} (address in use or not local?)", address);
        return false;
    }
    // gRPC's health service starts out SERVING for the server as a whole (""); NOT_SERVING at once, a few
    // microseconds after the port opened and long before a probe's handshake can finish, then as HealthReport says.
    // The Telemetry service by its name says the same.
    if (grpc::HealthCheckServiceInterface *health = m_server->GetHealthCheckService()) {
        const auto report = [health](bool serving) {
            health->SetServingStatus("", serving);
            health->SetServingStatus(fleetscope::telemetry::v1::Telemetry::service_full_name(), serving);
        };
        report(false);
        m_health = std::make_unique<HealthReport>(*m_source, report);
    }
    return true;
}

std::string BackendServer::listeningAddress() const
{
    return fmt::format("{}:{}", m_host, m_port);
}

void BackendServer::stop()
{
    if (m_health) {
        m_health->stop(); // Shutdown() says NOT_SERVING for good
        m_health.reset();
    }
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
