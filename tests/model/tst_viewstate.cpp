// SPDX-License-Identifier: Apache-2.0
// View strings: every valid state survives toString() and parse(), the text stays short, and each kind of bad input
// is refused with a message that names what is wrong.
#include "model/viewstate.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace fleetscope;

Q_DECLARE_METATYPE(fleetscope::ViewState)

namespace {

QByteArray describe(const ViewState &s)
{
    return QStringLiteral("place=%1 gpu=%2 metric=%3 map=%4 live=%5 t=%6 arr=%7 zoom=%8@%9,%10 range=%11 w=%12")
        .arg(s.place)
        .arg(s.selectedGpu)
        .arg(s.metric, s.colourMap)
        .arg(s.live)
        .arg(s.timeMs)
        .arg(s.arrangement)
        .arg(s.zoom, 0, 'g', 17)
        .arg(s.centreX, 0, 'g', 17)
        .arg(s.centreY, 0, 'g', 17)
        .arg(s.range)
        .arg(s.changeWindowS)
        .toUtf8();
}

} // namespace

class TestViewState : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void defaultsAreShort();
    void readsTheDocumentedExample();
    void rejects_data();
    void rejects();
    void invalidStatesAreNotValid();
};

void TestViewState::roundTrip_data()
{
    QTest::addColumn<ViewState>("state");
    QTest::addColumn<int>("maxLength");

    QTest::newRow("defaults") << ViewState {} << 3;

    ViewState typical;
    typical.fleetGpus = 20000;
    typical.place = QStringLiteral("rack:37");
    typical.selectedGpu = 3301;
    typical.metric = QStringLiteral("gpu_temp");
    typical.live = false;
    typical.timeMs = 1714533120000; // 2024-05-01T03:12:00Z
    typical.arrangement = QStringLiteral("compact");
    typical.zoom = 4.5;
    typical.centreX = 812.5;
    typical.centreY = 233;
    QTest::newRow("typical incident") << typical << 120;

    ViewState everything = typical;
    everything.place = QStringLiteral("node:131071");
    everything.selectedGpu = 1048575;
    everything.metric = QStringLiteral("power_usage");
    everything.colourMap = QStringLiteral("coolwarm");
    everything.timeMs = 1714533120123;
    everything.arrangement = QStringLiteral("jobs");
    everything.zoom = 0.1; // not exact in binary: must still come back bit for bit
    everything.centreX = -12.345678901234567;
    everything.centreY = 1.0 / 3.0;
    everything.range = QStringLiteral("auto");
    everything.changeWindowS = 300;
    QTest::newRow("every field set") << everything << 160;

    ViewState live;
    live.place = QStringLiteral("row:0");
    live.metric = QStringLiteral("gpu_util");
    live.range = QStringLiteral("auto");
    QTest::newRow("live row") << live << 60;

    ViewState extremes;
    extremes.place = QStringLiteral("gpu:%1").arg(std::numeric_limits<int>::max());
    extremes.selectedGpu = std::numeric_limits<int>::max();
    extremes.live = false;
    extremes.timeMs = ViewState::maxTimeMs; // 9999-12-31T23:59:59.999Z
    extremes.zoom = ViewState::maxZoom;
    extremes.centreX = -ViewState::maxCentre;
    extremes.centreY = std::numeric_limits<double>::denorm_min();
    extremes.changeWindowS = 900; // the longest window offered
    QTest::newRow("extremes") << extremes << 200;

    // Every field at its longest: written, it stays far inside what parse() reads (a view read at the length limit
    // used to be written longer than the limit when its metric id was long enough, and not read back).
    ViewState longest = extremes;
    longest.fleetGpus = ViewState::maxFleetGpus;
    longest.place = QStringLiteral("node:%1").arg(std::numeric_limits<int>::max());
    longest.metric = QString(ViewState::maxIdLength, QLatin1Char('m'));
    longest.colourMap = QString(ViewState::maxIdLength, QLatin1Char('c'));
    longest.timeMs = ViewState::maxTimeMs - 1;
    longest.arrangement = QStringLiteral("compact");
    longest.zoom = std::nextafter(ViewState::maxZoom, 0.0);
    longest.centreX = -std::nextafter(ViewState::maxCentre, 0.0);
    longest.centreY = -std::numeric_limits<double>::denorm_min() * 3;
    longest.range = QStringLiteral("auto");
    QTest::newRow("longest") << longest << 400;

    ViewState epoch;
    epoch.live = false;
    epoch.timeMs = 0;
    epoch.zoom = std::numeric_limits<double>::min();
    QTest::newRow("epoch, tiny zoom") << epoch << 120;

    ViewState centreOnly; // fitted, but a centre remembered: kept as it was
    centreOnly.centreX = 5;
    QTest::newRow("fitted with a centre") << centreOnly << 60;
}

void TestViewState::roundTrip()
{
    QFETCH(ViewState, state);
    QFETCH(int, maxLength);
    QVERIFY2(state.validate().isEmpty(), qPrintable(state.validate()));
    const QString text = state.toString();
    QVERIFY2(text.size() <= maxLength, qPrintable(text));
    QVERIFY2(text.startsWith(QLatin1String("fs1")), qPrintable(text));
    // Nothing a URL would have to escape.
    for (const QChar c : text) {
        QVERIFY2(c.isLetterOrNumber() || QStringLiteral(";=:@,.-_").contains(c), qPrintable(text));
        QVERIFY2(c.unicode() < 128, qPrintable(text));
    }
    QString error;
    const auto parsed = ViewState::parse(text, &error);
    QVERIFY2(parsed.has_value(), qPrintable(text + QStringLiteral(": ") + error));
    const QByteArray why = describe(*parsed) + " != " + describe(state) + " via " + text.toUtf8();
    QVERIFY2(*parsed == state, why.constData());
    QCOMPARE(parsed->toString(), text);
}

void TestViewState::defaultsAreShort()
{
    QCOMPARE(ViewState {}.toString(), QStringLiteral("fs1"));
    ViewState s;
    s.metric = QStringLiteral("gpu_temp");
    QCOMPARE(s.toString(), QStringLiteral("fs1;m=gpu_temp"));
}

void TestViewState::readsTheDocumentedExample()
{
    QString error;
    const auto s = ViewState::parse(QStringLiteral("fs1;n=20000;p=rack:37;g=3301;m=gpu_temp;t=2024-05-01T03:12:00Z;"
                                                   "z=4.5@812.5,233;a=compact"),
        &error);
    QVERIFY2(s.has_value(), qPrintable(error));
    QCOMPARE(s->fleetGpus, Q_INT64_C(20000));
    QCOMPARE(s->place, QStringLiteral("rack:37"));
    QCOMPARE(s->selectedGpu, 3301);
    QCOMPARE(s->metric, QStringLiteral("gpu_temp"));
    QVERIFY(!s->live);
    QCOMPARE(s->timeMs, Q_INT64_C(1714533120000));
    QCOMPARE(s->zoom, 4.5);
    QCOMPARE(s->centreX, 812.5);
    QCOMPARE(s->centreY, 233.0);
    QCOMPARE(s->arrangement, QStringLiteral("compact"));
    QCOMPARE(s->range, QStringLiteral("fixed"));
    QVERIFY(s->colourMap.isEmpty());
    // Key order is free, surrounding blanks (a paste) are not an error, t=live is live.
    const auto reordered = ViewState::parse(QStringLiteral("  fs1;a=compact;t=live;p=row:2\n"), &error);
    QVERIFY2(reordered.has_value(), qPrintable(error));
    QVERIFY(reordered->live);
    QCOMPARE(reordered->place, QStringLiteral("row:2"));
    QCOMPARE(reordered->fleetGpus, Q_INT64_C(0)); // not said: views written before it applied as they are
}

void TestViewState::rejects_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message"); // a part of the message that names the problem

    QTest::newRow("empty") << QString() << QStringLiteral("empty view string");
    QTest::newRow("not a view") << QStringLiteral("hello world") << QStringLiteral("not a view string");
    QTest::newRow("url") << QStringLiteral("https://example.com/?v=fs1") << QStringLiteral("not a view string");
    QTest::newRow("future version") << QStringLiteral("fs2;p=rack:1")
                                    << QStringLiteral("unknown view string version 'fs2'");
    QTest::newRow("unknown key") << QStringLiteral("fs1;q=1") << QStringLiteral("unknown key 'q'");
    QTest::newRow("long key") << QStringLiteral("fs1;place=rack:1") << QStringLiteral("not key=value");
    QTest::newRow("no equals") << QStringLiteral("fs1;p") << QStringLiteral("not key=value");
    QTest::newRow("empty field") << QStringLiteral("fs1;;p=row:1") << QStringLiteral("empty field");
    QTest::newRow("empty value") << QStringLiteral("fs1;m=") << QStringLiteral("empty value for 'm'");
    QTest::newRow("duplicate") << QStringLiteral("fs1;m=gpu_temp;g=1;m=power") << QStringLiteral("duplicate key 'm'");
    QTest::newRow("bad gpu") << QStringLiteral("fs1;g=12x") << QStringLiteral("bad number '12x'");
    QTest::newRow("fleet of none") << QStringLiteral("fs1;n=0;p=rack:1") << QStringLiteral("a fleet of no GPUs");
    QTest::newRow("huge fleet") << QStringLiteral("fs1;n=2147483649") << QStringLiteral("number too large");
    QTest::newRow("negative fleet") << QStringLiteral("fs1;n=-3") << QStringLiteral("negative number '-3'");
    QTest::newRow("negative gpu") << QStringLiteral("fs1;g=-5") << QStringLiteral("negative number '-5'");
    QTest::newRow("huge gpu") << QStringLiteral("fs1;g=99999999999") << QStringLiteral("number too large");
    QTest::newRow("leading zero") << QStringLiteral("fs1;g=007") << QStringLiteral("leading zero");
    QTest::newRow("negative place") << QStringLiteral("fs1;p=rack:-1") << QStringLiteral("negative number '-1'");
    QTest::newRow("unknown level") << QStringLiteral("fs1;p=hall:1") << QStringLiteral("bad place 'hall:1'");
    QTest::newRow("place without index") << QStringLiteral("fs1;p=rack") << QStringLiteral("bad place 'rack'");
    QTest::newRow("place bad index") << QStringLiteral("fs1;p=rack:x") << QStringLiteral("bad number 'x'");
    QTest::newRow("nan zoom") << QStringLiteral("fs1;z=nan") << QStringLiteral("'nan' is not a finite number");
    QTest::newRow("inf zoom") << QStringLiteral("fs1;z=inf") << QStringLiteral("'inf' is not a finite number");
    QTest::newRow("inf centre") << QStringLiteral("fs1;z=2@-Infinity,0")
                                << QStringLiteral("'-Infinity' is not a finite number");
    QTest::newRow("overflow zoom") << QStringLiteral("fs1;z=1e999") << QStringLiteral("bad number '1e999'");
    QTest::newRow("negative zoom") << QStringLiteral("fs1;z=-2") << QStringLiteral("negative zoom");
    QTest::newRow("bad centre") << QStringLiteral("fs1;z=2@1") << QStringLiteral("bad centre '1'");
    QTest::newRow("zoom with blanks") << QStringLiteral("fs1;z= 2") << QStringLiteral("bad number ' 2'");
    QTest::newRow("bad time") << QStringLiteral("fs1;t=yesterday") << QStringLiteral("bad time 'yesterday'");
    QTest::newRow("local time") << QStringLiteral("fs1;t=2024-05-01T03:12:00") << QStringLiteral("bad time");
    QTest::newRow("before 1970") << QStringLiteral("fs1;t=1969-12-31T23:59:59Z") << QStringLiteral("outside 1970");
    QTest::newRow("bad arrangement") << QStringLiteral("fs1;a=spiral") << QStringLiteral("bad arrangement 'spiral'");
    QTest::newRow("bad range") << QStringLiteral("fs1;r=wide") << QStringLiteral("bad range 'wide'");
    QTest::newRow("bad metric") << QStringLiteral("fs1;m=gpu temp") << QStringLiteral("bad metric id 'gpu temp'");
    QTest::newRow("bad colour map") << QStringLiteral("fs1;c=a/b") << QStringLiteral("bad colour map name 'a/b'");
    QTest::newRow("long metric") << QStringLiteral("fs1;m=") + QString(ViewState::maxIdLength + 1, QLatin1Char('x'))
                                 << QStringLiteral("at most 64)");
    QTest::newRow("long colour map") << QStringLiteral("fs1;c=") + QString(900, QLatin1Char('x'))
                                     << QStringLiteral("bad colour map name");
    // Past what any layout holds: the map's camera multiplies the centre by the cell size and casts cells to int.
    QTest::newRow("zoom past the map") << QStringLiteral("fs1;z=65537") << QStringLiteral("zoom 65537 is over 65536");
    QTest::newRow("huge zoom") << QStringLiteral("fs1;z=1.7976931348623157e308") << QStringLiteral("is over");
    QTest::newRow("centre past the map") << QStringLiteral("fs1;z=2@1073741825,0") << QStringLiteral("outside");
    QTest::newRow("lowest centre") << QStringLiteral("fs1;z=2@0,-1.7976931348623157e308")
                                   << QStringLiteral("outside +-");
    QTest::newRow("fitted, centre far") << QStringLiteral("fs1;z=0@0,1e300") << QStringLiteral("outside");
    QTest::newRow("negative window") << QStringLiteral("fs1;w=-60") << QStringLiteral("negative number '-60'");
    QTest::newRow("window not offered") << QStringLiteral("fs1;w=45")
                                        << QStringLiteral("change window 45 s is not one");
    QTest::newRow("window of years") << QStringLiteral("fs1;w=2147483647") << QStringLiteral("is not one of");
    QTest::newRow("too long") << QStringLiteral("fs1;m=") + QString(1100, QLatin1Char('x'))
                              << QStringLiteral("too long: 1106 characters (at most 1024)");
}

void TestViewState::rejects()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    QString error;
    const auto parsed = ViewState::parse(text, &error);
    QVERIFY2(!parsed.has_value(), qPrintable(text));
    QVERIFY2(error.contains(message), qPrintable(QStringLiteral("'%1' lacks '%2'").arg(error, message)));
    // Without an error pointer it is still refused, and nothing crashes.
    QVERIFY(!ViewState::parse(text).has_value());
}

void TestViewState::invalidStatesAreNotValid()
{
    ViewState s;
    QVERIFY(s.validate().isEmpty());
    s.zoom = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(s.validate().contains(QLatin1String("finite")));
    s = {};
    s.fleetGpus = -1;
    QVERIFY(s.validate().contains(QLatin1String("fleet of -1 GPUs")));
    s = {};
    s.selectedGpu = -2;
    QVERIFY(s.validate().contains(QLatin1String("negative selected GPU")));
    s = {};
    s.place = QStringLiteral("rack:01");
    QVERIFY(s.validate().contains(QLatin1String("leading zero")));
    s = {};
    s.live = false;
    s.timeMs = -1;
    QVERIFY(s.validate().contains(QLatin1String("outside 1970")));
    s = {};
    s.zoom = ViewState::maxZoom * 2;
    QVERIFY(s.validate().contains(QLatin1String("is over")));
    s = {};
    s.centreY = -ViewState::maxCentre * 2;
    QVERIFY(s.validate().contains(QLatin1String("outside")));
    s = {};
    s.metric = QString(ViewState::maxIdLength + 1, QLatin1Char('m'));
    QVERIFY(s.validate().contains(QLatin1String("bad metric id")));
    QVERIFY(!ViewState::isIdentifier(s.metric));
    QVERIFY(ViewState::isIdentifier(s.metric.left(ViewState::maxIdLength)));
}

QTEST_GUILESS_MAIN(TestViewState)
#include "tst_viewstate.moc"
