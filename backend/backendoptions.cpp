// SPDX-License-Identifier: Apache-2.0
#include "backendoptions.h"

#include "alertoptions.h"

#include "configfile.h"
#include "core/listenaddress.h"
#include "helpformatter.h"
#include "optionchecks.h"
#include "sim/stragglermodel.h"

#include <functional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

using namespace cli;

// The options of --source remote-write alone.
const char *const remoteWriteGroup = "Remote write (--source remote-write)";

// Every option, bound to o; the checks that need several of them are parseBackendOptions's.
void addOptions(CLI::App &app, BackendOptions &o)
{
    const BackendOptions defaults;
    app.description("Serves the Fleetscope telemetry API (gRPC) from a deterministic simulated GPU fleet, or from a\n"
                    "real fleet's dcgm-exporter metrics.");
    app.footer("Secrets come from files, never from the command line, where every user of the machine can read them; "
               "surrounding white space is dropped, and the file is read again for every request, so a rotated secret "
               "is picked up without a restart.");
    app.formatter(std::make_shared<HelpFormatter>());
    app.set_help_flag(); // --help is a flag like --version, checked with the others and answered by main
    app.allow_extras(); // named by parseBackendOptions, so that a secret given on the command line is refused
    // Given twice, the last counts (each checked); a flag takes no value ("--version=1" is refused).
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->disable_flag_override();

    app.option_defaults()->group("Service");
    app.add_option("--listen", o.listen,
           fmt::format("address to serve gRPC on (default {}); port 0 picks a free port, and 'listening on HOST:PORT' "
                       "is printed when ready",
               defaults.listen))
        ->type_name("ADDR");
    app.add_option_function<std::string>(
           "--source",
           [&o](const std::string &kind) {
               o.fromPrometheus = kind == "prometheus";
               o.fromRemoteWrite = kind == "remote-write";
           },
           "simulator (default); prometheus: a real fleet's dcgm-exporter metrics polled from a Prometheus-compatible "
           "server; remote-write: the same metrics pushed by vmagent or Prometheus (remote write 1.0), the live path "
           "for large fleets (the simulation options then do not apply)")
        ->type_name("KIND")
        ->check(checkWith([](const std::string &kind) {
            return kind == "simulator" || kind == "prometheus" || kind == "remote-write"
                ? std::string()
                : fmt::format("'{}' is none of simulator, prometheus, remote-write", kind);
        }));
    addNumber<int64_t>(
        app, "--interval-ms", 50, 60000, [&o](int64_t ms) { o.source.interval = std::chrono::milliseconds(ms); },
        fmt::format("time between frames, 50 to 60000 (default {})", defaults.source.interval.count()), "MS");
    auto *configOption = app.add_option("--config", o.configFile,
                                "read options from FILE (YAML: `listen: 127.0.0.1:50051`, one option a line, named "
                                "without its dashes; "
                                "true/false for a flag; a list for an option given more than once); the command line's "
                                "options override "
                                "it. Installed, /etc/fleetscope/backend.yaml is read when there is no --config")
                             ->type_name("FILE");
    app.add_flag("--no-config",
           "read no configuration file, not even the installed default (a console's own "
           "simulated fleet)")
        ->excludes(configOption);
    app.add_flag("-h,--help", o.showHelp, "print this help");
    app.add_flag("--version", o.showVersion, "print the version");

    app.option_defaults()->group("Security (who may read the fleet)");
    auto &security = o.security;
    auto *tlsCert = app.add_option("--tls-cert", security.tlsCertFile,
                           "serve over TLS (1.2 or later) with this PEM certificate chain; the consoles name its CA "
                           "with --ca")
                        ->type_name("FILE")
                        ->check(pemFile());
    auto *tlsKey
        = app.add_option("--tls-key", security.tlsKeyFile, "the certificate's private key (PEM, no passphrase)")
              ->type_name("FILE")
              ->check(readableFile("key file"));
    tlsCert->needs(tlsKey);
    tlsKey->needs(tlsCert);
    app.add_option("--tls-client-ca", security.tlsClientCaFile,
           "mutual TLS: only clients with a certificate signed by a CA in this PEM bundle")
        ->type_name("FILE")
        ->needs(tlsCert)
        ->check(pemFile());
    app.add_option("--token-file", security.access.tokenFile,
           "every call must carry one of the bearer tokens in FILE, a line each: 'TOKEN [NAME [ROLE]]', ROLE viewer "
           "(reads; a token alone) or operator (also silences); '#' starts a comment; the file is read again when it "
           "changes, so a token is rotated without a restart")
        ->type_name("FILE")
        ->needs(tlsCert);
    auto *clientCa = app.get_option("--tls-client-ca");
    app.add_option("--client-roles", security.access.clientRolesFile,
           "names and roles of client certificates, a line each: 'ROLE NAME SUBJECT' (SUBJECT as gRPC prints it, "
           "'CN=noc-wall,O=Example', or 'CN=NAME' alone); a certificate in no line is a viewer named by its CN")
        ->type_name("FILE")
        ->needs(clientCa)
        ->check(readableFile("client roles file"));
    app.add_option_function<std::string>(
           "--anonymous-role",
           [&security](
               const std::string &word) { security.access.anonymousRole = roleNamed(word).value_or(Role::Viewer); },
           "what a caller without credentials (a loopback backend without a token file or client CA) may do: viewer "
           "(the default) or operator")
        ->type_name("ROLE")
        ->check(checkWith(
            [](const std::string &word) { return roleNamed(word) ? "" : "a role is 'viewer' or 'operator'"; }));
    app.add_flag("--insecure-listen", security.insecureListen,
        "serve non-loopback addresses without TLS and a token or client CA (the gRPC API, the exporter pages, remote "
        "write): anyone who reaches a port reads the whole fleet, or pushes made-up values");
    addNumber<uint32_t>(
        app, "--max-streams-per-client", 1, 100000, [&o](uint32_t n) { o.security.access.maxStreamsPerClient = n; },
        fmt::format("streams one client address may hold open at once (default {})",
            defaults.security.access.maxStreamsPerClient),
        "N");
    addNumber<uint32_t>(
        app, "--max-calls-per-second", 1, 1000000,
        [&o](uint32_t n) { o.security.access.maxCallsPerSecondPerClient = n; },
        fmt::format("calls a second from one client address, with bursts of twice that (default {})",
            defaults.security.access.maxCallsPerSecondPerClient),
        "N");
    addNumber<uint32_t>(
        app, "--max-refusals-per-minute", 1, 1000000,
        [&o](uint32_t n) { o.security.access.maxRefusalsPerMinutePerClient = n; },
        fmt::format("refused calls (no token, a wrong one, no client certificate) a minute from one client address; "
                    "past them its calls are refused without a look at their credentials, until the minute's rate "
                    "allows one more (default {})",
            defaults.security.access.maxRefusalsPerMinutePerClient),
        "N");

    app.option_defaults()->group("Simulator");
    addNumber<uint32_t>(
        app, "--gpus", FleetShape::minGpus, FleetShape::maxGpus, [&o](uint32_t n) { o.source.gpuCount = n; },
        fmt::format("fleet size, {} to {} GPUs (default {})", FleetShape::minGpus, FleetShape::maxGpus,
            defaults.source.gpuCount),
        "N");
    app.add_option_function<std::string>(
           "--seed", [&o](const std::string &seed) { parseNumber(seed, &o.source.seed); },
           fmt::format("simulation seed (default {}); the same seed gives the same fleet", defaults.source.seed))
        ->type_name("S")
        ->check(checkWith([](const std::string &seed) {
            uint64_t value = 0;
            return parseNumber(seed, &value) ? std::string() : fmt::format("'{}' is not a non-negative integer", seed);
        }));
    app.add_option_function<std::string>(
           "--hardware", [&o](const std::string &name) { o.source.hardware = *HardwareSpec::fromName(name); },
           "hgx-h100 (default): air-cooled 8-GPU nodes, 8 to a rack; gb200-nvl72: liquid-cooled racks of 18 trays of "
           "4 GPUs, each rack one NVLink domain")
        ->type_name("KIND")
        ->check(checkWith([](const std::string &name) {
            return HardwareSpec::fromName(name)
                ? std::string()
                : fmt::format("no hardware '{}'; known: {}", name, HardwareSpec::names());
        }));
    addNumber<double>(
        app, "--speed", 0.1, 3600, [&o](double speed) { o.source.speed = speed; },
        fmt::format("simulated seconds per real second, 0.1 to 3600 (default {})", defaults.source.speed), "X");
    app.add_option_function<std::string>(
           "--history",
           [&o](const std::string &text) { o.source.history = std::chrono::seconds(*parseDuration(text)); },
           "simulate this much past before starting (e.g. 90m, 6h; default 0), so that history and replay have data "
           "at once; one frame a minute")
        ->type_name("DURATION")
        ->check(checkWith([](const std::string &text) {
            const auto seconds = parseDuration(text);
            return seconds && *seconds <= 7 * int64_t { 86400 }
                ? std::string()
                : fmt::format("'{}' is not a duration such as 90s, 30m, 6h or 2d (at most 7d)", text);
        }));
    app.add_option_function<std::string>(
           "--scenario", [&o](const std::string &name) { o.source.scenario = *Scenario::byName(name); },
           "stage an incident (see --list-scenarios); default none")
        ->type_name("NAME")
        ->check(checkWith([](const std::string &name) {
            return Scenario::byName(name) ? std::string()
                                          : fmt::format("no scenario '{}'; --list-scenarios lists them", name);
        }));
    addNumber<double>(
        app, "--degradations-per-gpu-day", 0, 10, [&o](double rate) { o.source.degradationsPerGpuDay = rate; },
        "inject cooling, clock and power degradations at this rate per GPU and simulated day, 0 to 10 (default 0), "
        "for the anomaly detector to find (docs/ANOMALY.md)",
        "X");
    // Stragglers at random at the documented rate unless told otherwise: the simulated fleet's jobs slow as real
    // ones do (docs/FAULTS.md).
    o.source.stragglersPerGpuDay = StragglerModel::documentedRatePerGpuDay;
    addNumber<double>(
        app, "--stragglers-per-gpu-day", 0, 1, [&o](double rate) { o.source.stragglersPerGpuDay = rate; },
        fmt::format("slow a GPU's SM clock by 8-30 % for 1-10 h at this rate per GPU and simulated day, 0 to 1 "
                    "(default {}, docs/FAULTS.md): its job runs at its pace, a straggler for the job page to rank",
            StragglerModel::documentedRatePerGpuDay),
        "X");
    app.add_flag("--list-scenarios", o.listScenarios, "list the scenarios and exit");

    app.option_defaults()->group("Exporter (the simulated fleet as dcgm-exporter pages)");
    auto *exporterListen
        = app.add_option("--exporter-listen", o.exporterListen,
                 "also serve the fleet as a dcgm-exporter /metrics page on ADDR (any but loopback needs "
                 "--exporter-tls-* and a token or client CA), for Prometheus to scrape, and each node's own page at "
                 "/metrics/HOSTNAME, as one dcgm-exporter per node would; port 0 picks a free port, and 'exporter "
                 "listening on HOST:PORT' is printed when ready")
              ->type_name("ADDR")
              ->check(listenAddress());
    app.add_option("--exporter-targets-file", o.exporterTargetsFile,
           "write the node pages as scrape targets to FILE (Prometheus file_sd JSON, one target per node, "
           "__metrics_path__ /metrics/HOSTNAME; vmagent reads it too) before 'exporter listening' is printed; a "
           "wildcard address is written as loopback")
        ->type_name("FILE")
        ->needs(exporterListen)
        ->check(checkWith([](const std::string &file) { return file.empty() ? "the file name is empty" : ""; }));
    app.add_option("--exporter-node-targets-file", o.exporterNodeTargetsFile,
           "write each node's node_exporter page (its rail NICs, /node-exporter/HOSTNAME) and the facility page "
           "(/facility) as scrape targets to FILE, as --exporter-targets-file does, for a scrape job of their own")
        ->type_name("FILE")
        ->needs(exporterListen)
        ->check(checkWith([](const std::string &file) { return file.empty() ? "the file name is empty" : ""; }));
    app.add_option("--exporter-slurm-targets-file", o.exporterSlurmTargetsFile,
           "write the Slurm exporter page (/slurm: the running jobs as soperator's slurm_node_job and "
           "slurm_job_info) as one scrape target to FILE, as --exporter-targets-file does, for a scrape job of its own")
        ->type_name("FILE")
        ->needs(exporterListen)
        ->check(checkWith([](const std::string &file) { return file.empty() ? "the file name is empty" : ""; }));
    app.add_flag("--exporter-topology-labels", o.exporterTopologyLabels,
        "add the simulator's row and rack labels to that page (dcgm-exporter has none)");
    addDoorOptions(app, "--exporter", "the exporter pages", &o.exporterSecurity);

    app.option_defaults()->group(remoteWriteGroup);
    app.add_option("--remote-write-listen", o.remoteWrite.listen,
           fmt::format("where to take POST /api/v1/write (default {}); any address but loopback needs TLS and a token "
                       "or client CA",
               defaults.remoteWrite.listen))
        ->type_name("ADDR")
        ->check(listenAddress());
    addDoorOptions(app, "--remote-write", "remote write", &o.remoteWrite.security);
    addNumber<int64_t>(
        app, "--remote-write-interval-ms", 100, 600000, [&o](int64_t ms) { o.remoteWrite.windowMs = ms; },
        "the scrape interval: one frame per interval of sample time, 100 to 600000 (default: detected from the first "
        "samples)",
        "MS");
    addNumber<int64_t>(
        app, "--remote-write-delay-ms", 0, 60000, [&o](int64_t ms) { o.remoteWrite.delayMs = ms; },
        fmt::format("how long after its end a window is published, for the senders' batching, 0 to 60000 (default "
                    "{}; Prometheus senders: batch_send_deadline below it)",
            defaults.remoteWrite.delayMs),
        "MS");
    addNumber<int64_t>(
        app, "--remote-write-grace-ms", 100, 3600000, [&o](int64_t ms) { o.remoteWrite.graceMs = ms; },
        "a GPU that sends nothing for this long has no data, 100 to 3600000 (default three intervals)", "MS");
    addNumber<int>(
        app, "--remote-write-threads", 1, 256, [&o](int n) { o.remoteWrite.threads = n; },
        fmt::format("pushes read, decoded and taken at once, 1 to 256 (default {})", defaults.remoteWrite.threads),
        "N");
    addNumber<size_t>(
        app, "--remote-write-max-connections-per-address", 1, 65536,
        [&o](size_t n) { o.remoteWrite.maxConnectionsPerAddress = n; },
        fmt::format("connections one sender's address may hold open, 1 to 65536 (default {}); more are closed as "
                    "they come",
            defaults.remoteWrite.maxConnectionsPerAddress),
        "N");

    app.option_defaults()->group("Prometheus (--source prometheus; for remote-write, history and the layout)");
    auto &http = o.prometheus.http;
    app.add_option("--prometheus-url", o.prometheus.url,
           "the server, http[s]://HOST[:PORT][/PREFIX]; with --source remote-write, where history comes from")
        ->type_name("URL");
    auto *user = app.add_option("--prometheus-user", http.user, "basic authentication as USER")
                     ->type_name("USER")
                     ->check(checkWith([](const std::string &name) {
                         return name.empty() || name.find(':') != std::string::npos
                             ? "a user name is not empty and has no ':'"
                             : "";
                     }));
    auto *passwordFile = app.add_option("--prometheus-password-file", http.passwordFile,
                                "the password for basic authentication, read from FILE")
                             ->type_name("FILE")
                             ->check(secretFile("password file"));
    user->needs(passwordFile);
    passwordFile->needs(user);
    app.add_option("--prometheus-bearer-token-file", http.bearerTokenFile,
           "send 'Authorization: Bearer TOKEN' with the token read from FILE")
        ->type_name("FILE")
        ->excludes(user)
        ->check(secretFile("bearer token file"));
    auto *ca = app.add_option("--prometheus-ca", http.caFile,
                      "PEM bundle of the CAs that may sign an https server's certificate (default: the system's "
                      "CAs); the certificate must also name the URL's host")
                   ->type_name("FILE")
                   ->check(pemFile());
    app.add_flag("--prometheus-insecure-skip-verify", http.insecureSkipVerify,
           "accept any certificate for any host: no protection against a man in the middle, who then also gets the "
           "credentials; for tests only")
        ->excludes(ca);
    addNumber<int64_t>(
        app, "--prometheus-timeout-ms", 100, 60000,
        [&o](int64_t ms) { o.prometheus.timeout = std::chrono::milliseconds(ms); },
        fmt::format(
            "time allowed for one poll's queries, 100 to 60000 (default {})", defaults.prometheus.timeout.count()),
        "MS");
    app.add_option("--topology", o.prometheus.topologyFile,
           "the fleet's floor plan, JSON or YAML by its extension (.yaml, .yml); see docs/topology-example.json and "
           ".yaml; without one the layout comes from the series' row/rack labels, else from their hostnames")
        ->type_name("FILE");
    app.add_option_function<std::string>(
           "--metric-map",
           [&o](const std::string &path) {
               MetricMap map;
               std::string why;
               if (!MetricMap::load(path, &map, &why)) {
                   throw CLI::ValidationError("--metric-map", why);
               }
               o.prometheus.metricMap = std::move(map);
           },
           "the site's own series names, units and labels (see README), in lines 'SERIES = KEY [* SCALE] [+ "
           "OFFSET]' and 'label hostname = NAME...'; without one a dcgm-exporter profile is chosen from the series "
           "the server holds (or that are pushed)")
        ->type_name("FILE");
    addAlertmanagerOptions(app, o);
}

// What is left after CLI11's parse: arguments that are no option, or a secret where it must not be (never echoed).
std::string leftOver(const std::vector<std::string> &remaining)
{
    for (const auto &arg : remaining) {
        const std::string name = arg.substr(0, arg.find('='));
        if (name == "--prometheus-password" || name == "--prometheus-bearer-token" || name == "--alertmanager-password"
            || name == "--alertmanager-bearer-token") {
            return fmt::format("{}: secrets are not taken on the command line, where every user of the machine can "
                               "read them; use {}-file",
                name, name);
        }
    }
    for (const auto &arg : remaining) {
        if (arg.rfind('-', 0) == 0) {
            return fmt::format("unknown option '{}'", arg);
        }
    }
    return remaining.empty() ? std::string() : fmt::format("unexpected argument '{}'", remaining.front());
}

// The checks across options that CLI11's needs() and excludes() cannot say.
std::string crossCheck(const CLI::App &app, const BackendOptions &o)
{
    const auto &http = o.prometheus.http;
    const bool https = o.prometheus.url.rfind("https://", 0) == 0;
    if (o.fromPrometheus && o.prometheus.url.empty()) {
        return "--source prometheus needs --prometheus-url";
    }
    if (!o.fromPrometheus && !o.fromRemoteWrite
        && (!o.prometheus.url.empty() || !o.prometheus.topologyFile.empty() || !http.passwordFile.empty()
            || !http.user.empty() || !http.bearerTokenFile.empty() || !http.caFile.empty() || http.insecureSkipVerify
            || o.prometheus.metricMap)) {
        return "--prometheus-* options, --topology and --metric-map apply to --source prometheus and remote-write only";
    }
    const auto remoteWriteGiven = app.get_options(
        [](const CLI::Option *option) { return option->get_group() == remoteWriteGroup && option->count() > 0; });
    if (!o.fromRemoteWrite && !remoteWriteGiven.empty()) {
        return fmt::format("{} applies to --source remote-write only", remoteWriteGiven.front()->get_name());
    }
    if (!https && (!http.caFile.empty() || http.insecureSkipVerify)) {
        return "--prometheus-ca and --prometheus-insecure-skip-verify need an https:// --prometheus-url";
    }
    return checkAlertmanagerOptions(o);
}

} // namespace

std::optional<int64_t> parseDuration(const std::string &text)
{
    if (text.size() < 2) {
        return std::nullopt;
    }
    int64_t count = 0;
    const std::string number = text.substr(0, text.size() - 1);
    if (!parseNumber(number, &count) || count < 0 || count > 7 * int64_t { 86400 }) {
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

bool attachTokenFile(BoundedHttpServer::Security *security, std::string *error)
{
    if (security->tokenFile.empty()) {
        return true;
    }
    auto tokens = std::make_shared<TokenFile>(security->tokenFile);
    if (!tokens->load(error)) {
        *error = fmt::format("{}-token-file: {}", security->optionPrefix, *error);
        return false;
    }
    security->acceptsToken
        = [tokens](std::string_view token) { return tokens->check(token) == TokenFile::Verdict::Accepted; };
    return true;
}

std::string backendUsage()
{
    BackendOptions options;
    CLI::App app("", "fleetscope-backend");
    addOptions(app, options);
    return app.help();
}

std::string scenarioList()
{
    std::string text;
    for (const auto &s : Scenario::all()) {
        text += fmt::format("{:<16} {}\n", s.name, s.description);
    }
    return text;
}

ParseResult parseBackendOptions(const std::vector<std::string> &args, const std::string &defaultConfig)
{
    ParseResult result;
    auto &o = result.options;
    CLI::App app("", "fleetscope-backend");
    addOptions(app, o);
    std::vector<std::string> all;
    const std::string config = configFileOf(args, defaultConfig);
    if (!config.empty() && !configArguments(app, config, &all, &result.error)) {
        return result;
    }
    all.insert(all.end(), args.begin(), args.end());
    try {
        app.parse(std::vector<std::string>(all.rbegin(), all.rend())); // CLI11 takes them last first
    } catch (const CLI::ArgumentMismatch &e) {
        // The two mismatches these options can have, said as the other errors are; CLI11's words: "--gpus: 1 required
        // N missing" and "--version was given a disallowed flag override".
        const std::string what = e.what();
        const size_t colon = what.find(':');
        result.error = colon != std::string::npos ? fmt::format("{} needs a value", what.substr(0, colon))
                                                  : fmt::format("--{} takes no value", what.substr(0, what.find(' ')));
        return result;
    } catch (const CLI::ParseError &e) {
        result.error = e.what();
        if (!config.empty()) {
            result.error += fmt::format(" (options from {}, then the command line)", config);
        }
        return result;
    }
    o.configFile = config;
    result.error = leftOver(app.remaining());
    if (result.error.empty()) {
        result.error = crossCheck(app, o);
    }
    if (!result.error.empty()) {
        return result;
    }
    const auto &http = o.prometheus.http;
    const bool credentials = !http.user.empty() || !http.bearerTokenFile.empty();
    if (http.insecureSkipVerify) {
        result.warnings.emplace_back(
            "WARNING: --prometheus-insecure-skip-verify: the server's certificate is NOT checked; anyone on the path "
            "can pose as the server, feed this console made-up data"
            + std::string(credentials ? " and take the credentials" : "") + ". Use --prometheus-ca instead.");
    }
    std::string host;
    int port = 0;
    std::string why;
    if (o.security.insecureListen && splitListenAddress(o.listen, &host, &port, &why)
        && !BackendServer::isLoopback(host)) {
        result.warnings.emplace_back(
            fmt::format("WARNING: --insecure-listen: serving {} {}; anyone who reaches the port reads the whole fleet",
                o.listen, o.security.tls() ? "without a token or client CA" : "without TLS or credentials"));
    }
    if (o.security.access.anonymousRole == Role::Operator && !o.security.authenticates()
        && splitListenAddress(o.listen, &host, &port, &why) && !BackendServer::isLoopback(host)) {
        result.warnings.emplace_back(fmt::format("WARNING: --anonymous-role operator on {} without a token file or "
                                                 "client CA: anyone who reaches the port can silence the NOC's alerts",
            o.listen));
    }
    // --insecure-listen is one rule for every door, and each HTTP door it opens is warned about as the gRPC one is.
    o.exporterSecurity.insecureListen = o.security.insecureListen;
    o.remoteWrite.security.insecureListen = o.security.insecureListen;
    const std::pair<const std::string *, const BoundedHttpServer::Security *> doors[] = {
        { &o.exporterListen, &o.exporterSecurity },
        { o.fromRemoteWrite ? &o.remoteWrite.listen : nullptr, &o.remoteWrite.security },
    };
    for (const auto &[address, door] : doors) {
        if (o.security.insecureListen && address && !address->empty() && !(door->tls() && door->authenticates())
            && splitListenAddress(*address, &host, &port, &why) && !isLoopbackHost(host)) {
            result.warnings.emplace_back(
                fmt::format("WARNING: --insecure-listen: serving {} {}; anyone who reaches the "
                            "port can {}",
                    *address, door->tls() ? "without a token or client CA" : "without TLS or credentials",
                    door == &o.remoteWrite.security ? "push made-up values" : "read the fleet"));
        }
    }
    if (credentials && o.prometheus.url.rfind("https://", 0) != 0) {
        result.warnings.emplace_back("WARNING: the Prometheus credentials go over plain http:// in clear text; use "
                                     "an https:// URL");
    }
    warnAboutAlertmanager(o, &result.warnings);
    return result;
}

} // namespace fleetscope::backend
