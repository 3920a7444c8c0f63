// SPDX-License-Identifier: Apache-2.0
// HistoryService: the session's history for views, over the HistoryClient of the moment. Without a client nothing is
// asked (id 0, no answer); a client's answers come through tagged as the client tagged them; another client says so
// (reset) and the old one's answers no longer come through.
#include "app/session/historyservice.h"
#include "client/historyclient.h"

#include <QSignalSpy>
#include <QTest>

#include <chrono>

using namespace fleetscope;

namespace {
// Nothing listens on port 1 of the loopback: a call fails at once as unavailable.
const QString nowhere = QStringLiteral("127.0.0.1:1");

RangeRequest oneGpu()
{
    RangeRequest request;
    request.metricIds = { QStringLiteral("gpu_temp") };
    request.gpus = { 0 };
    request.toMs = 2000;
    request.fromMs = 1000;
    request.stepMs = 1000;
    return request;
}
} // namespace

class TestHistoryService : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void withoutAClientNothingIsAsked()
    {
        HistoryService service;
        QVERIFY(!service.hasClient());
        QSignalSpy failed(&service, &HistorySource::requestFailed);
        QCOMPARE(service.queryRange(oneGpu()), quint64(0));
        EventFilter all;
        all.everything = true;
        QCOMPARE(service.streamEvents(all, 0), quint64(0));
        service.cancel(0);
        QCoreApplication::processEvents(); // anything it posted would be delivered by now
        QCOMPARE(failed.count(), 0);
    }

    void aClientsAnswersComeThrough()
    {
        HistoryClient client(nowhere);
        client.setDeadline(std::chrono::seconds(10));
        HistoryService service;
        QSignalSpy reset(&service, &HistorySource::reset);
        service.setClient(&client);
        QCOMPARE(reset.count(), 1);
        QVERIFY(service.hasClient());
        QSignalSpy failed(&service, &HistorySource::requestFailed);
        const quint64 id = service.queryRange(oneGpu());
        QVERIFY(id != 0);
        QVERIFY(failed.wait(15000));
        QCOMPARE(failed.constFirst().at(0).value<quint64>(), id);
        QVERIFY2(failed.constFirst().at(1).toString().contains(QStringLiteral("unavailable"), Qt::CaseInsensitive),
            qPrintable(failed.constFirst().at(1).toString()));
    }

    void anotherClientResetsAndTheOldOneIsNotHeard()
    {
        HistoryClient first(nowhere);
        HistoryClient second(nowhere);
        HistoryService service;
        service.setClient(&first);
        QSignalSpy reset(&service, &HistorySource::reset);
        QSignalSpy failed(&service, &HistorySource::requestFailed);
        QSignalSpy firstFailed(&first, &HistoryClient::requestFailed);
        first.queryRange(oneGpu()); // asked of the client directly: its answer comes after the switch
        service.setClient(&second);
        QCOMPARE(reset.count(), 1);
        QVERIFY(firstFailed.wait(15000));
        QCOMPARE(failed.count(), 0);
        // And the new one's do.
        const quint64 id = service.queryRange(oneGpu());
        QVERIFY(failed.wait(15000));
        QCOMPARE(failed.constFirst().at(0).value<quint64>(), id);
    }
};

QTEST_GUILESS_MAIN(TestHistoryService)
#include "tst_historyservice.moc"
