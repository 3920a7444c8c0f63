// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "prometheus/metricmap.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// One series of an instant-vector answer: the labels Fleetscope reads (dcgm-exporter's, under the names a MetricMap
// gives, plus optional hall/row/rack placement labels), the value and its timestamp.
struct PromSample
{
    std::string hostname; // hostname or Hostname (MetricMap::Labels::hostname: the first one present)
    int hostnameRank = -1; // which of those names it came from; -1: none
    std::string gpu; // gpu: the device index on its node
    std::string uuid; // UUID
    std::string model; // modelName
    std::string driver; // DCGM_FI_DRIVER_VERSION (DCGM_FI_SYSTEM_DRIVER_VERSION since dcgm-exporter 4.9)
    std::string vbios; // DCGM_FI_DEV_VBIOS_VERSION, where the exporter's collector CSV has it as a "label" row
    std::string hall;
    std::string row;
    std::string rack;
    // The job the GPU serves, as dcgm-exporter labels it: Kubernetes namespace/pod/container (the exported_* names a
    // scrape without honor_labels gives them win, then the pod_* names of --use-old-namespace), or the HPC job of
    // --hpc-job-mapping-dir (hpc_job, hpc_user). Read only when asked for (withJobs).
    std::string nameSpace;
    std::string pod;
    std::string container;
    std::string hpcJob;
    std::string hpcUser;
    std::string name; // __name__, for a query over several metrics
    double value = 0;
    int64_t timeMs = 0;
};

// Reads a series' labels, one at a time, into the PromSample fields Fleetscope knows: the node and gpu labels (under
// the names of a MetricMap) and __name__ always, the identity, placement and job labels when asked for. Of a field's
// several names (hostname and Hostname; exported_pod, pod, pod_name) the best one of the series wins whatever their
// order. One reader per series.
class PromLabelReader
{
public:
    enum Set : unsigned { Always = 0U, Placement = 1U, Jobs = 2U };
    // The best name seen so far of the fields that have several: higher is better.
    struct Ranks
    {
        int nameSpace = 0;
        int pod = 0;
        int container = 0;
        int driver = 0;
        int hostname = 0;
    };

    PromLabelReader(unsigned wanted, const MetricMap::Labels &names)
        : m_wanted(wanted)
        , m_names(names)
    { }
    void read(std::string_view name, std::string_view value, PromSample *s);

private:
    unsigned m_wanted;
    const MetricMap::Labels &m_names;
    Ranks m_ranks;
};

// Parses the Prometheus HTTP API's answers to /api/v1/query with simdjson's on-demand API. Keeps simdjson's buffers
// between answers; one per thread.
class PromJson
{
public:
    PromJson();
    ~PromJson();
    PromJson(const PromJson &) = delete;
    PromJson &operator=(const PromJson &) = delete;

    // The names of the node, GPU and identity labels (by default both spellings of the node label, newest first).
    void setLabels(const MetricMap::Labels &labels) { m_labels = labels; }

    // Parses {"status":"success","data":{"resultType":"vector","result":[...]}} into out (replacing its contents).
    // False with an error for anything else: a "status":"error" answer (with the upstream's errorType and error),
    // malformed or truncated JSON, another result type, a series without a [time, "value"] pair, or more than
    // maxSeries series. body may be grown for simdjson's padding. Without withPlacement only the node and gpu labels
    // (and __name__) are read.
    bool parseVector(std::string *body, size_t maxSeries, bool withPlacement, std::vector<PromSample> *out,
        std::string *error, bool withJobs = false);

    // Parses a range query's {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},
    // "values":[[time,"value"],...]},...]}} as it goes, without keeping the series: for each series, seriesFn gets its
    // labels (the value fields unset) and returns a column (or -1 to skip its points); pointFn then gets each point
    // of a kept series. False with an error as parseVector, also for more than maxPoints points in all.
    using SeriesFn = std::function<int64_t(const PromSample &labels)>;
    using PointFn = std::function<void(int64_t column, int64_t timeMs, double value)>;
    bool parseMatrix(std::string *body, size_t maxSeries, size_t maxPoints, const SeriesFn &seriesFn,
        const PointFn &pointFn, std::string *error);

    // Prometheus' sample values: decimal numbers, "NaN", "+Inf", "-Inf". False when text is none of these.
    static bool parseValue(std::string_view text, double *value);

    // A Unix time in seconds from an upstream (a point's time, or a timestamp() query's value) as milliseconds. False
    // unless it is finite and within maxUnixMs either side of 1970: no scrape is stamped after the year 9999, and a
    // time beyond it is a broken answer, not a sample time. Without the bound, llround of a time past int64's
    // milliseconds gave an unspecified value (LLONG_MIN here), which the range code then subtracted from (undefined
    // behaviour); within it, sums and differences of a few such times stay far inside int64.
    static constexpr int64_t maxUnixMs = 253'402'300'799'999; // 9999-12-31T23:59:59.999Z
    static bool unixMs(double seconds, int64_t *ms);

private:
    struct Parser;
    std::unique_ptr<Parser> m_parser;
    MetricMap::Labels m_labels;
};

} // namespace fleetscope::backend
