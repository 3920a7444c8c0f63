// SPDX-License-Identifier: Apache-2.0
// What the exporter serves (its HTTP side is exporterserver.cpp): the page, rendered once per frame and shared by
// every scrape of it; what each path answers (/metrics the fleet's page, /metrics/<hostname> a node's, cut from it,
// /node-exporter/<hostname> a node's node_exporter page, /facility the facility's, /slurm the Slurm exporter's) and
// the hostname index a node's path is looked up in; and the Prometheus file_sd files that list the targets.
#include "formats/jsontext.h"
#include "sim/exporterserver.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// A path segment with its %XX escapes decoded (a scraper escapes what a path cannot hold); false when an escape is
// malformed, which a lenient decoding would let through as it is (the HTTP edge hands paths on undecoded). What it
// decodes to is only ever compared with hostnames, never used as a path.
bool percentDecode(std::string_view segment, std::string *out)
{
    out->clear();
    for (size_t i = 0; i < segment.size(); ++i) {
        unsigned char byte = static_cast<unsigned char>(segment[i]);
        if (byte == '%') {
            const char *digits = segment.data() + i + 1;
            if (i + 2 >= segment.size() || !std::isxdigit(static_cast<unsigned char>(digits[0]))
                || std::from_chars(digits, digits + 2, byte, 16).ptr != digits + 2) {
                return false;
            }
            i += 2;
        }
        out->push_back(static_cast<char>(byte));
    }
    return true;
}
} // namespace

int64_t ExporterServer::nodeOf(std::string_view hostname) const
{
    const auto &nodes = m_source.shape().nodes;
    const auto it = std::lower_bound(m_nodesByHostname.begin(), m_nodesByHostname.end(), hostname,
        [&](uint32_t k, std::string_view name) { return nodes[k].hostname < name; });
    return it != m_nodesByHostname.end() && nodes[*it].hostname == hostname ? static_cast<int64_t>(*it) : -1;
}

uint64_t ExporterServer::renderCount()
{
    std::lock_guard lock(m_renderMutex);
    return m_renders;
}

std::shared_ptr<const ExporterPage::Rendered> ExporterServer::page(uint64_t *sequence)
{
    auto pages = pageFor(true, sequence);
    return { pages, &pages->dcgm };
}

std::shared_ptr<const ExporterPage::Rendered> ExporterServer::nodeExporterPage(uint64_t *sequence)
{
    auto pages = pageFor(true, sequence);
    return { pages, &pages->nodeExporter };
}

std::shared_ptr<const std::string> ExporterServer::facilityPage(uint64_t *sequence)
{
    auto pages = pageFor(true, sequence);
    return { pages, &pages->facility };
}

std::shared_ptr<const std::string> ExporterServer::slurmPage(uint64_t *sequence)
{
    auto pages = pageFor(true, sequence);
    return { pages, &pages->slurm };
}

void ExporterServer::renderAhead()
{
    uint64_t seen = 0;
    for (;;) {
        {
            std::lock_guard lock(m_renderMutex);
            if (m_stopping) {
                return;
            }
        }
        const auto frame = m_source.waitForFrameAfter(seen, std::chrono::milliseconds(200));
        if (!frame) {
            continue;
        }
        seen = frame->sequence;
        bool wanted = false;
        {
            std::lock_guard lock(m_renderMutex);
            wanted = m_servedSinceRender && !m_stopping;
        }
        if (wanted) {
            pageFor(false, nullptr);
        }
    }
}

std::shared_ptr<const ExporterServer::Pages> ExporterServer::pageFor(bool served, uint64_t *sequence)
{
    std::unique_lock lock(m_renderMutex);
    m_servedSinceRender = m_servedSinceRender || served;
    // Only the first page is waited for. While one scrape renders a new frame the others are answered the page in
    // hand, one frame old: a large fleet takes a while to render (a third of a second at 102,400 GPUs), and a
    // thousand node targets scraped meanwhile would otherwise queue up behind it.
    m_rendered.wait(lock, [&] { return m_pages || !m_rendering; });
    auto frame = m_source.latest();
    if (m_rendering || (m_pages && m_pageSequence == frame->sequence)) {
        if (sequence) {
            *sequence = m_pageSequence;
        }
        return m_pages;
    }
    m_rendering = true;
    lock.unlock();
    // The frame and the jobs are published together; read the jobs between two looks at the latest frame so that
    // both belong to the same one.
    std::vector<JobInfo> jobs;
    for (;;) {
        jobs = m_source.jobs();
        auto again = m_source.latest();
        if (again->sequence == frame->sequence) {
            break;
        }
        frame = std::move(again);
    }
    auto rendered = std::make_shared<Pages>();
    rendered->dcgm = ExporterPage::render(m_source.shape(), *frame, jobs, m_options);
    rendered->nodeExporter = ExporterPage::renderNodeExporter(m_source.shape(), *frame);
    rendered->facility = ExporterPage::renderFacility(m_source.shape(), *frame);
    rendered->slurm = ExporterPage::renderSlurm(m_source.shape(), jobs);
    lock.lock();
    m_pages = std::move(rendered);
    m_pageSequence = frame->sequence;
    ++m_renders;
    m_rendering = false;
    m_servedSinceRender = served;
    m_rendered.notify_all();
    if (sequence) {
        *sequence = m_pageSequence;
    }
    return m_pages;
}

void ExporterServer::answerScrape(std::string_view path, HttpResponse *response)
{
    static const std::string pageType = "text/plain; version=0.0.4; charset=utf-8";
    static constexpr std::string_view nodePrefix = "/metrics/";
    static constexpr std::string_view nodeExporterPrefix = "/node-exporter/";
    const bool dcgmNode = path.substr(0, nodePrefix.size()) == nodePrefix;
    const bool nodeExporter = path.substr(0, nodeExporterPrefix.size()) == nodeExporterPrefix;
    std::string hostname;
    if (path == "/metrics") {
        // Sent from the shared page, not copied out of it: 3.5 GB at a million GPUs.
        auto rendered = page();
        response->contentType = pageType;
        response->shared = std::shared_ptr<const std::string>(rendered, &rendered->text);
    } else if (path == "/facility") {
        response->contentType = pageType;
        response->shared = facilityPage();
    } else if (path == "/slurm") {
        response->contentType = pageType;
        response->shared = slurmPage();
    } else if (!dcgmNode && !nodeExporter) {
        response->status = 404;
    } else if (!percentDecode(path.substr(dcgmNode ? nodePrefix.size() : nodeExporterPrefix.size()), &hostname)) {
        response->status = 400;
    } else if (const int64_t node = nodeOf(hostname); node < 0) {
        response->status = 404;
    } else {
        // A few dozen kilobytes cut from the shared page; the fleet is not rendered again.
        response->contentType = pageType;
        response->body = (dcgmNode ? page() : nodeExporterPage())->nodePage(static_cast<uint32_t>(node));
    }
}

std::string ExporterServer::fileSdTargets(const FleetShape &shape, const std::string &address)
{
    std::string json = "[\n";
    for (size_t k = 0; k < shape.nodes.size(); ++k) {
        const std::string &hostname = shape.nodes[k].hostname;
        json.append("  {\"targets\": [");
        appendJsonString(&json, address);
        json.append("], \"labels\": {\"__metrics_path__\": ");
        appendJsonString(&json, "/metrics/" + hostname);
        json.append(", \"instance\": ");
        appendJsonString(&json, hostname);
        json.append(k + 1 < shape.nodes.size() ? "}},\n" : "}}\n");
    }
    json.append("]\n");
    return json;
}

std::string ExporterServer::nodeExporterSdTargets(const FleetShape &shape, const std::string &address)
{
    std::string json = "[\n";
    auto group = [&](const std::string &path, const std::string &instance) {
        json.append("  {\"targets\": [");
        appendJsonString(&json, address);
        json.append("], \"labels\": {\"__metrics_path__\": ");
        appendJsonString(&json, path);
        json.append(", \"instance\": ");
        appendJsonString(&json, instance);
        json.append("}},\n");
    };
    for (const auto &node : shape.nodes) {
        group("/node-exporter/" + node.hostname, node.hostname);
    }
    group("/facility", "facility");
    json.resize(json.size() - 2); // the last group's ",\n"
    json.append("\n]\n");
    return json;
}

std::string ExporterServer::slurmSdTargets(const std::string &address)
{
    std::string json = "[\n  {\"targets\": [";
    appendJsonString(&json, address);
    json.append("], \"labels\": {\"__metrics_path__\": \"/slurm\", \"instance\": \"slurm-exporter\"}}\n]\n");
    return json;
}

std::string ExporterServer::scrapeAddress() const
{
    // A scraper cannot connect to a wildcard address: loopback stands for it.
    std::string address = listeningAddress();
    if (address.rfind("0.0.0.0:", 0) == 0) {
        address.replace(0, 7, "127.0.0.1");
    } else if (address.rfind("[::]:", 0) == 0) {
        address.replace(0, 4, "[::1]");
    }
    return address;
}

bool ExporterServer::writeTargetsFile(const std::string &path, std::string *error) const
{
    return writeFileWhole(path, fileSdTargets(m_source.shape(), scrapeAddress()), error);
}

bool ExporterServer::writeNodeExporterTargetsFile(const std::string &path, std::string *error) const
{
    return writeFileWhole(path, nodeExporterSdTargets(m_source.shape(), scrapeAddress()), error);
}

bool ExporterServer::writeSlurmTargetsFile(const std::string &path, std::string *error) const
{
    return writeFileWhole(path, slurmSdTargets(scrapeAddress()), error);
}

bool ExporterServer::writeFileWhole(const std::string &path, const std::string &json, std::string *error) const
{
    // Written beside the file and renamed over it: a rename within a directory replaces the file at once.
    const std::string partial = path + ".partial";
    FILE *file = std::fopen(partial.c_str(), "wb");
    if (file == nullptr) {
        *error = fmt::format("cannot write '{}': {}", partial, std::strerror(errno));
        return false;
    }
    const bool written = std::fwrite(json.data(), 1, json.size(), file) == json.size();
    const int writeErrno = errno;
    if (std::fclose(file) != 0 || !written) {
        *error = fmt::format("cannot write '{}': {}", partial, std::strerror(written ? errno : writeErrno));
        std::remove(partial.c_str());
        return false;
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        *error = fmt::format("cannot rename '{}' to '{}': {}", partial, path, std::strerror(errno));
        std::remove(partial.c_str());
        return false;
    }
    return true;
}

} // namespace fleetscope::backend
