// SPDX-License-Identifier: Apache-2.0
#include "optionchecks.h"

#include "core/listenaddress.h"
#include "prometheus/prometheushttp.h"

#include <fstream>
#include <sstream>

namespace fleetscope::backend::cli {

CLI::Validator checkWith(std::function<std::string(const std::string &)> why)
{
    return { [why = std::move(why)](std::string &value) { return why(value); }, std::string() };
}

CLI::Validator listenAddress()
{
    return checkWith([](const std::string &address) {
        std::string host;
        int port = 0;
        std::string why;
        splitListenAddress(address, &host, &port, &why);
        return why;
    });
}

CLI::Validator secretFile(const char *what)
{
    return checkWith([what](const std::string &path) {
        std::string secret;
        std::string why;
        PrometheusHttp::readSecret(path, what, &secret, &why);
        return why;
    });
}

CLI::Validator pemFile()
{
    return checkWith([](const std::string &path) {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in) {
            return fmt::format("cannot read '{}'", path);
        }
        if (text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
            return fmt::format("'{}' holds no PEM certificate", path);
        }
        return std::string();
    });
}

CLI::Validator readableFile(const char *what)
{
    return checkWith([what](const std::string &path) {
        std::ifstream in(path, std::ios::binary);
        return in ? std::string() : fmt::format("cannot read the {} '{}'", what, path);
    });
}

void addDoorOptions(CLI::App &app, const std::string &prefix, const char *door, BoundedHttpServer::Security *security)
{
    security->optionPrefix = prefix;
    auto *cert = app.add_option(prefix + "-tls-cert", security->tlsCertFile,
                        fmt::format("serve {} over TLS (1.2 or later) with this PEM certificate chain", door))
                     ->type_name("FILE")
                     ->check(pemFile());
    auto *key = app.add_option(
                       prefix + "-tls-key", security->tlsKeyFile, "the certificate's private key (PEM, no passphrase)")
                    ->type_name("FILE")
                    ->check(readableFile("key file"));
    cert->needs(key);
    key->needs(cert);
    app.add_option(prefix + "-client-ca", security->clientCaFile,
           "mutual TLS: only clients with a certificate signed by a CA in this PEM bundle (403 for others)")
        ->type_name("FILE")
        ->needs(cert)
        ->check(pemFile());
    app.add_option(prefix + "-token-file", security->tokenFile,
           "every request must carry 'Authorization: Bearer TOKEN' with a token of FILE (one a line; 401 for others), "
           "as vmagent's -remoteWrite.bearerTokenFile and Prometheus' authorization.credentials_file send it; read "
           "again when it changes")
        ->type_name("FILE")
        ->needs(cert);
}

} // namespace fleetscope::backend::cli
