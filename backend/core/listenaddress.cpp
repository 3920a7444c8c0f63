// SPDX-License-Identifier: Apache-2.0
#include "core/listenaddress.h"

#include <charconv>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace fleetscope::backend {

bool splitListenAddress(const std::string &address, std::string *host, int *port, std::string *error)
{
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
        *error = fmt::format("'{}' is not HOST:PORT", address);
        return false;
    }
    std::string h = address.substr(0, colon);
    if (h.front() == '[') {
        if (h.size() < 3 || h.back() != ']') {
            *error = fmt::format("'{}' is not HOST:PORT", address);
            return false;
        }
        h = h.substr(1, h.size() - 2);
    }
    const std::string p = address.substr(colon + 1);
    int value = -1;
    const auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
    if (ec != std::errc() || ptr != p.data() + p.size() || value < 0 || value > 65535) {
        *error = fmt::format("'{}': the port must be a number from 0 to 65535", address);
        return false;
    }
    *host = std::move(h);
    *port = value;
    return true;
}

} // namespace fleetscope::backend
