// SPDX-License-Identifier: Apache-2.0
// The exporter's HTTP side: a BoundedHttpServer (http/) answering GET and HEAD with answerScrape
// (exportertargets.cpp).
#include "sim/exporterserver.h"

#include <algorithm>

namespace fleetscope::backend {

ExporterServer::ExporterServer(const FrameSource &source, ExporterPage::Options options)
    : ExporterServer(source, std::move(options), Limits())
{ }

ExporterServer::ExporterServer(const FrameSource &source, ExporterPage::Options options, const Limits &limits)
    : ExporterServer(source, std::move(options), limits, Security())
{ }

ExporterServer::ExporterServer(
    const FrameSource &source, ExporterPage::Options options, const Limits &limits, Security security)
    : m_source(source)
    , m_options(std::move(options))
    , m_http(limits, std::move(security), { "GET", "HEAD" },
          [this](const HttpRequest &request, HttpResponse &response) { answerScrape(request.path, &response); })
{
    const auto &nodes = m_source.shape().nodes;
    m_nodesByHostname.resize(nodes.size());
    for (uint32_t k = 0; k < m_nodesByHostname.size(); ++k) {
        m_nodesByHostname[k] = k;
    }
    std::stable_sort(m_nodesByHostname.begin(), m_nodesByHostname.end(),
        [&](uint32_t a, uint32_t b) { return nodes[a].hostname < nodes[b].hostname; });
}

ExporterServer::~ExporterServer()
{
    stop();
}

bool ExporterServer::start(const std::string &address, std::string *error)
{
    if (!m_http.start(address, error)) {
        return false;
    }
    m_renderAheadThread = std::thread([this] { renderAhead(); });
    return true;
}

void ExporterServer::stop()
{
    {
        std::lock_guard lock(m_renderMutex);
        m_stopping = true;
    }
    if (m_renderAheadThread.joinable()) {
        m_renderAheadThread.join();
    }
    m_http.stop();
}

} // namespace fleetscope::backend
