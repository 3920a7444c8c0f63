// SPDX-License-Identifier: Apache-2.0
// Handover: tasks posted from any thread run on the Handover's thread in the order posted, woken by one event however
// many are queued; none runs after the Handover is gone, also when a task destroys it. Under the tsan preset this suite
// also checks that the hand-over is visible to ThreadSanitizer (what each task captured is written on the poster's
// thread and read, then freed, on the owner's).
#include "jobs/handover.h"

#include <QCoreApplication>
#include <QEvent>
#include <QTest>
#include <QThread>

#include <memory>
#include <thread>
#include <vector>

using namespace fleetscope;

namespace {
// Counts the events of Qt's user range delivered to an object: the Handover's wake-ups.
class WakeCounter : public QObject
{
public:
    int wakes = 0;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() >= QEvent::User && event->type() <= QEvent::MaxUser) {
            ++wakes;
        }
        return false;
    }
};
} // namespace

class TestHandover : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tasksFromOtherThreadsRunOnItsThreadInTheOrderPosted()
    {
        Handover handover;
        QThread *const owner = QThread::currentThread();
        constexpr int posters = 4;
        constexpr int perPoster = 500;
        std::vector<std::vector<int>> seen(posters); // owner's thread only
        int offOwner = 0;
        std::vector<std::thread> threads;
        for (int p = 0; p < posters; ++p) {
            threads.emplace_back([&, p] {
                for (int k = 0; k < perPoster; ++k) {
                    // Written here, read and freed on the owner's thread: ThreadSanitizer must see the hand-over.
                    auto payload = std::make_shared<std::vector<int>>(16, k);
                    handover.post([&, p, payload] {
                        offOwner += QThread::currentThread() != owner ? 1 : 0;
                        seen[static_cast<std::size_t>(p)].push_back(payload->back());
                    });
                }
            });
        }
        auto total = [&] {
            std::size_t n = 0;
            for (const auto &s : seen) {
                n += s.size();
            }
            return n;
        };
        QTRY_COMPARE_WITH_TIMEOUT(total(), std::size_t(posters * perPoster), 20000);
        for (auto &t : threads) {
            t.join();
        }
        QCOMPARE(offOwner, 0);
        for (const auto &s : seen) {
            QCOMPARE(s.size(), std::size_t(perPoster));
            for (int k = 0; k < perPoster; ++k) {
                QCOMPARE(s[static_cast<std::size_t>(k)], k);
            }
        }
    }

    // However many tasks are queued, the owner is woken once for them; the next post after that wakes it again.
    void oneWakeForTheTasksQueuedMeanwhile()
    {
        Handover handover;
        WakeCounter counter;
        handover.installEventFilter(&counter);
        std::vector<int> ran;
        std::thread poster([&] {
            for (int k = 0; k < 1000; ++k) {
                handover.post([&ran, k] { ran.push_back(k); });
            }
        });
        poster.join(); // no event processed here meanwhile
        QVERIFY(ran.empty());
        QCoreApplication::sendPostedEvents(&handover);
        QCOMPARE(counter.wakes, 1);
        QCOMPARE(ran.size(), std::size_t(1000));
        QCOMPARE(ran.front(), 0);
        QCOMPARE(ran.back(), 999);
        std::thread again([&] { handover.post([&ran] { ran.push_back(1000); }); });
        again.join();
        QCoreApplication::sendPostedEvents(&handover);
        QCOMPARE(counter.wakes, 2);
        QCOMPARE(ran.back(), 1000);
    }

    // Tasks queued but not run when the Handover goes are dropped (their captures freed), never run.
    void tasksQueuedWhenItGoesAreDropped()
    {
        auto dropped = std::make_unique<Handover>();
        Handover kept; // the same tasks, to show that they would have run
        bool droppedRan = false;
        bool keptRan = false;
        auto payload = std::make_shared<int>(7);
        std::thread poster([&] {
            dropped->post([&droppedRan, payload] { droppedRan = *payload == 7; });
            kept.post([&keptRan, payload] { keptRan = *payload == 7; });
        });
        poster.join();
        QCOMPARE(payload.use_count(), 3); // held by the two queued tasks
        dropped.reset(); // no event processed in between
        QCOMPARE(payload.use_count(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(keptRan, 10000);
        QCoreApplication::processEvents();
        QVERIFY(!droppedRan);
    }

    // A task that destroys the Handover (its owner went) drops the tasks queued behind it, as Qt drops queued calls
    // to a deleted object.
    void aTaskThatDestroysItDropsThoseAfterIt()
    {
        auto *handover = new Handover;
        std::vector<int> ran;
        std::thread poster([&] {
            handover->post([&] { ran.push_back(1); });
            handover->post([&] {
                ran.push_back(2);
                delete handover;
            });
            handover->post([&] { ran.push_back(3); });
        });
        poster.join();
        QTRY_COMPARE_WITH_TIMEOUT(ran.size(), std::size_t(2), 10000);
        QCoreApplication::processEvents();
        QCOMPARE(ran, (std::vector<int> { 1, 2 }));
    }

    // A task may post more (on the owner's thread too): they run after it, on a later wake.
    void aTaskMayPostMore()
    {
        Handover handover;
        std::vector<int> ran;
        handover.post([&] {
            ran.push_back(1);
            handover.post([&] { ran.push_back(3); });
            ran.push_back(2);
        });
        QTRY_COMPARE_WITH_TIMEOUT(ran.size(), std::size_t(3), 10000);
        QCOMPARE(ran, (std::vector<int> { 1, 2, 3 }));
    }
};

QTEST_GUILESS_MAIN(TestHandover)
#include "tst_handover.moc"
