// SPDX-License-Identifier: Apache-2.0
// Alertmanager's answers as AlertmanagerWatch and AlertmanagerApi read them (backend/alerting/alertmanagerjson.h). The
// first byte picks the reader: 0 the alerts, 1 the silences, 2 a new silence's id, 3 an error answer's reason; the
// rest is the answer's body. Small bounds, so that the fuzzer reaches them; what a reader keeps is checked against
// them, and whatever it read is written back by the encoders and must read again.
#include "alerting/alertmanagerjson.h"

#include <string>

namespace {

using namespace fleetscope::backend;

AlertmanagerLimits smallLimits()
{
    AlertmanagerLimits limits;
    limits.maxAnswerBytes = 1 << 16;
    limits.maxAlerts = 4;
    limits.maxLabels = 4;
    limits.maxTextBytes = 32;
    limits.maxSilences = 4;
    limits.maxMatchers = 3;
    limits.maxRefs = 2;
    return limits;
}

bool within(const std::vector<AlertLabel> &labels, const AlertmanagerLimits &limits)
{
    if (labels.size() > limits.maxLabels) {
        return false;
    }
    for (const auto &l : labels) {
        if (l.name.size() > limits.maxTextBytes || l.value.size() > limits.maxTextBytes) {
            return false;
        }
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    // One decoder for every input, as a watch keeps one across its polls (simdjson's buffers are reused).
    static const AlertmanagerLimits limits = smallLimits();
    static AlertmanagerJson json(limits);
    std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);
    std::string error;
    switch (data[0] & 3U) {
    case 0: {
        AlertmanagerJson::Alerts out;
        const bool read = json.decodeAlerts(&body, &out, &error);
        if (!read && error.empty()) {
            __builtin_trap(); // refused without a reason
        }
        if (read) {
            if (out.alerts.size() > limits.maxAlerts) {
                __builtin_trap();
            }
            std::vector<OutgoingAlert> back;
            for (const auto &a : out.alerts) {
                if (!AlertmanagerJson::isIdText(a.fingerprint) || !within(a.labels, limits)
                    || !within(a.annotations, limits) || a.silencedBy.size() > limits.maxRefs
                    || a.inhibitedBy.size() > limits.maxRefs || a.generatorUrl.size() > limits.maxTextBytes) {
                    __builtin_trap(); // over a bound and kept
                }
                back.push_back({ a.labels, a.annotations, a.startsAtMs, a.endsAtMs, a.generatorUrl });
            }
            // What was read, written back as the sender writes, is JSON the silences' reader takes as a list (of
            // elements it refuses: alerts are not silences) or refuses with a reason.
            std::string encoded = AlertmanagerJson::encodeAlerts(back);
            AlertmanagerJson::Silences notSilences;
            if (!json.decodeSilences(&encoded, &notSilences, &error) && error.empty()) {
                __builtin_trap();
            }
        }
        break;
    }
    case 1: {
        AlertmanagerJson::Silences out;
        const bool read = json.decodeSilences(&body, &out, &error);
        if (!read && error.empty()) {
            __builtin_trap();
        }
        if (read) {
            if (out.silences.size() > limits.maxSilences) {
                __builtin_trap();
            }
            for (const auto &s : out.silences) {
                if (!AlertmanagerJson::isIdText(s.id) || s.matchers.size() > limits.maxMatchers
                    || s.comment.size() > limits.maxTextBytes || s.createdBy.size() > limits.maxTextBytes
                    || s.state == AlertmanagerSilence::State::Expired) {
                    __builtin_trap();
                }
                // Written back, the silence is JSON that reads as an object (not a list).
                std::string encoded
                    = AlertmanagerJson::encodeSilence({ s.matchers, s.startsAtMs, s.endsAtMs, s.createdBy, s.comment });
                AlertmanagerJson::Alerts notAlerts;
                if (json.decodeAlerts(&encoded, &notAlerts, &error)) {
                    __builtin_trap();
                }
            }
        }
        break;
    }
    case 2: {
        std::string id;
        if (AlertmanagerJson::decodeSilenceId(body, &id, &error) && !AlertmanagerJson::isIdText(id)) {
            __builtin_trap();
        }
        break;
    }
    default: {
        const std::string reason = AlertmanagerJson::errorReason(body, 64);
        if (reason.size() > 64) {
            __builtin_trap();
        }
        for (const char c : reason) {
            if (static_cast<unsigned char>(c) < 0x20) {
                __builtin_trap(); // a line break or control character would reach a log line
            }
        }
        break;
    }
    }
    // Times from anywhere: parsed strictly, and a parsed time formats back to one that parses.
    int64_t ms = 0;
    if (AlertmanagerJson::parseTime(body.substr(0, 40), &ms) && ms >= 0 && ms <= 253'402'300'799'999) {
        int64_t again = -1;
        if (!AlertmanagerJson::parseTime(AlertmanagerJson::formatTime(ms), &again) || again != ms) {
            __builtin_trap();
        }
    }
    return 0;
}
