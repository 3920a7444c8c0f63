// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"
#include "service/accessgate.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// Who wrote what and when: one line for each attempt at a write (a silence made or expired through the API), granted
// or refused, with its outcome. Written through a log function, stderr by default, which under systemd is the
// journal: `journalctl -u fleetscope-backend --grep '^audit: '`.
//
// A line, in logfmt (key=value, one space between; what the journal's readers, Loki and grep take apart):
//
//   audit: time=2026-12-06T15:33:48.123Z who="alice" role=operator address="10.0.0.7" action=create-silence
//     matchers="hostname=\"r01-k01-n01\", gpu=~\"3|4\"" duration="2h" comment="PSU swap" outcome=done silence="8a7c..."
//
// (one line; cut here to fit). In order: time, UTC, ISO 8601 to the millisecond; who, role and address: the caller as
// the gate found it (AccessGate::Caller); action; the action's details (createSilence: matchers, Alertmanager's own
// notation, duration, comment; expireSilence: silence); outcome: done, refused (a viewer: mayWrite), invalid (the
// request was refused as malformed), not-found, failed (Alertmanager did not do it); then, when done, what was made
// (silence: its id), else reason: why, for people. Last, when lines of attempts not done were left out before this one,
// left_out=N: those (refused, invalid, not found, failed) are at most notDoneLinesBurst, then one a second, so that a
// client retrying in a loop does not flood the journal, whose own rate limit would then drop the lines that matter;
// every write done has its line.
//
// time, role, action, outcome and left_out are words of the backend's own; every other value is quoted: between
// double quotes, '"' and '\' escaped with a '\', a newline, a carriage return and a tab as \n, \r and \t, any other
// control character (C0, DEL, C1) and the Unicode characters that reorder or hide text on a terminal (bidirectional
// overrides and isolates, zero-width ones, line and paragraph separators) as \u{XXXX}, and a byte that is not UTF-8 as
// \xHH: a comment is a user's words and must not forge a line nor hide one. A value whose quoted form is longer than
// its bound (maxValueBytes, the matchers maxMatchersBytes) is cut on a character's boundary and ends with
// "...(N bytes)" inside its quotes, N the length of the whole value: a line stays under 8 KiB.
//
// Thread-safe: lines are written whole, one at a time, in the order of their times.
class AuditLog
{
public:
    using Log = std::function<void(const std::string &)>;
    using Clock = std::function<std::chrono::system_clock::time_point()>;

    static constexpr size_t maxValueBytes = 1024;
    static constexpr size_t maxMatchersBytes = 4096;

    enum class Outcome : uint8_t { Done, Refused, Invalid, NotFound, Failed };
    struct Field
    {
        std::string_view key; // lower case words and '_', the backend's own
        std::string_view value;
        size_t maxBytes = maxValueBytes; // of the value as written, quotes and escapes included
    };
    static constexpr int notDoneLinesBurst = 60;

    // log: gets each line, "audit: " first (stderr by default); clock: the wall clock by default.
    explicit AuditLog(Log log = {}, Clock clock = {});

    // A silence asked for: done with its id in result; otherwise result says why.
    void createSilence(const Caller &caller, const SilenceRequest &request, Outcome outcome, std::string_view result);
    // A silence to expire: result says why when not done.
    void expireSilence(const Caller &caller, std::string_view id, Outcome outcome, std::string_view result);
    // Any write: action a word of the backend's own ("create-silence"); result a field of its own when done (resultKey:
    // "silence"; none when empty), "reason" otherwise.
    void record(const Caller &caller, std::string_view action, const std::vector<Field> &details, Outcome outcome,
        std::string_view resultKey, std::string_view result);

    // The pieces, for tests and for other logs that quote a user's words.
    static std::string quoted(std::string_view value, size_t maxBytes = maxValueBytes);
    static std::string isoTime(std::chrono::system_clock::time_point time);
    // "hostname=\"r01\", gpu=~\"3|4\", job!=\"x\"": Alertmanager's notation, values escaped as Go's %q would.
    static std::string matchersText(const std::vector<SilenceMatcher> &matchers);
    // "2h", "1h30m", "7d", "45s", "1.5s".
    static std::string durationText(std::chrono::milliseconds duration);
    static std::string_view outcomeName(Outcome outcome);

private:
    Log m_log;
    Clock m_clock;
    std::mutex m_mutex; // guards the budget below, and orders the lines
    double m_notDoneBudget = notDoneLinesBurst;
    std::chrono::system_clock::time_point m_notDoneRefilled {};
    uint64_t m_notDoneLeftOut = 0;
};

} // namespace fleetscope::backend
