// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertsender.h"

#include "common/alertnames.h"

#include "core/clock.h"
#include "core/metriccatalog.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
using namespace std::chrono_literals;

// How long the thread waits on the source at a time: the longest a stop() waits for it.
constexpr auto longestWait = 200ms;
constexpr uint8_t incidentKind = 0;
constexpr uint8_t anomalyKind = 1;

void log(const std::string &line)
{
    fmt::print(stderr, "fleetscope-backend: alert sender: {}\n", line);
}

const char *severityWord(EventSeverity severity)
{
    switch (severity) {
    case EventSeverity::Critical:
        return "critical";
    case EventSeverity::Warning:
        return "warning";
    case EventSeverity::Info:
        break;
    }
    return "info";
}

// By name, without those with no value: Alertmanager takes an empty label for a missing one, and a real fleet's
// site or a host may have no name.
void sortByName(std::vector<AlertLabel> *labels)
{
    labels->erase(std::remove_if(labels->begin(), labels->end(), [](const AlertLabel &l) { return l.value.empty(); }),
        labels->end());
    std::sort(labels->begin(), labels->end(), [](const AlertLabel &a, const AlertLabel &b) { return a.name < b.name; });
}

bool sameLabels(const std::vector<AlertLabel> &a, const std::vector<AlertLabel> &b)
{
    return a.size() == b.size()
        && std::equal(a.begin(), a.end(), b.begin(),
            [](const AlertLabel &x, const AlertLabel &y) { return x.name == y.name && x.value == y.value; });
}

// A label set as one string, to tell alerts apart as Alertmanager does (names and values hold no NUL here: the
// topology's names and our own words).
std::string labelKey(const std::vector<AlertLabel> &labels)
{
    std::string key;
    for (const auto &l : labels) {
        key.append(l.name).push_back('\0');
        key.append(l.value).push_back('\0');
    }
    return key;
}
} // namespace

AlertSender::AlertSender(const FrameSource &source, Post post)
    : AlertSender(source, std::move(post), Options {})
{ }

AlertSender::AlertSender(const FrameSource &source, Post post, Options options)
    : m_source(source)
    , m_post(std::move(post))
    , m_options(std::move(options))
{
    m_options.resendInterval = std::max<std::chrono::milliseconds>(m_options.resendInterval, 1ms);
    m_options.maxFindings = std::max<size_t>(m_options.maxFindings, 1);
    m_options.maxAlertsPerPost = std::max<size_t>(m_options.maxAlertsPerPost, 1);
    m_options.retryFirst = std::max<std::chrono::milliseconds>(m_options.retryFirst, 1ms);
    m_options.retryMax = std::max(m_options.retryMax, m_options.retryFirst);
    if (m_options.site.empty()) {
        m_options.site = source.shape().site;
    }
    m_thread = std::thread([this] { run(); });
}

AlertSender::~AlertSender()
{
    stop();
}

void AlertSender::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

AlertSender::Stats AlertSender::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void AlertSender::run()
{
    using Clock = std::chrono::steady_clock;
    uint64_t after = 0;
    auto nextResend = Clock::now() + m_options.resendInterval;
    auto retryAt = Clock::time_point::min();
    auto backoff = m_options.retryFirst;
    bool failing = false;
    for (;;) {
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping) {
                return;
            }
        }
        const auto now = Clock::now();
        const bool anyDue = !m_resolving.empty()
            || std::any_of(m_findings.begin(), m_findings.end(), [](const auto &f) { return f.second.due; });
        // Wait for events until the next post is due, at most longestWait.
        auto until = std::min(now + longestWait, nextResend);
        if (anyDue) {
            until = std::min(until, std::max(retryAt, now));
        }
        const auto wait = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until - now), 0ms);
        const uint64_t before = after;
        const auto events = m_source.eventsAfter(0, &after, wait);
        if (!events.empty() && before != 0 && events.front().sequence > before + 1) {
            // Fell behind the source's window: a close among them is lost, and what it closed stays open until the
            // backend restarts. Said, counted; at 100,000 events held it takes a storm with this thread stalled.
            const uint64_t lost = events.front().sequence - before - 1;
            log(fmt::format("{} events left the source's window before they were read", lost));
            std::lock_guard lock(m_mutex);
            m_stats.eventsLost += lost;
        }
        const bool namesJobs = std::any_of(events.begin(), events.end(), [](const TimedEvent &t) {
            return t.event.jobId != 0 || (t.event.incident && t.event.incident->jobs.size() == 1);
        });
        if (namesJobs) {
            refreshJobs();
        }
        for (const auto &timed : events) {
            apply(timed);
        }
        {
            std::lock_guard lock(m_mutex);
            m_stats.open = m_findings.size();
        }

        const auto t = Clock::now();
        const bool resendAll = t >= nextResend;
        const bool due = resendAll || !m_resolving.empty()
            || std::any_of(m_findings.begin(), m_findings.end(), [](const auto &f) { return f.second.due; });
        if (!due || t < retryAt) {
            continue;
        }
        if (postDue(nowUnixMs(), resendAll)) {
            if (failing) {
                log("Alertmanager takes alerts again");
            }
            failing = false;
            backoff = m_options.retryFirst;
            retryAt = Clock::time_point::min();
            if (resendAll) {
                nextResend = t + m_options.resendInterval;
            }
        } else {
            if (!failing) {
                log(fmt::format("posting to Alertmanager failed ({}); retrying, at most every {} ms", stats().lastError,
                    m_options.retryMax.count()));
            }
            failing = true;
            retryAt = Clock::now() + backoff;
            backoff = std::min(backoff * 2, m_options.retryMax);
        }
    }
}

void AlertSender::refreshJobs()
{
    m_jobNames.clear();
    for (auto &job : m_source.jobs()) {
        m_jobNames.emplace(job.id, std::move(job.name));
    }
}

void AlertSender::apply(const TimedEvent &timed)
{
    const FleetEvent &e = timed.event;
    switch (e.kind) {
    case EventKind::IncidentOpen:
    case EventKind::IncidentUpdate:
        if (e.incident) {
            open(Key { incidentKind, e.incident->id, 0 }, e.severity, incidentAlert(timed));
        }
        break;
    case EventKind::IncidentClose:
        if (e.incident) {
            close(Key { incidentKind, e.incident->id, 0 }, timed.timeMs);
        }
        break;
    case EventKind::AnomalyStart:
        if (e.gpu >= 0 && e.metric) {
            open(Key { anomalyKind, static_cast<uint64_t>(e.gpu), static_cast<uint32_t>(*e.metric) }, e.severity,
                anomalyAlert(timed));
        }
        break;
    case EventKind::AnomalyEnd:
        if (e.gpu >= 0 && e.metric) {
            close(Key { anomalyKind, static_cast<uint64_t>(e.gpu), static_cast<uint32_t>(*e.metric) }, timed.timeMs);
        }
        break;
    default:
        break;
    }
}

void AlertSender::open(const Key &key, EventSeverity severity, OutgoingAlert alert)
{
    if (auto it = m_findings.find(key); it != m_findings.end()) {
        Finding &f = it->second;
        alert.startsAtMs = f.alert.startsAtMs;
        if (!sameLabels(f.alert.labels, alert.labels)) {
            // Another label set (its severity rose) is another alert to Alertmanager: the old one ends now.
            resolveLater(f.alert, nowUnixMs());
        }
        m_bySeverity.erase({ f.severity, f.rank, key });
        f.alert = std::move(alert);
        f.severity = severity;
        f.due = true;
        m_bySeverity.insert({ f.severity, f.rank, key });
        return;
    }
    if (m_findings.size() >= m_options.maxFindings) {
        // The newest of the least severe gives way to a more severe one; what is not held is not resent, and
        // Alertmanager resolves it at its endsAt.
        const auto least = *m_bySeverity.begin();
        const bool evict = std::get<0>(least) < severity;
        if (evict) {
            m_findings.erase(std::get<2>(least));
            m_bySeverity.erase(m_bySeverity.begin());
        }
        std::lock_guard lock(m_mutex);
        ++m_stats.dropped;
        if (!m_droppedLogged) {
            m_droppedLogged = true;
            log(fmt::format("more than {} findings open: the least severe are not sent (counted in its stats)",
                m_options.maxFindings));
        }
        if (!evict) {
            return;
        }
    }
    Finding f;
    f.alert = std::move(alert);
    f.severity = severity;
    f.rank = std::numeric_limits<uint64_t>::max() - m_nextOrder++;
    m_bySeverity.insert({ f.severity, f.rank, key });
    m_findings.emplace(key, std::move(f));
}

void AlertSender::close(const Key &key, int64_t timeMs)
{
    const auto it = m_findings.find(key);
    if (it == m_findings.end()) {
        return;
    }
    m_bySeverity.erase({ it->second.severity, it->second.rank, key });
    resolveLater(std::move(it->second.alert), timeMs);
    m_findings.erase(it);
}

void AlertSender::resolveLater(OutgoingAlert alert, int64_t timeMs)
{
    alert.endsAtMs = std::max(alert.startsAtMs, timeMs);
    m_resolving.push_back(std::move(alert));
    if (m_resolving.size() > m_options.maxFindings) {
        // Alertmanager resolves those itself at the endsAt they were last sent with.
        m_resolving.erase(m_resolving.begin());
        std::lock_guard lock(m_mutex);
        ++m_stats.dropped;
    }
}

bool AlertSender::postDue(int64_t nowMs, bool resendAll)
{
    // What is due: the resolved first (an alert that opened again under the same labels is sent open instead), then
    // the open ones that changed, or all of them at a resend.
    std::vector<std::string> openKeys;
    if (!m_resolving.empty()) {
        openKeys.reserve(m_findings.size());
        for (const auto &[key, f] : m_findings) {
            openKeys.push_back(labelKey(f.alert.labels));
        }
        std::sort(openKeys.begin(), openKeys.end());
    }
    std::vector<const OutgoingAlert *> resolving;
    for (const auto &alert : m_resolving) {
        if (!std::binary_search(openKeys.begin(), openKeys.end(), labelKey(alert.labels))) {
            resolving.push_back(&alert);
        }
    }
    std::vector<Finding *> open;
    for (auto &[key, f] : m_findings) {
        if (f.due || resendAll) {
            open.push_back(&f);
        }
    }
    const int64_t endsAt = nowMs + 4 * m_options.resendInterval.count();
    const size_t total = resolving.size() + open.size();
    size_t posted = 0;
    uint64_t posts = 0;
    bool ok = true;
    std::string error;
    std::vector<OutgoingAlert> batch;
    while (posted < total && ok) {
        batch.clear();
        const size_t end = std::min(total, posted + m_options.maxAlertsPerPost);
        for (size_t i = posted; i < end; ++i) {
            if (i < resolving.size()) {
                batch.push_back(*resolving[i]);
                batch.back().endsAtMs = std::min(batch.back().endsAtMs, nowMs);
            } else {
                batch.push_back(open[i - resolving.size()]->alert);
                batch.back().endsAtMs = endsAt;
            }
            // Alertmanager refuses a whole post with one alert that ends before it starts: a frame stamped ahead of
            // this host's clock (an upstream's skew) starts no later than it ends.
            batch.back().startsAtMs = std::min(batch.back().startsAtMs, batch.back().endsAtMs);
        }
        error.clear();
        ok = m_post(batch, &error);
        if (ok) {
            for (size_t i = std::max(posted, resolving.size()); i < end; ++i) {
                open[i - resolving.size()]->due = false;
            }
            posted = end;
            ++posts;
        }
    }
    // The resolved ones taken, and those an open one stood for, are done.
    const size_t resolvedPosted = std::min(posted, resolving.size());
    if (resolvedPosted == resolving.size()) {
        m_resolving.clear();
    } else {
        std::vector<OutgoingAlert> left;
        for (size_t i = resolvedPosted; i < resolving.size(); ++i) {
            left.push_back(*resolving[i]);
        }
        m_resolving = std::move(left);
    }
    std::lock_guard lock(m_mutex);
    m_stats.alertsSent += posted;
    m_stats.posts += posts;
    if (ok) {
        m_stats.lastError.clear();
        m_stats.lastSuccessMs = total > 0 ? nowMs : m_stats.lastSuccessMs;
    } else {
        ++m_stats.failures;
        m_stats.lastError = error.empty() ? std::string("the post failed") : error;
    }
    return ok;
}

void AlertSender::addPlace(std::vector<AlertLabel> *labels, int64_t gpu, int64_t node) const
{
    const FleetShape &shape = m_source.shape();
    if (gpu >= 0 && static_cast<uint64_t>(gpu) < shape.nodeOfGpu.size()) {
        node = shape.nodeOfGpu[static_cast<size_t>(gpu)];
    } else {
        gpu = -1;
    }
    if (node < 0 || static_cast<uint64_t>(node) >= shape.nodes.size()) {
        return;
    }
    const auto &n = shape.nodes[static_cast<size_t>(node)];
    labels->push_back({ "hostname", n.hostname });
    if (gpu >= 0) {
        labels->push_back({ "gpu", std::to_string(static_cast<uint64_t>(gpu) - n.firstGpu) });
    }
}

void AlertSender::addJob(std::vector<AlertLabel> *labels, uint64_t jobId) const
{
    if (jobId == 0) {
        return;
    }
    const auto it = m_jobNames.find(jobId);
    if (it != m_jobNames.end() && !it->second.empty()) {
        labels->push_back({ "job", it->second });
    }
}

OutgoingAlert AlertSender::incidentAlert(const TimedEvent &timed) const
{
    const FleetEvent &e = timed.event;
    const Incident &incident = *e.incident;
    const FleetShape &shape = m_source.shape();
    OutgoingAlert alert;
    alert.labels.push_back({ "alertname", incidentAlertName });
    alert.labels.push_back({ "severity", severityWord(e.severity) });
    if (!incident.cause.empty()) {
        alert.labels.push_back({ "cause", incident.cause });
    }
    if (incident.domain >= 0 && static_cast<uint64_t>(incident.domain) < shape.domains.size()) {
        alert.labels.push_back({ "domain", shape.domains[static_cast<size_t>(incident.domain)].name });
    }
    addPlace(&alert.labels, e.gpu, e.node);
    if (incident.jobs.size() == 1) {
        addJob(&alert.labels, incident.jobs.front());
    }
    alert.labels.push_back({ "site", m_options.site });
    sortByName(&alert.labels);
    alert.annotations = { { "description", incident.evidence }, { "gpus", std::to_string(incident.gpuCount) },
        { "summary", e.text } };
    alert.startsAtMs = timed.timeMs;
    alert.generatorUrl = m_options.generatorUrl;
    return alert;
}

OutgoingAlert AlertSender::anomalyAlert(const TimedEvent &timed) const
{
    const FleetEvent &e = timed.event;
    OutgoingAlert alert;
    alert.labels.push_back({ "alertname", anomalyAlertName });
    alert.labels.push_back({ "severity", severityWord(e.severity) });
    addPlace(&alert.labels, e.gpu, e.node);
    const auto metric = static_cast<size_t>(*e.metric);
    const auto &catalog = metricCatalog();
    const bool known = metric < catalog.size();
    if (known) {
        alert.labels.push_back({ "metric", catalog[metric].key });
    }
    addJob(&alert.labels, e.jobId);
    alert.labels.push_back({ "site", m_options.site });
    sortByName(&alert.labels);
    alert.annotations = { { "description",
                              fmt::format("Fleetscope's anomaly detector: this GPU's {} departs from {}",
                                  known ? catalog[metric].name : std::string("reading"),
                                  e.jobId != 0 ? "its job's other GPUs" : "its rack's idle GPUs") },
        { "gpus", "1" }, { "summary", e.text } };
    alert.startsAtMs = timed.timeMs;
    alert.generatorUrl = m_options.generatorUrl;
    return alert;
}

} // namespace fleetscope::backend
