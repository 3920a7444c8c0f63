// SPDX-License-Identifier: Apache-2.0
// Prometheus' JSON against Fleetscope's frames for the same data (issue 7): 100,000 simulated GPUs x 4 metrics
// (GPU temperature, power, utilisation, memory used). The JSON answers are what a Prometheus server that scraped our
// exporter page (ExporterPage::render: dcgm-exporter's labels, pods of the simulator's running jobs) would answer to
// the 4 instant queries a dashboard sends. Measured, median of the repetitions: their bytes; a memcpy of them; the
// backend's parser (PromJson::parseVector, as PrometheusSource::poll calls it); two generic DOM parses (simdjson DOM,
// QJsonDocument) as a dashboard-like client would do; the assembly into a frame; the Fleetscope frame of the same 4
// metrics (encodeFrame, serialised) and the console's decode (client FrameAssembler). Last, against a loopback HTTP
// server serving the same answers: the backend's HTTP client alone, and the real PrometheusSource::poll, with the
// process's CPU time and page faults (a cross-check of the reproduced assembly, and where the live path's time goes).
//
//   build/dev/bin/bench_promjson [repetitions] [gpus]
#include "bench/promanswer.h"
#include "bench/timing.h"
#include "bench/wiredecode.h"
#include "client/protodecode.h"
#include "common/heap.h"
#include "core/framesource.h"
#include "dcgm/dcgmvalue.h"
#include "dcgm/prometheustopology.h"
#include "prometheus/prometheushttp.h"
#include "prometheus/prometheussource.h"
#include "prometheus/promjson.h"
#include "service/frameencoder.h"
#include "sim/exporterpage.h"
#include "sim/simulatedfleet.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <fmt/format.h>
#include <simdjson.h>

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::bench::goFloat;
using fleetscope::bench::median;
using fleetscope::bench::promAnswer;
using namespace std::chrono_literals;

namespace {

// Timed after one run that is not, which sizes the parsers' buffers and the vectors of samples, as the live
// path's first poll does.
double medianMs(int reps, const std::function<void()> &fn)
{
    return fleetscope::bench::medianMs(reps, fn, 1);
}

// A dashboard-like client: a DOM of the whole answer, then per series the GPU's name and its value.
double walkSimdjsonDom(simdjson::dom::parser *parser, const std::string &body, size_t *series)
{
    double sum = 0;
    const simdjson::dom::element doc = parser->parse(body);
    for (const simdjson::dom::element item : doc["data"]["result"].get_array()) {
        const simdjson::dom::object metric = item["metric"].get_object();
        const std::string_view host = metric["Hostname"].get_string();
        const std::string_view gpu = metric["gpu"].get_string();
        const std::string_view text = item["value"].get_array().at(1).get_string();
        double v = 0;
        be::PromJson::parseValue(text, &v);
        sum += v + static_cast<double>(host.size() + gpu.size());
        ++*series;
    }
    return sum;
}

double walkQJson(const std::string &body, size_t *series)
{
    double sum = 0;
    const auto doc = QJsonDocument::fromJson(QByteArray::fromRawData(body.data(), static_cast<qsizetype>(body.size())));
    const QJsonArray result
        = doc.object().value(QLatin1String("data")).toObject().value(QLatin1String("result")).toArray();
    for (const auto &item : result) {
        const QJsonObject entry = item.toObject();
        const QJsonObject metric = entry.value(QLatin1String("metric")).toObject();
        const QString host = metric.value(QLatin1String("Hostname")).toString();
        const QString gpu = metric.value(QLatin1String("gpu")).toString();
        const double v = entry.value(QLatin1String("value")).toArray().at(1).toString().toDouble();
        sum += v + static_cast<double>(host.size() + gpu.size());
        ++*series;
    }
    return sum;
}

// PrometheusSource::poll's assembly of one metric's samples into its plane, with the same public pieces: the
// topology's index, clean(), first series per GPU wins. Left out: the job tracking (PrometheusJobs) and the health
// grading that poll() also does; the real poll is measured at the end.
void assemblePlane(const be::PrometheusTopology &topology, const std::vector<be::PromSample> &samples,
    std::vector<float> *plane, std::vector<uint8_t> *got, std::vector<uint8_t> *hasData)
{
    size_t sentinels = 0;
    size_t nans = 0;
    std::fill(got->begin(), got->end(), 0);
    for (const auto &s : samples) {
        const int64_t g = topology.indexOf(s.hostname, s.gpu);
        if (g < 0 || (*got)[static_cast<size_t>(g)]) {
            continue;
        }
        (*got)[static_cast<size_t>(g)] = 1;
        const double value = be::cleanDcgmValue(s.value, &sentinels, &nans);
        (*plane)[static_cast<size_t>(g)] = static_cast<float>(value);
        (*hasData)[static_cast<size_t>(g)] |= std::isfinite(value) ? 1 : 0;
    }
}

// Serves GET /api/v1/query?query=Q on 127.0.0.1 with answer(Q), one request per connection, on its own thread.
class LoopbackPrometheus
{
public:
    using Answer = std::function<std::string_view(const std::string &query)>;

    explicit LoopbackPrometheus(Answer answer)
        : m_answer(std::move(answer))
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof(address);
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr *>(&address), length) != 0 || ::listen(m_fd, 16) != 0
            || ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
            return;
        }
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { run(); });
    }
    ~LoopbackPrometheus()
    {
        m_stopping = true;
        ::shutdown(m_fd, SHUT_RDWR); // wakes accept()
        if (m_thread.joinable()) {
            m_thread.join();
        }
        ::close(m_fd);
    }
    LoopbackPrometheus(const LoopbackPrometheus &) = delete;
    LoopbackPrometheus &operator=(const LoopbackPrometheus &) = delete;

    std::string url() const { return fmt::format("http://127.0.0.1:{}", m_port); }

private:
    static std::string decode(std::string_view text)
    {
        std::string out;
        for (size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '%' && i + 2 < text.size()) {
                out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
                i += 2;
            } else {
                out.push_back(text[i] == '+' ? ' ' : text[i]);
            }
        }
        return out;
    }

    static void writeAll(int fd, std::string_view data)
    {
        while (!data.empty()) {
            const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
            if (n <= 0) {
                return;
            }
            data.remove_prefix(static_cast<size_t>(n));
        }
    }

    void run()
    {
        while (!m_stopping) {
            const int client = ::accept(m_fd, nullptr, nullptr);
            if (client < 0) {
                continue;
            }
            std::string request;
            char buffer[4096];
            while (request.find("\r\n\r\n") == std::string::npos) {
                const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
                if (n <= 0) {
                    break;
                }
                request.append(buffer, static_cast<size_t>(n));
            }
            const size_t start = request.find("query=");
            const size_t end = request.find_first_of("& ", start);
            const std::string query = start == std::string::npos
                ? std::string()
                : decode(std::string_view(request).substr(start + 6, end - start - 6));
            const std::string_view body = m_answer(query);
            writeAll(client,
                fmt::format("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
                            "Connection: close\r\n\r\n",
                    body.size()));
            writeAll(client, body);
            ::close(client);
        }
    }

    Answer m_answer;
    int m_fd = -1;
    uint16_t m_port = 0;
    std::atomic<bool> m_stopping { false };
    std::thread m_thread;
};

// Minor page faults of the process so far: first touches of fresh memory.
long minorFaults()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

bool samePlane(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const auto gpus = static_cast<uint32_t>(argc > 2 ? std::max(8, std::atoi(argv[2])) : 100000);
    const std::vector<be::MetricId> metrics
        = { be::MetricId::GpuTemp, be::MetricId::Power, be::MetricId::GpuUtil, be::MetricId::FbUsed };
    const auto &catalog = be::metricCatalog();

    // A simulated fleet after half an hour, with its running jobs (for the pod labels), as the exporter page shows it.
    be::SimulationOptions options;
    options.gpuCount = gpus;
    options.interval = std::chrono::hours(1); // no live step during the benchmark
    options.history = std::chrono::minutes(30);
    const auto simulatedSource = be::simulatedSource(options);
    be::FrameSource &source = *simulatedSource;
    const auto simulated = source.latest();
    const auto jobs = source.jobs();
    const be::FleetShape simShape = source.shape();
    source.stop();
    be::Frame onlyFour;
    onlyFour.health = simulated->health;
    for (const auto id : metrics) {
        onlyFour.planes[static_cast<size_t>(id)] = simulated->plane(id);
    }
    const std::string page = be::ExporterPage::render(simShape, onlyFour, jobs, {}).text;
    const int64_t evalMs = simulated->sampleTimeMs + 1234;

    std::vector<std::string> answers;
    size_t jsonBytes = 0;
    for (const auto id : metrics) {
        answers.push_back(promAnswer(page, catalog[static_cast<size_t>(id)].dcgmField, evalMs));
        jsonBytes += answers.back().size();
        // Room for simdjson's padding, so that no parser below copies the answer first.
        answers.back().reserve(answers.back().size() + simdjson::SIMDJSON_PADDING);
    }
    const std::vector<std::string> byLabels = { "Hostname", "gpu", "UUID", "modelName", "DCGM_FI_DRIVER_VERSION" };
    std::string discovery = promAnswer(page, catalog[0].dcgmField, evalMs, byLabels);

    // The layout as PrometheusSource::start learns it: the discovery query's series, then their identities.
    be::PromJson json;
    std::vector<be::PromSample> samples;
    std::string error;
    be::PrometheusTopology topology;
    if (!json.parseVector(&discovery, size_t { be::FleetShape::maxGpus } * 2, true, &samples, &error)
        || !be::PrometheusTopology::fromLabels(samples, &topology, &error)) {
        fmt::print(stderr, "discovery: {}\n", error);
        return 1;
    }
    topology.applyIdentity(samples);
    const uint32_t n = topology.shape().gpuCount;
    const size_t maxSeries = size_t { n } * 2 + 64; // as PrometheusSource::query
    constexpr bool withJobs = true; // PrometheusSource::poll reads the job labels of every metric
    QString topologyError;
    const auto clientTopology
        = fleetscope::decodeTopology(be::encodeTopology(topology.shape(), topology.generation()), &topologyError);
    if (!clientTopology) {
        fmt::print(stderr, "topology does not decode: {}\n", topologyError.toStdString());
        return 1;
    }

    fmt::print("{} GPUs, {} metrics, {} of them offline; median of {} runs; times in ms\n", n, metrics.size(),
        std::count_if(simulated->health.begin(), simulated->health.end(),
            [](uint8_t h) { return (h & 0x07U) == fleetscope::health::Offline; }),
        reps);
    for (size_t m = 0; m < metrics.size(); ++m) {
        fmt::print("  {:<26} {:>11} bytes\n", catalog[static_cast<size_t>(metrics[m])].dcgmField, answers[m].size());
    }
    const size_t firstSeries = answers[0].find("[{") + 1;
    fmt::print("  first series: {}\n\n", answers[0].substr(firstSeries, answers[0].find("]}") + 2 - firstSeries));

    // Reference: a memcpy of all the JSON bytes into a warm buffer.
    std::string copy(jsonBytes, '\0');
    const double memcpyMs = medianMs(reps, [&] {
        size_t at = 0;
        for (const auto &a : answers) {
            std::memcpy(copy.data() + at, a.data(), a.size());
            at += a.size();
        }
    });

    // The backend's parser, as the live path calls it (no placement labels, job labels).
    std::vector<std::vector<be::PromSample>> parsed(metrics.size());
    bool ok = true;
    const double promJsonMs = medianMs(reps, [&] {
        for (size_t m = 0; m < metrics.size(); ++m) {
            ok = json.parseVector(&answers[m], maxSeries, false, &parsed[m], &error, withJobs) && ok;
        }
    });
    if (!ok) {
        fmt::print(stderr, "PromJson: {}\n", error);
        return 1;
    }

    // The same parser without the job labels: what reading them (strings copied per series) costs.
    const double promJsonNoJobsMs = medianMs(reps, [&] {
        for (size_t m = 0; m < metrics.size(); ++m) {
            json.parseVector(&answers[m], maxSeries, false, &parsed[m], &error);
        }
    });

    simdjson::dom::parser domParser;
    size_t domSeries = 0;
    double sink = 0;
    const double domMs = medianMs(reps, [&] {
        domSeries = 0;
        for (const auto &a : answers) {
            sink += walkSimdjsonDom(&domParser, a, &domSeries);
        }
    });
    size_t qtSeries = 0;
    const double qtMs = medianMs(reps, [&] {
        qtSeries = 0;
        for (const auto &a : answers) {
            sink += walkQJson(a, &qtSeries);
        }
    });

    // Assembly into a frame as PrometheusSource::poll does it: a frame without data, then each metric's plane.
    std::shared_ptr<be::Frame> frame;
    std::vector<uint8_t> got(n);
    std::vector<uint8_t> hasData(n);
    auto assemble = [&] {
        frame = std::make_shared<be::Frame>();
        for (auto &plane : frame->planes) {
            plane.assign(n, std::numeric_limits<float>::quiet_NaN());
        }
        frame->health.assign(n, fleetscope::health::NoData);
        frame->sampleTimeMs = evalMs;
        std::fill(hasData.begin(), hasData.end(), 0);
        for (size_t m = 0; m < metrics.size(); ++m) {
            assemblePlane(topology, parsed[m], &frame->planes[static_cast<size_t>(metrics[m])], &got, &hasData);
        }
        for (uint32_t g = 0; g < n; ++g) {
            frame->health[g] = hasData[g] ? fleetscope::health::Ok : fleetscope::health::NoData;
        }
    };
    const double assembleMs = medianMs(reps, assemble);

    // The Fleetscope frame of the same 4 metrics: encoded, serialised (what gRPC sends), decoded by the console.
    std::vector<be::pb::FramePart> parts;
    std::vector<std::string> wire;
    auto encode = [&] {
        parts = be::encodeFrame(*frame, metrics, topology.generation());
        wire.resize(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) {
            parts[i].SerializeToString(&wire[i]);
        }
    };
    const double encodeMs = medianMs(reps, encode);
    size_t frameBytes = 0;
    for (const auto &w : wire) {
        frameBytes += w.size();
    }
    fleetscope::FramePtr decoded;
    const double decodeMs = medianMs(reps, [&] { decoded = fleetscope::bench::decodeWire(clientTopology, wire); });

    // The backend's latency from the answers' bytes to the frame on the wire, in one go.
    const long latencyFaultsStart = minorFaults();
    const double latencyMs = medianMs(reps, [&] {
        for (size_t m = 0; m < metrics.size(); ++m) {
            json.parseVector(&answers[m], maxSeries, false, &parsed[m], &error, withJobs);
        }
        assemble();
        encode();
    });
    const double latencyFaults = static_cast<double>(minorFaults() - latencyFaultsStart) / (reps + 1);

    // Checks: every series landed, the console decodes what was assembled.
    size_t series = 0;
    for (size_t m = 0; m < metrics.size(); ++m) {
        series += parsed[m].size();
        const auto &plane = frame->plane(metrics[m]);
        const auto finite
            = static_cast<size_t>(std::count_if(plane.begin(), plane.end(), [](float v) { return std::isfinite(v); }));
        const auto *back
            = decoded ? decoded->plane(QString::fromStdString(catalog[static_cast<size_t>(metrics[m])].key)) : nullptr;
        if (finite != parsed[m].size() || !back || !samePlane(back->values, plane)) {
            fmt::print(stderr, "check failed for {}: {} values of {} series, decoded {}\n",
                catalog[static_cast<size_t>(metrics[m])].key, finite, parsed[m].size(), back != nullptr);
            return 1;
        }
    }
    if (domSeries != series || qtSeries != series) {
        fmt::print(stderr, "DOM parsers saw {} / {} series, PromJson {}\n", domSeries, qtSeries, series);
        return 1;
    }

    // The real live path: PrometheusSource::poll over loopback HTTP, the same 4 answers, the catalogue's other
    // metrics answered with no series, and a newer sample time at every poll.
    std::vector<double> pollWallMs;
    std::vector<double> pollElapsedMs;
    std::vector<double> pollCpuMs; // the process's, so the loopback server's too
    std::vector<double> pollFaults;
    std::vector<double> heapPollWallMs;
    std::vector<double> heapPollFaults;
    double httpMs = 0;
    double httpFaults = 0;
    size_t pollAnswerBytes = 0;
    bool pollMatches = true;
    {
        int64_t sampleMs = evalMs;
        std::string sampleAnswer;
        const std::string empty = R"({"status":"success","data":{"resultType":"vector","result":[]}})";
        // The synthetic series name their node Hostname: the source chooses the profile of dcgm-exporter 3.x-4.8.2.
        const auto map = be::MetricMap::profile(be::MetricMap::Profile::Gen3x482);
        LoopbackPrometheus server([&](const std::string &query) -> std::string_view {
            if (query == be::PrometheusSource::profileDiscoveryQuery()) {
                return discovery;
            }
            if (query == be::PrometheusSource::sampleTimeQuery(map)) {
                sampleMs += 1000;
                const std::string t = goFloat(static_cast<double>(sampleMs) / 1000.0);
                sampleAnswer = R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[)"
                    + t + ",\"" + t + "\"]}]}}";
                return sampleAnswer;
            }
            for (size_t m = 0; m < metrics.size(); ++m) {
                if (query == be::PrometheusSource::queryFor(map, metrics[m])) {
                    return std::string_view(answers[m]);
                }
            }
            return empty;
        });
        // The transport alone: the 4 answers fetched with the backend's HTTP client.
        be::PrometheusHttp http;
        if (!http.setBaseUrl(server.url(), &error)) {
            fmt::print(stderr, "PrometheusHttp: {}\n", error);
            return 1;
        }
        const long httpFaultsStart = minorFaults();
        httpMs = medianMs(reps, [&] {
            for (const auto id : metrics) {
                be::PrometheusHttp::Response response;
                const auto target
                    = "/api/v1/query?query=" + be::PrometheusHttp::encode(*be::PrometheusSource::queryFor(map, id));
                if (!http.get(target, 60s, &response, &error) || response.body.size() < 100) {
                    fmt::print(stderr, "PrometheusHttp::get: {}\n", error);
                    std::exit(1);
                }
            }
        });
        httpFaults = static_cast<double>(minorFaults() - httpFaultsStart) / (reps + 1);

        be::PrometheusSource live([](const std::string &) {});
        be::PrometheusSource::Options liveOptions;
        liveOptions.url = server.url();
        liveOptions.timeout = 60s;
        if (!live.start(liveOptions, &error)) {
            fmt::print(stderr, "PrometheusSource::start: {}\n", error);
            return 1;
        }
        live.poll(); // not timed, as for the others
        for (int i = 0; i < reps; ++i) {
            const auto start = std::chrono::steady_clock::now();
            const std::clock_t cpuStart = std::clock();
            const long faultsStart = minorFaults();
            const auto polled = live.poll();
            pollCpuMs.push_back(static_cast<double>(std::clock() - cpuStart) * 1000.0 / CLOCKS_PER_SEC);
            pollFaults.push_back(static_cast<double>(minorFaults() - faultsStart));
            pollWallMs.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            pollElapsedMs.push_back(static_cast<double>(live.lastReport().elapsed.count()) / 1000.0);
            pollAnswerBytes = live.lastReport().answerBytes;
            if (!polled) {
                fmt::print(stderr, "poll: {}\n", live.lastReport().error);
                return 1;
            }
            for (const auto id : metrics) {
                pollMatches = pollMatches && samePlane(polled->plane(id), frame->plane(id));
            }
        }
        // The same polls with the answers' memory kept in the heap between polls, as fleetscope-backend runs them.
        fleetscope::heap::keepLargeAnswers();
        live.poll(); // not timed: the first poll maps the heap's peak
        for (int i = 0; i < reps; ++i) {
            const auto start = std::chrono::steady_clock::now();
            const long faultsStart = minorFaults();
            if (!live.poll()) {
                fmt::print(stderr, "poll: {}\n", live.lastReport().error);
                return 1;
            }
            heapPollFaults.push_back(static_cast<double>(minorFaults() - faultsStart));
            heapPollWallMs.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
    }

    // Were both sides compressed: zlib at level 6 (gzip's default; neither the backend's HTTP client nor its gRPC
    // server asks for compression today).
    size_t jsonDeflated = 0;
    for (const auto &a : answers) {
        jsonDeflated += static_cast<size_t>(
            qCompress(reinterpret_cast<const uchar *>(a.data()), static_cast<qsizetype>(a.size()), 6).size());
    }
    size_t frameDeflated = 0;
    for (const auto &w : wire) {
        frameDeflated += static_cast<size_t>(
            qCompress(reinterpret_cast<const uchar *>(w.data()), static_cast<qsizetype>(w.size()), 6).size());
    }

    const double jsonMiB = static_cast<double>(jsonBytes) / 1048576.0;
    const double frameMiB = static_cast<double>(frameBytes) / 1048576.0;
    fmt::print("{:<58} {:>12} {:>9}\n", "", "bytes", "MiB");
    fmt::print("{:<58} {:>12} {:>9.2f}\n", "Prometheus JSON, 4 answers", jsonBytes, jsonMiB);
    fmt::print("{:<58} {:>12} {:>9.3f}\n", fmt::format("Fleetscope frame, {} parts serialised", wire.size()),
        frameBytes, frameMiB);
    fmt::print("{:<58} {:>12.1f}\n", "JSON / frame (goal >= 50)",
        static_cast<double>(jsonBytes) / static_cast<double>(frameBytes));
    fmt::print("{:<58} {:>12} {:>9.2f}\n", "JSON, zlib level 6", jsonDeflated, jsonDeflated / 1048576.0);
    fmt::print("{:<58} {:>12} {:>9.3f}\n", "frame, zlib level 6", frameDeflated, frameDeflated / 1048576.0);
    fmt::print("{:<58} {:>12.1f}\n\n", "JSON / frame, both compressed",
        static_cast<double>(jsonDeflated) / static_cast<double>(frameDeflated));

    fmt::print("{:<58} {:>9} {:>9}\n", "", "ms", "/memcpy");
    auto row = [&](const std::string &what, double ms) {
        fmt::print("{:<58} {:>9.3f} {:>9.1f}\n", what, ms, ms / memcpyMs);
    };
    row("memcpy of the JSON bytes", memcpyMs);
    row("backend parse: PromJson (simdjson on-demand)", promJsonMs);
    row("  the same without the job labels", promJsonNoJobsMs);
    row("dashboard-like parse: simdjson DOM + walk", domMs);
    row("dashboard-like parse: QJsonDocument + walk", qtMs);
    row("assemble into a frame (4 planes)", assembleMs);
    row("encode + serialise the frame", encodeMs);
    row("console decode of the frame (parse + reassemble)", decodeMs);
    row("backend latency: parse + assemble + encode, in one go", latencyMs);
    row("PrometheusHttp::get of the 4 answers over loopback", httpMs);
    row("PrometheusSource::poll over loopback HTTP (wall)", median(pollWallMs));
    row("  the same, its own Report::elapsed", median(pollElapsedMs));
    row("  the same, CPU time of the process (server included)", median(pollCpuMs));
    row("PrometheusSource::poll, answers kept in the heap (as the backend)", median(heapPollWallMs));
    fmt::print("\ndecode ratios (goal >= 20): PromJson / frame decode {:.0f}, simdjson DOM / frame decode {:.0f}, "
               "QJsonDocument / frame decode {:.0f}\n",
        promJsonMs / decodeMs, domMs / decodeMs, qtMs / decodeMs);
    fmt::print("minor page faults: {:.0f} per poll, {:.0f} per parse + assemble + encode, {:.0f} per 4 HTTP gets "
               "(means but the poll's, a median)\n",
        median(pollFaults), latencyFaults, httpFaults);
    fmt::print("minor page faults per poll with the answers kept in the heap: {:.0f}\n", median(heapPollFaults));
    fmt::print("poll: {} answer bytes per poll (incl. sample time and 9 empty answers); planes equal to the "
               "reproduced assembly: {}\n",
        pollAnswerBytes, pollMatches ? "yes" : "NO");
    return sink == 0 || !pollMatches ? 1 : 0;
}
