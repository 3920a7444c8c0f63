// SPDX-License-Identifier: Apache-2.0
// JobTracker: the latest request wins. A result of a job started before a later one (or a cancel) is never applied; a
// job already stale when its turn comes is not run; a running job sees its ticket go stale; results are applied on the
// owner's thread; nothing is applied after the tracker has gone.
#include "jobs/jobtracker.h"

#include <QDeadlineTimer>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace fleetscope;

namespace {
// A gate a job waits at until the test opens it (without processing the test thread's events).
struct Gate
{
    std::atomic<bool> entered { false };
    std::atomic<bool> open { false };
    void pass()
    {
        entered = true;
        QDeadlineTimer deadline(10000);
        while (!open && !deadline.hasExpired()) {
            std::this_thread::yield();
        }
    }
    bool waitUntilEntered() const
    {
        QDeadlineTimer deadline(10000);
        while (!entered && !deadline.hasExpired()) {
            std::this_thread::yield();
        }
        return entered;
    }
};
} // namespace

class TestJobTracker : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theLatestRequestWins()
    {
        JobTracker tracker;
        QThread *const owner = QThread::currentThread();
        auto gate = std::make_shared<Gate>();
        std::atomic<int> computed { 0 };
        std::vector<std::string> applied;
        bool appliedOnOwner = true;
        tracker.start(
            [gate, &computed](const JobTracker::Ticket &) {
                gate->pass();
                ++computed;
                return std::string("first");
            },
            [&](std::string result) { applied.push_back(std::move(result)); });
        QVERIFY(gate->waitUntilEntered());
        // Two more while the first runs: the second is stale before its turn and never computed.
        for (const char *name : { "second", "third" }) {
            tracker.start(
                [name, &computed, owner](const JobTracker::Ticket &) {
                    ++computed;
                    return std::string(name) + (QThread::currentThread() == owner ? " on the owner" : "");
                },
                [&, owner](std::string result) {
                    appliedOnOwner = appliedOnOwner && QThread::currentThread() == owner;
                    applied.push_back(std::move(result));
                });
        }
        QVERIFY(tracker.running());
        gate->open = true;
        QTRY_VERIFY_WITH_TIMEOUT(!tracker.running(), 10000);
        QCOMPARE(applied, std::vector<std::string> { "third" });
        QCOMPARE(computed.load(), 2); // the first and the third
        QVERIFY(appliedOnOwner);
        // Nothing else arrives later: a job started now is applied after anything the earlier ones could still bring
        // (one worker, results in order).
        bool marker = false;
        tracker.start([](const JobTracker::Ticket &) {}, [&] { marker = true; });
        QTRY_VERIFY_WITH_TIMEOUT(marker, 10000);
        QCOMPARE(applied.size(), size_t(1));
    }

    void aRunningJobSeesItsTicketGoStale()
    {
        JobTracker tracker;
        auto sawStale = std::make_shared<std::atomic<bool>>(false);
        auto started = std::make_shared<Gate>();
        int applied = 0;
        tracker.start(
            [sawStale, started](const JobTracker::Ticket &ticket) {
                started->entered = true;
                QDeadlineTimer deadline(10000);
                while (!ticket.stale() && !deadline.hasExpired()) {
                    std::this_thread::yield();
                }
                *sawStale = ticket.stale();
                return 1;
            },
            [&](int) { ++applied; });
        QVERIFY(started->waitUntilEntered());
        tracker.cancel();
        QVERIFY(!tracker.running());
        QTRY_VERIFY_WITH_TIMEOUT(sawStale->load(), 10000);
        // The cancelled job's result is dropped; a new one is applied.
        int second = 0;
        tracker.start([](const JobTracker::Ticket &) { return 7; }, [&](int value) { second = value; });
        QTRY_COMPARE_WITH_TIMEOUT(second, 7, 10000);
        QCOMPARE(applied, 0);
    }

    void voidJobs()
    {
        JobTracker tracker;
        auto ran = std::make_shared<std::atomic<bool>>(false);
        bool applied = false;
        tracker.start([ran](const JobTracker::Ticket &) { *ran = true; }, [&] { applied = true; });
        QTRY_VERIFY_WITH_TIMEOUT(applied, 10000);
        QVERIFY(ran->load());
        QVERIFY(!tracker.running());
    }

    // The tracker going away waits for the job under way and applies nothing: apply may use what the owner holds.
    void nothingIsAppliedAfterTheTrackerHasGone()
    {
        auto gate = std::make_shared<Gate>();
        auto finished = std::make_shared<std::atomic<bool>>(false);
        bool applied = false;
        {
            JobTracker tracker;
            tracker.start(
                [gate, finished](const JobTracker::Ticket &) {
                    gate->pass();
                    *finished = true;
                    return 1;
                },
                [&](int) { applied = true; });
            QVERIFY(gate->waitUntilEntered());
            gate->open = true;
        } // waits for the job
        QVERIFY(finished->load());
        QCoreApplication::processEvents(); // what was posted before the tracker went would be delivered here
        QVERIFY(!applied);
    }

    // Results that are not copyable travel too (moved into apply).
    void moveOnlyResults()
    {
        JobTracker tracker;
        int value = 0;
        tracker.start([](const JobTracker::Ticket &) { return std::make_unique<int>(42); },
            [&](std::unique_ptr<int> result) { value = *result; });
        QTRY_COMPARE_WITH_TIMEOUT(value, 42, 10000);
    }
};

QTEST_GUILESS_MAIN(TestJobTracker)
#include "tst_jobtracker.moc"
