// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QImage>
#include <QSize>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fleetscope {

// A 32-bit image whose pixels live in a buffer kept across sizes: a window resized smaller and back reuses memory
// already touched instead of a fresh allocation, whose every page faults on first touch (on the virtual machines
// this project is measured on, about 10 us a page: 12 ms for a 1500 x 900 map's image, on the GUI thread). Grows to
// the largest size asked for; never shrinks. The image does not own the pixels: copies of it must not outlive the
// buffer, nor the next reshape or adopt.
class HeatmapImageBuffer
{
public:
    // The image at this size and format (4 bytes a pixel), its pixels as the buffer holds them (not cleared).
    QImage &reshape(QSize size, QImage::Format format)
    {
        if (m_image.size() != size || m_image.format() != format) {
            const size_t words = wordsOf(size);
            if (m_pixels.size() < words) {
                m_pixels.resize(words);
            }
            m_image = words == 0 ? QImage()
                                 : QImage(reinterpret_cast<uchar *>(m_pixels.data()), size.width(), size.height(),
                                     static_cast<qsizetype>(size.width()) * 4, format);
        }
        return m_image;
    }
    // Takes these pixels as its buffer if they are more than it holds: memory a worker thread has allocated and
    // touched (pixelsFor), so that the GUI thread does not fault its pages in a paint. The image keeps its size and
    // pixels.
    void adopt(std::vector<uint32_t> pixels)
    {
        if (pixels.size() <= m_pixels.size()) {
            return;
        }
        if (!m_image.isNull()) {
            const size_t used = wordsOf(m_image.size());
            std::copy(m_pixels.begin(), m_pixels.begin() + static_cast<std::ptrdiff_t>(used), pixels.begin());
        }
        m_pixels.swap(pixels);
        if (!m_image.isNull()) {
            const qreal dpr = m_image.devicePixelRatio();
            m_image = QImage(reinterpret_cast<uchar *>(m_pixels.data()), m_image.width(), m_image.height(),
                static_cast<qsizetype>(m_image.width()) * 4, m_image.format());
            m_image.setDevicePixelRatio(dpr);
        }
    }
    // A zeroed buffer for an image of this size, every page touched by the thread that calls it.
    static std::vector<uint32_t> pixelsFor(QSize size) { return std::vector<uint32_t>(wordsOf(size)); }
    bool holds(QSize size) const { return m_pixels.size() >= wordsOf(size); }
    QImage &image() { return m_image; }
    const QImage &image() const { return m_image; }

private:
    static size_t wordsOf(QSize size)
    {
        return static_cast<size_t>(std::max(0, size.width())) * static_cast<size_t>(std::max(0, size.height()));
    }

    std::vector<uint32_t> m_pixels;
    QImage m_image;
};

} // namespace fleetscope
