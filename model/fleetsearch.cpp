// SPDX-License-Identifier: Apache-2.0
#include "model/fleetsearch.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fleetscope {

std::optional<Place> SearchResult::place() const
{
    const auto index = static_cast<uint32_t>(id);
    switch (kind) {
    case Kind::Row:
        return Place::row(index);
    case Kind::Rack:
        return Place::rack(index);
    case Kind::Node:
        return Place::node(index);
    case Kind::Gpu:
        return Place::gpu(index);
    case Kind::Job:
        break;
    }
    return std::nullopt;
}

// One kind of key: the keys packed lower-cased into one string, each ended by a NUL (which no key holds), in
// target order so that a hit in a scan maps back to its key by binary search; and the keys' numbers in key order.
struct FleetSearch::Table
{
    SearchResult::Kind kind = SearchResult::Kind::Node;
    bool searchInside = false; // names are also found by a part inside them, identifiers only by their start
    std::string text;
    std::vector<uint32_t> starts; // key k is text[starts[k], starts[k + 1] - 1)
    std::vector<uint32_t> targets; // key k's row, rack, node, GPU or job (the index into JobList::jobs)
    std::vector<uint32_t> order; // key numbers, sorted by key

    Table(SearchResult::Kind k, bool inside, size_t expectedKeys)
        : kind(k)
        , searchInside(inside)
    {
        starts.reserve(expectedKeys + 1);
        targets.reserve(expectedKeys);
        starts.push_back(0);
    }

    uint32_t size() const { return static_cast<uint32_t>(targets.size()); }
    std::string_view key(uint32_t k) const
    {
        return { text.data() + starts[k], static_cast<size_t>(starts[k + 1] - starts[k] - 1) };
    }

    void add(std::string_view lowerKey, uint32_t target)
    {
        if (lowerKey.empty() || lowerKey.find('\0') != std::string_view::npos) {
            return;
        }
        text.append(lowerKey);
        text.push_back('\0');
        starts.push_back(static_cast<uint32_t>(text.size()));
        targets.push_back(target);
    }

    void add(const QString &key, uint32_t target)
    {
        const QByteArray lower = key.toLower().toUtf8();
        add(std::string_view(lower.constData(), static_cast<size_t>(lower.size())), target);
    }

    // Sorting a million keys by string_view alone chases pointers into a large buffer on every comparison; the
    // first sixteen bytes, big-endian, decide nearly all comparisons (serials and hostnames are shorter) from an
    // array that streams through the cache.
    void sort()
    {
        struct Keyed
        {
            uint64_t head = 0;
            uint64_t next = 0;
            uint32_t key = 0;
        };
        std::vector<Keyed> keyed(size());
        for (uint32_t k = 0; k < size(); ++k) {
            const std::string_view key = this->key(k);
            Keyed &e = keyed[k];
            for (size_t i = 0; i < 16; ++i) {
                uint64_t &word = i < 8 ? e.head : e.next;
                word = (word << 8U) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0U);
            }
            e.key = k;
        }
        std::sort(keyed.begin(), keyed.end(), [this](const Keyed &a, const Keyed &b) {
            if (a.head != b.head) {
                return a.head < b.head;
            }
            if (a.next != b.next) {
                return a.next < b.next;
            }
            const std::string_view ka = key(a.key);
            const std::string_view kb = key(b.key);
            return ka != kb ? ka < kb : a.key < b.key;
        });
        order.resize(keyed.size());
        std::transform(keyed.begin(), keyed.end(), order.begin(), [](const Keyed &e) { return e.key; });
    }

    // The first position in order whose key is not less than query.
    size_t lowerBound(std::string_view query) const
    {
        return static_cast<size_t>(std::lower_bound(order.begin(), order.end(), query,
                                       [this](uint32_t k, std::string_view q) { return key(k) < q; })
            - order.begin());
    }

    // The key whose text holds byte pos.
    uint32_t keyAt(size_t pos) const
    {
        const auto it = std::upper_bound(starts.begin(), starts.end(), static_cast<uint32_t>(pos));
        return static_cast<uint32_t>(it - starts.begin() - 1);
    }
};

namespace {

using Kind = SearchResult::Kind;
using Table = FleetSearch::Table;

struct Uuid128
{
    uint64_t hi = 0;
    uint64_t lo = 0;

    bool operator<(const Uuid128 &o) const { return hi != o.hi ? hi < o.hi : lo < o.lo; }
    bool operator<=(const Uuid128 &o) const { return !(o < *this); }
};

// The UUID as a 128-bit number whose order is that of its lower-case text.
Uuid128 uuidValue(const QUuid &u)
{
    Uuid128 v;
    v.hi = (uint64_t { u.data1 } << 32U) | (uint64_t { u.data2 } << 16U) | u.data3;
    for (const uint8_t byte : u.data4) {
        v.lo = (v.lo << 8U) | byte;
    }
    return v;
}

// A UUID's first hex digits, as typed: "GPU-" and dashes optional. Nullopt when the text is no UUID prefix; for
// bare hex, from four digits on, so that a short word made of a-f stays a name search.
struct UuidRange
{
    Uuid128 low;
    Uuid128 high;
    bool complete = false;
};

std::optional<UuidRange> uuidRange(QStringView lower)
{
    bool marked = false;
    if (lower.startsWith(QLatin1String("gpu-"))) {
        lower = lower.mid(4);
        marked = true;
    }
    if (lower.startsWith(QLatin1Char('{'))) {
        lower = lower.mid(1);
    }
    if (lower.endsWith(QLatin1Char('}'))) {
        lower.chop(1);
    }
    std::array<uint8_t, 32> nibbles {};
    size_t count = 0;
    for (const QChar c : lower) {
        int nibble = -1;
        if (c >= QLatin1Char('0') && c <= QLatin1Char('9')) {
            nibble = c.unicode() - '0';
        } else if (c >= QLatin1Char('a') && c <= QLatin1Char('f')) {
            nibble = c.unicode() - 'a' + 10;
        } else if (c != QLatin1Char('-')) {
            return std::nullopt;
        }
        if (nibble >= 0) {
            if (count == nibbles.size()) {
                return std::nullopt;
            }
            nibbles[count++] = static_cast<uint8_t>(nibble);
        }
    }
    if (count == 0 || (!marked && count < 4)) {
        return std::nullopt;
    }
    UuidRange range;
    range.complete = count == nibbles.size();
    for (size_t i = 0; i < nibbles.size(); ++i) {
        uint64_t &low = i < 16 ? range.low.hi : range.low.lo;
        uint64_t &high = i < 16 ? range.high.hi : range.high.lo;
        low = (low << 4U) | (i < count ? nibbles[i] : 0U);
        high = (high << 4U) | (i < count ? nibbles[i] : 0xfU);
    }
    return range;
}

// "job 4711", "job:4711" and "#4711" name a job; what follows is searched among jobs.
QString jobQuery(const QString &lower)
{
    for (const QLatin1String mark : { QLatin1String("job "), QLatin1String("job:"), QLatin1String("#") }) {
        if (lower.startsWith(mark)) {
            return lower.mid(mark.size()).trimmed();
        }
    }
    return lower;
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

class Collector
{
public:
    explicit Collector(size_t limit)
        : m_limit(limit)
    { }

    bool full() const { return m_found.size() >= m_limit; }
    bool seen(Kind kind, uint32_t target) const
    {
        return std::find(m_found.begin(), m_found.end(), std::make_pair(kind, target)) != m_found.end();
    }
    void add(Kind kind, uint32_t target, bool byUuid = false)
    {
        if (!full() && !seen(kind, target)) {
            m_found.emplace_back(kind, target);
            m_byUuid.push_back(byUuid);
        }
    }
    const std::vector<std::pair<Kind, uint32_t>> &found() const { return m_found; }
    bool byUuid(size_t i) const { return m_byUuid[i]; }

private:
    size_t m_limit;
    std::vector<std::pair<Kind, uint32_t>> m_found;
    std::vector<bool> m_byUuid; // a GPU found by its UUID shows the UUID, else its serial
};

// The name of a row or rack a result lies in, or its number where the topology holds no such place.
template <typename Places> QString placeName(const Places &places, uint32_t index)
{
    return index < places.size() ? places[index].name : QString::number(index);
}

} // namespace

FleetSearch::FleetSearch(TopologyPtr topology, JobsPtr jobs)
    : m_topology(std::move(topology))
{
    if (m_topology) {
        const Topology &t = *m_topology;
        auto tables = std::make_shared<std::vector<Table>>();
        tables->reserve(4);
        Table &rows = tables->emplace_back(Kind::Row, true, t.rows.size());
        for (size_t i = 0; i < t.rows.size(); ++i) {
            rows.add(t.rows[i].name, static_cast<uint32_t>(i));
        }
        Table &racks = tables->emplace_back(Kind::Rack, true, t.racks.size());
        for (size_t i = 0; i < t.racks.size(); ++i) {
            racks.add(t.racks[i].name, static_cast<uint32_t>(i));
        }
        Table &nodes = tables->emplace_back(Kind::Node, true, t.nodes.size());
        for (size_t i = 0; i < t.nodes.size(); ++i) {
            nodes.add(t.nodes[i].hostname, static_cast<uint32_t>(i));
        }
        // Serials are ASCII as the vendors print them; lower-cased byte by byte, without a QString per GPU.
        Table &serials = tables->emplace_back(Kind::Gpu, false, t.gpuSerials.size());
        size_t serialBytes = 0;
        for (const auto &serial : t.gpuSerials) {
            serialBytes += serial.size() + 1;
        }
        serials.text.reserve(serialBytes);
        std::string lower;
        for (size_t g = 0; g < t.gpuSerials.size() && g < t.gpuCount; ++g) {
            lower = t.gpuSerials[g];
            for (char &c : lower) {
                if (c >= 'A' && c <= 'Z') {
                    c = static_cast<char>(c - 'A' + 'a');
                }
            }
            serials.add(lower, static_cast<uint32_t>(g));
        }
        for (Table &table : *tables) {
            table.sort();
        }
        m_topologyTables = std::move(tables);

        std::vector<std::pair<Uuid128, uint32_t>> uuids;
        uuids.reserve(t.gpuUuids.size());
        for (size_t g = 0; g < t.gpuUuids.size() && g < t.gpuCount; ++g) {
            if (!t.gpuUuids[g].isNull()) {
                uuids.emplace_back(uuidValue(t.gpuUuids[g]), static_cast<uint32_t>(g));
            }
        }
        std::sort(uuids.begin(), uuids.end(), [](const auto &a, const auto &b) {
            return a.first < b.first || (!(b.first < a.first) && a.second < b.second);
        });
        auto order = std::make_shared<std::vector<uint32_t>>(uuids.size());
        std::transform(uuids.begin(), uuids.end(), order->begin(), [](const auto &p) { return p.second; });
        m_uuidOrder = std::move(order);
    }
    setJobs(std::move(jobs));
}

void FleetSearch::setJobs(JobsPtr jobs)
{
    m_jobs.reset();
    m_jobTables.reset();
    if (!m_topology || !jobs || jobs->topologyGeneration != m_topology->generation) {
        return;
    }
    m_jobs = std::move(jobs);
    auto tables = std::make_shared<std::vector<Table>>();
    tables->reserve(2);
    Table &ids = tables->emplace_back(Kind::Job, false, m_jobs->jobs.size());
    Table &names = tables->emplace_back(Kind::Job, true, m_jobs->jobs.size());
    for (size_t i = 0; i < m_jobs->jobs.size(); ++i) {
        const Job &job = m_jobs->jobs[i];
        ids.add(std::to_string(job.id), static_cast<uint32_t>(i));
        names.add(job.name, static_cast<uint32_t>(i));
    }
    ids.sort();
    names.sort();
    m_jobTables = std::move(tables);
}

SearchResult FleetSearch::result(Kind kind, uint32_t target, bool byUuid) const
{
    const Topology &t = *m_topology;
    SearchResult r;
    r.kind = kind;
    r.id = target;
    switch (kind) {
    case Kind::Row: {
        const auto &row = t.rows[target];
        const auto racks
            = std::count_if(t.racks.begin(), t.racks.end(), [target](const auto &k) { return k.row == target; });
        r.text = row.name;
        r.detail = row.hall.isEmpty() ? QStringLiteral("row, %1 racks").arg(racks)
                                      : QStringLiteral("row in %1, %2 racks").arg(row.hall).arg(racks);
        break;
    }
    case Kind::Rack: {
        const auto &rack = t.racks[target];
        r.text = rack.name;
        r.detail = QStringLiteral("rack in row %1, %2 nodes").arg(placeName(t.rows, rack.row)).arg(rack.nodeCount);
        break;
    }
    case Kind::Node: {
        const auto &node = t.nodes[target];
        r.text = node.hostname;
        r.detail = QStringLiteral("node in rack %1, %2 GPUs").arg(placeName(t.racks, node.rack)).arg(node.gpuCount);
        break;
    }
    case Kind::Gpu: {
        const auto &node = t.nodeOf(target);
        r.text = byUuid ? t.uuidText(target) : QString::fromStdString(t.gpuSerials[target]);
        r.detail = QStringLiteral("GPU %1 of %2").arg(target - node.firstGpu).arg(node.hostname);
        break;
    }
    case Kind::Job: {
        const Job &job = m_jobs->jobs[target];
        r.id = job.id;
        r.text = QStringLiteral("job %1 %2").arg(job.id).arg(job.name).trimmed();
        r.detail = QStringLiteral("%1, %2 GPUs, %3")
                       .arg(job.owner.isEmpty() ? QStringLiteral("no owner") : job.owner)
                       .arg(job.gpus.size())
                       .arg(job.isRunning() ? QStringLiteral("running") : QStringLiteral("ended"));
        break;
    }
    }
    return r;
}

std::vector<SearchResult> FleetSearch::find(const QString &text, int limit) const
{
    if (!m_topology || limit <= 0) {
        return {};
    }
    const QString lower = text.trimmed().toLower();
    if (lower.isEmpty() || lower.contains(QChar(0))) { // a NUL would match across the packed keys
        return {};
    }
    const QByteArray query = lower.toUtf8();
    const QByteArray jobText = jobQuery(lower).toUtf8();
    const auto view = [](const QByteArray &bytes) {
        return std::string_view(bytes.constData(), static_cast<size_t>(bytes.size()));
    };

    // Rows, racks, nodes, jobs, then GPUs: a short prefix reads best as the places it starts, a serial is long.
    std::vector<std::pair<const Table *, std::string_view>> tables;
    const auto addTable = [&tables](const Table &table, std::string_view q) {
        if (!q.empty()) {
            tables.emplace_back(&table, q);
        }
    };
    for (size_t i = 0; i < 3; ++i) {
        addTable((*m_topologyTables)[i], view(query));
    }
    if (m_jobTables) {
        for (const Table &table : *m_jobTables) {
            addTable(table, view(jobText));
        }
    }
    addTable((*m_topologyTables)[3], view(query));
    const std::optional<UuidRange> uuids = uuidRange(lower);

    Collector found(static_cast<size_t>(limit));
    std::vector<size_t> starts(tables.size());
    for (size_t i = 0; i < tables.size(); ++i) {
        const auto &[table, q] = tables[i];
        starts[i] = table->lowerBound(q);
    }
    const auto uuidKey = [this](size_t i) { return uuidValue(m_topology->gpuUuids[(*m_uuidOrder)[i]]); };
    size_t uuidStart = 0;
    if (uuids) {
        uuidStart = static_cast<size_t>(std::partition_point(m_uuidOrder->begin(), m_uuidOrder->end(), [&](uint32_t g) {
            return uuidValue(m_topology->gpuUuids[g]) < uuids->low;
        }) - m_uuidOrder->begin());
    }

    // Exact matches first, whatever their kind.
    for (size_t i = 0; i < tables.size() && !found.full(); ++i) {
        const auto &[table, q] = tables[i];
        for (size_t p = starts[i]; p < table->order.size() && !found.full(); ++p) {
            const uint32_t k = table->order[p];
            if (table->key(k) != q) {
                break;
            }
            found.add(table->kind, table->targets[k]);
        }
    }
    if (uuids && uuids->complete) {
        for (size_t p = uuidStart; p < m_uuidOrder->size() && !found.full() && uuidKey(p) <= uuids->high; ++p) {
            found.add(Kind::Gpu, (*m_uuidOrder)[p], true);
        }
    }
    // Then keys that start with the text.
    for (size_t i = 0; i < tables.size() && !found.full(); ++i) {
        const auto &[table, q] = tables[i];
        for (size_t p = starts[i]; p < table->order.size() && !found.full(); ++p) {
            const uint32_t k = table->order[p];
            if (!startsWith(table->key(k), q)) {
                break;
            }
            found.add(table->kind, table->targets[k]);
        }
    }
    if (uuids) {
        for (size_t p = uuidStart; p < m_uuidOrder->size() && !found.full() && uuidKey(p) <= uuids->high; ++p) {
            found.add(Kind::Gpu, (*m_uuidOrder)[p], true);
        }
    }
    // Then names that hold it further in, in fleet order.
    for (size_t i = 0; i < tables.size() && !found.full(); ++i) {
        const auto &[table, q] = tables[i];
        if (!table->searchInside) {
            continue;
        }
        for (size_t pos = table->text.find(q); pos != std::string::npos && !found.full();
             pos = table->text.find(q, pos)) {
            const uint32_t k = table->keyAt(pos);
            if (pos != table->starts[k]) {
                found.add(table->kind, table->targets[k]);
            }
            pos = table->starts[k + 1];
        }
    }

    std::vector<SearchResult> results;
    results.reserve(found.found().size());
    for (size_t i = 0; i < found.found().size(); ++i) {
        const auto &[kind, target] = found.found()[i];
        results.push_back(result(kind, target, found.byUuid(i)));
    }
    return results;
}

} // namespace fleetscope
