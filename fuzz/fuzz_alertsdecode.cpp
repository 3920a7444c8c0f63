// SPDX-License-Identifier: Apache-2.0
// The console's decoding of a StreamAlerts stream: the first byte picks the fleet the alerts are placed within (bits
// 0-1: none, 64 GPUs, 8,192 or 1,048,576), the rest is cut into AlertsPart messages (fuzzinput.h) and fed to one
// AlertsAssembler, in order, as the alerts client does. A state it completes must hold no more than the bounds, each
// alert's runs inside the fleet, ascending and apart (none without a fleet), its node and domain inside it or -1, and a
// bounded list of problems. An input of a few kB that makes the assembler allocate past libFuzzer's memory limit (a
// claimed count reserved before it is checked) is a finding.
#include "client/alertsdecode.h"
#include "fuzz/fuzzinput.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <array>

namespace {

using namespace fleetscope;

constexpr std::array<uint32_t, 4> fleetGpus = { 0, 64, 8192, 1U << 20U };
constexpr int64_t nowMs = 1767225600000; // 2026-01-01: the same bounds for every run

// A fleet as the decoder reads it: its GPU count, nodes of 8 GPUs and some shared domains.
TopologyPtr topologyOf(uint32_t gpus)
{
    if (gpus == 0) {
        return nullptr;
    }
    auto t = std::make_shared<Topology>();
    t->generation = 7;
    t->gpuCount = gpus;
    t->nodes.resize(gpus / 8);
    t->domains.resize(gpus / 64 + 1);
    return t;
}

std::array<TopologyPtr, 4> g_topologies;

void check(const AlertBoard &board, const Topology *topology)
{
    if (board.alerts.size() > maxAlerts || board.silences.size() > maxSilences
        || board.problems.size() > maxBoardProblems + 1) {
        __builtin_trap();
    }
    for (const auto &a : board.alerts) {
        if (a.labels.size() > static_cast<size_t>(maxAlertLabels)
            || a.gpuRuns.size() > static_cast<size_t>(maxAlertRuns)) {
            __builtin_trap();
        }
        if (topology == nullptr) {
            if (!a.gpuRuns.empty() || a.gpuCount != 0 || a.node != -1 || a.domain != -1) {
                __builtin_trap();
            }
            continue;
        }
        uint64_t next = 0;
        for (const auto &[first, count] : a.gpuRuns) {
            if (count == 0 || first < next || uint64_t { first } + count > topology->gpuCount) {
                __builtin_trap();
            }
            next = uint64_t { first } + count;
        }
        if (a.gpuCount > topology->gpuCount || a.node < -1 || a.node >= static_cast<int64_t>(topology->nodes.size())
            || a.domain < -1 || a.domain >= static_cast<int64_t>(topology->domains.size())) {
            __builtin_trap();
        }
        fuzz::sink = fuzz::sink + static_cast<size_t>(a.name().size());
    }
    for (const auto &s : board.silences) {
        if (s.matchers.size() > static_cast<size_t>(maxSilenceMatchers) || s.endsAtMs < s.startsAtMs) {
            __builtin_trap();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    google::protobuf::SetLogHandler(nullptr);
    for (size_t i = 0; i < fleetGpus.size(); ++i) {
        g_topologies[i] = topologyOf(fleetGpus[i]);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const TopologyPtr &topology = g_topologies[data[0] & 3U];
    AlertsAssembler assembler(topology);
    for (const auto bytes : fuzz::splitParts(data + 1, size - 1, 32)) {
        pb::AlertsPart part;
        if (!part.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
            return 0;
        }
        const auto result = assembler.add(part, nowMs);
        if (result.board) {
            check(*result.board, topology.get());
        }
        pb::Access access;
        if (access.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
            const BackendAccess decoded = decodeAccess(access);
            if (decoded.maySilence && decoded.role != BackendAccess::Role::Operator) {
                __builtin_trap();
            }
        }
    }
    return 0;
}
