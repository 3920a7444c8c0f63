// SPDX-License-Identifier: Apache-2.0
#include "http/listensocket.h"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace fleetscope::backend {

int listenOn(const std::string &host, int port, int *family, std::string *error)
{
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo *found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0 || found == nullptr) {
        *error = fmt::format("cannot resolve '{}': {}", host, gai_strerror(rc));
        return -1;
    }
    const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || (found->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
        || bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        *error = fmt::format("cannot listen on {}:{}: {}", host, port, std::strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        freeaddrinfo(found);
        return -1;
    }
    *family = found->ai_family;
    freeaddrinfo(found);
    return fd;
}

std::string addressOf(const sockaddr *address)
{
    char text[INET6_ADDRSTRLEN] = {};
    if (address == nullptr) {
        return {};
    }
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(address)->sin_addr, text, sizeof text);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(address)->sin6_addr, text, sizeof text);
    }
    return text;
}

bool isLoopbackHost(std::string_view host)
{
    if (host == "localhost" || host == "::1" || host == "[::1]") {
        return true;
    }
    in_addr v4 {};
    const std::string text(host);
    return inet_pton(AF_INET, text.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

} // namespace fleetscope::backend
