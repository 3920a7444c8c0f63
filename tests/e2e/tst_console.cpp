// SPDX-License-Identifier: Apache-2.0
// The executables end to end, as a user runs them: the console with its embedded backend, the backend alone.
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {
QString bin(const char *name)
{
    return QStringLiteral(FLEETSCOPE_BIN_DIR "/") + QString::fromLatin1(name);
}
} // namespace

class TestConsole : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void screenshotOfTheLiveEmbeddedFleet()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("shot.png"));
        QProcess console;
        console.start(bin("fleetscope"),
            { QStringLiteral("--gpus"), QStringLiteral("2048"), QStringLiteral("--screenshot"), file });
        QVERIFY2(console.waitForFinished(60000), "the console did not finish");
        QCOMPARE(console.exitStatus(), QProcess::NormalExit);
        QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
        QImage shot(file);
        QVERIFY(!shot.isNull());
        QVERIFY(shot.width() >= 800 && shot.height() >= 500);
        // A live map of 2,048 GPUs has many colours; an empty or failed view has a handful.
        QSet<QRgb> colours;
        for (int y = 0; y < shot.height(); y += 2) {
            for (int x = 0; x < shot.width(); x += 2) {
                colours.insert(shot.pixel(x, y));
            }
        }
        QVERIFY2(colours.size() > 100, qPrintable(QString::number(colours.size())));
    }

    // The map in change-per-minute mode shows a derived metric: --screenshot still waits for (and takes) it.
    void screenshotInChangeMode()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("change.png"));
        QProcess console;
        console.start(bin("fleetscope"),
            { QStringLiteral("--gpus"), QStringLiteral("512"), QStringLiteral("--change"), QStringLiteral("10"),
                QStringLiteral("--screenshot"), file });
        QVERIFY2(console.waitForFinished(60000), "the console did not finish");
        QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
        QVERIFY(!QImage(file).isNull());
    }

    void unreachableBackendKeepsTheWindowUpAndReportsIt()
    {
        QTemporaryDir dir;
        QProcess console;
        QElapsedTimer timer;
        timer.start();
        console.start(bin("fleetscope"),
            { QStringLiteral("--backend"), QStringLiteral("127.0.0.1:1"), QStringLiteral("--screenshot"),
                dir.filePath(QStringLiteral("never.png")), QStringLiteral("--screenshot-timeout"),
                QStringLiteral("3") });
        QVERIFY(console.waitForFinished(30000));
        // It kept running (retrying) until the screenshot deadline instead of giving up or hanging.
        QVERIFY(timer.elapsed() >= 2900);
        QCOMPARE(console.exitCode(), 1);
        const QString err = QString::fromUtf8(console.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("no live frame arrived within 3 s")), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("127.0.0.1:1")), qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("never.png"))));
    }

    void badCommandLinesExitWithCode2_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown option") << QStringList { QStringLiteral("--frobnicate") }
                                        << QStringLiteral("frobnicate");
        QTest::newRow("bad gpus") << QStringList { QStringLiteral("--gpus"), QStringLiteral("five") }
                                  << QStringLiteral("--gpus");
        QTest::newRow("bad backend") << QStringList { QStringLiteral("--backend"), QStringLiteral("nohost") }
                                     << QStringLiteral("HOST:PORT");
        QTest::newRow("stray argument") << QStringList { QStringLiteral("extra") } << QStringLiteral("extra");
        QTest::newRow("simulator option with --backend") << QStringList { QStringLiteral("--backend"),
            QStringLiteral("127.0.0.1:5"), QStringLiteral("--scenario"), QStringLiteral("bad-gpu") }
                                                         << QStringLiteral("embedded fleet");
        QTest::newRow("bad arrangement") << QStringList { QStringLiteral("--arrange"), QStringLiteral("spiral") }
                                         << QStringLiteral("--arrange");
        QTest::newRow("bad range") << QStringList { QStringLiteral("--range"), QStringLiteral("p50") }
                                   << QStringLiteral("--range");
        QTest::newRow("bad change window")
            << QStringList { QStringLiteral("--change"), QStringLiteral("7") } << QStringLiteral("--change");
        QTest::newRow("bad size") << QStringList { QStringLiteral("--size"), QStringLiteral("99999x1") }
                                  << QStringLiteral("--size");
        QTest::newRow("bad recorder length") << QStringList { QStringLiteral("--record-minutes"), QStringLiteral("0") }
                                             << QStringLiteral("--record-minutes");
        QTest::newRow("bad view") << QStringList { QStringLiteral("--view"), QStringLiteral("fs9;x=1") }
                                  << QStringLiteral("--view");
    }
    void badCommandLinesExitWithCode2()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        QProcess console;
        console.start(bin("fleetscope"), args);
        QVERIFY(console.waitForFinished(10000));
        QCOMPARE(console.exitCode(), 2);
        const QString err = QString::fromUtf8(console.readAllStandardError());
        QVERIFY2(err.contains(mentions), qPrintable(err));
    }

    void versionAndHelp()
    {
        QProcess console;
        console.start(bin("fleetscope"), { QStringLiteral("--version") });
        QVERIFY(console.waitForFinished(10000));
        QCOMPARE(console.exitCode(), 0);
        QVERIFY(console.readAllStandardOutput().startsWith("fleetscope " FLEETSCOPE_VERSION));
        console.start(bin("fleetscope"), { QStringLiteral("--help") });
        QVERIFY(console.waitForFinished(10000));
        QCOMPARE(console.exitCode(), 0);
        QVERIFY(console.readAllStandardOutput().contains("--screenshot"));
    }

    void backendAnnouncesItsPort()
    {
        QProcess backend;
        backend.start(bin("fleetscope-backend"),
            { QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--gpus"),
                QStringLiteral("64") });
        QVERIFY(backend.waitForReadyRead(10000));
        const QString line = QString::fromUtf8(backend.readLine()).trimmed();
        const auto match = QRegularExpression(QStringLiteral("^listening on 127\\.0\\.0\\.1:(\\d+)$")).match(line);
        QVERIFY2(match.hasMatch(), qPrintable(line));
        QVERIFY(match.captured(1).toInt() > 0);
        backend.terminate();
        QVERIFY(backend.waitForFinished(10000));
        QCOMPARE(backend.exitCode(), 0);
    }
};

QTEST_GUILESS_MAIN(TestConsole)
#include "tst_console.moc"
