// SPDX-License-Identifier: Apache-2.0
// What the service's calls share and give back: one encoding of a frame (per set of metrics) or a topology (per
// generation) for every call sending it at the time, nothing held once no call sends it, a failed encoding seen by
// every caller waiting for it; subscribers on a served simulated fleet sharing their frames; and the heap trim that
// calls ending set off (when the calls under way fall to half their most, or once none has started for a while; at
// most once an interval), giving freed memory back to the system.
#include "servedbackend.h"
#include "service/heaptrim.h"
#include "service/sharedencodings.h"
#include "service/telemetryservice.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
be::SharedEncodings::FrameParts partsOf(uint64_t sequence, int count)
{
    be::SharedEncodings::FrameParts parts(static_cast<size_t>(count));
    for (auto &p : parts) {
        p.set_sequence(sequence);
    }
    return parts;
}

be::Frame frameNumbered(uint64_t sequence)
{
    be::Frame f;
    f.sequence = sequence;
    return f;
}

double residentMiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) {
        return 0;
    }
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').constFirst().toDouble() / 1024.0;
        }
    }
    return 0;
}
} // namespace

class TestSharedEncodings : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void callsAskingAtOnceShareOneEncoding()
    {
        be::SharedEncodings shared;
        const be::Frame frame = frameNumbered(7);
        const std::vector<be::MetricId> metrics = be::defaultMetrics();
        // The first caller's encoding waits until every caller has asked, so all of them ask while it is under way.
        constexpr int callers = 16;
        std::mutex mutex;
        std::condition_variable allAsked;
        int asking = 0;
        std::atomic<int> encodings { 0 };
        auto encode = [&] {
            ++encodings;
            std::unique_lock lock(mutex);
            allAsked.wait_for(lock, 10s, [&] { return asking == callers; });
            return partsOf(7, 3);
        };
        std::vector<std::shared_ptr<const be::SharedEncodings::FrameParts>> got(callers);
        std::vector<std::thread> threads;
        for (int i = 0; i < callers; ++i) {
            threads.emplace_back([&, i] {
                {
                    std::lock_guard lock(mutex);
                    ++asking;
                }
                allAsked.notify_all();
                got[static_cast<size_t>(i)] = shared.frame(frame, metrics, 1, encode);
            });
        }
        for (auto &t : threads) {
            t.join();
        }
        QCOMPARE(encodings.load(), 1);
        QCOMPARE(shared.frames().encoded(), uint64_t(1));
        QCOMPARE(shared.frames().asked(), uint64_t(callers));
        for (const auto &parts : got) {
            QCOMPARE(parts.get(), got.front().get());
        }
        QCOMPARE(got.front()->size(), size_t(3));
    }

    void theNewestFramesAreKeptOlderOnesWhileACallHoldsThem()
    {
        be::SharedEncodings shared;
        const auto metrics = be::defaultMetrics();
        int encodings = 0;
        auto encode = [&] {
            ++encodings;
            return partsOf(1, 1);
        };
        auto ask = [&](uint64_t sequence, const std::vector<be::MetricId> &m, uint64_t generation) {
            return shared.frame(frameNumbered(sequence), m, generation, encode);
        };
        // The newest two frames are kept for calls still to ask, held or not.
        ask(1, metrics, 1);
        ask(2, metrics, 1);
        QCOMPARE(ask(1, metrics, 1).get(), ask(1, metrics, 1).get());
        QCOMPARE(encodings, 2);
        QCOMPARE(shared.frames().held(), size_t(2));
        // Other metrics or another generation: another encoding.
        ask(2, { be::MetricId::GpuTemp }, 1);
        ask(2, metrics, 2);
        QCOMPARE(encodings, 4);
        // A newer frame: frame 1 is no longer among the newest two, and nobody holds it.
        auto held = ask(2, metrics, 1);
        const auto newest = ask(3, metrics, 1);
        QCOMPARE(encodings, 5);
        QCOMPARE(shared.frames().held(), size_t(4)); // frame 2 thrice, frame 3
        ask(1, metrics, 1);
        QCOMPARE(encodings, 6);
        // Older frames, as a resuming subscriber asks for them, are shared while held and not kept after.
        {
            const auto old = ask(1, metrics, 1);
            QCOMPARE(ask(1, metrics, 1).get(), old.get());
            QCOMPARE(encodings, 7);
        }
        ask(4, metrics, 1); // frame 2 leaves the newest two; `held` still holds it
        QCOMPARE(ask(2, metrics, 1).get(), held.get());
        QCOMPARE(encodings, 8);
        held.reset();
        ask(5, metrics, 1);
        QCOMPARE(shared.frames().held(), size_t(3)); // frames 4 and 5, and 3 (`newest` holds it)
        ask(2, metrics, 1);
        QCOMPARE(encodings, 10);
    }

    void aFailedEncodingReachesEveryWaiterAndIsNotKept()
    {
        be::SharedEncodings shared;
        std::mutex mutex;
        std::condition_variable changed;
        bool waiterAsked = false;
        bool fail = true;
        auto encode = [&]() -> be::SharedEncodings::TopologyParts {
            std::unique_lock lock(mutex);
            changed.wait_for(lock, 10s, [&] { return waiterAsked; });
            if (fail) {
                throw std::runtime_error("out of memory, say");
            }
            return be::SharedEncodings::TopologyParts(2);
        };
        std::atomic<int> failures { 0 };
        std::thread encoder([&] {
            try {
                shared.topology(5, encode);
            } catch (const std::runtime_error &) {
                ++failures;
            }
        });
        // The waiter asks while the encoding is under way (it has been counted as asked for once the encoder asked).
        QTRY_COMPARE_WITH_TIMEOUT(shared.topologies().asked(), uint64_t(1), 10000);
        std::thread waiter([&] {
            {
                std::lock_guard lock(mutex);
                waiterAsked = true;
            }
            changed.notify_all();
            try {
                shared.topology(5, [] { return be::SharedEncodings::TopologyParts(9); });
            } catch (const std::runtime_error &) {
                ++failures;
            }
        });
        encoder.join();
        waiter.join();
        // The waiter either waited for the failed encoding (and got its error) or came after it was dropped and made
        // its own (9 parts); either way nothing failed is kept.
        QVERIFY(failures.load() >= 1);
        fail = false;
        const auto parts = shared.topology(5, encode);
        QVERIFY(parts->size() == 2 || parts->size() == 9);
        QCOMPARE(shared.topologies().held(), size_t(1));
    }

    void subscribersOfAServedFleetShareTheirFrames()
    {
        be::SimulationOptions fleet;
        fleet.gpuCount = 10240;
        fleet.interval = 200ms;
        auto served = fleetscope::testing::serveSimulation(fleet);

        // Twelve subscribers, each with a stream open at once, read their first five frames.
        constexpr int subscribers = 12;
        constexpr int frames = 5;
        auto &stub = served.stub;
        std::atomic<int> done { 0 };
        std::vector<std::thread> readers;
        for (int i = 0; i < subscribers; ++i) {
            readers.emplace_back([&] {
                grpc::ClientContext context;
                context.set_deadline(std::chrono::system_clock::now() + 30s);
                auto stream = stub->Subscribe(&context, pb::SubscribeRequest());
                pb::FramePart part;
                int read = 0;
                while (read < frames && stream->Read(&part)) {
                    read += part.part_index() + 1 == part.part_count() ? 1 : 0;
                }
                done += read == frames ? 1 : 0;
                context.TryCancel();
                stream->Finish();
            });
        }
        for (auto &r : readers) {
            r.join();
        }
        QCOMPARE(done.load(), subscribers);
        const uint64_t asked = served.server->service().encodings().frames().asked();
        const uint64_t encoded = served.server->service().encodings().frames().encoded();
        qInfo("%d subscribers x %d frames: %llu frames asked for, %llu encoded", subscribers, frames,
            static_cast<unsigned long long>(asked), static_cast<unsigned long long>(encoded));
        QVERIFY(asked >= static_cast<uint64_t>(subscribers * frames));
        // Subscribers woken by the same frame share it; a few may come after the others let it go (and encode it
        // again), never most.
        QVERIFY2(encoded * 3 <= asked, qPrintable(QStringLiteral("%1 of %2").arg(encoded).arg(asked)));
    }

    void callsFallingToHalfTheirMostTrimAtMostOnceAnInterval()
    {
        std::atomic<int> trims { 0 };
        // (No quiet trims here: that rule has its own test.)
        be::HeapTrim trim(200ms, 16, std::chrono::hours(1), [&] { ++trims; });
        auto open = [&](size_t n) {
            std::vector<std::unique_ptr<be::HeapTrim::Call>> calls;
            for (size_t i = 0; i < n; ++i) {
                calls.push_back(std::make_unique<be::HeapTrim::Call>(&trim));
            }
            return calls;
        };
        // A steady 100 calls with others starting and ending beside them (consoles streaming and polling): never due,
        // so nothing is trimmed, then or later.
        auto steady = open(100);
        for (int i = 0; i < 1000; ++i) {
            const auto call = trim.call();
        }
        QCOMPARE(trim.trims(), uint64_t(0));
        // A few calls ending (fewer than 16): not worth a trim.
        {
            auto few = open(10);
        }
        QCOMPARE(trim.trims(), uint64_t(0));
        // The 100 end: a trim.
        steady.clear();
        QTRY_COMPARE_WITH_TIMEOUT(trims.load(), 1, 5000);
        QCOMPARE(trim.trims(), uint64_t(1));
        // A storm of 2,000 that ends at once: one trim when half have ended, one more after the interval for the
        // rest, no more.
        auto storm = open(2000);
        storm.clear();
        QTRY_VERIFY_WITH_TIMEOUT(trims.load() >= 2, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(trim.trims(), static_cast<uint64_t>(trims.load()), 5000);
        QVERIFY(trims.load() <= 3);
    }

    void callsEndingThenNoneStartingTrimOnceQuiet()
    {
        std::atomic<int> trims { 0 };
        be::HeapTrim trim(200ms, 16, 300ms, [&] { ++trims; });
        // A burst of short calls (bad requests, say), fewer at once than a storm's drop: once none has started for
        // the quiet time, one trim.
        for (int i = 0; i < 500; ++i) {
            const auto call = trim.call();
        }
        QElapsedTimer clock;
        clock.start();
        QTRY_COMPARE_WITH_TIMEOUT(trims.load(), 1, 5000);
        QVERIFY(clock.elapsed() >= 250); // not before the quiet time (from the last start, a moment before the clock)
        QCOMPARE(trim.trims(), uint64_t(1));
        // Nothing more ends: no more trims (the next would need a call to end).
        const auto call = trim.call();
        QCOMPARE(trims.load(), 1);
    }

    void aTrimGivesFreedMemoryBack()
    {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        QSKIP("glibc's malloc only (the sanitizers bring their own allocator)");
#else
        // 256 MiB freed inside the heap, between blocks still in use, as ended calls leave it: malloc keeps it.
        // (A block freed at once first raises glibc's mmap threshold above the blocks' size, as the streams' large
        // buffers do, so the blocks come from the heap rather than mappings of their own.)
        void *volatile large = std::malloc(8U << 20U); // volatile: the compiler may not leave the pair out
        std::free(large);
        constexpr size_t blockBytes = 1U << 20U;
        constexpr int blocks = 256;
        std::vector<char *> freed;
        std::vector<void *> kept;
        for (int i = 0; i < blocks; ++i) {
            auto *block = static_cast<char *>(std::malloc(blockBytes));
            QVERIFY(block);
            for (size_t b = 0; b < blockBytes; b += 4096) {
                block[b] = 1; // resident
            }
            freed.push_back(block);
            kept.push_back(std::malloc(64U << 10U)); // too large for malloc's caches: it comes right after the block
        }
        for (char *block : freed) {
            std::free(block);
        }
        const double before = residentMiB();
        be::HeapTrim trim;
        {
            std::vector<std::unique_ptr<be::HeapTrim::Call>> calls;
            for (uint64_t i = 0; i < be::HeapTrim::defaultLeastDrop; ++i) {
                calls.push_back(std::make_unique<be::HeapTrim::Call>(&trim));
            }
        }
        QTRY_VERIFY_WITH_TIMEOUT(trim.trims() >= 1, 5000);
        const double after = residentMiB();
        qInfo("resident %.0f MiB with 256 MiB freed, %.0f MiB after the trim", before, after);
        for (void *k : kept) {
            std::free(k);
        }
        QVERIFY2(before - after > 200, qPrintable(QStringLiteral("%1 -> %2 MiB").arg(before).arg(after)));
#endif
    }
};

QTEST_GUILESS_MAIN(TestSharedEncodings)
#include "tst_sharedencodings.moc"
