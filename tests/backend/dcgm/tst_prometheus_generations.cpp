// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's generations through the Prometheus source: each built-in profile's series, in the labels and names
// that generation writes, give the layout and the values, and are recognised at start; a site's --metric-map
// converts units; a bad map is refused with its line number.
#include "backendoptions.h"
#include "dcgm/metricmap.h"
#include "prometheus/prometheussource.h"
#include "tests/backend/testing/fakeprometheus.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace fleetscope::backend;
using namespace std::chrono_literals;

namespace {

// Two nodes of two GPUs, in the shape of /work/shared/reference/dcgm-exporter-sample.txt.
struct Gpu
{
    std::string host;
    int gpu;
    std::string uuid;
};
const std::vector<Gpu> gpus = {
    { "r07-n03", 0, "GPU-3f1c9a2e-7d4b-4c1a-9e0f-1b2c3d4e5f60" },
    { "r07-n03", 1, "GPU-8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d" },
    { "r07-n04", 0, "GPU-0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8" },
    { "r07-n04", 1, "GPU-1c2d3e4f-5061-4b72-8c83-a4b5c6d7e8f9" },
};
const std::string model = "NVIDIA H100 80GB HBM3";
const std::string driver = "550.54.15";
const std::string vbios = "96.00.99.00.01";

// The labels a generation's exporter writes on a GPU's series (Prometheus drops the empty ones):
// - 1.x-compatible names on a 2.x exporter: gpu, UUID, device, Hostname (NVIDIA/dcgm-exporter#188);
// - 2.x-3.x: gpu, UUID, device, modelName, Hostname (#317);
// - 3.x-4.8.2: gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION (the reference page);
// - 4.8.3+: the same with hostname (#655).
std::string labelsOf(MetricMap::Profile profile, const Gpu &g, const std::string &nodeLabel)
{
    std::string out = R"("gpu":")" + std::to_string(g.gpu) + R"(","UUID":")" + g.uuid + R"(","device":"nvidia)"
        + std::to_string(g.gpu) + "\"";
    if (profile != MetricMap::Profile::Compat1x) {
        out += R"(,"modelName":")" + model + "\"";
    }
    if (profile == MetricMap::Profile::Gen3x482 || profile == MetricMap::Profile::Gen483) {
        out += R"(,"pci_bus_id":"00000000:18:00.0","DCGM_FI_DRIVER_VERSION":")" + driver + "\"";
    }
    // A deployment whose collector CSV has DCGM_FI_DEV_VBIOS_VERSION as a "label" row.
    if (profile == MetricMap::Profile::Gen483) {
        out += R"(,"DCGM_FI_DEV_VBIOS_VERSION":")" + vbios + "\"";
    }
    return out + ",\"" + nodeLabel + R"(":")" + g.host + "\"";
}

// A series' value for a metric on GPU i: DCGM's "not supported" sentinel for the memory temperature of the first
// GPU (as in the reference page), else distinct values; raw counts 0, so every GPU is healthy.
std::string rawValue(MetricId id, size_t i)
{
    if (id == MetricId::MemTemp && i == 0) {
        return "9223372036854775794";
    }
    if (metricCatalog()[static_cast<size_t>(id)].isRate || id == MetricId::ThrottleReasons) {
        return "0";
    }
    return std::to_string(100 * static_cast<int>(id) + 10 * static_cast<int>(i)) + ".25";
}

QByteArray vector(const std::vector<std::string> &series)
{
    std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
    for (size_t i = 0; i < series.size(); ++i) {
        out += (i ? "," : "") + series[i];
    }
    return QByteArray::fromStdString(out + "]}}");
}

std::string element(const std::string &labels, const std::string &value)
{
    return R"({"metric":{)" + labels + R"(},"value":[1700000100.000,")" + value + "\"]}";
}

// Answers every query a source asks of a fleet whose exporter writes this generation's series (map: the names and
// labels it writes, nodeLabel: its node label): discovery, the names present, and a poll.
void answerGeneration(FakePrometheus &fake, const MetricMap &map, MetricMap::Profile profile,
    const std::string &nodeLabel, const std::vector<std::string> &extraNames = {})
{
    std::vector<std::string> discovery;
    for (const auto &g : gpus) {
        discovery.push_back(element(
            R"("__name__":")" + map.seriesName(MetricId::GpuTemp) + "\"," + labelsOf(profile, g, nodeLabel), "1"));
    }
    fake.set(PrometheusSource::profileDiscoveryQuery(), { 200, vector(discovery), 0 });
    std::vector<std::string> names;
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        if (!map.seriesName(static_cast<MetricId>(m)).empty()) {
            names.push_back(element(R"("__name__":")" + map.seriesName(static_cast<MetricId>(m)) + "\"", "4"));
        }
    }
    for (const auto &name : extraNames) {
        names.push_back(element(R"("__name__":")" + name + "\"", "4"));
    }
    // Asked of the first node of the most common node label.
    fake.set(PrometheusSource::profileNamesQuery(nodeLabel, gpus.front().host), { 200, vector(names), 0 });
    fake.set(PrometheusSource::sampleTimeQuery(map), { 200, vector({ element({}, "1700000000.500") }), 0 });
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        const auto id = static_cast<MetricId>(m);
        if (const auto q = PrometheusSource::queryFor(map, id)) {
            std::vector<std::string> series;
            for (size_t i = 0; i < gpus.size(); ++i) {
                series.push_back(element(labelsOf(profile, gpus[i], nodeLabel), rawValue(id, i)));
            }
            fake.set(*q, { 200, vector(series), 0 });
        }
    }
    std::vector<std::string> events;
    for (const auto id : { MetricId::XidErrors, MetricId::EccDbe }) {
        for (const auto &g : gpus) {
            events.push_back(
                element(R"("__name__":")" + map.seriesName(id) + "\"," + labelsOf(profile, g, nodeLabel), "0"));
        }
    }
    fake.set(PrometheusSource::eventQuery(map), { 200, vector(events), 0 });
}

// (Labels built here, out of the test class: moc misreads raw strings with quotes in a class body.)
std::string nameLabel(const std::string &name)
{
    return R"("__name__":")" + name + "\"";
}

// A site's exporter: its own node and UUID labels.
std::string siteLabels(const Gpu &g)
{
    return R"("gpu":")" + std::to_string(g.gpu) + R"(","node":")" + g.host + "\"";
}

std::string siteIdentityLabels(const Gpu &g)
{
    return siteLabels(g) + R"(,"gpu_uuid":")" + g.uuid + "\"";
}

std::unique_ptr<PrometheusSource> startSource(
    FakePrometheus &fake, std::vector<std::string> *log, std::optional<MetricMap> map = std::nullopt)
{
    auto source = std::make_unique<PrometheusSource>([log](const std::string &line) { log->push_back(line); });
    PrometheusSource::Options options;
    options.url = fake.url();
    options.timeout = 2000ms;
    options.metricMap = std::move(map);
    std::string error;
    if (!source->start(options, &error)) {
        qWarning("start failed: %s", error.c_str());
        return nullptr;
    }
    return source;
}

bool logged(const std::vector<std::string> &log, const std::string &text)
{
    return std::any_of(log.begin(), log.end(), [&](const std::string &l) { return l.find(text) != std::string::npos; });
}

std::string joined(const std::vector<std::string> &log)
{
    std::string out;
    for (const auto &l : log) {
        out += l + '\n';
    }
    return out;
}

} // namespace

class TestPrometheusGenerations : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void profiles_data()
    {
        QTest::addColumn<int>("profile");
        QTest::addColumn<QString>("nodeLabel");
        QTest::addColumn<QString>("chosen");
        QTest::addColumn<QString>("throttleSeries");
        QTest::newRow("1.x-compatible names") << int(MetricMap::Profile::Compat1x) << QStringLiteral("Hostname")
                                              << QStringLiteral("1.x-compatible names (label Hostname)") << QString();
        QTest::newRow("2.x-3.x") << int(MetricMap::Profile::Gen2x3x) << QStringLiteral("Hostname")
                                 << QStringLiteral("2.x-3.x (label Hostname)")
                                 << QStringLiteral("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS");
        QTest::newRow("3.x-4.8.2") << int(MetricMap::Profile::Gen3x482) << QStringLiteral("Hostname")
                                   << QStringLiteral("3.x-4.8.2 (label Hostname)")
                                   << QStringLiteral("DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
        QTest::newRow("4.8.3+") << int(MetricMap::Profile::Gen483) << QStringLiteral("hostname")
                                << QStringLiteral("4.8.3+ (label hostname)")
                                << QStringLiteral("DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
    }
    // Each generation's series give the layout, the identities and the values, and the profile is chosen from them.
    void profiles()
    {
        QFETCH(int, profile);
        QFETCH(QString, nodeLabel);
        QFETCH(QString, chosen);
        QFETCH(QString, throttleSeries);
        const auto p = static_cast<MetricMap::Profile>(profile);
        const MetricMap map = MetricMap::profile(p);
        QCOMPARE(map.seriesName(MetricId::ThrottleReasons), throttleSeries.toStdString());
        FakePrometheus fake;
        answerGeneration(fake, map, p, nodeLabel.toStdString());
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        const std::string line
            = "prometheus: dcgm-exporter profile " + chosen.toStdString() + " chosen from the series present";
        QVERIFY2(logged(log, line), joined(log).c_str());
        QCOMPARE(source->metricMap().name(), chosen.toStdString());

        const auto &shape = source->shape();
        QCOMPARE(shape.gpuCount, 4U);
        QCOMPARE(shape.nodes.size(), size_t { 2 });
        QCOMPARE(shape.nodes[0].hostname, std::string("r07-n03"));
        QCOMPARE(shape.nodes[1].hostname, std::string("r07-n04"));
        for (size_t i = 0; i < gpus.size(); ++i) {
            QCOMPARE(shape.uuids[i], gpus[i].uuid);
        }
        QCOMPARE(shape.nodes[0].model, p == MetricMap::Profile::Compat1x ? std::string() : model);
        const bool hasDriver = p == MetricMap::Profile::Gen3x482 || p == MetricMap::Profile::Gen483;
        QCOMPARE(shape.nodes[0].driverVersion, hasDriver ? driver : std::string());
        QCOMPARE(shape.nodes[1].firmwareVersion, p == MetricMap::Profile::Gen483 ? vbios : std::string());

        auto frame = source->poll();
        QVERIFY2(frame, source->lastReport().error.c_str());
        QCOMPARE(source->lastReport().unknownSeries, size_t { 0 });
        for (size_t i = 0; i < gpus.size(); ++i) {
            QCOMPARE(frame->plane(MetricId::GpuTemp)[i], std::stof(rawValue(MetricId::GpuTemp, i)));
            QCOMPARE(frame->plane(MetricId::Power)[i], std::stof(rawValue(MetricId::Power, i)));
            QCOMPARE(frame->plane(MetricId::FbUsed)[i], std::stof(rawValue(MetricId::FbUsed, i)));
            QCOMPARE(fleetscope::health::stateOf(frame->health[i]), fleetscope::health::Ok);
        }
        QVERIFY(std::isnan(frame->plane(MetricId::MemTemp)[0])); // "not supported"
        QCOMPARE(frame->plane(MetricId::MemTemp)[3], std::stof(rawValue(MetricId::MemTemp, 3)));
        // 1.x-compatible names have no clock event reasons: no data, not an error.
        QCOMPARE(std::isnan(frame->plane(MetricId::ThrottleReasons)[0]), throttleSeries.isEmpty());
        // Range queries select hosts on the generation's node label.
        QCOMPARE(source->hostSelector({ 2 }), "{" + nodeLabel.toStdString() + "=~\"r07-n04\"}");
    }

    // A fleet upgraded node by node: series of both spellings of the node label. Both give the layout; history asks
    // for the whole fleet, as a selector on either label alone would miss the other's nodes.
    void bothHostnameLabels()
    {
        const MetricMap map = MetricMap::profile(MetricMap::Profile::Gen483);
        FakePrometheus fake;
        answerGeneration(fake, map, MetricMap::Profile::Gen483, "hostname");
        std::vector<std::string> discovery;
        for (const auto &g : gpus) {
            const std::string label = g.host == "r07-n03" ? "Hostname" : "hostname";
            discovery.push_back(element(
                nameLabel("DCGM_FI_DEV_GPU_TEMP") + "," + labelsOf(MetricMap::Profile::Gen3x482, g, label), "1"));
        }
        fake.set(PrometheusSource::profileDiscoveryQuery(), { 200, vector(discovery), 0 });
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        QCOMPARE(source->shape().nodes.size(), size_t { 2 });
        QCOMPARE(source->shape().gpuCount, 4U);
        QVERIFY2(logged(log, "2 GPUs' series name their node 'hostname' and 2 'Hostname'"), joined(log).c_str());
        QCOMPARE(source->hostSelector({ 2 }), std::string());
        // The names are asked of one node (of the label a tie goes to), its name quoted for PromQL.
        QVERIFY(logged(log, "which series names the server holds is not known"));
        const std::string names = PrometheusSource::profileNamesQuery("hostname", "a\"b\\c");
        QVERIFY2(names.find(",hostname=\"a\\\"b\\\\c\"})") != std::string::npos, names.c_str());
    }

    // A collector CSV that keeps the old field name of the clock event reasons on a 4.8.3+ exporter: read from it.
    void oldThrottleNameOnNewExporter()
    {
        MetricMap map = MetricMap::profile(MetricMap::Profile::Gen483);
        FakePrometheus fake;
        // The exporter's series: 4.8.3+ names and labels, but the reasons under the field's old name.
        const MetricMap written = MetricMap::profile(MetricMap::Profile::Gen2x3x);
        answerGeneration(fake, written, MetricMap::Profile::Gen483, "hostname");
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        QVERIFY2(logged(log,
                     "profile 4.8.3+ (label hostname) chosen from the series present; throttle_reasons from "
                     "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
            joined(log).c_str());
        QCOMPARE(source->metricMap().seriesName(MetricId::ThrottleReasons),
            std::string("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"));
        auto frame = source->poll();
        QVERIFY2(frame, source->lastReport().error.c_str());
        QCOMPARE(frame->plane(MetricId::ThrottleReasons)[1], 0.0F);
    }

    // A site's map: its own names (here dcgm-exporter 4.9's kind: memory in bytes, a temperature in kelvin), its node
    // label; values converted to the catalogue's units. No profile is chosen.
    void siteMapConvertsUnits()
    {
        MetricMap map;
        std::string error;
        QVERIFY2(MetricMap::parse("# a site's exporter\n"
                                  "site_gpu_temp_kelvin = gpu_temp + -273.15\n"
                                  "site_fb_used_bytes = fb_used * 9.5367431640625e-07   # to MiB\n"
                                  "site_power_milliwatts = power * 0.001\n"
                                  "site_ecc_dbe_total = ecc_dbe * 2 + 5\n"
                                  "label hostname = node\n"
                                  "label uuid = gpu_uuid\n",
                     &map, &error),
            error.c_str());
        FakePrometheus fake;
        std::vector<std::string> discovery;
        for (const auto &g : gpus) {
            discovery.push_back(element(nameLabel("site_gpu_temp_kelvin") + "," + siteIdentityLabels(g), "1"));
        }
        fake.set(PrometheusSource::discoveryQuery(map), { 200, vector(discovery), 0 });
        fake.set(PrometheusSource::sampleTimeQuery(map), { 200, vector({ element({}, "1700000000.500") }), 0 });
        auto answer = [&](MetricId id, const std::vector<std::string> &values) {
            std::vector<std::string> series;
            for (size_t i = 0; i < gpus.size(); ++i) {
                series.push_back(element(siteLabels(gpus[i]), values[i]));
            }
            fake.set(*PrometheusSource::queryFor(map, id), { 200, vector(series), 0 });
        };
        answer(MetricId::GpuTemp, { "340.15", "350.15", "300", "273.15" });
        answer(MetricId::FbUsed, { "1048576", "85899345920", "0", "524288" });
        answer(MetricId::Power, { "612250", "1000", "0", "700000" });
        answer(MetricId::EccDbe, { "0", "1", "0", "0" }); // an increase: scaled, the offset cancels out
        fake.set(PrometheusSource::eventQuery(map), { 200, vector({}), 0 });
        std::vector<std::string> log;
        auto source = startSource(fake, &log, map);
        QVERIFY(source);
        QVERIFY(!logged(log, "dcgm-exporter profile"));
        QVERIFY(logged(log, "prometheus: metric map from metric map"));
        QCOMPARE(source->shape().uuids[3], gpus[3].uuid);
        auto frame = source->poll();
        QVERIFY2(frame, source->lastReport().error.c_str());
        const auto &temp = frame->plane(MetricId::GpuTemp);
        QCOMPARE(temp[0], 67.0F);
        QCOMPARE(temp[1], 77.0F);
        QCOMPARE(temp[3], 0.0F);
        QCOMPARE(frame->plane(MetricId::FbUsed)[0], 1.0F);
        QCOMPARE(frame->plane(MetricId::FbUsed)[1], 81920.0F);
        QCOMPARE(frame->plane(MetricId::Power)[0], 612.25F);
        QCOMPARE(frame->plane(MetricId::EccDbe)[1], 2.0F);
        QCOMPARE(frame->plane(MetricId::EccDbe)[0], 0.0F);
        QVERIFY(std::isnan(frame->plane(MetricId::GpuUtil)[0])); // not in the map: no data
        QCOMPARE(source->hostSelector({ 0 }), std::string("{node=~\"r07-n03\"}"));
    }

    void metricMapErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        // After a good first line (or alone, where the line number is 1): the text, what the error says.
        struct Row
        {
            const char *tag;
            bool afterGoodLine;
            const char *text;
            const char *expected;
        };
        const Row rows[] = {
            { "no =", true, "# fine\n\nDCGM_FI_DEV_FB_USED fb_used\n", "line 4: expected 'SERIES = CATALOGUE-KEY" },
            { "unknown key", true, "x = gpu_temperature\n", "line 2: 'gpu_temperature' is not a catalogue metric" },
            { "health", true, "x = health\n", "line 2: 'health' is not a catalogue metric" },
            { "bad series name", false, "DCGM FI = gpu_temp\n", "line 1: the left side is one Prometheus metric name" },
            { "injection", false, "up{job=\"x\"} = gpu_temp\n", "line 1: the left side is one Prometheus metric name" },
            { "key twice", true, "other = gpu_temp\n", "line 2: gpu_temp is mapped twice; one series per metric" },
            { "series twice", true, "DCGM_FI_DEV_GPU_TEMP = mem_temp\n",
                "line 2: DCGM_FI_DEV_GPU_TEMP is mapped twice" },
            { "zero scale", true, "x = power * 0\n", "line 2: '*' takes a finite, non-zero number" },
            { "scale not a number", true, "x = power * 1e999\n", "line 2: '*' takes a finite, non-zero number" },
            { "offset without number", true, "x = power +\n", "line 2: '+' takes a finite number" },
            { "trailing", true, "x = power * 2 + 1 watts\n", "line 2: unexpected 'watts'" },
            { "offset before scale", true, "x = power + 1 * 2\n", "line 2: unexpected '*'" },
            { "label kind", true, "label node = host\n", "line 2: no label kind 'node'" },
            { "label name", true, "label hostname = host-name\n",
                "line 2: 'host-name' is not a Prometheus label name" },
            { "one gpu label", true, "label gpu = gpu index\n", "line 2: the gpu label has one name" },
            { "no temperature", false, "DCGM_FI_DEV_POWER_USAGE = power\n", "no series for gpu_temp" },
            { "nvlink three times", true, "a = nvlink_errors\nb = nvlink_errors\nc = nvlink_errors\n",
                "line 4: nvlink_errors is mapped three times; it sums at most two series" },
            { "nvlink's second scaled otherwise", true, "a = nvlink_errors\nb = nvlink_errors * 2\n",
                "line 3: the second series of nvlink_errors takes the first one's conversion" },
            { "nvlink's series twice", true, "a = nvlink_errors\na = nvlink_errors\n", "line 3: a is mapped twice" },
        };
        const QByteArray ok = "DCGM_FI_DEV_GPU_TEMP = gpu_temp\n";
        for (const auto &r : rows) {
            QTest::newRow(r.tag) << QByteArray((r.afterGoodLine ? ok : QByteArray()) + r.text)
                                 << QString::fromUtf8(r.expected);
        }
        QTest::newRow("too large") << QByteArray(ok + QByteArray(70 * 1024, '#'))
                                   << QStringLiteral("is larger than 64 KiB");
    }
    // A bad --metric-map is refused at start, saying where.
    void metricMapErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("map.txt"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text);
        file.close();
        const auto r = parseBackendOptions({ "--source", "prometheus", "--prometheus-url", "http://127.0.0.1:9090",
            "--metric-map", path.toStdString() });
        QVERIFY2(r.error.find("--metric-map: " + path.toStdString() + ": ") == 0, r.error.c_str());
        QVERIFY2(r.error.find(expected.toStdString()) != std::string::npos, r.error.c_str());
    }

    void metricMapOption()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("map.txt"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("DCGM_FI_DEV_GPU_TEMP = gpu_temp\nlabel hostname = hostname Hostname node\n");
        file.close();
        auto r = parseBackendOptions({ "--source", "prometheus", "--prometheus-url", "http://127.0.0.1:9090",
            "--metric-map", path.toStdString() });
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.options.prometheus.metricMap);
        QCOMPARE(r.options.prometheus.metricMap->name(), path.toStdString());
        QCOMPARE(r.options.prometheus.metricMap->labels().hostname.size(), size_t { 3 });
        r = parseBackendOptions({ "--metric-map", path.toStdString() });
        QVERIFY(r.error.find("apply to --source prometheus and remote-write only") != std::string::npos);
        r = parseBackendOptions({ "--source", "prometheus", "--prometheus-url", "http://127.0.0.1:9090", "--metric-map",
            dir.filePath(QStringLiteral("none.txt")).toStdString() });
        QVERIFY2(r.error.find("cannot read") != std::string::npos, r.error.c_str());
    }

    // For a source that receives series pushed (remote write): name -> metric and conversion, labels -> node and GPU.
    void pushedSeries()
    {
        const MetricMap map = MetricMap::profile(MetricMap::Profile::Gen483);
        const auto temp = map.metric("DCGM_FI_DEV_GPU_TEMP");
        QVERIFY(temp);
        QCOMPARE(temp->id, MetricId::GpuTemp);
        QVERIFY(temp->conversion.isIdentity());
        QVERIFY(!map.metric("DCGM_FI_DEV_MEM_CLOCK"));
        QVERIFY(!map.metric(""));
        using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
        auto id = map.identify(Labels { { "__name__", "DCGM_FI_DEV_GPU_TEMP" }, { "gpu", "3" }, { "Hostname", "a" } });
        QCOMPARE(id.hostname, std::string_view("a"));
        QCOMPARE(id.gpu, std::string_view("3"));
        QCOMPARE(id.hostnameRank, 1);
        // Both spellings: the generation's own wins, whatever the order.
        id = map.identify(Labels { { "Hostname", "old" }, { "hostname", "new" }, { "gpu", "0" } });
        QCOMPARE(id.hostname, std::string_view("new"));
        id = map.identify(Labels { { "hostname", "new" }, { "Hostname", "old" } });
        QCOMPARE(id.hostname, std::string_view("new"));
        QCOMPARE(id.gpu, std::string_view());
        const MetricMap old = MetricMap::profile(MetricMap::Profile::Gen3x482);
        QCOMPARE(old.hostnameLabel(), std::string("Hostname"));
        QCOMPARE(
            old.identify(Labels { { "hostname", "new" }, { "Hostname", "old" } }).hostname, std::string_view("old"));
    }

    // NVLink's errors: the flow-control and data CRC counters, summed, in every generation (the 1.x-compatible names
    // in that profile); replays and recoveries are not read (a replay is a CRC error counted again, a recovery an
    // outage of the link). The increase asked of a server is each counter's, summed with every other label kept.
    void nvlinkErrorSeries()
    {
        for (const auto p : MetricMap::allProfiles) {
            const MetricMap map = MetricMap::profile(p);
            const bool compat = p == MetricMap::Profile::Compat1x;
            const std::string flit
                = compat ? "dcgm_nvlink_flit_crc_error_count_total" : "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL";
            const std::string data
                = compat ? "dcgm_nvlink_data_crc_error_count_total" : "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL";
            QCOMPARE(map.seriesNames(MetricId::NvlinkErrors), (std::vector<std::string> { flit, data }));
            QCOMPARE(map.seriesName(MetricId::NvlinkErrors), flit);
            const auto first = map.metric(flit);
            const auto second = map.metric(data);
            QVERIFY(first && second);
            QCOMPARE(first->id, MetricId::NvlinkErrors);
            QCOMPARE(second->id, MetricId::NvlinkErrors);
            QCOMPARE(int(first->part), 0);
            QCOMPARE(int(second->part), 1);
            QVERIFY(!map.metric("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"));
            QVERIFY(!map.metric("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"));
            const auto names = MetricMap::allProfileNames();
            QVERIFY(std::find(names.begin(), names.end(), data) != names.end());
            QCOMPARE(map.increaseQuery(MetricId::NvlinkErrors, R"({hostname=~"a|b"})"),
                "sum without (fleetscope_part) (label_replace(increase(" + flit
                    + R"({hostname=~"a|b"}[5m]), "fleetscope_part", "0", "", "") or label_replace(increase()" + data
                    + R"({hostname=~"a|b"}[5m]), "fleetscope_part", "1", "", ""))" + ")");
        }
        const MetricMap map = MetricMap::profile(MetricMap::Profile::Gen483);
        QCOMPARE(map.increaseQuery(MetricId::EccDbe, ""), std::string("increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[5m])"));
        QCOMPARE(map.seriesNames(MetricId::EccDbe), std::vector<std::string> { "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" });
        QVERIFY(map.seriesNames(MetricId::HealthState).empty());
        // Chosen from the names present, a generation keeps its second series; a site's map reads what it lists.
        std::vector<std::string> adopted;
        const auto chosen = MetricMap::choose(
            { "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL" }, "hostname", &adopted);
        QCOMPARE(chosen.metric("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL")->part, uint8_t { 1 });
        MetricMap site;
        std::string error;
        QVERIFY2(MetricMap::parse("DCGM_FI_DEV_GPU_TEMP = gpu_temp\nDCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL = "
                                  "nvlink_errors\n",
                     &site, &error),
            error.c_str());
        QCOMPARE(site.seriesNames(MetricId::NvlinkErrors),
            std::vector<std::string> { "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL" });
        QVERIFY(!site.metric("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"));
        // A site's map may give nvlink_errors two series (4.9's renamed fields, say), summed; no other metric.
        QVERIFY2(MetricMap::parse("DCGM_FI_DEV_GPU_TEMP = gpu_temp\nsite_nvlink_flit = nvlink_errors\n"
                                  "site_nvlink_data = nvlink_errors\n",
                     &site, &error),
            error.c_str());
        QCOMPARE(site.seriesNames(MetricId::NvlinkErrors),
            (std::vector<std::string> { "site_nvlink_flit", "site_nvlink_data" }));
        QCOMPARE(site.metric("site_nvlink_data")->part, uint8_t { 1 });
    }

    // node_exporter's InfiniBand series and the facility's in every profile (dcgm-exporter's generation does not name
    // them), what each is of, the labels a push's series carries them under, the node from the scrape target, and a
    // site's map: transmit wait keeps the tick conversion unless the line gives its own.
    void fabricAndFacilitySeries()
    {
        for (const auto p : MetricMap::allProfiles) {
            const auto map = MetricMap::profile(p);
            QCOMPARE(map.seriesName(MetricId::RailLinkState), std::string("node_infiniband_state_id"));
            QCOMPARE(map.seriesName(MetricId::RailSymbolErrors), std::string("node_infiniband_symbol_error_total"));
            QCOMPARE(map.seriesName(MetricId::CoolantFlow), std::string("fleetscope_coolant_flow_lpm"));
            const auto wait = map.metric("node_infiniband_port_transmit_wait_total");
            QVERIFY(wait);
            QCOMPARE(wait->id, MetricId::RailTransmitWait);
            QCOMPARE(wait->conversion.apply(6.25e9), 100.0); // a second of ticks a second: stalled all the time
            QVERIFY(map.seriesName(MetricId::HealthState).empty());
        }
        QCOMPARE(MetricMap::scopeOf(MetricId::GpuTemp), MetricMap::Scope::Gpu);
        QCOMPARE(MetricMap::scopeOf(MetricId::RailTransmitWait), MetricMap::Scope::Nic);
        QCOMPARE(MetricMap::scopeOf(MetricId::LeakDetected), MetricMap::Scope::Rack);
        QCOMPARE(MetricMap::planeValue(MetricId::RailLinkState, 4), 1.0);
        QCOMPARE(MetricMap::planeValue(MetricId::RailLinkState, 1), 0.0);
        QCOMPARE(MetricMap::planeValue(MetricId::RailLinkState, 5), 0.0); // act defer is not up
        QVERIFY(std::isnan(MetricMap::planeValue(MetricId::RailLinkState, std::nan(""))));
        QCOMPARE(MetricMap::planeValue(MetricId::GpuTemp, 4), 4.0);

        const MetricMap map = MetricMap::profile(MetricMap::Profile::Gen483);
        using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
        const auto id = map.identify(Labels { { "__name__", "node_infiniband_state_id" }, { "device", "mlx5_3" },
            { "port", "1" }, { "instance", "gpu-a001:9100" }, { "rack", "k1" } });
        QCOMPARE(id.nic, std::string_view("mlx5_3"));
        QCOMPARE(id.instance, std::string_view("gpu-a001:9100"));
        QCOMPARE(id.rack, std::string_view("k1"));
        QVERIFY(id.hostname.empty());
        QCOMPARE(MetricMap::hostOf({}, "gpu-a001:9100"), std::string_view("gpu-a001"));
        QCOMPARE(MetricMap::hostOf({}, "gpu-a001"), std::string_view("gpu-a001"));
        QCOMPARE(MetricMap::hostOf({}, "[fd00::1]:9100"), std::string_view("fd00::1"));
        QCOMPARE(MetricMap::hostOf({}, "fd00::1"), std::string_view("fd00::1")); // an IPv6 address without a port
        QCOMPARE(MetricMap::hostOf("node-7", "gpu-a001:9100"), std::string_view("node-7"));

        MetricMap site;
        std::string error;
        QVERIFY2(MetricMap::parse("DCGM_FI_DEV_GPU_TEMP = gpu_temp\n"
                                  "node_infiniband_port_transmit_wait_total = rail_transmit_wait\n"
                                  "site_xmit_wait = rail_transmit_wait\n",
                     &site, &error)
                == false,
            "one series per metric");
        QVERIFY2(MetricMap::parse("DCGM_FI_DEV_GPU_TEMP = gpu_temp\n"
                                  "node_infiniband_port_transmit_wait_total = rail_transmit_wait\n"
                                  "site_leak = leak\n",
                     &site, &error),
            error.c_str());
        QCOMPARE(site.conversion(MetricId::RailTransmitWait).scale, MetricMap::transmitWaitScale);
        QCOMPARE(site.seriesName(MetricId::LeakDetected), std::string("site_leak"));
        QVERIFY(site.seriesName(MetricId::RailLinkState).empty()); // left out: no data
        QVERIFY2(MetricMap::parse("DCGM_FI_DEV_GPU_TEMP = gpu_temp\n"
                                  "node_infiniband_port_transmit_wait_total = rail_transmit_wait * 2e-8\n",
                     &site, &error),
            error.c_str());
        QCOMPARE(site.conversion(MetricId::RailTransmitWait).scale, 2e-8);
    }
};

QTEST_GUILESS_MAIN(TestPrometheusGenerations)
#include "tst_prometheus_generations.moc"
