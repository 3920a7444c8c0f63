// SPDX-License-Identifier: Apache-2.0
#include "backendoptions.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sstream>

using namespace fleetscope::backend;

namespace {

std::vector<std::string> toArgs(const QByteArrayList &args)
{
    std::vector<std::string> argv;
    for (const auto &a : args) {
        argv.push_back(a.toStdString());
    }
    return argv;
}

} // namespace

class TestBackendOptions : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void defaults()
    {
        const auto r = parseBackendOptions({});
        QVERIFY(r.error.empty());
        QCOMPARE(r.options.listen, std::string("127.0.0.1:50051"));
        QCOMPARE(r.options.source.gpuCount, 10240U);
        QCOMPARE(r.options.source.hardware, Hardware::HgxH100);
    }
    void hardware()
    {
        const auto r = parseBackendOptions({ "--hardware", "gb200-nvl72", "--gpus", "10368" });
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.source.hardware, Hardware::Gb200Nvl72);
        QVERIFY(backendUsage().find("--hardware") != std::string::npos);
    }
    void valid()
    {
        const auto r = parseBackendOptions(
            { "--listen", "127.0.0.1:0", "--gpus", "1048576", "--seed", "9", "--interval-ms", "100" });
        QVERIFY(r.error.empty());
        QCOMPARE(r.options.listen, std::string("127.0.0.1:0"));
        QCOMPARE(r.options.source.gpuCount, 1048576U);
        QCOMPARE(r.options.source.seed, uint64_t(9));
        QCOMPARE(r.options.source.interval.count(), 100);
    }
    void invalid_data()
    {
        QTest::addColumn<QByteArrayList>("args");
        QTest::addColumn<QByteArray>("mentions");
        QTest::newRow("unknown") << QByteArrayList { "--frobnicate" } << QByteArray("unknown option");
        QTest::newRow("missing value") << QByteArrayList { "--gpus" } << QByteArray("needs a value");
        QTest::newRow("too few gpus") << QByteArrayList { "--gpus", "4" } << QByteArray("--gpus");
        QTest::newRow("too many gpus") << QByteArrayList { "--gpus", "2000000" } << QByteArray("--gpus");
        QTest::newRow("not a number") << QByteArrayList { "--gpus", "12x" } << QByteArray("--gpus");
        QTest::newRow("unknown hardware") << QByteArrayList { "--hardware",
            "dgx-a100" } << QByteArray("--hardware: no hardware 'dgx-a100'; known: hgx-h100, gb200-nvl72");
        QTest::newRow("negative seed") << QByteArrayList { "--seed", "-1" } << QByteArray("--seed");
        QTest::newRow("interval") << QByteArrayList { "--interval-ms", "5" } << QByteArray("--interval-ms");
        QTest::newRow("speed nan") << QByteArrayList { "--speed", "nan" } << QByteArray("--speed");
        QTest::newRow("unknown source") << QByteArrayList { "--source", "kafka" } << QByteArray("remote-write");
        QTest::newRow("remote write option without it") << QByteArrayList { "--remote-write-listen", "0.0.0.0:9201" }
                                                        << QByteArray("--remote-write-listen applies to --source "
                                                                      "remote-write only");
        QTest::newRow("window too short") << QByteArrayList { "--source", "remote-write", "--remote-write-interval-ms",
            "10" } << QByteArray("--remote-write-interval-ms");
        QTest::newRow("delay negative") << QByteArrayList { "--source", "remote-write", "--remote-write-delay-ms",
            "-1" } << QByteArray("--remote-write-delay-ms");
        // How CLI11 reads a command line, said in our words.
        QTest::newRow("unknown, in full")
            << QByteArrayList { "--frobnicate=1" } << QByteArray("unknown option '--frobnicate=1'");
        QTest::newRow("not an option") << QByteArrayList { "--gpus", "16", "stray" }
                                       << QByteArray("unexpected argument 'stray'");
        QTest::newRow("value missing at the end")
            << QByteArrayList { "--seed", "1", "--gpus" } << QByteArray("--gpus needs a value");
        QTest::newRow("flag with a value")
            << QByteArrayList { "--version=1" } << QByteArray("--version takes no value");
        QTest::newRow("bad value after =")
            << QByteArrayList { "--gpus=12x" } << QByteArray("--gpus: '12x' is not a number from 8 to 1048576");
        QTest::newRow("empty value after =") << QByteArrayList { "--listen=" } << QByteArray("--listen needs a value");
        QTest::newRow("each value checked, not only the last")
            << QByteArrayList { "--gpus", "4", "--gpus", "16" } << QByteArray("--gpus: '4'");
        QTest::newRow("history over 7d") << QByteArrayList { "--history", "8d" } << QByteArray("(at most 7d)");
        QTest::newRow("unknown scenario")
            << QByteArrayList { "--scenario", "meteor" } << QByteArray("--scenario: no scenario 'meteor'");
        QTest::newRow("remote write address") << QByteArrayList { "--source", "remote-write", "--remote-write-listen",
            "9201" } << QByteArray("--remote-write-listen: ");
    }
    // --opt=value as --opt value; the last of an option given twice; numbers in decimal, whatever their zeros.
    void valueForms()
    {
        const auto r = parseBackendOptions({ "--gpus=16", "--listen=127.0.0.1:0", "--source=remote-write",
            "--remote-write-delay-ms=0", "--seed", "3", "--seed", "0010", "--history=90m", "--scenario=power-cap" });
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.source.gpuCount, 16U);
        QCOMPARE(r.options.listen, std::string("127.0.0.1:0"));
        QVERIFY(r.options.fromRemoteWrite);
        QCOMPARE(r.options.remoteWrite.delayMs, int64_t { 0 });
        QCOMPARE(r.options.source.seed, uint64_t(10)); // not octal 8
        QCOMPARE(r.options.source.history.count(), int64_t { 5400 }); // 90m
        QCOMPARE(r.options.source.scenario, Scenario::Kind::PowerCap);
        const auto flags = parseBackendOptions({ "-h", "--version", "--list-scenarios", "--exporter-topology-labels" });
        QVERIFY2(flags.error.empty(), flags.error.c_str());
        QVERIFY(flags.options.showHelp && flags.options.showVersion && flags.options.listScenarios);
        QVERIFY(flags.options.exporterTopologyLabels);
    }
    // A secret on the command line is refused in any form, and the error does not repeat it.
    void secretNotEchoed()
    {
        for (const auto &args : std::vector<std::vector<std::string>> {
                 { "--prometheus-password=hunter2" }, { "hunter2", "--prometheus-bearer-token", "hunter2" } }) {
            const auto r = parseBackendOptions(args);
            QVERIFY2(r.error.find("not taken on the command line") != std::string::npos, r.error.c_str());
            QVERIFY2(r.error.find("hunter2") == std::string::npos, r.error.c_str());
        }
    }
    // The help in groups, each description wrapped beside the names, and the options' dependencies said.
    void usage()
    {
        const std::string usage = backendUsage();
        for (const char *text : { "Usage: fleetscope-backend [OPTIONS]", "\nSimulator:\n", "\nRemote write",
                 "--gpus N ", "fleet size, 8 to 1048576 GPUs (default 10240)", "needs --exporter-listen",
                 "--remote-write-grace-ms MS", "--metric-map FILE", "Secrets come from files" }) {
            QVERIFY2(usage.find(text) != std::string::npos, text);
        }
        QVERIFY(usage.find("\n\n\n") == std::string::npos);
        std::istringstream lines(usage);
        for (std::string line; std::getline(lines, line);) {
            QVERIFY2(line.size() <= 110, line.c_str());
        }
    }
    // The push path: where it listens, its windows, and history from a Prometheus-compatible server beside it.
    void remoteWrite()
    {
        {
            const auto r = parseBackendOptions({ "--degradations-per-gpu-day", "0.5" });
            QVERIFY2(r.error.empty(), r.error.c_str());
            QCOMPARE(r.options.source.degradationsPerGpuDay, 0.5);
            QVERIFY(!parseBackendOptions({ "--degradations-per-gpu-day", "11" }).error.empty());
        }
        {
            const auto r = parseBackendOptions({ "--source", "remote-write", "--remote-write-threads", "8",
                "--remote-write-max-connections-per-address", "512" });
            QVERIFY2(r.error.empty(), r.error.c_str());
            QCOMPARE(r.options.remoteWrite.threads, 8);
            QCOMPARE(r.options.remoteWrite.maxConnectionsPerAddress, size_t { 512 });
            // Gone with the thread-per-connection server it sized.
            QVERIFY(!parseBackendOptions({ "--source", "remote-write", "--remote-write-queue", "256" }).error.empty());
            QVERIFY(!parseBackendOptions({ "--source", "remote-write", "--remote-write-threads", "0" }).error.empty());
        }
        const auto r = parseBackendOptions({ "--source", "remote-write", "--remote-write-listen", "0.0.0.0:9201",
            "--remote-write-interval-ms", "10000", "--remote-write-delay-ms", "3000", "--remote-write-grace-ms",
            "60000", "--prometheus-url", "http://vm:8428", "--topology", "fleet.yaml" });
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.options.fromRemoteWrite);
        QVERIFY(!r.options.fromPrometheus);
        QCOMPARE(r.options.remoteWrite.listen, std::string("0.0.0.0:9201"));
        QCOMPARE(r.options.remoteWrite.windowMs, int64_t { 10000 });
        QCOMPARE(r.options.remoteWrite.delayMs, int64_t { 3000 });
        QCOMPARE(r.options.remoteWrite.graceMs, int64_t { 60000 });
        QCOMPARE(r.options.prometheus.url, std::string("http://vm:8428"));
        QCOMPARE(r.options.prometheus.topologyFile, std::string("fleet.yaml"));
        const auto defaults = parseBackendOptions({ "--source", "remote-write" });
        QVERIFY(defaults.error.empty());
        QCOMPARE(defaults.options.remoteWrite.windowMs, int64_t { 0 }); // detected
    }
    void invalid()
    {
        QFETCH(QByteArrayList, args);
        QFETCH(QByteArray, mentions);
        const auto r = parseBackendOptions(toArgs(args));
        QVERIFY2(r.error.find(mentions.toStdString()) != std::string::npos, r.error.c_str());
    }

    void prometheusCredentialsAndTls()
    {
        QVERIFY(m_dir.isValid());
        const QByteArray url = "https://prometheus.example:9090";
        const auto r = parseBackendOptions(toArgs({ "--source", "prometheus", "--prometheus-url", url,
            "--prometheus-user", "fleet", "--prometheus-password-file", file("password", "s3cret\n"), "--prometheus-ca",
            file("ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), "--topology",
            file("fleet.yaml", "halls: []\n") }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.warnings.empty());
        const auto &http = r.options.prometheus.http;
        QCOMPARE(http.user, std::string("fleet"));
        QCOMPARE(http.passwordFile, m_dir.filePath(QStringLiteral("password")).toStdString());
        QCOMPARE(http.caFile, m_dir.filePath(QStringLiteral("ca.pem")).toStdString());
        QVERIFY(http.bearerTokenFile.empty());
        QVERIFY(!http.insecureSkipVerify);

        const auto bearer = parseBackendOptions(toArgs({ "--source", "prometheus", "--prometheus-url", url,
            "--prometheus-bearer-token-file", file("token", "abc.def\n") }));
        QVERIFY2(bearer.error.empty(), bearer.error.c_str());
        QCOMPARE(bearer.options.prometheus.http.bearerTokenFile, m_dir.filePath(QStringLiteral("token")).toStdString());
    }

    // Valid, but unsafe: said loudly at start.
    void prometheusWarnings()
    {
        QVERIFY(m_dir.isValid());
        const auto insecure
            = parseBackendOptions(toArgs({ "--source", "prometheus", "--prometheus-url", "https://10.0.0.1:9090",
                "--prometheus-insecure-skip-verify", "--prometheus-bearer-token-file", file("token", "abc") }));
        QVERIFY2(insecure.error.empty(), insecure.error.c_str());
        QVERIFY(insecure.options.prometheus.http.insecureSkipVerify);
        QCOMPARE(insecure.warnings.size(), size_t { 1 });
        QVERIFY(insecure.warnings[0].find("NOT checked") != std::string::npos);
        QVERIFY(insecure.warnings[0].find("credentials") != std::string::npos);

        const auto clear = parseBackendOptions(toArgs({ "--source", "prometheus", "--prometheus-url",
            "http://10.0.0.1:9090", "--prometheus-user", "u", "--prometheus-password-file", file("password", "p") }));
        QVERIFY2(clear.error.empty(), clear.error.c_str());
        QCOMPARE(clear.warnings.size(), size_t { 1 });
        QVERIFY(clear.warnings[0].find("clear text") != std::string::npos);

        QVERIFY(parseBackendOptions(toArgs({ "--source", "prometheus", "--prometheus-url", "http://10.0.0.1:9090" }))
                    .warnings.empty());
    }

    void prometheusOptionsInvalid_data()
    {
        QVERIFY(m_dir.isValid());
        const QByteArray password = file("password", "p\n");
        const QByteArray token = file("token", "t");
        const QByteArray ca = file("ca.pem", "-----BEGIN CERTIFICATE-----\n");
        const QByteArray missing = m_dir.filePath(QStringLiteral("missing")).toUtf8();
        const QByteArray folder = m_dir.path().toUtf8(); // exists, but cannot be read as a file
        const QByteArrayList https = { "--source", "prometheus", "--prometheus-url", "https://p:9090" };
        const QByteArrayList http = { "--source", "prometheus", "--prometheus-url", "http://p:9090" };

        QTest::addColumn<QByteArrayList>("args");
        QTest::addColumn<QByteArray>("mentions");
        QTest::newRow("missing password file")
            << https + QByteArrayList { "--prometheus-user", "u", "--prometheus-password-file", missing }
            << QByteArray("--prometheus-password-file: password file '" + missing + "': cannot read it: No such file");
        QTest::newRow("unreadable password file")
            << https + QByteArrayList { "--prometheus-user", "u", "--prometheus-password-file", folder }
            << QByteArray("cannot read it: Is a directory");
        QTest::newRow("empty password file")
            << https + QByteArrayList { "--prometheus-user", "u", "--prometheus-password-file", file("empty", "\n") }
            << QByteArray("is empty");
        QTest::newRow("two-line token") << https
                + QByteArrayList { "--prometheus-bearer-token-file", file("two", "a\nb\n") }
                                        << QByteArray("more than one line");
        QTest::newRow("missing token file")
            << https + QByteArrayList { "--prometheus-bearer-token-file", missing }
            << QByteArray("--prometheus-bearer-token-file: bearer token file '" + missing + "': cannot read it");
        QTest::newRow("missing CA file") << https + QByteArrayList { "--prometheus-ca", missing }
                                         << QByteArray("--prometheus-ca: cannot read '" + missing + "'");
        QTest::newRow("CA file not PEM") << https + QByteArrayList { "--prometheus-ca", token }
                                         << QByteArray("holds no PEM certificate");
        QTest::newRow("password on the command line") << https + QByteArrayList { "--prometheus-password", "hunter2" }
                                                      << QByteArray("not taken on the command line");
        QTest::newRow("token on the command line") << https + QByteArrayList { "--prometheus-bearer-token", "t" }
                                                   << QByteArray("use --prometheus-bearer-token-file");
        QTest::newRow("user without password") << https + QByteArrayList { "--prometheus-user", "u" }
                                               << QByteArray("--prometheus-user requires --prometheus-password-file");
        QTest::newRow("password without user") << https + QByteArrayList { "--prometheus-password-file", password }
                                               << QByteArray("--prometheus-password-file requires --prometheus-user");
        QTest::newRow("user with a colon")
            << https + QByteArrayList { "--prometheus-user", "a:b", "--prometheus-password-file", password }
            << QByteArray("no ':'");
        QTest::newRow("basic and bearer") << https
                + QByteArrayList { "--prometheus-user", "u", "--prometheus-password-file", password,
                      "--prometheus-bearer-token-file", token }
                                          << QByteArray("--prometheus-user excludes --prometheus-bearer-token-file");
        QTest::newRow("CA with http") << http + QByteArrayList { "--prometheus-ca", ca }
                                      << QByteArray("need an https:// --prometheus-url");
        QTest::newRow("insecure with http")
            << http + QByteArrayList { "--prometheus-insecure-skip-verify" } << QByteArray("need an https://");
        QTest::newRow("CA and insecure") << https
                + QByteArrayList { "--prometheus-ca", ca, "--prometheus-insecure-skip-verify" }
                                         << QByteArray("--prometheus-ca excludes --prometheus-insecure-skip-verify");
        QTest::newRow("auth without prometheus") << QByteArrayList { "--prometheus-bearer-token-file", token }
                                                 << QByteArray("apply to --source prometheus and remote-write only");
    }
    void prometheusOptionsInvalid() { invalid(); }

    // A configuration file holds every option by its long name; the command line overrides it.
    void configFile()
    {
        const QByteArray cert = file("server.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        const QByteArray key = file("server.key", "key");
        const QByteArray config = file("backend.yaml",
            "# a site's backend\n"
            "listen: 0.0.0.0:50051\n"
            "gpus: 2048\n"
            "seed: 7\n"
            "tls-cert: "
                + cert + "\ntls-key: " + key
                + "\n"
                  "insecure-listen: true\n"
                  "exporter-topology-labels: false\n"
                  "max-streams-per-client: 12\n");
        auto r = parseBackendOptions({ "--config", config.toStdString(), "--gpus", "4096" });
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.configFile, config.toStdString());
        QCOMPARE(r.options.listen, std::string("0.0.0.0:50051"));
        QCOMPARE(r.options.source.gpuCount, 4096U); // the command line wins
        QCOMPARE(r.options.source.seed, uint64_t { 7 });
        QCOMPARE(r.options.security.tlsCertFile, cert.toStdString());
        QVERIFY(r.options.security.insecureListen);
        QVERIFY(!r.options.exporterTopologyLabels);
        QCOMPARE(r.options.security.access.maxStreamsPerClient, 12U);
        QCOMPARE(r.warnings.size(), size_t { 1 }); // TLS without a token on a wildcard address, said
        QVERIFY2(r.warnings[0].find("without a token or client CA") != std::string::npos, r.warnings[0].c_str());

        // The installed default is read when there is no --config, and only if it exists.
        r = parseBackendOptions({}, config.toStdString());
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.source.gpuCount, 2048U);
        r = parseBackendOptions({}, m_dir.filePath(QStringLiteral("absent.yaml")).toStdString());
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.configFile, std::string());
        QCOMPARE(r.options.source.gpuCount, BackendOptions().source.gpuCount);
        // --no-config: not even the installed default (the console's own simulated fleet).
        r = parseBackendOptions({ "--no-config" }, config.toStdString());
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.configFile, std::string());
        QCOMPARE(r.options.source.gpuCount, BackendOptions().source.gpuCount);
        r = parseBackendOptions({ "--no-config", "--config", config.toStdString() });
        QVERIFY2(r.error.find("--config excludes --no-config") != std::string::npos, r.error.c_str());
        // An empty file, or one of comments only, is every default.
        r = parseBackendOptions({ "--config=" + file("empty.yaml", "# nothing\n").toStdString() });
        QVERIFY2(r.error.empty(), r.error.c_str());
        // 1 MiB is the most a file may hold (read in chunks: the limit is on what was read).
        r = parseBackendOptions({ "--config=" + file("full.yaml", QByteArray(1 << 20, '#')).toStdString() });
        QVERIFY2(r.error.empty(), r.error.c_str());
    }

    void configFileInvalid_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QByteArray>("error");
        QTest::newRow("unknown option") << QByteArray("gpus: 64\nbogus: 1\n")
                                        << QByteArray("bogus.yaml:2: 'bogus' is no option");
        QTest::newRow("config in config")
            << QByteArray("config: other.yaml\n") << QByteArray("'config' is not an option for a configuration file");
        QTest::newRow("flag not boolean")
            << QByteArray("insecure-listen: yes please\n") << QByteArray("'insecure-listen' is a flag: true or false");
        QTest::newRow("bad value") << QByteArray("gpus: lots\n") << QByteArray("--gpus: 'lots' is not a number");
        QTest::newRow("not a mapping") << QByteArray("- gpus\n- 64\n") << QByteArray("expected a mapping");
        QTest::newRow("nested") << QByteArray("listen:\n  host: x\n") << QByteArray("'listen' has no value");
        QTest::newRow("not YAML") << QByteArray("gpus: [1, 2\n") << QByteArray("not YAML");
        QTest::newRow("token without TLS")
            << QByteArray("token-file: /etc/hostname\n") << QByteArray("--token-file requires --tls-cert");
        QTest::newRow("over 1 MiB") << QByteArray((1 << 20) + 1, '#') << QByteArray("is over 1 MiB");
    }

    void configFileInvalid()
    {
        QFETCH(QByteArray, content);
        QFETCH(QByteArray, error);
        const QByteArray path = file("bogus.yaml", content);
        const auto r = parseBackendOptions({ "--config", path.toStdString() });
        QVERIFY2(r.error.find(error.toStdString()) != std::string::npos, r.error.c_str());
        const auto missing
            = parseBackendOptions({ "--config", m_dir.filePath(QStringLiteral("none.yaml")).toStdString() });
        QVERIFY2(missing.error.find("cannot read the configuration file") != std::string::npos, missing.error.c_str());
    }

    void securityOptions()
    {
        const QByteArray cert = file("s.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        const QByteArray key = file("s.key", "key");
        const QByteArray tokens = file("tokens", "t1\n");
        auto r = parseBackendOptions(toArgs({ "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key,
            "--token-file", tokens, "--tls-client-ca", cert, "--max-calls-per-second", "50" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.options.security.tls() && r.options.security.authenticates());
        QCOMPARE(r.options.security.access.maxCallsPerSecondPerClient, 50U);
        QVERIFY(r.warnings.empty());
        r = parseBackendOptions(toArgs({ "--tls-cert", cert }));
        QVERIFY2(r.error.find("--tls-cert requires --tls-key") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--tls-client-ca", cert }));
        QVERIFY2(r.error.find("requires --tls-cert") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--tls-cert", key, "--tls-key", key }));
        QVERIFY2(r.error.find("holds no PEM certificate") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--listen", "10.1.2.3:50051", "--insecure-listen" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.warnings.size(), size_t { 1 });
        QVERIFY2(r.warnings[0].find("without TLS or credentials") != std::string::npos, r.warnings[0].c_str());
        r = parseBackendOptions(toArgs({ "--max-streams-per-client", "0" }));
        QVERIFY2(r.error.find("--max-streams-per-client") != std::string::npos, r.error.c_str());
    }

    // The NOC's Alertmanager and the roles: read, checked together, unsafe combinations said.
    void alertmanagerAndRoles()
    {
        const QByteArray cert = file("s.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        const QByteArray key = file("s.key", "key");
        auto r = parseBackendOptions(toArgs({ "--alertmanager-url", "https://am.example:9093", "--alertmanager-user",
            "fleet", "--alertmanager-password-file", file("am-password", "p"), "--alertmanager-ca", cert,
            "--alertmanager-poll-ms", "2000", "--alertmanager-timeout-ms", "3000", "--alertmanager-send" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.warnings.empty());
        const auto &am = r.options.alertmanager;
        QCOMPARE(am.url, std::string("https://am.example:9093"));
        QCOMPARE(am.http.user, std::string("fleet"));
        QCOMPARE(am.poll.count(), 2000);
        QCOMPARE(am.timeout.count(), 3000);
        QVERIFY(am.send);
        QVERIFY(!parseBackendOptions({}).options.alertmanager.send);

        r = parseBackendOptions(toArgs({ "--alertmanager-send" }));
        QVERIFY2(r.error.find("need --alertmanager-url") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--alertmanager-url", "http://am:9093", "--alertmanager-ca", cert }));
        QVERIFY2(r.error.find("need an https://") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--alertmanager-url", "http://am:9093", "--alertmanager-poll-ms", "10" }));
        QVERIFY2(r.error.find("--alertmanager-poll-ms") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(toArgs({ "--alertmanager-password", "x" }));
        QVERIFY2(r.error.find("secrets are not taken") != std::string::npos, r.error.c_str());

        r = parseBackendOptions(toArgs({ "--alertmanager-url", "http://10.0.0.9:9093",
            "--alertmanager-bearer-token-file", file("am-token", "t") }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.warnings.size(), size_t { 1 });
        QVERIFY2(r.warnings[0].find("clear text") != std::string::npos, r.warnings[0].c_str());
        r = parseBackendOptions(
            toArgs({ "--alertmanager-url", "https://10.0.0.9:9093", "--alertmanager-insecure-skip-verify" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.warnings.size(), size_t { 1 });
        QVERIFY2(r.warnings[0].find("NOT checked") != std::string::npos, r.warnings[0].c_str());

        QCOMPARE(parseBackendOptions({}).options.security.access.anonymousRole, Role::Viewer);
        r = parseBackendOptions(toArgs({ "--anonymous-role", "operator" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.security.access.anonymousRole, Role::Operator);
        QVERIFY(r.warnings.empty()); // loopback
        r = parseBackendOptions(toArgs({ "--anonymous-role", "admin" }));
        QVERIFY2(r.error.find("'viewer' or 'operator'") != std::string::npos, r.error.c_str());
        r = parseBackendOptions(
            toArgs({ "--listen", "10.1.2.3:50051", "--insecure-listen", "--anonymous-role", "operator" }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.warnings.size(), size_t { 2 });
        QVERIFY2(r.warnings[1].find("can silence") != std::string::npos, r.warnings[1].c_str());

        const QByteArray roles = file("roles", "operator alice CN=alice\n");
        r = parseBackendOptions(
            toArgs({ "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", cert, "--client-roles", roles }));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.options.security.access.clientRolesFile, roles.toStdString());
        r = parseBackendOptions(toArgs({ "--client-roles", roles }));
        QVERIFY2(r.error.find("--client-roles requires --tls-client-ca") != std::string::npos, r.error.c_str());
    }

private:
    // A file in the test's folder with this content; its path.
    QByteArray file(const char *name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(QString::fromUtf8(name));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(content) != content.size()) {
            qFatal("cannot write %s", qPrintable(path));
        }
        return path.toUtf8();
    }

    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestBackendOptions)
#include "tst_backendoptions.moc"
