// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/listensocket.h" // isLoopbackHost, which start() applies

struct MHD_Connection;

namespace fleetscope::backend {

// One request as the handler sees it: read whole, within the server's limits, from a client that passed the door.
struct HttpRequest
{
    std::string_view method; // "GET", "HEAD", "POST"
    std::string_view path; // as sent, not percent-decoded, without the query
    std::string_view body; // Content-Length bytes (or the dechunked body), at most Limits::maxBodyBytes
    std::string_view peer; // the client's address, without its port
    // A request header's value (the first, when sent more than once), or empty; names are case-insensitive.
    std::string_view header(const char *name) const;

    MHD_Connection *connection = nullptr;
};

struct HttpResponse
{
    int status = 200;
    std::string contentType = "text/plain; charset=utf-8";
    std::string body;
    // Sent from here instead of body, never copied whole (the exporter's page of a million GPUs is 3.5 GB).
    std::shared_ptr<const std::string> shared;
    std::vector<std::pair<std::string, std::string>> headers;
};

// The backend's HTTP/1.1 doors (the remote-write receiver, the simulator's exporter pages), on GNU libmicrohttpd
// (Debian's libmicrohttpd-dev): it parses each request once, reads and writes with epoll on a few threads (a
// connection holds no thread while it waits for its client, so silent or slow clients cost a descriptor and a little
// memory, never a thread), and bounds connections in all and per client address, the memory a connection may use for
// its head, and speaks TLS through GnuTLS. Why that library and not another: docs/ARCHITECTURE.md.
//
// What this class adds around it:
// - The door's rule (docs/RELIABILITY.md): a loopback address, or TLS and a credential (a bearer token from the
//   token file, or a client certificate from the client CA), or insecureListen said out loud. start() refuses any
//   other.
// - Credentials: a request without a valid token (when tokens are asked for) is answered 401 with WWW-Authenticate
//   before its body is read; without a verified client certificate (when a client CA is given) 403. Past
//   Limits::refusalsPerMinute refusals from one address its requests are answered 429 unheard, as the gRPC door
//   does, so that guessing a token is slow. Refusals are logged at most once a minute per client address and
//   reason, never with what was sent.
// - Deadlines that libmicrohttpd counts only as inactivity: a request's head must arrive whole within
//   requestTimeout of the connection's start (and a kept-alive connection's next head within idleTimeout of the last
//   answer), its body within requestTimeout of its head, however slowly either trickles in; past that the connection
//   is shut. A client that takes nothing of an answer for sendTimeout is closed (libmicrohttpd's own timeout).
// - A body is read only as far as maxBodyBytes (413 from Content-Length before any of it, or as soon as a chunked
//   one passes it); the handler gets it whole, in one buffer.
//
// Threads: the handler runs on libmicrohttpd's threads, several at once; everything else is for the thread that
// starts and stops the server.
class BoundedHttpServer
{
public:
    struct Limits
    {
        size_t threads = 4; // libmicrohttpd's polling threads: requests handled at once
        size_t maxConnections = 1024; // open at once, all clients; more are closed as they come
        size_t maxConnectionsPerAddress = 256; // open at once from one client address
        std::chrono::milliseconds requestTimeout { 10000 }; // a head, then a body, each whole within this
        std::chrono::milliseconds idleTimeout { 120000 }; // a kept-alive connection's next head within this
        std::chrono::milliseconds sendTimeout { 30000 }; // a client that takes nothing of the answer for this long
        size_t maxHeaderBytes = 16 * 1024; // the request line and headers
        size_t maxBodyBytes = 64 * 1024;
        // Requests refused a credential a minute from one address (one back every 60 / N s); past them its requests
        // are answered 429 before their credentials are looked at. 0: not limited.
        size_t refusalsPerMinute = 60;
    };

    // Who may come in (see the class comment). Files are read by start().
    struct Security
    {
        std::string tlsCertFile; // PEM certificate chain; with tlsKeyFile, served over TLS (1.2 or later) only
        std::string tlsKeyFile;
        std::string clientCaFile; // mutual TLS: only clients with a certificate this PEM bundle verifies
        std::string tokenFile; // for messages; acceptsToken does the checking
        // Whether a bearer token is one of the door's; empty: no token asked for.
        std::function<bool(std::string_view token)> acceptsToken;
        bool insecureListen = false; // serve a routable address without TLS and a credential
        std::string optionPrefix = "--http"; // the door's options, for messages ("--remote-write")

        bool tls() const { return !tlsCertFile.empty(); }
        bool authenticates() const { return static_cast<bool>(acceptsToken) || !clientCaFile.empty(); }
    };

    // Connections open now (any state), and those closed by a deadline or refused a credential since the start.
    struct Load
    {
        size_t connections = 0;
        uint64_t timedOut = 0;
        uint64_t unauthorized = 0;
    };

    using Handler = std::function<void(const HttpRequest &request, HttpResponse &response)>;
    using Log = std::function<void(const std::string &)>;

    // methods: those handed to the handler ("GET", "HEAD"; "POST"); any other is answered 405 with their list.
    BoundedHttpServer(const Limits &limits, std::vector<std::string> methods, Handler handler);
    BoundedHttpServer(
        const Limits &limits, Security security, std::vector<std::string> methods, Handler handler, Log log = {});
    ~BoundedHttpServer();
    BoundedHttpServer(const BoundedHttpServer &) = delete;
    BoundedHttpServer &operator=(const BoundedHttpServer &) = delete;

    // Listens on address (HOST:PORT, [V6]:PORT; port 0 picks a free one), with SO_REUSEADDR alone (a second server on
    // a port in use does not start). Returns false and sets error when it cannot: the address, the door's rule, a TLS
    // file. Once only.
    bool start(const std::string &address, std::string *error);
    int port() const { return m_port; }
    const std::string &host() const { return m_host; }
    bool tls() const { return m_security.tls(); }
    // HOST:PORT, [HOST]:PORT for an IPv6 address.
    std::string listeningAddress() const;
    // http://HOST:PORT or https://...
    std::string url() const;
    // Closes the listener and every connection, and joins the threads; safe to call twice, and before start().
    void stop();

    const Limits &limits() const { return m_limits; }
    Load load() const;

    // The text every refusal has for a body: "404 Not Found\n".
    static std::string refusalText(int status);

private:
    class Edge; // libmicrohttpd's daemon and the callbacks (boundedhttpserver.cpp)

    const Limits m_limits;
    const Security m_security;
    std::string m_host;
    int m_port = 0;
    std::unique_ptr<Edge> m_edge;
};

} // namespace fleetscope::backend
