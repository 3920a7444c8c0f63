// SPDX-License-Identifier: Apache-2.0
#include "model/flightrecorder.h"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace fleetscope {

namespace {

using Delta = FlightRecorderOptions::Delta;

uint32_t bitsOf(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float floatOf(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

uint32_t zigzag(uint32_t d)
{
    return (d << 1U) ^ (0U - (d >> 31U));
}

uint32_t unzigzag(uint32_t z)
{
    return (z >> 1U) ^ (0U - (z & 1U));
}

uint32_t forward(uint32_t cur, uint32_t ref, Delta delta)
{
    // A modular difference, zig-zagged so that a small step down is a small number rather than 0xFFFF….
    return delta == Delta::Xor ? cur ^ ref : zigzag(cur - ref);
}

uint32_t backward(uint32_t coded, uint32_t ref, Delta delta)
{
    return delta == Delta::Xor ? coded ^ ref : ref + unzigzag(coded);
}

// Four byte lanes (all low bytes, then all second bytes, ...), so that the rarely changing high bytes compress apart
// from the noisy low ones.
void putLanes(uint8_t *lanes, size_t n, size_t i, uint32_t v)
{
    lanes[i] = static_cast<uint8_t>(v);
    lanes[n + i] = static_cast<uint8_t>(v >> 8U);
    lanes[2 * n + i] = static_cast<uint8_t>(v >> 16U);
    lanes[3 * n + i] = static_cast<uint8_t>(v >> 24U);
}

uint32_t getLanes(const uint8_t *lanes, size_t n, size_t i)
{
    return uint32_t(lanes[i]) | (uint32_t(lanes[n + i]) << 8U) | (uint32_t(lanes[2 * n + i]) << 16U)
        | (uint32_t(lanes[3 * n + i]) << 24U);
}

// Decimal planes: a plane whose every value is exactly float(k / 10^d) for integers k (whole °C, whole %, whole MHz,
// milliwatts: what DCGM reports) is stored as the integers k, each against the reference's value in the same scale.
// The low mantissa bits of such floats look random to a bit-level codec; small integer steps do not. The canonical
// quiet NaN has a code of its own; any other NaN, a negative zero or a value off the grid keeps the plane as float
// bits.
constexpr std::array<double, 4> decimalScales = { 1, 10, 100, 1000 };
constexpr int32_t nanCode = std::numeric_limits<int32_t>::min();
constexpr uint32_t canonicalNan = 0x7FC00000U;

// Any float to an integer on the scale's grid; deterministic, so a reference value gives the same base both ways.
int32_t decimalOf(float v, double scale)
{
    const double x = double(v) * scale;
    if (!(std::fabs(x) < 2'147'483'000.0)) {
        return nanCode; // NaN, infinite or out of range
    }
    return static_cast<int32_t>(x + (x < 0 ? -0.5 : 0.5)); // truncation: cheaper than lround, as exact here
}

// Multiplies by the inverse rather than dividing: fitsDecimal() checks each value through this same function, so
// whatever it rounds to is what decoding gives back.
float floatOfDecimal(int32_t k, double scale)
{
    return k == nanCode ? floatOf(canonicalNan) : static_cast<float>(double(k) * (1.0 / scale));
}

bool fitsDecimal(const float *v, size_t n, double scale)
{
    for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = bitsOf(v[i]);
        if (bits == canonicalNan) {
            continue;
        }
        const int32_t k = decimalOf(v[i], scale);
        if (k == nanCode || bitsOf(floatOfDecimal(k, scale)) != bits) {
            return false;
        }
    }
    return true;
}

// 0 for float bits, else 1 + the index of the scale.
uint8_t chooseMode(const float *v, size_t n, bool decimal)
{
    for (size_t m = 0; decimal && m < decimalScales.size(); ++m) {
        if (fitsDecimal(v, n, decimalScales[m])) {
            return static_cast<uint8_t>(m + 1);
        }
    }
    return 0;
}

uint8_t encodePlane(const float *cur, const float *ref, size_t n, const FlightRecorderOptions &o, uint8_t *lanes)
{
    const uint8_t mode = chooseMode(cur, n, o.decimal);
    if (mode == 0) {
        for (size_t i = 0; i < n; ++i) {
            putLanes(lanes, n, i, ref != nullptr ? forward(bitsOf(cur[i]), bitsOf(ref[i]), o.delta) : bitsOf(cur[i]));
        }
        return mode;
    }
    const double scale = decimalScales[mode - 1U];
    for (size_t i = 0; i < n; ++i) {
        const auto k = static_cast<uint32_t>(bitsOf(cur[i]) == canonicalNan ? nanCode : decimalOf(cur[i], scale));
        const auto base = ref != nullptr ? static_cast<uint32_t>(decimalOf(ref[i], scale)) : 0U;
        putLanes(lanes, n, i, zigzag(k - base));
    }
    return mode;
}

void decodePlane(const uint8_t *lanes, const float *ref, size_t n, Delta delta, uint8_t mode, float *out)
{
    if (mode == 0) {
        for (size_t i = 0; i < n; ++i) {
            const uint32_t v = getLanes(lanes, n, i);
            out[i] = floatOf(ref != nullptr ? backward(v, bitsOf(ref[i]), delta) : v);
        }
        return;
    }
    const double scale = decimalScales[mode - 1U];
    for (size_t i = 0; i < n; ++i) {
        const auto base = ref != nullptr ? static_cast<uint32_t>(decimalOf(ref[i], scale)) : 0U;
        out[i] = floatOfDecimal(static_cast<int32_t>(base + unzigzag(getLanes(lanes, n, i))), scale);
    }
}

struct DCtxDeleter
{
    void operator()(ZSTD_DCtx *c) const { ZSTD_freeDCtx(c); }
};

// One decompression context and scratch buffer per reading thread.
ZSTD_DCtx *threadDCtx()
{
    thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> ctx(ZSTD_createDCtx());
    return ctx.get();
}

bool decompress(const std::vector<char> &blob, uint8_t *dst, size_t size)
{
    const size_t r = ZSTD_decompressDCtx(threadDCtx(), dst, size, blob.data(), blob.size());
    return !ZSTD_isError(r) && r == size;
}

bool sameShape(const Frame &a, const Frame &b)
{
    if (a.topologyGeneration != b.topologyGeneration || a.health.size() != b.health.size()
        || a.planes.size() != b.planes.size()) {
        return false;
    }
    for (size_t p = 0; p < a.planes.size(); ++p) {
        if (a.planes[p].metricId != b.planes[p].metricId) {
            return false;
        }
    }
    return true;
}

} // namespace

struct FlightRecorder::Encoded
{
    uint64_t sequence = 0;
    int64_t sampleTimeMs = 0;
    uint64_t generation = 0;
    uint32_t gpuCount = 0;
    uint32_t keyOffset = 0; // how many frames back its group's keyframe is; 0 for a keyframe
    std::vector<QString> metricIds;
    std::vector<std::vector<char>> planes; // zstd frames of the shuffled deltas
    std::vector<uint8_t> planeModes; // per plane: 0 float bits, else 1 + index of its decimal scale
    std::vector<char> health; // zstd frame of the health bytes XOR the reference's

    size_t bytes() const
    {
        size_t b = sizeof(Encoded) + health.size() + metricIds.size() * sizeof(QString);
        for (const auto &p : planes) {
            b += sizeof(p) + p.size() + 1;
        }
        return b;
    }
    size_t values() const { return static_cast<size_t>(gpuCount) * planes.size(); }
};

struct FlightRecorder::Encoder
{
    struct CCtxDeleter
    {
        void operator()(ZSTD_CCtx *c) const { ZSTD_freeCCtx(c); }
    };
    std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx { ZSTD_createCCtx() };
    FramePtr previous;
    FramePtr keyframe;
    uint32_t sinceKey = 0;
    bool any = false;
    int64_t latestMs = 0;
    std::vector<uint8_t> lanes;
    std::vector<char> out;

    std::vector<char> compress(const uint8_t *src, size_t size, int level)
    {
        out.resize(ZSTD_compressBound(size));
        const size_t r = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), src, size, level);
        // Only a bad context or level fails; the bound makes room for any input.
        Q_ASSERT(!ZSTD_isError(r));
        return std::vector<char>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(ZSTD_isError(r) ? 0 : r));
    }
};

FlightRecorder::FlightRecorder(FlightRecorderOptions options)
    : m_options(options)
    , m_encoder(std::make_unique<Encoder>())
{ }

FlightRecorder::~FlightRecorder() = default;

bool FlightRecorder::record(const FramePtr &frame)
{
    if (!frame) {
        return false;
    }
    const size_t n = frame->health.size();
    for (const auto &p : frame->planes) {
        if (p.values.size() != n) {
            return false;
        }
    }

    std::lock_guard recordLock(m_recordMutex);
    Encoder &e = *m_encoder;
    if (e.any && frame->sampleTimeMs <= e.latestMs) {
        return false;
    }
    const bool key = !e.keyframe || e.sinceKey + 1 >= std::max<uint32_t>(1, m_options.keyframeInterval)
        || !sameShape(*frame, *e.keyframe);
    const Frame *ref = nullptr;
    if (!key) {
        ref = m_options.reference == FlightRecorderOptions::Reference::Previous ? e.previous.get() : e.keyframe.get();
    }

    auto enc = std::make_shared<Encoded>();
    enc->sequence = frame->sequence;
    enc->sampleTimeMs = frame->sampleTimeMs;
    enc->generation = frame->topologyGeneration;
    enc->gpuCount = static_cast<uint32_t>(n);
    enc->keyOffset = key ? 0 : e.sinceKey + 1;
    e.lanes.resize(4 * n);
    for (size_t p = 0; p < frame->planes.size(); ++p) {
        enc->metricIds.push_back(frame->planes[p].metricId);
        enc->planeModes.push_back(encodePlane(frame->planes[p].values.data(),
            ref != nullptr ? ref->planes[p].values.data() : nullptr, n, m_options, e.lanes.data()));
        enc->planes.push_back(e.compress(e.lanes.data(), 4 * n, m_options.zstdLevel));
    }
    for (size_t i = 0; i < n; ++i) {
        e.lanes[i] = ref != nullptr ? frame->health[i] ^ ref->health[i] : frame->health[i];
    }
    enc->health = e.compress(e.lanes.data(), n, m_options.zstdLevel);

    e.any = true;
    e.latestMs = frame->sampleTimeMs;
    e.previous = frame;
    if (key) {
        e.keyframe = frame;
        e.sinceKey = 0;
    } else {
        ++e.sinceKey;
    }

    std::lock_guard lock(m_mutex);
    m_bytes += enc->bytes();
    m_values += enc->values();
    m_frames.push_back(std::move(enc));
    dropExpiredLocked();
    return true;
}

void FlightRecorder::clear()
{
    std::lock_guard recordLock(m_recordMutex);
    m_encoder = std::make_unique<Encoder>();
    std::lock_guard lock(m_mutex);
    m_frames.clear();
    m_bytes = 0;
    m_values = 0;
    m_cachedEncoded.reset();
    m_cachedFrame.reset();
}

void FlightRecorder::dropExpiredLocked()
{
    const int64_t cutoff = m_frames.back()->sampleTimeMs - m_options.retention.count();
    while (true) {
        // The front group: its keyframe and the deltas after it. The newest group is never dropped, its deltas are
        // still being taken against its keyframe.
        size_t end = 1;
        while (end < m_frames.size() && m_frames[end]->keyOffset != 0) {
            ++end;
        }
        if (end == m_frames.size()) {
            return;
        }
        const bool expired = m_frames[end - 1]->sampleTimeMs < cutoff;
        const bool overCap = m_options.memoryCapBytes != 0 && m_bytes > m_options.memoryCapBytes;
        if (!expired && !overCap) {
            return;
        }
        for (size_t i = 0; i < end; ++i) {
            m_bytes -= m_frames.front()->bytes();
            m_values -= m_frames.front()->values();
            m_frames.pop_front();
        }
    }
}

size_t FlightRecorder::firstVisibleLocked() const
{
    if (m_frames.empty()) {
        return 0;
    }
    const int64_t cutoff = m_frames.back()->sampleTimeMs - m_options.retention.count();
    const auto it = std::lower_bound(
        m_frames.begin(), m_frames.end(), cutoff, [](const EncodedPtr &f, int64_t t) { return f->sampleTimeMs < t; });
    return static_cast<size_t>(it - m_frames.begin());
}

FramePtr FlightRecorder::decode(const Encoded &enc, const Frame *reference, Delta delta)
{
    const size_t n = enc.gpuCount;
    auto frame = std::make_shared<Frame>();
    frame->sequence = enc.sequence;
    frame->sampleTimeMs = enc.sampleTimeMs;
    frame->topologyGeneration = enc.generation;
    thread_local std::vector<uint8_t> lanes;
    lanes.resize(4 * n);
    frame->planes.resize(enc.planes.size());
    for (size_t p = 0; p < enc.planes.size(); ++p) {
        if (!decompress(enc.planes[p], lanes.data(), 4 * n)) {
            return nullptr;
        }
        auto &plane = frame->planes[p];
        plane.metricId = enc.metricIds[p];
        plane.values.resize(n);
        decodePlane(lanes.data(), reference != nullptr ? reference->planes[p].values.data() : nullptr, n, delta,
            enc.planeModes[p], plane.values.data());
    }
    frame->health.resize(n);
    if (!decompress(enc.health, frame->health.data(), n)) {
        return nullptr;
    }
    if (reference != nullptr) {
        for (size_t i = 0; i < n; ++i) {
            frame->health[i] ^= reference->health[i];
        }
    }
    return frame;
}

FramePtr FlightRecorder::frameAt(int64_t timeMs) const
{
    // Under the lock, only find what to decode: the chain from the keyframe to the target, each element decoded
    // against the one before it (with Reference::Keyframe that is just the keyframe and the target).
    std::vector<EncodedPtr> chain;
    EncodedPtr cachedEncoded;
    FramePtr cachedFrame;
    {
        std::lock_guard lock(m_mutex);
        const size_t first = firstVisibleLocked();
        const auto it = std::upper_bound(m_frames.begin() + static_cast<std::ptrdiff_t>(first), m_frames.end(), timeMs,
            [](int64_t t, const EncodedPtr &f) { return t < f->sampleTimeMs; });
        const auto idx = static_cast<size_t>(it - m_frames.begin());
        if (idx == first) {
            return nullptr;
        }
        const size_t target = idx - 1;
        const size_t key = target - m_frames[target]->keyOffset;
        if (m_options.reference == FlightRecorderOptions::Reference::Previous) {
            chain.assign(m_frames.begin() + static_cast<std::ptrdiff_t>(key),
                m_frames.begin() + static_cast<std::ptrdiff_t>(target) + 1);
        } else {
            chain.push_back(m_frames[key]);
            if (target != key) {
                chain.push_back(m_frames[target]);
            }
        }
        cachedEncoded = m_cachedEncoded;
        cachedFrame = m_cachedFrame;
    }

    size_t start = 0;
    FramePtr frame;
    for (size_t i = chain.size(); i-- > 0;) {
        if (chain[i] == cachedEncoded) {
            start = i + 1;
            frame = cachedFrame;
            break;
        }
    }
    // With Reference::Keyframe keep the keyframe: the next seek in the group needs it, not this delta.
    FramePtr keep = start > 0 ? cachedFrame : nullptr;
    EncodedPtr keepEncoded = start > 0 ? cachedEncoded : nullptr;
    for (size_t i = start; i < chain.size(); ++i) {
        frame = decode(*chain[i], frame.get(), m_options.delta);
        if (!frame) {
            return nullptr;
        }
        if (i == 0 || m_options.reference == FlightRecorderOptions::Reference::Previous) {
            keep = frame;
            keepEncoded = chain[i];
        }
    }
    {
        std::lock_guard lock(m_mutex);
        m_cachedEncoded = keepEncoded;
        m_cachedFrame = keep;
    }
    return frame;
}

std::vector<int64_t> FlightRecorder::sampleTimes() const
{
    std::lock_guard lock(m_mutex);
    std::vector<int64_t> times;
    for (size_t i = firstVisibleLocked(); i < m_frames.size(); ++i) {
        times.push_back(m_frames[i]->sampleTimeMs);
    }
    return times;
}

size_t FlightRecorder::frameCount() const
{
    std::lock_guard lock(m_mutex);
    return m_frames.size() - firstVisibleLocked();
}

int64_t FlightRecorder::earliestMs() const
{
    std::lock_guard lock(m_mutex);
    return m_frames.empty() ? 0 : m_frames[firstVisibleLocked()]->sampleTimeMs;
}

int64_t FlightRecorder::latestMs() const
{
    std::lock_guard lock(m_mutex);
    return m_frames.empty() ? 0 : m_frames.back()->sampleTimeMs;
}

size_t FlightRecorder::compressedBytes() const
{
    std::lock_guard lock(m_mutex);
    return m_bytes;
}

size_t FlightRecorder::storedValues() const
{
    std::lock_guard lock(m_mutex);
    return m_values;
}

std::vector<FlightRecorder::MetricStats> FlightRecorder::metricStats() const
{
    std::lock_guard lock(m_mutex);
    std::vector<MetricStats> stats;
    for (const auto &f : m_frames) {
        for (size_t p = 0; p < f->planes.size(); ++p) {
            auto it = std::find_if(
                stats.begin(), stats.end(), [&](const MetricStats &s) { return s.metricId == f->metricIds[p]; });
            if (it == stats.end()) {
                stats.push_back({ f->metricIds[p], 0, 0 });
                it = stats.end() - 1;
            }
            it->compressedBytes += f->planes[p].size();
            it->values += f->gpuCount;
        }
    }
    return stats;
}

size_t FlightRecorder::healthBytes() const
{
    std::lock_guard lock(m_mutex);
    size_t b = 0;
    for (const auto &f : m_frames) {
        b += f->health.size();
    }
    return b;
}

} // namespace fleetscope
