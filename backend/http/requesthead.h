// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fleetscope::backend {

// What of an HTTP/1.1 request's head decides how it is framed and answered, read strictly before httplib sees it
// (httplib would let through a header line without a colon, a bare CR or LF, a second Content-Length).
struct RequestHead
{
    std::string_view method; // into the head parsed
    bool keepAlive = false; // as the client asks, by its version and Connection header
    size_t contentLength = 0;
    bool chunked = false; // any Transfer-Encoding
    bool expectContinue = false; // Expect: 100-continue

    // Parses the request line and headers (head ends before the blank line). False when malformed: a line that is not
    // METHOD /TARGET HTTP/1.x, a header line that is not NAME: VALUE, a bare CR or LF, a NUL, a bad or second
    // Content-Length.
    static bool parse(std::string_view head, RequestHead *out);
};

// "Not Found" for 404, a generic phrase for a status not listed.
std::string_view reasonPhrase(int status);
// The short text every refusal has for a body: "404 Not Found\n".
std::string refusalText(int status);
// A whole answer with refusalText for a body, written without httplib (for requests never handed to it);
// extraHeaders are whole lines ("Retry-After: 1\r\n").
std::string refusalResponse(int status, bool keepAlive, std::string_view extraHeaders = {});

} // namespace fleetscope::backend
