// SPDX-License-Identifier: Apache-2.0
// The push path's latency end to end: from the last sample of a window arriving at the remote-write receiver (the 204
// answering the sender's last push of that window) to that window's frame decoded by a real gRPC client (Subscribe,
// read and assembled as the console does, with FrameAssembler). All of it in this process over loopback: two sender
// connections pushing vmagent's blocks (10,000 series each, snappy), the receiver (RemoteWriteSource, 4 HTTP
// threads), FrameSource (its ticker closes each window when due), BackendServer (gRPC) and the client.
//
// The window delay is 0: the senders push each window's samples (stamped at its start) within the window, so none
// arrives after its end, and the window is due at its end. Per window:
//   wait     last 204 -> the window's publication time (its end + delay): the configured wait, not work
//   lag      publication time -> the ticker's poll
//   close    the poll: the window closed and folded into a frame (RemoteWriteSource::poll)
//   publish  the poll's end -> the frame the source's latest (FrameSource::publish: jobs, anomaly judgement, held)
//   send     -> the client holding the decoded frame: the service's encode, gRPC, the client's parse and assembly
//   work     publication time (or the last 204, if later) -> decoded: lag + close + publish + send
// Baselines measured in the same run: a memcpy of the frame's bytes (8 planes and the health bytes), the encoder
// alone (encodeFrame), the client's decode alone (parse and assemble the serialised parts).
//
// With --vmagent, a real vmagent (Debian's victoria-metrics) scrapes the simulator's node targets and pushes to the
// receiver instead: per frame, sample -> decoded (the window's newest sample time to the decoded frame), split the
// same way. The delay is then the one given (vmagent pushes what it scraped up to its flush interval later).
//
// Usage: bench_pushlatency [windows] [gpus] [windowMs]                    (defaults 5, 102400, 10000)
//        bench_pushlatency --vmagent [seconds] [gpus] [scrapeMs] [delayMs] (defaults 120, 10240, 10000, 1000)
#include "analytics/fleetanalytics.h"
#include "core/clock.h"
#include "pushprobes.h"
#include "remotewrite/remotewritesource.h"
#include "remotewriteblocks.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "sim/exporterserver.h"
#include "timing.h"
#include "wiredecode.h"

#include <httplib.h>

#include <QCoreApplication>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

namespace be = fleetscope::backend;
using namespace fleetscope::bench;

namespace {

// One window's figures, in ms.
struct WindowTimes
{
    double wait = 0;
    double lag = 0;
    double close = 0;
    double publish = 0;
    double send = 0;
    double work = 0;
    double total = 0; // from the last 204 (or, with vmagent, the newest sample) to decoded
};

WindowTimes timesOf(Clock::time_point arrived, Clock::time_point due, const TimedPoller::Poll &poll,
    Clock::time_point published, const FrameClient::Received &received)
{
    WindowTimes t;
    t.wait = msBetween(arrived, due);
    t.lag = msBetween(due, poll.start);
    t.close = msBetween(poll.start, poll.end);
    t.publish = msBetween(poll.end, published);
    t.send = msBetween(published, received.decoded);
    t.work = msBetween(std::max(due, arrived), received.decoded);
    t.total = msBetween(arrived, received.decoded);
    return t;
}

void printTimes(const std::vector<WindowTimes> &all)
{
    fmt::print("  {:>7} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9}\n", "window", "wait", "lag", "close", "publish",
        "send", "work", "total");
    auto row = [](const std::string &name, const WindowTimes &t) {
        fmt::print("  {:>7} {:>9.1f} {:>6.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>9.1f}\n", name, t.wait, t.lag,
            t.close, t.publish, t.send, t.work, t.total);
    };
    WindowTimes middle;
    for (auto field : { &WindowTimes::wait, &WindowTimes::lag, &WindowTimes::close, &WindowTimes::publish,
             &WindowTimes::send, &WindowTimes::work, &WindowTimes::total }) {
        std::vector<double> values;
        for (const auto &t : all) {
            values.push_back(t.*field);
        }
        middle.*field = median(values);
    }
    for (size_t k = 0; k < all.size(); ++k) {
        row(std::to_string(k + 1), all[k]);
    }
    row("median", middle);
}

// The baselines: a memcpy of the frame's bytes, encodeFrame alone, the client's parse and assembly alone.
void printBaselines(const be::Frame &frame, const be::FleetShape &shape)
{
    const auto &metrics = pushedFields();
    const size_t bytes = static_cast<size_t>(shape.gpuCount) * (metrics.size() * sizeof(float) + 1);
    std::vector<char> from(bytes, 1);
    std::vector<char> to(bytes);
    const double memcpyMs = medianMs(
        5, [&] { std::memcpy(to.data(), from.data(), bytes); }, 1);
    std::vector<be::pb::FramePart> parts;
    const double encodeMs = medianMs(
        3, [&] { parts = be::encodeFrame(frame, metrics, 1); }, 1);
    std::vector<std::string> wire;
    for (const auto &part : parts) {
        wire.push_back(part.SerializeAsString());
    }
    QString error;
    const auto topology = fleetscope::decodeTopology(be::encodeTopology(shape, 1), &error);
    fleetscope::FramePtr decoded;
    const double decodeMs = medianMs(
        3, [&] { decoded = decodeWire(topology, wire); }, 1);
    fmt::print(
        "  baselines: memcpy of the frame's {:.1f} MiB {:.2f} ms; encodeFrame alone {:.2f} ms ({} parts); client "
        "parse + assemble alone {:.2f} ms{}\n",
        static_cast<double>(bytes) / 1048576.0, memcpyMs, encodeMs, parts.size(), decodeMs, decoded ? "" : " (FAILED)");
}

// The receiver on a free port with its layout learnt from pushes: those of push(), called until start() returns.
bool startReceiver(be::RemoteWriteSource &receiver, be::RemoteWriteSource::Options options,
    const std::function<void(int port)> &push, std::string *error)
{
    options.listen = fmt::format("127.0.0.1:{}", freePort());
    const int port = std::stoi(options.listen.substr(options.listen.rfind(':') + 1));
    std::atomic<bool> done { false };
    bool started = false;
    std::thread starter([&] {
        started = receiver.start(options, error);
        done = true;
    });
    while (!done) {
        push(port);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    starter.join();
    return started;
}

int synthetic(int windows, uint32_t gpus, int64_t windowMs)
{
    fmt::print("push latency, synthetic senders: {} GPUs x {} fields, windows of {} ms, delay 0 ms\n", gpus,
        pushedFields().size(), windowMs);
    const auto built = Clock::now();
    const std::string page = simulatedPage(gpus);
    // The pushes the receiver learns the layout from, then one block set per window, stamped at its start: windows
    // far enough ahead that the sets, the receiver and the client are ready before the first (the time one set
    // takes to build, measured on the first, tells how far).
    size_t raw = 0;
    size_t samples = 0;
    const auto learningStart = Clock::now();
    const auto learning = pushedBlocks(page, be::nowUnixMs(), &raw, &samples);
    const double setMs = msBetween(learningStart, Clock::now());
    const int64_t firstWindow
        = (be::nowUnixMs() + static_cast<int64_t>(setMs * (windows + 2) * 1.5) + 20000) / windowMs + 1;
    std::vector<std::vector<std::string>> blocks;
    for (int w = 0; w < windows; ++w) {
        blocks.push_back(pushedBlocks(page, (firstWindow + w) * windowMs + 1, &raw, &samples));
    }
    size_t pushed = 0;
    for (const auto &b : blocks.front()) {
        pushed += b.size();
    }
    fmt::print("  {} samples a window in {} blocks, {:.1f} MB snappy; built in {:.0f} s\n", samples,
        blocks.front().size(), static_cast<double>(pushed) / 1e6, msBetween(built, Clock::now()) / 1000);

    // Pushes blocks over two kept-alive connections, as a sender with two queues; when the last was answered, or
    // nothing if any was not 204.
    auto pushAll = [](int port, const std::vector<std::string> &set) -> std::optional<Clock::time_point> {
        std::atomic<bool> ok { true };
        std::vector<std::thread> senders;
        for (size_t s = 0; s < 2; ++s) {
            senders.emplace_back([&, s] {
                httplib::Client client("127.0.0.1", port);
                client.set_read_timeout(60, 0);
                client.set_write_timeout(60, 0);
                for (size_t k = s; k < set.size(); k += 2) {
                    const auto r = client.Post("/api/v1/write",
                        { { "Content-Encoding", "snappy" }, { "X-Prometheus-Remote-Write-Version", "0.1.0" } }, set[k],
                        "application/x-protobuf");
                    ok = ok && r && r->status == 204;
                }
            });
        }
        for (auto &sender : senders) {
            sender.join();
        }
        return ok ? std::optional<Clock::time_point>(Clock::now()) : std::nullopt;
    };

    auto receiver = std::make_unique<be::RemoteWriteSource>([](const std::string &) {});
    be::RemoteWriteSource::Options options;
    options.windowMs = windowMs;
    options.delayMs = 0;
    // Between its start and the first window measured the receiver takes nothing, which it would report (and the
    // service end the stream for) after three windows: a grace of ten minutes covers the wait.
    options.graceMs = 600000;
    std::string error;
    if (!startReceiver(
            *receiver, options, [&](int port) { pushAll(port, learning); }, &error)) {
        fmt::print(stderr, "receiver: {}\n", error);
        return 1;
    }
    const int receiverPort = receiver->port();
    auto poller = std::make_unique<TimedPoller>(std::move(receiver));
    TimedPoller &timed = *poller;
    be::FrameSource::Options sourceOptions;
    sourceOptions.interval = std::chrono::milliseconds(windowMs);
    be::BackendServer server(be::judgedSource(std::move(poller), sourceOptions));
    if (!server.start("127.0.0.1:0", &error)) {
        fmt::print(stderr, "backend: {}\n", error);
        return 1;
    }
    PublishWatcher watcher(server.source());
    FrameClient client;
    if (!client.start(server.port(), pushedFields(), &error)) {
        fmt::print(stderr, "client: {}\n", error);
        return 1;
    }

    std::vector<WindowTimes> all;
    for (int w = 0; w < windows; ++w) {
        const int64_t start = (firstWindow + w) * windowMs;
        if (be::nowUnixMs() >= start + windowMs / 2) {
            fmt::print(stderr, "window {}: the run is late by {} ms; give more time\n", w, be::nowUnixMs() - start);
            return 1;
        }
        std::this_thread::sleep_until(steadyAt(start + 5));
        const auto arrived = pushAll(receiverPort, blocks[static_cast<size_t>(w)]);
        const auto due = steadyAt(start + windowMs);
        if (!arrived || *arrived >= due) {
            fmt::print(stderr, "window {}: {}\n", w, arrived ? "pushed after the window's end" : "a push was refused");
            return 1;
        }
        const auto received = client.waitFor(start + 1, due + std::chrono::seconds(60));
        const auto poll = timed.pollOf(start + 1);
        const auto published = watcher.publishedAt(start + 1);
        if (!received || !poll || !published) {
            const auto stats = timed.receiver().stats();
            fmt::print(stderr, "window {}: no frame for sample time {} ({} samples taken, {} dropped) {}\n", w,
                start + 1, stats.samples.accepted, stats.samples.dropped(), client.ended());
            return 1;
        }
        all.push_back(timesOf(*arrived, due, *poll, *published, *received));
    }
    const auto stats = timed.receiver().stats();
    fmt::print("  samples taken {}, dropped {}, requests refused {}, connections past a deadline {}\n",
        stats.samples.accepted, stats.samples.dropped(), stats.refused, stats.timedOut);
    printTimes(all);
    printBaselines(*server.source().latest(), server.source().shape());
    client.stop();
    server.stop();
    return stats.samples.dropped() == 0 ? 0 : 1;
}

int withVmagent(int seconds, uint32_t gpus, int64_t scrapeMs, int64_t delayMs)
{
    const QString vmagent = QStandardPaths::findExecutable(QStringLiteral("vmagent"));
    if (vmagent.isEmpty()) {
        fmt::print(stderr, "vmagent is not installed (Debian package victoria-metrics)\n");
        return 1;
    }
    fmt::print("push latency, a real vmagent: {} GPUs ({} node targets), scrape interval = window {} ms, delay {} ms, "
               "{} s\n",
        gpus, gpus / be::FleetShape::gpusPerNode, scrapeMs, delayMs, seconds);
    be::SimulationOptions simulation;
    simulation.gpuCount = gpus;
    simulation.interval = std::chrono::milliseconds(1000);
    const auto fleet = be::simulatedSource(simulation);
    be::ExporterServer exporter(*fleet, be::ExporterPage::Options());
    std::string error;
    QTemporaryDir dir;
    const std::string targets = dir.filePath(QStringLiteral("targets.json")).toStdString();
    if (!exporter.start("127.0.0.1:0", &error) || !exporter.writeTargetsFile(targets, &error)) {
        fmt::print(stderr, "exporter: {}\n", error);
        return 1;
    }
    const std::string config = dir.filePath(QStringLiteral("scrape.yml")).toStdString();
    std::ofstream(config) << fmt::format("global:\n  scrape_interval: {}ms\n  scrape_timeout: {}ms\nscrape_configs:\n"
                                         "  - job_name: dcgm\n    file_sd_configs:\n      - files: ['{}']\n",
        scrapeMs, std::min<int64_t>(scrapeMs, 10000), targets);

    auto receiver = std::make_unique<be::RemoteWriteSource>([](const std::string &) {});
    be::RemoteWriteSource::Options options;
    options.windowMs = scrapeMs;
    options.delayMs = delayMs;
    options.startTimeout = std::chrono::seconds(300);
    QProcess agent;
    agent.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    agent.setStandardOutputFile(QProcess::nullDevice());
    bool agentStarted = false;
    if (!startReceiver(
            *receiver, options,
            [&](int port) {
                if (agentStarted) {
                    return;
                }
                agentStarted = true;
                agent.start(vmagent,
                    { QStringLiteral("-promscrape.config=") + QString::fromStdString(config),
                        QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(freePort()),
                        QStringLiteral("-remoteWrite.tmpDataPath=") + dir.filePath(QStringLiteral("vmagent")),
                        QStringLiteral("-remoteWrite.url=http://127.0.0.1:%1/api/v1/write").arg(port),
                        QStringLiteral("-remoteWrite.flushInterval=200ms"), QStringLiteral("-loggerLevel=WARN") });
                if (!agent.waitForStarted(10000)) {
                    fmt::print(stderr, "vmagent did not start: {}\n", agent.errorString().toStdString());
                }
            },
            &error)) {
        fmt::print(stderr, "receiver: {}\n", error);
        return 1;
    }
    auto poller = std::make_unique<TimedPoller>(std::move(receiver));
    TimedPoller &timed = *poller;
    be::FrameSource::Options sourceOptions;
    sourceOptions.interval = std::chrono::milliseconds(scrapeMs);
    be::BackendServer server(be::judgedSource(std::move(poller), sourceOptions));
    PublishWatcher watcher(server.source());
    FrameClient client;
    if (!server.start("127.0.0.1:0", &error) || !client.start(server.port(), pushedFields(), &error)) {
        fmt::print(stderr, "backend or client: {}\n", error);
        return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    client.stop();
    const auto frames = client.frames();
    std::vector<WindowTimes> all;
    for (const auto &[sampleTimeMs, received] : frames) {
        const auto poll = timed.pollOf(sampleTimeMs);
        const auto published = watcher.publishedAt(sampleTimeMs);
        if (!poll || !published) {
            continue;
        }
        const int64_t due = (be::WindowFolder::windowOf(sampleTimeMs, scrapeMs) + 1) * scrapeMs + delayMs;
        all.push_back(timesOf(steadyAt(sampleTimeMs), steadyAt(due), *poll, *published, received));
    }
    const auto stats = timed.receiver().stats();
    fmt::print("  {} frames; {} requests, samples taken {}, dropped {} ({} too old), connections past a deadline {}\n",
        all.size(), stats.requests, stats.samples.accepted, stats.samples.dropped(), stats.samples.tooOld,
        stats.timedOut);
    fmt::print("  (wait: from the window's newest sample to its publication time; total: sample -> decoded)\n");
    printTimes(all);
    printBaselines(*server.source().latest(), server.source().shape());
    server.stop();
    agent.terminate();
    agent.waitForFinished(10000);
    exporter.stop();
    return all.empty() ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication application(argc, argv); // for QProcess
    auto arg = [&](int k, int64_t fallback) { return argc > k ? std::atoll(argv[k]) : fallback; };
    if (argc > 1 && std::strcmp(argv[1], "--vmagent") == 0) {
        return withVmagent(
            static_cast<int>(arg(2, 120)), static_cast<uint32_t>(arg(3, 10240)), arg(4, 10000), arg(5, 1000));
    }
    return synthetic(
        static_cast<int>(std::max<int64_t>(1, arg(1, 5))), static_cast<uint32_t>(arg(2, 102400)), arg(3, 10000));
}
