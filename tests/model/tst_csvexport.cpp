// SPDX-License-Identifier: Apache-2.0
// CSV export: exact bytes for a small fleet with a hostname that needs quoting, a GPU without a UUID, missing values
// (NaN) and a metric without a unit, written under a German default locale (numbers must still use '.'); and each
// kind of failure reported rather than written. A file is written whole or not at all (model/savefile.h).
#include "model/csvexport.h"
#include "model/savefile.h"
#include "tests/model/fulldisktesting.h"

#include <QBuffer>
#include <QFile>
#include <QLocale>
#include <QTest>

#include <limits>

using namespace fleetscope;

namespace {

constexpr float noValue = std::numeric_limits<float>::quiet_NaN();

// One rack, two nodes of two GPUs; the second node's hostname holds a comma and quotes.
TopologyPtr topology()
{
    auto t = std::make_shared<Topology>();
    t->generation = 3;
    t->gpuCount = 4;
    t->rows = { { QStringLiteral("r01"), QStringLiteral("hall-a") } };
    t->racks = { { QStringLiteral("r01-k01"), 0, 0, 0, 2 } };
    Topology::Node a;
    a.hostname = QStringLiteral("node-a");
    a.gpuCount = 2;
    Topology::Node b;
    b.hostname = QStringLiteral("gpu \"box\", 7");
    b.firstGpu = 2;
    b.gpuCount = 2;
    t->nodes = { a, b };
    t->nodeOfGpu = { 0, 0, 1, 1 };
    t->gpuUuids = { QUuid(QStringLiteral("12345678-9abc-4def-8123-456789abcdef")), QUuid(), QUuid(), QUuid() };
    t->gpuSerials = { "1654000000001", "", "", "" };
    return t;
}

std::vector<MetricInfo> metrics()
{
    MetricInfo temp;
    temp.id = QStringLiteral("gpu_temp");
    temp.unit = QStringLiteral("°C");
    MetricInfo power;
    power.id = QStringLiteral("power");
    power.unit = QStringLiteral("W");
    return { temp, power };
}

FramePtr frame(int64_t timeMs, std::vector<MetricPlane> planes)
{
    auto f = std::make_shared<Frame>();
    f->sampleTimeMs = timeMs;
    f->topologyGeneration = 3;
    f->planes = std::move(planes);
    f->health.assign(4, 0);
    return f;
}

} // namespace

class TestCsvExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany)); }
    void cleanup() { QLocale::setDefault(QLocale::c()); }
    void fields();
    void currentValues();
    void timeSeries();
    void failures();
    void writeErrorReported();
    void aFileIsWrittenWholeOrNotAtAll();
};

void TestCsvExport::fields()
{
    QCOMPARE(QLocale().decimalPoint(), QStringLiteral(",")); // the locale the numbers must not follow
    QCOMPARE(CsvExport::field(u"plain"), QByteArray("plain"));
    QCOMPARE(CsvExport::field(u"a,b"), QByteArray("\"a,b\""));
    QCOMPARE(CsvExport::field(u"say \"hi\""), QByteArray("\"say \"\"hi\"\"\""));
    QCOMPARE(CsvExport::field(u"two\nlines"), QByteArray("\"two\nlines\""));
    // A backend's name that a spreadsheet would run as a formula is written as text.
    QCOMPARE(CsvExport::field(u"=HYPERLINK(\"http://x\",\"r01\")"),
        QByteArray("\"'=HYPERLINK(\"\"http://x\"\",\"\"r01\"\")\""));
    QCOMPARE(CsvExport::field(u"+cmd"), QByteArray("'+cmd"));
    QCOMPARE(CsvExport::field(u"-2+3"), QByteArray("'-2+3"));
    QCOMPARE(CsvExport::field(u"@SUM(A1)"), QByteArray("'@SUM(A1)"));
    QCOMPARE(CsvExport::field(u"r01-k03-n03"), QByteArray("r01-k03-n03"));
    QCOMPARE(CsvExport::field(u"cr\r"), QByteArray("\"cr\r\""));
    QCOMPARE(CsvExport::field(u"°C"), QByteArray("\xc2\xb0\x43"));
    QCOMPARE(CsvExport::number(45.5F), QByteArray("45.5"));
    QCOMPARE(CsvExport::number(0.1F), QByteArray("0.1")); // the float's shortest text, not 0.100000001
    QCOMPARE(CsvExport::number(-1234567.0F), QByteArray("-1234567"));
    QCOMPARE(CsvExport::number(1e-7F), QByteArray("1e-07"));
    QCOMPARE(CsvExport::number(noValue), QByteArray());
    QCOMPARE(CsvExport::number(std::numeric_limits<float>::infinity()), QByteArray());
    QCOMPARE(CsvExport::time(1714533120000), QByteArray("2024-05-01T03:12:00.000Z"));
    QCOMPARE(CsvExport::time(1714533121500), QByteArray("2024-05-01T03:12:01.500Z"));
}

void TestCsvExport::currentValues()
{
    const FramePtr f = frame(1714533120000,
        { { QStringLiteral("gpu_temp"), { 45.5F, 1234567.0F, noValue, 70.0F } },
            { QStringLiteral("power"), { 300.25F, -2.5F, 0.1F, 1e-7F } },
            { QStringLiteral("xid_count"), { 0.0F, 1.0F, 2.0F, noValue } } });
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    const QString error = CsvExport::writeCurrentValues(buffer, *topology(), *f, metrics(), { 0, 1, 3, 2 });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QByteArray expected = "hostname,gpu,fleet index,uuid,gpu_temp (\xc2\xb0\x43),power (W),xid_count\r\n"
                                "node-a,0,0,GPU-12345678-9abc-4def-8123-456789abcdef,45.5,300.25,0\r\n"
                                "node-a,1,1,,1234567,-2.5,1\r\n"
                                "\"gpu \"\"box\"\", 7\",1,3,,70,1e-07,\r\n"
                                "\"gpu \"\"box\"\", 7\",0,2,,,0.1,2\r\n";
    QCOMPARE(buffer.data(), expected);
}

void TestCsvExport::timeSeries()
{
    const std::vector<FramePtr> frames {
        frame(1714533120000,
            { { QStringLiteral("gpu_temp"), { 45.5F, 0, 0, 70.0F } },
                { QStringLiteral("power"), { 300.25F, 0, 0, 1e-7F } } }),
        // The power plane missing from the second frame: its columns stay empty.
        frame(1714533121500, { { QStringLiteral("gpu_temp"), { 46.0F, 0, 0, 71.25F } } }),
        frame(1714533123000,
            { { QStringLiteral("power"), { noValue, 0, 0, 250.0F } },
                { QStringLiteral("gpu_temp"), { 47.0F, 0, 0, noValue } } }),
    };
    QBuffer buffer;
    QVERIFY(buffer.open(QIODevice::WriteOnly));
    const QString error = CsvExport::writeTimeSeries(buffer, *topology(), frames, metrics(), { 0, 3 });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QByteArray expected
        = "time,node-a GPU 0 gpu_temp (\xc2\xb0\x43),node-a GPU 0 power (W),"
          "\"gpu \"\"box\"\", 7 GPU 1 gpu_temp (\xc2\xb0\x43)\",\"gpu \"\"box\"\", 7 GPU 1 power (W)\"\r\n"
          "2024-05-01T03:12:00.000Z,45.5,300.25,70,1e-07\r\n"
          "2024-05-01T03:12:01.500Z,46,,71.25,\r\n"
          "2024-05-01T03:12:03.000Z,47,,,250\r\n";
    QCOMPARE(buffer.data(), expected);
}

void TestCsvExport::failures()
{
    const TopologyPtr t = topology();
    const FramePtr f = frame(0, { { QStringLiteral("gpu_temp"), { 1, 2, 3, 4 } } });
    QBuffer buffer;
    QString error = CsvExport::writeCurrentValues(buffer, *t, *f, metrics(), { 0 });
    QVERIFY2(error.contains(QLatin1String("not open for writing")), qPrintable(error));

    QVERIFY(buffer.open(QIODevice::WriteOnly));
    error = CsvExport::writeCurrentValues(buffer, *t, *f, metrics(), { 0, 4 });
    QVERIFY2(error.contains(QLatin1String("GPU 4 is not in the fleet of 4 GPUs")), qPrintable(error));
    error = CsvExport::writeTimeSeries(buffer, *t, { f }, metrics(), { 7 });
    QVERIFY2(error.contains(QLatin1String("GPU 7")), qPrintable(error));

    auto old = std::make_shared<Frame>(*f);
    old->topologyGeneration = 2;
    error = CsvExport::writeCurrentValues(buffer, *t, *old, metrics(), { 0 });
    QVERIFY2(error.contains(QLatin1String("generation 2, not 3")), qPrintable(error));
    error = CsvExport::writeTimeSeries(buffer, *t, { f, old }, metrics(), { 0 });
    QVERIFY2(error.contains(QLatin1String("generation 2, not 3")), qPrintable(error));
    error = CsvExport::writeTimeSeries(buffer, *t, { f, nullptr }, metrics(), { 0 });
    QVERIFY2(!error.isEmpty(), "a null frame was accepted");
    QVERIFY(buffer.data().isEmpty()); // nothing written when the input is refused

    // A short plane (a bad frame that got this far) gives empty fields, not a read past its end.
    const FramePtr shortPlane = frame(0, { { QStringLiteral("gpu_temp"), { 1 } } });
    error = CsvExport::writeCurrentValues(buffer, *t, *shortPlane, metrics(), { 0, 3 });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY2(buffer.data().endsWith(",,\r\n"), buffer.data().constData());
}

void TestCsvExport::writeErrorReported()
{
    // /dev/full takes the open and fails every write with ENOSPC, as a full disk does.
    QFile full(QStringLiteral("/dev/full"));
    if (!full.open(QIODevice::WriteOnly)) {
        QSKIP("no /dev/full here");
    }
    const FramePtr f = frame(0, { { QStringLiteral("gpu_temp"), { 1, 2, 3, 4 } } });
    const QString error = CsvExport::writeCurrentValues(full, *topology(), *f, metrics(), { 0, 1, 2, 3 });
    QVERIFY2(error.startsWith(QLatin1String("could not write the CSV")), qPrintable(error));
}

// SaveFile, as every export writes: on a full disk the error comes back and the file that was there is as it was,
// with no temporary file left beside it; an error of the writer's own leaves it as well; else the file is replaced.
// In place (QFile truncated, as the exports wrote before), the same full disk left an empty file where the old one was.
void TestCsvExport::aFileIsWrittenWholeOrNotAtAll()
{
    fulldisktesting::FullDisk disk;
    const QByteArray before = "the export of yesterday\r\n";
    QVERIFY(disk.keep(QStringLiteral("values.csv"), before));
    const FramePtr f = frame(0, { { QStringLiteral("gpu_temp"), { 1, 2, 3, 4 } } });
    auto writeValues = [&f](QFileDevice &out) {
        return CsvExport::writeCurrentValues(out, *topology(), *f, metrics(), { 0, 1, 2, 3 });
    };

    // Space: the file is replaced.
    QCOMPARE(SaveFile::write(disk.path(QStringLiteral("values.csv")), writeValues), QString());
    QVERIFY(disk.contents(QStringLiteral("values.csv")).startsWith("hostname,gpu,fleet index,uuid,gpu_temp (°C)\r\n"));
    QVERIFY(disk.keep(QStringLiteral("values.csv"), before));
    // The writer's own error: said, and nothing replaced.
    QCOMPARE(SaveFile::write(disk.path(QStringLiteral("values.csv")),
                 [](QFileDevice &out) {
                     out.write("half");
                     return QStringLiteral("gave up");
                 }),
        QStringLiteral("gave up"));
    QCOMPARE(disk.contents(QStringLiteral("values.csv")), before);
    QCOMPARE(disk.names(), QStringList { QStringLiteral("values.csv") });

    QVERIFY2(disk.fill(), qPrintable(disk.problem()));
    const QString error = SaveFile::write(disk.path(QStringLiteral("values.csv")), writeValues);
    QVERIFY2(error.contains(disk.expectedError()), qPrintable(error));
    const QString bytesError = SaveFile::write(disk.path(QStringLiteral("values.csv")), QByteArray(100, 'x'));
    const QString newError = SaveFile::write(disk.path(QStringLiteral("new.csv")), QByteArray(100, 'x'));
    disk.undo();
    QVERIFY2(bytesError.contains(disk.expectedError()), qPrintable(bytesError));
    QVERIFY2(newError.contains(disk.expectedError()), qPrintable(newError));
    QCOMPARE(disk.contents(QStringLiteral("values.csv")), before);
    QCOMPARE(disk.names(), QStringList { QStringLiteral("values.csv") });
}

QTEST_GUILESS_MAIN(TestCsvExport)
#include "tst_csvexport.moc"
