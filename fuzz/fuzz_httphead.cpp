// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 request heads the backend's endpoints (the simulator's exporter pages, the remote-write receiver) read
// before httplib sees them: RequestHead::parse, on the requests of one connection's bytes cut as BoundedHttpServer
// cuts them (a head up to its blank line, within the default 16 KiB; then Content-Length bytes of body, within the
// default 64 KiB; then the next request). What the server does after the head (httplib's parsing, the handler) needs
// its sockets and is not reached here. An accepted head must hold no NUL, bare CR or LF, and a method of token
// characters taken from its request line.
#include "http/boundedhttpserver.h"
#include "http/requesthead.h"

#include "fuzz/fuzzinput.h"

#include <cstring>
#include <string_view>

namespace {

using namespace fleetscope::backend;

bool isTokenChar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

// Every CR is followed by LF and every LF preceded by CR, and there is no NUL.
bool onlyCrLfPairs(std::string_view head)
{
    for (size_t i = 0; i < head.size(); ++i) {
        const char c = head[i];
        if (c == '\0' || (c == '\r' && (i + 1 == head.size() || head[i + 1] != '\n'))
            || (c == '\n' && (i == 0 || head[i - 1] != '\r'))) {
            return false;
        }
    }
    return true;
}

void checkAccepted(std::string_view head, const RequestHead &request)
{
    const std::string_view method = request.method;
    if (method.empty() || method.data() != head.data() || method.size() >= head.size() || head[method.size()] != ' ') {
        __builtin_trap(); // the method is not the request line's first word
    }
    for (const char c : method) {
        if (!isTokenChar(c)) {
            __builtin_trap();
        }
    }
    if (!onlyCrLfPairs(head)) {
        __builtin_trap(); // a bare CR or LF, or a NUL, let through (request smuggling)
    }
    const std::string_view line = head.substr(0, std::min(head.find("\r\n"), head.size()));
    if (line.size() < 8 || (line.substr(line.size() - 8) != "HTTP/1.1" && line.substr(line.size() - 8) != "HTTP/1.0")) {
        __builtin_trap();
    }
    if (request.contentLength > 0 && head.find(':') == std::string_view::npos) {
        __builtin_trap(); // a length from nowhere
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const BoundedHttpServer::Limits limits;
    std::string_view rest(reinterpret_cast<const char *>(data), size);
    size_t sum = 0;
    for (int requests = 0; requests < 16 && !rest.empty(); ++requests) {
        const size_t headEnd = rest.find("\r\n\r\n");
        if (headEnd == std::string_view::npos || headEnd > limits.maxHeaderBytes) {
            break; // 431, or the connection waits for more
        }
        const std::string_view head = rest.substr(0, headEnd);
        RequestHead request;
        if (!RequestHead::parse(head, &request)) {
            sum += refusalResponse(400, false).size();
            break;
        }
        checkAccepted(head, request);
        if (request.chunked || request.contentLength > limits.maxBodyBytes) {
            sum += refusalResponse(request.chunked ? 501 : 413, false).size();
            break;
        }
        sum += request.method.size() + (request.keepAlive ? 1 : 0) + (request.expectContinue ? 1 : 0);
        const size_t requestEnd = headEnd + 4 + request.contentLength;
        if (requestEnd > rest.size() || !request.keepAlive) {
            break;
        }
        rest.remove_prefix(requestEnd);
    }
    fleetscope::fuzz::sink = sum;
    return 0;
}
