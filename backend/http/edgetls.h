// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace fleetscope::backend {

// The names an HTTP door's TLS files go by in messages: --PREFIX-tls-cert FILE and so on.
struct TlsFileNames
{
    std::string optionPrefix;
    std::string certFile;
    std::string keyFile;
    std::string clientCaFile;
};

// A PEM file the door needs, read whole (certificates and keys are a few kilobytes; 1 MiB is far past any); what:
// "certificate", "key", "client CA" for the message.
bool readPem(const std::string &path, const char *what, std::string *out, std::string *error);

// The certificate, key and client CA (empty: none) checked with GnuTLS itself, so that a bad file is named at start
// instead of libmicrohttpd failing to start without a reason.
bool checkTls(const std::string &cert, const std::string &key, const std::string &ca, const TlsFileNames &names,
    std::string *error);

} // namespace fleetscope::backend
