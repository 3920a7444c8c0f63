// SPDX-License-Identifier: Apache-2.0
// How pushed samples become frames (WindowFolder: windows, order, duplicates, age, counters, jobs and their churn,
// times at the ends of int64) and what the remote-write decoder refuses, without a network; the receiver over HTTP is
// tst_remotewrite.
#include "remotewrite/remotewritedecoder.h"
#include "remotewrite/windowfolder.h"
#include "remotewritesender.h"
#include "sim/exporterpage.h"
#include "sim/simulator.h"

#include <QTest>

#include <malloc.h>

#include <cmath>
#include <limits>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;

namespace {

constexpr int64_t base = 1'800'000'000'000; // a window boundary for every window length used here

be::MappedSample sample(uint32_t gpu, be::MetricId metric, int64_t t, double v)
{
    return { gpu, metric, t, v };
}

float valueOf(const be::Frame &frame, be::MetricId id, uint32_t gpu)
{
    return frame.plane(id)[gpu];
}

uint8_t stateOf(const be::Frame &frame, uint32_t gpu)
{
    return health::stateOf(frame.health[gpu]);
}

be::RemoteWriteRefusal refusalOf(const std::string &body,
    const be::RemoteWriteHeaders &headers = { "snappy", "", "0.1.0" }, const be::RemoteWriteLimits &limits = {})
{
    std::string scratch;
    be::RemoteWriteRefusal refusal;
    if (!be::unpackRemoteWrite(headers, body, limits, &scratch, &refusal)) {
        return refusal;
    }
    be::WriteRequestReader reader(scratch, limits);
    while (reader.next()) { }
    if (!reader.error().empty()) {
        return { 400, reader.error() };
    }
    return {};
}

be::MappedJob jobOn(uint32_t gpu, int64_t timeMs, const char *nameSpace, const char *pod)
{
    fleetscope::backend::PromSample labels;
    labels.nameSpace = nameSpace;
    labels.pod = pod;
    return { gpu, timeMs, be::MappedJob::jobKey(labels) };
}

} // namespace

class TestWindowFolder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Samples of one window become one frame once the window's end + delay has passed; GPUs that sent nothing have
    // no data; the frame's time is the newest sample's.
    void oneWindowOneFrame()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 500, 0, 8 });
        std::vector<be::MappedSample> samples;
        for (uint32_t g = 0; g < 12; ++g) {
            samples.push_back(sample(g, be::MetricId::GpuTemp, base + 100 + g, 40.0 + g));
            samples.push_back(sample(g, be::MetricId::Power, base + 100 + g, 300.5));
        }
        be::WindowFolder::Counts counts;
        folder.add(samples, {}, base + 200, &counts);
        QCOMPARE(counts.accepted, uint64_t { 24 });
        QCOMPARE(folder.nextCloseMs(base + 200), base + 1500);
        be::WindowFolder::Closed closed;
        QVERIFY(!folder.closeNext(base + 1499, &closed));
        QVERIFY(folder.closeNext(base + 1500, &closed));
        QVERIFY(!folder.closeNext(base + 1500, &closed));
        const auto &f = *closed.frame;
        QCOMPARE(f.sampleTimeMs, base + 111);
        for (uint32_t g = 0; g < 16; ++g) {
            if (g < 12) {
                QCOMPARE(valueOf(f, be::MetricId::GpuTemp, g), 40.0F + static_cast<float>(g));
                QCOMPARE(valueOf(f, be::MetricId::Power, g), 300.5F);
                QCOMPARE(stateOf(f, g), health::Ok);
                QVERIFY(std::isnan(valueOf(f, be::MetricId::SmClock, g))); // never sent
            } else {
                QCOMPARE(stateOf(f, g), health::NoData);
                QVERIFY(std::isnan(valueOf(f, be::MetricId::GpuTemp, g)));
            }
        }
        QCOMPARE(closed.gpusReporting, size_t { 12 });
        QCOMPARE(closed.gpusWithoutData, size_t { 4 });
    }

    // In a window the newest sample of a GPU's field wins; an older one is out of order, the same one again (a
    // retry) a duplicate: both dropped and counted. A window already published takes nothing more (too old); a
    // sample two windows ahead of the clock is from the future.
    void orderDuplicatesAgeAndFuture()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 0, 8 });
        be::WindowFolder::Counts counts;
        folder.add({ sample(0, be::MetricId::GpuTemp, base + 300, 50) }, {}, base, &counts);
        folder.add({ sample(0, be::MetricId::GpuTemp, base + 600, 60) }, {}, base, &counts);
        folder.add({ sample(0, be::MetricId::GpuTemp, base + 300, 50) }, {}, base, &counts);
        folder.add({ sample(0, be::MetricId::GpuTemp, base + 600, 61) }, {}, base, &counts);
        folder.add({ sample(1, be::MetricId::GpuTemp, base + 5000, 1) }, {}, base + 1000, &counts);
        folder.add({ sample(1, be::MetricId::GpuTemp, base + 2999, 1) }, {}, base + 1000, &counts);
        // Two scrapes of GPU 2 in one window, each with two fields: the newer one's both win, nothing is a repeat.
        folder.add(
            { sample(2, be::MetricId::GpuTemp, base + 100, 40), sample(2, be::MetricId::Power, base + 100, 300),
                sample(2, be::MetricId::GpuTemp, base + 700, 41), sample(2, be::MetricId::Power, base + 700, 310) },
            {}, base, &counts);
        QCOMPARE(counts.accepted, uint64_t { 7 });
        QCOMPARE(counts.outOfOrder, uint64_t { 1 });
        QCOMPARE(counts.duplicate, uint64_t { 1 });
        QCOMPARE(counts.future, uint64_t { 1 });
        be::WindowFolder::Closed closed;
        QVERIFY(folder.closeNext(base + 1000, &closed));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 0), 60.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 2), 41.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::Power, 2), 310.0F);
        counts = {};
        folder.add({ sample(0, be::MetricId::GpuTemp, base + 900, 70) }, {}, base + 1000, &counts);
        QCOMPARE(counts.tooOld, uint64_t { 1 });
        QCOMPARE(counts.accepted, uint64_t { 0 });
        // The window of base + 2999 comes next; the published one is not published again.
        QVERIFY(!folder.closeNext(base + 2999, &closed));
        QVERIFY(folder.closeNext(base + 3000, &closed));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 1), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 0), 60.0F); // kept: within the grace period
    }

    // A GPU that stops sending keeps its values for the grace period, then has no data; it comes back with its next
    // sample.
    void silentGpuTurnsNoDataAfterGrace()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 2500, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        folder.add({ sample(3, be::MetricId::GpuTemp, base + 10, 55), sample(4, be::MetricId::GpuTemp, base + 10, 56) },
            {}, base, &counts);
        QVERIFY(folder.closeNext(base + 1000, &closed));
        for (int64_t w = 1; w <= 4; ++w) {
            // GPU 4 keeps sending, GPU 3 does not.
            folder.add({ sample(4, be::MetricId::GpuTemp, base + w * 1000 + 10, 56) }, {}, base + w * 1000, &counts);
            QVERIFY(folder.closeNext(base + (w + 1) * 1000, &closed));
            const bool withinGrace = (w + 1) * 1000 - 10 <= 2500;
            QCOMPARE(stateOf(*closed.frame, 3), withinGrace ? health::Ok : health::NoData);
            QCOMPARE(std::isnan(valueOf(*closed.frame, be::MetricId::GpuTemp, 3)), !withinGrace);
            QCOMPARE(stateOf(*closed.frame, 4), health::Ok);
        }
        folder.add({ sample(3, be::MetricId::GpuTemp, base + 5010, 57) }, {}, base + 5000, &counts);
        QVERIFY(folder.closeNext(base + 6000, &closed));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 3), 57.0F);
    }

    // Counters become their increase over the last five minutes (a fall is a reset, counted from zero), the XID gauge
    // its number of changes; health and flags follow, and the events are the Prometheus source's.
    void countersAndXid()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 10000, 0, 600000, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        auto window = [&](int64_t w, double dbe, double xid) {
            folder.add({ sample(2, be::MetricId::GpuTemp, base + w * 10000, 50),
                           sample(2, be::MetricId::EccDbe, base + w * 10000, dbe),
                           sample(2, be::MetricId::XidErrors, base + w * 10000, xid) },
                {}, base + w * 10000, &counts);
            return folder.closeNext(base + (w + 1) * 10000, &closed);
        };
        QVERIFY(window(0, 5, 0));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::EccDbe, 2), 0.0F); // one sample: no increase yet
        QCOMPARE(stateOf(*closed.frame, 2), health::Ok);
        QVERIFY(window(1, 7, 0));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::EccDbe, 2), 2.0F);
        QCOMPARE(stateOf(*closed.frame, 2), health::Critical);
        QVERIFY((closed.frame->health[2] & health::eccFlag) != 0);
        bool dbeEvent = false;
        for (const auto &e : closed.events) {
            dbeEvent |= e.gpu == 2 && e.kind == be::FleetEvent::Kind::EccDoubleBit;
        }
        QVERIFY(dbeEvent);
        QVERIFY(window(2, 1, 79)); // reset to 1: one more; XID 0 -> 79: one change
        QCOMPARE(valueOf(*closed.frame, be::MetricId::EccDbe, 2), 3.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::XidErrors, 2), 1.0F);
        QVERIFY((closed.frame->health[2] & health::xidFlag) != 0);
        bool xidEvent = false;
        for (const auto &e : closed.events) {
            xidEvent |= e.gpu == 2 && e.kind == be::FleetEvent::Kind::Xid;
        }
        QVERIFY(xidEvent);
        QVERIFY(window(3, 1, 79));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::XidErrors, 2), 1.0F);
        // Five minutes on, the increases have left the window.
        QVERIFY(window(33, 1, 79));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::EccDbe, 2), 0.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::XidErrors, 2), 0.0F);
        QCOMPARE(stateOf(*closed.frame, 2), health::Ok);
    }

    // NVLink's errors from two counters (flow-control and data CRC, MetricMap::summedMetrics): the increases of both
    // add up over the five minutes, and each counter's reset is its own: the other's fall is not a reset.
    void nvlinkCountersAreSummed()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 10000, 0, 600000, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        auto window = [&](int64_t w, double flit, double data) {
            auto second = sample(2, be::MetricId::NvlinkErrors, base + w * 10000, data);
            second.part = 1;
            folder.add({ sample(2, be::MetricId::GpuTemp, base + w * 10000, 50),
                           sample(2, be::MetricId::NvlinkErrors, base + w * 10000, flit), second },
                {}, base + w * 10000, &counts);
            return folder.closeNext(base + (w + 1) * 10000, &closed);
        };
        QVERIFY(window(0, 100, 7));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::NvlinkErrors, 2), 0.0F);
        QCOMPARE(counts.duplicate, uint64_t { 0 }); // two series of one metric at one time: neither a repeat
        QVERIFY(window(1, 103, 9)); // 3 + 2
        QCOMPARE(valueOf(*closed.frame, be::MetricId::NvlinkErrors, 2), 5.0F);
        QVERIFY(window(2, 104, 1)); // + 1, and the data counter reset to 1: + 1
        QCOMPARE(valueOf(*closed.frame, be::MetricId::NvlinkErrors, 2), 7.0F);
        // The data counter alone (an exporter that has only it): its increases count.
        QVERIFY(window(3, std::nan(""), 4));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::NvlinkErrors, 2), 10.0F);
        QVERIFY(window(40, 104, 4));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::NvlinkErrors, 2), 0.0F);
        // A part no metric has is not taken.
        auto stray = sample(2, be::MetricId::GpuTemp, base + 41 * 10000, 99);
        stray.part = 1;
        be::WindowFolder::Counts strayCounts;
        folder.add({ stray }, {}, base + 41 * 10000, &strayCounts);
        QCOMPARE(strayCounts.accepted, uint64_t { 0 });
    }

    // A GPU's fields come from three exporters scraped at their own times: node-exporter's scrape later in a window
    // does not replace the dcgm-exporter's fields of it (nor count as out of order), each source's fields turn to no
    // data on their own, and only the GPU's own make it one with data. Rail counters become 5-minute increases,
    // transmit wait (%-seconds) its rate between two samples.
    void threeSourcesPerGpu()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 10000, 0, 25000, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        auto window = [&](int64_t w, bool dcgm, bool node, double downs, double waitPercentSeconds) {
            const int64_t t = base + w * 10000;
            std::vector<be::MappedSample> samples;
            if (node) {
                samples.push_back(sample(2, be::MetricId::RailLinkState, t + 7000, 1));
                samples.push_back(sample(2, be::MetricId::RailLinkDowns, t + 7000, downs));
                samples.push_back(sample(2, be::MetricId::RailTransmitWait, t + 7000, waitPercentSeconds));
                samples.push_back(sample(2, be::MetricId::CoolantFlow, t + 3000, 90));
            }
            if (dcgm) {
                samples.push_back(sample(2, be::MetricId::GpuTemp, t + 100, 50));
            }
            folder.add(samples, {}, t, &counts);
            return folder.closeNext(t + 10000, &closed);
        };
        QVERIFY(window(0, true, true, 3, 1000));
        QCOMPARE(counts.outOfOrder, uint64_t { 0 });
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 2), 50.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailLinkState, 2), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::CoolantFlow, 2), 90.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailLinkDowns, 2), 0.0F);
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::RailTransmitWait, 2))); // one sample: no rate yet
        QCOMPARE(closed.gpusReporting, size_t { 1 });
        // 10 s later: one more down, 50 %-seconds more wait: 5 % of the time stalled.
        QVERIFY(window(1, true, true, 4, 1050));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailLinkDowns, 2), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailTransmitWait, 2), 5.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 2), 50.0F);
        // The GPU's exporter goes silent: past the grace its fields and its state are no data; the node's stay.
        for (int64_t w = 2; w < 6; ++w) {
            QVERIFY(window(w, false, true, 4, 1050 + 20.0 * static_cast<double>(w - 1)));
        }
        QCOMPARE(stateOf(*closed.frame, 2), health::NoData);
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::GpuTemp, 2)));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailLinkState, 2), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailLinkDowns, 2), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RailTransmitWait, 2), 2.0F);
        QCOMPARE(closed.gpusReporting, size_t { 0 });
        // And the other way round: the node's exporter silent, the GPU's back.
        for (int64_t w = 6; w < 10; ++w) {
            QVERIFY(window(w, true, false, 0, 0));
        }
        QCOMPARE(stateOf(*closed.frame, 2), health::Ok);
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::RailLinkState, 2)));
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::RailLinkDowns, 2)));
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::CoolantFlow, 2)));
        QCOMPARE(counts.outOfOrder, uint64_t { 0 });
        QCOMPARE(counts.duplicate, uint64_t { 0 });
    }

    // The remapped-rows counters as a dcgm-exporter /metrics page writes them (the simulator's), read through the
    // metric map a receiver uses and folded into 5-minute increases; a counter that falls was reset.
    void remappedRowsFromAnExporterPage()
    {
        be::Simulator sim(16, 5);
        sim.step();
        const auto &shape = sim.shape();
        const auto map = be::MetricMap::profile(be::MetricMap::Profile::Gen3x482);
        QCOMPARE(map.seriesName(be::MetricId::RemappedRows), std::string("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"));
        QCOMPARE(map.seriesName(be::MetricId::RemappedRowsCorrectable),
            std::string("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"));
        // The page's remapped-rows lines, with the GPU each names, as samples at t.
        auto samplesOf = [&](uint32_t uncorrectable, uint32_t correctable, int64_t t) {
            auto frame = sim.snapshot();
            auto raw = std::make_shared<be::RawErrorFields>(*frame->rawErrors);
            raw->totals[be::RemappedUncorrectableCount][3] = uncorrectable;
            raw->totals[be::RemappedCorrectableCount][3] = correctable;
            frame->rawErrors = raw;
            const std::string page = be::ExporterPage::render(shape, *frame, {}, {}).text;
            std::vector<be::MappedSample> samples;
            size_t start = 0;
            while (start < page.size()) {
                const size_t end = page.find('\n', start);
                const std::string line = page.substr(start, end - start);
                start = end + 1;
                const size_t brace = line.find('{');
                const size_t close = line.rfind('}');
                if (line.empty() || line[0] == '#' || brace == std::string::npos || close == std::string::npos) {
                    continue;
                }
                const auto mapped = map.metric(line.substr(0, brace));
                if (!mapped
                    || (mapped->id != be::MetricId::RemappedRows
                        && mapped->id != be::MetricId::RemappedRowsCorrectable)) {
                    continue;
                }
                // name{a="x",b="y"} value: the labels split at '",'.
                std::vector<std::pair<std::string, std::string>> labels;
                const std::string body = line.substr(brace + 1, close - brace - 1);
                for (size_t i = 0; i < body.size();) {
                    const size_t eq = body.find("=\"", i);
                    const size_t quote = body.find('"', eq + 2);
                    labels.emplace_back(body.substr(i, eq - i), body.substr(eq + 2, quote - eq - 2));
                    i = quote + 2;
                }
                std::vector<std::pair<std::string_view, std::string_view>> views(labels.begin(), labels.end());
                const auto id = map.identify(views);
                int64_t gpu = -1;
                for (const auto &node : shape.nodes) {
                    if (node.hostname == id.hostname) {
                        gpu = node.firstGpu + std::stoll(std::string(id.gpu));
                    }
                }
                if (gpu < 0) {
                    continue;
                }
                samples.push_back(sample(static_cast<uint32_t>(gpu), mapped->id, t, std::stod(line.substr(close + 2))));
                samples.push_back(sample(static_cast<uint32_t>(gpu), be::MetricId::GpuTemp, t, 50));
            }
            return samples;
        };
        be::WindowFolder folder(shape, { 10000, 0, 600000, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        auto window = [&](int64_t w, uint32_t uncorrectable, uint32_t correctable) {
            folder.add(samplesOf(uncorrectable, correctable, base + w * 10000), {}, base + w * 10000, &counts);
            return folder.closeNext(base + (w + 1) * 10000, &closed);
        };
        QVERIFY(window(0, 2, 10));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRows, 3), 0.0F); // one sample: no increase yet
        QVERIFY(window(1, 3, 14));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRows, 3), 1.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRowsCorrectable, 3), 4.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRows, 4), 0.0F);
        QVERIFY(window(2, 1, 14)); // reset to 1: one more
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRows, 3), 2.0F);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::RemappedRowsCorrectable, 3), 4.0F);
    }

    // NaN, +Inf and DCGM's blanks are no data, counted; a GPU whose only values are such has no data.
    void nanInfAndSentinels()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 0, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        folder.add(
            { sample(0, be::MetricId::GpuTemp, base, std::nan("")), sample(1, be::MetricId::GpuTemp, base, INFINITY),
                sample(2, be::MetricId::GpuTemp, base, 9223372036854775792.0),
                sample(3, be::MetricId::GpuTemp, base, 2147483632.0), sample(3, be::MetricId::Power, base, 250),
                sample(4, be::MetricId::GpuTemp, base, 45) },
            {}, base, &counts);
        QCOMPARE(counts.nanValues, uint64_t { 2 });
        QCOMPARE(counts.sentinelValues, uint64_t { 2 });
        QVERIFY(folder.closeNext(base + 1000, &closed));
        for (uint32_t g : { 0U, 1U, 2U }) {
            QCOMPARE(stateOf(*closed.frame, g), health::NoData);
        }
        QVERIFY(std::isnan(valueOf(*closed.frame, be::MetricId::GpuTemp, 3)));
        QCOMPARE(valueOf(*closed.frame, be::MetricId::Power, 3), 250.0F);
        QCOMPARE(stateOf(*closed.frame, 3), health::Ok);
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 4), 45.0F);
    }

    // At most maxOpenWindows windows are open; a sample for another is counted, not held.
    void openWindowsAreBounded()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 5000, 0, 2 });
        be::WindowFolder::Counts counts;
        folder.add({ sample(0, be::MetricId::GpuTemp, base, 1), sample(0, be::MetricId::GpuTemp, base + 1000, 2),
                       sample(0, be::MetricId::GpuTemp, base + 2000, 3) },
            {}, base + 2000, &counts);
        QCOMPARE(counts.accepted, uint64_t { 2 });
        QCOMPARE(counts.windowsFull, uint64_t { 1 });
        QCOMPARE(folder.openWindows(), size_t { 2 });
    }

    // A sample's time is whatever int64 the sender wrote. The window of INT64_MIN was computed by negating it
    // (undefined; in practice it wrapped to a window far ahead, so such samples were counted as from the future), and
    // its start (index x length) is not an int64 at all. Now times before 1970 are too old, refused before any
    // arithmetic; those past the clock's next window are from the future; the windows around them are untouched.
    void timesAtTheEndsOfInt64()
    {
        constexpr int64_t least = std::numeric_limits<int64_t>::min();
        constexpr int64_t most = std::numeric_limits<int64_t>::max();
        QCOMPARE(be::WindowFolder::windowOf(least, 1000), least / 1000 - 1);
        QCOMPARE(be::WindowFolder::windowOf(least + 1, 1000), least / 1000 - 1);
        QCOMPARE(be::WindowFolder::windowOf(least, 1), least);
        QCOMPARE(be::WindowFolder::windowOf(most, 1000), most / 1000);
        QCOMPARE(be::WindowFolder::windowOf(-1, 1000), int64_t { -1 });
        QCOMPARE(be::WindowFolder::windowOf(-1000, 1000), int64_t { -1 });
        QCOMPARE(be::WindowFolder::windowOf(-1001, 1000), int64_t { -2 });
        QCOMPARE(be::WindowFolder::windowOf(999, 1000), int64_t { 0 });

        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 0, 8 });
        be::WindowFolder::Counts counts;
        folder.add({ sample(0, be::MetricId::GpuTemp, least, 1), sample(1, be::MetricId::GpuTemp, least + 1, 2),
                       sample(2, be::MetricId::GpuTemp, -1, 3), sample(0, be::MetricId::GpuTemp, most, 4),
                       sample(3, be::MetricId::GpuTemp, base + 10, 40) },
            {}, base, &counts);
        QCOMPARE(counts.tooOld, uint64_t { 3 });
        QCOMPARE(counts.future, uint64_t { 1 });
        QCOMPARE(counts.accepted, uint64_t { 1 });
        QCOMPARE(folder.openWindows(), size_t { 1 });
        be::WindowFolder::Closed closed;
        QVERIFY(folder.closeNext(base + 1000, &closed));
        QCOMPARE(closed.frame->sampleTimeMs, base + 10);
        QCOMPARE(closed.gpusReporting, size_t { 1 });
        QCOMPARE(valueOf(*closed.frame, be::MetricId::GpuTemp, 3), 40.0F);

        // After the start too: INT64_MIN is too old, not a sender's backlog of before the start.
        be::WindowFolder started(shape, { 1000, 0, 0, 8, base });
        counts = {};
        started.add({ sample(0, be::MetricId::GpuTemp, least, 1), sample(0, be::MetricId::GpuTemp, base - 5000, 1) },
            {}, base, &counts);
        QCOMPARE(counts.tooOld, uint64_t { 1 });
        QCOMPARE(counts.beforeStart, uint64_t { 1 });
        QCOMPARE(counts.future, uint64_t { 0 });

        // A window length the senders' timestamps suggested past a day is cut to a day: its windows' ends and the
        // delay stay inside int64, a sample's offset in its window inside the int32 kept for it.
        be::WindowFolder longest(shape, { most, most, 0, 8 });
        QCOMPARE(longest.options().windowMs, be::WindowFolder::maxWindowMs);
        QCOMPARE(longest.options().delayMs, be::WindowFolder::maxWindowMs);
        const int64_t day = be::WindowFolder::maxWindowMs;
        QCOMPARE(longest.nextCloseMs(base), (base / day + 1) * day + day);
    }

    // A GPU's job labels make a job; when its GPUs no longer carry them, it ends.
    void jobsFromLabels()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 0, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        for (int64_t w = 0; w < 3; ++w) {
            std::vector<be::MappedSample> samples;
            std::vector<be::MappedJob> jobs;
            for (uint32_t g = 0; g < 8; ++g) {
                samples.push_back(sample(g, be::MetricId::GpuTemp, base + w * 1000, 50));
                if (w < 2) {
                    jobs.push_back(jobOn(g, base + w * 1000, "research", "train-llm-3"));
                }
            }
            folder.add(samples, jobs, base + w * 1000, &counts);
            QVERIFY(folder.closeNext(base + (w + 1) * 1000, &closed));
            const auto list = folder.jobs();
            QCOMPARE(list.size(), size_t { 1 });
            QCOMPARE(list.front().name, std::string("train-llm"));
            QCOMPARE(list.front().owner, std::string("research"));
            QCOMPARE(list.front().gpuList().size(), size_t { 8 });
            QCOMPARE(list.front().endMs != 0, w == 2);
        }
    }

    // A GPU shared by two jobs (two pods' series on one GPU, as with time-slicing) is in both; a GPU not heard from in
    // a window keeps its jobs while within the grace period.
    void aGpuServesTwoJobs()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        be::WindowFolder folder(shape, { 1000, 0, 5000, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        auto jobOn
            = [](uint32_t gpu, int64_t timeMs, const char *pod) { return ::jobOn(gpu, timeMs, "research", pod); };
        // Window 0: GPU 0 serves train-a and eval-b (each series twice: repeats are one), GPU 1 train-a.
        folder.add({ sample(0, be::MetricId::GpuTemp, base, 50), sample(1, be::MetricId::GpuTemp, base, 50) },
            { jobOn(0, base, "train-a-0"), jobOn(0, base, "eval-b-0"), jobOn(0, base, "train-a-0"),
                jobOn(1, base, "train-a-1") },
            base, &counts);
        QVERIFY(folder.closeNext(base + 1000, &closed));
        auto gpusOf = [&](const std::string &name) {
            for (const auto &j : folder.jobs()) {
                if (j.name == name && j.endMs == 0) {
                    return j.gpuList();
                }
            }
            return std::vector<uint32_t> {};
        };
        QCOMPARE(folder.jobs().size(), size_t { 2 });
        QCOMPARE(gpusOf("train-a"), (std::vector<uint32_t> { 0, 1 }));
        QCOMPARE(gpusOf("eval-b"), (std::vector<uint32_t> { 0 }));
        // Window 1: only GPU 1 is heard from (still train-a); GPU 0 keeps both of its jobs.
        folder.add({ sample(1, be::MetricId::GpuTemp, base + 1000, 50) }, { jobOn(1, base + 1000, "train-a-1") },
            base + 1000, &counts);
        QVERIFY(folder.closeNext(base + 2000, &closed));
        QCOMPARE(gpusOf("train-a"), (std::vector<uint32_t> { 0, 1 }));
        QCOMPARE(gpusOf("eval-b"), (std::vector<uint32_t> { 0 }));
        // Window 2: GPU 0 is heard from with train-a only: eval-b has ended.
        folder.add(
            { sample(0, be::MetricId::GpuTemp, base + 2000, 50), sample(1, be::MetricId::GpuTemp, base + 2000, 50) },
            { jobOn(0, base + 2000, "train-a-0"), jobOn(1, base + 2000, "train-a-1") }, base + 2000, &counts);
        QVERIFY(folder.closeNext(base + 3000, &closed));
        QCOMPARE(gpusOf("train-a"), (std::vector<uint32_t> { 0, 1 }));
        QVERIFY(gpusOf("eval-b").empty());
    }

    // Pod churn: a simulated day of 10 s windows on 1,024 GPUs where 116 GPUs start a new pod every window, 1,002,240
    // distinct pods. A job's labels are forgotten jobForgetWindows windows after no GPU holds them, so the table
    // holds the jobs running and the last few windows' (it held every pod ever pushed, and past a million new jobs
    // got no id), and the jobs of the last window are still right.
    void podChurnIsForgotten()
    {
        const auto shape = be::FleetShape::forGpuCount(1024);
        be::WindowFolder folder(shape, { 10000, 0, 0, 8 });
        be::WindowFolder::Counts counts;
        be::WindowFolder::Closed closed;
        std::vector<uint64_t> podOf(1024, 0);
        uint64_t pods = 0;
        size_t most = 0;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
        // Two hours under the sanitizers (a simulated day took over 5 minutes under ThreadSanitizer; mallinfo2 counts
        // nothing there, and the table's bound is reached in the first minutes).
        constexpr int64_t windows = 720;
#else
        constexpr int64_t windows = 8640; // a day
#endif
        size_t heapAtAnHour = 0; // malloc's bytes in use once the first hour's churn is in
        for (int64_t w = 0; w < windows; ++w) {
            const int64_t t = base + w * 10000;
            std::vector<be::MappedSample> samples;
            std::vector<be::MappedJob> jobs;
            for (uint32_t g = 0; g < 1024; ++g) {
                if ((g + w * 116) % 1024 < 116) {
                    podOf[g] = ++pods;
                }
                samples.push_back(sample(g, be::MetricId::GpuTemp, t, 50));
                jobs.push_back(jobOn(
                    g, t, "churn", ("job-" + std::to_string(podOf[g] % 997) + "-" + std::to_string(podOf[g])).c_str()));
            }
            folder.add(samples, jobs, t, &counts);
            QVERIFY(folder.closeNext(t + 10000, &closed));
            most = std::max(most, folder.jobLabelSets());
            if (w == 360) {
                heapAtAnHour = mallinfo2().uordblks + mallinfo2().hblkhd;
            }
        }
        const size_t heapAtTheEnd = mallinfo2().uordblks + mallinfo2().hblkhd;
        // Flat from the first hour on (every pod kept, the heap grew by about 600 bytes a pod: 560 MiB more). Under
        // the sanitizers mallinfo2 counts nothing and this holds trivially; the bound on the table above does not.
        QVERIFY2(heapAtTheEnd <= heapAtAnHour + (size_t { 16 } << 20U),
            qPrintable(QStringLiteral("%1 -> %2 bytes").arg(heapAtAnHour).arg(heapAtTheEnd)));
        QCOMPARE(pods, uint64_t(windows) * 116); // 116 new pods every 10 s: 1,002,240 in a day
        // At most a pod per GPU held, plus those that ended in the last jobForgetWindows windows.
        const size_t bound = 1024 + 116 * (be::WindowFolder::jobForgetWindows + 1);
        QVERIFY2(most <= bound, qPrintable(QStringLiteral("%1 job label sets held (bound %2)").arg(most).arg(bound)));
        size_t running = 0;
        for (const auto &job : folder.jobs()) {
            running += job.endMs == 0 ? job.gpuList().size() : 0;
        }
        QCOMPARE(running, size_t { 1024 });
        qInfo("%llu distinct pods in the simulated time: at most %zu job label sets held at once; heap in use %.1f MiB "
              "after the first hour, %.1f MiB at the end",
            static_cast<unsigned long long>(pods), most, static_cast<double>(heapAtAnHour) / (1 << 20),
            static_cast<double>(heapAtTheEnd) / (1 << 20));
    }

    // The decoder refuses, with a reason and the status the protocol asks for, anything it cannot use.
    void decoderRefusals_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("encoding");
        QTest::addColumn<QByteArray>("type");
        QTest::addColumn<QByteArray>("version");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("reason");
        const std::string good = writeBody({ dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", 0, base, 40) });
        const QByteArray g = QByteArray::fromStdString(good);
        QTest::newRow("valid") << g << QByteArray("snappy") << QByteArray("application/x-protobuf")
                               << QByteArray("0.1.0") << 0 << QString();
        QTest::newRow("no encoding") << g << QByteArray() << QByteArray() << QByteArray("0.1.0") << 400
                                     << QStringLiteral("Content-Encoding");
        QTest::newRow("gzip") << g << QByteArray("gzip") << QByteArray() << QByteArray() << 400
                              << QStringLiteral("snappy");
        QTest::newRow("remote write 2.0")
            << g << QByteArray("snappy") << QByteArray("application/x-protobuf;proto=io.prometheus.write.v2.Request")
            << QByteArray("2.0.0") << 415 << QStringLiteral("1.0");
        QTest::newRow("json") << g << QByteArray("snappy") << QByteArray("application/json") << QByteArray() << 415
                              << QStringLiteral("application/x-protobuf");
        QTest::newRow("version 2") << g << QByteArray("snappy") << QByteArray() << QByteArray("2.0.0") << 400
                                   << QStringLiteral("0.1.x");
        QTest::newRow("not snappy") << QByteArray("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 10)
                                    << QByteArray("snappy") << QByteArray() << QByteArray() << 400
                                    << QStringLiteral("snappy");
        const QByteArray corrupt = g.left(g.size() / 2); // the header's length, half the data
        QTest::newRow("corrupt snappy") << corrupt << QByteArray("snappy") << QByteArray() << QByteArray() << 400
                                        << QStringLiteral("snappy");
        QTest::newRow("garbage protobuf")
            << QByteArray::fromStdString(snappyOf(std::string(64, '\xff'))) << QByteArray("snappy") << QByteArray()
            << QByteArray() << 400 << QStringLiteral("WriteRequest");
        const std::string bytes = protobufOf({ dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", 0, base, 40) });
        QTest::newRow("truncated protobuf")
            << QByteArray::fromStdString(snappyOf(bytes.substr(0, bytes.size() - 5))) << QByteArray("snappy")
            << QByteArray() << QByteArray() << 400 << QStringLiteral("protobuf");
        // A snappy header that claims 2 GiB: refused from the header, before anything is allocated.
        QTest::newRow("huge claimed length") << QByteArray("\xff\xff\xff\xff\x07\x00", 6) << QByteArray("snappy")
                                             << QByteArray() << QByteArray() << 400 << QStringLiteral("decompresses");
        PushedSeries many = dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", 0, base, 40);
        for (int i = 0; i < 1000000; ++i) {
            many.labels.emplace_back("l" + std::to_string(i), "v");
        }
        QTest::newRow("a million labels") << QByteArray::fromStdString(writeBody({ many })) << QByteArray("snappy")
                                          << QByteArray() << QByteArray() << 400 << QStringLiteral("labels");
        QTest::newRow("1 MB label value") << QByteArray::fromStdString(writeBody(
            { dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", 0, base, 40, { { "pod", std::string(1 << 20, 'p') } }) }))
                                          << QByteArray("snappy") << QByteArray() << QByteArray() << 400
                                          << QStringLiteral("value");
        QTest::newRow("label value not UTF-8") << QByteArray::fromStdString(writeBody(
            { dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", 0, base, 40, { { "pod", std::string("\xc3\x28") } }) }))
                                               << QByteArray("snappy") << QByteArray() << QByteArray() << 400
                                               << QStringLiteral("UTF-8");
    }

    void decoderRefusals()
    {
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, encoding);
        QFETCH(QByteArray, type);
        QFETCH(QByteArray, version);
        QFETCH(int, status);
        QFETCH(QString, reason);
        const auto refusal = refusalOf(body.toStdString(),
            { std::string_view(encoding.constData(), static_cast<size_t>(encoding.size())),
                std::string_view(type.constData(), static_cast<size_t>(type.size())),
                std::string_view(version.constData(), static_cast<size_t>(version.size())) });
        QCOMPARE(refusal.status, status);
        QVERIFY2(QString::fromStdString(refusal.reason).contains(reason), refusal.reason.c_str());
    }

    // Ten thousand mutations of a valid request (bytes flipped, cut, repeated, lengths made huge), deterministic: the
    // reader never reads outside the bytes or loops, and either reads the request or refuses it with a reason.
    void mutatedRequestsAreReadOrRefused()
    {
        std::vector<PushedSeries> series;
        for (int g = 0; g < 8; ++g) {
            series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-1", g, base + g, 40 + g, { { "pod", "p-1" } }));
        }
        const std::string valid = protobufOf(series);
        uint64_t state = 0x9e3779b97f4a7c15ULL;
        auto next = [&state] {
            state ^= state << 13U;
            state ^= state >> 7U;
            state ^= state << 17U;
            return state;
        };
        be::RemoteWriteLimits limits;
        size_t read = 0;
        size_t refused = 0;
        for (int i = 0; i < 10000; ++i) {
            std::string bytes = valid;
            const int edits = 1 + static_cast<int>(next() % 4);
            for (int e = 0; e < edits; ++e) {
                const size_t at = next() % bytes.size();
                switch (next() % 4) {
                case 0:
                    bytes[at] = static_cast<char>(next());
                    break;
                case 1:
                    bytes.resize(at);
                    break;
                case 2:
                    bytes.insert(at, bytes.substr(at, next() % 32));
                    break;
                default:
                    bytes[at] = static_cast<char>(0xff); // a varint that goes on, a length far past the end
                    break;
                }
                if (bytes.empty()) {
                    bytes = valid.substr(0, 1);
                }
            }
            be::WriteRequestReader reader(bytes, limits);
            size_t seriesRead = 0;
            while (reader.next()) {
                ++seriesRead;
                QVERIFY(seriesRead <= bytes.size()); // a series takes at least one byte: no endless loop
                for (const auto &label : reader.labels()) {
                    QVERIFY(label.name.data() >= bytes.data()
                        && label.name.data() + label.name.size() <= bytes.data() + bytes.size());
                    QVERIFY(label.value.size() <= bytes.size());
                }
            }
            if (reader.error().empty()) {
                ++read;
            } else {
                ++refused;
            }
        }
        QVERIFY(read > 0);
        QVERIFY(refused > 0);
    }

    void decoderBodyLimit()
    {
        be::RemoteWriteLimits limits;
        limits.maxBodyBytes = 100;
        const auto refusal = refusalOf(std::string(101, 'x'), { "snappy", "", "" }, limits);
        QCOMPARE(refusal.status, 413);
    }
};

QTEST_GUILESS_MAIN(TestWindowFolder)
#include "tst_windowfolder.moc"
