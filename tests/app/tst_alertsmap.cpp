// SPDX-License-Identifier: Apache-2.0
// The alerts layer on the map, over the real simulator backend's fleet and a backend serving the alerts contract
// (tests/client/alertsbackend.h): offered only while the backend reads an Alertmanager, per GPU its most severe alert
// in the legend's categories, the GPUs with a firing alert outlined while it is shown, both following the board;
// chosen before the alerts arrive (a wall's page, a view), it is shown once they do.
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/pages/mappage.h"
#include "app/session/fleetalerts.h"
#include "app/wallwindow.h"
#include "model/alertlayer.h"
#include "model/viewstate.h"
#include "tests/client/alertsbackend.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/wall/wallheader.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace fleetscope;
using namespace fleetscope::alertstesting;

namespace {

struct Placed
{
    std::string name;
    pb::Severity severity;
    bool silenced;
    uint32_t first;
    uint32_t count;
};

// One state of one part: these alerts, each on its run of GPUs.
std::vector<pb::AlertsPart> stateOf(uint64_t generation, const std::vector<Placed> &alerts)
{
    pb::AlertsPart part;
    part.set_generation(generation);
    part.set_last_part(true);
    part.set_alert_count(static_cast<uint32_t>(alerts.size()));
    auto *status = part.mutable_status();
    status->set_url("http://127.0.0.1:9093");
    status->set_reachable(true);
    const int64_t now = QDateTime::currentMSecsSinceEpoch();
    status->set_last_success_ms(now - 1000);
    status->set_poll_interval_ms(1000);
    for (const auto &placed : alerts) {
        auto *a = part.add_alerts();
        a->set_fingerprint("fp-" + placed.name);
        auto *label = a->add_labels();
        label->set_name("alertname");
        label->set_value(placed.name);
        a->set_state(placed.silenced ? pb::ALERT_STATE_SUPPRESSED : pb::ALERT_STATE_ACTIVE);
        if (placed.silenced) {
            a->add_inhibited_by("fp-other");
        }
        a->set_starts_at_ms(now - 60000);
        a->set_severity(placed.severity);
        a->set_node(-1);
        a->set_gpu_count(placed.count);
        auto *run = a->add_gpu_runs();
        run->set_first(placed.first);
        run->set_count(placed.count);
    }
    return { part };
}

bool offers(const ConsoleSession &session, const char *id)
{
    const auto &metrics = session.metrics();
    return std::any_of(metrics.begin(), metrics.end(), [id](const MetricInfo &m) { return m.id == QLatin1String(id); });
}

float valueAt(const HeatmapView *view, uint32_t gpu)
{
    const FramePtr frame = view->frame();
    const MetricPlane *plane = frame ? frame->plane(QString::fromLatin1(AlertLayer::metricId)) : nullptr;
    return plane != nullptr && gpu < plane->values.size() ? plane->values[gpu] : -1.0F;
}

} // namespace

class TestAlertsMap : public QObject
{
    Q_OBJECT

    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<EmbeddedBackend> m_backend;
    std::unique_ptr<AlertsBackend> m_alerts;
    std::unique_ptr<MapPage> m_map;
    std::unique_ptr<WallWindow> m_wall;
    QString m_address; // the simulator backend's

private Q_SLOTS:
    void initTestCase()
    {
        m_session = std::make_unique<ConsoleSession>(ConsoleSession::Options {});
        m_backend = std::make_unique<EmbeddedBackend>(512, 1, QStringList());
        connect(m_backend.get(), &EmbeddedBackend::ready, m_session.get(), &ConsoleSession::connectTo);
        connect(
            m_backend.get(), &EmbeddedBackend::ready, this, [this](const QString &address) { m_address = address; });
        m_map = std::make_unique<MapPage>(m_session.get(), false);
        m_backend->start();
        m_map->resize(900, 600);
        m_map->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_map.get()));
        QTRY_VERIFY_WITH_TIMEOUT(m_session->topology() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(m_map->heatmap()->frame() != nullptr, 60000);
        QTRY_VERIFY(offers(*m_session, VersionDrift::metricId));
    }

    void cleanupTestCase()
    {
        m_wall.reset();
        m_map.reset();
        m_session.reset();
        m_backend.reset();
        m_alerts.reset();
    }

    // The simulator backend reads no Alertmanager: no alerts layer to choose. Chosen all the same (a wall's page),
    // the first metric is shown meanwhile, said so, and the wall does not call it a metric the backend lacks.
    void notOfferedWithoutAnAlertmanager()
    {
        QTRY_COMPARE(m_session->alerts()->freshness(), FleetAlerts::Freshness::NotConfigured);
        QVERIFY(!offers(*m_session, AlertLayer::metricId));
        QSignalSpy messages(m_session.get(), &ConsoleSession::message);
        WallPage page;
        page.metric = QString::fromLatin1(AlertLayer::metricId);
        m_wall = std::make_unique<WallWindow>(m_session.get(), std::vector<WallPage> { page }, false);
        m_wall->refresh();
        QVERIFY2(
            !m_wall->header()->banner().contains(QStringLiteral("no metric")), qPrintable(m_wall->header()->banner()));
        QVERIFY(m_session->shownMetric().id != QLatin1String(AlertLayer::metricId));
        QVERIFY(!messages.isEmpty());
        QVERIFY2(messages.last().at(0).toString().contains(QStringLiteral("alerts layer shows once")),
            qPrintable(messages.last().at(0).toString()));
    }

    // A backend that reads an Alertmanager: the layer is offered, and shown as it was chosen above. Per GPU the most
    // severe alert on it, a firing one over a silenced one; the firing GPUs outlined; the legend's categories.
    void shownOnceTheAlertsArrive()
    {
        m_alerts = std::make_unique<AlertsBackend>();
        QVERIFY(m_alerts->start() > 0);
        m_alerts->setAccess(pb::ROLE_VIEWER, "noc-wall");
        m_alerts->publish(stateOf(1,
            { { "GpuTooHot", pb::SEVERITY_CRITICAL, false, 16, 4 }, { "XidErrors", pb::SEVERITY_WARNING, false, 16, 8 },
                { "PsuSwap", pb::SEVERITY_CRITICAL, true, 40, 8 }, { "EccSoft", pb::SEVERITY_INFO, false, 44, 2 } }));
        m_session->alerts()->connectTo(QString::fromStdString(m_alerts->address()), ChannelSecurity());
        QTRY_VERIFY_WITH_TIMEOUT(offers(*m_session, AlertLayer::metricId), 20000);
        QTRY_COMPARE(m_session->shownMetric().id, QString::fromLatin1(AlertLayer::metricId));
        // The layer is the console's: the live stream is not asked for it (the backend would end it).
        QSignalSpy problems(m_session.get(), &ConsoleSession::problemReported);
        QSignalSpy connection(m_session.get(), &ConsoleSession::connectionChanged);
        const FramePtr shownFirst = m_session->latestFrame();
        QTRY_VERIFY(m_session->latestFrame() != shownFirst); // frames still come
        QVERIFY2(problems.isEmpty(), problems.isEmpty() ? "" : qPrintable(problems.first().at(0).toString()));
        QVERIFY(connection.isEmpty());
        HeatmapView *view = m_map->heatmap();
        QTRY_COMPARE(valueAt(view, 16), float { AlertLayer::Critical });
        QCOMPARE(valueAt(view, 19), float { AlertLayer::Critical });
        QCOMPARE(valueAt(view, 20), float { AlertLayer::Warning });
        QCOMPARE(valueAt(view, 23), float { AlertLayer::Warning });
        QCOMPARE(valueAt(view, 24), float { AlertLayer::NoAlert });
        QCOMPARE(valueAt(view, 40), float { AlertLayer::Quiet });
        QCOMPARE(valueAt(view, 44), float { AlertLayer::Info }); // a firing info over a silenced critical
        QCOMPARE(valueAt(view, 0), float { AlertLayer::NoAlert });
        // Outlined: 16-23 and 44-45.
        QTRY_COMPARE(view->markedGpuCount(), size_t { 10 });
        QCOMPARE(m_session->alertLayer().firingGpus.size(), size_t { 10 });
        QCOMPARE(m_wall->heatmap()->markedGpuCount(), size_t { 10 }); // the wall's page shows it too
        const ColorMap &map = view->colorMap();
        QCOMPARE(map.kind(), ColorMap::Kind::Categorical);
        QCOMPARE(map.categoryNames(), AlertLayer::categoryNames());
        QCOMPARE(map.categoryColour(AlertLayer::Critical), qRgb(0xd5, 0x5e, 0x00));
        QCOMPARE(map.categoryColour(AlertLayer::Warning), qRgb(0xe6, 0x9f, 0x00));
        // As drawn: the value's colour is its category's.
        QCOMPARE(map.map(float { AlertLayer::Critical }, m_session->shownMetric().rangeMin,
                     m_session->shownMetric().rangeMax),
            map.categoryColour(AlertLayer::Critical));
        const QString shots = qEnvironmentVariable("FLEETSCOPE_TEST_SHOTS");
        if (!shots.isEmpty()) {
            QTRY_VERIFY(m_map->grab().save(shots + QStringLiteral("/alertsmap.png")));
        }
    }

    // Another state: the layer and its outlines follow it.
    void followsTheBoard()
    {
        m_alerts->publish(stateOf(2, { { "NodeDown", pb::SEVERITY_CRITICAL, false, 100, 8 } }));
        HeatmapView *view = m_map->heatmap();
        QTRY_COMPARE(valueAt(view, 100), float { AlertLayer::Critical });
        QCOMPARE(valueAt(view, 16), float { AlertLayer::NoAlert });
        QCOMPARE(valueAt(view, 40), float { AlertLayer::NoAlert });
        QTRY_COMPARE(view->markedGpuCount(), size_t { 8 });
        QCOMPARE(m_session->alertLayer().boardGeneration, uint64_t { 2 });
    }

    // FleetAlerts drops the placements for another fleet and hands the same state again once placed (the same
    // generation): the layer follows both.
    void theSameStatePlacedAgain()
    {
        const TopologyPtr topology = m_session->topology();
        FleetAlerts *alerts = m_session->alerts();
        alerts->setTopology(nullptr); // as for another fleet: placed nowhere
        QTRY_VERIFY(m_session->alertLayer().firingGpus.empty());
        QTRY_COMPARE(valueAt(m_map->heatmap(), 100), float { AlertLayer::NoAlert });
        alerts->setTopology(topology); // the stream followed again, its state placed
        QTRY_COMPARE(m_session->alertLayer().firingGpus.size(), size_t { 8 });
        QCOMPARE(alerts->board().generation, uint64_t { 2 });
        QTRY_COMPARE(valueAt(m_map->heatmap(), 100), float { AlertLayer::Critical });
        QTRY_COMPARE(m_map->heatmap()->markedGpuCount(), size_t { 8 });
    }

    // Alerts followed before the fleet is known: the board comes again, the same state, placed once the fleet is
    // (FleetAlerts drops the placements of another fleet and asks again); the layer is drawn from the placed one.
    void placedOnceTheFleetArrives()
    {
        QVERIFY(!m_address.isEmpty());
        ConsoleSession::Options options;
        options.metric = QString::fromLatin1(AlertLayer::metricId);
        ConsoleSession session(options);
        MapPage map(&session, false);
        map.resize(600, 400);
        map.show();
        const QString alerts = QString::fromStdString(m_alerts->address());
        session.alerts()->connectTo(alerts, ChannelSecurity());
        QTRY_COMPARE(session.alerts()->board().generation, uint64_t { 2 }); // the state, before any fleet
        session.connectTo(m_address); // the fleet, and its alerts (none there: followed again below)
        session.alerts()->connectTo(alerts, ChannelSecurity());
        QTRY_VERIFY_WITH_TIMEOUT(session.topology() != nullptr, 30000);
        QTRY_COMPARE(session.shownMetric().id, QString::fromLatin1(AlertLayer::metricId));
        QTRY_COMPARE(valueAt(map.heatmap(), 100), float { AlertLayer::Critical });
        QTRY_COMPARE(map.heatmap()->markedGpuCount(), size_t { 8 });
    }

    // Leaving the layer takes its outlines away; a view (a wall's page) naming it shows it again.
    void leavingAndComingBack()
    {
        HeatmapView *view = m_map->heatmap();
        m_session->setMetric(QStringLiteral("gpu_temp"));
        QCOMPARE(m_session->shownMetric().id, QStringLiteral("gpu_temp"));
        QCOMPARE(view->markedGpuCount(), size_t { 0 });
        ViewState page;
        page.metric = QString::fromLatin1(AlertLayer::metricId);
        m_map->openView(page);
        QCOMPARE(m_session->shownMetric().id, QString::fromLatin1(AlertLayer::metricId));
        QCOMPARE(view->markedGpuCount(), size_t { 8 });
        QTRY_COMPARE(valueAt(view, 100), float { AlertLayer::Critical });
    }
};

QTEST_MAIN(TestAlertsMap)
#include "tst_alertsmap.moc"
