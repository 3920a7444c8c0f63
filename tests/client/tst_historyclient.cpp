// SPDX-License-Identifier: Apache-2.0
// HistoryClient against a real backend on 127.0.0.1 with an ephemeral port.
#include "client/historyclient.h"
#include "client/historydecode.h"
#include "service/backendserver.h"
#include "sim/scenario.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QSignalSpy>
#include <QTest>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<be::BackendServer> startBackend(be::SimulationOptions options)
{
    auto server = std::make_unique<be::BackendServer>(be::simulatedSource(options));
    std::string error;
    if (!server->start("127.0.0.1:0", &error)) {
        qWarning("backend did not start: %s", error.c_str());
        return nullptr;
    }
    return server;
}

be::SimulationOptions fleet(uint32_t gpus, std::chrono::minutes history = 0min)
{
    be::SimulationOptions o;
    o.gpuCount = gpus;
    o.seed = 11;
    o.interval = 200ms;
    o.history = history;
    return o;
}

QString addressOf(const be::BackendServer &server)
{
    return QString::fromStdString(server.listeningAddress());
}

std::string floats(const std::vector<float> &values)
{
    std::string out(values.size() * sizeof(float), '\0');
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

} // namespace

class TestHistoryClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rangeEqualsTheBackendsHistory()
    {
        auto server = startBackend(fleet(2048, 30min));
        QVERIFY(server);
        const auto &source = server->source();
        QTRY_VERIFY_WITH_TIMEOUT(source.latest()->sequence >= 3, 10000);
        HistoryClient client(addressOf(*server));
        QSignalSpy ready(&client, &HistoryClient::rangeReady);
        QSignalSpy failed(&client, &HistoryClient::requestFailed);

        // Past frames (coarse, a minute apart) and the live ones of the last second, at a step that samples both.
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp"), QStringLiteral("power") };
        request.gpus = { 0, 17, 1024, 2047 };
        request.toMs = source.latest()->sampleTimeMs;
        request.fromMs = request.toMs - 20 * 60 * 1000;
        request.stepMs = 7000;
        const quint64 id = client.queryRange(request);
        QVERIFY(id != 0);
        QVERIFY(ready.wait(20000));
        QCOMPARE(failed.count(), 0);
        const auto result = ready.takeFirst().at(0).value<RangeResultPtr>();
        QCOMPARE(result->requestId, id);
        QVERIFY(result->problems.isEmpty());
        QCOMPARE(result->series.size(), size_t(2));

        // What the backend holds, independently: for each output time, the last held frame at or before it.
        const auto held = source.framesBetween(request.fromMs, request.toMs);
        QVERIFY(held.size() >= 10);
        for (const auto &[key, metric] :
            { std::pair { "gpu_temp", be::MetricId::GpuTemp }, std::pair { "power", be::MetricId::Power } }) {
            const RangeSeries *series = result->find(QLatin1String(key));
            QVERIFY2(series, key);
            QVERIFY(series->gpus == request.gpus);
            QVERIFY(series->rows() >= 170); // 20 min at 7 s, less what is before the held history
            QVERIFY(series->times.back() <= request.toMs && series->times.back() > request.toMs - request.stepMs);
            for (size_t r = 0; r < series->rows(); ++r) {
                const int64_t t = series->times[r];
                QCOMPARE((t - request.fromMs) % request.stepMs, int64_t(0));
                if (r > 0) {
                    QVERIFY(t > series->times[r - 1]);
                }
                auto it = std::upper_bound(held.begin(), held.end(), t,
                    [](int64_t time, const auto &frame) { return time < frame->sampleTimeMs; });
                QVERIFY(it != held.begin());
                const auto &frame = *std::prev(it);
                QCOMPARE(series->sampleTimes[r], frame->sampleTimeMs);
                for (size_t c = 0; c < series->columns(); ++c) {
                    const float expected = frame->plane(metric)[request.gpus[c]];
                    const float got = series->at(r, c);
                    QVERIFY2(got == expected || (std::isnan(got) && std::isnan(expected)),
                        qPrintable(QStringLiteral("%1 row %2 column %3: %4 != %5")
                                       .arg(QLatin1String(key))
                                       .arg(r)
                                       .arg(c)
                                       .arg(got)
                                       .arg(expected)));
                }
            }
        }
    }

    void badPartsAreDroppedWithAMessage()
    {
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util") };
        request.gpus = { 3, 5 };
        auto good = [&](const char *metric, std::vector<int64_t> times) {
            RawRangePart p;
            p.metricId = metric;
            p.gpus = request.gpus;
            p.times = times;
            p.sampleTimes = times;
            p.values = floats(std::vector<float>(times.size() * 2, 42.0F));
            return p;
        };
        // gpu_temp in two clean parts; power with a short values field; gpu_util going back in time in its 2nd part.
        std::vector<RawRangePart> parts = { good("gpu_temp", { 10, 20 }), good("gpu_temp", { 30 }),
            good("power", { 10, 20 }), good("gpu_util", { 10, 20 }), good("gpu_util", { 20, 30 }) };
        parts[2].values.resize(parts[2].values.size() - 4);
        QStringList problems;
        auto series = assembleRange(parts, request, 8, &problems);
        QCOMPARE(series.size(), size_t(1));
        QCOMPARE(series[0].metricId, QStringLiteral("gpu_temp"));
        QCOMPARE(series[0].rows(), size_t(3));
        QCOMPARE(series[0].values.size(), size_t(6));
        QCOMPARE(series[0].at(2, 1), 42.0F);
        QCOMPARE(problems.size(), 2);
        QVERIFY2(problems[0].contains(QStringLiteral("power")) && problems[0].contains(QStringLiteral("bytes")),
            qPrintable(problems[0]));
        QVERIFY2(problems[1].contains(QStringLiteral("ascending")), qPrintable(problems[1]));

        // Columns that are not the GPUs asked for; a GPU outside the fleet; a metric not asked for.
        problems.clear();
        auto other = good("gpu_temp", { 10 });
        other.gpus = { 3, 6 };
        QVERIFY(assembleRange({ other }, request, 8, &problems).empty());
        QVERIFY(problems.value(0).contains(QStringLiteral("columns")));
        problems.clear();
        QVERIFY(assembleRange({ good("gpu_temp", { 10 }) }, request, 5, &problems).empty());
        QVERIFY(problems.value(0).contains(QStringLiteral("outside the fleet")));
        problems.clear();
        QVERIFY(assembleRange({ good("sm_clock", { 10 }) }, request, 8, &problems).empty());
        QVERIFY(problems.value(0).contains(QStringLiteral("not asked for")));
    }

    // A request for the backend's default set takes any metric, but no more of them than a catalogue lists (a
    // backend could send a part for each of millions of made-up metrics, each a series to look up for every part).
    void aDefaultSetRangeHasNoMoreMetricsThanACatalogue()
    {
        RangeRequest request; // no metrics named: the default set
        request.gpus = { 2 };
        std::vector<RawRangePart> parts(300);
        for (size_t i = 0; i < parts.size(); ++i) {
            parts[i].metricId = "m" + std::to_string(i);
            parts[i].gpus = request.gpus;
        }
        QStringList problems;
        const auto series = assembleRange(parts, request, 8, &problems);
        QCOMPARE(series.size(), size_t(256));
        QCOMPARE(series.back().metricId, QStringLiteral("m255"));
        QCOMPARE(problems.size(), 44);
        QVERIFY2(problems[0].contains(QStringLiteral("dropped m256 history: more metrics than the 256 a catalogue")),
            qPrintable(problems[0]));
    }

    // The service sends one part without rows for a metric that has none: an empty series, not a memcpy from a null
    // pointer (undefined behaviour that the asan preset and fuzz_answers stop on; fuzz/regressions/answers).
    void aMetricWithoutRowsIsAnEmptySeries()
    {
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp") };
        request.gpus = { 2 };
        RawRangePart empty;
        empty.metricId = "gpu_temp";
        empty.gpus = request.gpus;
        QStringList problems;
        const auto series = assembleRange({ empty, empty }, request, 8, &problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
        QCOMPARE(series.size(), size_t(1));
        QCOMPARE(series[0].rows(), size_t(0));
        QVERIFY(series[0].values.empty());
    }

    // StreamEvents' events against the fleet: a GPU or node past it, or an unknown kind or severity, is dropped with a
    // reason; -1 is no GPU or node; without a topology only the sign is checked.
    void eventsAreCheckedAgainstTheFleet()
    {
        auto topology = std::make_shared<Topology>();
        topology->gpuCount = 8;
        topology->nodes.resize(1);
        const auto decode
            = [](int kind, int severity, int64_t gpu, int64_t node, const Topology *fleet, QString *problem) {
                  pb::Event e;
                  e.set_sequence(9);
                  e.set_kind(static_cast<pb::EventKind>(kind));
                  e.set_severity(static_cast<pb::Severity>(severity));
                  e.set_gpu(gpu);
                  e.set_node(node);
                  e.set_metric_id(std::string(65, 'x'));
                  return decodeEvent(e, fleet, problem);
              };
        QString problem;
        auto event = decode(pb::EVENT_KIND_XID, pb::SEVERITY_CRITICAL, 7, 0, topology.get(), &problem);
        QVERIFY(event);
        QCOMPARE(event->kind, EventKind::Xid);
        QCOMPARE(event->severity, EventSeverity::Critical);
        QCOMPARE(event->gpu, int64_t(7));
        QVERIFY(event->metric.isEmpty()); // over 64 bytes: no catalogue id
        QVERIFY(decode(pb::EVENT_KIND_NODE_DOWN, pb::SEVERITY_INFO, -1, -1, topology.get(), &problem));
        QVERIFY(!decode(pb::EVENT_KIND_XID, pb::SEVERITY_INFO, 8, 0, topology.get(), &problem));
        QCOMPARE(problem, QStringLiteral("event 9 names GPU 8, outside the fleet"));
        QVERIFY(!decode(pb::EVENT_KIND_XID, pb::SEVERITY_INFO, 0, 1, topology.get(), &problem));
        QCOMPARE(problem, QStringLiteral("event 9 names node 1, outside the fleet"));
        QVERIFY(!decode(pb::EVENT_KIND_XID, pb::SEVERITY_INFO, -2, 0, nullptr, &problem));
        QVERIFY(!decode(pb::EVENT_KIND_UNSPECIFIED, pb::SEVERITY_INFO, 0, 0, topology.get(), &problem));
        QVERIFY(problem.contains(QStringLiteral("unknown kind")));
        QVERIFY(!decode(pb::EVENT_KIND_XID, 3, 0, 0, topology.get(), &problem));
        QVERIFY(problem.contains(QStringLiteral("unknown severity")));
        QVERIFY(decode(pb::EVENT_KIND_XID, pb::SEVERITY_INFO, 1000, 1000, nullptr, &problem));
    }

    void backendErrorsAreReported()
    {
        auto server = startBackend(fleet(1024));
        QVERIFY(server);
        HistoryClient client(addressOf(*server));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        RangeRequest request;
        request.metricIds = { QStringLiteral("no_such_metric") };
        request.gpus = { 1 };
        request.toMs = QDateTime::currentMSecsSinceEpoch();
        request.fromMs = request.toMs - 60000;
        request.stepMs = 1000;
        const quint64 id = client.queryRange(request);
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.first().at(0).toULongLong(), id);
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("no_such_metric")),
            qPrintable(failed.first().at(1).toString()));

        // A GPU outside a known fleet is refused before it goes out.
        auto topology = std::make_shared<Topology>();
        topology->gpuCount = 1024;
        client.setTopology(topology);
        request.metricIds = { QStringLiteral("gpu_temp") };
        request.gpus = { 1024 };
        failed.clear();
        client.queryRange(request);
        QVERIFY(failed.wait(10000));
        QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("outside the fleet")));
        QTRY_COMPARE(client.pendingRequests(), 0);
    }

    void unreachableAddressFailsWithoutHanging()
    {
        int port = 0;
        {
            auto probe = startBackend(fleet(64));
            QVERIFY(probe);
            port = probe->port();
        }
        HistoryClient client(QStringLiteral("127.0.0.1:%1").arg(port));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        RangeRequest request;
        request.gpus = { 0 };
        request.toMs = QDateTime::currentMSecsSinceEpoch();
        request.fromMs = request.toMs - 60000;
        request.stepMs = 1000;
        client.queryRange(request);
        client.streamEvents({ 0, -1 }, 1);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 10000);
        for (const auto &call : std::as_const(failed)) {
            QVERIFY2(call.at(1).toString().contains(QStringLiteral("unavailable")), qPrintable(call.at(1).toString()));
        }
        QTRY_COMPARE(client.pendingRequests(), 0);
    }

    // A backend that takes the connection but never answers: a closed range of events must fail at its deadline, not
    // finish as if the GPU had had no events.
    void aHungBackendIsNotAQuietOne()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        QVERIFY(fd >= 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        QCOMPARE(::listen(fd, 8), 0); // the kernel completes connections; nobody ever reads or writes
        socklen_t length = sizeof address;
        QCOMPARE(::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length), 0);
        HistoryClient client(QStringLiteral("127.0.0.1:%1").arg(ntohs(address.sin_port)));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        QSignalSpy finished(&client, &HistoryClient::requestFinished);
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        client.streamEvents({ 0, -1 }, now - 3600 * 1000, now - 60 * 1000);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count() + finished.count(), 1, 15000);
        QCOMPARE(finished.count(), 0);
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("in time")),
            qPrintable(failed.first().at(1).toString()));
        QTRY_COMPARE(client.pendingRequests(), 0);
        ::close(fd);
    }

    // A backend that answers a small range with parts that never end: the client cuts the call once more has come than
    // the request can hold, and says so, instead of gathering until memory runs out.
    void anEndlessRangeIsCut()
    {
        class Endless final : public pb::Telemetry::Service
        {
            grpc::Status QueryRange(grpc::ServerContext *context, const pb::QueryRangeRequest *request,
                grpc::ServerWriter<pb::QueryRangePart> *writer) override
            {
                pb::QueryRangePart part;
                part.set_metric_id("gpu_temp");
                part.add_gpus(request->gpus(0));
                part.set_values(std::string(1 << 20, '\0'));
                while (!context->IsCancelled() && writer->Write(part)) {
                    ++sent;
                }
                return grpc::Status::CANCELLED;
            }

        public:
            std::atomic<int> sent { 0 };
        } service;
        int port = 0;
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(&service);
        const auto server = builder.BuildAndStart();
        QVERIFY(server && port > 0);

        HistoryClient client(QStringLiteral("127.0.0.1:%1").arg(port));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp") };
        request.gpus = { 0 };
        request.fromMs = 1'700'000'000'000;
        request.toMs = request.fromMs + 60'000;
        request.stepMs = 15'000; // 5 rows of one value: a few hundred bytes
        client.queryRange(request);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("more than")),
            qPrintable(failed.first().at(1).toString()));
        QVERIFY2(service.sent < 64, qPrintable(QString::number(service.sent))); // cut after about 16 MiB
        QTRY_COMPARE(client.pendingRequests(), 0);
        server->Shutdown(std::chrono::system_clock::now() + 2s);
    }

    // The same with parts of no rows at all, a dozen bytes each: they pass no byte limit for a long while, and each
    // costs a couple of hundred bytes once read. A metric's rows come in parts of a row at least: past the request's
    // metrics x (rows + 1) parts the call is cut.
    void anEndlessRangeOfEmptyPartsIsCut()
    {
        class Endless final : public pb::Telemetry::Service
        {
            grpc::Status QueryRange(grpc::ServerContext *context, const pb::QueryRangeRequest *request,
                grpc::ServerWriter<pb::QueryRangePart> *writer) override
            {
                pb::QueryRangePart part;
                part.set_metric_id("gpu_temp");
                part.add_gpus(request->gpus(0));
                while (!context->IsCancelled() && sent < 1000000 && writer->Write(part)) {
                    ++sent;
                }
                return grpc::Status::CANCELLED;
            }

        public:
            std::atomic<int> sent { 0 };
        } service;
        int port = 0;
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(&service);
        const auto server = builder.BuildAndStart();
        QVERIFY(server && port > 0);

        HistoryClient client(QStringLiteral("127.0.0.1:%1").arg(port));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp") };
        request.gpus = { 0 };
        request.fromMs = 1'700'000'000'000;
        request.toMs = request.fromMs + 60'000;
        request.stepMs = 15'000; // 5 rows (and 2 to spare): at most 7 parts
        client.queryRange(request);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("more than the 7 parts this range can take")),
            qPrintable(failed.first().at(1).toString()));
        QVERIFY2(service.sent < 100000, qPrintable(QString::number(service.sent)));
        QTRY_COMPARE(client.pendingRequests(), 0);
        server->Shutdown(std::chrono::system_clock::now() + 2s);
    }

    // Events faster than the receiver takes them: past maxPendingEvents waiting, what is pending is delivered and the
    // stream fails with the reason, instead of growing until memory runs out.
    void eventsFasterThanTheyAreTakenAreCut()
    {
        class Flood final : public pb::Telemetry::Service
        {
            grpc::Status StreamEvents(grpc::ServerContext *context, const pb::StreamEventsRequest * /*request*/,
                grpc::ServerWriter<pb::Event> *writer) override
            {
                pb::Event e;
                e.set_kind(pb::EVENT_KIND_XID);
                e.set_gpu(-1);
                e.set_node(-1);
                e.set_time_ms(1'700'000'000'000);
                while (!context->IsCancelled() && sent < 1000000) {
                    e.set_sequence(static_cast<uint64_t>(sent) + 1);
                    if (!writer->Write(e)) {
                        break;
                    }
                    ++sent;
                }
                done = true;
                return grpc::Status::CANCELLED;
            }

        public:
            std::atomic<int> sent { 0 };
            std::atomic<bool> done { false };
        } service;
        int port = 0;
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(&service);
        const auto server = builder.BuildAndStart();
        QVERIFY(server && port > 0);

        HistoryClient client(QStringLiteral("127.0.0.1:%1").arg(port));
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        QSignalSpy batches(&client, &HistoryClient::eventsReady);
        EventFilter everything;
        everything.everything = true;
        client.streamEvents(everything, 1);
        // This thread takes nothing until the backend's stream has ended: cut by the client, or all sent.
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (!service.done && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        QVERIFY(service.done);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("more than 200000 events")),
            qPrintable(failed.first().at(1).toString()));
        size_t delivered = 0;
        for (const auto &arguments : std::as_const(batches)) {
            delivered += arguments.at(0).value<EventBatchPtr>()->events.size();
        }
        QVERIFY(delivered >= 1 && delivered <= HistoryClient::maxPendingEvents);
        QVERIFY2(service.sent < 1000000, qPrintable(QString::number(service.sent)));
        QTRY_COMPARE(client.pendingRequests(), 0);
        server->Shutdown(std::chrono::system_clock::now() + 2s);
    }

    void cancelStopsTheCallAndItsDelivery()
    {
        auto server = startBackend(fleet(4096, 60min));
        QVERIFY(server);
        HistoryClient client(addressOf(*server));
        QSignalSpy ready(&client, &HistoryClient::rangeReady);
        QSignalSpy events(&client, &HistoryClient::eventsReady);
        QSignalSpy failed(&client, &HistoryClient::requestFailed);
        QSignalSpy finished(&client, &HistoryClient::requestFinished);

        // A live event stream never ends by itself: only cancelling its context ends the worker.
        const quint64 live = client.streamEvents({}, QDateTime::currentMSecsSinceEpoch());
        // A large history query, superseded at once.
        RangeRequest request;
        request.gpus.resize(4096);
        std::iota(request.gpus.begin(), request.gpus.end(), 0U);
        request.toMs = QDateTime::currentMSecsSinceEpoch();
        request.fromMs = request.toMs - 60 * 60 * 1000;
        request.stepMs = 60000;
        const quint64 old = client.queryRange(request);
        QCOMPARE(client.pendingRequests(), 2);
        client.cancel(old);
        request.gpus = { 1, 2, 3 };
        const quint64 current = client.queryRange(request);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready.first().at(0).value<RangeResultPtr>()->requestId, current);

        client.cancel(live);
        QTRY_COMPARE_WITH_TIMEOUT(client.pendingRequests(), 0, 10000);
        QCOMPARE(ready.count(), 1); // nothing for the cancelled query
        QCOMPARE(failed.count(), 0); // and a cancel is not a failure
        QCOMPARE(finished.count(), 0);
        Q_UNUSED(events);
    }

    void eventsOfOneGpuInAClosedRange()
    {
        auto options = fleet(1024, 60min);
        options.scenario = be::Scenario::Kind::BadGpu;
        auto server = startBackend(options);
        QVERIFY(server);
        const int64_t bad = be::Scenario(be::Scenario::Kind::BadGpu, server->source().shape(), options.seed).badGpu();
        QVERIFY(bad >= 0);
        const int64_t node = server->source().shape().nodeOfGpu[static_cast<size_t>(bad)];

        HistoryClient client(addressOf(*server));
        QSignalSpy batches(&client, &HistoryClient::eventsReady);
        QSignalSpy finished(&client, &HistoryClient::requestFinished);
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        const quint64 id = client.streamEvents({ bad, node }, now - 2 * 3600 * 1000, now);
        QVERIFY(finished.wait(20000));
        QCOMPARE(finished.first().at(0).toULongLong(), id);
        std::vector<FleetEvent> got;
        for (const auto &call : std::as_const(batches)) {
            const auto batch = call.at(0).value<EventBatchPtr>();
            QCOMPARE(batch->requestId, id);
            got.insert(got.end(), batch->events.begin(), batch->events.end());
        }

        // The backend's own record of the same events.
        uint64_t after = 0;
        std::vector<be::TimedEvent> expected;
        for (const auto &e : server->source().eventsAfter(now - 2 * 3600 * 1000, &after, 0ms)) {
            if (e.timeMs <= now && (e.event.gpu == bad || (e.event.gpu < 0 && e.event.node == node))) {
                expected.push_back(e);
            }
        }
        QVERIFY2(expected.size() >= 3, qPrintable(QString::number(expected.size()))); // the failing GPU's XIDs
        QCOMPARE(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(got[i].sequence, expected[i].sequence);
            QCOMPARE(got[i].timeMs, expected[i].timeMs);
            QCOMPARE(got[i].xid, expected[i].event.xid);
            QCOMPARE(got[i].text, QString::fromStdString(expected[i].event.text));
        }
        const bool anyXid = std::any_of(got.begin(), got.end(),
            [](const FleetEvent &e) { return e.kind == FleetEvent::Kind::Xid && !xidMeaningText(e.xid).isEmpty(); });
        QVERIFY(anyXid);
    }

    void xidMeanings()
    {
        QCOMPARE(xidMeaningText(79), QStringLiteral("GPU has fallen off the bus"));
        QCOMPARE(xidMeaningText(48), QStringLiteral("Double-bit ECC error"));
        QCOMPARE(xidMeaningText(94), QStringLiteral("Contained ECC error"));
        QVERIFY(xidMeaningText(1).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestHistoryClient)
#include "tst_historyclient.moc"
