// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "dcgm/metricmap.h"
#include "dcgm/promsample.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

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
    // of a kept series. False with an error as parseVector, also for more than maxPoints points in all. With withJobs
    // the series' job labels are read too.
    using SeriesFn = std::function<int64_t(const PromSample &labels)>;
    using PointFn = std::function<void(int64_t column, int64_t timeMs, double value)>;
    bool parseMatrix(std::string *body, size_t maxSeries, size_t maxPoints, const SeriesFn &seriesFn,
        const PointFn &pointFn, std::string *error, bool withJobs = false);

    // The same envelope with every label of each series handed on as it is, for series that are not dcgm-exporter's
    // (a Slurm exporter's): labelFn gets each label, then seriesFn the series' value. False with an error as
    // parseVector. The views live until labelFn returns.
    using LabelFn = std::function<void(std::string_view name, std::string_view value)>;
    using ValueFn = std::function<void(double value)>;
    bool parseVectorLabels(
        std::string *body, size_t maxSeries, const LabelFn &labelFn, const ValueFn &seriesFn, std::string *error);

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
