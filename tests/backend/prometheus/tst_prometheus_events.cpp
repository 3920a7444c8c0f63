// SPDX-License-Identifier: Apache-2.0
// Jobs and events from a Prometheus-compatible server: jobs from the series' labels, events from changes of the XID,
// double-bit and throttle-reason series (and those before the start, from the range API), both over gRPC.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/backendserver.h"
#include "tests/backend/prometheus/prometheussourcetesting.h"
#include "tests/backend/testing/jobgpus.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QTest>

using namespace fleetscope::backend;
using namespace fleetscope::backend::testing;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

// A vector answer of every GPU of the fleet for a metric, with these labels on some GPUs (dense index -> labels) and
// extra series (a GPU serving two jobs).
QByteArray labelledAnswer(MetricId id, const std::map<int, std::string> &labels, const std::vector<Series> &extra = {})
{
    auto series = metricSeries(id);
    for (auto &s : series) {
        if (const auto it = labels.find(denseIndex(s.host, std::stoul(s.gpu))); it != labels.end()) {
            s.extraLabels = it->second;
        }
    }
    series.insert(series.end(), extra.begin(), extra.end());
    return vectorAnswer(series);
}

// The throttle reasons of every GPU: 0 but those given.
void answerReasons(FakePrometheus &fake, const std::map<int, std::string> &reasons)
{
    auto series = metricSeries(MetricId::ThrottleReasons);
    for (auto &s : series) {
        if (const auto it = reasons.find(denseIndex(s.host, std::stoul(s.gpu))); it != reasons.end()) {
            s.value = it->second;
        }
    }
    fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::ThrottleReasons), { 200, vectorAnswer(series), 0 });
}

const FleetEvent *findEvent(const std::vector<FleetEvent> &events, FleetEvent::Kind kind, int64_t gpu)
{
    for (const auto &e : events) {
        if (e.kind == kind && e.gpu == gpu) {
            return &e;
        }
    }
    return nullptr;
}

// The range queries pastEvents makes, with the default 15 s step: per GPU, whatever its other labels.
// By both spellings of the node label: a fleet may hold both.
const std::string byNode = "max by (Hostname, hostname, gpu) ";
const std::string pastXidQuery
    = "(" + byNode + "(DCGM_FI_DEV_XID_ERRORS) != " + byNode + "(DCGM_FI_DEV_XID_ERRORS offset 15000ms)) > 0";
const std::string pastDbeQuery = "(" + byNode + "(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL) - " + byNode
    + "(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL offset 15000ms)) > 0";
const std::string pastReasonsQuery
    = byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS) != " + byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS offset 15000ms)";
const std::string pastReasonsBeforeQuery
    = byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS offset 15000ms) != " + byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS)";

} // namespace

class TestPrometheusEvents : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Jobs come from the labels dcgm-exporter puts on each GPU's series: Kubernetes pods (numbered pods of one job
    // are one job) and HPC jobs; what appears starts, what disappears ends.
    void jobsFromLabels()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::map<int, std::string> labels;
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            labels[denseIndex("node-1", g)] = R"(,"container":"train","namespace":"ml","pod":"train-llm-0")";
            labels[denseIndex("node-2", g)] = R"(,"container":"train","namespace":"ml","pod":"train-llm-1")";
        }
        for (uint32_t g = 0; g < 5; ++g) {
            labels[denseIndex("node-3", g)] = R"(,"hpc_job":"4242","hpc_user":"alice")";
        }
        // Scraped without honor_labels: the exporter pod's own namespace and pod, and the GPU's as exported_*.
        labels[denseIndex("node-10", 0)] = R"(,"exported_namespace":"team-b","exported_pod":"web-5d8f9-xk2p",)"
                                           R"("namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-abcde")";
        // node-3 GPU 4 serves a second HPC job: a second series, as dcgm-exporter's HPC mapping writes.
        const std::vector<Series> shared = { { "node-3", "4", "1", R"(,"hpc_job":"4243","hpc_user":"bob")" } };
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuUtil),
            { 200, labelledAnswer(MetricId::GpuUtil, labels, shared), 0 });
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty()); // what runs at the first poll started before it

        auto jobs = source->jobs();
        QCOMPARE(jobs.size(), size_t { 4 });
        // By start time (all the first poll's), then name.
        QCOMPARE(jobs[0].name, std::string("4242"));
        QCOMPARE(jobs[0].id, uint64_t { 4242 });
        QCOMPARE(jobs[0].owner, std::string("alice"));
        QCOMPARE(jobs[0].gpuList(), (std::vector<uint32_t> { 16, 17, 18, 19, 20 }));
        QCOMPARE(jobs[1].name, std::string("4243"));
        QCOMPARE(jobs[1].gpuList(), (std::vector<uint32_t> { 20 }));
        QCOMPARE(jobs[2].name, std::string("train-llm"));
        QCOMPARE(jobs[2].owner, std::string("ml"));
        QCOMPARE(jobs[2].gpuList().size(), size_t { 16 });
        QCOMPARE(jobs[2].gpuList().front(), 0U);
        QCOMPARE(jobs[2].gpuList().back(), 15U);
        QCOMPARE(jobs[2].startMs, int64_t { 1700000000500 });
        QCOMPARE(jobs[3].name, std::string("web-5d8f9-xk2p")); // no numeric ordinal: the pod is the job
        QCOMPARE(jobs[3].owner, std::string("team-b"));
        QCOMPARE(jobs[3].gpuList(), (std::vector<uint32_t> { 24 }));
        for (const auto &j : jobs) {
            QCOMPARE(j.endMs, int64_t { 0 });
            QVERIFY(j.id != 0);
        }

        // Job 4243 ends, eval-suite starts on node-10 GPU 1.
        labels[denseIndex("node-10", 1)] = R"(,"namespace":"ml","pod":"eval-suite-0")";
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuUtil),
            { 200, labelledAnswer(MetricId::GpuUtil, labels), 0 });
        answerTimestamp(fake, 1700000001.5);
        QVERIFY(source->poll());
        const auto events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 2 });
        QCOMPARE(events[0].kind, FleetEvent::Kind::JobEnd);
        QCOMPARE(events[0].jobId, uint64_t { 4243 });
        QCOMPARE(events[1].kind, FleetEvent::Kind::JobStart);
        QVERIFY2(contains(events[1].text, "eval-suite"), events[1].text.c_str());
        jobs = source->jobs();
        QCOMPARE(jobs.size(), size_t { 5 });
        QCOMPARE(jobs[3].name, std::string("eval-suite")); // running ones first
        QCOMPARE(jobs[3].startMs, int64_t { 1700000001500 });
        QCOMPARE(jobs[4].name, std::string("4243"));
        QCOMPARE(jobs[4].endMs, int64_t { 1700000001500 });
        QCOMPARE(events[1].jobId, jobs[3].id);
    }

    // Events from changes between polls: a new XID value is one event (and the same value again is none), a
    // double-bit counter's increase is one, its reset none; throttle-reason bits starting and stopping.
    void eventsFromChanges()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty());

        answerEvents(fake, { { 5, "79" } }, { { 6, "3" } });
        answerReasons(fake, { { 7, "32" }, { 8, "4" } });
        answerTimestamp(fake, 1700000001.5);
        QVERIFY(source->poll());
        auto events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 4 });
        const auto *xid = findEvent(events, FleetEvent::Kind::Xid, 5);
        QVERIFY(xid);
        QCOMPARE(xid->xid, 79U);
        QCOMPARE(xid->severity, FleetEvent::Severity::Critical);
        QCOMPARE(xid->node, int64_t { 0 });
        QCOMPARE(xid->text, std::string("XID 79 on node-1 GPU 5: GPU has fallen off the bus"));
        const auto *dbe = findEvent(events, FleetEvent::Kind::EccDoubleBit, 6);
        QVERIFY(dbe);
        QCOMPARE(dbe->text, std::string("3 double-bit ECC errors on node-1 GPU 6"));
        QVERIFY(findEvent(events, FleetEvent::Kind::ThermalThrottleStart, 7));
        QVERIFY(findEvent(events, FleetEvent::Kind::PowerThrottleStart, 8));

        // Unchanged XID, a counter reset, throttling over on GPU 7: one event.
        answerEvents(fake, { { 5, "79" } }, { { 6, "0" } });
        answerReasons(fake, { { 8, "4" } });
        answerTimestamp(fake, 1700000002.5);
        QVERIFY(source->poll());
        events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 1 });
        QVERIFY(findEvent(events, FleetEvent::Kind::ThermalThrottleEnd, 7));

        // A new XID and one double-bit error after the reset; a GPU with no value keeps its last one meanwhile.
        answerEvents(fake, { { 5, "13" } }, { { 6, "1" } });
        auto series = metricSeries(MetricId::ThrottleReasons, "node-2", 0); // GPU 8
        fake.set(
            *PrometheusSource::queryFor(hostnameProfile, MetricId::ThrottleReasons), { 200, vectorAnswer(series), 0 });
        answerTimestamp(fake, 1700000003.5);
        QVERIFY(source->poll());
        events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 2 });
        QCOMPARE(findEvent(events, FleetEvent::Kind::Xid, 5)->xid, 13U);
        QCOMPARE(findEvent(events, FleetEvent::Kind::EccDoubleBit, 6)->text,
            std::string("double-bit ECC error on node-1 GPU 6"));
        answerReasons(fake, { { 8, "4" } }); // back with the bit it had: no new start
        answerTimestamp(fake, 1700000004.5);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty());
    }

    // Through FrameSource and gRPC: the hour before the start from range queries, then live events at their
    // frames' sample times, and ListJobs.
    void eventsAndJobsOverGrpc()
    {
        FakePrometheus fake;
        // Samples of now: StreamEvents replays from an hour ago.
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        answerFleet(fake, static_cast<double>(now - 500) / 1000.0);
        const int64_t t1 = now - 1800000;
        const int64_t t2 = now - 1200000;
        const int64_t t3 = now - 600000;
        fake.setRange(pastXidQuery, { 200, matrixAnswer({ { "node-2", "3", { { t2, "94" } }, {} } }), 0 });
        fake.setRange(pastDbeQuery, { 200, matrixAnswer({ { "node-3", "0", { { t1, "1" } }, {} } }), 0 });
        fake.setRange(pastReasonsQuery, { 200, matrixAnswer({ { "node-1", "2", { { t3, "4" } }, {} } }), 0 });
        fake.setRange(pastReasonsBeforeQuery, { 200, matrixAnswer({ { "node-1", "2", { { t3, "0" } }, {} } }), 0 });
        std::map<int, std::string> labels;
        labels[2] = R"(,"namespace":"ml","pod":"train-llm-0")";
        labels[9] = R"(,"namespace":"ml","pod":"train-llm-1")";
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp),
            { 200, labelledAnswer(MetricId::GpuTemp, labels), 0 });
        auto poller = startSource(fake, nullptr, 500ms);
        QVERIFY(poller);
        FrameSource::Options options;
        options.interval = 50ms;
        BackendServer server(judgedSource(std::move(poller), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        QTRY_COMPARE(server.source().latest()->sequence, uint64_t { 1 });
        // The hour before the start, on a 15 s grid that ends at the start.
        const auto asked = fake.lastRange(pastXidQuery);
        QCOMPARE(asked.value(2), QStringLiteral("15.000"));
        const int64_t end = std::llround(asked.value(1).toDouble() * 1000.0);
        const int64_t start = std::llround(asked.value(0).toDouble() * 1000.0);
        QVERIFY(end >= now && end - now < 60000);
        QVERIFY(end - start <= 3600000 && end - start > 3600000 - 15000 && (end - start) % 15000 == 0);

        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::ListJobsResponse response;
            QVERIFY(stub->ListJobs(&context, pb::ListJobsRequest(), &response).ok());
            QCOMPARE(response.jobs_size(), 1);
            QCOMPARE(response.jobs(0).name(), std::string("train-llm"));
            QCOMPARE(response.jobs(0).owner(), std::string("ml"));
            QCOMPARE(jobGpus(response.jobs(0)), (std::vector<uint32_t> { 2, 9 }));
        }

        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::StreamEventsRequest request;
        request.set_since_ms(now - 3600000);
        auto reader = stub->StreamEvents(&context, request);
        pb::Event e;
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_ECC_DOUBLE_BIT);
        QCOMPARE(e.time_ms(), t1);
        QCOMPARE(e.gpu(), int64_t { denseIndex("node-3", 0) });
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_XID);
        QCOMPARE(e.xid(), 94U);
        QCOMPARE(e.time_ms(), t2);
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_POWER_THROTTLE_START);
        QCOMPARE(e.gpu(), int64_t { denseIndex("node-1", 2) });
        QCOMPARE(e.time_ms(), t3);
        const uint64_t pastSequence = e.sequence();

        // Live: an XID on GPU 9, in the next frame; it names the job GPU 9 serves.
        answerEvents(fake, { { 9, "31" } }, {});
        answerTimestamp(fake, static_cast<double>(now + 500) / 1000.0);
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_XID);
        QCOMPARE(e.xid(), 31U);
        QCOMPARE(e.gpu(), int64_t { 9 });
        QCOMPARE(e.time_ms(), now + 500);
        QCOMPARE(e.sequence(), pastSequence + 1);
        QVERIFY(e.job_id() != 0);
        QVERIFY2(contains(e.text(), "XID 31 on node-2 GPU 1"), e.text().c_str());
        context.TryCancel();
        while (reader->Read(&e)) { }
        reader->Finish();
        server.stop();
    }
};

QTEST_GUILESS_MAIN(TestPrometheusEvents)
#include "tst_prometheus_events.moc"
