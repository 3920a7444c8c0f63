// SPDX-License-Identifier: Apache-2.0
// The audit log of writes: one line per attempt with its time (UTC, to the millisecond), who (name, role, address),
// what (the action and its details) and the outcome; a user's words quoted so that they cannot forge a line, hide one
// or run on without end; refused attempts' lines limited; lines whole and in order from many threads.
#include "service/auditlog.h"

#include <QTest>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;

namespace {

// What the log said, at a time the test sets: 2026-12-06T15:33:48.123Z.
struct AuditProbe
{
    std::vector<std::string> lines;
    std::chrono::system_clock::time_point now = std::chrono::system_clock::time_point(1796571228123ms);
    be::AuditLog log()
    {
        return be::AuditLog([this](const std::string &line) { lines.push_back(line); }, [this] { return now; });
    }
};

be::Caller alice()
{
    return { "alice", be::Role::Operator, "10.0.0.7" };
}

be::SilenceRequest psuSwap()
{
    be::SilenceRequest request;
    request.matchers = { { "hostname", "r01-k01-n01", false, true }, { "gpu", "3|4", true, true },
        { "job", "say \"hi\"", false, false } };
    request.duration = 2h + 30min;
    request.comment = "PSU swap";
    request.createdBy = "alice";
    return request;
}

} // namespace

class TestAuditLog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aSilenceMadeIsOneLine()
    {
        AuditProbe probe;
        auto audit = probe.log();
        audit.createSilence(alice(), psuSwap(), be::AuditLog::Outcome::Done, "8a7c-11");
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QCOMPARE(probe.lines[0],
            std::string("audit: time=2026-12-06T15:33:48.123Z who=\"alice\" role=operator address=\"10.0.0.7\" "
                        "action=create-silence matchers=\"hostname=\\\"r01-k01-n01\\\", gpu=~\\\"3|4\\\", "
                        "job!=\\\"say \\\\\\\"hi\\\\\\\"\\\"\" duration=\"2h30m\" comment=\"PSU swap\" outcome=done "
                        "silence=\"8a7c-11\""));
    }

    void refusalsAndFailuresSayWhy()
    {
        AuditProbe probe;
        auto audit = probe.log();
        const be::Caller wall { "noc-wall", be::Role::Viewer, "fd00::1" };
        audit.createSilence(
            wall, psuSwap(), be::AuditLog::Outcome::Refused, "noc-wall is a viewer: silencing needs the operator role");
        probe.now += 1500ms;
        audit.expireSilence(alice(), "8a7c-11", be::AuditLog::Outcome::Failed, "Alertmanager: connection refused");
        audit.expireSilence(alice(), "nope", be::AuditLog::Outcome::NotFound, "no such silence");
        audit.expireSilence(alice(), "8a7c-11", be::AuditLog::Outcome::Done, {});
        QCOMPARE(probe.lines.size(), size_t { 4 });
        QVERIFY2(probe.lines[0].find("who=\"noc-wall\" role=viewer address=\"fd00::1\" action=create-silence")
                    != std::string::npos
                && probe.lines[0].find(
                       " outcome=refused reason=\"noc-wall is a viewer: silencing needs the operator role\"")
                    != std::string::npos,
            probe.lines[0].c_str());
        QCOMPARE(probe.lines[1],
            std::string("audit: time=2026-12-06T15:33:49.623Z who=\"alice\" role=operator address=\"10.0.0.7\" "
                        "action=expire-silence silence=\"8a7c-11\" outcome=failed "
                        "reason=\"Alertmanager: connection refused\""));
        QVERIFY2(
            probe.lines[2].find("silence=\"nope\" outcome=not-found reason=\"no such silence\"") != std::string::npos,
            probe.lines[2].c_str());
        const std::string done = " action=expire-silence silence=\"8a7c-11\" outcome=done";
        QVERIFY2(probe.lines[3].size() > done.size()
                && probe.lines[3].compare(probe.lines[3].size() - done.size(), done.size(), done) == 0,
            probe.lines[3].c_str());
    }

    // A comment is a user's words: no newline, escape sequence, bidirectional override or stray byte reaches the log
    // as itself.
    void aUsersWordsCannotForgeALine_data()
    {
        QTest::addColumn<QByteArray>("words");
        QTest::addColumn<QByteArray>("written");
        QTest::newRow("plain") << QByteArray("disk swap, ticket 42") << QByteArray("\"disk swap, ticket 42\"");
        QTest::newRow("a forged line") << QByteArray("ok\naudit: time=x who=\"root\"")
                                       << QByteArray("\"ok\\naudit: time=x who=\\\"root\\\"\"");
        QTest::newRow("quote and backslash")
            << QByteArray("a\\\" outcome=done") << QByteArray("\"a\\\\\\\" outcome=done\"");
        QTest::newRow("terminal escape") << QByteArray("\x1b[2J\r\tbell\x07\x7f")
                                         << QByteArray("\"\\u{001b}[2J\\r\\tbell\\u{0007}\\u{007f}\"");
        QTest::newRow("UTF-8 kept") << QByteArray("J\xc3\xbcrgen \xe2\x9c\x93")
                                    << QByteArray("\"J\xc3\xbcrgen \xe2\x9c\x93\"");
        QTest::newRow("bidirectional override") << QByteArray("abc\xe2\x80\xae"
                                                              "cba")
                                                << QByteArray("\"abc\\u{202e}cba\"");
        QTest::newRow("line separator and zero width") << QByteArray("a\xe2\x80\xa8"
                                                                     "b\xe2\x80\x8b")
                                                       << QByteArray("\"a\\u{2028}b\\u{200b}\"");
        QTest::newRow("C1 control") << QByteArray("a\xc2\x85"
                                                  "b")
                                    << QByteArray("\"a\\u{0085}b\"");
        QTest::newRow("not UTF-8") << QByteArray("a\xff\xc3(\xed\xa0\x80\xc0\xaf")
                                   << QByteArray("\"a\\xff\\xc3(\\xed\\xa0\\x80\\xc0\\xaf\"");
        QTest::newRow("cut sequence at the end") << QByteArray("a\xe2\x9c") << QByteArray("\"a\\xe2\\x9c\"");
        QTest::newRow("NUL") << QByteArray("a\0b", 3) << QByteArray("\"a\\u{0000}b\"");
    }

    void aUsersWordsCannotForgeALine()
    {
        QFETCH(QByteArray, words);
        QFETCH(QByteArray, written);
        QCOMPARE(QByteArray::fromStdString(be::AuditLog::quoted(words.toStdString())), written);
        AuditProbe probe;
        auto audit = probe.log();
        auto request = psuSwap();
        request.comment = words.toStdString();
        audit.createSilence(alice(), request, be::AuditLog::Outcome::Done, "id");
        QCOMPARE(probe.lines.size(), size_t { 1 });
        const std::string &line = probe.lines[0];
        QVERIFY2(line.find(" comment=" + written.toStdString() + " outcome=done") != std::string::npos, line.c_str());
        for (const char c : line) {
            QVERIFY2(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, line.c_str());
        }
    }

    // Values are bounded, cut on a character's boundary with their whole length said, and the rest is not built.
    void valuesAreBounded()
    {
        const std::string comment(100000, 'x');
        std::string cut = be::AuditLog::quoted(comment);
        QVERIFY2(cut.size() <= be::AuditLog::maxValueBytes, cut.c_str());
        QVERIFY2(cut.size() > be::AuditLog::maxValueBytes - 30, cut.c_str());
        QVERIFY2(cut.rfind("...(100000 bytes)\"") == cut.size() - 18, cut.c_str());
        // Escapes count: a value of control characters is cut as much sooner.
        cut = be::AuditLog::quoted(std::string(2000, '\x01'), 100);
        QVERIFY2(cut.size() <= 100 && cut.find("\\u{0001}") != std::string::npos
                && cut.find("...(2000 bytes)") != std::string::npos,
            cut.c_str());
        // Never inside a character: 'ü' is two bytes, the cut lands between two of them.
        std::string umlauts;
        for (int i = 0; i < 100; ++i) {
            umlauts += "\xc3\xbc";
        }
        for (size_t bound = 40; bound < 60; ++bound) {
            cut = be::AuditLog::quoted(umlauts, bound);
            const auto body = cut.substr(1, cut.find("...(") - 1);
            QVERIFY2(body.size() % 2 == 0 && cut.size() <= bound, cut.c_str());
        }
        // What fits is not cut, to the byte.
        QCOMPARE(be::AuditLog::quoted("abc", 5), std::string("\"abc\""));
        QVERIFY(be::AuditLog::quoted("abcd", 5).find("...(4 bytes)") != std::string::npos);

        // A whole line with everything at its longest stays under 8 KiB.
        AuditProbe probe;
        auto audit = probe.log();
        be::SilenceRequest request;
        for (int i = 0; i < 1000; ++i) {
            request.matchers.push_back({ std::string(100, 'n'), std::string(1000, '\n'), true, false });
        }
        request.comment = std::string(1 << 20, '"');
        request.duration = 720h;
        audit.createSilence({ std::string(64, 'a'), be::Role::Operator, std::string(200, ':') }, request,
            be::AuditLog::Outcome::Invalid, std::string(1 << 20, '\\'));
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QVERIFY2(probe.lines[0].size() < 8192, std::to_string(probe.lines[0].size()).c_str());
        QVERIFY(probe.lines[0].find(" duration=\"30d\" ") != std::string::npos);
        QVERIFY(probe.lines[0].find(" outcome=invalid reason=\"\\\\\\\\") != std::string::npos);
    }

    void durationsAndTimes()
    {
        QCOMPARE(be::AuditLog::durationText(2h), std::string("2h"));
        QCOMPARE(be::AuditLog::durationText(90min), std::string("1h30m"));
        QCOMPARE(be::AuditLog::durationText(std::chrono::hours(24 * 7)), std::string("7d"));
        QCOMPARE(be::AuditLog::durationText(45s), std::string("45s"));
        QCOMPARE(be::AuditLog::durationText(1500ms), std::string("1.5s"));
        QCOMPARE(be::AuditLog::durationText(0ms), std::string("0s"));
        QCOMPARE(be::AuditLog::durationText(-60s), std::string("-1m"));
        QCOMPARE(be::AuditLog::durationText(std::chrono::milliseconds(INT64_MIN)).front(), '-');
        QCOMPARE(
            be::AuditLog::isoTime(std::chrono::system_clock::time_point()), std::string("1970-01-01T00:00:00.000Z"));
        QCOMPARE(be::AuditLog::isoTime(std::chrono::system_clock::time_point(-1ms)),
            std::string("1969-12-31T23:59:59.999Z"));
        QCOMPARE(be::AuditLog::isoTime(std::chrono::system_clock::time_point(951782400005ms)),
            std::string("2000-02-29T00:00:00.005Z"));
    }

    // A viewer's client retrying a refused write in a loop writes 60 lines, then one a second with how many were left
    // out; so do other attempts not done; writes done are never left out.
    void refusedAttemptsAreLimited()
    {
        AuditProbe probe;
        auto audit = probe.log();
        const be::Caller wall { "noc-wall", be::Role::Viewer, "10.0.0.9" };
        for (int i = 0; i < 1000; ++i) {
            audit.expireSilence(wall, "x", be::AuditLog::Outcome::Refused, "a viewer");
        }
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst });
        audit.expireSilence(alice(), "x", be::AuditLog::Outcome::Done, {});
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst + 1 });
        QVERIFY2(probe.lines.back().find("who=\"alice\"") != std::string::npos
                && probe.lines.back().find(" left_out=940") != std::string::npos,
            probe.lines.back().c_str());
        audit.expireSilence(wall, "x", be::AuditLog::Outcome::Refused, "a viewer");
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst + 1 });
        probe.now += 1s;
        audit.expireSilence(wall, "x", be::AuditLog::Outcome::Refused, "a viewer");
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst + 2 });
        QVERIFY2(probe.lines.back().find(" left_out=1") != std::string::npos, probe.lines.back().c_str());
        // Invalid, not found and failed attempts share the limit: a line of each is left out now.
        audit.expireSilence(wall, "", be::AuditLog::Outcome::Invalid, "a silence id is 1 to 64 bytes");
        audit.expireSilence(alice(), "x", be::AuditLog::Outcome::NotFound, "no such silence");
        audit.expireSilence(alice(), "x", be::AuditLog::Outcome::Failed, "Alertmanager: timeout");
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst + 2 });
        audit.expireSilence(alice(), "x", be::AuditLog::Outcome::Done, {});
        QVERIFY2(probe.lines.back().find(" left_out=3") != std::string::npos, probe.lines.back().c_str());
        // A wall clock stepped back refills nothing.
        probe.now -= 1h;
        audit.expireSilence(wall, "x", be::AuditLog::Outcome::Refused, "a viewer");
        QCOMPARE(probe.lines.size(), size_t { be::AuditLog::notDoneLinesBurst + 3 });
    }

    // From many threads at once, each line is written whole and the lines are in the order of their times.
    void linesAreWholeFromManyThreads()
    {
        std::mutex mutex;
        std::vector<std::string> lines;
        std::atomic<int64_t> tick { 0 };
        be::AuditLog audit(
            [&](const std::string &line) {
                std::lock_guard lock(mutex);
                lines.push_back(line);
            },
            [&tick] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(++tick)); });
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&audit, t] {
                for (int i = 0; i < 200; ++i) {
                    be::SilenceRequest request = psuSwap();
                    request.comment = std::string(300, static_cast<char>('a' + t));
                    audit.createSilence(alice(), request, be::AuditLog::Outcome::Done, std::to_string(i));
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QCOMPARE(lines.size(), size_t { 1600 });
        std::string last;
        for (const auto &line : lines) {
            const auto comment = line.find(" comment=\"");
            QVERIFY2(comment != std::string::npos, line.c_str());
            const char letter = line[comment + 10];
            QVERIFY2(line.find(" comment=\"" + std::string(300, letter) + "\" outcome=done") != std::string::npos,
                line.c_str());
            const auto time = line.substr(12, 24);
            QVERIFY2(time > last, line.c_str());
            last = time;
        }
    }
};

QTEST_GUILESS_MAIN(TestAuditLog)
#include "tst_auditlog.moc"
