// SPDX-License-Identifier: Apache-2.0
// Decode errors from worker threads, said at most once per kind per interval with a count (ErrorCoalescer): a backend
// that sends nothing but bad parts once posted each one's error to the GUI thread.
#include "client/errorcoalescer.h"

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include <thread>

using namespace fleetscope;
using namespace std::chrono_literals;

namespace {
// How many errors a message said stands for: itself and the "(and N more like it ...)" it carries.
quint64 errorsIn(const QString &message)
{
    static const QRegularExpression more(QStringLiteral("\\(and (\\d+) more like it in the last "));
    const auto match = more.match(message);
    return 1 + (match.hasMatch() ? match.captured(1).toULongLong() : 0);
}

quint64 errorsIn(const QSignalSpy &spy, const QString &startingWith)
{
    quint64 sum = 0;
    for (const auto &arguments : spy) {
        const QString message = arguments.at(0).toString();
        if (message.startsWith(startingWith)) {
            sum += errorsIn(message);
        }
    }
    return sum;
}
} // namespace

class TestErrorCoalescer : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // 10,000 errors of one kind and one of another from a worker: the first of each said at once, the rest of the
    // burst in one message with their count, none lost from the count, the other kind not held back by the first.
    void aBurstIsSaidOnceWithItsCount()
    {
        ErrorCoalescer coalescer;
        coalescer.setInterval(300ms);
        QSignalSpy said(&coalescer, &ErrorCoalescer::errorOccurred);
        std::thread worker([&coalescer] {
            for (int i = 0; i < 10000; ++i) {
                coalescer.report(QStringLiteral("frame"), QStringLiteral("frame: bad part %1").arg(i));
                if (i == 5000) {
                    coalescer.report(QStringLiteral("topology"), QStringLiteral("topology: rejected"));
                }
            }
        });
        worker.join();
        QTRY_COMPARE_WITH_TIMEOUT(errorsIn(said, QStringLiteral("frame:")), quint64 { 10000 }, 5000);
        QCOMPARE(errorsIn(said, QStringLiteral("topology:")), quint64 { 1 });
        // One frame message when this thread gets to it (the latest by then, with the count of those before it), one
        // for the rest when the interval is up if the burst outlasted that; and the topology's.
        QVERIFY2(said.count() <= 4, qPrintable(QString::number(said.count())));
        QVERIFY(said.first().at(0).toString().startsWith(QStringLiteral("frame: bad part ")));
        QString last;
        for (const auto &arguments : std::as_const(said)) {
            if (arguments.at(0).toString().startsWith(QStringLiteral("frame:"))) {
                last = arguments.at(0).toString();
            }
        }
        QVERIFY2(last.startsWith(QStringLiteral("frame: bad part 9999 (and ")), qPrintable(last));
        QVERIFY2(last.contains(QStringLiteral("more like it in the last 0.3 s)")), qPrintable(last));
    }

    // A kind quiet for an interval is said at once again; one said within the interval waits for its end.
    void aQuietKindIsSaidAtOnce()
    {
        ErrorCoalescer coalescer;
        coalescer.setInterval(1500ms);
        QSignalSpy said(&coalescer, &ErrorCoalescer::errorOccurred);
        QElapsedTimer clock;
        clock.start();
        coalescer.report(QStringLiteral("event"), QStringLiteral("one"));
        QVERIFY(said.wait(1000));
        QVERIFY(clock.elapsed() < 1000);
        coalescer.report(QStringLiteral("event"), QStringLiteral("two"));
        QVERIFY(!said.wait(500)); // within the interval: held
        QTRY_COMPARE_WITH_TIMEOUT(said.count(), 2, 3000);
        QCOMPARE(said.last().at(0).toString(), QStringLiteral("two"));
        const qint64 second = clock.elapsed();
        QVERIFY(second >= 1400);
        // Quiet for an interval after that: said at once.
        QVERIFY(!said.wait(1600)); // the interval runs out, nothing said meanwhile
        clock.restart();
        coalescer.report(QStringLiteral("event"), QStringLiteral("three"));
        QVERIFY(said.wait(1000));
        QVERIFY(clock.elapsed() < 1000);
        QCOMPARE(said.last().at(0).toString(), QStringLiteral("three"));
    }
};

QTEST_GUILESS_MAIN(TestErrorCoalescer)
#include "tst_errorcoalescer.moc"
