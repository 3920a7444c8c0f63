// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"
#include "core/metriccatalog.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace fleetscope::backend {

// One encoding of each thing many calls send, shared while they send it. The first call to ask for a key encodes it;
// calls asking meanwhile wait for that encoding rather than make their own. Each key has an order (a frame's
// sequence, a topology's generation): the encodings of the newest `kept` orders are held for calls still to ask (a
// subscriber finishing the previous frame); older ones only while some call holds them (a weak reference), and are
// encoded again once none does. So what is held, beyond what calls are sending, is the newest frames' encodings.
//
// Locking: m_mutex guards m_entries, m_newest and the counts; encoding runs outside it.
template <typename Key, typename Parts> class EncodingTable
{
public:
    explicit EncodingTable(uint64_t kept)
        : m_kept(kept)
    { }

    std::shared_ptr<const Parts> get(const Key &key, uint64_t order, const std::function<Parts()> &encode)
    {
        std::promise<std::shared_ptr<const Parts>> promise;
        std::shared_future<std::shared_ptr<const Parts>> pending;
        uint64_t id = 0;
        {
            std::lock_guard lock(m_mutex);
            ++m_asked;
            auto it = m_entries.find(key);
            if (it != m_entries.end()) {
                if (it->second.pending.valid()) {
                    pending = it->second.pending;
                } else if (auto parts = it->second.done.lock()) {
                    return parts;
                }
            }
            if (!pending.valid()) {
                m_newest = std::max(m_newest, order);
                dropUnheldLocked();
                id = ++m_encoded;
                pending = promise.get_future().share();
                m_entries.insert_or_assign(key, Entry { id, order, pending, {}, {} });
            }
        }
        if (id == 0) {
            return pending.get(); // another call's encoding (rethrows what it threw)
        }
        std::shared_ptr<const Parts> parts;
        try {
            parts = std::make_shared<const Parts>(encode());
        } catch (...) {
            promise.set_exception(std::current_exception());
            std::lock_guard lock(m_mutex);
            if (auto it = m_entries.find(key); it != m_entries.end() && it->second.id == id) {
                m_entries.erase(it);
            }
            throw;
        }
        promise.set_value(parts);
        std::lock_guard lock(m_mutex);
        if (auto it = m_entries.find(key); it != m_entries.end() && it->second.id == id) {
            it->second.pending = {};
            it->second.done = parts;
            if (isKeptLocked(order)) {
                it->second.kept = parts;
            }
        }
        return parts;
    }

    // Encodings made, and times asked.
    uint64_t encoded() const
    {
        std::lock_guard lock(m_mutex);
        return m_encoded;
    }
    uint64_t asked() const
    {
        std::lock_guard lock(m_mutex);
        return m_asked;
    }
    // Keys with an encoding under way or held by some call.
    size_t held() const
    {
        std::lock_guard lock(m_mutex);
        return static_cast<size_t>(std::count_if(m_entries.begin(), m_entries.end(),
            [](const auto &e) { return e.second.pending.valid() || !e.second.done.expired(); }));
    }

private:
    struct Entry
    {
        uint64_t id;
        uint64_t order;
        std::shared_future<std::shared_ptr<const Parts>> pending; // valid while being encoded
        std::weak_ptr<const Parts> done;
        std::shared_ptr<const Parts> kept; // while among the newest orders
    };
    bool isKeptLocked(uint64_t order) const { return order + m_kept > m_newest; }
    // Lets go of encodings no longer among the newest, and forgets those nobody holds.
    void dropUnheldLocked()
    {
        for (auto it = m_entries.begin(); it != m_entries.end();) {
            if (!isKeptLocked(it->second.order)) {
                it->second.kept.reset();
            }
            it = !it->second.pending.valid() && it->second.done.expired() ? m_entries.erase(it) : std::next(it);
        }
    }

    const uint64_t m_kept;
    uint64_t m_newest = 0;
    mutable std::mutex m_mutex;
    std::map<Key, Entry> m_entries;
    uint64_t m_encoded = 0;
    uint64_t m_asked = 0;
};

// The service's shared encodings. Each Subscribe used to encode the frame it sends itself: 2,000 subscribers opening
// at once encoded the same frame 2,000 times (1.6 MB each at 102,400 GPUs) and held each copy while its client read;
// each GetTopology encoded the whole fleet again (6 MB at 102,400 GPUs; 100 consoles reconnecting after a restart
// were a herd). Now subscribers of the same metrics share a frame's parts, and callers of GetTopology the
// generation's parts. Held beyond the calls sending them: the two newest frames per set of metrics asked for (17 MB
// each at 1,048,576 GPUs and the default four metrics) and the newest topology (about 60 MB at 1,048,576 GPUs). gRPC
// still serializes each part once per call it is written to.
class SharedEncodings
{
public:
    using FrameParts = std::vector<fleetscope::telemetry::v1::FramePart>;
    using TopologyParts = std::vector<fleetscope::telemetry::v1::TopologyPart>;
    // A frame's encoding: its sequence, the topology generation, the metrics in the subscriber's order.
    using FrameKey = std::tuple<uint64_t, uint64_t, std::vector<MetricId>>;

    std::shared_ptr<const FrameParts> frame(const Frame &frame, const std::vector<MetricId> &metrics,
        uint64_t generation, const std::function<FrameParts()> &encode)
    {
        return m_frames.get(FrameKey { frame.sequence, generation, metrics }, frame.sequence, encode);
    }
    std::shared_ptr<const TopologyParts> topology(uint64_t generation, const std::function<TopologyParts()> &encode)
    {
        return m_topologies.get(generation, generation, encode);
    }

    const EncodingTable<FrameKey, FrameParts> &frames() const { return m_frames; }
    const EncodingTable<uint64_t, TopologyParts> &topologies() const { return m_topologies; }

private:
    EncodingTable<FrameKey, FrameParts> m_frames { 2 }; // the newest frame and the one before
    EncodingTable<uint64_t, TopologyParts> m_topologies { 1 }; // the newest generation
};

} // namespace fleetscope::backend
