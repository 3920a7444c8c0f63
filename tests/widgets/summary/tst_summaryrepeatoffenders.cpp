// SPDX-License-Identifier: Apache-2.0
// The summary page's repeat offenders (table, sort, click, CSV, the worst 1 %'s share, hostnames in the CSV), the
// GPU-hours lost in schedulable units, from constructed summaries, and the capacity at risk of a live frame.
#include "tests/model/testtopology.h"
#include "widgets/summary/repeatoffenderspanel.h"
#include "widgets/summary/summaryview.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

using namespace fleetscope;
using fleetscope::testing::makeTopology;

namespace {
QString labelText(const SummaryView &view, const char *name)
{
    const auto *label = view.findChild<QLabel *>(QString::fromLatin1(name));
    return label != nullptr ? label->text() : QStringLiteral("(no label %1)").arg(QString::fromLatin1(name));
}

// A day and a week over the 48-GPU test fleet (3 racks of 2 nodes of 8), with three repeat offenders.
std::pair<SummaryPtr, SummaryPtr> summaries()
{
    auto day = std::make_shared<Summary>();
    day->fromMs = 0;
    day->toMs = 24 * 3600 * 1000;
    day->fleet.gpuCount = 48;
    day->repeatOffenders = {
        { 9, 38.25, 3, 2, 4, 1, 6, 150, 2.5 },
        { 40, 12.5, 10, 0, 0, 0, 2, 25, 0 },
        { 2, 0.75, 0, 0, 0, 0, 0, 0, 1.5 },
    };
    day->topPercentFailureShare = 0.723;
    day->unitHours = { 1234.4, 456.2, 6, 5 };
    auto week = std::make_shared<Summary>(*day);
    week->unitHours = { 99999, 9999, 6, 0 }; // the day's are shown
    return { day, week };
}
} // namespace

class TestSummaryRepeatOffenders : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tableListsScoresAndParts()
    {
        SummaryView view;
        view.setTopology(makeTopology());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        auto *table = view.findChild<QTableView *>(QStringLiteral("repeatOffenderTable"));
        QVERIFY(table != nullptr);
        QAbstractItemModelTester tester(table->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto *model = table->model();
        QCOMPARE(model->rowCount(), 3);
        QCOMPARE(model->columnCount(), 8);
        QStringList headers;
        for (int c = 0; c < model->columnCount(); ++c) {
            headers << model->headerData(c, Qt::Horizontal).toString();
        }
        QCOMPARE(headers,
            QStringList({ QStringLiteral("GPU"), QStringLiteral("Score"), QStringLiteral("XIDs"),
                QStringLiteral("Serious XIDs"), QStringLiteral("Double-bit ECC"), QStringLiteral("Remapped rows"),
                QStringLiteral("PCIe replays"), QStringLiteral("Throttle hours") }));
        auto row = [&](int r) {
            QStringList cells;
            for (int c = 0; c < model->columnCount(); ++c) {
                cells << model->index(r, c).data().toString();
            }
            return cells.join(QLatin1Char('|'));
        };
        // Highest score first; remapped rows of both kinds in one column (1 + 6).
        QCOMPARE(row(0), QStringLiteral("r01-k01-n02 GPU 1|38.25|3.0|2.0|4.0|7.0|150.0|2.5"));
        QCOMPARE(row(1), QStringLiteral("r01-k03-n02 GPU 0|12.50|10.0|0.0|0.0|2.0|25.0|0.0"));
        QCOMPARE(row(2), QStringLiteral("r01-k01-n01 GPU 2|0.75|0.0|0.0|0.0|0.0|0.0|1.5"));
        // Sorted on the numbers, not the text: most throttle hours first.
        table->sortByColumn(7, Qt::DescendingOrder);
        QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("r01-k01-n02 GPU 1"));
        QCOMPARE(model->index(1, 0).data().toString(), QStringLiteral("r01-k01-n01 GPU 2"));
        table->sortByColumn(2, Qt::DescendingOrder);
        QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("r01-k03-n02 GPU 0"));
        QCOMPARE(labelText(view, "repeatShare"),
            QStringLiteral("The worst 1 % of GPUs carry 72.3 % of failures (XIDs and double-bit ECC errors, decayed "
                           "alike)."));
    }

    void aClickChoosesTheGpu()
    {
        SummaryView view;
        view.resize(1600, 1800);
        view.setTopology(makeTopology());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy chosen(&view, &SummaryView::gpuChosen);
        auto *table = view.findChild<QTableView *>(QStringLiteral("repeatOffenderTable"));
        QVERIFY(table != nullptr && table->isVisible());
        QTest::mouseClick(
            table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(1, 3)).center());
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.at(0).at(0).value<uint32_t>(), 40U);
        // The offenders by failures (none in these summaries: one added) choose their GPU the same way.
        auto withFailures = std::make_shared<Summary>(*week);
        withFailures->offenders = { { 17, 3 } };
        withFailures->totalFailures = 3;
        withFailures->fleet.failures = 3;
        view.setSummaries(day, withFailures);
        auto *offenders = view.findChild<QTableView *>(QStringLiteral("offenderTable"));
        QVERIFY(offenders != nullptr);
        QCOMPARE(offenders->model()->rowCount(), 1);
        QTest::mouseClick(
            offenders->viewport(), Qt::LeftButton, {}, offenders->visualRect(offenders->model()->index(0, 1)).center());
        QCOMPARE(chosen.size(), 2);
        QCOMPARE(chosen.at(1).at(0).value<uint32_t>(), 17U);
    }

    void csvListsEveryPart()
    {
        SummaryView view;
        view.setTopology(makeTopology());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        const QByteArray expected = "gpu,hostname,gpu_on_node,score,xids,serious_xids,ecc_double_bit,remapped_rows,"
                                    "remapped_rows_correctable,pcie_replays,throttle_hours\r\n"
                                    "9,r01-k01-n02,1,38.250,3.000,2.000,4.000,1.000,6.000,150.000,2.500\r\n"
                                    "40,r01-k03-n02,0,12.500,10.000,0.000,0.000,0.000,2.000,25.000,0.000\r\n"
                                    "2,r01-k01-n01,2,0.750,0.000,0.000,0.000,0.000,0.000,0.000,1.500\r\n";
        QCOMPARE(view.repeatOffendersCsv(), expected);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("repeat.csv"));
        QCOMPARE(view.exportRepeatOffendersCsv(path), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), expected);
        QVERIFY(!view.exportRepeatOffendersCsv(dir.filePath(QStringLiteral("missing/dir/x.csv"))).isEmpty());

        // Without a topology: the fleet index, host and GPU on node empty.
        SummaryView bare;
        bare.setSummaries(day, week);
        QVERIFY(bare.repeatOffendersCsv().contains("\r\n40,,,12.500,"));
        // None yet: the header alone.
        SummaryView empty;
        QCOMPARE(empty.repeatOffendersCsv(),
            QByteArray("gpu,hostname,gpu_on_node,score,xids,serious_xids,ecc_double_bit,remapped_rows,"
                       "remapped_rows_correctable,pcie_replays,throttle_hours\r\n"));
    }

    void unitHoursBesideTheUnits()
    {
        SummaryView view;
        view.setTopology(makeTopology());
        const auto [day, week] = summaries();
        view.setSummaries(day, week);
        QCOMPARE(labelText(view, "unitGpuHoursLost"),
            QStringLiteral("GPU-hours lost in unhealthy units over the last day: 1,234 (of which 456 on healthy GPUs "
                           "stranded) · 5 of 6 units fully healthy at its end"));
        // A backend that does not say (no units) shows nothing rather than zeros.
        auto old = std::make_shared<Summary>(*day);
        old->unitHours = {};
        view.setSummaries(old, week);
        QCOMPARE(labelText(view, "unitGpuHoursLost"), QString());
    }

    void summaryShowsRiskAndNamesOffenders()
    {
        const TopologyPtr topology = makeTopology();
        SummaryView view;
        view.setTopology(topology);
        auto frame = std::make_shared<Frame>();
        frame->topologyGeneration = topology->generation;
        frame->health.assign(topology->gpuCount, health::Ok);
        frame->health[17] = health::Critical;
        view.setLiveState(frame, nullptr);
        QCOMPARE(view.capacityAtRisk().gpusAtRisk, 16U);
        const auto *units = view.findChild<QLabel *>(QStringLiteral("schedulableUnits"));
        QVERIFY(units != nullptr);
        QCOMPARE(units->text(),
            QStringLiteral("Schedulable units: 5 of 6 nodes fully healthy (83.3 %) · 7 healthy GPUs stranded in the "
                           "others"));
        auto day = std::make_shared<Summary>();
        day->fleet.gpuCount = topology->gpuCount;
        day->offenders = { { 9, 4 }, { 40, 2 } };
        day->totalFailures = 6;
        auto week = std::make_shared<Summary>(*day);
        view.setSummaries(day, week);
        const QByteArray csv = view.offendersCsv();
        QVERIFY2(csv.startsWith("gpu,hostname,gpu_on_node,failures,share_of_week_failures\r\n"), csv.constData());
        QVERIFY2(csv.contains("\r\n9,r01-k01-n02,1,4,"), csv.constData());
    }
};

QTEST_MAIN(TestSummaryRepeatOffenders)
#include "tst_summaryrepeatoffenders.moc"
