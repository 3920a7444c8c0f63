// SPDX-License-Identifier: Apache-2.0
// The executables end to end, as a user runs them: the console with its embedded backend, the backend alone.
#include "../backend/testing/testcertificates.h"
#include "../model/fulldisktesting.h"
#include "../realparts.h"

#include <QDeadlineTimer>
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

// How many colours a sample of the image has: a live map has many; an empty or failed view a handful.
int colourCount(const QImage &shot)
{
    QSet<QRgb> colours;
    for (int y = 0; y < shot.height(); y += 2) {
        for (int x = 0; x < shot.width(); x += 2) {
            colours.insert(shot.pixel(x, y));
        }
    }
    return static_cast<int>(colours.size());
}

// Starts the backend with these arguments on a free loopback port; its address, or empty.
QString startBackend(QProcess *backend, QStringList arguments)
{
    arguments << QStringLiteral("--listen") << QStringLiteral("127.0.0.1:0");
    backend->setProcessChannelMode(QProcess::SeparateChannels);
    backend->start(bin("fleetscope-backend"), arguments);
    QDeadlineTimer deadline(20000);
    QByteArray out;
    while (!deadline.hasExpired() && backend->state() != QProcess::NotRunning) {
        backend->waitForReadyRead(200);
        out += backend->readAllStandardOutput();
        const auto match
            = QRegularExpression(QStringLiteral("listening on (127\\.0\\.0\\.1:\\d+)")).match(QString::fromUtf8(out));
        if (match.hasMatch()) {
            return match.captured(1);
        }
    }
    qWarning("backend did not start: %s", backend->readAllStandardError().constData());
    return {};
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
        QVERIFY2(colourCount(shot) > 100, qPrintable(QString::number(colourCount(shot))));
    }

    // --screenshot onto a full disk: exit code 1 and why on stderr, and a shot taken before under that name is left as
    // it was (the PNG is written whole or not at all, model/savefile.h). Before, QPixmap::save wrote it in place.
    void screenshotOnAFullDiskFailsAndKeepsTheLastOne()
    {
        fleetscope::fulldisktesting::FullDisk disk;
        QVERIFY(disk.keep(QStringLiteral("shot.png"), "yesterday's shot"));
        QVERIFY2(disk.fill(), qPrintable(disk.problem()));
        QProcess console;
        console.start(bin("fleetscope"),
            { QStringLiteral("--gpus"), QStringLiteral("2048"), QStringLiteral("--screenshot"),
                disk.path(QStringLiteral("shot.png")) });
        QVERIFY2(console.waitForFinished(60000), "the console did not finish");
        disk.undo();
        const QString error = QString::fromLocal8Bit(console.readAllStandardError());
        QCOMPARE(console.exitStatus(), QProcess::NormalExit);
        QVERIFY2(console.exitCode() == 1, qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("fleetscope: cannot write ") + disk.path(QStringLiteral("shot.png")))
                && error.contains(disk.expectedError()),
            qPrintable(error));
        QCOMPARE(disk.contents(QStringLiteral("shot.png")), QByteArray("yesterday's shot"));
        QCOMPARE(disk.names(), QStringList { QStringLiteral("shot.png") });
    }

    // The whole console against a backend that takes TLS and a token only: with the CA and the token file, a live
    // map; with a wrong token, no frame, and the refusal said.
    void screenshotOverTlsWithAToken()
    {
        fleetscope::testing::TestCertificates certificates;
        if (!certificates.make()) {
            FLEETSCOPE_SKIP_WITHOUT(qPrintable(certificates.error()));
        }
        const QString tokens = certificates.write(QStringLiteral("tokens"), "wall-token-1\n");
        const QString token = certificates.write(QStringLiteral("console.token"), "wall-token-1\n");
        const QString wrong = certificates.write(QStringLiteral("wrong.token"), "guess\n");
        QProcess backend;
        const QString address = startBackend(&backend,
            { QStringLiteral("--gpus"), QStringLiteral("1024"), QStringLiteral("--tls-cert"),
                certificates.crt(QStringLiteral("server")), QStringLiteral("--tls-key"),
                certificates.key(QStringLiteral("server")), QStringLiteral("--token-file"), tokens });
        QVERIFY(!address.isEmpty());

        const QString file = certificates.path(QStringLiteral("tls.png"));
        QProcess console;
        console.start(bin("fleetscope"),
            { QStringLiteral("--backend"), address, QStringLiteral("--ca"), certificates.crt(QStringLiteral("ca")),
                QStringLiteral("--token-file"), token, QStringLiteral("--screenshot"), file });
        QVERIFY2(console.waitForFinished(60000), "the console did not finish");
        QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
        QVERIFY2(colourCount(QImage(file)) > 100, "no live map over TLS");

        QProcess refused;
        refused.start(bin("fleetscope"),
            { QStringLiteral("--backend"), address, QStringLiteral("--ca"), certificates.crt(QStringLiteral("ca")),
                QStringLiteral("--token-file"), wrong, QStringLiteral("--screenshot"), file,
                QStringLiteral("--screenshot-timeout"), QStringLiteral("3") });
        QVERIFY2(refused.waitForFinished(60000), "the console did not finish");
        QCOMPARE(refused.exitCode(), 1);
        const QByteArray said = refused.readAllStandardError();
        QVERIFY2(said.contains("token refused"), said.constData());
        QVERIFY2(!said.contains("guess"), said.constData()); // the token itself is never said
        backend.terminate();
        QVERIFY(backend.waitForFinished(10000));
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
