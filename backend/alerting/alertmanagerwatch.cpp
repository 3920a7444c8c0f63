// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertmanagerwatch.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <simdjson.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

constexpr size_t maxMatchers = 32;
constexpr size_t maxMatcherValueBytes = 1024;
constexpr size_t maxLabelNameBytes = 256;
constexpr size_t maxCommentBytes = 1024;
constexpr size_t maxCreatorBytes = 256;
constexpr std::chrono::milliseconds minDuration = std::chrono::minutes(1);
constexpr std::chrono::milliseconds maxDuration = std::chrono::hours(24 * 30);
constexpr std::chrono::milliseconds minPollInterval { 100 };

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::chrono::microseconds since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
}

bool sameLabels(const std::vector<AlertLabel> &a, const std::vector<AlertLabel> &b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
        [](const AlertLabel &x, const AlertLabel &y) { return x.name == y.name && x.value == y.value; });
}

bool sameAlert(const AlertmanagerAlert &a, const AlertmanagerAlert &b)
{
    return a.fingerprint == b.fingerprint && a.state == b.state && a.startsAtMs == b.startsAtMs
        && a.endsAtMs == b.endsAtMs && a.updatedAtMs == b.updatedAtMs && a.severity == b.severity
        && a.gpuCount == b.gpuCount && a.node == b.node && a.domain == b.domain && a.silencedBy == b.silencedBy
        && a.inhibitedBy == b.inhibitedBy && a.generatorUrl == b.generatorUrl && a.placedBy == b.placedBy
        && a.gpuRuns == b.gpuRuns && sameLabels(a.labels, b.labels) && sameLabels(a.annotations, b.annotations);
}

bool sameSilence(const AlertmanagerSilence &a, const AlertmanagerSilence &b)
{
    return a.id == b.id && a.state == b.state && a.startsAtMs == b.startsAtMs && a.endsAtMs == b.endsAtMs
        && a.updatedAtMs == b.updatedAtMs && a.createdBy == b.createdBy && a.comment == b.comment
        && std::equal(a.matchers.begin(), a.matchers.end(), b.matchers.begin(), b.matchers.end(),
            [](const SilenceMatcher &x, const SilenceMatcher &y) {
                return x.name == y.name && x.value == y.value && x.isRegex == y.isRegex && x.isEqual == y.isEqual;
            });
}

// The status as consoles show it, but for lastSuccessMs: a poll that reads the same as the last is not news.
bool sameStatus(const AlertmanagerStatus &a, const AlertmanagerStatus &b)
{
    return a.url == b.url && a.reachable == b.reachable && a.error == b.error && a.pollIntervalMs == b.pollIntervalMs
        && a.alertsLeftOut == b.alertsLeftOut && a.silencesLeftOut == b.silencesLeftOut && a.sending == b.sending;
}

bool isLabelName(const std::string &name)
{
    if (name.empty() || name.size() > maxLabelNameBytes) {
        return false;
    }
    const auto first = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    return first(name.front())
        && std::all_of(name.begin() + 1, name.end(), [&first](char c) { return first(c) || (c >= '0' && c <= '9'); });
}

bool isUtf8(const std::string &text)
{
    return simdjson::validate_utf8(text.data(), text.size());
}

std::string quoted(const std::string &text)
{
    return fmt::format("'{}'", AlertmanagerJson::cutText(text, 64));
}

} // namespace

bool AlertmanagerWatch::matchesEverything(const SilenceMatcher &matcher)
{
    if (!matcher.isEqual) {
        return false;
    }
    if (!matcher.isRegex) {
        return matcher.value.empty(); // every alert without the label: in practice, nearly all
    }
    // Alertmanager anchors a matcher's regex; anchors, groups and the dot-all flag around .* or .+ change nothing.
    std::string re = matcher.value;
    for (bool stripped = true; stripped;) {
        stripped = false;
        if (!re.empty() && re.front() == '^') {
            re.erase(0, 1);
            stripped = true;
        }
        if (!re.empty() && re.back() == '$') {
            re.pop_back();
            stripped = true;
        }
        if (re.rfind("(?s)", 0) == 0) {
            re.erase(0, 4);
            stripped = true;
        }
        for (const std::string_view open : { "(?s:", "(?:", "(" }) {
            if (re.size() >= open.size() + 1 && re.rfind(open, 0) == 0 && re.back() == ')') {
                re = re.substr(open.size(), re.size() - open.size() - 1);
                stripped = true;
                break;
            }
        }
    }
    return re.empty() || re == ".*" || re == ".+" || re == ".*?" || re == ".+?";
}

bool AlertmanagerWatch::check(const SilenceRequest &request, std::string *error)
{
    if (request.matchers.empty()) {
        *error = "a silence needs at least one matcher";
        return false;
    }
    if (request.matchers.size() > maxMatchers) {
        *error = fmt::format("{} matchers; a silence takes at most {}", request.matchers.size(), maxMatchers);
        return false;
    }
    for (size_t i = 0; i < request.matchers.size(); ++i) {
        const SilenceMatcher &m = request.matchers[i];
        if (!isLabelName(m.name)) {
            *error = fmt::format("matcher {}: {} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*, at most {} bytes)", i + 1,
                quoted(isUtf8(m.name) ? m.name : std::string("?")), maxLabelNameBytes);
            return false;
        }
        if (m.value.size() > maxMatcherValueBytes || !isUtf8(m.value)) {
            *error = fmt::format("matcher {} ({}): its value is {}", i + 1, m.name,
                isUtf8(m.value) ? fmt::format("{} bytes; at most {}", m.value.size(), maxMatcherValueBytes)
                                : std::string("not UTF-8"));
            return false;
        }
    }
    // At least one matcher that names something: a silence of negative matchers alone (alertname!="x") or of matchers
    // that match everything mutes nearly every alert, which no console's proposal makes and no operator means.
    if (std::none_of(request.matchers.begin(), request.matchers.end(),
            [](const SilenceMatcher &m) { return m.isEqual && !matchesEverything(m); })) {
        *error = "no matcher names what it silences (every one is negative, name=\"\", or a regex such as .* or .+): "
                 "a silence needs at least one = or =~ matcher that picks some alerts";
        return false;
    }
    if (request.duration < minDuration || request.duration > maxDuration) {
        *error = fmt::format(
            "a duration of {} s; a silence lasts from 1 minute to 30 days", request.duration.count() / 1000);
        return false;
    }
    const bool blank = std::all_of(request.comment.begin(), request.comment.end(),
        [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
    if (blank) {
        *error = "a silence needs a comment (why, and who is on it)";
        return false;
    }
    if (request.comment.size() > maxCommentBytes || !isUtf8(request.comment)) {
        *error = isUtf8(request.comment)
            ? fmt::format("a comment of {} bytes; at most {}", request.comment.size(), maxCommentBytes)
            : std::string("the comment is not UTF-8");
        return false;
    }
    const bool printableCreator = std::all_of(request.createdBy.begin(), request.createdBy.end(),
        [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
    if (request.createdBy.empty() || request.createdBy.size() > maxCreatorBytes || !printableCreator
        || !isUtf8(request.createdBy)) {
        *error = "the silence's creator (the caller's name) is empty, too long or not printable";
        return false;
    }
    return true;
}

AlertmanagerWatch::AlertmanagerWatch(AlertmanagerApi api, const Options &options, Placement placement)
    : m_api(std::move(api))
    , m_options(options)
    , m_placement(std::move(placement))
    , m_json(options.limits)
{
    m_api.setCancel(&m_cancel);
    auto first = std::make_shared<AlertsState>();
    first->status.url = m_api.baseUrl();
    first->status.pollIntervalMs = std::max(m_options.pollInterval, minPollInterval).count();
    first->status.sending = m_options.sending;
    first->status.error = "not read yet";
    m_state = std::move(first);
    m_thread = std::thread([this] { run(); });
}

AlertmanagerWatch::~AlertmanagerWatch()
{
    {
        const std::lock_guard lock(m_stateMutex);
        m_stopping = true;
    }
    m_cancel = true;
    m_published.notify_all();
    m_thread.join();
}

void AlertmanagerWatch::run()
{
    const auto interval = std::max(m_options.pollInterval, minPollInterval);
    std::unique_lock lock(m_stateMutex);
    while (!m_stopping) {
        lock.unlock();
        pollNow();
        lock.lock();
        m_published.wait_for(lock, interval, [this] { return m_stopping; });
    }
}

std::shared_ptr<const AlertsState> AlertmanagerWatch::latest() const
{
    const std::lock_guard lock(m_stateMutex);
    return m_state;
}

std::shared_ptr<const AlertsState> AlertmanagerWatch::waitNewer(
    uint64_t generation, std::chrono::steady_clock::time_point deadline) const
{
    std::unique_lock lock(m_stateMutex);
    m_published.wait_until(lock, deadline, [&] { return m_state->generation > generation || m_stopping; });
    return m_state;
}

AlertmanagerWatch::PollCost AlertmanagerWatch::lastPollCost() const
{
    const std::lock_guard lock(m_stateMutex);
    return m_cost;
}

void AlertmanagerWatch::pollNow()
{
    const std::lock_guard pollLock(m_pollMutex);
    PollCost cost;
    std::string error;
    std::string body;
    AlertmanagerJson::Alerts alerts;
    AlertmanagerJson::Silences silences;
    // Each answer read as it comes, so that the error is that of the first thing that went wrong.
    const auto read = [&](bool isAlerts) {
        auto start = std::chrono::steady_clock::now();
        const bool fetched
            = (isAlerts ? m_api.getAlerts(&body, &error) : m_api.getSilences(&body, &error)) == Failure::None;
        cost.fetch += since(start);
        cost.answerBytes += body.size();
        if (!fetched) {
            return false;
        }
        start = std::chrono::steady_clock::now();
        std::string why;
        const bool decoded
            = isAlerts ? m_json.decodeAlerts(&body, &alerts, &why) : m_json.decodeSilences(&body, &silences, &why);
        cost.decode += since(start);
        if (!decoded) {
            error = fmt::format(
                "GET {}/api/v2/{}: answer refused: {}", m_api.baseUrl(), isAlerts ? "alerts" : "silences", why);
        }
        return decoded;
    };
    const bool ok = read(true) && read(false);

    const auto start = std::chrono::steady_clock::now();
    if (ok) {
        m_lastSuccessMs = nowMs();
    }
    const std::shared_ptr<const AlertsState> previous = latest();
    std::shared_ptr<AlertsState> state = next(*previous, ok, &alerts, &silences, error);
    cost.published = state != nullptr;
    const std::lock_guard lock(m_stateMutex);
    if (state) {
        m_state = std::move(state);
    }
    cost.publish = since(start);
    m_cost = cost;
    if (cost.published) {
        m_published.notify_all();
    }
}

std::shared_ptr<AlertsState> AlertmanagerWatch::next(const AlertsState &previous, bool ok,
    AlertmanagerJson::Alerts *alerts, AlertmanagerJson::Silences *silences, const std::string &error)
{
    AlertmanagerStatus status = previous.status;
    status.reachable = ok;
    status.error = ok ? std::string() : error;
    status.lastSuccessMs = m_lastSuccessMs;
    if (!ok) {
        // The alerts last read stay, marked old by the status; nothing new unless the status says something new.
        if (sameStatus(status, previous.status)) {
            return nullptr;
        }
        auto state = std::make_shared<AlertsState>(previous);
        state->generation = previous.generation + 1;
        state->status = std::move(status);
        return state;
    }
    status.alertsLeftOut = alerts->leftOut;
    status.silencesLeftOut = silences->leftOut;
    if (m_placement) {
        for (AlertmanagerAlert &alert : alerts->alerts) {
            m_placement(&alert);
        }
    }
    std::sort(alerts->alerts.begin(), alerts->alerts.end(), [](const AlertmanagerAlert &a, const AlertmanagerAlert &b) {
        if (a.severity != b.severity) {
            return a.severity > b.severity;
        }
        if (a.startsAtMs != b.startsAtMs) {
            return a.startsAtMs > b.startsAtMs;
        }
        return a.fingerprint < b.fingerprint;
    });
    std::sort(silences->silences.begin(), silences->silences.end(),
        [](const AlertmanagerSilence &a, const AlertmanagerSilence &b) {
            if (a.state != b.state) {
                return a.state < b.state; // active, then pending
            }
            if (a.startsAtMs != b.startsAtMs) {
                return a.startsAtMs > b.startsAtMs;
            }
            return a.id < b.id;
        });
    const bool same = sameStatus(status, previous.status)
        && std::equal(
            alerts->alerts.begin(), alerts->alerts.end(), previous.alerts.begin(), previous.alerts.end(), sameAlert)
        && std::equal(silences->silences.begin(), silences->silences.end(), previous.silences.begin(),
            previous.silences.end(), sameSilence);
    if (same) {
        return nullptr;
    }
    auto state = std::make_shared<AlertsState>();
    state->generation = previous.generation + 1;
    state->status = std::move(status);
    state->alerts = std::move(alerts->alerts);
    state->silences = std::move(silences->silences);
    return state;
}

AlertDesk::Failure AlertmanagerWatch::createSilence(const SilenceRequest &request, std::string *id, std::string *error)
{
    if (!check(request, error)) {
        return Failure::InvalidArgument;
    }
    NewSilence silence;
    silence.matchers = request.matchers;
    // A start a minute back: Alertmanager starts a silence that starts in the past at its own now, so that a backend
    // whose clock is ahead of Alertmanager's does not make a pending silence that mutes nothing yet.
    const int64_t now = nowMs();
    silence.startsAtMs = now - 60'000;
    silence.endsAtMs = now + request.duration.count();
    silence.createdBy = request.createdBy;
    silence.comment = request.comment;
    const Failure failure = m_api.postSilence(silence, id, error);
    if (failure != Failure::None) {
        return failure == Failure::NotFound ? Failure::Unavailable : failure;
    }
    pollNow();
    return Failure::None;
}

AlertDesk::Failure AlertmanagerWatch::expireSilence(const std::string &id, std::string *error)
{
    if (!AlertmanagerJson::isIdText(id)) {
        *error = "not a silence id (1 to 64 printable characters)";
        return Failure::InvalidArgument;
    }
    const Failure failure = m_api.deleteSilence(id, error);
    if (failure != Failure::None) {
        return failure;
    }
    pollNow();
    return Failure::None;
}

} // namespace fleetscope::backend
