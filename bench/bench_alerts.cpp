// SPDX-License-Identifier: Apache-2.0
// The NOC's alerts at scale (issue 33): 10,000 firing alerts and 1,000 silences over a 1,048,576-GPU fleet, against
// the same pipeline with 1,000 alerts and 100 silences and a memcpy of the answers' bytes, measured in the same run.
// Backend, per poll: both Alertmanager API v2 answers decoded (AlertmanagerJson), every alert placed (AlertPlacement),
// sorted as AlertmanagerWatch publishes them, encoded into StreamAlerts parts and serialised (what gRPC sends).
// Console, per update: the parts parsed and joined into a board against the topology (AlertsAssembler), then the
// alerts ranked among the fleet's other problems (withAlerts). docs/PERFORMANCE.md has the figures.
//
//   bench_alerts [repetitions=15] [gpus=1048576] [--alertmanager]
//
// The answers are written as Alertmanager 0.25 writes them (keys in its order, labels sorted, alerts by fingerprint),
// with label sets as a GPU fleet's rules make them: dcgm-exporter's Hostname, gpu, UUID ... for most, node-exporter's
// instance, a rack, a power / cooling / network domain by name, some fleet-wide; severities mixed; about 7% silenced
// and 3% inhibited. --alertmanager also starts Debian's prometheus-alertmanager on loopback, posts the same alerts and
// silences, and times the two GETs a poll makes (the fetch), then decodes what it answered.
#include "alerting/alertmanagerapi.h"
#include "alerting/alertmanagerjson.h"
#include "alerting/alertplacement.h"
#include "bench/timing.h"
#include "client/alertsdecode.h"
#include "client/answerdecode.h"
#include "client/topologydecode.h"
#include "model/alertproblems.h"
#include "model/problems.h"
#include "service/alertsencoder.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"
#include "tests/backend/testing/alertmanagerprocess.h"

#include <QCoreApplication>
#include <QTemporaryDir>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::bench::median;
using fleetscope::bench::medianMs;

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// One alert as Alertmanager would hold it.
struct Spec
{
    Labels labels;
    Labels annotations;
    std::string fingerprint;
    std::string silencedBy; // a silence's id; empty when none
    std::string inhibitedBy; // an alert's fingerprint; empty when none
    int64_t startsAtMs = 0;
    std::string generatorUrl;
};

struct SilenceSpec
{
    be::NewSilence silence;
    std::string id;
    be::AlertmanagerSilence::State state = be::AlertmanagerSilence::State::Active;
};

struct Answers
{
    std::vector<Spec> alerts; // by fingerprint, as Alertmanager lists them
    std::vector<SilenceSpec> silences; // active, pending, then expired ones (Alertmanager keeps them 5 days)
    std::string alertsJson;
    std::string silencesJson;
    int silenced = 0;
    int inhibited = 0;
};

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string jsonText(const std::string &text)
{
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
            out += c;
        }
    }
    return out + '"';
}

std::string jsonObject(Labels labels)
{
    // Go writes a map's keys sorted by their bytes.
    std::sort(labels.begin(), labels.end());
    std::string out = "{";
    for (const auto &[name, value] : labels) {
        out += (out.size() > 1 ? "," : "") + jsonText(name) + ":" + jsonText(value);
    }
    return out + "}";
}

std::string hex(uint64_t v, int digits)
{
    return fmt::format("{:0{}x}", v, digits);
}

std::string silenceId(std::mt19937_64 &rng)
{
    const uint64_t a = rng();
    const uint64_t b = rng();
    return fmt::format("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", a >> 32U, (a >> 16U) & 0xffffU, a & 0xfffU,
        (b >> 48U) & 0xfffU, b & 0xffffffffffffU);
}

// Alertmanager 0.25's GET /api/v2/alerts element: its keys in its order, generatorURL only when set.
std::string alertJson(const Spec &a, int64_t now)
{
    const std::string silenced = a.silencedBy.empty() ? "[]" : "[" + jsonText(a.silencedBy) + "]";
    const std::string inhibited = a.inhibitedBy.empty() ? "[]" : "[" + jsonText(a.inhibitedBy) + "]";
    const bool quiet = !a.silencedBy.empty() || !a.inhibitedBy.empty();
    std::string out = "{\"annotations\":" + jsonObject(a.annotations) + ",\"endsAt\":"
        + jsonText(be::AlertmanagerJson::formatTime(now + 4 * 60000)) + ",\"fingerprint\":" + jsonText(a.fingerprint)
        + ",\"receivers\":[{\"name\":\"noc\"}],\"startsAt\":" + jsonText(be::AlertmanagerJson::formatTime(a.startsAtMs))
        + ",\"status\":{\"inhibitedBy\":" + inhibited + ",\"silencedBy\":" + silenced
        + ",\"state\":" + (quiet ? "\"suppressed\"" : "\"active\"")
        + "},\"updatedAt\":" + jsonText(be::AlertmanagerJson::formatTime(now - 20000));
    if (!a.generatorUrl.empty()) {
        out += ",\"generatorURL\":" + jsonText(a.generatorUrl);
    }
    return out + ",\"labels\":" + jsonObject(a.labels) + "}";
}

std::string silenceJson(const SilenceSpec &s)
{
    static const char *states[] = { "active", "pending", "expired" };
    std::string matchers = "[";
    for (const auto &m : s.silence.matchers) {
        matchers += (matchers.size() > 1 ? "," : "")
            + fmt::format("{{\"isEqual\":{},\"isRegex\":{},\"name\":{},\"value\":{}}}", m.isEqual, m.isRegex,
                jsonText(m.name), jsonText(m.value));
    }
    return "{\"id\":" + jsonText(s.id) + ",\"status\":{\"state\":\"" + states[static_cast<int>(s.state)]
        + "\"},\"updatedAt\":" + jsonText(be::AlertmanagerJson::formatTime(s.silence.startsAtMs))
        + ",\"comment\":" + jsonText(s.silence.comment) + ",\"createdBy\":" + jsonText(s.silence.createdBy)
        + ",\"endsAt\":" + jsonText(be::AlertmanagerJson::formatTime(s.silence.endsAtMs)) + ",\"matchers\":" + matchers
        + "],\"startsAt\":" + jsonText(be::AlertmanagerJson::formatTime(s.silence.startsAtMs)) + "}";
}

// alertCount alerts and silenceCount active or pending silences (a quarter as many expired ones besides) over shape.
Answers makeAnswers(const be::FleetShape &shape, int alertCount, int silenceCount, int64_t now, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    const auto ago = [&](int64_t maxMs) { return now - static_cast<int64_t>(rng() % static_cast<uint64_t>(maxMs)); };
    Answers out;
    std::set<Labels> seen; // Alertmanager holds one alert per label set
    // Draws of each kind: a small fleet has fewer distinct label sets of a kind than asked for, and gets fewer alerts.
    int64_t draws = 0;
    const int64_t maxDraws = int64_t { 50 } * alertCount;
    const auto more = [&](int target) { return static_cast<int>(out.alerts.size()) < target && draws++ < maxDraws; };
    const auto add = [&](Spec spec) {
        std::sort(spec.labels.begin(), spec.labels.end());
        if (!seen.insert(spec.labels).second) {
            return false;
        }
        spec.fingerprint = hex(std::hash<std::string>()(jsonObject(spec.labels)) ^ seed, 16);
        spec.startsAtMs = ago(3 * 86400000);
        if (chance(0.6)) {
            spec.generatorUrl = "http://vmalert.monitoring.svc:8880/vmalert/alert?group_id=" + std::to_string(pick(40))
                + "&alert_id=" + std::to_string(rng() % 100000000);
        }
        out.alerts.push_back(std::move(spec));
        return true;
    };
    const char *severities[] = { "critical", "warning", "warning", "info" };

    // Node alerts first (15%): node-exporter's, by instance alone or relabelled with Hostname. NodeDown ones can
    // inhibit their GPUs' GpuHot (the inhibition rule of tests/backend/testing/alertmanagerprocess.h).
    std::vector<std::pair<uint32_t, std::string>> downNodes; // node, NodeDown's fingerprint
    const int nodeAlerts = alertCount * 15 / 100;
    draws = 0;
    while (more(nodeAlerts)) {
        const auto node = static_cast<uint32_t>(pick(shape.nodes.size()));
        const std::string &host = shape.nodes[node].hostname;
        const char *names[]
            = { "NodeDown", "NodeFilesystemAlmostOutOfSpace", "NodeClockSkewDetected", "NodeMemoryHighUtilization" };
        const size_t which = pick(4);
        Spec s;
        s.labels = { { "alertname", names[which] }, { "instance", host + ":9100" }, { "job", "node-exporter" },
            { "severity", which == 0 ? "critical" : severities[1 + pick(3)] } };
        const bool relabelled = which == 0 || chance(0.5);
        if (relabelled) { // NodeDown always: the inhibition rule wants the Hostname of both alerts equal
            s.labels.emplace_back("Hostname", host);
        }
        s.annotations = { { "summary", std::string(names[which]) + " on " + host },
            { "description", "node-exporter on " + host + " reports " + names[which] + " for the last 5 minutes." },
            { "runbook_url", std::string("https://runbooks.example/node/") + names[which] } };
        if (add(std::move(s)) && which == 0) {
            downNodes.emplace_back(node, out.alerts.back().fingerprint);
        }
    }
    // GPU alerts (70%): dcgm-exporter's labels. 3% of all are GpuHot on a node that is down: inhibited.
    const int gpuAlerts = nodeAlerts + alertCount * 70 / 100;
    const int inhibitedWanted = alertCount * 3 / 100;
    draws = 0;
    while (more(gpuAlerts)) {
        const bool inhibit = out.inhibited < inhibitedWanted && !downNodes.empty();
        const std::pair<uint32_t, std::string> down
            = inhibit ? downNodes[pick(downNodes.size())] : std::pair { uint32_t { 0 }, std::string() };
        const auto node = inhibit ? down.first : static_cast<uint32_t>(pick(shape.nodes.size()));
        const auto &n = shape.nodes[node];
        const auto inNode = static_cast<uint32_t>(pick(n.gpuCount));
        const uint32_t gpu = n.firstGpu + inNode;
        const char *names[] = { "GpuHot", "XidErrors", "GpuEccDoubleBit", "GpuPowerThrottle", "GpuLowUtilization" };
        const size_t which = inhibit ? 0 : pick(5);
        const char *severity = which == 1 || which == 2 ? "critical" : which == 4 ? "info" : "warning";
        Spec s;
        s.labels = { { "alertname", names[which] }, { "Hostname", n.hostname }, { "UUID", shape.gpuUuid(gpu) },
            { "device", "nvidia" + std::to_string(inNode) }, { "gpu", std::to_string(inNode) },
            { "instance", n.hostname + ":9400" }, { "job", "dcgm-exporter" }, { "modelName", "NVIDIA H100 80GB HBM3" },
            { "namespace", "gpu-operator" }, { "pci_bus_id", be::FleetShape::simulatedPciBusId(inNode) },
            { "pod", "nvidia-dcgm-exporter-" + hex(rng() % 0xfffff, 5) }, { "severity", severity } };
        if (which == 1) {
            s.labels.emplace_back("err_code", std::to_string(std::array { 13, 31, 43, 48, 63, 74, 79, 94 }[pick(8)]));
        }
        s.annotations = { { "summary", "GPU " + std::to_string(inNode) + " of " + n.hostname + ": " + names[which] },
            { "description",
                which == 0 ? "GPU temperature above 87 °C for 5 minutes; it throttles its clocks."
                           : std::string("dcgm-exporter reports ") + names[which] + " on this GPU." },
            { "runbook_url", std::string("https://runbooks.example/gpu/") + names[which] } };
        if (inhibit) {
            s.inhibitedBy = down.second;
        }
        if (add(std::move(s)) && inhibit) {
            ++out.inhibited;
        }
    }
    // Racks (7%), domains by name (5%), fleet-wide (the rest, 3%).
    const int rackAlerts = gpuAlerts + alertCount * 7 / 100;
    draws = 0;
    while (more(rackAlerts)) {
        const auto &rack = shape.racks[pick(shape.racks.size())];
        const char *names[] = { "RackInletTemperatureHigh", "RackPowerNearLimit", "RackDoorOpen" };
        const size_t which = pick(3);
        Spec s;
        s.labels = { { "alertname", names[which] }, { "rack", rack.name }, { "job", "dcim" },
            { "severity", severities[pick(4)] } };
        s.annotations = { { "summary", std::string(names[which]) + " in rack " + rack.name } };
        add(std::move(s));
    }
    const int domainAlerts = rackAlerts + alertCount * 5 / 100;
    draws = 0;
    while (!shape.domains.empty() && more(domainAlerts)) {
        const auto &domain = shape.domains[pick(shape.domains.size())];
        Spec s;
        // A label name as Prometheus allows it: cooling_unit for the key "cooling-unit" (AlertPlacement reads both).
        std::string key = be::domainKindKey(domain.kind);
        std::replace(key.begin(), key.end(), '-', '_');
        s.labels = { { "alertname", "DomainFault" }, { key, domain.name }, { "job", "dcim" },
            { "severity", severities[pick(2)] } };
        s.annotations = { { "summary", key + " " + domain.name + " reports a fault" } };
        add(std::move(s));
    }
    draws = 0;
    while (more(alertCount)) {
        const char *names[] = { "PrometheusRuleFailures", "KubeQuotaAlmostFull", "DcgmExporterScrapeSlow" };
        Spec s;
        s.labels = { { "alertname", names[pick(3)] }, { "namespace", "team-" + std::to_string(pick(100000)) },
            { "severity", severities[1 + pick(3)] } };
        s.annotations = { { "summary", "fleet-wide" } };
        add(std::move(s));
    }

    // Silences: 70% of them each made for one alert (alertname and the labels that place it), 7% of the alerts; 20%
    // for maintenance of hosts that alert nothing now; 10% pending (tomorrow's maintenance); a quarter as many expired.
    const auto silence = [&](std::vector<be::SilenceMatcher> matchers, be::AlertmanagerSilence::State state) {
        SilenceSpec s;
        s.id = silenceId(rng);
        s.state = state;
        s.silence.matchers = std::move(matchers);
        s.silence.createdBy = std::array { "alice", "bob", "noc-oncall", "carol" }[pick(4)];
        s.silence.comment = "ticket NOC-" + std::to_string(10000 + pick(90000)) + ": working on it";
        if (state == be::AlertmanagerSilence::State::Pending) {
            s.silence.startsAtMs = now + 3600000 + static_cast<int64_t>(pick(86400000));
            s.silence.endsAtMs = s.silence.startsAtMs + 4 * 3600000;
        } else if (state == be::AlertmanagerSilence::State::Expired) {
            s.silence.endsAtMs = ago(5 * 86400000);
            s.silence.startsAtMs = s.silence.endsAtMs - 3600000;
        } else {
            s.silence.startsAtMs = ago(48 * 3600000);
            s.silence.endsAtMs = now + 3600000 + static_cast<int64_t>(pick(72 * 3600000));
        }
        out.silences.push_back(std::move(s));
        return out.silences.back().id;
    };
    const auto value = [](const Labels &labels, const char *name) {
        for (const auto &[n, v] : labels) {
            if (n == name) {
                return v;
            }
        }
        return std::string();
    };
    for (int i = 0; i < silenceCount * 7 / 10; ++i) {
        Spec &a = out.alerts[pick(out.alerts.size())];
        if (!a.silencedBy.empty() || !a.inhibitedBy.empty()) {
            continue;
        }
        std::vector<be::SilenceMatcher> matchers { { "alertname", value(a.labels, "alertname"), false, true } };
        for (const char *placing : { "Hostname", "gpu", "rack", "instance" }) {
            if (const std::string v = value(a.labels, placing); !v.empty()) {
                matchers.push_back({ placing, v, false, true });
            }
        }
        if (matchers.size() == 1) {
            continue; // a domain's or a fleet-wide alert: silenced by hand less often
        }
        a.silencedBy = silence(std::move(matchers), be::AlertmanagerSilence::State::Active);
        ++out.silenced;
    }
    // Maintenance of half a rack: the alerts of its hosts are silenced by it, as Alertmanager would mark them.
    while (static_cast<int>(out.silences.size()) < silenceCount * 9 / 10) {
        const auto &rack = shape.racks[pick(shape.racks.size())];
        const std::string id
            = silence({ { "Hostname", rack.name + "-n0[1-4]", true, true } }, be::AlertmanagerSilence::State::Active);
        for (Spec &a : out.alerts) {
            const std::string host = value(a.labels, "Hostname");
            if (a.silencedBy.empty() && a.inhibitedBy.empty() && host.size() == rack.name.size() + 4
                && host.compare(0, rack.name.size() + 3, rack.name + "-n0") == 0 && host.back() >= '1'
                && host.back() <= '4') {
                a.silencedBy = id;
                ++out.silenced;
            }
        }
    }
    while (static_cast<int>(out.silences.size()) < silenceCount) {
        const auto &node = shape.nodes[pick(shape.nodes.size())];
        silence({ { "Hostname", node.hostname, false, true }, { "alertname", "NodeDown", false, false } },
            be::AlertmanagerSilence::State::Pending);
    }
    for (int i = 0; i < silenceCount / 4; ++i) {
        const auto &node = shape.nodes[pick(shape.nodes.size())];
        silence({ { "Hostname", node.hostname, false, true } }, be::AlertmanagerSilence::State::Expired);
    }

    std::sort(out.alerts.begin(), out.alerts.end(),
        [](const Spec &a, const Spec &b) { return a.fingerprint < b.fingerprint; });
    out.alertsJson = "[";
    for (const Spec &a : out.alerts) {
        out.alertsJson += (out.alertsJson.size() > 1 ? "," : "") + alertJson(a, now);
    }
    out.alertsJson += "]";
    out.silencesJson = "[";
    for (const SilenceSpec &s : out.silences) {
        out.silencesJson += (out.silencesJson.size() > 1 ? "," : "") + silenceJson(s);
    }
    out.silencesJson += "]";
    return out;
}

// The order AlertmanagerWatch publishes (alertmanagerwatch.cpp): severity first, then newest first; silences active
// then pending, newest first.
void sortAsPublished(std::vector<be::AlertmanagerAlert> *alerts, std::vector<be::AlertmanagerSilence> *silences)
{
    std::sort(alerts->begin(), alerts->end(), [](const be::AlertmanagerAlert &a, const be::AlertmanagerAlert &b) {
        if (a.severity != b.severity) {
            return a.severity > b.severity;
        }
        if (a.startsAtMs != b.startsAtMs) {
            return a.startsAtMs > b.startsAtMs;
        }
        return a.fingerprint < b.fingerprint;
    });
    std::sort(
        silences->begin(), silences->end(), [](const be::AlertmanagerSilence &a, const be::AlertmanagerSilence &b) {
            if (a.state != b.state) {
                return a.state < b.state;
            }
            if (a.startsAtMs != b.startsAtMs) {
                return a.startsAtMs > b.startsAtMs;
            }
            return a.id < b.id;
        });
}

double msSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The fleet's own problems beside the alerts: XID bursts, throttling, ECC errors and nodes down, as a bad hour's
// events leave them (ProblemBoard, as the session keeps it).
fleetscope::ProblemBoard fleetProblems(const fleetscope::Topology &topology, int64_t now)
{
    std::mt19937_64 rng(7);
    fleetscope::ProblemBoard board;
    const auto gpus = static_cast<uint64_t>(topology.gpuCount);
    uint64_t sequence = 0;
    const auto event = [&](fleetscope::EventKind kind, fleetscope::EventSeverity severity) {
        fleetscope::FleetEvent e;
        e.timeMs = now - 3600000 + static_cast<int64_t>(sequence) * 1000;
        e.sequence = ++sequence;
        e.kind = kind;
        e.severity = severity;
        e.gpu = static_cast<int64_t>(rng() % gpus);
        return e;
    };
    for (int i = 0; i < 1500; ++i) {
        auto e = event(fleetscope::EventKind::Xid, fleetscope::EventSeverity::Warning);
        e.gpu %= 600 * 8; // bursts: several XIDs on the same GPUs
        e.xid = 79;
        board.add(e);
    }
    for (int i = 0; i < 300; ++i) {
        board.add(event(fleetscope::EventKind::ThermalThrottleStart, fleetscope::EventSeverity::Warning));
    }
    for (int i = 0; i < 20; ++i) {
        auto e = event(fleetscope::EventKind::EccDoubleBit, fleetscope::EventSeverity::Critical);
        e.xid = 48;
        board.add(e);
    }
    for (int i = 0; i < 40; ++i) {
        auto e = event(fleetscope::EventKind::NodeDown, fleetscope::EventSeverity::Critical);
        e.node = static_cast<int64_t>(rng() % topology.nodes.size());
        e.gpu = -1;
        board.add(e);
    }
    return board;
}

struct Row
{
    int alerts = 0;
    int silences = 0;
    size_t answerBytes = 0;
    size_t wireBytes = 0;
    size_t parts = 0;
    double memcpyMs = 0;
    double decodeMs = 0;
    double placeMs = 0;
    double sortMs = 0;
    double encodeMs = 0;
    double backendMs = 0;
    double parseMs = 0; // of the console's assembly: the parts parsed (the rest: joined into the board, freed)
    double assembleMs = 0;
    double rankMs = 0;
    double consoleMs = 0;
    size_t problems = 0;
    int placedGpu = 0, placedNode = 0, placedMany = 0, fleetWide = 0, suppressed = 0;
};

Row measure(const Answers &answers, int silenceCount, const be::AlertPlacement &placement,
    const fleetscope::TopologyPtr &topology, const fleetscope::JobsPtr &jobs,
    const std::vector<fleetscope::Problem> &ranked, int64_t now, int reps)
{
    Row row;
    row.alerts = static_cast<int>(answers.alerts.size());
    row.silences = silenceCount;
    row.answerBytes = answers.alertsJson.size() + answers.silencesJson.size();
    {
        std::string a(answers.alertsJson.size(), '\0');
        std::string s(answers.silencesJson.size(), '\0');
        row.memcpyMs = medianMs(reps, [&] {
            std::memcpy(a.data(), answers.alertsJson.data(), a.size());
            std::memcpy(s.data(), answers.silencesJson.data(), s.size());
        });
    }
    be::AlertmanagerJson json;
    std::vector<double> decode, place, sort, encode, backend, parse, assemble, rank, console;
    for (int rep = 0; rep <= reps; ++rep) { // the first run untimed: the placement's lazy indices, warm buffers
        std::string alertsBody = answers.alertsJson; // as the HTTP fetch hands them over
        std::string silencesBody = answers.silencesJson;
        be::AlertmanagerJson::Alerts alerts;
        be::AlertmanagerJson::Silences silences;
        std::string error;
        const auto start = std::chrono::steady_clock::now();
        if (!json.decodeAlerts(&alertsBody, &alerts, &error)
            || !json.decodeSilences(&silencesBody, &silences, &error)) {
            fmt::print(stderr, "decode: {}\n", error);
            std::exit(1);
        }
        const auto decoded = std::chrono::steady_clock::now();
        for (auto &alert : alerts.alerts) {
            placement.place(&alert);
        }
        const auto placed = std::chrono::steady_clock::now();
        auto state = std::make_shared<be::AlertsState>();
        sortAsPublished(&alerts.alerts, &silences.silences);
        state->generation = static_cast<uint64_t>(rep) + 1;
        state->status.url = "http://alertmanager.monitoring.svc:9093";
        state->status.reachable = true;
        state->status.lastSuccessMs = now;
        state->status.pollIntervalMs = 5000;
        state->alerts = std::move(alerts.alerts);
        state->silences = std::move(silences.silences);
        const auto sorted = std::chrono::steady_clock::now();
        const auto parts = be::encodeAlerts(*state);
        std::vector<std::string> wire(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) {
            parts[i].SerializeToString(&wire[i]);
        }
        const auto encoded = std::chrono::steady_clock::now();

        // The console: each part parsed as gRPC hands it over, joined into a board.
        fleetscope::AlertsAssembler assembler(topology);
        std::shared_ptr<const fleetscope::AlertBoard> board;
        const auto consoleStart = std::chrono::steady_clock::now();
        double parseTime = 0;
        for (const std::string &bytes : wire) {
            fleetscope::pb::AlertsPart part;
            const auto parseStart = std::chrono::steady_clock::now();
            const bool parsed = part.ParseFromString(bytes);
            parseTime += msSince(parseStart);
            if (!parsed) {
                fmt::print(stderr, "a part does not parse\n");
                std::exit(1);
            }
            auto result = assembler.add(part, now);
            if (!result.error.isEmpty()) {
                fmt::print(stderr, "assemble: {}\n", result.error.toStdString());
                std::exit(1);
            }
            if (result.board) {
                board = result.board;
            }
        }
        const auto assembled = std::chrono::steady_clock::now();
        if (!board) {
            fmt::print(stderr, "no board\n");
            std::exit(1);
        }
        std::vector<fleetscope::Problem> others = ranked; // the session's, copied outside the timing
        const auto rankStart = std::chrono::steady_clock::now();
        const auto all = fleetscope::withAlerts(std::move(others), board, topology.get(), jobs.get(), now);
        const double rankTime = msSince(rankStart);

        if (rep == 0) {
            row.parts = wire.size();
            for (const auto &w : wire) {
                row.wireBytes += w.size();
            }
            row.problems = all.size();
            for (const auto &a : state->alerts) {
                row.suppressed += a.state == be::AlertmanagerAlert::State::Suppressed ? 1 : 0;
                if (a.gpuCount == 0) {
                    ++row.fleetWide;
                } else if (a.gpuCount == 1) {
                    ++row.placedGpu;
                } else if (a.node >= 0) {
                    ++row.placedNode;
                } else {
                    ++row.placedMany;
                }
            }
            if (board->alerts.size() != state->alerts.size()) {
                fmt::print(stderr, "the board holds {} alerts of {}\n", board->alerts.size(), state->alerts.size());
                std::exit(1);
            }
            continue;
        }
        const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        decode.push_back(ms(start, decoded));
        place.push_back(ms(decoded, placed));
        sort.push_back(ms(placed, sorted));
        encode.push_back(ms(sorted, encoded));
        backend.push_back(ms(start, encoded));
        parse.push_back(parseTime);
        assemble.push_back(ms(consoleStart, assembled));
        rank.push_back(rankTime);
        console.push_back(ms(consoleStart, assembled) + rankTime);
    }
    row.decodeMs = median(decode);
    row.placeMs = median(place);
    row.sortMs = median(sort);
    row.encodeMs = median(encode);
    row.backendMs = median(backend);
    row.parseMs = median(parse);
    row.assembleMs = median(assemble);
    row.rankMs = median(rank);
    row.consoleMs = median(console);
    return row;
}

// Debian's Alertmanager on loopback with the answers' alerts and silences posted; the two GETs of a poll timed.
int realFetch(const Answers &answers, int reps)
{
    using namespace fleetscope::testing;
    if (alertmanagerBinary().isEmpty()) {
        fmt::print("--alertmanager: prometheus-alertmanager is not installed (scripts/common.sh installs it)\n");
        return 1;
    }
    QTemporaryDir dir;
    ProcessGuard guard;
    const int port = freePort();
    const QString config = dir.filePath(QStringLiteral("alertmanager.yml"));
    if (!writeFile(config, alertmanagerConfig())
        || !startAlertmanager(&guard, config, dir.filePath(QStringLiteral("data")), port)) {
        fmt::print("--alertmanager: cannot start {}\n", alertmanagerBinary().toStdString());
        return 1;
    }
    if (const QString why = waitForAlertmanager(guard, port); !why.isEmpty()) {
        fmt::print("--alertmanager: {}\n", why.toStdString());
        return 1;
    }
    be::AlertmanagerApi api;
    be::AlertmanagerApi::Options options;
    options.timeout = std::chrono::milliseconds(60000);
    std::string error;
    if (!api.setBaseUrl(fmt::format("http://127.0.0.1:{}", port), options, &error)) {
        fmt::print("--alertmanager: {}\n", error);
        return 1;
    }
    const auto posting = std::chrono::steady_clock::now();
    const int64_t now = nowMs();
    for (size_t first = 0; first < answers.alerts.size(); first += 1000) {
        std::vector<be::OutgoingAlert> batch;
        for (size_t i = first; i < std::min(answers.alerts.size(), first + 1000); ++i) {
            const Spec &s = answers.alerts[i];
            be::OutgoingAlert a;
            for (const auto &[n, v] : s.labels) {
                a.labels.push_back({ n, v });
            }
            for (const auto &[n, v] : s.annotations) {
                a.annotations.push_back({ n, v });
            }
            a.startsAtMs = s.startsAtMs;
            a.endsAtMs = now + 3600000; // firing for the whole run
            a.generatorUrl = s.generatorUrl;
            batch.push_back(std::move(a));
        }
        if (api.postAlerts(batch, &error) != be::AlertDesk::Failure::None) {
            fmt::print("--alertmanager: posting alerts: {}\n", error);
            return 1;
        }
    }
    int posted = 0;
    for (const SilenceSpec &s : answers.silences) {
        if (s.state == be::AlertmanagerSilence::State::Expired) {
            continue; // Alertmanager takes no silence that has ended
        }
        be::NewSilence silence = s.silence;
        if (s.state == be::AlertmanagerSilence::State::Active) {
            silence.startsAtMs = now;
        }
        std::string id;
        if (api.postSilence(silence, &id, &error) != be::AlertDesk::Failure::None) {
            fmt::print("--alertmanager: posting a silence: {}\n", error);
            return 1;
        }
        ++posted;
    }
    fmt::print("--alertmanager: {} alerts and {} silences posted in {:.1f} s\n", answers.alerts.size(), posted,
        msSince(posting) / 1000);
    // Alertmanager marks an alert silenced or inhibited once it has processed it: wait until every alert is listed.
    be::AlertmanagerJson json;
    std::string body;
    be::AlertmanagerJson::Alerts alerts;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
        alerts = {};
        if (api.getAlerts(&body, &error) == be::AlertDesk::Failure::None && json.decodeAlerts(&body, &alerts, &error)
            && alerts.alerts.size() == answers.alerts.size()) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            fmt::print("--alertmanager: {} alerts listed of {} after 60 s ({})\n", alerts.alerts.size(),
                answers.alerts.size(), error);
            return 1;
        }
        QTest::qWait(500);
    }
    std::vector<double> fetch, getAlerts, getSilences, decode;
    size_t bytes = 0;
    int suppressed = 0;
    for (int rep = 0; rep < reps; ++rep) {
        std::string alertsBody;
        std::string silencesBody;
        const auto start = std::chrono::steady_clock::now();
        if (api.getAlerts(&alertsBody, &error) != be::AlertDesk::Failure::None) {
            fmt::print("--alertmanager: GET alerts: {}\n", error);
            return 1;
        }
        const auto between = std::chrono::steady_clock::now();
        if (api.getSilences(&silencesBody, &error) != be::AlertDesk::Failure::None) {
            fmt::print("--alertmanager: GET silences: {}\n", error);
            return 1;
        }
        const auto fetched = std::chrono::steady_clock::now();
        bytes = alertsBody.size() + silencesBody.size();
        be::AlertmanagerJson::Silences silences;
        alerts = {};
        if (!json.decodeAlerts(&alertsBody, &alerts, &error)
            || !json.decodeSilences(&silencesBody, &silences, &error)) {
            fmt::print("--alertmanager: decode: {}\n", error);
            return 1;
        }
        const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        getAlerts.push_back(ms(start, between));
        getSilences.push_back(ms(between, fetched));
        fetch.push_back(ms(start, fetched));
        decode.push_back(msSince(fetched));
        suppressed = static_cast<int>(std::count_if(alerts.alerts.begin(), alerts.alerts.end(),
            [](const auto &a) { return a.state == be::AlertmanagerAlert::State::Suppressed; }));
    }
    fmt::print("--alertmanager 0.25 on loopback, median of {}: {} alerts ({} suppressed by its own silences and "
               "inhibition), {:.1f} MB answered; GET alerts {:.1f} ms, GET silences {:.1f} ms, fetch {:.1f} ms; decode "
               "of what it answered {:.1f} ms\n",
        reps, alerts.alerts.size(), suppressed, static_cast<double>(bytes) / 1e6, median(getAlerts),
        median(getSilences), median(fetch), median(decode));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    std::vector<std::string> args;
    bool real = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--alertmanager") == 0) {
            real = true;
        } else {
            args.emplace_back(argv[i]);
        }
    }
    const int reps = !args.empty() ? std::max(1, std::atoi(args[0].c_str())) : 15;
    const auto gpus = static_cast<uint32_t>(std::clamp<long>(
        args.size() > 1 ? std::atol(args[1].c_str()) : 1048576, be::FleetShape::minGpus, be::FleetShape::maxGpus));
    const int64_t now = nowMs();

    auto start = std::chrono::steady_clock::now();
    const be::Simulator sim(gpus, 1);
    const be::FleetShape &shape = sim.shape();
    QString error;
    const auto topology = fleetscope::decodeTopology(be::encodeTopology(shape, 1), &error);
    if (!topology) {
        fmt::print(stderr, "topology: {}\n", error.toStdString());
        return 1;
    }
    std::vector<be::JobInfo> jobInfos;
    for (const auto &j : sim.jobs()) {
        be::JobInfo info;
        info.id = j.id;
        info.name = "job-" + std::to_string(j.id);
        info.owner = "team";
        info.firstGpu = shape.nodes[j.firstNode].firstGpu;
        const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
        info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
        info.startMs = now - 3600000;
        jobInfos.push_back(std::move(info));
    }
    const auto jobs = fleetscope::decodeJobs(be::encodeJobs(jobInfos), *topology, &error);
    if (!jobs) {
        fmt::print(stderr, "jobs: {}\n", error.toStdString());
        return 1;
    }
    const double fleetMs = msSince(start);

    start = std::chrono::steady_clock::now();
    const be::AlertPlacement placement(shape);
    const double placementMs = msSince(start);
    start = std::chrono::steady_clock::now();
    placement.gpuOfUuid(shape.gpuUuid(0));
    const double uuidIndexMs = msSince(start);
    start = std::chrono::steady_clock::now();
    if (!shape.domains.empty()) {
        placement.domainRuns(0);
    }
    const double domainIndexMs = msSince(start);

    const auto problemBoard = fleetProblems(*topology, now);
    std::vector<fleetscope::Problem> ranked;
    const double openMs = medianMs(reps, [&] { ranked = problemBoard.open(now, topology.get(), jobs.get()); });

    fmt::print("{} GPUs, {} nodes, {} racks, {} domains, {} running jobs (simulator, topology and jobs through the "
               "wire: {:.0f} ms)\n",
        shape.gpuCount, shape.nodes.size(), shape.racks.size(), shape.domains.size(), jobs->jobs.size(), fleetMs);
    fmt::print("once per shape: AlertPlacement {:.1f} ms, its UUID index at first need {:.1f} ms, the domains' GPU "
               "runs {:.1f} ms\n",
        placementMs, uuidIndexMs, domainIndexMs);
    fmt::print("the fleet's own problems: {} open (ProblemBoard::open {:.1f} ms, the session's, not counted below)\n",
        ranked.size(), openMs);
    fmt::print("median of {} runs, ms\n\n", reps);

    std::vector<Row> rows;
    Answers big;
    for (const auto &[alertCount, silenceCount] : { std::pair { 1000, 100 }, std::pair { 10000, 1000 } }) {
        start = std::chrono::steady_clock::now();
        Answers answers = makeAnswers(shape, alertCount, silenceCount, now, 33);
        const double makeMs = msSince(start);
        fmt::print("{} alerts ({} silenced, {} inhibited), {} silences (+{} expired): answers written in {:.0f} ms\n",
            answers.alerts.size(), answers.silenced, answers.inhibited, silenceCount, silenceCount / 4, makeMs);
        rows.push_back(measure(answers, silenceCount, placement, topology, jobs, ranked, now, reps));
        if (alertCount == 10000) {
            big = std::move(answers);
        }
    }
    // join: the parts handed to the assembler and freed, the board made (assembly less parsing).
    fmt::print("\n{:>7} {:>6} {:>9} {:>7} | {:>7} {:>7} {:>6} {:>7} {:>8} | {:>6} {:>8} | {:>6} {:>6} {:>6} {:>8} "
               "{:>8}\n",
        "alerts", "silen.", "answer MB", "memcpy", "decode", "place", "sort", "encode", "BACKEND", "parts", "wire MB",
        "parse", "join", "rank", "CONSOLE", "problems");
    for (const Row &r : rows) {
        fmt::print("{:>7} {:>6} {:>9.2f} {:>7.2f} | {:>7.1f} {:>7.1f} {:>6.1f} {:>7.1f} {:>8.1f} | {:>6} {:>8.2f} | "
                   "{:>6.1f} {:>6.1f} {:>6.1f} {:>8.1f} {:>8}\n",
            r.alerts, r.silences, static_cast<double>(r.answerBytes) / 1e6, r.memcpyMs, r.decodeMs, r.placeMs, r.sortMs,
            r.encodeMs, r.backendMs, r.parts, static_cast<double>(r.wireBytes) / 1e6, r.parseMs,
            r.assembleMs - r.parseMs, r.rankMs, r.consoleMs, r.problems);
    }
    fmt::print("\nplaced (alerts: one GPU / a node's GPUs / a rack's, a domain's or more / fleet-wide; suppressed):\n");
    for (const Row &r : rows) {
        fmt::print("{:>7}: {} / {} / {} / {}; {}\n", r.alerts, r.placedGpu, r.placedNode, r.placedMany, r.fleetWide,
            r.suppressed);
    }
    fmt::print("10,000 against 1,000: backend {:.1f}x, console {:.1f}x; backend / memcpy of the answers {:.0f}x\n",
        rows[1].backendMs / rows[0].backendMs, rows[1].consoleMs / rows[0].consoleMs,
        rows[1].backendMs / rows[1].memcpyMs);
    return real ? realFetch(big, std::min(reps, 5)) : 0;
}
