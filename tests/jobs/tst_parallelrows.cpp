// SPDX-License-Identifier: Apache-2.0
// ParallelRows: every index runs once, on the caller and its helpers at once; what the caller wrote is seen by every
// call and what the calls wrote is seen by the caller after run(); helpers of a background object run lowered; runs
// follow one another without a late helper joining the wrong one.
#include "jobs/background.h"
#include "jobs/parallelrows.h"

#include <QDeadlineTimer>
#include <QTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace fleetscope;

class TestParallelRows : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyIndexRunsOnceAndTheWritesComeBack()
    {
        ParallelRows rows(3);
        std::vector<int> input(1000);
        for (size_t i = 0; i < input.size(); ++i) {
            input[i] = static_cast<int>(i) * 3; // written before run(), read by the helpers
        }
        std::vector<int> output(input.size(), -1);
        std::vector<std::atomic<int>> calls(input.size());
        rows.run(static_cast<int>(input.size()), [&](int i) {
            ++calls[static_cast<size_t>(i)];
            output[static_cast<size_t>(i)] = input[static_cast<size_t>(i)] + 1; // plain writes, read after run()
        });
        for (size_t i = 0; i < input.size(); ++i) {
            QCOMPARE(calls[i].load(), 1);
            QCOMPARE(output[i], static_cast<int>(i) * 3 + 1);
        }
    }

    // The caller works too, and the helpers work at the same time as it: an index that waits for another thread to
    // arrive only returns if two threads run at once.
    void theCallerAndItsHelpersRunAtOnce()
    {
        ParallelRows rows(2);
        std::mutex mutex;
        std::set<std::thread::id> threads;
        std::atomic<int> arrived { 0 };
        std::atomic<bool> met { false };
        rows.run(3, [&](int) {
            {
                const std::lock_guard lock(mutex);
                threads.insert(std::this_thread::get_id());
            }
            ++arrived;
            QDeadlineTimer deadline(5000);
            while (arrived < 2 && !deadline.hasExpired()) {
                std::this_thread::yield();
            }
            if (arrived >= 2) {
                met = true;
            }
        });
        QVERIFY(met);
        QVERIFY(threads.size() >= 2);
    }

    void fewIndicesOrNoHelpersRunOnTheCaller()
    {
        for (const int helpers : { 0, 2 }) {
            ParallelRows rows(helpers);
            QCOMPARE(rows.helpers(), helpers);
            int sum = 0;
            std::thread::id where;
            rows.run(1, [&](int i) {
                sum += i + 1;
                where = std::this_thread::get_id();
            });
            QCOMPARE(sum, 1);
            QCOMPARE(where, std::this_thread::get_id());
            rows.run(0, [&](int) { sum = -1; });
            QCOMPARE(sum, 1);
        }
        ParallelRows none(0);
        std::vector<int> order;
        none.run(4, [&](int i) { order.push_back(i); }); // no helper: in order, on the caller
        QCOMPARE(order, (std::vector<int> { 0, 1, 2, 3 }));
    }

    // Thousands of short runs one after the other, of different sizes: no index lost or run twice, none run after
    // its run() returned (a helper late for one run must not join the next with the old one's function).
    void runsFollowOneAnother()
    {
        ParallelRows rows(3);
        for (int run = 0; run < 3000; ++run) {
            const int count = 1 + run % 7;
            std::vector<std::atomic<int>> calls(static_cast<size_t>(count));
            std::atomic<bool> returned { false };
            std::atomic<int> late { 0 };
            rows.run(count, [&](int i) {
                if (returned) {
                    ++late;
                }
                ++calls[static_cast<size_t>(i)];
            });
            returned = true;
            QCOMPARE(late.load(), 0);
            for (const auto &c : calls) {
                QCOMPARE(c.load(), 1);
            }
        }
    }

    // A background object's helpers lower themselves (jobs/background.h); the caller's own share stays as it was.
    void backgroundHelpersRunLowered()
    {
        ParallelRows rows(2, ParallelRows::Priority::Background);
        const std::thread::id caller = std::this_thread::get_id();
        const bool callerLowered = runsInBackground();
        std::atomic<int> helperCalls { 0 };
        std::atomic<int> helperCallsLowered { 0 };
        std::atomic<bool> callerStayed { true };
        rows.run(64, [&](int) {
            if (std::this_thread::get_id() == caller) {
                callerStayed = callerStayed && runsInBackground() == callerLowered;
                QDeadlineTimer deadline(5000); // leave some to the helpers
                while (helperCalls == 0 && !deadline.hasExpired()) {
                    std::this_thread::yield();
                }
                return;
            }
            ++helperCalls;
            helperCallsLowered += runsInBackground() ? 1 : 0;
        });
        QVERIFY(helperCalls > 0);
        QCOMPARE(helperCallsLowered.load(), helperCalls.load());
        QVERIFY(callerStayed);
        QCOMPARE(runsInBackground(), callerLowered);

        ParallelRows asCaller(2);
        std::atomic<int> lowered { 0 };
        asCaller.run(64, [&](int) { lowered += runsInBackground() ? 1 : 0; });
        QCOMPARE(lowered.load(), 0);
    }

    // Two threads calling one object take turns: each run sees all of its own indices and none of the other's.
    void twoCallersTakeTurns()
    {
        ParallelRows rows(2);
        std::atomic<int> total { 0 };
        std::atomic<int> wrongRuns { 0 };
        const auto caller = [&] {
            for (int run = 0; run < 200; ++run) {
                std::atomic<int> mine { 0 };
                rows.run(8, [&](int) {
                    ++mine;
                    ++total;
                });
                if (mine != 8) {
                    ++wrongRuns;
                }
            }
        };
        std::thread other(caller);
        caller();
        other.join();
        QCOMPARE(total.load(), 2 * 200 * 8);
        QCOMPARE(wrongRuns.load(), 0);
    }
};

QTEST_GUILESS_MAIN(TestParallelRows)
#include "tst_parallelrows.moc"
