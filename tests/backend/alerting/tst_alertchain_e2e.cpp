// SPDX-License-Identifier: Apache-2.0
// The NOC's whole alerting chain with the real servers: the simulator's dcgm-exporter page scraped by VictoriaMetrics,
// vmalert evaluating a rules file of GPU alerts (an XID, a temperature) against it and sending what fires to a real
// Alertmanager, the backend reading Alertmanager (AlertmanagerWatch, its alerts placed on the fleet) and serving them
// over gRPC with TLS and tokens: the alert on the right GPU; a silence made by an operator through the backend, seen
// in Alertmanager's API with the operator's name and in a viewer's stream as suppressed; a viewer's silence refused;
// the silence expired. Skips, saying so, where a server is not installed (scripts/common.sh installs them).
#include "alerting/alertmanagerapi.h"
#include "alerting/alertmanagerwatch.h"
#include "alerting/alertplacement.h"
#include "service/backendserver.h"
#include "sim/exporterserver.h"
#include "sim/scenario.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/alertmanagerprocess.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <grpcpp/grpcpp.h>

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

using namespace fleetscope;
using namespace fleetscope::testing;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

const char *const operatorToken = "3b7f0c1e9a5d4e2f8c6b1a0d9e8f7a6b";
const char *const viewerToken = "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a";

std::string readAll(const QString &path)
{
    std::ifstream in(path.toStdString());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Follows StreamAlerts on a thread of its own and keeps the latest whole state (its parts joined).
class AlertStream
{
public:
    AlertStream(const std::shared_ptr<grpc::Channel> &channel)
        : m_stub(pb::Telemetry::NewStub(channel))
        , m_thread([this] { run(); })
    { }
    ~AlertStream()
    {
        m_context.TryCancel();
        m_thread.join();
    }
    // Waits until a state passes `wanted`; that state, or nullopt at the deadline.
    std::optional<pb::AlertsPart> waitFor(const std::function<bool(const pb::AlertsPart &)> &wanted, int timeoutMs)
    {
        std::unique_lock lock(m_mutex);
        std::optional<pb::AlertsPart> found;
        m_changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] {
            if (m_latest && wanted(*m_latest)) {
                found = *m_latest;
            }
            return found.has_value() || m_ended;
        });
        return found;
    }
    grpc::Status status()
    {
        std::lock_guard lock(m_mutex);
        return m_status;
    }

private:
    void run()
    {
        auto reader = m_stub->StreamAlerts(&m_context, pb::StreamAlertsRequest());
        pb::AlertsPart part;
        pb::AlertsPart whole;
        while (reader->Read(&part)) {
            if (whole.generation() != part.generation()) {
                whole = part;
            } else {
                whole.mutable_alerts()->MergeFrom(part.alerts());
                whole.mutable_silences()->MergeFrom(part.silences());
            }
            if (part.last_part()) {
                std::lock_guard lock(m_mutex);
                m_latest = whole;
                m_changed.notify_all();
            }
        }
        const auto status = reader->Finish();
        std::lock_guard lock(m_mutex);
        m_status = status;
        m_ended = true;
        m_changed.notify_all();
    }

    std::unique_ptr<pb::Telemetry::Stub> m_stub;
    grpc::ClientContext m_context;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::optional<pb::AlertsPart> m_latest;
    grpc::Status m_status;
    bool m_ended = false;
    std::thread m_thread;
};

const pb::Alert *alertNamed(const pb::AlertsPart &state, const std::string &name)
{
    for (const auto &alert : state.alerts()) {
        for (const auto &label : alert.labels()) {
            if (label.name() == "alertname" && label.value() == name) {
                return &alert;
            }
        }
    }
    return nullptr;
}

std::string labelOf(const pb::Alert &alert, const std::string &name)
{
    for (const auto &label : alert.labels()) {
        if (label.name() == name) {
            return label.value();
        }
    }
    return {};
}

bool holdsGpu(const pb::Alert &alert, uint32_t gpu)
{
    for (const auto &run : alert.gpu_runs()) {
        if (gpu >= run.first() && gpu - run.first() < run.count()) {
            return true;
        }
    }
    return false;
}

} // namespace

class TestAlertChainE2e : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    TestCertificates m_certificates;

    std::shared_ptr<grpc::Channel> channel(const be::BackendServer &backend, const char *token)
    {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = readAll(m_certificates.crt(QStringLiteral("ca")));
        auto credentials
            = grpc::CompositeChannelCredentials(grpc::SslCredentials(ssl), grpc::AccessTokenCredentials(token));
        return grpc::CreateChannel("127.0.0.1:" + std::to_string(backend.port()), credentials);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(m_certificates.make(), qPrintable(m_certificates.error()));
    }

    void alertsThroughTheChain()
    {
        if (alertmanagerBinary().isEmpty() || QStandardPaths::findExecutable(QStringLiteral("vmalert")).isEmpty()
            || QStandardPaths::findExecutable(QStringLiteral("victoria-metrics")).isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("prometheus-alertmanager or victoria-metrics (vmalert) is not installed");
        }
        // The fleet: the bad-gpu scenario's GPU logs an XID every step from the 12th on (a minute a second).
        be::SimulationOptions options;
        options.gpuCount = 256;
        options.seed = 5;
        options.interval = 1000ms;
        options.speed = 60;
        options.scenario = be::Scenario::Kind::BadGpu;
        auto source = be::simulatedSource(options);
        const auto badGpu = be::Scenario(be::Scenario::Kind::BadGpu, source->shape(), options.seed).badGpu();
        QVERIFY(badGpu >= 0);
        const auto &shape = source->shape();
        const auto &badNode = shape.nodes[shape.nodeOfGpu[static_cast<uint32_t>(badGpu)]];
        const uint32_t hotGpu = shape.nodes[3].firstGpu + 2;

        be::BackendServer::Security security;
        security.tlsCertFile = m_certificates.crt(QStringLiteral("server")).toStdString();
        security.tlsKeyFile = m_certificates.key(QStringLiteral("server")).toStdString();
        const QString tokens = m_dir.filePath(QStringLiteral("tokens"));
        QVERIFY(writeFile(
            tokens, QByteArray(operatorToken) + " alice operator\n" + QByteArray(viewerToken) + " noc-wall viewer\n"));
        QFile::setPermissions(tokens, QFile::ReadOwner | QFile::WriteOwner);
        security.access.tokenFile = tokens.toStdString();
        be::BackendServer backend(std::move(source), security);
        be::ExporterServer exporter(backend.source(), be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());

        // VictoriaMetrics scraping the page, Alertmanager, and vmalert between them.
        const QString scrape = m_dir.filePath(QStringLiteral("scrape.yml"));
        QVERIFY(writeFile(scrape, scrapeConfig(exporter.port())));
        const int vmPort = freePort();
        ProcessGuard vm;
        QVERIFY(startVictoriaMetrics(&vm, QStandardPaths::findExecutable(QStringLiteral("victoria-metrics")), scrape,
            m_dir.filePath(QStringLiteral("vm")), vmPort));
        const QString amConfig = m_dir.filePath(QStringLiteral("alertmanager.yml"));
        QVERIFY(writeFile(amConfig, alertmanagerConfig()));
        const int amPort = freePort();
        ProcessGuard am;
        QVERIFY(startAlertmanager(&am, amConfig, m_dir.filePath(QStringLiteral("am")), amPort));
        const QString amDown = waitForAlertmanager(am, amPort);
        QVERIFY2(amDown.isEmpty(), qPrintable(amDown));
        const QString rules = m_dir.filePath(QStringLiteral("rules.yml"));
        QVERIFY(writeFile(rules,
            "groups:\n"
            "  - name: gpu\n"
            "    interval: 1s\n"
            "    rules:\n"
            "      - alert: GpuXid\n"
            "        expr: DCGM_FI_DEV_XID_ERRORS > 0\n"
            "        labels:\n"
            "          severity: critical\n"
            "        annotations:\n"
            "          summary: 'XID {{ $value }} on {{ $labels.Hostname }} GPU {{ $labels.gpu }}'\n"
            "          runbook_url: https://runbooks.example/gpu-xid\n"
            "      - alert: GpuHot\n"
            "        expr: DCGM_FI_DEV_GPU_TEMP{Hostname=\""
                + QByteArray::fromStdString(shape.nodes[3].hostname)
                + "\",gpu=\"2\"} > 0\n"
                  "        labels:\n"
                  "          severity: warning\n"
                  "        annotations:\n"
                  "          summary: 'GPU temperature {{ $value }} C'\n"));
        ProcessGuard vmalert;
        QVERIFY(startVmalert(&vmalert, rules, vmPort, amPort, freePort()));

        // The backend reads Alertmanager and places its alerts (its own findings sent there: tst_alertsender).
        be::AlertmanagerApi api;
        QVERIFY2(api.setBaseUrl("http://127.0.0.1:" + std::to_string(amPort), {}, &error), error.c_str());
        be::AlertPlacement placement(backend.source().shape());
        be::AlertmanagerWatch::Options watchOptions;
        watchOptions.pollInterval = 500ms;
        be::AlertmanagerWatch watch(
            api, watchOptions, [&placement](be::AlertmanagerAlert *alert) { placement.place(alert); });
        backend.setAlertDesk(&watch);
        QVERIFY2(backend.start("127.0.0.1:0", &error), error.c_str());

        // The XID alert, placed on the bad GPU; the temperature alert on its GPU; both as vmalert labelled them.
        AlertStream operatorStream(channel(backend, operatorToken));
        const auto fired = operatorStream.waitFor(
            [](const pb::AlertsPart &state) {
                return alertNamed(state, "GpuXid") != nullptr && alertNamed(state, "GpuHot") != nullptr;
            },
            120000);
        QVERIFY2(fired.has_value(), operatorStream.status().error_message().c_str());
        QVERIFY(fired->status().reachable());
        const auto &xid = *alertNamed(*fired, "GpuXid");
        QCOMPARE(labelOf(xid, "Hostname"), badNode.hostname);
        QCOMPARE(xid.gpu_count(), 1U);
        QVERIFY2(holdsGpu(xid, static_cast<uint32_t>(badGpu)), xid.placed_by().c_str());
        QCOMPARE(xid.severity(), pb::SEVERITY_CRITICAL);
        QCOMPARE(xid.state(), pb::ALERT_STATE_ACTIVE);
        const auto &hot = *alertNamed(*fired, "GpuHot");
        QCOMPARE(hot.gpu_count(), 1U);
        QVERIFY(holdsGpu(hot, hotGpu));
        QCOMPARE(hot.severity(), pb::SEVERITY_WARNING);

        // Who is who.
        {
            auto stub = pb::Telemetry::NewStub(channel(backend, viewerToken));
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            pb::Access access;
            QVERIFY(stub->GetAccess(&context, pb::GetAccessRequest(), &access).ok());
            QCOMPARE(access.name(), std::string("noc-wall"));
            QCOMPARE(access.role(), pb::ROLE_VIEWER);
            QVERIFY(access.alertmanager());
            QVERIFY(!access.may_silence());
        }

        // A viewer may not silence; an operator may, as herself.
        pb::CreateSilenceRequest silence;
        auto *host = silence.add_matchers();
        host->set_name("Hostname");
        host->set_value(badNode.hostname);
        host->set_is_equal(true);
        auto *name = silence.add_matchers();
        name->set_name("alertname");
        name->set_value("GpuXid");
        name->set_is_equal(true);
        silence.set_duration_ms(2 * 3600 * 1000);
        silence.set_comment("GPU swap booked, ticket NOC-4711");
        {
            auto stub = pb::Telemetry::NewStub(channel(backend, viewerToken));
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            pb::Silence made;
            const auto status = stub->CreateSilence(&context, silence, &made);
            QCOMPARE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
            QVERIFY2(status.error_message().find("viewer") != std::string::npos, status.error_message().c_str());
            QCOMPARE(alertmanagerSilences(amPort).size(), 0);
        }
        pb::Silence made;
        {
            auto stub = pb::Telemetry::NewStub(channel(backend, operatorToken));
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            const auto status = stub->CreateSilence(&context, silence, &made);
            QVERIFY2(status.ok(), status.error_message().c_str());
        }
        QVERIFY(!made.id().empty());
        QCOMPARE(made.created_by(), std::string("alice"));
        const auto held = alertmanagerSilences(amPort);
        QCOMPARE(held.size(), 1);
        const auto inAlertmanager = held.at(0).toObject();
        QCOMPARE(inAlertmanager.value(QStringLiteral("id")).toString().toStdString(), made.id());
        QCOMPARE(inAlertmanager.value(QStringLiteral("createdBy")).toString(), QStringLiteral("alice"));
        QCOMPARE(inAlertmanager.value(QStringLiteral("comment")).toString(),
            QStringLiteral("GPU swap booked, ticket NOC-4711"));

        // A viewer's stream, another console, sees the alert silenced by it.
        AlertStream viewerStream(channel(backend, viewerToken));
        const auto silenced = viewerStream.waitFor(
            [&](const pb::AlertsPart &state) {
                const auto *alert = alertNamed(state, "GpuXid");
                return alert && alert->state() == pb::ALERT_STATE_SUPPRESSED && alert->silenced_by_size() == 1
                    && alert->silenced_by(0) == made.id() && state.silences_size() == 1;
            },
            30000);
        QVERIFY2(silenced.has_value(), viewerStream.status().error_message().c_str());
        QCOMPARE(silenced->silences(0).created_by(), std::string("alice"));
        QCOMPARE(alertNamed(*silenced, "GpuHot")->state(), pb::ALERT_STATE_ACTIVE);

        // Expired by the operator: the alert fires again for everyone.
        {
            auto stub = pb::Telemetry::NewStub(channel(backend, operatorToken));
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            pb::ExpireSilenceRequest expire;
            expire.set_id(made.id());
            pb::ExpireSilenceResponse done;
            const auto status = stub->ExpireSilence(&context, expire, &done);
            QVERIFY2(status.ok(), status.error_message().c_str());
        }
        QCOMPARE(alertmanagerSilences(amPort)
                     .at(0)
                     .toObject()
                     .value(QStringLiteral("status"))
                     .toObject()
                     .value(QStringLiteral("state"))
                     .toString(),
            QStringLiteral("expired"));
        QVERIFY(viewerStream
                    .waitFor(
                        [](const pb::AlertsPart &state) {
                            const auto *alert = alertNamed(state, "GpuXid");
                            return alert && alert->state() == pb::ALERT_STATE_ACTIVE && state.silences_size() == 0;
                        },
                        30000)
                    .has_value());

        backend.stop();
    }
};

QTEST_GUILESS_MAIN(TestAlertChainE2e)
#include "tst_alertchain_e2e.moc"
