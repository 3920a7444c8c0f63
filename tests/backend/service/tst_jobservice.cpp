// SPDX-License-Identifier: Apache-2.0
// The jobs' accounts through the gRPC service (docs/JOBS.md): GetJob, ListJobs' goodput and phase, GetSummary's
// goodput, from a real backend over a judged simulated fleet on loopback, spoken to with the generated stub; and the
// encoder's bounds on a report far past the contract's maxima.
#include "servedbackend.h"
#include "service/backendserver.h"
#include "service/jobencoder.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/jobgpus.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QElapsedTimer>
#include <QTest>

#include <chrono>
#include <set>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr size_t fourMiB = 4U << 20U;

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

be::SimulationOptions fleet()
{
    be::SimulationOptions o;
    o.gpuCount = 1024;
    o.seed = 7;
    o.interval = 100ms;
    return o;
}

pb::ListJobsResponse listJobs(pb::Telemetry::Stub &stub, grpc::Status *status)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    pb::ListJobsResponse response;
    *status = stub.ListJobs(&context, pb::ListJobsRequest(), &response);
    return response;
}

pb::JobReport getJob(pb::Telemetry::Stub &stub, uint64_t id, const std::string &name, grpc::Status *status)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    pb::GetJobRequest request;
    request.set_id(id);
    request.set_name(name);
    pb::JobReport response;
    *status = stub.GetJob(&context, request, &response);
    return response;
}

// Whether a running job of the listing has been judged: its account's goodput and phase are there.
bool accounted(const pb::Job &job)
{
    return job.end_time_ms() == 0 && job.has_goodput() && job.phase() != pb::JOB_PHASE_UNSPECIFIED;
}

// A text of about bytes bytes whose characters take 1, 2, 3 and 4 bytes, so that a cut can land inside any of them.
std::string longText(size_t bytes)
{
    const std::string piece = "a\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E"; // a é € 𝄞
    std::string text;
    while (text.size() < bytes) {
        text += piece;
    }
    return text;
}

// A report past every bound of the contract: spans, band points, stragglers and losses, 10 KiB texts.
be::JobReport oversizedReport(std::vector<uint32_t> gpus)
{
    be::JobReport r;
    r.job.id = 4711;
    r.job.name = "llm-pretrain-4711";
    r.job.owner = "alice";
    r.job.firstGpu = gpus.front();
    r.job.gpuCount = static_cast<uint32_t>(gpus.back() - gpus.front() + 1);
    r.job.gpus = std::move(gpus);
    r.job.startMs = 1'700'000'000'000;
    r.asOfMs = r.job.startMs + 5000 * 1000;
    r.watchedFromMs = r.job.startMs;
    r.gpuHours = 1000;
    r.productiveGpuHours = 900;
    r.goodput = 0.9;
    const std::string text = longText(10 << 10);
    for (int i = 0; i < 5000; ++i) {
        be::JobPhaseSpan span;
        span.phase = i % 2 == 0 ? be::JobPhase::Compute : be::JobPhase::Stall;
        span.fromMs = r.job.startMs + int64_t { i } * 1000;
        span.toMs = span.fromMs + 1000;
        span.incidentId = static_cast<uint64_t>(i);
        span.why = text;
        r.phases.push_back(span);
    }
    for (int i = 0; i < 2000; ++i) {
        r.band.push_back({ r.job.startMs + int64_t { i } * 2500, 10, 50, 90, 4096 });
    }
    for (uint32_t i = 0; i < 100; ++i) {
        be::Straggler s;
        s.gpu = r.job.gpus[i];
        s.score = 2.0F;
        s.reason = text;
        r.stragglers.push_back(s);
        be::GoodputLoss loss;
        loss.cause = be::LossCause::Straggler;
        loss.gpuHours = 1;
        loss.gpu = s.gpu;
        loss.jobId = r.job.id;
        loss.what = text;
        r.losses.push_back(loss);
    }
    r.phase = be::JobPhase::Compute;
    return r;
}

// Every text for people in an encoded report: at most the encoder's bound, and UTF-8.
bool textsWithinBounds(const pb::JobReport &report)
{
    const auto ok = [](const std::string &text) { return text.size() <= be::maxJobTextBytes && be::isUtf8(text); };
    for (const auto &span : report.phases()) {
        if (!ok(span.why())) {
            return false;
        }
    }
    for (const auto &s : report.stragglers()) {
        if (!ok(s.reason())) {
            return false;
        }
    }
    for (const auto &loss : report.losses()) {
        if (!ok(loss.what())) {
            return false;
        }
    }
    return true;
}
} // namespace

class TestJobService : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void wireTextIsUtf8AndCut()
    {
        QCOMPARE(be::wireText("r01-k02-n03 down"), std::string("r01-k02-n03 down"));
        // A byte that is not UTF-8 (a Latin-1 hostname), an overlong form and a surrogate each become U+FFFD.
        QCOMPARE(be::wireText("n\xE9ud \xC0\xAF \xED\xA0\x80"),
            std::string("n\xEF\xBF\xBDud \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
        QVERIFY(!be::isUtf8("n\xE9ud"));
        QVERIFY(be::isUtf8(longText(100)));
        for (size_t most = 3; most < 40; ++most) {
            const auto cut = be::wireText(longText(1000), most);
            QVERIFY2(cut.size() <= most && be::isUtf8(cut), qPrintable(QString::number(most)));
            QVERIFY(cut.size() + 4 > most); // as much kept as fits with the ellipsis
            QCOMPARE(cut.substr(cut.size() - 3), std::string("\xE2\x80\xA6"));
        }
    }

    void anOversizedReportStaysWithinTheContract()
    {
        // A 4,096-GPU job on scattered GPUs of a million-GPU fleet, as a list (no two adjacent: runs cost more).
        std::vector<uint32_t> gpus;
        for (uint32_t i = 0; i < 4096; ++i) {
            gpus.push_back(i * 256 + (i % 7) * 3);
        }
        const auto report = oversizedReport(gpus);
        QElapsedTimer timer;
        timer.start();
        pb::JobReport encoded;
        std::string error;
        QVERIFY2(be::encodeJobReport(report, &encoded, &error), error.c_str());
        qInfo("encoded in %lld ms: %zu bytes", static_cast<long long>(timer.elapsed()), encoded.ByteSizeLong());
        QVERIFY(encoded.ByteSizeLong() < fourMiB);
        QCOMPARE(size_t(encoded.phases_size()), be::JobReport::maxPhaseSpans);
        QCOMPARE(size_t(encoded.band_size()), be::JobReport::maxBandPoints);
        QCOMPARE(size_t(encoded.stragglers_size()), be::JobReport::maxStragglers);
        QCOMPARE(size_t(encoded.losses_size()), be::JobReport::maxLosses);
        QVERIFY(textsWithinBounds(encoded));
        // The newest spans kept, the oldest kept starting where the job's first did; the band from first to newest.
        QCOMPARE(encoded.phases(0).from_ms(), report.phases.front().fromMs);
        QCOMPARE(encoded.phases(encoded.phases_size() - 1).to_ms(), report.phases.back().toMs);
        QCOMPARE(encoded.phases(1).from_ms(), report.phases[report.phases.size() - 4095].fromMs);
        QCOMPARE(encoded.band(0).time_ms(), report.band.front().timeMs);
        QCOMPARE(encoded.band(encoded.band_size() - 1).time_ms(), report.band.back().timeMs);
        // The job as ListJobs gives it, with the report's brief.
        QCOMPARE(jobGpus(encoded.job()), gpus);
        QCOMPARE(encoded.job().gpus_size(), 4096);
        QCOMPARE(encoded.job().id(), uint64_t { 4711 });
        QCOMPARE(encoded.job().straggler_count(), 100U);
        QVERIFY(encoded.job().has_goodput());
        QCOMPARE(encoded.job().phase(), pb::JOB_PHASE_COMPUTE);
        QCOMPARE(encoded.goodput(), 0.9);
    }

    void theLargestJobsStillFit()
    {
        // The most a job's GPUs can take in a fleet of 2^20: runs of 3 with gaps of 1, where the list (3 bytes a GPU)
        // and the runs (8 bytes a run) cost alike, 2.2 MiB; with every list at its maximum the report still fits.
        std::vector<uint32_t> gpus;
        for (uint32_t g = 0; g < be::FleetShape::maxGpus; ++g) {
            if (g % 4 != 3) {
                gpus.push_back(g);
            }
        }
        const auto report = oversizedReport(gpus);
        pb::JobReport encoded;
        std::string error;
        QVERIFY2(be::encodeJobReport(report, &encoded, &error), error.c_str());
        qInfo("%zu GPUs: %zu bytes, the job %zu of them", gpus.size(), encoded.ByteSizeLong(),
            encoded.job().ByteSizeLong());
        QVERIFY(encoded.ByteSizeLong() < fourMiB);
        QCOMPARE(size_t(encoded.phases_size()), be::JobReport::maxPhaseSpans);
        QCOMPARE(jobGpus(encoded.job()), gpus);
    }

    void spansGiveWayToTheLimit()
    {
        // Under a tighter limit the oldest spans are merged into the oldest kept until the answer fits.
        std::vector<uint32_t> gpus;
        for (uint32_t i = 0; i < 4096; ++i) {
            gpus.push_back(i * 2);
        }
        const auto report = oversizedReport(gpus);
        constexpr size_t limit = 512U << 10U;
        pb::JobReport encoded;
        std::string error;
        QVERIFY2(be::encodeJobReport(report, &encoded, &error, limit), error.c_str());
        qInfo("%zu bytes, %d spans of %zu", encoded.ByteSizeLong(), encoded.phases_size(), report.phases.size());
        QVERIFY(encoded.ByteSizeLong() <= limit);
        QVERIFY(encoded.ByteSizeLong() > limit - 400); // no more spans cut than the limit asks
        QVERIFY(encoded.phases_size() > 100);
        QVERIFY(size_t(encoded.phases_size()) < be::JobReport::maxPhaseSpans);
        QCOMPARE(encoded.phases(0).from_ms(), report.phases.front().fromMs);
        QCOMPARE(encoded.phases(1).from_ms(), report.phases[report.phases.size() - encoded.phases_size() + 1].fromMs);
        QCOMPARE(encoded.phases(encoded.phases_size() - 1).to_ms(), report.phases.back().toMs);
        QCOMPARE(size_t(encoded.band_size()), be::JobReport::maxBandPoints);

        // A limit the rest alone passes is refused, saying so, rather than sent cut.
        pb::JobReport refused;
        QVERIFY(!be::encodeJobReport(report, &refused, &error, 64U << 10U));
        QVERIFY(error.find("job 4711") != std::string::npos);
    }

    void aSummarysLossesKeepTheirRemainder()
    {
        be::GoodputSummary goodput;
        goodput.jobs = 12;
        goodput.jobGpuHours = 500;
        goodput.productiveGpuHours = 400;
        for (int i = 0; i < 150; ++i) {
            be::GoodputLoss loss;
            loss.cause = be::LossCause::Incident;
            loss.incidentId = static_cast<uint64_t>(i + 1);
            loss.domain = i % 2 == 0 ? -1 : i;
            loss.gpuHours = 150 - i;
            loss.jobs = static_cast<uint32_t>(1 + i % 5);
            loss.what = longText(1000);
            goodput.losses.push_back(loss);
        }
        pb::Summary summary;
        be::encodeGoodput(goodput, &summary);
        QCOMPARE(summary.jobs_accounted(), 12U);
        QVERIFY(summary.has_goodput());
        QCOMPARE(summary.goodput(), 0.8);
        QCOMPARE(size_t(summary.losses_size()), be::GoodputSummary::maxLosses);
        QVERIFY(!summary.losses(0).has_domain());
        QCOMPARE(summary.losses(1).domain(), 1U);
        const auto &rest = summary.losses(summary.losses_size() - 1);
        QCOMPARE(rest.cause(), pb::LOSS_CAUSE_UNSPECIFIED);
        QCOMPARE(rest.what(), std::string("the rest"));
        double restHours = 0; // the losses from the 100th on: 51 down to 1
        for (int i = 99; i < 150; ++i) {
            restHours += 150 - i;
        }
        QCOMPARE(rest.gpu_hours(), restHours);
        QVERIFY(summary.losses(5).what().size() <= be::maxJobTextBytes);

        pb::Summary none;
        be::encodeGoodput(be::GoodputSummary(), &none);
        QCOMPARE(none.jobs_accounted(), 0U);
        QVERIFY(!none.has_goodput());
    }

    void withoutAccountsGetJobSaysSo()
    {
        // A source judged by nothing keeps no accounts.
        const auto options = fleet();
        be::BackendServer server(
            std::make_unique<be::FrameSource>(std::make_unique<be::SimulatedFleet>(options), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        const auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        grpc::Status status;
        getJob(*stub, 1, {}, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
        QVERIFY(status.error_message().find("no job accounts") != std::string::npos);
        const auto jobs = listJobs(*stub, &status);
        QVERIFY(status.ok());
        QVERIFY(jobs.jobs_size() > 0);
        QVERIFY(!jobs.jobs(0).has_goodput());
        server.stop();
    }

    void badRequestsAreRefused()
    {
        auto backend = fleetscope::testing::serveSimulation(fleet());
        grpc::Status status;
        getJob(*backend.stub, 0, {}, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        getJob(*backend.stub, 0, std::string(1024, 'x'), &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY(status.error_message().find("1024 bytes") != std::string::npos);
        // A name that is not UTF-8 never reaches GetJob: protobuf refuses the request as it parses it, and gRPC
        // answers INTERNAL before any handler runs (the handler's own check stands behind it).
        getJob(*backend.stub, 0, "n\xE9ud-7", &status);
        QVERIFY(!status.ok());
        qInfo("a name that is not UTF-8: status %d", status.error_code());
        getJob(*backend.stub, 0, "no-such-job", &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::NOT_FOUND);
        QVERIFY(status.error_message().find("'no-such-job'") != std::string::npos);
        getJob(*backend.stub, 4'000'000'711, {}, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::NOT_FOUND);
        QCOMPARE(status.error_message(), std::string("no job 4000000711 is running or ended within the hour"));
        backend.server->stop();
    }

    void theGateAdmitsAndLimitsIt()
    {
        // GetJob passes the access gate as every read: a viewer (everyone, on loopback without credentials) is
        // answered, and a client past the per-client call rate is refused by name.
        be::BackendServer::Security security;
        security.access.maxCallsPerSecondPerClient = 2; // a bucket of 4
        be::BackendServer server(be::simulatedSource(fleet()), security);
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        const auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        grpc::Status status;
        getJob(*stub, 4'000'000'711, {}, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::NOT_FOUND);
        int refused = 0;
        for (int i = 0; i < 40 && refused == 0; ++i) {
            getJob(*stub, 4'000'000'711, {}, &status);
            if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
                ++refused;
                QVERIFY2(
                    status.error_message().find("GetJob refused") != std::string::npos, status.error_message().c_str());
            }
        }
        QCOMPARE(refused, 1);
        server.stop();
    }

    void jobsAreAccountedThroughTheService()
    {
        auto backend = fleetscope::testing::serveSimulation(fleet());
        auto &stub = *backend.stub;
        const int64_t started = nowMs();
        QElapsedTimer timer;
        timer.start();

        // ListJobs: the running jobs gain their account once the backend has judged frames of them. Those running at
        // the start are watched; one started since may not have been judged yet.
        grpc::Status status;
        pb::ListJobsResponse jobs = listJobs(stub, &status);
        QVERIFY2(status.ok(), status.error_message().c_str());
        std::set<uint64_t> runningAtStart;
        for (const auto &job : jobs.jobs()) {
            if (job.end_time_ms() == 0) {
                runningAtStart.insert(job.id());
            }
        }
        QVERIFY(!runningAtStart.empty());
        const auto allAccounted = [&] {
            jobs = listJobs(stub, &status);
            if (!status.ok()) {
                return false;
            }
            int running = 0;
            for (const auto &job : jobs.jobs()) {
                if (job.end_time_ms() == 0 && runningAtStart.count(job.id()) != 0) {
                    ++running;
                    if (!accounted(job)) {
                        return false;
                    }
                }
            }
            return running > 0;
        };
        QTRY_VERIFY_WITH_TIMEOUT(allAccounted(), 60000);
        qInfo("every running job accounted after %lld ms", static_cast<long long>(timer.elapsed()));
        const pb::Job *watched = nullptr;
        for (const auto &job : jobs.jobs()) {
            QVERIFY(!job.has_goodput() || (job.goodput() >= 0 && job.goodput() <= 1));
            if (!watched && accounted(job) && jobGpus(job).size() >= 2) {
                watched = &job;
            }
        }
        QVERIFY(watched);
        const uint64_t id = watched->id();
        const std::string name = watched->name();

        // GetJob by id: its band and its phases once a few frames of it were judged.
        pb::JobReport byId;
        QTRY_VERIFY_WITH_TIMEOUT(
            (byId = getJob(stub, id, {}, &status), status.ok() && byId.band_size() >= 3 && byId.phases_size() >= 1),
            60000);
        QCOMPARE(byId.job().id(), id);
        QCOMPARE(byId.job().name(), name);
        QCOMPARE(jobGpus(byId.job()), jobGpus(*watched));
        QVERIFY(byId.goodput() >= 0 && byId.goodput() <= 1);
        QVERIFY(byId.productive_gpu_hours() <= byId.gpu_hours());
        QVERIFY(byId.phase() != pb::JOB_PHASE_UNSPECIFIED);
        QVERIFY(byId.as_of_ms() >= byId.watched_from_ms());
        for (int i = 1; i < byId.band_size(); ++i) {
            QVERIFY(byId.band(i).time_ms() >= byId.band(i - 1).time_ms());
        }
        for (const auto &point : byId.band()) {
            QVERIFY(point.p10() <= point.median() && point.median() <= point.p90());
        }
        QCOMPARE(byId.phases(byId.phases_size() - 1).phase(), byId.phase());
        QVERIFY(byId.job().has_goodput());

        // By name: the same job.
        const auto byName = getJob(stub, 0, name, &status);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(byName.job().id(), id);
        QVERIFY(byName.band_size() >= byId.band_size());
        QVERIFY(byName.phases_size() >= 1);
        QVERIFY(byName.as_of_ms() >= byId.as_of_ms());

        // GetSummary over the last minutes: the jobs' goodput.
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::GetSummaryRequest request;
        request.set_from_ms(started - 5 * 60 * 1000);
        pb::Summary summary;
        status = stub.GetSummary(&context, request, &summary);
        QVERIFY2(status.ok(), status.error_message().c_str());
        qInfo("summary: %u jobs, %g of %g GPU-hours productive, %d losses", summary.jobs_accounted(),
            summary.productive_gpu_hours(), summary.job_gpu_hours(), summary.losses_size());
        QVERIFY(summary.jobs_accounted() > 0);
        QVERIFY(summary.has_goodput());
        QVERIFY(summary.goodput() >= 0 && summary.goodput() <= 1);
        QVERIFY(summary.job_gpu_hours() > 0);
        QVERIFY(summary.productive_gpu_hours() <= summary.job_gpu_hours());
        backend.server->stop();
    }
};

QTEST_GUILESS_MAIN(TestJobService)
#include "tst_jobservice.moc"
