// SPDX-License-Identifier: Apache-2.0
#include "prometheushttp.h"

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

using Clock = std::chrono::steady_clock;

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

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE when the server has gone; this one sends with
// MSG_NOSIGNAL. Non-blocking: a read or write that would block asks OpenSSL to retry, and the caller polls.
int bioFd(BIO *bio)
{
    return *static_cast<const int *>(BIO_get_data(bio));
}

int bioWrite(BIO *bio, const char *data, int size)
{
    BIO_clear_retry_flags(bio);
    const ssize_t n = ::send(bioFd(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_write(bio);
    }
    return static_cast<int>(n);
}

int bioRead(BIO *bio, char *data, int size)
{
    BIO_clear_retry_flags(bio);
    const ssize_t n = ::recv(bioFd(bio), data, static_cast<size_t>(size), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_read(bio);
    }
    return static_cast<int>(n);
}

long bioCtrl(BIO * /*bio*/, int command, long /*number*/, void * /*pointer*/)
{
    return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int bioCreate(BIO *bio)
{
    BIO_set_init(bio, 1);
    return 1;
}

BIO_METHOD *socketBioMethod()
{
    static BIO_METHOD *const method = [] {
        BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "fleetscope socket");
        BIO_meth_set_write(m, bioWrite);
        BIO_meth_set_read(m, bioRead);
        BIO_meth_set_ctrl(m, bioCtrl);
        BIO_meth_set_create(m, bioCreate);
        return m;
    }();
    return method;
}

// OpenSSL's queued errors for this thread, joined, and the queue emptied.
std::string openSslErrors()
{
    std::string text;
    while (const unsigned long e = ERR_get_error()) {
        char line[256];
        ERR_error_string_n(e, line, sizeof line);
        text += text.empty() ? "" : "; ";
        text += line;
    }
    return text;
}

// One connection's bytes, plain or TLS, each call bounded by the deadline. Owns the socket.
class Stream
{
public:
    explicit Stream(int fd)
        : m_fd(fd)
    { }
    ~Stream()
    {
        SSL_free(m_ssl);
        ::close(m_fd);
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    // The TLS handshake: verification as configured in ctx, the hostname (or IP address) checked unless verify is
    // off, and SNI for a name.
    bool startTls(SSL_CTX *ctx, const std::string &host, bool verify, Clock::time_point deadline, std::string *error)
    {
        m_ssl = SSL_new(ctx);
        BIO *bio = m_ssl != nullptr ? BIO_new(socketBioMethod()) : nullptr;
        if (bio == nullptr) {
            *error = fmt::format("cannot set up TLS: {}", openSslErrors());
            return false;
        }
        BIO_set_data(bio, &m_fd); // the stream outlives its SSL, and never moves
        SSL_set_bio(m_ssl, bio, bio);
        in6_addr address {};
        const bool isAddress
            = ::inet_pton(AF_INET, host.c_str(), &address) == 1 || ::inet_pton(AF_INET6, host.c_str(), &address) == 1;
        if (!isAddress) {
            SSL_set_tlsext_host_name(m_ssl, host.c_str());
        }
        if (verify) {
            const int set = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(m_ssl), host.c_str())
                                      : SSL_set1_host(m_ssl, host.c_str());
            if (set != 1) {
                *error = fmt::format("cannot check the certificate against '{}': {}", host, openSslErrors());
                return false;
            }
            SSL_set_hostflags(m_ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        }
        return handshake(verify, deadline, error);
    }

    bool sendAll(const std::string &data, Clock::time_point deadline, std::string *error)
    {
        for (size_t sent = 0; sent < data.size();) {
            const size_t left = std::min<size_t>(data.size() - sent, std::numeric_limits<int>::max());
            if (m_ssl != nullptr) {
                ERR_clear_error();
                const int n = SSL_write(m_ssl, data.data() + sent, static_cast<int>(left));
                if (n > 0) {
                    sent += static_cast<size_t>(n);
                    continue;
                }
                const int e = SSL_get_error(m_ssl, n);
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                    *error = describe(e, "send failed");
                    return false;
                }
                if (!waitFor(m_fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                    *error = "timed out sending the request";
                    return false;
                }
                continue;
            }
            if (!waitFor(m_fd, POLLOUT, deadline)) {
                *error = "timed out sending the request";
                return false;
            }
            const ssize_t n = ::send(m_fd, data.data() + sent, left, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                *error = fmt::format("send failed: {}", std::strerror(errno));
                return false;
            }
            sent += n > 0 ? static_cast<size_t>(n) : 0;
        }
        return true;
    }

    // Bytes read (> 0), 0 when the server has closed the connection, -1 on an error or the deadline.
    ssize_t receive(char *data, size_t size, Clock::time_point deadline, std::string *error)
    {
        const size_t most = std::min<size_t>(size, std::numeric_limits<int>::max());
        for (;;) {
            int wait = POLLIN;
            if (m_ssl != nullptr) {
                // Decrypted bytes may already be buffered: read before polling.
                ERR_clear_error();
                const int n = SSL_read(m_ssl, data, static_cast<int>(most));
                if (n > 0) {
                    return n;
                }
                const int e = SSL_get_error(m_ssl, n);
                if (e == SSL_ERROR_ZERO_RETURN) {
                    return 0;
                }
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                    *error = describe(e, "receive failed");
                    return -1;
                }
                wait = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            }
            if (!waitFor(m_fd, static_cast<short>(wait), deadline)) {
                *error = "timed out waiting for the answer";
                return -1;
            }
            if (m_ssl != nullptr) {
                continue;
            }
            const ssize_t n = ::recv(m_fd, data, most, 0);
            if (n >= 0) {
                return n;
            }
            if (errno != EAGAIN && errno != EINTR) {
                *error = fmt::format("receive failed: {}", std::strerror(errno));
                return -1;
            }
        }
    }

private:
    bool handshake(bool verify, Clock::time_point deadline, std::string *error)
    {
        for (;;) {
            ERR_clear_error();
            const int rc = SSL_connect(m_ssl);
            if (rc == 1) {
                return true;
            }
            const int e = SSL_get_error(m_ssl, rc);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                if (!waitFor(m_fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                    *error = "timed out in the TLS handshake";
                    return false;
                }
                continue;
            }
            const long verified = SSL_get_verify_result(m_ssl);
            if (verify && verified != X509_V_OK) {
                *error = fmt::format("TLS: the server's certificate is not trusted: {} (give the CA that signed it "
                                     "with --prometheus-ca)",
                    X509_verify_cert_error_string(verified));
                ERR_clear_error();
                return false;
            }
            *error = describe(e, "TLS handshake failed");
            if (error->find("wrong version number") != std::string::npos
                || error->find("packet length too long") != std::string::npos) {
                *error += " (does the server speak https on this port?)";
            }
            return false;
        }
    }

    static std::string describe(int sslError, const char *what)
    {
        std::string detail = openSslErrors();
        if (detail.empty()) {
            detail = sslError == SSL_ERROR_SYSCALL && errno != 0 ? std::string(std::strerror(errno))
                                                                 : std::string("the server closed the connection");
        }
        return fmt::format("{}: {}", what, detail);
    }

    int m_fd;
    SSL *m_ssl = nullptr;
};

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
        *error = fmt::format("cannot set up TLS: {}", openSslErrors());
        return nullptr;
    }
    SSL_CTX_set_mode(context->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
    SSL_CTX_set_verify(context->ctx, options.insecureSkipVerify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
    ERR_clear_error();
    if (!options.caFile.empty()) {
        if (SSL_CTX_load_verify_locations(context->ctx, options.caFile.c_str(), nullptr) != 1) {
            *error
                = fmt::format("{}: not a readable PEM bundle of CA certificates ({})", options.caFile, openSslErrors());
            return nullptr;
        }
    } else if (SSL_CTX_set_default_verify_paths(context->ctx) != 1) {
        *error = fmt::format("cannot load the system's CA certificates: {}", openSslErrors());
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
    Stream stream(fd);
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
