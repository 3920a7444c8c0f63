// SPDX-License-Identifier: Apache-2.0
// The backend's reading of and writing to a real Prometheus Alertmanager (Debian's prometheus-alertmanager, 0.25 in
// bookworm; skips, saying so, when it is not installed): alerts posted through its API seen by AlertmanagerWatch with
// their labels, annotations and state; a silence made and expired through the watch, seen in Alertmanager's API and
// in the state published before the call returns; https and basic authentication; Alertmanager stopped and back; a
// server answering garbage and one that never answers; 10,000 alerts and 1,000 silences, with the cost of a poll
// printed.
#include "alerting/alertmanagerapi.h"
#include "alerting/alertmanagerwatch.h"
#include "tests/backend/testing/alertmanagerprocess.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <httplib.h>

#include <crypt.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

using namespace fleetscope;
using namespace fleetscope::testing;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

namespace {

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

be::AlertmanagerApi apiAt(const std::string &url, std::chrono::milliseconds timeout = 5000ms,
    size_t maxAnswerBytes = be::AlertmanagerLimits().maxAnswerBytes)
{
    be::AlertmanagerApi api;
    be::AlertmanagerApi::Options options;
    options.timeout = timeout;
    options.maxAnswerBytes = maxAnswerBytes;
    std::string error;
    if (!api.setBaseUrl(url, options, &error)) {
        qWarning("%s", error.c_str());
    }
    return api;
}

std::string urlOf(int port, const std::string &prefix = {})
{
    return "http://127.0.0.1:" + std::to_string(port) + prefix;
}

be::AlertmanagerWatch::Options fastPolls(std::chrono::milliseconds interval = 200ms)
{
    be::AlertmanagerWatch::Options options;
    options.pollInterval = interval;
    return options;
}

// The latest state that satisfies ready, waiting for newer ones until timeout; null when none did.
std::shared_ptr<const be::AlertsState> waitForState(const be::AlertmanagerWatch &watch,
    const std::function<bool(const be::AlertsState &)> &ready, std::chrono::milliseconds timeout = 20s)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto state = watch.latest();
    while (!ready(*state)) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return nullptr;
        }
        state = watch.waitNewer(state->generation, deadline);
    }
    return state;
}

// The state's alerts that carry suite=name: each test labels its own.
std::vector<be::AlertmanagerAlert> ofSuite(const be::AlertsState &state, const std::string &name)
{
    std::vector<be::AlertmanagerAlert> out;
    for (const auto &a : state.alerts) {
        if (a.label("suite") == name) {
            out.push_back(a);
        }
    }
    return out;
}

const be::AlertmanagerSilence *silenceIn(const be::AlertsState &state, const std::string &id)
{
    for (const auto &s : state.silences) {
        if (s.id == id) {
            return &s;
        }
    }
    return nullptr;
}

QJsonObject silenceInAlertmanager(int port, const std::string &id)
{
    for (const auto &s : alertmanagerSilences(port)) {
        if (s.toObject().value(QStringLiteral("id")).toString().toStdString() == id) {
            return s.toObject();
        }
    }
    return {};
}

be::OutgoingAlert alert(const std::string &suite, std::vector<be::AlertLabel> labels, int64_t startsAtMs = 0)
{
    be::OutgoingAlert a;
    labels.push_back({ "suite", suite });
    a.labels = std::move(labels);
    a.startsAtMs = startsAtMs;
    return a;
}

// An Alertmanager of a test's own, on a free port with its storage in a temporary folder.
struct OwnAlertmanager
{
    QTemporaryDir dir;
    ProcessGuard guard;
    int port = freePort();

    QString start()
    {
        const QString config = dir.filePath(QStringLiteral("alertmanager.yml"));
        if (!writeFile(config, alertmanagerConfig())
            || !startAlertmanager(&guard, config, dir.filePath(QStringLiteral("data")), port)) {
            return QStringLiteral("cannot start %1").arg(alertmanagerBinary());
        }
        return waitForAlertmanager(guard, port);
    }
};

// A bcrypt hash of password (cost 4, the least bcrypt allows), as Alertmanager's basic_auth_users takes it; empty when
// libcrypt cannot make one.
QByteArray bcrypt(const QByteArray &password)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt)) {
        return {};
    }
    crypt_data data {};
    const char *hash = crypt_r(password.constData(), salt, &data);
    return hash && hash[0] == '$' ? QByteArray(hash) : QByteArray();
}

// An HTTP server in the test that answers what a case sets, on its own thread (cpp-httplib).
struct GarbageServer
{
    httplib::Server server;
    std::thread thread;
    int port = 0;

    GarbageServer()
    {
        const auto answer = [](int status, std::string body, const char *type = "application/json") {
            return [status, body = std::move(body), type](const httplib::Request &, httplib::Response &r) {
                r.status = status;
                r.set_content(body, type);
            };
        };
        server.Get("/html/api/v2/alerts", answer(200, "<html><body>Welcome to nginx!</body></html>", "text/html"));
        server.Get("/types/api/v2/alerts", answer(200, R"([{"fingerprint":1,"labels":{}}])"));
        server.Get("/times/api/v2/alerts",
            answer(200,
                R"([{"fingerprint":"a1","labels":{},"status":{"state":"active"},"startsAt":"2026-13-01T00:00:00Z"}])"));
        server.Get("/huge/api/v2/alerts", answer(200, "[" + std::string(3 << 20, ' ') + "]"));
        server.Get("/failing/api/v2/alerts", answer(200, "[]"));
        server.Get("/failing/api/v2/silences", answer(503, R"("the cluster is settling")"));
        server.Get("/silences/api/v2/alerts", answer(200, "[]"));
        server.Get(
            "/silences/api/v2/silences", answer(200, R"([{"id":"s1","status":{"state":"gone"},"matchers":[]}])"));
        server.Post("/refusing/api/v2/silences", answer(400, R"("silence invalid: the moon is full")"));
        server.Post("/noid/api/v2/silences", answer(200, R"({"id":"x"})"));
        server.Delete(R"(/refusing/api/v2/silence/.*)", answer(500, R"("storage broken")"));
        port = server.bind_to_any_port("127.0.0.1");
        thread = std::thread([this] { server.listen_after_bind(); });
    }
    ~GarbageServer()
    {
        server.stop();
        thread.join();
    }
};

// A socket that listens and never accepts: the kernel completes the handshake, nothing ever answers.
struct SilentServer
{
    int fd = -1;
    int port = 0;
    SilentServer()
    {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof a;
        if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 && listen(fd, 16) == 0
            && getsockname(fd, reinterpret_cast<sockaddr *>(&a), &length) == 0) {
            port = ntohs(a.sin_port);
        }
    }
    ~SilentServer() { close(fd); }
};

} // namespace

class TestAlertmanagerE2e : public QObject
{
    Q_OBJECT

    OwnAlertmanager m_am;

private Q_SLOTS:
    void initTestCase()
    {
        if (alertmanagerBinary().isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("prometheus-alertmanager is not installed (scripts/common.sh installs it)");
        }
        const QString why = m_am.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void postedAlertsAreSeen()
    {
        const be::AlertmanagerApi api = apiAt(urlOf(m_am.port));
        const int64_t now = nowMs();
        be::OutgoingAlert hot = alert("seen",
            { { "alertname", "GpuHot" }, { "Hostname", "r01-k01-n01" }, { "gpu", "3" }, { "severity", "critical" } },
            now - 120'000);
        hot.annotations = { { "summary", "GPU 3 hot" }, { "description", "über 90 °C, \"quoted\" \\ and\nnewline" },
            { "runbook_url", "https://runbooks.example/gpuhot" } };
        hot.generatorUrl = "http://vmalert.example/rule/1";
        const be::OutgoingAlert newerHot = alert("seen",
            { { "alertname", "GpuHot" }, { "Hostname", "r01-k01-n02" }, { "gpu", "1" }, { "severity", "critical" } },
            now - 60'000);
        const be::OutgoingAlert nodeDown = alert(
            "seen", { { "alertname", "NodeDown" }, { "Hostname", "r01-k01-n01" }, { "severity", "warning" } }, now);
        const be::OutgoingAlert disk = alert("seen", { { "alertname", "DiskFull" } }, now);
        std::string error;
        QCOMPARE(api.postAlerts({ hot, newerHot, nodeDown, disk }, &error), be::AlertDesk::Failure::None);

        std::atomic<int> placed { 0 };
        be::AlertmanagerWatch watch(apiAt(urlOf(m_am.port)), fastPolls(), [&placed](be::AlertmanagerAlert *a) {
            ++placed;
            a->placedBy = "Hostname=" + a->label("Hostname");
        });
        // The inhibition follows once Alertmanager's inhibitor has seen NodeDown.
        const auto state = waitForState(watch, [](const be::AlertsState &s) {
            const auto mine = ofSuite(s, "seen");
            return mine.size() == 4 && mine[1].state == be::AlertmanagerAlert::State::Suppressed;
        });
        QVERIFY2(state, watch.latest()->status.error.c_str());
        QVERIFY(state->status.reachable);
        QVERIFY(state->status.error.empty());
        QCOMPARE(state->status.url, urlOf(m_am.port));
        QCOMPARE(state->status.pollIntervalMs, int64_t { 200 });
        QVERIFY(state->status.lastSuccessMs >= now);
        QCOMPARE(state->status.alertsLeftOut, 0U);
        QVERIFY(placed >= 4);

        const auto mine = ofSuite(*state, "seen");
        // Severity first, then newest first.
        QCOMPARE(mine[0].label("Hostname"), std::string("r01-k01-n02"));
        QCOMPARE(mine[1].label("Hostname"), std::string("r01-k01-n01"));
        QCOMPARE(mine[2].label("alertname"), std::string("NodeDown"));
        QCOMPARE(mine[3].label("alertname"), std::string("DiskFull"));
        QCOMPARE(mine[0].severity, EventSeverity::Critical);
        QCOMPARE(mine[2].severity, EventSeverity::Warning);
        QCOMPARE(mine[3].severity, EventSeverity::Info);

        const be::AlertmanagerAlert &seenHot = mine[1];
        QCOMPARE(seenHot.startsAtMs, now - 120'000);
        QVERIFY(seenHot.endsAtMs > now); // Alertmanager's resolve_timeout from now
        QCOMPARE(seenHot.generatorUrl, hot.generatorUrl);
        QCOMPARE(seenHot.label("gpu"), std::string("3"));
        QCOMPARE(seenHot.annotations.size(), size_t { 3 });
        QCOMPARE(seenHot.annotations[0].name, std::string("description"));
        QCOMPARE(seenHot.annotations[0].value, hot.annotations[1].value);
        QCOMPARE(seenHot.placedBy, std::string("Hostname=r01-k01-n01"));
        QCOMPARE(seenHot.inhibitedBy, std::vector<std::string> { mine[2].fingerprint });
        QVERIFY(seenHot.silencedBy.empty());
        QCOMPARE(mine[0].state, be::AlertmanagerAlert::State::Active);
        QCOMPARE(mine[2].state, be::AlertmanagerAlert::State::Active);
        QCOMPARE(QString::fromStdString(mine[0].fingerprint).size(), 16);

        // Polls that read the same publish nothing.
        watch.pollNow();
        const uint64_t generation = watch.latest()->generation;
        watch.pollNow();
        watch.pollNow();
        QCOMPARE(watch.latest()->generation, generation);
        QVERIFY(!watch.lastPollCost().published);
        QVERIFY(watch.lastPollCost().answerBytes > 0);
    }

    void silenceIsMadeAndExpired()
    {
        const be::AlertmanagerApi api = apiAt(urlOf(m_am.port));
        std::string error;
        QCOMPARE(api.postAlerts(
                     { alert("silence",
                         { { "alertname", "XidErrors" }, { "Hostname", "r03-k01-n01" }, { "severity", "critical" } }) },
                     &error),
            be::AlertDesk::Failure::None);
        be::AlertmanagerWatch watch(apiAt(urlOf(m_am.port)), fastPolls(10s));
        QVERIFY(waitForState(watch, [](const be::AlertsState &s) { return ofSuite(s, "silence").size() == 1; }));
        QCOMPARE(ofSuite(*watch.latest(), "silence")[0].state, be::AlertmanagerAlert::State::Active);

        be::SilenceRequest request;
        request.matchers = { { "alertname", "XidErrors", false, true }, { "Hostname", "r03-k01-.*", true, true } };
        request.duration = 1h;
        request.comment = "reseating the GPU, ticket #4711";
        request.createdBy = "alice";
        std::string id;
        const int64_t before = nowMs();
        QCOMPARE(watch.createSilence(request, &id, &error), be::AlertDesk::Failure::None);
        QVERIFY(be::AlertmanagerJson::isIdText(id));

        // Published before createSilence returned: no waiting here (the watch polls every 10 s).
        auto state = watch.latest();
        const be::AlertmanagerSilence *silence = silenceIn(*state, id);
        QVERIFY(silence);
        QCOMPARE(silence->state, be::AlertmanagerSilence::State::Active);
        QCOMPARE(silence->createdBy, std::string("alice"));
        QCOMPARE(silence->comment, request.comment);
        QCOMPARE(silence->matchers.size(), size_t { 2 });
        QCOMPARE(silence->matchers[1].value, std::string("r03-k01-.*"));
        QVERIFY(silence->matchers[1].isRegex);
        QVERIFY(silence->startsAtMs >= before - 1000); // asked a minute back, started at Alertmanager's now
        QVERIFY(std::abs(silence->endsAtMs - (silence->startsAtMs + 3'600'000)) < 5000);
        const auto silenced = ofSuite(*state, "silence");
        QCOMPARE(silenced.size(), size_t { 1 });
        QCOMPARE(silenced[0].state, be::AlertmanagerAlert::State::Suppressed);
        QCOMPARE(silenced[0].silencedBy, std::vector<std::string> { id });

        // Alertmanager's own API says the same.
        QJsonObject inAm = silenceInAlertmanager(m_am.port, id);
        QCOMPARE(inAm.value(QStringLiteral("createdBy")).toString(), QStringLiteral("alice"));
        QCOMPARE(inAm.value(QStringLiteral("comment")).toString(), QString::fromStdString(request.comment));
        QCOMPARE(inAm.value(QStringLiteral("status")).toObject().value(QStringLiteral("state")).toString(),
            QStringLiteral("active"));

        QCOMPARE(watch.expireSilence(id, &error), be::AlertDesk::Failure::None);
        state = watch.latest();
        QVERIFY(!silenceIn(*state, id));
        QCOMPARE(ofSuite(*state, "silence")[0].state, be::AlertmanagerAlert::State::Active);
        QVERIFY(ofSuite(*state, "silence")[0].silencedBy.empty());
        inAm = silenceInAlertmanager(m_am.port, id);
        QCOMPARE(inAm.value(QStringLiteral("status")).toObject().value(QStringLiteral("state")).toString(),
            QStringLiteral("expired"));
    }

    void unknownSilenceIsNotFound()
    {
        be::AlertmanagerWatch watch(apiAt(urlOf(m_am.port)), fastPolls(10s));
        std::string error;
        QCOMPARE(watch.expireSilence("00000000-0000-4000-8000-000000000000", &error), be::AlertDesk::Failure::NotFound);
        QVERIFY2(error.find("no such silence") != std::string::npos, error.c_str());
        QCOMPARE(watch.expireSilence("not-a-uuid", &error), be::AlertDesk::Failure::NotFound);
        QCOMPARE(watch.expireSilence("two words", &error), be::AlertDesk::Failure::InvalidArgument);
        QCOMPARE(watch.expireSilence("", &error), be::AlertDesk::Failure::InvalidArgument);
        QCOMPARE(watch.expireSilence(std::string(100, 'a'), &error), be::AlertDesk::Failure::InvalidArgument);
    }

    void badSilencesAreRefused_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no matcher") << 0 << "at least one matcher";
        QTest::newRow("33 matchers") << 1 << "at most 32";
        QTest::newRow("bad name") << 2 << "is not a label name";
        QTest::newRow("value over 1 KiB") << 3 << "1025 bytes; at most 1024";
        QTest::newRow("empty value") << 4 << "no matcher names what it silences";
        QTest::newRow("regex .*") << 5 << "no matcher names what it silences";
        QTest::newRow("regex ^(.+)$") << 6 << "no matcher names what it silences";
        QTest::newRow("negative matchers alone") << 14 << "no matcher names what it silences";
        QTest::newRow("30 s") << 7 << "from 1 minute to 30 days";
        QTest::newRow("31 days") << 8 << "from 1 minute to 30 days";
        QTest::newRow("no comment") << 9 << "needs a comment";
        QTest::newRow("long comment") << 10 << "at most 1024";
        QTest::newRow("not utf-8") << 11 << "not UTF-8";
        QTest::newRow("no creator") << 12 << "creator";
        QTest::newRow("alertmanager refuses") << 13 << "invalid regular expression";
    }
    void badSilencesAreRefused()
    {
        QFETCH(int, which);
        QFETCH(QString, expected);
        be::SilenceRequest r;
        r.matchers = { { "alertname", "GpuHot", false, true } };
        r.duration = 2h;
        r.comment = "why";
        r.createdBy = "alice";
        switch (which) {
        case 0:
            r.matchers.clear();
            break;
        case 1:
            r.matchers.resize(33, r.matchers[0]);
            break;
        case 2:
            r.matchers[0].name = "gpu-id";
            break;
        case 3:
            r.matchers[0].value = std::string(1025, 'v');
            break;
        case 4:
            r.matchers = { { "alertname", "", false, true } };
            break;
        case 5:
            r.matchers = { { "alertname", ".*", true, true }, { "Hostname", "", false, true } };
            break;
        case 6:
            r.matchers = { { "alertname", "^(.+)$", true, true } };
            break;
        case 7:
            r.duration = 30s;
            break;
        case 8:
            r.duration = std::chrono::hours(24 * 31);
            break;
        case 9:
            r.comment = "  \n";
            break;
        case 10:
            r.comment = std::string(1025, 'c');
            break;
        case 11:
            r.comment = "bad \xff";
            break;
        case 14:
            r.matchers = { { "alertname", "GpuHot", false, false }, { "severity", "zzz", true, false } };
            break;
        case 12:
            r.createdBy.clear();
            break;
        case 13:
            r.matchers = { { "alertname", "(", true, true } };
            break;
        default:
            QFAIL("no such case");
        }
        const int silences = alertmanagerSilences(m_am.port).size();
        be::AlertmanagerWatch watch(apiAt(urlOf(m_am.port)), fastPolls(10s));
        std::string id;
        std::string error;
        QCOMPARE(watch.createSilence(r, &id, &error), be::AlertDesk::Failure::InvalidArgument);
        QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
        QCOMPARE(alertmanagerSilences(m_am.port).size(), silences);
    }

    void matchersThatMatchEverything()
    {
        using W = be::AlertmanagerWatch;
        QVERIFY(W::matchesEverything({ "a", "", false, true }));
        QVERIFY(W::matchesEverything({ "a", "", true, true }));
        QVERIFY(W::matchesEverything({ "a", ".*", true, true }));
        QVERIFY(W::matchesEverything({ "a", "(?s:.*)", true, true }));
        QVERIFY(W::matchesEverything({ "a", "^(?:.+)$", true, true }));
        QVERIFY(!W::matchesEverything({ "a", "b", false, true }));
        QVERIFY(!W::matchesEverything({ "a", "r01-.*", true, true }));
        QVERIFY(!W::matchesEverything({ "a", ".*|x", false, true }));
        QVERIFY(!W::matchesEverything({ "a", "", false, false })); // a!="": the alerts that have a
    }

    void outageKeepsTheAlerts()
    {
        OwnAlertmanager am;
        QString why = am.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        std::string error;
        QCOMPARE(
            apiAt(urlOf(am.port))
                .postAlerts(
                    { alert("outage", { { "alertname", "A" } }), alert("outage", { { "alertname", "B" } }) }, &error),
            be::AlertDesk::Failure::None);
        be::AlertmanagerWatch watch(apiAt(urlOf(am.port), 2000ms), fastPolls());
        const auto read = waitForState(watch, [](const be::AlertsState &s) { return s.alerts.size() == 2; });
        QVERIFY(read);
        const int64_t lastSuccess = read->status.lastSuccessMs;

        am.guard.process.terminate();
        QVERIFY(am.guard.process.waitForFinished(10000));
        const auto down = waitForState(watch, [](const be::AlertsState &s) { return !s.status.reachable; });
        QVERIFY(down);
        QCOMPARE(down->alerts.size(), size_t { 2 }); // kept, marked old by the status
        QVERIFY2(down->status.error.find("cannot connect") != std::string::npos, down->status.error.c_str());
        QVERIFY2(down->status.error.find("/api/v2/alerts") != std::string::npos, down->status.error.c_str());
        QVERIFY(down->status.lastSuccessMs >= lastSuccess);
        QVERIFY(down->status.lastSuccessMs < nowMs());
        QVERIFY(down->generation > read->generation);

        // Back, on the same port and storage: reachable again (Alertmanager keeps silences across a restart, not
        // alerts; they come back as their senders send them again).
        const QString config = am.dir.filePath(QStringLiteral("alertmanager.yml"));
        QVERIFY(startAlertmanager(&am.guard, config, am.dir.filePath(QStringLiteral("data")), am.port));
        why = waitForAlertmanager(am.guard, am.port);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const auto back = waitForState(watch, [](const be::AlertsState &s) { return s.status.reachable; });
        QVERIFY(back);
        QVERIFY(back->status.error.empty());
        QVERIFY(back->status.lastSuccessMs > down->status.lastSuccessMs);
    }

    // https with the server's CA and basic authentication (Alertmanager's --web.config.file), reads and writes; a
    // wrong password and an untrusted certificate said in an operator's words.
    void tlsAndCredentials()
    {
        TestCertificates certificates;
        QVERIFY2(certificates.make(), qPrintable(certificates.error()));
        const QByteArray hash = bcrypt("s3cret");
        QVERIFY(!hash.isEmpty());
        const QString webConfig = certificates.write(QStringLiteral("web.yml"),
            "tls_server_config:\n  cert_file: " + certificates.crt(QStringLiteral("server")).toUtf8() + "\n  key_file: "
                + certificates.key(QStringLiteral("server")).toUtf8() + "\nbasic_auth_users:\n  fleet: " + hash + "\n");
        const std::string password = certificates.write(QStringLiteral("password"), "s3cret\n").toStdString();
        const std::string wrong = certificates.write(QStringLiteral("wrong"), "guess\n").toStdString();
        OwnAlertmanager am;
        const QString config = am.dir.filePath(QStringLiteral("alertmanager.yml"));
        QVERIFY(writeFile(config, alertmanagerConfig()));
        QVERIFY(startAlertmanager(&am.guard, config, am.dir.filePath(QStringLiteral("data")), am.port,
            { QStringLiteral("--web.config.file=") + webConfig }));

        const auto api = [&](const std::string &caFile, const std::string &passwordFile) {
            be::AlertmanagerApi api;
            be::AlertmanagerApi::Options options;
            options.http.caFile = caFile;
            options.http.user = "fleet";
            options.http.passwordFile = passwordFile;
            options.timeout = 5000ms;
            std::string error;
            if (!api.setBaseUrl("https://127.0.0.1:" + std::to_string(am.port), options, &error)) {
                qWarning("%s", error.c_str());
            }
            return api;
        };
        const std::string ca = certificates.crt(QStringLiteral("ca")).toStdString();
        const be::AlertmanagerApi trusted = api(ca, password);
        const QString late
            = waitForServer(am.guard, QStringLiteral("Alertmanager over https"), 30000, [&](QString *detail) {
                  std::string body;
                  std::string error;
                  const bool answered = trusted.getSilences(&body, &error) == be::AlertDesk::Failure::None;
                  *detail = QString::fromStdString(error);
                  return answered;
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));

        std::string error;
        QCOMPARE(
            trusted.postAlerts({ alert("tls", { { "alertname", "GpuHot" }, { "Hostname", "r01-k01-n01" } }) }, &error),
            be::AlertDesk::Failure::None);
        be::AlertmanagerWatch watch(trusted, fastPolls(10s));
        QVERIFY(waitForState(watch, [](const be::AlertsState &s) { return ofSuite(s, "tls").size() == 1; }));
        be::SilenceRequest request;
        request.matchers = { { "alertname", "GpuHot", false, true } };
        request.duration = 10min;
        request.comment = "over https";
        request.createdBy = "alice";
        std::string id;
        QCOMPARE(watch.createSilence(request, &id, &error), be::AlertDesk::Failure::None);
        QVERIFY(silenceIn(*watch.latest(), id));
        QCOMPARE(watch.expireSilence(id, &error), be::AlertDesk::Failure::None);
        QVERIFY(!silenceIn(*watch.latest(), id));

        be::AlertmanagerWatch refused(api(ca, wrong), fastPolls(10s));
        auto state = refused.waitNewer(0, std::chrono::steady_clock::now() + 10s);
        QVERIFY2(state->status.error.find("HTTP 401 Unauthorized: the server refused user 'fleet' with the password "
                                          "given")
                != std::string::npos,
            state->status.error.c_str());
        QCOMPARE(refused.createSilence(request, &id, &error), be::AlertDesk::Failure::Unavailable);
        QVERIFY2(error.find("POST https://") == 0 && error.find("401") != std::string::npos, error.c_str());

        be::AlertmanagerWatch stranger(
            api(certificates.crt(QStringLiteral("otherca")).toStdString(), password), fastPolls(10s));
        state = stranger.waitNewer(0, std::chrono::steady_clock::now() + 10s);
        QVERIFY2(state->status.error.find("the server's certificate is not trusted") != std::string::npos,
            state->status.error.c_str());
    }

    void garbageIsRefused_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("expected");
        QTest::newRow("html") << "/html"
                              << "/api/v2/alerts: answer refused: alerts: not JSON: '<html><body>Welcome to nginx!";
        QTest::newRow("wrong types") << "/types"
                                     << "element 0: \"fingerprint\" is not short printable text";
        QTest::newRow("bad time") << "/times"
                                  << "\"startsAt\" '2026-13-01T00:00:00Z' is not an RFC 3339 time";
        QTest::newRow("too large") << "/huge"
                                   << "answer larger than 1 MiB; refused";
        QTest::newRow("not found") << "/nothing"
                                   << "HTTP 404 Not Found: no Alertmanager API v2 at this URL";
        QTest::newRow("503") << "/failing"
                             << "/api/v2/silences: HTTP 503: the cluster is settling";
        QTest::newRow("silence state") << "/silences"
                                       << "silence s1: unknown state 'gone'";
    }
    void garbageIsRefused()
    {
        QFETCH(QString, prefix);
        QFETCH(QString, expected);
        GarbageServer server;
        QVERIFY(server.port > 0);
        be::AlertmanagerWatch watch(apiAt(urlOf(server.port, prefix.toStdString()), 5000ms, 1 << 20), fastPolls(10s));
        const auto state = watch.waitNewer(0, std::chrono::steady_clock::now() + 10s);
        QCOMPARE(state->generation, uint64_t { 1 });
        QVERIFY(!state->status.reachable);
        QVERIFY2(QString::fromStdString(state->status.error).contains(expected), state->status.error.c_str());
        QVERIFY(state->alerts.empty());
        QCOMPARE(state->status.lastSuccessMs, int64_t { 0 });
    }

    void writesToAServerThatRefuses()
    {
        GarbageServer server;
        std::string error;
        std::string id;
        be::SilenceRequest r;
        r.matchers = { { "alertname", "GpuHot", false, true } };
        r.duration = 1h;
        r.comment = "why";
        r.createdBy = "alice";
        be::AlertmanagerWatch refusing(apiAt(urlOf(server.port, "/refusing")), fastPolls(10s));
        QCOMPARE(refusing.createSilence(r, &id, &error), be::AlertDesk::Failure::InvalidArgument);
        QVERIFY2(
            error.find("Alertmanager refused it (HTTP 400): silence invalid: the moon is full") != std::string::npos,
            error.c_str());
        QCOMPARE(refusing.expireSilence("s1", &error), be::AlertDesk::Failure::Unavailable);
        QVERIFY2(
            error.find("DELETE ") == 0 && error.find("HTTP 500: storage broken") != std::string::npos, error.c_str());
        be::AlertmanagerWatch noId(apiAt(urlOf(server.port, "/noid")), fastPolls(10s));
        QCOMPARE(noId.createSilence(r, &id, &error), be::AlertDesk::Failure::Unavailable);
        QVERIFY2(error.find("not {\"silenceID\"") != std::string::npos, error.c_str());
    }

    void aServerThatNeverAnswers()
    {
        SilentServer silent;
        QVERIFY(silent.port > 0);
        QElapsedTimer clock;
        clock.start();
        {
            be::AlertmanagerWatch watch(apiAt(urlOf(silent.port), 1000ms), fastPolls(10s));
            const auto state = watch.waitNewer(0, std::chrono::steady_clock::now() + 10s);
            QVERIFY(!state->status.reachable);
            QVERIFY2(state->status.error.find("timed out waiting for the answer") != std::string::npos,
                state->status.error.c_str());
            QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        }
        // A watch destroyed while a poll waits on a slow server stops within about a second (libcurl's progress
        // callback; 5 s allows for a loaded machine), not the 60 s deadline.
        clock.restart();
        {
            be::AlertmanagerWatch watch(apiAt(urlOf(silent.port), 60s), fastPolls(10s));
            QTRY_VERIFY(clock.elapsed() > 200); // the poll is under way
        }
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
    }

    // 10,000 firing alerts and 1,000 silences (issue 33's scale): all read, and what a poll costs.
    void thousandsOfAlerts()
    {
        OwnAlertmanager am;
        const QString why = am.start();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const be::AlertmanagerApi api = apiAt(urlOf(am.port), 30s);
        constexpr int alerts = 10000;
        constexpr int silences = 1000;
        const char *severities[] = { "critical", "warning", "info", "warning" };
        std::string error;
        QElapsedTimer clock;
        clock.start();
        for (int batch = 0; batch < alerts / 1000; ++batch) {
            std::vector<be::OutgoingAlert> list;
            for (int i = batch * 1000; i < (batch + 1) * 1000; ++i) {
                const std::string node = QStringLiteral("r%1-k%2-n%3")
                                             .arg(i / 512 % 64 + 1, 2, 10, QLatin1Char('0'))
                                             .arg(i / 64 % 8 + 1, 2, 10, QLatin1Char('0'))
                                             .arg(i / 8 % 8 + 1, 2, 10, QLatin1Char('0'))
                                             .toStdString();
                be::OutgoingAlert a = alert("scale",
                    { { "alertname", "GpuHot" }, { "Hostname", node }, { "gpu", std::to_string(i % 8) },
                        { "severity", severities[i % 4] }, { "instance", node + ":9400" }, { "job", "dcgm" } },
                    nowMs() - i * 1000);
                a.annotations = { { "summary", "GPU " + std::to_string(i % 8) + " of " + node + " above 90 °C" },
                    { "description", "Temperature has been above 90 °C for 5 minutes; the GPU throttles." },
                    { "runbook_url", "https://runbooks.example/gpuhot" } };
                a.generatorUrl = "http://vmalert.example/vmalert/alert?group_id=1&alert_id=" + std::to_string(i);
                list.push_back(std::move(a));
            }
            QCOMPARE(api.postAlerts(list, &error), be::AlertDesk::Failure::None);
        }
        for (int i = 0; i < silences; ++i) {
            be::NewSilence s;
            s.matchers = { { "alertname", "GpuHot", false, true }, { "gpu", std::to_string(i % 8), false, true },
                { "Hostname", QStringLiteral("r%1-k.*").arg(i % 64 + 1, 2, 10, QLatin1Char('0')).toStdString(), true,
                    true } };
            s.startsAtMs = nowMs();
            s.endsAtMs = s.startsAtMs + 3'600'000;
            s.createdBy = "scale";
            s.comment = "silence " + std::to_string(i);
            std::string id;
            QVERIFY2(api.postSilence(s, &id, &error) == be::AlertDesk::Failure::None, error.c_str());
        }
        qInfo("posted %d alerts and %d silences in %lld ms", alerts, silences, clock.elapsed());

        be::AlertmanagerWatch watch(apiAt(urlOf(am.port), 30s), fastPolls(60s));
        const auto state = waitForState(
            watch,
            [](const be::AlertsState &s) {
                return ofSuite(s, "scale").size() == alerts && s.silences.size() == silences;
            },
            60s);
        QVERIFY2(state, watch.latest()->status.error.c_str());
        QCOMPARE(state->status.alertsLeftOut, 0U);
        QCOMPARE(state->status.silencesLeftOut, 0U);
        for (size_t i = 1; i < state->alerts.size(); ++i) {
            const auto &a = state->alerts[i - 1];
            const auto &b = state->alerts[i];
            QVERIFY(a.severity > b.severity || (a.severity == b.severity && a.startsAtMs >= b.startsAtMs));
        }
        int suppressed = 0;
        for (const auto &a : state->alerts) {
            suppressed += a.state == be::AlertmanagerAlert::State::Suppressed ? 1 : 0;
        }
        QVERIFY(suppressed > 0);

        // The cost of a poll that reads the same (the common case) and of one that publishes.
        constexpr int polls = 5;
        be::AlertmanagerWatch::PollCost sum;
        for (int i = 0; i < polls; ++i) {
            QElapsedTimer poll;
            poll.start();
            watch.pollNow();
            const auto cost = watch.lastPollCost();
            QVERIFY(!cost.published);
            sum.fetch += cost.fetch;
            sum.decode += cost.decode;
            sum.publish += cost.publish;
            sum.answerBytes = cost.answerBytes;
        }
        qInfo("a poll of %d alerts and %d silences (%.1f MB of answers), mean of %d: fetch %.1f ms (Alertmanager "
              "and transfer), decode %.1f ms, place+sort+compare %.1f ms",
            alerts, silences, static_cast<double>(sum.answerBytes) / 1e6, polls,
            static_cast<double>(sum.fetch.count()) / polls / 1000.0,
            static_cast<double>(sum.decode.count()) / polls / 1000.0,
            static_cast<double>(sum.publish.count()) / polls / 1000.0);
        be::NewSilence one;
        one.matchers = { { "alertname", "GpuHot", false, true }, { "Hostname", "r64-k08-n08", false, true } };
        one.startsAtMs = nowMs();
        one.endsAtMs = one.startsAtMs + 3'600'000;
        one.createdBy = "scale";
        one.comment = "one more";
        std::string id;
        QCOMPARE(api.postSilence(one, &id, &error), be::AlertDesk::Failure::None);
        watch.pollNow();
        const auto changed = watch.lastPollCost();
        QVERIFY(changed.published);
        qInfo("a poll that publishes a change: fetch %.1f ms, decode %.1f ms, place+sort+compare+publish %.1f ms",
            static_cast<double>(changed.fetch.count()) / 1000.0, static_cast<double>(changed.decode.count()) / 1000.0,
            static_cast<double>(changed.publish.count()) / 1000.0);
    }
};

QTEST_GUILESS_MAIN(TestAlertmanagerE2e)
#include "tst_alertmanager_e2e.moc"
