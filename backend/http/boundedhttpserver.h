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
#include <thread>
#include <vector>

namespace httplib {
struct Request;
struct Response;
} // namespace httplib

namespace fleetscope::backend {

// The backend's HTTP/1.1 endpoints (the simulator's exporter pages, the remote-write receiver), served within fixed
// bounds whatever the clients do. cpp-httplib listens, parses each request's head and writes the answer; the
// connection around the requests is this class's (why: boundedhttpserver.cpp).
//
// - Limits::threads serve the connections, one each at a time, and at most Limits::queued wait for a thread. A
//   connection past the queue is answered 503 with Retry-After at once, its request unread, and closed (scrapers
//   and remote-write senders retry a 503 after a backoff).
// - A request is read whole before it is handed on: its head within maxHeaderBytes (431), its body within
//   maxBodyBytes (413, from Content-Length, before any of the body is read), both within requestTimeout of its first
//   byte however slowly they trickle in (408). Malformed heads are 400, a request line over 8 KiB 414 (httplib's
//   limit), chunked bodies 501, methods not served 405.
// - Connections are kept alive as HTTP/1.1 says while at most half the threads are busy and none waits; past that
//   each answer closes its connection, so idle connections never hold every thread. An idle connection is closed
//   after idleTimeout (never while a request is being answered), one that takes nothing of its answer after
//   sendTimeout.
//
// Threads: the handler runs on the pool's threads, several at once; everything else is for the thread that starts
// and stops the server.
class BoundedHttpServer
{
public:
    struct Limits
    {
        size_t threads = 16; // each serves one connection at a time
        size_t queued = 512; // accepted connections waiting for a thread (each holds a descriptor)
        std::chrono::milliseconds requestTimeout { 10000 }; // from a request's first byte to its last
        std::chrono::milliseconds idleTimeout { 120000 }; // a kept-alive connection without a request
        std::chrono::milliseconds sendTimeout { 30000 }; // a client that takes nothing of the answer
        size_t maxHeaderBytes = 16 * 1024; // the request line and headers
        size_t maxBodyBytes = 64 * 1024;
    };

    // Connections being served (a thread each) and waiting for a thread; and those turned away since the start
    // (answered 503 unread: every thread busy and the queue full).
    struct Load
    {
        size_t serving = 0;
        size_t waiting = 0;
        uint64_t turnedAway = 0;
    };

    // Answers one request: its head as httplib parsed it (no byte ranges, no Accept-Encoding: answers go out whole and
    // as they are), and its body as received, Content-Length bytes. A response without a body gets refusalText's for
    // a status of 400 and over.
    using Handler
        = std::function<void(const httplib::Request &request, std::string_view body, httplib::Response &response)>;

    // methods: those handed to the handler ("GET", "HEAD"; "POST"); any other is answered 405 with their list.
    BoundedHttpServer(const Limits &limits, std::vector<std::string> methods, Handler handler);
    ~BoundedHttpServer();
    BoundedHttpServer(const BoundedHttpServer &) = delete;
    BoundedHttpServer &operator=(const BoundedHttpServer &) = delete;

    // Listens on address (HOST:PORT, [V6]:PORT; port 0 picks a free one), with SO_REUSEADDR alone (httplib's default
    // adds SO_REUSEPORT, with which a second server on a port in use would start and take half the requests). Returns
    // false and sets error when it cannot. Once only.
    bool start(const std::string &address, std::string *error);
    int port() const { return m_port; }
    const std::string &host() const { return m_host; }
    // HOST:PORT, [HOST]:PORT for an IPv6 address.
    std::string listeningAddress() const;
    // Closes the listener and every connection (those queued unanswered, those idle or mid-request at once), and
    // joins their threads; safe to call twice, and before start().
    void stop();

    const Limits &limits() const { return m_limits; }
    Load load() const;

private:
    class Http; // the httplib server with the connection handling of boundedhttpserver.cpp

    const Limits m_limits;
    std::string m_host;
    int m_port = 0;
    std::atomic<bool> m_stopping { false };
    std::unique_ptr<Http> m_http;
    std::thread m_listenThread;
};

} // namespace fleetscope::backend
