// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"
#include "dcgm/slurmjobs.h"
#include "remotewrite/remotewritedecoder.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// A Slurm exporter's series as senders push them (remote write), for the same join as the Prometheus source's
// (SlurmJobs): each series' newest sample is held until a staleness marker (NaN: Prometheus and vmagent send one when
// a series leaves a scrape) says it is gone, or until it goes unpushed for lookbackMs, as an instant query would stop
// seeing it. The sender's timestamps order its samples but are not trusted further: a sample counts as at most
// maxSkewMs past its receipt (one stamped a year ahead would otherwise hold its job running for a year), and a marker
// ends its series only when it is not older than the sample held (a retried request from before the series came back
// carries an old one). An ended series' marker is kept for the lookback, so that a retried older sample does not bring
// it back. At each window's close the held series are joined onto the fleet's nodes by hostname, or by the pod
// names dcgm-exporter's series carry on a node.
//
// Threads: add() from the receiver's HTTP threads, join() from the ticker's; they share the held series under
// m_mutex. The node index is the ticker's.
class PushedSlurm
{
public:
    static constexpr int64_t lookbackMs = 300000; // Prometheus' default lookback for an instant query
    // A sender's clock a little ahead of the receiver's (NTP keeps them within milliseconds; a minute is a badly kept
    // one) is its own: samples keep their order. Past it a sample counts as stamped at its receipt plus this, so its
    // series leaves at most a minute after the lookback says.
    static constexpr int64_t maxSkewMs = 60000;

    struct Pushed
    {
        SlurmJobs::Series series;
        int64_t timeMs = 0; // of the newest sample (held: at most its receipt + maxSkewMs)
        bool stale = false; // the newest sample is a staleness marker (held: the series ended)
    };
    static bool isSlurmSeries(std::string_view name)
    {
        return name == SlurmJobs::nodeJobSeries || name == SlurmJobs::jobInfoSeries;
    }

    // The reader's current series (one of isSlurmSeries) with its newest sample, onto batch; none without samples.
    static void read(const WriteRequestReader &reader, std::vector<Pushed> *batch);

    explicit PushedSlurm(const FleetShape &shape);

    // One request's Slurm series, received at receivedMs (the receiver's clock, Unix ms). Past
    // SlurmJobs::maxSeries(nodes) held series (ended ones' markers included) a new one is dropped (counted).
    void add(std::vector<Pushed> batch, int64_t receivedMs);
    // The held series as of atMs (those older than the lookback forgotten) joined into jobs; events as
    // SlurmJobs::finish gives them. Nothing is done while nothing was ever pushed.
    void join(int64_t atMs, SlurmJobs *jobs, std::vector<FleetEvent> *events);
    size_t held() const; // the series held that have not ended
    uint64_t dropped() const;

private:
    const FleetShape &m_shape;
    mutable std::mutex m_mutex;
    std::map<std::string, Pushed> m_held; // by kind, job id and node name
    uint64_t m_dropped = 0;
    bool m_everPushed = false;
    std::unordered_map<std::string_view, uint32_t> m_nodeOfHost; // views of m_shape's hostnames
};

} // namespace fleetscope::backend
