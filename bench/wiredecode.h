// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/protodecode.h"

#include <string>
#include <vector>

namespace fleetscope::bench {

// What the console makes of a frame's serialised parts, as it reads them off the wire: null when they do not add
// up to a frame.
inline FramePtr decodeWire(const TopologyPtr &topology, const std::vector<std::string> &wire)
{
    FramePtr decoded;
    FrameAssembler assembler(topology);
    pb::FramePart part;
    for (const auto &w : wire) {
        part.ParseFromString(w);
        if (auto r = assembler.add(part); r.frame) {
            decoded = r.frame;
        }
    }
    return decoded;
}

} // namespace fleetscope::bench
