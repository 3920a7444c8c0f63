// SPDX-License-Identifier: Apache-2.0
// The find box: its completion list is a sound item model over the fleet's search index; choosing in the popup emits
// the result; Enter takes the best match and Esc closes the popup, then clears. The index itself:
// tests/model/tst_fleetsearch.cpp.
#include "model/fleetsearch.h"
#include "tests/model/searchtesting.h"
#include "widgets/search/searchbox.h"
#include "widgets/search/searchresultmodel.h"

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QCompleter>
#include <QSignalSpy>
#include <QTest>

using namespace fleetscope;
using namespace fleetscope::testing;
using Kind = SearchResult::Kind;

class TestSearchBox : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelIsSound();
    void choosingACompletionEmits();
    void enterTakesTheBestAndEscClears();
};

void TestSearchBox::modelIsSound()
{
    SearchResultModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QCOMPARE(model.rowCount(), 0);
    model.setQuery(QStringLiteral("r01"));
    QCOMPARE(model.rowCount(), 0); // no index yet
    model.setSearch(FleetSearch(smallTopology(), smallJobs()));
    QCOMPARE(model.rowCount(), 7); // r01, its 2 racks and 4 nodes
    model.setLimit(3);
    QCOMPARE(model.rowCount(), 3);
    const QModelIndex first = model.index(0, 0);
    QCOMPARE(first.data(Qt::EditRole).toString(), QStringLiteral("r01"));
    QCOMPARE(first.data(SearchResultModel::KindRole).toInt(), int(Kind::Row));
    QCOMPARE(first.data(SearchResultModel::IdRole).toULongLong(), 0ULL);
    QVERIFY(first.data(Qt::DisplayRole).toString().contains(QLatin1String("2 racks")));
    QCOMPARE(first.data(SearchResultModel::ResultRole).value<SearchResult>(), model.results().front());
    model.setQuery(QStringLiteral("llama"));
    QCOMPARE(model.rowCount(), 1);
    model.setQuery(QStringLiteral("zzqx"));
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(resets.count(), 5);
}

void TestSearchBox::choosingACompletionEmits()
{
    SearchBox box;
    box.setSearch(FleetSearch(smallTopology(), smallJobs()));
    box.show();
    box.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&box));
    QSignalSpy chosen(&box, &SearchBox::resultChosen);

    QTest::keyClicks(&box, QStringLiteral("r02-k0"));
    QAbstractItemView *popup = box.completer()->popup();
    QTRY_VERIFY(popup->isVisible());
    QCOMPARE(box.resultModel()->query(), QStringLiteral("r02-k0"));
    QCOMPARE(popup->model()->rowCount(), int(box.resultModel()->results().size()));
    QVERIFY(popup->model()->rowCount() >= 3);

    // Down to the second row below the current one (or to the second row when none is current), then Enter.
    QTest::keyClick(popup, Qt::Key_Down);
    QTest::keyClick(popup, Qt::Key_Down);
    const int row = popup->currentIndex().row();
    QVERIFY(row >= 1);
    const SearchResult expected = box.resultModel()->results()[size_t(row)];
    QTest::keyClick(popup, Qt::Key_Return);
    QTRY_COMPARE(chosen.count(), 1);
    QCOMPARE(chosen.at(0).at(0).value<SearchResult>(), expected);
    QTRY_VERIFY(!popup->isVisible());
    QCOMPARE(box.text(), expected.text);
}

void TestSearchBox::enterTakesTheBestAndEscClears()
{
    SearchBox box;
    box.setSearch(FleetSearch(smallTopology(), smallJobs()));
    box.show();
    box.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&box));
    QSignalSpy chosen(&box, &SearchBox::resultChosen);

    box.setText(QStringLiteral("llama")); // pasted: no popup
    QVERIFY(!box.completer()->popup()->isVisible());
    QTest::keyClick(&box, Qt::Key_Return);
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.at(0).at(0).value<SearchResult>().id, 4711ULL);

    box.setText(QStringLiteral("zzqx"));
    QTest::keyClick(&box, Qt::Key_Return);
    QCOMPARE(chosen.count(), 1); // nothing found, nothing chosen

    QTest::keyClick(&box, Qt::Key_Escape);
    QVERIFY(box.text().isEmpty());

    // Esc with the popup open closes it first; the second clears.
    QTest::keyClicks(&box, QStringLiteral("r01"));
    QTRY_VERIFY(box.completer()->popup()->isVisible());
    QTest::keyClick(box.completer()->popup(), Qt::Key_Escape);
    QTRY_VERIFY(!box.completer()->popup()->isVisible());
    QCOMPARE(box.text(), QStringLiteral("r01"));
    QTest::keyClick(&box, Qt::Key_Escape);
    QVERIFY(box.text().isEmpty());
    QCOMPARE(chosen.count(), 1);
}

QTEST_MAIN(TestSearchBox)
#include "tst_searchbox.moc"
