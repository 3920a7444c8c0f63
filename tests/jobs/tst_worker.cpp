// SPDX-License-Identifier: Apache-2.0
// Worker: jobs run one at a time, in order, on a thread of their own; their results run on the owner's thread, in the
// same order; a Worker going away waits for the job under way and delivers nothing after. Under the tsan preset this
// suite also checks that both hand-overs are visible to ThreadSanitizer (the reason the Worker exists).
#include "jobs/worker.h"

#include "jobs/background.h"

#include <QDeadlineTimer>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace fleetscope;

namespace {
// Waits for flag without processing this thread's events (QTRY_* would deliver queued results meanwhile).
bool waitWithoutEvents(const std::atomic<bool> &flag)
{
    QDeadlineTimer deadline(10000);
    while (!flag && !deadline.hasExpired()) {
        std::this_thread::yield();
    }
    return flag;
}
} // namespace

class TestWorker : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void jobsRunInOrderOffTheOwnersThreadAndResultsOnIt()
    {
        Worker worker;
        QThread *const owner = QThread::currentThread();
        std::vector<int> ran; // written by the jobs, one at a time
        std::vector<int> delivered;
        bool offOwner = true;
        bool onOwner = true;
        for (int k = 0; k < 100; ++k) {
            // What the job captures is written here and read there: ThreadSanitizer must see the hand-over.
            auto payload = std::make_shared<std::vector<int>>(64, k);
            worker.run([&, k, payload]() -> Worker::Result {
                offOwner = offOwner && QThread::currentThread() != owner;
                ran.push_back(payload->back());
                auto answer = std::make_shared<int>(k * 2);
                if (k % 10 == 4) {
                    return {}; // nothing to deliver
                }
                return [&, k, answer] {
                    onOwner = onOwner && QThread::currentThread() == owner;
                    QCOMPARE(*answer, k * 2);
                    delivered.push_back(k);
                };
            });
        }
        // The last job delivers: once its result is here, every job has run.
        QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), std::size_t(90), 10000);
        QVERIFY(offOwner);
        QVERIFY(onOwner);
        QCOMPARE(ran.size(), std::size_t(100));
        for (int k = 0; k < 100; ++k) {
            QCOMPARE(ran[static_cast<std::size_t>(k)], k);
        }
        std::size_t i = 0;
        for (int k = 0; k < 100; ++k) {
            if (k % 10 != 4) {
                QCOMPARE(delivered[i++], k);
            }
        }
    }

    // A result ready but not yet delivered when the Worker goes is dropped.
    void nothingIsDeliveredAfterTheWorkerGoes()
    {
        auto worker = std::make_unique<Worker>();
        std::atomic<bool> done { false };
        bool delivered = false;
        worker->run([&]() -> Worker::Result {
            done = true;
            return [&] { delivered = true; };
        });
        QVERIFY(waitWithoutEvents(done)); // the job ran; its result may be queued for this thread by now
        worker.reset(); // no event processed in between
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }

    // The destructor waits for the job under way (which may use what its owner holds) before it returns.
    void goingAwayWaitsForTheJobUnderWay()
    {
        auto worker = std::make_unique<Worker>();
        std::atomic<bool> started { false };
        std::atomic<bool> release { false };
        std::atomic<bool> finished { false };
        std::atomic<bool> destroying { false };
        worker->run([&]() -> Worker::Result {
            started = true;
            while (!release) {
                std::this_thread::yield();
            }
            finished = true;
            return {};
        });
        QTRY_VERIFY_WITH_TIMEOUT(started, 10000);
        std::thread releaser([&] {
            while (!destroying) {
                std::this_thread::yield();
            }
            release = true;
        });
        destroying = true;
        worker.reset();
        QVERIFY(finished);
        releaser.join();
    }

    // finishJobs() returns once every job given before it has run, the queued ones too (the Worker going away then
    // drops their results, as ever).
    void finishJobsRunsTheQueue()
    {
        auto worker = std::make_unique<Worker>();
        std::atomic<bool> release { false };
        std::atomic<int> ran { 0 };
        worker->run([&]() -> Worker::Result {
            while (!release) {
                std::this_thread::yield();
            }
            ++ran;
            return {};
        });
        for (int k = 0; k < 5; ++k) {
            worker->run([&]() -> Worker::Result {
                ++ran;
                return {};
            });
        }
        std::thread releaser([&] { release = true; }); // while finishJobs() waits, as a rule
        worker->finishJobs();
        QCOMPARE(ran.load(), 6);
        releaser.join();
        worker->finishJobs(); // nothing left: at once
        Worker idle;
        idle.finishJobs(); // no job ever: at once
        worker.reset();
        QCOMPARE(ran.load(), 6);
    }

    void jobsRunBelowTheOwnersPriority()
    {
        // The owner (the GUI thread) keeps its nice value; the worker's thread is backgroundNice over it, and a thread
        // a lowered one starts is not lowered twice.
        const auto niceOf = [](pid_t thread) { return getpriority(PRIO_PROCESS, static_cast<id_t>(thread)); };
        const int owner = niceOf(gettid());
        const int expected = std::min(19, owner + backgroundNice);
        QVERIFY(!runsInBackground());
        Worker worker;
        std::atomic<int> jobNice { -100 };
        std::atomic<int> childNice { -100 };
        std::atomic<bool> lowered { false };
        std::atomic<bool> done { false };
        worker.run([&]() -> Worker::Result {
            jobNice = niceOf(gettid());
            lowered = runsInBackground();
            std::thread child([&] {
                runThisThreadInBackground();
                childNice = niceOf(gettid());
            });
            child.join();
            done = true;
            return {};
        });
        QVERIFY(waitWithoutEvents(done));
        QCOMPARE(niceOf(gettid()), owner);
        QVERIFY(!runsInBackground());
        QVERIFY(lowered);
        QCOMPARE(jobNice.load(), expected);
        QCOMPARE(childNice.load(), expected);
    }
};

QTEST_GUILESS_MAIN(TestWorker)
#include "tst_worker.moc"
