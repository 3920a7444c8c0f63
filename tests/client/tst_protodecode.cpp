// SPDX-License-Identifier: Apache-2.0
// Wire -> model: topology and frame decoding, reassembly of parts, and every kind of malformed topology or frame we
// drop. The other answers (catalogue, text for people, jobs, summary) are tst_answerdecode's.
#include "client/protodecode.h"
#include "model/heatmaplayout.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"
#include "tests/client/decodetesting.h"

#include <QTest>

#include <cmath>
#include <cstring>

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
        // A frame that ends short of the fleet is rejected too.
        auto shortEnd = first[1];
        shortEnd.set_part_count(2);
        QVERIFY(assembler.add(first[0]).error.isEmpty());
        const auto r = assembler.add(shortEnd);
        QVERIFY(!r.frame);
        QVERIFY2(r.error.contains(QStringLiteral("ended after 2000 of 3000")), qPrintable(r.error));
    }
};

QTEST_GUILESS_MAIN(TestProtoDecode)
#include "tst_protodecode.moc"
