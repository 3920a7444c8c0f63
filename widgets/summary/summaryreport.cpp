// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summaryreport.h"

#include "model/csvexport.h"
#include "model/savefile.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>

namespace fleetscope::SummaryReport {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("fleetscope::SummaryView", text);
}

void drawChart(QPainter *painter, const QPixmap &chart, const QRect &target)
{
    const QSize fitted = (chart.deviceIndependentSize().toSize()).scaled(target.size(), Qt::KeepAspectRatio);
    painter->drawPixmap(QRect(target.topLeft(), fitted), chart);
}

// The third page: the goodput trend and the losses by cause side by side, then the losses table, as many rows as fit
// (the page's table holds at most the backend's 100; a last line counts those left out).
void drawGoodputPage(QPainter *painter, const QRect &page, const SummaryReport::PdfContent &content)
{
    const int line = painter->fontMetrics().height() + 4;
    const int charts = page.height() * 2 / 5;
    const int half = page.width() / 2;
    drawChart(painter, content.goodputTrendChart, QRect(page.left(), page.top(), half - line, charts));
    drawChart(painter, content.goodputCauseChart, QRect(page.left() + half, page.top(), half, charts));
    int y = page.top() + charts + line;
    QFont bold = painter->font();
    bold.setBold(true);
    const QFont body = painter->font();
    painter->setFont(bold);
    painter->drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft, tr("Where goodput went, last week"));
    y += line;
    // Cause, what (the widest), then the numbers.
    const int columns = static_cast<int>(content.lossRows.front().size());
    const int what = page.width() * 2 / 5;
    const int rest = columns > 2 ? (page.width() - what) / (columns - 1) : page.width();
    const int rows = static_cast<int>(content.lossRows.size());
    for (int r = 0; r < rows; ++r) {
        if (y + 2 * line > page.bottom() && r + 1 < rows) {
            painter->setFont(body);
            painter->drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft,
                tr("… and %1 more, in the CSV export").arg(rows - r));
            break;
        }
        painter->setFont(r == 0 ? bold : body);
        int x = page.left();
        const QStringList &cells = content.lossRows[static_cast<size_t>(r)];
        for (int c = 0; c < std::min<int>(columns, static_cast<int>(cells.size())); ++c) {
            const int width = c == 1 ? what : rest;
            const Qt::Alignment align = c < 2 ? Qt::AlignLeft : Qt::AlignRight;
            const QRect cell(x, y, width - line / 2, line);
            painter->drawText(cell, align | Qt::AlignVCenter,
                painter->fontMetrics().elidedText(cells[c], Qt::ElideRight, cell.width()));
            x += width;
        }
        y += line;
    }
    painter->setFont(body);
}
} // namespace

namespace {
// A GPU's first three columns: gpu, hostname, gpu_on_node (the last two empty without the topology).
QByteArray gpuColumns(uint32_t gpu, const Topology *topology)
{
    QByteArray host;
    QByteArray onNode;
    if (topology && gpu < topology->gpuCount) {
        const auto &node = topology->nodeOf(gpu);
        host = CsvExport::field(node.hostname);
        onNode = QByteArray::number(gpu - node.firstGpu);
    }
    return QByteArray::number(gpu) + ',' + host + ',' + onNode;
}
} // namespace

QByteArray offendersCsv(const SummaryFigures &figures, const Topology *topology)
{
    QByteArray out = "gpu,hostname,gpu_on_node,failures,share_of_week_failures\r\n";
    for (const auto &o : figures.worst) {
        const double share = figures.weekFailures > 0 ? static_cast<double>(o.failures) / figures.weekFailures : 0;
        out += gpuColumns(o.gpu, topology) + ',' + QByteArray::number(static_cast<qulonglong>(o.failures)) + ','
            + QByteArray::number(share, 'g', 6) + "\r\n";
    }
    return out;
}

QByteArray repeatOffendersCsv(const std::vector<SummaryRepeatOffender> &offenders, const Topology *topology)
{
    QByteArray out = "gpu,hostname,gpu_on_node,score,xids,serious_xids,ecc_double_bit,remapped_rows,"
                     "remapped_rows_correctable,pcie_replays,throttle_hours\r\n";
    for (const auto &o : offenders) {
        out += gpuColumns(o.gpu, topology);
        for (const double v : { o.score, o.xids, o.seriousXids, o.eccDoubleBit, o.remappedRows,
                 o.remappedRowsCorrectable, o.pcieReplays, o.throttleHours }) {
            out += ',' + QByteArray::number(v, 'f', 3);
        }
        out += "\r\n";
    }
    return out;
}

QByteArray goodputCsv(const Summary *day, const Summary *week)
{
    QByteArray out = "range,from_utc,to_utc,jobs,job_gpu_hours,productive_gpu_hours,lost_gpu_hours,goodput,target,"
                     "lost_incident,lost_straggler,lost_restart,lost_checkpoint,lost_stall,lost_other\r\n";
    const std::pair<const char *, const Summary *> ranges[] = { { "day", day }, { "week", week } };
    for (const auto &[name, s] : ranges) {
        if (s == nullptr) {
            continue;
        }
        // The figures' own reading of the summary: the same goodput, the same lost hours and causes.
        const GoodputFigures f = computeGoodputFigures(*s, *s, 0);
        out += QByteArray(name) + ',' + CsvExport::time(s->fromMs) + ',' + CsvExport::time(s->toMs) + ','
            + QByteArray::number(s->jobsAccounted) + ',';
        if (!f.hasWeek) {
            out += ",,,,"; // nothing accounted: no hours, no goodput, not 0
        } else {
            out += QByteArray::number(s->jobGpuHours, 'f', 3) + ',' + QByteArray::number(s->productiveGpuHours, 'f', 3)
                + ',' + QByteArray::number(f.weekLostGpuHours, 'f', 3) + ','
                + QByteArray::number(f.weekGoodput / 100, 'f', 4) + ',';
        }
        out += QByteArray::number(targetGoodput / 100, 'f', 2);
        for (const LossCause cause : goodputCauses) {
            out += ',';
            if (f.hasWeek) {
                out += QByteArray::number(f.weekByCause[static_cast<size_t>(cause)], 'f', 3);
            }
        }
        out += "\r\n";
    }
    return out;
}

QByteArray goodputLossesCsv(const GoodputFigures &figures, const Topology *topology, double pricePerGpuHour)
{
    QByteArray out = "cause,what,incident_id,domain,gpu,hostname,gpu_on_node,gpu_hours,share_of_job_gpu_hours,jobs,"
                     "cost,detail\r\n";
    for (const auto &l : figures.losses) {
        out += goodputCauseKey(l.cause).toUtf8() + ',' + CsvExport::field(goodputLossSubject(l, topology)) + ',';
        out += (l.incidentId != 0 ? QByteArray::number(static_cast<qulonglong>(l.incidentId)) : QByteArray()) + ',';
        if (l.domain >= 0) {
            out += topology != nullptr && static_cast<uint64_t>(l.domain) < topology->domains.size()
                ? CsvExport::field(topology->domainName(static_cast<uint32_t>(l.domain)))
                : QByteArray::number(static_cast<qlonglong>(l.domain));
        }
        out += ',';
        if (l.gpu >= 0 && l.gpu <= static_cast<int64_t>(UINT32_MAX)) {
            out += gpuColumns(static_cast<uint32_t>(l.gpu), topology);
        } else if (l.node >= 0 && topology != nullptr && static_cast<uint64_t>(l.node) < topology->nodes.size()) {
            out += ',' + CsvExport::field(topology->nodes[static_cast<size_t>(l.node)].hostname) + ',';
        } else {
            out += ",,";
        }
        const double share = figures.weekJobGpuHours > 0 ? l.gpuHours / figures.weekJobGpuHours : 0;
        out += ',' + QByteArray::number(l.gpuHours, 'f', 3) + ',' + QByteArray::number(share, 'f', 6) + ','
            + QByteArray::number(l.jobs) + ',' + QByteArray::number(l.gpuHours * pricePerGpuHour, 'f', 2) + ','
            + CsvExport::field(l.what) + "\r\n";
    }
    return out;
}

QString writeFile(const QString &path, const QByteArray &contents)
{
    return SaveFile::write(path, contents);
}

QString writePdf(const QString &path, const PdfContent &content)
{
    // Drawn into memory, then written as any other report: QPdfWriter given a path writes it in place, truncated
    // first. Two pages with two charts: a few hundred KB.
    QByteArray pdf;
    QBuffer buffer(&pdf);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageOrientation(QPageLayout::Landscape);
    writer.setResolution(150);
    writer.setTitle(tr("Fleetscope executive summary"));
    QPainter painter;
    if (!painter.begin(&writer)) {
        return tr("cannot write %1").arg(path);
    }
    const QRect page = painter.viewport();
    QFont title = painter.font();
    title.setPointSize(20);
    title.setBold(true);
    QFont body = painter.font();
    body.setPointSize(12);

    painter.setFont(title);
    const int titleHeight = painter.fontMetrics().height() * 2;
    painter.drawText(QRect(page.left(), page.top(), page.width(), titleHeight), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Fleetscope executive summary"));
    painter.setFont(body);
    const int line = painter.fontMetrics().height() + 4;
    int y = page.top() + titleHeight;
    for (const QString &text : content.lines) {
        painter.drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft | Qt::AlignVCenter, text);
        y += line;
    }
    y += line;
    drawChart(&painter, content.trendChart, QRect(page.left(), y, page.width(), page.bottom() - y));

    writer.newPage();
    const int half = page.height() / 2;
    drawChart(&painter, content.paretoChart, QRect(page.left(), page.top(), page.width(), half));
    y = page.top() + half + line;
    painter.drawText(QRect(page.left(), y, page.width(), line), Qt::AlignLeft,
        tr("Worst 1 % of GPUs, to drain or RMA (GPU: failures)"));
    y += line;
    QStringList items;
    for (const auto &o : content.worst) {
        items << QStringLiteral("%1: %2").arg(o.gpu).arg(o.failures);
    }
    painter.drawText(QRect(page.left(), y, page.width(), page.bottom() - y), Qt::TextWordWrap,
        items.isEmpty() ? tr("no failures") : items.join(QStringLiteral(", ")));
    if (!content.lossRows.empty()) {
        writer.newPage();
        drawGoodputPage(&painter, page, content);
    }
    if (!painter.end()) {
        return tr("cannot finish %1").arg(path);
    }
    return SaveFile::write(path, pdf);
}

QString writePng(const QString &path, const QPixmap &page)
{
    // Encoded in memory (the page, a few MB at most), then written whole or not at all.
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!page.save(&buffer, "PNG")) {
        return tr("cannot encode %1 as PNG").arg(path);
    }
    return SaveFile::write(path, png);
}

} // namespace fleetscope::SummaryReport
