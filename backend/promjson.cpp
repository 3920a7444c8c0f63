// SPDX-License-Identifier: Apache-2.0
#include "promjson.h"

#include <charconv>
#include <cmath>
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

// Reads one element of "result": {"metric":{...},"value":[time,"value"]}.
simdjson::error_code readSeries(od::value element, bool withPlacement, PromSample *s, std::string *error)
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
            od::object labels;
            if (auto e = field.value().get_object().get(labels)) {
                return e;
            }
            for (auto label : labels) {
                std::string_view name;
                if (auto e = label.unescaped_key().get(name)) {
                    return e;
                }
                std::string *target = nullptr;
                if (name == "Hostname") {
                    target = &s->hostname;
                } else if (name == "gpu") {
                    target = &s->gpu;
                } else if (withPlacement) {
                    if (name == "UUID") {
                        target = &s->uuid;
                    } else if (name == "modelName") {
                        target = &s->model;
                    } else if (name == "DCGM_FI_DRIVER_VERSION") {
                        target = &s->driver;
                    } else if (name == "hall") {
                        target = &s->hall;
                    } else if (name == "row") {
                        target = &s->row;
                    } else if (name == "rack") {
                        target = &s->rack;
                    }
                }
                std::string_view text;
                if (auto e = label.value().get_string().get(text)) {
                    return e;
                }
                if (target) {
                    target->assign(text);
                }
            }
        } else if (key == "value") {
            od::array pair;
            if (auto e = field.value().get_array().get(pair)) {
                return e;
            }
            size_t i = 0;
            for (auto item : pair) {
                if (i == 0) {
                    double seconds = 0;
                    if (auto e = item.get_double().get(seconds)) {
                        return e;
                    }
                    s->timeMs = std::llround(seconds * 1000.0);
                } else if (i == 1) {
                    std::string_view text;
                    if (auto e = item.get_string().get(text)) {
                        return e;
                    }
                    if (!PromJson::parseValue(text, &s->value)) {
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
            haveValue = true;
        }
    }
    if (!haveValue) {
        *error = "a series has no \"value\" (a range query's matrix?)";
        return simdjson::INCORRECT_TYPE;
    }
    return simdjson::SUCCESS;
}

} // namespace

bool PromJson::parseVector(
    std::string *body, size_t maxSeries, bool withPlacement, std::vector<PromSample> *out, std::string *error)
{
    out->clear();
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
        out->clear();
        return false;
    };

    od::document doc;
    if (auto e = m_parser->parser.iterate(body->data(), length, body->capacity()).get(doc)) {
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
            e = field.value().get_object().get(data);
            for (auto part : e ? od::object() : data) {
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
                        if (out->size() == maxSeries) {
                            detail = fmt::format("the answer has more than {} series", maxSeries);
                            e = simdjson::CAPACITY;
                            break;
                        }
                        out->emplace_back();
                        if ((e = readSeries(v, withPlacement, &out->back(), &detail))) {
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
        out->clear();
        return false;
    }
    if (status != "success") {
        *error = fmt::format("answer has status '{}', expected 'success'", status);
        out->clear();
        return false;
    }
    if (!haveResult || resultType != "vector") {
        *error = fmt::format("answer has result type '{}', expected an instant vector", resultType);
        out->clear();
        return false;
    }
    return true;
}

} // namespace fleetscope::backend
