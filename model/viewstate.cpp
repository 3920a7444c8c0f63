// SPDX-License-Identifier: Apache-2.0
#include "model/viewstate.h"

#include "model/rateofchange.h"

#include <QDateTime>
#include <QStringList>
#include <QTimeZone>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace fleetscope {

namespace {

const QString version = QStringLiteral("fs1");

const QStringList &placeLevels()
{
    static const QStringList levels { QStringLiteral("row"), QStringLiteral("rack"), QStringLiteral("node"),
        QStringLiteral("gpu") };
    return levels;
}

const QStringList &arrangements()
{
    static const QStringList names { QStringLiteral("floor"), QStringLiteral("compact"), QStringLiteral("jobs"),
        QStringLiteral("fabric") };
    return names;
}

const QStringList &ranges()
{
    static const QStringList names { QStringLiteral("fixed"), QStringLiteral("auto") };
    return names;
}

QString quoted(const QString &text)
{
    return QLatin1Char('\'') + text + QLatin1Char('\'');
}

// Shortest text that reads back as the same double; no '+', which a URL query would take for a space.
QString number(double value)
{
    return QString::number(value, 'g', QLocale::FloatingPointShortest).remove(QLatin1Char('+'));
}

// A non-negative decimal integer up to max, without sign or leading zeros. Empty on success, else the problem.
QString parseIndex(const QString &text, qint64 max, qint64 *value)
{
    if (text.startsWith(QLatin1Char('-'))) {
        return QStringLiteral("negative number %1").arg(quoted(text));
    }
    if (text.isEmpty()) {
        return QStringLiteral("missing number");
    }
    for (const QChar c : text) {
        if (c < QLatin1Char('0') || c > QLatin1Char('9')) {
            return QStringLiteral("bad number %1").arg(quoted(text));
        }
    }
    if (text.size() > 1 && text.front() == QLatin1Char('0')) {
        return QStringLiteral("number with a leading zero %1").arg(quoted(text));
    }
    bool ok = false;
    const qint64 v = text.toLongLong(&ok);
    if (!ok || v > max) {
        return QStringLiteral("number too large %1 (at most %2)").arg(quoted(text)).arg(max);
    }
    *value = v;
    return {};
}

QString parseReal(const QString &text, double *value)
{
    const QString lower = text.toLower();
    if (lower.contains(QLatin1String("nan")) || lower.contains(QLatin1String("inf"))) {
        return QStringLiteral("%1 is not a finite number").arg(quoted(text));
    }
    for (const QChar c : lower) {
        const bool ok = (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char('.')
            || c == QLatin1Char('-') || c == QLatin1Char('e');
        if (!ok) {
            return QStringLiteral("bad number %1").arg(quoted(text));
        }
    }
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
        return text.isEmpty() ? QStringLiteral("missing number") : QStringLiteral("bad number %1").arg(quoted(text));
    }
    *value = v;
    return {};
}

QString placeProblem(const QString &place)
{
    if (place == QLatin1String("fleet")) {
        return {};
    }
    const qsizetype colon = place.indexOf(QLatin1Char(':'));
    const QString level = place.left(colon);
    if (colon < 0 || !placeLevels().contains(level)) {
        return QStringLiteral("bad place %1 (fleet, or row, rack, node or gpu ':' index)").arg(quoted(place));
    }
    qint64 index = 0;
    const QString problem = parseIndex(place.mid(colon + 1), std::numeric_limits<int>::max(), &index);
    return problem.isEmpty() ? QString() : QStringLiteral("place %1: %2").arg(quoted(place), problem);
}

QString timeText(qint64 ms)
{
    const QDateTime time = QDateTime::fromMSecsSinceEpoch(ms, QTimeZone::utc());
    return time.toString(time.time().msec() == 0 ? QStringLiteral("yyyy-MM-dd'T'HH:mm:ss'Z'")
                                                 : QStringLiteral("yyyy-MM-dd'T'HH:mm:ss.zzz'Z'"));
}

QString parseTime(const QString &text, qint64 *ms)
{
    // Only UTC with a 'Z': a view string is read in other time zones than the one that wrote it.
    const QString problem = QStringLiteral("bad time %1 (live, or ISO 8601 UTC as 2024-05-01T03:12:00Z)");
    if (!text.endsWith(QLatin1Char('Z')) || !text.contains(QLatin1Char('T'))) {
        return problem.arg(quoted(text));
    }
    const QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!time.isValid()) {
        return problem.arg(quoted(text));
    }
    const qint64 v = time.toMSecsSinceEpoch();
    if (v < 0 || v > ViewState::maxTimeMs) {
        return QStringLiteral("time %1 is outside 1970 to 9999").arg(quoted(text));
    }
    *ms = v;
    return {};
}

} // namespace

bool ViewState::isIdentifier(const QString &text)
{
    if (text.isEmpty() || text.size() > maxIdLength) {
        return false;
    }
    for (const QChar c : text) {
        const bool ok = (c >= QLatin1Char('a') && c <= QLatin1Char('z'))
            || (c >= QLatin1Char('A') && c <= QLatin1Char('Z')) || (c >= QLatin1Char('0') && c <= QLatin1Char('9'))
            || c == QLatin1Char('_') || c == QLatin1Char('-') || c == QLatin1Char('.');
        if (!ok) {
            return false;
        }
    }
    return true;
}

QString ViewState::validate() const
{
    if (const QString problem = placeProblem(place); !problem.isEmpty()) {
        return problem;
    }
    if (fleetGpus < 0 || fleetGpus > maxFleetGpus) {
        return QStringLiteral("fleet of %1 GPUs is outside 0 to %2").arg(fleetGpus).arg(maxFleetGpus);
    }
    if (selectedGpu < -1) {
        return QStringLiteral("negative selected GPU %1").arg(selectedGpu);
    }
    if (!metric.isEmpty() && !isIdentifier(metric)) {
        return QStringLiteral("bad metric id %1 (letters, digits, '_', '-' and '.', at most %2)")
            .arg(quoted(metric.left(maxIdLength + 1)))
            .arg(maxIdLength);
    }
    if (!colourMap.isEmpty() && !isIdentifier(colourMap)) {
        return QStringLiteral("bad colour map name %1 (letters, digits, '_', '-' and '.', at most %2)")
            .arg(quoted(colourMap.left(maxIdLength + 1)))
            .arg(maxIdLength);
    }
    if (!live && (timeMs < 0 || timeMs > maxTimeMs)) {
        return QStringLiteral("time %1 ms is outside 1970 to 9999").arg(timeMs);
    }
    if (!arrangements().contains(arrangement)) {
        return QStringLiteral("bad arrangement %1 (floor, compact, jobs or fabric)").arg(quoted(arrangement));
    }
    if (!std::isfinite(zoom) || !std::isfinite(centreX) || !std::isfinite(centreY)) {
        return QStringLiteral("zoom or centre is not a finite number");
    }
    if (zoom < 0) {
        return QStringLiteral("negative zoom %1").arg(number(zoom));
    }
    if (zoom > maxZoom) {
        return QStringLiteral("zoom %1 is over %2").arg(number(zoom), number(maxZoom));
    }
    if (std::abs(centreX) > maxCentre || std::abs(centreY) > maxCentre) {
        return QStringLiteral("centre %1,%2 is outside +-%3 cells")
            .arg(number(centreX), number(centreY), number(maxCentre));
    }
    if (!ranges().contains(range)) {
        return QStringLiteral("bad range %1 (fixed or auto)").arg(quoted(range));
    }
    if (changeWindowS < 0) {
        return QStringLiteral("negative change window %1 s").arg(changeWindowS);
    }
    // The windows the console offers (RateOfChange::windowChoices, as --show-change takes them): the desk's control
    // can show no other, and a window of years would show nothing for a quarter of it.
    if (changeWindowS != 0
        && std::none_of(RateOfChange::windowChoices.begin(), RateOfChange::windowChoices.end(),
            [this](RateOfChange::Window w) { return w == std::chrono::seconds(changeWindowS); })) {
        return QStringLiteral("change window %1 s is not one of 10, 60, 300 and 900").arg(changeWindowS);
    }
    return {};
}

QString ViewState::toString() const
{
    Q_ASSERT_X(validate().isEmpty(), "ViewState::toString", qPrintable(validate()));
    const ViewState defaults;
    QString text = version;
    const auto add = [&text](char key, const QString &value) {
        text += QLatin1Char(';') + QLatin1Char(key) + QLatin1Char('=') + value;
    };
    if (fleetGpus != 0) {
        add('n', QString::number(fleetGpus));
    }
    if (place != defaults.place) {
        add('p', place);
    }
    if (selectedGpu >= 0) {
        add('g', QString::number(selectedGpu));
    }
    if (!metric.isEmpty()) {
        add('m', metric);
    }
    if (!colourMap.isEmpty()) {
        add('c', colourMap);
    }
    if (!live) {
        add('t', timeText(timeMs));
    }
    if (arrangement != defaults.arrangement) {
        add('a', arrangement);
    }
    if (zoom != 0 || centreX != 0 || centreY != 0) {
        add('z', number(zoom) + QLatin1Char('@') + number(centreX) + QLatin1Char(',') + number(centreY));
    }
    if (range != defaults.range) {
        add('r', range);
    }
    if (changeWindowS != 0) {
        add('w', QString::number(changeWindowS));
    }
    return text;
}

std::optional<ViewState> ViewState::parse(const QString &input, QString *error)
{
    const auto fail = [error](const QString &message) -> std::optional<ViewState> {
        if (error != nullptr) {
            *error = message;
        }
        return std::nullopt;
    };
    if (input.size() > maxTextLength) {
        return fail(
            QStringLiteral("view string too long: %1 characters (at most %2)").arg(input.size()).arg(maxTextLength));
    }
    const QString text = input.trimmed();
    if (text.isEmpty()) {
        return fail(QStringLiteral("empty view string"));
    }
    const QStringList fields = text.split(QLatin1Char(';'));
    const QString &head = fields.front();
    if (head != version) {
        if (head.size() > 2 && head.startsWith(QLatin1String("fs"))) {
            return fail(
                QStringLiteral("unknown view string version %1 (this console reads %2)").arg(quoted(head), version));
        }
        return fail(QStringLiteral("not a view string: it should begin with %1;").arg(version));
    }

    ViewState state;
    QString seen;
    for (qsizetype i = 1; i < fields.size(); ++i) {
        const QString &field = fields[i];
        const qsizetype equals = field.indexOf(QLatin1Char('='));
        if (equals != 1) {
            return fail(field.isEmpty() ? QStringLiteral("empty field (two ';' in a row)")
                                        : QStringLiteral("field %1 is not key=value").arg(quoted(field)));
        }
        const QChar key = field.front();
        const QString value = field.mid(2);
        if (!QStringLiteral("npgmctazrw").contains(key)) {
            return fail(QStringLiteral("unknown key %1").arg(quoted(key)));
        }
        if (seen.contains(key)) {
            return fail(QStringLiteral("duplicate key %1").arg(quoted(key)));
        }
        seen += key;
        if (value.isEmpty()) {
            return fail(QStringLiteral("empty value for %1").arg(quoted(key)));
        }
        // Plain text fields; validate() checks their values once all are read.
        static constexpr std::pair<char, QString ViewState::*> textFields[] = { { 'm', &ViewState::metric },
            { 'c', &ViewState::colourMap }, { 'a', &ViewState::arrangement }, { 'r', &ViewState::range } };
        for (const auto &[name, member] : textFields) {
            if (key == QLatin1Char(name)) {
                state.*member = value;
            }
        }
        QString problem;
        qint64 integer = 0;
        switch (key.toLatin1()) {
        case 'p':
            problem = placeProblem(value);
            state.place = value;
            break;
        case 'n':
            problem = parseIndex(value, maxFleetGpus, &state.fleetGpus);
            if (problem.isEmpty() && state.fleetGpus == 0) {
                problem = QStringLiteral("a fleet of no GPUs");
            }
            break;
        case 'g':
            problem = parseIndex(value, std::numeric_limits<int>::max(), &integer);
            state.selectedGpu = static_cast<int>(integer);
            break;
        case 't':
            state.live = value == QLatin1String("live");
            if (!state.live) {
                problem = parseTime(value, &state.timeMs);
            }
            break;
        case 'z': {
            const qsizetype at = value.indexOf(QLatin1Char('@'));
            problem = parseReal(value.left(at), &state.zoom);
            if (problem.isEmpty() && at >= 0) {
                const QStringList centre = value.mid(at + 1).split(QLatin1Char(','));
                if (centre.size() != 2) {
                    problem = QStringLiteral("bad centre %1 (x,y)").arg(quoted(value.mid(at + 1)));
                } else if (problem = parseReal(centre[0], &state.centreX); problem.isEmpty()) {
                    problem = parseReal(centre[1], &state.centreY);
                }
            }
            break;
        }
        case 'w':
            problem = parseIndex(value, std::numeric_limits<int>::max(), &integer);
            state.changeWindowS = static_cast<int>(integer);
            break;
        default:
            break;
        }
        if (problem.isEmpty()) {
            problem = state.validate();
        }
        if (!problem.isEmpty()) {
            return fail(QStringLiteral("%1: %2").arg(field, problem));
        }
    }
    return state;
}

bool ViewState::operator==(const ViewState &other) const
{
    return fleetGpus == other.fleetGpus && place == other.place && selectedGpu == other.selectedGpu
        && metric == other.metric && colourMap == other.colourMap && live == other.live
        && (live || timeMs == other.timeMs) && arrangement == other.arrangement && zoom == other.zoom
        && centreX == other.centreX && centreY == other.centreY && range == other.range
        && changeWindowS == other.changeWindowS;
}

} // namespace fleetscope
