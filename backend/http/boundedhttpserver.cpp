// SPDX-License-Identifier: Apache-2.0
// The connection handling of the backend's HTTP endpoints. httplib 0.11 (Debian's) parses and routes each request and
// writes its answer; the connection around the requests is ours, because httplib's own keeps a pool thread for as
// long as the connection stays open (the idle connections of a thousand scrape targets or remote-write senders would
// hold every thread), queues accepted connections without limit (under overload they pile up instead of being told
// to come back), reads a request line or header of any length into memory, and drops a pipelined request read past
// the one before. So a connection here reads each request whole, within the limits, checks its framing strictly and
// hands httplib the head; the handler gets the body as it was received.
#include "http/boundedhttpserver.h"

#include "core/listenaddress.h"
#include "http/requesthead.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>

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

// Appends what has arrived on fd, if anything, reading at most chunk bytes; false once the peer has closed the
// connection or it broke.
bool receive(int fd, std::string *buffer, size_t chunk = 16384)
{
    const size_t at = buffer->size();
    buffer->resize(at + chunk);
    const ssize_t got = recv(fd, buffer->data() + at, chunk, MSG_DONTWAIT);
    buffer->resize(at + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    return got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
}

// Set on the listener's thread while it runs a connection the pool has no room for: that one is answered 503.
thread_local bool t_refusing = false;
// The body of the request being answered on this thread, for the handler (httplib's pre-routing handler, through
// which every request is answered, is given the head alone).
thread_local std::string_view t_body;

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
            if (m_jobs.size() < m_queued && !m_shutdown) {
                m_jobs.push_back(std::move(job));
                m_ready.notify_one();
                return;
            }
            ++m_turnedAway;
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

    BoundedHttpServer::Load load()
    {
        std::lock_guard lock(m_mutex);
        return { m_busy, m_jobs.size(), m_turnedAway };
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
    std::mutex m_mutex; // guards m_jobs, m_busy, m_turnedAway and m_shutdown
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_jobs;
    size_t m_busy = 0; // threads serving a connection
    uint64_t m_turnedAway = 0;
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

class BoundedHttpServer::Http final : public httplib::Server
{
public:
    Http(const Limits &limits, std::vector<std::string> methods, BoundedHttpServer::Handler handler)
        : m_limits(limits)
        , m_methods(std::move(methods))
        , m_handler(std::move(handler))
        , m_wakeFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
        , m_pool(limits.threads, limits.queued)
    {
        for (const auto &method : m_methods) {
            m_allow += (m_allow.empty() ? "Allow: " : ", ") + method;
        }
        m_allow += "\r\n";
        new_task_queue = [this] { return new QueueOf(m_pool); };
        set_socket_options([](socket_t fd) {
            const int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        });
        set_payload_max_length(limits.maxBodyBytes);
        set_error_handler([](const httplib::Request &, httplib::Response &response) {
            if (response.body.empty()) {
                response.set_content(refusalText(response.status), "text/plain; charset=utf-8");
            }
        });
        // The connection's fate is the one serve() decided, said as HTTP/1.1 says it; httplib's Keep-Alive counts are
        // not ours, and neither are byte ranges.
        set_post_routing_handler([](const httplib::Request &, httplib::Response &response) {
            response.headers.erase("Keep-Alive");
            response.headers.erase("Accept-Ranges");
            if (!response.has_header("Connection")) {
                response.set_header("Connection", "keep-alive");
            }
        });
        // Every request is answered here, before httplib's routes: those match with std::regex, whose matcher recurses
        // once per character of the path and so is no place for a path the network chose.
        set_pre_routing_handler([this](const httplib::Request &request, httplib::Response &response) {
            m_handler(request, t_body, response);
            return httplib::Server::HandlerResponse::Handled;
        });
    }
    ~Http() override
    {
        m_pool.shutdown();
        if (m_wakeFd >= 0) {
            close(m_wakeFd);
        }
    }

    int wakeFd() const { return m_wakeFd; }

    // httplib listens with a backlog of 5: a thousand targets scraped at once would see their connections dropped
    // and retried a second later. listen() again sets a longer one.
    void widenBacklog() { ::listen(svr_sock_, 1024); }

    // Wakes every connection's wait for good, and closes the listener. What Server::stop() does, without its wait for
    // the listener to have started (a stop right after start would find it not yet running, do nothing, and leave it
    // accepting for ever).
    void stop()
    {
        m_stopping = true;
        const uint64_t one = 1;
        [[maybe_unused]] const auto written = write(m_wakeFd, &one, sizeof one);
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
    void refuseBusy(int fd) const
    {
        const auto busy = refusalResponse(503, false, "Retry-After: 1\r\n");
        [[maybe_unused]] const auto sent = send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        // What of the request has come is read, so that the close is a FIN after the answer and not a reset.
        std::string ignored;
        for (size_t before = 1; ignored.size() < m_limits.maxHeaderBytes && ignored.size() != before;) {
            before = ignored.size();
            if (!receive(fd, &ignored)) {
                break;
            }
        }
    }

    // After an answer that ends a connection whose request was not read whole (a body over the limit, a head too
    // slow): what the client still sends is dropped unread for a moment, until it closes or at most a second, so that
    // the close is a FIN after the answer rather than a reset, and a client still writing its body gets to read why.
    void linger(int fd) const
    {
        ::shutdown(fd, SHUT_WR);
        const auto deadline = Clock::now() + std::min<std::chrono::milliseconds>(m_limits.requestTimeout, lingerTime);
        char scratch[16384];
        while (waitFor(fd, POLLIN, deadline) == Wait::Ready) {
            const ssize_t got = recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
                return;
            }
        }
    }

    bool serves(std::string_view method) const
    {
        return std::find(m_methods.begin(), m_methods.end(), method) != m_methods.end();
    }

    void serve(int fd);
    bool answer(int fd, std::string_view head, std::string_view body, bool keepAlive);

    static constexpr std::chrono::milliseconds lingerTime { 1000 };

    const Limits &m_limits;
    const std::vector<std::string> m_methods;
    std::string m_allow; // "Allow: GET, HEAD\r\n"
    const BoundedHttpServer::Handler m_handler;
    const int m_wakeFd; // an eventfd, written once by stop(): readable from then on, it wakes every connection's poll
    std::atomic<bool> m_stopping { false };
    BoundedPool m_pool;
};

// What httplib reads of a request: its head, received whole before; and the socket its answer goes to.
class BoundedHttpServer::Http::HeadStream final : public httplib::Stream
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

void BoundedHttpServer::Http::serve(int fd)
{
    std::string buffer;
    // An answer that ends the connection: the request cannot be served.
    auto refuse = [&](int status, std::string_view extraHeaders = {}) {
        if (sendAll(fd, refusalResponse(status, false, extraHeaders))) {
            linger(fd);
        }
    };
    for (;;) {
        // An idle connection waits idleTimeout for a request; a request once begun has requestTimeout in all to come
        // whole, however slowly its bytes trickle in.
        auto deadline = Clock::now() + (buffer.empty() ? m_limits.idleTimeout : m_limits.requestTimeout);
        size_t headEnd = std::string::npos;
        while ((headEnd = buffer.find("\r\n\r\n")) == std::string::npos && buffer.size() <= m_limits.maxHeaderBytes) {
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
        if (headEnd == std::string::npos || headEnd > m_limits.maxHeaderBytes) {
            return refuse(431);
        }
        RequestHead request;
        if (!RequestHead::parse(std::string_view(buffer).substr(0, headEnd), &request)) {
            return refuse(400);
        }
        if (request.chunked) {
            return refuse(501);
        }
        // Refused from its length alone: none of a body over the limit is read.
        if (request.contentLength > m_limits.maxBodyBytes) {
            return refuse(413);
        }
        const bool served = serves(request.method);
        const size_t requestEnd = headEnd + 4 + request.contentLength;
        if (request.expectContinue && buffer.size() < requestEnd) {
            // The client waits to hear whether to send its body (curl does, for large ones).
            if (!served) {
                return refuse(405, m_allow);
            }
            if (!sendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) {
                return;
            }
        }
        // Read whole, body and all (one not served is read past, so that the next request on the connection starts
        // where it should).
        buffer.reserve(requestEnd);
        while (buffer.size() < requestEnd) {
            const Wait wait = waitFor(fd, POLLIN, deadline);
            if (wait == Wait::TimedOut) {
                return refuse(408);
            }
            if (wait != Wait::Ready
                || !receive(fd, &buffer, std::clamp<size_t>(requestEnd - buffer.size(), 16384, 1 << 20))) {
                return;
            }
        }
        // The server closes a connection only when an answer says so (or after idleTimeout): a client reusing one
        // closed under it would lose that request (vmagent does not retry a scrape).
        const bool keepAlive = request.keepAlive && !m_stopping && m_pool.mayKeepAlive();
        const std::string_view whole(buffer);
        const bool ok = served
            ? answer(fd, whole.substr(0, headEnd + 4), whole.substr(headEnd + 4, request.contentLength), keepAlive)
            : sendAll(fd, refusalResponse(405, keepAlive, m_allow));
        if (!ok || !keepAlive) {
            return;
        }
        buffer.erase(0, requestEnd);
    }
}

bool BoundedHttpServer::Http::answer(int fd, std::string_view head, std::string_view body, bool keepAlive)
{
    HeadStream stream(*this, fd, head);
    bool closed = false;
    t_body = body;
    const bool ok = process_request(stream, !keepAlive, closed, [](httplib::Request &request) {
        // Answers go out whole and as they are: no byte ranges (a hundred ranges of a large page would be a hundred
        // pages), no compression (it would cost more than the answer); a 100 Continue was sent before the body.
        request.ranges.clear();
        request.headers.erase("Accept-Encoding");
        request.headers.erase("Expect");
    });
    t_body = {};
    return ok;
}

BoundedHttpServer::BoundedHttpServer(const Limits &limits, std::vector<std::string> methods, Handler handler)
    : m_limits(limits)
    , m_http(std::make_unique<Http>(m_limits, std::move(methods), std::move(handler)))
{ }

BoundedHttpServer::~BoundedHttpServer()
{
    stop();
}

bool BoundedHttpServer::start(const std::string &address, std::string *error)
{
    int requestedPort = 0;
    std::string host;
    if (!splitListenAddress(address, &host, &requestedPort, error)) {
        return false;
    }
    if (m_http->wakeFd() < 0) {
        *error = fmt::format("eventfd: {}", std::strerror(errno));
        return false;
    }
    if (m_listenThread.joinable() || m_stopping) {
        *error = "the server was started before";
        return false;
    }
    errno = 0;
    m_port = requestedPort == 0 ? m_http->bind_to_any_port(host)
                                : (m_http->bind_to_port(host, requestedPort) ? requestedPort : -1);
    if (m_port <= 0) {
        *error
            = fmt::format("cannot listen on {}{}", address, errno != 0 ? ": " + std::string(std::strerror(errno)) : "");
        m_port = 0;
        return false;
    }
    m_http->widenBacklog();
    m_host = host;
    m_listenThread = std::thread([this] { m_http->listen_after_bind(); });
    return true;
}

std::string BoundedHttpServer::listeningAddress() const
{
    return m_host.find(':') == std::string::npos ? fmt::format("{}:{}", m_host, m_port)
                                                 : fmt::format("[{}]:{}", m_host, m_port);
}

BoundedHttpServer::Load BoundedHttpServer::load() const
{
    return m_http->load();
}

void BoundedHttpServer::stop()
{
    if (m_stopping.exchange(true)) {
        return;
    }
    m_http->stop();
    // The listener returns once its pool has run every connection: those still queued close at once.
    if (m_listenThread.joinable()) {
        m_listenThread.join();
    }
}

} // namespace fleetscope::backend
