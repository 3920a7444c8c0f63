// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertmanagerapi.h"

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

// What Alertmanager answers a write with: an id, or nothing. Anything longer is not Alertmanager.
constexpr size_t maxWriteAnswerBytes = size_t { 64 } << 10U;

const char *methodName(PrometheusHttp::Method method)
{
    switch (method) {
    case PrometheusHttp::Method::Post:
        return "POST";
    case PrometheusHttp::Method::Delete:
        return "DELETE";
    case PrometheusHttp::Method::Get:
        break;
    }
    return "GET";
}

} // namespace

bool AlertmanagerApi::setBaseUrl(const std::string &url, const Options &options, std::string *error)
{
    if (options.timeout.count() <= 0 || options.maxAnswerBytes == 0) {
        *error = "Alertmanager: a call's deadline and answer bound must be positive";
        return false;
    }
    if (!m_http.setBaseUrl(url, options.http, error)) {
        return false;
    }
    m_http.maxBodyBytes = options.maxAnswerBytes;
    m_options = options;
    return true;
}

AlertmanagerApi::Failure AlertmanagerApi::call(PrometheusHttp::Request request, size_t maxAnswerBytes, bool deleting,
    PrometheusHttp::Response *response, std::string *error) const
{
    if (m_http.baseUrl().empty()) {
        *error = "Alertmanager: no URL set";
        return Failure::Unavailable;
    }
    request.maxBodyBytes = maxAnswerBytes;
    request.cancel = m_cancel;
    if (!m_http.request(request, m_options.timeout, response, error)) {
        return Failure::Unavailable; // the error names the method and URL already
    }
    const int status = response->status;
    if (status >= 200 && status < 300) {
        return Failure::None;
    }
    const std::string where = fmt::format(
        "{} {}{}", methodName(request.method), m_http.baseUrl(), request.target.substr(0, request.target.find('?')));
    const std::string reason = AlertmanagerJson::errorReason(response->body);
    const std::string said = reason.empty() ? std::string() : fmt::format(": {}", reason);
    // Alertmanager 0.25 answers an unknown silence's DELETE with 500 "silence not found", an id that is no UUID with
    // 422; later versions with 404.
    if (deleting
        && (status == 404 || status == 422 || (status == 500 && reason.find("not found") != std::string::npos))) {
        *error = fmt::format("{}: Alertmanager holds no such silence (HTTP {}{})", where, status, said);
        return Failure::NotFound;
    }
    if (status == 400 || status == 422) {
        *error = fmt::format("{}: Alertmanager refused it (HTTP {}){}", where, status, said);
        return Failure::InvalidArgument;
    }
    if (status == 404) {
        *error = fmt::format("{}: HTTP 404 Not Found: no Alertmanager API v2 at this URL (its --web.route-prefix "
                             "belongs in the URL's path)",
            where);
    } else if (status == 403) {
        *error = fmt::format(
            "{}: HTTP 403 Forbidden: the server refused this call with the credentials given{}", where, said);
    } else {
        *error = fmt::format("{}: HTTP {}{}", where, status, said);
    }
    return Failure::Unavailable;
}

AlertmanagerApi::Failure AlertmanagerApi::getAlerts(std::string *body, std::string *error) const
{
    PrometheusHttp::Request request;
    request.target = "/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=false";
    PrometheusHttp::Response response;
    const Failure failure = call(std::move(request), m_options.maxAnswerBytes, false, &response, error);
    *body = std::move(response.body);
    return failure;
}

AlertmanagerApi::Failure AlertmanagerApi::getSilences(std::string *body, std::string *error) const
{
    PrometheusHttp::Request request;
    request.target = "/api/v2/silences";
    PrometheusHttp::Response response;
    const Failure failure = call(std::move(request), m_options.maxAnswerBytes, false, &response, error);
    *body = std::move(response.body);
    return failure;
}

AlertmanagerApi::Failure AlertmanagerApi::postSilence(
    const NewSilence &silence, std::string *id, std::string *error) const
{
    PrometheusHttp::Request request;
    request.method = PrometheusHttp::Method::Post;
    request.target = "/api/v2/silences";
    request.body = AlertmanagerJson::encodeSilence(silence);
    PrometheusHttp::Response response;
    const Failure failure = call(std::move(request), maxWriteAnswerBytes, false, &response, error);
    if (failure != Failure::None) {
        return failure;
    }
    std::string why;
    if (!AlertmanagerJson::decodeSilenceId(response.body, id, &why)) {
        // Made or not, the caller cannot tell: the next poll shows it if it was.
        *error = fmt::format("POST {}/api/v2/silences: {}", m_http.baseUrl(), why);
        return Failure::Unavailable;
    }
    return Failure::None;
}

AlertmanagerApi::Failure AlertmanagerApi::deleteSilence(const std::string &id, std::string *error) const
{
    PrometheusHttp::Request request;
    request.method = PrometheusHttp::Method::Delete;
    request.target = "/api/v2/silence/" + PrometheusHttp::encode(id);
    PrometheusHttp::Response response;
    return call(std::move(request), maxWriteAnswerBytes, true, &response, error);
}

AlertmanagerApi::Failure AlertmanagerApi::postAlerts(const std::vector<OutgoingAlert> &alerts, std::string *error) const
{
    PrometheusHttp::Request request;
    request.method = PrometheusHttp::Method::Post;
    request.target = "/api/v2/alerts";
    request.body = AlertmanagerJson::encodeAlerts(alerts);
    PrometheusHttp::Response response;
    return call(std::move(request), maxWriteAnswerBytes, false, &response, error);
}

} // namespace fleetscope::backend
