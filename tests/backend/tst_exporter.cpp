// SPDX-License-Identifier: Apache-2.0
// The dcgm-exporter page: fetched over real HTTP from an exporter on loopback, parsed here, and held against the
// simulator's frame it was rendered from.
#include "backendoptions.h"
#include "chaincheck.h"
#include "prometheusprocess.h"
#include "rawhttp.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"
#include "testcertificates.h"
#include "../realparts.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include <httplib.h>

namespace be = fleetscope::backend;
using fleetscope::testing::connectTo;
using fleetscope::testing::HttpResponse;
using fleetscope::testing::readResponse;
using fleetscope::testing::request;

namespace {

HttpResponse get(int port, const QByteArray &path)
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
Page parsePage(const QByteArray &text)
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
QByteArray headers(const Page &page, const std::vector<QByteArray> &order)
{
    QByteArray text;
    for (const auto &name : order) {
        text += "# HELP " + name + ' ' + page.help.at(name) + "\n# TYPE " + name + ' ' + page.type.at(name) + '\n';
    }
    return text;
}

be::SimulationOptions fleet(uint32_t gpus)
{
    be::SimulationOptions o;
    o.gpuCount = gpus;
    o.seed = 7;
    // node-flap holds one node down from 120 s, so two minutes of history give a frame with an offline node.
    o.scenario = be::Scenario::Kind::NodeFlap;
    o.history = std::chrono::minutes(2);
    return o;
}

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

} // namespace

class TestExporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_source = be::simulatedSource(fleet(1024));
        // Frozen: the page stays the one of this frame for the whole suite.
        m_source->stop();
        m_exporter = std::make_unique<be::ExporterServer>(*m_source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(m_exporter->start("127.0.0.1:0", &error), error.c_str());
        QVERIFY(m_exporter->port() > 0);
    }

    void cleanupTestCase()
    {
        if (m_exporter) {
            m_exporter->stop();
        }
    }

    void pageMatchesFrame()
    {
        const auto response = get(m_exporter->port(), "/metrics");
        QVERIFY(response.complete);
        QCOMPARE(response.status, 200);
        QVERIFY(response.head.contains("Content-Type: text/plain; version=0.0.4"));
        const Page page = parsePage(response.body);
        QVERIFY2(page.error.isEmpty(), qPrintable(page.error));

        const auto frame = m_source->latest();
        const auto &shape = m_source->shape();
        const auto jobs = m_source->jobs();

        // Families: dcgm-exporter's names, types and help, in catalogue order.
        const auto &families = be::ExporterPage::families();
        QCOMPARE(page.familyOrder.size(), families.size());
        QCOMPARE(families.size(), size_t(15));
        for (size_t i = 0; i < families.size(); ++i) {
            const QByteArray name = QByteArray::fromStdString(families[i].name);
            QCOMPARE(page.familyOrder[i], name);
            QVERIFY(name.startsWith("DCGM_FI_DEV_"));
            QCOMPARE(page.type.at(name), QByteArray::fromStdString(families[i].type));
            QCOMPARE(page.help.at(name), QByteArray::fromStdString(families[i].help));
        }
        QCOMPARE(page.type.at("DCGM_FI_DEV_GPU_TEMP"), QByteArray("gauge"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_XID_ERRORS"), QByteArray("gauge"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"), QByteArray("counter"));

        // Which job each GPU runs, from ListJobs' view.
        std::vector<const be::JobInfo *> jobOf(shape.gpuCount, nullptr);
        for (const auto &job : jobs) {
            for (uint32_t g = job.firstGpu; job.endMs == 0 && g < job.firstGpu + job.gpuCount; ++g) {
                jobOf[g] = &job;
            }
        }
        std::map<std::pair<QByteArray, QByteArray>, uint32_t> gpuByHostAndIndex;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &node = shape.nodes[shape.nodeOfGpu[g]];
            gpuByHostAndIndex[{ QByteArray::fromStdString(node.hostname), QByteArray::number(g - node.firstGpu) }] = g;
        }

        std::map<QByteArray, std::vector<int>> seen; // per family, per GPU: lines
        size_t jobLines = 0;
        for (const auto &s : page.samples) {
            const auto it = gpuByHostAndIndex.find({ s.labels.count("Hostname") ? s.labels.at("Hostname") : "",
                s.labels.count("gpu") ? s.labels.at("gpu") : "" });
            QVERIFY2(it != gpuByHostAndIndex.end(), "a sample for no GPU of the fleet");
            const uint32_t g = it->second;
            auto &count = seen[s.name];
            count.resize(shape.gpuCount);
            ++count[g];

            const QByteArray local = s.labels.at("gpu");
            QCOMPARE(s.labels.at("UUID"), QByteArray::fromStdString(shape.gpuUuid(g)));
            QCOMPARE(s.labels.at("device"), "nvidia" + local);
            QCOMPARE(s.labels.at("pci_bus_id"), QByteArray::fromStdString(be::ExporterPage::pciBusId(local.toUInt())));
            QVERIFY(QRegularExpression(QStringLiteral("^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\\.[0-7]$"))
                        .match(QString::fromLatin1(s.labels.at("pci_bus_id")))
                        .hasMatch());
            QCOMPARE(s.labels.at("modelName"), QByteArray("NVIDIA H100 80GB HBM3"));
            // Each node's own driver: the simulated fleet is mid-rollout.
            QCOMPARE(s.labels.at("DCGM_FI_DRIVER_VERSION"),
                QByteArray::fromStdString(std::string(shape.driverVersionOf(shape.nodeOfGpu[g]))));
            QVERIFY(s.labels.count("row") == 0 && s.labels.count("rack") == 0);
            if (const auto *job = jobOf[g]) {
                ++jobLines;
                QCOMPARE(s.labels.size(), size_t(10));
                const uint32_t ordinal = shape.nodeOfGpu[g] - shape.nodeOfGpu[job->firstGpu];
                QCOMPARE(s.labels.at("namespace"), QByteArray::fromStdString(job->owner));
                QCOMPARE(s.labels.at("pod"), QByteArray::fromStdString(job->name) + '-' + QByteArray::number(ordinal));
                QVERIFY(QByteArray::fromStdString(job->name).startsWith(QByteArray(s.labels.at("container") + '-')));
            } else {
                QCOMPARE(s.labels.size(), size_t(7));
            }

            // The value, as DCGM prints it: integers for integer fields, %f for power.
            const auto family = std::find_if(families.begin(), families.end(),
                [&](const be::ExporterPage::Family &f) { return QByteArray::fromStdString(f.name) == s.name; });
            // The error fields as dcgm-exporter has them (totals and the last XID), the rest as the frame has them.
            const auto *raw = be::ExporterPage::rawField(*frame, family->metric);
            QCOMPARE(raw != nullptr, be::ExporterPage::isRawErrorField(family->metric));
            const float expected = raw ? static_cast<float>((*raw)[g]) : frame->plane(family->metric)[g];
            if (family->isDouble) {
                QVERIFY2(QRegularExpression(QStringLiteral("^[0-9]+\\.[0-9]{6}$"))
                             .match(QString::fromLatin1(s.value))
                             .hasMatch(),
                    s.value.constData());
                QCOMPARE(static_cast<float>(s.value.toDouble()), expected);
            } else {
                QVERIFY2(
                    QRegularExpression(QStringLiteral("^-?[0-9]+$")).match(QString::fromLatin1(s.value)).hasMatch(),
                    s.value.constData());
                QCOMPARE(s.value.toLongLong(), std::llround(expected));
            }
        }
        QVERIFY2(jobLines > 0, "no GPU of the test fleet runs a job: the pod labels went untested");

        // Every GPU that is not offline has each metric exactly once; offline GPUs have none.
        size_t offline = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const bool isOffline = (frame->health[g] & 0x07U) == fleetscope::health::Offline;
            offline += isOffline ? 1 : 0;
            for (const auto &f : families) {
                const auto &count = seen[QByteArray::fromStdString(f.name)];
                QCOMPARE(count.size(), size_t(shape.gpuCount));
                QCOMPARE(count[g], isOffline ? 0 : 1);
            }
        }
        QVERIFY2(offline > 0, "no offline GPU in the test frame: their absence went untested");
    }

    // The error counters are dcgm-exporter's counters: totals that never fall, while the frames' 5-minute counts
    // do; the double-bit total is the number of double-bit events so far and the XID gauge the last event's XID.
    void errorCountersOnlyGrow()
    {
        // Ten simulated minutes a step over 2,048 GPUs: errors come every step and leave the window after half a
        // step, so window counts fall all the time.
        be::Simulator sim(2048, 3, 600.0);
        std::map<std::pair<QByteArray, uint32_t>, double> last; // (family, GPU) -> value on the previous page
        std::vector<uint32_t> dbeEvents(sim.shape().gpuCount, 0);
        std::vector<uint32_t> lastXid(sim.shape().gpuCount, 0);
        std::map<QByteArray, uint32_t> gpuByHostAndIndex;
        for (uint32_t g = 0; g < sim.shape().gpuCount; ++g) {
            const auto &node = sim.shape().nodes[sim.shape().nodeOfGpu[g]];
            gpuByHostAndIndex[QByteArray::fromStdString(node.hostname) + '/' + QByteArray::number(g - node.firstGpu)]
                = g;
        }
        size_t windowFalls = 0;
        size_t counterRises = 0;
        size_t dbeChecked = 0;
        size_t xidChecked = 0;
        std::shared_ptr<const be::Frame> previous;
        for (int step = 0; step < 12; ++step) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                if (e.kind == be::FleetEvent::Kind::EccDoubleBit) {
                    ++dbeEvents[static_cast<size_t>(e.gpu)];
                } else if (e.kind == be::FleetEvent::Kind::Xid) {
                    lastXid[static_cast<size_t>(e.gpu)] = e.xid;
                }
            }
            const auto frame = sim.snapshot();
            QVERIFY(frame->rawErrors);
            const Page page = parsePage(QByteArray::fromStdString(
                be::ExporterPage::render(sim.shape(), *frame, {}, be::ExporterPage::Options()).text));
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            for (const auto &s : page.samples) {
                const auto family
                    = std::find_if(be::ExporterPage::families().begin(), be::ExporterPage::families().end(),
                        [&](const auto &f) { return QByteArray::fromStdString(f.name) == s.name; });
                if (!be::ExporterPage::isRawErrorField(family->metric)) {
                    continue;
                }
                const uint32_t g = gpuByHostAndIndex.at(s.labels.at("Hostname") + '/' + s.labels.at("gpu"));
                const double value = s.value.toDouble();
                if (family->metric == be::MetricId::XidErrors) {
                    QCOMPARE(value, static_cast<double>(lastXid[g]));
                    xidChecked += lastXid[g] != 0 ? 1 : 0;
                    continue;
                }
                QCOMPARE(page.type.at(s.name), QByteArray("counter"));
                if (family->metric == be::MetricId::EccDbe) {
                    QCOMPARE(value, static_cast<double>(dbeEvents[g]));
                    dbeChecked += dbeEvents[g] != 0 ? 1 : 0;
                }
                const auto key = std::make_pair(s.name, g);
                if (const auto it = last.find(key); it != last.end()) {
                    QVERIFY2(value >= it->second,
                        qPrintable(QStringLiteral("%1 of GPU %2 fell from %3 to %4")
                                       .arg(QString::fromLatin1(s.name))
                                       .arg(g)
                                       .arg(it->second)
                                       .arg(value)));
                    counterRises += value > it->second ? 1 : 0;
                }
                last[key] = value;
                if (previous) {
                    const auto &now = frame->plane(family->metric);
                    const auto &before = previous->plane(family->metric);
                    windowFalls += now[g] < before[g] ? 1 : 0;
                }
            }
            previous = frame;
        }
        // The test could fail: window counts did fall, counters did rise, and events were there to compare with.
        QVERIFY2(windowFalls > 0, "no window count fell: the old page would have passed too");
        QVERIFY(counterRises > 0);
        QVERIFY2(dbeChecked > 0, "no double-bit error in the run");
        QVERIFY2(xidChecked > 0, "no XID in the run");
    }

    void labelEscaping()
    {
        be::ExporterPage::Options options;
        options.modelName = "NVIDIA \"H100\" C:\\gpu\nnext";
        options.topologyLabels = true;
        const auto frame = m_source->latest();
        const auto text = be::ExporterPage::render(m_source->shape(), *frame, {}, options).text;
        QVERIFY(text.find("modelName=\"NVIDIA \\\"H100\\\" C:\\\\gpu\\nnext\"") != std::string::npos);
        const Page page = parsePage(QByteArray::fromStdString(text));
        QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
        QVERIFY(!page.samples.empty());
        for (const auto &s : page.samples) {
            QCOMPARE(s.labels.at("modelName"), QByteArray::fromStdString(options.modelName));
            QVERIFY(s.labels.count("pod") == 0);
            const auto &shape = m_source->shape();
            const auto &node = shape.nodes[shape.nodeOfGpu[0]];
            if (s.labels.at("Hostname") == QByteArray::fromStdString(node.hostname)) {
                QCOMPARE(s.labels.at("rack"), QByteArray::fromStdString(shape.racks[node.rack].name));
                QCOMPARE(s.labels.at("row"), QByteArray::fromStdString(shape.rows[0].name));
            }
        }
    }

    void otherPathsAndMethods()
    {
        const int port = m_exporter->port();
        QCOMPARE(get(port, "/other").status, 404);
        QCOMPARE(get(port, "/").status, 404);
        QCOMPARE(get(port, "/metricsx").status, 404);
        // A query string does not change the path.
        QCOMPARE(get(port, "/metrics?x=1").status, 200);
        const auto post = request(port, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
        QCOMPARE(post.status, 405);
        QVERIFY(post.head.contains("Allow: GET, HEAD"));
        const auto head = request(port, "HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QCOMPARE(head.status, 200);
        QVERIFY(head.complete);
        QVERIFY(head.body.isEmpty());
    }

    void malformedRequests_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<int>("status");
        // The parsing is the HTTP edge's (tst_httpedge); here what the exporter's own answers are.
        QTest::newRow("huge body") << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n") << 413;
        QTest::newRow("chunked post") << QByteArray("POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                                      << 405;
        QTest::newRow("two lengths")
            << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n") << 400;
    }

    void malformedRequests()
    {
        QFETCH(QByteArray, raw);
        QFETCH(int, status);
        const auto response = request(m_exporter->port(), raw);
        QVERIFY(response.complete);
        QCOMPARE(response.status, status);
        // A short text: "404 Not Found\n".
        QVERIFY2(response.body.startsWith(QByteArray(QByteArray::number(status) + ' ')) && response.body.endsWith('\n')
                && response.body.size() < 64,
            response.body.left(200).constData());
        // The server is still there and well.
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
        QCOMPARE(get(m_exporter->port(), "/metrics/" + QByteArray::fromStdString(m_source->shape().nodes[0].hostname))
                     .status,
            200);
    }

    void stalledClientsDoNotBlockOthers()
    {
        // Half a request, never finished, and a connection that says nothing: a scrape beside them still works.
        QTcpSocket half;
        QVERIFY(connectTo(half, m_exporter->port()));
        half.write("GET /metr");
        QVERIFY(half.waitForBytesWritten(5000));
        QTcpSocket silent;
        QVERIFY(connectTo(silent, m_exporter->port()));
        const auto response = get(m_exporter->port(), "/metrics");
        QVERIFY(response.complete);
        QCOMPARE(response.status, 200);
        // A client that goes away mid-request does no harm either.
        half.abort();
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
    }

    void keepAlive()
    {
        QTcpSocket socket;
        QVERIFY(connectTo(socket, m_exporter->port()));
        // Two requests pipelined on one connection, as HTTP/1.1 allows, then a third after the answers.
        socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto first = readResponse(socket, QDeadlineTimer(20000));
        QVERIFY(first.complete);
        QCOMPARE(first.status, 200);
        // What readResponse read past the first answer is the start of the second.
        const QByteArray leftover = socket.property("leftover").toByteArray();
        QVERIFY(leftover.isEmpty() || leftover.startsWith("HTTP/1.1 "));
        QByteArray rest = leftover;
        QDeadlineTimer deadline(20000);
        while (!rest.contains("\r\n\r\n404 Not Found\n") && !deadline.hasExpired()) {
            socket.waitForReadyRead(500);
            rest += socket.readAll();
        }
        QVERIFY(rest.startsWith("HTTP/1.1 404 Not Found\r\n"));
        socket.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        const auto third = readResponse(socket, QDeadlineTimer(20000));
        QCOMPARE(third.status, 200);
        QCOMPARE(third.body, first.body);
        QVERIFY(third.head.contains("Connection: close"));
        // The server closes after a Connection: close answer.
        QDeadlineTimer closed(10000);
        while (socket.state() == QAbstractSocket::ConnectedState && !closed.hasExpired()) {
            socket.waitForDisconnected(500);
        }
        QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    }

    void concurrentScrapes()
    {
        // A fleet big enough that a page does not fit in the socket buffers: the first answer is left unread while
        // the second is read in full, which only a server that serves both at once can answer.
        const auto source = be::simulatedSource(fleet(10240));
        source->stop();
        be::ExporterServer exporter(*source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        QTcpSocket a;
        QTcpSocket b;
        QVERIFY(connectTo(a, exporter.port()));
        QVERIFY(connectTo(b, exporter.port()));
        a.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QVERIFY(a.waitForBytesWritten(5000));
        // Let the first request reach the server before the second.
        QTRY_VERIFY_WITH_TIMEOUT(a.bytesAvailable() > 0 || a.waitForReadyRead(100), 10000);
        b.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QVERIFY(b.waitForBytesWritten(5000));
        const auto second = readResponse(b, QDeadlineTimer(30000));
        QVERIFY2(second.complete, "the second scrape was not answered while the first was in progress");
        const auto first = readResponse(a, QDeadlineTimer(30000));
        QVERIFY(first.complete);
        QCOMPARE(first.status, 200);
        QCOMPARE(second.status, 200);
        QVERIFY(first.body.size() > 8 << 20);
        QCOMPARE(first.body, second.body);
        exporter.stop();
    }

    void stopWithOpenConnections()
    {
        be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        QTcpSocket idle;
        QVERIFY(connectTo(idle, exporter.port()));
        QTcpSocket half;
        QVERIFY(connectTo(half, exporter.port()));
        half.write("GET /metrics HTTP/1.1\r\n");
        QVERIFY(half.waitForBytesWritten(5000));
        QDeadlineTimer timer(5000);
        exporter.stop(); // must not wait for the clients
        QVERIFY(!timer.hasExpired());
        QVERIFY(idle.waitForDisconnected(5000) || idle.state() == QAbstractSocket::UnconnectedState);
    }

    // Each node's own page, as its dcgm-exporter would serve it: every family's HELP and TYPE as on the whole page,
    // then exactly the lines of that node's GPUs, byte for byte and in the order the whole page has them. The node
    // the node-flap scenario holds down has the HELP and TYPE lines only, as its GPUs are absent from the whole page.
    void nodePages()
    {
        const auto wholeResponse = get(m_exporter->port(), "/metrics");
        QCOMPARE(wholeResponse.status, 200);
        const Page whole = parsePage(wholeResponse.body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        std::map<QByteArray, std::vector<QByteArray>> linesOfHost;
        for (const auto &s : whole.samples) {
            linesOfHost[s.labels.at("Hostname")].push_back(s.line);
        }

        const auto &shape = m_source->shape();
        const auto frame = m_source->latest();
        const auto nodes = static_cast<uint32_t>(shape.nodes.size());
        std::vector<uint32_t> onlineGpus(nodes, 0);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            onlineGpus[shape.nodeOfGpu[g]] += fleetscope::testing::online(*frame, g) ? 1 : 0;
        }
        const auto down = std::find(onlineGpus.begin(), onlineGpus.end(), 0U);
        QVERIFY2(down != onlineGpus.end(), "no node is down in the test frame: its page went untested");
        const auto downNode = static_cast<uint32_t>(down - onlineGpus.begin());

        for (const uint32_t k : { 0U, 1U, nodes / 2, downNode, nodes - 1 }) {
            const QByteArray hostname = QByteArray::fromStdString(shape.nodes[k].hostname);
            const auto response = get(m_exporter->port(), "/metrics/" + hostname);
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            QVERIFY(response.head.contains("Content-Type: text/plain; version=0.0.4"));
            const Page page = parsePage(response.body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            QCOMPARE(page.familyOrder, whole.familyOrder);
            QCOMPARE(page.help, whole.help);
            QCOMPARE(page.type, whole.type);
            std::vector<QByteArray> lines;
            for (const auto &s : page.samples) {
                lines.push_back(s.line);
            }
            QCOMPARE(lines, linesOfHost[hostname]);
            QCOMPARE(lines.size(), size_t(onlineGpus[k]) * whole.familyOrder.size());
            if (k == downNode) {
                QCOMPARE(response.body, headers(whole, whole.familyOrder));
            }
        }
    }

    // The node pages, one after the other on one connection as a scraper's would come, together are the whole page:
    // per family, their lines in node order are the whole page's. And none of those scrapes rendered the fleet again.
    void nodePagesMakeTheWholePage()
    {
        const auto wholeResponse = get(m_exporter->port(), "/metrics");
        QCOMPARE(wholeResponse.status, 200);
        const Page whole = parsePage(wholeResponse.body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        const uint64_t renders = m_exporter->renderCount();
        QVERIFY(renders >= 1);

        std::map<QByteArray, QByteArray> linesOfFamily;
        QTcpSocket socket;
        QVERIFY(connectTo(socket, m_exporter->port()));
        for (const auto &node : m_source->shape().nodes) {
            socket.write("GET /metrics/" + QByteArray::fromStdString(node.hostname) + " HTTP/1.1\r\nHost: x\r\n\r\n");
            const auto response = readResponse(socket, QDeadlineTimer(20000));
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            const Page page = parsePage(response.body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            for (const auto &s : page.samples) {
                linesOfFamily[s.name] += s.line + '\n';
            }
        }
        QByteArray joined;
        for (const auto &name : whole.familyOrder) {
            joined += headers(whole, { name }) + linesOfFamily[name];
        }
        QCOMPARE(joined, wholeResponse.body);
        QCOMPARE(m_exporter->renderCount(), renders);
    }

    // Many scrapes at once, of nodes and of the whole page, share one render of the frame; a moving fleet is rendered
    // again for a new frame, not for each scrape.
    void renderedOncePerFrame()
    {
        {
            be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
            std::string error;
            QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
            QCOMPARE(exporter.renderCount(), uint64_t(0));
            const auto &nodes = m_source->shape().nodes;
            std::vector<std::unique_ptr<QTcpSocket>> sockets;
            for (size_t i = 0; i < 48; ++i) {
                sockets.push_back(std::make_unique<QTcpSocket>());
                QVERIFY(connectTo(*sockets.back(), exporter.port()));
            }
            for (size_t i = 0; i < sockets.size(); ++i) {
                const QByteArray path = i % 8 == 0
                    ? QByteArray("/metrics")
                    : "/metrics/" + QByteArray::fromStdString(nodes[(i * 37) % nodes.size()].hostname);
                sockets[i]->write("GET " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n");
                sockets[i]->flush();
            }
            for (auto &socket : sockets) {
                const auto response = readResponse(*socket, QDeadlineTimer(20000));
                QVERIFY(response.complete);
                QCOMPARE(response.status, 200);
            }
            QCOMPARE(exporter.renderCount(), uint64_t(1));
        }

        // Scrapes must come faster than frames for the count to tell anything: a small fleet (each node page cheap to
        // render) and frames a quarter of a second apart, so that it holds under ThreadSanitizer too.
        LiveExporter live(256, std::chrono::milliseconds(250));
        const be::FrameSource &moving = live.source;
        be::ExporterServer &exporter = live.exporter;
        uint64_t first = 0;
        QVERIFY(live.start(&first));
        const uint64_t rendersBefore = exporter.renderCount();
        QTcpSocket socket;
        QVERIFY(connectTo(socket, exporter.port()));
        const auto &nodes = moving.shape().nodes;
        size_t scrapes = 0;
        QDeadlineTimer deadline(30000);
        while (moving.latest()->sequence < first + 4 && !deadline.hasExpired()) {
            socket.write("GET /metrics/" + QByteArray::fromStdString(nodes[scrapes % nodes.size()].hostname)
                + " HTTP/1.1\r\n\r\n");
            const auto response = readResponse(socket, QDeadlineTimer(20000));
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            ++scrapes;
        }
        uint64_t last = 0;
        exporter.page(&last);
        QVERIFY2(last >= first + 4, "the fleet did not move");
        const uint64_t renders = exporter.renderCount() - rendersBefore;
        // Each render is of a frame published after the first: at most one per frame, while the scrapes were many.
        QVERIFY2(renders <= last - first,
            qPrintable(QStringLiteral("%1 renders for %2 new frames and %3 scrapes")
                           .arg(renders)
                           .arg(last - first)
                           .arg(scrapes)));
        QVERIFY2(scrapes > renders, "no more scrapes than frames: rendering per scrape would have passed too");
        QVERIFY2(renders >= 2, "the node scrapes did not follow the new frames");
    }

    // Once a page has been scraped, the next frame's is rendered ahead as soon as the frame is published, before any
    // scrape asks (a scrape that rendered would hold up the other connections of its HTTP thread); after a page no
    // one scraped, frames are not rendered.
    void pagesAreRenderedAhead()
    {
        LiveExporter live(4096, std::chrono::milliseconds(200));
        uint64_t first = 0;
        QVERIFY(live.start(&first)); // the first frame's page, asked for
        QTRY_COMPARE_WITH_TIMEOUT(live.exporter.renderCount(), uint64_t(2), 10000);
        const uint64_t sequence = live.source.latest()->sequence;
        QTRY_VERIFY_WITH_TIMEOUT(live.source.latest()->sequence >= sequence + 3, 10000);
        QCOMPARE(live.exporter.renderCount(), uint64_t(2));
        uint64_t scraped = 0;
        live.exporter.page(&scraped);
        QVERIFY(scraped > sequence);
        QTRY_COMPARE_WITH_TIMEOUT(live.exporter.renderCount(), uint64_t(4), 10000);
    }

    // A real fleet's scrapers: every node target of a 10,240-GPU fleet (1,280 nodes) scraped at once by 64 clients,
    // four per thread of the server, each on a kept-alive connection that it opens again when an answer says the
    // server closes it. Every answer is 200 and that node's page, which parses; no connection is closed unannounced.
    void allNodeTargetsAtOnce()
    {
        const auto source = be::simulatedSource(fleet(10240));
        source->stop();
        be::ExporterServer exporter(*source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        const auto &nodes = source->shape().nodes;
        QCOMPARE(nodes.size(), size_t(1280));
        struct Answer
        {
            int status = 0;
            QByteArray body;
        };
        std::vector<Answer> answers(nodes.size());
        std::atomic<size_t> next { 0 };
        std::atomic<int> connections { 0 };
        const int port = exporter.port();
        QElapsedTimer elapsed;
        elapsed.start();
        std::vector<std::thread> clients;
        for (int c = 0; c < 64; ++c) {
            clients.emplace_back([&] {
                std::unique_ptr<QTcpSocket> socket;
                for (size_t k; (k = next++) < nodes.size();) {
                    if (!socket) {
                        socket = std::make_unique<QTcpSocket>();
                        ++connections;
                        if (!connectTo(*socket, port)) {
                            socket.reset();
                            continue;
                        }
                    }
                    socket->write("GET /metrics/" + QByteArray::fromStdString(nodes[k].hostname)
                        + " HTTP/1.1\r\nHost: x\r\n\r\n");
                    const auto response = readResponse(*socket, QDeadlineTimer(60000));
                    answers[k] = { response.complete ? response.status : 0, response.body };
                    if (!response.complete || response.head.contains("Connection: close")) {
                        socket.reset();
                    }
                }
            });
        }
        for (auto &client : clients) {
            client.join();
        }
        qInfo("1,280 node pages by 64 clients: %lld ms, %d connections", elapsed.elapsed(), connections.load());
        const auto rendered = exporter.page();
        for (size_t k = 0; k < nodes.size(); ++k) {
            QVERIFY2(answers[k].status == 200, qPrintable(QStringLiteral("node %1: %2").arg(k).arg(answers[k].status)));
            QCOMPARE(answers[k].body, QByteArray::fromStdString(rendered->nodePage(static_cast<uint32_t>(k))));
            const Page page = parsePage(answers[k].body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
        }
        QCOMPARE(exporter.renderCount(), uint64_t(1));
    }

    // A scraper that stops taking its page is dropped after sendTimeout (the edge's inactivity timeout, in whole
    // seconds), and the page it held is let go; other scrapes are served meanwhile (the heads' and idle connections'
    // deadlines are tst_httpedge's).
    void stalledReaderIsDropped()
    {
        be::ExporterServer::Limits limits;
        limits.sendTimeout = std::chrono::milliseconds(1000);
        const auto big = be::simulatedSource(fleet(10240));
        big->stop();
        be::ExporterServer exporter(*big, be::ExporterPage::Options(), limits);
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        // The whole page of 10,240 GPUs is more than the socket buffers hold; this client takes 64 KiB of it.
        QTcpSocket stalled;
        stalled.setReadBufferSize(64 * 1024);
        QVERIFY(connectTo(stalled, exporter.port()));
        stalled.write("GET /metrics HTTP/1.1\r\n\r\n");
        QVERIFY(stalled.waitForReadyRead(20000));
        QCOMPARE(
            get(exporter.port(), "/metrics/" + QByteArray::fromStdString(big->shape().nodes[1].hostname)).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(exporter.load().connections, size_t(0), 10000);
        stalled.setReadBufferSize(0);
        const auto cut = readResponse(stalled, QDeadlineTimer(20000));
        QCOMPARE(cut.status, 200);
        QVERIFY2(!cut.complete, "the stalled client was sent its whole page");
    }

    // Pages go out whole and as they are, whatever the scraper accepts: no gzip (Prometheus asks for it; compressing
    // a page per scrape would cost more than cutting it), no byte ranges, no Accept-Ranges.
    void pagesGoOutWholeAndPlain()
    {
        const QByteArray path = "/metrics/" + QByteArray::fromStdString(m_source->shape().nodes[2].hostname);
        const auto plain = get(m_exporter->port(), path);
        QCOMPARE(plain.status, 200);
        for (const QByteArray &path : { path, QByteArray("/metrics") }) {
            const auto asked = request(m_exporter->port(),
                "GET " + path
                    + " HTTP/1.1\r\nAccept-Encoding: gzip, br\r\nRange: bytes=0-9, 20-29\r\n"
                      "Connection: close\r\n\r\n");
            QVERIFY(asked.complete);
            QCOMPARE(asked.status, 200);
            QVERIFY2(!asked.head.toLower().contains("content-encoding") && !asked.head.toLower().contains("range"),
                asked.head.constData());
            QCOMPARE(asked.body, path == QByteArray("/metrics") ? get(m_exporter->port(), path).body : plain.body);
        }
        const auto head = request(m_exporter->port(), "HEAD " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n");
        QCOMPARE(head.status, 200);
        QVERIFY2(!head.head.toLower().contains("accept-ranges"), head.head.constData());
    }

    // Names that are no node's: 404 with a short text, however they are dressed up, and malformed escapes 400. The
    // server goes on serving.
    void unknownNodes_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<int>("status");
        const auto &shape = m_source->shape();
        const QByteArray first = QByteArray::fromStdString(shape.nodes.front().hostname);
        const QByteArray second = QByteArray::fromStdString(shape.nodes[1].hostname);
        auto row = [](const char *name, const QByteArray &path, int status) {
            QTest::newRow(name) << QByteArray("GET " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n") << status;
        };
        row("unknown", QByteArray("/metrics/no-such-host"), 404);
        row("empty", QByteArray("/metrics/"), 404);
        row("dot dot", QByteArray("/metrics/../metrics"), 404);
        row("dot dot escaped", QByteArray("/metrics/%2e%2e/metrics"), 404);
        row("dot dot before a name", "/metrics/../" + first, 404);
        row("trailing slash", "/metrics/" + first + '/', 404);
        row("escaped slash", "/metrics/" + first + "%2F", 404);
        row("double slash", "/metrics//" + first, 404);
        row("two names", "/metrics/" + first + '/' + second, 404);
        row("other case", "/metrics/" + first.toUpper(), 404);
        row("prefix of a name", "/metrics/" + first.left(first.size() - 1), 404);
        row("nul", "/metrics/" + first + "%00", 404);
        row("utf-8", QByteArray("/metrics/r\xc3\xa9"), 404);
        row("2 KiB", "/metrics/" + QByteArray(2048, 'a'), 404);
        row("bad escape", QByteArray("/metrics/%zz"), 400);
        row("cut escape", "/metrics/" + first + "%4", 400);
        row("lone percent", QByteArray("/metrics/%"), 400);
        // Within the 16 KiB a request head may have (a longer head is refused by the edge, see tst_httpedge), a long
        // name is just no node's.
        row("8 KiB", "/metrics/" + QByteArray(8 * 1024 - 64, 'a'), 404);
        row("14 KiB", "/metrics/" + QByteArray(14 * 1024, 'a'), 404);
    }

    void unknownNodes() { malformedRequests(); }

    // A name escaped by the scraper is the same name; a query string does not change it; HEAD answers GET's head
    // without a body, for known nodes and unknown, and the connection goes on.
    void nodePageEscapesAndHead()
    {
        const int port = m_exporter->port();
        const QByteArray hostname = QByteArray::fromStdString(m_source->shape().nodes.back().hostname);
        const auto plain = get(port, "/metrics/" + hostname);
        QCOMPARE(plain.status, 200);
        QVERIFY(!plain.body.isEmpty());
        QByteArray escaped;
        for (const char c : hostname) {
            escaped += '%' + QByteArray(1, c).toHex();
        }
        const auto decoded = get(port, "/metrics/" + escaped);
        QCOMPARE(decoded.status, 200);
        QCOMPARE(decoded.body, plain.body);
        const auto query = get(port, "/metrics/" + hostname + "?collect=all");
        QCOMPARE(query.status, 200);
        QCOMPARE(query.body, plain.body);

        QTcpSocket socket;
        QVERIFY(connectTo(socket, port));
        socket.write("HEAD /metrics/" + hostname + " HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto head = readResponse(socket, QDeadlineTimer(20000), true);
        QVERIFY(head.complete);
        QCOMPARE(head.status, 200);
        const QByteArray length = "Content-Length: " + QByteArray::number(plain.body.size()) + "\r\n";
        QVERIFY(QByteArray(head.head + "\r\n").contains(length));
        socket.write("HEAD /metrics/no-such-host HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto missing = readResponse(socket, QDeadlineTimer(20000), true);
        QVERIFY(missing.complete);
        QCOMPARE(missing.status, 404);
        // Had either answer carried a body, it would be read here as the start of this one.
        socket.write("GET /metrics/" + hostname + " HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto after = readResponse(socket, QDeadlineTimer(20000));
        QVERIFY(after.complete);
        QCOMPARE(after.status, 200);
        QCOMPARE(after.body, plain.body);
    }

    // The targets file: valid JSON, one target group per node, in node order, each at the exporter's address with
    // its node's page as __metrics_path__, and every path one the exporter answers.
    void targetsFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("targets.json"));
        std::string error;
        QVERIFY2(m_exporter->writeTargetsFile(path.toStdString(), &error), error.c_str());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError parseError {};
        const auto doc = QJsonDocument::fromJson(file.readAll(), &parseError);
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QVERIFY(doc.isArray());
        const auto groups = doc.array();
        const auto &shape = m_source->shape();
        QCOMPARE(static_cast<size_t>(groups.size()), shape.nodes.size());
        const QString address = QStringLiteral("127.0.0.1:%1").arg(m_exporter->port());
        for (qsizetype k = 0; k < groups.size(); ++k) {
            const auto group = groups.at(k).toObject();
            QCOMPARE(group.size(), 2);
            QCOMPARE(group.value(QStringLiteral("targets")).toArray(), QJsonArray { address });
            const auto labels = group.value(QStringLiteral("labels")).toObject();
            const QString hostname = QString::fromStdString(shape.nodes[static_cast<size_t>(k)].hostname);
            QCOMPARE(labels.size(), 2);
            QCOMPARE(
                labels.value(QStringLiteral("__metrics_path__")).toString(), QStringLiteral("/metrics/") + hostname);
            QCOMPARE(labels.value(QStringLiteral("instance")).toString(), hostname);
            const auto page
                = get(m_exporter->port(), labels.value(QStringLiteral("__metrics_path__")).toString().toUtf8());
            QCOMPARE(page.status, 200);
        }
        // Written whole: nothing is left beside it.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList { QStringLiteral("targets.json") });
        // A place it cannot be written: false, saying why, and nothing written.
        error.clear();
        QVERIFY(
            !m_exporter->writeTargetsFile(dir.filePath(QStringLiteral("missing/targets.json")).toStdString(), &error));
        QVERIFY(!error.empty());

        // Hostnames that JSON must escape come back as they were.
        be::FleetShape odd;
        odd.nodes.resize(3);
        odd.nodes[0].hostname = "quote\"back\\slash";
        odd.nodes[1].hostname = "tab\tnew\nline\x01";
        odd.nodes[2].hostname = "r\xc3\xa9seau";
        const auto oddDoc = QJsonDocument::fromJson(
            QByteArray::fromStdString(be::ExporterServer::fileSdTargets(odd, "[::1]:9400")), &parseError);
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QCOMPARE(oddDoc.array().size(), 3);
        for (qsizetype k = 0; k < 3; ++k) {
            const auto group = oddDoc.array().at(k).toObject();
            QCOMPARE(group.value(QStringLiteral("targets")).toArray(), QJsonArray { QStringLiteral("[::1]:9400") });
            QCOMPARE(group.value(QStringLiteral("labels")).toObject().value(QStringLiteral("instance")).toString(),
                QString::fromStdString(odd.nodes[static_cast<size_t>(k)].hostname));
        }
    }

    // A real Prometheus (Debian's) given the targets file scrapes one target per node: every one is up, the down
    // node's included (its exporter answers, with no GPU), and it stores the GPUs of the whole page.
    void prometheusScrapesTheNodes()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus'): the node targets are not "
                  "scraped by a real Prometheus here");
        }
        const Page whole = parsePage(get(m_exporter->port(), "/metrics").body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        const auto gpus = std::count_if(whole.samples.begin(), whole.samples.end(),
            [](const Sample &s) { return s.name == "DCGM_FI_DEV_GPU_TEMP"; });
        const auto nodes = static_cast<qsizetype>(m_source->shape().nodes.size());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString targets = dir.filePath(QStringLiteral("targets.json"));
        std::string error;
        QVERIFY2(m_exporter->writeTargetsFile(targets.toStdString(), &error), error.c_str());
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: dcgm\n"
            "    file_sd_configs:\n      - files: ['"
                + targets.toUtf8() + "']\n"));
        const int port = fleetscope::testing::freePort();
        QVERIFY(port > 0);
        fleetscope::testing::ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, dir.filePath(QStringLiteral("data")), port));

        auto count = [&](const QString &query) {
            const auto result = fleetscope::testing::instantQuery(port, query);
            return result.size() == 1 ? fleetscope::testing::sampleValue(result.at(0)) : -1.0;
        };
        const QString late = fleetscope::testing::waitForServer(
            server, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                const double up = count(QStringLiteral("count(up{job=\"dcgm\"} == 1)"));
                const double scraped = count(QStringLiteral("count(DCGM_FI_DEV_GPU_TEMP)"));
                *detail = QStringLiteral("%1 of %2 node targets up, %3 of %4 GPUs").arg(up).arg(nodes).arg(scraped).arg(gpus);
                return up == static_cast<double>(nodes) && scraped == static_cast<double>(gpus);
            });
        QVERIFY2(late.isEmpty(), qPrintable(late));
        // Every target is one node's, none down, and each GPU came from its own node's page.
        QCOMPARE(count(QStringLiteral("count(up{job=\"dcgm\"})")), static_cast<double>(nodes));
        const auto series = fleetscope::testing::instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
        QCOMPARE(series.size(), gpus);
        for (const auto &entry : series) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            QCOMPARE(labels.value(QStringLiteral("instance")), labels.value(QStringLiteral("Hostname")));
        }
    }

    // The exporter's door locked (--exporter-tls-cert, -tls-key, -token-file): a real Prometheus scrapes it over TLS
    // with a token (scheme https, tls_config.ca_file, authorization.credentials_file) and has every GPU; a scrape
    // without the token is 401 with WWW-Authenticate, and plain HTTP gets no page.
    void prometheusScrapesOverTlsWithAToken()
    {
        fleetscope::testing::TestCertificates certs;
        QVERIFY2(certs.make(), qPrintable(certs.error()));
        const QString tokens = certs.write(QStringLiteral("tokens"), "scraper-token-1\n");
        const QString token = certs.write(QStringLiteral("scraper.token"), "scraper-token-1\n");
        QVERIFY(QFile::setPermissions(tokens, QFile::ReadOwner | QFile::WriteOwner));
        const auto parsed = be::parseBackendOptions({ "--exporter-listen", "127.0.0.1:0", "--exporter-tls-cert",
            certs.crt(QStringLiteral("server")).toStdString(), "--exporter-tls-key",
            certs.key(QStringLiteral("server")).toStdString(), "--exporter-token-file", tokens.toStdString() });
        QVERIFY2(parsed.error.empty(), parsed.error.c_str());
        auto security = parsed.options.exporterSecurity;
        std::string error;
        QVERIFY2(be::attachTokenFile(&security, &error), error.c_str());
        be::ExporterServer exporter(*m_source, be::ExporterPage::Options(), be::ExporterServer::Limits(), security);
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        QVERIFY(exporter.url().rfind("https://", 0) == 0);
        QVERIFY(!get(exporter.port(), "/metrics").complete); // plain HTTP: no page

        httplib::SSLClient client("127.0.0.1", exporter.port());
        client.set_ca_cert_path(certs.crt(QStringLiteral("ca")).toStdString().c_str());
        client.enable_server_certificate_verification(true);
        const auto refused = client.Get("/metrics");
        QVERIFY(refused);
        QCOMPARE(refused->status, 401);
        QVERIFY(refused->get_header_value("WWW-Authenticate").rfind("Bearer", 0) == 0);
        const auto page = client.Get("/metrics", { { "Authorization", "Bearer scraper-token-1" } });
        QVERIFY(page);
        QCOMPARE(page->status, 200);
        QCOMPARE(QByteArray::fromStdString(page->body), get(m_exporter->port(), "/metrics").body);

        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus')");
        }
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: dcgm\n"
            "    scheme: https\n    tls_config:\n      ca_file: "
                + certs.crt(QStringLiteral("ca")).toUtf8() + "\n    authorization:\n      credentials_file: "
                + token.toUtf8() + "\n    static_configs:\n      - targets: ['127.0.0.1:"
                + QByteArray::number(exporter.port()) + "']\n"));
        const int port = fleetscope::testing::freePort();
        fleetscope::testing::ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, dir.filePath(QStringLiteral("data")), port));
        const Page served = parsePage(QByteArray::fromStdString(page->body));
        const auto gpus = static_cast<double>(std::count_if(served.samples.begin(), served.samples.end(),
            [](const Sample &x) { return x.name == "DCGM_FI_DEV_GPU_TEMP"; }));
        QVERIFY(gpus > 0);
        const QString late = fleetscope::testing::waitForServer(
            server, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                const auto result
                    = fleetscope::testing::instantQuery(port, QStringLiteral("count(DCGM_FI_DEV_GPU_TEMP)"));
                const double scraped = result.size() == 1 ? fleetscope::testing::sampleValue(result.at(0)) : -1.0;
                *detail = QStringLiteral("%1 of %2 GPUs scraped over TLS").arg(scraped).arg(gpus);
                return scraped == gpus;
            });
        QVERIFY2(late.isEmpty(), qPrintable(late));
    }

    void listenOption()
    {
        auto parse = [](std::vector<std::string> args) { return be::parseBackendOptions(args); };
        const auto ok = parse({ "--exporter-listen", "127.0.0.1:9400", "--exporter-topology-labels" });
        QVERIFY2(ok.error.empty(), ok.error.c_str());
        QCOMPARE(ok.options.exporterListen, std::string("127.0.0.1:9400"));
        QVERIFY(ok.options.exporterTopologyLabels);
        QVERIFY(parse({}).options.exporterListen.empty());
        QVERIFY(parse({ "--exporter-listen", "[::1]:0" }).error.empty());
        for (const char *bad : { "9400", "127.0.0.1:", ":9400", "127.0.0.1:65536", "127.0.0.1:-1", "host:94x0" }) {
            const auto r = parse({ "--exporter-listen", bad });
            QVERIFY2(r.error.find("--exporter-listen") != std::string::npos, bad);
        }
        QVERIFY(!parse({ "--exporter-listen" }).error.empty());

        const auto targets = parse({ "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file", "/tmp/t.json" });
        QVERIFY2(targets.error.empty(), targets.error.c_str());
        QCOMPARE(targets.options.exporterTargetsFile, std::string("/tmp/t.json"));
        QVERIFY(parse({}).options.exporterTargetsFile.empty());
        // Targets of an exporter that is not there, no file name, an empty one: refused, naming the option.
        for (const auto &bad : std::vector<std::vector<std::string>> { { "--exporter-targets-file", "/tmp/t.json" },
                 { "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file" },
                 { "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file", "" } }) {
            const auto r = parse(bad);
            QVERIFY2(r.error.find("--exporter-targets-file") != std::string::npos, r.error.c_str());
        }
        QVERIFY(be::backendUsage().find("--exporter-targets-file") != std::string::npos);

        be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
        std::string error;
        QVERIFY(!exporter.start("256.1.1.1:0", &error));
        QVERIFY(!error.empty());
        // Port taken: the running exporter's.
        QVERIFY(!exporter.start("127.0.0.1:" + std::to_string(m_exporter->port()), &error));
    }

private:
    std::unique_ptr<be::FrameSource> m_source;
    std::unique_ptr<be::ExporterServer> m_exporter;
};

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
