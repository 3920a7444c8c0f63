// SPDX-License-Identifier: Apache-2.0
#include "dcgm/metricmap.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

// The dcgm-exporter generations, as documented upstream (NVIDIA/dcgm-exporter):
// - Series names: etc/default-counters.csv names each series after its DCGM field (DCGM_FI_DEV_GPU_TEMP, ...), in
//   the units its help texts give: W, MiB, MHz, %, C; the same in every 2.x, 3.x and 4.x release read (up to 4.8.3,
//   raw.githubusercontent.com/NVIDIA/dcgm-exporter/4.6.0-4.8.3/etc/default-counters.csv). So no built-in profile
//   converts units.
// - 1.x-compatible names: etc/1.x-compatibility-metrics.csv ("Enable 1.x backwards compatibility", release 2.3.0)
//   names them dcgm_gpu_temp, dcgm_power_usage, ... in the same units, with the 2.x labels (Hostname, UUID, gpu: see
//   the output quoted in NVIDIA/dcgm-exporter#188). It has no clock-event-reasons series.
// - Clock event reasons: DCGM's field 112 was DCGM_FI_DEV_CLOCK_THROTTLE_REASONS and is now
//   DCGM_FI_DEV_CLOCKS_EVENT_REASONS (go-dcgm's const.go); the exporter names the series after the field name its
//   CSV gives, so both occur (the old name on a 3.x exporter: NVIDIA/dcgm-exporter#317; the exporter's own metric
//   followed the rename in #261).
// - Remapped rows (DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS): counters in the
//   default CSV under their field names, in every generation read here but the 1.x-compatible one, which has none.
// - The node label: Hostname until #655 renamed it hostname, released in 4.6.0-4.8.3 ("Rename the Hostname label to
//   hostname").
// Not built in: 4.9.0 renames the 23 default fields DCGM 4.7 deprecates and changes eleven units (clocks to Hz,
// energy to J, utilisation to a 0-1 ratio, memory to bytes) and the driver label to DCGM_FI_SYSTEM_DRIVER_VERSION
// (its release notes); the driver label is read under both names here, but the new series names are not listed in
// the notes we could read, so a 4.9 fleet needs --metric-map (README gives an example).
struct ProfileDef
{
    MetricMap::Profile profile;
    const char *name; // with its usual node label
    const char *hostnameLabel;
    std::array<const char *, static_cast<size_t>(MetricId::Count)> series; // nullptr: the catalogue's dcgmField
};

constexpr const char *catalogue = nullptr;
constexpr const char *none = "";

const ProfileDef profileDefs[] = {
    { MetricMap::Profile::Compat1x, "1.x-compatible names", "Hostname",
        { "dcgm_gpu_temp", "dcgm_memory_temp", "dcgm_power_usage", "dcgm_gpu_utilization", "dcgm_mem_copy_utilization",
            "dcgm_sm_clock", "dcgm_fb_used", "dcgm_xid_errors", "dcgm_ecc_sbe_volatile_total",
            "dcgm_ecc_dbe_volatile_total", "dcgm_nvlink_flit_crc_error_count_total", "dcgm_pcie_replay_counter", none,
            none, none, none, none, none } },
    { MetricMap::Profile::Gen2x3x, "2.x-3.x", "Hostname",
        { catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue,
            catalogue, catalogue, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", catalogue } },
    { MetricMap::Profile::Gen3x482, "3.x-4.8.2", "Hostname",
        { catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue,
            catalogue, catalogue, catalogue, catalogue } },
    { MetricMap::Profile::Gen483, "4.8.3+", "hostname",
        { catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue, catalogue,
            catalogue, catalogue, catalogue, catalogue } },
};

const ProfileDef &defOf(MetricMap::Profile p)
{
    return profileDefs[static_cast<size_t>(p)];
}

bool isNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9');
}

// Prometheus' metric names ([a-zA-Z_:][a-zA-Z0-9_:]*) and label names ([a-zA-Z_][a-zA-Z0-9_]*): they go into PromQL
// unquoted, so nothing else may pass.
bool isMetricName(std::string_view s)
{
    return !s.empty() && (isNameStart(s.front()) || s.front() == ':')
        && std::all_of(s.begin(), s.end(), [](char c) { return isNameChar(c) || c == ':'; });
}

bool isLabelName(std::string_view s)
{
    return !s.empty() && isNameStart(s.front()) && std::all_of(s.begin(), s.end(), isNameChar);
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

std::vector<std::string_view> words(std::string_view s)
{
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
            ++i;
        }
        const size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') {
            ++i;
        }
        if (i > start) {
            out.push_back(s.substr(start, i - start));
        }
    }
    return out;
}

bool parseNumber(std::string_view text, double *value)
{
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && std::isfinite(*value);
}

} // namespace

void MetricMap::set(MetricId id, std::string series, Conversion conversion)
{
    m_series[static_cast<size_t>(id)] = std::move(series);
    m_conversions[static_cast<size_t>(id)] = conversion;
}

MetricMap MetricMap::profile(Profile p)
{
    const auto &def = defOf(p);
    MetricMap map;
    map.m_name = fmt::format("{} (label {})", def.name, def.hostnameLabel);
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        // The fabric's and the facility's series are node-exporter's and the site's, under the same names whatever
        // dcgm-exporter's generation: the catalogue's.
        map.m_series[m] = def.series[m] ? std::string(def.series[m]) : metricCatalog()[m].dcgmField;
    }
    map.m_conversions[static_cast<size_t>(MetricId::RailTransmitWait)].scale = transmitWaitScale;
    // NVLink's data CRC errors, summed with its flow-control ones (summedMetrics): named after the DCGM field in
    // every generation's default-counters.csv, dcgm_nvlink_data_crc_error_count_total in the 1.x-compatible one
    // (commented out in both by default, as the flow-control ones are: a site enables them).
    map.m_secondSeries[static_cast<size_t>(MetricId::NvlinkErrors)] = p == Profile::Compat1x
        ? "dcgm_nvlink_data_crc_error_count_total"
        : "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL";
    const std::string other = std::string_view(def.hostnameLabel) == "hostname" ? "Hostname" : "hostname";
    map.m_labels.hostname = { def.hostnameLabel, other };
    return map;
}

std::vector<std::string> MetricMap::allProfileNames()
{
    std::vector<std::string> out;
    for (const auto p : allProfiles) {
        const auto map = profile(p);
        for (const auto *names : { &map.m_series, &map.m_secondSeries }) {
            for (const auto &name : *names) {
                if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
                    out.push_back(name);
                }
            }
        }
    }
    return out;
}

std::vector<std::string> MetricMap::allProfileHostnameLabels()
{
    return { "Hostname", "hostname" };
}

MetricMap MetricMap::choose(
    const std::vector<std::string> &namesPresent, std::string_view hostnameLabel, std::vector<std::string> *adopted)
{
    auto present = [&](const std::string &name) {
        return !name.empty() && std::find(namesPresent.begin(), namesPresent.end(), name) != namesPresent.end();
    };
    // The generation of names: the most names present; of equals the newer.
    Profile best = Profile::Gen3x482;
    int bestScore = -1;
    for (const auto p : { Profile::Compat1x, Profile::Gen2x3x, Profile::Gen3x482 }) {
        const auto map = profile(p);
        const auto score = static_cast<int>(
            std::count_if(map.m_series.begin(), map.m_series.end(), [&](const auto &n) { return present(n); }));
        if (score >= bestScore) {
            best = p;
            bestScore = score;
        }
    }
    // The node label decides 4.8.3+ (its CSVs name the reasons' field the new way; an old name there is adopted).
    if (best != Profile::Compat1x && hostnameLabel == "hostname") {
        best = Profile::Gen483;
    }
    MetricMap map = profile(best);
    if (hostnameLabel == "hostname" && map.hostnameLabel() != "hostname") {
        map.m_labels.hostname = { "hostname", "Hostname" };
        map.m_name = fmt::format("{} (label hostname)", defOf(best).name);
    }
    for (size_t m = 0; m < map.m_series.size(); ++m) {
        if (present(map.m_series[m])) {
            continue; // also: a metric the profile has no series for may be read from another's (health has none)
        }
        for (const auto p : allProfiles) {
            const std::string other = profile(p).m_series[m];
            if (other != map.m_series[m] && present(other)) {
                adopted->push_back(fmt::format("{} from {}", metricCatalog()[m].key, other));
                map.m_series[m] = other;
                break;
            }
        }
    }
    return map;
}

std::optional<MetricMap::Mapped> MetricMap::metric(std::string_view seriesName) const
{
    for (size_t m = 0; m < m_series.size(); ++m) {
        if (!m_series[m].empty() && m_series[m] == seriesName) {
            return Mapped { static_cast<MetricId>(m), m_conversions[m], 0 };
        }
        if (!m_secondSeries[m].empty() && m_secondSeries[m] == seriesName) {
            return Mapped { static_cast<MetricId>(m), m_conversions[m], 1 };
        }
    }
    return std::nullopt;
}

std::vector<std::string> MetricMap::seriesNames(MetricId id) const
{
    std::vector<std::string> out;
    for (const auto *names : { &m_series, &m_secondSeries }) {
        if (const auto &name = (*names)[static_cast<size_t>(id)]; !name.empty()) {
            out.push_back(name);
        }
    }
    return out;
}

std::string MetricMap::increaseQuery(MetricId id, const std::string &selector) const
{
    const auto names = seriesNames(id);
    if (names.size() < 2) {
        return fmt::format(
            "increase({}{}[5m])", names.empty() ? std::string("fleetscope_none") : names.front(), selector);
    }
    // increase() drops the series' name, so two series of one GPU would collide in one expression over both names;
    // each part gets a label of its own first, and the sum drops it again.
    std::string parts;
    for (size_t i = 0; i < names.size(); ++i) {
        parts += fmt::format(R"({}label_replace(increase({}{}[5m]), "fleetscope_part", "{}", "", ""))",
            i == 0 ? "" : " or ", names[i], selector, i);
    }
    return fmt::format("sum without (fleetscope_part) ({})", parts);
}

MetricMap::Scope MetricMap::scopeOf(MetricId id)
{
    switch (id) {
    case MetricId::RailLinkState:
    case MetricId::RailLinkDowns:
    case MetricId::RailSymbolErrors:
    case MetricId::RailReceiveErrors:
    case MetricId::RailTransmitWait:
        return Scope::Nic;
    case MetricId::CoolantSupplyTemp:
    case MetricId::CoolantReturnTemp:
    case MetricId::CoolantFlow:
    case MetricId::LeakDetected:
        return Scope::Rack;
    default:
        return Scope::Gpu;
    }
}

std::string_view MetricMap::hostOf(std::string_view hostname, std::string_view instance)
{
    if (!hostname.empty()) {
        return hostname;
    }
    if (!instance.empty() && instance.front() == '[') { // [::1]:9100
        const size_t close = instance.find(']');
        return close == std::string_view::npos ? instance : instance.substr(1, close - 1);
    }
    const size_t colon = instance.find(':');
    return colon != std::string_view::npos && instance.find(':', colon + 1) == std::string_view::npos
        ? instance.substr(0, colon)
        : instance;
}

void MetricMap::readLabel(std::string_view name, std::string_view value, Identity *id) const
{
    if (name == m_labels.gpu) {
        id->gpu = value;
        return;
    }
    if (name == m_labels.nic) {
        id->nic = value;
        return;
    }
    if (name == m_labels.instance) {
        id->instance = value;
        return;
    }
    if (name == m_labels.rack) {
        id->rack = value;
        return;
    }
    for (size_t r = 0; r < m_labels.hostname.size(); ++r) {
        if (name == m_labels.hostname[r]) {
            if (id->hostnameRank < 0 || static_cast<int>(r) < id->hostnameRank) {
                id->hostname = value;
                id->hostnameRank = static_cast<int>(r);
            }
            return;
        }
    }
}

MetricMap::Identity MetricMap::identify(const std::vector<std::pair<std::string_view, std::string_view>> &labels) const
{
    Identity id;
    for (const auto &[name, value] : labels) {
        readLabel(name, value, &id);
    }
    return id;
}

bool MetricMap::load(const std::string &path, MetricMap *out, std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = fmt::format("{}: cannot read it", path);
        return false;
    }
    std::string text(maxFileBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > maxFileBytes) {
        *error = fmt::format("{}: is larger than {} KiB; a metric map is a few lines", path, maxFileBytes / 1024);
        return false;
    }
    if (!parse(text, out, error)) {
        *error = fmt::format("{}: {}", path, *error);
        return false;
    }
    out->m_name = path;
    return true;
}

bool MetricMap::parse(std::string_view text, MetricMap *out, std::string *error)
{
    MetricMap map;
    map.m_name = "metric map";
    std::array<bool, static_cast<size_t>(MetricId::Count)> mapped {};
    size_t lineNumber = 0;
    while (!text.empty()) {
        const size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        ++lineNumber;
        if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
            line = line.substr(0, hash);
        }
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        auto fail = [&](const std::string &why) {
            *error = fmt::format("line {}: {} (in '{}')", lineNumber, why, line);
            return false;
        };
        const size_t eq = line.find('=');
        if (eq == std::string_view::npos) {
            return fail("expected 'SERIES = CATALOGUE-KEY [* SCALE] [+ OFFSET]' or 'label KIND = NAME...'");
        }
        const auto left = words(line.substr(0, eq));
        const auto right = words(line.substr(eq + 1));
        if (left.size() == 2 && left[0] == "label") {
            if (right.empty()) {
                return fail("a label line names at least one label");
            }
            for (const auto &w : right) {
                if (!isLabelName(w)) {
                    return fail(fmt::format("'{}' is not a Prometheus label name", w));
                }
            }
            auto &labels = map.m_labels;
            const bool several = left[1] == "hostname" || left[1] == "driver";
            if (!several && right.size() != 1) {
                return fail(fmt::format("the {} label has one name", left[1]));
            }
            if (left[1] == "hostname" || left[1] == "driver") {
                (left[1] == "hostname" ? labels.hostname : labels.driver).assign(right.begin(), right.end());
            } else if (left[1] == "gpu") {
                labels.gpu = right[0];
            } else if (left[1] == "uuid") {
                labels.uuid = right[0];
            } else if (left[1] == "model") {
                labels.model = right[0];
            } else {
                return fail(fmt::format("no label kind '{}'; one of hostname, gpu, uuid, model, driver", left[1]));
            }
            continue;
        }
        if (left.size() != 1 || !isMetricName(left[0])) {
            return fail("the left side is one Prometheus metric name");
        }
        if (right.empty()) {
            return fail("no catalogue key after '='");
        }
        const auto id = metricByKey(std::string(right[0]));
        if (!id || metricCatalog()[static_cast<size_t>(*id)].dcgmField.empty()) {
            std::string keys;
            for (const auto &m : metricCatalog()) {
                if (!m.dcgmField.empty()) {
                    keys += (keys.empty() ? "" : ", ") + m.key;
                }
            }
            return fail(fmt::format("'{}' is not a catalogue metric read from a series; one of {}", right[0], keys));
        }
        const auto m = static_cast<size_t>(*id);
        // A summed metric (nvlink_errors) takes a second series, summed with the first.
        const bool summable = std::find(summedMetrics.begin(), summedMetrics.end(), *id) != summedMetrics.end();
        const bool second = mapped[m] && summable && map.m_secondSeries[m].empty();
        if (mapped[m] && !second) {
            return fail(summable ? fmt::format("{} is mapped three times; it sums at most two series", right[0])
                                 : fmt::format("{} is mapped twice; one series per metric", right[0]));
        }
        if (map.metric(left[0])) {
            return fail(fmt::format("{} is mapped twice", left[0]));
        }
        Conversion conversion;
        if (*id == MetricId::RailTransmitWait) {
            conversion.scale = transmitWaitScale; // ticks to a %, unless the line says otherwise
        }
        size_t i = 1;
        if (i < right.size() && right[i] == "*") {
            if (i + 1 >= right.size() || !parseNumber(right[i + 1], &conversion.scale) || conversion.scale == 0.0) {
                return fail("'*' takes a finite, non-zero number");
            }
            i += 2;
        }
        if (i < right.size() && right[i] == "+") {
            if (i + 1 >= right.size() || !parseNumber(right[i + 1], &conversion.offset)) {
                return fail("'+' takes a finite number (negative for a subtraction)");
            }
            i += 2;
        }
        if (i < right.size()) {
            return fail(
                fmt::format("unexpected '{}'; after the key only '* SCALE' and '+ OFFSET', in that order", right[i]));
        }
        if (second) {
            const auto &first = map.m_conversions[m];
            if (conversion.scale != first.scale || conversion.offset != first.offset) {
                return fail(fmt::format("the second series of {} takes the first one's conversion", right[0]));
            }
            map.m_secondSeries[m] = std::string(left[0]);
            continue;
        }
        mapped[m] = true;
        map.set(*id, std::string(left[0]), conversion);
    }
    for (size_t m = 0; m < mapped.size(); ++m) {
        if (!mapped[m]) {
            map.m_series[m].clear(); // a metric the site left out has no series: no data
        }
    }
    if (map.seriesName(MetricId::GpuTemp).empty()) {
        *error = "no series for gpu_temp; discovery and sample times read it";
        return false;
    }
    *out = std::move(map);
    return true;
}

} // namespace fleetscope::backend
