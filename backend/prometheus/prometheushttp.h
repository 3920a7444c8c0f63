// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace fleetscope::backend {

// A blocking HTTP client for a Prometheus-compatible server's API (and Alertmanager's), over libcurl (Debian's, with
// OpenSSL): one request per connection, one deadline for all of it (name resolution, connect, TLS handshake, send, the
// whole answer), a cap on the answer's size, uncompressed answers (asking for gzip would add to the server's cost, the
// poll's bottleneck). https://: the server's certificate is verified against the system's CAs or a given bundle, with
// its hostname (or IP address) checked and SNI sent; TLS 1.2 at least. Optional basic or bearer authentication, the
// secret read from its file for every request. Errors say what happened in the words an operator needs (where the
// time went, why a certificate is not trusted). get() and request() are const and keep no state between calls: any
// number of threads may use one client.
class PrometheusHttp
{
public:
    struct Options
    {
        // Basic authentication: both or neither. The password and the token are read from files on every request,
        // so that a rotated secret is picked up and no secret is ever on a command line. Surrounding white space
        // (a trailing newline) is not part of them.
        std::string user;
        std::string passwordFile;
        std::string bearerTokenFile; // "Authorization: Bearer ..."; not with basic authentication
        std::string caFile; // PEM bundle the server's certificate must chain to; empty: the system's CAs
        bool insecureSkipVerify = false; // no certificate or hostname check at all (tests and emergencies only)
    };

    struct Response
    {
        int status = 0;
        std::string body;
    };

    enum class Method : uint8_t { Get, Post, Delete };
    struct Request
    {
        Method method = Method::Get;
        std::string target; // starts with '/', query already encoded
        std::string body; // sent with Post
        std::string contentType = "application/json"; // of body
        size_t maxBodyBytes = 0; // the answer's cap; 0: the client's maxBodyBytes
        // When set and it becomes true, the transfer ends within about a second (libcurl's progress callback), so that
        // a poller's thread can be joined without waiting out a slow server's deadline.
        const std::atomic<bool> *cancel = nullptr;
    };

    // Takes "http[s]://host[:port][/prefix]", parsed by libcurl (curl_url); false with an error for anything else
    // (credentials, a query or a fragment in the URL included), for inconsistent options, an unreadable secret or a CA
    // bundle without a certificate.
    bool setBaseUrl(const std::string &url, const Options &options, std::string *error);
    bool setBaseUrl(const std::string &url, std::string *error) { return setBaseUrl(url, Options(), error); }
    const std::string &baseUrl() const { return m_baseUrl; }
    bool isTls() const { return m_tls; }

    // GET prefix + target (target starts with '/', query already encoded). False with an error on a transport or
    // TLS failure, a time-out, malformed HTTP, an answer over maxBodyBytes or HTTP 401 (the credentials were
    // refused; the error says which were sent); true for any other HTTP status, even 500.
    bool get(const std::string &target, std::chrono::milliseconds timeout, Response *out, std::string *error) const;
    // Any request, with the same deadline, cap, credentials and errors as get(); an error names the method unless it
    // is a GET.
    bool request(const Request &request, std::chrono::milliseconds timeout, Response *out, std::string *error) const;

    size_t maxBodyBytes = size_t { 1 } << 30U;

    // Percent-encodes a query parameter's value (libcurl's curl_easy_escape).
    static std::string encode(const std::string &value);
    // A secret file's content without surrounding white space; false with an error when it cannot be read or is
    // empty. `what` names the secret in the error ("password file").
    static bool readSecret(const std::string &path, const char *what, std::string *out, std::string *error);

private:
    static bool checkCaFile(const Options &options, std::string *error);
    // The password or bearer token, read from its file for this request; empty without authentication.
    bool readCredential(std::string *secret, std::string *error) const;
    // A failed transfer in an operator's words (handle: the CURL easy handle; code: its CURLcode; state: what the
    // transfer's callbacks saw).
    std::string describe(void *handle, int code, const char *detail, const void *state) const;

    std::string m_baseUrl;
    std::string m_origin; // scheme://authority
    std::string m_host;
    std::string m_prefix;
    Options m_options;
    bool m_tls = false;
};

} // namespace fleetscope::backend
