// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertmanagerwatch.h"
#include "alerting/alertplacement.h"
#include "alerting/alertsender.h"
#include "analytics/fleetanalytics.h"
#include "backendoptions.h"
#include "common/heap.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "service/heaptrim.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <future>
#include <thread>

#include <fmt/format.h>

using namespace fleetscope::backend;

int main(int argc, char **argv)
{
    HeapTrim::keepFreedMemoryUntilTrimmed();
    const auto parsed = parseBackendOptions(std::vector<std::string>(argv + 1, argv + argc), FLEETSCOPE_DEFAULT_CONFIG);
    if (!parsed.error.empty()) {
        fmt::print(stderr, "fleetscope-backend: {}\nTry 'fleetscope-backend --help'.\n", parsed.error);
        return 2;
    }
    const auto &options = parsed.options;
    if (options.showHelp) {
        fmt::print("{}", backendUsage());
        return 0;
    }
    if (options.listScenarios) {
        fmt::print("{}", scenarioList());
        return 0;
    }
    if (options.showVersion) {
        fmt::print("fleetscope-backend {}\n", FLEETSCOPE_VERSION);
        return 0;
    }
    if (!options.configFile.empty()) {
        fmt::print("options from {}\n", options.configFile);
    }
    for (const auto &warning : parsed.warnings) {
        fmt::print(stderr, "fleetscope-backend: {}\n", warning);
    }

    // A peer that goes away while an answer is written is an error on that connection, never the end of the process
    // (libmicrohttpd and gRPC send with MSG_NOSIGNAL where they can; this covers every other path).
    std::signal(SIGPIPE, SIG_IGN);
    // Block the stop signals in every thread (gRPC's included) and take them synchronously below.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

    std::string error;
    std::unique_ptr<BackendServer> served;
    if (options.fromPrometheus) {
        fleetscope::heap::keepLargeAnswers(); // a poll's answers stay mapped for the next (common/heap.h)
        auto poller = std::make_unique<PrometheusSource>();
        if (!poller->start(options.prometheus, &error)) {
            fmt::print(stderr, "fleetscope-backend: --source prometheus: {}\n", error);
            return 1;
        }
        served = std::make_unique<BackendServer>(judgedSource(std::move(poller), options.source), options.security);
    } else if (options.fromRemoteWrite) {
        auto receiver = std::make_unique<RemoteWriteSource>();
        auto remoteWrite = options.remoteWrite;
        if (!attachTokenFile(&remoteWrite.security, &error)) {
            fmt::print(stderr, "fleetscope-backend: {}\n", error);
            return 1;
        }
        remoteWrite.topologyFile = options.prometheus.topologyFile;
        remoteWrite.metricMap = options.prometheus.metricMap;
        if (!receiver->start(remoteWrite, &error)) {
            fmt::print(stderr, "fleetscope-backend: --source remote-write: {}\n", error);
            return 1;
        }
        if (!options.prometheus.url.empty()) {
            auto history = std::make_unique<PrometheusSource>();
            if (!history->startForHistory(options.prometheus, receiver->topology(), receiver->metricMap(), &error)) {
                fmt::print(stderr, "fleetscope-backend: --prometheus-url: {}\n", error);
                return 1;
            }
            receiver->useHistory(std::move(history), options.prometheus.url);
        }
        // One frame per window: the history's accounting (coarse frames, memory) counts in windows.
        auto source = options.source;
        source.interval = std::chrono::milliseconds(receiver->windowMs());
        served = std::make_unique<BackendServer>(judgedSource(std::move(receiver), source), options.security);
    } else {
        // A simulated fleet's topology is its generation's alone: encoded on a thread of its own beside the
        // simulator's start (its first state, the first frame judged), where a console starting with this backend
        // waits with a core to spare. At a million GPUs the encoding is 0.55-0.75 s that GetTopology waited for.
        const uint64_t generation = SimulatedFleet::generationOf(options.source);
        auto topology = std::async(std::launch::async, [source = options.source, generation] {
            return encodeTopology(SimulatedFleet::shapeOf(source), generation);
        });
        served = std::make_unique<BackendServer>(simulatedSource(options.source), options.security);
        served->setTopologyAhead(generation, std::move(topology));
    }
    BackendServer &server = *served;
    // The NOC's Alertmanager: its alerts placed on this fleet and served, silences made through it, and with
    // --alertmanager-send the backend's findings posted to it. Their requests under way are cancelled before the
    // server stops (a CreateSilence waiting on Alertmanager would hold its shutdown up); they go after it, the flag
    // after the sender that reads it.
    std::atomic<bool> stopping { false };
    std::unique_ptr<AlertPlacement> placement;
    std::unique_ptr<AlertmanagerWatch> alerts;
    std::unique_ptr<AlertSender> sender;
    if (const auto &am = options.alertmanager; !am.url.empty()) {
        AlertmanagerApi api;
        AlertmanagerApi::Options apiOptions;
        apiOptions.http = am.http;
        apiOptions.timeout = am.timeout;
        if (!api.setBaseUrl(am.url, apiOptions, &error)) {
            fmt::print(stderr, "fleetscope-backend: --alertmanager-url: {}\n", error);
            return 1;
        }
        placement = std::make_unique<AlertPlacement>(server.source().shape());
        AlertmanagerWatch::Options watch;
        watch.pollInterval = am.poll;
        watch.sending = am.send;
        alerts = std::make_unique<AlertmanagerWatch>(
            api, watch, [where = placement.get()](AlertmanagerAlert *alert) { where->place(alert); });
        server.setAlertDesk(alerts.get());
        if (am.send) {
            api.setCancel(&stopping); // the sender's copy: a post under way ends within a second at the stop
            sender = std::make_unique<AlertSender>(
                server.source(), [api](const std::vector<OutgoingAlert> &batch, std::string *why) {
                    return api.postAlerts(batch, why) == AlertDesk::Failure::None;
                });
        }
        fmt::print("alerts from {} every {} ms{}\n", api.baseUrl(), am.poll.count(),
            am.send ? "; incidents and anomalies sent to it" : "");
    }
    if (!server.start(options.listen, &error)) {
        fmt::print(stderr, "fleetscope-backend: {}\n", error);
        return 1;
    }
    const auto &security = options.security;
    if (security.tls()) {
        fmt::print("TLS with {}; clients need {}\n", security.tlsCertFile,
            security.authenticates()
                ? fmt::format("{}{}{}", security.tlsClientCaFile.empty() ? "" : "a certificate from the client CA",
                    !security.tlsClientCaFile.empty() && !security.access.tokenFile.empty() ? " and " : "",
                    security.access.tokenFile.empty() ? "" : "a token")
                : "nothing more (no token, no client CA)");
    }
    fmt::print("listening on {}\n", server.listeningAddress());
    std::fflush(stdout);

    std::unique_ptr<ExporterServer> exporter;
    if (!options.exporterListen.empty()) {
        ExporterPage::Options page;
        page.topologyLabels = options.exporterTopologyLabels;
        // The page names the GPUs as the simulated hardware's exporter would (GB200 for an NVL72 fleet).
        const auto &hardware = HardwareSpec::of(server.source().shape().hardware);
        page.modelName = hardware.model;
        page.driverVersion = hardware.driverVersion;
        auto exporterSecurity = options.exporterSecurity;
        if (!attachTokenFile(&exporterSecurity, &error)) {
            fmt::print(stderr, "fleetscope-backend: {}\n", error);
            server.stop();
            return 1;
        }
        exporter = std::make_unique<ExporterServer>(
            server.source(), page, ExporterServer::Limits(), std::move(exporterSecurity));
        if (!exporter->start(options.exporterListen, &error)) {
            fmt::print(stderr, "fleetscope-backend: --exporter-listen: {}\n", error);
            server.stop();
            return 1;
        }
        // Before the announcement, so that whoever waits for it finds the file complete.
        if (!options.exporterTargetsFile.empty() && !exporter->writeTargetsFile(options.exporterTargetsFile, &error)) {
            fmt::print(stderr, "fleetscope-backend: --exporter-targets-file: {}\n", error);
            exporter->stop();
            server.stop();
            return 1;
        }
        if (!options.exporterNodeTargetsFile.empty()
            && !exporter->writeNodeExporterTargetsFile(options.exporterNodeTargetsFile, &error)) {
            fmt::print(stderr, "fleetscope-backend: --exporter-node-targets-file: {}\n", error);
            exporter->stop();
            server.stop();
            return 1;
        }
        if (!options.exporterSlurmTargetsFile.empty()
            && !exporter->writeSlurmTargetsFile(options.exporterSlurmTargetsFile, &error)) {
            fmt::print(stderr, "fleetscope-backend: --exporter-slurm-targets-file: {}\n", error);
            exporter->stop();
            server.stop();
            return 1;
        }
        fmt::print("exporter listening on {}\n", exporter->listeningAddress());
        std::fflush(stdout);
    }

    int signal = 0;
    sigwait(&stopSignals, &signal);
    fmt::print(stderr, "fleetscope-backend: stopping on signal {}\n", signal);
    stopping = true;
    if (alerts) {
        alerts->cancel();
    }
    if (exporter) {
        exporter->stop();
    }
    server.stop();
    return 0;
}
