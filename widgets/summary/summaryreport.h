// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/summary/goodputfigures.h"
#include "widgets/summary/summaryfigures.h"

#include "model/fleetmodel.h"

#include <QByteArray>
#include <QPixmap>
#include <QStringList>

#include <vector>

namespace fleetscope {

// The summary page's reports: the worst offenders as CSV, the page as a PDF (two pages, a third with goodput) and as a
// PNG. Each write returns an empty string on success, else what went wrong; a file is written whole or not at all
// (model/savefile.h: on a full disk the error comes back and a previous file of that name is left as it was).
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
// The jobs' goodput, one row a range ("day", "week"), RFC 4180, CRLF: range, from_utc, to_utc, jobs, job_gpu_hours,
// productive_gpu_hours, lost_gpu_hours, goodput (0..1; empty when no job was accounted, never 0), target (0.97), then
// the GPU-hours lost by cause as listed (lost_incident, lost_straggler, lost_restart, lost_checkpoint, lost_stall,
// lost_other). A range not had (null) is left out.
QByteArray goodputCsv(const Summary *day, const Summary *week);
// Where goodput went, the week's losses most first, RFC 4180, CRLF: cause, what (as the page names it), incident_id,
// domain, gpu, hostname, gpu_on_node (the GPU's; the node's hostname alone for a node), gpu_hours,
// share_of_job_gpu_hours (0..1), jobs, cost (at pricePerGpuHour), detail (the backend's words). Empty fields where a
// loss names nothing of that kind. At most as many rows as the summary lists losses.
QByteArray goodputLossesCsv(const GoodputFigures &figures, const Topology *topology, double pricePerGpuHour);
QString writeFile(const QString &path, const QByteArray &contents);

// What the PDF says: the figures as sentences, the charts as shown on screen (QChartView::render on a printer lays a
// chart out again at the printer's resolution and truncates its titles, so they go in as pixmaps), the worst GPUs.
struct PdfContent
{
    QStringList lines;
    QPixmap trendChart;
    QPixmap paretoChart;
    std::vector<SummaryOffender> worst;
    // The goodput page, left out when lossRows is empty: the goodput trend and the losses by cause as shown, and the
    // losses table as shown (header first), as many rows as the page holds.
    QPixmap goodputTrendChart;
    QPixmap goodputCauseChart;
    std::vector<QStringList> lossRows;
};
QString writePdf(const QString &path, const PdfContent &content);
QString writePng(const QString &path, const QPixmap &page);

} // namespace SummaryReport

} // namespace fleetscope
