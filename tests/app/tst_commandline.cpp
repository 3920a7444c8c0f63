// SPDX-License-Identifier: Apache-2.0
// The console's command line: every option's good values reach the options, every bad one exits 2 with a message
// naming the option; the wall's options and its playlist file.
#include "app/commandline.h"

#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace fleetscope;

namespace {
CommandLine parse(QStringList arguments)
{
    arguments.prepend(QStringLiteral("fleetscope"));
    return parseCommandLine(arguments);
}
} // namespace

class TestCommandLine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaults()
    {
        const CommandLine cl = parse({});
        QCOMPARE(cl.exitCode, -1);
        QVERIFY(!cl.options.wall);
        QCOMPARE(cl.options.pricePerGpuHour, 2.50);
        QCOMPARE(cl.options.playlist, WallPlaylist::defaultPages());
        QVERIFY(cl.options.restoreLastView);
    }

    void wallWithItsOptions()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("p.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"pages": [{"show": "events", "seconds": 7}, {"show": "view", "view": "fs1;p=rack:3"}]})");
        f.close();
        const CommandLine cl = parse({ QStringLiteral("--wall"), QStringLiteral("--screen"), QStringLiteral("2"),
            QStringLiteral("--playlist"), file, QStringLiteral("--price-per-gpu-hour"), QStringLiteral("3.1") });
        QCOMPARE(cl.exitCode, -1);
        QVERIFY(cl.options.wall);
        QCOMPARE(cl.options.screen, 2);
        QCOMPARE(cl.options.playlist.size(), size_t(2));
        QCOMPARE(cl.options.playlist[0].kind, WallPage::Kind::Events);
        QCOMPARE(cl.options.playlist[0].seconds, 7);
        QCOMPARE(cl.options.pricePerGpuHour, 3.1);
        QVERIFY(!cl.options.restoreLastView); // a wall shows its playlist, not the last session's view
    }

    // The embedded fleet's hardware goes to the simulator, which checks it; with --backend it means nothing.
    void hardwareGoesToTheEmbeddedFleet()
    {
        const CommandLine cl = parse({ QStringLiteral("--hardware"), QStringLiteral("gb200-nvl72") });
        QCOMPARE(cl.exitCode, -1);
        QCOMPARE(cl.options.simulatorArguments,
            QStringList({ QStringLiteral("--hardware"), QStringLiteral("gb200-nvl72") }));
        QVERIFY(parse({}).options.simulatorArguments.isEmpty());
        const CommandLine remote = parse({ QStringLiteral("--backend"), QStringLiteral("host:50051"),
            QStringLiteral("--hardware"), QStringLiteral("gb200-nvl72") });
        QCOMPARE(remote.exitCode, 2);
        QVERIFY2(remote.message.contains(QStringLiteral("--hardware is for the embedded fleet")),
            qPrintable(remote.message));
    }

    void badValuesExitTwoNamingTheOption_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("expected");
        QTest::newRow("screen without wall")
            << QStringList { QStringLiteral("--screen"), QStringLiteral("1") } << "--screen needs --wall";
        QTest::newRow("playlist without wall")
            << QStringList { QStringLiteral("--playlist"), QStringLiteral("x") } << "--playlist needs --wall";
        QTest::newRow("negative screen") << QStringList { QStringLiteral("--wall"), QStringLiteral("--screen"),
            QStringLiteral("-1") } << "--screen";
        QTest::newRow("screen not a number") << QStringList { QStringLiteral("--wall"), QStringLiteral("--screen"),
            QStringLiteral("left") } << "--screen";
        QTest::newRow("missing playlist") << QStringList { QStringLiteral("--wall"), QStringLiteral("--playlist"),
            QStringLiteral("/nonexistent.json") }
                                          << "/nonexistent.json";
        QTest::newRow("price") << QStringList { QStringLiteral("--price-per-gpu-hour"), QStringLiteral("-2") }
                               << "--price-per-gpu-hour";
        QTest::newRow("price nan") << QStringList { QStringLiteral("--price-per-gpu-hour"), QStringLiteral("nan") }
                                   << "--price-per-gpu-hour";
        QTest::newRow("gpus") << QStringList { QStringLiteral("--gpus"), QStringLiteral("7") } << "--gpus";
        QTest::newRow("backend") << QStringList { QStringLiteral("--backend"), QStringLiteral("nohost") }
                                 << "--backend";
        QTest::newRow("size") << QStringList { QStringLiteral("--size"), QStringLiteral("10x10") } << "--size";
        QTest::newRow("record") << QStringList { QStringLiteral("--record-minutes"), QStringLiteral("0") }
                                << "--record-minutes";
        QTest::newRow("view") << QStringList { QStringLiteral("--view"), QStringLiteral("nonsense") } << "--view";
        QTest::newRow("unknown") << QStringList { QStringLiteral("--frobnicate") } << "frobnicate";
    }

    void badValuesExitTwoNamingTheOption()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, expected);
        const CommandLine cl = parse(arguments);
        QCOMPARE(cl.exitCode, 2);
        QVERIFY2(cl.message.contains(expected), qPrintable(cl.message));
    }

    void aPlaylistWithABadViewIsRefused()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("p.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"pages": [{"show": "view", "view": "not a view"}]})");
        f.close();
        const CommandLine cl = parse({ QStringLiteral("--wall"), QStringLiteral("--playlist"), file });
        QCOMPARE(cl.exitCode, 2);
        // WallPlaylist reads each view page's view with the file.
        QVERIFY2(cl.message.contains(QStringLiteral("page 1: \"view\": not a view string")), qPrintable(cl.message));
    }

    // Credentials come as files, checked at once; the secrets never appear in the options or a message.
    void credentialsFiles()
    {
        QTemporaryDir dir;
        const QString token = dir.filePath(QStringLiteral("token"));
        QFile f(token);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hunter2\n");
        f.close();
        CommandLine cl = parse({ QStringLiteral("--backend"), QStringLiteral("noc:50051"), QStringLiteral("--ca"),
            token, QStringLiteral("--token-file"), token });
        QCOMPARE(cl.exitCode, -1);
        QCOMPARE(cl.options.security.tokenFile, token);
        QCOMPARE(cl.options.security.caFile, token);
        QVERIFY(cl.options.security.tls());

        cl = parse({ QStringLiteral("--backend"), QStringLiteral("noc:50051"), QStringLiteral("--cert"), token });
        QCOMPARE(cl.exitCode, 2);
        QVERIFY2(cl.message.contains(QLatin1String("--cert and --key go together")), qPrintable(cl.message));
        cl = parse({ QStringLiteral("--token-file"), dir.filePath(QStringLiteral("absent")) });
        QCOMPARE(cl.exitCode, 2);
        QVERIFY2(cl.message.contains(QLatin1String("--token-file: cannot read")), qPrintable(cl.message));
        QVERIFY(!cl.message.contains(QLatin1String("hunter2")));
    }

    // A wall starts with no command line: the connection comes from the settings, for what the command line left out.
    void connectionFromTheSettings()
    {
        QTemporaryDir dir;
        const QString ca = dir.filePath(QStringLiteral("ca.pem"));
        QFile f(ca);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("-----BEGIN CERTIFICATE-----\n");
        f.close();
        QSettings settings(dir.filePath(QStringLiteral("fleetscope.conf")), QSettings::IniFormat);
        saveConnectionSettings(QStringLiteral("noc-backend:50051"), ChannelSecurity { ca, {}, {}, ca }, &settings);

        ConsoleOptions options = parse({ QStringLiteral("--wall") }).options;
        QCOMPARE(applyConnectionSettings(&options, settings), QString());
        QCOMPARE(options.backend, QStringLiteral("noc-backend:50051"));
        QCOMPARE(options.security.caFile, ca);
        QCOMPARE(options.security.tokenFile, ca);

        // The command line wins, field by field; asking for the embedded fleet keeps it.
        options = parse(
            { QStringLiteral("--backend"), QStringLiteral("other:1"), QStringLiteral("--token-file"), f.fileName() })
                      .options;
        QCOMPARE(applyConnectionSettings(&options, settings), QString());
        QCOMPARE(options.backend, QStringLiteral("other:1"));
        QCOMPARE(options.security.caFile, ca);
        options = parse({ QStringLiteral("--gpus"), QStringLiteral("64") }).options;
        QCOMPARE(applyConnectionSettings(&options, settings), QString());
        QVERIFY(options.backend.isEmpty());
        QVERIFY(!options.security.tls());

        // A setting that cannot be used says which.
        settings.setValue(QStringLiteral("connection/tokenFile"), dir.filePath(QStringLiteral("gone")));
        options = parse({}).options;
        QVERIFY(applyConnectionSettings(&options, settings).contains(QLatin1String("connection/tokenFile")));
        settings.setValue(QStringLiteral("connection/backend"), QStringLiteral("no port"));
        options = parse({}).options;
        QVERIFY(applyConnectionSettings(&options, settings).contains(QLatin1String("connection/backend")));
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "tst_commandline.moc"
