// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/support/status.h>

namespace grpc {
class ServerContext;
}

namespace fleetscope::backend {

// Bearer tokens, one per line of a file (blank lines and lines starting with '#' skipped, surrounding white space
// dropped). The file is read again when its modification time, size or inode changes, so that a rotated token needs no
// restart; a file that cannot be read or holds no token keeps the tokens read last, and says so once. Only SHA-256
// digests of the tokens are held, and a presented token is compared with each in constant time.
class TokenFile
{
public:
    using Digest = std::array<unsigned char, 32>;

    explicit TokenFile(std::string path);
    // Reads the file; false with an error when it cannot be read or holds no token (a start-up check).
    bool load(std::string *error);
    // Whether token is one of the file's (reading it again first when it changed).
    bool accepts(std::string_view token);
    const std::string &path() const { return m_path; }
    size_t count();

    static Digest digest(std::string_view text);
    // The digests of the tokens in a token file's text (what load() reads the file with); false with an error naming
    // path (for messages only) and the line when a line is not one token, or when the text holds none.
    static bool parse(std::string_view text, std::string_view path, std::vector<Digest> *digests, std::string *error);

private:
    void reloadIfChanged();

    std::string m_path;
    std::mutex m_mutex;
    std::vector<Digest> m_digests;
    struct Stamp
    {
        int64_t mtimeNs = -1;
        int64_t size = -1;
        uint64_t inode = 0;
        bool operator==(const Stamp &other) const
        {
            return mtimeNs == other.mtimeNs && size == other.size && inode == other.inode;
        }
    } m_stamp;
    std::chrono::steady_clock::time_point m_lastCheck {};
    bool m_reportedBadFile = false;
};

// Who may call the API and how much: every RPC passes through admit() before it does anything else.
//
// Credentials: with a token file, a call must carry "authorization: Bearer TOKEN" with one of its tokens; with client
// certificates required, the TLS session must have one verified by the client CA (gRPC checks the chain during the
// handshake; a certificate from another CA never gets here). A call without them is UNAUTHENTICATED, one with a wrong
// token PERMISSION_DENIED.
//
// Limits, per client address (the peer's IP without its port, so that one host's connections count together): streams
// open at once, and calls a second (a token bucket with a burst of twice the rate); past them RESOURCE_EXHAUSTED naming
// the limit.
//
// Each refusal is logged, at most once a minute for each client address and reason, never with the secret.
class AccessGate
{
public:
    struct Options
    {
        std::string tokenFile; // empty: no token needed
        bool requireClientCertificate = false;
        uint32_t maxStreamsPerClient = 256;
        uint32_t maxCallsPerSecondPerClient = 500;
    };
    using Log = std::function<void(const std::string &)>;
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    AccessGate(); // admits everyone, no limits (tests of the service alone)
    explicit AccessGate(Options options, Log log = {}, Clock clock = {});
    ~AccessGate();
    AccessGate(const AccessGate &) = delete;
    AccessGate &operator=(const AccessGate &) = delete;

    // Reads the token file; false with an error when it cannot (checked at start).
    bool load(std::string *error);

    // An admitted call holds one of these; a stream's releases its slot when it goes.
    class Admission
    {
    public:
        Admission() = default;
        Admission(Admission &&other) noexcept;
        Admission &operator=(Admission &&other) noexcept;
        ~Admission();
        bool ok() const { return m_status.ok(); }
        const grpc::Status &status() const { return m_status; }

    private:
        friend class AccessGate;
        grpc::Status m_status;
        AccessGate *m_gate = nullptr;
        std::string m_client; // set while a stream slot is held
    };

    enum class Call { Unary, Stream };
    Admission admit(grpc::ServerContext *context, std::string_view method, Call call);
    // The same, from what admit() reads off a context: tests drive it without gRPC.
    Admission admit(std::string_view peer, std::string_view authorization, bool hasClientCertificate,
        std::string_view method, Call call);

    // The address part of a gRPC peer string ("ipv4:10.0.0.7:53122" -> "10.0.0.7", "ipv6:[::1]:5" -> "::1").
    static std::string clientAddress(std::string_view peer);

    size_t openStreams(const std::string &client);

private:
    struct Client
    {
        uint32_t streams = 0;
        double tokens = 0; // calls left in the bucket
        std::chrono::steady_clock::time_point refilled {};
        std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> lastLogged; // reason -> when
    };
    grpc::Status refuse(Client &client, const std::string &address, grpc::StatusCode code, std::string reason,
        std::string message, std::chrono::steady_clock::time_point now);
    void release(const std::string &client);
    void forgetIdleClients(std::chrono::steady_clock::time_point now);

    Options m_options;
    Log m_log;
    Clock m_clock;
    std::unique_ptr<TokenFile> m_tokens;
    std::mutex m_mutex;
    std::map<std::string, Client, std::less<>> m_clients;
    bool m_open = true; // no credentials and no limits
};

} // namespace fleetscope::backend
