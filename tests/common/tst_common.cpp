// SPDX-License-Identifier: Apache-2.0
// The facts both sides share (common/) against the wire contract and against themselves.
#include "common/events.h"
#include "common/health.h"
#include "common/heap.h"
#include "common/xid.h"

#include "fleetscope/telemetry/v1/telemetry.pb.h"

#include <QTest>

#include <sys/resource.h>

#include <cstdlib>
#include <set>
#include <string>

using namespace fleetscope;
namespace pb = fleetscope::telemetry::v1;

class TestCommon : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eventKindsMatchTheWire()
    {
        // The .proto numbers its kinds from 1 (0 is unspecified); common/ from 0, in the same order.
        QCOMPARE(eventKindCount, pb::EventKind_ARRAYSIZE - 1);
        const std::pair<EventKind, pb::EventKind> pairs[] = {
            { EventKind::Xid, pb::EVENT_KIND_XID },
            { EventKind::EccDoubleBit, pb::EVENT_KIND_ECC_DOUBLE_BIT },
            { EventKind::ThermalThrottleStart, pb::EVENT_KIND_THERMAL_THROTTLE_START },
            { EventKind::ThermalThrottleEnd, pb::EVENT_KIND_THERMAL_THROTTLE_END },
            { EventKind::PowerThrottleStart, pb::EVENT_KIND_POWER_THROTTLE_START },
            { EventKind::PowerThrottleEnd, pb::EVENT_KIND_POWER_THROTTLE_END },
            { EventKind::NodeDown, pb::EVENT_KIND_NODE_DOWN },
            { EventKind::NodeUp, pb::EVENT_KIND_NODE_UP },
            { EventKind::JobStart, pb::EVENT_KIND_JOB_START },
            { EventKind::JobEnd, pb::EVENT_KIND_JOB_END },
            { EventKind::AnomalyStart, pb::EVENT_KIND_ANOMALY_START },
            { EventKind::AnomalyEnd, pb::EVENT_KIND_ANOMALY_END },
            { EventKind::IncidentOpen, pb::EVENT_KIND_INCIDENT_OPEN },
            { EventKind::IncidentUpdate, pb::EVENT_KIND_INCIDENT_UPDATE },
            { EventKind::IncidentClose, pb::EVENT_KIND_INCIDENT_CLOSE },
        };
        std::set<std::string> names;
        for (const auto &[kind, wire] : pairs) {
            QCOMPARE(static_cast<int>(kind) + 1, static_cast<int>(wire));
            names.insert(eventKindName(kind));
        }
        QCOMPARE(names.size(), std::size(pairs)); // every kind named, and no two alike
        QVERIFY(names.count("") == 0);
        QCOMPARE(static_cast<int>(EventSeverity::Critical), static_cast<int>(pb::SEVERITY_CRITICAL));
        QCOMPARE(static_cast<int>(EventSeverity::Warning), static_cast<int>(pb::SEVERITY_WARNING));
    }

    void healthByte()
    {
        // States fit under the mask, flags above it and apart from each other.
        QVERIFY(health::NoData <= health::stateMask);
        QCOMPARE(health::stateCount, uint8_t(health::NoData + 1));
        for (uint8_t flag : { health::throttledFlag, health::eccFlag, health::xidFlag }) {
            QCOMPARE(flag & health::stateMask, 0);
        }
        QCOMPARE(health::throttledFlag & health::eccFlag, 0);
        QCOMPARE(health::eccFlag & health::xidFlag, 0);
        QCOMPARE(health::stateOf(health::Critical | health::xidFlag | health::throttledFlag), health::Critical);
    }

    void xidCatalogue()
    {
        QCOMPARE(std::string(xidMeaning(79)), std::string("GPU has fallen off the bus"));
        QCOMPARE(std::string(xidMeaning(48)), std::string("Double-bit ECC error"));
        QVERIFY(xidMeaning(1) == nullptr);
        std::set<uint32_t> codes;
        for (const XidInfo &x : fleetscope::xidCatalogue) {
            QVERIFY2(codes.insert(x.code).second, "an XID listed twice");
            QVERIFY(x.meaning != nullptr && x.meaning[0] != 0);
        }
        static_assert(fleetscope::xidMeaning(43) != nullptr, "usable at compile time");
        // Serious: the GPU is out of service. Every serious XID has a meaning; soft ones are not serious.
        QVERIFY(fleetscope::xidSerious(79) && fleetscope::xidSerious(95) && fleetscope::xidSerious(119));
        QVERIFY(!fleetscope::xidSerious(13) && !fleetscope::xidSerious(92) && !fleetscope::xidSerious(0));
        for (uint32_t code = 0; code < 256; ++code) {
            QVERIFY(!fleetscope::xidSerious(code) || xidMeaning(code) != nullptr);
        }
    }

    void freedBuffersAreReused()
    {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        QSKIP("glibc's malloc only (the sanitizers bring their own allocator)");
#else
        // An 8 MiB buffer (a 1080p map image), freed and allocated again: the second one is the first one's memory,
        // already resident, not 2,048 pages faulted in afresh. glibc left alone maps the first on its own and unmaps
        // it when freed; the second comes from a heap grown for it, faulted in again.
        heap::keepFreedMemory();
        constexpr size_t bytes = 8U << 20U;
        constexpr long pages = static_cast<long>(bytes / 4096);
        const auto touch = [] {
            auto *buffer = static_cast<volatile char *>(std::malloc(bytes));
            for (size_t b = 0; b < bytes; b += 4096) {
                buffer[b] = 1;
            }
            std::free(const_cast<char *>(buffer));
        };
        const auto faults = [] {
            rusage usage {};
            getrusage(RUSAGE_THREAD, &usage);
            return usage.ru_minflt;
        };
        touch();
        const long before = faults();
        touch();
        const long again = faults() - before;
        qInfo("%ld page faults for an 8 MiB buffer allocated again (%ld pages)", again, pages);
        QVERIFY2(again < pages / 10, qPrintable(QString::number(again)));
#endif
    }
};

QTEST_GUILESS_MAIN(TestCommon)
#include "tst_common.moc"
