// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QImage>
#include <QSize>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fleetscope {

// A 32-bit image whose pixels live in a buffer kept across sizes: a window resized smaller and back reuses memory
// already touched instead of a fresh allocation, whose every page faults on first touch (on the virtual machines
// this project is measured on, about 10 us a page: 12 ms for a 1500 x 900 map's image, on the GUI thread). Grows to
// the largest size asked for; never shrinks. The image does not own the pixels: copies of it must not outlive the
// buffer, nor the next reshape.
class HeatmapImageBuffer
{
public:
    // The image at this size and format (4 bytes a pixel), its pixels as the buffer holds them (not cleared).
    QImage &reshape(QSize size, QImage::Format format)
    {
        if (m_image.size() != size || m_image.format() != format) {
            const size_t words
                = static_cast<size_t>(std::max(0, size.width())) * static_cast<size_t>(std::max(0, size.height()));
            if (m_pixels.size() < words) {
                m_pixels.resize(words);
            }
            m_image = words == 0 ? QImage()
                                 : QImage(reinterpret_cast<uchar *>(m_pixels.data()), size.width(), size.height(),
                                     static_cast<qsizetype>(size.width()) * 4, format);
        }
        return m_image;
    }
    QImage &image() { return m_image; }
    const QImage &image() const { return m_image; }

private:
    std::vector<uint32_t> m_pixels;
    QImage m_image;
};

} // namespace fleetscope
