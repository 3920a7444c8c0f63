// SPDX-License-Identifier: Apache-2.0
#include "backendoptions.h"

#include <QTest>

using namespace fleetscope::backend;

class TestBackendOptions : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void defaults()
    {
        const auto r = parseBackendOptions({});
        QVERIFY(r.error.empty());
        QCOMPARE(r.options.listen, std::string("127.0.0.1:50051"));
        QCOMPARE(r.options.source.gpuCount, 10240U);
    }
    void valid()
    {
        const auto r = parseBackendOptions(
            { "--listen", "127.0.0.1:0", "--gpus", "1048576", "--seed", "9", "--interval-ms", "100" });
        QVERIFY(r.error.empty());
        QCOMPARE(r.options.listen, std::string("127.0.0.1:0"));
        QCOMPARE(r.options.source.gpuCount, 1048576U);
        QCOMPARE(r.options.source.seed, uint64_t(9));
        QCOMPARE(r.options.source.interval.count(), 100);
    }
    void invalid_data()
    {
        QTest::addColumn<QByteArrayList>("args");
        QTest::addColumn<QByteArray>("mentions");
        QTest::newRow("unknown") << QByteArrayList { "--frobnicate" } << QByteArray("unknown option");
        QTest::newRow("missing value") << QByteArrayList { "--gpus" } << QByteArray("needs a value");
        QTest::newRow("too few gpus") << QByteArrayList { "--gpus", "4" } << QByteArray("--gpus");
        QTest::newRow("too many gpus") << QByteArrayList { "--gpus", "2000000" } << QByteArray("--gpus");
        QTest::newRow("not a number") << QByteArrayList { "--gpus", "12x" } << QByteArray("--gpus");
        QTest::newRow("negative seed") << QByteArrayList { "--seed", "-1" } << QByteArray("--seed");
        QTest::newRow("interval") << QByteArrayList { "--interval-ms", "5" } << QByteArray("--interval-ms");
        QTest::newRow("speed nan") << QByteArrayList { "--speed", "nan" } << QByteArray("--speed");
    }
    void invalid()
    {
        QFETCH(QByteArrayList, args);
        QFETCH(QByteArray, mentions);
        std::vector<std::string> argv;
        for (const auto &a : std::as_const(args)) {
            argv.push_back(a.toStdString());
        }
        const auto r = parseBackendOptions(argv);
        QVERIFY2(r.error.find(mentions.toStdString()) != std::string::npos, r.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestBackendOptions)
#include "tst_backendoptions.moc"
