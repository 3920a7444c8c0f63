// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <sys/mman.h>

namespace fleetscope::backend {

// A request's body. Past 1 MiB it is mapped from the kernel and unmapped when the request ends: the backend keeps
// the memory malloc frees up to 32 MiB for reuse (common/heap.h), which for bodies of tens of megabytes read by
// several threads left the peak of a burst of pushes resident for good.
class RequestBody
{
public:
    RequestBody() = default;
    RequestBody(const RequestBody &) = delete;
    RequestBody &operator=(const RequestBody &) = delete;
    ~RequestBody() { release(); }

    bool reserve(size_t capacity)
    {
        if (capacity <= m_capacity) {
            return true;
        }
        if (capacity < mapFrom) {
            auto *grown = static_cast<char *>(std::realloc(m_mapped ? nullptr : m_data, capacity));
            if (grown == nullptr) {
                return false;
            }
            m_data = grown;
            m_capacity = capacity;
            return true;
        }
        const size_t rounded = (capacity + 4095) & ~size_t { 4095 };
        void *mapped = m_mapped ? mremap(m_data, m_capacity, rounded, MREMAP_MAYMOVE)
                                : mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped == MAP_FAILED) {
            return false;
        }
        if (!m_mapped && m_size > 0) {
            std::memcpy(mapped, m_data, m_size);
        }
        if (!m_mapped) {
            std::free(m_data);
        }
        m_data = static_cast<char *>(mapped);
        m_capacity = rounded;
        m_mapped = true;
        return true;
    }

    bool append(const char *bytes, size_t n)
    {
        if (m_size + n > m_capacity && !reserve(std::max(m_size + n, m_capacity * 2))) {
            return false;
        }
        std::memcpy(m_data + m_size, bytes, n);
        m_size += n;
        return true;
    }

    size_t size() const { return m_size; }
    std::string_view view() const { return { m_data, m_size }; }

private:
    static constexpr size_t mapFrom = size_t { 1 } << 20U;

    void release()
    {
        if (m_mapped) {
            munmap(m_data, m_capacity);
        } else {
            std::free(m_data);
        }
        m_data = nullptr;
        m_capacity = m_size = 0;
        m_mapped = false;
    }

    char *m_data = nullptr;
    size_t m_size = 0;
    size_t m_capacity = 0;
    bool m_mapped = false;
};

} // namespace fleetscope::backend
