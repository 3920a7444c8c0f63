// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "exporterpage.h"
#include "framesource.h"

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace fleetscope::backend {

// Serves the simulated fleet as a dcgm-exporter /metrics page over plain HTTP/1.1, so that a real Prometheus (or
// anything that scrapes dcgm-exporter) can scrape the simulator. GET and HEAD of /metrics answer the page of the
// latest frame; other paths are 404, other methods 405, malformed requests 400 (and the connection is closed).
// Keep-alive as HTTP/1.1 says. Each connection has its own thread, at most maxConnections at once; stop() wakes
// and joins them all.
//
// The page is rendered once per frame and shared by every scrape of that frame (m_renderMutex guards m_page and
// m_pageSequence); connection threads touch nothing else of the server but the stop flag and their own socket.
class ExporterServer
{
public:
    ExporterServer(const FrameSource &source, ExporterPage::Options options);
    ~ExporterServer();
    ExporterServer(const ExporterServer &) = delete;
    ExporterServer &operator=(const ExporterServer &) = delete;

    // HOST:PORT, a numeric port 0..65535 (0 picks a free one); [::1]:PORT for IPv6. False with a message when not.
    static bool splitAddress(const std::string &address, std::string *host, int *port, std::string *error);

    // Listens on address ("127.0.0.1:0" picks a free port). Returns false and sets error when it cannot.
    bool start(const std::string &address, std::string *error);
    int port() const { return m_port; }
    std::string listeningAddress() const;
    // Closes the listener and every connection, and joins their threads; safe to call twice.
    void stop();

    // The page of the latest frame and that frame's sequence.
    std::shared_ptr<const std::string> page(uint64_t *sequence = nullptr);

    static constexpr size_t maxConnections = 64;
    static constexpr size_t maxHeaderBytes = 16 * 1024;
    static constexpr size_t maxBodyBytes = 64 * 1024;

private:
    struct Connection
    {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };

    void acceptLoop();
    void serve(int fd);
    // Waits until fd is ready for events or stop() is called; false on stop, time-out or error.
    bool waitFor(int fd, short events, int timeoutMs) const;
    bool sendAll(int fd, const char *data, size_t size) const;

    const FrameSource &m_source;
    ExporterPage::Options m_options;
    std::string m_host;
    int m_port = 0;
    int m_listenFd = -1;
    int m_wakeFd = -1; // an eventfd, written once by stop(): readable from then on, it wakes every poll
    std::atomic<bool> m_stopping { false };
    std::thread m_acceptThread;
    std::list<Connection> m_connections; // touched by the accept thread only, and by stop() after joining it

    std::mutex m_renderMutex;
    std::shared_ptr<const std::string> m_page;
    uint64_t m_pageSequence = 0;
};

} // namespace fleetscope::backend
