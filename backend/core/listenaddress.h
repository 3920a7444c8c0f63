// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace fleetscope::backend {

// Splits a listening address, HOST:PORT or [IPv6]:PORT (port 0: any free one), as the exporter and the remote-write
// receiver take it. False with the reason in *error when it is neither or the port is not 0 to 65535.
bool splitListenAddress(const std::string &address, std::string *host, int *port, std::string *error);

} // namespace fleetscope::backend
