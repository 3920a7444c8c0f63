// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

// The byte stream under the Prometheus client: a socket, plain or TLS through OpenSSL, every read, write and handshake
// bounded by one deadline (a poll of Prometheus has one time budget, whatever the server does).
namespace fleetscope::backend {

namespace tlsdetail {

// Waits for events on fd until the deadline; false on time-out.
inline bool waitFor(int fd, short events, std::chrono::steady_clock::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
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
inline int bioFd(BIO *bio)
{
    return *static_cast<const int *>(BIO_get_data(bio));
}

inline int bioWrite(BIO *bio, const char *data, int size)
{
    BIO_clear_retry_flags(bio);
    const ssize_t n = ::send(bioFd(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_write(bio);
    }
    return static_cast<int>(n);
}

inline int bioRead(BIO *bio, char *data, int size)
{
    BIO_clear_retry_flags(bio);
    const ssize_t n = ::recv(bioFd(bio), data, static_cast<size_t>(size), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_read(bio);
    }
    return static_cast<int>(n);
}

inline long bioCtrl(BIO * /*bio*/, int command, long /*number*/, void * /*pointer*/)
{
    return command == BIO_CTRL_FLUSH ? 1 : 0;
}

inline int bioCreate(BIO *bio)
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
inline std::string openSslErrors()
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

} // namespace tlsdetail

// One connection's bytes, plain or TLS, each call bounded by the deadline. Owns the socket.
class TlsStream
{
public:
    using Clock = std::chrono::steady_clock;

    explicit TlsStream(int fd)
        : m_fd(fd)
    { }
    ~TlsStream()
    {
        SSL_free(m_ssl);
        ::close(m_fd);
    }
    TlsStream(const TlsStream &) = delete;
    TlsStream &operator=(const TlsStream &) = delete;

    // The TLS handshake: verification as configured in ctx, the hostname (or IP address) checked unless verify is
    // off, and SNI for a name.
    bool startTls(SSL_CTX *ctx, const std::string &host, bool verify, Clock::time_point deadline, std::string *error)
    {
        m_ssl = SSL_new(ctx);
        BIO *bio = m_ssl != nullptr ? BIO_new(tlsdetail::socketBioMethod()) : nullptr;
        if (bio == nullptr) {
            *error = fmt::format("cannot set up TLS: {}", tlsdetail::openSslErrors());
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
                *error = fmt::format("cannot check the certificate against '{}': {}", host, tlsdetail::openSslErrors());
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
                if (!tlsdetail::waitFor(m_fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                    *error = "timed out sending the request";
                    return false;
                }
                continue;
            }
            if (!tlsdetail::waitFor(m_fd, POLLOUT, deadline)) {
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
            if (!tlsdetail::waitFor(m_fd, static_cast<short>(wait), deadline)) {
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
                if (!tlsdetail::waitFor(m_fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
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
        std::string detail = tlsdetail::openSslErrors();
        if (detail.empty()) {
            detail = sslError == SSL_ERROR_SYSCALL && errno != 0 ? std::string(std::strerror(errno))
                                                                 : std::string("the server closed the connection");
        }
        return fmt::format("{}: {}", what, detail);
    }

    int m_fd;
    SSL *m_ssl = nullptr;
};


} // namespace fleetscope::backend
