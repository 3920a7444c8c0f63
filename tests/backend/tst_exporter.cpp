// SPDX-License-Identifier: Apache-2.0
// The dcgm-exporter page: fetched over real HTTP from an exporter on loopback, parsed here, and held against the
// simulator's frame it was rendered from.
#include "backendoptions.h"
#include "exporterserver.h"
#include "simulator.h"

#include <QDeadlineTimer>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTest>

#include <cmath>
#include <map>
#include <set>

namespace be = fleetscope::backend;

namespace {

struct HttpResponse
{
    int status = 0;
    QByteArray head;
    QByteArray body;
    bool complete = false; // a whole response (status line, headers, Content-Length bytes of body) arrived
};

// Reads one Content-Length-framed response from the socket within the deadline.
HttpResponse readResponse(QTcpSocket &socket, QDeadlineTimer deadline, bool headOnly = false)
{
    HttpResponse r;
    QByteArray data;
    qsizetype headEnd = -1;
    qsizetype length = -1;
    for (;;) {
        data += socket.readAll();
        if (headEnd < 0 && (headEnd = data.indexOf("\r\n\r\n")) >= 0) {
            r.head = data.left(headEnd);
            const auto lines = r.head.split('\n');
            const auto statusLine = lines.value(0).split(' ');
            r.status = statusLine.value(1).toInt();
            length = 0;
            for (const auto &line : lines) {
                if (line.toLower().startsWith("content-length:")) {
                    length = line.mid(15).trimmed().toLongLong();
                }
            }
            if (headOnly) {
                length = 0;
            }
        }
        if (headEnd >= 0 && data.size() >= headEnd + 4 + length) {
            r.body = data.mid(headEnd + 4, length);
            r.complete = true;
            socket.setProperty("leftover", data.mid(headEnd + 4 + length));
            return r;
        }
        if (deadline.hasExpired() || socket.state() != QAbstractSocket::ConnectedState) {
            if (socket.bytesAvailable() == 0) {
                return r;
            }
            continue;
        }
        socket.waitForReadyRead(static_cast<int>(std::min<qint64>(deadline.remainingTime(), 1000)));
    }
}

bool connectTo(QTcpSocket &socket, int port)
{
    socket.connectToHost(QStringLiteral("127.0.0.1"), static_cast<quint16>(port));
    return socket.waitForConnected(5000);
}

HttpResponse request(int port, const QByteArray &raw, int timeoutMs = 20000)
{
    QTcpSocket socket;
    if (!connectTo(socket, port)) {
        return {};
    }
    socket.write(raw);
    socket.waitForBytesWritten(5000);
    return readResponse(socket, QDeadlineTimer(timeoutMs), raw.startsWith("HEAD "));
}

HttpResponse get(int port, const QByteArray &path)
{
    return request(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
}

// One sample line of the text format.
struct Sample
{
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

be::FrameSource::Options fleet(uint32_t gpus)
{
    be::FrameSource::Options o;
    o.gpuCount = gpus;
    o.seed = 7;
    // node-flap holds one node down from 120 s, so two minutes of history give a frame with an offline node.
    o.scenario = be::Scenario::Kind::NodeFlap;
    o.history = std::chrono::minutes(2);
    return o;
}

} // namespace

class TestExporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_source = std::make_unique<be::FrameSource>(fleet(1024));
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
        QCOMPARE(families.size(), size_t(13));
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
            QCOMPARE(s.labels.at("DCGM_FI_DRIVER_VERSION"), QByteArray("550.54.15"));
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
        std::shared_ptr<const be::SimFrame> previous;
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
                be::ExporterPage::render(sim.shape(), *frame, {}, be::ExporterPage::Options())));
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
        const auto text = be::ExporterPage::render(m_source->shape(), *frame, {}, options);
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
        QTest::newRow("garbage") << QByteArray("GARBAGE\r\n\r\n") << 400;
        QTest::newRow("no version") << QByteArray("GET /metrics\r\n\r\n") << 400;
        QTest::newRow("bad version") << QByteArray("GET /metrics HTTP/9.9\r\n\r\n") << 400;
        QTest::newRow("relative target") << QByteArray("GET metrics HTTP/1.1\r\n\r\n") << 400;
        QTest::newRow("header without colon") << QByteArray("GET /metrics HTTP/1.1\r\nHost localhost\r\n\r\n") << 400;
        QTest::newRow("bad content length") << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: x\r\n\r\n") << 400;
        QTest::newRow("huge body") << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n") << 413;
        QTest::newRow("chunked") << QByteArray("POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") << 501;
        QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff\r\n\r\n", 8) << 400;
        QTest::newRow("endless header") << QByteArray("GET /metrics HTTP/1.1\r\nX: ") + QByteArray(40000, 'a') << 431;
    }

    void malformedRequests()
    {
        QFETCH(QByteArray, raw);
        QFETCH(int, status);
        const auto response = request(m_exporter->port(), raw);
        QVERIFY(response.complete);
        QCOMPARE(response.status, status);
        // The server is still there and well.
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
    }

    // A body that comes after the head (curl's Expect: 100-continue does this) grows the buffer the request was
    // parsed from; the answer must still be right (under the asan preset, reading the old buffer is caught).
    void bodyAfterTheHead()
    {
        QTcpSocket socket;
        QVERIFY(connectTo(socket, m_exporter->port()));
        const QByteArray body(60000, 'x');
        socket.write(
            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n");
        QVERIFY(socket.waitForBytesWritten(5000));
        QTest::qWait(0); // let the head go out alone
        for (int i = 0; i < body.size(); i += 4096) {
            socket.write(body.mid(i, 4096));
            QVERIFY(socket.waitForBytesWritten(5000));
        }
        const auto response = readResponse(socket, QDeadlineTimer(20000));
        QVERIFY(response.complete);
        QCOMPARE(response.status, 405);
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
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
        QVERIFY(first.head.contains("Connection: keep-alive"));
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
        be::FrameSource source(fleet(10240));
        source.stop();
        be::ExporterServer exporter(source, be::ExporterPage::Options());
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
