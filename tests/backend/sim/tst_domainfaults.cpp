// SPDX-License-Identifier: Apache-2.0
// Faults at the rates real fleets have, faults of shared domains (each scenario's symptoms on the right GPUs, and its
// ground truth), faults of domains at random, and the fabric and facility planes they show in.
#include "analytics/incidentfolder.h"
#include "sim/domainfaultmodel.h"
#include "sim/simulator.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace fleetscope::backend;
using DomainFault = InjectedFaults::DomainFault;

namespace {
std::set<uint32_t> racksServedBy(const FleetShape &shape, uint32_t domain)
{
    std::set<uint32_t> racks;
    for (uint32_t k = 0; k < shape.racks.size(); ++k) {
        for (const uint32_t d : shape.racks[k].domains) {
            if (d == domain || shape.domains[d].parent == static_cast<int32_t>(domain)) {
                racks.insert(k);
            }
        }
    }
    return racks;
}

uint32_t rackOfGpu(const FleetShape &shape, uint32_t gpu)
{
    return shape.nodes[shape.nodeOfGpu[gpu]].rack;
}

void runUntil(Simulator *sim, double t)
{
    while (sim->nowSeconds() < t) {
        sim->step();
        (void)sim->takeEvents();
    }
}

// The one fault a scenario staged, once it began.
const DomainFault *only(const Simulator &sim)
{
    const auto &faults = sim.injectedFaults().domainFaults();
    return faults.size() == 1 ? &faults.front() : nullptr;
}

bool offline(const Frame &f, uint32_t gpu)
{
    return (f.health[gpu] & 0x07U) == fleetscope::health::Offline;
}

double meanOverRacks(const Frame &f, MetricId m, const FleetShape &shape, const std::set<uint32_t> &racks, bool inside)
{
    double sum = 0;
    int n = 0;
    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
        const float v = f.plane(m)[g];
        if ((racks.count(rackOfGpu(shape, g)) > 0) == inside && !std::isnan(v)) {
            sum += v;
            ++n;
        }
    }
    return n == 0 ? std::nan("") : sum / n;
}
} // namespace

class TestDomainFaults : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // The new scenarios by the names --scenario takes (Scenario::all() feeds the backend's help).
    void scenariosByName()
    {
        const std::pair<const char *, Scenario::Kind> names[] = { { "cdu-failure", Scenario::Kind::CduFailure },
            { "pdu-trip", Scenario::Kind::PduTrip }, { "leaf-down", Scenario::Kind::LeafDown },
            { "link-flap", Scenario::Kind::LinkFlap }, { "leak", Scenario::Kind::Leak } };
        for (const auto &[name, kind] : names) {
            QCOMPARE(Scenario::byName(name), std::optional(kind));
            const auto &all = Scenario::all();
            const auto it
                = std::find_if(all.begin(), all.end(), [&](const Scenario::Info &info) { return info.kind == kind; });
            QVERIFY(it != all.end() && it->name == name && !it->description.empty());
        }
    }

    // Llama 3's HBM3 share of interruptions: about 1.7 double-bit errors a day on 20,480 GPUs (the old rates gave
    // two orders of magnitude more), and about 7 interruptions of any kind.
    void faultRatesAreCalibrated()
    {
        constexpr uint32_t gpus = 20480;
        Simulator sim(gpus, 7, 60.0);
        sim.setDomainFaultScale(0);
        int doubleBits = 0;
        int interruptions = 0;
        int fallenOff = 0;
        int nodeDowns = 0;
        for (int i = 0; i < 24 * 60; ++i) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                doubleBits += e.kind == FleetEvent::Kind::EccDoubleBit ? 1 : 0;
                const bool serious
                    = e.kind == FleetEvent::Kind::Xid && (e.xid == 74 || e.xid == 79 || e.xid == 95 || e.xid == 119);
                interruptions += serious || e.kind == FleetEvent::Kind::EccDoubleBit ? 1 : 0;
                fallenOff += e.kind == FleetEvent::Kind::Xid && e.xid == 79 ? 1 : 0;
                nodeDowns += e.kind == FleetEvent::Kind::NodeDown ? 1 : 0;
            }
        }
        interruptions += nodeDowns - fallenOff; // a node's own failures (XID 79's reboot is counted as the XID)
        const double expectedDbe = FaultModel::doubleBitPerGpuDay() * gpus;
        const double expected = FaultModel::interruptionsPerGpuDay() * gpus;
        qInfo("a day on %u GPUs: %d double-bit errors (%.1f expected), %d interruptions (%.1f expected)", gpus,
            doubleBits, expectedDbe, interruptions, expected);
        QVERIFY2(doubleBits >= expectedDbe / 3 && doubleBits <= expectedDbe * 3,
            qPrintable(QStringLiteral("%1 double-bit errors, %2 expected").arg(doubleBits).arg(expectedDbe)));
        QVERIFY2(interruptions >= expected / 2 && interruptions <= expected * 2,
            qPrintable(QStringLiteral("%1 interruptions, %2 expected").arg(interruptions).arg(expected)));
    }

    // NVL72: a CDU's loops lose flow; its racks' coolant warms, its GPUs throttle together; another CDU's racks do not.
    void cduFailureWarmsItsLoops()
    {
        Simulator sim(72 * 64, 3, 5.0, Scenario::Kind::CduFailure, Hardware::Gb200Nvl72);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        runUntil(&sim, Scenario::onsetSeconds - 5);
        QVERIFY(sim.injectedFaults().domainFaults().empty());
        const auto before = sim.snapshot();
        runUntil(&sim, Scenario::onsetSeconds + 600);
        const DomainFault *fault = only(sim);
        QVERIFY(fault != nullptr);
        QCOMPARE(fault->kind, DomainFault::Kind::Cdu);
        QCOMPARE(shape.domains[fault->domain].kind, DomainKind::Cdu);
        QCOMPARE(fault->onsetSeconds, Scenario::onsetSeconds);
        const auto racks = racksServedBy(shape, fault->domain);
        QVERIFY(!racks.empty() && racks.size() <= 8); // the last CDU of a row may serve fewer
        const auto f = sim.snapshot();
        const auto rise = [&](MetricId m, bool inside) {
            return meanOverRacks(*f, m, shape, racks, inside) - meanOverRacks(*before, m, shape, racks, inside);
        };
        QVERIFY2(rise(MetricId::CoolantSupplyTemp, true) > 5,
            qPrintable(QString::number(rise(MetricId::CoolantSupplyTemp, true))));
        QVERIFY2(rise(MetricId::CoolantReturnTemp, true) > 10,
            qPrintable(QString::number(rise(MetricId::CoolantReturnTemp, true))));
        QVERIFY(meanOverRacks(*f, MetricId::CoolantFlow, shape, racks, true)
            < 0.5 * meanOverRacks(*before, MetricId::CoolantFlow, shape, racks, true));
        QVERIFY(std::abs(rise(MetricId::CoolantSupplyTemp, false)) < 2);
        QVERIFY(rise(MetricId::GpuTemp, true) > 10);
        int throttled = 0;
        int busy = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const float reasons = f->plane(MetricId::ThrottleReasons)[g];
            if (racks.count(rackOfGpu(shape, g)) == 0 || std::isnan(reasons)) {
                QVERIFY(std::isnan(reasons) || (static_cast<uint32_t>(reasons) & 0x20U) == 0);
                continue;
            }
            if (before->plane(MetricId::GpuUtil)[g] > 20) { // in a job
                ++busy;
                throttled += (static_cast<uint32_t>(reasons) & 0x20U) != 0 ? 1 : 0;
            }
        }
        QVERIFY2(busy > 100 && throttled > busy / 2, qPrintable(QStringLiteral("%1 of %2").arg(throttled).arg(busy)));
        QCOMPARE(f->plane(MetricId::LeakDetected)[0], 0.0F);
    }

    // HGX: the nearest equivalent, a cooling unit of a row segment: its racks warm, the rest of the floor does not.
    void cduFailureOnHgxFailsACoolingUnit()
    {
        Simulator sim(10240, 1, 5.0, Scenario::Kind::CduFailure);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        runUntil(&sim, Scenario::onsetSeconds - 5);
        const auto before = sim.snapshot();
        runUntil(&sim, Scenario::onsetSeconds + 600);
        const DomainFault *fault = only(sim);
        QVERIFY(fault != nullptr);
        QCOMPARE(fault->kind, DomainFault::Kind::CoolingUnit);
        QCOMPARE(shape.domains[fault->domain].kind, DomainKind::CoolingUnit);
        const auto racks = racksServedBy(shape, fault->domain);
        QCOMPARE(racks.size(), size_t(8));
        const auto f = sim.snapshot();
        const double inside = meanOverRacks(*f, MetricId::GpuTemp, shape, racks, true)
            - meanOverRacks(*before, MetricId::GpuTemp, shape, racks, true);
        const double outside = meanOverRacks(*f, MetricId::GpuTemp, shape, racks, false)
            - meanOverRacks(*before, MetricId::GpuTemp, shape, racks, false);
        QVERIFY2(inside > 10 && std::abs(outside) < 2, qPrintable(QStringLiteral("%1 %2").arg(inside).arg(outside)));
        QVERIFY(std::isnan(f->plane(MetricId::CoolantSupplyTemp)[0])); // air-cooled: no coolant
        QVERIFY(std::isnan(f->plane(MetricId::LeakDetected)[0]));
    }

    // cooling-failure is recorded as each of its row's cooling units, when the heat reaches it.
    void coolingFailureIsRecordedPerUnit()
    {
        Simulator sim(10240, 1, 5.0, Scenario::Kind::CoolingFailure);
        sim.setDomainFaultScale(0);
        runUntil(&sim, sim.scenario().coolingRecoveryAt());
        const auto &faults = sim.injectedFaults().domainFaults();
        QCOMPARE(faults.size(), size_t(2)); // a row of 16 racks, a unit per 8
        const auto &row = sim.shape().rows[sim.scenario().affectedRow()];
        for (size_t i = 0; i < faults.size(); ++i) {
            QCOMPARE(faults[i].kind, DomainFault::Kind::CoolingUnit);
            QCOMPARE(faults[i].onsetSeconds, sim.scenario().coolingOnsetAt(static_cast<uint32_t>(i) * 8));
            QCOMPARE(faults[i].endSeconds, sim.scenario().coolingRecoveryAt());
            const auto racks = racksServedBy(sim.shape(), faults[i].domain);
            QVERIFY(racks.count(row.firstRack + static_cast<uint32_t>(i) * 8) == 1);
        }
    }

    // A rack side's PDU trips, each side in turn (the scenario's PDU moves with the seed): the nodes corded to both
    // sides run on the other feed under the power brake, those corded to the tripped side alone go down, those corded
    // to the other side alone are as they were, as is every other rack; the incident folder names the side that
    // tripped; it comes back.
    void pduTripCapsItsRack_data()
    {
        QTest::addColumn<uint64_t>("seed");
        QTest::addColumn<QString>("side");
        QTest::newRow("side a") << uint64_t(2) << QStringLiteral("-a");
        QTest::newRow("side b") << uint64_t(3) << QStringLiteral("-b");
    }
    void pduTripCapsItsRack()
    {
        QFETCH(uint64_t, seed);
        QFETCH(QString, side);
        Simulator sim(10240, seed, 5.0, Scenario::Kind::PduTrip);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        IncidentFolder folder(shape);
        std::vector<FleetEvent> powerIncidents;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 60) {
            sim.step();
            auto events = sim.takeEvents();
            folder.judge(*sim.snapshot(), {}, sim.nowSeconds(), &events);
            std::copy_if(events.begin(), events.end(), std::back_inserter(powerIncidents), [](const FleetEvent &e) {
                return e.kind == FleetEvent::Kind::IncidentOpen && e.incident->cause == "power";
            });
        }
        const DomainFault *fault = only(sim);
        QVERIFY(fault != nullptr);
        QCOMPARE(fault->kind, DomainFault::Kind::PduTrip);
        QCOMPARE(shape.domains[fault->domain].kind, DomainKind::Pdu);
        QVERIFY(QString::fromStdString(shape.domains[fault->domain].name).endsWith(side));
        QCOMPARE(powerIncidents.size(), size_t(1));
        QCOMPARE(powerIncidents.front().incident->domain, int64_t(fault->domain));
        const auto racks = racksServedBy(shape, fault->domain);
        QCOMPARE(racks.size(), size_t(1));
        const uint32_t r = *racks.begin();
        const auto f = sim.snapshot();
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const float reasons = f->plane(MetricId::ThrottleReasons)[g];
            if (rackOfGpu(shape, g) != r) {
                QVERIFY(std::isnan(reasons) || (static_cast<uint32_t>(reasons) & 0x80U) == 0);
            }
        }
        int down = 0;
        int braked = 0;
        int spared = 0;
        const auto &rack = shape.racks[r];
        for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
            const auto cords = shape.cordsOf(n);
            const bool fed = std::find(cords.begin(), cords.end(), fault->domain) != cords.end();
            const auto &node = shape.nodes[n];
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                const auto reasons = static_cast<uint32_t>(f->plane(MetricId::ThrottleReasons)[g]);
                if (fed && cords.size() == 1) {
                    QVERIFY(offline(*f, g));
                    ++down;
                } else if (fed) {
                    QVERIFY(!offline(*f, g));
                    QVERIFY((reasons & 0x80U) != 0);
                    QVERIFY(f->plane(MetricId::Power)[g] <= 350.0F + 1e-3F);
                    ++braked;
                } else {
                    QVERIFY(!offline(*f, g));
                    QCOMPARE(reasons & 0x80U, 0U);
                    ++spared;
                }
            }
        }
        // Of 8 nodes: the 4th corded to side A alone, the 8th to B.
        QCOMPARE(down, 8);
        QCOMPARE(braked, 48);
        QCOMPARE(spared, 8);
        runUntil(&sim, fault->endSeconds + 30);
        const auto after = sim.snapshot();
        for (uint32_t g = shape.nodes[rack.firstNode].firstGpu; g < shape.nodes[rack.firstNode].firstGpu + 64; ++g) {
            QVERIFY(!offline(*after, g));
            QCOMPARE(static_cast<uint32_t>(after->plane(MetricId::ThrottleReasons)[g]) & 0x80U, 0U);
        }
    }

    // The fault model reads the cords from the shape: a shape that says otherwise is tripped otherwise.
    void aTripFollowsTheShapesCords()
    {
        FleetShape shape = FleetShape::forGpuCount(1024);
        const auto &rack = shape.racks[1];
        const uint32_t a = rack.domains[0];
        const uint32_t b = rack.domains[1];
        QCOMPARE(shape.cordsOf(rack.firstNode + 3), std::vector<uint32_t> { a });
        QCOMPARE(shape.cordsOf(rack.firstNode + 7), std::vector<uint32_t> { b });
        // The first node corded to side A alone, the 4th to both.
        shape.nodes[rack.firstNode].domains.push_back(a);
        auto &fourth = shape.nodes[rack.firstNode + 3].domains;
        fourth.erase(std::remove(fourth.begin(), fourth.end(), a), fourth.end());
        DomainFaultModel model(shape, 1, 350.0F);
        model.plan(DomainFault { DomainFault::Kind::PduTrip, a, -1, 0.0, 100.0 }, true);
        InjectedFaults truth(shape.gpuCount, 1);
        model.step(0, 1.0, 1.0, &truth);
        QCOMPARE(truth.domainFaults().size(), size_t(1));
        for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
            const uint32_t i = n - rack.firstNode;
            QCOMPARE(model.nodeDown(n), i == 0);
            QCOMPARE(std::isinf(model.powerCap(n)), i == 7); // corded to b alone: as it was
        }
        QVERIFY(!model.nodeDown(rack.firstNode - 1) && std::isinf(model.powerCap(rack.firstNode - 1)));
        model.step(1, 101.0, 1.0, &truth);
        QVERIFY(!model.nodeDown(rack.firstNode) && std::isinf(model.powerCap(rack.firstNode + 1)));
    }

    void leafDownStallsItsJobs()
    {
        Simulator sim(10240, 3, 5.0, Scenario::Kind::LeafDown);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        runUntil(&sim, Scenario::onsetSeconds + 30);
        const DomainFault *fault = only(sim);
        QVERIFY(fault != nullptr);
        QCOMPARE(fault->kind, DomainFault::Kind::LeafDown);
        QCOMPARE(shape.domains[fault->domain].kind, DomainKind::LeafSwitch);
        const auto f = sim.snapshot();
        std::set<uint32_t> leafGpus;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const bool behind = shape.gpuLinks[g].leaf == fault->domain;
            if (behind) {
                leafGpus.insert(g);
            }
            if (offline(*f, g)) {
                continue;
            }
            QCOMPARE(f->plane(MetricId::RailLinkState)[g], behind ? 0.0F : 1.0F);
            if (behind) {
                QCOMPARE(f->plane(MetricId::RailLinkDowns)[g], 1.0F);
                QVERIFY(f->plane(MetricId::GpuUtil)[g] <= 1.0F);
            } else {
                QCOMPARE(f->plane(MetricId::RailLinkDowns)[g], 0.0F);
            }
        }
        QCOMPARE(leafGpus.size(), size_t(32));
        // The jobs on them stall whole.
        int stalledJobs = 0;
        for (const auto &job : sim.jobs()) {
            const uint32_t first = shape.nodes[job.firstNode].firstGpu;
            const auto &last = shape.nodes[job.firstNode + job.nodeCount - 1];
            const auto hit = leafGpus.lower_bound(first);
            if (hit == leafGpus.end() || *hit >= last.firstGpu + last.gpuCount
                || job.startSeconds > fault->onsetSeconds) {
                continue;
            }
            ++stalledJobs;
            for (uint32_t g = first; g < last.firstGpu + last.gpuCount; ++g) {
                if (!offline(*f, g)) {
                    QVERIFY(f->plane(MetricId::GpuUtil)[g] <= 1.0F);
                    if (leafGpus.count(g) == 0) {
                        QVERIFY(f->plane(MetricId::RailTransmitWait)[g] > 20.0F);
                    }
                }
            }
        }
        QVERIFY(stalledJobs >= 1);
        runUntil(&sim, fault->endSeconds + 30);
        const auto after = sim.snapshot();
        for (const uint32_t g : leafGpus) {
            QVERIFY(offline(*after, g) || after->plane(MetricId::RailLinkState)[g] == 1.0F);
            QCOMPARE(after->railTotals->linkDowns[g], 1U);
        }
    }

    // One port flaps: its link state toggles, downs and symbol errors climb, its job slows and waits on it.
    void linkFlapSlowsItsJob()
    {
        Simulator sim(10240, 4, 1.0, Scenario::Kind::LinkFlap);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        runUntil(&sim, Scenario::onsetSeconds - 1);
        const auto before = sim.snapshot();
        bool sawDown = false;
        bool sawUp = false;
        float mostUtil = 0;
        const DomainFault *fault = nullptr;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 240) {
            sim.step();
            (void)sim.takeEvents();
            fault = only(sim);
            QVERIFY(fault != nullptr);
            const auto f = sim.snapshot();
            const auto gpu = static_cast<uint32_t>(fault->gpu);
            sawDown |= f->plane(MetricId::RailLinkState)[gpu] == 0.0F;
            sawUp |= f->plane(MetricId::RailLinkState)[gpu] == 1.0F;
            mostUtil = std::max(mostUtil, f->plane(MetricId::GpuUtil)[gpu]);
        }
        QCOMPARE(fault->kind, DomainFault::Kind::LinkFlap);
        const auto gpu = static_cast<uint32_t>(fault->gpu);
        QCOMPARE(fault->domain, shape.gpuLinks[gpu].leaf);
        QVERIFY(sawDown && sawUp);
        const auto f = sim.snapshot();
        QVERIFY2(f->plane(MetricId::RailLinkDowns)[gpu] >= 7,
            qPrintable(QString::number(f->plane(MetricId::RailLinkDowns)[gpu])));
        QVERIFY(f->plane(MetricId::RailSymbolErrors)[gpu] > 50);
        QVERIFY(f->plane(MetricId::RailReceiveErrors)[gpu] > 5);
        QVERIFY(f->railTotals->symbolErrors[gpu] > 50); // as of at most 15 s ago (RailCounters::totals)
        // Its job (it runs one from before the flap) slows to 60% of its pace: its GPUs never reach the compute
        // phase's 97% while their ports wait on the flapping one.
        QVERIFY(before->plane(MetricId::GpuUtil)[gpu] > 1.0F);
        QVERIFY2(mostUtil < 65.0F, qPrintable(QString::number(mostUtil)));
        const auto &node = shape.nodes[shape.nodeOfGpu[gpu]];
        const uint32_t peer = node.firstGpu + (gpu == node.firstGpu ? 1 : 0);
        QCOMPARE(f->plane(MetricId::RailTransmitWait)[peer], 20.0F);
        // Every other link is up and not flapping.
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            if (g != gpu && !offline(*f, g)) {
                QCOMPARE(f->plane(MetricId::RailLinkState)[g], 1.0F);
                QCOMPARE(f->plane(MetricId::RailLinkDowns)[g], 0.0F);
            }
        }
    }

    // An NVL72 tray leaks: its sensor reads 1 (its rack's BMC still serves it), it and its neighbours are off.
    void leakPowersOffTrays()
    {
        Simulator sim(72 * 32, 5, 5.0, Scenario::Kind::Leak, Hardware::Gb200Nvl72);
        sim.setDomainFaultScale(0);
        const auto &shape = sim.shape();
        runUntil(&sim, Scenario::onsetSeconds + 30);
        const DomainFault *fault = only(sim);
        QVERIFY(fault != nullptr);
        QCOMPARE(fault->kind, DomainFault::Kind::Leak);
        QCOMPARE(shape.domains[fault->domain].kind, DomainKind::NvlinkDomain);
        QVERIFY(std::isinf(fault->endSeconds));
        const auto gpu = static_cast<uint32_t>(fault->gpu);
        const uint32_t tray = shape.nodeOfGpu[gpu];
        QCOMPARE(shape.nodes[tray].firstGpu, gpu);
        const uint32_t rack = shape.nodes[tray].rack;
        QVERIFY(racksServedBy(shape, fault->domain) == std::set<uint32_t>({ rack }));
        const auto f = sim.snapshot();
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const uint32_t n = shape.nodeOfGpu[g];
            const bool near = shape.nodes[n].rack == rack && n + 1 >= tray && n <= tray + 1;
            QCOMPARE(f->plane(MetricId::LeakDetected)[g], n == tray ? 1.0F : 0.0F);
            if (near) {
                QVERIFY(offline(*f, g));
                QVERIFY(!std::isnan(f->plane(MetricId::CoolantSupplyTemp)[g]));
                QVERIFY(std::isnan(f->plane(MetricId::GpuTemp)[g]));
            }
        }
        // On an air-cooled fleet there is nothing to leak.
        Simulator air(1024, 5, 5.0, Scenario::Kind::Leak);
        air.setDomainFaultScale(0);
        runUntil(&air, Scenario::onsetSeconds + 30);
        QVERIFY(air.injectedFaults().domainFaults().empty());
    }

    // At random, at the documented rates (scaled up here), each recorded with a domain of the right kind, the same
    // ones for the same seed, and in force while they last.
    void randomDomainFaultsAreRecorded_data()
    {
        QTest::addColumn<int>("hardware");
        QTest::newRow("hgx") << int(Hardware::HgxH100);
        QTest::newRow("nvl72") << int(Hardware::Gb200Nvl72);
    }
    void randomDomainFaultsAreRecorded()
    {
        QFETCH(int, hardware);
        const auto kind = static_cast<Hardware>(hardware);
        const bool liquid = kind == Hardware::Gb200Nvl72;
        Simulator a(liquid ? 72 * 256 : 20480, 9, 60.0, Scenario::Kind::None, kind);
        Simulator b(liquid ? 72 * 256 : 20480, 9, 60.0, Scenario::Kind::None, kind);
        a.setDomainFaultScale(liquid ? 2000 : 500);
        b.setDomainFaultScale(liquid ? 2000 : 500);
        const auto &shape = a.shape();
        int checkedInForce = 0;
        for (int i = 0; i < 6 * 60; ++i) {
            a.step();
            b.step();
            (void)a.takeEvents();
            (void)b.takeEvents();
            if (i % 10 != 0) {
                continue;
            }
            const auto f = a.snapshot();
            for (const auto &fault : a.injectedFaults().domainFaults()) {
                const double t = a.nowSeconds();
                if (fault.kind == DomainFault::Kind::LeafDown && fault.onsetSeconds <= t && t < fault.endSeconds) {
                    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
                        if (shape.gpuLinks[g].leaf == fault.domain && !offline(*f, g)) {
                            QCOMPARE(f->plane(MetricId::RailLinkState)[g], 0.0F);
                            ++checkedInForce;
                        }
                    }
                }
            }
        }
        const auto &faults = a.injectedFaults().domainFaults();
        const auto &again = b.injectedFaults().domainFaults();
        QCOMPARE(faults.size(), again.size());
        std::set<DomainFault::Kind> kinds;
        for (size_t i = 0; i < faults.size(); ++i) {
            const auto &fault = faults[i];
            QCOMPARE(fault.kind, again[i].kind);
            QCOMPARE(fault.domain, again[i].domain);
            QCOMPARE(fault.gpu, again[i].gpu);
            QCOMPARE(fault.onsetSeconds, again[i].onsetSeconds);
            QVERIFY(fault.onsetSeconds < fault.endSeconds);
            QVERIFY(fault.domain < shape.domains.size());
            kinds.insert(fault.kind);
            const DomainKind of = shape.domains[fault.domain].kind;
            switch (fault.kind) {
            case DomainFault::Kind::CoolingUnit:
                QCOMPARE(of, DomainKind::CoolingUnit);
                break;
            case DomainFault::Kind::Cdu:
                QCOMPARE(of, DomainKind::Cdu);
                break;
            case DomainFault::Kind::PduTrip:
                QCOMPARE(of, DomainKind::Pdu);
                break;
            case DomainFault::Kind::LeafDown:
                QCOMPARE(of, DomainKind::LeafSwitch);
                break;
            case DomainFault::Kind::LinkFlap:
                QCOMPARE(of, DomainKind::LeafSwitch);
                QVERIFY(fault.gpu >= 0 && fault.gpu < int64_t(shape.gpuCount));
                QCOMPARE(shape.gpuLinks[static_cast<size_t>(fault.gpu)].leaf, fault.domain);
                break;
            case DomainFault::Kind::Leak:
                QCOMPARE(of, DomainKind::NvlinkDomain);
                QVERIFY(fault.gpu >= 0 && fault.gpu < int64_t(shape.gpuCount));
                break;
            }
        }
        QVERIFY(kinds.count(DomainFault::Kind::PduTrip) == 1);
        QVERIFY(kinds.count(DomainFault::Kind::LeafDown) == 1);
        QVERIFY(kinds.count(DomainFault::Kind::LinkFlap) == 1);
        QVERIFY(kinds.count(liquid ? DomainFault::Kind::Cdu : DomainFault::Kind::CoolingUnit) == 1);
        QCOMPARE(kinds.count(DomainFault::Kind::Leak), size_t(liquid ? 1 : 0));
        QVERIFY(checkedInForce > 0);
    }

    // A plain fleet's fabric and loops: links up, a little transmit wait, a few symbol errors on some links, totals
    // that only grow; coolant on an NVL72 rack warms from supply to return.
    void planesOfAPlainFleet()
    {
        Simulator sim(10240, 1, 5.0);
        sim.setDomainFaultScale(0);
        std::shared_ptr<const RailCounterTotals> previous;
        int withErrors = 0;
        for (int i = 0; i < 120; ++i) {
            sim.step();
            const auto f = sim.snapshot();
            QVERIFY(f->railTotals);
            if (previous) {
                for (uint32_t g = 0; g < sim.shape().gpuCount; ++g) {
                    QVERIFY(f->railTotals->symbolErrors[g] >= previous->symbolErrors[g]);
                    QVERIFY(f->railTotals->transmitWaitMicroseconds[g] >= previous->transmitWaitMicroseconds[g]);
                }
            }
            previous = f->railTotals;
        }
        const auto f = sim.snapshot();
        for (uint32_t g = 0; g < sim.shape().gpuCount; ++g) {
            if (offline(*f, g)) {
                QVERIFY(std::isnan(f->plane(MetricId::RailLinkState)[g]));
                continue;
            }
            QCOMPARE(f->plane(MetricId::RailLinkState)[g], 1.0F);
            QVERIFY(f->plane(MetricId::RailTransmitWait)[g] >= 0 && f->plane(MetricId::RailTransmitWait)[g] <= 2);
            withErrors += f->plane(MetricId::RailSymbolErrors)[g] > 0 ? 1 : 0;
        }
        QVERIFY2(withErrors >= 3 && withErrors < 200, qPrintable(QString::number(withErrors)));

        Simulator nvl(72 * 16, 1, 5.0, Scenario::Kind::None, Hardware::Gb200Nvl72);
        nvl.setDomainFaultScale(0);
        runUntil(&nvl, 60);
        const auto n = nvl.snapshot();
        for (uint32_t g = 0; g < nvl.shape().gpuCount; ++g) {
            const float supply = n->plane(MetricId::CoolantSupplyTemp)[g];
            const float ret = n->plane(MetricId::CoolantReturnTemp)[g];
            const float flow = n->plane(MetricId::CoolantFlow)[g];
            QVERIFY2(supply > 25 && supply < 40 && ret > supply + 3 && ret < supply + 25,
                qPrintable(QStringLiteral("%1 %2").arg(supply).arg(ret)));
            QVERIFY(flow >= 90 && flow <= 121);
            QCOMPARE(n->plane(MetricId::LeakDetected)[g], 0.0F);
        }
    }
};

QTEST_GUILESS_MAIN(TestDomainFaults)
#include "tst_domainfaults.moc"
