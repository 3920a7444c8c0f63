// SPDX-License-Identifier: Apache-2.0
#include "prometheus/prometheushttp.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <arpa/inet.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

// libcurl's global state, once per process before the first handle.
void initCurl()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// OpenSSL's queued errors for this thread, joined, and the queue emptied.
std::string openSslErrors()
{
    std::string out;
    while (const unsigned long e = ERR_get_error()) {
        char line[256];
        ERR_error_string_n(e, line, sizeof line);
        if (!out.empty()) {
            out += "; ";
        }
        out += line;
    }
    return out.empty() ? std::string("no detail") : out;
}

bool isIpAddress(const std::string &host)
{
    unsigned char buffer[16];
    return inet_pton(AF_INET, host.c_str(), buffer) == 1 || inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// The options on their own and against the URL's scheme.
bool checkOptions(const PrometheusHttp::Options &options, bool tls, const std::string &url, std::string *error)
{
    if (options.user.empty() != options.passwordFile.empty()) {
        *error = "basic authentication needs both a user and a password file";
        return false;
    }
    if (options.user.find(':') != std::string::npos) {
        *error = fmt::format("user '{}': a basic-authentication user cannot contain ':'", options.user);
        return false;
    }
    if (!options.user.empty() && !options.bearerTokenFile.empty()) {
        *error = "basic authentication and a bearer token exclude each other";
        return false;
    }
    if (!tls && (!options.caFile.empty() || options.insecureSkipVerify)) {
        *error = fmt::format("'{}': a CA bundle or skipping verification applies to https:// only", url);
        return false;
    }
    return true;
}

} // namespace

bool PrometheusHttp::checkCaFile(const Options &options, std::string *error)
{
    // libcurl reads the bundle on every request and says little when it is not one: checked here, once, by the same
    // OpenSSL that will verify with it.
    if (options.caFile.empty()) {
        return true;
    }
    const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
    ERR_clear_error();
    if (!ctx || SSL_CTX_load_verify_locations(ctx.get(), options.caFile.c_str(), nullptr) != 1) {
        *error = fmt::format("{}: not a readable PEM bundle of CA certificates ({})", options.caFile, openSslErrors());
        return false;
    }
    return true;
}

namespace {

struct UrlFree
{
    void operator()(CURLU *u) const { curl_url_cleanup(u); }
    void operator()(char *part) const { curl_free(part); }
};
using Url = std::unique_ptr<CURLU, UrlFree>;

// A part of a parsed URL; nullopt when it has none.
std::optional<std::string> urlPart(CURLU *url, CURLUPart what, unsigned flags = 0)
{
    char *part = nullptr;
    if (curl_url_get(url, what, &part, flags) != CURLUE_OK || part == nullptr) {
        return std::nullopt;
    }
    const std::unique_ptr<char, UrlFree> owned(part);
    return std::string(part);
}

} // namespace

bool PrometheusHttp::setBaseUrl(const std::string &url, const Options &options, std::string *error)
{
    // libcurl's parser, the one that will make the requests: what it takes apart here is what it connects to.
    const Url parsed(curl_url());
    if (!parsed) {
        *error = "cannot set up libcurl";
        return false;
    }
    const CURLUcode parsedAs = curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), CURLU_DISALLOW_USER);
    const auto scheme = urlPart(parsed.get(), CURLUPART_SCHEME);
    const bool tls = scheme == "https";
    if ((parsedAs == CURLUE_OK && !tls && scheme != "http")
        || (parsedAs != CURLUE_OK && url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)) {
        *error = fmt::format("'{}' is not an http:// or https:// URL", url);
        return false;
    }
    const std::string need = tls || url.rfind("https://", 0) == 0 ? "https://" : "http://";
    if (parsedAs == CURLUE_USER_NOT_ALLOWED) {
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH] (credentials never go in the URL: give a user and a "
                             "password file)",
            url, need);
        return false;
    }
    const auto port = urlPart(parsed.get(), CURLUPART_PORT);
    if (parsedAs == CURLUE_BAD_PORT_NUMBER || port == "0") {
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH] with a port from 1 to 65535", url, need);
        return false;
    }
    if (parsedAs != CURLUE_OK) {
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH] ({})", url, need, curl_url_strerror(parsedAs));
        return false;
    }
    // The API's paths and queries are appended to the prefix: one of the URL's own would end up in the middle.
    if (urlPart(parsed.get(), CURLUPART_QUERY) || urlPart(parsed.get(), CURLUPART_FRAGMENT)) {
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH], without a query or fragment", url, need);
        return false;
    }
    std::string host = urlPart(parsed.get(), CURLUPART_HOST).value_or(std::string());
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') { // IPv6 literal
        host = host.substr(1, host.size() - 2);
    }
    std::string prefix = urlPart(parsed.get(), CURLUPART_PATH).value_or(std::string());
    while (!prefix.empty() && prefix.back() == '/') {
        prefix.pop_back();
    }
    // scheme://host[:port]/, as libcurl writes it back, without the path.
    std::string origin;
    if (curl_url_set(parsed.get(), CURLUPART_PATH, nullptr, 0) == CURLUE_OK) {
        origin = urlPart(parsed.get(), CURLUPART_URL).value_or(std::string());
    }
    while (!origin.empty() && origin.back() == '/') {
        origin.pop_back();
    }
    if (host.empty() || origin.empty()) {
        *error = fmt::format("'{}': need {}HOST[:PORT][/PATH]", url, need);
        return false;
    }

    if (!checkOptions(options, tls, url, error) || (tls && !checkCaFile(options, error))) {
        return false;
    }
    initCurl();
    std::string secret;
    if (!options.passwordFile.empty() && !readSecret(options.passwordFile, "password file", &secret, error)) {
        return false;
    }
    if (!options.bearerTokenFile.empty() && !readSecret(options.bearerTokenFile, "bearer token file", &secret, error)) {
        return false;
    }
    m_baseUrl = url;
    m_origin = origin;
    m_host = host;
    m_prefix = prefix;
    m_options = options;
    m_tls = tls;
    return true;
}

std::string PrometheusHttp::encode(const std::string &value)
{
    // Everything but RFC 3986's unreserved characters, as %XX.
    const std::unique_ptr<char, UrlFree> escaped(
        curl_easy_escape(nullptr, value.data(), static_cast<int>(std::min<size_t>(value.size(), INT_MAX))));
    return escaped ? std::string(escaped.get()) : std::string();
}

bool PrometheusHttp::readSecret(const std::string &path, const char *what, std::string *out, std::string *error)
{
    struct Close
    {
        void operator()(FILE *f) const { std::fclose(f); }
    };
    const std::unique_ptr<FILE, Close> file(std::fopen(path.c_str(), "rbe"));
    std::string secret;
    if (file) {
        char chunk[4096];
        while (const size_t n = std::fread(chunk, 1, sizeof chunk, file.get())) {
            secret.append(chunk, n);
            if (secret.size() > 65536) {
                *error = fmt::format("{} '{}' is larger than 64 KiB; not a secret", what, path);
                return false;
            }
        }
    }
    if (!file || std::ferror(file.get())) {
        *error = fmt::format("{} '{}': cannot read it: {}", what, path, std::strerror(errno));
        return false;
    }
    const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!secret.empty() && space(secret.back())) {
        secret.pop_back();
    }
    secret.erase(secret.begin(), std::find_if_not(secret.begin(), secret.end(), space));
    if (secret.empty()) {
        *error = fmt::format("{} '{}' is empty", what, path);
        return false;
    }
    // The secret goes into a header line: a line break inside would end the header (and start another).
    if (secret.find_first_of("\r\n") != std::string::npos || secret.find('\0') != std::string::npos) {
        *error = fmt::format("{} '{}' holds more than one line", what, path);
        return false;
    }
    *out = std::move(secret);
    return true;
}

bool PrometheusHttp::readCredential(std::string *secret, std::string *error) const
{
    secret->clear();
    if (!m_options.bearerTokenFile.empty()) {
        return readSecret(m_options.bearerTokenFile, "bearer token file", secret, error);
    }
    if (!m_options.user.empty()) {
        return readSecret(m_options.passwordFile, "password file", secret, error);
    }
    return true;
}

namespace {

// What the transfer's callbacks share: the body, and why it was cut short.
struct Transfer
{
    CURL *curl = nullptr;
    std::string *body = nullptr;
    size_t maxBytes = 0;
    bool tooLarge = false;
    bool reserved = false;
    bool tcpConnected = false; // libcurl's log said "Connected to"
    const std::atomic<bool> *cancel = nullptr;
};

// Called by libcurl at least once a second while a transfer runs: non-zero ends it.
int onProgress(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    const auto *t = static_cast<const Transfer *>(user);
    return t->cancel != nullptr && t->cancel->load() ? 1 : 0;
}

// libcurl's log, read for one line only: whether the TCP connection was made, for an error that says where the time
// went.
int onLog(CURL *, curl_infotype type, char *data, size_t size, void *user)
{
    if (type == CURLINFO_TEXT && std::string_view(data, size).rfind("Connected to ", 0) == 0) {
        static_cast<Transfer *>(user)->tcpConnected = true;
    }
    return 0;
}

size_t onBody(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    if (!t->reserved) {
        // One allocation for the whole answer (tens of MB at 100k GPUs), not a doubling per read.
        curl_off_t length = -1;
        if (curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0
            && static_cast<size_t>(length) <= t->maxBytes) {
            t->body->reserve(static_cast<size_t>(length));
        }
        t->reserved = true;
    }
    if (t->body->size() + n > t->maxBytes) {
        t->tooLarge = true;
        return 0; // ends the transfer with CURLE_WRITE_ERROR
    }
    t->body->append(data, n);
    return n;
}

struct CurlFree
{
    void operator()(CURL *c) const { curl_easy_cleanup(c); }
    void operator()(curl_slist *l) const { curl_slist_free_all(l); }
};

} // namespace

bool PrometheusHttp::get(
    const std::string &target, std::chrono::milliseconds timeout, Response *out, std::string *error) const
{
    Request r;
    r.target = target;
    return request(r, timeout, out, error);
}

bool PrometheusHttp::request(
    const Request &request, std::chrono::milliseconds timeout, Response *out, std::string *error) const
{
    const std::string &target = request.target;
    const char *method = request.method == Method::Post ? "POST " : request.method == Method::Delete ? "DELETE " : "";
    const std::string where = fmt::format("{}{}{}", method, m_baseUrl, target.substr(0, target.find('?')));
    const size_t maxBytes = request.maxBodyBytes != 0 ? request.maxBodyBytes : maxBodyBytes;
    std::string secret;
    if (!readCredential(&secret, error)) {
        *error = fmt::format("{}: {}", where, *error);
        return false;
    }
    const std::unique_ptr<CURL, CurlFree> curl(curl_easy_init());
    if (!curl) {
        *error = fmt::format("{}: cannot set up libcurl", where);
        return false;
    }
    std::unique_ptr<curl_slist, CurlFree> headers(curl_slist_append(nullptr, "Accept: application/json"));
    if (request.method == Method::Post && headers) {
        // No "Expect: 100-continue" round trip before a larger body: the server reads it or answers an error.
        curl_slist *more = curl_slist_append(headers.get(), "Expect:");
        const std::string type = "Content-Type: " + request.contentType;
        more = more ? curl_slist_append(more, type.c_str()) : nullptr;
        if (!more) {
            headers.reset();
        }
    }
    if (!headers) {
        *error = fmt::format("{}: cannot set up libcurl", where);
        return false;
    }
    const std::string url = m_origin + m_prefix + target;
    char detail[CURL_ERROR_SIZE] = {};
    Transfer transfer { curl.get(), &out->body, maxBytes };
    transfer.cancel = request.cancel;
    out->body.clear();
    CURL *c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    if (request.method == Method::Post) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    } else if (request.method == Method::Delete) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    if (request.cancel != nullptr) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onProgress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &transfer);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    // Sent with the first request (one method each, nothing to negotiate); no redirect is followed, so to this
    // server only.
    if (!m_options.bearerTokenFile.empty()) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, secret.c_str());
    } else if (!m_options.user.empty()) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERNAME, m_options.user.c_str());
        curl_easy_setopt(c, CURLOPT_PASSWORD, secret.c_str());
    }
    curl_easy_setopt(c, CURLOPT_USERAGENT, "fleetscope-backend");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); // a worker thread: no SIGALRM for name resolution's time-out
    // One deadline for all of it: name resolution, connect, TLS handshake, request, the whole answer.
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, m_tls ? "https" : "http");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(maxBytes));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, onLog);
    curl_easy_setopt(c, CURLOPT_DEBUGDATA, &transfer);
    curl_easy_setopt(c, CURLOPT_VERBOSE, 1L); // to onLog only
    // No Accept-Encoding: Prometheus would gzip its answers, and its JSON encoding is already what a poll waits for.
    if (m_tls) {
        curl_easy_setopt(c, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, m_options.insecureSkipVerify ? 0L : 1L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, m_options.insecureSkipVerify ? 0L : 2L);
        if (!m_options.caFile.empty()) {
            curl_easy_setopt(c, CURLOPT_CAINFO, m_options.caFile.c_str());
        }
    }
    const CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        *error = fmt::format("{}: {}", where, describe(c, rc, detail, &transfer));
        return false;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    out->status = static_cast<int>(status);
    if (out->status == 401) {
        *error = fmt::format("{}: HTTP 401 Unauthorized: the server refused {}", where,
            !m_options.bearerTokenFile.empty() ? std::string("the bearer token")
                : !m_options.user.empty()
                ? fmt::format("user '{}' with the password given", m_options.user)
                : std::string("a request without credentials (it needs a user and password, or a bearer token)"));
        return false;
    }
    return true;
}

std::string PrometheusHttp::describe(void *handle, int code, const char *detail, const void *state) const
{
    const auto &transfer = *static_cast<const Transfer *>(state);
    const bool tooLarge = transfer.tooLarge;
    CURL *c = handle;
    const auto rc = static_cast<CURLcode>(code);
    const std::string text = detail[0] != '\0' ? std::string(detail) : std::string(curl_easy_strerror(rc));
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: {
        // How far it got says where the time went.
        curl_off_t connected = 0;
        curl_off_t handshaken = 0;
        curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected);
        curl_easy_getinfo(c, CURLINFO_APPCONNECT_TIME_T, &handshaken);
        // libcurl counts the TLS handshake into its connect time: whether the socket connected, its log says.
        if (connected == 0 && !transfer.tcpConnected) {
            return "cannot connect: connect timed out";
        }
        if (m_tls && handshaken == 0) {
            return "timed out in the TLS handshake";
        }
        return "timed out waiting for the answer";
    }
    case CURLE_COULDNT_RESOLVE_HOST:
        return fmt::format("cannot resolve '{}': {}", m_host, text);
    case CURLE_COULDNT_CONNECT:
        return fmt::format("cannot connect: {}", text);
    case CURLE_PEER_FAILED_VERIFICATION: {
        long verify = 0;
        curl_easy_getinfo(c, CURLINFO_SSL_VERIFYRESULT, &verify);
        // libcurl checks the name itself and says so in words ("no alternative certificate subject name matches
        // target host name"); a broken chain is OpenSSL's verification result.
        if (text.find("target host name") != std::string::npos) {
            return fmt::format("the server's certificate is not trusted: {} mismatch ({})",
                isIpAddress(m_host) ? "IP address" : "hostname", text);
        }
        return fmt::format("the server's certificate is not trusted: {}",
            verify != X509_V_OK ? std::string(X509_verify_cert_error_string(verify)) : text);
    }
    case CURLE_SSL_CONNECT_ERROR:
        return fmt::format("TLS handshake failed ({}); does the server speak https?", text);
    case CURLE_WRITE_ERROR:
    case CURLE_FILESIZE_EXCEEDED:
        if (tooLarge || rc == CURLE_FILESIZE_EXCEEDED) {
            return transfer.maxBytes >= (size_t { 1 } << 20U)
                ? fmt::format("answer larger than {} MiB; refused", transfer.maxBytes >> 20U)
                : fmt::format("answer larger than {} bytes; refused", transfer.maxBytes);
        }
        return text;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
        return fmt::format("connection closed before the whole answer came ({})", text);
    case CURLE_ABORTED_BY_CALLBACK:
        return "cancelled: the backend is stopping";
    case CURLE_WEIRD_SERVER_REPLY:
        return fmt::format("not an HTTP answer ({})", text);
    default:
        return text;
    }
}

} // namespace fleetscope::backend
