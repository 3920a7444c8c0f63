// SPDX-License-Identifier: Apache-2.0
#include "prometheushttp.h"

#include "tlsstream.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

using Clock = TlsStream::Clock;

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

// The options on their own and against the URL's scheme.
bool checkOptions(const PrometheusHttp::Options &options, bool tls, const std::string &url, std::string *error)
{
    if (options.user.empty() != options.passwordFile.empty()) {
        *error = "basic authentication needs both a user and a password file";
        return false;
    }
    if (options.user.find(':') != std::string::npos) {
        *error = fmt::format("user '{}': a basic-authentication user cannot contain ':'", options.user);
        return false;
    }
    if (!options.user.empty() && !options.bearerTokenFile.empty()) {
        *error = "basic authentication and a bearer token exclude each other";
        return false;
    }
    if (!tls && (!options.caFile.empty() || options.insecureSkipVerify)) {
        *error = fmt::format("'{}': a CA bundle or skipping verification applies to https:// only", url);
        return false;
    }
    return true;
}

} // namespace

struct PrometheusHttp::TlsContext
{
    SSL_CTX *ctx = nullptr;
    ~TlsContext() { SSL_CTX_free(ctx); }
};

std::shared_ptr<const PrometheusHttp::TlsContext> PrometheusHttp::tlsContext(const Options &options, std::string *error)
{
    auto context = std::make_shared<TlsContext>();
    context->ctx = SSL_CTX_new(TLS_client_method());
    if (context->ctx == nullptr || SSL_CTX_set_min_proto_version(context->ctx, TLS1_2_VERSION) != 1) {
        *error = fmt::format("cannot set up TLS: {}", tlsdetail::openSslErrors());
        return nullptr;
    }
    SSL_CTX_set_mode(context->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
    SSL_CTX_set_verify(context->ctx, options.insecureSkipVerify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
    ERR_clear_error();
    if (!options.caFile.empty()) {
        if (SSL_CTX_load_verify_locations(context->ctx, options.caFile.c_str(), nullptr) != 1) {
            *error
                = fmt::format("{}: not a readable PEM bundle of CA certificates ({})", options.caFile, tlsdetail::openSslErrors());
            return nullptr;
        }
    } else if (SSL_CTX_set_default_verify_paths(context->ctx) != 1) {
        *error = fmt::format("cannot load the system's CA certificates: {}", tlsdetail::openSslErrors());
        return nullptr;
    }
    return context;
}

bool PrometheusHttp::setBaseUrl(const std::string &url, const Options &options, std::string *error)
{
    const bool tls = url.rfind("https://", 0) == 0;
    const std::string scheme = tls ? "https://" : "http://";
    if (url.rfind(scheme, 0) != 0) {
        *error = fmt::format("'{}' is not an http:// or https:// URL", url);
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
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH] (credentials never go in the URL: give a user and a "
                             "password file)",
            url, scheme);
        return false;
    }
    std::string host = authority;
    std::string port = tls ? "443" : "80";
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
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH] with a port from 1 to 65535", url, scheme);
        return false;
    }

    if (!checkOptions(options, tls, url, error)) {
        return false;
    }
    const auto context = tls ? tlsContext(options, error) : nullptr;
    if (tls && !context) {
        return false;
    }
    std::string secret;
    if (!options.passwordFile.empty() && !readSecret(options.passwordFile, "password file", &secret, error)) {
        return false;
    }
    if (!options.bearerTokenFile.empty() && !readSecret(options.bearerTokenFile, "bearer token file", &secret, error)) {
        return false;
    }
    m_baseUrl = url;
    m_host = host;
    m_port = port;
    m_prefix = prefix;
    m_options = options;
    m_tls = context;
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

std::string PrometheusHttp::base64(const std::string &data)
{
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    for (size_t i = 0; i < data.size(); i += 3) {
        const size_t n = std::min<size_t>(3, data.size() - i);
        uint32_t bits = 0;
        for (size_t k = 0; k < 3; ++k) {
            bits = (bits << 8U) | (k < n ? static_cast<unsigned char>(data[i + k]) : 0U);
        }
        for (size_t k = 0; k < 4; ++k) {
            out += k <= n ? alphabet[(bits >> (18 - 6 * k)) & 0x3FU] : '=';
        }
    }
    return out;
}

bool PrometheusHttp::readSecret(const std::string &path, const char *what, std::string *out, std::string *error)
{
    struct Close
    {
        void operator()(FILE *f) const { std::fclose(f); }
    };
    const std::unique_ptr<FILE, Close> file(std::fopen(path.c_str(), "rbe"));
    std::string secret;
    if (file) {
        char chunk[4096];
        while (const size_t n = std::fread(chunk, 1, sizeof chunk, file.get())) {
            secret.append(chunk, n);
            if (secret.size() > 65536) {
                *error = fmt::format("{} '{}' is larger than 64 KiB; not a secret", what, path);
                return false;
            }
        }
    }
    if (!file || std::ferror(file.get())) {
        *error = fmt::format("{} '{}': cannot read it: {}", what, path, std::strerror(errno));
        return false;
    }
    const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!secret.empty() && space(secret.back())) {
        secret.pop_back();
    }
    secret.erase(secret.begin(), std::find_if_not(secret.begin(), secret.end(), space));
    if (secret.empty()) {
        *error = fmt::format("{} '{}' is empty", what, path);
        return false;
    }
    // The secret goes into a header line: a line break inside would end the header (and start another).
    if (secret.find_first_of("\r\n") != std::string::npos || secret.find('\0') != std::string::npos) {
        *error = fmt::format("{} '{}' holds more than one line", what, path);
        return false;
    }
    *out = std::move(secret);
    return true;
}

bool PrometheusHttp::authorization(std::string *header, std::string *error) const
{
    header->clear();
    std::string secret;
    if (!m_options.bearerTokenFile.empty()) {
        if (!readSecret(m_options.bearerTokenFile, "bearer token file", &secret, error)) {
            return false;
        }
        *header = fmt::format("Authorization: Bearer {}\r\n", secret);
    } else if (!m_options.user.empty()) {
        if (!readSecret(m_options.passwordFile, "password file", &secret, error)) {
            return false;
        }
        *header = fmt::format("Authorization: Basic {}\r\n", base64(m_options.user + ':' + secret));
    }
    return true;
}

bool PrometheusHttp::get(
    const std::string &target, std::chrono::milliseconds timeout, Response *out, std::string *error) const
{
    const auto deadline = Clock::now() + timeout;
    const std::string where = fmt::format("{}{}", m_baseUrl, target.substr(0, target.find('?')));
    std::string authorizationHeader;
    if (!authorization(&authorizationHeader, error)) {
        *error = fmt::format("{}: {}", where, *error);
        return false;
    }
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
        if (errno == EINPROGRESS && tlsdetail::waitFor(s, POLLOUT, deadline)) {
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
    TlsStream stream(fd);
    if (m_tls && !stream.startTls(m_tls->ctx, m_host, !m_options.insecureSkipVerify, deadline, error)) {
        *error = fmt::format("{}: {}", where, *error);
        return false;
    }

    const bool ipv6 = m_host.find(':') != std::string::npos;
    const std::string request = fmt::format("GET {}{} HTTP/1.1\r\nHost: {}{}{}:{}\r\nAccept: application/json\r\n"
                                            "User-Agent: fleetscope-backend\r\n{}Connection: close\r\n\r\n",
        m_prefix, target, ipv6 ? "[" : "", m_host, ipv6 ? "]" : "", m_port, authorizationHeader);
    if (!stream.sendAll(request, deadline, error)) {
        *error = fmt::format("{}: {}", where, *error);
        return false;
    }

    std::string raw;
    size_t headerEnd = std::string::npos;
    int64_t contentLength = -1;
    bool chunked = false;
    std::vector<char> buffer(256 * 1024);
    for (;;) {
        const ssize_t n = stream.receive(buffer.data(), buffer.size(), deadline, error);
        if (n < 0) {
            *error = fmt::format("{}: {}", where, *error);
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
                if (out->status == 401) {
                    *error = fmt::format("{}: HTTP 401 Unauthorized: the server refused {}", where,
                        !m_options.bearerTokenFile.empty() ? std::string("the bearer token")
                            : !m_options.user.empty()
                            ? fmt::format("user '{}' with the password given", m_options.user)
                            : std::string("a request without credentials (it needs a user and password, or a "
                                          "bearer token)"));
                    return false;
                }
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
                if (contentLength > 0) {
                    // One allocation for the whole answer (tens of MB at 100k GPUs), not a doubling per read.
                    raw.reserve(headerEnd + 4 + static_cast<size_t>(contentLength));
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
            // The body moves rather than copies: drop the head in place and hand the buffer over.
            raw.resize(bodyStart + static_cast<size_t>(contentLength));
            raw.erase(0, bodyStart);
            out->body.swap(raw);
            return true;
        } else if (closed && contentLength < 0) {
            raw.erase(0, bodyStart);
            out->body.swap(raw);
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
