// SPDX-License-Identifier: Apache-2.0
// Each staged domain fault end to end: a real backend process simulating it, a console session over gRPC, and the
// problems the console lists. The backend's incident must arrive first in the list, as a shared incident naming a
// domain of the kind at fault, with its cause, and the symptoms it explains not listed again on their own.
#include "app/consolesession.h"
#include "model/problems.h"
#include "tests/app/backendprocesstesting.h"

#include <QDateTime>
#include <QStandardPaths>
#include <QTest>

using namespace fleetscope;

namespace {

// A backend process staging one scenario, fast enough that its fault comes within seconds: at 60x two seconds in,
// and a staged fault of 15 simulated minutes is over 15 s later. Under a sanitizer, where the console may take that
// long to connect and learn the layout on a loaded machine, at 20x: the fault 6 s in and open for 45 s.
bool startStaging(backendprocesstesting::BackendProcess *backend, const QString &scenario, const QString &hardware)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const QString speed = QStringLiteral("20");
#else
    const QString speed = QStringLiteral("60");
#endif
    return backend->start({ QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--gpus"),
        hardware == QLatin1String("gb200-nvl72") ? QStringLiteral("1152") : QStringLiteral("2048"),
        QStringLiteral("--hardware"), hardware, QStringLiteral("--scenario"), scenario, QStringLiteral("--speed"),
        speed, QStringLiteral("--interval-ms"), QStringLiteral("250") });
}

} // namespace

class TestIncidentFlow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void aDomainFaultArrivesAsOneIncident_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("hardware");
        QTest::addColumn<QString>("cause");
        QTest::addColumn<int>("kind");
        QTest::newRow("leaf-down") << QStringLiteral("leaf-down") << QStringLiteral("hgx-h100")
                                   << QStringLiteral("network") << static_cast<int>(DomainKind::LeafSwitch);
        QTest::newRow("pdu-trip") << QStringLiteral("pdu-trip") << QStringLiteral("hgx-h100") << QStringLiteral("power")
                                  << static_cast<int>(DomainKind::Pdu);
        QTest::newRow("cooling-failure") << QStringLiteral("cooling-failure") << QStringLiteral("hgx-h100")
                                         << QStringLiteral("cooling") << static_cast<int>(DomainKind::CoolingUnit);
        QTest::newRow("cdu-failure") << QStringLiteral("cdu-failure") << QStringLiteral("gb200-nvl72")
                                     << QStringLiteral("cooling") << static_cast<int>(DomainKind::Cdu);
        QTest::newRow("leak") << QStringLiteral("leak") << QStringLiteral("gb200-nvl72") << QStringLiteral("cooling")
                              << static_cast<int>(DomainKind::NvlinkDomain);
    }

    void aDomainFaultArrivesAsOneIncident()
    {
        QFETCH(QString, scenario);
        QFETCH(QString, hardware);
        QFETCH(QString, cause);
        QFETCH(int, kind);
        backendprocesstesting::BackendProcess backend;
        QVERIFY(startStaging(&backend, scenario, hardware));
        ConsoleSession session(ConsoleSession::Options {});
        session.connectTo(backend.address());
        // The incident's first event, read as the problems page reads them: the first shared incident.
        const auto lead = [&session]() -> std::optional<Problem> {
            for (const Problem &p : session.problems(QDateTime::currentMSecsSinceEpoch())) {
                if (isSharedIncident(p)) {
                    return p;
                }
            }
            return std::nullopt;
        };
        // The fault comes 120 simulated seconds in; a cooling unit's heat front takes a minute and a half more.
        QTRY_VERIFY_WITH_TIMEOUT(lead().has_value(), 60000);
        const std::optional<Problem> first = lead();
        QVERIFY(first && first->incident);
        const TopologyPtr topology = session.topology();
        QVERIFY(topology);
        const int64_t domain = first->incident->domain;
        QVERIFY(domain >= 0 && static_cast<size_t>(domain) < topology->domains.size());
        // The smallest domain at fault, not its parent: a CDU's loops may be named where the whole CDU failed.
        const auto named = static_cast<int>(topology->domains[static_cast<size_t>(domain)].kind);
        const bool loopOfCdu
            = kind == static_cast<int>(DomainKind::Cdu) && named == static_cast<int>(DomainKind::CoolantLoop);
        QVERIFY2(named == kind || loopOfCdu,
            qPrintable(QStringLiteral("%1 names %2 %3: %4")
                           .arg(scenario, QString::fromLatin1(domainKindName(static_cast<DomainKind>(named))),
                               topology->domains[static_cast<size_t>(domain)].name, first->text)));
        QCOMPARE(first->incident->cause, cause);
        QVERIFY(!first->incident->evidence.isEmpty());
        QVERIFY(first->incident->gpuCount >= 3);
        // First in the list, and the GPUs it explains not listed on their own as the same kind of symptom.
        const auto problems = session.problems(QDateTime::currentMSecsSinceEpoch());
        QVERIFY(!problems.empty());
        QVERIFY(isSharedIncident(problems.front()));
        // The wall's banner, on every page, names it: its cause and the domain at fault.
        EventSeverity severity = EventSeverity::Info;
        const QString banner = leadIncidentLine(problems, tallyProblems(problems), &severity);
        const QString domainName = topology->domains[static_cast<size_t>(domain)].name;
        QVERIFY2(banner.startsWith(cause.toUpper() + QStringLiteral(" · ")) && banner.contains(domainName),
            qPrintable(banner));
    }
};

QTEST_MAIN(TestIncidentFlow)
#include "tst_incidentflow.moc"
