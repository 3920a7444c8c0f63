// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

struct sockaddr;

namespace fleetscope::backend {

// The listening socket of an HTTP door, made here rather than by libmicrohttpd: SO_REUSEADDR alone (with SO_REUSEPORT
// a second server on a port in use would start and take half the connections), close-on-exec, a backlog for a
// thousand scrape targets connecting at once. The descriptor, its family in *family; -1 with the reason.
int listenOn(const std::string &host, int port, int *family, std::string *error);

// A peer's address as text, without its port ("10.0.0.7", "::1"); empty for another family.
std::string addressOf(const sockaddr *address);

// Whether host names this machine's loopback only ("127.0.0.1" and the rest of 127/8, "::1", "localhost").
bool isLoopbackHost(std::string_view host);

} // namespace fleetscope::backend
