// SPDX-License-Identifier: Apache-2.0
// Colour maps, the legend that explains them and the robust auto range. The expected colours come from the tables'
// definitions (Moreland's diverging map, the Okabe-Ito health colours, ColorMap::indexFor's rounding), not from
// copies of the tables. The legend is rendered with grab() and needs no OpenGL.
#include "model/autorange.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/colormap.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

using namespace fleetscope;

Q_DECLARE_METATYPE(fleetscope::ColorMap::Kind)

namespace {

// CIE L* (0 black .. 100 white) of an sRGB colour: how light it reads, also in a grey-scale print.
double lightness(QRgb c)
{
    const auto linear = [](int v) {
        const double x = v / 255.0;
        return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
    };
    const double y = 0.2126 * linear(qRed(c)) + 0.7152 * linear(qGreen(c)) + 0.0722 * linear(qBlue(c));
    return y > 0.008856 ? 116 * std::cbrt(y) - 16 : 903.3 * y;
}

int saturation(QRgb c)
{
    return QColor::fromRgb(c).hsvSaturation();
}

QString hex(QRgb c)
{
    return QColor::fromRgb(c).name();
}

bool imageContains(const QImage &image, QRgb colour)
{
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            if ((image.pixel(x, y) & 0xffffff) == (colour & 0xffffff)) {
                return true;
            }
        }
    }
    return false;
}

std::vector<float> ramp(int n)
{
    std::vector<float> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), 0.0F);
    return v;
}

constexpr float notANumber = std::numeric_limits<float>::quiet_NaN();
constexpr float infinity = std::numeric_limits<float>::infinity();

} // namespace

class TestColorMap : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyMapLoads_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<ColorMap::Kind>("kind");
        QTest::newRow("viridis") << QStringLiteral("viridis") << ColorMap::Kind::Sequential;
        QTest::newRow("inferno") << QStringLiteral("inferno") << ColorMap::Kind::Sequential;
        QTest::newRow("cividis") << QStringLiteral("cividis") << ColorMap::Kind::Sequential;
        QTest::newRow("coolwarm") << QStringLiteral("coolwarm") << ColorMap::Kind::Diverging;
        QTest::newRow("health") << QStringLiteral("health") << ColorMap::Kind::Categorical;
    }

    void everyMapLoads()
    {
        QFETCH(QString, name);
        QFETCH(ColorMap::Kind, kind);
        QVERIFY(ColorMap::names().contains(name));
        const ColorMap map = ColorMap::byName(name);
        QCOMPARE(map.name(), name); // an unknown or unloadable name would fall back to viridis
        QCOMPARE(map.kind(), kind);
        // qRgb() is always opaque; an entry the loader never filled is 0, transparent.
        for (int i = 0; i < ColorMap::size; ++i) {
            QVERIFY2(qAlpha(map.at(i)) == 255, qPrintable(QStringLiteral("entry %1 missing").arg(i)));
        }
        QCOMPARE(map.categoryNames().isEmpty(), kind != ColorMap::Kind::Categorical);
        if (kind != ColorMap::Kind::Categorical) {
            // A continuous map changes along its length: far more distinct entries than a handful of categories.
            QVERIFY(std::set<QRgb>(map.table().begin(), map.table().end()).size() > 200);
        }
    }

    void unknownNameFallsBackToViridis()
    {
        QCOMPARE(ColorMap::byName(QStringLiteral("no-such-map")).name(), QStringLiteral("viridis"));
    }

    void coolwarmIsDiverging()
    {
        const ColorMap map = ColorMap::byName(QStringLiteral("coolwarm"));
        // The centre, t = 0.5, is a light, near-neutral grey (Moreland's M = 88 at zero saturation: L* 88).
        const QRgb centre = map.at(ColorMap::indexFor(0.5F));
        QVERIFY2(saturation(centre) < 8, qPrintable(hex(centre)));
        QVERIFY2(std::abs(lightness(centre) - 88) < 1.5, qPrintable(hex(centre)));
        // The ends are Moreland's blue (59, 76, 192) and red (180, 4, 38).
        const QRgb low = map.at(0);
        const QRgb high = map.at(ColorMap::size - 1);
        QVERIFY2(qBlue(low) > qRed(low) + 100 && qBlue(low) > qGreen(low) + 100, qPrintable(hex(low)));
        QVERIFY2(qRed(high) > qGreen(high) + 100 && qRed(high) > qBlue(high) + 100, qPrintable(hex(high)));
        // Equal steps either side of the centre are equally light, and lightness rises towards the centre, so
        // neither side looks more important than the other.
        for (int i = 0; i < ColorMap::size / 2; ++i) {
            const double below = lightness(map.at(i));
            const double above = lightness(map.at(ColorMap::size - 1 - i));
            QVERIFY2(std::abs(below - above) < 1.5,
                qPrintable(QStringLiteral("entry %1: L* %2 vs %3").arg(i).arg(below).arg(above)));
            if (i > 0) {
                QVERIFY(below >= lightness(map.at(i - 1)) - 0.5);
            }
        }
    }

    void healthGivesEachCategoryItsColour()
    {
        const ColorMap map = ColorMap::byName(QStringLiteral("health"));
        // In the order of health::State, values 0..4.
        const QStringList labels { QStringLiteral("OK"), QStringLiteral("Warning"), QStringLiteral("Critical"),
            QStringLiteral("Offline"), QStringLiteral("No data") };
        QCOMPARE(map.categoryNames(), labels);
        QCOMPARE(static_cast<int>(map.categoryNames().size()), health::NoData + 1);
        // Okabe-Ito bluish green, orange and vermillion for the three states with data.
        QCOMPARE(hex(map.categoryColour(health::Ok)), QStringLiteral("#009e73"));
        QCOMPARE(hex(map.categoryColour(health::Warning)), QStringLiteral("#e69f00"));
        QCOMPARE(hex(map.categoryColour(health::Critical)), QStringLiteral("#d55e00"));

        const int last = static_cast<int>(labels.size()) - 1;
        for (int k = 0; k <= last; ++k) {
            // What the shader draws for the state value k over the metric's range 0..4.
            QCOMPARE(map.map(static_cast<float>(k), 0, static_cast<float>(last)), map.categoryColour(k));
            QCOMPARE(
                map.at(ColorMap::indexFor(static_cast<float>(k) / static_cast<float>(last))), map.categoryColour(k));
            for (int j = 0; j < k; ++j) {
                QVERIFY2(map.categoryColour(j) != map.categoryColour(k), qPrintable(labels[j] + labels[k]));
            }
        }
        // Every entry is the nearest category's colour, so interpolated or mean values take the nearer state.
        for (int i = 0; i < ColorMap::size; ++i) {
            const double t = i / double(ColorMap::size - 1);
            const int nearest = static_cast<int>(std::lround(t * last));
            QVERIFY2(map.at(i) == map.categoryColour(nearest), qPrintable(QStringLiteral("entry %1").arg(i)));
        }
    }

    void healthSeveritiesDifferInLightness()
    {
        // Adjacent severities must stay apart in a grey-scale print or to a viewer with no colour vision.
        const ColorMap map = ColorMap::byName(QStringLiteral("health"));
        for (int k = 1; k < map.categoryNames().size(); ++k) {
            const double a = lightness(map.categoryColour(k - 1));
            const double b = lightness(map.categoryColour(k));
            QVERIFY2(std::abs(a - b) >= 10,
                qPrintable(map.categoryNames()[k - 1] + QStringLiteral(" vs ") + map.categoryNames()[k]
                    + QStringLiteral(": L* %1 vs %2").arg(a).arg(b)));
        }
    }

    void robustRangeExcludesOutliers()
    {
        std::vector<float> values = ramp(1000); // 0..999
        values.push_back(1e9F);
        values.push_back(-1e9F);
        std::shuffle(values.begin(), values.end(), std::mt19937(7));
        const ValueRange r = robustRange(values);
        QVERIFY(r.valid);
        // The 1st and 99th percentiles of 0..999 are about 10 and 989; the outliers are far outside.
        QVERIFY2(r.min >= 5 && r.min <= 15, qPrintable(QString::number(r.min)));
        QVERIFY2(r.max >= 984 && r.max <= 994, qPrintable(QString::number(r.max)));

        const ValueRange all = robustRange(values, 0.0, 1.0);
        QCOMPARE(all.min, -1e9F);
        QCOMPARE(all.max, 1e9F);
    }

    void robustRangeIgnoresNonFinite()
    {
        const std::vector<float> clean = ramp(200);
        std::vector<float> dirty = clean;
        for (int i = 0; i < 50; ++i) {
            dirty.insert(dirty.begin() + i * 4, i % 3 == 0 ? notANumber : (i % 3 == 1 ? infinity : -infinity));
        }
        const ValueRange a = robustRange(clean, 0.0, 1.0);
        const ValueRange b = robustRange(dirty, 0.0, 1.0);
        QVERIFY(b.valid);
        QCOMPARE(b.min, 0.0F);
        QCOMPARE(b.max, 199.0F);
        const ValueRange c = robustRange(clean);
        const ValueRange d = robustRange(dirty);
        QCOMPARE(d.min, c.min);
        QCOMPARE(d.max, c.max);
        QCOMPARE(a.min, b.min);
    }

    void robustRangeSymmetric()
    {
        std::vector<float> values;
        for (int v = -50; v <= 200; ++v) {
            values.push_back(static_cast<float>(v));
        }
        const ValueRange r = robustRange(values, 0.0, 1.0, true);
        QVERIFY(r.valid);
        QCOMPARE(r.min, -200.0F);
        QCOMPARE(r.max, 200.0F);

        for (auto &v : values) {
            v = -v; // -200..50: the negative side is now the wider
        }
        const ValueRange n = robustRange(values, 0.0, 1.0, true);
        QCOMPARE(n.min, -200.0F);
        QCOMPARE(n.max, 200.0F);

        const ValueRange plain = robustRange(values, 0.0, 1.0, false);
        QCOMPARE(plain.min, -200.0F);
        QCOMPARE(plain.max, 50.0F);
    }

    void robustRangeWidensEqualValues()
    {
        const std::vector<float> sevens(100, 7.0F);
        const ValueRange r = robustRange(sevens);
        QVERIFY(r.valid);
        QVERIFY(r.min < 7.0F && r.max > 7.0F);
        QCOMPARE((r.min + r.max) / 2, 7.0F); // the value draws in the map's middle colour

        const std::vector<float> zeros(10, 0.0F);
        const ValueRange z = robustRange(zeros, 0.01, 0.99, true);
        QVERIFY(z.valid);
        QVERIFY(z.min < 0 && z.max > 0);
        QCOMPARE(z.min, -z.max);

        const ValueRange one = robustRange(std::vector<float> { 42.0F });
        QVERIFY(one.valid && one.min < 42.0F && one.max > 42.0F);
    }

    void robustRangeInvalidWithoutFiniteValues()
    {
        QVERIFY(!robustRange({}).valid);
        QVERIFY(!robustRange(std::vector<float>(1000, notANumber)).valid);
        QVERIFY(!robustRange(std::vector<float> { notANumber, infinity, -infinity }).valid);
    }

    void robustRangeMillionValues()
    {
        // A million GPUs: 0..999,999 in a shuffled order, with 0.1% of them wild.
        std::vector<float> values = ramp(1'000'000);
        std::mt19937 random(11);
        std::shuffle(values.begin(), values.end(), random);
        for (size_t i = 0; i < values.size(); i += 1000) {
            values[i] = (i / 1000) % 2 == 0 ? 1e12F : notANumber;
        }
        QElapsedTimer timer;
        timer.start();
        const ValueRange r = robustRange(values);
        const qint64 ns = timer.nsecsElapsed();
        qInfo("robustRange over 1,000,000 values: %.2f ms", static_cast<double>(ns) / 1e6);
        QVERIFY(r.valid);
        // The strided sample's percentiles are within a fraction of a percent of the true 10,000 and 990,000.
        QVERIFY2(std::abs(r.min - 10'000.0F) < 5'000.0F, qPrintable(QString::number(r.min)));
        QVERIFY2(std::abs(r.max - 990'000.0F) < 5'000.0F, qPrintable(QString::number(r.max)));
    }

    void robustRangeSeesEveryGpuOfANode()
    {
        // GPU 0 of every 8-GPU node runs hotter. A sample that always hit the same GPU of a node would see one
        // temperature only; the range must span both.
        std::vector<float> values(1'048'576);
        for (size_t i = 0; i < values.size(); ++i) {
            values[i] = i % 8 == 0 ? 90.0F : 50.0F;
        }
        const ValueRange r = robustRange(values);
        QVERIFY(r.valid);
        QCOMPARE(r.min, 50.0F);
        QCOMPARE(r.max, 90.0F);
    }

    void legendShowsCategorySwatches()
    {
        MetricInfo metric;
        metric.id = QStringLiteral("health");
        metric.unit = QStringLiteral("state");
        metric.rangeMin = 0;
        metric.rangeMax = 4;
        const ColorMap map = ColorMap::byName(QStringLiteral("health"));
        ColorLegend legend;
        legend.resize(600, legend.sizeHint().height());
        legend.setMetric(metric, map);
        const QImage image = legend.grab().toImage();
        // The coloured categories; offline and no data are the hatched key every legend ends with.
        QCOMPARE(map.colouredCategories(), 3);
        for (int k = 0; k < map.colouredCategories(); ++k) {
            QVERIFY2(imageContains(image, map.categoryColour(k)), qPrintable(map.categoryNames()[k]));
        }
        QVERIFY(imageContains(image, noDataColour));
        QVERIFY(imageContains(image,
            qRgb(qRed(noDataColour) * 55 / 100, qGreen(noDataColour) * 55 / 100, qBlue(noDataColour) * 55 / 100)));
        // The swatches run left to right in category order.
        const int y = image.height() / 2;
        int previous = -1;
        for (int k = 0; k < map.colouredCategories(); ++k) {
            int first = -1;
            for (int x = 0; x < image.width() && first < 0; ++x) {
                if ((image.pixel(x, y) & 0xffffff) == (map.categoryColour(k) & 0xffffff)) {
                    first = x;
                }
            }
            QVERIFY(first > previous);
            previous = first;
        }
    }

    void legendLabelsDivergingCentre()
    {
        MetricInfo metric;
        metric.id = QStringLiteral("gpu_temp_change");
        metric.unit = QStringLiteral("°C/min");
        metric.rangeMin = -5;
        metric.rangeMax = 5;
        const ColorMap coolwarm = ColorMap::byName(QStringLiteral("coolwarm"));
        ColorLegend legend;
        legend.resize(600, legend.sizeHint().height());
        legend.setMetric(metric, coolwarm);
        const QImage image = legend.grab().toImage();

        // Find the bar by its ends, then look at its middle: the map is light grey there (L* 88), so any dark pixel
        // is the centre label.
        const int y = image.height() / 2;
        int left = -1;
        int right = -1;
        for (int x = 0; x < image.width(); ++x) {
            if ((image.pixel(x, y) & 0xffffff) == (coolwarm.at(0) & 0xffffff) && left < 0) {
                left = x;
            }
            if ((image.pixel(x, y) & 0xffffff) == (coolwarm.at(ColorMap::size - 1) & 0xffffff)) {
                right = x;
            }
        }
        QVERIFY(left >= 0 && right > left + 100);
        const auto darkPixelsNearMiddle = [&](const QImage &img) {
            int dark = 0;
            const int middle = (left + right) / 2;
            for (int yy = 0; yy < img.height(); ++yy) {
                for (int x = middle - 20; x <= middle + 20; ++x) {
                    // Not the centre column itself, where the legend also draws tick marks.
                    dark += std::abs(x - middle) > 1 && lightness(img.pixel(x, yy)) < 35 ? 1 : 0;
                }
            }
            return dark;
        };
        QVERIFY(darkPixelsNearMiddle(image) > 5);

        // A sequential map over the same range labels only its ends. Viridis is a mid green there (L* 50 to 58), so
        // dark pixels would again be text: there are none.
        legend.setMetric(metric, ColorMap::byName(QStringLiteral("viridis")));
        QCOMPARE(darkPixelsNearMiddle(legend.grab().toImage()), 0);
    }
};

QTEST_MAIN(TestColorMap)
#include "tst_colormap.moc"
