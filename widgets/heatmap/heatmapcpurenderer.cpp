// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcpurenderer.h"

#include <cstring>
#include <utility>

namespace fleetscope {

HeatmapCpuRenderer::HeatmapCpuRenderer(std::function<void()> ready)
    : m_ready(std::move(ready))
{ }

HeatmapCpuRenderer::~HeatmapCpuRenderer() = default; // m_worker waits for its job; its result is dropped

void HeatmapCpuRenderer::waitForWorker()
{
    // What the worker wrote before it said it was done is visible here after (through m_mutex).
    std::unique_lock lock(m_mutex);
    m_prepared.wait(lock, [this] { return !m_preparing; });
}

void HeatmapCpuRenderer::hand(Input input, bool resolves)
{
    m_inputs.push_back({ std::move(input), resolves });
}

void HeatmapCpuRenderer::allocate(size_t gpuCount)
{
    hand([gpuCount](HeatmapCpuPasses &passes) { passes.allocate(gpuCount); }, true);
}

void HeatmapCpuRenderer::uploadLayout(const std::shared_ptr<const HeatmapLayout> &layout)
{
    m_layoutSize = QSize(std::max(1, layout->width), std::max(1, layout->height));
    // No copy here (6 MiB of cells at a million GPUs, faulted in afresh, was 15-20 ms of the GUI thread's): the worker
    // copies the cells from the layout, which nobody changes.
    hand([layout](HeatmapCpuPasses &passes) { passes.setLayout(layout->cells, layout->width, layout->height); }, true);
}

void HeatmapCpuRenderer::uploadFrame(const std::shared_ptr<const void> &owner, const std::vector<float> &values,
    const std::vector<uint8_t> &health, bool shift)
{
    // No copy here: the worker copies from the frame, which the owner keeps alive and nobody changes.
    hand([owner, values = &values, health = &health, shift](
             HeatmapCpuPasses &passes) { passes.setFrame(*values, *health, shift); },
        true);
}

void HeatmapCpuRenderer::uploadColorMap(const ColorMap &map)
{
    hand([map](HeatmapCpuPasses &passes) { passes.setColorMap(map); }, false); // pass 3 reads it
}

void HeatmapCpuRenderer::uploadMarks(const std::vector<uint8_t> &marks)
{
    hand([marks](HeatmapCpuPasses &passes) { passes.setMarks(marks); }, true);
}

HeatmapScene HeatmapCpuRenderer::withoutText(const HeatmapScene &scene)
{
    // The text over the map is the caller's to paint on top (the shaders' last step, premultiplied over): the
    // passes leave it out, so that new text (values redrawn for a new frame) costs no pass 2.
    HeatmapScene s = scene;
    s.overlay = nullptr;
    s.overlayUsed = QRect();
    s.overlayRevision = 0;
    return s;
}

void HeatmapCpuRenderer::apply(const std::vector<Handed> &inputs)
{
    for (const Handed &input : inputs) {
        input.apply(m_passes);
        if (input.resolves) {
            m_schedule.resolveAgain(); // a colour map alone only recolours, in pass 3
        }
    }
}

void HeatmapCpuRenderer::applyInputs()
{
    waitForWorker();
    m_running = false;
    apply(std::exchange(m_inputs, {}));
}

void HeatmapCpuRenderer::prepare(std::vector<Handed> inputs, const HeatmapScene &scene, QSize layoutSize)
{
    apply(inputs);
    m_schedule.run(scene, layoutSize, m_passes);
}

void HeatmapCpuRenderer::finish(const HeatmapScene &drawn)
{
    waitForWorker();
    m_running = false;
    const HeatmapScene scene = withoutText(drawn);
    if (!m_inputs.empty() || m_schedule.wouldRun(scene, m_layoutSize)) {
        prepare(std::exchange(m_inputs, {}), scene, m_layoutSize);
    }
    m_resolveCount = m_schedule.resolveCount();
    m_screenCount = m_schedule.screenCount();
}

void HeatmapCpuRenderer::copyShown(double devicePixelRatio)
{
    // Into the buffer of the last copies (HeatmapImageBuffer): a fresh one is a fresh allocation whose every page
    // faults on first touch on the GUI thread.
    QImage &shown = m_shown.reshape(m_image.size(), m_image.format());
    const qsizetype bytes = m_image.sizeInBytes();
    if (shown.isNull() || shown.bytesPerLine() != m_image.bytesPerLine() || shown.sizeInBytes() != bytes) {
        m_showingCopy = false;
        return;
    }
    std::memcpy(shown.bits(), m_image.constBits(), static_cast<size_t>(bytes));
    shown.setDevicePixelRatio(devicePixelRatio);
}

const QImage &HeatmapCpuRenderer::paint(const HeatmapScene &drawn, double devicePixelRatio)
{
    const int width = drawn.framebuffer.width();
    const int height = drawn.framebuffer.height();
    m_current = false;
    if (width <= 0 || height <= 0) {
        m_image = QImage();
        return m_image;
    }
    if (m_running) {
        return m_showingCopy ? m_shown.image() : m_none;
    }
    const HeatmapScene scene = withoutText(drawn);
    if (!m_inputs.empty() || m_schedule.wouldRun(scene, m_layoutSize)) {
        if (!m_asynchronous) {
            prepare(std::exchange(m_inputs, {}), scene, m_layoutSize);
        } else {
            // The image as it is, to show meanwhile (the worker writes into its pixels); none at another size, nor
            // if a preparation since the last compose gave the passes a new buffer (m_image would read freed memory).
            const bool valid = m_image.size() == drawn.framebuffer
                && m_image.constBits() == reinterpret_cast<const uchar *>(m_passes.image().data())
                && m_passes.image().size() == static_cast<size_t>(width) * static_cast<size_t>(height);
            m_showingCopy = valid;
            if (valid) {
                copyShown(devicePixelRatio);
            }
            m_running = true;
            const quint64 preparation = ++m_preparation;
            {
                const std::lock_guard lock(m_mutex);
                m_preparing = true;
            }
            // On the Worker's thread (lowered, jobs/background.h); its one result comes back on this one, unless
            // finish() or another preparation came first.
            m_worker.run([this, preparation, inputs = std::exchange(m_inputs, {}), scene,
                             layoutSize = m_layoutSize]() mutable -> Worker::Result {
                prepare(std::move(inputs), scene, layoutSize);
                {
                    const std::lock_guard lock(m_mutex);
                    m_preparing = false;
                }
                m_prepared.notify_all();
                return [this, preparation] {
                    if (preparation != m_preparation) {
                        return; // finish() or applyInputs() waited for it, and another was started since
                    }
                    m_running = false;
                    m_resolveCount = m_schedule.resolveCount();
                    m_screenCount = m_schedule.screenCount();
                    m_ready();
                };
            });
            return m_showingCopy ? m_shown.image() : m_none;
        }
    }
    m_resolveCount = m_schedule.resolveCount();
    m_screenCount = m_schedule.screenCount();
    int firstRow = 0;
    int endRow = 0;
    const std::vector<uint32_t> &pixels = m_passes.compose(scene, &firstRow, &endRow);
    if (pixels.size() != static_cast<size_t>(width) * static_cast<size_t>(height)) {
        m_image = QImage();
        return m_image;
    }
    // The passes' own memory, not a copy; QPainter reads it while this paint lasts.
    if (m_image.constBits() != reinterpret_cast<const uchar *>(pixels.data()) || m_image.size() != drawn.framebuffer) {
        m_image = QImage(reinterpret_cast<const uchar *>(pixels.data()), width, height,
            static_cast<qsizetype>(width) * 4, QImage::Format_RGB32);
    }
    if (m_image.devicePixelRatio() != devicePixelRatio) {
        m_image.setDevicePixelRatio(devicePixelRatio); // no copy: the only reference
    }
    m_current = true;
    return m_image;
}

} // namespace fleetscope
