// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "service/credentialfile.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/support/status.h>

namespace grpc {
class ServerContextBase;
}

namespace fleetscope::backend {

// What a caller may do: a viewer reads, an operator also writes (silences, docs/ALERTS.md). The order is the order of
// what they may do (std::min of two roles is the lesser).
enum class Role : uint8_t { Viewer, Operator };
// "viewer", "operator".
std::string_view roleName(Role role);
// The role a word names in the backend's files, nullopt for any other word.
std::optional<Role> roleNamed(std::string_view word);

// Who calls, as the gate found them: the name of their token or certificate in the backend's files (printable ASCII, at
// most maxCallerNameBytes; "anonymous" where no credential is asked), their role, and their address (the peer's IP).
struct Caller
{
    std::string name;
    Role role = Role::Viewer;
    std::string address;
};
constexpr size_t maxCallerNameBytes = 64;

// Bearer tokens, one per line of a file: "TOKEN [NAME [ROLE]]", white-space separated (blank lines and lines starting
// with '#' skipped). NAME is a printable word of at most 64 bytes that does not start with '#', ROLE "viewer" or
// "operator". A line with a token alone, as every line was before tokens had names, is named "token-LINE" and is a
// viewer: the API was read-only then, and an old token must not gain writes by an upgrade. A line of another shape, a
// bad name or role, or a token given twice is an error naming the line, and refuses every call (as a file gone wrong
// does: CredentialFile). Only SHA-256 digests of the tokens are held, and a presented token is compared with each in
// constant time; the matched line's name and role come back with the verdict.
//
// The file is read again when it changes, and fails closed while it is wrong: see CredentialFile. Others than its
// owner may read it: a warning.
class TokenFile
{
public:
    using Digest = std::array<unsigned char, 32>;
    using Log = CredentialFile::Log;
    using Clock = CredentialFile::Clock;
    static constexpr std::chrono::seconds lookEvery = CredentialFile::lookEvery;

    struct Entry
    {
        Digest digest {};
        std::string name;
        Role role = Role::Viewer;
    };

    // log: where the warnings and the changes of state go (stderr by default); clock: steady_clock by default.
    explicit TokenFile(std::string path, Log log = {}, Clock clock = {});
    // Reads the file; false with an error when it cannot be read or holds no token (a start-up check). Warns when its
    // group or others may read it.
    bool load(std::string *error);

    enum class Verdict { Accepted, Refused, Unusable };
    // Whether token is one of the file's (its line's name and role in *matched), or Unusable while the file is wrong
    // (see problem()).
    Verdict check(std::string_view token, Entry *matched = nullptr);
    // What is wrong with the file as last read, empty while it is good.
    std::string problem();
    const std::string &path() const { return m_file.path(); }
    size_t count();

    static Digest digest(std::string_view text);
    // The entries of a token file's text (what load() reads the file with); false with an error naming path (for
    // messages only) and the line when a line is wrong, or when the text holds no token.
    static bool parse(std::string_view text, std::string_view path, std::vector<Entry> *entries, std::string *error);
    // The same, the digests alone.
    static bool parse(std::string_view text, std::string_view path, std::vector<Digest> *digests, std::string *error);

private:
    std::shared_ptr<const std::vector<Entry>> entries();

    CredentialFile m_file;
};

// Client certificates' names and roles, one per line of a file (--client-roles): "ROLE NAME SUBJECT", ROLE and NAME as
// in a token file, SUBJECT the rest of the line. SUBJECT is matched against the certificate's subject as gRPC gives it
// (its auth context's "x509_subject": OpenSSL's RFC 2253 form, the most specific part first and no spaces after the
// commas, "CN=noc-wall,O=Example NOC"), or, written "CN=NAME" alone, against its common name only. A line for the whole
// subject is taken before one for its common name. A subject given twice is an error naming the line, as is a line of
// another shape, and refuses every call until it is put right (CredentialFile, as the token file). A verified
// certificate that no line matches is a viewer named by its common name; the gate says once which subject it was
// (what to write in this file).
class ClientRoles
{
public:
    struct Entry
    {
        Role role = Role::Viewer;
        std::string name;
        std::string subject; // the whole subject, or the common name alone when byCommonName
        bool byCommonName = false;
    };

    explicit ClientRoles(std::string path, CredentialFile::Log log = {}, CredentialFile::Clock clock = {});
    bool load(std::string *error);

    enum class Verdict { Mapped, Unmapped, Unusable };
    // The line for a certificate of this subject and common name (in *matched), Unmapped when none is, or Unusable
    // while the file is wrong.
    Verdict find(std::string_view subject, std::string_view commonName, Entry *matched);
    std::string problem();
    const std::string &path() const { return m_file.path(); }
    size_t count();

    // A roles file's text; false with an error naming path and the line when a line is wrong or none is there.
    static bool parse(std::string_view text, std::string_view path, std::vector<Entry> *entries, std::string *error);

private:
    struct Table;
    std::shared_ptr<const Table> table();

    CredentialFile m_file;
};

// Who may call the API and how much: every RPC of the Telemetry service and of server reflection passes through
// admit() before it does anything else (the health service does not: see BackendServer).
//
// Credentials: with a token file, a call must carry "authorization: Bearer TOKEN" with one of its tokens; with client
// certificates required, the TLS session must have one verified by the client CA (gRPC checks the chain during the
// handshake; a certificate from another CA never gets here). A call without them is UNAUTHENTICATED, one with a wrong
// token PERMISSION_DENIED, and every call is UNAVAILABLE while the token file or the client roles file is wrong (they
// fail closed).
//
// Who calls (Admission::caller()): the token's line names the caller and gives its role (TokenFile); without a token
// file, the certificate's line in the client roles file does (ClientRoles; a certificate in no line, or without a roles
// file, is a viewer named by its common name). With both, the name is the token's and the role the lesser of the two
// when a roles file is given (both must allow a write), the token's otherwise: a certificate is often a host's, a token
// a person's. Without credentials (loopback), everyone is "anonymous" with Options::anonymousRole. Writes ask
// mayWrite() besides.
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
        // Certificates' names and roles (--client-roles; ClientRoles): needs requireClientCertificate.
        std::string clientRolesFile;
        // Everyone's role where no credential is asked (--anonymous-role): a viewer unless said.
        Role anonymousRole = Role::Viewer;
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

    // Reads the token file and the client roles file; false with an error when one cannot be read or is wrong, or when
    // a roles file is given without client certificates (checked at start). Warns when others may read the tokens.
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
        // Who was admitted (a refused call's caller is known as far as the gate looked: its address at least).
        const Caller &caller() const { return m_caller; }

    private:
        friend class AccessGate;
        grpc::Status m_status;
        Caller m_caller;
        AccessGate *m_gate = nullptr;
        std::string m_client; // set while a stream slot is held
    };

    enum class Call { Unary, Stream };
    Admission admit(grpc::ServerContextBase *context, std::string_view method, Call call);
    // What admit() reads off a context: the authorization header and the TLS session's client certificate, verified
    // by the client CA, as gRPC's auth context gives it.
    struct Credentials
    {
        std::string_view authorization;
        bool certificate = false;
        std::string_view subject; // "x509_subject": "CN=noc-wall,O=Example NOC"
        std::string_view commonName; // "x509_common_name": "noc-wall"
    };
    // The same, from what admit() reads off a context: tests drive it without gRPC.
    Admission admit(std::string_view peer, const Credentials &credentials, std::string_view method, Call call);
    Admission admit(std::string_view peer, std::string_view authorization, bool hasClientCertificate,
        std::string_view method, Call call);

    // Whether an admitted caller may write (what: "silencing", for people): OK for an operator; PERMISSION_DENIED with
    // words for people for a viewer ("noc-wall is a viewer: silencing needs the operator role (docs/ALERTS.md)"),
    // logged as the other refusals are (once a minute per address, lines limited); a refused admission's own status.
    grpc::Status mayWrite(const Admission &admission, std::string_view what);

    // A certificate's common name as a caller's name: printable ASCII ('?' for any other byte), at most
    // maxCallerNameBytes, "(no common name)" when empty.
    static std::string nameOfCommonName(std::string_view commonName);

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
        RolesFileWrong,
        TooManyRefusals,
        CallRate,
        Streams,
        NotOperator,
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
    // The credentials' verdict: OK with the caller's name and role, or the reason and the status to answer.
    grpc::Status checkCredentials(
        const Credentials &credentials, std::string_view method, Caller *caller, Reason *reason);
    // A certificate's caller: its line in the roles file, or a viewer by its common name; false while the file is
    // wrong.
    bool certificateCaller(const Credentials &credentials, Caller *caller);
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
    std::unique_ptr<ClientRoles> m_roles;
    std::mutex m_mutex; // guards the tables and log counters below
    std::map<std::string, Client, std::less<>> m_clients;
    std::map<std::string, Refusals, std::less<>> m_refusals;
    LastLogged m_untrackedLogged {}; // refusals from addresses past maxRefusalRecords
    LastLogged m_tokenFileLogged {}; // refusals while the token file is wrong, whoever calls
    LastLogged m_writesLogged {}; // writes refused to addresses without a record (an open gate keeps none)
    std::map<std::string, bool, std::less<>> m_unmappedSaid; // subjects in no roles line, said once (bounded)
    std::chrono::steady_clock::time_point m_lastRefusalSweep {};
    double m_lineBudget = refusalLinesBurst; // lines about refusals that may be written now
    std::chrono::steady_clock::time_point m_lineBudgetRefilled {};
    uint64_t m_linesLeftOut = 0; // since the last line written
    bool m_open = true; // no credentials and no limits
};

} // namespace fleetscope::backend
