// SPDX-License-Identifier: Apache-2.0
// The Prometheus source against a fake Prometheus HTTP API (a QTcpServer on its own thread answering
// /api/v1/query with canned JSON per query): the layout from hostnames, row and rack labels or a topology file, the
// values and sample times of its frames, and GPUs missing or unknown. Its polling and bad answers:
// tst_prometheus_polling; history: tst_prometheus_history; jobs and events: tst_prometheus_events.
#include "tests/backend/prometheus/prometheussourcetesting.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using namespace fleetscope::backend;
using namespace fleetscope::backend::testing;
using namespace std::chrono_literals;

class TestPrometheusSource : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topologyFromHostnames()
    {
        FakePrometheus fake;
        answerFleet(fake);
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.gpuCount, fleetGpus);
        QCOMPARE(shape.nodes.size(), size_t { 4 });
        for (size_t n = 0; n < hostsInOrder.size(); ++n) {
            QCOMPARE(shape.nodes[n].hostname, hostsInOrder[n]);
            QCOMPARE(shape.nodes[n].gpuCount, gpusPerHost);
            QCOMPARE(shape.nodes[n].model, std::string("NVIDIA H100 80GB HBM3"));
            QCOMPARE(shape.nodes[n].driverVersion, std::string("550.54.15"));
        }
        QCOMPARE(shape.racks.size(), size_t { 1 });
        QCOMPARE(shape.rows.front().name, std::string("auto-r01"));
        QVERIFY(!shape.simulated);
        for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
            QCOMPARE(shape.gpuUuid(static_cast<uint32_t>(g)), uuidOf(g));
        }
        QCOMPARE(source->topologyGeneration(), startSource(fake, nullptr)->topologyGeneration());
    }

    void topologyFromRowAndRackLabels()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5, "placed");
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.rows.size(), size_t { 2 });
        QCOMPARE(shape.rows[0].name, std::string("r2")); // natural order: r2 before r10
        QCOMPARE(shape.rows[1].name, std::string("r10"));
        QCOMPARE(shape.racks.size(), size_t { 4 });
        QCOMPARE(shape.nodes[0].hostname, std::string("node-3"));
        QCOMPARE(shape.nodes[1].hostname, std::string("node-10"));
        QCOMPARE(shape.nodes[2].hostname, std::string("node-1"));
        QCOMPARE(shape.racks[shape.nodes[2].rack].row, 1U);
        // Values land on the GPUs of that layout.
        auto frame = source->poll();
        QVERIFY(frame);
        const uint32_t g = shape.nodes[0].firstGpu + 5;
        QCOMPARE(frame->plane(MetricId::Power)[g], expectedValue(MetricId::Power, denseIndex("node-3", 5)));
    }

    void topologyFromFile()
    {
        FakePrometheus fake;
        answerFleet(fake);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("topology.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        // File order, not name order; node-3 missing (its series are unknown), node-9 not reporting, node-2 with 4.
        file.write(R"({"site": "dc-1", "halls": [{"name": "hall-a", "rows": [{"name": "r01", "racks": [
            {"name": "r01-k01", "hosts": ["node-10", {"hostname": "node-2", "gpus": 4}]},
            {"name": "r01-k02", "hosts": ["node-1", "node-9"]}]}]}]})");
        file.close();
        std::vector<std::string> log;
        auto source = startSource(fake, &log, 2000ms, path.toStdString());
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.gpuCount, 8U + 4U + 8U + 8U);
        QCOMPARE(shape.site, std::string("dc-1"));
        QCOMPARE(shape.nodes[0].hostname, std::string("node-10"));
        QCOMPARE(shape.nodes[1].gpuCount, 4U);
        QCOMPARE(shape.racks[1].name, std::string("r01-k02"));
        QCOMPARE(shape.gpuUuid(8), uuidOf(denseIndex("node-2", 0)));
        QVERIFY(shape.gpuUuid(27).empty()); // node-9 has no series
        // node-3's 8 GPUs and node-2's GPUs 4..7 are not in the file: counted and reported at start.
        QVERIFY(std::any_of(log.begin(), log.end(), [](const auto &l) { return contains(l, "12 GPUs"); }));

        auto frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(source->lastReport().unknownSeries, size_t { 12 * 15 }); // 12 per metric query
        QCOMPARE(frame->plane(MetricId::GpuTemp)[9], expectedValue(MetricId::GpuTemp, denseIndex("node-2", 1)));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[25]));
        QCOMPARE(frame->health[25], fleetscope::health::NoData);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 8 });

        std::string error;
        TopologyFile bad;
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [
            {"name": "k", "hosts": ["a", "a"]}]}]}]})",
            &bad, &error));
        QVERIFY2(contains(error, "appears twice"), error.c_str());
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": []}]})", &bad, &error) || bad.rows.empty());
    }

    void remappedRowsAreWindowIncreases()
    {
        // Counters, read as their increase over the window as the other error counters are; 1.x names have none.
        QCOMPARE(PrometheusSource::queryFor(hostnameProfile, MetricId::RemappedRows).value_or(""),
            std::string("increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[5m])"));
        QCOMPARE(PrometheusSource::queryFor(hostnameProfile, MetricId::RemappedRowsCorrectable).value_or(""),
            std::string("increase(DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS[5m])"));
        QVERIFY(!PrometheusSource::queryFor(MetricMap::profile(MetricMap::Profile::Compat1x), MetricId::RemappedRows));
        QVERIFY(!PrometheusSource::queryFor(hostnameProfile, MetricId::Offender));
        // NVLink's errors: the flow-control and the data CRC counters, each one's own increase, summed (both names:
        // the increase of one alone missed the data CRC errors).
        const auto nvlink = PrometheusSource::queryFor(hostnameProfile, MetricId::NvlinkErrors, R"({Hostname=~"a"})");
        QCOMPARE(nvlink.value_or(""), hostnameProfile.increaseQuery(MetricId::NvlinkErrors, R"({Hostname=~"a"})"));
        for (const auto &name : hostnameProfile.seriesNames(MetricId::NvlinkErrors)) {
            QVERIFY2(nvlink.value_or("").find(name + R"({Hostname=~"a"}[5m])") != std::string::npos, name.c_str());
        }
        QCOMPARE(hostnameProfile.seriesNames(MetricId::NvlinkErrors).size(), size_t { 2 });
        // A poll's planes: the fake's answers to those queries, GPU by GPU (framesCarryValuesAndTheSampleTime has
        // every metric).
        FakePrometheus fake;
        answerFleet(fake);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        const auto frame = source->poll();
        QVERIFY(frame);
        for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
            QCOMPARE(
                frame->plane(MetricId::RemappedRows)[static_cast<size_t>(g)], expectedValue(MetricId::RemappedRows, g));
        }
    }

    void framesCarryValuesAndTheSampleTime()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        // The newest sample's own time, not the evaluation time (1700000100) nor the time asked.
        QCOMPARE(frame->sampleTimeMs, int64_t { 1700000000500 });
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (id == MetricId::HealthState) {
                continue;
            }
            // Fleetscope's own scores, given when the frame source publishes
            if (id == MetricId::Anomaly || id == MetricId::Offender) {
                for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
                    QVERIFY(std::isnan(frame->plane(id)[static_cast<size_t>(g)]));
                }
                continue;
            }
            QVERIFY(PrometheusSource::queryFor(hostnameProfile, id)); // the fabric's and the facility's too
            for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
                QCOMPARE(frame->plane(id)[static_cast<size_t>(g)], expectedValue(id, g));
            }
        }
        for (uint32_t g = 0; g < fleetGpus; ++g) {
            QCOMPARE(frame->health[g], fleetscope::health::Ok);
        }
        QVERIFY(source->lastReport().ok);
        QVERIFY(source->lastReport().answerBytes > 0);

        // Nothing newer upstream: no new frame, and no error either.
        QVERIFY(!source->poll());
        QVERIFY(source->upstreamError().empty());
        answerTimestamp(fake, 1700000001.5);
        frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(frame->sampleTimeMs, int64_t { 1700000001500 });
    }

    void sentinelsAndNaNAreNoData()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto temps = metricSeries(MetricId::GpuTemp);
        temps[0].value = "9223372036854775794"; // node-10/0: int64 not supported
        temps[1].value = "NaN";
        temps[2].value = "+Inf";
        temps[3].value = "2147483634"; // int32 not supported
        temps[4].value = "140737488355328"; // fp64 blank
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
        // node-10/0 reports sentinels only: no data at all.
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (id == MetricId::GpuTemp || !PrometheusSource::queryFor(hostnameProfile, id)) {
                continue;
            }
            auto series = metricSeries(id);
            series[0].value = "9223372036854775792";
            fake.set(*PrometheusSource::queryFor(hostnameProfile, id), { 200, vectorAnswer(series), 0 });
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const auto &temp = frame->plane(MetricId::GpuTemp);
        for (int i = 0; i < 5; ++i) {
            const int g = denseIndex(temps[static_cast<size_t>(i)].host, std::stoul(temps[static_cast<size_t>(i)].gpu));
            QVERIFY2(std::isnan(temp[static_cast<size_t>(g)]), temps[static_cast<size_t>(i)].value.c_str());
        }
        const int all = denseIndex("node-10", 0);
        QCOMPARE(frame->health[static_cast<size_t>(all)], fleetscope::health::NoData);
        QVERIFY(std::isnan(frame->plane(MetricId::Power)[static_cast<size_t>(all)]));
        // node-10/1 lost only its temperature: its other values stand and it is not "no data".
        const int some = denseIndex("node-10", 1);
        QCOMPARE(frame->health[static_cast<size_t>(some)], fleetscope::health::Ok);
        QCOMPARE(frame->plane(MetricId::Power)[static_cast<size_t>(some)], expectedValue(MetricId::Power, some));
        // 14 of dcgm-exporter's series, 5 of node-exporter's and 4 of the facility's.
        QCOMPARE(source->lastReport().sentinelValues, size_t { 3 + 14 + 5 + 4 });
        QCOMPARE(source->lastReport().nanValues, size_t { 2 });
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 1 });
    }

    // node-exporter's InfiniBand series reach their GPUs by instance and device (mlx5_k is GPU k); a port whose state
    // is not ACTIVE reads 0; a storage NIC is no GPU's and no fault; transmit wait ticks become a %; the facility's
    // rack series reaches every GPU of the rack; none of them makes a GPU one with data.
    void fabricAndFacilitySeries()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto state = metricSeries(MetricId::RailLinkState);
        const std::string down = R"(,"instance":"node-3:9100","device":"mlx5_5","port":"1")";
        bool found = false;
        for (auto &s : state) {
            if (s.extraLabels == down) {
                s.value = "1"; // DOWN
                found = true;
            }
        }
        QVERIFY(found);
        fake.set(
            *PrometheusSource::queryFor(hostnameProfile, MetricId::RailLinkState), { 200, vectorAnswer(state), 0 });
        // node-2's dcgm-exporter is gone, its node-exporter is not.
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (MetricMap::scopeOf(id) != MetricMap::Scope::Gpu || !PrometheusSource::queryFor(hostnameProfile, id)) {
                continue;
            }
            auto series = metricSeries(id);
            series.erase(
                std::remove_if(series.begin(), series.end(), [](const Series &s) { return s.host == "node-2"; }),
                series.end());
            fake.set(*PrometheusSource::queryFor(hostnameProfile, id), { 200, vectorAnswer(series), 0 });
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const int downGpu = denseIndex("node-3", 5);
        for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
            const auto at = static_cast<size_t>(g);
            QCOMPARE(frame->plane(MetricId::RailLinkState)[at], g == downGpu ? 0.0F : 1.0F);
            QCOMPARE(frame->plane(MetricId::RailTransmitWait)[at], expectedValue(MetricId::RailTransmitWait, g));
            QCOMPARE(frame->plane(MetricId::CoolantSupplyTemp)[at], expectedValue(MetricId::CoolantSupplyTemp, g));
            QCOMPARE(frame->plane(MetricId::RailSymbolErrors)[at], 0.0F);
        }
        QCOMPARE(source->lastReport().unknownSeries, size_t { 0 });
        QCOMPARE(source->lastReport().duplicateSeries, size_t { 0 });
        // The queries: node-exporter's names, transmit wait as a rate, the counters' increases.
        QCOMPARE(*PrometheusSource::queryFor(hostnameProfile, MetricId::RailTransmitWait),
            std::string("rate(node_infiniband_port_transmit_wait_total[5m])"));
        QCOMPARE(*PrometheusSource::queryFor(hostnameProfile, MetricId::RailLinkDowns),
            std::string("increase(node_infiniband_link_downed_total[5m])"));
        QCOMPARE(*PrometheusSource::queryFor(hostnameProfile, MetricId::LeakDetected),
            std::string("fleetscope_leak_detected"));
        // node-2's GPUs have their links but no data of their own.
        const int quiet = denseIndex("node-2", 3);
        QCOMPARE(frame->health[static_cast<size_t>(quiet)], fleetscope::health::NoData);
        QCOMPARE(frame->plane(MetricId::RailLinkState)[static_cast<size_t>(quiet)], 1.0F);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { gpusPerHost });
    }

    void aMissingGpuHasNoData()
    {
        FakePrometheus fake;
        answerFleet(fake);
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            if (const auto q = PrometheusSource::queryFor(hostnameProfile, static_cast<MetricId>(m))) {
                fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m), "node-3", 6)), 0 });
            }
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const auto g = static_cast<size_t>(denseIndex("node-3", 6));
        QCOMPARE(frame->health[g], fleetscope::health::NoData);
        QCOMPARE(frame->plane(MetricId::HealthState)[g], float(fleetscope::health::NoData));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[g]));
        QCOMPARE(frame->health[g - 1], fleetscope::health::Ok);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 1 });
    }

    void seriesForUnknownGpusAreCountedAndIgnored()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto temps = metricSeries(MetricId::GpuTemp);
        temps.push_back({ "stranger", "0", "99", {} });
        temps.push_back({ "node-1", "8", "98", {} }); // a ninth GPU on a known host
        temps.push_back({ "node-1", "0", "97", {} }); // a second series for a known GPU
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(source->lastReport().unknownSeries, size_t { 2 });
        QCOMPARE(source->lastReport().unknownExample, std::string("stranger/0"));
        QCOMPARE(source->lastReport().duplicateSeries, size_t { 1 });
        QCOMPARE(frame->plane(MetricId::GpuTemp)[0], expectedValue(MetricId::GpuTemp, 0)); // the first series kept
        QVERIFY(std::any_of(log.begin(), log.end(),
            [](const auto &l) { return contains(l, "2 series name GPUs not in the topology (e.g. stranger/0)"); }));
    }
};

QTEST_GUILESS_MAIN(TestPrometheusSource)
#include "tst_prometheussource.moc"
