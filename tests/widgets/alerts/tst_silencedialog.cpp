// SPDX-License-Identifier: Apache-2.0
// The silence dialog (the matchers proposed for a GPU, a node, a rack, a domain and an alert; each editable, removable,
// more addable; a duration; a comment required; OK only when Alertmanager would take it; what it silences in words)
// and the list of silences (Expire on each, greyed out for a viewer with the reason).
//
// FLEETSCOPE_LOOK=ms keeps each view on screen that long, for a person to look at (../shared/tools/xshot).
#include "model/alertproblems.h"
#include "tests/model/testtopology.h"
#include "widgets/alerts/silencedialog.h"
#include "widgets/alerts/silencesview.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>

using namespace fleetscope;

namespace {
const int64_t t0 = QDateTime(QDate(2026, 12, 6), QTime(14, 0)).toMSecsSinceEpoch();

FleetAlert makeAlert(const QString &name, const QString &host, const QString &gpu)
{
    FleetAlert a;
    a.fingerprint = name + host + gpu;
    a.labels = { { QStringLiteral("alertname"), name }, { QStringLiteral("Hostname"), host },
        { QStringLiteral("gpu"), gpu } };
    a.severity = EventSeverity::Critical;
    return a;
}

QPushButton *okButton(SilenceDialog &dialog)
{
    return dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
}

// A person's look at the view (FLEETSCOPE_LOOK=ms); nothing in a test run.
void lookAt(QWidget *view)
{
    if (const int ms = qEnvironmentVariableIntValue("FLEETSCOPE_LOOK"); ms > 0) {
        view->show();
        view->raise();
        QTest::qWait(ms);
    }
}
} // namespace

class TestSilenceDialog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // A GPU's problem: its host and index proposed; OK waits for a comment; the words say what and until when, and
    // which of the alerts of now it silences; the draft is what was filled in.
    void aGpusSilenceFromTheProposal()
    {
        const TopologyPtr topology = testing::makeTopology();
        Problem xid;
        xid.kind = Problem::Kind::XidBurst;
        xid.gpu = 21;
        xid.gpus = { 21 };
        const SilenceProposal proposal = proposeSilence(xid, topology.get());
        SilenceDialog dialog;
        dialog.setClock([] { return t0; });
        dialog.setSubject(proposal.subject);
        dialog.setMatchers(proposal.matchers);
        dialog.setCreator(QStringLiteral("alice"));
        dialog.setAlerts({ makeAlert(QStringLiteral("GpuTooHot"), QStringLiteral("r01-k02-n01"), QStringLiteral("5")),
            makeAlert(QStringLiteral("GpuTooHot"), QStringLiteral("r01-k02-n01"), QStringLiteral("6")) });
        QCOMPARE(dialog.matcherCount(), 2);
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("matcherName0"))->text(), QStringLiteral("Hostname"));
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("matcherValue1"))->text(), QStringLiteral("5"));
        QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("matcherOperator0"))->currentText(), QStringLiteral("="));
        QVERIFY(!dialog.isValid());
        QVERIFY(!okButton(dialog)->isEnabled());
        QVERIFY2(dialog.problem().contains(QStringLiteral("comment")), qPrintable(dialog.problem()));
        // Typed as a person types it.
        QTest::keyClicks(dialog.findChild<QLineEdit *>(QStringLiteral("comment")), QStringLiteral("  reseating it  "));
        QVERIFY(dialog.isValid());
        QVERIFY(okButton(dialog)->isEnabled());
        QCOMPARE(dialog.summaryText(),
            QStringLiteral("Silences every alert where Hostname is \"r01-k02-n01\" and gpu is \"5\", for 2 h (until "
                           "16:00). It matches 1 of the 2 alerts shown now: GpuTooHot."));
        const SilenceDraft draft = dialog.draft();
        QCOMPARE(draft.matchers.size(), size_t { 2 });
        QCOMPARE(matcherText(draft.matchers[0]), QStringLiteral("Hostname=\"r01-k02-n01\""));
        QCOMPARE(matcherText(draft.matchers[1]), QStringLiteral("gpu=\"5\""));
        QCOMPARE(draft.durationMs, int64_t { 2 * 60 * 60 * 1000 });
        QCOMPARE(draft.comment, QStringLiteral("reseating it"));
        QSignalSpy accepted(&dialog, &QDialog::accepted);
        okButton(dialog)->click();
        QCOMPARE(accepted.size(), 1);
    }

    // Each matcher is editable (name, operator, value), removable, and more are addable; what Alertmanager would
    // refuse keeps OK disabled with the reason; a custom duration is taken in minutes.
    void matchersAreEditable()
    {
        SilenceDialog dialog;
        dialog.setClock([] { return t0; });
        dialog.setMatchers({ { QStringLiteral("domain"), QStringLiteral("r01-crah1"), false, true } });
        dialog.setComment(QStringLiteral("CRAH maintenance"));
        QVERIFY(dialog.isValid());
        auto *op = dialog.findChild<QComboBox *>(QStringLiteral("matcherOperator0"));
        op->setCurrentIndex(op->findText(QStringLiteral("=~")));
        auto *value = dialog.findChild<QLineEdit *>(QStringLiteral("matcherValue0"));
        value->setText(QStringLiteral("r01-crah[1-"));
        QVERIFY(!okButton(dialog)->isEnabled());
        QVERIFY2(dialog.problem().startsWith(QStringLiteral("matcher 1:")), qPrintable(dialog.problem()));
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("problem"))->isVisibleTo(&dialog));
        value->setText(QStringLiteral("r01-crah[12]"));
        QVERIFY(dialog.isValid());
        QVERIFY(dialog.draft().matchers[0].isRegex);
        QVERIFY(dialog.draft().matchers[0].isEqual);

        dialog.findChild<QPushButton *>(QStringLiteral("addMatcher"))->click();
        QCOMPARE(dialog.matcherCount(), 2);
        QVERIFY2(!dialog.isValid(), "an empty matcher has no name");
        QTest::keyClicks(dialog.findChild<QLineEdit *>(QStringLiteral("matcherName1")), QStringLiteral("severity"));
        QTest::keyClicks(dialog.findChild<QLineEdit *>(QStringLiteral("matcherValue1")), QStringLiteral("info"));
        auto *op1 = dialog.findChild<QComboBox *>(QStringLiteral("matcherOperator1"));
        op1->setCurrentIndex(op1->findText(QStringLiteral("!=")));
        QVERIFY(dialog.isValid());
        QCOMPARE(matcherText(dialog.draft().matchers[1]), QStringLiteral("severity!=\"info\""));
        QVERIFY2(dialog.summaryText().contains(QStringLiteral("and severity is not \"info\"")),
            qPrintable(dialog.summaryText()));

        dialog.findChild<QToolButton *>(QStringLiteral("removeMatcher0"))->click();
        QCOMPARE(dialog.matcherCount(), 1);
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("matcherName0"))->text(), QStringLiteral("severity"));
        // severity != "info" alone matches the empty value too (every alert without a severity): Alertmanager refuses
        // it.
        QVERIFY(!dialog.isValid());
        QVERIFY2(dialog.problem().contains(QStringLiteral("every alert")), qPrintable(dialog.problem()));
        dialog.removeMatcher(0);
        QCOMPARE(dialog.matcherCount(), 0);
        QVERIFY(!dialog.isValid());
        QVERIFY(!okButton(dialog)->isEnabled());

        dialog.addMatcher({ QStringLiteral("rack"), QStringLiteral("r01-k03"), false, true });
        auto *duration = dialog.findChild<QComboBox *>(QStringLiteral("duration"));
        auto *custom = dialog.findChild<QSpinBox *>(QStringLiteral("customMinutes"));
        QCOMPARE(duration->currentText(), QStringLiteral("2 h"));
        QVERIFY(!custom->isVisibleTo(&dialog));
        duration->setCurrentIndex(duration->findText(QStringLiteral("1 day")));
        QCOMPARE(dialog.draft().durationMs, int64_t { 24 * 60 * 60 * 1000 });
        QVERIFY2(dialog.summaryText().contains(QStringLiteral("for 1 day (until 7 Dec 14:00)")),
            qPrintable(dialog.summaryText()));
        duration->setCurrentIndex(duration->count() - 1);
        QVERIFY(custom->isVisibleTo(&dialog));
        custom->setValue(45);
        QCOMPARE(dialog.draft().durationMs, int64_t { 45 * 60 * 1000 });
        QVERIFY2(dialog.summaryText().contains(QStringLiteral("for 45 min (until 14:45)")),
            qPrintable(dialog.summaryText()));
        dialog.setDurationMs(90 * 60 * 1000);
        QCOMPARE(custom->value(), 90);
        QCOMPARE(dialog.draft().durationMs, int64_t { 90 * 60 * 1000 });
        dialog.setDurationMs(30 * 60 * 1000);
        QCOMPARE(duration->currentText(), QStringLiteral("30 min"));
        QVERIFY(dialog.isValid());
    }

    // The silences of now, a row each; Expire asks for the one it is on, and is greyed out with the reason for a
    // viewer.
    void silencesAndExpire()
    {
        SilencesView view;
        view.setSilences(
            {
                { QStringLiteral("s-1"),
                    { { QStringLiteral("Hostname"), QStringLiteral("r01-k02-n01"), false, true },
                        { QStringLiteral("gpu"), QStringLiteral("5"), false, true } },
                    t0 - 60'000, t0 + 2 * 3'600'000, QStringLiteral("alice"), QStringLiteral("swapping the PSU"),
                    FleetSilence::State::Active },
                { QStringLiteral("s-2"), { { QStringLiteral("rack"), QStringLiteral("r01-k0[12]"), true, true } },
                    t0 + 3'600'000, t0 + 5 * 3'600'000, QStringLiteral("bob"), QStringLiteral("rack move"),
                    FleetSilence::State::Pending },
                { QStringLiteral("s-3"), {}, t0 - 7'200'000, t0 - 3'600'000, QStringLiteral("carol"), QString(),
                    FleetSilence::State::Expired },
            },
            t0);
        QCOMPARE(view.count(), 2);
        QCOMPARE(view.rowTexts(),
            QStringList(
                { QStringLiteral("Hostname=\"r01-k02-n01\", gpu=\"5\" · alice · until 16:00 · swapping the PSU"),
                    QStringLiteral("rack=~\"r01-k0[12]\" · bob · from 15:00 until 19:00 · rack move") }));
        QSignalSpy expire(&view, &SilencesView::expireRequested);
        QVERIFY(view.expireButton(1)->isEnabled());
        view.expireButton(1)->click();
        QCOMPARE(expire.size(), 1);
        QCOMPARE(expire[0][0].toString(), QStringLiteral("s-2"));

        const QString why = silenceRefusal({ QStringLiteral("noc-wall"), BackendAccess::Role::Viewer, true, false });
        view.setRefusal(why);
        QVERIFY(!view.expireButton(0)->isEnabled());
        QCOMPARE(view.expireButton(0)->toolTip(), why);
        QVERIFY(!view.expireButton(1)->isEnabled());
        // A new state keeps them greyed out.
        view.setSilences({ { QStringLiteral("s-1"), {}, t0, t0 + 60'000, QStringLiteral("alice"), QString(),
                             FleetSilence::State::Active } },
            t0);
        QCOMPARE(view.count(), 1);
        QVERIFY(!view.expireButton(0)->isEnabled());
        view.setRefusal({});
        QVERIFY(view.expireButton(0)->isEnabled());
        view.setSilences({}, t0);
        QCOMPARE(view.count(), 0);
        QVERIFY(view.expireButton(0) == nullptr);
    }

    // For a person: the dialog as proposed for an alert, and the list with a viewer's greyed-out Expire.
    void lookAtThem()
    {
        const TopologyPtr topology = testing::makeTopology();
        AlertBoard board;
        FleetAlert hot = makeAlert(QStringLiteral("GpuTooHot"), QStringLiteral("r01-k02-n01"), QStringLiteral("5"));
        hot.gpuRuns = { { 21, 1 } };
        hot.gpuCount = 1;
        board.alerts
            = { hot, makeAlert(QStringLiteral("XidErrors"), QStringLiteral("r01-k03-n02"), QStringLiteral("1")) };
        const SilenceProposal proposal = proposeSilence(alertProblems(board, topology.get(), t0)[0], topology.get());
        SilenceDialog dialog;
        dialog.setSubject(proposal.subject);
        dialog.setMatchers(proposal.matchers);
        dialog.setAlerts(board.alerts);
        dialog.setCreator(QStringLiteral("alice (operator)"));
        QCOMPARE(dialog.matcherCount(), 3);
        QVERIFY(!dialog.isValid());
        lookAt(&dialog);
        dialog.setComment(QStringLiteral("Fan replaced at 14:10, watching it"));
        QVERIFY(dialog.isValid());
        lookAt(&dialog);
        dialog.hide();

        SilencesView view;
        view.resize(720, 240);
        view.setSilences({ { QStringLiteral("s-1"),
                             { { QStringLiteral("alertname"), QStringLiteral("GpuTooHot"), false, true },
                                 { QStringLiteral("Hostname"), QStringLiteral("r01-k02-n01"), false, true } },
                             t0, t0 + 7'200'000, QStringLiteral("alice"), QStringLiteral("Fan replaced"),
                             FleetSilence::State::Active } },
            t0);
        view.setRefusal(silenceRefusal({ QStringLiteral("noc-wall"), BackendAccess::Role::Viewer, true, false }));
        view.setNote(QStringLiteral("Alerts are old: Alertmanager unreachable for 2 min (connection refused)"));
        QCOMPARE(view.count(), 1);
        lookAt(&view);
    }
};

QTEST_MAIN(TestSilenceDialog)
#include "tst_silencedialog.moc"
