// SPDX-License-Identifier: Apache-2.0
// The exporter's HTTP side. httplib 0.11 (Debian's) parses and routes each request and writes its answer; the
// connection around the requests is ours, because httplib's own keeps a pool thread for as long as the connection
// stays open (the idle connections of a thousand node targets would hold every thread), queues connections without
// limit, reads a request line or header of any length into memory, and drops a pipelined request read past the one
// before. So a connection here reads each request whole, within maxHeaderBytes + maxBodyBytes and requestTimeout,
// checks its framing strictly (what httplib would let through: a header line without a colon, a body on a GET)
// and hands httplib the head alone.
#include "sim/exporterserver.h"

#include "core/listenaddress.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <functional>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <httplib.h>

namespace fleetscope::backend {

namespace {
using Clock = std::chrono::steady_clock;

bool equalsIgnoringCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

bool containsToken(std::string_view list, std::string_view token)
{
    for (size_t start = 0; start <= list.size();) {
        const size_t end = std::min(list.find(',', start), list.size());
        if (equalsIgnoringCase(trimmed(list.substr(start, end - start)), token)) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

bool isTokenChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// What of a request's head decides how it is framed and answered.
struct Head
{
    bool getOrHead = false; // the methods served
    bool keepAlive = false; // as the client asks, by its version and Connection header
    size_t contentLength = 0;
    bool chunked = false;
};

// Parses the request line and headers (head ends before the blank line). False when malformed: a line that is not
// METHOD /TARGET HTTP/1.x, a header line that is not NAME: VALUE, a bare CR or LF, a NUL, a bad or second
// Content-Length.
bool parseHead(std::string_view head, Head *r)
{
    std::string_view version;
    std::string_view connection;
    bool haveLength = false;
    for (size_t start = 0, end = 0; start <= head.size(); start = end + 2) {
        end = std::min(head.find("\r\n", start), head.size());
        const std::string_view line = head.substr(start, end - start);
        if (line.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
            return false;
        }
        if (start == 0) {
            const size_t sp1 = line.find(' ');
            const size_t sp2 = sp1 == line.npos ? sp1 : line.find(' ', sp1 + 1);
            const std::string_view method = line.substr(0, sp1);
            const std::string_view target = sp2 == line.npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
            version = sp2 == line.npos ? "" : line.substr(sp2 + 1);
            if (method.empty() || !std::all_of(method.begin(), method.end(), isTokenChar) || target.empty()
                || target.front() != '/' || (version != "HTTP/1.1" && version != "HTTP/1.0")) {
                return false;
            }
            r->getOrHead = method == "GET" || method == "HEAD";
            continue;
        }
        const size_t colon = line.find(':');
        if (colon == 0 || colon == line.npos || !std::all_of(line.begin(), line.begin() + colon, isTokenChar)) {
            return false;
        }
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = trimmed(line.substr(colon + 1));
        if (equalsIgnoringCase(name, "connection")) {
            connection = value;
        } else if (equalsIgnoringCase(name, "transfer-encoding")) {
            r->chunked = true;
        } else if (equalsIgnoringCase(name, "content-length")) {
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), r->contentLength);
            if (haveLength || value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
                return false;
            }
            haveLength = true;
        }
    }
    r->keepAlive
        = version == "HTTP/1.1" ? !containsToken(connection, "close") : containsToken(connection, "keep-alive");
    return true;
}

std::string_view reasonOf(int status)
{
    static constexpr std::pair<int, std::string_view> reasons[]
        = { { 400, "Bad Request" }, { 404, "Not Found" }, { 405, "Method Not Allowed" }, { 408, "Request Timeout" },
              { 413, "Payload Too Large" }, { 414, "URI Too Long" }, { 416, "Range Not Satisfiable" },
              { 431, "Request Header Fields Too Large" }, { 501, "Not Implemented" }, { 503, "Service Unavailable" } };
    const auto it
        = std::find_if(std::begin(reasons), std::end(reasons), [&](const auto &r) { return r.first == status; });
    return it != std::end(reasons) ? it->second : status < 500 ? "Client Error" : "Server Error";
}

// The short text every refusal has for a body: "404 Not Found\n".
std::string refusalText(int status)
{
    return fmt::format("{} {}\n", status, reasonOf(status));
}

// A refusal written without httplib, for requests never handed to it.
std::string simpleResponse(int status, bool keepAlive, std::string_view extraHeaders = {})
{
    const std::string body = refusalText(status);
    return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{}"
                       "Connection: {}\r\n\r\n{}",
        status, reasonOf(status), body.size(), extraHeaders, keepAlive ? "keep-alive" : "close", body);
}

// Appends what has arrived on fd, if anything; false once the peer has closed the connection or it broke.
bool receive(int fd, std::string *buffer)
{
    char chunk[16384];
    const ssize_t got = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (got > 0) {
        buffer->append(chunk, static_cast<size_t>(got));
    }
    return got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
}

// Set on the listener's thread while it runs a connection the pool has no room for: that one is answered 503.
thread_local bool t_refusing = false;

// The pool httplib's listener hands each accepted connection to. httplib's ThreadPool queues them without limit;
// this one keeps at most `queued` waiting, and runs any past that at once on the listener's thread, which answers
// it 503 without reading it (t_refusing), so that a flood costs a write and a close each.
class BoundedPool final : public httplib::TaskQueue
{
public:
    BoundedPool(size_t threads, size_t queued)
        : m_queued(queued)
    {
        for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) {
            m_threads.emplace_back([this] { work(); });
        }
    }
    ~BoundedPool() override { shutdown(); }

    void enqueue(std::function<void()> job) override
    {
        {
            std::lock_guard lock(m_mutex);
            if (m_jobs.size() < m_queued) {
                m_jobs.push_back(std::move(job));
                m_ready.notify_one();
                return;
            }
        }
        t_refusing = true;
        job();
        t_refusing = false;
    }

    // Runs what is queued, then joins the threads; safe to call twice.
    void shutdown() override
    {
        {
            std::lock_guard lock(m_mutex);
            m_shutdown = true;
        }
        m_ready.notify_all();
        for (auto &thread : m_threads) {
            if (thread.joinable()) {
                thread.join();
            }
        }
    }

    ExporterServer::Load load()
    {
        std::lock_guard lock(m_mutex);
        return { m_busy, m_jobs.size() };
    }

    // Whether a connection may stay open after its answer: while none waits, and at most half the threads hold one
    // (an idle kept-alive connection keeps its thread, so the other half is there for the rest).
    bool mayKeepAlive()
    {
        std::lock_guard lock(m_mutex);
        return m_jobs.empty() && m_busy * 2 <= m_threads.size();
    }

private:
    void work()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_ready.wait(lock, [&] { return !m_jobs.empty() || m_shutdown; });
            if (m_jobs.empty()) {
                return;
            }
            auto job = std::move(m_jobs.front());
            m_jobs.pop_front();
            ++m_busy;
            lock.unlock();
            job();
            lock.lock();
            --m_busy;
        }
    }

    const size_t m_queued;
    std::mutex m_mutex; // guards m_jobs, m_busy and m_shutdown
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_jobs;
    size_t m_busy = 0; // threads serving a connection
    bool m_shutdown = false;
    std::vector<std::thread> m_threads;
};

// What httplib's listener is given as its queue: the pool is the server's, so that load() can look at it, but the
// listener deletes what new_task_queue returns.
class QueueOf final : public httplib::TaskQueue
{
public:
    explicit QueueOf(BoundedPool &pool)
        : m_pool(pool)
    { }
    void enqueue(std::function<void()> job) override { m_pool.enqueue(std::move(job)); }
    void shutdown() override { m_pool.shutdown(); }

private:
    BoundedPool &m_pool;
};
} // namespace

class ExporterServer::Http final : public httplib::Server
{
public:
    Http(const Limits &limits, const std::atomic<bool> &stopping, int wakeFd)
        : m_limits(limits)
        , m_stopping(stopping)
        , m_wakeFd(wakeFd)
        , m_pool(limits.threads, limits.queued)
    {
        new_task_queue = [this] { return new QueueOf(m_pool); };
        // SO_REUSEADDR alone: httplib's default adds SO_REUSEPORT, with which a second exporter on a port in use
        // would start and take half its scrapes.
        set_socket_options([](socket_t fd) {
            const int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        });
    }

    // httplib listens with a backlog of 5: a thousand targets scraped at once would see their connections dropped
    // and retried a second later. listen() again sets a longer one.
    void widenBacklog() { ::listen(svr_sock_, 1024); }

    // What Server::stop() does, without its wait for the listener to have started (a stop right after start would
    // find it not yet running, do nothing, and leave it accepting for ever).
    void closeListener()
    {
        const socket_t fd = svr_sock_.exchange(INVALID_SOCKET);
        if (fd != INVALID_SOCKET) {
            ::shutdown(fd, SHUT_RDWR);
            ::close(fd);
        }
    }

    Load load() { return m_pool.load(); }

private:
    class HeadStream;
    enum class Wait { Ready, TimedOut, GiveUp };

    bool process_and_close_socket(socket_t fd) override
    {
        fcntl(fd, F_SETFD, FD_CLOEXEC); // httplib accepts without it: a child process would hold the connection
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); // an answer is its head, then its body
        if (t_refusing) {
            refuseBusy(fd);
        } else if (!m_stopping) {
            serve(fd);
        }
        ::close(fd);
        return true;
    }

    // Waits until fd is ready for events, or until the deadline or stop().
    Wait waitFor(int fd, short events, Clock::time_point deadline) const
    {
        pollfd fds[2] = { { fd, events, 0 }, { m_wakeFd, POLLIN, 0 } };
        for (;;) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                return Wait::TimedOut;
            }
            const int rc = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, INT32_MAX)));
            if ((rc < 0 && errno != EINTR) || fds[1].revents != 0) {
                return Wait::GiveUp;
            }
            if (rc > 0 && fds[0].revents != 0) {
                return Wait::Ready;
            }
        }
    }

    bool sendAll(int fd, const char *data, size_t size) const
    {
        while (size > 0) {
            const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent > 0) {
                data += sent;
                size -= static_cast<size_t>(sent);
            } else if (sent < 0 && errno != EINTR
                && (!(errno == EAGAIN || errno == EWOULDBLOCK)
                    || waitFor(fd, POLLOUT, Clock::now() + m_limits.sendTimeout) != Wait::Ready)) {
                return false;
            }
        }
        return true;
    }

    bool sendAll(int fd, std::string_view text) const { return sendAll(fd, text.data(), text.size()); }

    // A connection past the pool's queue: told to come back, on the listener's thread, so without waiting for it.
    static void refuseBusy(int fd)
    {
        const auto busy = simpleResponse(503, false, "Retry-After: 1\r\n");
        [[maybe_unused]] const auto sent = send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        // What of the request has come is read, so that the close is a FIN after the answer and not a reset.
        std::string ignored;
        for (size_t before = 1; ignored.size() < maxHeaderBytes && ignored.size() != before;) {
            before = ignored.size();
            if (!receive(fd, &ignored)) {
                break;
            }
        }
    }

    void serve(int fd);
    bool answer(int fd, std::string_view head, bool keepAlive);

    const Limits &m_limits;
    const std::atomic<bool> &m_stopping;
    const int m_wakeFd;
    BoundedPool m_pool;
};

// What httplib reads of a request: its head, received whole before; and the socket its answer goes to.
class ExporterServer::Http::HeadStream final : public httplib::Stream
{
public:
    HeadStream(const Http &http, int fd, std::string_view head)
        : m_http(http)
        , m_fd(fd)
        , m_head(head)
    { }
    bool is_readable() const override { return !m_head.empty(); }
    bool is_writable() const override { return true; }
    ssize_t read(char *ptr, size_t size) override
    {
        size = std::min(size, m_head.size());
        m_head.copy(ptr, size);
        m_head.remove_prefix(size);
        return static_cast<ssize_t>(size);
    }
    ssize_t write(const char *ptr, size_t size) override
    {
        return m_http.sendAll(m_fd, ptr, size) ? static_cast<ssize_t>(size) : -1;
    }
    // Peer and local addresses are for httplib's REMOTE_ADDR headers, which nothing here reads.
    void get_remote_ip_and_port(std::string &, int &) const override { }
    void get_local_ip_and_port(std::string &, int &) const override { }
    socket_t socket() const override { return m_fd; }

private:
    const Http &m_http;
    const int m_fd;
    std::string_view m_head;
};

void ExporterServer::Http::serve(int fd)
{
    std::string buffer;
    // An answer that ends the connection: the request cannot be served.
    auto refuse = [&](int status) { sendAll(fd, simpleResponse(status, false)); };
    for (;;) {
        // An idle connection waits idleTimeout for a request; a request once begun has requestTimeout in all to come
        // whole, however slowly its bytes trickle in.
        auto deadline = Clock::now() + (buffer.empty() ? m_limits.idleTimeout : m_limits.requestTimeout);
        size_t headEnd = std::string::npos;
        while ((headEnd = buffer.find("\r\n\r\n")) == std::string::npos && buffer.size() <= maxHeaderBytes) {
            const Wait wait = waitFor(fd, POLLIN, deadline);
            if (wait == Wait::TimedOut && !buffer.empty()) {
                return refuse(408);
            }
            const bool idle = buffer.empty();
            if (wait != Wait::Ready || !receive(fd, &buffer)) {
                return;
            }
            if (idle && !buffer.empty()) {
                deadline = Clock::now() + m_limits.requestTimeout;
            }
        }
        if (headEnd == std::string::npos || headEnd > maxHeaderBytes) {
            return refuse(431);
        }
        Head request;
        if (!parseHead(std::string_view(buffer).substr(0, headEnd), &request)) {
            return refuse(400);
        }
        if (request.chunked) {
            return refuse(501);
        }
        if (request.contentLength > maxBodyBytes) {
            return refuse(413);
        }
        // A body is not wanted, but read past it so that the next request on the connection starts where it should.
        const size_t requestEnd = headEnd + 4 + request.contentLength;
        while (buffer.size() < requestEnd) {
            const Wait wait = waitFor(fd, POLLIN, deadline);
            if (wait == Wait::TimedOut) {
                return refuse(408);
            }
            if (wait != Wait::Ready || !receive(fd, &buffer)) {
                return;
            }
        }
        // The server closes a connection only when an answer says so (or after idleTimeout): a scraper reusing one
        // closed under it would lose that scrape (vmagent does not retry it).
        const bool keepAlive = request.keepAlive && !m_stopping && m_pool.mayKeepAlive();
        const bool ok = request.getOrHead ? answer(fd, std::string_view(buffer).substr(0, headEnd + 4), keepAlive)
                                          : sendAll(fd, simpleResponse(405, keepAlive, "Allow: GET, HEAD\r\n"));
        if (!ok || !keepAlive) {
            return;
        }
        buffer.erase(0, requestEnd);
    }
}

bool ExporterServer::Http::answer(int fd, std::string_view head, bool keepAlive)
{
    HeadStream stream(*this, fd, head);
    bool closed = false;
    return process_request(stream, !keepAlive, closed, [](httplib::Request &request) {
        // Pages go out whole and as they are: no byte ranges (a hundred ranges of the fleet's page would be a hundred
        // pages), and no gzip (compressing a page per scrape would cost more than cutting it from the fleet's).
        request.ranges.clear();
        request.headers.erase("Accept-Encoding");
    });
}

ExporterServer::ExporterServer(const FrameSource &source, ExporterPage::Options options)
    : ExporterServer(source, std::move(options), Limits())
{ }

ExporterServer::ExporterServer(const FrameSource &source, ExporterPage::Options options, Limits limits)
    : m_source(source)
    , m_options(std::move(options))
    , m_limits(limits)
{
    const auto &nodes = m_source.shape().nodes;
    m_nodesByHostname.resize(nodes.size());
    for (uint32_t k = 0; k < m_nodesByHostname.size(); ++k) {
        m_nodesByHostname[k] = k;
    }
    std::stable_sort(m_nodesByHostname.begin(), m_nodesByHostname.end(),
        [&](uint32_t a, uint32_t b) { return nodes[a].hostname < nodes[b].hostname; });
}

ExporterServer::~ExporterServer()
{
    stop();
}

bool ExporterServer::start(const std::string &address, std::string *error)
{
    int requestedPort = 0;
    std::string host;
    if (!splitListenAddress(address, &host, &requestedPort, error)) {
        return false;
    }
    if (m_wakeFd < 0 && (m_wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        *error = fmt::format("eventfd: {}", std::strerror(errno));
        return false;
    }
    m_http = std::make_unique<Http>(m_limits, m_stopping, m_wakeFd);
    m_http->set_error_handler([](const httplib::Request &, httplib::Response &response) {
        response.set_content(refusalText(response.status), "text/plain; charset=utf-8");
    });
    // The connection's fate is the one Http::serve decided, said as HTTP/1.1 says it; httplib's Keep-Alive counts
    // are not ours, and neither are byte ranges.
    m_http->set_post_routing_handler([](const httplib::Request &, httplib::Response &response) {
        response.headers.erase("Keep-Alive");
        response.headers.erase("Accept-Ranges");
        if (!response.has_header("Connection")) {
            response.set_header("Connection", "keep-alive");
        }
    });
    // Every GET and HEAD is routed here, before httplib's routes: those match with std::regex, whose matcher recurses
    // once per character of the path and so is no place for a path the network chose.
    m_http->set_pre_routing_handler([this](const httplib::Request &request, httplib::Response &response) {
        answerScrape(request.target, &response);
        return httplib::Server::HandlerResponse::Handled;
    });
    errno = 0;
    m_port = requestedPort == 0 ? m_http->bind_to_any_port(host)
                                : (m_http->bind_to_port(host, requestedPort) ? requestedPort : -1);
    if (m_port <= 0) {
        *error
            = fmt::format("cannot listen on {}{}", address, errno != 0 ? ": " + std::string(std::strerror(errno)) : "");
        m_http.reset();
        m_port = 0;
        return false;
    }
    m_http->widenBacklog();
    m_host = host;
    m_listenThread = std::thread([this] { m_http->listen_after_bind(); });
    return true;
}

ExporterServer::Load ExporterServer::load() const
{
    return m_http ? m_http->load() : Load();
}

void ExporterServer::stop()
{
    if (m_stopping.exchange(true)) {
        return;
    }
    if (m_wakeFd >= 0) {
        const uint64_t one = 1;
        [[maybe_unused]] const auto written = write(m_wakeFd, &one, sizeof one);
    }
    if (m_http) {
        m_http->closeListener();
    }
    // The listener returns once its pool has run every connection: those still queued close at once.
    if (m_listenThread.joinable()) {
        m_listenThread.join();
    }
    m_http.reset();
    if (m_wakeFd >= 0) {
        close(m_wakeFd);
        m_wakeFd = -1;
    }
}

} // namespace fleetscope::backend
