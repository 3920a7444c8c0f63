// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "formats/jsontext.h"
#include "prometheus/promjson.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// A Prometheus instant-query answer written as Prometheus writes it (Go's float format, its JSON layout), from the
// series of a /metrics page: what bench_promjson parses and serves over loopback.
namespace fleetscope::bench {

// Go's strconv.FormatFloat(v, 'f', -1, 64), which Prometheus uses for sample values and evaluation times.
inline std::string goFloat(double v)
{
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    char buffer[400];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v, std::chars_format::fixed);
    return std::string(buffer, result.ptr);
}

using backend::appendJsonString;

// One series of an exporter page line: NAME{k="v",...} value.
struct PageSeries
{
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
};

inline bool parsePageLine(std::string_view line, PageSeries *out)
{
    const size_t brace = line.find('{');
    if (brace == std::string_view::npos) {
        return false;
    }
    out->name.assign(line.substr(0, brace));
    out->labels.clear();
    size_t pos = brace + 1;
    while (pos < line.size() && line[pos] != '}') {
        const size_t eq = line.find("=\"", pos);
        if (eq == std::string_view::npos) {
            return false;
        }
        std::string key(line.substr(pos, eq - pos));
        std::string value;
        for (pos = eq + 2; pos < line.size() && line[pos] != '"'; ++pos) {
            if (line[pos] == '\\' && pos + 1 < line.size()) {
                ++pos;
                value.push_back(line[pos] == 'n' ? '\n' : line[pos]);
            } else {
                value.push_back(line[pos]);
            }
        }
        out->labels.emplace_back(std::move(key), std::move(value));
        pos += 1; // the closing quote
        if (pos < line.size() && line[pos] == ',') {
            ++pos;
        }
    }
    const std::string_view text = line.substr(std::min(line.size(), pos + 2)); // after "} "
    return fleetscope::backend::PromJson::parseValue(text, &out->value);
}

// What Prometheus answers to an instant query for `name` after scraping the page: one series per line of that
// family with its labels plus __name__, sorted by name as Prometheus keeps them, the value re-formatted as Go does,
// and the evaluation time. With byLabels, the answer to `count by (byLabels) (name)` instead: only those labels, "1".
inline std::string promAnswer(
    const std::string &page, const std::string &name, int64_t evalMs, const std::vector<std::string> &byLabels = {})
{
    const std::string time = goFloat(static_cast<double>(evalMs) / 1000.0);
    std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
    bool first = true;
    PageSeries series;
    std::string_view rest(page);
    const std::string prefix = name + '{';
    while (!rest.empty()) {
        const size_t eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
        if (line.compare(0, prefix.size(), prefix) != 0 || !parsePageLine(line, &series)) {
            continue;
        }
        auto labels = series.labels;
        if (byLabels.empty()) {
            labels.emplace_back("__name__", series.name);
        } else {
            labels.erase(std::remove_if(labels.begin(), labels.end(),
                             [&](const auto &l) {
                                 return std::find(byLabels.begin(), byLabels.end(), l.first) == byLabels.end();
                             }),
                labels.end());
        }
        std::sort(labels.begin(), labels.end());
        out.append(first ? R"({"metric":{)" : R"(,{"metric":{)");
        first = false;
        for (size_t i = 0; i < labels.size(); ++i) {
            if (i > 0) {
                out.push_back(',');
            }
            appendJsonString(&out, labels[i].first);
            out.push_back(':');
            appendJsonString(&out, labels[i].second);
        }
        out.append(R"(},"value":[)");
        out.append(time);
        out.append(",\"");
        out.append(byLabels.empty() ? goFloat(series.value) : std::string("1"));
        out.append("\"]}");
    }
    out.append("]}}");
    return out;
}

} // namespace fleetscope::bench
