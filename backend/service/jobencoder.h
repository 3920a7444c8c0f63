// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/jobaccount.h"
#include "service/frameencoder.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <string>
#include <string_view>

namespace fleetscope::backend {

// The jobs' accounts on the wire (docs/JOBS.md): GetJob's JobReport, the brief ListJobs adds to each Job, and the
// goodput GetSummary adds to a Summary, each within the contract's bounds whatever the accounting hands over.

// A text for people (a span's why, a straggler's reason, a loss's what) takes at most this many bytes on the wire:
// 4,096 spans of it are 1 MiB, and a console shows a line of it.
constexpr size_t maxJobTextBytes = 256;

// Whether text is UTF-8 as protobuf checks a string (no overlong forms, surrogates or code points past U+10FFFF).
bool isUtf8(std::string_view text);
// text as the wire takes it: each byte that is not UTF-8 replaced by U+FFFD (protobuf refuses the whole message
// otherwise, and a hostname from a real fleet's labels may hold one), cut at a character's boundary to at most
// maxBytes, ending with "…" when cut.
std::string wireText(std::string_view text, size_t maxBytes = maxJobTextBytes);

fleetscope::telemetry::v1::JobPhase toProto(JobPhase phase);
fleetscope::telemetry::v1::LossCause toProto(LossCause cause);
void encodeLoss(const GoodputLoss &loss, fleetscope::telemetry::v1::GoodputLoss *out);

// A job's account in brief on its Job, as ListJobs gives it.
void encodeBrief(const JobBrief &brief, fleetscope::telemetry::v1::Job *out);

// The jobs' goodput over a summary's range: jobs_accounted always; goodput only when a job ran in it; the losses most
// first, at most GoodputSummary::maxLosses, those past it summed into the last entry's remainder ("the rest").
void encodeGoodput(const GoodputSummary &goodput, fleetscope::telemetry::v1::Summary *out);

// GetJob's answer, its job as ListJobs encodes it with the report's own goodput, phase and straggler count. Lists
// past the contract's maxima are cut: losses and stragglers to the first ones (most first), band points to as many
// picked evenly over the job's life (the newest kept), the oldest phase spans merged into the oldest one kept. When
// the answer would still pass maxBytes, older spans are merged the same way until it fits: at the contract's maxima a
// job's GPUs take at most 2.2 MiB (a fleet of 2^20 GPUs, as list or runs, whichever is smaller) and the rest 1.3 MiB,
// so this holds against what is not bounded (a job's name and owner as its scheduler gives them). False, with error
// set, when the answer without its spans passes maxBytes.
bool encodeJobReport(const JobReport &report, fleetscope::telemetry::v1::JobReport *out, std::string *error,
    size_t maxBytes = maxMessageBytes - (64U << 10U));

} // namespace fleetscope::backend
