// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// One series of an instant-vector answer: the labels Fleetscope reads (dcgm-exporter's, plus optional hall/row/rack
// placement labels), the value and its timestamp.
struct PromSample
{
    std::string hostname; // Hostname
    std::string gpu; // gpu: the device index on its node
    std::string uuid; // UUID
    std::string model; // modelName
    std::string driver; // DCGM_FI_DRIVER_VERSION
    std::string hall;
    std::string row;
    std::string rack;
    double value = 0;
    int64_t timeMs = 0;
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

    // Parses {"status":"success","data":{"resultType":"vector","result":[...]}} into out (replacing its contents).
    // False with an error for anything else: a "status":"error" answer (with the upstream's errorType and error),
    // malformed or truncated JSON, another result type, a series without a [time, "value"] pair, or more than
    // maxSeries series. body may be grown for simdjson's padding. Without withPlacement only Hostname and gpu are read.
    bool parseVector(
        std::string *body, size_t maxSeries, bool withPlacement, std::vector<PromSample> *out, std::string *error);

    // Prometheus' sample values: decimal numbers, "NaN", "+Inf", "-Inf". False when text is none of these.
    static bool parseValue(std::string_view text, double *value);

private:
    struct Parser;
    std::unique_ptr<Parser> m_parser;
};

} // namespace fleetscope::backend
