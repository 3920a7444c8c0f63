// SPDX-License-Identifier: Apache-2.0
#include "model/csvexport.h"

#include <QDateTime>
#include <QFileDevice>
#include <QIODevice>
#include <QTimeZone>

#include <array>
#include <charconv>
#include <cmath>

namespace fleetscope {

namespace {

constexpr qsizetype flushBytes = 64 * 1024;
const QByteArray lineEnd = QByteArrayLiteral("\r\n");

// Collects lines and hands them to the device in blocks; remembers the first write error.
class Writer
{
public:
    explicit Writer(QIODevice &out)
        : m_out(out)
    { }

    void add(const QByteArray &bytes) { m_buffer += bytes; }
    void separator() { m_buffer += ','; }
    void endLine()
    {
        m_buffer += lineEnd;
        if (m_buffer.size() >= flushBytes) {
            flush();
        }
    }
    QString finish()
    {
        flush();
        // A file buffers what it was given and meets a full disk only when it hands that on.
        if (auto *file = qobject_cast<QFileDevice *>(&m_out); file != nullptr && m_error.isEmpty() && !file->flush()) {
            m_error = QStringLiteral("could not write the CSV: %1").arg(file->errorString());
        }
        return m_error;
    }

private:
    void flush()
    {
        if (m_error.isEmpty() && !m_buffer.isEmpty() && m_out.write(m_buffer) != m_buffer.size()) {
            m_error = QStringLiteral("could not write the CSV: %1").arg(m_out.errorString());
        }
        m_buffer.clear();
    }

    QIODevice &m_out;
    QByteArray m_buffer;
    QString m_error;
};

QString header(const QString &id, const std::vector<MetricInfo> &metrics)
{
    for (const auto &m : metrics) {
        if (m.id == id && !m.unit.isEmpty()) {
            return id + QStringLiteral(" (") + m.unit + QLatin1Char(')');
        }
    }
    return id;
}

QString checkDevice(QIODevice &out)
{
    if (!out.isOpen() || !out.isWritable()) {
        return QStringLiteral("could not write the CSV: the device is not open for writing");
    }
    return {};
}

QString checkGpus(const Topology &topology, const std::vector<uint32_t> &gpus)
{
    for (const uint32_t g : gpus) {
        if (g >= topology.gpuCount || g >= topology.nodeOfGpu.size()) {
            return QStringLiteral("GPU %1 is not in the fleet of %2 GPUs").arg(g).arg(topology.gpuCount);
        }
    }
    return {};
}

QString checkFrame(const Topology &topology, const Frame &frame)
{
    if (frame.topologyGeneration != topology.generation) {
        return QStringLiteral("frame %1 belongs to topology generation %2, not %3")
            .arg(frame.sequence)
            .arg(frame.topologyGeneration)
            .arg(topology.generation);
    }
    return {};
}

QByteArray valueOf(const MetricPlane *plane, uint32_t gpu)
{
    if (plane == nullptr || gpu >= plane->values.size()) {
        return {};
    }
    return CsvExport::number(plane->values[gpu]);
}

} // namespace

QByteArray CsvExport::field(QStringView text)
{
    QByteArray bytes = text.toUtf8();
    // Names come from the backend (hostnames, job names): one that begins as a formula would be run by the
    // spreadsheet the file is opened in (=HYPERLINK(...), +cmd|...). It is written as text, after a quote, as the
    // OWASP advice on CSV injection has it.
    if (!bytes.isEmpty() && QByteArrayView("=+-@\t\r").contains(bytes.front())) {
        bytes.prepend('\'');
    }
    if (bytes.contains(',') || bytes.contains('"') || bytes.contains('\n') || bytes.contains('\r')) {
        bytes.replace('"', QByteArrayLiteral("\"\""));
        bytes.prepend('"');
        bytes.append('"');
    }
    return bytes;
}

QByteArray CsvExport::number(float value)
{
    if (!std::isfinite(value)) {
        return {};
    }
    // std::to_chars ignores the locale and writes the shortest text that reads back as the same float.
    std::array<char, 32> text {};
    const auto result = std::to_chars(text.data(), text.data() + text.size(), value);
    return QByteArray(text.data(), static_cast<qsizetype>(result.ptr - text.data()));
}

QByteArray CsvExport::time(int64_t msSinceEpoch)
{
    // Spelled out: Qt::ISODate writes "+00:00" rather than "Z" for a QTimeZone-based UTC time.
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, QTimeZone::utc())
        .toString(QStringLiteral("yyyy-MM-dd'T'HH:mm:ss.zzz'Z'"))
        .toUtf8();
}

QString CsvExport::writeCurrentValues(QIODevice &out, const Topology &topology, const Frame &frame,
    const std::vector<MetricInfo> &metrics, const std::vector<uint32_t> &gpus)
{
    for (const QString &problem : { checkDevice(out), checkGpus(topology, gpus), checkFrame(topology, frame) }) {
        if (!problem.isEmpty()) {
            return problem;
        }
    }
    Writer w(out);
    w.add(QByteArrayLiteral("hostname,gpu,fleet index,uuid"));
    for (const auto &plane : frame.planes) {
        w.separator();
        w.add(field(header(plane.metricId, metrics)));
    }
    w.endLine();
    for (const uint32_t g : gpus) {
        const auto &node = topology.nodeOf(g);
        w.add(field(node.hostname));
        w.separator();
        w.add(QByteArray::number(g - node.firstGpu));
        w.separator();
        w.add(QByteArray::number(g));
        w.separator();
        w.add(field(topology.uuidText(g)));
        for (const auto &plane : frame.planes) {
            w.separator();
            w.add(valueOf(&plane, g));
        }
        w.endLine();
    }
    return w.finish();
}

QString CsvExport::writeTimeSeries(QIODevice &out, const Topology &topology, const std::vector<FramePtr> &frames,
    const std::vector<MetricInfo> &metrics, const std::vector<uint32_t> &gpus)
{
    if (QString problem = checkDevice(out); !problem.isEmpty()) {
        return problem;
    }
    if (QString problem = checkGpus(topology, gpus); !problem.isEmpty()) {
        return problem;
    }
    for (const auto &frame : frames) {
        if (!frame) {
            return QStringLiteral("no frame to export");
        }
        if (QString problem = checkFrame(topology, *frame); !problem.isEmpty()) {
            return problem;
        }
    }
    Writer w(out);
    w.add(QByteArrayLiteral("time"));
    for (const uint32_t g : gpus) {
        const auto &node = topology.nodeOf(g);
        for (const auto &m : metrics) {
            w.separator();
            const QString name = node.hostname + QStringLiteral(" GPU ") + QString::number(g - node.firstGpu)
                + QLatin1Char(' ') + header(m.id, metrics);
            w.add(field(name));
        }
    }
    w.endLine();
    std::vector<const MetricPlane *> planes(metrics.size());
    for (const auto &frame : frames) {
        for (size_t k = 0; k < metrics.size(); ++k) {
            planes[k] = frame->plane(metrics[k].id);
        }
        w.add(time(frame->sampleTimeMs));
        for (const uint32_t g : gpus) {
            for (const MetricPlane *plane : planes) {
                w.separator();
                w.add(valueOf(plane, g));
            }
        }
        w.endLine();
    }
    return w.finish();
}

} // namespace fleetscope
