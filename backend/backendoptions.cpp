// SPDX-License-Identifier: Apache-2.0
#include "backendoptions.h"

#include "exporterserver.h"

#include <charconv>

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
        "                      for Prometheus to scrape; port 0 picks a free port, and 'exporter listening on\n"
        "                      HOST:PORT' is printed when ready\n"
        "  --exporter-topology-labels  add the simulator's row and rack labels to that page (dcgm-exporter\n"
        "                      has none)\n"
        "  --gpus N            fleet size, {} to {} GPUs (default 10240)\n"
        "  --seed S            simulation seed (default 1); the same seed gives the same fleet\n"
        "  --interval-ms MS    time between frames, 50 to 60000 (default 1000)\n"
        "  --speed X           simulated seconds per real second, 0.1 to 3600 (default 1)\n"
        "  --history DURATION  simulate this much past before starting (e.g. 90m, 6h; default 0), so that\n"
        "                      history and replay have data at once; one frame a minute\n"
        "  --scenario NAME     stage an incident (see --list-scenarios); default none\n"
        "  --source KIND       simulator (default) or prometheus: a real fleet's dcgm-exporter metrics from a\n"
        "                      Prometheus-compatible server (the simulation options then do not apply)\n"
        "  --prometheus-url URL  the server, http://HOST:PORT[/PREFIX] (no TLS or authentication yet)\n"
        "  --topology FILE     the fleet's floor plan (see docs/topology-example.json); without one the layout\n"
        "                      comes from the series' row/rack labels, else from their hostnames\n"
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
            if (!ExporterServer::splitAddress(o.exporterListen, &host, &port, &why)) {
                result.error = fmt::format("--exporter-listen: {}", why);
                return result;
            }
        } else if (arg == "--exporter-topology-labels") {
            o.exporterTopologyLabels = true;
        } else if (arg == "--gpus") {
            if (!value(&v)) {
                return result;
            }
            if (!parseNumber(v, &o.source.gpuCount) || o.source.gpuCount < FleetShape::minGpus
                || o.source.gpuCount > FleetShape::maxGpus) {
                result.error = fmt::format(
                    "--gpus: '{}' is not a number from {} to {}", v, FleetShape::minGpus, FleetShape::maxGpus);
                return result;
            }
        } else if (arg == "--seed") {
            if (!value(&v)) {
                return result;
            }
            if (!parseNumber(v, &o.source.seed)) {
                result.error = fmt::format("--seed: '{}' is not a non-negative integer", v);
                return result;
            }
        } else if (arg == "--interval-ms") {
            if (!value(&v)) {
                return result;
            }
            int64_t ms = 0;
            if (!parseNumber(v, &ms) || ms < 50 || ms > 60000) {
                result.error = fmt::format("--interval-ms: '{}' is not a number from 50 to 60000", v);
                return result;
            }
            o.source.interval = std::chrono::milliseconds(ms);
        } else if (arg == "--speed") {
            if (!value(&v)) {
                return result;
            }
            double speed = 0;
            if (!parseNumber(v, &speed) || !(speed >= 0.1 && speed <= 3600)) {
                result.error = fmt::format("--speed: '{}' is not a number from 0.1 to 3600", v);
                return result;
            }
            o.source.speed = speed;
        } else if (arg == "--source") {
            if (!value(&v)) {
                return result;
            }
            if (v != "simulator" && v != "prometheus") {
                result.error = fmt::format("--source: '{}' is neither simulator nor prometheus", v);
                return result;
            }
            o.fromPrometheus = v == "prometheus";
        } else if (arg == "--prometheus-url") {
            if (!value(&o.prometheus.url)) {
                return result;
            }
        } else if (arg == "--topology") {
            if (!value(&o.prometheus.topologyFile)) {
                return result;
            }
        } else if (arg == "--prometheus-timeout-ms") {
            if (!value(&v)) {
                return result;
            }
            int64_t ms = 0;
            if (!parseNumber(v, &ms) || ms < 100 || ms > 60000) {
                result.error = fmt::format("--prometheus-timeout-ms: '{}' is not a number from 100 to 60000", v);
                return result;
            }
            o.prometheus.timeout = std::chrono::milliseconds(ms);
        } else {
            result.error = fmt::format("unknown option '{}'", arg);
            return result;
        }
    }
    if (o.fromPrometheus && o.prometheus.url.empty()) {
        result.error = "--source prometheus needs --prometheus-url";
    } else if (!o.fromPrometheus && (!o.prometheus.url.empty() || !o.prometheus.topologyFile.empty())) {
        result.error = "--prometheus-url and --topology apply to --source prometheus only";
    }
    return result;
}

} // namespace fleetscope::backend
