// SPDX-License-Identifier: Apache-2.0
// Fleet search: each kind of key finds its row, rack, node, GPU or job; prefix matches rank before matches inside a
// name; the limit holds; jobs of another topology are not searched; and a million-GPU index builds and answers
// (times logged, not asserted: CI machines vary). The find box over it: tests/widgets/search/tst_searchbox.cpp.
#include "model/fleetsearch.h"
#include "tests/model/searchtesting.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>

using namespace fleetscope;
using namespace fleetscope::testing;
using Kind = SearchResult::Kind;

namespace {

QString describe(const std::vector<SearchResult> &results)
{
    QStringList lines;
    for (const auto &r : results) {
        lines << QStringLiteral("%1:%2 %3 (%4)").arg(static_cast<int>(r.kind)).arg(r.id).arg(r.text, r.detail);
    }
    return lines.join(QStringLiteral("; "));
}

} // namespace

class TestFleetSearch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void findsEachKey_data();
    void findsEachKey();
    void resultTexts();
    void prefixBeforeInside();
    void exactFirst();
    void limitHolds();
    void nothingForGarbage_data();
    void nothingForGarbage();
    void jobsOfAnotherGeneration();
    void millionGpus();
};

void TestFleetSearch::findsEachKey_data()
{
    const TopologyPtr t = smallTopology();
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("kind");
    QTest::addColumn<qulonglong>("id");

    QTest::newRow("hostname") << QStringLiteral("r01-k02-n01") << int(Kind::Node) << 2ULL;
    QTest::newRow("hostname, upper case, blanks") << QStringLiteral("  R02-K01-N02 ") << int(Kind::Node) << 5ULL;
    QTest::newRow("hostname prefix") << QStringLiteral("r02-k01-n0") << int(Kind::Node) << 4ULL;
    QTest::newRow("serial") << QString::fromStdString(t->gpuSerials[13]) << int(Kind::Gpu) << 13ULL;
    QTest::newRow("uuid with GPU-") << t->uuidText(21) << int(Kind::Gpu) << 21ULL;
    QTest::newRow("uuid without GPU-") << t->gpuUuids[22].toString(QUuid::WithoutBraces) << int(Kind::Gpu) << 22ULL;
    QTest::newRow("uuid upper case") << t->uuidText(23).toUpper() << int(Kind::Gpu) << 23ULL;
    QTest::newRow("uuid in braces") << t->gpuUuids[24].toString() << int(Kind::Gpu) << 24ULL;
    QTest::newRow("uuid prefix") << t->uuidText(25).left(4 + 13) << int(Kind::Gpu) << 25ULL;
    QTest::newRow("job id") << QStringLiteral("4711") << int(Kind::Job) << 4711ULL;
    QTest::newRow("job id, marked") << QStringLiteral("job 815") << int(Kind::Job) << 815ULL;
    QTest::newRow("job id, hash") << QStringLiteral("#47") << int(Kind::Job) << 47ULL;
    QTest::newRow("job name") << QStringLiteral("Llama") << int(Kind::Job) << 4711ULL;
    QTest::newRow("job name inside") << QStringLiteral("eval") << int(Kind::Job) << 815ULL;
    QTest::newRow("rack") << QStringLiteral("r02-k01") << int(Kind::Rack) << 2ULL;
    QTest::newRow("row") << QStringLiteral("r02") << int(Kind::Row) << 1ULL;
}

void TestFleetSearch::findsEachKey()
{
    QFETCH(QString, text);
    QFETCH(int, kind);
    QFETCH(qulonglong, id);
    const FleetSearch search(smallTopology(), smallJobs());
    const auto results = search.find(text, 10);
    QVERIFY2(!results.empty(), qPrintable(text));
    QVERIFY2(results.front().kind == static_cast<Kind>(kind) && results.front().id == id,
        qPrintable(text + QStringLiteral(" -> ") + describe(results)));
}

void TestFleetSearch::resultTexts()
{
    const TopologyPtr t = smallTopology();
    const FleetSearch search(t, smallJobs());
    const auto node = search.find(QStringLiteral("r01-k02-n01"), 1);
    QCOMPARE(node.size(), size_t(1));
    QCOMPARE(node[0].text, QStringLiteral("r01-k02-n01"));
    QCOMPARE(node[0].detail, QStringLiteral("node in rack r01-k02, 4 GPUs"));
    const auto serial = search.find(QString::fromStdString(t->gpuSerials[13]), 1);
    QCOMPARE(serial[0].text, QString::fromStdString(t->gpuSerials[13]));
    QCOMPARE(serial[0].detail, QStringLiteral("GPU 1 of r01-k02-n02"));
    const auto uuid = search.find(t->uuidText(21).toUpper(), 1);
    QCOMPARE(uuid[0].text, t->uuidText(21));
    const auto job = search.find(QStringLiteral("815"), 1);
    QCOMPARE(job[0].text, QStringLiteral("job 815 bert-eval"));
    QCOMPARE(job[0].detail, QStringLiteral("no owner, 1 GPUs, ended"));
    const auto row = search.find(QStringLiteral("r01"), 1);
    QCOMPARE(row[0].detail, QStringLiteral("row in hall-a, 2 racks"));
}

void TestFleetSearch::prefixBeforeInside()
{
    const FleetSearch search(smallTopology(), smallJobs());
    // "alpha-1" starts with it, "GPU-Box-Alpha" holds it further in.
    auto results = search.find(QStringLiteral("alpha"), 10);
    QCOMPARE(results.size(), size_t(2));
    QCOMPARE(results[0].text, QStringLiteral("alpha-1"));
    QCOMPARE(results[1].text, QStringLiteral("GPU-Box-Alpha"));

    // "k02": no key starts with it; racks and nodes hold it inside, in fleet order.
    results = search.find(QStringLiteral("k02"), 20);
    QVERIFY2(!results.empty(), "nothing found inside names");
    for (const auto &r : results) {
        QVERIFY2(r.text.contains(QLatin1String("k02")), qPrintable(describe(results)));
    }
    QCOMPARE(results.front().text, QStringLiteral("r01-k02"));

    // "a": one hostname starts with it; a hostname and two job names hold it further in, nodes before jobs.
    results = search.find(QStringLiteral("a"), 10);
    QStringList texts;
    for (const auto &r : results) {
        texts << r.text;
    }
    QCOMPARE(texts,
        QStringList({ QStringLiteral("alpha-1"), QStringLiteral("GPU-Box-Alpha"),
            QStringLiteral("job 4711 llama-train"), QStringLiteral("job 815 bert-eval") }));

    // Within the prefix matches: rows, then racks, then nodes.
    results = search.find(QStringLiteral("r0"), 100);
    QCOMPARE(results.size(), size_t(12)); // 2 rows, 4 racks, 6 nodes
    QCOMPARE(results[0].kind, Kind::Row);
    QCOMPARE(results[2].kind, Kind::Rack);
    QCOMPARE(results[6].kind, Kind::Node);
}

void TestFleetSearch::exactFirst()
{
    const FleetSearch search(smallTopology(), smallJobs());
    // Job 47's id is a prefix of job 4711's and of the name "4711-repro"; typed in full, 4711 comes first, then
    // the job whose name starts with it.
    const auto results = search.find(QStringLiteral("4711"), 10);
    QCOMPARE(results.size(), size_t(2));
    QCOMPARE(results[0].id, 4711ULL);
    QCOMPARE(results[1].id, 47ULL);
    const auto short_ = search.find(QStringLiteral("47"), 10);
    QCOMPARE(short_.front().id, 47ULL);
}

void TestFleetSearch::limitHolds()
{
    const FleetSearch search(smallTopology(), smallJobs());
    const auto all = search.find(QStringLiteral("r0"), 1000);
    QVERIFY2(all.size() > 10, qPrintable(describe(all)));
    for (const int limit : { 1, 3, 10 }) {
        const auto some = search.find(QStringLiteral("r0"), limit);
        QCOMPARE(some.size(), size_t(limit));
        QVERIFY(std::equal(some.begin(), some.end(), all.begin())); // the best of all, in the same order
    }
    QVERIFY(search.find(QStringLiteral("r0"), 0).empty());
    QVERIFY(search.find(QStringLiteral("r0"), -1).empty());
    // No duplicates: job 47 matches "47" by id and "4711-repro" by name, and is listed once.
    const auto jobs = search.find(QStringLiteral("47"), 10);
    QCOMPARE(std::count_if(jobs.begin(), jobs.end(), [](const auto &r) { return r.id == 47; }), 1L);
}

void TestFleetSearch::nothingForGarbage_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << QString();
    QTest::newRow("blanks") << QStringLiteral("   ");
    QTest::newRow("word") << QStringLiteral("zzqx");
    QTest::newRow("unknown uuid") << QStringLiteral("GPU-00000000-0000-0000-0000-000000000000");
    QTest::newRow("too long uuid") << smallTopology()->uuidText(3) + QStringLiteral("0");
    QTest::newRow("unknown serial") << QStringLiteral("9999999999999");
    QTest::newRow("nul") << QStringLiteral("n01") + QChar(0) + QStringLiteral("r01");
    QTest::newRow("symbols") << QStringLiteral("%$*&");
}

void TestFleetSearch::nothingForGarbage()
{
    QFETCH(QString, text);
    const FleetSearch search(smallTopology(), smallJobs());
    const auto results = search.find(text, 10);
    QVERIFY2(results.empty(), qPrintable(describe(results)));
    QVERIFY(FleetSearch().find(QStringLiteral("r01"), 10).empty()); // no topology yet
}

void TestFleetSearch::jobsOfAnotherGeneration()
{
    FleetSearch search(smallTopology(), smallJobs(6));
    QVERIFY(search.find(QStringLiteral("llama"), 10).empty());
    QVERIFY(!search.jobs());
    search.setJobs(smallJobs());
    QCOMPARE(search.find(QStringLiteral("llama"), 10).size(), size_t(1));
    // A copy shares the topology's index and keeps its own jobs.
    FleetSearch copy = search;
    copy.setJobs({});
    QVERIFY(copy.find(QStringLiteral("llama"), 10).empty());
    QCOMPARE(search.find(QStringLiteral("llama"), 10).size(), size_t(1));
    QCOMPARE(copy.find(QStringLiteral("r01-k01-n01"), 10).size(), size_t(1));
}

void TestFleetSearch::millionGpus()
{
    // 64 rows × 32 racks × 64 nodes × 8 GPUs = 1,048,576 GPUs on 131,072 nodes.
    QElapsedTimer timer;
    timer.start();
    const TopologyPtr t = gridTopology(64, 32, 64, 8);
    QCOMPARE(t->gpuCount, 1048576U);
    qInfo("synthetic topology: %lld ms", static_cast<long long>(timer.restart()));

    const FleetSearch search(t);
    qInfo("index build, 1,048,576 GPUs, 131,072 nodes: %lld ms", static_cast<long long>(timer.restart()));

    const uint32_t lastGpu = t->gpuCount - 1;
    struct Query
    {
        QString text;
        Kind kind;
        uint64_t id;
    };
    const std::vector<Query> queries {
        { QStringLiteral("r"), Kind::Row, 0 }, { QStringLiteral("r4"), Kind::Row, 39 },
        { QStringLiteral("r64-k32"), Kind::Rack, 64 * 32 - 1 },
        { QStringLiteral("r64-k32-n64"), Kind::Node, t->nodes.size() - 1 },
        { QStringLiteral("k32-n64"), Kind::Node, 31 * 64 + 63 }, // inside: r01-k32-n64
        { QStringLiteral("n64"), Kind::Node, 63 }, // inside, hostnames only
        { QString::fromStdString(t->gpuSerials[lastGpu]), Kind::Gpu, lastGpu },
        { QString::fromStdString(t->gpuSerials[lastGpu]).left(9), Kind::Gpu, 0 }, // kind only
        { t->uuidText(lastGpu), Kind::Gpu, lastGpu }, { t->uuidText(lastGpu).mid(4, 8).toUpper(), Kind::Gpu, lastGpu },
        { QStringLiteral("1654"), Kind::Gpu, 0 },
        { QStringLiteral("zzqx"), Kind::Row, 0 }, // nothing: a full scan of the names
    };
    for (const auto &q : queries) {
        timer.restart();
        const auto results = search.find(q.text, 12);
        const qint64 us = timer.nsecsElapsed() / 1000;
        qInfo("query %-45s %4zu results in %6lld us", qPrintable(q.text), results.size(), static_cast<long long>(us));
        if (q.text == QLatin1String("zzqx")) {
            QVERIFY(results.empty());
            continue;
        }
        QVERIFY2(!results.empty(), qPrintable(q.text));
        QCOMPARE(results.front().kind, q.kind);
        if (q.id != 0 || q.kind != Kind::Gpu) {
            QVERIFY2(results.front().id == q.id, qPrintable(q.text + QStringLiteral(" -> ") + describe(results)));
        }
    }
}

QTEST_GUILESS_MAIN(TestFleetSearch)
#include "tst_fleetsearch.moc"
