// SPDX-License-Identifier: Apache-2.0
// The detail panel against a real simulator backend (bad-gpu scenario, two hours of history) on loopback, asking
// through the session's HistoryService as the console does.
#include "app/session/historyservice.h"
#include "client/historyclient.h"
#include "client/telemetryclient.h"
#include "service/backendserver.h"
#include "sim/scenario.h"
#include "sim/simulatedfleet.h"
#include "widgets/detail/detailpanel.h"
#include "widgets/detail/eventtable.h"
#include "widgets/detail/gpucharts.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QAreaSeries>
#include <QDateTime>
#include <QLabel>
#include <QLineSeries>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <chrono>
#include <cmath>
#include <set>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

namespace {

// The median as a reader would compute it: the middle value, or the mean of the middle two.
qreal plainMedian(std::vector<float> values)
{
    values.erase(std::remove_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); }), values.end());
    if (values.empty()) {
        return std::numeric_limits<qreal>::quiet_NaN();
    }
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? qreal(values[n / 2]) : (qreal(values[n / 2 - 1]) + qreal(values[n / 2])) / 2;
}

QString labelText(const QWidget &panel, const char *field)
{
    const auto *label = panel.findChild<QLabel *>(QStringLiteral("identity.%1").arg(QLatin1String(field)));
    return label ? label->text() : QStringLiteral("<no label>");
}

} // namespace

class TestDetailPanel : public QObject
{
    Q_OBJECT
private:
    be::SimulationOptions m_options;
    std::unique_ptr<be::BackendServer> m_server;
    std::unique_ptr<TelemetryClient> m_telemetry;
    int64_t m_badGpu = -1;

    RangeResultPtr query(HistoryClient &client, const RangeRequest &request)
    {
        QSignalSpy ready(&client, &HistoryClient::rangeReady);
        const quint64 id = client.queryRange(request);
        for (int i = 0; i < 4 && ready.isEmpty(); ++i) {
            ready.wait(5000);
        }
        for (const auto &call : std::as_const(ready)) {
            const auto result = call.at(0).value<RangeResultPtr>();
            if (result->requestId == id) {
                return result;
            }
        }
        return nullptr;
    }

    std::unique_ptr<HistoryService> m_service; // the panel's source, over the test's client

    std::unique_ptr<DetailPanel> makePanel(HistoryClient *history)
    {
        history->setTopology(m_telemetry->topology()); // as the session does
        m_service = std::make_unique<HistoryService>();
        m_service->setClient(history);
        auto panel = std::make_unique<DetailPanel>(m_service.get());
        panel->setRefreshInterval(0); // the test compares one answer; live refresh is checked on its own
        panel->setTopology(m_telemetry->topology());
        panel->setMetrics(m_telemetry->metrics());
        panel->setFrame(m_telemetry->latestFrame());
        panel->setJobs(m_telemetry->jobs());
        panel->resize(720, 1900);
        return panel;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_options.gpuCount = 4096;
        m_options.seed = 3;
        m_options.interval = 1000ms;
        m_options.scenario = be::Scenario::Kind::BadGpu;
        m_options.history = 2h;
        m_server = std::make_unique<be::BackendServer>(be::simulatedSource(m_options));
        std::string error;
        QVERIFY2(m_server->start("127.0.0.1:0", &error), error.c_str());
        m_badGpu = be::Scenario(be::Scenario::Kind::BadGpu, m_server->source().shape(), m_options.seed).badGpu();
        QVERIFY(m_badGpu >= 0);

        m_telemetry = std::make_unique<TelemetryClient>();
        m_telemetry->setJobsPollInterval(200);
        m_telemetry->start(QString::fromStdString(m_server->listeningAddress()));
        QTRY_VERIFY_WITH_TIMEOUT(m_telemetry->latestFrame() && m_telemetry->jobs(), 20000);
    }

    void cleanupTestCase()
    {
        m_service.reset();
        m_telemetry.reset();
        m_server.reset();
    }

    void chartsShowQueryRangeAndThePeerMedian()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        auto *busy = panel->findChild<QProgressBar *>();
        QVERIFY(busy);
        QSignalSpy loading(panel.get(), &DetailPanel::loadingChanged);
        panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(panel.get()));
        panel->setGpu(static_cast<int>(m_badGpu));
        QVERIFY(panel->isLoading());
        QVERIFY(busy->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isLoading(), 20000);
        QVERIFY(!busy->isVisible());
        QCOMPARE(loading.count(), 2);
        QVERIFY2(panel->lastError().isEmpty(), qPrintable(panel->lastError()));

        // Peers: the other GPUs of its rack.
        const auto topology = m_telemetry->topology();
        const auto &rack = topology->racks[topology->nodeOf(static_cast<uint32_t>(m_badGpu)).rack];
        const uint32_t rackFirst = topology->nodes[rack.firstNode].firstGpu;
        const auto &lastNode = topology->nodes[rack.firstNode + rack.nodeCount - 1];
        const uint32_t rackEnd = lastNode.firstGpu + lastNode.gpuCount;
        QCOMPARE(panel->subjectGpus(), std::vector<uint32_t> { static_cast<uint32_t>(m_badGpu) });
        QCOMPARE(panel->peerGpus().size(), size_t(rackEnd - rackFirst - 1));

        // The same QueryRange, made independently.
        const RangeRequest shown = panel->shownRange();
        QCOMPARE(shown.toMs - shown.fromMs, DetailPanel::windows()[0]);
        const auto result = query(history, shown);
        QVERIFY(result);
        const RangeSeries *temp = result->find(QStringLiteral("gpu_temp"));
        QVERIFY(temp);
        QVERIFY(temp->rows() > 100);
        QCOMPARE(temp->columns(), size_t(rackEnd - rackFirst));
        const auto subjectColumn = static_cast<size_t>(
            std::find(temp->gpus.begin(), temp->gpus.end(), uint32_t(m_badGpu)) - temp->gpus.begin());

        const MetricChart *chart = panel->chart(QStringLiteral("gpu_temp"));
        QVERIFY(chart);
        const QList<QPointF> line = chart->subjectSeries()->points();
        const QList<QPointF> median = chart->medianSeries()->points();
        QList<QPointF> expectedLine;
        QList<QPointF> expectedMedian;
        for (size_t r = 0; r < temp->rows(); ++r) {
            const auto t = static_cast<qreal>(temp->times[r]);
            if (const float v = temp->at(r, subjectColumn); std::isfinite(v)) {
                expectedLine.append({ t, v });
            }
            std::vector<float> peers;
            for (size_t c = 0; c < temp->columns(); ++c) {
                if (c != subjectColumn) {
                    peers.push_back(temp->at(r, c));
                }
            }
            if (const qreal m = plainMedian(peers); !std::isnan(m)) {
                expectedMedian.append({ t, m });
            }
        }
        QVERIFY(expectedLine.size() > 100);
        QCOMPARE(line, expectedLine);
        QCOMPARE(median.size(), expectedMedian.size());
        for (qsizetype i = 0; i < median.size(); ++i) {
            QCOMPARE(median[i].x(), expectedMedian[i].x());
            QVERIFY2(qFuzzyCompare(median[i].y(), expectedMedian[i].y()),
                qPrintable(QStringLiteral("row %1: %2 != %3").arg(i).arg(median[i].y()).arg(expectedMedian[i].y())));
        }
        // The band lies around the median, p25 below and p75 above.
        const QAreaSeries *band = chart->bandSeries();
        QCOMPARE(band->upperSeries()->count(), median.size());
        QCOMPARE(band->lowerSeries()->count(), median.size());
        for (qsizetype i = 0; i < median.size(); ++i) {
            QVERIFY(band->lowerSeries()->at(i).y() <= median[i].y());
            QVERIFY(band->upperSeries()->at(i).y() >= median[i].y());
        }
        // The failing GPU runs hot against its peers by the end of the window.
        QVERIFY2(line.last().y() > median.last().y(),
            qPrintable(QStringLiteral("%1 vs %2").arg(line.last().y()).arg(median.last().y())));

        // The other charts are filled as well.
        for (const auto &id : DetailPanel::chartMetrics()) {
            QVERIFY2(panel->chart(id)->subjectSeries()->count() > 100, qPrintable(id));
        }

        // Identity.
        const auto gpu = static_cast<uint32_t>(m_badGpu);
        QCOMPARE(labelText(*panel, "hostname"), topology->nodeOf(gpu).hostname);
        QCOMPARE(labelText(*panel, "serial"), QString::fromStdString(topology->gpuSerials[gpu]));
        QCOMPARE(labelText(*panel, "uuid"), topology->uuidText(gpu));
        QCOMPARE(labelText(*panel, "model"), topology->nodeOf(gpu).model);
        QCOMPARE(labelText(*panel, "driver"), topology->nodeOf(gpu).driverVersion);
        QCOMPARE(labelText(*panel, "firmware"), topology->nodeOf(gpu).firmwareVersion);
        QVERIFY(!topology->uuidText(gpu).isEmpty());

        // Current values: one row per plane of the frame, the GPU's own value.
        const auto frame = m_telemetry->latestFrame();
        panel->setFrame(frame);
        QTableWidget *values = panel->valuesTable();
        QCOMPARE(values->rowCount(), int(frame->planes.size()));
        QCOMPARE(values->columnCount(), 1);
        const float tempNow = frame->plane(QStringLiteral("gpu_temp"))->values[gpu];
        QCOMPARE(values->item(0, 0)->text(), QString::number(double(tempNow), 'f', 1));
        QCOMPARE(values->horizontalHeaderItem(0)->text(),
            QStringLiteral("GPU %1").arg(gpu - topology->nodeOf(gpu).firstGpu));
        // Another GPU of the same node: the header follows the selection.
        const uint32_t neighbour = gpu ^ 1U;
        panel->setGpu(static_cast<int>(neighbour));
        panel->setFrame(frame);
        QCOMPARE(values->horizontalHeaderItem(0)->text(),
            QStringLiteral("GPU %1").arg(neighbour - topology->nodeOf(neighbour).firstGpu));
        panel->setGpu(static_cast<int>(gpu));
        panel->setFrame(frame);

        // Jobs it served: every listed job that holds the GPU, and no other.
        const auto jobs = m_telemetry->jobs();
        panel->setJobs(jobs);
        std::set<QString> expectedJobs;
        for (const auto &job : jobs->jobs) {
            if (std::binary_search(job.gpus.begin(), job.gpus.end(), gpu)) {
                expectedJobs.insert(QStringLiteral("%1 (#%2)").arg(job.name).arg(job.id));
            }
        }
        std::set<QString> shownJobs;
        for (int r = 0; r < panel->jobsTable()->rowCount(); ++r) {
            shownJobs.insert(panel->jobsTable()->item(r, 0)->text());
        }
        QCOMPARE(shownJobs, expectedJobs);

        // Jobs the backend left out of its answer (over the message limit) are said, not silently missing.
        auto cut = std::make_shared<JobList>(*jobs);
        cut->runningJobsLeftOut = 2;
        cut->endedJobsLeftOut = 40;
        panel->setJobs(cut);
        const int last = panel->jobsTable()->rowCount() - 1;
        QCOMPARE(last, int(expectedJobs.size()));
        QCOMPARE(panel->jobsTable()->item(last, 0)->text(),
            QStringLiteral("Not listed: 2 running, 40 older ended job(s) the backend left out of its answer"));
    }

    void eventsTableListsTheBackendsEvents()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        QAbstractItemModelTester tester(panel->eventModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        panel->setGpu(static_cast<int>(m_badGpu));
        const auto topology = m_telemetry->topology();
        const int64_t node = topology->nodeOfGpu[static_cast<size_t>(m_badGpu)];

        // What the backend reports for the GPU, asked independently for a closed range.
        QSignalSpy batches(&history, &HistoryClient::eventsReady);
        QSignalSpy finished(&history, &HistoryClient::requestFinished);
        const quint64 id = history.streamEvents({ m_badGpu, node }, 1, QDateTime::currentMSecsSinceEpoch());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 20000);
        std::vector<FleetEvent> expected;
        for (const auto &call : std::as_const(batches)) {
            const auto batch = call.at(0).value<EventBatchPtr>();
            if (batch->requestId == id) {
                expected.insert(expected.end(), batch->events.begin(), batch->events.end());
            }
        }
        QVERIFY2(expected.size() >= 3, qPrintable(QString::number(expected.size())));

        EventTableModel *model = panel->eventModel();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() >= int(expected.size()), 20000);
        std::map<uint64_t, int> rowOf;
        for (int r = 0; r < model->rowCount(); ++r) {
            rowOf[model->index(r, 0).data(EventTableModel::SequenceRole).toULongLong()] = r;
            // Newest first.
            if (r > 0) {
                QVERIFY(model->event(r).timeMs <= model->event(r - 1).timeMs);
            }
        }
        bool sawMeaning = false;
        for (const auto &e : expected) {
            QVERIFY2(rowOf.count(e.sequence), qPrintable(e.text));
            const int r = rowOf[e.sequence];
            QCOMPARE(model->index(r, EventTableModel::TextColumn).data().toString(), e.text);
            if (e.xid != 0) {
                const QString meaning = model->index(r, EventTableModel::MeaningColumn).data().toString();
                QCOMPARE(model->index(r, EventTableModel::XidColumn).data().toUInt(), e.xid);
                QVERIFY(!meaning.isEmpty());
                if (meaning == xidMeaningText(e.xid) && !xidMeaningText(e.xid).isEmpty()) {
                    sawMeaning = true;
                }
            }
        }
        QVERIFY(sawMeaning);
    }

    void windowAndSelectionChangesSupersedeTheOldRequest()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        panel->setGpu(static_cast<int>(m_badGpu));
        panel->setWindow(3); // 24 h, at once: the 15-minute request is cancelled
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isLoading(), 20000);
        QCOMPARE(panel->shownRange().toMs - panel->shownRange().fromMs, DetailPanel::windows()[3]);

        // A node: its GPUs are the subject, the rest of the rack the peers.
        const auto topology = m_telemetry->topology();
        const uint32_t nodeIndex = topology->nodeOfGpu[static_cast<size_t>(m_badGpu)];
        panel->setNode(static_cast<int>(nodeIndex));
        QCOMPARE(panel->gpu(), -1);
        QCOMPARE(panel->subjectGpus().size(), size_t(topology->nodes[nodeIndex].gpuCount));
        QVERIFY(panel->shownRange().gpus.empty()); // nothing shown of the old selection
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isLoading(), 20000);
        QCOMPARE(panel->shownRange().gpus.size(), panel->subjectGpus().size() + panel->peerGpus().size());
        QCOMPARE(labelText(*panel, "hostname"), topology->nodes[nodeIndex].hostname);
    }

    // The NVLink domain is said only where a GPU's rack is one (NVL72); an HGX GPU's panel has no such line.
    void nvlinkDomainOnlyWhereTheRackIsOne()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(panel.get()));
        const auto *line = panel->findChild<QLabel *>(QStringLiteral("identity.nvlink"));
        QVERIFY(line);
        panel->setGpu(70);
        QVERIFY(!line->isVisible());

        auto nvl = std::make_shared<Topology>(*m_telemetry->topology());
        nvl->generation += 1;
        const uint32_t rack = nvl->nodeOf(70).rack;
        nvl->racks[rack].nvlinkDomain = true;
        panel->setTopology(nvl);
        panel->setGpu(70);
        QVERIFY(line->isVisible());
        const auto &r = nvl->racks[rack];
        const uint32_t gpus = nvl->nodes[r.firstNode + r.nodeCount - 1].firstGpu
            + nvl->nodes[r.firstNode + r.nodeCount - 1].gpuCount - nvl->nodes[r.firstNode].firstGpu;
        QCOMPARE(labelText(*panel, "nvlink"), QStringLiteral("%1 (%2 GPUs)").arg(r.name).arg(gpus));
        panel->setNode(static_cast<int>(r.firstNode)); // a tray of the domain says it too
        QVERIFY(line->isVisible());
        panel->setTopology(m_telemetry->topology());
        panel->setGpu(70);
        QVERIFY(!line->isVisible());
    }

    // A GPU's power, cooling and network domains as the backend words them, wrapped between domains to the dock's
    // width; a node's are its rack's and its scalable unit; a fleet without domains has no such line.
    void domainsAreNamed()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        panel->resize(360, 1200);
        panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(panel.get()));
        const auto *line = panel->findChild<QLabel *>(QStringLiteral("identity.domains"));
        QVERIFY(line);
        QVERIFY(!line->isVisible()); // nothing selected
        const auto &shape = m_server->source().shape();
        const auto unwrapped
            = [&] { return labelText(*panel, "domains").replace(QLatin1Char('\n'), QStringLiteral(" · ")); };
        panel->setGpu(70);
        QVERIFY(line->isVisible());
        QCOMPARE(unwrapped(), QString::fromStdString(shape.domainLine(70)));
        // A line a cause, none broken inside a name at the dock's width.
        const QString rack = m_telemetry->topology()->racks[m_telemetry->topology()->nodeOf(70).rack].name;
        QCOMPARE(labelText(*panel, "domains"),
            QStringLiteral("PDU %1-a · PDU %1-b\ncooling unit r01-crah1\nleaf su01-l6 port 9, rail 6").arg(rack));
        QApplication::processEvents();
        QCOMPARE(line->height(), line->heightForWidth(1 << 16)); // as tall as unwrapped: three lines
        QVERIFY(line->height() >= 3 * line->fontMetrics().height());
        QVERIFY(line->mapTo(line->parentWidget(), QPoint(line->width(), 0)).x() <= line->parentWidget()->width());
        // A node: its rack's domains and its own.
        const auto topology = m_telemetry->topology();
        panel->setNode(static_cast<int>(topology->nodeOfGpu[70]));
        QVERIFY(line->isVisible());
        QCOMPARE(labelText(*panel, "domains"),
            QStringLiteral("PDU %1-a · PDU %1-b\ncooling unit r01-crah1\nscalable unit su01").arg(rack));
        // An NVL72 rack's NVLink domain has a row of its own, with its GPUs: not said twice.
        auto nvl = std::make_shared<Topology>(*topology);
        nvl->generation += 1;
        const uint32_t rackIndex = nvl->nodeOf(70).rack;
        nvl->racks[rackIndex].nvlinkDomain = true;
        nvl->domains.push_back({ DomainKind::NvlinkDomain, rack + QStringLiteral("-nvl"), -1, -1 });
        nvl->racks[rackIndex].domains.push_back(static_cast<uint32_t>(nvl->domains.size() - 1));
        QVERIFY(nvl->domainLine(70).contains(QStringLiteral("NVLink domain %1-nvl").arg(rack)));
        panel->setTopology(nvl);
        panel->setGpu(70);
        QCOMPARE(labelText(*panel, "domains"),
            QStringLiteral("PDU %1-a · PDU %1-b\ncooling unit r01-crah1\nleaf su01-l6 port 9, rail 6").arg(rack));
        // No domains known: no line.
        auto bare = std::make_shared<Topology>(*topology);
        bare->generation += 1;
        bare->domains.clear();
        bare->gpuLinks.clear();
        panel->setTopology(bare);
        panel->setGpu(70);
        QVERIFY(!line->isVisible());
    }

    void refreshesLive()
    {
        HistoryClient history(QString::fromStdString(m_server->listeningAddress()));
        auto panel = makePanel(&history);
        panel->setGpu(3);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isLoading(), 20000);
        const int64_t first = panel->shownRange().toMs;
        QSignalSpy shown(panel.get(), &DetailPanel::historyShown);
        panel->setRefreshInterval(200);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 2, 20000);
        QVERIFY(panel->shownRange().toMs > first);
        QVERIFY(!panel->isLoading()); // a refresh does not flash the busy indicator
    }

    void unreachableBackendIsSaidAndDoesNotHang()
    {
        int port = 0;
        {
            be::SimulationOptions o;
            o.gpuCount = 64;
            be::BackendServer probe(be::simulatedSource(o));
            std::string error;
            QVERIFY(probe.start("127.0.0.1:0", &error));
            port = probe.port();
        }
        HistoryClient history(QStringLiteral("127.0.0.1:%1").arg(port));
        auto panel = makePanel(&history);
        panel->setGpu(5);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isLoading(), 20000);
        QVERIFY2(panel->lastError().contains(QStringLiteral("unavailable")), qPrintable(panel->lastError()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestDetailPanel test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_detailpanel.moc"
