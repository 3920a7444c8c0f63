// SPDX-License-Identifier: Apache-2.0
// The exporter's node targets as a Prometheus file_sd file (ExporterServer::fileSdTargets, writeTargetsFile).
#include "core/jsontext.h"
#include "sim/exporterserver.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace fleetscope::backend {

std::string ExporterServer::fileSdTargets(const FleetShape &shape, const std::string &address)
{
    std::string json = "[\n";
    for (size_t k = 0; k < shape.nodes.size(); ++k) {
        const std::string &hostname = shape.nodes[k].hostname;
        json.append("  {\"targets\": [");
        appendJsonString(&json, address);
        json.append("], \"labels\": {\"__metrics_path__\": ");
        appendJsonString(&json, "/metrics/" + hostname);
        json.append(", \"instance\": ");
        appendJsonString(&json, hostname);
        json.append(k + 1 < shape.nodes.size() ? "}},\n" : "}}\n");
    }
    json.append("]\n");
    return json;
}

bool ExporterServer::writeTargetsFile(const std::string &path, std::string *error) const
{
    // A scraper cannot connect to a wildcard address: loopback stands for it.
    std::string address = listeningAddress();
    if (address.rfind("0.0.0.0:", 0) == 0) {
        address.replace(0, 7, "127.0.0.1");
    } else if (address.rfind("[::]:", 0) == 0) {
        address.replace(0, 4, "[::1]");
    }
    const std::string json = fileSdTargets(m_source.shape(), address);
    // Written beside the file and renamed over it: a rename within a directory replaces the file at once.
    const std::string partial = path + ".partial";
    FILE *file = std::fopen(partial.c_str(), "wb");
    if (file == nullptr) {
        *error = fmt::format("cannot write '{}': {}", partial, std::strerror(errno));
        return false;
    }
    const bool written = std::fwrite(json.data(), 1, json.size(), file) == json.size();
    const int writeErrno = errno;
    if (std::fclose(file) != 0 || !written) {
        *error = fmt::format("cannot write '{}': {}", partial, std::strerror(written ? errno : writeErrno));
        std::remove(partial.c_str());
        return false;
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        *error = fmt::format("cannot rename '{}' to '{}': {}", partial, path, std::strerror(errno));
        std::remove(partial.c_str());
        return false;
    }
    return true;
}

} // namespace fleetscope::backend
