// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fleetscope::backend {

// A small blocking HTTP/1.1 client for a Prometheus-compatible server's API: one GET per connection, one deadline
// for all of it (connect, send, the whole answer), Content-Length and chunked answers, a cap on the answer's size.
// Plain http:// only for now (no TLS, no authentication). Name resolution (getaddrinfo) is not covered by the
// deadline. Not thread-safe; each thread uses its own.
class PrometheusHttp
{
public:
    struct Response
    {
        int status = 0;
        std::string body;
    };

    // Takes "http://host[:port][/prefix]"; false with an error for anything else.
    bool setBaseUrl(const std::string &url, std::string *error);
    const std::string &baseUrl() const { return m_baseUrl; }

    // GET prefix + target (target starts with '/', query already encoded). False with an error on a transport
    // failure, a time-out, malformed HTTP or an answer over maxBodyBytes; true for any HTTP status, even 500.
    bool get(const std::string &target, std::chrono::milliseconds timeout, Response *out, std::string *error) const;

    size_t maxBodyBytes = size_t { 1 } << 30U;

    // Percent-encodes a query parameter's value.
    static std::string encode(const std::string &value);

private:
    std::string m_baseUrl;
    std::string m_host;
    std::string m_port = "80";
    std::string m_prefix;
};

} // namespace fleetscope::backend
