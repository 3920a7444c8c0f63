// SPDX-License-Identifier: Apache-2.0
#include "client/alertsdecode.h"

#include "client/wiretext.h"

#include <limits>
#include <utility>

namespace fleetscope {

namespace {

// A time a field may leave unsaid (0), else sane: from 2000 on, and not past now by more than maxAlertTimeAheadMs
// (views subtract times from the clock, which one near the int64 range's ends would overflow).
bool saneTime(int64_t ms, int64_t nowMs, bool mayBeZero)
{
    if (ms == 0) {
        return mayBeZero;
    }
    return ms >= earliestAlertTimeMs && ms <= nowMs + maxAlertTimeAheadMs;
}

QString timeProblem(const char *what, int64_t ms)
{
    return QStringLiteral("its %1 (%2 ms) is before 2000 or far in the future").arg(QLatin1String(what)).arg(ms);
}

bool decodeLabels(const google::protobuf::RepeatedPtrField<pb::Label> &wire, std::vector<AlertLabel> *out,
    const char *what, QString *problem)
{
    if (wire.size() > maxAlertLabels) {
        *problem = QStringLiteral("it has %1 %2, at most %3 are taken")
                       .arg(wire.size())
                       .arg(QLatin1String(what))
                       .arg(maxAlertLabels);
        return false;
    }
    out->reserve(static_cast<size_t>(wire.size()));
    for (const auto &l : wire) {
        out->push_back({ wireText(l.name(), maxLabelNameText), wireText(l.value(), maxLabelValueText) });
    }
    return true;
}

std::vector<QString> decodeIds(const google::protobuf::RepeatedPtrField<std::string> &wire)
{
    std::vector<QString> out;
    const int kept = std::min(wire.size(), maxAlertLinks);
    out.reserve(static_cast<size_t>(kept));
    for (int i = 0; i < kept; ++i) {
        out.push_back(wireText(wire.Get(i), maxNameText));
    }
    return out;
}

// The alert's GPUs against the topology: a count within the fleet; runs not empty, inside it, ascending and apart, at
// most maxAlertRuns; as many GPUs as the count unless the runs were cut at the contract's bound. Nothing is expanded.
bool checkPlacement(const pb::Alert &alert, uint32_t gpuCount, QString *problem)
{
    if (alert.gpu_count() > gpuCount) {
        *problem = QStringLiteral("it names %1 GPUs of a fleet of %2").arg(alert.gpu_count()).arg(gpuCount);
        return false;
    }
    if (alert.gpu_runs_size() > maxAlertRuns) {
        *problem = QStringLiteral("it has %1 runs of GPUs, at most %2").arg(alert.gpu_runs_size()).arg(maxAlertRuns);
        return false;
    }
    uint64_t next = 0;
    uint64_t covered = 0;
    for (const auto &run : alert.gpu_runs()) {
        if (run.count() == 0 || run.first() >= gpuCount || run.count() > gpuCount - run.first()) {
            *problem = QStringLiteral("it names GPUs %1 to %2 of a fleet of %3")
                           .arg(run.first())
                           .arg(uint64_t { run.first() } + run.count())
                           .arg(gpuCount);
            return false;
        }
        if (run.first() < next) {
            *problem = QStringLiteral("its GPUs are out of order or overlap");
            return false;
        }
        next = uint64_t { run.first() } + run.count();
        covered += run.count();
    }
    const bool cut = alert.gpu_runs_size() == maxAlertRuns;
    if (covered > alert.gpu_count() || (!cut && covered != alert.gpu_count())) {
        *problem = QStringLiteral("its runs hold %1 GPUs where it says %2").arg(covered).arg(alert.gpu_count());
        return false;
    }
    return true;
}

EventSeverity severityOf(pb::Severity severity)
{
    switch (severity) {
    case pb::SEVERITY_CRITICAL:
        return EventSeverity::Critical;
    case pb::SEVERITY_WARNING:
        return EventSeverity::Warning;
    default:
        return EventSeverity::Info;
    }
}

QString alertName(const pb::Alert &alert)
{
    for (const auto &l : alert.labels()) {
        if (l.name() == "alertname") {
            return quotedWireText(l.value());
        }
    }
    return quotedWireText(alert.fingerprint());
}

} // namespace

std::optional<FleetAlert> decodeAlert(const pb::Alert &alert, const Topology *topology, int64_t nowMs, QString *problem)
{
    FleetAlert out;
    if (!decodeLabels(alert.labels(), &out.labels, "labels", problem)
        || !decodeLabels(alert.annotations(), &out.annotations, "annotations", problem)) {
        return std::nullopt;
    }
    if (!saneTime(alert.starts_at_ms(), nowMs, false)) {
        *problem = timeProblem("start", alert.starts_at_ms());
        return std::nullopt;
    }
    if (!saneTime(alert.ends_at_ms(), nowMs, true) || !saneTime(alert.updated_at_ms(), nowMs, true)) {
        *problem = timeProblem(
            "end or update", saneTime(alert.ends_at_ms(), nowMs, true) ? alert.updated_at_ms() : alert.ends_at_ms());
        return std::nullopt;
    }
    if (topology != nullptr && !checkPlacement(alert, topology->gpuCount, problem)) {
        return std::nullopt;
    }
    out.fingerprint = wireText(alert.fingerprint(), maxNameText);
    out.suppressed = alert.state() == pb::ALERT_STATE_SUPPRESSED;
    out.silencedBy = decodeIds(alert.silenced_by());
    out.inhibitedBy = decodeIds(alert.inhibited_by());
    out.startsAtMs = alert.starts_at_ms();
    out.endsAtMs = alert.ends_at_ms();
    out.generatorUrl = wireText(alert.generator_url(), maxUrlText);
    out.severity = severityOf(alert.severity());
    out.placedBy = wireText(alert.placed_by(), maxMessageText);
    if (topology != nullptr) {
        out.gpuCount = alert.gpu_count();
        out.gpuRuns.reserve(static_cast<size_t>(alert.gpu_runs_size()));
        for (const auto &run : alert.gpu_runs()) {
            out.gpuRuns.emplace_back(run.first(), run.count());
        }
        const auto nodes = static_cast<int64_t>(topology->nodes.size());
        out.node = alert.node() >= 0 && alert.node() < nodes ? alert.node() : -1;
        out.domain = alert.has_domain() && alert.domain() < topology->domains.size() ? int64_t { alert.domain() } : -1;
    }
    return out;
}

std::optional<FleetSilence> decodeSilence(const pb::Silence &silence, int64_t nowMs, QString *problem)
{
    if (silence.matchers_size() > maxSilenceMatchers) {
        *problem
            = QStringLiteral("it has %1 matchers, at most %2").arg(silence.matchers_size()).arg(maxSilenceMatchers);
        return std::nullopt;
    }
    if (!saneTime(silence.starts_at_ms(), nowMs, false) || !saneTime(silence.ends_at_ms(), nowMs, false)
        || silence.ends_at_ms() < silence.starts_at_ms()) {
        *problem = QStringLiteral("its times (%1 to %2 ms) are before 2000, far in the future or backwards")
                       .arg(silence.starts_at_ms())
                       .arg(silence.ends_at_ms());
        return std::nullopt;
    }
    FleetSilence out;
    out.id = wireText(silence.id(), maxNameText);
    out.matchers.reserve(static_cast<size_t>(silence.matchers_size()));
    for (const auto &m : silence.matchers()) {
        out.matchers.push_back({ wireText(m.name(), maxLabelNameText), wireText(m.value(), maxLabelValueText),
            m.is_regex(), m.is_equal() });
    }
    out.startsAtMs = silence.starts_at_ms();
    out.endsAtMs = silence.ends_at_ms();
    out.createdBy = wireText(silence.created_by(), maxJobText);
    out.comment = wireText(silence.comment(), maxLabelValueText);
    switch (silence.state()) {
    case pb::SILENCE_STATE_PENDING:
        out.state = FleetSilence::State::Pending;
        break;
    case pb::SILENCE_STATE_EXPIRED:
        out.state = FleetSilence::State::Expired;
        break;
    default:
        out.state = FleetSilence::State::Active;
        break;
    }
    return out;
}

AlertSourceStatus decodeAlertSourceStatus(const pb::AlertmanagerStatus &status, int64_t nowMs)
{
    AlertSourceStatus out;
    out.url = wireText(status.url(), maxUrlText);
    out.reachable = status.reachable();
    // A time that is no time is taken as never: Alertmanager's state is then not called fresh on its word.
    out.lastSuccessMs = saneTime(status.last_success_ms(), nowMs, true) ? status.last_success_ms() : 0;
    out.error = wireText(status.error(), maxMessageText);
    // Freshness is judged against three intervals: one of a day at most (an absurd one would keep a dead source live).
    constexpr int64_t maxPollMs = int64_t { 24 } * 3600 * 1000;
    out.pollIntervalMs = std::clamp<int64_t>(status.poll_interval_ms(), 0, maxPollMs);
    out.alertsLeftOut = status.alerts_left_out();
    out.silencesLeftOut = status.silences_left_out();
    out.sending = status.sending();
    return out;
}

BackendAccess decodeAccess(const pb::Access &access)
{
    BackendAccess out;
    out.name = wireText(access.name(), maxJobText);
    switch (access.role()) {
    case pb::ROLE_VIEWER:
        out.role = BackendAccess::Role::Viewer;
        break;
    case pb::ROLE_OPERATOR:
        out.role = BackendAccess::Role::Operator;
        break;
    default:
        out.role = BackendAccess::Role::Unknown;
        break;
    }
    out.alertmanager = access.alertmanager();
    // Greyed out unless the backend says so for an operator: a viewer's "may" would only be refused.
    out.maySilence = access.may_silence() && out.role == BackendAccess::Role::Operator;
    return out;
}

pb::CreateSilenceRequest encodeSilenceDraft(const SilenceDraft &draft)
{
    pb::CreateSilenceRequest request;
    for (const auto &m : draft.matchers) {
        auto *matcher = request.add_matchers();
        matcher->set_name(m.name.toStdString());
        matcher->set_value(m.value.toStdString());
        matcher->set_is_regex(m.isRegex);
        matcher->set_is_equal(m.isEqual);
    }
    request.set_duration_ms(draft.durationMs);
    request.set_comment(draft.comment.toStdString());
    return request;
}

AlertsAssembler::AlertsAssembler(TopologyPtr topology)
    : m_topology(std::move(topology))
{ }

void AlertsAssembler::problem(const QString &text)
{
    if (m_building->problems.size() < maxBoardProblems) {
        m_building->problems << text;
    } else {
        ++m_problemsLeftOut;
    }
}

AlertsAssembler::Result AlertsAssembler::add(const pb::AlertsPart &part, int64_t nowMs)
{
    Result result;
    if (m_building && part.generation() != m_building->generation) {
        result.error = QStringLiteral("state %1 was left before its last part (a part of state %2 came)")
                           .arg(m_building->generation)
                           .arg(part.generation());
        m_building.reset();
    }
    const QString error = take(part, nowMs);
    if (!error.isEmpty()) {
        result.error = QStringLiteral("dropped alerts state %1: %2").arg(part.generation()).arg(error);
        m_building.reset();
        return result;
    }
    if (!part.last_part()) {
        return result;
    }
    if (m_alertsSeen != m_alertCount || m_silencesSeen != m_silenceCount) {
        result.error = QStringLiteral("dropped alerts state %1: it said %2 alerts and %3 silences, and sent %4 and %5")
                           .arg(part.generation())
                           .arg(m_alertCount)
                           .arg(m_silenceCount)
                           .arg(m_alertsSeen)
                           .arg(m_silencesSeen);
        m_building.reset();
        return result;
    }
    if (m_problemsLeftOut > 0) {
        m_building->problems << QStringLiteral("and %1 more dropped").arg(m_problemsLeftOut);
    }
    result.board = std::move(m_building);
    m_building.reset();
    return result;
}

QString AlertsAssembler::take(const pb::AlertsPart &part, int64_t nowMs)
{
    const bool first = !m_building;
    if (first) {
        // The counts are checked before anything is reserved for them.
        if (part.alert_count() > maxAlerts || part.silence_count() > maxSilences) {
            return QStringLiteral("it claims %1 alerts and %2 silences, at most %3 and %4 are taken")
                .arg(part.alert_count())
                .arg(part.silence_count())
                .arg(maxAlerts)
                .arg(maxSilences);
        }
        m_building = std::make_shared<AlertBoard>();
        m_building->generation = part.generation();
        m_building->status = decodeAlertSourceStatus(part.status(), nowMs);
        m_alertCount = part.alert_count();
        m_silenceCount = part.silence_count();
        m_alertsSeen = 0;
        m_silencesSeen = 0;
        m_bytes = 0;
        m_problemsLeftOut = 0;
        m_building->alerts.reserve(m_alertCount);
        m_building->silences.reserve(m_silenceCount);
    } else if (part.alerts_size() == 0 && part.silences_size() == 0 && !part.last_part()) {
        // Each part past the first brings something: a stream of empty parts would never end a state.
        return QStringLiteral("a part of it brought neither alerts nor silences");
    }
    m_bytes += part.ByteSizeLong();
    if (m_bytes > maxAlertsStateBytes) {
        return QStringLiteral("its parts pass %1 MiB").arg(maxAlertsStateBytes >> 20);
    }
    // Compared before adding, so that a count near the uint32 range's end does not wrap.
    if (static_cast<uint64_t>(part.alerts_size()) > m_alertCount - m_alertsSeen
        || static_cast<uint64_t>(part.silences_size()) > m_silenceCount - m_silencesSeen) {
        return QStringLiteral("it said %1 alerts and %2 silences, and sent more").arg(m_alertCount).arg(m_silenceCount);
    }
    for (const auto &a : part.alerts()) {
        ++m_alertsSeen;
        QString why;
        auto alert = decodeAlert(a, m_topology.get(), nowMs, &why);
        if (alert) {
            m_building->alerts.push_back(std::move(*alert));
        } else {
            problem(QStringLiteral("dropped alert %1: %2").arg(alertName(a), why));
        }
    }
    for (const auto &s : part.silences()) {
        ++m_silencesSeen;
        QString why;
        auto silence = decodeSilence(s, nowMs, &why);
        if (silence) {
            m_building->silences.push_back(std::move(*silence));
        } else {
            problem(QStringLiteral("dropped silence %1: %2").arg(quotedWireText(s.id()), why));
        }
    }
    return {};
}

} // namespace fleetscope
