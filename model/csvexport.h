// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QByteArray>
#include <QString>
#include <QStringView>

#include <vector>

class QIODevice;

namespace fleetscope {

// The selection's values as CSV (RFC 4180) for a spreadsheet or a ticket: UTF-8 without BOM, CRLF line ends, a
// field quoted when it holds a comma, quote or line break (and one that would read as a formula written as text),
// numbers with '.' whatever the locale, times in ISO 8601 UTC with milliseconds, and an empty field where there is no
// value (NaN). Each function returns an empty string on success, else what went wrong; what was written before a write
// error stays written.
class CsvExport
{
public:
    // One line per GPU: hostname, GPU index in its node, fleet (dense) index, UUID, then one column per plane of
    // the frame, headed "<id> (<unit>)" with the unit from metrics (the id alone when unknown or unitless).
    static QString writeCurrentValues(QIODevice &out, const Topology &topology, const Frame &frame,
        const std::vector<MetricInfo> &metrics, const std::vector<uint32_t> &gpus);

    // One line per frame, in the order given: its sample time, then one column per (GPU, metric), GPU-major,
    // headed "<hostname> GPU <k> <id> (<unit>)". A frame without a metric's plane leaves its columns empty.
    static QString writeTimeSeries(QIODevice &out, const Topology &topology, const std::vector<FramePtr> &frames,
        const std::vector<MetricInfo> &metrics, const std::vector<uint32_t> &gpus);

    // One field, quoted as RFC 4180 asks; one that begins with = + - @, a tab or a CR is written after a ' so that a
    // spreadsheet reads it as text, not as a formula.
    static QByteArray field(QStringView text);
    // The shortest text that reads back as the same float, '.' as decimal separator; empty for NaN or infinity.
    static QByteArray number(float value);
    static QByteArray time(int64_t msSinceEpoch);
};

} // namespace fleetscope
