// SPDX-License-Identifier: Apache-2.0
// What a problem says for people: its kind, its own words, its place, and the tally of the open ones.
#include "model/problems.h"

#include <QLocale>

#include <algorithm>

namespace fleetscope {

QString describe(Problem::Kind kind)
{
    switch (kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("XID burst");
    case Problem::Kind::EccDoubleBit:
        return QStringLiteral("ECC double-bit");
    case Problem::Kind::ThermalThrottle:
        return QStringLiteral("Thermal throttling");
    case Problem::Kind::PowerThrottle:
        return QStringLiteral("Power throttling");
    case Problem::Kind::NodeDown:
        return QStringLiteral("Node down");
    case Problem::Kind::Anomaly:
        return QStringLiteral("Anomaly");
    case Problem::Kind::Drift:
        return QStringLiteral("Version drift");
    case Problem::Kind::Incident:
        return QStringLiteral("Incident");
    case Problem::Kind::Alert:
        return QStringLiteral("Alert");
    }
    return {};
}

namespace {
QString plural(uint64_t n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(
        QLocale().toString(static_cast<qulonglong>(n)), QLatin1String(n == 1 ? one : many));
}

// "79 (GPU has fallen off the bus) ×3, 48 (…)"
QString xidList(const Problem &p)
{
    QStringList parts;
    for (const auto &[xid, count] : p.xids) {
        const QString meaning = xidMeaningText(xid);
        QString part
            = meaning.isEmpty() ? QString::number(xid) : QStringLiteral("%1 (%2)").arg(QString::number(xid), meaning);
        if (count > 1) {
            part += QStringLiteral(" ×%1").arg(count);
        }
        parts << part;
    }
    return parts.join(QStringLiteral(", "));
}

// What several GPUs of one job share: "3 GPUs with double-bit ECC errors".
QString foldedSummary(const Problem &p)
{
    const QString gpus = plural(p.gpus.size(), "GPU", "GPUs");
    switch (p.kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("%1 with XID bursts: %2").arg(gpus, xidList(p));
    case Problem::Kind::EccDoubleBit:
        return QStringLiteral("%1 with double-bit ECC errors").arg(gpus);
    case Problem::Kind::ThermalThrottle:
        return QStringLiteral("%1 thermal throttling").arg(gpus);
    case Problem::Kind::PowerThrottle:
        return QStringLiteral("%1 power throttling").arg(gpus);
    case Problem::Kind::Anomaly:
        return QStringLiteral("%1 out of line with their peers (%2)").arg(gpus, p.metric);
    default:
        return QStringLiteral("%1: %2").arg(gpus, describe(p.kind));
    }
}
} // namespace

QString problemSummary(const Problem &p)
{
    if (p.foldedJob != 0) {
        return foldedSummary(p);
    }
    switch (p.kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("XID burst: %1").arg(xidList(p));
    case Problem::Kind::Incident:
        if (!p.text.isEmpty()) {
            return p.text;
        }
        return p.incident
            ? QStringLiteral("%1 incident: %2").arg(p.incident->cause, plural(p.incident->gpuCount, "GPU", "GPUs"))
            : describe(p.kind);
    case Problem::Kind::Anomaly: // the detector's reason says what and by how much
    case Problem::Kind::Drift: // the versions and how many GPUs run each
        return p.text.isEmpty() ? describe(p.kind) : p.text;
    case Problem::Kind::Alert: { // "GpuTooHot: GPU 5 at 92 °C": its name, then its summary annotation
        const QString name = p.alert ? p.alert->name() : QString();
        if (name.isEmpty() || p.text.isEmpty()) {
            return name.isEmpty() ? (p.text.isEmpty() ? describe(p.kind) : p.text) : name;
        }
        return QStringLiteral("%1: %2").arg(name, p.text);
    }
    default:
        return describe(p.kind);
    }
}

QString problemPlace(const Problem &p, const Topology *topology)
{
    if (p.foldedJob != 0) {
        return p.foldedJobName.isEmpty() ? QStringLiteral("job %1").arg(p.foldedJob)
                                         : QStringLiteral("job %1").arg(p.foldedJobName);
    }
    if (p.kind == Problem::Kind::Incident) {
        const int64_t domain = p.incident ? p.incident->domain : -1;
        if (topology != nullptr && domain >= 0 && static_cast<uint64_t>(domain) < topology->domains.size()) {
            const auto &d = topology->domains[static_cast<size_t>(domain)];
            return QStringLiteral("%1 %2").arg(QLatin1String(domainKindName(d.kind)), d.name);
        }
        if (topology != nullptr && !p.gpus.empty()) {
            return smallestPlaceHolding(p.gpus, *topology).name(*topology);
        }
        return plural(p.incident ? p.incident->gpuCount : p.gpusHit, "GPU", "GPUs");
    }
    if (p.kind == Problem::Kind::Alert) {
        // What the backend placed it on: a domain by name, else the GPUs' place; nothing in the fleet: fleet-wide.
        const int64_t domain = p.alert ? p.alert->domain : -1;
        if (topology != nullptr && domain >= 0 && static_cast<uint64_t>(domain) < topology->domains.size()) {
            const auto &d = topology->domains[static_cast<size_t>(domain)];
            return QStringLiteral("%1 %2").arg(QLatin1String(domainKindName(d.kind)), d.name);
        }
        if (p.gpus.empty()) {
            return QStringLiteral("fleet-wide");
        }
        if (topology != nullptr && p.gpu < 0 && p.node < 0) {
            return smallestPlaceHolding(p.gpus, *topology).name(*topology);
        }
    }
    if (topology == nullptr) {
        return p.gpu >= 0 ? QStringLiteral("GPU #%1").arg(p.gpu) : QStringLiteral("node #%1").arg(p.node);
    }
    if (p.gpu >= 0 && static_cast<uint64_t>(p.gpu) < topology->gpuCount) {
        const auto gpu = static_cast<uint32_t>(p.gpu);
        const auto &node = topology->nodeOf(gpu);
        return QStringLiteral("%1 GPU %2").arg(node.hostname).arg(gpu - node.firstGpu);
    }
    if (p.rack >= 0 && static_cast<uint64_t>(p.rack) < topology->racks.size()) {
        return QStringLiteral("rack %1 (%2 GPUs)")
            .arg(topology->racks[static_cast<size_t>(p.rack)].name)
            .arg(p.gpus.size());
    }
    if (p.gpu < 0 && p.node >= 0 && static_cast<uint64_t>(p.node) < topology->nodes.size()) {
        return topology->nodes[static_cast<size_t>(p.node)].hostname;
    }
    if (p.kind == Problem::Kind::Drift && !p.gpus.empty()) { // a job's GPUs off its majority, wherever they are
        std::vector<uint32_t> racks;
        for (uint32_t gpu : p.gpus) {
            if (gpu < topology->gpuCount) {
                racks.push_back(topology->nodeOf(gpu).rack);
            }
        }
        std::sort(racks.begin(), racks.end());
        racks.erase(std::unique(racks.begin(), racks.end()), racks.end());
        if (racks.size() == 1) {
            return QStringLiteral("rack %1 (%2 GPUs)").arg(topology->racks[racks[0]].name).arg(p.gpus.size());
        }
        return QStringLiteral("%1 GPUs in %2 racks").arg(p.gpus.size()).arg(racks.size());
    }
    return QStringLiteral("(not in this topology)");
}

bool isSharedIncident(const Problem &p)
{
    return p.kind == Problem::Kind::Incident && p.incident && p.incident->domain >= 0;
}

QString incidentCauseLabel(const Problem &p)
{
    if (p.kind != Problem::Kind::Incident) {
        return {};
    }
    return p.incident && !p.incident->cause.isEmpty() ? p.incident->cause.toUpper() : QStringLiteral("INCIDENT");
}

Place smallestPlaceHolding(const std::vector<uint32_t> &gpus, const Topology &topology)
{
    if (gpus.empty() || gpus.back() >= topology.gpuCount || topology.nodeOfGpu.size() < topology.gpuCount) {
        return Place::fleet();
    }
    const uint32_t first = gpus.front();
    const uint32_t last = gpus.back();
    if (first == last) {
        return Place::gpu(first);
    }
    const uint32_t firstNode = topology.nodeOfGpu[first];
    const uint32_t lastNode = topology.nodeOfGpu[last];
    if (firstNode == lastNode) {
        return Place::node(firstNode);
    }
    const uint32_t firstRack = topology.nodes[firstNode].rack;
    const uint32_t lastRack = topology.nodes[lastNode].rack;
    if (firstRack == lastRack) {
        return Place::rack(firstRack);
    }
    if (topology.racks[firstRack].row == topology.racks[lastRack].row) {
        return Place::row(topology.racks[firstRack].row);
    }
    return Place::fleet();
}

ProblemTally tallyProblems(const std::vector<Problem> &problems)
{
    ProblemTally tally;
    for (const auto &p : problems) {
        const bool critical = p.severity == EventSeverity::Critical;
        if (p.kind == Problem::Kind::Alert) {
            ++tally.alerts;
            tally.quietAlerts += p.isQuietAlert() ? 1 : 0;
            tally.criticalAlerts += critical && !p.isQuietAlert() ? 1 : 0;
        } else if (isSharedIncident(p)) {
            ++tally.incidents;
            tally.criticalIncidents += critical ? 1 : 0;
        } else {
            ++tally.others;
            tally.criticalOthers += critical ? 1 : 0;
        }
    }
    return tally;
}

QString tallyText(const ProblemTally &t)
{
    if (t.incidents == 0 && t.others == 0 && t.alerts == 0) {
        return QStringLiteral("No open problems");
    }
    QStringList parts;
    if (t.incidents > 0) {
        parts << plural(t.incidents, "incident", "incidents");
    }
    if (t.others > 0 || (t.incidents == 0 && t.alerts == 0)) {
        parts << (t.incidents > 0 ? plural(t.others, "other problem", "other problems")
                                  : plural(t.others, "problem", "problems"));
    }
    QString text = parts.join(QStringLiteral(" · "));
    if (const uint32_t critical = t.criticalIncidents + t.criticalOthers; critical > 0) {
        text += QStringLiteral(" (%1 critical)").arg(critical);
    }
    if (t.alerts > 0) {
        // The NOC's alerts apart: they overlap the fleet's own problems (the same fault seen by two tools).
        QStringList notes;
        if (t.criticalAlerts > 0) {
            notes << QStringLiteral("%1 critical").arg(t.criticalAlerts);
        }
        if (t.quietAlerts > 0) {
            notes << QStringLiteral("%1 silenced").arg(t.quietAlerts);
        }
        text += (text.isEmpty() ? QString() : QStringLiteral(" · ")) + plural(t.alerts, "alert", "alerts")
            + (notes.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(notes.join(QStringLiteral(", "))));
    }
    return text;
}

QString leadIncidentLine(const std::vector<Problem> &ranked, const ProblemTally &tally, EventSeverity *severity)
{
    const auto lead = std::find_if(ranked.begin(), ranked.end(), isSharedIncident);
    if (lead == ranked.end()) {
        return {};
    }
    if (severity != nullptr) {
        *severity = lead->severity;
    }
    QString line = incidentCauseLabel(*lead) + QStringLiteral(" · ") + lead->text;
    if (lead->isQuietAlert()) { // ranked after those that are not: every open incident is someone's already
        line += QStringLiteral(" · ") + lead->quietNote;
    }
    if (tally.incidents > 1) {
        line += QStringLiteral(" · ") + plural(tally.incidents - 1, "more incident", "more incidents");
    }
    if (tally.others > 0) {
        line += QStringLiteral(" · ") + plural(tally.others, "other problem", "other problems");
    }
    return line;
}

} // namespace fleetscope
