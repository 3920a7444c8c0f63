// SPDX-License-Identifier: Apache-2.0
#include "backendoptions.h"

#include "core/listenaddress.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
template <typename T> bool parseNumber(const std::string &text, T *out)
{
    const char *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    return ec == std::errc() && ptr == end;
}
} // namespace

std::optional<int64_t> parseDuration(const std::string &text)
{
    if (text.size() < 2) {
        return std::nullopt;
    }
    int64_t count = 0;
    const std::string number = text.substr(0, text.size() - 1);
    if (!parseNumber(number, &count) || count < 0 || count > 7 * 86400) {
        return std::nullopt;
    }
    switch (text.back()) {
    case 's':
        return count;
    case 'm':
        return count * 60;
    case 'h':
        return count * 3600;
    case 'd':
        return count * 86400;
    default:
        return std::nullopt;
    }
}

std::string backendUsage()
{
    return fmt::format(
        "Usage: fleetscope-backend [options]\n"
        "Serves the Fleetscope telemetry API (gRPC) from a deterministic simulated GPU fleet.\n\n"
        "  --listen ADDR       address to listen on (default 127.0.0.1:50051); port 0 picks a free port,\n"
        "                      and 'listening on HOST:PORT' is printed when ready\n"
        "  --exporter-listen ADDR  also serve the fleet as a dcgm-exporter /metrics page (plain HTTP) on ADDR,\n"
        "                      for Prometheus to scrape, and each node's own page at /metrics/HOSTNAME, as one\n"
        "                      dcgm-exporter per node would; port 0 picks a free port, and 'exporter listening\n"
        "                      on HOST:PORT' is printed when ready\n"
        "  --exporter-targets-file FILE  write the node pages as scrape targets to FILE (Prometheus file_sd JSON,\n"
        "                      one target per node, __metrics_path__ /metrics/HOSTNAME; vmagent reads it too)\n"
        "                      before 'exporter listening' is printed; a wildcard address is written as loopback\n"
        "  --exporter-topology-labels  add the simulator's row and rack labels to that page (dcgm-exporter\n"
        "                      has none)\n"
        "  --gpus N            fleet size, {} to {} GPUs (default 10240)\n"
        "  --seed S            simulation seed (default 1); the same seed gives the same fleet\n"
        "  --hardware KIND     hgx-h100 (default): air-cooled 8-GPU nodes, 8 to a rack; gb200-nvl72:\n"
        "                      liquid-cooled racks of 18 trays of 4 GPUs, each rack one NVLink domain\n"
        "  --interval-ms MS    time between frames, 50 to 60000 (default 1000)\n"
        "  --speed X           simulated seconds per real second, 0.1 to 3600 (default 1)\n"
        "  --history DURATION  simulate this much past before starting (e.g. 90m, 6h; default 0), so that\n"
        "                      history and replay have data at once; one frame a minute\n"
        "  --scenario NAME     stage an incident (see --list-scenarios); default none\n"
        "  --source KIND       simulator (default); prometheus: a real fleet's dcgm-exporter metrics polled\n"
        "                      from a Prometheus-compatible server; remote-write: the same metrics pushed by\n"
        "                      vmagent or Prometheus (remote write 1.0), the live path for large fleets (the\n"
        "                      simulation options then do not apply)\n"
        "  --remote-write-listen HOST:PORT  where to take POST /api/v1/write (default 127.0.0.1:9201)\n"
        "  --remote-write-interval-ms MS  the scrape interval: one frame per interval of sample time, 100 to\n"
        "                      600000 (default: detected from the first samples)\n"
        "  --remote-write-delay-ms MS  how long after its end a window is published, for the senders'\n"
        "                      batching, 0 to 60000 (default 2000; Prometheus senders: batch_send_deadline\n"
        "                      below it)\n"
        "  --remote-write-grace-ms MS  a GPU that sends nothing for this long has no data, 100 to 3600000\n"
        "                      (default three intervals)\n"
        "  --prometheus-url URL  the server, http[s]://HOST[:PORT][/PREFIX]\n"
        "  --prometheus-user USER  basic authentication as USER; needs --prometheus-password-file\n"
        "  --prometheus-password-file FILE  the password for it, read from FILE\n"
        "  --prometheus-bearer-token-file FILE  send 'Authorization: Bearer TOKEN' with the token read from\n"
        "                      FILE (not with --prometheus-user). Secrets come from files, never from the\n"
        "                      command line, where every user of the machine can read them; surrounding white\n"
        "                      space is dropped, and the file is read again for every request, so a rotated\n"
        "                      secret is picked up without a restart\n"
        "  --prometheus-ca FILE  PEM bundle of the CAs that may sign an https server's certificate (default:\n"
        "                      the system's CAs); the certificate must also name the URL's host\n"
        "  --prometheus-insecure-skip-verify  accept any certificate for any host: no protection against a\n"
        "                      man in the middle, who then also gets the credentials; for tests only\n"
        "  --topology FILE     the fleet's floor plan, JSON or YAML by its extension (.yaml, .yml); see\n"
        "                      docs/topology-example.json and .yaml; without one the layout comes from the\n"
        "                      series' row/rack labels, else from their hostnames\n"
        "  --metric-map FILE   the site's own series names, units and labels (lines 'SERIES = KEY [* SCALE]\n"
        "                      [+ OFFSET]' and 'label hostname = NAME...'; see README); without one a\n"
        "                      dcgm-exporter profile is chosen from the series the server holds (or\n"
        "                      that are pushed)\n"
        "  --prometheus-timeout-ms MS  time allowed for one poll's queries, 100 to 60000 (default 5000)\n"
        "  --list-scenarios    list the scenarios and exit\n"
        "  --version           print the version\n"
        "  --help              print this help\n",
        FleetShape::minGpus, FleetShape::maxGpus);
}

std::string scenarioList()
{
    std::string text;
    for (const auto &s : Scenario::all()) {
        text += fmt::format("{:<16} {}\n", s.name, s.description);
    }
    return text;
}

ParseResult parseBackendOptions(const std::vector<std::string> &args)
{
    ParseResult result;
    auto &o = result.options;
    std::string remoteWriteOption; // the last --remote-write-* given
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &arg = args[i];
        auto value = [&](std::string *out) {
            if (i + 1 >= args.size()) {
                result.error = fmt::format("option {} needs a value", arg);
                return false;
            }
            *out = args[++i];
            return true;
        };
        std::string v;
        // The option's value, a number from min to max (NaN is not one).
        auto numberIn = [&](auto *out, auto min, auto max) {
            if (!value(&v)) {
                return false;
            }
            if (!parseNumber(v, out) || !(*out >= min && *out <= max)) {
                result.error = fmt::format("{}: '{}' is not a number from {} to {}", arg, v, min, max);
                return false;
            }
            return true;
        };
        auto millisecondsIn = [&](std::chrono::milliseconds *out, int64_t min, int64_t max) {
            int64_t ms = 0;
            if (!numberIn(&ms, min, max)) {
                return false;
            }
            *out = std::chrono::milliseconds(ms);
            return true;
        };
        if (arg == "--help" || arg == "-h") {
            o.showHelp = true;
        } else if (arg == "--version") {
            o.showVersion = true;
        } else if (arg == "--history") {
            if (!value(&v)) {
                return result;
            }
            const auto seconds = parseDuration(v);
            if (!seconds || *seconds > 7 * 86400) {
                result.error
                    = fmt::format("--history: '{}' is not a duration such as 90s, 30m, 6h or 2d (at most 7d)", v);
                return result;
            }
            o.source.history = std::chrono::seconds(*seconds);
        } else if (arg == "--list-scenarios") {
            o.listScenarios = true;
        } else if (arg == "--scenario") {
            if (!value(&v)) {
                return result;
            }
            const auto kind = Scenario::byName(v);
            if (!kind) {
                result.error = fmt::format("--scenario: no scenario '{}'; --list-scenarios lists them", v);
                return result;
            }
            o.source.scenario = *kind;
        } else if (arg == "--listen") {
            if (!value(&o.listen)) {
                return result;
            }
        } else if (arg == "--exporter-listen") {
            if (!value(&o.exporterListen)) {
                return result;
            }
            std::string host;
            int port = 0;
            std::string why;
            if (!splitListenAddress(o.exporterListen, &host, &port, &why)) {
                result.error = fmt::format("--exporter-listen: {}", why);
                return result;
            }
        } else if (arg == "--exporter-topology-labels") {
            o.exporterTopologyLabels = true;
        } else if (arg == "--exporter-targets-file") {
            if (!value(&o.exporterTargetsFile)) {
                return result;
            }
            if (o.exporterTargetsFile.empty()) {
                result.error = "--exporter-targets-file: the file name is empty";
                return result;
            }
        } else if (arg == "--gpus") {
            if (!numberIn(&o.source.gpuCount, FleetShape::minGpus, FleetShape::maxGpus)) {
                return result;
            }
        } else if (arg == "--hardware") {
            if (!value(&v)) {
                return result;
            }
            const auto hardware = HardwareSpec::fromName(v);
            if (!hardware) {
                result.error = fmt::format("--hardware: no hardware '{}'; known: {}", v, HardwareSpec::names());
                return result;
            }
            o.source.hardware = *hardware;
        } else if (arg == "--seed") {
            if (!value(&v)) {
                return result;
            }
            if (!parseNumber(v, &o.source.seed)) {
                result.error = fmt::format("--seed: '{}' is not a non-negative integer", v);
                return result;
            }
        } else if (arg == "--interval-ms") {
            if (!millisecondsIn(&o.source.interval, 50, 60000)) {
                return result;
            }
        } else if (arg == "--speed") {
            double speed = 0;
            if (!numberIn(&speed, 0.1, 3600)) {
                return result;
            }
            o.source.speed = speed;
        } else if (arg == "--source") {
            if (!value(&v)) {
                return result;
            }
            if (v != "simulator" && v != "prometheus" && v != "remote-write") {
                result.error = fmt::format("--source: '{}' is none of simulator, prometheus, remote-write", v);
                return result;
            }
            o.fromPrometheus = v == "prometheus";
            o.fromRemoteWrite = v == "remote-write";
        } else if (arg == "--prometheus-url") {
            if (!value(&o.prometheus.url)) {
                return result;
            }
        } else if (arg == "--prometheus-user") {
            if (!value(&o.prometheus.http.user)) {
                return result;
            }
            if (o.prometheus.http.user.empty() || o.prometheus.http.user.find(':') != std::string::npos) {
                result.error = "--prometheus-user: a user name is not empty and has no ':'";
                return result;
            }
        } else if (arg == "--prometheus-password-file" || arg == "--prometheus-bearer-token-file") {
            const bool password = arg == "--prometheus-password-file";
            std::string &path = password ? o.prometheus.http.passwordFile : o.prometheus.http.bearerTokenFile;
            if (!value(&path)) {
                return result;
            }
            std::string secret;
            std::string why;
            if (!PrometheusHttp::readSecret(path, password ? "password file" : "bearer token file", &secret, &why)) {
                result.error = fmt::format("{}: {}", arg, why);
                return result;
            }
        } else if (arg == "--prometheus-password" || arg == "--prometheus-bearer-token") {
            result.error = fmt::format("{}: secrets are not taken on the command line, where every user of the "
                                       "machine can read them; use {}-file",
                arg, arg);
            return result;
        } else if (arg == "--prometheus-ca") {
            if (!value(&o.prometheus.http.caFile)) {
                return result;
            }
            std::ifstream in(o.prometheus.http.caFile, std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            if (!in) {
                result.error = fmt::format("--prometheus-ca: cannot read '{}'", o.prometheus.http.caFile);
                return result;
            }
            if (text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
                result.error = fmt::format("--prometheus-ca: '{}' holds no PEM certificate", o.prometheus.http.caFile);
                return result;
            }
        } else if (arg == "--prometheus-insecure-skip-verify") {
            o.prometheus.http.insecureSkipVerify = true;
        } else if (arg == "--topology") {
            if (!value(&o.prometheus.topologyFile)) {
                return result;
            }
        } else if (arg == "--remote-write-listen") {
            if (!value(&o.remoteWrite.listen)) {
                return result;
            }
            remoteWriteOption = arg;
        } else if (arg == "--remote-write-interval-ms" || arg == "--remote-write-delay-ms"
            || arg == "--remote-write-grace-ms") {
            const bool interval = arg == "--remote-write-interval-ms";
            const bool delay = arg == "--remote-write-delay-ms";
            int64_t &target = interval ? o.remoteWrite.windowMs : delay ? o.remoteWrite.delayMs : o.remoteWrite.graceMs;
            if (!numberIn(&target,
                    int64_t { interval ? 100
                            : delay    ? 0
                                       : 100 },
                    int64_t { interval ? 600000
                            : delay    ? 60000
                                       : 3600000 })) {
                return result;
            }
            remoteWriteOption = arg;
        } else if (arg == "--metric-map") {
            std::string path;
            if (!value(&path)) {
                return result;
            }
            MetricMap map;
            std::string why;
            if (!MetricMap::load(path, &map, &why)) {
                result.error = fmt::format("--metric-map: {}", why);
                return result;
            }
            o.prometheus.metricMap = std::move(map);
        } else if (arg == "--prometheus-timeout-ms") {
            if (!millisecondsIn(&o.prometheus.timeout, 100, 60000)) {
                return result;
            }
        } else {
            result.error = fmt::format("unknown option '{}'", arg);
            return result;
        }
    }
    const auto &http = o.prometheus.http;
    const bool https = o.prometheus.url.rfind("https://", 0) == 0;
    const bool credentials = !http.user.empty() || !http.bearerTokenFile.empty();
    if (o.fromPrometheus && o.prometheus.url.empty()) {
        result.error = "--source prometheus needs --prometheus-url";
    } else if (!o.exporterTargetsFile.empty() && o.exporterListen.empty()) {
        result.error = "--exporter-targets-file needs --exporter-listen";
    } else if (!o.fromPrometheus && !o.fromRemoteWrite
        && (!o.prometheus.url.empty() || !o.prometheus.topologyFile.empty() || !http.passwordFile.empty() || credentials
            || !http.caFile.empty() || http.insecureSkipVerify || o.prometheus.metricMap)) {
        result.error
            = "--prometheus-* options, --topology and --metric-map apply to --source prometheus and remote-write "
              "only";
    } else if (!o.fromRemoteWrite && !remoteWriteOption.empty()) {
        result.error = fmt::format("{} applies to --source remote-write only", remoteWriteOption);
    } else if (http.user.empty() != http.passwordFile.empty()) {
        result.error = "--prometheus-user and --prometheus-password-file go together";
    } else if (!http.user.empty() && !http.bearerTokenFile.empty()) {
        result.error = "--prometheus-user and --prometheus-bearer-token-file exclude each other";
    } else if (!https && (!http.caFile.empty() || http.insecureSkipVerify)) {
        result.error = "--prometheus-ca and --prometheus-insecure-skip-verify need an https:// --prometheus-url";
    } else if (!http.caFile.empty() && http.insecureSkipVerify) {
        result.error = "--prometheus-ca and --prometheus-insecure-skip-verify contradict each other";
    }
    if (!result.error.empty()) {
        return result;
    }
    if (http.insecureSkipVerify) {
        result.warnings.emplace_back(
            "WARNING: --prometheus-insecure-skip-verify: the server's certificate is NOT checked; anyone on the path "
            "can pose as the server, feed this console made-up data"
            + std::string(credentials ? " and take the credentials" : "") + ". Use --prometheus-ca instead.");
    }
    if (credentials && !https) {
        result.warnings.emplace_back("WARNING: the Prometheus credentials go over plain http:// in clear text; use "
                                     "an https:// URL");
    }
    return result;
}

} // namespace fleetscope::backend
