// SPDX-License-Identifier: Apache-2.0
#include "widgets/job/jobpage.h"
#include "widgets/job/jobtables.h"
#include "widgets/job/jobtimeline.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFontInfo>
#include <QGraphicsEffect>
#include <QHeaderView>
#include <QLabel>
#include <QLayout>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>
#include <tuple>

using namespace fleetscope;

namespace {

constexpr int64_t t0 = 1'780'000'000'000;
constexpr int64_t minuteMs = 60'000;
constexpr int64_t hourMs = 60 * minuteMs;
constexpr uint64_t stallIncident = 77;

// 64 nodes of 8 GPUs in 8 racks, named as the simulator names them (r01-k02-n03).
TopologyPtr topology()
{
    auto t = std::make_shared<Topology>();
    t->gpuCount = 512;
    t->rows.push_back({ QStringLiteral("r01"), QStringLiteral("hall A") });
    for (uint32_t k = 0; k < 8; ++k) {
        Topology::Rack rack;
        rack.name = QStringLiteral("r01-k%1").arg(k + 1, 2, 10, QLatin1Char('0'));
        rack.firstNode = k * 8;
        rack.nodeCount = 8;
        t->racks.push_back(rack);
        for (uint32_t n = 0; n < 8; ++n) {
            Topology::Node node;
            node.hostname = rack.name % QStringLiteral("-n%1").arg(n + 1, 2, 10, QLatin1Char('0'));
            node.rack = k;
            node.firstGpu = static_cast<uint32_t>(t->nodes.size()) * 8;
            node.gpuCount = 8;
            t->nodes.push_back(node);
            for (int g = 0; g < 8; ++g) {
                t->nodeOfGpu.push_back(static_cast<uint32_t>(t->nodes.size() - 1));
            }
        }
    }
    return t;
}

JobPhaseSpan span(JobPhase phase, int64_t from, int64_t to, uint64_t incident = 0, const QString &why = {})
{
    return { phase, from, to, incident, why };
}

// A 256-GPU job six hours into its life: checkpoints every 30 min, a stall at 3 h caused by an incident on a leaf
// switch, a restart, then computing again; three stragglers; its losses.
std::shared_ptr<JobReport> sixHourJob()
{
    auto r = std::make_shared<JobReport>();
    r->job.id = 4711;
    r->job.name = QStringLiteral("llama-70b-pretrain");
    r->job.owner = QStringLiteral("alice");
    for (uint32_t g = 0; g < 256; ++g) {
        r->job.gpus.push_back(g);
    }
    r->job.startTimeMs = t0;
    r->job.goodput = 0.931;
    r->job.phase = JobPhase::Compute;
    r->job.stragglerCount = 3;
    r->asOfMs = t0 + 6 * hourMs;
    r->watchedFromMs = t0;
    r->gpuHours = 256 * 6;
    r->goodput = 0.931;
    r->productiveGpuHours = r->gpuHours * r->goodput;
    r->phase = JobPhase::Compute;
    r->stepSeconds = 2.4;
    r->allReduceShare = 0.18;
    r->restarts = 1;
    r->checkpointLimitSeconds = 300;

    const int64_t stallFrom = t0 + 3 * hourMs;
    const int64_t stallTo = stallFrom + 20 * minuteMs;
    const int64_t restartTo = stallTo + 10 * minuteMs;
    for (int64_t t = t0; t < r->asOfMs;) {
        if (t == stallFrom) {
            r->phases.push_back(
                span(JobPhase::Stall, stallFrom, stallTo, stallIncident, QStringLiteral("leaf su01-l3 down")));
            r->phases.push_back(span(JobPhase::Restart, stallTo, restartTo, 0, QStringLiteral("lost r01-k02-n01")));
            t = restartTo;
            continue;
        }
        const int64_t next = std::min(r->asOfMs, t + 30 * minuteMs);
        r->phases.push_back(span(JobPhase::Compute, t, next - 2 * minuteMs));
        r->phases.push_back(span(JobPhase::Checkpoint, next - 2 * minuteMs, next));
        t = next;
    }
    // 1,440 points, one every 15 s.
    for (int i = 0; i < 1440; ++i) {
        JobBandPoint p;
        p.timeMs = t0 + i * 15'000;
        p.reporting = 256;
        const int64_t inHalfHour = (p.timeMs - t0) % (30 * minuteMs);
        const bool checkpoint = inHalfHour >= 28 * minuteMs;
        const bool stalled = p.timeMs >= stallFrom && p.timeMs < restartTo;
        const float wobble = static_cast<float>(std::sin(i * 0.37) * 2.0);
        p.median = stalled ? 2.0F : checkpoint ? 6.0F : 93.0F + wobble;
        p.p10 = stalled ? 0.0F : checkpoint ? 1.0F : 84.0F + wobble;
        p.p90 = stalled ? 8.0F : checkpoint ? 12.0F : 98.0F;
        r->band.push_back(p);
    }
    auto straggler = [&](uint32_t gpu, const char *metric, float value, float median, float holdBack, double lost,
                         const char *reason) {
        Straggler s;
        s.gpu = gpu;
        s.score = holdBack * 10;
        s.metricId = QString::fromLatin1(metric);
        s.value = value;
        s.jobMedian = median;
        s.holdBack = holdBack;
        s.sinceMs = t0 + 4 * hourMs;
        s.gpuHoursLost = lost;
        s.reason = QString::fromUtf8(reason);
        r->stragglers.push_back(s);
    };
    straggler(37, "sm_clock", 1410, 1980, 0.124, 21.5, "SM clock 1,410 MHz against the job's 1,980 MHz for 2 h");
    straggler(130, "power", 512, 690, 0.061, 9.2, "power 512 W against the job's 690 W for 2 h");
    straggler(201, "gpu_temp", 87, 71, 0.023, 3.1, "temperature 87 °C against the job's 71 °C for 2 h");
    auto loss = [&](LossCause cause, double hours, uint64_t incident, int64_t gpu, const char *what) {
        GoodputLoss l;
        l.cause = cause;
        l.gpuHours = hours;
        l.incidentId = incident;
        l.gpu = gpu;
        l.jobId = 4711;
        l.what = QString::fromLatin1(what);
        r->losses.push_back(l);
    };
    loss(LossCause::Incident, 42.7, stallIncident, -1, "incident 77: leaf su01-l3 down");
    loss(LossCause::Straggler, 21.5, 0, 37, "r01-k05-n05 GPU 5 12% slow");
    loss(LossCause::Restart, 21.3, 0, 8, "restart after r01-k02-n01 down");
    loss(LossCause::Checkpoint, 12.8, 0, -1, "12 checkpoints of 2 min");
    loss(LossCause::Straggler, 9.2, 0, 130, "r01-k03-n01 GPU 2 6% slow");
    loss(LossCause::Straggler, 3.1, 0, 201, "r01-k04-n02 GPU 1 2% slow");
    loss(LossCause::Unspecified, 1.4, 0, -1, "frames missing");
    return r;
}

FleetEvent fleetEvent(int64_t time, EventKind kind, int64_t gpu, const QString &text, uint64_t incidentId = 0)
{
    FleetEvent e;
    e.timeMs = time;
    e.kind = kind;
    e.gpu = gpu;
    e.text = text;
    e.severity = EventSeverity::Critical;
    if (incidentId != 0) {
        auto inc = std::make_shared<Incident>();
        inc->id = incidentId;
        inc->cause = QStringLiteral("network");
        inc->gpuRuns = { { 64, 32 } };
        e.incident = inc;
    }
    return e;
}

std::vector<FleetEvent> fleetEvents()
{
    return {
        fleetEvent(t0 - hourMs, EventKind::Xid, 37, QStringLiteral("before the job")),
        fleetEvent(t0 + hourMs, EventKind::Xid, 37, QStringLiteral("XID 79")),
        fleetEvent(t0 + 2 * hourMs, EventKind::Xid, 400, QStringLiteral("another job's GPU")),
        fleetEvent(t0 + 3 * hourMs, EventKind::IncidentOpen, -1, QStringLiteral("leaf su01-l3 down"), stallIncident),
        fleetEvent(
            t0 + 3 * hourMs + 20 * minuteMs, EventKind::IncidentClose, -1, QStringLiteral("closed"), stallIncident),
        fleetEvent(t0 + 4 * hourMs, EventKind::ThermalThrottleStart, 201, QStringLiteral("thermal")),
    };
}

QPoint centreOf(QTableWidget *table, int row, int column)
{
    return table->visualRect(table->model()->index(row, column)).center();
}

} // namespace

class TestJobPage : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<JobPage> page;
    TopologyPtr fleet = topology();

    JobPage *shown(bool wall = false, QSize size = { 1400, 900 })
    {
        page = std::make_unique<JobPage>();
        page->setTopology(fleet);
        page->setWallMode(wall);
        page->setReport(sixHourJob());
        page->setEvents(fleetEvents());
        page->resize(size);
        page->show();
        if (!QTest::qWaitForWindowExposed(page.get())) {
            return nullptr;
        }
        return page.get();
    }

private Q_SLOTS:
    void headerSaysTheGoodput()
    {
        JobPage *p = shown();
        QVERIFY(p);
        const auto *goodput = p->findChild<QLabel *>(QStringLiteral("goodput"));
        QVERIFY(goodput);
        QCOMPARE(goodput->text(), QStringLiteral("Goodput 93.1 %"));
        const QString hours = p->findChild<QLabel *>(QStringLiteral("goodputHours"))->text();
        QVERIFY2(
            hours.contains(QStringLiteral("1,430.0")) && hours.contains(QStringLiteral("1,536.0")), qPrintable(hours));
        const QString facts = p->findChild<QLabel *>(QStringLiteral("jobFacts"))->text();
        QVERIFY2(facts.contains(QStringLiteral("256 GPUs")) && facts.contains(QStringLiteral("alice"))
                && facts.contains(QStringLiteral("now compute")),
            qPrintable(facts));
        const QString stats = p->findChild<QLabel *>(QStringLiteral("jobStats"))->text();
        QVERIFY2(stats.contains(QStringLiteral("restarts 1")) && stats.contains(QStringLiteral("step 2.40 s"))
                && stats.contains(QStringLiteral("all-reduce 18.0 %"))
                && !stats.contains(QStringLiteral("watched since")),
            qPrintable(stats));
    }

    // Watched from later than its start (the backend came after it) says so; an ended job says when it ended.
    void watchedSinceAndEnded()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto later = sixHourJob();
        later->watchedFromMs = t0 + hourMs;
        later->job.endTimeMs = t0 + 6 * hourMs;
        later->phase = JobPhase::Ended;
        p->setReport(later);
        const QString watched = QStringLiteral("watched since ")
            + QDateTime::fromMSecsSinceEpoch(t0 + hourMs).toString(QStringLiteral("HH:mm:ss"));
        const QString stats = p->findChild<QLabel *>(QStringLiteral("jobStats"))->text();
        QVERIFY2(stats.contains(watched), qPrintable(stats));
        const QString facts = p->findChild<QLabel *>(QStringLiteral("jobFacts"))->text();
        QVERIFY2(facts.contains(QStringLiteral("after 6 h 00 min")) && facts.contains(QStringLiteral("now ended")),
            qPrintable(facts));
    }

    // A report checked against another shape of the fleet: its GPUs are not named from this one.
    void anotherTopologyNamesNoGpu()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto other = sixHourJob();
        other->topologyGeneration = 9;
        auto fleetNow = std::make_shared<Topology>(*fleet);
        fleetNow->generation = 8;
        p->setTopology(fleetNow);
        p->setReport(other);
        auto *table = p->findChild<QTableWidget *>(QStringLiteral("stragglers"));
        QCOMPARE(table->item(0, GpuColumn)->text(), QStringLiteral("GPU 37"));
        // Shown as old, its rows name no GPU to select, and today's events are not matched against it.
        auto *banner = p->findChild<QLabel *>(QStringLiteral("jobBanner"));
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->text().contains(QStringLiteral("checked against another shape of the fleet")),
            qPrintable(banner->text()));
        QVERIFY(p->findChild<JobTimeline *>()->parentWidget()->graphicsEffect());
        QSignalSpy gpus(p, &JobPage::gpuActivated);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, centreOf(table, 0, GpuColumn));
        auto *losses = p->findChild<QTableWidget *>(QStringLiteral("losses"));
        QTest::mouseClick(losses->viewport(), Qt::LeftButton, {}, centreOf(losses, 2, WhatColumn));
        QCOMPARE(gpus.size(), 0);
        auto *hits = p->findChild<QTableWidget *>(QStringLiteral("jobHits"));
        QCOMPARE(hits->rowCount(), 0);
        QVERIFY(p->findChild<JobTimeline *>()->marks().empty());

        fleetNow = std::make_shared<Topology>(*fleet);
        fleetNow->generation = 9;
        p->setTopology(fleetNow);
        QCOMPARE(table->item(0, GpuColumn)->text(), QStringLiteral("r01-k01-n05 GPU 5"));
        QVERIFY(!banner->isVisible());
        QVERIFY(!p->findChild<JobTimeline *>()->parentWidget()->graphicsEffect());
        QCOMPARE(hits->rowCount(), 4);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, centreOf(table, 0, GpuColumn));
        QCOMPARE(gpus.size(), 1);
        QCOMPARE(gpus.at(0).at(0).value<uint32_t>(), 37U);
    }

    // The session's events, many: what the page keeps of them, listed, and its cost.
    void manyEvents()
    {
        JobPage *p = shown();
        QVERIFY(p);
        std::vector<FleetEvent> events;
        for (int i = 0; i < 20'000; ++i) {
            // Every other on the job's GPUs (0..255), the rest on another job's.
            events.push_back(
                fleetEvent(t0 + i * 1000, EventKind::Xid, (i % 2 ? 256 : 0) + i % 256, QStringLiteral("XID 13")));
        }
        QElapsedTimer timer;
        timer.start();
        p->setEvents(events);
        qInfo("20,000 events, 10,000 of them the job's: listed and marked in %.1f ms", timer.nsecsElapsed() / 1e6);
        QCOMPARE(p->findChild<QTableWidget *>(QStringLiteral("jobHits"))->rowCount(), 2000);
        QCOMPARE(p->findChild<JobTimeline *>()->marks().size(), size_t(2000));
    }

    void stragglersRankedAndClicked()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *table = p->findChild<QTableWidget *>(QStringLiteral("stragglers"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 3);
        // As given, named as the desk names GPUs: GPU 37 is the 6th GPU of the 5th node, r01-k01-n05.
        QCOMPARE(table->item(0, GpuColumn)->text(), QStringLiteral("r01-k01-n05 GPU 5"));
        QCOMPARE(table->item(1, GpuColumn)->text(), QStringLiteral("r01-k03-n01 GPU 2"));
        QCOMPARE(table->item(2, GpuColumn)->text(), QStringLiteral("r01-k04-n02 GPU 1"));
        QCOMPARE(table->item(0, ShowsColumn)->text(), QStringLiteral("SM clock 1,410 vs 1,980 MHz"));
        QCOMPARE(table->item(0, HoldBackColumn)->text(), QStringLiteral("12.4 %"));
        QCOMPARE(table->item(0, SinceColumn)->text(), QStringLiteral("2 h 0 min ago"));
        QSignalSpy gpus(p, &JobPage::gpuActivated);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, centreOf(table, 1, GpuColumn));
        QCOMPARE(gpus.size(), 1);
        QCOMPARE(gpus.at(0).at(0).value<uint32_t>(), 130U);

        auto *losses = p->findChild<QTableWidget *>(QStringLiteral("losses"));
        QCOMPARE(losses->rowCount(), 7);
        QCOMPARE(losses->item(0, ShareColumn)->text(), QStringLiteral("2.8 %")); // 42.7 of 1,536
        QSignalSpy incidents(p, &JobPage::incidentActivated);
        QTest::mouseClick(losses->viewport(), Qt::LeftButton, {}, centreOf(losses, 0, WhatColumn));
        QCOMPARE(incidents.size(), 1);
        QCOMPARE(incidents.at(0).at(0).value<quint64>(), stallIncident);
        QTest::mouseClick(losses->viewport(), Qt::LeftButton, {}, centreOf(losses, 2, WhatColumn));
        QCOMPARE(gpus.size(), 2);
        QCOMPARE(gpus.at(1).at(0).value<uint32_t>(), 8U);
    }

    void eventsThatHitIt()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *hits = p->findChild<QTableWidget *>(QStringLiteral("jobHits"));
        QVERIFY(hits);
        // The XID within its life, the incident's open and close, the throttle: newest first.
        QCOMPARE(hits->rowCount(), 4);
        QVERIFY(hits->item(0, 1)->text().startsWith(QStringLiteral("Thermal throttle start")));
        QVERIFY(hits->item(3, 1)->text().startsWith(QStringLiteral("XID")));
        QCOMPARE(hits->item(3, 2)->text(), QStringLiteral("r01-k01-n05 GPU 5"));
        QSignalSpy gpus(p, &JobPage::gpuActivated);
        QTest::mouseClick(hits->viewport(), Qt::LeftButton, {}, centreOf(hits, 3, 1));
        QCOMPARE(gpus.size(), 1);
        QCOMPARE(gpus.at(0).at(0).value<uint32_t>(), 37U);
        // An alert on one of its GPUs joins them, a mark on the timeline.
        AlertBoard board;
        FleetAlert alert;
        alert.labels = { { QStringLiteral("alertname"), QStringLiteral("GpuXidCritical") } };
        alert.severity = EventSeverity::Critical;
        alert.startsAtMs = t0 + 5 * hourMs;
        alert.gpuRuns = { { 130, 1 } };
        alert.gpuCount = 1;
        board.alerts.push_back(alert);
        p->setAlerts(board);
        QCOMPARE(hits->rowCount(), 5);
        QVERIFY(hits->item(0, 1)->text().contains(QStringLiteral("GpuXidCritical")));
        const auto *timeline = p->findChild<JobTimeline *>();
        QCOMPARE(timeline->marks().size(), size_t(5));
        // The same job's next report hits the same; another job's, what hit its own GPUs.
        p->setReport(sixHourJob());
        QCOMPARE(hits->rowCount(), 5);
        auto other = sixHourJob();
        other->job.id = 4712;
        for (uint32_t &g : other->job.gpus) {
            g += 256;
        }
        p->setReport(other);
        QCOMPARE(hits->rowCount(), 1);
        QCOMPARE(hits->item(0, 2)->text(), QStringLiteral("r01-k07-n03 GPU 0"));
    }

    void bandClickAsksForThatTime()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *timeline = p->findChild<JobTimeline *>();
        QVERIFY(timeline);
        const QRectF band = timeline->bandRect();
        QVERIFY(band.width() > 500);
        const QPoint at(static_cast<int>(band.left() + band.width() * 0.37), static_cast<int>(band.center().y()));
        QSignalSpy times(p, &JobPage::timeActivated);
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QCOMPARE(times.size(), 1);
        const double life = 6.0 * hourMs;
        const double expected = t0 + (at.x() - band.left()) / band.width() * life;
        const double pixel = life / band.width();
        const double got = static_cast<double>(times.at(0).at(0).value<qint64>());
        QVERIFY2(std::abs(got - expected) <= pixel, qPrintable(QStringLiteral("%1 vs %2").arg(got).arg(expected)));
    }

    void incidentMarkClicked()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *timeline = p->findChild<JobTimeline *>();
        const QPoint at(qRound(timeline->xAt(t0 + 3 * hourMs)), qRound(timeline->markLane().center().y()));
        QSignalSpy incidents(p, &JobPage::incidentActivated);
        QSignalSpy times(p, &JobPage::timeActivated);
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QCOMPARE(incidents.size(), 1);
        QCOMPARE(incidents.at(0).at(0).value<quint64>(), stallIncident);
        QCOMPARE(times.size(), 0);
        // The XID's mark gives its GPU.
        QSignalSpy gpus(p, &JobPage::gpuActivated);
        QTest::mouseClick(timeline, Qt::LeftButton, {}, QPoint(qRound(timeline->xAt(t0 + hourMs)), at.y()));
        QCOMPARE(gpus.size(), 1);
        QCOMPARE(gpus.at(0).at(0).value<uint32_t>(), 37U);
    }

    // The decoder refuses a job's times past 2100, but the timeline must not overflow on a report that has them (its
    // span, its first tick rounded up a step): drawn, under UBSan too, without a crash. (Times before the epoch,
    // which the decoder refuses too, the tables' "ago" still subtracts unchecked.)
    void insaneTimesAreDrawnSafely()
    {
        JobPage *p = shown();
        QVERIFY(p);
        for (const auto &[start, end, asOf] :
            { std::tuple { std::numeric_limits<int64_t>::max(), int64_t { 0 }, std::numeric_limits<int64_t>::max() },
                std::tuple { int64_t { 0 }, std::numeric_limits<int64_t>::max(), int64_t { 0 } } }) {
            auto r = sixHourJob();
            r->job.startTimeMs = start;
            r->job.endTimeMs = end;
            r->asOfMs = asOf;
            p->setReport(r);
            QVERIFY(!p->grab().isNull());
            const auto *timeline = p->findChild<JobTimeline *>();
            QVERIFY(std::isfinite(timeline->xAt(t0)));
        }
    }

    void nullReportClears()
    {
        JobPage *p = shown();
        QVERIFY(p);
        p->setReport(nullptr);
        QVERIFY(!p->report());
        QCOMPARE(p->findChild<QTableWidget *>(QStringLiteral("stragglers"))->rowCount(), 0);
        QCOMPARE(p->findChild<QTableWidget *>(QStringLiteral("jobHits"))->rowCount(), 0);
        auto *placeholder = p->findChild<QLabel *>(QStringLiteral("jobPlaceholder"));
        QVERIFY(placeholder->isVisible());
        QVERIFY(placeholder->text().startsWith(QStringLiteral("Loading")));
        QVERIFY(!p->findChild<QLabel *>(QStringLiteral("goodput"))->isVisible());
        p->setProblem(QStringLiteral("backend unavailable: connection refused"));
        QCOMPARE(placeholder->text(), QStringLiteral("backend unavailable: connection refused"));
        QVERIFY(!p->findChild<QLabel *>(QStringLiteral("jobBanner"))->isVisible());
    }

    void problemGreysAndSaysIt()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *banner = p->findChild<QLabel *>(QStringLiteral("jobBanner"));
        QVERIFY(!banner->isVisible());
        p->setProblem(QStringLiteral("backend unavailable: connection refused"));
        QVERIFY(banner->isVisible());
        const QString asOf = QDateTime::fromMSecsSinceEpoch(t0 + 6 * hourMs).toString(QStringLiteral("HH:mm:ss"));
        QCOMPARE(banner->text(), QStringLiteral("Old: backend unavailable: connection refused, as of ") + asOf);
        const auto *timeline = p->findChild<JobTimeline *>();
        QVERIFY(timeline->parentWidget()->graphicsEffect());
        QVERIFY(timeline->parentWidget()->graphicsEffect()->isEnabled());
        p->setProblem({});
        QVERIFY(!banner->isVisible());
        QVERIFY(!timeline->parentWidget()->graphicsEffect());
    }

    // The wall's page fits any screen from 1280 px wide, whatever the job's texts: its name and owner at their cut
    // (128 characters), a long watch, long reasons and losses. Its widest part was the header's lines, which widened
    // the wall's window past a 1920 px screen. One straggler reads "1 straggler".
    void wallPageFitsA1280Screen()
    {
        auto r = sixHourJob();
        r->job.name = QStringLiteral("pretrain-") + QString(119, QLatin1Char('x'));
        r->job.owner = QStringLiteral("team-") + QString(123, QLatin1Char('o'));
        r->job.stragglerCount = 1;
        r->stragglers.resize(1);
        r->watchedFromMs = t0 + 10 * minuteMs;
        r->stragglers[0].reason = QString(256, QLatin1Char('r'));
        r->stragglers[0].metricId = QString(64, QLatin1Char('m'));
        for (GoodputLoss &l : r->losses) {
            l.what = QString(256, QLatin1Char('w'));
        }
        r->gpuHours = 123'456'789.5;
        r->productiveGpuHours = 98'765'432.25;
        // Measured before it is first laid out, so that no size is cached from a shorter report.
        page = std::make_unique<JobPage>();
        JobPage *p = page.get();
        p->setTopology(fleet);
        p->setWallMode(true);
        p->setReport(r);
        p->setEvents(fleetEvents());
        const QSize least = p->minimumSizeHint();
        QString widest;
        int widestWidth = 0;
        for (const QWidget *w : p->findChildren<QWidget *>()) {
            if (w->isVisibleTo(p) && w->minimumSizeHint().width() > widestWidth) {
                widestWidth = w->minimumSizeHint().width();
                widest = w->objectName() + QStringLiteral(" (") + QString::fromLatin1(w->metaObject()->className())
                    + QStringLiteral(")");
            }
        }
        qInfo("wall page: at least %d x %d px; widest part %s, %d px", least.width(), least.height(),
            qPrintable(widest), widestWidth);
        QVERIFY2(least.width() <= 1280, qPrintable(QStringLiteral("%1 px, widest %2").arg(least.width()).arg(widest)));
        QVERIFY2(widestWidth <= 1280, qPrintable(widest));
        const QString stats = p->findChild<QLabel *>(QStringLiteral("jobStats"))->text();
        QVERIFY2(stats.contains(QStringLiteral("· 1 straggler")) && !stats.contains(QStringLiteral("1 stragglers")),
            qPrintable(stats));
        QCOMPARE(p->findChild<QLabel *>(QStringLiteral("jobTitle"))->toolTip(), r->job.name);
        // Shown on a 1280 x 720 screen, laid out, it stays within it.
        p->resize(1280, 720);
        p->show();
        QVERIFY(QTest::qWaitForWindowExposed(p));
        QTRY_VERIFY(!p->layout()->geometry().isEmpty());
        QVERIFY2(p->minimumSizeHint().width() <= 1280, qPrintable(QString::number(p->minimumSizeHint().width())));
        QCOMPARE(p->width(), 1280);
    }

    void wallModeReadsAcrossTheRoom()
    {
        JobPage *p = shown(true, { 1920, 1080 });
        QVERIFY(p);
        int smallest = 1000;
        QString which;
        const auto widgets = p->findChildren<QWidget *>();
        for (const QWidget *w : widgets) {
            if (!w->isVisibleTo(p)) {
                continue;
            }
            const int px = QFontInfo(w->font()).pixelSize();
            if (px < smallest) {
                smallest = px;
                which = w->objectName() + QStringLiteral(" (") + QString::fromLatin1(w->metaObject()->className())
                    + QStringLiteral(")");
            }
        }
        qInfo("wall: smallest text %d px (%s)", smallest, qPrintable(which));
        QVERIFY2(smallest >= 20, qPrintable(which));
        for (const char *name : { "stragglers", "losses" }) {
            auto *table = p->findChild<QTableWidget *>(QString::fromLatin1(name));
            QVERIFY(table->isVisible());
            QVERIFY(table->rowCount() <= 5);
            QVERIFY(!table->verticalScrollBar()->isVisible());
            QVERIFY(!table->horizontalScrollBar()->isVisible());
        }
        QCOMPARE(p->findChild<QTableWidget *>(QStringLiteral("losses"))->rowCount(), 5);
        QVERIFY(!p->findChild<QTableWidget *>(QStringLiteral("jobHits"))->isVisible());
        // Takes no input.
        QSignalSpy times(p, &JobPage::timeActivated);
        auto *timeline = p->findChild<JobTimeline *>();
        QTest::mouseClick(timeline, Qt::LeftButton, {}, timeline->bandRect().center().toPoint());
        QCOMPARE(times.size(), 0);
    }

    // The stall is drawn in its colour in the strip, and 1,440 band points with 4,096 spans paint within a frame.
    void paintsTheBandAndSpansInAFrame()
    {
        JobPage *p = shown();
        QVERIFY(p);
        auto *timeline = p->findChild<JobTimeline *>();
        QImage image = timeline->grab().toImage();
        const qreal dpr = image.devicePixelRatio();
        const QRectF band = timeline->bandRect();
        const int stripY = qRound((band.bottom() + QFontMetricsF(timeline->font()).height() * 0.75) * dpr);
        const int stallX = qRound(timeline->xAt(t0 + 3 * hourMs + 10 * minuteMs) * dpr);
        QCOMPARE(image.pixelColor(stallX, stripY), jobPhaseColor(JobPhase::Stall));
        const int computeX = qRound(timeline->xAt(t0 + 10 * minuteMs) * dpr);
        QCOMPARE(image.pixelColor(computeX, stripY), jobPhaseColor(JobPhase::Compute));

        auto dense = sixHourJob();
        dense->phases.clear();
        const int64_t length = 6 * hourMs / 4096;
        for (int i = 0; i < 4096; ++i) {
            dense->phases.push_back(
                span(i % 2 ? JobPhase::Checkpoint : JobPhase::Compute, t0 + i * length, t0 + (i + 1) * length));
        }
        p->setReport(dense);
        QElapsedTimer timer;
        timer.start();
        constexpr int rounds = 20;
        for (int i = 0; i < rounds; ++i) {
            timeline->repaint();
        }
        qInfo("1,440 band points and 4,096 spans: %.2f ms a paint at %dx%d", timer.nsecsElapsed() / 1e6 / rounds,
            timeline->width(), timeline->height());
    }

    // FLEETSCOPE_JOBPAGE_PNG=dir: the page drawn at desk size and on a wall, to look at.
    void screenshots()
    {
        const QString dir = qEnvironmentVariable("FLEETSCOPE_JOBPAGE_PNG");
        if (dir.isEmpty()) {
            QSKIP("FLEETSCOPE_JOBPAGE_PNG not set");
        }
        AlertBoard board;
        FleetAlert alert;
        alert.labels = { { QStringLiteral("alertname"), QStringLiteral("GpuThermalThrottle") } };
        alert.severity = EventSeverity::Warning;
        alert.startsAtMs = t0 + 4 * hourMs + 30 * minuteMs;
        alert.gpuRuns = { { 201, 1 } };
        board.alerts.push_back(alert);
        for (const bool wall : { false, true }) {
            JobPage *p = wall ? shown(true, { 1920, 1080 }) : shown(false, { 1400, 900 });
            QVERIFY(p);
            p->setAlerts(board);
            const QString path
                = QDir(dir).filePath(wall ? QStringLiteral("jobpage-wall.png") : QStringLiteral("jobpage-desk.png"));
            QVERIFY(p->grab().save(path));
            qInfo("%s", qPrintable(path));
        }
        // And old: the backend gone.
        page->setProblem(QStringLiteral("backend unavailable: connection refused"));
        const QString old = QDir(dir).filePath(QStringLiteral("jobpage-wall-old.png"));
        QVERIFY(page->grab().save(old));
        qInfo("%s", qPrintable(old));
    }
};

QTEST_MAIN(TestJobPage)
#include "tst_jobpage.moc"
