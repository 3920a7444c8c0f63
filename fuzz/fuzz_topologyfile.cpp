// SPDX-License-Identifier: Apache-2.0
// Reading an operator's topology file (--topology): the first byte picks the syntax (even JSON, odd YAML), the rest is
// the file's text. A file that is accepted is laid out as the Prometheus and remote-write sources lay it out
// (PrometheusTopology::fromFile), and must describe 1 to FleetShape::maxGpus GPUs in racks of at least one host.
#include "core/fleetshape.h"
#include "dcgm/prometheustopology.h"
#include "formats/topologyfile.h"

#include <string>

namespace {

using namespace fleetscope::backend;

void check(const TopologyFile &file)
{
    uint64_t gpus = 0;
    if (file.rows.empty()) {
        __builtin_trap();
    }
    for (const auto &row : file.rows) {
        for (const auto &rack : row.racks) {
            if (rack.name.empty() || rack.hosts.empty()) {
                __builtin_trap();
            }
            for (const auto &host : rack.hosts) {
                if (host.hostname.empty() || host.gpus < 1 || host.gpus > TopologyFile::maxGpusPerNode) {
                    __builtin_trap();
                }
                gpus += host.gpus;
            }
        }
    }
    if (gpus < 1 || gpus > FleetShape::maxGpus) {
        __builtin_trap();
    }
    const PrometheusTopology topology = PrometheusTopology::fromFile(file);
    if (topology.shape().gpuCount != gpus || topology.shape().nodeOfGpu.size() != gpus) {
        __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
    TopologyFile file;
    std::string error;
    const bool yaml = (data[0] & 1U) != 0;
    const bool parsed = yaml ? TopologyFile::parseYaml(text, &file, &error) : TopologyFile::parse(text, &file, &error);
    if (!parsed) {
        if (error.empty()) {
            __builtin_trap();
        }
        return 0;
    }
    check(file);
    return 0;
}
