// SPDX-License-Identifier: Apache-2.0
// The remote-write receiver's memory under big pushes: 256 senders at once, each pushing one body at the 32 MiB limit
// (the simulator's series for every GPU, each with a label of random hex so that snappy cannot shrink it, up to the
// 64 MiB the decoder takes), retrying a 503 after 100 ms as senders do, until every push is taken. The process's
// resident memory is sampled every 5 ms; the baseline is the receiver at rest after its start, measured in the same
// run. The senders write from one shared buffer over plain sockets (no copy of a body per sender).
//
// Usage: bench_pushmemory [senders] [gpus]   (defaults 256, 16384)
#include "remotewrite/remotewritesource.h"
#include "remotewriteblocks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

namespace be = fleetscope::backend;
using namespace fleetscope::bench;

namespace {

long rssMiB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6)) / 1024;
        }
    }
    return -1;
}

// POSTs body over a connection of its own; the answer's status, 0 when none came.
int post(int port, const std::string &head, const std::string &body)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int status = 0;
    if (connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0
        && send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size())) {
        size_t sent = 0;
        while (sent < body.size()) {
            const ssize_t n = send(fd, body.data() + sent, body.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                break;
            }
            sent += static_cast<size_t>(n);
        }
        char answer[256] = {};
        const ssize_t got = recv(fd, answer, sizeof answer - 1, 0);
        if (got > 12) {
            status = std::atoi(answer + 9);
        }
    }
    close(fd);
    return status;
}

} // namespace

int main(int argc, char **argv)
{
    const int senders = argc > 1 ? std::max(1, std::atoi(argv[1])) : 256;
    const auto gpus = static_cast<uint32_t>(argc > 2 ? std::max(8, std::atoi(argv[2])) : 16384);
    const std::string page = simulatedPage(gpus);

    // The receiver, its layout learnt from one push of the page, windows of 10 s.
    be::RemoteWriteSource receiver([](const std::string &) {});
    be::RemoteWriteSource::Options rw;
    const int port = 20000 + static_cast<int>(be::nowUnixMs() % 1000);
    rw.listen = fmt::format("127.0.0.1:{}", port);
    rw.windowMs = 10000;
    rw.delayMs = 0;
    std::string error;
    const bool started = startLearningFrom(
        receiver, rw, page,
        [port](const std::string &block) {
            const std::string head = fmt::format("POST /api/v1/write HTTP/1.1\r\nHost: x\r\nContent-Encoding: "
                                                 "snappy\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                block.size());
            return post(port, head, block) == 204;
        },
        &error);
    if (!started) {
        fmt::print(stderr, "receiver: {}\n", error);
        return 1;
    }

    // One body at the limits: the page's series again and again, each with 600 random hex characters.
    const be::RemoteWriteLimits limits;
    prometheus::WriteRequest request;
    std::mt19937_64 random(7);
    const int64_t t = (be::nowUnixMs() / 10000 + 1) * 10000 + 1;
    std::string body;
    std::string bytes;
    PageSeries series;
    for (bool full = false; !full;) {
        std::string_view rest(page);
        for (int added = 0; !rest.empty() && added < 2000;) {
            const size_t eol = rest.find('\n');
            const std::string_view line = rest.substr(0, eol);
            rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
            if (line.empty() || line.front() == '#' || !parsePageLine(line, &series)) {
                continue;
            }
            auto *ts = request.add_timeseries();
            auto labels = series.labels;
            labels.emplace_back("__name__", series.name);
            std::string noise(600, '0');
            for (char &c : noise) {
                c = "0123456789abcdef"[random() & 15U];
            }
            labels.emplace_back("noise", noise);
            for (const auto &[name, value] : labels) {
                auto *l = ts->add_labels();
                l->set_name(name);
                l->set_value(value);
            }
            auto *sample = ts->add_samples();
            sample->set_timestamp(t);
            sample->set_value(series.value);
            ++added;
        }
        std::string next = request.SerializeAsString();
        std::string compressed;
        snappy::Compress(next.data(), next.size(), &compressed);
        if (compressed.size() > limits.maxBodyBytes - (1U << 20U)
            || next.size() > limits.maxDecodedBytes - (2U << 20U)) {
            full = true;
        } else {
            bytes = std::move(next);
            body = std::move(compressed);
        }
    }
    const std::string head = fmt::format(
        "POST /api/v1/write HTTP/1.1\r\nHost: x\r\nContent-Encoding: snappy\r\nContent-Length: {}\r\nConnection: "
        "close\r\n\r\n",
        body.size());
    fmt::print("{} GPUs; a push of {:.1f} MiB snappy ({:.1f} MiB decoded); {} senders at once\n", gpus,
        static_cast<double>(body.size()) / (1 << 20), static_cast<double>(bytes.size()) / (1 << 20), senders);
    bytes.clear();
    bytes.shrink_to_fit();

    const long rest = rssMiB();
    std::atomic<long> peak { rest };
    std::atomic<bool> sampling { true };
    std::thread sampler([&] {
        while (sampling) {
            peak = std::max(peak.load(), rssMiB());
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    std::atomic<int> taken { 0 };
    std::atomic<int> retried { 0 };
    std::atomic<int> failed { 0 };
    const auto begin = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int s = 0; s < senders; ++s) {
        threads.emplace_back([&] {
            for (int attempt = 0; attempt < 600; ++attempt) {
                const int status = post(port, head, body);
                if (status == 204) {
                    ++taken;
                    return;
                }
                ++retried;
                std::this_thread::sleep_for(std::chrono::milliseconds(100)); // a sender's backoff
            }
            ++failed;
        });
    }
    for (auto &thread : threads) {
        thread.join();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    sampling = false;
    sampler.join();
    fmt::print("  taken {} of {} in {:.1f} s ({} answers 503 or cut, retried; {} gave up)\n", taken.load(), senders,
        seconds, retried.load(), failed.load());
    fmt::print("  resident: {} MiB at rest after the start, {} MiB at most during the pushes (+{} MiB), {} MiB after\n",
        rest, peak.load(), peak.load() - rest, rssMiB());
    receiver.stop();
    return failed > 0 ? 1 : 0;
}
