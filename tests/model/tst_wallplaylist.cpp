// SPDX-License-Identifier: Apache-2.0
// The wall's playlist: pages in order, each for its dwell time, driven by a test clock; pause, next, previous; the
// playlist file checked field by field; the example file in docs/ parses.
#include "model/wallplaylist.h"

#include "model/viewstate.h"

#include <QFile>
#include <QSignalSpy>
#include <QTest>

using namespace fleetscope;

class TestWallPlaylist : public QObject
{
    Q_OBJECT

    qint64 m_now = 1000;

    static WallPage page(WallPage::Kind kind, int seconds)
    {
        WallPage p;
        p.kind = kind;
        p.seconds = seconds;
        return p;
    }

private Q_SLOTS:
    void pagesInOrderForTheirDwellTimes()
    {
        WallPlaylist playlist([this] { return m_now; });
        QSignalSpy changed(&playlist, &WallPlaylist::pageChanged);
        playlist.setPages(
            { page(WallPage::Kind::Fleet, 30), page(WallPage::Kind::Summary, 10), page(WallPage::Kind::Events, 5) });
        QCOMPARE(changed.count(), 1);
        QCOMPARE(playlist.current(), 0);
        // Walk the clock a second at a time over two whole cycles and record when each page began.
        std::vector<std::pair<qint64, int>> starts { { m_now, 0 } };
        const qint64 begin = m_now;
        for (int s = 0; s < 2 * 45; ++s) {
            m_now += 1000;
            playlist.tick();
            if (changed.count() > static_cast<int>(starts.size())) {
                starts.emplace_back(m_now, playlist.current());
            }
        }
        const std::vector<std::pair<qint64, int>> expected { { begin, 0 }, { begin + 30000, 1 }, { begin + 40000, 2 },
            { begin + 45000, 0 }, { begin + 75000, 1 }, { begin + 85000, 2 }, { begin + 90000, 0 } };
        QCOMPARE(starts, expected);
    }

    void progressAndRemaining()
    {
        WallPlaylist playlist([this] { return m_now; });
        playlist.setPages({ page(WallPage::Kind::Fleet, 20) });
        m_now += 5000;
        QCOMPARE(playlist.progress(), 0.25);
        QCOMPARE(playlist.remainingMs(), 15000);
        m_now += 60000;
        QCOMPARE(playlist.progress(), 1.0);
        QCOMPARE(playlist.remainingMs(), 0);
        playlist.tick(); // one page only: it wraps to itself and starts its dwell again
        QCOMPARE(playlist.current(), 0);
        QCOMPARE(playlist.remainingMs(), 20000);
    }

    // After a long stall the wall moves one page on and gives it its whole dwell, not a race through the pages.
    void aStalledClockMovesOnePage()
    {
        WallPlaylist playlist([this] { return m_now; });
        playlist.setPages(
            { page(WallPage::Kind::Fleet, 10), page(WallPage::Kind::Summary, 10), page(WallPage::Kind::Events, 10) });
        m_now += 3600 * 1000;
        playlist.tick();
        QCOMPARE(playlist.current(), 1);
        m_now += 9999;
        playlist.tick();
        QCOMPARE(playlist.current(), 1);
        m_now += 1;
        playlist.tick();
        QCOMPARE(playlist.current(), 2);
    }

    void pauseNextPrevious()
    {
        WallPlaylist playlist([this] { return m_now; });
        playlist.setPages(
            { page(WallPage::Kind::Fleet, 10), page(WallPage::Kind::Summary, 10), page(WallPage::Kind::Events, 10) });
        playlist.setPaused(true);
        m_now += 60000;
        playlist.tick();
        QCOMPARE(playlist.current(), 0);
        playlist.setPaused(false); // its whole dwell again
        m_now += 9000;
        playlist.tick();
        QCOMPARE(playlist.current(), 0);
        m_now += 1000;
        playlist.tick();
        QCOMPARE(playlist.current(), 1);
        playlist.previous();
        QCOMPARE(playlist.current(), 0);
        playlist.previous();
        QCOMPARE(playlist.current(), 2);
        playlist.next();
        QCOMPARE(playlist.current(), 0);
    }

    void parsesEveryKindAndField()
    {
        QString error;
        const auto pages = WallPlaylist::parse(R"({"pages": [
            {"show": "fleet", "seconds": 45, "metric": "power"},
            {"show": "hottest-row"},
            {"show": "summary", "seconds": 3},
            {"show": "events", "seconds": 3600},
            {"show": "replay", "minutes": 5, "speed": 60, "metric": "gpu_temp"},
            {"show": "view", "view": "fs1;p=rack:3"},
            {"show": "problems", "seconds": 25}]})",
            &error);
        QVERIFY2(pages, qPrintable(error));
        QCOMPARE(pages->size(), size_t(7));
        QCOMPARE((*pages)[6].kind, WallPage::Kind::Problems);
        QCOMPARE((*pages)[6].seconds, 25);
        QCOMPARE((*pages)[0].kind, WallPage::Kind::Fleet);
        QCOMPARE((*pages)[0].seconds, 45);
        QCOMPARE((*pages)[0].metric, QStringLiteral("power"));
        QCOMPARE((*pages)[1].kind, WallPage::Kind::HottestRow);
        QCOMPARE((*pages)[1].seconds, 30); // the default
        QCOMPARE((*pages)[2].seconds, 3);
        QCOMPARE((*pages)[3].seconds, 3600);
        QCOMPARE((*pages)[4].replayMinutes, 5);
        QCOMPARE((*pages)[4].replaySpeed, 60.0);
        QCOMPARE((*pages)[5].view, QStringLiteral("fs1;p=rack:3"));
    }

    // A job page names its job by name or id (a number or its digits), or none: the worst running job.
    void jobPages()
    {
        QString error;
        const auto pages = WallPlaylist::parse(R"({"pages": [
            {"show": "job", "job": "train-llm-192", "seconds": 30},
            {"show": "job", "job": 4711},
            {"show": "job"}]})",
            &error);
        QVERIFY2(pages, qPrintable(error));
        QCOMPARE(pages->size(), size_t(3));
        QCOMPARE((*pages)[0].kind, WallPage::Kind::Job);
        QCOMPARE((*pages)[0].job, QStringLiteral("train-llm-192"));
        QCOMPARE((*pages)[0].seconds, 30);
        QCOMPARE((*pages)[1].job, QStringLiteral("4711"));
        QVERIFY((*pages)[2].job.isEmpty());
        QCOMPARE(WallPage::kindName(WallPage::Kind::Job), QStringLiteral("job"));
        QVERIFY(!((*pages)[0] == (*pages)[2]));
    }

    void badJobPages_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("job on a fleet page")
            << QByteArray(R"({"pages": [{"show":"fleet","job":"a"}]})") << "unknown key \"job\" for a fleet page";
        QTest::newRow("metric on a job page")
            << QByteArray(R"({"pages": [{"show":"job","metric":"power"}]})") << "unknown key \"metric\"";
        QTest::newRow("fractional id") << QByteArray(R"({"pages": [{"show":"job","job":47.5}]})") << "whole id";
        QTest::newRow("negative id") << QByteArray(R"({"pages": [{"show":"job","job":-3}]})") << "whole id";
        QTest::newRow("zero id") << QByteArray(R"({"pages": [{"show":"job","job":0}]})") << "whole id";
        QTest::newRow("id past 2^53") << QByteArray(R"({"pages": [{"show":"job","job":1e300}]})") << "whole id";
        QTest::newRow("empty name") << QByteArray(R"({"pages": [{"show":"job","job":"  "}]})") << "page 1: \"job\"";
        QTest::newRow("not a name") << QByteArray(R"({"pages": [{"show":"job","job":[1]}]})") << "name or id";
        QTest::newRow("control character")
            << QByteArray("{\"pages\": [{\"show\":\"job\",\"job\":\"a\\u001b[2Jb\"}]}") << "control character";
        QTest::newRow("name too long") << QByteArray(
            "{\"pages\": [{\"show\":\"job\",\"job\":\"" + QByteArray(WallPlaylist::maxJobText + 1, 'j') + "\"}]}")
                                       << "at most 256";
    }

    void badJobPages()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!WallPlaylist::parse(json, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    // Which job a page shows: by id, by name (running, then the newest, as names are reused), or the worst running.
    void theJobAPageShows()
    {
        auto job = [](uint64_t id, const char *name, double goodput, uint32_t stragglers, bool running,
                       int64_t start = 1000, size_t gpus = 8) {
            Job j;
            j.id = id;
            j.name = QString::fromLatin1(name);
            j.goodput = goodput;
            j.stragglerCount = stragglers;
            j.endTimeMs = running ? 0 : start + 500;
            j.startTimeMs = start;
            j.gpus.resize(gpus);
            return j;
        };
        JobList jobs;
        jobs.jobs = { job(11, "train-llm-192", 0.95, 0, false, 100), job(12, "train-llm-192", 0.97, 1, true, 200),
            job(13, "eval", 0.80, 1, true), job(14, "finetune", 0.80, 3, true), job(15, "ended-worst", 0.1, 9, false),
            job(16, "unaccounted", -1, 40, true), job(17, "4711", 0.9, 0, true) };
        WallPage page;
        page.kind = WallPage::Kind::Job;
        const Job *shown = jobForWallPage(page, jobs);
        QVERIFY(shown != nullptr);
        QCOMPARE(shown->id, uint64_t(14)); // 0.80 twice: the one with more stragglers; ended and unknown ones not
        page.job = QStringLiteral("train-llm-192");
        QCOMPARE(jobForWallPage(page, jobs)->id, uint64_t(12)); // the running one of that name
        jobs.jobs[1].endTimeMs = 300;
        QCOMPARE(jobForWallPage(page, jobs)->id, uint64_t(12)); // both ended: the newest
        page.job = QStringLiteral("13");
        QCOMPARE(jobForWallPage(page, jobs)->id, uint64_t(13));
        page.job = QStringLiteral("17");
        QCOMPARE(jobForWallPage(page, jobs)->name, QStringLiteral("4711"));
        page.job = QStringLiteral("4711"); // no job has that id: the name
        QCOMPARE(jobForWallPage(page, jobs)->id, uint64_t(17));
        page.job = QStringLiteral("nobody");
        QCOMPARE(jobForWallPage(page, jobs), nullptr);
        // No running job has an account: the most stragglers.
        page.job.clear();
        for (Job &j : jobs.jobs) {
            j.goodput = -1;
        }
        QCOMPARE(jobForWallPage(page, jobs)->id, uint64_t(16));
        QCOMPARE(jobForWallPage(page, JobList()), nullptr);
    }

    void badFilesSayWhatIsWrong_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << QByteArray("{\n\"pages\": [\n{,}]}") << "line 3";
        QTest::newRow("not an object") << QByteArray("[1]") << "\"pages\" array";
        QTest::newRow("empty") << QByteArray(R"({"pages": []})") << "at least one page";
        QTest::newRow("extra key") << QByteArray(R"({"pages": [{"show":"fleet"}], "loop": 1})") << "unknown key";
        QTest::newRow("unknown kind") << QByteArray(R"({"pages": [{"show":"fleet"},{"show":"map"}]})") << "page 2";
        QTest::newRow("typo") << QByteArray(R"({"pages": [{"show":"fleet","secnds":5}]})") << "\"secnds\"";
        QTest::newRow("key of another kind")
            << QByteArray(R"({"pages": [{"show":"summary","metric":"power"}]})") << "unknown key \"metric\"";
        QTest::newRow("too short") << QByteArray(R"({"pages": [{"show":"fleet","seconds":1}]})") << "from 3 to 3600";
        QTest::newRow("too long") << QByteArray(R"({"pages": [{"show":"fleet","seconds":86400}]})") << "3600";
        QTest::newRow("fraction") << QByteArray(R"({"pages": [{"show":"fleet","seconds":4.5}]})") << "whole number";
        QTest::newRow("string seconds") << QByteArray(R"({"pages": [{"show":"fleet","seconds":"10"}]})")
                                        << "whole number";
        QTest::newRow("metric not a string") << QByteArray(R"({"pages": [{"show":"fleet","metric":3}]})") << "metric";
        QTest::newRow("minutes") << QByteArray(R"({"pages": [{"show":"replay","minutes":0}]})") << "minutes";
        QTest::newRow("speed") << QByteArray(R"({"pages": [{"show":"replay","speed":1e9}]})") << "speed";
        QTest::newRow("view without view") << QByteArray(R"({"pages": [{"show":"view"}]})") << "needs \"view\"";
        // Read when the file is, not when the page comes up on the wall.
        QTest::newRow("view not a view string")
            << QByteArray(R"({"pages": [{"show":"fleet"},{"show":"view","view":"rack 3"}]})")
            << "page 2: \"view\": not a view string";
        QTest::newRow("view with a bad field")
            << QByteArray(R"({"pages": [{"show":"view","view":"fs1;z=nan"}]})") << "'nan' is not a finite number";
        // The wall opens a map page as a view with the page's metric: what a view cannot carry is refused here.
        QTest::newRow("metric with a blank")
            << QByteArray(R"({"pages": [{"show":"fleet","metric":"gpu temp"}]})") << "must be a metric id";
        QTest::newRow("metric with a semicolon")
            << QByteArray(R"({"pages": [{"show":"replay","metric":"a;t=0"}]})") << "must be a metric id";
        const QByteArray longMetric(ViewState::maxIdLength + 1, 'm');
        QTest::newRow("metric too long") << QByteArray("{\"pages\": [{\"show\":\"fleet\",\"metric\":\"" + longMetric
            + "\"}]}") << "at most 64";
        QByteArray many = R"({"pages": [)";
        for (int i = 0; i < WallPlaylist::maxPages + 1; ++i) {
            many += QByteArray(i == 0 ? "" : ",") + R"({"show":"fleet"})";
        }
        QTest::newRow("too many pages") << many + "]}"
                                        << "at most";
    }

    void badFilesSayWhatIsWrong()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!WallPlaylist::parse(json, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void missingOrOddFiles()
    {
        QString error;
        QVERIFY(!WallPlaylist::load(QStringLiteral("/nonexistent/playlist.json"), &error));
        QVERIFY2(error.contains(QStringLiteral("/nonexistent/playlist.json: no such file")), qPrintable(error));
        QVERIFY(!WallPlaylist::load(QStringLiteral("/dev/zero"), &error)); // endless: never read
        QVERIFY2(error.contains(QStringLiteral("not a regular file")), qPrintable(error));
        QVERIFY(!WallPlaylist::load(QStringLiteral("/tmp"), &error));
        QVERIFY2(error.contains(QStringLiteral("not a regular file")), qPrintable(error));
        QVERIFY(!WallPlaylist::load(QStringLiteral("/dev/zero"), nullptr)); // no place for the error: still refused
    }

    void exampleFileParses()
    {
        QString error;
        const auto pages
            = WallPlaylist::load(QStringLiteral(FLEETSCOPE_SOURCE_DIR "/docs/wall-playlist-example.json"), &error);
        QVERIFY2(pages, qPrintable(error));
        QVERIFY(pages->size() >= 4);
    }
};

QTEST_GUILESS_MAIN(TestWallPlaylist)
#include "tst_wallplaylist.moc"
