// SPDX-License-Identifier: Apache-2.0
// Wire -> model for StreamAlerts: a state's parts joined (AlertsAssembler), each alert and silence checked against the
// topology and the bounds, and what a hostile backend sends (counts that lie, GPUs outside the fleet, megabytes of
// text, parts without end) dropped with a reason: a bad alert alone, a state whose counts lie whole.
#include "client/alertsdecode.h"
#include "client/wiretext.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTest>

#include <string>

using namespace fleetscope;
namespace pb = fleetscope::telemetry::v1;

namespace {

const int64_t now = QDateTime::currentMSecsSinceEpoch();

// A fleet of nodes of 8 GPUs and a few shared domains: what the decoder bounds alerts by.
TopologyPtr fleetOf(uint32_t gpus)
{
    auto t = std::make_shared<Topology>();
    t->generation = 77;
    t->gpuCount = gpus;
    t->nodes.resize(gpus / 8);
    for (uint32_t n = 0; n < gpus / 8; ++n) {
        t->nodes[n].hostname = QStringLiteral("n%1").arg(n);
        t->nodes[n].firstGpu = 8 * n;
        t->nodes[n].gpuCount = 8;
    }
    t->nodeOfGpu.resize(gpus);
    for (uint32_t g = 0; g < gpus; ++g) {
        t->nodeOfGpu[g] = g / 8;
    }
    t->domains.resize(4);
    return t;
}

pb::Alert alert(const std::string &name, uint32_t first = 0, uint32_t count = 0)
{
    pb::Alert a;
    a.set_fingerprint("fp-" + name);
    auto *label = a.add_labels();
    label->set_name("alertname");
    label->set_value(name);
    auto *annotation = a.add_annotations();
    annotation->set_name("summary");
    annotation->set_value(name + " is on");
    a.set_state(pb::ALERT_STATE_ACTIVE);
    a.set_starts_at_ms(now - 60000);
    a.set_ends_at_ms(now + 240000);
    a.set_updated_at_ms(now - 1000);
    a.set_severity(pb::SEVERITY_WARNING);
    a.set_node(-1);
    if (count > 0) {
        a.set_gpu_count(count);
        auto *run = a.add_gpu_runs();
        run->set_first(first);
        run->set_count(count);
    }
    return a;
}

pb::Silence silence(const std::string &id)
{
    pb::Silence s;
    s.set_id(id);
    auto *m = s.add_matchers();
    m->set_name("Hostname");
    m->set_value("r01-k01-n01");
    m->set_is_equal(true);
    s.set_starts_at_ms(now - 1000);
    s.set_ends_at_ms(now + 3600000);
    s.set_created_by("alice");
    s.set_comment("on it");
    s.set_state(pb::SILENCE_STATE_ACTIVE);
    return s;
}

// The first part of a state: its status and counts.
pb::AlertsPart head(uint64_t generation, uint32_t alerts, uint32_t silences, bool last)
{
    pb::AlertsPart part;
    part.set_generation(generation);
    part.set_last_part(last);
    part.set_alert_count(alerts);
    part.set_silence_count(silences);
    auto *status = part.mutable_status();
    status->set_url("http://am:9093");
    status->set_reachable(true);
    status->set_last_success_ms(now - 2000);
    status->set_poll_interval_ms(5000);
    return part;
}

pb::AlertsPart more(uint64_t generation, bool last)
{
    pb::AlertsPart part;
    part.set_generation(generation);
    part.set_last_part(last);
    return part;
}

// One state of one part holding these alerts.
std::shared_ptr<const AlertBoard> decodeOne(
    const TopologyPtr &topology, const std::vector<pb::Alert> &alerts, QString *error = nullptr)
{
    auto part = head(1, static_cast<uint32_t>(alerts.size()), 0, true);
    for (const auto &a : alerts) {
        *part.add_alerts() = a;
    }
    AlertsAssembler assembler(topology);
    auto result = assembler.add(part, now);
    if (error != nullptr) {
        *error = result.error;
    }
    return result.board;
}

} // namespace

class TestAlertsDecode : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { m_topology = fleetOf(64); }

    // A state whole in one part: alerts with their labels, placement and silences, the status.
    void aStateInOnePart()
    {
        auto part = head(7, 2, 1, true);
        auto hot = alert("GpuHot", 8, 8);
        hot.set_severity(pb::SEVERITY_CRITICAL);
        hot.set_node(1);
        hot.set_domain(0);
        hot.set_placed_by("Hostname=n1");
        hot.set_state(pb::ALERT_STATE_SUPPRESSED);
        hot.add_silenced_by("s1");
        *part.add_alerts() = hot;
        *part.add_alerts() = alert("FleetWide");
        *part.add_silences() = silence("s1");
        AlertsAssembler assembler(m_topology);
        const auto result = assembler.add(part, now);
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.board);
        const AlertBoard &board = *result.board;
        QCOMPARE(board.generation, uint64_t { 7 });
        QCOMPARE(board.status.url, QStringLiteral("http://am:9093"));
        QVERIFY(board.status.reachable);
        QCOMPARE(board.status.pollIntervalMs, int64_t { 5000 });
        QCOMPARE(board.alerts.size(), size_t { 2 });
        const FleetAlert &a = board.alerts[0];
        QCOMPARE(a.name(), QStringLiteral("GpuHot"));
        QCOMPARE(a.annotation(QStringLiteral("summary")), QStringLiteral("GpuHot is on"));
        QCOMPARE(a.severity, EventSeverity::Critical);
        QVERIFY(a.suppressed);
        QCOMPARE(a.silencedBy, std::vector<QString> { QStringLiteral("s1") });
        QCOMPARE(a.gpuCount, uint32_t { 8 });
        QCOMPARE(a.gpuRuns.size(), size_t { 1 });
        QCOMPARE(a.gpuRuns[0], (std::pair<uint32_t, uint32_t> { 8, 8 }));
        QCOMPARE(a.node, int64_t { 1 });
        QCOMPARE(a.domain, int64_t { 0 });
        QCOMPARE(a.placedBy, QStringLiteral("Hostname=n1"));
        QCOMPARE(board.alerts[1].gpuCount, uint32_t { 0 });
        QCOMPARE(board.alerts[1].domain, int64_t { -1 });
        QVERIFY(!board.alerts[1].suppressed);
        QCOMPARE(board.silences.size(), size_t { 1 });
        QVERIFY(board.silence(QStringLiteral("s1")) != nullptr);
        QCOMPARE(board.silence(QStringLiteral("s1"))->createdBy, QStringLiteral("alice"));
        QCOMPARE(board.silence(QStringLiteral("s1"))->matchers.size(), size_t { 1 });
        QVERIFY(board.problems.isEmpty());
        QVERIFY(!assembler.assembling());
    }

    // Parts until the last: nothing shown before it.
    void aStateInParts()
    {
        AlertsAssembler assembler(m_topology);
        auto first = head(3, 3, 1, false);
        *first.add_alerts() = alert("A");
        auto r = assembler.add(first, now);
        QVERIFY(!r.board && r.error.isEmpty());
        QVERIFY(assembler.assembling());
        auto second = more(3, false);
        *second.add_alerts() = alert("B");
        *second.add_alerts() = alert("C");
        r = assembler.add(second, now);
        QVERIFY(!r.board && r.error.isEmpty());
        auto last = more(3, true);
        *last.add_silences() = silence("s");
        r = assembler.add(last, now);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.board);
        QCOMPARE(r.board->alerts.size(), size_t { 3 });
        QCOMPARE(r.board->alerts[2].name(), QStringLiteral("C"));
        QCOMPARE(r.board->silences.size(), size_t { 1 });
    }

    // A part of another state before the last: the partial state is dropped, said, and the new part starts the next.
    void aPartOfAnotherStateDropsThePartialOne()
    {
        AlertsAssembler assembler(m_topology);
        auto first = head(3, 2, 0, false);
        *first.add_alerts() = alert("A");
        QVERIFY(assembler.add(first, now).error.isEmpty());
        auto other = head(4, 1, 0, true);
        *other.add_alerts() = alert("Z");
        const auto r = assembler.add(other, now);
        QVERIFY(r.error.contains(QLatin1String("state 3")));
        QVERIFY(r.board);
        QCOMPARE(r.board->generation, uint64_t { 4 });
        QCOMPARE(r.board->alerts.size(), size_t { 1 });
        QCOMPARE(r.board->alerts[0].name(), QStringLiteral("Z"));

        // A middle part of another state is no first part: its counts (none) do not hold what it brings.
        AlertsAssembler again(m_topology);
        QVERIFY(again.add(first, now).error.isEmpty());
        auto stray = more(9, true);
        *stray.add_alerts() = alert("Q");
        const auto s = again.add(stray, now);
        QVERIFY(!s.board);
        QVERIFY(!s.error.isEmpty());
    }

    // Counts that lie drop the state whole; the next state is read afresh.
    void countsThatLieDropTheState()
    {
        AlertsAssembler assembler(m_topology);
        // Fewer than said, by the last part.
        auto fewer = head(1, 3, 0, true);
        *fewer.add_alerts() = alert("A");
        *fewer.add_alerts() = alert("B");
        auto r = assembler.add(fewer, now);
        QVERIFY(!r.board);
        QVERIFY2(r.error.contains(QLatin1String("said 3 alerts")), qPrintable(r.error));
        // More than said, at the part that brings them.
        auto first = head(2, 1, 1, false);
        *first.add_alerts() = alert("A");
        QVERIFY(assembler.add(first, now).error.isEmpty());
        auto extra = more(2, true);
        *extra.add_alerts() = alert("B");
        r = assembler.add(extra, now);
        QVERIFY(!r.board);
        QVERIFY2(r.error.contains(QLatin1String("sent more")), qPrintable(r.error));
        QVERIFY(!assembler.assembling());
        // Silences too.
        auto silences = head(3, 0, 0, true);
        *silences.add_silences() = silence("s");
        QVERIFY(!assembler.add(silences, now).board);
        // And then a state that holds is taken.
        auto good = head(4, 1, 0, true);
        *good.add_alerts() = alert("A");
        r = assembler.add(good, now);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.board);
    }

    void countsPastTheBoundsDropTheState()
    {
        AlertsAssembler assembler(m_topology);
        auto r = assembler.add(head(1, maxAlerts + 1, 0, false), now);
        QVERIFY(!r.board);
        QVERIFY2(r.error.contains(QLatin1String("20001 alerts")), qPrintable(r.error));
        QVERIFY(!assembler.assembling());
        r = assembler.add(head(2, 0, maxSilences + 1, false), now);
        QVERIFY(!r.error.isEmpty());
        // The largest counts the wire can carry allocate nothing.
        r = assembler.add(head(3, UINT32_MAX, UINT32_MAX, false), now);
        QVERIFY(!r.error.isEmpty());
        QVERIFY(!assembler.assembling());
    }

    // A part past the first that brings nothing and is not the last: a stream of them would never end a state.
    void emptyPartsPastTheFirstDropTheState()
    {
        AlertsAssembler assembler(m_topology);
        QVERIFY(assembler.add(head(1, 1, 0, false), now).error.isEmpty());
        const auto r = assembler.add(more(1, false), now);
        QVERIFY(!r.error.isEmpty());
        QVERIFY(!assembler.assembling());
        // An empty last part ends a state that has all it said.
        QVERIFY(assembler.add(head(2, 0, 0, false), now).error.isEmpty());
        const auto end = assembler.add(more(2, true), now);
        QVERIFY(end.board);
    }

    // The parts of one state are bounded in bytes: a state of the largest alerts is dropped before it is gigabytes.
    void aStatePastItsBytesIsDropped()
    {
        AlertsAssembler assembler(m_topology);
        const uint32_t parts = static_cast<uint32_t>(maxAlertsStateBytes / (4 << 20)) + 2;
        QVERIFY(assembler.add(head(1, parts, 0, false), now).error.isEmpty());
        QString error;
        for (uint32_t i = 0; i < parts && error.isEmpty(); ++i) {
            auto part = more(1, i + 1 == parts);
            auto a = alert("Big" + std::to_string(i));
            a.mutable_annotations(0)->set_value(std::string(4 << 20, 'x'));
            *part.add_alerts() = std::move(a);
            const auto r = assembler.add(part, now);
            QVERIFY(!r.board);
            error = r.error;
        }
        QVERIFY2(error.contains(QLatin1String("MiB")), qPrintable(error));
        QVERIFY(!assembler.assembling());
    }

    // Each bad alert is dropped alone, with its reason; the good ones stay.
    void badAlertsAreDroppedAlone()
    {
        const uint32_t n = m_topology->gpuCount;
        std::vector<pb::Alert> alerts;
        alerts.push_back(alert("Good", 0, 4));
        alerts.push_back(alert("PastTheFleet", n - 2, 4)); // a run past the end
        auto huge = alert("HugeRun", 0, 1);
        huge.mutable_gpu_runs(0)->set_first(UINT32_MAX);
        alerts.push_back(huge); // first + count wraps
        auto tooMany = alert("MoreThanTheFleet", 0, 4);
        tooMany.set_gpu_count(n + 1);
        alerts.push_back(tooMany);
        auto overlap = alert("Overlap", 0, 4);
        auto *run = overlap.add_gpu_runs();
        run->set_first(2);
        run->set_count(4);
        overlap.set_gpu_count(8);
        alerts.push_back(overlap);
        auto empty = alert("EmptyRun", 0, 4);
        empty.mutable_gpu_runs(0)->set_count(0);
        alerts.push_back(empty);
        auto lies = alert("RunsLie", 0, 4);
        lies.set_gpu_count(6); // four in its runs, not cut
        alerts.push_back(lies);
        auto runs = alert("TooManyRuns");
        for (uint32_t i = 0; i <= static_cast<uint32_t>(maxAlertRuns); ++i) {
            auto *r = runs.add_gpu_runs();
            r->set_first(i);
            r->set_count(1);
        }
        runs.set_gpu_count(maxAlertRuns + 1);
        alerts.push_back(runs);
        auto labels = alert("ManyLabels");
        for (int i = 0; i < maxAlertLabels; ++i) {
            auto *l = labels.add_labels();
            l->set_name("l" + std::to_string(i));
        }
        alerts.push_back(labels);
        auto annotations = alert("ManyAnnotations");
        for (int i = 0; i < maxAlertLabels; ++i) {
            annotations.add_annotations();
        }
        alerts.push_back(annotations);
        auto old = alert("Old");
        old.set_starts_at_ms(earliestAlertTimeMs - 1);
        alerts.push_back(old);
        auto future = alert("Future");
        future.set_ends_at_ms(INT64_MAX);
        alerts.push_back(future);
        auto never = alert("NoStart");
        never.set_starts_at_ms(0);
        alerts.push_back(never);
        // Not the alert's fault alone: placed nowhere, kept.
        auto node = alert("NodePast", 0, 4);
        node.set_node(static_cast<int64_t>(m_topology->nodes.size()));
        node.set_domain(static_cast<uint32_t>(m_topology->domains.size()));
        alerts.push_back(node);
        auto negative = alert("NodeNegative");
        negative.set_node(INT64_MIN);
        alerts.push_back(negative);

        QString error;
        const auto board = decodeOne(m_topology, alerts, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(board);
        QStringList kept;
        for (const auto &a : board->alerts) {
            kept << a.name();
        }
        QCOMPARE(
            kept, (QStringList { QStringLiteral("Good"), QStringLiteral("NodePast"), QStringLiteral("NodeNegative") }));
        QCOMPARE(board->alerts[1].node, int64_t { -1 });
        QCOMPARE(board->alerts[1].domain, int64_t { -1 });
        QCOMPARE(board->alerts[1].gpuRuns.size(), size_t { 1 });
        QCOMPARE(board->alerts[2].node, int64_t { -1 });
        QCOMPARE(board->problems.size(), qsizetype { 12 });
        for (const QString &name : { QStringLiteral("PastTheFleet"), QStringLiteral("Overlap"),
                 QStringLiteral("TooManyRuns"), QStringLiteral("ManyLabels"), QStringLiteral("Future") }) {
            QVERIFY2(board->problems.join(QLatin1Char('\n')).contains(name), qPrintable(name));
        }
        QVERIFY(board->problems.join(QLatin1Char('\n')).contains(QLatin1String("out of order or overlap")));
    }

    // Runs cut at the contract's bound keep their true count.
    void runsCutAtTheBoundKeepTheirCount()
    {
        auto cut = alert("Cut");
        for (uint32_t i = 0; i < static_cast<uint32_t>(maxAlertRuns); ++i) {
            auto *r = cut.add_gpu_runs();
            r->set_first(2 * i);
            r->set_count(1);
        }
        cut.set_gpu_count(maxAlertRuns + 100);
        const auto board = decodeOne(fleetOf(16384), { cut });
        QVERIFY(board);
        QCOMPARE(board->alerts.size(), size_t { 1 });
        QCOMPARE(board->alerts[0].gpuCount, uint32_t { maxAlertRuns + 100 });
        QCOMPARE(board->alerts[0].gpuRuns.size(), size_t { maxAlertRuns });
    }

    // Without a topology nothing can be checked: the placements are not kept.
    void withoutATopologyNothingIsPlaced()
    {
        auto a = alert("Somewhere", 0, 4);
        a.set_node(0);
        a.set_domain(0);
        auto far = alert("Far", UINT32_MAX - 1, 1); // would be refused with a topology
        const auto board = decodeOne(nullptr, { a, far });
        QVERIFY(board);
        QCOMPARE(board->alerts.size(), size_t { 2 });
        for (const auto &alert : board->alerts) {
            QCOMPARE(alert.gpuCount, uint32_t { 0 });
            QVERIFY(alert.gpuRuns.empty());
            QCOMPARE(alert.node, int64_t { -1 });
            QCOMPARE(alert.domain, int64_t { -1 });
        }
    }

    // Text from the wire is cut and made printable; ids past their bound are left out.
    void textIsCutAndPrintable()
    {
        auto a = alert("Loud");
        a.mutable_annotations(0)->set_value("line one\nline\ttwo\x1b[31m" + std::string(1 << 20, 'x'));
        a.set_fingerprint(std::string(1 << 20, 'f'));
        a.set_generator_url(std::string(1 << 20, 'u'));
        for (int i = 0; i < 1000; ++i) {
            a.add_inhibited_by("fp" + std::to_string(i));
        }
        const auto board = decodeOne(m_topology, { a });
        QVERIFY(board);
        const FleetAlert &out = board->alerts.at(0);
        const QString summary = out.annotation(QStringLiteral("summary"));
        QVERIFY(summary.startsWith(QLatin1String("line one line two [31mxxx")));
        QCOMPARE(summary.size(), qsizetype { maxLabelValueText });
        QCOMPARE(out.fingerprint.size(), qsizetype { maxNameText });
        QCOMPARE(out.generatorUrl.size(), qsizetype { maxUrlText });
        QCOMPARE(out.inhibitedBy.size(), size_t { maxAlertLinks });
    }

    void badSilencesAreDroppedAlone()
    {
        auto part = head(1, 0, 4, true);
        *part.add_silences() = silence("good");
        auto many = silence("many");
        for (int i = 0; i < maxSilenceMatchers; ++i) {
            many.add_matchers();
        }
        *part.add_silences() = many;
        auto backwards = silence("backwards");
        backwards.set_ends_at_ms(backwards.starts_at_ms() - 1);
        *part.add_silences() = backwards;
        auto pending = silence("pending");
        pending.set_state(pb::SILENCE_STATE_PENDING);
        pending.set_comment(std::string(100000, 'c'));
        *part.add_silences() = pending;
        AlertsAssembler assembler(m_topology);
        const auto r = assembler.add(part, now);
        QVERIFY(r.board);
        QCOMPARE(r.board->silences.size(), size_t { 2 });
        QCOMPARE(r.board->silences[1].state, FleetSilence::State::Pending);
        QCOMPARE(r.board->silences[1].comment.size(), qsizetype { maxLabelValueText });
        QCOMPARE(r.board->problems.size(), qsizetype { 2 });
    }

    // A flood of bad alerts is told in a bounded list.
    void problemsAreBounded()
    {
        std::vector<pb::Alert> alerts(100, alert("Bad", 0, 4));
        for (auto &a : alerts) {
            a.set_gpu_count(3);
        }
        const auto board = decodeOne(m_topology, alerts);
        QVERIFY(board);
        QVERIFY(board->alerts.empty());
        QCOMPARE(board->problems.size(), qsizetype { maxBoardProblems + 1 });
        QCOMPARE(board->problems.last(), QStringLiteral("and 80 more dropped"));
    }

    void statusIsChecked()
    {
        pb::AlertmanagerStatus status;
        status.set_last_success_ms(INT64_MAX);
        status.set_poll_interval_ms(INT64_MAX);
        status.set_error("connection refused\n" + std::string(10000, 'e'));
        auto s = decodeAlertSourceStatus(status, now);
        QCOMPARE(s.lastSuccessMs, int64_t { 0 });
        QCOMPARE(s.pollIntervalMs, int64_t { 24 } * 3600 * 1000);
        QCOMPARE(s.error.size(), qsizetype { maxMessageText });
        QVERIFY(!s.error.contains(QLatin1Char('\n')));
        status.set_poll_interval_ms(-5);
        status.set_last_success_ms(-1);
        s = decodeAlertSourceStatus(status, now);
        QCOMPARE(s.pollIntervalMs, int64_t { 0 });
        QCOMPARE(s.lastSuccessMs, int64_t { 0 });
    }

    // Only an operator may silence, whatever else the answer says.
    void accessIsDecoded()
    {
        pb::Access access;
        access.set_name("bob\n");
        access.set_role(pb::ROLE_VIEWER);
        access.set_alertmanager(true);
        access.set_may_silence(true);
        auto a = decodeAccess(access);
        QCOMPARE(a.name, QStringLiteral("bob"));
        QCOMPARE(a.role, BackendAccess::Role::Viewer);
        QVERIFY(a.alertmanager);
        QVERIFY(!a.maySilence);
        access.set_role(pb::ROLE_OPERATOR);
        QVERIFY(decodeAccess(access).maySilence);
        access.set_may_silence(false);
        QVERIFY(!decodeAccess(access).maySilence);
        access.set_role(static_cast<pb::Role>(42));
        access.set_may_silence(true);
        QCOMPARE(decodeAccess(access).role, BackendAccess::Role::Unknown);
        QVERIFY(!decodeAccess(access).maySilence);
    }

    void aDraftIsEncoded()
    {
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("Hostname"), QStringLiteral("r01-k01-n01"), false, true });
        draft.matchers.push_back({ QStringLiteral("gpu"), QStringLiteral("[0-3]"), true, false });
        draft.durationMs = 3600000;
        draft.comment = QStringLiteral("on it — bob");
        const auto request = encodeSilenceDraft(draft);
        QCOMPARE(request.matchers_size(), 2);
        QCOMPARE(request.matchers(1).name(), std::string("gpu"));
        QVERIFY(request.matchers(1).is_regex());
        QVERIFY(!request.matchers(1).is_equal());
        QCOMPARE(request.duration_ms(), int64_t { 3600000 });
        QCOMPARE(QString::fromStdString(request.comment()), draft.comment);
    }

    // The console's cost per update at the scale: 10,000 firing alerts and 1,000 silences over 1,048,576 GPUs,
    // in parts of about 3 MiB as the backend cuts them, decoded whole. The time is logged (a figure, not a pass mark:
    // bench_alerts measures it for docs/PERFORMANCE.md).
    void tenThousandAlertsOverAMillionGpus()
    {
        const auto fleet = fleetOf(1U << 20U);
        std::vector<pb::AlertsPart> parts;
        parts.push_back(head(1, 10000, 1000, false));
        // The part's size counted as it grows (asking the message each time would walk it whole for every alert).
        size_t partBytes = parts.back().ByteSizeLong();
        for (uint32_t i = 0; i < 10000; ++i) {
            if (partBytes > (3U << 20U)) {
                parts.push_back(more(1, false));
                partBytes = parts.back().ByteSizeLong();
            }
            auto a = alert("GpuHot" + std::to_string(i));
            for (const char *name : { "Hostname", "gpu", "severity", "instance", "job" }) {
                auto *l = a.add_labels();
                l->set_name(name);
                l->set_value(std::string(name) + "-" + std::to_string(i));
            }
            auto *description = a.add_annotations();
            description->set_name("description");
            description->set_value("GPU temperature above 90 C for 5 minutes on node " + std::to_string(i));
            a.set_gpu_count(32);
            for (uint32_t r = 0; r < 4; ++r) {
                auto *run = a.add_gpu_runs();
                run->set_first(i * 100 + r * 10);
                run->set_count(8);
            }
            a.set_node(static_cast<int64_t>(i) * 12);
            partBytes += a.ByteSizeLong() + 8;
            *parts.back().add_alerts() = std::move(a);
        }
        for (uint32_t i = 0; i < 1000; ++i) {
            *parts.back().add_silences() = silence("s" + std::to_string(i));
        }
        parts.back().set_last_part(true);
        size_t bytes = 0;
        for (const auto &p : parts) {
            bytes += p.ByteSizeLong();
        }
        QElapsedTimer clock;
        clock.start();
        AlertsAssembler assembler(fleet);
        std::shared_ptr<const AlertBoard> board;
        for (const auto &p : parts) {
            auto r = assembler.add(p, now);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            board = r.board;
        }
        const qint64 ms = clock.elapsed();
        QVERIFY(board);
        QCOMPARE(board->alerts.size(), size_t { 10000 });
        QCOMPARE(board->silences.size(), size_t { 1000 });
        QVERIFY(board->problems.isEmpty());
        qInfo("10,000 alerts and 1,000 silences over 1,048,576 GPUs: %zu parts, %.1f MiB, decoded in %lld ms",
            parts.size(), static_cast<double>(bytes) / (1 << 20), static_cast<long long>(ms));
    }

private:
    TopologyPtr m_topology;
};

QTEST_GUILESS_MAIN(TestAlertsDecode)
#include "tst_alertsdecode.moc"
