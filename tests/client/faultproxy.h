// SPDX-License-Identifier: Apache-2.0
// A TCP proxy on a free loopback port that puts network faults between a client and its server, for the network fault
// tests: added delay, resets, a blackhole, half-open and half-closed connections. Plain sockets and poll() on a thread
// of its own, so that a fault is exactly what it says: a reset is an RST on both ends, a blackhole forwards not one
// byte and closes nothing, and what a fault held back is delivered, in order, once the network heals.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fleetscope::testing {

class FaultProxy
{
public:
    enum Direction { ToServer = 0, ToClient = 1 };

    explicit FaultProxy(uint16_t serverPort)
        : m_serverPort(serverPort)
    { }
    ~FaultProxy() { stop(); }
    FaultProxy(const FaultProxy &) = delete;
    FaultProxy &operator=(const FaultProxy &) = delete;

    // Listens on 127.0.0.1 on a free port; false if it cannot.
    bool start()
    {
        m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        m_wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (m_listener < 0 || m_wake < 0) {
            return false;
        }
        sockaddr_in address = loopback(0);
        socklen_t length = sizeof address;
        if (::bind(m_listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
            || ::listen(m_listener, 16) != 0
            || ::getsockname(m_listener, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
            return false;
        }
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { run(); });
        return true;
    }

    void stop()
    {
        if (m_thread.joinable()) {
            m_stopping = true;
            wake();
            m_thread.join();
        }
        for (auto &c : m_connections) {
            closeConnection(c, false);
        }
        m_connections.clear();
        for (int *fd : { &m_listener, &m_wake }) {
            if (*fd >= 0) {
                ::close(*fd);
                *fd = -1;
            }
        }
    }

    uint16_t port() const { return m_port; }
    std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
    // Connections accepted since the start.
    int accepted() const { return m_accepted.load(); }

    // Faults. Each is a state of the network, for the connections open now and those made later, until heal(); each
    // returns once the proxy's thread has applied it.

    // Every byte read from then on is held this long before it is written on, each way; order is kept.
    void setDelay(std::chrono::milliseconds delay)
    {
        apply([this, delay] { m_delay = delay; });
    }
    // Nothing is forwarded either way and nothing is closed: what each side sends waits in the sockets' buffers.
    void blackhole()
    {
        apply([this] { m_forward = { false, false }; });
    }
    // Half-open, as when one way's packets are dropped: nothing more goes the dead way, and the other way carries at
    // most a TCP window more (what a sender sends without acknowledgments; the proxy's own sockets would acknowledge
    // everything), then stalls too.
    void halfOpen(Direction dead)
    {
        apply([this, dead] {
            m_forward[dead] = false;
            m_allowance[1 - dead] = tcpWindow;
            for (auto &c : m_connections) {
                c.pipe[1 - dead].allowance = tcpWindow;
            }
        });
    }
    // Half-closed: a FIN towards the client, as from a server that closed its side for writing; what the server sends
    // is read and dropped. New connections are half-closed as soon as they are accepted.
    void closeTowardsClient()
    {
        apply([this] {
            m_closedTowardsClient = true;
            for (auto &c : m_connections) {
                halfClose(c);
            }
        });
    }
    // An RST on both ends of every open connection (SO_LINGER 0 and close); later connections are left alone.
    void resetConnections()
    {
        apply([this] {
            for (auto &c : m_connections) {
                closeConnection(c, true);
            }
            m_connections.clear();
        });
    }
    // No delay, everything flows again; what was held back is delivered. A half-closed connection stays so.
    void heal()
    {
        apply([this] {
            m_delay = std::chrono::milliseconds(0);
            m_forward = { true, true };
            m_allowance = { unlimited, unlimited };
            for (auto &c : m_connections) {
                for (Pipe &p : c.pipe) {
                    p.allowance = unlimited;
                }
            }
            m_closedTowardsClient = false;
        });
    }

private:
    using Clock = std::chrono::steady_clock;
    static constexpr size_t maxHeldBytes = 8 << 20; // per direction; past it the proxy stops reading that way
    static constexpr size_t tcpWindow = 64 << 10;
    static constexpr size_t unlimited = SIZE_MAX;

    struct Chunk
    {
        Clock::time_point due;
        std::string bytes;
        size_t written = 0;
    };
    struct Pipe
    {
        std::deque<Chunk> held;
        size_t heldBytes = 0;
        bool eof = false; // the source closed its side; shut the destination's once drained
        bool shut = false;
        bool discard = false; // half-closed towards its destination: read and drop
        size_t allowance = unlimited; // bytes this way may still read (half-open's other way)
    };
    struct Connection
    {
        std::array<int, 2> fd { -1, -1 }; // [ToServer]: the client's socket, [ToClient]: the server's
        std::array<Pipe, 2> pipe;
        bool failed = false;
        int source(Direction d) const { return fd[d]; }
        int destination(Direction d) const { return fd[1 - d]; }
    };

    static sockaddr_in loopback(uint16_t port)
    {
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return address;
    }

    void wake()
    {
        const uint64_t one = 1;
        [[maybe_unused]] const auto written = ::write(m_wake, &one, sizeof one);
    }

    // Runs f on the proxy's thread and waits for it.
    void apply(std::function<void()> f)
    {
        std::unique_lock lock(m_tasksMutex);
        const uint64_t ticket = ++m_tasksQueued;
        m_tasks.push_back(std::move(f));
        wake();
        m_tasksDone.wait(lock, [this, ticket] { return m_tasksRun >= ticket; });
    }

    void runTasks()
    {
        std::unique_lock lock(m_tasksMutex);
        while (!m_tasks.empty()) {
            auto f = std::move(m_tasks.front());
            m_tasks.pop_front();
            lock.unlock();
            f();
            lock.lock();
            ++m_tasksRun;
        }
        m_tasksDone.notify_all();
    }

    static void closeConnection(Connection &c, bool reset)
    {
        for (int &fd : c.fd) {
            if (fd < 0) {
                continue;
            }
            if (reset) {
                const linger abort { 1, 0 };
                ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
            }
            ::close(fd);
            fd = -1;
        }
    }

    static void halfClose(Connection &c)
    {
        Pipe &p = c.pipe[ToClient];
        if (!p.shut) {
            ::shutdown(c.destination(ToClient), SHUT_WR);
            p.shut = true;
        }
        p.discard = true;
        p.held.clear();
        p.heldBytes = 0;
    }

    void acceptOne()
    {
        const int client = ::accept4(m_listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) {
            return;
        }
        ++m_accepted;
        const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const sockaddr_in address = loopback(m_serverPort);
        if (server < 0 || ::connect(server, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
            Connection refused;
            refused.fd = { client, server };
            closeConnection(refused, true); // as a server that is not there: a reset
            return;
        }
        ::fcntl(server, F_SETFL, ::fcntl(server, F_GETFL) | O_NONBLOCK);
        const int on = 1;
        for (int fd : { client, server }) {
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        }
        Connection &c = m_connections.emplace_back();
        c.fd = { client, server };
        for (Direction d : { ToServer, ToClient }) {
            c.pipe[d].allowance = m_allowance[d];
        }
        if (m_closedTowardsClient) {
            halfClose(c);
        }
    }

    void readFrom(Connection &c, Direction d, Clock::time_point now)
    {
        Pipe &p = c.pipe[d];
        char buffer[64 * 1024];
        const ssize_t n = ::recv(c.source(d), buffer, std::min(sizeof buffer, p.allowance), 0);
        if (n > 0) {
            if (p.allowance != unlimited) {
                p.allowance -= static_cast<size_t>(n);
            }
            if (!p.discard) {
                p.held.push_back({ now + m_delay, std::string(buffer, static_cast<size_t>(n)) });
                p.heldBytes += static_cast<size_t>(n);
            }
        } else if (n == 0) {
            p.eof = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            c.failed = true;
        }
    }

    // Writes what is due; true if a write would block.
    bool flush(Connection &c, Direction d, Clock::time_point now)
    {
        Pipe &p = c.pipe[d];
        while (!p.held.empty() && p.held.front().due <= now) {
            Chunk &chunk = p.held.front();
            const ssize_t n = ::send(
                c.destination(d), chunk.bytes.data() + chunk.written, chunk.bytes.size() - chunk.written, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    return true;
                }
                c.failed = true;
                return false;
            }
            chunk.written += static_cast<size_t>(n);
            p.heldBytes -= static_cast<size_t>(n);
            if (chunk.written == chunk.bytes.size()) {
                p.held.pop_front();
            }
        }
        if (p.eof && p.held.empty() && !p.shut) {
            ::shutdown(c.destination(d), SHUT_WR);
            p.shut = true;
        }
        return false;
    }

    void run()
    {
        std::vector<pollfd> polled;
        while (!m_stopping) {
            runTasks();
            auto now = Clock::now();
            // What each connection waits for, and the next time a held chunk falls due.
            std::vector<std::array<short, 2>> events(m_connections.size(), { 0, 0 });
            Clock::time_point nextDue = Clock::time_point::max();
            size_t i = 0;
            for (auto &c : m_connections) {
                for (Direction d : { ToServer, ToClient }) {
                    Pipe &p = c.pipe[d];
                    if (!m_forward[d]) {
                        continue; // a stopped direction neither reads nor writes
                    }
                    const bool blocked = flush(c, d, now);
                    if (!p.eof && p.heldBytes < maxHeldBytes && p.allowance > 0) {
                        events[i][d] |= POLLIN; // fd[d] is this direction's source
                    }
                    if (blocked) {
                        events[i][1 - d] |= POLLOUT;
                    } else if (!p.held.empty()) {
                        nextDue = std::min(nextDue, p.held.front().due);
                    }
                }
                ++i;
            }
            polled.clear();
            polled.push_back({ m_wake, POLLIN, 0 });
            polled.push_back({ m_listener, POLLIN, 0 });
            i = 0;
            for (auto &c : m_connections) {
                for (int side = 0; side < 2; ++side) {
                    // An fd waited on for nothing is left out, or its hang-up would wake poll() at once, forever.
                    polled.push_back({ events[i][side] != 0 ? c.fd[side] : -1, events[i][side], 0 });
                }
                ++i;
            }
            int timeoutMs = -1;
            if (nextDue != Clock::time_point::max()) {
                timeoutMs = static_cast<int>(
                    std::chrono::ceil<std::chrono::milliseconds>(std::max(nextDue - now, Clock::duration(0))).count());
            }
            if (::poll(polled.data(), polled.size(), timeoutMs) < 0 && errno != EINTR) {
                return;
            }
            if (polled[0].revents != 0) {
                uint64_t count = 0;
                [[maybe_unused]] const auto read = ::read(m_wake, &count, sizeof count);
            }
            now = Clock::now();
            i = 0;
            for (auto &c : m_connections) {
                for (Direction d : { ToServer, ToClient }) {
                    const short revents = polled[2 + 2 * i + d].revents;
                    if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && (events[i][d] & POLLIN) != 0) {
                        readFrom(c, d, now);
                    }
                }
                ++i;
            }
            if (polled[1].revents != 0) {
                acceptOne();
            }
            for (auto it = m_connections.begin(); it != m_connections.end();) {
                const bool done = it->pipe[ToServer].eof && it->pipe[ToServer].shut && it->pipe[ToClient].eof
                    && it->pipe[ToClient].shut;
                if (it->failed || done) {
                    closeConnection(*it, it->failed); // one end reset: so is the other
                    it = m_connections.erase(it);
                } else {
                    ++it;
                }
            }
        }
    }

    const uint16_t m_serverPort;
    uint16_t m_port = 0;
    int m_listener = -1;
    int m_wake = -1;
    std::thread m_thread;
    std::atomic<bool> m_stopping { false };
    std::atomic<int> m_accepted { 0 };

    // The proxy's thread alone touches these (apply() runs its task there).
    std::list<Connection> m_connections;
    std::chrono::milliseconds m_delay { 0 };
    std::array<bool, 2> m_forward { true, true };
    std::array<size_t, 2> m_allowance { unlimited, unlimited };
    bool m_closedTowardsClient = false;

    std::mutex m_tasksMutex;
    std::condition_variable m_tasksDone;
    std::deque<std::function<void()>> m_tasks;
    uint64_t m_tasksQueued = 0;
    uint64_t m_tasksRun = 0;
};

} // namespace fleetscope::testing
