// SPDX-License-Identifier: Apache-2.0
// The summary page's goodput from constructed summaries: the figures beside utilisation (day and week, against the
// 97 % target), "Where goodput went" (every cause, named as the desk names things, most first, sorted on numbers, a
// click on a GPU's loss), the totals per cause as a chart, the trend with gaps where no job ran, both CSVs exact, the
// PDF's goodput page, and a summary without goodput (no job ran, or an older backend) that never shows 0 %.
// FLEETSCOPE_TEST_SHOTS=<dir> also writes the page at 1920x1080 with a realistic summary as summary-goodput.png.
#include "tests/model/testtopology.h"
#include "tests/realparts.h"
#include "widgets/style/fontscale.h"
#include "widgets/summary/goodputpanel.h"
#include "widgets/summary/summaryview.h"

#include <QAbstractItemModelTester>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QFormLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QProcess>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace fleetscope;
using fleetscope::testing::makeTopology;

namespace {
constexpr int64_t hourMs = 3600LL * 1000;
constexpr int64_t dayMs = 24 * hourMs;
constexpr int64_t endMs = 1764979200000; // 2025-12-06T00:00:00Z

// The 48-GPU test fleet (3 racks of 2 nodes of 8) with a leaf switch and a cooling unit.
TopologyPtr topologyWithDomains()
{
    auto t = std::make_shared<Topology>(*makeTopology());
    t->domains.push_back({ DomainKind::LeafSwitch, QStringLiteral("su01-l3"), -1, 3 });
    t->domains.push_back({ DomainKind::CoolingUnit, QStringLiteral("r01-crah1"), -1, -1 });
    return t;
}

GoodputLoss loss(LossCause cause, double hours, uint32_t jobs, const char *what)
{
    GoodputLoss l;
    l.cause = cause;
    l.gpuHours = hours;
    l.jobs = jobs;
    l.what = QString::fromUtf8(what);
    return l;
}

// A day and a week: every cause, listed out of order (the page sorts them), the week's 198 GPU-h lost of 3000.
std::pair<SummaryPtr, SummaryPtr> summaries()
{
    auto day = std::make_shared<Summary>();
    day->fromMs = endMs - dayMs;
    day->toMs = endMs;
    day->fleet.gpuCount = 48;
    day->fleet.meanUtilisation = 71.5;
    day->jobsAccounted = 3;
    day->goodput = 0.9126;
    day->jobGpuHours = 400;
    day->productiveGpuHours = 365.04;
    auto incident = loss(LossCause::Incident, 20, 1, "incident 12: leaf su01-l3 down");
    incident.incidentId = 12;
    incident.domain = 0;
    day->losses = { incident, loss(LossCause::Checkpoint, 14.96, 3, "checkpoints") };

    auto week = std::make_shared<Summary>(*day);
    week->fromMs = endMs - 7 * dayMs;
    week->fleet.meanUtilisation = 68.25;
    week->jobsAccounted = 12;
    week->goodput = 0.934;
    week->jobGpuHours = 3000;
    week->productiveGpuHours = 2802;
    incident.gpuHours = 80;
    incident.jobs = 3;
    auto straggler = loss(LossCause::Straggler, 40, 1, "r01-k01-n02 GPU 1 18% slow");
    straggler.gpu = 9;
    auto restart = loss(LossCause::Restart, 25, 2, "train-llm-192 restarted twice");
    restart.node = 3;
    auto stall = loss(LossCause::Stall, 15, 1, "stalled: r01-k03-n02 GPU 0 fell off the bus");
    stall.gpu = 40;
    week->losses = { loss(LossCause::Checkpoint, 30, 12, "checkpoints of 12 jobs"), incident, straggler, restart, stall,
        loss(LossCause::Restart, 8, 1, "train-vit-7, restarted after a preemption") };
    return { day, week };
}

QString labelText(const QWidget &view, const char *name)
{
    const auto *label = view.findChild<QLabel *>(QString::fromLatin1(name));
    return label != nullptr ? label->text() : QStringLiteral("(no label %1)").arg(QString::fromLatin1(name));
}

bool rowShown(const SummaryView &view, const char *name)
{
    const auto *label = view.findChild<QLabel *>(QString::fromLatin1(name));
    const auto *form = view.findChild<QFormLayout *>();
    return label != nullptr && form != nullptr && form->isRowVisible(const_cast<QLabel *>(label));
}

QString row(const QAbstractItemModel *model, int r)
{
    QStringList cells;
    for (int c = 0; c < model->columnCount(); ++c) {
        cells << model->index(r, c).data().toString();
    }
    return cells.join(QLatin1Char('|'));
}

QString pdfText(const QString &pdf)
{
    QProcess process;
    process.start(QStandardPaths::findExecutable(QStringLiteral("pdftotext")), { pdf, QStringLiteral("-") });
    if (!process.waitForFinished(60000) || process.exitCode() != 0) {
        return {};
    }
    return QString::fromUtf8(process.readAllStandardOutput()).simplified();
}

// A realistic page for a look: 1,024 GPUs in 4 rows, a week of daily buckets and a day of hourly ones, jobs, offenders
// and a dozen losses of every cause, deterministic.
struct Scene
{
    TopologyPtr topology;
    SummaryPtr day;
    SummaryPtr week;
    std::vector<SummaryTrendPoint> dayTrend;
    std::vector<SummaryTrendPoint> weekTrend;
};

Scene realisticScene()
{
    auto t = std::make_shared<Topology>();
    t->generation = 9;
    for (uint32_t r = 0; r < 4; ++r) {
        t->rows.push_back({ QStringLiteral("r%1").arg(r + 1, 2, 10, QLatin1Char('0')), QStringLiteral("hall-a") });
        t->domains.push_back(
            { DomainKind::LeafSwitch, QStringLiteral("su%1-l5").arg(r + 1, 2, 10, QLatin1Char('0')), -1, 5 });
        t->domains.push_back(
            { DomainKind::CoolingUnit, QStringLiteral("r%1-crah2").arg(r + 1, 2, 10, QLatin1Char('0')), -1, -1 });
        for (uint32_t k = 0; k < 8; ++k) {
            Topology::Rack rack;
            rack.name = QStringLiteral("%1-k%2").arg(t->rows.back().name).arg(k + 1, 2, 10, QLatin1Char('0'));
            rack.row = r;
            rack.position = k;
            rack.firstNode = static_cast<uint32_t>(t->nodes.size());
            rack.nodeCount = 4;
            t->racks.push_back(rack);
            for (uint32_t n = 0; n < 4; ++n) {
                Topology::Node node;
                node.hostname = rack.name + QStringLiteral("-n%1").arg(n + 1, 2, 10, QLatin1Char('0'));
                node.rack = static_cast<uint32_t>(t->racks.size() - 1);
                node.firstGpu = t->gpuCount;
                node.gpuCount = 8;
                t->nodes.push_back(node);
                t->nodeOfGpu.insert(t->nodeOfGpu.end(), 8, static_cast<uint32_t>(t->nodes.size() - 1));
                t->gpuCount += 8;
            }
        }
    }
    Scene s;
    s.topology = t;
    auto week = std::make_shared<Summary>();
    week->fromMs = endMs - 7 * dayMs;
    week->toMs = endMs;
    week->fleet = { QStringLiteral("fleet"), 1024, 78.4, 153000, 19800, 9, 0.991, 37 };
    for (uint32_t r = 0; r < 4; ++r) {
        week->rows.push_back({ t->rows[r].name, 256, 74.0 + 3.1 * r, 38000, 4900 - 600.0 * r, r, 0.99, 9 + r });
    }
    const char *jobs[] = { "train-llm-192", "train-moe-64", "finetune-code-32", "train-vit-7", "eval-sweep-16" };
    for (int j = 0; j < 5; ++j) {
        week->jobs.push_back(
            { QString::fromLatin1(jobs[j]), uint32_t(512 >> j), 93.0 - 2.5 * j, 0, 120.0 * j, 0, 1.0, uint64_t(j) });
    }
    week->offenders = { { 77, 9 }, { 301, 6 }, { 515, 4 }, { 12, 3 }, { 640, 2 }, { 903, 2 }, { 44, 1 } };
    week->totalFailures = 37;
    week->repeatOffenders = { { 77, 31.5, 9, 3, 2, 1, 4, 40, 6.5 }, { 301, 18.25, 6, 1, 0, 0, 2, 12, 3 } };
    week->topPercentFailureShare = 0.62;
    week->jobsAccounted = 14;
    week->jobGpuHours = 121000;
    week->productiveGpuHours = 112530;
    week->goodput = week->productiveGpuHours / week->jobGpuHours;
    auto add = [&](LossCause cause, double hours, uint32_t jobs, const QString &what, int64_t gpu = -1,
                   int64_t node = -1, uint64_t incident = 0, int64_t domain = -1) {
        GoodputLoss l;
        l.cause = cause;
        l.gpuHours = hours;
        l.jobs = jobs;
        l.what = what;
        l.gpu = gpu;
        l.node = node;
        l.incidentId = incident;
        l.domain = domain;
        week->losses.push_back(l);
    };
    add(LossCause::Incident, 2480, 3, QStringLiteral("incident 41: leaf su02-l5 down"), -1, -1, 41, 2);
    add(LossCause::Checkpoint, 1910, 14, QStringLiteral("checkpoints, 14 jobs"));
    add(LossCause::Straggler, 1320, 1, QStringLiteral("r01-k03-n02 GPU 5 22% slow (SM clock)"), 77);
    add(LossCause::Restart, 980, 1, QStringLiteral("train-llm-192: 2 restarts, work since the last checkpoint redone"),
        301, 37);
    add(LossCause::Incident, 640, 2, QStringLiteral("incident 44: cooling unit r03-crah2 failing"), -1, -1, 44, 5);
    add(LossCause::Stall, 410, 1, QStringLiteral("stalled: r03-k01-n01 down"), -1, 64);
    add(LossCause::Straggler, 260, 1, QStringLiteral("r02-k05-n04 GPU 3 9% slow (power)"), 515);
    add(LossCause::Restart, 190, 1, QStringLiteral("train-vit-7 restarted after a preemption"));
    add(LossCause::Stall, 120, 1, QStringLiteral("stalled, cause unknown"));
    add(LossCause::Unspecified, 60, 6, QStringLiteral("the rest"));
    auto day = std::make_shared<Summary>(*week);
    day->fromMs = endMs - dayMs;
    day->fleet = { QStringLiteral("fleet"), 1024, 81.2, 21500, 2600, 7, 0.993, 6 };
    day->jobsAccounted = 11;
    day->jobGpuHours = 17800;
    day->productiveGpuHours = 16910;
    day->goodput = day->productiveGpuHours / day->jobGpuHours;
    day->unitHours = { 420, 210, 128, 121 };
    s.day = day;
    s.week = week;
    for (int i = 0; i < 7; ++i) {
        const int64_t at = endMs - (6 - i) * dayMs;
        s.weekTrend.push_back({ at, 75 + 4 * std::sin(i), true, 92 + 2.5 * std::cos(0.9 * i) });
    }
    for (int i = 0; i < 24; ++i) {
        const int64_t at = endMs - (23 - i) * hourMs;
        // Hours 5 and 6: the incident's stall; hour 14: no job ran (a gap, not 0 %).
        const double g = i == 5 || i == 6 ? 78.0 : 95.5 + 1.5 * std::sin(0.7 * i);
        s.dayTrend.push_back({ at, 80 + 5 * std::sin(0.4 * i), i != 14, i != 14 ? g : 0.0 });
    }
    return s;
}
} // namespace

class TestSummaryGoodput : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void figuresFromTheSummaries()
    {
        const auto [day, week] = summaries();
        const GoodputFigures f = computeGoodputFigures(*day, *week, 2.50);
        QVERIFY(f.hasDay && f.hasWeek);
        QCOMPARE(f.dayGoodput, 91.26);
        QCOMPARE(f.weekGoodput, 93.4);
        QCOMPARE(f.weekJobs, 12U);
        QCOMPARE(f.weekLostGpuHours, 198.0);
        QCOMPARE(f.weekLostCost, 495.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Incident)], 80.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Straggler)], 40.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Restart)], 33.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Checkpoint)], 30.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Stall)], 15.0);
        QCOMPARE(f.weekByCause[size_t(LossCause::Unspecified)], 0.0);
        QCOMPARE(f.dayByCause[size_t(LossCause::Checkpoint)], 14.96);
        QCOMPARE(f.losses.size(), size_t(6));
        for (size_t i = 1; i < f.losses.size(); ++i) {
            QVERIFY(f.losses[i - 1].gpuHours >= f.losses[i].gpuHours); // most first, whatever the backend's order
        }
        QCOMPARE(f.losses.front().cause, LossCause::Incident);
        // A loss the page cannot show is left out, not summed.
        auto bad = std::make_shared<Summary>(*week);
        bad->losses.push_back(loss(LossCause::Stall, std::nan(""), 1, "nan"));
        bad->losses.push_back(loss(LossCause::Stall, -4, 1, "negative"));
        const GoodputFigures g = computeGoodputFigures(*day, *bad, 2.50);
        QCOMPARE(g.losses.size(), size_t(6));
        QCOMPARE(g.weekByCause[size_t(LossCause::Stall)], 15.0);
    }

    void figuresBesideUtilisation()
    {
        SummaryView view;
        view.setTopology(topologyWithDomains());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        QCOMPARE(labelText(view, "dayGoodput"), QStringLiteral("91.3 %"));
        QCOMPARE(labelText(view, "weekGoodput"), QStringLiteral("93.4 %"));
        QCOMPARE(labelText(view, "goodputLostCost"), QStringLiteral("USD 495.00"));
        QVERIFY(rowShown(view, "dayGoodput") && rowShown(view, "weekGoodput") && rowShown(view, "goodputLostCost"));
        // The week's row says its target, right after utilisation's rows.
        auto *form = view.findChild<QFormLayout *>();
        QVERIFY(form != nullptr);
        int at = -1;
        QFormLayout::ItemRole role {};
        form->getWidgetPosition(view.findChild<QLabel *>(QStringLiteral("weekGoodput")), &at, &role);
        QCOMPARE(at, 3);
        const auto *title = qobject_cast<QLabel *>(form->itemAt(at, QFormLayout::LabelRole)->widget());
        QVERIFY(title != nullptr);
        QCOMPARE(title->text(), QStringLiteral("Goodput of jobs, last week (target 97 %)"));
        QCOMPARE(labelText(view, "goodputLine"),
            QStringLiteral("12 jobs lost 198.0 GPU-h of their 3000.0 GPU-h (6.6 %), USD 495.00 at USD 2.50 per "
                           "GPU-hour; the causes the backend found, most first:"));
        // The price is the page's, live.
        view.setPricePerGpuHour(3.00);
        QCOMPARE(labelText(view, "goodputLostCost"), QStringLiteral("USD 594.00"));
    }

    void whereGoodputWentMostFirst()
    {
        SummaryView view;
        view.resize(1600, 2400);
        view.setTopology(topologyWithDomains());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        auto *table = view.findChild<QTableView *>(QStringLiteral("goodputLossTable"));
        QVERIFY(table != nullptr);
        QAbstractItemModelTester tester(table->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto *model = table->model();
        QCOMPARE(model->rowCount(), 6);
        QCOMPARE(row(model, 0), QStringLiteral("Incident|incident 12 · leaf su01-l3|80.0|2.7 %|3|USD 200.00"));
        QCOMPARE(row(model, 1), QStringLiteral("Straggler|r01-k01-n02 GPU 1|40.0|1.3 %|1|USD 100.00"));
        QCOMPARE(row(model, 2), QStringLiteral("Checkpoint|checkpoints of 12 jobs|30.0|1.0 %|12|USD 75.00"));
        QCOMPARE(row(model, 3), QStringLiteral("Restart|node r01-k02-n02|25.0|0.8 %|2|USD 62.50"));
        QCOMPARE(row(model, 4), QStringLiteral("Stall|r01-k03-n02 GPU 0|15.0|0.5 %|1|USD 37.50"));
        // A job's restarts the fields do not name: the backend's words.
        QCOMPARE(
            row(model, 5), QStringLiteral("Restart|train-vit-7, restarted after a preemption|8.0|0.3 %|1|USD 20.00"));
        QCOMPARE(model->index(3, 1).data(Qt::ToolTipRole).toString(), QStringLiteral("train-llm-192 restarted twice"));
        // Sorted on the numbers: most jobs first; causes by name.
        table->sortByColumn(4, Qt::DescendingOrder);
        QVERIFY(row(model, 0).startsWith(QStringLiteral("Checkpoint|")));
        table->sortByColumn(0, Qt::AscendingOrder);
        QVERIFY(row(model, 0).startsWith(QStringLiteral("Checkpoint|")));
        QVERIFY(row(model, 1).startsWith(QStringLiteral("Incident|")));
        table->sortByColumn(3, Qt::AscendingOrder);
        QVERIFY(row(model, 0).startsWith(QStringLiteral("Restart|train-vit-7")));

        // A click on a GPU's loss drills to it; a row naming none chooses nothing.
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        table->sortByColumn(2, Qt::DescendingOrder);
        QSignalSpy chosen(&view, &SummaryView::gpuChosen);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(model->index(0, 2)).center());
        QCOMPARE(chosen.size(), 0);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(model->index(1, 2)).center());
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.at(0).at(0).value<uint32_t>(), 9U);

        // The costs follow the price.
        view.setPricePerGpuHour(3.00);
        QCOMPARE(model->index(0, 5).data().toString(), QStringLiteral("USD 240.00"));
    }

    void totalsPerCauseAndTheTrend()
    {
        SummaryView view;
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        const auto *causes = view.findChild<QChartView *>(QStringLiteral("goodputCauseChart"));
        QVERIFY(causes != nullptr && causes->chart() != nullptr);
        const auto *bars = qobject_cast<QHorizontalBarSeries *>(causes->chart()->series().value(0));
        QVERIFY(bars != nullptr && bars->count() == 1);
        auto *axis = qobject_cast<QBarCategoryAxis *>(causes->chart()->axes(Qt::Vertical).value(0));
        QVERIFY(axis != nullptr);
        // From the bottom up (the first cause on top); "Other" only when the backend lumped losses together.
        QCOMPARE(axis->categories(),
            QStringList({ QStringLiteral("Stall"), QStringLiteral("Checkpoint"), QStringLiteral("Restart"),
                QStringLiteral("Straggler"), QStringLiteral("Incident") }));
        QBarSet *set = bars->barSets().at(0);
        QCOMPARE(set->count(), 5);
        QCOMPARE(set->at(0), 15.0);
        QCOMPARE(set->at(1), 30.0);
        QCOMPARE(set->at(2), 33.0);
        QCOMPARE(set->at(3), 40.0);
        QCOMPARE(set->at(4), 80.0);

        // The trend: buckets where no job ran are gaps, never 0 %; the target line at 97 %.
        view.setTrend(
            { { endMs - 2 * hourMs, 70, true, 96.5 }, { endMs - hourMs, 70, false, 0 }, { endMs, 71, true, 88 } },
            { { endMs, 70, true, 93.4 } });
        const auto *trend = view.findChild<QChartView *>(QStringLiteral("goodputTrendChart"));
        QVERIFY(trend != nullptr);
        QStringList names;
        for (QAbstractSeries *series : trend->chart()->series()) {
            const auto *line = qobject_cast<QLineSeries *>(series);
            QVERIFY(line != nullptr);
            names << line->name();
            if (line->name() == QStringLiteral("Day, hourly")) {
                QCOMPARE(line->count(), 2);
                QCOMPARE(line->at(1).y(), 88.0);
            } else if (line->name().startsWith(QStringLiteral("Target"))) {
                QCOMPARE(line->at(0).y(), targetGoodput);
            }
        }
        QCOMPARE(names.size(), 3);
    }

    void csvsExact()
    {
        SummaryView view;
        view.setTopology(topologyWithDomains());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        const QByteArray losses
            = "cause,what,incident_id,domain,gpu,hostname,gpu_on_node,gpu_hours,share_of_job_gpu_hours,jobs,cost,"
              "detail\r\n"
              "incident,incident 12 \xc2\xb7 leaf su01-l3,12,leaf su01-l3,,,,80.000,0.026667,3,200.00,"
              "incident 12: leaf su01-l3 down\r\n"
              "straggler,r01-k01-n02 GPU 1,,,9,r01-k01-n02,1,40.000,0.013333,1,100.00,r01-k01-n02 GPU 1 18% slow\r\n"
              "checkpoint,checkpoints of 12 jobs,,,,,,30.000,0.010000,12,75.00,checkpoints of 12 jobs\r\n"
              "restart,node r01-k02-n02,,,,r01-k02-n02,,25.000,0.008333,2,62.50,train-llm-192 restarted twice\r\n"
              "stall,r01-k03-n02 GPU 0,,,40,r01-k03-n02,0,15.000,0.005000,1,37.50,"
              "stalled: r01-k03-n02 GPU 0 fell off the bus\r\n"
              "restart,\"train-vit-7, restarted after a preemption\",,,,,,8.000,0.002667,1,20.00,"
              "\"train-vit-7, restarted after a preemption\"\r\n";
        QCOMPARE(view.goodputLossesCsv(), losses);
        const QByteArray figures = "range,from_utc,to_utc,jobs,job_gpu_hours,productive_gpu_hours,lost_gpu_hours,"
                                   "goodput,target,lost_incident,lost_straggler,lost_restart,lost_checkpoint,"
                                   "lost_stall,lost_other\r\n"
                                   "day,2025-12-05T00:00:00.000Z,2025-12-06T00:00:00.000Z,3,400.000,365.040,34.960,"
                                   "0.9126,0.97,20.000,0.000,0.000,14.960,0.000,0.000\r\n"
                                   "week,2025-11-29T00:00:00.000Z,2025-12-06T00:00:00.000Z,12,3000.000,2802.000,"
                                   "198.000,0.9340,0.97,80.000,40.000,33.000,30.000,15.000,0.000\r\n";
        QCOMPARE(view.goodputCsv(), figures);
        QTemporaryDir dir;
        for (const auto &[name, expected] : { std::pair { QStringLiteral("losses.csv"), losses },
                 std::pair { QStringLiteral("goodput.csv"), figures } }) {
            const QString path = dir.filePath(name);
            const QString error = name == QStringLiteral("losses.csv") ? view.exportGoodputLossesCsv(path)
                                                                       : view.exportGoodputCsv(path);
            QCOMPARE(error, QString());
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QCOMPARE(file.readAll(), expected);
        }
        QVERIFY(!view.exportGoodputLossesCsv(dir.filePath(QStringLiteral("missing/dir/x.csv"))).isEmpty());
        // Without a topology: fleet indices, hostnames empty.
        SummaryView bare;
        bare.setSummaries(day, week);
        QVERIFY(bare.goodputLossesCsv().contains("\r\nstraggler,9,,,9,,,40.000,"));
        QVERIFY(bare.goodputLossesCsv().contains("\r\nincident,incident 12 \xc2\xb7 domain 0,12,0,,,,80.000,"));
    }

    void pdfHoldsGoodputAndWhereItWent()
    {
        SummaryView view;
        view.resize(1600, 1000);
        view.setTopology(topologyWithDomains());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("summary.pdf"));
        QCOMPARE(view.exportPdf(pdf), QString());
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5) == "%PDF-");
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("pdftotext (poppler-utils) is not installed");
        }
        const QString text = pdfText(pdf);
        QVERIFY2(text.contains(QStringLiteral("Goodput of jobs, last day: 91.3 %; last week: 93.4 % (target 97 %")),
            qPrintable(text.left(1200)));
        QVERIFY(text.contains(QStringLiteral("Job-hours lost, last week: 198.0 GPU-h of 3000.0 GPU-h over 12 jobs, "
                                             "costing USD 495.00")));
        QVERIFY(text.contains(QStringLiteral("Where goodput went, last week")));
        QVERIFY(text.contains(QStringLiteral("incident 12 · leaf su01-l3")));
        QVERIFY(text.contains(QStringLiteral("r01-k03-n02 GPU 0")));
        QVERIFY(text.contains(QStringLiteral("USD 200.00")));
    }

    // No job accounted (none ran, or a backend older than job accounting): no 0 % anywhere, said so.
    void aSummaryWithoutGoodput()
    {
        auto [day, week] = summaries();
        auto noDay = std::make_shared<Summary>(*day);
        noDay->jobsAccounted = 0;
        noDay->goodput = 0;
        noDay->losses.clear();
        SummaryView view;
        view.setSummaries(noDay, week);
        QCOMPARE(labelText(view, "dayGoodput"), QStringLiteral("no job ran"));
        QCOMPARE(labelText(view, "weekGoodput"), QStringLiteral("93.4 %"));
        // Jobs counted but no goodput given (the decoder drops such an account; a figure that is no number is none):
        // still no 0 %.
        auto counted = std::make_shared<Summary>(*noDay);
        counted->jobsAccounted = 4;
        counted->goodput = std::nan("");
        view.setSummaries(counted, week);
        QCOMPARE(labelText(view, "dayGoodput"), QStringLiteral("no job ran"));
        view.setSummaries(noDay, week);
        QVERIFY(view.goodputCsv().contains(
            "\r\nday,2025-12-05T00:00:00.000Z,2025-12-06T00:00:00.000Z,0,,,,,0.97,,,,,,\r\n"));

        auto noWeek = std::make_shared<Summary>(*noDay);
        noWeek->fromMs = week->fromMs;
        view.setSummaries(noDay, noWeek);
        QCOMPARE(labelText(view, "weekGoodput"), QStringLiteral("no job ran"));
        QVERIFY(!rowShown(view, "dayGoodput"));
        QVERIFY(rowShown(view, "weekGoodput"));
        QVERIFY(!rowShown(view, "goodputLostCost"));
        QCOMPARE(labelText(view, "goodputLine"),
            QStringLiteral("No job ran this week, or the backend does not account jobs: no goodput to show."));
        const auto *table = view.findChild<QTableView *>(QStringLiteral("goodputLossTable"));
        QVERIFY(table != nullptr && table->isHidden());
        QCOMPARE(table->model()->rowCount(), 0);
        QCOMPARE(view.goodputLossesCsv(),
            QByteArray("cause,what,incident_id,domain,gpu,hostname,gpu_on_node,gpu_hours,share_of_job_gpu_hours,jobs,"
                       "cost,detail\r\n"));
        QVERIFY(!view.goodputCsv().contains("0.0000"));
        for (const char *name : { "dayGoodput", "weekGoodput", "goodputLostCost" }) {
            QVERIFY2(!labelText(view, name).contains(QStringLiteral("0.0 %")), name);
        }

        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("summary.pdf"));
        QCOMPARE(view.exportPdf(pdf), QString());
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("pdftotext (poppler-utils) is not installed");
        }
        const QString text = pdfText(pdf);
        QVERIFY2(text.contains(QStringLiteral("Goodput of jobs: no job ran this week")), qPrintable(text.left(800)));
        QVERIFY(!text.contains(QStringLiteral("Where goodput went")));
    }

    // A wall shows the week's goodput among the figures; where it went is a desk's table.
    void aWallShowsTheFiguresNotTheTable()
    {
        const Scene scene = realisticScene();
        SummaryView wall;
        wall.useWallLayout();
        QFont font = wall.font();
        font.setPixelSize(24); // as WallWindow::applyFonts at 1080p
        wall.setBaseFont(scaledFont(font, 0.85));
        wall.setDark(true);
        wall.resize(1920, 1080 - 92); // under the wall's header
        wall.setTopology(scene.topology);
        wall.setSummaries(scene.day, scene.week);
        wall.setTrend(scene.dayTrend, scene.weekTrend);
        wall.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wall));
        QVERIFY(wall.goodput()->isHidden());
        // The week's figure alone: a wall's screen has no row to spare.
        QVERIFY(rowShown(wall, "weekGoodput"));
        QVERIFY(!rowShown(wall, "dayGoodput") && !rowShown(wall, "goodputLostCost"));
        const auto *week = wall.findChild<QLabel *>(QStringLiteral("weekGoodput"));
        QVERIFY(week->isVisible());
        QCOMPARE(week->text(), QStringLiteral("93.0 %"));
        const QString shots = qEnvironmentVariable("FLEETSCOPE_TEST_SHOTS");
        if (!shots.isEmpty()) {
            QVERIFY(wall.grab().save(shots + QStringLiteral("/summary-goodput-wall.png")));
        }
    }

    // The page as a desk shows it, 1920x1080 in a scroll area: goodput is on the first screen, its table and charts
    // laid out with room. FLEETSCOPE_TEST_SHOTS=<dir> keeps the picture.
    void thePageAt1080p()
    {
        const Scene scene = realisticScene();
        QScrollArea area;
        area.setWidgetResizable(true);
        auto *view = new SummaryView;
        area.setWidget(view);
        area.resize(1920, 1080);
        view->setTopology(scene.topology);
        view->setSummaries(scene.day, scene.week);
        view->setTrend(scene.dayTrend, scene.weekTrend);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        const auto *table = view->findChild<QTableView *>(QStringLiteral("goodputLossTable"));
        const auto *causes = view->findChild<QChartView *>(QStringLiteral("goodputCauseChart"));
        QVERIFY(table != nullptr && causes != nullptr);
        QTRY_VERIFY(table->isVisible() && causes->isVisible());
        // Its top rows are on the first screen, none of its columns cut.
        const QPoint at = table->mapTo(&area, QPoint(0, 0));
        QVERIFY2(at.y() + table->height() / 2 < 1080, qPrintable(QString::number(at.y())));
        QVERIFY(table->horizontalScrollBar()->maximum() == 0);
        QCOMPARE(labelText(*view, "weekGoodput"), QStringLiteral("93.0 %"));
        const QString shots = qEnvironmentVariable("FLEETSCOPE_TEST_SHOTS");
        if (!shots.isEmpty()) {
            QVERIFY(area.grab().save(shots + QStringLiteral("/summary-goodput.png")));
            QCOMPARE(view->exportPdf(shots + QStringLiteral("/summary-goodput.pdf")), QString());
        }
    }
};

QTEST_MAIN(TestSummaryGoodput)
#include "tst_summarygoodput.moc"
