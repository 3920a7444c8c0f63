// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"
#include "prometheus/prometheushttp.h"
#include "prometheus/prometheussource.h"
#include "remotewrite/remotewritesource.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

// The NOC's Alertmanager (--alertmanager-*): read, silenced through, and sent the backend's findings.
struct AlertmanagerOptions
{
    std::string url; // empty: none
    PrometheusHttp::Options http; // its credentials and TLS, as for Prometheus
    std::chrono::milliseconds poll { 5000 };
    std::chrono::milliseconds timeout { 10000 };
    bool send = false; // --alertmanager-send: incidents and anomalies posted as alerts
};

struct BackendOptions
{
    std::string listen = "127.0.0.1:50051";
    // Where to serve the fleet as a dcgm-exporter /metrics page; empty: not served.
    std::string exporterListen;
    bool exporterTopologyLabels = false; // add the simulator's row and rack labels to that page
    // Where to write the node pages' targets (Prometheus file_sd JSON) once the exporter listens; empty: nowhere.
    std::string exporterTargetsFile;
    std::string exporterNodeTargetsFile; // the node_exporter pages' and the facility page's targets
    std::string exporterSlurmTargetsFile; // the Slurm exporter page's target
    BoundedHttpServer::Security exporterSecurity; // TLS, client certificates and tokens of the exporter pages
    SimulationOptions source; // the frame source's options, and the fleet when simulated
    // --source prometheus: frames from a Prometheus-compatible server instead of the simulator.
    bool fromPrometheus = false;
    PrometheusSource::Options prometheus;
    // --source remote-write: frames pushed by Prometheus remote write (vmagent, Prometheus); history from
    // --prometheus-url when given. Its topology file is prometheus.topologyFile (--topology).
    bool fromRemoteWrite = false;
    RemoteWriteSource::Options remoteWrite;
    BackendServer::Security security; // TLS, client certificates, tokens, per-client limits
    AlertmanagerOptions alertmanager;
    std::string configFile; // the configuration file read, if any
    bool showHelp = false;
    bool showVersion = false;
    bool listScenarios = false;
};

struct ParseResult
{
    BackendOptions options;
    std::string error; // empty when the command line was valid
    std::vector<std::string> warnings; // to print at start: valid, but unsafe
};

// Reads an HTTP door's token file (security->tokenFile, if any) and has the door check tokens against it, read again
// when it changes. False with the reason when it cannot be read or holds no token.
bool attachTokenFile(BoundedHttpServer::Security *security, std::string *error);

// "90s", "30m", "6h", "2d" -> seconds.
std::optional<int64_t> parseDuration(const std::string &text);

// The arguments after the program's name, parsed with CLI11: an error names its option (main exits with 2). The options
// of a configuration file (configfile.h) come first, so that the command line's override them: the file of --config,
// else defaultConfig when that file exists (the installed /etc/fleetscope/backend.yaml; empty: none).
ParseResult parseBackendOptions(const std::vector<std::string> &args, const std::string &defaultConfig = {});
// --help's text, CLI11's, in groups of options.
std::string backendUsage();
std::string scenarioList();

} // namespace fleetscope::backend
