// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// How much of Alertmanager's answers the backend keeps: everything another process sends is bounded before it is
// allocated. Past a count, the rest is counted (left out), never an error; text past its bound is cut and marked.
struct AlertmanagerLimits
{
    size_t maxAnswerBytes = size_t { 64 } << 20U; // one GET's answer (20,000 alerts with their annotations fit)
    size_t maxAlerts = 20000; // kept per poll; past it the least severe are left out
    size_t maxLabels
        = 64; // per alert, for labels and for annotations each; the rest left out (but those that place it)
    size_t maxTextBytes = 4096; // a label's or annotation's value, a silence's comment; cut past it, with "…"
    size_t maxSilences = 5000; // active and pending ones kept
    size_t maxMatchers = 32; // a silence with more is left out (its matchers cut would show it broader than it is)
    size_t maxRefs = 64; // an alert's silencedBy and inhibitedBy each
};

// An alert the backend sends (POST /api/v2/alerts), for AlertSender: what Alertmanager's API takes, nothing else.
struct OutgoingAlert
{
    std::vector<AlertLabel> labels; // alertname at least; names as Prometheus' ([a-zA-Z_][a-zA-Z0-9_]*)
    std::vector<AlertLabel> annotations; // summary, description, ...
    int64_t startsAtMs = 0; // 0: not sent (Alertmanager takes the time it receives it)
    int64_t endsAtMs = 0; // 0: not sent (Alertmanager resolves it after resolve_timeout); in the past: resolved
    std::string generatorUrl; // empty: not sent
};

// A silence to create (POST /api/v2/silences), checked by the caller (AlertmanagerWatch::check).
struct NewSilence
{
    std::vector<SilenceMatcher> matchers;
    int64_t startsAtMs = 0;
    int64_t endsAtMs = 0;
    std::string createdBy;
    std::string comment;
};

// Reads Alertmanager's API v2 answers (GET /api/v2/alerts, GET /api/v2/silences) with simdjson's on-demand API into
// core's types, and writes what the backend posts to it. A malformed answer (not JSON, a wrong type, a bad time, an
// unknown state, an id that is not short printable text) is refused whole with an error that says what and where;
// counts and text are bounded as AlertmanagerLimits says. Keeps simdjson's buffers between answers: one per thread.
class AlertmanagerJson
{
public:
    explicit AlertmanagerJson(const AlertmanagerLimits &limits = AlertmanagerLimits());
    ~AlertmanagerJson();
    AlertmanagerJson(const AlertmanagerJson &) = delete;
    AlertmanagerJson &operator=(const AlertmanagerJson &) = delete;

    const AlertmanagerLimits &limits() const { return m_limits; }

    struct Alerts
    {
        std::vector<AlertmanagerAlert> alerts; // in the answer's order, placement fields unset
        uint32_t leftOut = 0; // past maxAlerts: the least severe
    };
    struct Silences
    {
        std::vector<AlertmanagerSilence> silences; // active and pending, in the answer's order
        uint32_t leftOut = 0; // past maxSilences or maxMatchers
        uint32_t expired = 0; // read and not kept
    };

    // body may be grown for simdjson's padding. False with an error (out then holds nothing useful).
    bool decodeAlerts(std::string *body, Alerts *out, std::string *error);
    bool decodeSilences(std::string *body, Silences *out, std::string *error);

    // POST /api/v2/silences' answer, {"silenceID":"..."}.
    static bool decodeSilenceId(std::string_view body, std::string *id, std::string *error);
    // What an error answer (Alertmanager's 4xx: a JSON string, or {"code":..,"message":".."}) says, as printable
    // text of at most maxBytes; the body itself, made printable, when it is neither.
    static std::string errorReason(std::string_view body, size_t maxBytes = 512);

    static std::string encodeSilence(const NewSilence &silence);
    // A JSON array of alerts, as POST /api/v2/alerts takes.
    static std::string encodeAlerts(const std::vector<OutgoingAlert> &alerts);

    // RFC 3339 ("2026-12-06T15:34:07.864Z", "...+02:00"), strictly: the fields in their ranges, the day within its
    // month, at most 9 fraction digits, a zone. Go's zero time "0001-01-01T00:00:00Z" (Alertmanager's "none") is 0.
    static bool parseTime(std::string_view text, int64_t *ms);
    // UTC with milliseconds, "2026-12-06T15:34:07.864Z"; for 1970..9999.
    static std::string formatTime(int64_t ms);
    // The `severity` label's meaning: critical / page / error (any case): Critical; warning / warn: Warning; else Info.
    static EventSeverity severityOf(std::string_view label);
    // Whether text is an id or fingerprint as Alertmanager writes them: 1..64 bytes of printable ASCII, no space.
    static bool isIdText(std::string_view text);
    // text cut to at most maxBytes at a UTF-8 character's boundary, ending with "…" when cut (valid UTF-8 in, out).
    static std::string cutText(std::string_view text, size_t maxBytes);

private:
    struct Parser;
    std::unique_ptr<Parser> m_parser;
    AlertmanagerLimits m_limits;
};

} // namespace fleetscope::backend
