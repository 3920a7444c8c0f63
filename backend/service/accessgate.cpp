// SPDX-License-Identifier: Apache-2.0
#include "service/accessgate.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <time.h>

#include <fmt/format.h>
#include <grpcpp/server_context.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace fleetscope::backend {

using namespace std::chrono_literals;

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
constexpr std::string_view overflowClient = "(other addresses, past 4096)";
constexpr std::string_view untrackedClients = "(addresses past the 16384 whose refusals are tracked)";

int64_t nanoseconds(const struct timespec &t)
{
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

TokenFile::Stamp stampOf(const struct stat &info)
{
    return { nanoseconds(info.st_mtim), nanoseconds(info.st_ctim), static_cast<int64_t>(info.st_size),
        static_cast<uint64_t>(info.st_ino), static_cast<uint32_t>(info.st_mode) };
}

void toStderr(const std::string &line)
{
    fmt::print(stderr, "fleetscope-backend: {}\n", line);
}

std::chrono::steady_clock::time_point steadyNow()
{
    return std::chrono::steady_clock::now();
}
} // namespace

TokenFile::TokenFile(std::string path, Log log, Clock clock)
    : m_path(std::move(path))
    , m_log(log ? std::move(log) : Log(toStderr))
    , m_clock(clock ? std::move(clock) : Clock(steadyNow))
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

bool TokenFile::Stamp::fresh() const
{
    struct timespec now
    {
    };
    clock_gettime(CLOCK_REALTIME, &now);
    return nanoseconds(now) - std::max(mtimeNs, ctimeNs) < 1'000'000'000;
}

bool TokenFile::read(std::vector<Digest> *digests, Stamp *stamp, std::string *error) const
{
    struct stat info
    {
    };
    *stamp = Stamp();
    if (::stat(m_path.c_str(), &info) != 0) {
        *error = fmt::format("cannot read the token file '{}'", m_path);
        return false;
    }
    *stamp = stampOf(info);
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
    return parse(text.str(), m_path, digests, error);
}

void TokenFile::warnIfOthersMayRead(const Stamp &stamp) const
{
    // Looked at from the mode, not from who we are: the question is who else on the host can read it.
    if ((stamp.mode & (S_IRGRP | S_IROTH)) != 0) {
        m_log(fmt::format("warning: the token file '{}' may be read by {} (mode {:04o}): whoever can read it can read "
                          "the fleet; chmod 600 it (in Kubernetes, the secret volume's defaultMode 0400)",
            m_path, (stamp.mode & S_IROTH) != 0 ? "every account on this host" : "its group", stamp.mode & 07777));
    }
}

bool TokenFile::load(std::string *error)
{
    std::vector<Digest> digests;
    Stamp stamp;
    const bool good = read(&digests, &stamp, error);
    if (good) {
        warnIfOthersMayRead(stamp);
    }
    std::lock_guard lock(m_mutex);
    m_lastLook = m_clock();
    m_stamp = stamp;
    m_stampFresh = stamp.fresh();
    if (!good) {
        m_digests.clear();
        m_problem = *error;
        return false;
    }
    m_digests = std::move(digests);
    m_problem.clear();
    return true;
}

void TokenFile::lookForChange()
{
    Stamp seen;
    {
        std::lock_guard lock(m_mutex);
        const auto now = m_clock();
        if (now - m_lastLook < lookEvery) {
            return;
        }
        m_lastLook = now; // the one caller this second that looks; the others go on with what is held
    }
    struct stat info
    {
    };
    if (::stat(m_path.c_str(), &info) == 0) {
        seen = stampOf(info);
    }
    {
        std::lock_guard lock(m_mutex);
        // Read again also while the file is wrong (it may be put right within the stamp's granularity), and when the
        // stamp read last was too fresh to trust.
        if (seen == m_stamp && m_problem.empty() && !m_stampFresh) {
            return;
        }
    }
    std::vector<Digest> digests;
    Stamp stamp;
    std::string error;
    const bool good = read(&digests, &stamp, &error);
    std::lock_guard lock(m_mutex);
    const bool changed = !(stamp == m_stamp);
    m_stamp = stamp;
    m_stampFresh = stamp.fresh();
    if (!good) {
        m_digests.clear();
        if (error != m_problem) {
            m_log(fmt::format("{}: every call is refused until it is put right", error));
        }
        m_problem = std::move(error);
        return;
    }
    if (changed || !m_problem.empty()) {
        warnIfOthersMayRead(stamp);
    }
    if (!m_problem.empty()) {
        m_log(fmt::format(
            "the token file '{}' holds {} token(s) again: calls are admitted again", m_path, digests.size()));
    }
    m_problem.clear();
    m_digests = std::move(digests);
}

TokenFile::Verdict TokenFile::check(std::string_view token)
{
    lookForChange();
    const Digest presented = digest(token);
    std::lock_guard lock(m_mutex);
    if (!m_problem.empty()) {
        return Verdict::Unusable;
    }
    int matches = 0;
    for (const auto &known : m_digests) { // every digest compared, in constant time each
        matches |= CRYPTO_memcmp(known.data(), presented.data(), presented.size()) == 0 ? 1 : 0;
    }
    return matches != 0 ? Verdict::Accepted : Verdict::Refused;
}

std::string TokenFile::problem()
{
    std::lock_guard lock(m_mutex);
    return m_problem;
}

size_t TokenFile::count()
{
    std::lock_guard lock(m_mutex);
    return m_digests.size();
}

AccessGate::AccessGate() = default;

AccessGate::AccessGate(Options options, Log log, Clock clock)
    : m_options(std::move(options))
    , m_log(log ? std::move(log) : Log(toStderr))
    , m_clock(clock ? std::move(clock) : Clock(steadyNow))
    , m_lineBudgetRefilled(m_clock())
    , m_open(false)
{
    if (!m_options.tokenFile.empty()) {
        m_tokens = std::make_unique<TokenFile>(m_options.tokenFile, m_log, m_clock);
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

AccessGate::Admission AccessGate::admit(grpc::ServerContextBase *context, std::string_view method, Call call)
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

grpc::Status AccessGate::checkCredentials(
    std::string_view authorization, bool hasClientCertificate, std::string_view method, Reason *reason)
{
    if (m_options.requireClientCertificate && !hasClientCertificate) {
        *reason = Reason::NoCertificate;
        return { grpc::StatusCode::UNAUTHENTICATED,
            fmt::format("this backend takes only clients with a certificate from its client CA; none was presented "
                        "({})",
                method) };
    }
    if (!m_tokens) {
        return grpc::Status::OK;
    }
    constexpr std::string_view scheme = "bearer ";
    const bool bearer = authorization.size() > scheme.size()
        && std::equal(scheme.begin(), scheme.end(), authorization.begin(),
            [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
    // The file's state before the caller's part: while it is wrong, every call hears so, with a token or without.
    const auto verdict = m_tokens->check(bearer ? trimmed(authorization.substr(scheme.size())) : std::string_view {});
    if (verdict == TokenFile::Verdict::Unusable) {
        *reason = Reason::TokenFileWrong;
        // Not the path nor what is wrong with it: that is for the backend's log, not for whoever calls.
        return { grpc::StatusCode::UNAVAILABLE,
            fmt::format("this backend cannot check tokens now: its token file is missing, empty or unreadable, and "
                        "every call is refused until its operator puts it right ({})",
                method) };
    }
    if (!bearer) {
        *reason = Reason::NoToken;
        return { grpc::StatusCode::UNAUTHENTICATED,
            fmt::format("this backend needs a token: 'authorization: Bearer TOKEN' (the console's --token-file) ({})",
                method) };
    }
    if (verdict == TokenFile::Verdict::Refused) {
        *reason = Reason::TokenRefused;
        return { grpc::StatusCode::PERMISSION_DENIED,
            fmt::format("the token is not one this backend accepts ({})", method) };
    }
    return grpc::Status::OK;
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
    const double refusalsAMinute = m_options.maxRefusalsPerMinutePerClient;

    // An address past its refusals is refused before its credentials are looked at: a guess answered there would tell
    // a guesser whether it was right, and looking costs a digest (and, once a second, the token file).
    if (refusalsAMinute > 0) {
        std::lock_guard lock(m_mutex);
        if (Refusals *refusals = refusalsOf(address, now); refusals && refusals->left < 1) {
            const auto wait = std::chrono::ceil<std::chrono::seconds>(
                std::chrono::duration<double>((1 - refusals->left) * 60 / refusalsAMinute));
            logRefusal(&refusals->lastLogged, address, Reason::TooManyRefusals, now);
            admission.m_status = { grpc::StatusCode::RESOURCE_EXHAUSTED,
                fmt::format("more than {} refused calls a minute from {}: its calls are refused without a look at "
                            "their credentials for the next {} s; {} refused",
                    m_options.maxRefusalsPerMinutePerClient, address, wait.count(), method) };
            return admission;
        }
    }

    // The credentials outside the lock (the token file may be read again).
    Reason reason = Reason::Count;
    if (auto refused = checkCredentials(authorization, hasClientCertificate, method, &reason); !refused.ok()) {
        std::lock_guard lock(m_mutex);
        if (reason == Reason::TokenFileWrong) {
            // No caller's doing, so not held against the address; one line a minute, whoever calls.
            logRefusal(&m_tokenFileLogged, address, reason, now);
        } else if (Refusals *refusals = chargeRefusal(address, now)) {
            logRefusal(&refusals->lastLogged, address, reason, now);
        } else {
            logRefusal(&m_untrackedLogged, std::string(untrackedClients), reason, now);
        }
        admission.m_status = std::move(refused);
        return admission;
    }

    std::lock_guard lock(m_mutex);
    if (m_clients.size() >= maxClientsKept && m_clients.find(address) == m_clients.end()) {
        forgetIdleClients(now);
    }
    // Past maxClientsKept busy admitted addresses (only possible without credentials, or with that many consoles), the
    // new ones share one record: memory stays bounded, and they are limited and logged together.
    const bool room = m_clients.size() < maxClientsKept || m_clients.find(address) != m_clients.end();
    const std::string key = room ? address : std::string(overflowClient);
    auto [found, added] = m_clients.try_emplace(key);
    Client &client = found->second;
    const double rate = m_options.maxCallsPerSecondPerClient;
    if (added) {
        client.tokens = 2 * rate;
        client.refilled = now;
    }
    if (rate > 0) {
        const double elapsed = std::chrono::duration<double>(now - client.refilled).count();
        client.tokens = std::min(2 * rate, client.tokens + elapsed * rate);
        client.refilled = now;
        if (client.tokens < 1) {
            logRefusal(&client.lastLogged, key, Reason::CallRate, now);
            admission.m_status = { grpc::StatusCode::RESOURCE_EXHAUSTED,
                fmt::format("more than {} calls a second from {} (--max-calls-per-second); {} refused",
                    m_options.maxCallsPerSecondPerClient, address, method) };
            return admission;
        }
        client.tokens -= 1;
    }
    if (call == Call::Stream && m_options.maxStreamsPerClient > 0) {
        if (client.streams >= m_options.maxStreamsPerClient) {
            logRefusal(&client.lastLogged, key, Reason::Streams, now);
            admission.m_status = { grpc::StatusCode::RESOURCE_EXHAUSTED,
                fmt::format("{} streams already open from {}, the most a client may have (--max-streams-per-client); "
                            "{} refused",
                    m_options.maxStreamsPerClient, address, method) };
            return admission;
        }
        ++client.streams;
        admission.m_gate = this;
        admission.m_client = key;
    }
    return admission;
}

AccessGate::Refusals *AccessGate::refusalsOf(const std::string &address, std::chrono::steady_clock::time_point now)
{
    const auto found = m_refusals.find(address);
    if (found == m_refusals.end()) {
        return nullptr;
    }
    Refusals &refusals = found->second;
    const double burst = m_options.maxRefusalsPerMinutePerClient;
    const double elapsed = std::chrono::duration<double>(now - refusals.refilled).count();
    refusals.left = std::min(burst, refusals.left + elapsed * burst / 60);
    refusals.refilled = now;
    return &refusals;
}

AccessGate::Refusals *AccessGate::chargeRefusal(const std::string &address, std::chrono::steady_clock::time_point now)
{
    Refusals *refusals = refusalsOf(address, now);
    if (!refusals) {
        if (m_refusals.size() >= maxRefusalRecords) {
            forgetQuietRefusals(now);
        }
        // An address that holds an admitted record gets one however full the table is (at most maxClientsKept more):
        // a console's own address must not become a place to guess from without a limit.
        if (m_refusals.size() >= maxRefusalRecords && m_clients.find(address) == m_clients.end()) {
            return nullptr; // untracked: see the class comment
        }
        refusals = &m_refusals[address];
        refusals->left = m_options.maxRefusalsPerMinutePerClient;
        refusals->refilled = now;
    }
    refusals->left -= 1;
    refusals->lastRefused = now;
    return refusals;
}

void AccessGate::logRefusal(
    LastLogged *lastLogged, const std::string &address, Reason reason, std::chrono::steady_clock::time_point now)
{
    static constexpr std::array<std::string_view, static_cast<size_t>(Reason::Count)> words {
        "no client certificate",
        "no token",
        "token refused",
        "the token file is wrong",
        "too many refused calls",
        "call rate",
        "streams",
    };
    auto &logged = (*lastLogged)[static_cast<size_t>(reason)];
    if (logged != std::chrono::steady_clock::time_point {} && now - logged < logEvery) {
        return;
    }
    const double elapsed = std::chrono::duration<double>(now - m_lineBudgetRefilled).count();
    m_lineBudget = std::min<double>(refusalLinesBurst, m_lineBudget + elapsed);
    m_lineBudgetRefilled = now;
    if (m_lineBudget < 1) {
        ++m_linesLeftOut; // said with the next line written; this address and reason may be said then
        return;
    }
    m_lineBudget -= 1;
    logged = now;
    std::string line = fmt::format("refused a call from {}: {} (said once a minute for this client and reason)",
        address, words[static_cast<size_t>(reason)]);
    if (m_linesLeftOut > 0) {
        line += fmt::format("; {} more refusal line(s) left out before this one (at most one a second)",
            std::exchange(m_linesLeftOut, 0));
    }
    m_log(line);
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
            && std::all_of(client.lastLogged.begin(), client.lastLogged.end(), [now](const auto &when) {
                   return when == std::chrono::steady_clock::time_point {} || now - when >= logEvery;
               });
        it = idle ? m_clients.erase(it) : std::next(it);
    }
}

void AccessGate::forgetQuietRefusals(std::chrono::steady_clock::time_point now)
{
    // At most once a second: a flood from many addresses would otherwise walk the whole table at every call.
    if (m_lastRefusalSweep != std::chrono::steady_clock::time_point {} && now - m_lastRefusalSweep < 1s) {
        return;
    }
    m_lastRefusalSweep = now;
    // A record that has refused nothing for a minute has a full bucket again and has said its lines: it knows nothing a
    // new one would not.
    for (auto it = m_refusals.begin(); it != m_refusals.end();) {
        const bool quiet = now - it->second.lastRefused >= logEvery;
        it = quiet ? m_refusals.erase(it) : std::next(it);
    }
}

size_t AccessGate::openStreams(const std::string &client)
{
    std::lock_guard lock(m_mutex);
    const auto found = m_clients.find(client);
    return found == m_clients.end() ? 0 : found->second.streams;
}

size_t AccessGate::clientRecords()
{
    std::lock_guard lock(m_mutex);
    return m_clients.size();
}

size_t AccessGate::refusalRecords()
{
    std::lock_guard lock(m_mutex);
    return m_refusals.size();
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
