// SPDX-License-Identifier: Apache-2.0
#include "prometheus/promjson.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

#include <simdjson.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace od = simdjson::ondemand;

struct PromJson::Parser
{
    od::parser parser;
};

PromJson::PromJson()
    : m_parser(std::make_unique<Parser>())
{ }

PromJson::~PromJson() = default;

bool PromJson::unixMs(double seconds, int64_t *ms)
{
    // Compared before the product is rounded: NaN fails both comparisons.
    constexpr double bound = static_cast<double>(maxUnixMs) / 1000.0;
    if (!(seconds >= -bound && seconds <= bound)) {
        return false;
    }
    *ms = std::llround(seconds * 1000.0);
    return true;
}

bool PromJson::parseValue(std::string_view text, double *value)
{
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    if (text == "NaN") {
        *value = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (text == "Inf") {
        *value = std::numeric_limits<double>::infinity();
        return true;
    }
    if (text == "-Inf") {
        *value = -std::numeric_limits<double>::infinity();
        return true;
    }
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    // Out of double's range still parses (as +-inf or 0), which the caller treats as not a value.
    return (ec == std::errc() || ec == std::errc::result_out_of_range) && ptr == text.data() + text.size()
        && !text.empty();
}

namespace {

// Reads a series' "metric" object: the node and gpu labels always, the rest as asked.
simdjson::error_code readLabels(od::value metric, unsigned wanted, const MetricMap::Labels &names, PromSample *s)
{
    od::object labels;
    if (auto e = metric.get_object().get(labels)) {
        return e;
    }
    PromLabelReader reader(wanted, names);
    for (auto label : labels) {
        std::string_view name;
        if (auto e = label.unescaped_key().get(name)) {
            return e;
        }
        std::string_view text;
        if (auto e = label.value().get_string().get(text)) {
            return e;
        }
        reader.read(name, text, s);
    }
    return simdjson::SUCCESS;
}

// Reads one [time, "value"] pair.
simdjson::error_code readPair(od::array pair, int64_t *timeMs, double *value, std::string *error)
{
    size_t i = 0;
    for (auto item : pair) {
        if (i == 0) {
            double seconds = 0;
            if (auto e = item.get_double().get(seconds)) {
                return e;
            }
            if (!PromJson::unixMs(seconds, timeMs)) {
                *error
                    = fmt::format("sample time {} s is not a time (beyond the year 9999 either side of 1970)", seconds);
                return simdjson::NUMBER_OUT_OF_RANGE;
            }
        } else if (i == 1) {
            std::string_view text;
            if (auto e = item.get_string().get(text)) {
                return e;
            }
            if (!PromJson::parseValue(text, value)) {
                *error = fmt::format("sample value '{}' is not a number", text);
                return simdjson::INCORRECT_TYPE;
            }
        }
        ++i; // anything after the pair is skipped by the iteration itself
    }
    if (i != 2) {
        *error = "a sample is not a [time, \"value\"] pair";
        return simdjson::INCORRECT_TYPE;
    }
    return simdjson::SUCCESS;
}

// Reads one element of an instant vector's "result": {"metric":{...},"value":[time,"value"]}.
simdjson::error_code readSeries(
    od::value element, unsigned wanted, const MetricMap::Labels &names, PromSample *s, std::string *error)
{
    od::object series;
    if (auto e = element.get_object().get(series)) {
        return e;
    }
    bool haveValue = false;
    for (auto field : series) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return e;
        }
        if (key == "metric") {
            if (auto e = readLabels(field.value(), wanted, names, s)) {
                return e;
            }
        } else if (key == "value") {
            od::array pair;
            if (auto e = field.value().get_array().get(pair)) {
                return e;
            }
            if (auto e = readPair(pair, &s->timeMs, &s->value, error)) {
                return e;
            }
            haveValue = true;
        }
    }
    if (!haveValue) {
        *error = "a series has no \"value\" (a range query's matrix?)";
        return simdjson::INCORRECT_TYPE;
    }
    return simdjson::SUCCESS;
}

using ElementFn = std::function<simdjson::error_code(od::value element, std::string *detail)>;

// The envelope both answers share: status, error, data.resultType and data.result, whose elements go to elementFn
// (which may set the error's detail).
bool parseAnswer(
    od::parser &parser, std::string *body, const char *expectedType, const ElementFn &elementFn, std::string *error)
{
    const size_t length = body->size();
    body->reserve(length + simdjson::SIMDJSON_PADDING);
    std::string detail;
    std::string_view status;
    std::string_view errorType;
    std::string_view errorText;
    std::string_view resultType;
    bool haveResult = false;
    auto fail = [&](simdjson::error_code e) {
        if (detail.empty()) {
            detail = fmt::format("malformed or truncated JSON ({})", simdjson::error_message(e));
        }
        *error = detail;
        return false;
    };

    od::document doc;
    if (auto e = parser.iterate(body->data(), length, body->capacity()).get(doc)) {
        return fail(e);
    }
    od::object root;
    if (auto e = doc.get_object().get(root)) {
        return fail(e);
    }
    for (auto field : root) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) {
            return fail(e);
        }
        simdjson::error_code e = simdjson::SUCCESS;
        if (key == "status") {
            e = field.value().get_string().get(status);
        } else if (key == "errorType") {
            e = field.value().get_string().get(errorType);
        } else if (key == "error") {
            e = field.value().get_string().get(errorText);
        } else if (key == "data") {
            od::object data;
            // Not an object: refused here, since simdjson does not allow a default od::object to be iterated (an
            // assertion; undefined behaviour without one). Found by fuzz_promjson.
            if ((e = field.value().get_object().get(data))) {
                return fail(e);
            }
            for (auto part : data) {
                std::string_view name;
                if ((e = part.unescaped_key().get(name))) {
                    break;
                }
                if (name == "resultType") {
                    e = part.value().get_string().get(resultType);
                } else if (name == "result") {
                    od::array result;
                    if ((e = part.value().get_array().get(result))) {
                        break;
                    }
                    haveResult = true;
                    for (auto element : result) {
                        od::value v;
                        if ((e = element.get(v))) {
                            break;
                        }
                        if ((e = elementFn(v, &detail))) {
                            break;
                        }
                    }
                } // other members are skipped by the iteration itself
                if (e) {
                    break; // an error in the result must not be overwritten by the next member's key
                }
            }
        }
        if (e) {
            return fail(e);
        }
    }
    if (status == "error") {
        *error = fmt::format("upstream error {}: {}", errorType, errorText);
        return false;
    }
    if (status != "success") {
        *error = fmt::format("answer has status '{}', expected 'success'", status);
        return false;
    }
    if (!haveResult || resultType != expectedType) {
        *error = fmt::format("answer has result type '{}', expected {}", resultType,
            std::string_view(expectedType) == "vector" ? "an instant vector" : "a range matrix");
        return false;
    }
    return true;
}

} // namespace

bool PromJson::parseVector(std::string *body, size_t maxSeries, bool withPlacement, std::vector<PromSample> *out,
    std::string *error, bool withJobs)
{
    out->clear();
    const unsigned wanted = (withPlacement ? PromLabelReader::Placement : 0U) | (withJobs ? PromLabelReader::Jobs : 0U);
    const bool ok = parseAnswer(
        m_parser->parser, body, "vector",
        [&](od::value element, std::string *detail) {
            if (out->size() == maxSeries) {
                *detail = fmt::format("the answer has more than {} series", maxSeries);
                return simdjson::CAPACITY;
            }
            out->emplace_back();
            return readSeries(element, wanted, m_labels, &out->back(), detail);
        },
        error);
    if (!ok) {
        out->clear();
    }
    return ok;
}

bool PromJson::parseVectorLabels(
    std::string *body, size_t maxSeries, const LabelFn &labelFn, const ValueFn &seriesFn, std::string *error)
{
    size_t series = 0;
    return parseAnswer(
        m_parser->parser, body, "vector",
        [&](od::value element, std::string *detail) -> simdjson::error_code {
            if (series++ == maxSeries) {
                *detail = fmt::format("the answer has more than {} series", maxSeries);
                return simdjson::CAPACITY;
            }
            od::object object;
            if (auto e = element.get_object().get(object)) {
                return e;
            }
            bool haveValue = false;
            double value = 0;
            for (auto field : object) {
                std::string_view key;
                if (auto e = field.unescaped_key().get(key)) {
                    return e;
                }
                if (key == "metric") {
                    od::object labels;
                    if (auto e = field.value().get_object().get(labels)) {
                        return e;
                    }
                    for (auto label : labels) {
                        std::string_view name;
                        std::string_view text;
                        if (auto e = label.unescaped_key().get(name)) {
                            return e;
                        }
                        if (auto e = label.value().get_string().get(text)) {
                            return e;
                        }
                        labelFn(name, text);
                    }
                } else if (key == "value") {
                    od::array pair;
                    if (auto e = field.value().get_array().get(pair)) {
                        return e;
                    }
                    int64_t timeMs = 0;
                    if (auto e = readPair(pair, &timeMs, &value, detail)) {
                        return e;
                    }
                    haveValue = true;
                }
            }
            if (!haveValue) {
                *detail = "a series has no \"value\" (a range query's matrix?)";
                return simdjson::INCORRECT_TYPE;
            }
            seriesFn(value);
            return simdjson::SUCCESS;
        },
        error);
}

bool PromJson::parseMatrix(std::string *body, size_t maxSeries, size_t maxPoints, const SeriesFn &seriesFn,
    const PointFn &pointFn, std::string *error, bool withJobs)
{
    const unsigned wanted = withJobs ? PromLabelReader::Jobs : 0U;
    size_t series = 0;
    size_t points = 0;
    PromSample labels;
    return parseAnswer(
        m_parser->parser, body, "matrix",
        [&](od::value element, std::string *detail) -> simdjson::error_code {
            if (series++ == maxSeries) {
                *detail = fmt::format("the answer has more than {} series", maxSeries);
                return simdjson::CAPACITY;
            }
            od::object object;
            if (auto e = element.get_object().get(object)) {
                return e;
            }
            labels = {};
            bool haveLabels = false;
            bool haveValues = false;
            for (auto field : object) {
                std::string_view key;
                if (auto e = field.unescaped_key().get(key)) {
                    return e;
                }
                if (key == "metric") {
                    if (auto e = readLabels(field.value(), wanted, m_labels, &labels)) {
                        return e;
                    }
                    haveLabels = true;
                } else if (key == "values") {
                    // Streamed: the series' labels must come first (Prometheus, Thanos, Mimir and VictoriaMetrics all
                    // write them first), so that its points go straight to their column.
                    if (!haveLabels) {
                        *detail = "a series' \"values\" come before its \"metric\"";
                        return simdjson::INCORRECT_TYPE;
                    }
                    const int64_t column = seriesFn(labels);
                    od::array values;
                    if (auto e = field.value().get_array().get(values)) {
                        return e;
                    }
                    for (auto item : values) {
                        od::array pair;
                        if (auto e = item.get_array().get(pair)) {
                            return e;
                        }
                        if (++points > maxPoints) {
                            *detail = fmt::format("the answer has more than {} points", maxPoints);
                            return simdjson::CAPACITY;
                        }
                        int64_t timeMs = 0;
                        double value = 0;
                        if (auto e = readPair(pair, &timeMs, &value, detail)) {
                            return e;
                        }
                        if (column >= 0) {
                            pointFn(column, timeMs, value);
                        }
                    }
                    haveValues = true;
                }
            }
            if (!haveValues) {
                *detail = "a series has no \"values\" (an instant query's vector?)";
                return simdjson::INCORRECT_TYPE;
            }
            return simdjson::SUCCESS;
        },
        error);
}

} // namespace fleetscope::backend
