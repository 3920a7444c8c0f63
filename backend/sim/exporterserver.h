// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"
#include "http/boundedhttpserver.h"
#include "sim/exporterpage.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fleetscope::backend {

// Serves the simulated fleet as dcgm-exporter pages over HTTP/1.1 (HTTPS with a certificate), so that a real Prometheus
// (or anything that scrapes dcgm-exporter) can scrape the simulator. GET and HEAD of /metrics answer the whole fleet's
// page of the latest frame (for small demos: one target); /metrics/<hostname> the page of that node alone, as its own
// dcgm-exporter would serve it, so that a scraper sees one target per node as in a real fleet (fileSdTargets lists
// them). Beside each, /node-exporter/<hostname> is that node's Prometheus node_exporter page of its rail NICs (the
// InfiniBand collector's series, ExporterPage::renderNodeExporter; nodeExporterSdTargets lists them, for a scrape
// job of their own as a site has for node_exporter), and /facility the site's facility exporter (coolant and leak
// per liquid-cooled rack, ExporterPage::renderFacility; listed last there), and /slurm the cluster's Slurm exporter
// (soperator's node-to-job and job series of the running jobs, ExporterPage::renderSlurm; slurmSdTargets lists it, a
// scrape job of its own). An unknown node, like any other path, is
// 404; a bad percent-escape in the name 400; other methods 405.
//
// The connections are a BoundedHttpServer's (http/): its door's rule (loopback, or TLS and a token or client
// certificate, or --insecure-listen), connections bounded in all and per address, heads within 16 KiB, deadlines for
// heads and idle connections; an idle node target's connection holds no thread. What is served: exportertargets.cpp.
//
// The fleet's pages (dcgm-exporter's, node_exporter's and the facility's) are rendered once per frame, with the offsets
// of every node's lines, and shared by every scrape of that frame, whole or per node. Once a page has been scraped, the
// next frame's is rendered ahead, on a thread of the exporter's, as soon as the frame is published: a render takes a
// while (a third of a second at 102,400 GPUs), and a scrape that rendered would hold up the other connections of its
// HTTP thread (the edge's threads each serve many connections). A frame nobody scraped the page before is not rendered
// ahead. Scrapes during a render are answered the page in hand, one frame old. (m_renderMutex guards m_pages,
// m_pageSequence, m_renders, m_rendering, m_servedSinceRender and m_stopping; the render itself runs outside it.)
// Connection threads touch nothing else of the server but the hostname index (const once built).
class ExporterServer
{
public:
    // How many connections may be open (in all, per address), how long a client may take, how large a request.
    using Limits = BoundedHttpServer::Limits;

    ExporterServer(const FrameSource &source, ExporterPage::Options options);
    ExporterServer(const FrameSource &source, ExporterPage::Options options, const Limits &limits);
    // Who may scrape (the door's TLS, token and client CA; --exporter-*).
    using Security = BoundedHttpServer::Security;
    ExporterServer(const FrameSource &source, ExporterPage::Options options, const Limits &limits, Security security);
    ~ExporterServer();
    ExporterServer(const ExporterServer &) = delete;
    ExporterServer &operator=(const ExporterServer &) = delete;

    // Listens on address ("127.0.0.1:0" picks a free port). Returns false and sets error when it cannot.
    bool start(const std::string &address, std::string *error);
    int port() const { return m_http.port(); }
    std::string listeningAddress() const { return m_http.listeningAddress(); }
    std::string url() const { return m_http.url(); }
    // Closes the listener and every connection, and joins the threads; safe to call twice.
    void stop();

    // Connections open, and those shut for a deadline or refused a credential. From the thread that starts and stops.
    using Load = BoundedHttpServer::Load;
    Load load() const { return m_http.load(); }

    // The page of the latest frame (rendered for it if no scrape has yet), or while another caller renders that, the
    // page before; and the sequence of the frame it is of.
    std::shared_ptr<const ExporterPage::Rendered> page(uint64_t *sequence = nullptr);
    // The node_exporter pages and the facility page of the same frame as page()'s.
    std::shared_ptr<const ExporterPage::Rendered> nodeExporterPage(uint64_t *sequence = nullptr);
    std::shared_ptr<const std::string> facilityPage(uint64_t *sequence = nullptr);
    std::shared_ptr<const std::string> slurmPage(uint64_t *sequence = nullptr);
    // How many times a page has been rendered: once per frame scraped (or following one scraped), however many
    // scrapes and nodes.
    uint64_t renderCount();

    // The node with this hostname (exactly; hostnames are unique in a fleet), or -1.
    int64_t nodeOf(std::string_view hostname) const;

    // The node pages as Prometheus file-based service discovery (file_sd_configs, which vmagent reads too): one
    // target group per node at address (HOST:PORT), with __metrics_path__ /metrics/<hostname> and instance
    // <hostname>, so that each node's `up` is a series of its own although all share one address.
    static std::string fileSdTargets(const FleetShape &shape, const std::string &address);
    // The same for the node_exporter pages (__metrics_path__ /node-exporter/<hostname>, instance <hostname>), then
    // one group for the facility page (__metrics_path__ /facility, instance "facility").
    static std::string nodeExporterSdTargets(const FleetShape &shape, const std::string &address);
    // Writes fileSdTargets for this server's address to path, whole or not at all (a scraper that watches the file
    // never reads half of it); a wildcard listening address is written as loopback. False with an error when not.
    // The Slurm exporter's page as one target group (__metrics_path__ /slurm, instance "slurm-exporter"): a cluster
    // has one Slurm exporter, not one a node.
    static std::string slurmSdTargets(const std::string &address);
    bool writeTargetsFile(const std::string &path, std::string *error) const;
    bool writeNodeExporterTargetsFile(const std::string &path, std::string *error) const;
    bool writeSlurmTargetsFile(const std::string &path, std::string *error) const;

private:
    // One frame's pages, rendered together.
    struct Pages
    {
        ExporterPage::Rendered dcgm;
        ExporterPage::Rendered nodeExporter;
        std::string facility;
        std::string slurm;
    };
    std::shared_ptr<const Pages> pageFor(bool served, uint64_t *sequence);
    bool writeFileWhole(const std::string &path, const std::string &text, std::string *error) const;
    std::string scrapeAddress() const; // the listening address, a wildcard one as loopback
    void renderAhead(); // the render-ahead thread's loop
    // Answers a GET or HEAD of path (as sent, without the query): the fleet's page, a node's, or a status alone.
    void answerScrape(std::string_view path, HttpResponse *response);

    const FrameSource &m_source;
    ExporterPage::Options m_options;

    // Node indices sorted by hostname, for /metrics/<hostname>: 4 bytes a node, 512 KiB at 131,072 nodes. Built by
    // the constructor (a source's shape is fixed for its lifetime), read-only afterwards.
    std::vector<uint32_t> m_nodesByHostname;

    std::mutex m_renderMutex;
    std::condition_variable m_rendered; // m_pages was set
    std::shared_ptr<const Pages> m_pages;
    uint64_t m_pageSequence = 0;
    uint64_t m_renders = 0;
    bool m_rendering = false; // a caller of page() renders outside the lock
    bool m_servedSinceRender = false; // the page in hand was served: the next frame's is rendered ahead
    bool m_stopping = false;
    std::thread m_renderAheadThread;

    BoundedHttpServer m_http; // last: its threads read the members above
};

} // namespace fleetscope::backend
