// SPDX-License-Identifier: Apache-2.0
// Wire -> model: topology and frame decoding, reassembly of parts, and every kind of malformed topology or frame we
// drop. The other answers (catalogue, text for people, jobs, summary) are tst_answerdecode's.
#include "client/framedecode.h"
#include "client/topologydecode.h"
#include "model/heatmaplayout.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"
#include "tests/client/decodetesting.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace fleetscope;
using namespace fleetscope::decodetesting;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

class TestProtoDecode : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topologyRoundTrip()
    {
        be::Simulator sim(10240, 1);
        // Small parts so that the reassembly of several is exercised.
        const auto topology = topologyFor(sim, 100);
        QVERIFY(topology);
        QCOMPARE(topology->gpuCount, 10240U);
        QCOMPARE(topology->generation, generation);
        QCOMPARE(topology->nodes.size(), sim.shape().nodes.size());
        QCOMPARE(topology->racks.size(), sim.shape().racks.size());
        QCOMPARE(topology->nodeOf(10239).hostname, QStringLiteral("r10-k16-n08"));
        QCOMPARE(topology->nodeOf(0).hostname, QStringLiteral("r01-k01-n01"));
        // Identity: UUIDs as nvidia-smi prints them, serials, firmware.
        for (uint32_t g : { 0U, 5000U, 10239U }) {
            QCOMPARE(topology->uuidText(g), QString::fromStdString(sim.shape().gpuUuid(g)));
            QCOMPARE(topology->gpuSerials[g], sim.shape().gpuSerial(g));
        }
        QVERIFY(topology->uuidText(0).startsWith(QStringLiteral("GPU-")));
        QVERIFY(topology->uuidText(0) != topology->uuidText(1));
        QVERIFY(!topology->nodeOf(0).firmwareVersion.isEmpty());
    }

    void topologyRejectsInconsistentParts()
    {
        be::Simulator sim(64, 1);
        auto parts = be::encodeTopology(sim.shape(), generation);
        QString error;

        auto gap = parts;
        gap[0].mutable_nodes(1)->set_first_gpu(9); // GPU 8 belongs to no node
        QVERIFY(!decodeTopology(gap, &error));
        QVERIFY(error.contains(QStringLiteral("node 1")));

        auto badRack = parts;
        badRack[0].mutable_nodes(0)->set_rack(99);
        QVERIFY(!decodeTopology(badRack, &error));

        auto badRow = parts;
        badRow[0].mutable_racks(0)->set_row(5);
        QVERIFY(!decodeTopology(badRow, &error));

        auto wrongCount = parts;
        wrongCount[0].set_gpu_count(65);
        QVERIFY(!decodeTopology(wrongCount, &error));
        QVERIFY(error.contains(QStringLiteral("65")));

        // A claim its nodes do not hold is refused before anything is sized by it.
        auto overclaimed = parts;
        overclaimed[0].set_gpu_count(1U << 20U);
        QVERIFY(!decodeTopology(overclaimed, &error));
        QVERIFY2(error.contains(QStringLiteral("nodes hold 64 GPUs, but it claims 1048576")), qPrintable(error));

        auto missing = parts;
        missing[0].set_part_count(2);
        QVERIFY(!decodeTopology(missing, &error));

        QVERIFY(!decodeTopology({}, &error));

        auto shortIdentity = parts;
        shortIdentity[0].mutable_nodes(2)->mutable_gpu_uuids()->RemoveLast();
        QVERIFY(!decodeTopology(shortIdentity, &error));
        QVERIFY2(error.contains(QStringLiteral("identity")), qPrintable(error));

        auto huge = parts;
        huge[0].set_gpu_count(0xFFFFFFFFU);
        QVERIFY(!decodeTopology(huge, &error));
        QVERIFY2(error.contains(QStringLiteral("more than")), qPrintable(error));
    }

    // A rogue backend's rack positions: near 2^32 they once wrote before the layout's buffer, near 2^31 overflowed
    // its size; two racks in one place hid one of them. Each is refused with the reason; a floor with a gap in a row
    // (an empty position) is fine and laid out.
    void topologyBoundsTheFloorPlan_data()
    {
        QTest::addColumn<uint32_t>("position");
        QTest::addColumn<bool>("accepted");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("near 2^32") << 0xFFFFFFFEU << false << QStringLiteral("floor plan");
        QTest::newRow("near 2^31") << 0x7FFFFFFFU << false << QStringLiteral("floor plan");
        QTest::newRow("far apart") << 200000U << false << QStringLiteral("floor plan");
        QTest::newRow("where another stands") << 0U << false << QStringLiteral("two racks stand at position 0");
        QTest::newRow("a gap in the row") << 5U << true << QString();
    }
    void topologyBoundsTheFloorPlan()
    {
        QFETCH(uint32_t, position);
        QFETCH(bool, accepted);
        QFETCH(QString, mentions);
        be::Simulator sim(1024, 1); // one row of 16 racks at positions 0..15
        auto parts = be::encodeTopology(sim.shape(), generation);
        QCOMPARE(parts[0].racks(1).row(), parts[0].racks(0).row());
        parts[0].mutable_racks(1)->set_position(position);
        if (position == 5U) {
            parts[0].mutable_racks(1)->set_position(20); // past the row's last rack: a gap
        }
        QString error;
        const auto topology = decodeTopology(parts, &error);
        QCOMPARE(bool(topology), accepted);
        if (!accepted) {
            QVERIFY2(error.contains(mentions), qPrintable(error));
            return;
        }
        const auto layout = HeatmapLayout::floorPlan(*topology);
        QCOMPARE(layout.gpuCells.size(), size_t { 1024 });
        const auto [width, height] = HeatmapLayout::floorPlanSize(*topology);
        QCOMPARE(uint64_t(layout.width), width);
        QCOMPARE(uint64_t(layout.height), height);
        // Every GPU in its own cell, inside the plan.
        std::vector<uint8_t> taken(layout.cells.size(), 0);
        for (uint32_t g = 0; g < 1024; ++g) {
            const QPoint c = layout.gpuCells[g];
            QCOMPARE(layout.gpuAt(c.x(), c.y()), int32_t(g));
            QVERIFY(taken[size_t(c.y()) * size_t(layout.width) + size_t(c.x())]++ == 0);
        }
    }

    void framePartsReassemble()
    {
        be::Simulator sim(10000, 4);
        sim.step();
        const auto frame = sim.snapshot();
        frame->sampleTimeMs = 1700000000123;
        const auto topology = topologyFor(sim);
        const std::vector<be::MetricId> metrics { be::MetricId::GpuTemp, be::MetricId::Power };
        // 10,000 GPUs in parts of 3,000: four parts, the last one short.
        const auto parts = be::encodeFrame(*frame, metrics, generation, 3000);
        QCOMPARE(parts.size(), size_t(4));
        FrameAssembler assembler(topology);
        FramePtr out;
        for (size_t i = 0; i < parts.size(); ++i) {
            auto r = assembler.add(parts[i]);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(bool(r.frame), i + 1 == parts.size());
            if (r.frame) {
                out = r.frame;
            }
        }
        QCOMPARE(out->sequence, 1U);
        QCOMPARE(out->sampleTimeMs, int64_t(1700000000123));
        QVERIFY(out->plane(QStringLiteral("gpu_temp"))->values == frame->plane(be::MetricId::GpuTemp));
        QVERIFY(out->plane(QStringLiteral("power"))->values == frame->plane(be::MetricId::Power));
        QVERIFY(out->health == frame->health);
        QVERIFY(out->plane(QStringLiteral("gpu_util")) == nullptr);
    }

    void uint16PlanesDecodeWithScaleAndNoValue()
    {
        be::Simulator sim(8, 1);
        const auto topology = topologyFor(sim);
        pb::FramePart part;
        part.set_sequence(5);
        part.set_topology_generation(generation);
        part.set_fleet_gpu_count(8);
        part.set_gpu_count(8);
        part.set_part_count(1);
        part.set_health(std::string(8, '\0'));
        auto *plane = part.add_planes();
        plane->set_metric_id("gpu_temp");
        plane->set_encoding(pb::PLANE_ENCODING_UINT16);
        plane->set_scale(0.5F);
        plane->set_offset(10.0F);
        std::string bytes(16, '\0');
        for (uint16_t g = 0; g < 8; ++g) {
            const uint16_t raw = g == 3 ? 0xFFFF : static_cast<uint16_t>(100 + g);
            std::memcpy(bytes.data() + 2 * g, &raw, 2);
        }
        plane->set_values(bytes);
        FrameAssembler assembler(topology);
        const auto r = assembler.add(part);
        QVERIFY2(r.frame, qPrintable(r.error));
        const auto &v = r.frame->plane(QStringLiteral("gpu_temp"))->values;
        QCOMPARE(v[0], 60.0F);
        QCOMPARE(v[7], 63.5F);
        QVERIFY(std::isnan(v[3]));
    }

    // Each kind of malformed part is dropped with a message naming the problem, and the next good frame still
    // assembles (the assembler does not stay stuck).
    void malformedPartsAreDropped_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("short plane") << 0 << "has 4095 values, expected 4096";
        QTest::newRow("other fleet size") << 1 << "topology has";
        QTest::newRow("other generation") << 2 << "generation";
        QTest::newRow("out of order") << 3 << "out of order";
        QTest::newRow("unknown encoding") << 4 << "unknown encoding";
        QTest::newRow("short health") << 5 << "health bytes";
    }
    void malformedPartsAreDropped()
    {
        QFETCH(int, kind);
        QFETCH(QString, mentions);
        be::Simulator sim(4096, 2);
        const auto topology = topologyFor(sim);
        sim.step();
        auto parts = be::encodeFrame(*sim.snapshot(), { be::MetricId::GpuTemp }, generation);
        QCOMPARE(parts.size(), size_t(1));
        auto bad = parts[0];
        switch (kind) {
        case 0:
            bad.mutable_planes(0)->mutable_values()->resize(4095 * 4);
            break;
        case 1:
            bad.set_fleet_gpu_count(4097);
            break;
        case 2:
            bad.set_topology_generation(generation + 1);
            break;
        case 3:
            bad.set_part_index(1);
            bad.set_part_count(2);
            break;
        case 4:
            bad.mutable_planes(0)->set_encoding(static_cast<pb::PlaneEncoding>(9));
            break;
        case 5:
            bad.mutable_health()->resize(100);
            break;
        }
        FrameAssembler assembler(topology);
        const auto rejected = assembler.add(bad);
        QVERIFY(!rejected.frame);
        QVERIFY2(rejected.error.contains(mentions), qPrintable(rejected.error));
        const auto good = assembler.add(parts[0]);
        QVERIFY2(good.frame, qPrintable(good.error));
    }

    void aPartOfAnotherFrameAbortsTheFrame()
    {
        be::Simulator sim(3000, 2);
        const auto topology = topologyFor(sim);
        sim.step();
        const auto first = be::encodeFrame(*sim.snapshot(), { be::MetricId::Power }, generation, 1000);
        sim.step();
        const auto second = be::encodeFrame(*sim.snapshot(), { be::MetricId::Power }, generation, 1000);
        FrameAssembler assembler(topology);
        QVERIFY(assembler.add(first[0]).error.isEmpty());
        const auto mixed = assembler.add(second[1]);
        QVERIFY(!mixed.frame);
        QVERIFY(!mixed.error.isEmpty());
        // A frame that ends short of the fleet is rejected too (its parts all saying 2; a part count that changes
        // within a frame is refused as out of order).
        auto shortStart = first[0];
        shortStart.set_part_count(2);
        auto shortEnd = first[1];
        shortEnd.set_part_count(2);
        QVERIFY(assembler.add(shortStart).error.isEmpty());
        const auto r = assembler.add(shortEnd);
        QVERIFY(!r.frame);
        QVERIFY2(r.error.contains(QStringLiteral("ended after 2000 of 3000")), qPrintable(r.error));
    }

    // A part of a 64-GPU frame that covers no GPU with 100,000 empty planes passed every check, and its frame's planes
    // were each sized to the fleet (at a million GPUs and a million planes, tens of GB from 4 MB on the wire). A part
    // covers a GPU at least and carries the planes subscribed to, or, for the default set, distinct metric ids no
    // more than a catalogue lists: both are refused before anything is allocated, and the next frame assembles.
    void aPartOfNoGpuAndManyPlanesIsRefused_data()
    {
        QTest::addColumn<uint32_t>("gpus");
        QTest::addColumn<bool>("subscribed");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no GPU, default set") << 0U << false << QStringLiteral("covers no GPU");
        QTest::newRow("no GPU, subscribed") << 0U << true << QStringLiteral("covers no GPU");
        QTest::newRow("one GPU, default set") << 1U << false << QStringLiteral("more than the 256 a catalogue");
        QTest::newRow("one GPU, subscribed")
            << 1U << true << QStringLiteral("carries 100000 planes, the subscription 1");
    }
    void aPartOfNoGpuAndManyPlanesIsRefused()
    {
        QFETCH(uint32_t, gpus);
        QFETCH(bool, subscribed);
        QFETCH(QString, mentions);
        be::Simulator sim(64, 1);
        const auto topology = topologyFor(sim);
        sim.step();
        const auto good = be::encodeFrame(*sim.snapshot(), { be::MetricId::GpuTemp }, generation);
        pb::FramePart part;
        part.set_sequence(9);
        part.set_topology_generation(generation);
        part.set_fleet_gpu_count(64);
        part.set_part_count(2); // not the last part: without the checks, nothing else finds fault with it
        part.set_gpu_count(gpus);
        part.set_health(std::string(gpus, '\0'));
        for (int i = 0; i < 100000; ++i) {
            auto *plane = part.add_planes();
            plane->set_metric_id("m" + std::to_string(i));
            plane->set_encoding(pb::PLANE_ENCODING_FLOAT32);
            plane->set_values(std::string(4 * gpus, '\0'));
        }
        FrameAssembler assembler(
            topology, subscribed ? std::vector<std::string> { "gpu_temp" } : std::vector<std::string> {});
        const auto r = assembler.add(part);
        QVERIFY(!r.frame);
        QVERIFY2(r.error.contains(mentions), qPrintable(r.error));
        const auto next = assembler.add(good[0]);
        QVERIFY2(next.frame, qPrintable(next.error));
    }

    // With metrics named, a part carries exactly them, in any order, each once; without (the default set), metric
    // ids a view can carry, each once. Later parts carry the first part's planes.
    void planesAreThoseSubscribed_data()
    {
        QTest::addColumn<QStringList>("subscription");
        QTest::addColumn<QStringList>("planes");
        QTest::addColumn<QString>("mentions"); // empty: accepted
        const QStringList two { QStringLiteral("gpu_temp"), QStringLiteral("power") };
        QTest::newRow("as subscribed") << two << two << QString();
        QTest::newRow("in another order")
            << two << QStringList { QStringLiteral("power"), QStringLiteral("gpu_temp") } << QString();
        QTest::newRow("a metric named twice counts once")
            << QStringList { QStringLiteral("power"), QStringLiteral("gpu_temp"), QStringLiteral("power") } << two
            << QString();
        QTest::newRow("one missing") << two << QStringList { QStringLiteral("gpu_temp") }
                                     << QStringLiteral("carries 1 planes, the subscription 2");
        QTest::newRow("one more") << two << (two + QStringList { QStringLiteral("gpu_util") })
                                  << QStringLiteral("carries 3 planes, the subscription 2");
        QTest::newRow("one twice") << two << QStringList { QStringLiteral("power"), QStringLiteral("power") }
                                   << QStringLiteral("was not subscribed to, or comes twice");
        QTest::newRow("another") << two << QStringList { QStringLiteral("power"), QStringLiteral("fb_used") }
                                 << QStringLiteral("('fb_used') was not subscribed to");
        QTest::newRow("default set") << QStringList() << two << QString();
        QTest::newRow("default set, one twice")
            << QStringList() << QStringList { QStringLiteral("power"), QStringLiteral("power") }
            << QStringLiteral("is no metric id, or comes twice");
        QTest::newRow("default set, no id")
            << QStringList() << QStringList { QStringLiteral("gpu temp") } << QStringLiteral("is no metric id");
    }
    void planesAreThoseSubscribed()
    {
        QFETCH(QStringList, subscription);
        QFETCH(QStringList, planes);
        QFETCH(QString, mentions);
        be::Simulator sim(300, 1);
        const auto topology = topologyFor(sim);
        sim.step();
        auto parts = be::encodeFrame(*sim.snapshot(), { be::MetricId::GpuTemp }, generation, 100);
        QCOMPARE(parts.size(), size_t(3));
        for (auto &part : parts) {
            const auto plane = part.planes(0);
            part.clear_planes();
            for (const QString &id : std::as_const(planes)) {
                *part.add_planes() = plane;
                part.mutable_planes(part.planes_size() - 1)->set_metric_id(id.toStdString());
            }
        }
        std::vector<std::string> ids;
        for (const QString &id : std::as_const(subscription)) {
            ids.push_back(id.toStdString());
        }
        FrameAssembler assembler(topology, ids);
        const auto first = assembler.add(parts[0]);
        if (!mentions.isEmpty()) {
            QVERIFY2(first.error.contains(mentions), qPrintable(first.error));
            return;
        }
        QVERIFY2(first.error.isEmpty(), qPrintable(first.error));
        // A later part whose planes differ from the first's is refused, and the frame with it.
        auto swapped = parts[1];
        if (swapped.planes_size() > 1) {
            swapped.mutable_planes()->SwapElements(0, 1);
            const auto r = assembler.add(swapped);
            QVERIFY2(r.error.contains(QStringLiteral("changed between parts")), qPrintable(r.error));
            QVERIFY(assembler.add(parts[0]).error.isEmpty());
        }
        QVERIFY(assembler.add(parts[1]).error.isEmpty());
        const auto last = assembler.add(parts[2]);
        QVERIFY2(last.frame, qPrintable(last.error));
        QCOMPARE(last.frame->planes.size(), size_t(planes.size()));
        for (const auto &plane : last.frame->planes) {
            QCOMPARE(plane.values.size(), size_t(300));
        }
    }

    // A frame's part count: at most one part per GPU, the same in every part of the frame.
    void partCountsAreBoundedAndKept()
    {
        be::Simulator sim(300, 1);
        const auto topology = topologyFor(sim);
        sim.step();
        const auto parts = be::encodeFrame(*sim.snapshot(), { be::MetricId::Power }, generation, 100);
        FrameAssembler assembler(topology, { "power" });
        auto tooMany = parts[0];
        tooMany.set_part_count(301);
        auto r = assembler.add(tooMany);
        QVERIFY2(r.error.contains(QStringLiteral("out of order or covers no GPU")), qPrintable(r.error));
        QVERIFY(assembler.add(parts[0]).error.isEmpty());
        auto changed = parts[1];
        changed.set_part_count(2); // would end the frame short, or with another count
        r = assembler.add(changed);
        QVERIFY2(r.error.contains(QStringLiteral("part 1 of 2")), qPrintable(r.error));
        for (size_t i = 0; i < parts.size(); ++i) {
            r = assembler.add(parts[i]);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        }
        QVERIFY(r.frame);
    }

    // Planes past maxPlaneValuesUpFront (a default set of many metrics over a large fleet) grow as the parts bring
    // values: the frame is whole and no plane holds more room than the fleet.
    void manyPlanesOfALargeFleetGrowAsPartsCome()
    {
        be::Simulator sim(70000, 1);
        const auto topology = topologyFor(sim);
        QVERIFY(topology);
        sim.step();
        const auto snapshot = sim.snapshot();
        auto parts = be::encodeFrame(*snapshot, { be::MetricId::GpuTemp }, generation, 7000);
        QCOMPARE(parts.size(), size_t(10));
        constexpr int planes = 256;
        QVERIFY(uint64_t { 70000 } * planes > maxPlaneValuesUpFront);
        for (auto &part : parts) {
            const auto plane = part.planes(0);
            for (int i = 1; i < planes; ++i) {
                *part.add_planes() = plane;
                part.mutable_planes(i)->set_metric_id("m" + std::to_string(i));
            }
        }
        FrameAssembler assembler(topology);
        FramePtr frame;
        for (const auto &part : parts) {
            auto r = assembler.add(part);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            frame = r.frame;
        }
        QVERIFY(frame);
        QCOMPARE(frame->planes.size(), size_t(planes));
        const auto &temp = snapshot->plane(be::MetricId::GpuTemp);
        for (const auto &plane : frame->planes) {
            QCOMPARE(plane.values.size(), size_t(70000));
            QCOMPARE(plane.values.capacity(), size_t(70000));
        }
        QVERIFY(frame->planes[0].values == temp);
        QVERIFY(frame->planes[planes - 1].values == temp);
        QCOMPARE(frame->health.size(), size_t(70000));
    }

    // GetTopology's parts are checked as they come against what the header's GPU count can need: a stream past that
    // is refused at the part that passes it (the session cuts it then), not gathered for the 20 s of its deadline.
    void topologyStreamsAreBoundedByTheirHeader()
    {
        be::Simulator sim(10240, 1);
        const auto parts = be::encodeTopology(sim.shape(), generation, 100);
        QVERIFY(parts.size() > 10);
        QString error;
        {
            TopologyCollector collector;
            for (auto part : parts) {
                QVERIFY2(collector.add(std::move(part), &error), qPrintable(error));
            }
            const auto topology = collector.finish(&error);
            QVERIFY2(topology, qPrintable(error));
            QCOMPARE(topology->gpuCount, 10240U);
            QCOMPARE(topology->nodes.size(), sim.shape().nodes.size());
        }
        const auto refusedAt = [&](const std::vector<pb::TopologyPart> &stream) -> int {
            TopologyCollector collector;
            for (size_t i = 0; i < stream.size(); ++i) {
                auto part = stream[i];
                if (!collector.add(std::move(part), &error)) {
                    QString again;
                    if (collector.finish(&again) || again != error) {
                        return -2; // a refused stream must stay refused
                    }
                    return static_cast<int>(i);
                }
            }
            return -1;
        };
        // Parts past those announced: refused at the first of them, however many follow.
        auto endless = parts;
        for (int i = 0; i < 1000; ++i) {
            endless.push_back(parts[1]);
            endless.back().set_part_index(static_cast<uint32_t>(endless.size() - 1));
        }
        QCOMPARE(refusedAt(endless), int(parts.size()));
        QVERIFY2(error.contains(QStringLiteral("past the %1 parts").arg(parts.size())), qPrintable(error));
        // A header announcing more parts than a fleet of its GPUs can need.
        auto announced = parts;
        announced[0].set_part_count(10242);
        QCOMPARE(refusedAt(announced), 0);
        QVERIFY2(error.contains(QStringLiteral("10242 parts for 10240 GPUs")), qPrintable(error));
        // No GPU, or more than the console handles.
        for (const uint32_t gpus : { 0U, maxGpus + 1 }) {
            auto claim = parts;
            claim[0].set_gpu_count(gpus);
            QCOMPARE(refusedAt(claim), 0);
        }
        // A later part without a node (they would cost nothing on the wire, and something each in memory).
        auto empty = parts;
        empty[3].clear_nodes();
        QCOMPARE(refusedAt(empty), 3);
        QVERIFY2(error.contains(QStringLiteral("part 3 holds no node")), qPrintable(error));
        // More nodes than GPUs, or nodes holding more GPUs than claimed.
        auto nodes = parts;
        nodes[0].set_gpu_count(800); // the first 100 nodes hold 800 GPUs
        QCOMPARE(refusedAt(nodes), 1);
        QVERIFY2(error.contains(QStringLiteral("more than the 800 GPUs it claims")), qPrintable(error));
        // More identities than a node has GPUs.
        auto identities = parts;
        identities[2].mutable_nodes(0)->add_gpu_uuids("GPU-extra");
        QCOMPARE(refusedAt(identities), 2);
        QVERIFY2(error.contains(QStringLiteral("more GPU identities")), qPrintable(error));
        // Bytes: past 16 MiB and 256 a GPU, however few the parts.
        auto bytes = parts;
        bytes[1].mutable_nodes(0)->set_model(std::string(maxTopologyBytes(10240) + 1, 'm'));
        QCOMPARE(refusedAt(bytes), 1);
        QVERIFY2(error.contains(QStringLiteral("bytes, more than its 10240 GPUs can need")), qPrintable(error));
        // Out of order, or a stream that does not start with its header.
        auto order = parts;
        std::swap(order[1], order[2]);
        QCOMPARE(refusedAt(order), 1);
        QCOMPARE(refusedAt({ parts[1] }), 0);
    }
};

QTEST_GUILESS_MAIN(TestProtoDecode)
#include "tst_protodecode.moc"
