// SPDX-License-Identifier: Apache-2.0
// Reading Alertmanager's API v2 answers and writing what the backend posts to it, without a network: answers captured
// from Debian's Alertmanager 0.25, and hostile ones (wrong types, huge counts, deep nesting, bad times, bytes that are
// not UTF-8), each read within its bounds or refused with an error that says what and where. The real server is
// tst_alertmanager_e2e.
#include "alerting/alertmanagerjson.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <iterator>
#include <string>

using namespace fleetscope;
namespace be = fleetscope::backend;

namespace {

// GET /api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=false from prometheus-alertmanager
// 0.25.0-1+b4 with the inhibition rule of tests/backend/testing/alertmanagerprocess.h, four alerts posted, a silence of
// Hostname=~"r02-.*": NodeDown inhibits the GpuHot on the same node, XidErrors is silenced.
const std::string capturedAlerts
    = R"([{"annotations":{"summary":"node down"},"endsAt":"2026-12-06T15:44:25.476Z","fingerprint":"1526f76ba399f03e","receivers":[{"name":"noc"}],"startsAt":"2026-12-06T15:39:25.476Z","status":{"inhibitedBy":[],"silencedBy":[],"state":"active"},"updatedAt":"2026-12-06T15:39:25.476Z","labels":{"Hostname":"r01-k01-n01","alertname":"NodeDown","severity":"warning"}},{"annotations":{"runbook_url":"https://runbooks.example/xid79"},"endsAt":"2026-12-06T15:44:25.476Z","fingerprint":"4fc0941e12a3f188","receivers":[{"name":"noc"}],"startsAt":"2026-12-06T15:39:25.476Z","status":{"inhibitedBy":[],"silencedBy":["02954e6e-94d5-4659-a077-45c7d96185e7"],"state":"suppressed"},"updatedAt":"2026-12-06T15:39:25.476Z","labels":{"Hostname":"r02-k03-n04","alertname":"XidErrors","gpu":"0","severity":"page","xid":"79"}},{"annotations":{},"endsAt":"2026-12-06T15:44:25.476Z","fingerprint":"53beb96e81688a42","receivers":[{"name":"noc"}],"startsAt":"2026-12-06T15:39:25.476Z","status":{"inhibitedBy":[],"silencedBy":[],"state":"active"},"updatedAt":"2026-12-06T15:39:25.476Z","labels":{"Hostname":"r01-k01-n02","alertname":"GpuHot","gpu":"1","severity":"critical"}},{"annotations":{"description":"über 90 °C \"quoted\" \\ back","summary":"GPU 3 hot"},"endsAt":"2026-12-06T15:44:25.476Z","fingerprint":"e050a8ab12ec3801","receivers":[{"name":"noc"}],"startsAt":"2026-12-06T15:39:25.476Z","status":{"inhibitedBy":["1526f76ba399f03e"],"silencedBy":[],"state":"suppressed"},"updatedAt":"2026-12-06T15:39:25.476Z","generatorURL":"http://vmalert/rule/1","labels":{"Hostname":"r01-k01-n01","alertname":"GpuHot","gpu":"3","severity":"critical"}}])";

// GET /api/v2/silences from the same Alertmanager: one active, one pending (starting tomorrow), one expired.
const std::string capturedSilences
    = R"([{"id":"02954e6e-94d5-4659-a077-45c7d96185e7","status":{"state":"active"},"updatedAt":"2026-12-06T15:39:25.487Z","comment":"rack r02 maintenance, ticket #12","createdBy":"alice","endsAt":"2026-12-06T17:39:25.000Z","matchers":[{"isEqual":true,"isRegex":true,"name":"Hostname","value":"r02-.*"},{"isEqual":false,"isRegex":false,"name":"alertname","value":"NodeDown"}],"startsAt":"2026-12-06T15:39:25.487Z"},{"id":"00a43859-7bbd-4649-8742-92b6bcc0f03d","status":{"state":"pending"},"updatedAt":"2026-12-06T15:39:25.500Z","comment":"tomorrow","createdBy":"bob","endsAt":"2026-12-08T15:39:25.000Z","matchers":[{"isEqual":true,"isRegex":false,"name":"Hostname","value":"r09-k01-n01"}],"startsAt":"2026-12-07T15:39:25.000Z"},{"id":"0ec1c171-c676-4d7a-abdc-b6371aa63dbf","status":{"state":"expired"},"updatedAt":"2026-12-06T15:34:12.830Z","comment":"looking","createdBy":"ops","endsAt":"2026-12-06T15:34:12.830Z","matchers":[{"isEqual":true,"isRegex":false,"name":"alertname","value":"NodeDown"}],"startsAt":"2026-12-06T15:34:07.880Z"}])";

qint64 isoMs(const char *text)
{
    return QDateTime::fromString(QString::fromLatin1(text), Qt::ISODateWithMs).toMSecsSinceEpoch();
}

// One alert as Alertmanager writes it, with the given labels object and fingerprint.
std::string alertJson(const std::string &fingerprint, const std::string &labels, const std::string &extra = {})
{
    return R"({"annotations":{},"endsAt":"2026-12-06T15:44:25.476Z","fingerprint":")" + fingerprint
        + R"(","startsAt":"2026-12-06T15:39:25.476Z","status":{"inhibitedBy":[],"silencedBy":[],"state":"active"},)"
          R"("updatedAt":"2026-12-06T15:39:25.476Z","labels":)"
        + labels + extra + "}";
}

std::string silenceJson(const std::string &id, const std::string &state, const std::string &matchers)
{
    return R"({"id":")" + id + R"(","status":{"state":")" + state
        + R"("},"updatedAt":"2026-12-06T15:39:25.487Z","comment":"c","createdBy":"alice",)"
          R"("endsAt":"2026-12-06T17:39:25.000Z","matchers":)"
        + matchers + R"(,"startsAt":"2026-12-06T15:39:25.487Z"})";
}

const std::string oneMatcher = R"([{"isEqual":true,"isRegex":false,"name":"a","value":"b"}])";

// Qt replaces what is not UTF-8 with U+FFFD: a round trip that changes nothing was well-formed.
bool validUtf8(const std::string &text)
{
    const QByteArray bytes = QByteArray::fromStdString(text);
    return QString::fromUtf8(bytes).toUtf8() == bytes;
}

} // namespace

class TestAlertmanagerJson : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void capturedAlertsAreRead()
    {
        be::AlertmanagerJson json;
        std::string body = capturedAlerts;
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY2(json.decodeAlerts(&body, &out, &error), error.c_str());
        QCOMPARE(out.alerts.size(), size_t { 4 });
        QCOMPARE(out.leftOut, 0U);

        const be::AlertmanagerAlert &nodeDown = out.alerts[0];
        QCOMPARE(nodeDown.fingerprint, std::string("1526f76ba399f03e"));
        QCOMPARE(nodeDown.labels.size(), size_t { 3 });
        QCOMPARE(nodeDown.labels[0].name, std::string("Hostname")); // by name
        QCOMPARE(nodeDown.label("alertname"), std::string("NodeDown"));
        QCOMPARE(nodeDown.severity, EventSeverity::Warning);
        QCOMPARE(nodeDown.state, be::AlertmanagerAlert::State::Active);
        QCOMPARE(nodeDown.startsAtMs, isoMs("2026-12-06T15:39:25.476Z"));
        QCOMPARE(nodeDown.endsAtMs, isoMs("2026-12-06T15:44:25.476Z"));
        QCOMPARE(nodeDown.updatedAtMs, isoMs("2026-12-06T15:39:25.476Z"));
        QVERIFY(nodeDown.generatorUrl.empty());

        const be::AlertmanagerAlert &xid = out.alerts[1];
        QCOMPARE(xid.severity, EventSeverity::Critical); // "page"
        QCOMPARE(xid.state, be::AlertmanagerAlert::State::Suppressed);
        QCOMPARE(xid.silencedBy, std::vector<std::string> { "02954e6e-94d5-4659-a077-45c7d96185e7" });
        QCOMPARE(xid.annotations.size(), size_t { 1 });
        QCOMPARE(xid.annotations[0].value, std::string("https://runbooks.example/xid79"));

        const be::AlertmanagerAlert &hot = out.alerts[3];
        QCOMPARE(hot.severity, EventSeverity::Critical);
        QCOMPARE(hot.state, be::AlertmanagerAlert::State::Suppressed);
        QCOMPARE(hot.inhibitedBy, std::vector<std::string> { "1526f76ba399f03e" });
        QCOMPARE(hot.generatorUrl, std::string("http://vmalert/rule/1"));
        QCOMPARE(hot.annotations.size(), size_t { 2 });
        QCOMPARE(hot.annotations[0].name, std::string("description"));
        QCOMPARE(hot.annotations[0].value, std::string("über 90 °C \"quoted\" \\ back"));
        // Placement is AlertPlacement's business: nothing placed here.
        QCOMPARE(hot.gpuCount, 0U);
        QCOMPARE(hot.node, int64_t { -1 });

        // The same decoder again (simdjson's buffers reused) reads the same.
        body = capturedAlerts;
        be::AlertmanagerJson::Alerts again;
        QVERIFY(json.decodeAlerts(&body, &again, &error));
        QCOMPARE(again.alerts.size(), size_t { 4 });
        QCOMPARE(again.alerts[3].annotations[0].value, hot.annotations[0].value);
    }

    void capturedSilencesAreRead()
    {
        be::AlertmanagerJson json;
        std::string body = capturedSilences;
        be::AlertmanagerJson::Silences out;
        std::string error;
        QVERIFY2(json.decodeSilences(&body, &out, &error), error.c_str());
        QCOMPARE(out.silences.size(), size_t { 2 }); // the expired one is not kept
        QCOMPARE(out.expired, 1U);
        QCOMPARE(out.leftOut, 0U);
        const be::AlertmanagerSilence &rack = out.silences[0];
        QCOMPARE(rack.id, std::string("02954e6e-94d5-4659-a077-45c7d96185e7"));
        QCOMPARE(rack.state, be::AlertmanagerSilence::State::Active);
        QCOMPARE(rack.createdBy, std::string("alice"));
        QCOMPARE(rack.comment, std::string("rack r02 maintenance, ticket #12"));
        QCOMPARE(rack.startsAtMs, isoMs("2026-12-06T15:39:25.487Z"));
        QCOMPARE(rack.endsAtMs, isoMs("2026-12-06T17:39:25.000Z"));
        QCOMPARE(rack.matchers.size(), size_t { 2 });
        QCOMPARE(rack.matchers[0].name, std::string("Hostname"));
        QCOMPARE(rack.matchers[0].value, std::string("r02-.*"));
        QVERIFY(rack.matchers[0].isRegex);
        QVERIFY(rack.matchers[0].isEqual);
        QVERIFY(!rack.matchers[1].isRegex);
        QVERIFY(!rack.matchers[1].isEqual);
        QCOMPARE(out.silences[1].state, be::AlertmanagerSilence::State::Pending);
        QCOMPARE(out.silences[1].createdBy, std::string("bob"));
    }

    void times_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("ms");
        QTest::newRow("alertmanager") << "2026-12-06T15:39:25.476Z" << true << isoMs("2026-12-06T15:39:25.476Z");
        QTest::newRow("no fraction") << "2026-12-06T15:39:25Z" << true << isoMs("2026-12-06T15:39:25.000Z");
        QTest::newRow("nanoseconds") << "2026-12-06T15:39:25.123456789Z" << true << isoMs("2026-12-06T15:39:25.123Z");
        QTest::newRow("offset") << "2026-12-06T17:39:25.5+02:00" << true << isoMs("2026-12-06T15:39:25.500Z");
        QTest::newRow("negative offset") << "2026-12-06T10:09:25-05:30" << true << isoMs("2026-12-06T15:39:25.000Z");
        QTest::newRow("lower case") << "2026-12-06t15:39:25z" << true << isoMs("2026-12-06T15:39:25.000Z");
        QTest::newRow("leap day") << "2024-02-29T00:00:00Z" << true << isoMs("2024-02-29T00:00:00.000Z");
        QTest::newRow("epoch") << "1970-01-01T00:00:00Z" << true << qint64 { 0 };
        QTest::newRow("go zero time") << "0001-01-01T00:00:00Z" << true << qint64 { 0 };
        QTest::newRow("last") << "9999-12-31T23:59:59.999Z" << true << qint64 { 253'402'300'799'999 };
        QTest::newRow("not leap") << "2026-02-29T00:00:00Z" << false << qint64 {};
        QTest::newRow("april 31") << "2026-04-31T00:00:00Z" << false << qint64 {};
        QTest::newRow("month 13") << "2026-13-01T00:00:00Z" << false << qint64 {};
        QTest::newRow("day 0") << "2026-12-00T00:00:00Z" << false << qint64 {};
        QTest::newRow("hour 24") << "2026-12-06T24:00:00Z" << false << qint64 {};
        QTest::newRow("leap second") << "2026-12-31T23:59:60Z" << false << qint64 {};
        QTest::newRow("no zone") << "2026-12-06T15:39:25" << false << qint64 {};
        QTest::newRow("space") << "2026-12-06 15:39:25Z" << false << qint64 {};
        QTest::newRow("ten fraction digits") << "2026-12-06T15:39:25.1234567890Z" << false << qint64 {};
        QTest::newRow("empty fraction") << "2026-12-06T15:39:25.Z" << false << qint64 {};
        QTest::newRow("offset hour 24") << "2026-12-06T15:39:25+24:00" << false << qint64 {};
        QTest::newRow("offset without colon") << "2026-12-06T15:39:25+0200" << false << qint64 {};
        QTest::newRow("trailing") << "2026-12-06T15:39:25Zjunk" << false << qint64 {};
        QTest::newRow("sign") << "+2026-12-06T15:39:25Z" << false << qint64 {};
        QTest::newRow("unix seconds") << "1765035565" << false << qint64 {};
        QTest::newRow("empty") << "" << false << qint64 {};
    }
    void times()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qint64, ms);
        int64_t out = -1;
        QCOMPARE(be::AlertmanagerJson::parseTime(text.toStdString(), &out), valid);
        if (valid) {
            QCOMPARE(out, ms);
            if (ms > 0 && ms % 1000 != 0) {
                int64_t back = 0;
                QVERIFY(be::AlertmanagerJson::parseTime(be::AlertmanagerJson::formatTime(ms), &back));
                QCOMPARE(back, ms);
            }
        }
    }

    void timesAreFormatted()
    {
        QCOMPARE(be::AlertmanagerJson::formatTime(isoMs("2026-12-06T15:39:25.476Z")),
            std::string("2026-12-06T15:39:25.476Z"));
        QCOMPARE(be::AlertmanagerJson::formatTime(0), std::string("1970-01-01T00:00:00.000Z"));
        QCOMPARE(be::AlertmanagerJson::formatTime(isoMs("2024-02-29T23:59:59.001Z")),
            std::string("2024-02-29T23:59:59.001Z"));
    }

    void severities()
    {
        using be::AlertmanagerJson;
        QCOMPARE(AlertmanagerJson::severityOf("critical"), EventSeverity::Critical);
        QCOMPARE(AlertmanagerJson::severityOf("CRITICAL"), EventSeverity::Critical);
        QCOMPARE(AlertmanagerJson::severityOf("page"), EventSeverity::Critical);
        QCOMPARE(AlertmanagerJson::severityOf("error"), EventSeverity::Critical);
        QCOMPARE(AlertmanagerJson::severityOf("warning"), EventSeverity::Warning);
        QCOMPARE(AlertmanagerJson::severityOf("Warn"), EventSeverity::Warning);
        QCOMPARE(AlertmanagerJson::severityOf("info"), EventSeverity::Info);
        QCOMPARE(AlertmanagerJson::severityOf("none"), EventSeverity::Info);
        QCOMPARE(AlertmanagerJson::severityOf(""), EventSeverity::Info);
        QCOMPARE(AlertmanagerJson::severityOf("critical-ish"), EventSeverity::Info);
        QCOMPARE(AlertmanagerJson::severityOf(std::string(100, 'x') + "critical"), EventSeverity::Info);
    }

    // Answers that are not Alertmanager's: refused whole, with what and where.
    void hostileAlerts_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("expected"); // in the error
        const auto ok = [](const char *fp) { return alertJson(fp, R"({"alertname":"A"})"); };
        const auto row = [](const char *name, const std::string &body, const char *expected) {
            QTest::newRow(name) << QByteArray::fromStdString(body) << QString::fromLatin1(expected);
        };
        row("empty", "", "malformed");
        row("not json", "<html>Bad Gateway</html>", "not JSON: '<html>Bad Gateway</html>'");
        row("object", R"({"status":"success","data":[]})", "not a JSON array");
        row("string", R"("silence not found")", "not a JSON array");
        row("truncated", "[" + ok("a1"), "alerts");
        row("trailing", "[" + ok("a1") + "] []", "more after the array");
        row("element not object", "[" + ok("a1") + ",42]", "element 1: not an object");
        row("labels array", "[" + alertJson("a1", R"(["alertname","A"])") + "]",
            "element 0: alert a1: \"labels\" is not an object");
        row("label number", "[" + alertJson("a1", R"({"alertname":7})") + "]", "label 'alertname' is not a string");
        row("label null", "[" + alertJson("a1", R"({"severity":null})") + "]", "label 'severity' is not a string");
        row("fingerprint number", "[" + ok("a1") + R"(,{"fingerprint":12,"labels":{}}])", "element 1: \"fingerprint\"");
        row("fingerprint space", "[" + alertJson("a b", "{}") + "]", "fingerprint");
        row("fingerprint long", "[" + alertJson(std::string(65, 'f'), "{}") + "]", "fingerprint");
        row("no fingerprint", R"([{"labels":{},"status":{"state":"active"}}])", "no \"fingerprint\"");
        row("no labels", R"([{"fingerprint":"a1","status":{"state":"active"}}])", "no \"labels\"");
        row("no status", R"([{"fingerprint":"a1","labels":{}}])", "no \"status\"");
        row("state unknown", R"([{"fingerprint":"a1","labels":{},"status":{"state":"firing"}}])",
            "unknown state 'firing'");
        row("state missing", R"([{"fingerprint":"a1","labels":{},"status":{}}])", "no \"state\"");
        row("silencedBy object", R"([{"fingerprint":"a1","labels":{},"status":{"state":"active","silencedBy":{}}}])",
            "\"silencedBy\" is not an array");
        row("silencedBy number", R"([{"fingerprint":"a1","labels":{},"status":{"state":"active","silencedBy":[1]}}])",
            "silencedBy");
        row("silencedBy control",
            "[{\"fingerprint\":\"a1\",\"labels\":{},\"status\":{\"state\":\"active\",\"inhibitedBy\":[\"a\\u0001b\"]}}"
            "]",
            "not an id");
        row("startsAt feb 30", "[" + alertJson("a1", "{}", R"(,"startsAt":"2026-02-30T00:00:00Z")") + "]",
            "alert a1: \"startsAt\" '2026-02-30T00:00:00Z' is not an RFC 3339 time");
        row("endsAt number", "[" + alertJson("a1", "{}", R"(,"endsAt":1765035565)") + "]",
            "\"endsAt\" is not a string");
        row("updatedAt unix", "[" + alertJson("a1", "{}", R"(,"updatedAt":"1765035565")") + "]", "updatedAt");
        row("generatorURL object", "[" + alertJson("a1", "{}", R"(,"generatorURL":{})") + "]", "generatorURL");
        row("not utf-8", "[" + alertJson("a1", "{\"alertname\":\"\xff\xfe\"}") + "]", "alerts");
        row("overlong utf-8", "[" + alertJson("a1", "{\"alertname\":\"\xc0\xaf\"}") + "]", "alerts");
        row("surrogate escape", "[" + alertJson("a1", R"({"alertname":"\ud800"})") + "]", "alerts");
        row("unclosed nesting", "[" + alertJson("a1", "{}", ",\"x\":" + std::string(5000, '[')) + "]", "alerts");
        row("nul byte", std::string("[") + '\0' + "]", "element 0: not an object");
    }
    void hostileAlerts()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, expected);
        be::AlertmanagerJson json;
        std::string text = body.toStdString();
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY(!json.decodeAlerts(&text, &out, &error));
        QVERIFY(out.alerts.empty());
        QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
        QVERIFY2(error.rfind("alerts: ", 0) == 0, error.c_str());
        QVERIFY(validUtf8(error));
        // The decoder is usable again after a refusal.
        text = capturedAlerts;
        QVERIFY(json.decodeAlerts(&text, &out, &error));
        QCOMPARE(out.alerts.size(), size_t { 4 });
    }

    void deepNestingWithinTheBoundIsSkipped()
    {
        // An unknown field's value, however nested, is skipped whole, without recursion.
        be::AlertmanagerJson json;
        std::string body = "["
            + alertJson("a1", R"({"alertname":"A"})", ",\"x\":" + std::string(100000, '[') + std::string(100000, ']'))
            + "]";
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY2(json.decodeAlerts(&body, &out, &error), error.c_str());
        QCOMPARE(out.alerts.size(), size_t { 1 });
        QCOMPARE(out.alerts[0].label("alertname"), std::string("A"));
    }

    void hostileSilences_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("expected");
        const auto row = [](const char *name, const std::string &body, const char *expected) {
            QTest::newRow(name) << QByteArray::fromStdString(body) << QString::fromLatin1(expected);
        };
        row("not json", "silences", "not JSON: 'silences'");
        row("object", "{}", "not a JSON array");
        row("id number", R"([{"id":5,"status":{"state":"active"},"matchers":[]}])", "\"id\"");
        row("id with newline", "[" + silenceJson("a\\nb", "active", oneMatcher) + "]", "\"id\"");
        row("state unknown", "[" + silenceJson("s1", "deleted", oneMatcher) + "]",
            "silence s1: unknown state 'deleted'");
        row("status without state", R"([{"id":"s1","status":{},"matchers":[]}])",
            "silence s1: \"status\" has no \"state\"");
        row("no matchers", R"([{"id":"s1","status":{"state":"active"}}])", "no \"matchers\"");
        row("matchers object", "[" + silenceJson("s1", "active", "{}") + "]", "\"matchers\" is not an array");
        row("matcher string", "[" + silenceJson("s1", "active", R"(["a=b"])") + "]", "a matcher is not an object");
        row("matcher isRegex string",
            "[" + silenceJson("s1", "active", R"([{"name":"a","value":"b","isRegex":"yes"}])") + "]",
            "a matcher's \"isRegex\" is not true or false");
        row("matcher without value", "[" + silenceJson("s1", "active", R"([{"name":"a","isRegex":false}])") + "]",
            "a matcher has no \"value\"");
        row("endsAt bad", R"([{"id":"s1","status":{"state":"active"},"matchers":[],"endsAt":"tomorrow"}])",
            "element 0: silence s1: \"endsAt\" 'tomorrow' is not an RFC 3339 time");
        row("comment number", R"([{"id":"s1","status":{"state":"active"},"matchers":[],"comment":1}])",
            "\"comment\" is not a string");
    }
    void hostileSilences()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, expected);
        be::AlertmanagerJson json;
        std::string text = body.toStdString();
        be::AlertmanagerJson::Silences out;
        std::string error;
        QVERIFY(!json.decodeSilences(&text, &out, &error));
        QVERIFY(out.silences.empty());
        QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
        QVERIFY2(error.rfind("silences: ", 0) == 0, error.c_str());
    }

    void answerOverItsBoundIsRefused()
    {
        be::AlertmanagerLimits limits;
        limits.maxAnswerBytes = 1000;
        be::AlertmanagerJson json(limits);
        std::string body = capturedAlerts; // 1,618 bytes
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY(!json.decodeAlerts(&body, &out, &error));
        QVERIFY2(error.find("over the bound of 1000 bytes") != std::string::npos, error.c_str());
    }

    // Past maxAlerts the least severe are left out, whatever the answer's order.
    void theMostSevereAreKept()
    {
        be::AlertmanagerLimits limits;
        limits.maxAlerts = 3;
        be::AlertmanagerJson json(limits);
        const char *severities[]
            = { "info", "warning", "info", "critical", "none", "warning", "page", "info", "critical", "warning" };
        std::string body = "[";
        for (size_t i = 0; i < std::size(severities); ++i) {
            body += (i ? "," : "")
                + alertJson("a" + std::to_string(i), std::string(R"({"severity":")") + severities[i] + "\"}");
        }
        body += "]";
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY2(json.decodeAlerts(&body, &out, &error), error.c_str());
        QCOMPARE(out.alerts.size(), size_t { 3 });
        QCOMPARE(out.leftOut, 7U);
        for (const auto &a : out.alerts) {
            QCOMPARE(a.severity, EventSeverity::Critical); // a3, a6, a8
        }

        // Two critical among many: those two and the first warnings.
        limits.maxAlerts = 4;
        be::AlertmanagerJson four(limits);
        body = "[";
        for (int i = 0; i < 100; ++i) {
            const char *s = i == 50 || i == 99 ? "critical" : i % 10 == 0 ? "warning" : "info";
            body += (i ? "," : "") + alertJson("b" + std::to_string(i), std::string(R"({"severity":")") + s + "\"}");
        }
        body += "]";
        QVERIFY(four.decodeAlerts(&body, &out, &error));
        QCOMPARE(out.leftOut, 96U);
        int critical = 0;
        int warning = 0;
        for (const auto &a : out.alerts) {
            critical += a.severity == EventSeverity::Critical ? 1 : 0;
            warning += a.severity == EventSeverity::Warning ? 1 : 0;
        }
        QCOMPARE(critical, 2);
        QCOMPARE(warning, 2);
    }

    void theDefaultBoundHolds()
    {
        be::AlertmanagerJson json;
        const size_t n = json.limits().maxAlerts + 100;
        std::string body = "[";
        for (size_t i = 0; i < n; ++i) {
            body += (i ? "," : "") + alertJson("c" + std::to_string(i), R"({"alertname":"A"})");
        }
        body += "]";
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY2(json.decodeAlerts(&body, &out, &error), error.c_str());
        QCOMPARE(out.alerts.size(), size_t { 20000 });
        QCOMPARE(out.leftOut, 100U);
    }

    void labelsAndTextAreBounded()
    {
        be::AlertmanagerJson json;
        // 100 labels, then the severity and the host: 64 kept, the two that place and rank an alert among them.
        std::string labels = "{";
        for (int i = 0; i < 100; ++i) {
            labels += QStringLiteral("\"l%1\":\"v\",").arg(i, 3, 10, QLatin1Char('0')).toStdString();
        }
        labels += "\"severity\":\"critical\",\"Hostname\":\"r01-k01-n01\"}";
        // A 10,000-byte annotation of two-byte characters, and 10,000 silence ids.
        std::string description;
        for (int i = 0; i < 5000; ++i) {
            description += "é";
        }
        std::string ids = "[";
        for (int i = 0; i < 10000; ++i) {
            ids += (i ? ",\"s" : "\"s") + std::to_string(i) + "\"";
        }
        ids += "]";
        std::string body = "[{\"fingerprint\":\"a1\",\"labels\":" + labels + ",\"annotations\":{\"description\":\""
            + description + "\"},\"status\":{\"state\":\"suppressed\",\"silencedBy\":" + ids
            + ",\"inhibitedBy\":[]},\"generatorURL\":\"" + std::string(9000, 'u') + "\"}]";
        be::AlertmanagerJson::Alerts out;
        std::string error;
        QVERIFY2(json.decodeAlerts(&body, &out, &error), error.c_str());
        QCOMPARE(out.alerts.size(), size_t { 1 });
        const auto &a = out.alerts[0];
        QCOMPARE(a.labels.size(), size_t { 64 });
        QCOMPARE(a.labels.front().name, std::string("Hostname"));
        QCOMPARE(a.labels.back().name, std::string("severity"));
        QCOMPARE(a.labels[a.labels.size() - 2].name, std::string("l061"));
        QCOMPARE(a.severity, EventSeverity::Critical);
        QCOMPARE(a.silencedBy.size(), size_t { 64 });
        const std::string &cut = a.annotations.at(0).value;
        QVERIFY(cut.size() <= 4096);
        QVERIFY(cut.size() >= 4090);
        QVERIFY(validUtf8(cut));
        QVERIFY(cut.size() >= 3 && cut.compare(cut.size() - 3, 3, "…") == 0);
        QVERIFY(a.generatorUrl.size() <= 4096);
    }

    void silencesAreBounded()
    {
        be::AlertmanagerLimits limits;
        limits.maxSilences = 5;
        be::AlertmanagerJson json(limits);
        std::string many = "[";
        for (int i = 0; i < 40; ++i) {
            many += QStringLiteral("%1{\"isEqual\":true,\"isRegex\":false,\"name\":\"l%2\",\"value\":\"v\"}")
                        .arg(i ? QStringLiteral(",") : QString())
                        .arg(i)
                        .toStdString();
        }
        many += "]";
        std::string body = "[" + silenceJson("wide", "active", many);
        for (int i = 0; i < 10; ++i) {
            body += "," + silenceJson("s" + std::to_string(i), i % 3 == 0 ? "expired" : "active", oneMatcher);
        }
        body += "]";
        be::AlertmanagerJson::Silences out;
        std::string error;
        QVERIFY2(json.decodeSilences(&body, &out, &error), error.c_str());
        QCOMPARE(out.expired, 4U); // s0, s3, s6, s9
        QCOMPARE(out.silences.size(), size_t { 5 });
        QCOMPARE(out.leftOut, 2U); // the silence of 40 matchers, and s8 past the bound
        for (const auto &s : out.silences) {
            QVERIFY(s.id != "wide");
        }
    }

    void silenceIds()
    {
        std::string id;
        std::string error;
        QVERIFY(be::AlertmanagerJson::decodeSilenceId(
            R"({"silenceID":"0ec1c171-c676-4d7a-abdc-b6371aa63dbf"})", &id, &error));
        QCOMPARE(id, std::string("0ec1c171-c676-4d7a-abdc-b6371aa63dbf"));
        for (const char *bad : { "", "{}", "[]", R"({"silenceID":5})", R"({"silenceID":""})", R"({"silenceID":"a b"})",
                 R"({"silenceID":"a"} x)", "<html>" }) {
            QVERIFY2(!be::AlertmanagerJson::decodeSilenceId(bad, &id, &error), bad);
            QVERIFY2(error.find("silenceID") != std::string::npos, error.c_str());
        }
        QVERIFY(!be::AlertmanagerJson::decodeSilenceId(std::string(100000, '{'), &id, &error));
    }

    void errorReasons()
    {
        using be::AlertmanagerJson;
        QCOMPARE(AlertmanagerJson::errorReason(R"("at least one label pair required")"),
            std::string("at least one label pair required"));
        QCOMPARE(AlertmanagerJson::errorReason(R"({"code":601,"message":"silenceID in path must be of type uuid"})"),
            std::string("silenceID in path must be of type uuid"));
        QCOMPARE(AlertmanagerJson::errorReason("<html>\r\n<b>502</b>\n"), std::string("<html>  <b>502</b>"));
        QCOMPARE(AlertmanagerJson::errorReason(""), std::string());
        const std::string reason = AlertmanagerJson::errorReason("\"" + std::string(5000, 'x') + "\"");
        QVERIFY(reason.size() <= 512);
        QVERIFY(validUtf8(AlertmanagerJson::errorReason("bad \xff\xfe bytes")));
    }

    void silenceIsEncoded()
    {
        be::NewSilence s;
        s.matchers = { { "Hostname", "r01-k01-n01", false, true }, { "gpu", "3|4", true, false } };
        s.startsAtMs = isoMs("2026-12-06T15:00:00.000Z");
        s.endsAtMs = isoMs("2026-12-06T17:00:00.250Z");
        s.createdBy = "alice \"ops\"";
        s.comment = std::string("line\nbreak, tab\t, back\\slash, ü, bad \xff byte, nul ") + '\0' + " end";
        const std::string json = be::AlertmanagerJson::encodeSilence(s);
        QVERIFY(validUtf8(json));
        QJsonParseError parseError;
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(json), &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, json.c_str());
        QCOMPARE(o.value(QStringLiteral("startsAt")).toString(), QStringLiteral("2026-12-06T15:00:00.000Z"));
        QCOMPARE(o.value(QStringLiteral("endsAt")).toString(), QStringLiteral("2026-12-06T17:00:00.250Z"));
        QCOMPARE(o.value(QStringLiteral("createdBy")).toString(), QStringLiteral("alice \"ops\""));
        QCOMPARE(o.value(QStringLiteral("comment")).toString(),
            QString::fromUtf8("line\nbreak, tab\t, back\\slash, ü, bad \uFFFD byte, nul ") + QChar(0)
                + QStringLiteral(" end"));
        const QJsonArray matchers = o.value(QStringLiteral("matchers")).toArray();
        QCOMPARE(matchers.size(), 2);
        QCOMPARE(matchers[1].toObject().value(QStringLiteral("name")).toString(), QStringLiteral("gpu"));
        QCOMPARE(matchers[1].toObject().value(QStringLiteral("value")).toString(), QStringLiteral("3|4"));
        QCOMPARE(matchers[1].toObject().value(QStringLiteral("isRegex")).toBool(), true);
        QCOMPARE(matchers[1].toObject().value(QStringLiteral("isEqual")).toBool(), false);
        QCOMPARE(matchers[0].toObject().value(QStringLiteral("isEqual")).toBool(), true);
    }

    void alertsAreEncoded()
    {
        be::OutgoingAlert a;
        a.labels = { { "alertname", "FleetscopeIncident" }, { "severity", "critical" }, { "hostname", "r01\"x" } };
        a.annotations = { { "summary", "PDU r01-k02-b tripped: 64 GPUs\ndown" } };
        a.startsAtMs = isoMs("2026-12-06T15:00:00.000Z");
        a.generatorUrl = "fleetscope://incident/7";
        be::OutgoingAlert resolved;
        resolved.labels = { { "alertname", "FleetscopeAnomaly" } };
        resolved.endsAtMs = isoMs("2026-12-06T15:05:00.000Z");
        const std::string json = be::AlertmanagerJson::encodeAlerts({ a, resolved });
        QJsonParseError parseError;
        const QJsonArray array = QJsonDocument::fromJson(QByteArray::fromStdString(json), &parseError).array();
        QVERIFY2(parseError.error == QJsonParseError::NoError, json.c_str());
        QCOMPARE(array.size(), 2);
        const QJsonObject first = array[0].toObject();
        QCOMPARE(first.value(QStringLiteral("labels")).toObject().value(QStringLiteral("hostname")).toString(),
            QStringLiteral("r01\"x"));
        QCOMPARE(first.value(QStringLiteral("annotations")).toObject().value(QStringLiteral("summary")).toString(),
            QStringLiteral("PDU r01-k02-b tripped: 64 GPUs\ndown"));
        QCOMPARE(first.value(QStringLiteral("startsAt")).toString(), QStringLiteral("2026-12-06T15:00:00.000Z"));
        QVERIFY(!first.contains(QStringLiteral("endsAt"))); // Alertmanager's resolve_timeout applies
        QCOMPARE(first.value(QStringLiteral("generatorURL")).toString(), QStringLiteral("fleetscope://incident/7"));
        const QJsonObject second = array[1].toObject();
        QVERIFY(!second.contains(QStringLiteral("startsAt")));
        QVERIFY(!second.contains(QStringLiteral("generatorURL")));
        QCOMPARE(second.value(QStringLiteral("endsAt")).toString(), QStringLiteral("2026-12-06T15:05:00.000Z"));
        QCOMPARE(be::AlertmanagerJson::encodeAlerts({}), std::string("[]"));
    }

    void textIsCutAtCharacters()
    {
        using be::AlertmanagerJson;
        QCOMPARE(AlertmanagerJson::cutText("short", 10), std::string("short"));
        QCOMPARE(AlertmanagerJson::cutText("abcdefghij", 6), std::string("abc…"));
        // "ü" is two bytes: never split.
        QCOMPARE(AlertmanagerJson::cutText("üüüüü", 7), std::string("üü…"));
        const std::string cut = AlertmanagerJson::cutText("üüüüü", 8);
        QVERIFY(validUtf8(cut));
        QCOMPARE(cut, std::string("üü…"));
        QVERIFY(AlertmanagerJson::isIdText("0ec1c171-c676-4d7a-abdc-b6371aa63dbf"));
        QVERIFY(!AlertmanagerJson::isIdText(""));
        QVERIFY(!AlertmanagerJson::isIdText("a b"));
        QVERIFY(!AlertmanagerJson::isIdText(std::string(65, 'a')));
        QVERIFY(!AlertmanagerJson::isIdText("ü"));
    }
};

QTEST_GUILESS_MAIN(TestAlertmanagerJson)
#include "tst_alertmanagerjson.moc"
