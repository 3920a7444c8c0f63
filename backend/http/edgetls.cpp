// SPDX-License-Identifier: Apache-2.0
#include "http/edgetls.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gnutls/gnutls.h>

namespace fleetscope::backend {

bool readPem(const std::string &path, const char *what, std::string *out, std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = fmt::format("cannot read the {} '{}': {}", what, path, std::strerror(errno));
        return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    *out = text.str();
    if (out->size() > (1u << 20) || out->find("-----BEGIN ") == std::string::npos) {
        *error = fmt::format("the {} '{}' is not a PEM file", what, path);
        return false;
    }
    return true;
}

namespace {
gnutls_datum_t datum(const std::string &text)
{
    return { reinterpret_cast<unsigned char *>(const_cast<char *>(text.data())), static_cast<unsigned>(text.size()) };
}
} // namespace

bool checkTls(const std::string &cert, const std::string &key, const std::string &ca, const TlsFileNames &security,
    std::string *error)
{
    gnutls_certificate_credentials_t credentials = nullptr;
    if (gnutls_certificate_allocate_credentials(&credentials) != GNUTLS_E_SUCCESS) {
        *error = "cannot set up TLS (GnuTLS)";
        return false;
    }
    const gnutls_datum_t c = datum(cert);
    const gnutls_datum_t k = datum(key);
    int rc = gnutls_certificate_set_x509_key_mem(credentials, &c, &k, GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        *error = fmt::format("{}-tls-cert {} and {}-tls-key {}: {}", security.optionPrefix, security.certFile,
            security.optionPrefix, security.keyFile, gnutls_strerror(rc));
    } else if (!ca.empty()) {
        const gnutls_datum_t a = datum(ca);
        rc = gnutls_certificate_set_x509_trust_mem(credentials, &a, GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            *error = fmt::format("{}-client-ca {}: {}", security.optionPrefix, security.clientCaFile,
                rc == 0 ? "holds no certificate" : gnutls_strerror(rc));
            rc = -1;
        }
    }
    gnutls_certificate_free_credentials(credentials);
    return rc >= 0;
}

} // namespace fleetscope::backend
