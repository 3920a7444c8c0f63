// SPDX-License-Identifier: Apache-2.0
// Incidents against the simulator's ground truth (issue 32): of the faults of shared domains (a cooling unit, a CDU,
// a PDU trip, a leaf switch, a leak), the share reported as one incident naming the right domain within 2 simulated
// minutes; incidents naming a domain where no domain failed, per simulated day; the share of single faults (a GPU
// impaired, a node down, a GPU's degradation, a flapping link) folded into a domain incident; the folder's CPU time
// per frame. docs/INCIDENTS.md has the figures and the commands.
//
//   bench_incidents [gpus=10240] [days=7] [step seconds=10] [domain fault scale=1] [degradations per GPU-day=0.01]
//                   [seed=1] [hardware=hgx-h100] [scenario=none]
//   bench_incidents cost [gpus=1048576] [frames=20]
// The scale multiplies the simulator's random rates of domain faults (1: docs/FAULTS.md's, a few a week at 10,240
// GPUs) so that a run meets enough of them to score. BENCH_INCIDENTS_VERBOSE=1 prints each domain fault, its
// incident and each wrong or folded one.
#include "analytics/incidentfolder.h"
#include "sim/simulator.h"

#include "timing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace be = fleetscope::backend;
using be::InjectedFaults;
using DomainFault = be::InjectedFaults::DomainFault;

namespace {
constexpr double reportWithinSeconds = 120;
constexpr double day = 86400;

double threadSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<be::JobInfo> jobsOf(const be::Simulator &sim)
{
    std::vector<be::JobInfo> out;
    const auto &shape = sim.shape();
    for (const auto &j : sim.jobs()) {
        be::JobInfo info;
        info.id = j.id;
        info.firstGpu = shape.nodes[j.firstNode].firstGpu;
        const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
        info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
        out.push_back(info);
    }
    return out;
}

// An incident as its events said it, last state kept.
struct Seen
{
    int64_t domain = -1;
    double opened = 0;
    double closed = std::numeric_limits<double>::infinity();
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    std::string text;
    std::string evidence;
};

bool holds(const std::vector<std::pair<uint32_t, uint32_t>> &runs, uint32_t gpu)
{
    return std::any_of(
        runs.begin(), runs.end(), [&](const auto &r) { return gpu >= r.first && gpu - r.first < r.second; });
}

// Two domains that serve the same GPUs: a rack's two PDUs. An incident naming either is scored as reporting a trip of
// the other (only the nodes corded to one alone tell them apart); reportedStrict counts those that named the one.
bool twins(const be::FleetShape &shape, int64_t a, int64_t b)
{
    if (a == b) {
        return true;
    }
    if (a < 0 || b < 0 || shape.domains[static_cast<size_t>(a)].kind != be::DomainKind::Pdu
        || shape.domains[static_cast<size_t>(b)].kind != be::DomainKind::Pdu) {
        return false;
    }
    for (const auto &rack : shape.racks) {
        const auto &d = rack.domains;
        if (std::find(d.begin(), d.end(), a) != d.end()) {
            return std::find(d.begin(), d.end(), b) != d.end();
        }
    }
    return false;
}

bool isDomainFault(DomainFault::Kind kind)
{
    return kind != DomainFault::Kind::LinkFlap; // a flapping link is one GPU's port
}

int costOnly(uint32_t gpus, int frames)
{
    be::Simulator sim(gpus, 1, 10.0);
    be::IncidentFolder folder(sim.shape());
    std::vector<double> quiet;
    for (int i = 0; i < frames; ++i) {
        sim.step();
        auto frame = sim.snapshot();
        auto events = sim.takeEvents();
        const auto jobs = jobsOf(sim);
        const double t0 = threadSeconds();
        folder.judge(*frame, jobs, sim.nowSeconds(), &events);
        if (i > 0) { // the first frame's symptoms are all onsets
            quiet.push_back(threadSeconds() - t0);
        }
    }
    // A storm: every GPU of a tenth of the fleet's cooling units throttling at once, folded 30 s later, and held.
    auto frame = sim.snapshot();
    const auto &shape = sim.shape();
    auto &throttle = frame->planes[static_cast<size_t>(be::MetricId::ThrottleReasons)];
    uint32_t unit = 0;
    for (const auto &rack : shape.racks) {
        for (const uint32_t d : rack.domains) {
            if (shape.domains[d].kind == be::DomainKind::CoolingUnit) {
                unit = d;
            }
        }
        if (unit % 10 == 0) {
            const auto &first = shape.nodes[rack.firstNode];
            const auto &last = shape.nodes[rack.firstNode + rack.nodeCount - 1];
            std::fill(throttle.begin() + first.firstGpu, throttle.begin() + last.firstGpu + last.gpuCount, 0x20);
        }
    }
    const auto jobs = jobsOf(sim);
    std::vector<double> storm;
    size_t opened = 0;
    for (int i = 0; i < 40; ++i) {
        std::vector<be::FleetEvent> events;
        const double t0 = threadSeconds();
        folder.judge(*frame, jobs, sim.nowSeconds() + 10.0 * (i + 1), &events);
        storm.push_back(threadSeconds() - t0);
        opened += static_cast<size_t>(std::count_if(events.begin(), events.end(),
            [](const be::FleetEvent &e) { return e.kind == be::FleetEvent::Kind::IncidentOpen; }));
    }
    const fleetscope::bench::Distribution q(quiet);
    const fleetscope::bench::Distribution s(storm);
    std::printf("folder cost per frame at %u GPUs (%zu domains): quiet fleet median %.1f ms, p90 %.1f ms of one core "
                "(%d frames); a tenth of the cooling units throttling at once: median %.1f ms, the fold %.1f ms "
                "(%zu incidents opened)\n",
        gpus, shape.domains.size(), q.quantile(0.5) * 1e3, q.quantile(0.9) * 1e3, frames - 1, s.quantile(0.5) * 1e3,
        s.max() * 1e3, opened);
    return 0;
}
} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "cost") {
        return costOnly(
            argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 1U << 20U, argc > 3 ? std::atoi(argv[3]) : 20);
    }
    const auto gpus = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 10240U;
    const double days = argc > 2 ? std::atof(argv[2]) : 7.0;
    const double step = argc > 3 ? std::atof(argv[3]) : 10.0;
    const double scale = argc > 4 ? std::atof(argv[4]) : 1.0;
    const double degradations = argc > 5 ? std::atof(argv[5]) : 0.01;
    const uint64_t seed = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 1;
    const auto hardware = be::HardwareSpec::fromName(argc > 7 ? argv[7] : "hgx-h100");
    const auto scenario = argc > 8 ? be::Scenario::byName(argv[8]) : be::Scenario::Kind::None;
    if (!hardware || !scenario || gpus < be::FleetShape::minGpus || gpus > be::FleetShape::maxGpus || days <= 0
        || step <= 0) {
        std::fprintf(stderr,
            "usage: bench_incidents [gpus] [days] [step] [scale] [degradations] [seed] [%s] [scenario]\n",
            be::HardwareSpec::names().c_str());
        return 2;
    }
    const bool verbose = std::getenv("BENCH_INCIDENTS_VERBOSE") != nullptr;
    const bool trace = std::getenv("BENCH_INCIDENTS_TRACE") != nullptr; // every frame's count of GPUs per symptom

    be::Simulator sim(gpus, seed, step, *scenario, *hardware);
    sim.setDomainFaultScale(scale);
    sim.setDegradationRate(degradations);
    const auto &shape = sim.shape();
    be::IncidentFolder folder(shape);
    std::map<uint64_t, Seen> incidents;
    std::vector<double> cost;
    const auto steps = static_cast<uint64_t>(days * day / step);
    const double wall0 = threadSeconds();
    for (uint64_t i = 0; i < steps; ++i) {
        sim.step();
        auto frame = sim.snapshot();
        frame->sampleTimeMs = static_cast<int64_t>(sim.nowSeconds() * 1000.0);
        auto events = sim.takeEvents();
        const auto jobs = jobsOf(sim);
        const double t0 = threadSeconds();
        folder.judge(*frame, jobs, sim.nowSeconds(), &events);
        cost.push_back(threadSeconds() - t0);
        if (trace) {
            std::array<uint32_t, be::IncidentFolder::symptomCount> counts {};
            for (uint32_t g = 0; g < gpus; ++g) {
                for (int b = 0; b < be::IncidentFolder::symptomCount; ++b) {
                    counts[static_cast<size_t>(b)] += (folder.symptoms(g) >> b) & 1U;
                }
            }
            std::printf("t %.0f symptoms", sim.nowSeconds());
            for (const uint32_t n : counts) {
                std::printf(" %u", n);
            }
            std::printf("\n");
        }
        for (const auto &e : events) {
            if (e.incident == nullptr) {
                continue;
            }
            Seen &seen = incidents[e.incident->id];
            if (e.kind == be::FleetEvent::Kind::IncidentOpen) {
                seen.domain = e.incident->domain;
                seen.opened = e.timeSeconds;
            }
            if (e.kind == be::FleetEvent::Kind::IncidentClose) {
                seen.closed = e.timeSeconds;
            }
            seen.runs = e.incident->gpuRuns;
            seen.text = e.text;
            seen.evidence = e.incident->evidence;
        }
    }
    const double simulated = static_cast<double>(steps) * step;
    const double cpu = threadSeconds() - wall0;

    // Domain faults: one incident naming the domain (or its twin) opened by onset + 2 minutes.
    const auto &truth = sim.injectedFaults().domainFaults();
    std::map<std::string, std::pair<int, int>> byKind; // reported, all
    int reported = 0;
    int reportedStrict = 0; // PDU trips naming the PDU that tripped rather than its twin
    int pduTrips = 0;
    int scored = 0;
    for (const auto &f : truth) {
        if (!isDomainFault(f.kind) || f.onsetSeconds > simulated - reportWithinSeconds) {
            continue;
        }
        ++scored;
        const Seen *hit = nullptr;
        for (const auto &[id, seen] : incidents) {
            if (seen.domain >= 0 && twins(shape, seen.domain, f.domain)
                && seen.opened <= f.onsetSeconds + reportWithinSeconds && seen.closed >= f.onsetSeconds) {
                hit = &seen;
                break;
            }
        }
        auto &k = byKind[InjectedFaults::domainFaultName(f.kind)];
        ++k.second;
        if (hit != nullptr) {
            ++reported;
            ++k.first;
            reportedStrict
                += f.kind == DomainFault::Kind::PduTrip && hit->domain == static_cast<int64_t>(f.domain) ? 1 : 0;
            pduTrips += f.kind == DomainFault::Kind::PduTrip ? 1 : 0;
        }
        if (verbose && hit == nullptr) {
            for (const auto &[id, seen] : incidents) {
                if (seen.opened >= f.onsetSeconds && seen.opened <= f.onsetSeconds + 900) {
                    std::printf("  then at +%.0f s: %s; %s\n", seen.opened - f.onsetSeconds, seen.text.c_str(),
                        seen.evidence.c_str());
                }
            }
        }
        if (verbose) {
            std::printf("%-12s %-14s at %8.0f s: %s\n", InjectedFaults::domainFaultName(f.kind),
                shape.domains[f.domain].name.c_str(), f.onsetSeconds,
                hit != nullptr ? (hit->text + " [+" + std::to_string(static_cast<int>(hit->opened - f.onsetSeconds))
                    + " s] " + hit->evidence)
                                     .c_str()
                               : "NOT REPORTED");
        }
    }
    // Domain incidents where no domain failed (or another one did).
    const auto explained = [&](const Seen &seen) {
        return std::any_of(truth.begin(), truth.end(), [&](const DomainFault &f) {
            return isDomainFault(f.kind) && twins(shape, seen.domain, f.domain) && seen.opened >= f.onsetSeconds - 60
                && seen.opened <= f.endSeconds + 900;
        });
    };
    int wrong = 0;
    int domainIncidents = 0;
    int nodeIncidents = 0;
    for (const auto &[id, seen] : incidents) {
        if (seen.domain < 0) {
            ++nodeIncidents;
            continue;
        }
        ++domainIncidents;
        if (!explained(seen)) {
            ++wrong;
            if (verbose) {
                std::printf("WRONG at %8.0f s: %s; %s\n", seen.opened, seen.text.c_str(), seen.evidence.c_str());
            }
        }
    }
    // Single faults (a GPU impaired, a node's GPU offline, a degradation, a flapping link) that are no domain
    // fault's consequence: folded when a domain incident of their time holds their GPU.
    std::vector<std::vector<uint32_t>> domainsOf(shape.gpuCount);
    const auto inTruthDomain = [&](uint32_t gpu, double t) {
        if (domainsOf[gpu].empty()) {
            domainsOf[gpu] = shape.domainsOfGpu(gpu);
        }
        return std::any_of(truth.begin(), truth.end(), [&](const DomainFault &f) {
            return isDomainFault(f.kind) && t >= f.onsetSeconds - 300 && t <= f.endSeconds + 900
                && std::find(domainsOf[gpu].begin(), domainsOf[gpu].end(), f.domain) != domainsOf[gpu].end();
        });
    };
    int singles = 0;
    int folded = 0;
    const auto judgeSingle = [&](uint32_t gpu, double onset, const char *what) {
        if (onset > simulated - reportWithinSeconds || inTruthDomain(gpu, onset)) {
            return;
        }
        ++singles;
        for (const auto &[id, seen] : incidents) {
            if (seen.domain >= 0 && seen.opened <= onset + 300 && seen.closed >= onset && holds(seen.runs, gpu)) {
                ++folded;
                if (verbose) {
                    std::printf("FOLDED %s GPU %u at %.0f s into: %s\n", what, gpu, onset, seen.text.c_str());
                }
                return;
            }
        }
    };
    for (const auto &f : sim.injectedFaults().faults()) {
        judgeSingle(f.gpu, f.onsetSeconds, InjectedFaults::kindName(f.kind));
    }
    for (const auto &f : truth) {
        if (!isDomainFault(f.kind) && f.gpu >= 0) {
            judgeSingle(static_cast<uint32_t>(f.gpu), f.onsetSeconds, "link flap");
        }
    }

    const fleetscope::bench::Distribution c(cost);
    std::printf("%u GPUs (%s), %.1f simulated days at %.0f s a frame, domain fault rates x%.0f, degradations %.3f per "
                "GPU-day, seed %llu; %.0f s of CPU\n",
        gpus, be::HardwareSpec::of(*hardware).name, simulated / day, step, scale, degradations,
        static_cast<unsigned long long>(seed), cpu);
    std::printf("domain faults reported as one incident naming the domain within %.0f s: %d of %d (%.1f%%; of %d PDU "
                "trips reported, %d name the PDU that tripped rather than its twin)\n",
        reportWithinSeconds, reported, scored, scored > 0 ? 100.0 * reported / scored : 0.0, pduTrips, reportedStrict);
    for (const auto &[kind, counts] : byKind) {
        std::printf("  %-12s %d of %d\n", kind.c_str(), counts.first, counts.second);
    }
    std::printf("incidents: %d naming a domain, %d a node or GPU; naming a wrong domain: %d (%.2f per simulated day)\n",
        domainIncidents, nodeIncidents, wrong, wrong / (simulated / day));
    std::printf("single faults folded into a domain incident: %d of %d (%.2f%%)\n", folded, singles,
        singles > 0 ? 100.0 * folded / singles : 0.0);
    std::printf("folder cost per frame: median %.2f ms, p99 %.2f ms, max %.1f ms of one core\n", c.quantile(0.5) * 1e3,
        c.quantile(0.99) * 1e3, c.max() * 1e3);
    return 0;
}
