// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "alerting/alertmanagerjson.h"
#include "core/alerts.h"
#include "prometheus/prometheushttp.h"

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace fleetscope::backend {

// Prometheus Alertmanager's HTTP API v2, the calls the backend makes, over PrometheusHttp (so with the same
// credentials from files, TLS and CA options as towards Prometheus). Each call has one deadline and a cap on its
// answer; an HTTP error becomes a Failure and a message in an operator's words, with Alertmanager's own reason (its
// 400 and 422 bodies) passed on, cut. The GETs hand back the answer's body for AlertmanagerJson to read. Every call is
// const and keeps no state: any number of threads may share one.
class AlertmanagerApi
{
public:
    using Failure = AlertDesk::Failure;

    struct Options
    {
        PrometheusHttp::Options http; // authentication and TLS towards Alertmanager
        std::chrono::milliseconds timeout { 10000 }; // for each call, all of it
        size_t maxAnswerBytes = AlertmanagerLimits().maxAnswerBytes; // a GET's answer
    };

    // "http[s]://host[:port][/prefix]" (Alertmanager's --web.route-prefix, if any, in the prefix); false with an
    // error as PrometheusHttp::setBaseUrl.
    bool setBaseUrl(const std::string &url, const Options &options, std::string *error);
    const std::string &baseUrl() const { return m_http.baseUrl(); }
    const Options &options() const { return m_options; }

    // When set and it becomes true, a call under way ends within about a second (Unavailable).
    void setCancel(const std::atomic<bool> *cancel) { m_cancel = cancel; }

    // GET /api/v2/alerts with active, silenced and inhibited alerts (not those not yet processed).
    Failure getAlerts(std::string *body, std::string *error) const;
    // GET /api/v2/silences: all Alertmanager holds, expired ones included.
    Failure getSilences(std::string *body, std::string *error) const;
    // POST /api/v2/silences; the new silence's id in *id. InvalidArgument with Alertmanager's reason when it refuses
    // the silence.
    Failure postSilence(const NewSilence &silence, std::string *id, std::string *error) const;
    // DELETE /api/v2/silence/{id}. NotFound for an id Alertmanager does not hold (0.25 answers 500 "silence not found"
    // and 422 for an id that is not a UUID; later versions 404).
    Failure deleteSilence(const std::string &id, std::string *error) const;
    // POST /api/v2/alerts with the alerts as a JSON array.
    Failure postAlerts(const std::vector<OutgoingAlert> &alerts, std::string *error) const;

private:
    // One request; its answer's status mapped to a Failure (None for 2xx). deleting: a missing silence is NotFound.
    Failure call(PrometheusHttp::Request request, size_t maxAnswerBytes, bool deleting,
        PrometheusHttp::Response *response, std::string *error) const;

    PrometheusHttp m_http;
    Options m_options;
    const std::atomic<bool> *m_cancel = nullptr;
};

} // namespace fleetscope::backend
