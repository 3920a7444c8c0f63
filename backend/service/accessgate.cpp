// SPDX-License-Identifier: Apache-2.0
#include "service/accessgate.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include <fmt/format.h>
#include <grpcpp/server_context.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace fleetscope::backend {

namespace {
std::string_view trimmed(std::string_view text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// The longest token line read: a token is a secret of tens of bytes, not a document.
constexpr size_t maxTokenBytes = 4096;
constexpr size_t maxTokenFileBytes = 1 << 20;
constexpr auto logEvery = std::chrono::minutes(1);
// Client records kept for limits; past this, those with no stream open and a full bucket are forgotten.
constexpr size_t maxClientsKept = 4096;
constexpr std::string_view overflowClient = "(other addresses, past 4096)";
} // namespace

TokenFile::TokenFile(std::string path)
    : m_path(std::move(path))
{ }

TokenFile::Digest TokenFile::digest(std::string_view text)
{
    Digest out {};
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), out.data(), &length, EVP_sha256(), nullptr);
    return out;
}

bool TokenFile::parse(std::string_view text, std::string_view path, std::vector<Digest> *digests, std::string *error)
{
    digests->clear();
    std::istringstream lines { std::string(text) };
    size_t lineNumber = 0;
    for (std::string line; std::getline(lines, line);) {
        ++lineNumber;
        const auto token = trimmed(line);
        if (token.empty() || token.front() == '#') {
            continue;
        }
        if (token.size() > maxTokenBytes || token.find_first_of(" \t") != std::string_view::npos) {
            *error = fmt::format("the token file '{}', line {}: a token is one word of at most {} bytes", path,
                lineNumber, maxTokenBytes);
            return false;
        }
        digests->push_back(digest(token));
    }
    if (digests->empty()) {
        *error = fmt::format("the token file '{}' holds no token", path);
        return false;
    }
    return true;
}

bool TokenFile::load(std::string *error)
{
    std::lock_guard lock(m_mutex);
    struct stat info
    {
    };
    if (::stat(m_path.c_str(), &info) != 0) {
        *error = fmt::format("cannot read the token file '{}'", m_path);
        return false;
    }
    if (!S_ISREG(info.st_mode) || info.st_size > static_cast<off_t>(maxTokenFileBytes)) {
        *error = fmt::format("the token file '{}' is not a file of at most 1 MiB", m_path);
        return false;
    }
    std::ifstream in(m_path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        *error = fmt::format("cannot read the token file '{}'", m_path);
        return false;
    }
    std::vector<Digest> digests;
    if (!parse(text.str(), m_path, &digests, error)) {
        return false;
    }
    m_digests = std::move(digests);
    m_stamp = { static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec,
        static_cast<int64_t>(info.st_size), static_cast<uint64_t>(info.st_ino) };
    m_reportedBadFile = false;
    return true;
}

void TokenFile::reloadIfChanged()
{
    struct stat info
    {
    };
    Stamp now;
    {
        std::lock_guard lock(m_mutex);
        if (::stat(m_path.c_str(), &info) == 0) {
            now = { static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec,
                static_cast<int64_t>(info.st_size), static_cast<uint64_t>(info.st_ino) };
        }
        if (now == m_stamp) {
            return;
        }
    }
    std::string error;
    if (!load(&error)) {
        std::lock_guard lock(m_mutex);
        if (!m_reportedBadFile) {
            m_reportedBadFile = true;
            fmt::print(
                stderr, "fleetscope-backend: {}; keeping the {} token(s) read before\n", error, m_digests.size());
        }
        m_stamp = now; // said once; read again when it changes again
    }
}

bool TokenFile::accepts(std::string_view token)
{
    reloadIfChanged();
    const Digest presented = digest(token);
    std::lock_guard lock(m_mutex);
    int matches = 0;
    for (const auto &known : m_digests) { // every digest compared, in constant time each
        matches |= CRYPTO_memcmp(known.data(), presented.data(), presented.size()) == 0 ? 1 : 0;
    }
    return matches != 0;
}

size_t TokenFile::count()
{
    std::lock_guard lock(m_mutex);
    return m_digests.size();
}

AccessGate::AccessGate() = default;

AccessGate::AccessGate(Options options, Log log, Clock clock)
    : m_options(std::move(options))
    , m_log(std::move(log))
    , m_clock(std::move(clock))
    , m_open(false)
{
    if (!m_log) {
        m_log = [](const std::string &line) { fmt::print(stderr, "fleetscope-backend: {}\n", line); };
    }
    if (!m_clock) {
        m_clock = [] { return std::chrono::steady_clock::now(); };
    }
    if (!m_options.tokenFile.empty()) {
        m_tokens = std::make_unique<TokenFile>(m_options.tokenFile);
    }
}

AccessGate::~AccessGate() = default;

bool AccessGate::load(std::string *error)
{
    return !m_tokens || m_tokens->load(error);
}

std::string AccessGate::clientAddress(std::string_view peer)
{
    const auto kind = peer.find(':');
    if (kind == std::string_view::npos) {
        return std::string(peer);
    }
    std::string_view rest = peer.substr(kind + 1);
    if (!rest.empty() && rest.front() == '[') {
        const auto close = rest.find(']');
        return std::string(rest.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
    }
    const auto port = rest.rfind(':');
    return std::string(port == std::string_view::npos ? rest : rest.substr(0, port));
}

AccessGate::Admission AccessGate::admit(grpc::ServerContext *context, std::string_view method, Call call)
{
    if (m_open) {
        return {};
    }
    std::string_view authorization;
    const auto &metadata = context->client_metadata();
    if (const auto found = metadata.find("authorization"); found != metadata.end()) {
        authorization = { found->second.data(), found->second.size() };
    }
    bool certificate = false;
    if (m_options.requireClientCertificate) {
        const auto auth = context->auth_context();
        certificate = auth && !auth->FindPropertyValues("x509_pem_cert").empty();
    }
    return admit(context->peer(), authorization, certificate, method, call);
}

AccessGate::Admission AccessGate::admit(std::string_view peer, std::string_view authorization,
    bool hasClientCertificate, std::string_view method, Call call)
{
    Admission admission;
    if (m_open) {
        return admission;
    }
    const std::string address = clientAddress(peer);
    const auto now = m_clock();

    // The credentials first, outside the lock (the token file may be read again).
    grpc::StatusCode refusal = grpc::StatusCode::OK;
    std::string reason;
    std::string message;
    if (m_options.requireClientCertificate && !hasClientCertificate) {
        refusal = grpc::StatusCode::UNAUTHENTICATED;
        reason = "no client certificate";
        message = "this backend takes only clients with a certificate from its client CA; none was presented";
    } else if (m_tokens) {
        constexpr std::string_view scheme = "bearer ";
        const bool bearer = authorization.size() > scheme.size()
            && std::equal(scheme.begin(), scheme.end(), authorization.begin(),
                [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
        if (!bearer) {
            refusal = grpc::StatusCode::UNAUTHENTICATED;
            reason = "no token";
            message = "this backend needs a token: 'authorization: Bearer TOKEN' (the console's --token-file)";
        } else if (!m_tokens->accepts(trimmed(authorization.substr(scheme.size())))) {
            refusal = grpc::StatusCode::PERMISSION_DENIED;
            reason = "token refused";
            message = "the token is not one this backend accepts";
        }
    }

    std::lock_guard lock(m_mutex);
    if (m_clients.size() >= maxClientsKept && m_clients.find(address) == m_clients.end()) {
        forgetIdleClients(now);
    }
    // Past maxClientsKept busy addresses (a flood from many), the new ones share one record: memory stays bounded, and
    // they are limited and logged together.
    const bool room = m_clients.size() < maxClientsKept || m_clients.find(address) != m_clients.end();
    const std::string key = room ? address : std::string(overflowClient);
    auto [found, added] = m_clients.try_emplace(key);
    Client &client = found->second;
    const double rate = m_options.maxCallsPerSecondPerClient;
    if (added) {
        client.tokens = 2 * rate;
        client.refilled = now;
    }
    if (refusal != grpc::StatusCode::OK) {
        admission.m_status = refuse(client, key, refusal, reason, fmt::format("{} ({})", message, method), now);
        return admission;
    }
    if (rate > 0) {
        const double elapsed = std::chrono::duration<double>(now - client.refilled).count();
        client.tokens = std::min(2 * rate, client.tokens + elapsed * rate);
        client.refilled = now;
        if (client.tokens < 1) {
            admission.m_status = refuse(client, address, grpc::StatusCode::RESOURCE_EXHAUSTED, "call rate",
                fmt::format("more than {} calls a second from {} (--max-calls-per-second); {} refused",
                    m_options.maxCallsPerSecondPerClient, address, method),
                now);
            return admission;
        }
        client.tokens -= 1;
    }
    if (call == Call::Stream && m_options.maxStreamsPerClient > 0) {
        if (client.streams >= m_options.maxStreamsPerClient) {
            admission.m_status = refuse(client, address, grpc::StatusCode::RESOURCE_EXHAUSTED, "streams",
                fmt::format("{} streams already open from {}, the most a client may have (--max-streams-per-client); "
                            "{} refused",
                    m_options.maxStreamsPerClient, address, method),
                now);
            return admission;
        }
        ++client.streams;
        admission.m_gate = this;
        admission.m_client = key;
    }
    return admission;
}

grpc::Status AccessGate::refuse(Client &client, const std::string &address, grpc::StatusCode code, std::string reason,
    std::string message, std::chrono::steady_clock::time_point now)
{
    auto [logged, first] = client.lastLogged.try_emplace(reason, now);
    if (first || now - logged->second >= logEvery) {
        logged->second = now;
        m_log(
            fmt::format("refused a call from {}: {} (said once a minute for this client and reason)", address, reason));
    }
    return { code, std::move(message) };
}

void AccessGate::release(const std::string &client)
{
    std::lock_guard lock(m_mutex);
    if (auto found = m_clients.find(client); found != m_clients.end() && found->second.streams > 0) {
        --found->second.streams;
    }
}

void AccessGate::forgetIdleClients(std::chrono::steady_clock::time_point now)
{
    const double rate = m_options.maxCallsPerSecondPerClient;
    for (auto it = m_clients.begin(); it != m_clients.end();) {
        const Client &client = it->second;
        const double elapsed = std::chrono::duration<double>(now - client.refilled).count();
        const bool idle = client.streams == 0 && (rate <= 0 || client.tokens + elapsed * rate >= 2 * rate)
            && std::all_of(client.lastLogged.begin(), client.lastLogged.end(),
                [now](const auto &entry) { return now - entry.second >= logEvery; });
        it = idle ? m_clients.erase(it) : std::next(it);
    }
}

size_t AccessGate::openStreams(const std::string &client)
{
    std::lock_guard lock(m_mutex);
    const auto found = m_clients.find(client);
    return found == m_clients.end() ? 0 : found->second.streams;
}

AccessGate::Admission::Admission(Admission &&other) noexcept
    : m_status(std::move(other.m_status))
    , m_gate(std::exchange(other.m_gate, nullptr))
    , m_client(std::move(other.m_client))
{ }

AccessGate::Admission &AccessGate::Admission::operator=(Admission &&other) noexcept
{
    if (this != &other) {
        if (m_gate) {
            m_gate->release(m_client);
        }
        m_status = std::move(other.m_status);
        m_gate = std::exchange(other.m_gate, nullptr);
        m_client = std::move(other.m_client);
    }
    return *this;
}

AccessGate::Admission::~Admission()
{
    if (m_gate) {
        m_gate->release(m_client);
    }
}

} // namespace fleetscope::backend
