// SPDX-License-Identifier: Apache-2.0
#include "http/requesthead.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <iterator>
#include <utility>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
bool equalsIgnoringCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

bool containsToken(std::string_view list, std::string_view token)
{
    for (size_t start = 0; start <= list.size();) {
        const size_t end = std::min(list.find(',', start), list.size());
        if (equalsIgnoringCase(trimmed(list.substr(start, end - start)), token)) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

bool isTokenChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}
} // namespace

bool RequestHead::parse(std::string_view head, RequestHead *r)
{
    std::string_view version;
    std::string_view connection;
    bool haveLength = false;
    for (size_t start = 0, end = 0; start <= head.size(); start = end + 2) {
        end = std::min(head.find("\r\n", start), head.size());
        const std::string_view line = head.substr(start, end - start);
        if (line.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
            return false;
        }
        if (start == 0) {
            const size_t sp1 = line.find(' ');
            const size_t sp2 = sp1 == line.npos ? sp1 : line.find(' ', sp1 + 1);
            const std::string_view method = line.substr(0, sp1);
            const std::string_view target = sp2 == line.npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
            version = sp2 == line.npos ? "" : line.substr(sp2 + 1);
            if (method.empty() || !std::all_of(method.begin(), method.end(), isTokenChar) || target.empty()
                || target.front() != '/' || (version != "HTTP/1.1" && version != "HTTP/1.0")) {
                return false;
            }
            r->method = method;
            continue;
        }
        const size_t colon = line.find(':');
        if (colon == 0 || colon == line.npos || !std::all_of(line.begin(), line.begin() + colon, isTokenChar)) {
            return false;
        }
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = trimmed(line.substr(colon + 1));
        if (equalsIgnoringCase(name, "connection")) {
            connection = value;
        } else if (equalsIgnoringCase(name, "transfer-encoding")) {
            r->chunked = true;
        } else if (equalsIgnoringCase(name, "expect")) {
            r->expectContinue = equalsIgnoringCase(value, "100-continue");
        } else if (equalsIgnoringCase(name, "content-length")) {
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), r->contentLength);
            if (haveLength || value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
                return false;
            }
            haveLength = true;
        }
    }
    r->keepAlive
        = version == "HTTP/1.1" ? !containsToken(connection, "close") : containsToken(connection, "keep-alive");
    return true;
}

std::string_view reasonPhrase(int status)
{
    static constexpr std::pair<int, std::string_view> reasons[]
        = { { 400, "Bad Request" }, { 404, "Not Found" }, { 405, "Method Not Allowed" }, { 408, "Request Timeout" },
              { 413, "Payload Too Large" }, { 414, "URI Too Long" }, { 415, "Unsupported Media Type" },
              { 416, "Range Not Satisfiable" }, { 429, "Too Many Requests" },
              { 431, "Request Header Fields Too Large" }, { 501, "Not Implemented" }, { 503, "Service Unavailable" } };
    const auto it
        = std::find_if(std::begin(reasons), std::end(reasons), [&](const auto &r) { return r.first == status; });
    return it != std::end(reasons) ? it->second : status < 500 ? "Client Error" : "Server Error";
}

std::string refusalText(int status)
{
    return fmt::format("{} {}\n", status, reasonPhrase(status));
}

std::string refusalResponse(int status, bool keepAlive, std::string_view extraHeaders)
{
    const std::string body = refusalText(status);
    return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{}"
                       "Connection: {}\r\n\r\n{}",
        status, reasonPhrase(status), body.size(), extraHeaders, keepAlive ? "keep-alive" : "close", body);
}

} // namespace fleetscope::backend
