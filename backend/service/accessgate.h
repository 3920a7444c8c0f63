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
class ServerContextBase;
}

namespace fleetscope::backend {

// Bearer tokens, one per line of a file (blank lines and lines starting with '#' skipped, surrounding white space
// dropped). Only SHA-256 digests of the tokens are held, and a presented token is compared with each in constant time.
//
// Rotation without a restart: the file is looked at (one stat()) at most once a second, by the first call after the
// second is up, and read again when its modification or change time, size, inode or mode differ from the last read
// (or when that read came too soon after a change to trust the stamp: Stamp::fresh). A stat() per call, as before, made
// every call of a token-guessing flood a system call on a path; once a second bounds that whatever the call rate, needs
// no thread of its own, and sees every way a file is replaced: written in place, renamed over, chmod'ed, or swapped
// under a symbolic link as Kubernetes does with a mounted secret (its ..data link), which an inotify watch on the file
// misses unless it watches the directory too. The price is that a new token takes effect up to a second after it is
// written.
//
// Fail closed: a file that becomes empty, missing or unreadable, or holds a line that is not a token, refuses every
// call until it is put right (a file emptied by mistake must not leave the old tokens working, nor, worse, read as
// "no token needed"). It is said once each time what is wrong changes, and the file is read again every second while
// it is wrong, so that it is taken back as soon as it is put right.
//
// A file that its group or others may read is a warning (at start, and again when the file changes), not a refusal: a
// packager may have reasons (a group of operators), but usually it is a mistake that lets every account on the host
// read the fleet.
class TokenFile
{
public:
    using Digest = std::array<unsigned char, 32>;
    using Log = std::function<void(const std::string &)>;
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    // How often the file is looked at for a change.
    static constexpr std::chrono::seconds lookEvery { 1 };

    // log: where the warnings and the changes of state go (stderr by default); clock: steady_clock by default.
    explicit TokenFile(std::string path, Log log = {}, Clock clock = {});
    // Reads the file; false with an error when it cannot be read or holds no token (a start-up check). Warns when its
    // group or others may read it.
    bool load(std::string *error);

    enum class Verdict { Accepted, Refused, Unusable };
    // Whether token is one of the file's, or Unusable while the file is wrong (see problem()).
    Verdict check(std::string_view token);
    // What is wrong with the file as last read, empty while it is good.
    std::string problem();
    const std::string &path() const { return m_path; }
    size_t count();

    static Digest digest(std::string_view text);
    // The digests of the tokens in a token file's text (what load() reads the file with); false with an error naming
    // path (for messages only) and the line when a line is not one token, or when the text holds none.
    static bool parse(std::string_view text, std::string_view path, std::vector<Digest> *digests, std::string *error);

    // What stat() says of the file, to tell whether it changed since it was read.
    struct Stamp
    {
        int64_t mtimeNs = -1;
        int64_t ctimeNs = -1;
        int64_t size = -1;
        uint64_t inode = 0;
        uint32_t mode = 0;
        bool operator==(const Stamp &other) const
        {
            return mtimeNs == other.mtimeNs && ctimeNs == other.ctimeNs && size == other.size && inode == other.inode
                && mode == other.mode;
        }
        // Changed within a second before now (the wall clock): the file system's times have a granularity of a
        // clock tick (about 4 ms), so a file written again in place, at the same size, within the tick of a read would
        // keep the stamp read with it. Such a stamp is not trusted: the file is read again at the next look (as git
        // does with its "racily clean" entries).
        bool fresh() const;
    };

private:
    // Reads the file into digests; false with an error. Its stamp as read in *stamp (that of a failed stat: Stamp()).
    bool read(std::vector<Digest> *digests, Stamp *stamp, std::string *error) const;
    void warnIfOthersMayRead(const Stamp &stamp) const;
    void lookForChange();

    std::string m_path;
    Log m_log;
    Clock m_clock;
    std::mutex m_mutex; // guards everything below
    std::vector<Digest> m_digests; // empty while the file is wrong: nothing is accepted
    std::string m_problem; // what is wrong with the file, said once each time it changes; empty while good
    Stamp m_stamp;
    bool m_stampFresh = false; // when read: see Stamp::fresh
    std::chrono::steady_clock::time_point m_lastLook {};
};

// Who may call the API and how much: every RPC of the Telemetry service and of server reflection passes through
// admit() before it does anything else (the health service does not: see BackendServer).
//
// Credentials: with a token file, a call must carry "authorization: Bearer TOKEN" with one of its tokens; with client
// certificates required, the TLS session must have one verified by the client CA (gRPC checks the chain during the
// handshake; a certificate from another CA never gets here). A call without them is UNAUTHENTICATED, one with a wrong
// token PERMISSION_DENIED, and every call is UNAVAILABLE while the token file is wrong (TokenFile: it fails closed).
//
// Refusals are limited per client address (the peer's IP without its port, so that one host's connections count
// together), before the credentials are looked at: past maxRefusalsPerMinutePerClient refused calls (a bucket of that
// many, refilled over a minute), an address's calls are refused RESOURCE_EXHAUSTED without a look at their credentials
// until the bucket refills, so that a guesser from one address learns nothing from the answers past the limit. A
// console with a wrong token retries with a backoff (0.5 s, doubling to 10 s), one refused call a try, and stays well
// under the default of 60 even with a few of them behind one NAT address, whose consoles share its limit: a limit of
// one a second leaves guessing as hopeless as any (86,400 guesses a day at a token of 128 random bits) and stops the
// cheap floods that try a list of weak tokens. What tracks
// refusals is a table of its own, of at most maxRefusalRecords addresses: an address in it that has refused nothing for
// a minute is forgotten when room is needed. Past that many busy addresses, refusals from further ones are not
// tracked, so not limited: a guesser needs more than 16,384 addresses at once, each kept busy, to get past the limit,
// and tokens are long random secrets; the other choice, one shared record for the rest, would let such a flood lock out
// every console that connects during it, which is what refusals must never do.
//
// Admitted calls have records of their own (streams open, the call-rate bucket), per address too: streams open at
// once, and calls a second (a token bucket with a burst of twice the rate); past them RESOURCE_EXHAUSTED naming the
// limit. Only admitted calls create them, so refusals, from however many addresses, never take a console's record
// away nor make a new console share one. Without credentials configured everyone is admitted, and past maxClientsKept
// busy addresses the new ones share one record (memory bounded).
//
// Each refusal is logged at most once a minute for each client address and reason, never with the secret, and the
// lines about refusals at most one a second on average (a burst of 60): a flood from many addresses writes a line a
// second that says how many it left out, not one per address.
class AccessGate
{
public:
    struct Options
    {
        std::string tokenFile; // empty: no token needed
        bool requireClientCertificate = false;
        uint32_t maxStreamsPerClient = 256;
        uint32_t maxCallsPerSecondPerClient = 500;
        // A bucket of this many, one back every 60 / N s (--max-refusals-per-minute); 0: refusals not limited.
        uint32_t maxRefusalsPerMinutePerClient = 60;
    };
    using Log = std::function<void(const std::string &)>;
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    // Records kept for admitted addresses; past this, those with no stream open and a full bucket are forgotten.
    static constexpr size_t maxClientsKept = 4096;
    // Addresses whose refusals are tracked (about 200 bytes each with the map's node and the key: some 3 MiB at most).
    static constexpr size_t maxRefusalRecords = 16384;
    // Lines about refusals: a burst of this many, then one a second.
    static constexpr int refusalLinesBurst = 60;

    AccessGate(); // admits everyone, no limits (tests of the service alone)
    explicit AccessGate(Options options, Log log = {}, Clock clock = {});
    ~AccessGate();
    AccessGate(const AccessGate &) = delete;
    AccessGate &operator=(const AccessGate &) = delete;

    // Reads the token file; false with an error when it cannot (checked at start). Warns when others may read it.
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
    Admission admit(grpc::ServerContextBase *context, std::string_view method, Call call);
    // The same, from what admit() reads off a context: tests drive it without gRPC.
    Admission admit(std::string_view peer, std::string_view authorization, bool hasClientCertificate,
        std::string_view method, Call call);

    // The address part of a gRPC peer string ("ipv4:10.0.0.7:53122" -> "10.0.0.7", "ipv6:[::1]:5" -> "::1").
    static std::string clientAddress(std::string_view peer);

    // For tests: streams open from an address (as its own record), and how many records each table holds.
    size_t openStreams(const std::string &client);
    size_t clientRecords();
    size_t refusalRecords();

private:
    // Reasons a call is refused, each logged on its own once a minute per address.
    enum class Reason {
        NoCertificate,
        NoToken,
        TokenRefused,
        TokenFileWrong,
        TooManyRefusals,
        CallRate,
        Streams,
        Count
    };
    using LastLogged = std::array<std::chrono::steady_clock::time_point, static_cast<size_t>(Reason::Count)>;
    struct Client
    {
        uint32_t streams = 0;
        double tokens = 0; // calls left in the bucket
        std::chrono::steady_clock::time_point refilled {};
        LastLogged lastLogged {};
    };
    struct Refusals
    {
        double left = 0; // refusals left in the bucket (below zero when not limited)
        std::chrono::steady_clock::time_point refilled {};
        std::chrono::steady_clock::time_point lastRefused {};
        LastLogged lastLogged {};
    };
    // The credentials' verdict: OK, or the reason and the status to answer.
    grpc::Status checkCredentials(
        std::string_view authorization, bool hasClientCertificate, std::string_view method, Reason *reason);
    // An address's refusal record refilled to now (null when it has none: nothing refused lately, or untracked).
    Refusals *refusalsOf(const std::string &address, std::chrono::steady_clock::time_point now);
    // Counts a refusal against the address (a record made if there is room; null when there is none).
    Refusals *chargeRefusal(const std::string &address, std::chrono::steady_clock::time_point now);
    void logRefusal(
        LastLogged *lastLogged, const std::string &address, Reason reason, std::chrono::steady_clock::time_point now);
    void release(const std::string &client);
    void forgetIdleClients(std::chrono::steady_clock::time_point now);
    void forgetQuietRefusals(std::chrono::steady_clock::time_point now);

    Options m_options;
    Log m_log;
    Clock m_clock;
    std::unique_ptr<TokenFile> m_tokens;
    std::mutex m_mutex; // guards the tables and log counters below
    std::map<std::string, Client, std::less<>> m_clients;
    std::map<std::string, Refusals, std::less<>> m_refusals;
    LastLogged m_untrackedLogged {}; // refusals from addresses past maxRefusalRecords
    LastLogged m_tokenFileLogged {}; // refusals while the token file is wrong, whoever calls
    std::chrono::steady_clock::time_point m_lastRefusalSweep {};
    double m_lineBudget = refusalLinesBurst; // lines about refusals that may be written now
    std::chrono::steady_clock::time_point m_lineBudgetRefilled {};
    uint64_t m_linesLeftOut = 0; // since the last line written
    bool m_open = true; // no credentials and no limits
};

} // namespace fleetscope::backend
