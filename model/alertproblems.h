// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/alertnames.h"
#include "model/alerts.h"
#include "model/fleetmodel.h"
#include "model/problems.h"

#include <QString>
#include <QUrl>

#include <cstdint>
#include <memory>
#include <vector>

// The NOC's alerts beside the fleet's own problems, and the silences an operator makes from a problem: the matchers
// proposed for its place, what they would silence, and why a silence cannot be made.
namespace fleetscope {

// One problem per alert of the board, unranked: its GPUs (the backend's runs, bounded by the topology), a single
// GPU's or a node's place set as the fleet's own problems set theirs (so that a click drills there), its severity,
// since when, its summary annotation as its words, and, when suppressed, why (quietNote).
// Each problem's alert shares the board (no copy: a board of 10,000 alerts is read on each refresh); a board handed by
// reference is copied once.
std::vector<Problem> alertProblems(
    const std::shared_ptr<const AlertBoard> &board, const Topology *topology, int64_t nowMs);
std::vector<Problem> alertProblems(const AlertBoard &board, const Topology *topology, int64_t nowMs);
// The ranked problems with the board's alerts ranked among them (sortProblems: by severity and blast radius, the
// silenced and inhibited after everything else). The backend's own incidents come back from Alertmanager as alerts
// (FleetscopeIncident, with --alertmanager-send): such an alert is its incident's (the same cause, and its domain's
// name or its node's hostname), set on the incident rather than listed again, so that a silenced incident reads as
// one.
std::vector<Problem> withAlerts(std::vector<Problem> ranked, const std::shared_ptr<const AlertBoard> &board,
    const Topology *topology, const JobList *jobs, int64_t nowMs);
std::vector<Problem> withAlerts(
    std::vector<Problem> ranked, const AlertBoard &board, const Topology *topology, const JobList *jobs, int64_t nowMs);
// Why a suppressed alert is quiet, for people: "silenced by alice until 16:00: swapping the PSU", "inhibited by
// NodeDown"; empty while it fires.
QString quietNote(const FleetAlert &alert, const AlertBoard &board, int64_t nowMs);
// A time ahead as an operator reads it: "16:00" today, "7 Dec 16:00" another day (local time).
QString untilText(int64_t atMs, int64_t nowMs);
// The alert's runbook (its runbook_url annotation, else runbook), when it is an http(s) address; invalid otherwise:
// the annotation is Alertmanager's text, never opened unless it is a web page.
QUrl runbookUrl(const FleetAlert &alert);

// A silence proposed for a problem: what it is for, in words ("GPU 5 of r01-k03-n02"), and its matchers. An
// alert's from its own labels (alertname and the labels that place it: Hostname, gpu, UUID ...); any other problem's
// from the topology's names: a GPU's Hostname and gpu, a node's Hostname, a rack's rack, an incident's domain, the
// hosts of GPUs spread over several nodes as one regular expression.
struct SilenceProposal
{
    QString subject;
    std::vector<SilenceMatcher> matchers;
};
SilenceProposal proposeSilence(const Problem &problem, const Topology *topology);

// "=", "!=", "=~", "!~".
QString matcherOperator(const SilenceMatcher &matcher);
// Hostname="r01-k03-n02", as amtool writes it.
QString matcherText(const SilenceMatcher &matcher);
// Why these matchers cannot make a silence, for people ("matcher 2 has no label name"); empty when they can.
// Alertmanager's own rules: label names as Prometheus has them, regular expressions that compile, and at least one
// matcher that does not match the empty string (else the silence would match every alert).
QString matchersProblem(const std::vector<SilenceMatcher> &matchers);
// Whether a silence of these matchers would silence the alert, as Alertmanager decides: every matcher holds, a
// label the alert lacks reads as empty, regular expressions match the whole value.
bool silenceMatches(const std::vector<SilenceMatcher> &matchers, const FleetAlert &alert);

// Why this console may not silence, for people ("you are a viewer (noc-wall): silencing needs the operator role");
// empty when it may.
QString silenceRefusal(const BackendAccess &access);

} // namespace fleetscope
