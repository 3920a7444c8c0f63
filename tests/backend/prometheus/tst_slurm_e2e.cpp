// SPDX-License-Identifier: Apache-2.0
// Slurm jobs through the real chain: the simulator's dcgm-exporter pages and its Slurm exporter page (soperator's
// slurm_node_job and slurm_job_info), scraped by a real Prometheus (Debian's `prometheus`) and read back by the
// backend's Prometheus source, or scraped by vmagent and pushed to the backend's remote-write receiver, joined onto
// the nodes, and served by ListJobs over gRPC: the simulator's running jobs,
// with their ids, names, users, start times and every GPU of their nodes, the flapping node's too (its dcgm-exporter
// is down, Slurm still lists it). The dcgm page also carries pod labels for the same jobs; on a node Slurm claims the
// Slurm job wins, so none of them shows as a job of its own. The simulation is frozen on one frame.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "prometheus/prometheussource.h"
#include "remotewrite/remotewritesource.h"
#include "service/backendserver.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/jobgpus.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <map>
#include <mutex>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

// The simulator's floor plan as a topology file (one hall, its rows, racks and hosts in the simulator's order), so
// that the backend's GPU i is the simulator's GPU i, and the flapping node keeps its place though its exporter is down.
QByteArray topologyFileOf(const be::FleetShape &shape)
{
    auto name = [](const std::string &text) { return QString::fromStdString(text); };
    QJsonArray rows;
    for (const auto &row : shape.rows) {
        QJsonArray racks;
        for (uint32_t k = row.firstRack; k < row.firstRack + row.rackCount; ++k) {
            const auto &rack = shape.racks[k];
            QJsonArray hosts;
            for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
                hosts.append(QJsonObject { { QStringLiteral("hostname"), name(shape.nodes[n].hostname) },
                    { QStringLiteral("gpus"), static_cast<int>(shape.nodes[n].gpuCount) } });
            }
            racks.append(
                QJsonObject { { QStringLiteral("name"), name(rack.name) }, { QStringLiteral("hosts"), hosts } });
        }
        rows.append(QJsonObject { { QStringLiteral("name"), name(row.name) }, { QStringLiteral("racks"), racks } });
    }
    const QJsonObject hall { { QStringLiteral("name"), QStringLiteral("h1") }, { QStringLiteral("rows"), rows } };
    return QJsonDocument(QJsonObject { { QStringLiteral("site"), QStringLiteral("slurm-e2e") },
                             { QStringLiteral("halls"), QJsonArray { hall } } })
        .toJson();
}

// A job as compared: name, owner, start (to the second: Slurm's start_time is in seconds), GPUs.
struct Compared
{
    std::string name;
    std::string owner;
    int64_t startSeconds = 0;
    std::vector<uint32_t> gpus;
    bool operator==(const Compared &o) const
    {
        return name == o.name && owner == o.owner && startSeconds == o.startSeconds && gpus == o.gpus;
    }
};

QString describe(const std::map<uint64_t, Compared> &jobs)
{
    QString out;
    for (const auto &[id, job] : jobs) {
        out += QStringLiteral("\n  %1 %2 (%3) from %4 s on %5 GPUs from %6")
                   .arg(id)
                   .arg(QString::fromStdString(job.name), QString::fromStdString(job.owner))
                   .arg(job.startSeconds)
                   .arg(job.gpus.size())
                   .arg(job.gpus.empty() ? -1 : static_cast<int>(job.gpus.front()));
    }
    return out;
}

} // namespace

class TestSlurmE2e : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const QString unserved = m_fleet.serve(); // a node down, every scrape the same page
        QVERIFY2(unserved.isEmpty(), qPrintable(unserved));
        QVERIFY(m_dir.isValid());
        bool flappingNodeInAJob = false;
        for (const auto &job : m_fleet.simulator->jobs()) {
            if (job.endMs != 0) {
                continue;
            }
            const auto gpus = job.gpuList();
            m_expected[job.id] = { job.name, job.owner, job.startMs / 1000, gpus };
            m_slurmNodes += gpus.size() / be::FleetShape::gpusPerNode;
            for (const uint32_t g : gpus) {
                flappingNodeInAJob = flappingNodeInAJob || !online(*m_fleet.frame, g);
            }
        }
        QVERIFY2(m_expected.size() >= 2, "the frozen fleet runs fewer than two jobs: too little to compare");
        qInfo("%zu running jobs on %zu nodes; the flapping node %s", m_expected.size(), m_slurmNodes,
            flappingNodeInAJob ? "runs one" : "runs none");

        // The scrape jobs a site has: dcgm-exporter's page, and the Slurm exporter as a job of its own over the one
        // target the exporter lists. Prometheus and vmagent read the same file.
        const QString slurmTargets = m_dir.filePath(QStringLiteral("slurm-targets.json"));
        std::string error;
        QVERIFY2(m_fleet.exporter->writeSlurmTargetsFile(slurmTargets.toStdString(), &error), error.c_str());
        m_config = m_dir.filePath(QStringLiteral("scrape.yml"));
        QVERIFY(writeFile(m_config,
            scrapeConfig(m_fleet.exporter->port()) + "  - job_name: slurm\n    file_sd_configs:\n      - files: ['"
                + slurmTargets.toUtf8() + "']\n"));
        m_topology = m_dir.filePath(QStringLiteral("topology.json"));
        QVERIFY(writeFile(m_topology, topologyFileOf(m_fleet.simulator->shape())));
    }

    // ListJobs of a backend reading Prometheus equals the simulator's running jobs, as its Slurm page lists them.
    void jobsThroughPrometheus()
    {
        const QString binary = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (binary.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus'; "
                                    "scripts/common.sh installs it for CI): Slurm jobs through Prometheus are not "
                                    "tested here");
        }
        const int port = freePort();
        QVERIFY(port > 0);
        ProcessGuard prometheus;
        QVERIFY2(startPrometheus(&prometheus, binary, m_config, m_dir.filePath(QStringLiteral("data")), port),
            qPrintable(prometheus.process.errorString()));
        const QString late = waitForServer(prometheus, QStringLiteral("Prometheus"), 60000, [&](QString *detail) {
            const auto temps = instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
            const auto nodeJobs = instantQuery(port, QStringLiteral("slurm_node_job"));
            const auto infos = instantQuery(port, QStringLiteral("slurm_job_info"));
            const auto scrapes = instantQuery(port, QStringLiteral("min(count_over_time(slurm_node_job[5m]))"));
            const double scraped = scrapes.isEmpty() ? 0.0 : sampleValue(scrapes.at(0));
            *detail = QStringLiteral("%1 of %2 GPUs, %3 of %4 node-job series (%7 scrapes, 4 wanted), %5 of %6 jobs' "
                                     "info")
                          .arg(temps.size())
                          .arg(m_fleet.online)
                          .arg(nodeJobs.size())
                          .arg(m_slurmNodes)
                          .arg(infos.size())
                          .arg(m_expected.size())
                          .arg(scraped);
            return scraped >= 4 && static_cast<uint32_t>(temps.size()) == m_fleet.online
                && static_cast<size_t>(nodeJobs.size()) == m_slurmNodes
                && static_cast<size_t>(infos.size()) == m_expected.size();
        });
        QVERIFY2(late.isEmpty(), qPrintable(late));

        auto log = std::make_shared<Log>();
        auto source = std::make_unique<be::PrometheusSource>(log->writer());
        be::PrometheusSource::Options options;
        options.url = "http://127.0.0.1:" + std::to_string(port);
        options.topologyFile = m_topology.toStdString();
        QElapsedTimer started;
        started.start();
        std::string error;
        QVERIFY2(source->start(options, &error), error.c_str());
        compareJobs(std::move(source), started, *log);
        std::lock_guard lock(log->mutex);
        QVERIFY2(
            log->text.find("learns from") != std::string::npos && log->text.find("learns from 0 ") == std::string::npos,
            log->text.c_str());
    }

    // The same through the push path: vmagent scrapes both pages and remote-writes them to the backend's receiver,
    // which joins the pushed Slurm series at each window's close.
    void jobsThroughVmagent()
    {
        const QString vmagent = QStandardPaths::findExecutable(QStringLiteral("vmagent"));
        if (vmagent.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the vmagent binary is not installed (Debian package 'victoria-metrics'; "
                                    "scripts/common.sh installs it for CI): Slurm jobs through remote write are not "
                                    "tested here");
        }
        const int port = freePort();
        ProcessGuard agent;
        agent.process.setProcessChannelMode(QProcess::MergedChannels);
        agent.process.start(vmagent,
            { QStringLiteral("-promscrape.config=") + m_config,
                QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(freePort()),
                QStringLiteral("-remoteWrite.tmpDataPath=") + m_dir.filePath(QStringLiteral("vmagent")),
                QStringLiteral("-remoteWrite.flushInterval=200ms"), QStringLiteral("-loggerLevel=WARN"),
                QStringLiteral("-remoteWrite.url=http://127.0.0.1:%1/api/v1/write").arg(port) });
        QVERIFY(agent.process.waitForStarted(10000));

        auto log = std::make_shared<Log>();
        auto source = std::make_unique<be::RemoteWriteSource>(log->writer());
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.topologyFile = m_topology.toStdString();
        options.delayMs = 1000;
        options.startTimeout = 60s;
        QElapsedTimer started;
        started.start();
        std::string error;
        QVERIFY2(source->start(options, &error), error.c_str());
        compareJobs(std::move(source), started, *log);
    }

private:
    // The source's log lines, for a failure's message.
    struct Log
    {
        std::mutex mutex;
        std::string text;
        std::function<void(const std::string &)> writer()
        {
            return [this](const std::string &line) {
                std::lock_guard lock(mutex);
                text += line + '\n';
            };
        }
    };

    // Serves the source over gRPC and asks ListJobs until it equals the simulator's running jobs or a minute has
    // passed (a loaded sanitizer run): the jobs are known from the first frame (Prometheus) or the first window
    // closed (remote write) on.
    void compareJobs(std::unique_ptr<be::FramePoller> source, const QElapsedTimer &started, Log &log)
    {
        be::SimulationOptions backendOptions;
        backendOptions.interval = 200ms;
        // Past frames a second apart: the Prometheus source's warm-up reads the store's few seconds back, with their
        // jobs, before the first poll (the pod labels of GPUs Slurm claims must not become jobs there either).
        backendOptions.coarseEvery = 1000ms;
        be::BackendServer backend(be::judgedSource(std::move(source), backendOptions));
        std::string error;
        QVERIFY2(backend.start("127.0.0.1:0", &error), error.c_str());
        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(backend.listeningAddress(), grpc::InsecureChannelCredentials()));
        std::map<uint64_t, Compared> got;
        QDeadlineTimer deadline(60000);
        do {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            pb::ListJobsResponse response;
            const auto status = stub->ListJobs(&context, pb::ListJobsRequest(), &response);
            QVERIFY2(status.ok(), status.error_message().c_str());
            got.clear();
            for (const auto &job : response.jobs()) {
                QCOMPARE(job.end_time_ms(), int64_t { 0 });
                got[job.id()] = { job.name(), job.owner(), job.start_time_ms() / 1000, jobGpus(job) };
            }
            if (got == m_expected) {
                break;
            }
            // The jobs change only with a poll: ask again once the next frame is published.
            const auto latest = backend.source().latest();
            backend.source().waitForFrameAfter(latest ? latest->sequence : 0, 5000ms);
        } while (!deadline.hasExpired());
        qInfo("ListJobs compared %lld ms after the source's start", static_cast<long long>(started.elapsed()));
        std::lock_guard lock(log.mutex);
        QVERIFY2(got == m_expected,
            qPrintable(QStringLiteral("ListJobs:%1\nthe simulator's running jobs:%2\nthe source's log:\n%3")
                           .arg(describe(got), describe(m_expected), QString::fromStdString(log.text))));
        backend.stop();
    }

    FrozenFleetPage m_fleet;
    QTemporaryDir m_dir;
    std::map<uint64_t, Compared> m_expected;
    size_t m_slurmNodes = 0;
    QString m_config;
    QString m_topology;
};

QTEST_GUILESS_MAIN(TestSlurmE2e)
#include "tst_slurm_e2e.moc"
