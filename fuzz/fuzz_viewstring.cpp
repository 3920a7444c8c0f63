// SPDX-License-Identifier: Apache-2.0
// The console's view strings (Copy view, `fleetscope --view`, the last view in QSettings): ViewState::parse on the
// input's text (UTF-8, as a clipboard or a command line gives it). A refused string says why; an accepted one is a
// state toString() can write, inside the ranges the parser promises, and written again it reads back as the same view
// and the same text: short, and with nothing a URL would escape.
#include "model/viewstate.h"

#include "fuzz/fuzzinput.h"

#include <QString>

#include <cmath>

namespace {

using fleetscope::ViewState;

bool urlSafe(const QString &text)
{
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const bool ok = (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9')
            || QStringLiteral(";=:@,.-_").contains(c);
        if (!ok) {
            return false;
        }
    }
    return true;
}

void checkRanges(const ViewState &s)
{
    if (!s.validate().isEmpty()) {
        __builtin_trap(); // accepted, but not a state toString() may write
    }
    if (s.selectedGpu < -1 || s.changeWindowS < 0 || s.fleetGpus < 0 || s.fleetGpus > ViewState::maxFleetGpus) {
        __builtin_trap();
    }
    if (!s.live && (s.timeMs < 0 || s.timeMs > ViewState::maxTimeMs)) {
        __builtin_trap();
    }
    // The map's camera multiplies the centre by the cell size and casts cells to int: only finite, bounded figures.
    if (!(s.zoom >= 0 && s.zoom <= ViewState::maxZoom)) {
        __builtin_trap();
    }
    if (!(std::abs(s.centreX) <= ViewState::maxCentre) || !(std::abs(s.centreY) <= ViewState::maxCentre)) {
        __builtin_trap();
    }
    if (s.metric.size() > ViewState::maxIdLength || s.colourMap.size() > ViewState::maxIdLength) {
        __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString input = QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QString error;
    const auto state = ViewState::parse(input, &error);
    if (state.has_value() != error.isEmpty()) {
        __builtin_trap(); // refused without a reason, or accepted with one
    }
    if (ViewState::parse(input).has_value() != state.has_value()) {
        __builtin_trap(); // the answer depends on whether the caller wants the reason
    }
    if (!state) {
        return 0;
    }
    checkRanges(*state);
    const QString text = state->toString();
    if (text.size() > ViewState::maxTextLength || !text.startsWith(QLatin1String("fs1")) || !urlSafe(text)) {
        __builtin_trap();
    }
    QString again;
    const auto reread = ViewState::parse(text, &again);
    if (!reread || *reread != *state || reread->toString() != text) {
        __builtin_trap(); // formatted and read back, the view changed
    }
    fleetscope::fuzz::sink = static_cast<size_t>(text.size());
    return 0;
}
