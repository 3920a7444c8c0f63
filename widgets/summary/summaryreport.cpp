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
