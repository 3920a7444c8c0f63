// SPDX-License-Identifier: Apache-2.0
#include "sim/exporterserver.h"

#include "core/listenaddress.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string_view>

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// A connection with a request half read is given this long to finish it; an idle keep-alive connection (Prometheus
// keeps one per target between scrapes) this long before it is closed.
constexpr int requestTimeoutMs = 10000;
constexpr int idleTimeoutMs = 120000;
// A client that takes nothing of the answer for this long is dropped.
constexpr int sendStallTimeoutMs = 30000;

bool equalsIgnoringCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

bool containsToken(std::string_view list, std::string_view token)
{
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find(',', start);
        if (end == std::string_view::npos) {
            end = list.size();
        }
        std::string_view item = list.substr(start, end - start);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
            item.remove_prefix(1);
        }
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
            item.remove_suffix(1);
        }
        if (equalsIgnoringCase(item, token)) {
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

struct Request
{
    std::string_view method;
    std::string_view target;
    bool http11 = false;
    std::string_view connection;
    size_t contentLength = 0;
    bool chunked = false;
};

// Parses the request line and headers (head ends before the blank line). False when malformed.
bool parseHead(std::string_view head, Request *r)
{
    size_t lineEnd = head.find("\r\n");
    std::string_view line = head.substr(0, lineEnd);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != line.npos) {
        return false;
    }
    r->method = line.substr(0, sp1);
    r->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (r->method.empty() || !std::all_of(r->method.begin(), r->method.end(), isTokenChar) || r->target.empty()
        || r->target.front() != '/') {
        return false;
    }
    if (version == "HTTP/1.1") {
        r->http11 = true;
    } else if (version != "HTTP/1.0") {
        return false;
    }
    bool haveLength = false;
    while (lineEnd != std::string_view::npos) {
        const size_t start = lineEnd + 2;
        lineEnd = head.find("\r\n", start);
        line = head.substr(start, lineEnd == std::string_view::npos ? std::string_view::npos : lineEnd - start);
        const size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos
            || !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon), isTokenChar)) {
            return false;
        }
        const std::string_view name = line.substr(0, colon);
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
            value.remove_prefix(1);
        }
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
            value.remove_suffix(1);
        }
        if (equalsIgnoringCase(name, "connection")) {
            r->connection = value;
        } else if (equalsIgnoringCase(name, "transfer-encoding")) {
            r->chunked = true;
        } else if (equalsIgnoringCase(name, "content-length")) {
            size_t length = 0;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
            if (haveLength || value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
                return false;
            }
            haveLength = true;
            r->contentLength = length;
        }
    }
    return true;
}

// A short text answer, "STATUS REASON\n"; for a HEAD request its head alone.
std::string simpleResponse(
    int status, std::string_view reason, bool keepAlive, std::string_view extraHeaders = {}, bool head = false)
{
    const std::string body = fmt::format("{} {}\n", status, reason);
    return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{}"
                       "Connection: {}\r\n\r\n{}",
        status, reason, body.size(), extraHeaders, keepAlive ? "keep-alive" : "close", head ? "" : body);
}

int hexDigit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// A path segment with its %XX escapes decoded (a scraper escapes what a path cannot hold); false when an escape is
// malformed. What it decodes to is only ever compared with hostnames, never used as a path.
bool percentDecode(std::string_view segment, std::string *out)
{
    out->clear();
    out->reserve(segment.size());
    for (size_t i = 0; i < segment.size(); ++i) {
        if (segment[i] != '%') {
            out->push_back(segment[i]);
            continue;
        }
        const int high = i + 2 < segment.size() ? hexDigit(segment[i + 1]) : -1;
        const int low = high < 0 ? -1 : hexDigit(segment[i + 2]);
        if (low < 0) {
            return false;
        }
        out->push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return true;
}

// HOST:PORT, [HOST]:PORT for an IPv6 address.
std::string hostPort(const std::string &host, int port)
{
    return host.find(':') == std::string::npos ? fmt::format("{}:{}", host, port) : fmt::format("[{}]:{}", host, port);
}

// Appends what has arrived on fd (nothing when a signal cut the read short); false once the peer has closed the
// connection or it broke.
bool receive(int fd, std::string *buffer)
{
    char chunk[16384];
    const ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) {
        return true;
    }
    if (got <= 0) {
        return false;
    }
    buffer->append(chunk, static_cast<size_t>(got));
    return true;
}
} // namespace

ExporterServer::ExporterServer(const FrameSource &source, ExporterPage::Options options)
    : m_source(source)
    , m_options(std::move(options))
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
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo *found = nullptr;
    const std::string portText = std::to_string(requestedPort);
    if (const int rc = getaddrinfo(host.c_str(), portText.c_str(), &hints, &found); rc != 0) {
        *error = fmt::format("cannot resolve '{}': {}", host, gai_strerror(rc));
        return false;
    }
    std::string lastError = "no address";
    for (addrinfo *a = found; a != nullptr && m_listenFd < 0; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            lastError = std::strerror(errno);
            continue;
        }
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
            lastError = std::strerror(errno);
            close(fd);
            continue;
        }
        m_listenFd = fd;
    }
    freeaddrinfo(found);
    if (m_listenFd < 0) {
        *error = fmt::format("cannot listen on {}: {}", address, lastError);
        return false;
    }
    sockaddr_storage bound {};
    socklen_t length = sizeof bound;
    getsockname(m_listenFd, reinterpret_cast<sockaddr *>(&bound), &length);
    m_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
    m_host = host;
    m_wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_wakeFd < 0) {
        *error = fmt::format("eventfd: {}", std::strerror(errno));
        close(m_listenFd);
        m_listenFd = -1;
        return false;
    }
    m_acceptThread = std::thread([this] { acceptLoop(); });
    return true;
}

std::string ExporterServer::listeningAddress() const
{
    return hostPort(m_host, m_port);
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
    if (m_acceptThread.joinable()) {
        m_acceptThread.join();
    }
    for (auto &c : m_connections) {
        c.thread.join();
    }
    m_connections.clear();
    if (m_listenFd >= 0) {
        close(m_listenFd);
        m_listenFd = -1;
    }
    if (m_wakeFd >= 0) {
        close(m_wakeFd);
        m_wakeFd = -1;
    }
}

int64_t ExporterServer::nodeOf(std::string_view hostname) const
{
    const auto &nodes = m_source.shape().nodes;
    const auto it = std::lower_bound(m_nodesByHostname.begin(), m_nodesByHostname.end(), hostname,
        [&](uint32_t k, std::string_view name) { return nodes[k].hostname < name; });
    return it != m_nodesByHostname.end() && nodes[*it].hostname == hostname ? static_cast<int64_t>(*it) : -1;
}

uint64_t ExporterServer::renderCount()
{
    std::lock_guard lock(m_renderMutex);
    return m_renders;
}

std::shared_ptr<const ExporterPage::Rendered> ExporterServer::page(uint64_t *sequence)
{
    std::unique_lock lock(m_renderMutex);
    // Only the first page is waited for. While one scrape renders a new frame the others are answered the page in
    // hand, one frame old: a large fleet takes a while to render (a third of a second at 102,400 GPUs), and a
    // thousand node targets scraped meanwhile would otherwise queue up behind it, past maxConnections.
    m_rendered.wait(lock, [&] { return m_page || !m_rendering; });
    auto frame = m_source.latest();
    if (m_rendering || (m_page && m_pageSequence == frame->sequence)) {
        if (sequence) {
            *sequence = m_pageSequence;
        }
        return m_page;
    }
    m_rendering = true;
    lock.unlock();
    // The frame and the jobs are published together; read the jobs between two looks at the latest frame so that
    // both belong to the same one.
    std::vector<JobInfo> jobs;
    for (;;) {
        jobs = m_source.jobs();
        auto again = m_source.latest();
        if (again->sequence == frame->sequence) {
            break;
        }
        frame = std::move(again);
    }
    auto rendered = std::make_shared<const ExporterPage::Rendered>(
        ExporterPage::render(m_source.shape(), *frame, jobs, m_options));
    lock.lock();
    m_page = std::move(rendered);
    m_pageSequence = frame->sequence;
    ++m_renders;
    m_rendering = false;
    m_rendered.notify_all();
    if (sequence) {
        *sequence = m_pageSequence;
    }
    return m_page;
}

bool ExporterServer::waitFor(int fd, short events, int timeoutMs) const
{
    pollfd fds[2] = { { fd, events, 0 }, { m_wakeFd, POLLIN, 0 } };
    for (;;) {
        const int rc = poll(fds, 2, timeoutMs);
        if (rc < 0 && errno == EINTR) {
            continue;
        }
        return rc > 0 && fds[1].revents == 0 && fds[0].revents != 0;
    }
}

bool ExporterServer::sendAll(int fd, const char *data, size_t size) const
{
    while (size > 0) {
        const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            data += sent;
            size -= static_cast<size_t>(sent);
            continue;
        }
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waitFor(fd, POLLOUT, sendStallTimeoutMs)) {
            continue;
        }
        return false;
    }
    return true;
}

void ExporterServer::acceptLoop()
{
    for (;;) {
        if (!waitFor(m_listenFd, POLLIN, -1)) {
            if (m_stopping) {
                return;
            }
            continue;
        }
        const int fd = accept4(m_listenFd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                // Out of descriptors: the listening socket stays readable, so pause instead of spinning.
                pollfd wake { m_wakeFd, POLLIN, 0 };
                poll(&wake, 1, 100);
            }
            continue; // the peer gave up before we took it, or a transient shortage of descriptors
        }
        m_connections.remove_if([](Connection &c) {
            if (!c.done->load()) {
                return false;
            }
            c.thread.join();
            return true;
        });
        if (m_connections.size() >= maxConnections) {
            const auto busy = simpleResponse(503, "Service Unavailable", false);
            [[maybe_unused]] const auto sent = send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
            continue;
        }
        auto done = std::make_shared<std::atomic<bool>>(false);
        ++m_open;
        m_connections.push_back({ std::thread([this, fd, done] {
                                     serve(fd);
                                     close(fd);
                                     --m_open;
                                     done->store(true);
                                 }),
            done });
    }
}

void ExporterServer::serve(int fd)
{
    std::string buffer;
    // An answer that ends the connection: the request cannot be served.
    auto refuse = [&](int status, std::string_view reason) {
        const auto answer = simpleResponse(status, reason, false);
        sendAll(fd, answer.data(), answer.size());
    };
    for (;;) {
        // Read up to the blank line that ends the head.
        size_t headEnd = std::string::npos;
        while ((headEnd = buffer.find("\r\n\r\n")) == std::string::npos) {
            if (buffer.size() > maxHeaderBytes) {
                refuse(431, "Request Header Fields Too Large");
                return;
            }
            if (!waitFor(fd, POLLIN, buffer.empty() ? idleTimeoutMs : requestTimeoutMs)) {
                if (!buffer.empty() && !m_stopping) {
                    refuse(408, "Request Timeout");
                }
                return;
            }
            if (!receive(fd, &buffer)) {
                return;
            }
        }

        Request request;
        if (!parseHead(std::string_view(buffer).substr(0, headEnd), &request)) {
            refuse(400, "Bad Request");
            return;
        }
        if (request.chunked) {
            refuse(501, "Not Implemented");
            return;
        }
        if (request.contentLength > maxBodyBytes) {
            refuse(413, "Payload Too Large");
            return;
        }
        // A body is not wanted, but read past it so that the next request on the connection starts where it should.
        const size_t requestEnd = headEnd + 4 + request.contentLength;
        while (buffer.size() < requestEnd) {
            if (!waitFor(fd, POLLIN, requestTimeoutMs) || !receive(fd, &buffer)) {
                return;
            }
        }
        // The request's fields view the buffer, which reading the body may have moved: view it again.
        parseHead(std::string_view(buffer).substr(0, headEnd), &request);
        // Past keepAliveLimit connections, each is closed after its answer: a scraper of a thousand node targets
        // keeps one idle connection per target, which would hold every slot and leave the next scrapes a 503.
        const bool keepAlive = (request.http11 ? !containsToken(request.connection, "close")
                                               : containsToken(request.connection, "keep-alive"))
            && m_open.load() <= keepAliveLimit;
        const std::string_view path = request.target.substr(0, request.target.find('?'));
        const bool head = request.method == "HEAD";
        auto sendSimple = [&](int status, std::string_view reason, std::string_view extraHeaders = {}) {
            const auto answer = simpleResponse(status, reason, keepAlive, extraHeaders, head);
            return sendAll(fd, answer.data(), answer.size());
        };
        auto sendPage = [&](std::string_view body) {
            const auto headers = fmt::format("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                                             "charset=utf-8\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
                body.size(), keepAlive ? "keep-alive" : "close");
            return sendAll(fd, headers.data(), headers.size()) && (head || sendAll(fd, body.data(), body.size()));
        };
        static constexpr std::string_view nodePrefix = "/metrics/";
        bool ok = true;
        if (request.method != "GET" && !head) {
            ok = sendSimple(405, "Method Not Allowed", "Allow: GET, HEAD\r\n");
        } else if (path == "/metrics") {
            const auto rendered = page();
            ok = sendPage(rendered->text);
        } else if (path.substr(0, nodePrefix.size()) == nodePrefix) {
            std::string hostname;
            if (!percentDecode(path.substr(nodePrefix.size()), &hostname)) {
                ok = sendSimple(400, "Bad Request");
            } else if (const int64_t node = nodeOf(hostname); node < 0) {
                ok = sendSimple(404, "Not Found");
            } else {
                // A few dozen kilobytes cut from the shared page; the fleet is not rendered again.
                const auto rendered = page();
                ok = sendPage(rendered->nodePage(static_cast<uint32_t>(node)));
            }
        } else {
            ok = sendSimple(404, "Not Found");
        }
        if (!ok || !keepAlive) {
            return;
        }
        buffer.erase(0, requestEnd);
    }
}

} // namespace fleetscope::backend
