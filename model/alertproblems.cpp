// SPDX-License-Identifier: Apache-2.0
#include "model/alertproblems.h"

#include <QDateTime>
#include <QHash>
#include <QRegularExpression>

#include <algorithm>

namespace fleetscope {

namespace {

// The labels that place an alert on the fleet (the backend places by them, docs of issue 33): a silence proposed
// for an alert keeps these and its name, so that it silences this alert here and not the same alert elsewhere.
constexpr const char *placingLabels[]
    = { "Hostname", "hostname", "gpu", "UUID", "pci_bus_id", "instance", "rack", "row", "domain" };

// A silence proposed over many hosts stays one readable matcher up to this many; past it the GPUs' smallest place
// (a rack, a row) is named instead.
constexpr size_t maxProposedHosts = 32;

std::vector<uint32_t> gpusOfRuns(const std::vector<std::pair<uint32_t, uint32_t>> &runs, uint64_t bound)
{
    std::vector<uint32_t> gpus;
    for (const auto &[first, count] : runs) {
        const uint64_t end = std::min<uint64_t>(uint64_t { first } + count, bound);
        for (uint64_t g = first; g < end && gpus.size() < ProblemBoard::maxIncidentGpus; ++g) {
            gpus.push_back(static_cast<uint32_t>(g));
        }
    }
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    return gpus;
}

SilenceMatcher equal(const QString &name, const QString &value)
{
    return SilenceMatcher { name, value, false, true };
}

// The open incident a FleetscopeIncident alert stands for: the same cause, and its domain by name, or (a node's or a
// GPU's own incident) its GPUs on the alert's host.
Problem *incidentOf(const FleetAlert &alert, std::vector<Problem> *problems, const Topology *topology)
{
    if (alert.name() != QLatin1String(incidentAlertName) || topology == nullptr) {
        return nullptr;
    }
    const QString domain = alert.label(QStringLiteral("domain"));
    const QString host = alert.label(QStringLiteral("hostname"));
    const QString cause = alert.label(QStringLiteral("cause"));
    for (Problem &p : *problems) {
        if (p.kind != Problem::Kind::Incident || !p.incident || (!cause.isEmpty() && p.incident->cause != cause)) {
            continue;
        }
        const int64_t d = p.incident->domain;
        if (d >= 0) {
            if (!domain.isEmpty() && static_cast<uint64_t>(d) < topology->domains.size()
                && topology->domains[static_cast<size_t>(d)].name == domain) {
                return &p;
            }
            continue;
        }
        if (!host.isEmpty() && domain.isEmpty() && !p.gpus.empty() && p.gpus.back() < topology->gpuCount
            && p.gpus.back() < topology->nodeOfGpu.size()
            && topology->nodeOfGpu[p.gpus.front()] == topology->nodeOfGpu[p.gpus.back()]
            && topology->nodeOf(p.gpus.front()).hostname == host) {
            return &p;
        }
    }
    return nullptr;
}

} // namespace

QString untilText(int64_t atMs, int64_t nowMs)
{
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(atMs);
    const QDateTime now = QDateTime::fromMSecsSinceEpoch(nowMs);
    return at.date() == now.date() ? at.toString(QStringLiteral("HH:mm")) : at.toString(QStringLiteral("d MMM HH:mm"));
}

namespace {
// The board's silences by id and alerts by fingerprint, looked up for every suppressed alert: at 10,000 alerts and
// 1,000 silences searching the lists took milliseconds of each refresh on the GUI thread.
struct BoardIndex
{
    // indexAlerts: the alerts by fingerprint too, wanted where one is inhibited (the rest of the time they would be
    // 10,000 keys for nothing).
    BoardIndex(const AlertBoard &board, bool indexAlerts)
    {
        silences.reserve(static_cast<qsizetype>(board.silences.size()));
        for (const auto &s : board.silences) {
            if (!silences.contains(s.id)) { // the first of a repeated id, as AlertBoard::silence finds
                silences.insert(s.id, &s);
            }
        }
        if (indexAlerts) {
            alerts.reserve(static_cast<qsizetype>(board.alerts.size()));
            for (const auto &a : board.alerts) {
                if (!alerts.contains(a.fingerprint)) {
                    alerts.insert(a.fingerprint, &a);
                }
            }
        }
    }
    QHash<QString, const FleetSilence *> silences;
    QHash<QString, const FleetAlert *> alerts;
};

QString quietNote(const FleetAlert &alert, const BoardIndex &index, int64_t nowMs)
{
    if (!alert.suppressed) {
        return {};
    }
    QStringList notes;
    if (!alert.silencedBy.empty()) {
        const FleetSilence *silence = nullptr;
        for (const QString &id : alert.silencedBy) {
            if ((silence = index.silences.value(id)) != nullptr) {
                break;
            }
        }
        QString note;
        if (silence != nullptr) {
            note = QStringLiteral("silenced by %1 until %2")
                       .arg(silence->createdBy.isEmpty() ? QStringLiteral("someone") : silence->createdBy,
                           untilText(silence->endsAtMs, nowMs));
            if (!silence->comment.isEmpty()) {
                note += QStringLiteral(": ") + silence->comment;
            }
        } else { // a silence the backend left out of the board (past its bound)
            note = QStringLiteral("silenced");
        }
        if (alert.silencedBy.size() > 1) {
            note += QStringLiteral(" (+%1 more)").arg(alert.silencedBy.size() - 1);
        }
        notes << note;
    }
    if (!alert.inhibitedBy.empty()) {
        const FleetAlert *by = index.alerts.value(alert.inhibitedBy.front());
        notes << (by == nullptr || by->name().isEmpty() ? QStringLiteral("inhibited by another alert")
                                                        : QStringLiteral("inhibited by %1").arg(by->name()));
    }
    return notes.isEmpty() ? QStringLiteral("suppressed") : notes.join(QStringLiteral("; "));
}
} // namespace

QString quietNote(const FleetAlert &alert, const AlertBoard &board, int64_t nowMs)
{
    return alert.suppressed ? quietNote(alert, BoardIndex(board, !alert.inhibitedBy.empty()), nowMs) : QString();
}

QUrl runbookUrl(const FleetAlert &alert)
{
    QString text = alert.annotation(QStringLiteral("runbook_url"));
    if (text.isEmpty()) {
        text = alert.annotation(QStringLiteral("runbook"));
    }
    const QUrl url(text.trimmed(), QUrl::StrictMode);
    const bool web = url.scheme() == QLatin1String("https") || url.scheme() == QLatin1String("http");
    return url.isValid() && web && !url.host().isEmpty() ? url : QUrl();
}

std::vector<Problem> alertProblems(const AlertBoard &board, const Topology *topology, int64_t nowMs)
{
    return alertProblems(std::make_shared<const AlertBoard>(board), topology, nowMs);
}

std::vector<Problem> alertProblems(
    const std::shared_ptr<const AlertBoard> &shared, const Topology *topology, int64_t nowMs)
{
    std::vector<Problem> problems;
    if (!shared) {
        return problems;
    }
    const AlertBoard &board = *shared;
    problems.reserve(board.alerts.size());
    const BoardIndex index(board, std::any_of(board.alerts.begin(), board.alerts.end(), [](const FleetAlert &a) {
        return !a.inhibitedBy.empty();
    }));
    for (const auto &a : board.alerts) {
        Problem p;
        p.kind = Problem::Kind::Alert;
        p.alert = std::shared_ptr<const FleetAlert>(shared, &a); // the board's own, kept alive by it
        p.severity = a.severity;
        p.sinceMs = a.startsAtMs > 0 ? a.startsAtMs : nowMs;
        p.lastMs = p.sinceMs;
        p.text = a.annotation(QStringLiteral("summary"));
        if (p.text.isEmpty()) {
            p.text = a.annotation(QStringLiteral("description"));
        }
        // The GPUs it names, within the fleet as this console has it (the runs are the backend's).
        p.gpus = gpusOfRuns(a.gpuRuns, topology ? uint64_t { topology->gpuCount } : ProblemBoard::maxIncidentGpus);
        const bool nodeKnown = topology && a.node >= 0 && static_cast<uint64_t>(a.node) < topology->nodes.size();
        if (p.gpus.size() == 1 && a.domain < 0) {
            p.gpu = p.gpus[0];
            p.node = topology && p.gpus[0] < topology->nodeOfGpu.size() ? topology->nodeOfGpu[p.gpus[0]] : a.node;
        } else if (nodeKnown && a.domain < 0) {
            p.node = a.node;
        }
        p.quietNote = quietNote(a, index, nowMs);
        problems.push_back(std::move(p));
    }
    return problems;
}

std::vector<Problem> withAlerts(
    std::vector<Problem> ranked, const AlertBoard &board, const Topology *topology, const JobList *jobs, int64_t nowMs)
{
    return board.alerts.empty()
        ? ranked
        : withAlerts(std::move(ranked), std::make_shared<const AlertBoard>(board), topology, jobs, nowMs);
}

std::vector<Problem> withAlerts(std::vector<Problem> ranked, const std::shared_ptr<const AlertBoard> &board,
    const Topology *topology, const JobList *jobs, int64_t nowMs)
{
    if (!board || board->alerts.empty()) {
        return ranked;
    }
    std::vector<Problem> alerts = alertProblems(board, topology, nowMs);
    alerts.erase(std::remove_if(alerts.begin(), alerts.end(),
                     [&](const Problem &alert) {
                         Problem *incident = incidentOf(*alert.alert, &ranked, topology);
                         if (incident != nullptr && (!incident->alert || alert.isQuietAlert())) {
                             incident->alert = alert.alert; // a silenced one rather than one that fires
                             incident->quietNote = alert.quietNote;
                         }
                         return incident != nullptr;
                     }),
        alerts.end());
    rankProblems(&alerts, jobs); // their jobs and blast radius; the problems handed in have theirs
    ranked.insert(ranked.end(), std::make_move_iterator(alerts.begin()), std::make_move_iterator(alerts.end()));
    sortProblems(&ranked);
    return ranked;
}

SilenceProposal proposeSilence(const Problem &p, const Topology *topology)
{
    SilenceProposal proposal;
    if (p.kind == Problem::Kind::Alert && p.alert) {
        const FleetAlert &a = *p.alert;
        if (!a.name().isEmpty()) {
            proposal.matchers.push_back(equal(QStringLiteral("alertname"), a.name()));
        }
        for (const char *name : placingLabels) {
            const QString label = QLatin1String(name);
            if (const QString value = a.label(label); !value.isEmpty()) {
                proposal.matchers.push_back(equal(label, value));
            }
        }
        if (proposal.matchers.empty()) { // neither a name nor a place: all its labels, as Alertmanager's UI does
            for (const auto &l : a.labels) {
                proposal.matchers.push_back(equal(l.name, l.value));
            }
        }
        const QString place = problemPlace(p, topology);
        proposal.subject = QStringLiteral("alert %1 (%2)")
                               .arg(a.name().isEmpty() ? QStringLiteral("without a name") : a.name(), place);
        return proposal;
    }
    // The backend's own findings reach Alertmanager as its alerts (--alertmanager-send: alertnames.h), labelled
    // `hostname` and `gpu`; a GPU's other problems are what the NOC's rules over dcgm-exporter page for, labelled
    // `Hostname`. A silence proposed for an incident or an anomaly names the backend's alert, so that it mutes that
    // page.
    const bool backendsOwn = p.kind == Problem::Kind::Incident || p.kind == Problem::Kind::Anomaly;
    const QString hostname = backendsOwn ? QStringLiteral("hostname") : QStringLiteral("Hostname");
    const auto named = [&p, backendsOwn](std::vector<SilenceMatcher> matchers) {
        if (backendsOwn) {
            matchers.insert(matchers.begin(),
                equal(QStringLiteral("alertname"),
                    QLatin1String(p.kind == Problem::Kind::Incident ? incidentAlertName : anomalyAlertName)));
        }
        return matchers;
    };
    const QString what = describe(p.kind);
    // A GPU's: its host and its index on the node, as dcgm-exporter labels it.
    if (topology && p.gpu >= 0 && static_cast<uint64_t>(p.gpu) < topology->gpuCount
        && static_cast<uint64_t>(p.gpu) < topology->nodeOfGpu.size()) {
        const auto gpu = static_cast<uint32_t>(p.gpu);
        const auto &node = topology->nodeOf(gpu);
        proposal.matchers = named(
            { equal(hostname, node.hostname), equal(QStringLiteral("gpu"), QString::number(gpu - node.firstGpu)) });
        proposal.subject = QStringLiteral("%1 on GPU %2 of %3").arg(what).arg(gpu - node.firstGpu).arg(node.hostname);
        return proposal;
    }
    if (topology && p.gpu < 0 && p.rack < 0 && p.node >= 0 && static_cast<uint64_t>(p.node) < topology->nodes.size()) {
        const auto &node = topology->nodes[static_cast<size_t>(p.node)];
        proposal.matchers = named({ equal(hostname, node.hostname) });
        proposal.subject = QStringLiteral("%1 on node %2").arg(what, node.hostname);
        return proposal;
    }
    if (topology && p.incident && p.incident->domain >= 0
        && static_cast<uint64_t>(p.incident->domain) < topology->domains.size()) {
        const auto &d = topology->domains[static_cast<size_t>(p.incident->domain)];
        proposal.matchers = named({ equal(QStringLiteral("domain"), d.name) });
        proposal.subject = QStringLiteral("%1 incident of %2 %3")
                               .arg(incidentCauseLabel(p).toLower(), QLatin1String(domainKindName(d.kind)), d.name);
        return proposal;
    }
    if (topology && p.rack >= 0 && static_cast<uint64_t>(p.rack) < topology->racks.size()) {
        const auto &rack = topology->racks[static_cast<size_t>(p.rack)];
        proposal.matchers = { equal(QStringLiteral("rack"), rack.name) };
        proposal.subject = QStringLiteral("%1 in rack %2").arg(what, rack.name);
        return proposal;
    }
    // GPUs over several places (a job's folded line, a node's or a GPU's own incident): their hosts, one matcher.
    if (topology && !p.gpus.empty() && p.gpus.back() < topology->gpuCount) {
        std::vector<uint32_t> nodes;
        for (uint32_t gpu : p.gpus) {
            nodes.push_back(topology->nodeOfGpu[gpu]);
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        const Place place = smallestPlaceHolding(p.gpus, *topology);
        if (nodes.size() == 1) {
            const auto &node = topology->nodes[nodes[0]];
            proposal.matchers = { equal(hostname, node.hostname) };
            if (p.gpus.size() == 1) {
                proposal.matchers.push_back(equal(QStringLiteral("gpu"), QString::number(p.gpus[0] - node.firstGpu)));
            }
        } else if (nodes.size() <= maxProposedHosts) {
            QStringList hosts;
            for (uint32_t n : nodes) {
                hosts << QRegularExpression::escape(topology->nodes[n].hostname);
            }
            proposal.matchers = { SilenceMatcher { hostname, hosts.join(QLatin1Char('|')), true, true } };
        } else if (place.level == Place::Level::Rack) {
            proposal.matchers = { equal(QStringLiteral("rack"), topology->racks[place.index].name) };
        } else if (place.level == Place::Level::Row) {
            proposal.matchers = { equal(QStringLiteral("row"), topology->rows[place.index].name) };
        }
        proposal.subject = QStringLiteral("%1 at %2").arg(what, problemPlace(p, topology));
        if (!proposal.matchers.empty()) {
            proposal.matchers = named(std::move(proposal.matchers));
            return proposal;
        }
    }
    // Nowhere this console can name: the operator writes the matchers.
    proposal.subject = QStringLiteral("%1 at %2").arg(what, problemPlace(p, topology));
    return proposal;
}

QString matcherOperator(const SilenceMatcher &m)
{
    if (m.isRegex) {
        return m.isEqual ? QStringLiteral("=~") : QStringLiteral("!~");
    }
    return m.isEqual ? QStringLiteral("=") : QStringLiteral("!=");
}

QString matcherText(const SilenceMatcher &m)
{
    QString value = m.value;
    value.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('"'), QLatin1String("\\\""));
    return m.name + matcherOperator(m) + QLatin1Char('"') + value + QLatin1Char('"');
}

namespace {
bool matcherHolds(const SilenceMatcher &m, const QString &value)
{
    bool holds = false;
    if (m.isRegex) {
        // Alertmanager anchors its regular expressions: the whole value must match.
        const QRegularExpression re(QRegularExpression::anchoredPattern(m.value));
        holds = re.isValid() && re.match(value).hasMatch();
    } else {
        holds = value == m.value;
    }
    return m.isEqual ? holds : !holds;
}
} // namespace

QString matchersProblem(const std::vector<SilenceMatcher> &matchers)
{
    if (matchers.empty()) {
        return QStringLiteral("a silence needs at least one matcher");
    }
    static const QRegularExpression labelName(QStringLiteral("^[a-zA-Z_][a-zA-Z0-9_]*$"));
    bool narrows = false;
    for (size_t i = 0; i < matchers.size(); ++i) {
        const SilenceMatcher &m = matchers[i];
        if (m.name.isEmpty()) {
            return QStringLiteral("matcher %1 has no label name").arg(i + 1);
        }
        if (!labelName.match(m.name).hasMatch()) {
            return QStringLiteral("matcher %1: \"%2\" is not a label name (letters, digits and _)")
                .arg(i + 1)
                .arg(m.name);
        }
        if (m.isRegex) {
            const QRegularExpression re(m.value);
            if (!re.isValid()) {
                return QStringLiteral("matcher %1: %2 at %3")
                    .arg(i + 1)
                    .arg(re.errorString())
                    .arg(re.patternErrorOffset());
            }
        }
        narrows = narrows || !matcherHolds(m, QString());
    }
    if (!narrows) {
        return QStringLiteral("every matcher matches an empty value: the silence would match every alert");
    }
    return {};
}

bool silenceMatches(const std::vector<SilenceMatcher> &matchers, const FleetAlert &alert)
{
    return !matchers.empty() && std::all_of(matchers.begin(), matchers.end(), [&alert](const SilenceMatcher &m) {
        return matcherHolds(m, alert.label(m.name));
    });
}

QString silenceRefusal(const BackendAccess &access)
{
    if (access.maySilence) {
        return {};
    }
    const QString who = access.name.isEmpty() ? QStringLiteral("this console") : access.name;
    switch (access.role) {
    case BackendAccess::Role::Viewer:
        return QStringLiteral("you are a viewer (%1): silencing needs the operator role").arg(who);
    case BackendAccess::Role::Unknown:
        return QStringLiteral("the backend has not said yet what this console may do");
    case BackendAccess::Role::Operator:
        break;
    }
    if (!access.alertmanager) {
        return QStringLiteral("the backend reads no Alertmanager: there is nowhere to make a silence");
    }
    return QStringLiteral("the backend does not let %1 silence").arg(who);
}

} // namespace fleetscope
