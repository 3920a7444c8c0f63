// SPDX-License-Identifier: Apache-2.0
// The incident folder on frames and events built by hand over simulated fleets' domains: a leaf's, a cooling unit's,
// a coolant loop's and a PDU's symptoms each folded into one incident naming that domain; single faults left alone;
// the incident's life (updates whole, closing after its symptoms clear); bounded with thousands of symptoms at once.
#include "analytics/incidentfolder.h"

#include <QtTest>

#include <algorithm>
#include <limits>
#include <numeric>

using namespace fleetscope::backend;

namespace {
constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
constexpr uint32_t thermal = 0x20;
constexpr uint32_t powerCap = 0x4;

// A folder over a fleet, fed one frame a second: every plane "no data" but the links up and nothing throttling.
class Rig
{
public:
    explicit Rig(FleetShape fleet, const IncidentFolder::Options &options = {})
        : shape(std::move(fleet))
        , folder(shape, options)
    {
        frame.health.assign(shape.gpuCount, fleetscope::health::Ok);
        for (auto &plane : frame.planes) {
            plane.assign(shape.gpuCount, noValue);
        }
        std::fill(plane(MetricId::RailLinkState).begin(), plane(MetricId::RailLinkState).end(), 1.0F);
        std::fill(plane(MetricId::ThrottleReasons).begin(), plane(MetricId::ThrottleReasons).end(), 0.0F);
    }
    Rig(const Rig &) = delete;
    Rig &operator=(const Rig &) = delete;

    std::vector<float> &plane(MetricId id) { return frame.planes[static_cast<size_t>(id)]; }

    void step(std::vector<FleetEvent> events = {})
    {
        folder.judge(frame, jobs, now, &events);
        for (auto &e : events) {
            if (e.kind == FleetEvent::Kind::IncidentOpen || e.kind == FleetEvent::Kind::IncidentUpdate
                || e.kind == FleetEvent::Kind::IncidentClose) {
                QVERIFY(e.incident != nullptr);
                incidents.push_back(std::move(e));
            }
        }
        now += 1.0;
    }
    void run(int seconds)
    {
        for (int i = 0; i < seconds; ++i) {
            step();
        }
    }
    std::vector<FleetEvent> of(FleetEvent::Kind kind) const
    {
        std::vector<FleetEvent> out;
        std::copy_if(incidents.begin(), incidents.end(), std::back_inserter(out),
            [&](const FleetEvent &e) { return e.kind == kind; });
        return out;
    }
    void nodeDown(uint32_t node)
    {
        const auto &n = shape.nodes[node];
        std::fill_n(frame.health.begin() + n.firstGpu, n.gpuCount, fleetscope::health::Offline);
    }

    FleetShape shape;
    IncidentFolder folder;
    Frame frame;
    std::vector<JobInfo> jobs;
    double now = 1000;
    std::vector<FleetEvent> incidents;
};

uint32_t domainNamed(const FleetShape &shape, const std::string &name)
{
    for (uint32_t d = 0; d < shape.domains.size(); ++d) {
        if (shape.domains[d].name == name) {
            return d;
        }
    }
    qFatal("no domain %s", name.c_str());
    return 0;
}

// The GPUs a domain serves, ascending.
std::vector<uint32_t> gpusOf(const FleetShape &shape, uint32_t domain)
{
    std::vector<uint32_t> out;
    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
        const auto ds = shape.domainsOfGpu(g);
        if (std::find(ds.begin(), ds.end(), domain) != ds.end()) {
            out.push_back(g);
        }
    }
    return out;
}

uint32_t runsTotal(const Incident &incident)
{
    uint32_t n = 0;
    for (const auto &run : incident.gpuRuns) {
        n += run.second;
    }
    return n;
}

JobInfo job(uint64_t id, uint32_t first, uint32_t count)
{
    JobInfo j;
    j.id = id;
    j.name = "job-" + std::to_string(id);
    j.firstGpu = first;
    j.gpuCount = count;
    return j;
}
} // namespace

class TestIncidents : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aLeafLosingItsLinksIsOneIncidentNamingTheLeaf()
    {
        Rig rig(FleetShape::forGpuCount(4096));
        const uint32_t leaf = domainNamed(rig.shape, "su03-l5");
        const auto gpus = gpusOf(rig.shape, leaf);
        QCOMPARE(gpus.size(), size_t(32));
        // Four jobs on the scalable unit's nodes, and one elsewhere that the leaf does not reach.
        const uint32_t first = rig.shape.nodes[64].firstGpu;
        for (uint64_t j = 0; j < 4; ++j) {
            rig.jobs.push_back(job(j + 1, first + static_cast<uint32_t>(j) * 64, 64));
        }
        rig.jobs.push_back(job(9, 0, 256));
        rig.run(5);
        for (size_t i = 0; i + 1 < gpus.size(); ++i) {
            rig.plane(MetricId::RailLinkState)[gpus[i]] = 0.0F;
        }
        rig.run(45);

        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        const FleetEvent &e = opened.front();
        const Incident &incident = *e.incident;
        QCOMPARE(incident.domain, int64_t(leaf)); // not its scalable unit, not its spine plane
        QCOMPARE(incident.cause, std::string("network"));
        QCOMPARE(incident.gpuCount, 31U);
        QCOMPARE(runsTotal(incident), 31U);
        QCOMPARE(incident.jobs.size(), size_t(4));
        QCOMPARE(incident.startSeconds, 1005.0);
        QCOMPARE(e.severity, FleetEvent::Severity::Critical);
        QCOMPARE(e.gpu, int64_t(-1));
        QCOMPARE(e.node, int64_t(-1));
        QCOMPARE(e.text, std::string("Leaf su03-l5 down: 31 GPUs lost their link, 4 jobs stalled"));
        QCOMPARE(incident.evidence,
            std::string("31 of 32 GPUs behind leaf su03-l5 lost their link within 1 s; no other leaf did"));
        // Opened within the fold window of the first onset.
        QVERIFY(e.timeSeconds - incident.startSeconds <= IncidentFolder::Options {}.foldSeconds + 1);
        QCOMPARE(rig.folder.openCount(), size_t(1));
    }

    void aCoolingUnitsRacksThrottlingNameTheCoolingUnit()
    {
        Rig rig(FleetShape::forGpuCount(10240));
        const uint32_t unit = domainNamed(rig.shape, "r02-crah1");
        const auto gpus = gpusOf(rig.shape, unit);
        QCOMPARE(gpus.size(), size_t(8 * 64));
        rig.run(5);
        // A heat front along the unit's racks, one rack every 20 s; the rack's GPUs at full load throttle (most).
        uint32_t throttled = 0;
        for (uint32_t rack = 0; rack < 8; ++rack) {
            for (uint32_t i = 0; i < 64; ++i) {
                if (i % 8 != 7) {
                    rig.plane(MetricId::ThrottleReasons)[gpus[rack * 64 + i]] = thermal;
                    ++throttled;
                }
            }
            rig.run(20);
        }
        rig.run(20);
        std::vector<FleetEvent> opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        QCOMPARE(opened.front().incident->domain, int64_t(unit));
        QCOMPARE(opened.front().incident->cause, std::string("cooling"));
        QCOMPARE(opened.front().severity, FleetEvent::Severity::Warning);
        QVERIFY(opened.front().timeSeconds - 1005.0 <= IncidentFolder::Options {}.foldSeconds + 1);
        const auto updates = rig.of(FleetEvent::Kind::IncidentUpdate);
        QVERIFY(!updates.empty());
        QCOMPARE(updates.back().incident->gpuCount, throttled);
        QCOMPARE(updates.back().incident->evidence.rfind("Cooling unit r02-crah1: 8 racks warming, 448 of 512 GPUs "
                                                         "throttling within",
                     0),
            size_t(0));
    }

    void aCoolantLoopsRacksWarmingNameTheLoop()
    {
        Rig rig(FleetShape::forGpuCount(72 * 64, 1, Hardware::Gb200Nvl72));
        const uint32_t loop = domainNamed(rig.shape, "r01-cdu1-b");
        const auto gpus = gpusOf(rig.shape, loop);
        QCOMPARE(gpus.size(), size_t(4 * 72));
        auto &supply = rig.plane(MetricId::CoolantSupplyTemp);
        std::fill(supply.begin(), supply.end(), 30.0F);
        rig.run(120);
        QVERIFY(rig.incidents.empty());
        for (size_t i = 0; i < gpus.size(); ++i) {
            supply[gpus[i]] = 39.0F;
            if (i % 2 == 0) {
                rig.plane(MetricId::ThrottleReasons)[gpus[i]] = thermal;
            }
        }
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        const Incident &incident = *opened.front().incident;
        QCOMPARE(incident.domain, int64_t(loop)); // not the CDU, not the other loop
        QCOMPARE(incident.gpuCount, uint32_t(gpus.size()));
        QVERIFY2(incident.evidence.find(
                     "Coolant loop r01-cdu1-b: 4 racks warming (supply +9 °C), 144 of 288 GPUs throttling")
                != std::string::npos,
            incident.evidence.c_str());
        QCOMPARE(opened.front().text, std::string("Coolant loop r01-cdu1-b failing: 144 GPUs throttling"));
    }

    void aLeakingTrayNamesItsRack()
    {
        Rig rig(FleetShape::forGpuCount(72 * 64, 1, Hardware::Gb200Nvl72));
        const uint32_t rack = domainNamed(rig.shape, "r01-k02-nvl");
        const uint32_t tray = rig.shape.racks[1].firstNode + 6;
        rig.run(3);
        // The tray's sensor trips; it and the trays above and below are powered off.
        const auto &leaking = rig.shape.nodes[tray];
        std::fill_n(rig.plane(MetricId::LeakDetected).begin() + leaking.firstGpu, leaking.gpuCount, 1.0F);
        for (uint32_t n = tray - 1; n <= tray + 1; ++n) {
            rig.nodeDown(n);
        }
        rig.run(20);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1)); // the trays down are the leak's, not a power incident
        const Incident &incident = *opened.front().incident;
        QCOMPARE(incident.domain, int64_t(rack));
        QCOMPARE(incident.cause, std::string("cooling")); // not the NVLink domain's kind: what it is about
        QCOMPARE(incident.gpuCount, 12U);
        QCOMPARE(opened.front().severity, FleetEvent::Severity::Critical);
        QCOMPARE(opened.front().text, std::string("Leak in NVLink domain r01-k02-nvl: 12 GPUs hit, 12 down"));
        QVERIFY2(incident.evidence.find("leak sensors on 1 tray tripped, 3 nodes down") != std::string::npos,
            incident.evidence.c_str());
    }

    void aHeatFrontsFirstNodesNameTheCoolingUnit()
    {
        Rig rig(FleetShape::forGpuCount(10240));
        const auto gpus = gpusOf(rig.shape, domainNamed(rig.shape, "r04-crah1"));
        const auto other = gpusOf(rig.shape, domainNamed(rig.shape, "r05-crah1"));
        rig.run(2);
        // Under one unit, the hottest GPU of four nodes begins to throttle within a minute: the unit.
        for (uint32_t k = 0; k < 4; ++k) {
            rig.plane(MetricId::ThrottleReasons)[gpus[k * 8 + 7]] = thermal;
            rig.run(15);
        }
        auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QVERIFY(!opened.empty());
        QCOMPARE(opened.back().incident->domain, int64_t(domainNamed(rig.shape, "r04-crah1")));
        // Under another, four GPUs of four nodes that began to throttle ten minutes apart stay their nodes' own.
        const size_t before = opened.size();
        for (uint32_t k = 0; k < 4; ++k) {
            rig.plane(MetricId::ThrottleReasons)[other[k * 8 + 7]] = thermal;
            rig.run(600);
        }
        opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), before + 4);
        for (size_t i = before; i < opened.size(); ++i) {
            QCOMPARE(opened[i].incident->cause, std::string("gpu"));
        }
    }

    void aDomainIncidentTakesOverTheNodeIncidentsItExplains()
    {
        Rig rig(FleetShape::forGpuCount(10240));
        const uint32_t unit = domainNamed(rig.shape, "r03-crah2");
        const auto gpus = gpusOf(rig.shape, unit);
        rig.run(2);
        // One node's GPUs throttle first: too few to name the unit (3% of 512), so the node's own incident.
        for (uint32_t i = 0; i < 8; ++i) {
            rig.plane(MetricId::ThrottleReasons)[gpus[i]] = thermal;
        }
        rig.run(30);
        auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        QCOMPARE(opened.front().incident->cause, std::string("node"));
        const uint64_t nodeIncident = opened.front().incident->id;
        // Then three racks.
        for (uint32_t i = 8; i < 3 * 64; ++i) {
            rig.plane(MetricId::ThrottleReasons)[gpus[i]] = thermal;
        }
        rig.run(20);
        opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(2));
        QCOMPARE(opened.back().incident->domain, int64_t(unit));
        QCOMPARE(opened.back().incident->gpuCount, 3U * 64U); // the first node's GPUs too
        const auto closed = rig.of(FleetEvent::Kind::IncidentClose);
        QCOMPARE(closed.size(), size_t(1));
        QCOMPARE(closed.front().incident->id, nodeIncident);
        QVERIFY2(
            closed.front().incident->evidence.find("folded into incident " + std::to_string(opened.back().incident->id))
                != std::string::npos,
            closed.front().incident->evidence.c_str());
        QCOMPARE(rig.folder.openCount(), size_t(1));
    }

    // A rack's two PDUs serve the same GPUs, but not the same nodes alone: the 4th node is corded to side A only, the
    // 8th to B (FleetShape::cordsOf). A trip brakes the nodes corded to both sides and takes down those corded to the
    // tripped side alone, which names it; with no such node down the GPUs cannot tell the sides apart, and the
    // evidence says so.
    void aPduTripNamesThePduThatTripped_data()
    {
        QTest::addColumn<QString>("tripped");
        QTest::addColumn<QString>("named");
        QTest::addColumn<QString>("told");
        QTest::newRow("side a") << QStringLiteral("r01-k02-a") << QStringLiteral("r01-k02-a")
                                << QStringLiteral("r01-k02-n04, corded to it alone, went down, and no node corded to "
                                                  "PDU r01-k02-b alone did");
        QTest::newRow("side b") << QStringLiteral("r01-k02-b") << QStringLiteral("r01-k02-b")
                                << QStringLiteral("r01-k02-n08, corded to it alone, went down, and no node corded to "
                                                  "PDU r01-k02-a alone did");
        QTest::newRow("none tells") << QString() << QStringLiteral("r01-k02-a")
                                    << QStringLiteral(
                                           "PDU r01-k02-b serves the same GPUs, which cannot tell the two apart");
    }
    void aPduTripNamesThePduThatTripped()
    {
        QFETCH(QString, tripped);
        QFETCH(QString, named);
        QFETCH(QString, told);
        Rig rig(FleetShape::forGpuCount(4096));
        const uint32_t a = domainNamed(rig.shape, "r01-k02-a");
        const uint32_t b = domainNamed(rig.shape, "r01-k02-b");
        const auto gpus = gpusOf(rig.shape, a);
        QCOMPARE(gpus.size(), size_t(64));
        QCOMPARE(gpusOf(rig.shape, b), gpus);
        const uint32_t firstNode = rig.shape.nodeOfGpu[gpus.front()];
        QCOMPARE(rig.shape.cordsOf(firstNode + 3), std::vector<uint32_t> { a });
        QCOMPARE(rig.shape.cordsOf(firstNode + 7), std::vector<uint32_t> { b });
        QCOMPARE(rig.shape.cordsOf(firstNode), (std::vector<uint32_t> { a, b }));
        rig.jobs.push_back(job(1, gpus.front(), 32));
        rig.jobs.push_back(job(2, gpus.front() + 32, 32));
        rig.run(3);
        // The trip: as the simulator's, each node corded to it braked, or down when it is its only PDU. Without a side,
        // every node braked and one corded to both down (its own fault, or its exporter): nothing tells.
        const uint32_t side
            = tripped.isEmpty() ? std::numeric_limits<uint32_t>::max() : domainNamed(rig.shape, tripped.toStdString());
        int down = 0;
        for (uint32_t n = firstNode; n < firstNode + 8; ++n) {
            const auto cords = rig.shape.cordsOf(n);
            const bool fed = tripped.isEmpty() || std::find(cords.begin(), cords.end(), side) != cords.end();
            if (tripped.isEmpty() ? n == firstNode + 1 : cords == std::vector<uint32_t> { side }) {
                rig.nodeDown(n);
                ++down;
            } else if (fed) {
                const auto &node = rig.shape.nodes[n];
                std::fill_n(rig.plane(MetricId::ThrottleReasons).begin() + node.firstGpu, node.gpuCount, powerCap);
            }
        }
        QCOMPARE(down, 1);
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        const Incident &incident = *opened.front().incident;
        QCOMPARE(incident.domain, int64_t(domainNamed(rig.shape, named.toStdString())));
        QCOMPARE(incident.cause, std::string("power"));
        QCOMPARE(incident.gpuCount, tripped.isEmpty() ? 64U : 56U);
        QCOMPARE(opened.front().severity, FleetEvent::Severity::Critical);
        const std::string seen = tripped.isEmpty()
            ? "tripped: 7 nodes power-braked, 1 node down within 1 s; no other PDU did"
            : "tripped: 6 nodes power-braked, 1 node down within 1 s; no other PDU did";
        QVERIFY2(incident.evidence.find(seen) != std::string::npos, incident.evidence.c_str());
        QVERIFY2(incident.evidence.find(told.toStdString()) != std::string::npos, incident.evidence.c_str());
        // Most GPUs hit first: side b spares the 4th node, in job 1.
        QCOMPARE(incident.jobs,
            (tripped.endsWith(QLatin1String("-b")) ? std::vector<uint64_t> { 2, 1 } : std::vector<uint64_t> { 1, 2 }));
    }

    // Nodes corded to both sides down as well as one corded to a side alone: a trip of one side does not explain them,
    // so nothing is told.
    void downNodesOfBothKindsTellNothing()
    {
        Rig rig(FleetShape::forGpuCount(4096));
        const uint32_t a = domainNamed(rig.shape, "r01-k02-a");
        const auto gpus = gpusOf(rig.shape, a);
        const uint32_t firstNode = rig.shape.nodeOfGpu[gpus.front()];
        rig.run(3);
        for (const uint32_t g : gpus) {
            rig.plane(MetricId::ThrottleReasons)[g] = powerCap;
        }
        rig.nodeDown(firstNode + 7); // corded to b alone
        rig.nodeDown(firstNode + 2); // to both
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        const Incident &incident = *opened.front().incident;
        QCOMPARE(incident.domain, int64_t(a));
        QVERIFY2(incident.evidence.find("cannot tell the two apart") != std::string::npos, incident.evidence.c_str());
    }

    void aSingleGpusEccErrorStaysItsOwn()
    {
        Rig rig(FleetShape::forGpuCount(4096));
        rig.run(3);
        FleetEvent ecc(0, FleetEvent::Kind::EccDoubleBit, FleetEvent::Severity::Critical, 100, rig.shape.nodeOfGpu[100],
            "r01-k02-n05 GPU 4: double-bit ECC error");
        rig.step({ ecc });
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        QCOMPARE(opened.front().incident->domain, int64_t(-1));
        QCOMPARE(opened.front().incident->cause, std::string("gpu"));
        QCOMPARE(opened.front().gpu, int64_t(100));
        QCOMPARE(opened.front().node, int64_t(rig.shape.nodeOfGpu[100]));
        QCOMPARE(opened.front().severity, FleetEvent::Severity::Critical);
        QCOMPARE(opened.front().text, ecc.text);
    }

    void aSingleNodeDownStaysItsOwn()
    {
        Rig rig(FleetShape::forGpuCount(4096));
        rig.run(3);
        rig.nodeDown(7);
        rig.step({ FleetEvent(0, FleetEvent::Kind::NodeDown, FleetEvent::Severity::Critical, -1, 7,
            rig.shape.nodes[7].hostname + " is down") });
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        QCOMPARE(opened.front().incident->cause, std::string("node"));
        QCOMPARE(opened.front().incident->domain, int64_t(-1));
        QCOMPARE(opened.front().incident->gpuCount, 8U);
        QCOMPARE(opened.front().node, int64_t(7));
        QCOMPARE(opened.front().gpu, int64_t(-1));
        QCOMPARE(opened.front().text, rig.shape.nodes[7].hostname + " down");
    }

    void twoUnrelatedSingleFaultsAreNotFoldedIntoTheirFeed()
    {
        Rig rig(FleetShape::forGpuCount(4096));
        rig.run(3);
        // Two nodes of different racks of one row (one busway, one feed), and a GPU's ECC error, all at once.
        rig.nodeDown(1);
        rig.nodeDown(20);
        rig.step({ FleetEvent(
            0, FleetEvent::Kind::EccDoubleBit, FleetEvent::Severity::Critical, 300, rig.shape.nodeOfGpu[300], "ecc") });
        rig.run(40);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(3));
        for (const auto &e : opened) {
            QCOMPARE(e.incident->domain, int64_t(-1));
        }
    }

    void anIncidentClosesOnceItsSymptomsHaveCleared()
    {
        IncidentFolder::Options options;
        Rig rig(FleetShape::forGpuCount(4096), options);
        const auto gpus = gpusOf(rig.shape, domainNamed(rig.shape, "su02-l0"));
        for (const uint32_t g : gpus) {
            rig.plane(MetricId::RailLinkState)[g] = 0.0F;
        }
        rig.run(60);
        QCOMPARE(rig.of(FleetEvent::Kind::IncidentOpen).size(), size_t(1));
        for (const uint32_t g : gpus) {
            rig.plane(MetricId::RailLinkState)[g] = 1.0F;
        }
        const double cleared = rig.now;
        // A link back for a moment and down again holds it open.
        rig.run(30);
        rig.plane(MetricId::RailLinkState)[gpus[3]] = 0.0F;
        rig.run(2);
        rig.plane(MetricId::RailLinkState)[gpus[3]] = 1.0F;
        const double clearedAgain = rig.now;
        rig.run(static_cast<int>(options.clearSeconds) - 2);
        QVERIFY(rig.of(FleetEvent::Kind::IncidentClose).empty());
        rig.run(5);
        const auto closed = rig.of(FleetEvent::Kind::IncidentClose);
        QCOMPARE(closed.size(), size_t(1));
        QVERIFY(closed.front().timeSeconds >= clearedAgain + options.clearSeconds);
        QVERIFY(closed.front().timeSeconds > cleared + options.clearSeconds);
        QCOMPARE(closed.front().incident->id, rig.of(FleetEvent::Kind::IncidentOpen).front().incident->id);
        QCOMPARE(closed.front().incident->gpuCount, 32U);
        QCOMPARE(rig.folder.openCount(), size_t(0));
        // The same leaf again is a new incident.
        for (size_t i = 0; i < 20; ++i) {
            rig.plane(MetricId::RailLinkState)[gpus[i]] = 0.0F;
        }
        rig.run(40);
        QCOMPARE(rig.of(FleetEvent::Kind::IncidentOpen).size(), size_t(2));
    }

    void updatesCarryTheWholeIncident()
    {
        IncidentFolder::Options options;
        Rig rig(FleetShape::forGpuCount(10240), options);
        const uint32_t unit = domainNamed(rig.shape, "r01-crah2");
        const auto gpus = gpusOf(rig.shape, unit);
        // Racks warm one after another, a minute apart; then it holds for 12 minutes.
        for (uint32_t rack = 0; rack < 8; ++rack) {
            for (uint32_t i = 0; i < 64; ++i) {
                rig.plane(MetricId::ThrottleReasons)[gpus[rack * 64 + i]] = thermal;
            }
            rig.run(60);
        }
        rig.run(12 * 60);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        QCOMPARE(opened.size(), size_t(1));
        const auto updates = rig.of(FleetEvent::Kind::IncidentUpdate);
        QVERIFY(updates.size() >= 7 + 2);
        double last = opened.front().timeSeconds;
        uint32_t lastCount = opened.front().incident->gpuCount;
        for (const auto &u : updates) {
            const Incident &incident = *u.incident;
            QCOMPARE(incident.id, opened.front().incident->id);
            QCOMPARE(incident.domain, int64_t(unit));
            QCOMPARE(runsTotal(incident), incident.gpuCount);
            QVERIFY(incident.gpuCount >= lastCount);
            QVERIFY(!incident.evidence.empty());
            QCOMPARE(incident.startSeconds, opened.front().incident->startSeconds);
            QVERIFY(u.timeSeconds - last >= options.minUpdateSeconds);
            QVERIFY(u.timeSeconds - last <= options.refreshSeconds);
            last = u.timeSeconds;
            lastCount = incident.gpuCount;
        }
        QCOMPARE(lastCount, 512U);
        QVERIFY(rig.now - last <= options.refreshSeconds);
    }

    void memoryStaysBoundedWithThousandsOfSymptoms()
    {
        IncidentFolder::Options options;
        options.maxOpen = 500;
        Rig rig(FleetShape::forGpuCount(65536), options);
        rig.run(2);
        // Every GPU throttling for heat, and one GPU of every other node with a double-bit ECC error, at once.
        auto &throttle = rig.plane(MetricId::ThrottleReasons);
        std::fill(throttle.begin(), throttle.end(), static_cast<float>(thermal));
        std::vector<FleetEvent> errors;
        for (uint32_t node = 0; node < rig.shape.nodes.size(); node += 2) {
            const uint32_t g = rig.shape.nodes[node].firstGpu + 3;
            errors.emplace_back(0, FleetEvent::Kind::EccDoubleBit, FleetEvent::Severity::Critical, g, node, "ecc");
        }
        rig.step(errors);
        rig.run(40);
        QVERIFY(rig.folder.openCount() <= options.maxOpen);
        QVERIFY(rig.folder.dropped() > 0);
        const auto opened = rig.of(FleetEvent::Kind::IncidentOpen);
        const auto domainIncidents
            = std::count_if(opened.begin(), opened.end(), [](const FleetEvent &e) { return e.incident->domain >= 0; });
        size_t units = 0;
        for (const auto &d : rig.shape.domains) {
            units += d.kind == DomainKind::CoolingUnit ? 1 : 0;
        }
        QCOMPARE(size_t(domainIncidents), units); // the heat, folded per cooling unit
        QVERIFY2(rig.folder.heldBytes() < 8U << 20U, std::to_string(rig.folder.heldBytes()).c_str());
        // It all clears and closes; nothing is left held.
        std::fill(throttle.begin(), throttle.end(), 0.0F);
        rig.run(static_cast<int>(options.errorSymptomSeconds + options.clearSeconds) + 5);
        QCOMPARE(rig.folder.openCount(), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestIncidents)
#include "tst_incidents.moc"
