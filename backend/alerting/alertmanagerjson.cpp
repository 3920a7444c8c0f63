// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertmanagerjson.h"

#include "formats/jsontext.h"

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>

#include <simdjson.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace od = simdjson::ondemand;
using Value = simdjson::simdjson_result<od::value>; // a value, or why it could not be had

struct AlertmanagerJson::Parser
{
    od::parser parser;
};

AlertmanagerJson::AlertmanagerJson(const AlertmanagerLimits &limits)
    : m_parser(std::make_unique<Parser>())
    , m_limits(limits)
{ }

AlertmanagerJson::~AlertmanagerJson() = default;

namespace {

// Go's zero time.Time, 0001-01-01T00:00:00Z, in Unix milliseconds: Alertmanager writes it for "no time".
constexpr int64_t goZeroTimeMs = -62'135'596'800'000;
constexpr int64_t maxTimeMs = 253'402'300'799'999; // 9999-12-31T23:59:59.999Z

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2 ? 1 : 0;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civilFromDays(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

bool isLeap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned daysInMonth(int64_t y, unsigned m)
{
    static constexpr std::array<unsigned, 12> days { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && isLeap(y) ? 29 : days.at(m - 1);
}

// n decimal digits at text[at], as a number; false unless all are digits.
bool digits(std::string_view text, size_t at, size_t n, unsigned *out)
{
    if (at + n > text.size()) {
        return false;
    }
    unsigned v = 0;
    for (size_t i = at; i < at + n; ++i) {
        const char c = text[i];
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    *out = v;
    return true;
}

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), bad bytes as U+FFFD. simdjson
// has checked every string it decoded; this is for what the backend's own callers hand the encoders.
std::string wellFormed(std::string_view text)
{
    if (simdjson::validate_utf8(text.data(), text.size())) {
        return std::string(text);
    }
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto b = static_cast<unsigned char>(text[i]);
        size_t n = b < 0x80 ? 1 : (b >> 5U) == 6 ? 2 : (b >> 4U) == 14 ? 3 : (b >> 3U) == 30 ? 4 : 0;
        if (n > 1 && (i + n > text.size() || !simdjson::validate_utf8(text.data() + i, n))) {
            n = 0;
        }
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

void appendText(std::string *out, std::string_view text)
{
    appendJsonString(out, wellFormed(text));
}

std::string printable(std::string_view text)
{
    std::string out = wellFormed(text);
    for (char &c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            c = ' ';
        }
    }
    return out;
}

// Why simdjson stopped, for an error: its own words.
std::string jsonError(simdjson::error_code e)
{
    return fmt::format("malformed or truncated JSON ({})", simdjson::error_message(e));
}

// Whether the whole document has been read: simdjson 3.0's on-demand iterator has no other way to tell trailing
// content after a root array or object.
bool atEnd(od::document &doc)
{
    return doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
}

// A field's string value.
simdjson::error_code readString(Value value, std::string_view *out)
{
    return value.get_string().get(*out);
}

} // namespace

bool AlertmanagerJson::parseTime(std::string_view text, int64_t *ms)
{
    // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
    unsigned year = 0;
    unsigned month = 0;
    unsigned day = 0;
    unsigned hour = 0;
    unsigned minute = 0;
    unsigned second = 0;
    if (text.size() < 20 || !digits(text, 0, 4, &year) || text[4] != '-' || !digits(text, 5, 2, &month)
        || text[7] != '-' || !digits(text, 8, 2, &day) || (text[10] != 'T' && text[10] != 't')
        || !digits(text, 11, 2, &hour) || text[13] != ':' || !digits(text, 14, 2, &minute) || text[16] != ':'
        || !digits(text, 17, 2, &second)) {
        return false;
    }
    // Go's time package takes no leap second (60) either.
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59
        || second > 59) {
        return false;
    }
    size_t at = 19;
    int64_t fractionMs = 0;
    if (text[at] == '.') {
        ++at;
        const size_t first = at;
        int64_t scale = 100;
        while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
            fractionMs += (text[at] - '0') * scale;
            scale /= 10;
            ++at;
        }
        if (at == first || at - first > 9) {
            return false;
        }
    }
    int64_t offsetMinutes = 0;
    if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
        ++at;
    } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
        unsigned oh = 0;
        unsigned om = 0;
        if (!digits(text, at + 1, 2, &oh) || at + 3 >= text.size() || text[at + 3] != ':'
            || !digits(text, at + 4, 2, &om) || oh > 23 || om > 59) {
            return false;
        }
        offsetMinutes = (text[at] == '-' ? -1 : 1) * static_cast<int64_t>(oh * 60 + om);
        at += 6;
    } else {
        return false;
    }
    if (at != text.size()) {
        return false;
    }
    const int64_t seconds
        = daysFromCivil(year, month, day) * 86400 + int64_t { hour } * 3600 + int64_t { minute } * 60 + second;
    const int64_t result = (seconds - offsetMinutes * 60) * 1000 + fractionMs;
    *ms = result == goZeroTimeMs ? 0 : result;
    return true;
}

std::string AlertmanagerJson::formatTime(int64_t ms)
{
    ms = std::clamp<int64_t>(ms, 0, maxTimeMs);
    const int64_t days = ms / 86'400'000;
    const int64_t inDay = ms % 86'400'000;
    int64_t y = 0;
    unsigned m = 0;
    unsigned d = 0;
    civilFromDays(days, &y, &m, &d);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", y, m, d, inDay / 3'600'000, inDay / 60'000 % 60,
        inDay / 1000 % 60, inDay % 1000);
}

EventSeverity AlertmanagerJson::severityOf(std::string_view label)
{
    std::string lower(label.substr(0, 16));
    std::transform(lower.begin(), lower.end(), lower.begin(),
        [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    if (label.size() <= 16 && (lower == "critical" || lower == "page" || lower == "error")) {
        return EventSeverity::Critical;
    }
    if (label.size() <= 16 && (lower == "warning" || lower == "warn")) {
        return EventSeverity::Warning;
    }
    return EventSeverity::Info;
}

bool AlertmanagerJson::isIdText(std::string_view text)
{
    return !text.empty() && text.size() <= 64
        && std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string AlertmanagerJson::cutText(std::string_view text, size_t maxBytes)
{
    if (text.size() <= maxBytes) {
        return std::string(text);
    }
    static constexpr std::string_view mark = "\xE2\x80\xA6"; // …
    size_t keep = maxBytes >= mark.size() ? maxBytes - mark.size() : maxBytes;
    // Back to the start of a character: continuation bytes are 10xxxxxx.
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0U) == 0x80U) {
        --keep;
    }
    std::string out(text.substr(0, keep));
    if (maxBytes >= mark.size()) {
        out += mark;
    }
    return out;
}

namespace {

// The labels an alert is named, ranked and placed by (AlertPlacement): kept past the bound on labels, so that an alert
// with many labels of its own is neither fleet-wide nor nameless for it.
bool placesAlert(std::string_view name)
{
    static constexpr std::string_view names[]
        = { "alertname", "severity", "Hostname", "hostname", "host", "node", "instance", "gpu", "UUID", "uuid",
              "pci_bus_id", "rack", "row", "domain", "pdu", "cooling_unit", "cdu", "leaf", "switch" };
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// Reads {"name":"value",...} into out, sorted by name, at most maxCount (the rest by the answer's order left out, but
// for the labels that place an alert), each name and value cut to maxBytes. `severity` (when not null) gets the
// `severity` label's meaning even when that label is past the bound.
simdjson::error_code readLabelObject(Value value, size_t maxCount, size_t maxBytes, std::vector<AlertLabel> *out,
    EventSeverity *severity, std::string *detail, const char *what)
{
    od::object object;
    if (auto e = value.get_object().get(object)) {
        *detail = fmt::format("\"{}s\" is not an object", what);
        return e;
    }
    for (auto field : object) {
        std::string_view name;
        if (auto e = field.unescaped_key().get(name)) {
            return e;
        }
        std::string_view text;
        if (auto e = readString(field.value(), &text)) {
            *detail = fmt::format("{} '{}' is not a string", what, printable(AlertmanagerJson::cutText(name, 64)));
            return e;
        }
        if (severity != nullptr && name == "severity") {
            *severity = AlertmanagerJson::severityOf(text);
        }
        if (out->size() < maxCount || (severity != nullptr && placesAlert(name) && out->size() < maxCount + 32)) {
            out->push_back({ AlertmanagerJson::cutText(name, maxBytes), AlertmanagerJson::cutText(text, maxBytes) });
        }
    }
    // Back to maxCount (what a console takes): the last of the others in the answer's order make room for those kept.
    for (size_t i = out->size(); out->size() > maxCount && i-- > 0;) {
        if (!placesAlert((*out)[i].name)) {
            out->erase(out->begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    std::stable_sort(
        out->begin(), out->end(), [](const AlertLabel &a, const AlertLabel &b) { return a.name < b.name; });
    // A name twice (no Alertmanager writes it; a JSON object may hold it): the first kept.
    out->erase(std::unique(
                   out->begin(), out->end(), [](const AlertLabel &a, const AlertLabel &b) { return a.name == b.name; }),
        out->end());
    return simdjson::SUCCESS;
}

// Reads ["id",...], at most maxCount kept, each an id.
simdjson::error_code readIds(
    Value value, size_t maxCount, std::vector<std::string> *out, std::string *detail, const char *what)
{
    od::array array;
    if (auto e = value.get_array().get(array)) {
        *detail = fmt::format("\"{}\" is not an array", what);
        return e;
    }
    for (auto item : array) {
        std::string_view id;
        if (auto e = item.get_string().get(id)) {
            *detail = fmt::format("\"{}\" holds something else than strings", what);
            return e;
        }
        if (!AlertmanagerJson::isIdText(id)) {
            *detail = fmt::format("\"{}\" holds '{}', not an id", what, printable(AlertmanagerJson::cutText(id, 80)));
            return simdjson::INCORRECT_TYPE;
        }
        if (out->size() < maxCount) {
            out->emplace_back(id);
        }
    }
    return simdjson::SUCCESS;
}

simdjson::error_code readTime(Value value, int64_t *ms, std::string *detail, const char *what)
{
    std::string_view text;
    if (auto e = readString(value, &text)) {
        *detail = fmt::format("\"{}\" is not a string", what);
        return e;
    }
    if (!AlertmanagerJson::parseTime(text, ms)) {
        *detail
            = fmt::format("\"{}\" '{}' is not an RFC 3339 time", what, printable(AlertmanagerJson::cutText(text, 64)));
        return simdjson::INCORRECT_TYPE;
    }
    return simdjson::SUCCESS;
}

// Alertmanager's "status" of an alert: {"state":..., "silencedBy":[...], "inhibitedBy":[...]}.
simdjson::error_code readAlertStatus(Value value, size_t maxRefs, AlertmanagerAlert *alert, std::string *detail)
{
    od::object object;
    if (auto e = value.get_object().get(object)) {
        *detail = "\"status\" is not an object";
        return e;
    }
    bool haveState = false;
    for (auto field : object) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return e;
        }
        simdjson::error_code e = simdjson::SUCCESS;
        if (key == "state") {
            std::string_view state;
            if ((e = readString(field.value(), &state))) {
                *detail = "\"state\" is not a string";
                return e;
            }
            // Alertmanager's OpenAPI names these three; an unprocessed alert has not been through the silences yet.
            if (state == "active" || state == "unprocessed") {
                alert->state = AlertmanagerAlert::State::Active;
            } else if (state == "suppressed") {
                alert->state = AlertmanagerAlert::State::Suppressed;
            } else {
                *detail = fmt::format("unknown state '{}'", printable(AlertmanagerJson::cutText(state, 32)));
                return simdjson::INCORRECT_TYPE;
            }
            haveState = true;
        } else if (key == "silencedBy") {
            e = readIds(field.value(), maxRefs, &alert->silencedBy, detail, "silencedBy");
        } else if (key == "inhibitedBy") {
            e = readIds(field.value(), maxRefs, &alert->inhibitedBy, detail, "inhibitedBy");
        }
        if (e) {
            return e;
        }
    }
    if (!haveState) {
        *detail = "\"status\" has no \"state\"";
        return simdjson::NO_SUCH_FIELD;
    }
    return simdjson::SUCCESS;
}

simdjson::error_code readAlert(
    Value value, const AlertmanagerLimits &limits, AlertmanagerAlert *alert, std::string *detail)
{
    od::object object;
    if (auto e = value.get_object().get(object)) {
        *detail = "not an object";
        return e;
    }
    bool haveFingerprint = false;
    bool haveLabels = false;
    bool haveStatus = false;
    for (auto field : object) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return e;
        }
        simdjson::error_code e = simdjson::SUCCESS;
        if (key == "fingerprint") {
            std::string_view text;
            if ((e = readString(field.value(), &text)) || !AlertmanagerJson::isIdText(text)) {
                *detail = "\"fingerprint\" is not short printable text";
                return e ? e : simdjson::INCORRECT_TYPE;
            }
            alert->fingerprint = text;
            haveFingerprint = true;
        } else if (key == "labels") {
            alert->severity = EventSeverity::Info;
            e = readLabelObject(field.value(), limits.maxLabels, limits.maxTextBytes, &alert->labels, &alert->severity,
                detail, "label");
            haveLabels = true;
        } else if (key == "annotations") {
            e = readLabelObject(field.value(), limits.maxLabels, limits.maxTextBytes, &alert->annotations, nullptr,
                detail, "annotation");
        } else if (key == "status") {
            e = readAlertStatus(field.value(), limits.maxRefs, alert, detail);
            haveStatus = true;
        } else if (key == "startsAt") {
            e = readTime(field.value(), &alert->startsAtMs, detail, "startsAt");
        } else if (key == "endsAt") {
            e = readTime(field.value(), &alert->endsAtMs, detail, "endsAt");
        } else if (key == "updatedAt") {
            e = readTime(field.value(), &alert->updatedAtMs, detail, "updatedAt");
        } else if (key == "generatorURL") {
            std::string_view text;
            if ((e = readString(field.value(), &text))) {
                *detail = "\"generatorURL\" is not a string";
                return e;
            }
            alert->generatorUrl = AlertmanagerJson::cutText(text, limits.maxTextBytes);
        }
        if (e) {
            return e;
        }
    }
    if (!haveFingerprint || !haveLabels || !haveStatus) {
        *detail = fmt::format("no \"{}\"", !haveFingerprint ? "fingerprint" : !haveLabels ? "labels" : "status");
        return simdjson::NO_SUCH_FIELD;
    }
    return simdjson::SUCCESS;
}

simdjson::error_code readMatcher(Value value, size_t maxBytes, SilenceMatcher *m, std::string *detail)
{
    od::object object;
    if (auto e = value.get_object().get(object)) {
        *detail = "a matcher is not an object";
        return e;
    }
    bool haveName = false;
    bool haveValue = false;
    m->isEqual = true; // older Alertmanagers do not write it
    for (auto field : object) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return e;
        }
        simdjson::error_code e = simdjson::SUCCESS;
        std::string_view text;
        if (key == "name" || key == "value") {
            if ((e = readString(field.value(), &text))) {
                *detail = fmt::format("a matcher's \"{}\" is not a string", key);
                return e;
            }
            (key == "name" ? m->name : m->value) = AlertmanagerJson::cutText(text, maxBytes);
            (key == "name" ? haveName : haveValue) = true;
        } else if (key == "isRegex" || key == "isEqual") {
            if ((e = field.value().get_bool().get(key == "isRegex" ? m->isRegex : m->isEqual))) {
                *detail = fmt::format("a matcher's \"{}\" is not true or false", key);
                return e;
            }
        }
    }
    if (!haveName || !haveValue) {
        *detail = fmt::format("a matcher has no \"{}\"", haveName ? "value" : "name");
        return simdjson::NO_SUCH_FIELD;
    }
    return simdjson::SUCCESS;
}

simdjson::error_code readSilenceState(Value value, AlertmanagerSilence::State *state, std::string *detail)
{
    od::object status;
    if (auto e = value.get_object().get(status)) {
        *detail = "\"status\" is not an object";
        return e;
    }
    bool haveState = false;
    for (auto field : status) {
        std::string_view name;
        if (auto e = field.unescaped_key().get(name)) {
            return e;
        }
        if (name != "state") {
            continue;
        }
        std::string_view text;
        if (auto e = readString(field.value(), &text)) {
            *detail = "\"state\" is not a string";
            return e;
        }
        if (text == "active") {
            *state = AlertmanagerSilence::State::Active;
        } else if (text == "pending") {
            *state = AlertmanagerSilence::State::Pending;
        } else if (text == "expired") {
            *state = AlertmanagerSilence::State::Expired;
        } else {
            *detail = fmt::format("unknown state '{}'", printable(AlertmanagerJson::cutText(text, 32)));
            return simdjson::INCORRECT_TYPE;
        }
        haveState = true;
    }
    if (!haveState) {
        *detail = "\"status\" has no \"state\"";
        return simdjson::NO_SUCH_FIELD;
    }
    return simdjson::SUCCESS;
}

// A silence's matchers, at most maxMatchers kept; *tooMany when there were more (all are read, to check them).
simdjson::error_code readMatchers(
    Value value, const AlertmanagerLimits &limits, std::vector<SilenceMatcher> *out, bool *tooMany, std::string *detail)
{
    od::array matchers;
    if (auto e = value.get_array().get(matchers)) {
        *detail = "\"matchers\" is not an array";
        return e;
    }
    for (auto item : matchers) {
        SilenceMatcher matcher;
        if (auto e = readMatcher(item, limits.maxTextBytes, &matcher, detail)) {
            return e;
        }
        if (out->size() < limits.maxMatchers) {
            out->push_back(std::move(matcher));
        } else {
            *tooMany = true;
        }
    }
    return simdjson::SUCCESS;
}

// One silence; *tooManyMatchers when it has more than the bound (it is then read to its end, its matchers not kept).
simdjson::error_code readSilence(Value value, const AlertmanagerLimits &limits, AlertmanagerSilence *silence,
    bool *tooManyMatchers, std::string *detail)
{
    od::object object;
    if (auto e = value.get_object().get(object)) {
        *detail = "not an object";
        return e;
    }
    bool haveId = false;
    bool haveState = false;
    bool haveMatchers = false;
    for (auto field : object) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return e;
        }
        simdjson::error_code e = simdjson::SUCCESS;
        std::string_view text;
        if (key == "id") {
            if ((e = readString(field.value(), &text)) || !AlertmanagerJson::isIdText(text)) {
                *detail = "\"id\" is not short printable text";
                return e ? e : simdjson::INCORRECT_TYPE;
            }
            silence->id = text;
            haveId = true;
        } else if (key == "status") {
            e = readSilenceState(field.value(), &silence->state, detail);
            haveState = true;
        } else if (key == "matchers") {
            e = readMatchers(field.value(), limits, &silence->matchers, tooManyMatchers, detail);
            haveMatchers = true;
        } else if (key == "createdBy" || key == "comment") {
            if ((e = readString(field.value(), &text))) {
                *detail = fmt::format("\"{}\" is not a string", key);
                return e;
            }
            (key == "createdBy" ? silence->createdBy : silence->comment)
                = AlertmanagerJson::cutText(text, limits.maxTextBytes);
        } else if (key == "startsAt") {
            e = readTime(field.value(), &silence->startsAtMs, detail, "startsAt");
        } else if (key == "endsAt") {
            e = readTime(field.value(), &silence->endsAtMs, detail, "endsAt");
        } else if (key == "updatedAt") {
            e = readTime(field.value(), &silence->updatedAtMs, detail, "updatedAt");
        }
        if (e) {
            return e;
        }
    }
    if (!haveId || !haveState || !haveMatchers) {
        *detail = fmt::format("no \"{}\"", !haveId ? "id" : !haveState ? "status" : "matchers");
        return simdjson::NO_SUCH_FIELD;
    }
    return simdjson::SUCCESS;
}

using ElementFn = std::function<simdjson::error_code(Value element, size_t index, std::string *detail)>;

// The top-level array both lists are, each element to elementFn; an error names the element by its index (and what
// elementFn said).
bool readList(od::parser &parser, std::string *body, size_t maxBytes, const char *what, const ElementFn &elementFn,
    std::string *error)
{
    if (body->size() > maxBytes) {
        *error = fmt::format("{}: answer of {} bytes is over the bound of {} bytes", what, body->size(), maxBytes);
        return false;
    }
    const size_t length = body->size();
    body->reserve(length + simdjson::SIMDJSON_PADDING);
    size_t index = 0;
    bool inElement = false;
    std::string detail;
    auto fail = [&](simdjson::error_code e) {
        const std::string why = detail.empty() ? jsonError(e) : detail;
        *error = inElement ? fmt::format("{}: element {}: {}", what, index, why) : fmt::format("{}: {}", what, why);
        return false;
    };
    od::document doc;
    if (auto e = parser.iterate(body->data(), length, body->capacity()).get(doc)) {
        return fail(e);
    }
    od::array array;
    if (auto e = doc.get_array().get(array)) {
        // simdjson's on-demand reader looks at the first character only: an error page is "not an array" to it.
        const size_t first = body->find_first_not_of(" \t\r\n");
        const char c = first < length ? (*body)[first] : '\0';
        if (e == simdjson::INCORRECT_TYPE && std::string_view("{\"tfn-0123456789").find(c) != std::string_view::npos) {
            detail = "not a JSON array";
        } else if (e == simdjson::INCORRECT_TYPE) {
            detail = fmt::format("not JSON: '{}'", printable(AlertmanagerJson::cutText(body->substr(first, 64), 64)));
        }
        return fail(e);
    }
    for (auto item : array) {
        inElement = true;
        if (auto e = elementFn(item, index, &detail)) {
            return fail(e);
        }
        ++index;
    }
    inElement = false;
    if (!atEnd(doc)) {
        detail = "more after the array";
        return fail(simdjson::TRAILING_CONTENT);
    }
    return true;
}

} // namespace

bool AlertmanagerJson::decodeAlerts(std::string *body, Alerts *out, std::string *error)
{
    out->alerts.clear();
    out->leftOut = 0;
    // Indexes of the kept alerts by severity, so that past the bound a more severe alert takes a less severe one's
    // place at once.
    std::array<std::vector<size_t>, 3> bySeverity;
    const auto element = [&](Value value, size_t, std::string *detail) {
        AlertmanagerAlert alert;
        if (auto e = readAlert(value, m_limits, &alert, detail)) {
            if (!alert.fingerprint.empty()) {
                *detail = fmt::format("alert {}: {}", alert.fingerprint, *detail);
            }
            return e;
        }
        const auto severity = static_cast<size_t>(alert.severity);
        if (out->alerts.size() < m_limits.maxAlerts) {
            bySeverity.at(severity).push_back(out->alerts.size());
            out->alerts.push_back(std::move(alert));
            return simdjson::SUCCESS;
        }
        ++out->leftOut;
        for (size_t lower = 0; lower < severity; ++lower) {
            if (!bySeverity.at(lower).empty()) {
                const size_t slot = bySeverity.at(lower).back();
                bySeverity.at(lower).pop_back();
                out->alerts[slot] = std::move(alert);
                bySeverity.at(severity).push_back(slot);
                break;
            }
        }
        return simdjson::SUCCESS;
    };
    if (!readList(m_parser->parser, body, m_limits.maxAnswerBytes, "alerts", element, error)) {
        out->alerts.clear();
        return false;
    }
    return true;
}

bool AlertmanagerJson::decodeSilences(std::string *body, Silences *out, std::string *error)
{
    out->silences.clear();
    out->leftOut = 0;
    out->expired = 0;
    const auto element = [&](Value value, size_t, std::string *detail) {
        AlertmanagerSilence silence;
        bool tooManyMatchers = false;
        if (auto e = readSilence(value, m_limits, &silence, &tooManyMatchers, detail)) {
            if (!silence.id.empty()) {
                *detail = fmt::format("silence {}: {}", silence.id, *detail);
            }
            return e;
        }
        if (silence.state == AlertmanagerSilence::State::Expired) {
            ++out->expired;
        } else if (tooManyMatchers || out->silences.size() >= m_limits.maxSilences) {
            ++out->leftOut;
        } else {
            out->silences.push_back(std::move(silence));
        }
        return simdjson::SUCCESS;
    };
    if (!readList(m_parser->parser, body, m_limits.maxAnswerBytes, "silences", element, error)) {
        out->silences.clear();
        return false;
    }
    return true;
}

bool AlertmanagerJson::decodeSilenceId(std::string_view body, std::string *id, std::string *error)
{
    if (body.size() > 4096) {
        *error = fmt::format("the answer to a new silence is {} bytes, not {{\"silenceID\":\"...\"}}", body.size());
        return false;
    }
    od::parser parser(8192);
    const simdjson::padded_string padded(body);
    od::document doc;
    od::object object;
    std::string_view text;
    bool found = false;
    simdjson::error_code e = parser.iterate(padded).get(doc);
    if (!e) {
        e = doc.get_object().get(object);
    }
    if (!e) {
        for (auto field : object) {
            std::string_view key;
            if ((e = field.unescaped_key().get(key))) {
                break;
            }
            if (key == "silenceID") {
                if ((e = field.value().get_string().get(text))) {
                    break;
                }
                found = true;
            }
        }
    }
    if (!e && !atEnd(doc)) {
        e = simdjson::TRAILING_CONTENT;
    }
    if (e || !found || !isIdText(text)) {
        *error = fmt::format(
            "the answer to a new silence is not {{\"silenceID\":\"...\"}}: '{}'", printable(cutText(body, 200)));
        return false;
    }
    *id = text;
    return true;
}

std::string AlertmanagerJson::errorReason(std::string_view body, size_t maxBytes)
{
    std::string reason;
    if (body.size() <= (size_t { 1 } << 20U)) {
        od::parser parser(size_t { 1 } << 20U);
        const simdjson::padded_string padded(body);
        od::document doc;
        if (!parser.iterate(padded).get(doc)) {
            std::string_view text;
            od::object object;
            od::json_type type;
            if (!doc.type().get(type) && type == od::json_type::string) {
                if (!doc.get_string().get(text)) {
                    reason = text;
                }
            } else if (!doc.get_object().get(object)) {
                for (auto field : object) {
                    std::string_view key;
                    if (field.unescaped_key().get(key)) {
                        break;
                    }
                    if ((key == "message" || key == "error") && !field.value().get_string().get(text)) {
                        reason = text;
                        break;
                    }
                }
            }
        }
    }
    if (reason.empty()) {
        reason = body.substr(0, std::min(body.size(), maxBytes + 4));
    }
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) {
        reason.pop_back();
    }
    return cutText(printable(reason), maxBytes);
}

std::string AlertmanagerJson::encodeSilence(const NewSilence &silence)
{
    std::string out = "{\"matchers\":[";
    for (size_t i = 0; i < silence.matchers.size(); ++i) {
        const SilenceMatcher &m = silence.matchers[i];
        out += i == 0 ? "{\"name\":" : ",{\"name\":";
        appendText(&out, m.name);
        out += ",\"value\":";
        appendText(&out, m.value);
        out += m.isRegex ? ",\"isRegex\":true" : ",\"isRegex\":false";
        out += m.isEqual ? ",\"isEqual\":true}" : ",\"isEqual\":false}";
    }
    out += "],\"startsAt\":\"" + formatTime(silence.startsAtMs) + "\",\"endsAt\":\"" + formatTime(silence.endsAtMs)
        + "\",\"createdBy\":";
    appendText(&out, silence.createdBy);
    out += ",\"comment\":";
    appendText(&out, silence.comment);
    out += '}';
    return out;
}

namespace {

void appendLabelObject(std::string *out, const std::vector<AlertLabel> &labels)
{
    out->push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) {
            out->push_back(',');
        }
        appendText(out, labels[i].name);
        out->push_back(':');
        appendText(out, labels[i].value);
    }
    out->push_back('}');
}

} // namespace

std::string AlertmanagerJson::encodeAlerts(const std::vector<OutgoingAlert> &alerts)
{
    std::string out = "[";
    for (size_t i = 0; i < alerts.size(); ++i) {
        const OutgoingAlert &a = alerts[i];
        out += i == 0 ? "{\"labels\":" : ",{\"labels\":";
        appendLabelObject(&out, a.labels);
        out += ",\"annotations\":";
        appendLabelObject(&out, a.annotations);
        if (a.startsAtMs != 0) {
            out += ",\"startsAt\":\"" + formatTime(a.startsAtMs) + '"';
        }
        if (a.endsAtMs != 0) {
            out += ",\"endsAt\":\"" + formatTime(a.endsAtMs) + '"';
        }
        if (!a.generatorUrl.empty()) {
            out += ",\"generatorURL\":";
            appendText(&out, a.generatorUrl);
        }
        out += '}';
    }
    out += ']';
    return out;
}

} // namespace fleetscope::backend
