// SPDX-License-Identifier: Apache-2.0
#include "service/auditlog.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
void toStderr(const std::string &line)
{
    fmt::print(stderr, "{}\n", line);
}

std::chrono::system_clock::time_point wallNow()
{
    return std::chrono::system_clock::now();
}

// The length of the UTF-8 character at the start of text and its code point; 0 when it does not start with one
// (a stray continuation byte, a sequence cut short, an overlong form, a surrogate, past U+10FFFF).
size_t utf8At(std::string_view text, char32_t *point)
{
    const auto byte = [&text](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    size_t length = 0;
    char32_t value = 0;
    char32_t least = 0;
    if (lead < 0x80) {
        *point = lead;
        return 1;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        value = lead & 0x1f;
        least = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        value = lead & 0x0f;
        least = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        value = lead & 0x07;
        least = 0x10000;
    } else {
        return 0;
    }
    if (text.size() < length) {
        return 0;
    }
    for (size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xc0) != 0x80) {
            return 0;
        }
        value = (value << 6) | (byte(i) & 0x3f);
    }
    if (value < least || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) {
        return 0;
    }
    *point = value;
    return length;
}

// Characters a terminal or a log viewer shows as something else, or as nothing: C1 controls, and the formatting ones
// that reorder text (bidirectional embeddings, overrides and isolates: "Trojan Source"), hide it (zero-width ones,
// the byte order mark) or break a line (the line and paragraph separators).
bool hidesOrReorders(char32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x61c || (c >= 0x200b && c <= 0x200f)
        || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}
} // namespace

AuditLog::AuditLog(Log log, Clock clock)
    : m_log(log ? std::move(log) : Log(toStderr))
    , m_clock(clock ? std::move(clock) : Clock(wallNow))
    , m_notDoneRefilled(m_clock())
{ }

std::string AuditLog::quoted(std::string_view value, size_t maxBytes)
{
    std::string out = "\"";
    // Where a cut goes: the last character's end that leaves room for the mark ("...(N bytes)") and the quote.
    const size_t room = maxBytes > 26 ? maxBytes - 26 : 0;
    size_t cutAt = out.size();
    size_t at = 0;
    // Built no further than the bound: a value may be a hostile client's megabytes.
    while (at < value.size() && out.size() < maxBytes) {
        char32_t point = 0;
        const size_t length = utf8At(value.substr(at), &point);
        std::string piece;
        if (length == 0) {
            piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(value[at]));
        } else if (point == '"' || point == '\\') {
            piece = { '\\', static_cast<char>(point) };
        } else if (point == '\n') {
            piece = "\\n";
        } else if (point == '\r') {
            piece = "\\r";
        } else if (point == '\t') {
            piece = "\\t";
        } else if (point < 0x20 || point == 0x7f || hidesOrReorders(point)) {
            piece = fmt::format("\\u{{{:04x}}}", static_cast<uint32_t>(point));
        } else {
            piece = value.substr(at, length);
        }
        out += piece;
        if (out.size() <= room) {
            cutAt = out.size();
        }
        at += length == 0 ? 1 : length;
    }
    if (at == value.size() && out.size() + 1 <= maxBytes) {
        out += '"';
        return out;
    }
    out.resize(cutAt);
    out += fmt::format("...({} bytes)\"", value.size());
    return out;
}

std::string AuditLog::isoTime(std::chrono::system_clock::time_point time)
{
    const auto ms = std::chrono::floor<std::chrono::milliseconds>(time.time_since_epoch()).count();
    const auto seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    std::tm utc {};
    gmtime_r(&seconds, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
        utc.tm_hour, utc.tm_min, utc.tm_sec, ((ms % 1000) + 1000) % 1000);
}

std::string AuditLog::matchersText(const std::vector<SilenceMatcher> &matchers)
{
    std::string out;
    for (const auto &matcher : matchers) {
        if (!out.empty()) {
            out += ", ";
        }
        const char *op = matcher.isEqual ? (matcher.isRegex ? "=~" : "=") : (matcher.isRegex ? "!~" : "!=");
        // Quoted inside as Alertmanager writes a matcher; the whole is quoted again as the line's value.
        std::string value;
        for (const char c : matcher.value) {
            if (c == '"' || c == '\\') {
                value += '\\';
            }
            value += c;
        }
        out += fmt::format("{}{}\"{}\"", matcher.name, op, value);
        if (out.size() > maxMatchersBytes * 4) {
            break; // cut by quoted() anyway; no need to build the rest of a huge list
        }
    }
    return out;
}

std::string AuditLog::durationText(std::chrono::milliseconds duration)
{
    int64_t left = duration.count();
    std::string out = left < 0 ? "-" : "";
    // -left of the most negative count overflows; a silence is never that long.
    left = left < 0 ? -std::max<int64_t>(left, -INT64_MAX) : left;
    const int64_t days = left / 86'400'000;
    const int64_t hours = left / 3'600'000 % 24;
    const int64_t minutes = left / 60'000 % 60;
    const int64_t seconds = left / 1000 % 60;
    const int64_t millis = left % 1000;
    if (days > 0) {
        out += fmt::format("{}d", days);
    }
    if (hours > 0) {
        out += fmt::format("{}h", hours);
    }
    if (minutes > 0) {
        out += fmt::format("{}m", minutes);
    }
    if (millis > 0) {
        std::string fraction = fmt::format("{:03}", millis);
        fraction.erase(fraction.find_last_not_of('0') + 1);
        out += fmt::format("{}.{}s", seconds, fraction);
    } else if (seconds > 0 || left == 0) {
        out += fmt::format("{}s", seconds);
    }
    return out;
}

std::string_view AuditLog::outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Done:
        return "done";
    case Outcome::Refused:
        return "refused";
    case Outcome::Invalid:
        return "invalid";
    case Outcome::NotFound:
        return "not-found";
    case Outcome::Failed:
        return "failed";
    }
    return "failed";
}

void AuditLog::createSilence(
    const Caller &caller, const SilenceRequest &request, Outcome outcome, std::string_view result)
{
    const std::string matchers = matchersText(request.matchers);
    const std::string duration = durationText(request.duration);
    record(caller, "create-silence",
        { { "matchers", matchers, maxMatchersBytes }, { "duration", duration }, { "comment", request.comment } },
        outcome, "silence", result);
}

void AuditLog::expireSilence(const Caller &caller, std::string_view id, Outcome outcome, std::string_view result)
{
    record(caller, "expire-silence", { { "silence", id } }, outcome, {}, result);
}

void AuditLog::record(const Caller &caller, std::string_view action, const std::vector<Field> &details, Outcome outcome,
    std::string_view resultKey, std::string_view result)
{
    std::string line = fmt::format(" who={} role={} address={} action={}", quoted(caller.name, 2 * maxCallerNameBytes),
        roleName(caller.role), quoted(caller.address, 128), action);
    for (const auto &field : details) {
        line += fmt::format(" {}={}", field.key, quoted(field.value, field.maxBytes));
    }
    line += fmt::format(" outcome={}", outcomeName(outcome));
    if (outcome != Outcome::Done) {
        line += fmt::format(" reason={}", quoted(result));
    } else if (!resultKey.empty() && !result.empty()) {
        line += fmt::format(" {}={}", resultKey, quoted(result, 256));
    }

    std::lock_guard lock(m_mutex);
    // Taken under the lock, so that the lines are in the order of their times.
    const auto now = m_clock();
    if (outcome != Outcome::Done) {
        // The wall clock may step back: no refill then, rather than a negative one.
        const double elapsed = std::max(0.0, std::chrono::duration<double>(now - m_notDoneRefilled).count());
        m_notDoneBudget = std::min<double>(notDoneLinesBurst, m_notDoneBudget + elapsed);
        m_notDoneRefilled = now;
        if (m_notDoneBudget < 1) {
            ++m_notDoneLeftOut;
            return;
        }
        m_notDoneBudget -= 1;
    }
    std::string whole = fmt::format("audit: time={}{}", isoTime(now), line);
    if (m_notDoneLeftOut > 0) {
        whole += fmt::format(" left_out={}", std::exchange(m_notDoneLeftOut, 0));
    }
    m_log(whole);
}

} // namespace fleetscope::backend
