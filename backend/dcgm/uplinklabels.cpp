// SPDX-License-Identifier: Apache-2.0
#include "dcgm/uplinklabels.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace fleetscope::backend {

const char *UplinkLabels::why(Refusal refusal)
{
    switch (refusal) {
    case Refusal::None:
        return "read";
    case Refusal::NoHca:
        return "no hca label";
    case Refusal::NoNic:
        return "hca names no NIC (one word, not '<host> <device>')";
    case Refusal::BadHca:
        return "hca is not '<host> <device>' of printable text up to 64 bytes";
    case Refusal::NoUplink:
        return "no uplink label";
    case Refusal::BadUplink:
        return "uplink is not printable text up to 64 bytes";
    case Refusal::NotASwitch:
        return "uplink_type is not SW (an HCA cabled to another HCA)";
    case Refusal::BadPort:
        return "uplink_port or port is not a port number from 1 to 65535";
    case Refusal::Count:
        break;
    }
    return "unknown";
}

bool UplinkLabels::isName(std::string_view text)
{
    return !text.empty() && text.size() <= maxNameBytes
        && std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool UplinkLabels::isText(std::string_view text)
{
    return !text.empty() && text.size() <= maxNameBytes && text.front() != ' ' && text.back() != ' '
        && std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool UplinkLabels::parsePort(std::string_view text, uint32_t *port)
{
    if (text.empty() || text.size() > 5) {
        return false;
    }
    uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > maxPort) {
        return false;
    }
    *port = value;
    return true;
}

void UplinkLabels::Series::read(std::string_view name, std::string_view value)
{
    if (name == "hca") {
        hca.assign(value);
    } else if (name == "port") {
        port.assign(value);
    } else if (name == "uplink") {
        uplink.assign(value);
    } else if (name == "uplink_port") {
        uplinkPort.assign(value);
    } else if (name == "uplink_type") {
        uplinkType.assign(value);
    }
}

UplinkLabels::Refusal UplinkLabels::read(const Series &series, Uplink *out)
{
    std::string_view hca = series.hca;
    if (hca.empty()) {
        return Refusal::NoHca;
    }
    if (hca.size() > maxNameBytes) {
        return Refusal::BadHca;
    }
    const size_t space = hca.find(' ');
    if (space == std::string_view::npos) {
        return isName(hca) ? Refusal::NoNic : Refusal::BadHca;
    }
    const std::string_view host = hca.substr(0, space);
    const std::string_view nic = hca.substr(space + 1);
    if (!isName(host) || !isName(nic)) {
        return Refusal::BadHca; // a third word, a double space, a control character
    }
    if (series.uplink.empty()) {
        return Refusal::NoUplink;
    }
    // A switch's description may hold spaces ("MF0;leaf01:MQM9700/U1", "Quantum Mellanox Technologies").
    if (!isText(series.uplink)) {
        return Refusal::BadUplink;
    }
    if (!series.uplinkType.empty() && series.uplinkType != "SW") {
        return Refusal::NotASwitch;
    }
    Uplink uplink;
    uplink.hcaPort = 1; // an exporter that does not say the HCA's port has one
    if (!parsePort(series.uplinkPort, &uplink.port)
        || (!series.port.empty() && !parsePort(series.port, &uplink.hcaPort))) {
        return Refusal::BadPort;
    }
    uplink.host = host;
    uplink.nic = nic;
    uplink.leaf = series.uplink;
    *out = uplink;
    return Refusal::None;
}

std::string UplinkLabels::example(const Series &s)
{
    auto printable = [](const std::string &text, size_t bytes) {
        std::string out = text.substr(0, bytes);
        std::replace_if(
            out.begin(), out.end(), [](char c) { return c < 0x20 || c >= 0x7f; }, '?');
        return out;
    };
    return fmt::format("hca '{}' port '{}' uplink '{}' port '{}'", printable(s.hca, 80), printable(s.port, 8),
        printable(s.uplink, 80), printable(s.uplinkPort, 8));
}

std::string UplinkLabels::query()
{
    return fmt::format("max by (hca, port, uplink, uplink_port, uplink_type) ({})", seriesName);
}

} // namespace fleetscope::backend
