// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): a job's account (GetJob's JobReport) and the losses a summary sums, checked
// against the topology of the moment before anything is kept. A backend is not trusted to keep the contract's bounds:
// every list is cut at its bound before anything is reserved, every index checked against the fleet, every figure
// finite and in its range, every time sane and every text cut (wiretext.h).

#include "client/topologydecode.h"
#include "model/jobreport.h"

#include <QString>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace fleetscope {

// Longest kept, in characters, of a span's why, a straggler's reason and a loss's what (the job's name and owner are
// cut as a job list's, at maxJobText).
constexpr int maxJobReasonText = 256;
// The most losses a summary keeps: the contract's 100 and its remainder, with room for a newer backend's few more.
constexpr size_t maxSummaryLosses = 128;
// The most problems one report describes; the rest are counted in one more line.
constexpr int maxJobReportProblems = 32;
// A time the account may carry: since the epoch and before 2100-01-01. Views subtract times from one another and from
// the clock; a time near the int64 range's ends would overflow them.
constexpr int64_t latestJobTimeMs = 4102444800000;
constexpr bool isSaneJobTime(int64_t ms)
{
    return ms >= 0 && ms <= latestJobTimeMs;
}

// The wire's enums, a value this console does not know (a newer backend's) as Unwatched / Unspecified.
JobPhase decodeJobPhase(int wire);
LossCause decodeLossCause(int wire);

// What a loss's indices and hours are checked against: the fleet's GPUs, nodes and domains, and the most GPU-hours
// one loss may be.
struct LossBounds
{
    uint32_t gpus = 0;
    uint64_t nodes = 0;
    uint64_t domains = 0;
    double gpuHours = 0;
};
// One loss, or nullopt with *problem when its hours are not finite, negative or past the bound, or it names a GPU,
// node or domain outside the fleet.
std::optional<GoodputLoss> decodeLoss(const pb::GoodputLoss &loss, const LossBounds &bounds, QString *problem);

// GetJob's answer against the topology the job's GPUs index. Null, with *failure, when nothing of it can be shown:
// its job fails ListJobs' checks (decodeJob), or its times are not sane or run backwards. Otherwise what does not
// hold together is dropped and said in problems (at most maxJobReportProblems lines, the rest counted): lists past
// JobReport's bounds; losses decodeLoss refuses; stragglers on a GPU outside the job or listed twice, with a score,
// value or hours that are not finite or negative, a hold-back outside 0..1 or a time not sane; phase spans reversed,
// out of order or not sane; band points not after the one before, with percentiles outside 0..100 or out of order,
// or more GPUs reporting than the job has. Figures of the whole (GPU-hours past the fleet's over the time watched,
// productive past all, goodput or a share outside 0..1, a step or limit negative) become 0. The request's id is left
// to the caller.
std::shared_ptr<JobReport> decodeJobReport(const pb::JobReport &answer, const Topology &topology, QString *failure);

// Why GetJob's answer is not for the job asked (by id, or by name when id is 0), or empty when it is.
QString jobAnswerMismatch(const pb::JobReport &answer, uint64_t id, const QString &name);

} // namespace fleetscope
