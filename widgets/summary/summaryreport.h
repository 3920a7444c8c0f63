// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/summary/summaryfigures.h"

#include "model/fleetmodel.h"

#include <QByteArray>
#include <QPixmap>
#include <QStringList>

#include <vector>

namespace fleetscope {

// The summary page's reports: the worst offenders as CSV, the page as a two-page PDF and as a PNG. Each write returns
// an empty string on success, else what went wrong; a file is written whole or not at all (model/savefile.h: on a full
// disk the error comes back and a previous file of that name is left as it was).
//
// Sizes: every report is bounded whatever the fleet, so they are written on the GUI thread. The offenders CSV lists
// the worst 1 % as far as GetSummary lists offenders, at most maxSummaryOffenders (1000) rows; the PDF holds the same
// list and two charts; the PNG is the page. Nothing here grows with the number of GPUs.
namespace SummaryReport {

// RFC 4180, CRLF: gpu (fleet index), hostname, gpu_on_node (both empty without a topology), failures, share of the
// week's failures.
QByteArray offendersCsv(const SummaryFigures &figures, const Topology *topology);
// The repeat offenders as listed (at most maxRepeatOffenders rows), RFC 4180, CRLF: gpu, hostname, gpu_on_node (both
// empty without a topology), score, xids, serious_xids, ecc_double_bit, remapped_rows, remapped_rows_correctable,
// pcie_replays, throttle_hours (decayed counts, 3 decimals).
QByteArray repeatOffendersCsv(const std::vector<SummaryRepeatOffender> &offenders, const Topology *topology);
QString writeFile(const QString &path, const QByteArray &contents);

// What the PDF says: the figures as sentences, the charts as shown on screen (QChartView::render on a printer lays a
// chart out again at the printer's resolution and truncates its titles, so they go in as pixmaps), the worst GPUs.
struct PdfContent
{
    QStringList lines;
    QPixmap trendChart;
    QPixmap paretoChart;
    std::vector<SummaryOffender> worst;
};
QString writePdf(const QString &path, const PdfContent &content);
QString writePng(const QString &path, const QPixmap &page);

} // namespace SummaryReport

} // namespace fleetscope
