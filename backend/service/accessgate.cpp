// SPDX-License-Identifier: Apache-2.0
#include "service/accessgate.h"

#include <algorithm>

#include <fmt/format.h>
#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>
#include <grpcpp/server_context.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace fleetscope::backend {

using namespace std::chrono_literals;

namespace {
constexpr std::string_view blanks = " \t\r\n\v\f";

std::string_view trimmed(std::string_view text)
{
    const auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

// The next white-space separated word of *rest, taken off it (empty when none is left).
std::string_view takeWord(std::string_view *rest)
{
    const auto first = rest->find_first_not_of(blanks);
    if (first == std::string_view::npos) {
        *rest = {};
        return {};
    }
    *rest = rest->substr(first);
    const auto end = rest->find_first_of(blanks);
    const std::string_view word = rest->substr(0, end);
    *rest = end == std::string_view::npos ? std::string_view {} : rest->substr(end);
    return word;
}

// Calls line(number, text) for each line of a file's text that is not blank nor a comment, trimmed; stops at the
// first that returns false.
template <typename Line> bool eachLine(std::string_view text, Line line)
{
    size_t number = 0;
    while (!text.empty()) {
        ++number;
        const auto end = text.find('\n');
        const std::string_view raw = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view {} : text.substr(end + 1);
        const auto content = trimmed(raw);
        if (content.empty() || content.front() == '#') {
            continue;
        }
        if (!line(number, content)) {
            return false;
        }
    }
    return true;
}

// A name in the backend's files: a printable word (ASCII '!' to '~') of at most maxCallerNameBytes, not read as a
// comment. The files' errors never quote the word: a token put where a name goes must not reach the log.
// "anonymous" is the name of a caller without credentials (Options::anonymousRole), so no line may take it: in the
// audit log the two must not read the same.
bool goodName(std::string_view word)
{
    return !word.empty() && word.size() <= maxCallerNameBytes && word.front() != '#' && word != "anonymous"
        && std::all_of(word.begin(), word.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// The longest token read: a token is a secret of tens of bytes, not a document.
constexpr size_t maxTokenBytes = 4096;
// The longest subject read; a certificate's subject past it is in no line.
constexpr size_t maxSubjectBytes = 1024;
constexpr auto logEvery = std::chrono::minutes(1);
constexpr std::string_view overflowClient = "(other addresses, past 4096)";
constexpr std::string_view untrackedClients = "(addresses past the 16384 whose refusals are tracked)";
constexpr std::string_view anonymous = "anonymous";
// Unmapped certificates' subjects said in the log, at most; the set is emptied when it is full.
constexpr size_t maxUnmappedSaid = 1024;

void toStderr(const std::string &line)
{
    fmt::print(stderr, "fleetscope-backend: {}\n", line);
}

std::chrono::steady_clock::time_point steadyNow()
{
    return std::chrono::steady_clock::now();
}
} // namespace

std::string_view roleName(Role role)
{
    return role == Role::Operator ? "operator" : "viewer";
}

std::optional<Role> roleNamed(std::string_view word)
{
    if (word == "viewer") {
        return Role::Viewer;
    }
    if (word == "operator") {
        return Role::Operator;
    }
    return std::nullopt;
}

TokenFile::TokenFile(std::string path, Log log, Clock clock)
    : m_file(std::move(path),
        { "token file", true,
            [this](std::string_view text, std::string *error) -> CredentialFile::Content {
                auto entries = std::make_shared<std::vector<Entry>>();
                if (!parse(text, m_file.path(), entries.get(), error)) {
                    return nullptr;
                }
                return entries;
            },
            [](const void *content) {
                return fmt::format("{} token(s)", static_cast<const std::vector<Entry> *>(content)->size());
            } },
        std::move(log), std::move(clock))
{ }

TokenFile::Digest TokenFile::digest(std::string_view text)
{
    Digest out {};
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), out.data(), &length, EVP_sha256(), nullptr);
    return out;
}

bool TokenFile::parse(std::string_view text, std::string_view path, std::vector<Entry> *entries, std::string *error)
{
    entries->clear();
    std::map<Digest, size_t> lines; // a token's line, to refuse it given twice
    const bool good = eachLine(text, [&](size_t number, std::string_view rest) {
        const auto wrong = [&](std::string_view what) {
            *error = fmt::format("the token file '{}', line {}: {}", path, number, what);
            return false;
        };
        const std::string_view token = takeWord(&rest);
        const std::string_view name = takeWord(&rest);
        const std::string_view role = takeWord(&rest);
        if (!trimmed(rest).empty()) {
            return wrong("a line is TOKEN [NAME [ROLE]], white-space separated");
        }
        if (token.size() > maxTokenBytes) {
            return wrong(fmt::format("a token is one word of at most {} bytes", maxTokenBytes));
        }
        if (!name.empty() && !goodName(name)) {
            return wrong(fmt::format(
                "a name is a printable word of at most {} bytes that does not start with '#' and is not 'anonymous'",
                maxCallerNameBytes));
        }
        const auto named = role.empty() ? std::optional<Role>(Role::Viewer) : roleNamed(role);
        if (!named) {
            return wrong("a role is 'viewer' or 'operator'");
        }
        Entry entry { digest(token), name.empty() ? fmt::format("token-{}", number) : std::string(name), *named };
        if (const auto [found, added] = lines.try_emplace(entry.digest, number); !added) {
            return wrong(fmt::format("the same token as line {}", found->second));
        }
        entries->push_back(std::move(entry));
        return true;
    });
    if (!good) {
        entries->clear();
        return false;
    }
    if (entries->empty()) {
        *error = fmt::format("the token file '{}' holds no token", path);
        return false;
    }
    return true;
}

bool TokenFile::parse(std::string_view text, std::string_view path, std::vector<Digest> *digests, std::string *error)
{
    std::vector<Entry> entries;
    digests->clear();
    if (!parse(text, path, &entries, error)) {
        return false;
    }
    for (const auto &entry : entries) {
        digests->push_back(entry.digest);
    }
    return true;
}

bool TokenFile::load(std::string *error)
{
    return m_file.load(error);
}

std::shared_ptr<const std::vector<TokenFile::Entry>> TokenFile::entries()
{
    return std::static_pointer_cast<const std::vector<Entry>>(m_file.current());
}

TokenFile::Verdict TokenFile::check(std::string_view token, Entry *matched)
{
    const auto entries = this->entries();
    if (!entries) {
        return Verdict::Unusable;
    }
    const Digest presented = digest(token);
    // Every digest compared, in constant time each, and the match's place kept without a branch on it.
    size_t found = 0; // its index + 1
    for (size_t i = 0; i < entries->size(); ++i) {
        const size_t equal = CRYPTO_memcmp((*entries)[i].digest.data(), presented.data(), presented.size()) == 0;
        found |= (i + 1) & (size_t { 0 } - equal);
    }
    if (found == 0) {
        return Verdict::Refused;
    }
    if (matched) {
        *matched = (*entries)[found - 1];
    }
    return Verdict::Accepted;
}

std::string TokenFile::problem()
{
    return m_file.problem();
}

size_t TokenFile::count()
{
    const auto entries = this->entries();
    return entries ? entries->size() : 0;
}

struct ClientRoles::Table
{
    std::vector<Entry> entries;
    std::map<std::string, size_t, std::less<>> bySubject; // index in entries
    std::map<std::string, size_t, std::less<>> byCommonName;
};

ClientRoles::ClientRoles(std::string path, CredentialFile::Log log, CredentialFile::Clock clock)
    : m_file(std::move(path),
        { "client roles file", false,
            [this](std::string_view text, std::string *error) -> CredentialFile::Content {
                auto table = std::make_shared<Table>();
                if (!parse(text, m_file.path(), &table->entries, error)) {
                    return nullptr;
                }
                for (size_t i = 0; i < table->entries.size(); ++i) {
                    const Entry &entry = table->entries[i];
                    (entry.byCommonName ? table->byCommonName : table->bySubject).emplace(entry.subject, i);
                }
                return table;
            },
            [](const void *content) {
                return fmt::format("{} certificate(s)", static_cast<const Table *>(content)->entries.size());
            } },
        std::move(log), std::move(clock))
{ }

bool ClientRoles::parse(std::string_view text, std::string_view path, std::vector<Entry> *entries, std::string *error)
{
    entries->clear();
    std::map<std::pair<bool, std::string>, size_t> lines; // a subject's line, to refuse it given twice
    const bool good = eachLine(text, [&](size_t number, std::string_view rest) {
        const auto wrong = [&](std::string_view what) {
            *error = fmt::format("the client roles file '{}', line {}: {}", path, number, what);
            return false;
        };
        const auto role = roleNamed(takeWord(&rest));
        const std::string_view name = takeWord(&rest);
        const std::string_view subject = trimmed(rest);
        if (!role || name.empty() || subject.empty()) {
            return wrong("a line is ROLE NAME SUBJECT: 'viewer' or 'operator', a name, the certificate's subject "
                         "(\"CN=noc-wall,O=Example NOC\", or \"CN=noc-wall\" for its common name alone)");
        }
        if (!goodName(name)) {
            return wrong(fmt::format(
                "a name is a printable word of at most {} bytes that does not start with '#' and is not 'anonymous'",
                maxCallerNameBytes));
        }
        if (subject.size() > maxSubjectBytes
            || std::any_of(subject.begin(), subject.end(), [](char c) { return c >= 0 && c < ' '; })) {
            return wrong(fmt::format("a subject is at most {} bytes, without control characters", maxSubjectBytes));
        }
        Entry entry { *role, std::string(name), std::string(subject), false };
        // "CN=NAME" alone: the common name (any case of the attribute, no second part after a ',' or '+'; a ',' in
        // a common name is "\," in a subject and stands for a whole subject's line).
        if (subject.size() > 3 && (subject[0] == 'C' || subject[0] == 'c') && (subject[1] == 'N' || subject[1] == 'n')
            && subject[2] == '=' && subject.find_first_of(",+\\", 3) == std::string_view::npos) {
            entry.byCommonName = true;
            entry.subject = std::string(subject.substr(3));
        }
        if (const auto [found, added] = lines.try_emplace({ entry.byCommonName, entry.subject }, number); !added) {
            return wrong(fmt::format("the same subject as line {}", found->second));
        }
        entries->push_back(std::move(entry));
        return true;
    });
    if (!good) {
        entries->clear();
        return false;
    }
    if (entries->empty()) {
        *error = fmt::format("the client roles file '{}' holds no certificate", path);
        return false;
    }
    return true;
}

bool ClientRoles::load(std::string *error)
{
    return m_file.load(error);
}

std::shared_ptr<const ClientRoles::Table> ClientRoles::table()
{
    return std::static_pointer_cast<const Table>(m_file.current());
}

ClientRoles::Verdict ClientRoles::find(std::string_view subject, std::string_view commonName, Entry *matched)
{
    const auto table = this->table();
    if (!table) {
        return Verdict::Unusable;
    }
    auto found = table->bySubject.find(subject);
    if (found == table->bySubject.end()) {
        found = commonName.empty() ? table->byCommonName.end() : table->byCommonName.find(commonName);
        if (found == table->byCommonName.end()) {
            return Verdict::Unmapped;
        }
    }
    *matched = table->entries[found->second];
    return Verdict::Mapped;
}

std::string ClientRoles::problem()
{
    return m_file.problem();
}

size_t ClientRoles::count()
{
    const auto table = this->table();
    return table ? table->entries.size() : 0;
}

AccessGate::AccessGate()
    : m_log(toStderr)
    , m_clock(steadyNow)
    , m_lineBudgetRefilled(m_clock())
{ }

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
    if (!m_options.clientRolesFile.empty()) {
        m_roles = std::make_unique<ClientRoles>(m_options.clientRolesFile, m_log, m_clock);
    }
}

AccessGate::~AccessGate() = default;

bool AccessGate::load(std::string *error)
{
    if (m_roles && !m_options.requireClientCertificate) {
        *error = fmt::format("the client roles file '{}' needs client certificates (--tls-client-ca)", m_roles->path());
        return false;
    }
    return (!m_tokens || m_tokens->load(error)) && (!m_roles || m_roles->load(error));
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

std::string AccessGate::nameOfCommonName(std::string_view commonName)
{
    // A certificate from the client CA, but its words go into logs, messages and Alertmanager's createdBy.
    std::string name;
    for (const char c : trimmed(commonName.substr(0, maxCallerNameBytes))) {
        name += c >= ' ' && c < 0x7f ? c : '?';
    }
    if (name == anonymous) {
        return "cn:" + name; // not the name of a caller without credentials
    }
    return name.empty() ? std::string("(no common name)") : name;
}

AccessGate::Admission AccessGate::admit(grpc::ServerContextBase *context, std::string_view method, Call call)
{
    if (m_open) {
        Admission admission;
        admission.m_caller = { std::string(anonymous), m_options.anonymousRole, clientAddress(context->peer()) };
        return admission;
    }
    Credentials credentials;
    const auto &metadata = context->client_metadata();
    if (const auto found = metadata.find("authorization"); found != metadata.end()) {
        credentials.authorization = { found->second.data(), found->second.size() };
    }
    // Held here: the views below point into it.
    std::shared_ptr<const grpc::AuthContext> auth;
    if (m_options.requireClientCertificate) {
        auth = context->auth_context();
        const auto first = [&auth](const char *property) {
            const auto values = auth->FindPropertyValues(property);
            return values.empty() ? std::string_view {}
                                  : std::string_view(values.front().data(), values.front().size());
        };
        if (auth && !auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty()) {
            credentials.certificate = true;
            credentials.subject = first(GRPC_X509_SUBJECT_PROPERTY_NAME);
            credentials.commonName = first(GRPC_X509_CN_PROPERTY_NAME);
        }
    }
    return admit(context->peer(), credentials, method, call);
}

bool AccessGate::certificateCaller(const Credentials &credentials, Caller *caller)
{
    ClientRoles::Entry entry;
    const auto verdict
        = m_roles ? m_roles->find(credentials.subject, credentials.commonName, &entry) : ClientRoles::Verdict::Unmapped;
    if (verdict == ClientRoles::Verdict::Unusable) {
        return false;
    }
    if (verdict == ClientRoles::Verdict::Mapped) {
        caller->name = std::move(entry.name);
        caller->role = entry.role;
        return true;
    }
    caller->name = nameOfCommonName(credentials.commonName);
    caller->role = Role::Viewer;
    if (m_roles) {
        // Said once for each subject: what to write in the roles file, in gRPC's own words for it.
        std::string subject;
        for (const char c : credentials.subject.substr(0, maxSubjectBytes)) {
            subject += c >= ' ' && c < 0x7f ? c : '?';
        }
        std::lock_guard lock(m_mutex);
        if (m_unmappedSaid.size() >= maxUnmappedSaid) {
            m_unmappedSaid.clear();
        }
        if (m_unmappedSaid.try_emplace(subject, true).second) {
            m_log(fmt::format("a certificate in no line of the client roles file '{}' is a viewer named {}: its "
                              "subject is '{}'",
                m_roles->path(), caller->name, subject));
        }
    }
    return true;
}

grpc::Status AccessGate::checkCredentials(
    const Credentials &credentials, std::string_view method, Caller *caller, Reason *reason)
{
    if (m_options.requireClientCertificate && !credentials.certificate) {
        *reason = Reason::NoCertificate;
        return { grpc::StatusCode::UNAUTHENTICATED,
            fmt::format("this backend takes only clients with a certificate from its client CA; none was presented "
                        "({})",
                method) };
    }
    const auto rolesWrong = [&] {
        *reason = Reason::RolesFileWrong;
        return grpc::Status { grpc::StatusCode::UNAVAILABLE,
            fmt::format("this backend cannot check client certificates now: its client roles file is missing, empty "
                        "or unreadable, and every call is refused until its operator puts it right ({})",
                method) };
    };
    if (!m_tokens) {
        if (credentials.certificate) {
            return certificateCaller(credentials, caller) ? grpc::Status::OK : rolesWrong();
        }
        caller->name = anonymous;
        caller->role = m_options.anonymousRole;
        return grpc::Status::OK;
    }
    const auto authorization = credentials.authorization;
    constexpr std::string_view scheme = "bearer ";
    const bool bearer = authorization.size() > scheme.size()
        && std::equal(scheme.begin(), scheme.end(), authorization.begin(),
            [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
    // The file's state before the caller's part: while it is wrong, every call hears so, with a token or without.
    TokenFile::Entry entry;
    const auto verdict
        = m_tokens->check(bearer ? trimmed(authorization.substr(scheme.size())) : std::string_view {}, &entry);
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
    caller->name = std::move(entry.name);
    caller->role = entry.role;
    if (credentials.certificate && m_roles) {
        // Both must allow a write (see the class comment); the name stays the token's.
        Caller byCertificate;
        if (!certificateCaller(credentials, &byCertificate)) {
            return rolesWrong();
        }
        caller->role = std::min(caller->role, byCertificate.role);
    }
    return grpc::Status::OK;
}

AccessGate::Admission AccessGate::admit(std::string_view peer, std::string_view authorization,
    bool hasClientCertificate, std::string_view method, Call call)
{
    Credentials credentials;
    credentials.authorization = authorization;
    credentials.certificate = hasClientCertificate;
    return admit(peer, credentials, method, call);
}

AccessGate::Admission AccessGate::admit(
    std::string_view peer, const Credentials &credentials, std::string_view method, Call call)
{
    Admission admission;
    admission.m_caller.address = clientAddress(peer);
    if (m_open) {
        admission.m_caller.name = anonymous;
        admission.m_caller.role = m_options.anonymousRole;
        return admission;
    }
    const std::string &address = admission.m_caller.address;
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
    if (auto refused = checkCredentials(credentials, method, &admission.m_caller, &reason); !refused.ok()) {
        std::lock_guard lock(m_mutex);
        if (reason == Reason::TokenFileWrong || reason == Reason::RolesFileWrong) {
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

grpc::Status AccessGate::mayWrite(const Admission &admission, std::string_view what)
{
    if (!admission.ok()) {
        return admission.status();
    }
    const Caller &caller = admission.caller();
    if (caller.role == Role::Operator) {
        return grpc::Status::OK;
    }
    {
        std::lock_guard lock(m_mutex);
        const auto found = m_clients.find(caller.address);
        logRefusal(found != m_clients.end() ? &found->second.lastLogged : &m_writesLogged,
            fmt::format("{} ({})", caller.address, caller.name), Reason::NotOperator, m_clock());
    }
    // Where the role comes from, so that whoever reads it knows whom to ask.
    const std::string_view from = caller.name == anonymous
        ? "the backend's --anonymous-role, for callers without a credential"
        : (m_tokens ? "the role on its line of the backend's token file"
                    : "its line in the backend's client roles file");
    return { grpc::StatusCode::PERMISSION_DENIED,
        fmt::format("{} is a {}: {} needs the operator role ({}; docs/ALERTS.md)", caller.name, roleName(caller.role),
            what, from) };
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
        "the client roles file is wrong",
        "too many refused calls",
        "call rate",
        "streams",
        "a viewer's write",
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
    , m_caller(std::move(other.m_caller))
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
        m_caller = std::move(other.m_caller);
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
