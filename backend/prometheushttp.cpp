// SPDX-License-Identifier: Apache-2.0
#include "prometheushttp.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

using Clock = std::chrono::steady_clock;

class Socket
{
public:
    explicit Socket(int fd)
        : m_fd(fd)
    { }
    ~Socket()
    {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Socket(const Socket &) = delete;
    Socket &operator=(const Socket &) = delete;
    int fd() const { return m_fd; }

private:
    int m_fd;
};

// Waits for events on fd until the deadline; false on time-out.
bool waitFor(int fd, short events, Clock::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            return false;
        }
        pollfd p { fd, events, 0 };
        const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
        if (n > 0) {
            return true;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

bool iequalsPrefix(const std::string &text, size_t at, const char *prefix)
{
    const size_t n = std::strlen(prefix);
    if (text.size() < at + n) {
        return false;
    }
    for (size_t i = 0; i < n; ++i) {
        if (std::tolower(static_cast<unsigned char>(text[at + i])) != prefix[i]) {
            return false;
        }
    }
    return true;
}

enum class Parse { Incomplete, Complete, Error };

// Decodes a chunked body starting at `from` into out. Incomplete until the last chunk is in.
Parse dechunk(const std::string &raw, size_t from, std::string *out, std::string *error)
{
    out->clear();
    size_t at = from;
    for (;;) {
        const size_t eol = raw.find("\r\n", at);
        if (eol == std::string::npos) {
            return Parse::Incomplete;
        }
        size_t size = 0;
        const auto [ptr, ec] = std::from_chars(raw.data() + at, raw.data() + eol, size, 16);
        if (ec != std::errc() || ptr == raw.data() + at) {
            *error = "malformed chunked encoding";
            return Parse::Error;
        }
        at = eol + 2;
        if (size > (size_t { 1 } << 40U)) { // no answer is a terabyte; and at + size must not wrap
            *error = "chunk size out of range";
            return Parse::Error;
        }
        if (size == 0) {
            return raw.find("\r\n", at) == std::string::npos ? Parse::Incomplete : Parse::Complete;
        }
        if (raw.size() < at + size + 2) {
            return Parse::Incomplete;
        }
        out->append(raw, at, size);
        at += size + 2;
    }
}

} // namespace

bool PrometheusHttp::setBaseUrl(const std::string &url, std::string *error)
{
    const std::string scheme = "http://";
    if (url.rfind("https://", 0) == 0) {
        *error = fmt::format("'{}': https is not supported yet; use http:// (or a local TLS-terminating proxy)", url);
        return false;
    }
    if (url.rfind(scheme, 0) != 0) {
        *error = fmt::format("'{}' is not an http:// URL", url);
        return false;
    }
    const std::string rest = url.substr(scheme.size());
    const size_t slash = rest.find('/');
    const std::string authority = rest.substr(0, slash);
    std::string prefix = slash == std::string::npos ? std::string() : rest.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') {
        prefix.pop_back();
    }
    if (authority.empty() || authority.find('@') != std::string::npos) {
        *error
            = fmt::format("'{}': need http://HOST[:PORT][/PATH] (credentials in the URL are not supported yet)", url);
        return false;
    }
    std::string host = authority;
    std::string port = "80";
    if (authority.front() == '[') { // IPv6 literal
        const size_t close = authority.find(']');
        if (close == std::string::npos) {
            *error = fmt::format("'{}': unterminated IPv6 address", url);
            return false;
        }
        host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') {
                *error = fmt::format("'{}': bad port", url);
                return false;
            }
            port = authority.substr(close + 2);
        }
    } else if (const size_t colon = authority.rfind(':'); colon != std::string::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    unsigned number = 0;
    const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (host.empty() || ec != std::errc() || ptr != port.data() + port.size() || number == 0 || number > 65535) {
        *error = fmt::format("'{}': need http://HOST[:PORT][/PATH] with a port from 1 to 65535", url);
        return false;
    }
    m_baseUrl = url;
    m_host = host;
    m_port = port;
    m_prefix = prefix;
    return true;
}

std::string PrometheusHttp::encode(const std::string &value)
{
    std::string out;
    out.reserve(value.size() * 3);
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += c;
        } else {
            out += fmt::format("%{:02X}", u);
        }
    }
    return out;
}

bool PrometheusHttp::get(
    const std::string &target, std::chrono::milliseconds timeout, Response *out, std::string *error) const
{
    const auto deadline = Clock::now() + timeout;
    const std::string where = fmt::format("{}{}", m_baseUrl, target.substr(0, target.find('?')));
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (const int rc = ::getaddrinfo(m_host.c_str(), m_port.c_str(), &hints, &found); rc != 0) {
        *error = fmt::format("{}: cannot resolve '{}': {}", where, m_host, ::gai_strerror(rc));
        return false;
    }
    std::string lastError = "no address";
    int fd = -1;
    for (addrinfo *a = found; a && fd < 0; a = a->ai_next) {
        const int s = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (s < 0) {
            lastError = std::strerror(errno);
            continue;
        }
        if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) {
            fd = s;
            break;
        }
        if (errno == EINPROGRESS && waitFor(s, POLLOUT, deadline)) {
            int soError = 0;
            socklen_t len = sizeof(soError);
            ::getsockopt(s, SOL_SOCKET, SO_ERROR, &soError, &len);
            if (soError == 0) {
                fd = s;
                break;
            }
            lastError = std::strerror(soError);
        } else {
            lastError = errno == EINPROGRESS ? "connect timed out" : std::strerror(errno);
        }
        ::close(s);
    }
    ::freeaddrinfo(found);
    if (fd < 0) {
        *error = fmt::format("{}: cannot connect: {}", where, lastError);
        return false;
    }
    Socket socket(fd);

    const std::string request = fmt::format("GET {}{} HTTP/1.1\r\nHost: {}:{}\r\nAccept: application/json\r\n"
                                            "User-Agent: fleetscope-backend\r\nConnection: close\r\n\r\n",
        m_prefix, target, m_host, m_port);
    for (size_t sent = 0; sent < request.size();) {
        if (!waitFor(fd, POLLOUT, deadline)) {
            *error = fmt::format("{}: timed out sending the request", where);
            return false;
        }
        const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            *error = fmt::format("{}: send failed: {}", where, std::strerror(errno));
            return false;
        }
        sent += n > 0 ? static_cast<size_t>(n) : 0;
    }

    std::string raw;
    size_t headerEnd = std::string::npos;
    int64_t contentLength = -1;
    bool chunked = false;
    std::vector<char> buffer(256 * 1024);
    for (;;) {
        if (!waitFor(fd, POLLIN, deadline)) {
            *error = fmt::format("{}: timed out waiting for the answer", where);
            return false;
        }
        const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                continue;
            }
            *error = fmt::format("{}: receive failed: {}", where, std::strerror(errno));
            return false;
        }
        const bool closed = n == 0;
        raw.append(buffer.data(), static_cast<size_t>(n));
        if (raw.size() > maxBodyBytes + 65536) {
            *error = fmt::format("{}: answer larger than {} MiB; refused", where, maxBodyBytes >> 20U);
            return false;
        }
        if (headerEnd == std::string::npos) {
            headerEnd = raw.find("\r\n\r\n");
            if (headerEnd != std::string::npos) {
                if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) {
                    *error = fmt::format("{}: not an HTTP answer", where);
                    return false;
                }
                out->status = std::atoi(raw.c_str() + 9);
                for (size_t line = raw.find("\r\n") + 2; line < headerEnd; line = raw.find("\r\n", line) + 2) {
                    if (iequalsPrefix(raw, line, "content-length:")) {
                        contentLength = std::atoll(raw.c_str() + line + 15);
                    } else if (iequalsPrefix(raw, line, "transfer-encoding:")) {
                        const size_t eol = raw.find("\r\n", line);
                        chunked = raw.substr(line, eol - line).find("chunked") != std::string::npos;
                    }
                }
                if (contentLength > static_cast<int64_t>(maxBodyBytes)) {
                    *error = fmt::format("{}: answer of {} bytes is larger than {} MiB; refused", where, contentLength,
                        maxBodyBytes >> 20U);
                    return false;
                }
            } else if (closed) {
                *error = fmt::format("{}: connection closed before the answer's headers", where);
                return false;
            }
        }
        if (headerEnd == std::string::npos) {
            continue;
        }
        const size_t bodyStart = headerEnd + 4;
        // Decoding chunks is tried only where the answer may be complete, not after every read of a large one.
        const bool mayBeLastChunk = closed || (raw.size() >= 5 && raw.compare(raw.size() - 5, 5, "0\r\n\r\n") == 0);
        if (chunked && mayBeLastChunk) {
            const Parse p = dechunk(raw, bodyStart, &out->body, error);
            if (p == Parse::Error) {
                *error = fmt::format("{}: {}", where, *error);
                return false;
            }
            if (p == Parse::Complete) {
                return true;
            }
        } else if (contentLength >= 0 && raw.size() - bodyStart >= static_cast<size_t>(contentLength)) {
            out->body = raw.substr(bodyStart, static_cast<size_t>(contentLength));
            return true;
        } else if (closed && contentLength < 0) {
            out->body = raw.substr(bodyStart);
            return true;
        }
        if (closed) {
            *error = fmt::format("{}: connection closed after {} of {} bytes of the answer", where,
                raw.size() - bodyStart, chunked ? std::string("a chunked") : std::to_string(contentLength));
            return false;
        }
    }
}

} // namespace fleetscope::backend
