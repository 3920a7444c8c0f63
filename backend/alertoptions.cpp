// SPDX-License-Identifier: Apache-2.0
#include "alertoptions.h"

#include "optionchecks.h"

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace cli;

void addAlertmanagerOptions(CLI::App &app, BackendOptions &o)
{
    const AlertmanagerOptions defaults;
    auto &am = o.alertmanager;
    app.option_defaults()->group("Alertmanager (the NOC's alerts and silences, docs/ALERTS.md)");
    app.add_option("--alertmanager-url", am.url,
           "read the alerts and silences of this Prometheus Alertmanager, http[s]://HOST[:PORT][/PREFIX] (API v2), "
           "place them on the fleet and serve them to consoles; operators silence through it")
        ->type_name("URL");
    auto *user = app.add_option("--alertmanager-user", am.http.user, "basic authentication as USER")
                     ->type_name("USER")
                     ->check(checkWith([](const std::string &name) {
                         return name.empty() || name.find(':') != std::string::npos
                             ? "a user name is not empty and has no ':'"
                             : "";
                     }));
    auto *passwordFile = app.add_option("--alertmanager-password-file", am.http.passwordFile,
                                "the password for basic authentication, read from FILE")
                             ->type_name("FILE")
                             ->check(secretFile("password file"));
    user->needs(passwordFile);
    passwordFile->needs(user);
    app.add_option("--alertmanager-bearer-token-file", am.http.bearerTokenFile,
           "send 'Authorization: Bearer TOKEN' with the token read from FILE")
        ->type_name("FILE")
        ->excludes(user)
        ->check(secretFile("bearer token file"));
    auto *ca = app.add_option("--alertmanager-ca", am.http.caFile,
                      "PEM bundle of the CAs that may sign an https Alertmanager's certificate (default: the "
                      "system's CAs)")
                   ->type_name("FILE")
                   ->check(pemFile());
    app.add_flag("--alertmanager-insecure-skip-verify", am.http.insecureSkipVerify,
           "accept any certificate for any host (tests only: a man in the middle gets the credentials)")
        ->excludes(ca);
    addNumber<int64_t>(
        app, "--alertmanager-poll-ms", 500, 300000, [&am](int64_t ms) { am.poll = std::chrono::milliseconds(ms); },
        fmt::format("how often its alerts and silences are read, 500 to 300000 (default {})", defaults.poll.count()),
        "MS");
    addNumber<int64_t>(
        app, "--alertmanager-timeout-ms", 100, 60000, [&am](int64_t ms) { am.timeout = std::chrono::milliseconds(ms); },
        fmt::format("time allowed for one request to it, 100 to 60000 (default {})", defaults.timeout.count()), "MS");
    app.add_flag("--alertmanager-send", am.send,
        "post the backend's own incidents and anomalies to it as alerts (alertname FleetscopeIncident, "
        "FleetscopeAnomaly), resolved when they end, so that they reach the NOC's routes");
}

std::string checkAlertmanagerOptions(const BackendOptions &o)
{
    const auto &am = o.alertmanager;
    if (am.url.empty()
        && (am.send || !am.http.user.empty() || !am.http.passwordFile.empty() || !am.http.bearerTokenFile.empty()
            || !am.http.caFile.empty() || am.http.insecureSkipVerify)) {
        return "--alertmanager-* options need --alertmanager-url";
    }
    const bool https = am.url.rfind("https://", 0) == 0;
    if (!https && (!am.http.caFile.empty() || am.http.insecureSkipVerify)) {
        return "--alertmanager-ca and --alertmanager-insecure-skip-verify need an https:// --alertmanager-url";
    }
    return {};
}

void warnAboutAlertmanager(const BackendOptions &o, std::vector<std::string> *warnings)
{
    const auto &am = o.alertmanager;
    const bool credentials = !am.http.user.empty() || !am.http.bearerTokenFile.empty();
    if (am.http.insecureSkipVerify) {
        warnings->emplace_back("WARNING: --alertmanager-insecure-skip-verify: Alertmanager's certificate is NOT "
                               "checked; anyone on the path can pose as it, show made-up alerts, take the silences"
            + std::string(credentials ? " and the credentials" : "") + ". Use --alertmanager-ca instead.");
    }
    if (credentials && am.url.rfind("https://", 0) != 0) {
        warnings->emplace_back("WARNING: the Alertmanager credentials go over plain http:// in clear text; use an "
                               "https:// URL");
    }
}

} // namespace fleetscope::backend
