// SPDX-License-Identifier: Apache-2.0
// An HTTP door's answers: the reason phrases, the short text of a refusal, and a response handed to libmicrohttpd.
#include "http/responses.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
std::string_view reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return status < 400 ? "OK" : "Error";
    }
}
} // namespace

std::string BoundedHttpServer::refusalText(int status)
{
    return fmt::format("{} {}\n", status, reasonPhrase(status));
}

MHD_Result queueResponse(MHD_Connection *connection, HttpResponse &response)
{
    MHD_Response *r = nullptr;
    if (response.shared) {
        auto *page = new std::shared_ptr<const std::string>(std::move(response.shared));
        r = MHD_create_response_from_callback((*page)->size(), 64 * 1024,
            [](void *cls, uint64_t position, char *buffer, size_t max) -> ssize_t {
                const auto &text = **static_cast<std::shared_ptr<const std::string> *>(cls);
                if (position >= text.size()) {
                    return MHD_CONTENT_READER_END_OF_STREAM;
                }
                const size_t n = std::min<uint64_t>(max, text.size() - position);
                std::memcpy(buffer, text.data() + position, n);
                return static_cast<ssize_t>(n);
            },
            page, [](void *cls) { delete static_cast<std::shared_ptr<const std::string> *>(cls); });
        if (r == nullptr) {
            delete page;
        }
    } else {
        if (response.body.empty() && response.status >= 400) {
            response.body = BoundedHttpServer::refusalText(response.status);
            response.contentType = "text/plain; charset=utf-8";
        }
        if (response.status == 204 || response.status == 304) {
            response.body.clear();
        }
        r = MHD_create_response_from_buffer(response.body.size(), response.body.data(), MHD_RESPMEM_MUST_COPY);
    }
    if (r == nullptr) {
        return MHD_NO;
    }
    if (!response.body.empty() || response.shared || response.status == 200) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, response.contentType.c_str());
    }
    for (const auto &[name, value] : response.headers) {
        MHD_add_response_header(r, name.c_str(), value.c_str());
    }
    const MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(response.status), r);
    MHD_destroy_response(r);
    return queued;
}

} // namespace fleetscope::backend
