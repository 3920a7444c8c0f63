// SPDX-License-Identifier: Apache-2.0
// The anomaly detector learns from the store at the start, through a real Prometheus (Debian's `prometheus`, and its
// `promtool` to backfill the past): the simulator's dcgm-exporter page, half an hour of it imported into the store,
// the page then scraped live, and the Prometheus source's frames judged (docs/ANOMALY.md, "Learning from the store").
// A suite of its own: it waits for an anomaly's minute of persistence on each backend.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "prometheus/prometheussource.h"
#include "sim/exporterpage.h"
#include "sim/exporterserver.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;
using namespace std::chrono_literals;

namespace {

// A fleet that stays as it is: one frame (and the jobs running in it) served as the latest, nothing newer after it, for
// an exporter page that every scrape sees the same.
class FixedFleet final : public be::FramePoller
{
public:
    FixedFleet(const be::FleetShape &shape, std::shared_ptr<be::Frame> frame, std::vector<be::JobInfo> jobs)
        : m_shape(shape)
        , m_frame(std::move(frame))
        , m_jobs(std::move(jobs))
    { }
    const be::FleetShape &shape() const override { return m_shape; }
    uint64_t topologyGeneration() const override { return 1; }
    std::shared_ptr<be::Frame> firstFrame() override { return std::make_shared<be::Frame>(*m_frame); }
    std::shared_ptr<be::Frame> poll() override { return nullptr; }
    std::string upstreamError() const override { return {}; }
    std::vector<be::JobInfo> jobs() const override { return m_jobs; }

private:
    const be::FleetShape &m_shape;
    std::shared_ptr<be::Frame> m_frame;
    std::vector<be::JobInfo> m_jobs;
};

// A dcgm-exporter page as OpenMetrics samples taken at `seconds` with the labels a scrape of `instance` by job dcgm
// adds, for promtool's backfill: the same series the scrape then continues.
QByteArray backfillSamples(const std::string &page, const QByteArray &instance, int64_t seconds)
{
    QByteArray out;
    const QByteArray scrapeLabels = "job=\"dcgm\",instance=\"" + instance + "\"";
    for (const auto &line : QByteArray::fromStdString(page).split('\n')) {
        if (line.isEmpty() || line.startsWith('#')) {
            continue;
        }
        const auto close = line.indexOf('}');
        const auto space = line.lastIndexOf(' ');
        if (close < 0 || space < close) {
            continue;
        }
        out += line.left(close) + ',' + scrapeLabels + line.mid(close, space - close) + line.mid(space) + ' '
            + QByteArray::number(seconds) + '\n';
    }
    return out;
}

} // namespace

class TestPrometheusWarmup : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("prometheus")).isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                "it for CI): learning from the store is not tested here");
        }
        const QString unserved = m_fleet.serve(); // a node down, every scrape the same page
        QVERIFY2(unserved.isEmpty(), qPrintable(unserved));
        QVERIFY(m_dir.isValid());
    }

    // The anomaly detector learns from the store at the start (docs/ANOMALY.md). Half an hour of the frozen fleet's
    // page, a sample a minute, is backfilled into one Prometheus's storage (promtool tsdb create-blocks-from
    // openmetrics, as an operator imports history); another starts empty. Both then scrape the same page: the fleet's,
    // but for one GPU of a job running 15 °C hotter than it did. A judged backend on each: both report the GPU, and
    // only the one on the empty store says "no history yet"; the other has learnt from the store where that GPU sits
    // among its job's and judges it against that ("it usually runs ..." or nothing).
    void theDetectorLearnsFromTheStore()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        const QString promtool = QStandardPaths::findExecutable(QStringLiteral("promtool"));
        if (promtool.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("promtool is not installed (Debian package 'prometheus'): no backfill");
        }
        const auto &shape = m_fleet.simulator->shape();
        const auto jobs = m_fleet.simulator->jobs();
        int64_t hot = -1;
        for (const auto &job : jobs) {
            const auto gpus = job.gpuList();
            if (job.endMs == 0 && gpus.size() >= 16 && hot < 0) {
                for (const uint32_t g : gpus) {
                    if (online(*m_fleet.frame, g) && g % 8 == 3) {
                        hot = g;
                        break;
                    }
                }
            }
        }
        QVERIFY2(hot >= 0, "no online GPU of a job of 16 or more in the frozen fleet");
        const auto g = static_cast<size_t>(hot);
        auto hotFrame = std::make_shared<be::Frame>(*m_fleet.frame);
        hotFrame->planes[static_cast<size_t>(be::MetricId::GpuTemp)][g] += 15.0F;
        hotFrame->planes[static_cast<size_t>(be::MetricId::MemTemp)][g] += 15.0F;
        be::FrameSource hotFleet(std::make_unique<FixedFleet>(shape, hotFrame, jobs), be::FrameSource::Options());
        be::ExporterServer page(hotFleet, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(page.start("127.0.0.1:0", &error), error.c_str());
        const QByteArray instance = "127.0.0.1:" + QByteArray::number(page.port());

        // The past: the fleet as it was, every minute of the last half hour.
        const auto past = be::ExporterPage::render(shape, *m_fleet.frame, jobs, be::ExporterPage::Options()).text;
        const int64_t backfilledTo = QDateTime::currentSecsSinceEpoch() - 60;
        QByteArray samples;
        for (int k = 29; k >= 0; --k) {
            samples += backfillSamples(past, instance, backfilledTo - int64_t { k } * 60);
        }
        samples += "# EOF\n";
        const QString openMetrics = m_dir.filePath(QStringLiteral("past.om"));
        QVERIFY(fleetscope::testing::writeFile(openMetrics, samples));
        const QString warmData = m_dir.filePath(QStringLiteral("warm-data"));
        QProcess backfill;
        backfill.setProcessChannelMode(QProcess::MergedChannels);
        backfill.start(promtool,
            { QStringLiteral("tsdb"), QStringLiteral("create-blocks-from"), QStringLiteral("openmetrics"), openMetrics,
                warmData });
        QVERIFY(backfill.waitForFinished(60000));
        QVERIFY2(backfill.exitCode() == 0, backfill.readAll().constData());

        const QString config = m_dir.filePath(QStringLiteral("hot.yml"));
        QVERIFY(fleetscope::testing::writeFile(config, fleetscope::testing::scrapeConfig(page.port())));
        ProcessGuard servers[2];
        int ports[2] = {};
        const QString dataDirs[2] = { warmData, m_dir.filePath(QStringLiteral("cold-data")) };
        const QString hotGpu = QStringLiteral("DCGM_FI_DEV_GPU_TEMP{Hostname=\"%1\",gpu=\"%2\"}")
                                   .arg(QString::fromStdString(shape.nodes[shape.nodeOfGpu[g]].hostname))
                                   .arg(g - shape.nodes[shape.nodeOfGpu[g]].firstGpu);
        const float hotTemp = hotFrame->plane(be::MetricId::GpuTemp)[g];
        for (int i = 0; i < 2; ++i) {
            ports[i] = freePort();
            QVERIFY(fleetscope::testing::startPrometheus(&servers[i], prometheus, config, dataDirs[i], ports[i]));
        }
        for (int i = 0; i < 2; ++i) {
            // Scraped once: the hot GPU reads hot (its backfilled samples are a minute older).
            const QString late = waitForServer(servers[i], QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                const auto now = instantQuery(ports[i], hotGpu);
                *detail = QStringLiteral("the hot GPU reads %1").arg(now.isEmpty() ? -1.0 : sampleValue(now.at(0)));
                return now.size() == 1 && std::fabs(sampleValue(now.at(0)) - hotTemp) < 0.5;
            });
            QVERIFY2(late.isEmpty(), qPrintable(late));
        }
        const auto held = instantQuery(ports[0], QStringLiteral("count_over_time(%1[40m])").arg(hotGpu));
        QVERIFY2(held.size() == 1 && sampleValue(held.at(0)) >= 30, "the backfilled half hour is not in the store");

        struct Backend
        {
            std::shared_ptr<std::pair<std::mutex, std::string>> log
                = std::make_shared<std::pair<std::mutex, std::string>>();
            std::unique_ptr<be::FrameSource> source;
            uint64_t after = 0;
            int64_t hot = -1; // the hot GPU in the layout the series give (online GPUs only)
            std::string reason; // of its anomaly
        };
        Backend backends[2];
        for (int i = 0; i < 2; ++i) {
            auto log = backends[i].log;
            auto source = std::make_unique<be::PrometheusSource>([log](const std::string &line) {
                std::lock_guard lock(log->first);
                log->second += line + '\n';
            });
            be::PrometheusSource::Options options;
            options.url = "http://127.0.0.1:" + std::to_string(ports[i]);
            QVERIFY2(source->start(options, &error), error.c_str());
            be::FrameSource::Options frames;
            frames.interval = 500ms;
            backends[i].source = be::judgedSource(std::move(source), frames);
            const auto &simulated = shape.nodes[shape.nodeOfGpu[g]];
            for (const auto &node : backends[i].source->shape().nodes) {
                if (node.hostname == simulated.hostname) {
                    backends[i].hot = node.firstGpu + (hot - simulated.firstGpu);
                }
            }
            QVERIFY(backends[i].hot >= 0);
        }
        {
            std::lock_guard lock(backends[0].log->first);
            // A frame a minute of the half hour backfilled, but the oldest where the window starts after it.
            const auto learnt = QRegularExpression(QStringLiteral("the anomaly detector learns from (\\d+) frames"))
                                    .match(QString::fromStdString(backends[0].log->second));
            QVERIFY2(learnt.hasMatch() && learnt.captured(1).toInt() >= 28, backends[0].log->second.c_str());
        }
        {
            std::lock_guard lock(backends[1].log->first);
            QVERIFY2(backends[1].log->second.find("the store holds no samples") != std::string::npos,
                backends[1].log->second.c_str());
        }
        // An anomaly starts after a minute of it (persistence): wait for both.
        QDeadlineTimer deadline(150000);
        while (!deadline.hasExpired() && (backends[0].reason.empty() || backends[1].reason.empty())) {
            for (auto &b : backends) {
                for (const auto &e : b.source->eventsAfter(0, &b.after, 200ms)) {
                    if (e.event.kind == be::FleetEvent::Kind::AnomalyStart && e.event.gpu == b.hot) {
                        b.reason = e.event.text;
                    }
                }
            }
        }
        for (auto &b : backends) {
            std::lock_guard lock(b.log->first);
            QVERIFY2(!b.reason.empty(), b.log->second.c_str());
        }
        QVERIFY2(backends[0].reason.find("no history yet") == std::string::npos, backends[0].reason.c_str());
        QVERIFY2(backends[1].reason.find("no history yet") != std::string::npos, backends[1].reason.c_str());
        for (auto &b : backends) {
            b.source->stop();
        }
        page.stop();
    }

private:
    FrozenFleetPage m_fleet;
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestPrometheusWarmup)
#include "tst_prometheus_warmup.moc"
