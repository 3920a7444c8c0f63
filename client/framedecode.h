// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): a frame's parts, as Subscribe streams them, joined into one Frame for a
// topology.

#include "client/topologydecode.h"

#include <memory>
#include <string>
#include <vector>

namespace fleetscope {

// Planes of a frame allocated for the whole fleet at its first part: up to this many values (64 MiB, a million GPUs
// at 16 metrics). A frame of more (the backend's default set is the backend's choice) grows as its parts bring values,
// so that what is allocated is never more than what arrived (twice, for 16-bit planes), whatever the parts claim.
constexpr uint64_t maxPlaneValuesUpFront = uint64_t { 16 } * maxGpus;

// Reassembles the parts of a frame into one Frame for a given topology. Feed parts in the order received; a part
// that does not fit (wrong plane length, another GPU count, parts out of order, unknown encoding, planes other than
// those subscribed) drops the frame being assembled and reports why, and the next frame starts clean.
//
// Every part covers at least one GPU (so a frame has at most as many parts as the fleet has GPUs) and carries the same
// planes, each once: nothing a part claims is multiplied by the fleet's size unchecked (a part of no GPU with a million
// empty planes passed every check once, and its first part sized a million planes to the fleet: tens of GB from 4 MB
// on the wire).
class FrameAssembler
{
public:
    // subscribed: the metric ids the subscription named (repeats count once); every part carries exactly these planes,
    // in any order. Empty: the backend's default set, which the console does not know; then the first part's planes
    // (distinct ids a view can carry, at most maxCatalogueMetrics of them) are what the frame's other parts carry.
    explicit FrameAssembler(TopologyPtr topology, std::vector<std::string> subscribed = {});

    struct Result
    {
        FramePtr frame; // set when this part completed a frame
        QString error; // set when this part was rejected
    };
    Result add(const pb::FramePart &part);

private:
    QString check(const pb::FramePart &part) const;
    QString checkPlanes(const pb::FramePart &part) const;
    void reset();

    TopologyPtr m_topology;
    std::vector<std::string> m_subscribed; // distinct; empty: the default set
    std::shared_ptr<Frame> m_building;
    std::vector<std::string> m_planeIds; // of the frame being built, in its planes' order, as the wire spells them
    uint32_t m_nextPart = 0;
    uint32_t m_partCount = 0; // of the frame being built
    uint32_t m_covered = 0;
};

} // namespace fleetscope
