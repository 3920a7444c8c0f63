// SPDX-License-Identifier: Apache-2.0
// The backend's HTTP doors on GNU libmicrohttpd. The library reads, parses and answers; this file holds the door's
// rule, the credentials, the deadlines it counts only as inactivity, the body's bounds, and the glue.
#include "http/boundedhttpserver.h"

#include "core/listenaddress.h"
#include "http/edgetls.h"
#include "http/listensocket.h"
#include "http/refusals.h"
#include "http/requestbody.h"
#include "http/responses.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_set>

#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

namespace fleetscope::backend {

namespace {
using Clock = std::chrono::steady_clock;
constexpr Clock::time_point never = Clock::time_point::max();

unsigned seconds(std::chrono::milliseconds ms)
{
    return static_cast<unsigned>(std::max<int64_t>(1, (ms.count() + 999) / 1000));
}

// What libmicrohttpd keeps for us per connection (its socket context) and per request.
struct Connection
{
    int fd = -1;
    std::string peer;
    Clock::time_point deadline = never; // the head, or the body, must be whole by then (guarded by the edge's mutex)
    bool shut = false;
};

struct Request
{
    RequestBody body;
    size_t reserved = 0; // of the edge's budget of buffered bodies
    bool answered = false; // refused before its body was read whole; the rest of it is not read
};
} // namespace

std::string_view HttpRequest::header(const char *name) const
{
    const char *value = connection ? MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name) : nullptr;
    return value ? std::string_view(value) : std::string_view();
}

class BoundedHttpServer::Edge
{
public:
    Edge(BoundedHttpServer &server, std::vector<std::string> methods, Handler handler, Log log)
        : m_server(server)
        , m_methods(std::move(methods))
        , m_handler(std::move(handler))
        , m_log(std::move(log))
    {
        for (const auto &m : m_methods) {
            m_allow += (m_allow.empty() ? "" : ", ") + m;
        }
        // The bodies being read at once, together: a few pushes' worth, so that many slow senders cannot hold the
        // memory of a body each.
        m_refusals.setPerMinute(m_server.m_limits.refusalsPerMinute);
        const auto &limits = m_server.m_limits;
        m_budget = std::max(limits.maxBodyBytes, limits.maxBodyBytes * limits.threads * 2);
    }

    ~Edge() { stop(); }

    bool start(int listenFd, int family, std::string *error)
    {
        const auto &limits = m_server.m_limits;
        const auto &security = m_server.m_security;
        unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC;
        if (family == AF_INET6) {
            flags |= MHD_USE_IPv6;
        }
        std::vector<MHD_OptionItem> options {
            { MHD_OPTION_LISTEN_SOCKET, listenFd, nullptr },
            { MHD_OPTION_THREAD_POOL_SIZE, static_cast<intptr_t>(std::max<size_t>(1, limits.threads)), nullptr },
            { MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(limits.maxConnections), nullptr },
            { MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<intptr_t>(limits.maxConnectionsPerAddress), nullptr },
            // A head larger than this is refused by the library (431); the rest of the pool is its read buffer.
            { MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(limits.maxHeaderBytes + 16 * 1024), nullptr },
            { MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(seconds(limits.sendTimeout)), nullptr },
            { MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Edge::onConnection), this },
            { MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Edge::onCompleted), this },
            // Paths reach the handler as sent: the exporter decodes a node's name strictly itself.
            { MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&Edge::keepEscapes), this },
        };
        if (security.tls()) {
            flags |= MHD_USE_TLS;
            if (!readPem(security.tlsCertFile, "certificate", &m_cert, error)
                || !readPem(security.tlsKeyFile, "key", &m_key, error)
                || (!security.clientCaFile.empty() && !readPem(security.clientCaFile, "client CA", &m_ca, error))
                || !checkTls(m_cert, m_key, m_ca,
                    { security.optionPrefix, security.tlsCertFile, security.tlsKeyFile, security.clientCaFile },
                    error)) {
                close(listenFd);
                return false;
            }
            options.push_back({ MHD_OPTION_HTTPS_MEM_CERT, 0, m_cert.data() });
            options.push_back({ MHD_OPTION_HTTPS_MEM_KEY, 0, m_key.data() });
            options.push_back({ MHD_OPTION_HTTPS_PRIORITIES, 0,
                const_cast<char *>("NORMAL:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1") });
            if (!m_ca.empty()) {
                options.push_back({ MHD_OPTION_HTTPS_MEM_TRUST, 0, m_ca.data() });
            }
        }
        options.push_back({ MHD_OPTION_END, 0, nullptr });
        m_daemon = MHD_start_daemon(
            flags, 0, nullptr, nullptr, &Edge::onRequest, this, MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
        if (m_daemon == nullptr) {
            *error = "libmicrohttpd could not start";
            close(listenFd);
            return false;
        }
        m_reaper = std::thread([this] { reap(); });
        return true;
    }

    void stop()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_wake.notify_all();
        if (m_reaper.joinable()) {
            m_reaper.join();
        }
        if (m_daemon) {
            // No new connections, then every open one shut and ended by the library's own threads, as a deadline
            // does, before the daemon stops: libmicrohttpd 0.9.75 crashed now and then (a few stops in a hundred)
            // closing, in MHD_stop_daemon, a connection it had answered with an error of its own.
            const MHD_socket listener = MHD_quiesce_daemon(m_daemon);
            std::unique_lock lock(m_mutex);
            for (Connection *c : m_connections) {
                shutdown(c->fd, SHUT_RDWR);
                c->shut = true;
            }
            m_closed.wait_for(lock, std::chrono::seconds(2), [this] { return m_connections.empty(); });
            lock.unlock();
            MHD_stop_daemon(m_daemon); // joins its threads (and closes what is left)
            m_daemon = nullptr;
            if (listener != MHD_INVALID_SOCKET) {
                close(listener); // quiesced: the daemon no longer closes it
            }
        }
    }

    Load load() const
    {
        Load load;
        std::lock_guard lock(m_mutex);
        load.connections = m_connections.size();
        load.timedOut = m_timedOut;
        load.unauthorized = m_unauthorized;
        return load;
    }

private:
    static size_t keepEscapes(void *, MHD_Connection *, char *text) { return std::strlen(text); }

    static void onConnection(void *cls, MHD_Connection *connection, void **context, MHD_ConnectionNotificationCode code)
    {
        auto *edge = static_cast<Edge *>(cls);
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
            auto *c = new Connection;
            c->fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
            c->peer = addressOf(MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS)->client_addr);
            c->deadline = Clock::now() + edge->m_server.m_limits.requestTimeout;
            std::lock_guard lock(edge->m_mutex);
            edge->m_connections.insert(c);
            *context = c;
        } else if (auto *c = static_cast<Connection *>(*context)) {
            // Before libmicrohttpd closes the descriptor: the reaper never shuts a number given to another connection.
            std::lock_guard lock(edge->m_mutex);
            edge->m_connections.erase(c);
            delete c;
            *context = nullptr;
            edge->m_closed.notify_all();
        }
    }

    static void onCompleted(
        void *cls, MHD_Connection *connection, void **requestContext, MHD_RequestTerminationCode code)
    {
        auto *edge = static_cast<Edge *>(cls);
        if (auto *request = static_cast<Request *>(*requestContext)) {
            edge->release(request->reserved);
            delete request;
            *requestContext = nullptr;
        }
        if (code != MHD_REQUEST_TERMINATED_COMPLETED_OK) {
            return; // the connection is being closed: libmicrohttpd 0.9.75 crashed when its timeout was set now
        }
        // Kept alive: the next head within the idle timeout, counted by us in total and by the library as inactivity.
        const auto &limits = edge->m_server.m_limits;
        edge->setDeadline(connection, Clock::now() + limits.idleTimeout);
        MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds(limits.idleTimeout));
    }

    static Connection *connectionOf(MHD_Connection *connection)
    {
        const auto *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return info ? static_cast<Connection *>(info->socket_context) : nullptr;
    }

    void setDeadline(MHD_Connection *connection, Clock::time_point deadline)
    {
        if (Connection *c = connectionOf(connection)) {
            std::lock_guard lock(m_mutex);
            c->deadline = deadline;
        }
    }

    // Shuts the connections past their deadline: libmicrohttpd then finds them closed and ends them itself (a
    // descriptor is never closed behind its back).
    void reap()
    {
        std::unique_lock lock(m_mutex);
        while (!m_stopping) {
            m_wake.wait_for(lock, std::chrono::milliseconds(100));
            const auto now = Clock::now();
            for (Connection *c : m_connections) {
                if (!c->shut && c->deadline <= now) {
                    shutdown(c->fd, SHUT_RDWR);
                    c->shut = true;
                    ++m_timedOut;
                }
            }
        }
    }

    bool reserve(size_t bytes)
    {
        std::lock_guard lock(m_mutex);
        if (m_buffered + bytes > m_budget) {
            return false;
        }
        m_buffered += bytes;
        return true;
    }

    void release(size_t bytes)
    {
        std::lock_guard lock(m_mutex);
        m_buffered -= std::min(bytes, m_buffered);
    }

    // Logged at most once a minute per client address and reason (Refusals), never with what was sent.
    void logRefusal(const std::string &peer, std::string_view reason)
    {
        if (!m_refusals.shouldLog(peer, reason)) {
            return;
        }
        const std::string line = fmt::format("{}: refused {}: {} (logged once a minute per address)",
            m_server.m_security.optionPrefix.substr(2), peer, reason);
        if (m_log) {
            m_log(line);
        } else {
            fmt::print(stderr, "fleetscope-backend: {}\n", line);
        }
    }

    // A refusal before the body is read: the library then reads no more of this connection and closes it after
    // the answer.
    MHD_Result refuse(MHD_Connection *connection, Request *request, int status,
        std::vector<std::pair<std::string, std::string>> headers = {})
    {
        request->answered = true;
        HttpResponse response;
        response.status = status;
        response.headers = std::move(headers);
        return queueResponse(connection, response);
    }

    // A body framed one way only: libmicrohttpd takes the first of two Content-Lengths, and chunking over a length,
    // where a proxy in front may take another; the ambiguity a request smuggler needs is refused instead.
    static bool framedOnce(MHD_Connection *connection)
    {
        struct Count
        {
            int lengths = 0;
            int encodings = 0;
        } count;
        MHD_get_connection_values(
            connection, MHD_HEADER_KIND,
            [](void *cls, MHD_ValueKind, const char *key, const char *) -> MHD_Result {
                auto *c = static_cast<Count *>(cls);
                c->lengths += strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0;
                c->encodings += strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0;
                return MHD_YES;
            },
            &count);
        return count.lengths + count.encodings <= 1;
    }

    // The credentials, checked once the head is in and before any of the body is read. 0: admitted.
    int checkCredentials(
        MHD_Connection *connection, const std::string &peer, std::vector<std::pair<std::string, std::string>> *headers)
    {
        const auto &security = m_server.m_security;
        if ((!m_ca.empty() || security.acceptsToken) && !m_refusals.mayRefuse(peer)) {
            logRefusal(peer, "too many refusals: its requests are refused unheard for a while");
            headers->emplace_back(MHD_HTTP_HEADER_RETRY_AFTER, "60");
            return 429;
        }
        const int status = checkCredentialsOf(connection, peer, headers);
        if (status != 0) {
            m_refusals.spend(peer);
        }
        return status;
    }

    int checkCredentialsOf(
        MHD_Connection *connection, const std::string &peer, std::vector<std::pair<std::string, std::string>> *headers)
    {
        const auto &security = m_server.m_security;
        if (!m_ca.empty()) {
            const auto *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
            auto *session = info ? static_cast<gnutls_session_t>(info->tls_session) : nullptr;
            unsigned int status = 0;
            if (session == nullptr || gnutls_certificate_verify_peers2(session, &status) != GNUTLS_E_SUCCESS
                || status != 0) {
                logRefusal(peer, "no client certificate from the client CA");
                return 403;
            }
        }
        if (!security.acceptsToken) {
            return 0;
        }
        const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        const std::string_view authorization = value ? value : "";
        constexpr std::string_view scheme = "bearer ";
        const bool bearer = authorization.size() > scheme.size()
            && std::equal(scheme.begin(), scheme.end(), authorization.begin(),
                [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
        if (!bearer) {
            logRefusal(peer, "no bearer token");
            headers->emplace_back(MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"fleetscope-backend\"");
            return 401;
        }
        if (!security.acceptsToken(authorization.substr(scheme.size()))) {
            logRefusal(peer, "a token that is not in the token file");
            headers->emplace_back(
                MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"fleetscope-backend\", error=\"invalid_token\"");
            return 401;
        }
        return 0;
    }

    static MHD_Result onRequest(void *cls, MHD_Connection *connection, const char *url, const char *method,
        const char *, const char *upload, size_t *uploadSize, void **requestContext)
    {
        auto *edge = static_cast<Edge *>(cls);
        const auto &limits = edge->m_server.m_limits;
        auto *request = static_cast<Request *>(*requestContext);
        Connection *c = connectionOf(connection);
        const std::string peer = c ? c->peer : std::string();
        if (request == nullptr) {
            // The head is in: the body has requestTimeout from now, and libmicrohttpd's inactivity timeout is the
            // send timeout again (an idle connection had the idle one).
            request = new Request;
            *requestContext = request;
            edge->setDeadline(connection, Clock::now() + limits.requestTimeout);
            MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds(limits.sendTimeout));
            if (std::find(edge->m_methods.begin(), edge->m_methods.end(), method) == edge->m_methods.end()) {
                return edge->refuse(connection, request, 405, { { MHD_HTTP_HEADER_ALLOW, edge->m_allow } });
            }
            if (!framedOnce(connection)) {
                return edge->refuse(connection, request, 400);
            }
            std::vector<std::pair<std::string, std::string>> headers;
            if (const int status = edge->checkCredentials(connection, peer, &headers); status != 0) {
                {
                    std::lock_guard lock(edge->m_mutex);
                    ++edge->m_unauthorized;
                }
                return edge->refuse(connection, request, status, std::move(headers));
            }
            if (const char *length
                = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
                // libmicrohttpd has checked it is a number; whether it fits is ours.
                const unsigned long long bytes = std::strtoull(length, nullptr, 10);
                if (bytes > limits.maxBodyBytes) {
                    return edge->refuse(connection, request, 413);
                }
                if (!edge->reserve(bytes)) {
                    return edge->refuse(connection, request, 503, { { MHD_HTTP_HEADER_RETRY_AFTER, "1" } });
                }
                request->reserved = bytes;
                if (!request->body.reserve(bytes)) {
                    return edge->refuse(connection, request, 503, { { MHD_HTTP_HEADER_RETRY_AFTER, "1" } });
                }
            }
            return MHD_YES;
        }
        if (*uploadSize > 0) {
            const size_t size = *uploadSize;
            *uploadSize = 0;
            if (request->answered) {
                return MHD_YES;
            }
            if (request->body.size() + size > limits.maxBodyBytes) {
                // A chunked body past the limit: the library takes no answer in the middle of a body, so the
                // connection is closed.
                return MHD_NO;
            }
            if (request->body.size() + size > request->reserved) {
                const size_t more = request->body.size() + size - request->reserved;
                if (!edge->reserve(more)) {
                    return MHD_NO;
                }
                request->reserved += more;
            }
            return request->body.append(upload, size) ? MHD_YES : MHD_NO;
        }
        if (request->answered) {
            return MHD_YES;
        }
        // Whole: handled now, with no deadline while the handler runs or the answer goes out (inactivity alone).
        edge->setDeadline(connection, never);
        HttpRequest in;
        in.method = method;
        in.path = url;
        in.body = request->body.view();
        in.peer = peer;
        in.connection = connection;
        HttpResponse out;
        edge->m_handler(in, out);
        return queueResponse(connection, out);
    }

    BoundedHttpServer &m_server;
    const std::vector<std::string> m_methods;
    std::string m_allow;
    const Handler m_handler;
    const Log m_log;
    std::string m_cert, m_key, m_ca; // alive while the daemon runs: it reads them from here
    MHD_Daemon *m_daemon = nullptr;

    mutable std::mutex m_mutex; // the members below
    std::condition_variable m_wake;
    std::condition_variable m_closed; // a connection ended (stop() waits for all)
    bool m_stopping = false;
    std::unordered_set<Connection *> m_connections;
    uint64_t m_timedOut = 0;
    uint64_t m_unauthorized = 0;
    size_t m_buffered = 0;
    size_t m_budget = 0;

    Refusals m_refusals; // who was refused, for the limit and the log
    std::thread m_reaper;
};

BoundedHttpServer::BoundedHttpServer(const Limits &limits, std::vector<std::string> methods, Handler handler)
    : BoundedHttpServer(limits, Security(), std::move(methods), std::move(handler))
{ }

BoundedHttpServer::BoundedHttpServer(
    const Limits &limits, Security security, std::vector<std::string> methods, Handler handler, Log log)
    : m_limits(limits)
    , m_security(std::move(security))
    , m_edge(std::make_unique<Edge>(*this, std::move(methods), std::move(handler), std::move(log)))
{ }

BoundedHttpServer::~BoundedHttpServer()
{
    stop();
}

bool BoundedHttpServer::start(const std::string &address, std::string *error)
{
    std::string host;
    int port = 0;
    if (!splitListenAddress(address, &host, &port, error)) {
        return false;
    }
    const auto &s = m_security;
    const std::string &p = s.optionPrefix;
    if (!s.tls() && (s.acceptsToken || !s.clientCaFile.empty())) {
        *error = fmt::format("{}-token-file and {}-client-ca need {}-tls-cert: a token or certificate check over "
                             "plain HTTP protects nothing",
            p, p, p);
        return false;
    }
    if (!isLoopbackHost(host) && !(s.tls() && s.authenticates()) && !s.insecureListen) {
        *error = fmt::format("{} is not a loopback address: anyone who reaches it could {}. Serve it with {}-tls-cert "
                             "and {}-tls-key and a credential ({}-token-file or {}-client-ca), or give "
                             "--insecure-listen to serve it as it is",
            address, p == "--remote-write" ? "push any GPU's values" : "read the fleet", p, p, p, p);
        return false;
    }
    int family = AF_INET;
    const int fd = listenOn(host, port, &family, error);
    if (fd < 0) {
        return false;
    }
    sockaddr_storage bound {};
    socklen_t length = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &length);
    m_port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                                      : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
    m_host = host;
    return m_edge->start(fd, family, error);
}

std::string BoundedHttpServer::listeningAddress() const
{
    return m_host.find(':') != std::string::npos ? fmt::format("[{}]:{}", m_host, m_port)
                                                 : fmt::format("{}:{}", m_host, m_port);
}

std::string BoundedHttpServer::url() const
{
    return fmt::format("{}://{}", m_security.tls() ? "https" : "http", listeningAddress());
}

void BoundedHttpServer::stop()
{
    if (m_edge) {
        m_edge->stop();
    }
}

BoundedHttpServer::Load BoundedHttpServer::load() const
{
    return m_edge->load();
}

} // namespace fleetscope::backend
