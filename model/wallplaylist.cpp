// SPDX-License-Identifier: Apache-2.0
#include "model/wallplaylist.h"

#include "model/viewstate.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <tuple>
#include <utility>

namespace fleetscope {

namespace {
struct KindName
{
    WallPage::Kind kind;
    const char *name;
};
constexpr std::array<KindName, 8> kindNames { {
    { WallPage::Kind::Fleet, "fleet" },
    { WallPage::Kind::HottestRow, "hottest-row" },
    { WallPage::Kind::Summary, "summary" },
    { WallPage::Kind::Events, "events" },
    { WallPage::Kind::Problems, "problems" },
    { WallPage::Kind::Replay, "replay" },
    { WallPage::Kind::View, "view" },
    { WallPage::Kind::Job, "job" },
} };

// Which keys each kind of page may carry: anything else is a typo the operator should hear about.
bool keyAllowed(WallPage::Kind kind, const QString &key)
{
    if (key == QLatin1String("show") || key == QLatin1String("seconds")) {
        return true;
    }
    switch (kind) {
    case WallPage::Kind::Fleet:
    case WallPage::Kind::HottestRow:
        return key == QLatin1String("metric");
    case WallPage::Kind::Replay:
        return key == QLatin1String("metric") || key == QLatin1String("minutes") || key == QLatin1String("speed");
    case WallPage::Kind::View:
        return key == QLatin1String("view");
    case WallPage::Kind::Job:
        return key == QLatin1String("job");
    case WallPage::Kind::Summary:
    case WallPage::Kind::Events:
    case WallPage::Kind::Problems:
        return false;
    }
    return false;
}
// A job page's "job": a name (the header shows it, so no control characters) or a whole, positive id.
bool readJob(const QJsonValue &value, QString *job, QString *why)
{
    if (value.isDouble()) {
        const double id = value.toDouble();
        if (id != std::floor(id) || id < 1 || id > static_cast<double>(WallPlaylist::maxJobId)) {
            *why = QStringLiteral("must be a job's name or a whole id from 1 to %1").arg(WallPlaylist::maxJobId);
            return false;
        }
        *job = QString::number(static_cast<qint64>(id));
        return true;
    }
    const QString text = value.toString();
    if (!value.isString() || text.trimmed().isEmpty()) {
        *why = QStringLiteral("must be a job's name or id (leave it out for the job with the lowest goodput)");
        return false;
    }
    if (text.size() > WallPlaylist::maxJobText) {
        *why = QStringLiteral("is %1 characters long: at most %2").arg(text.size()).arg(WallPlaylist::maxJobText);
        return false;
    }
    if (std::any_of(text.begin(), text.end(), [](QChar c) { return c.category() == QChar::Other_Control; })) {
        *why = QStringLiteral("holds a control character");
        return false;
    }
    *job = text;
    return true;
}
} // namespace

QString WallPage::kindName(Kind kind)
{
    for (const auto &k : kindNames) {
        if (k.kind == kind) {
            return QString::fromLatin1(k.name);
        }
    }
    return {};
}

bool operator==(const WallPage &a, const WallPage &b)
{
    return a.kind == b.kind && a.seconds == b.seconds && a.metric == b.metric && a.view == b.view
        && a.replayMinutes == b.replayMinutes && a.replaySpeed == b.replaySpeed && a.job == b.job;
}

WallPlaylist::WallPlaylist(Clock clock, QObject *parent)
    : QObject(parent)
    , m_clock(std::move(clock))
    , m_pages(defaultPages())
{
    if (!m_clock) {
        auto elapsed = std::make_shared<QElapsedTimer>();
        elapsed->start();
        m_clock = [elapsed] { return elapsed->elapsed(); };
        m_timer.setInterval(250);
        connect(&m_timer, &QTimer::timeout, this, &WallPlaylist::tick);
        m_timer.start();
    }
    m_shownAtMs = m_clock();
}

std::vector<WallPage> WallPlaylist::defaultPages()
{
    const std::pair<WallPage::Kind, int> shown[]
        = { { WallPage::Kind::Fleet, 30 }, { WallPage::Kind::HottestRow, 20 }, { WallPage::Kind::Summary, 20 },
              { WallPage::Kind::Problems, 20 }, { WallPage::Kind::Events, 15 }, { WallPage::Kind::Replay, 30 } };
    std::vector<WallPage> pages;
    for (const auto &[kind, seconds] : shown) {
        WallPage page;
        page.kind = kind;
        page.seconds = seconds;
        pages.push_back(page);
    }
    return pages;
}

std::optional<std::vector<WallPage>> WallPlaylist::parse(const QByteArray &json, QString *error)
{
    auto fail = [error](const QString &why) {
        if (error != nullptr) {
            *error = why;
        }
        return std::nullopt;
    };
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        // The offset as a line number: what an editor shows.
        const int line = static_cast<int>(json.left(parseError.offset).count('\n')) + 1;
        return fail(QStringLiteral("not JSON at line %1: %2").arg(line).arg(parseError.errorString()));
    }
    if (!document.isObject() || !document.object().value(QLatin1String("pages")).isArray()) {
        return fail(QStringLiteral("expected an object with a \"pages\" array"));
    }
    const QJsonObject root = document.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() != QLatin1String("pages")) {
            return fail(QStringLiteral("unknown key \"%1\" (only \"pages\")").arg(it.key()));
        }
    }
    const QJsonArray array = root.value(QLatin1String("pages")).toArray();
    if (array.isEmpty()) {
        return fail(QStringLiteral("\"pages\" is empty: a wall needs at least one page"));
    }
    if (array.size() > maxPages) {
        return fail(QStringLiteral("%1 pages: at most %2").arg(array.size()).arg(maxPages));
    }
    std::vector<WallPage> pages;
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString where = QStringLiteral("page %1").arg(i + 1);
        if (!array[i].isObject()) {
            return fail(where + QStringLiteral(": expected an object"));
        }
        const QJsonObject o = array[i].toObject();
        WallPage page;
        const QString show = o.value(QLatin1String("show")).toString();
        bool known = false;
        for (const auto &k : kindNames) {
            if (show == QLatin1String(k.name)) {
                page.kind = k.kind;
                known = true;
            }
        }
        if (!known) {
            return fail(where
                + QStringLiteral(
                    ": \"show\" must be fleet, hottest-row, summary, problems, events, replay, view or job, not "
                    "\"%1\"")
                      .arg(show));
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!keyAllowed(page.kind, it.key())) {
                return fail(where + QStringLiteral(": unknown key \"%1\" for a %2 page").arg(it.key(), show));
            }
        }
        const QJsonValue seconds = o.value(QLatin1String("seconds"));
        if (!seconds.isUndefined()) {
            const double s = seconds.toDouble(-1);
            if (!seconds.isDouble() || s != std::floor(s) || s < minSeconds || s > maxSeconds) {
                return fail(where
                    + QStringLiteral(": \"seconds\" must be a whole number from %1 to %2")
                          .arg(minSeconds)
                          .arg(maxSeconds));
            }
            page.seconds = static_cast<int>(s);
        }
        const QJsonValue metric = o.value(QLatin1String("metric"));
        if (!metric.isUndefined()) {
            page.metric = metric.toString();
            // The wall opens the page as a view with this metric: the same rule as a view string's.
            if (!metric.isString() || !ViewState::isIdentifier(page.metric)) {
                return fail(where
                    + QStringLiteral(": \"metric\" must be a metric id such as gpu_temp (letters, digits, '_', '-' "
                                     "and '.', at most %1)")
                          .arg(ViewState::maxIdLength));
            }
        }
        const QJsonValue minutes = o.value(QLatin1String("minutes"));
        if (!minutes.isUndefined()) {
            const double m = minutes.toDouble(-1);
            if (!minutes.isDouble() || m != std::floor(m) || m < 1 || m > 1440) {
                return fail(where + QStringLiteral(": \"minutes\" must be a whole number from 1 to 1440"));
            }
            page.replayMinutes = static_cast<int>(m);
        }
        const QJsonValue speed = o.value(QLatin1String("speed"));
        if (!speed.isUndefined()) {
            const double s = speed.toDouble(-1);
            if (!speed.isDouble() || !(s >= 1 && s <= 600)) {
                return fail(where + QStringLiteral(": \"speed\" must be a number from 1 to 600"));
            }
            page.replaySpeed = s;
        }
        if (page.kind == WallPage::Kind::View) {
            page.view = o.value(QLatin1String("view")).toString();
            if (page.view.isEmpty()) {
                return fail(where + QStringLiteral(": a view page needs \"view\", a view string (Copy view)"));
            }
            // Read now, so that the operator hears of a bad view when the wall starts, not when its page comes up.
            QString why;
            if (!ViewState::parse(page.view, &why)) {
                return fail(where + QStringLiteral(": \"view\": %1").arg(why));
            }
        }
        if (const QJsonValue job = o.value(QLatin1String("job")); !job.isUndefined()) {
            QString why;
            if (!readJob(job, &page.job, &why)) {
                return fail(where + QStringLiteral(": \"job\" ") + why);
            }
        }
        pages.push_back(page);
    }
    return pages;
}

std::optional<std::vector<WallPage>> WallPlaylist::load(const QString &file, QString *error)
{
    auto fail = [error, &file](const QString &why) {
        if (error != nullptr) {
            *error = QStringLiteral("%1: %2").arg(file, why);
        }
        return std::nullopt;
    };
    // A playlist is a few hundred bytes of a regular file; not a pipe, a device or a megabyte.
    constexpr qint64 maxBytes = 1 << 20;
    if (!QFileInfo(file).isFile()) {
        return fail(QFileInfo::exists(file) ? QStringLiteral("not a regular file") : QStringLiteral("no such file"));
    }
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        return fail(f.errorString());
    }
    const QByteArray content = f.read(maxBytes + 1);
    if (content.size() > maxBytes) {
        return fail(QStringLiteral("larger than 1 MiB, not a playlist"));
    }
    QString why;
    auto pages = parse(content, &why);
    if (!pages) {
        return fail(why);
    }
    return pages;
}

void WallPlaylist::setPages(std::vector<WallPage> pages)
{
    if (pages.empty()) {
        pages = defaultPages();
    }
    m_pages = std::move(pages);
    show(0);
}

double WallPlaylist::progress() const
{
    const double dwell = currentPage().seconds * 1000.0;
    return std::clamp(static_cast<double>(m_clock() - m_shownAtMs) / dwell, 0.0, 1.0);
}

qint64 WallPlaylist::remainingMs() const
{
    return std::max<qint64>(0, currentPage().seconds * qint64(1000) - (m_clock() - m_shownAtMs));
}

void WallPlaylist::tick()
{
    if (m_paused) {
        return;
    }
    // One page per tick at most: after a long stall (a suspended machine, a clock that jumped) the next page gets
    // its whole dwell rather than the wall racing through the pages it missed.
    if (m_clock() - m_shownAtMs >= currentPage().seconds * qint64(1000)) {
        next();
    }
}

void WallPlaylist::next()
{
    show((m_current + 1) % static_cast<int>(m_pages.size()));
}

void WallPlaylist::previous()
{
    const int n = static_cast<int>(m_pages.size());
    show((m_current + n - 1) % n);
}

void WallPlaylist::setPaused(bool paused)
{
    if (m_paused == paused) {
        return;
    }
    m_paused = paused;
    m_shownAtMs = m_clock();
}

void WallPlaylist::show(int index)
{
    m_current = index;
    m_shownAtMs = m_clock();
    Q_EMIT pageChanged(index);
}

const Job *jobForWallPage(const WallPage &page, const JobList &jobs)
{
    const Job *best = nullptr;
    if (!page.job.isEmpty()) {
        bool isId = false;
        const uint64_t id = page.job.toULongLong(&isId);
        // An id first: a job may well be named "4711" by someone, but the number is what a ticket quotes.
        for (const bool byId : { true, false }) {
            for (const Job &job : jobs.jobs) {
                const bool named = byId ? isId && job.id == id : job.name == page.job;
                if (named
                    && (best == nullptr
                        || std::pair(job.isRunning(), job.startTimeMs)
                            > std::pair(best->isRunning(), best->startTimeMs))) {
                    best = &job;
                }
            }
            if (best != nullptr) {
                return best;
            }
        }
        return nullptr;
    }
    // The worst first: lower goodput, then more stragglers; unknown goodput last; then the bigger job, the lower id.
    auto rank = [](const Job &job) {
        const bool known = job.goodput >= 0;
        return std::tuple(!known, known ? job.goodput : 0.0, -static_cast<int64_t>(job.stragglerCount),
            -static_cast<int64_t>(job.gpus.size()), job.id);
    };
    for (const Job &job : jobs.jobs) {
        if (job.isRunning() && (best == nullptr || rank(job) < rank(*best))) {
            best = &job;
        }
    }
    return best;
}

} // namespace fleetscope
