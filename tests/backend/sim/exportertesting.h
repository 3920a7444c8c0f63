// SPDX-License-Identifier: Apache-2.0
#pragma once
// What tst_exporter (the pages) and tst_exporter_http (how they are served) share: a GET over a connection of its
// own, the text format parsed strictly, a simulated fleet, the suites' frozen fleet served, and an exporter over a live
// one.
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"
#include "tests/backend/testing/rawhttp.h"

#include <QByteArray>
#include <QObject>
#include <QRegularExpression>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fleetscope::testing {

namespace be = fleetscope::backend;

inline HttpResponse get(int port, const QByteArray &path)
{
    return request(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
}

// One sample line of the text format.
struct Sample
{
    QByteArray line; // as the page has it
    QByteArray name;
    std::map<QByteArray, QByteArray> labels; // unescaped values
    QByteArray value;
};

struct Page
{
    std::map<QByteArray, QByteArray> help;
    std::map<QByteArray, QByteArray> type;
    std::vector<QByteArray> familyOrder;
    std::vector<Sample> samples;
    QString error; // empty when the page parsed
};

// A strict parser of the subset of the text format dcgm-exporter writes: HELP and TYPE lines, and samples with a
// label set and a value, no timestamps.
inline Page parsePage(const QByteArray &text)
{
    static const QRegularExpression metricName(QStringLiteral("^[a-zA-Z_:][a-zA-Z0-9_:]*$"));
    static const QRegularExpression labelName(QStringLiteral("^[a-zA-Z_][a-zA-Z0-9_]*$"));
    Page page;
    if (!text.endsWith('\n')) {
        page.error = QStringLiteral("the page does not end with a newline");
        return page;
    }
    const auto lines = text.left(text.size() - 1).split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        auto fail = [&](const char *why) {
            page.error = QStringLiteral("line %1: %2: %3")
                             .arg(i + 1)
                             .arg(QLatin1String(why))
                             .arg(QString::fromUtf8(line.left(200)));
            return page;
        };
        if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
            const auto rest = line.mid(7);
            const auto space = rest.indexOf(' ');
            if (space <= 0) {
                return fail("HELP/TYPE without text");
            }
            const auto name = rest.left(space);
            auto &map = line.startsWith("# HELP ") ? page.help : page.type;
            if (map.count(name) != 0) {
                return fail("second HELP/TYPE for a family");
            }
            map[name] = rest.mid(space + 1);
            if (line.startsWith("# HELP ")) {
                page.familyOrder.push_back(name);
            }
            continue;
        }
        if (line.isEmpty() || line.startsWith('#')) {
            return fail("unexpected line");
        }
        Sample s;
        s.line = line;
        const auto brace = line.indexOf('{');
        if (brace <= 0) {
            return fail("sample without labels");
        }
        s.name = line.left(brace);
        if (!metricName.match(QString::fromLatin1(s.name)).hasMatch()) {
            return fail("bad metric name");
        }
        qsizetype p = brace + 1;
        for (;;) {
            const auto eq = line.indexOf('=', p);
            if (eq < 0 || eq + 1 >= line.size() || line[eq + 1] != '"') {
                return fail("bad label");
            }
            const auto name = line.mid(p, eq - p);
            if (!labelName.match(QString::fromLatin1(name)).hasMatch() || s.labels.count(name) != 0) {
                return fail("bad or repeated label name");
            }
            QByteArray value;
            qsizetype q = eq + 2;
            for (; q < line.size() && line[q] != '"'; ++q) {
                if (line[q] == '\\') {
                    if (++q >= line.size()) {
                        return fail("escape at end of line");
                    }
                    const char c = line[q];
                    if (c == 'n') {
                        value += '\n';
                    } else if (c == '\\' || c == '"') {
                        value += c;
                    } else {
                        return fail("bad escape");
                    }
                } else {
                    value += line[q];
                }
            }
            if (q >= line.size()) {
                return fail("unterminated label value");
            }
            s.labels[name] = value;
            p = q + 1;
            if (p < line.size() && line[p] == ',') {
                ++p;
                continue;
            }
            if (p < line.size() && line[p] == '}') {
                break;
            }
            return fail("label set not closed");
        }
        if (p + 1 >= line.size() || line[p + 1] != ' ') {
            return fail("no space before the value");
        }
        s.value = line.mid(p + 2);
        bool ok = false;
        s.value.toDouble(&ok);
        if (!ok || s.value.contains(' ')) {
            return fail("bad value (or a timestamp)");
        }
        if (page.type.count(s.name) == 0 || page.familyOrder.empty() || page.familyOrder.back() != s.name) {
            return fail("sample outside its family");
        }
        page.samples.push_back(std::move(s));
    }
    return page;
}

// The page's HELP and TYPE lines as the page writes them, family by family.
inline QByteArray headers(const Page &page, const std::vector<QByteArray> &order)
{
    QByteArray text;
    for (const auto &name : order) {
        text += "# HELP " + name + ' ' + page.help.at(name) + "\n# TYPE " + name + ' ' + page.type.at(name) + '\n';
    }
    return text;
}

inline be::SimulationOptions fleet(uint32_t gpus)
{
    be::SimulationOptions o;
    o.gpuCount = gpus;
    o.seed = 7;
    // node-flap holds one node down from 120 s, so two minutes of history give a frame with an offline node.
    o.scenario = be::Scenario::Kind::NodeFlap;
    o.history = std::chrono::minutes(2);
    return o;
}

// The suites' fixture: a 1,024-GPU fleet frozen on one frame, so that the page stays the one of that frame for a whole
// suite, and an exporter of it on a free loopback port.
class FrozenExporterSuite : public QObject
{
protected:
    // Empty when the exporter serves; else why not.
    std::string serveFrozenFleet()
    {
        m_source = be::simulatedSource(fleet(1024));
        m_source->stop();
        m_exporter = std::make_unique<be::ExporterServer>(*m_source, be::ExporterPage::Options());
        std::string error;
        if (!m_exporter->start("127.0.0.1:0", &error)) {
            return error;
        }
        return m_exporter->port() > 0 ? std::string() : std::string("the exporter has no port");
    }

    std::unique_ptr<be::FrameSource> m_source;
    std::unique_ptr<be::ExporterServer> m_exporter;
};

// A live fleet, a frame every interval, and an exporter of it (not yet started).
struct LiveExporter
{
    static be::SimulationOptions options(uint32_t gpus, std::chrono::milliseconds interval)
    {
        be::SimulationOptions o;
        o.gpuCount = gpus;
        o.seed = 7;
        o.interval = interval;
        return o;
    }
    LiveExporter(uint32_t gpus, std::chrono::milliseconds interval)
        : held(be::simulatedSource(options(gpus, interval)))
        , source(*held)
        , exporter(source, be::ExporterPage::Options())
    { }
    // Starts the exporter on a free loopback port and has it render a first page; that page's frame.
    bool start(uint64_t *first)
    {
        std::string error;
        if (!exporter.start("127.0.0.1:0", &error)) {
            qWarning("%s", error.c_str());
            return false;
        }
        exporter.page(first);
        return true;
    }
    std::unique_ptr<be::FrameSource> held;
    be::FrameSource &source;
    be::ExporterServer exporter;
};

} // namespace fleetscope::testing
