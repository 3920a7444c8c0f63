// SPDX-License-Identifier: Apache-2.0
// HeatmapView's input: mouse, wheel, keys and pinch zoom and pan through the camera, hover and click pick a GPU, and
// the tooltip that describes it (HeatmapMapState::describeGpu). The rest of the widget is in heatmapview.cpp.
#include "widgets/heatmap/heatmapview.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QNativeGestureEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

namespace fleetscope {

void HeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging) {
        panBy(event->position() - m_dragFrom);
        m_dragFrom = event->position();
    }
    const int gpu = gpuAt(event->position());
    if (gpu != m_hoveredGpu) {
        m_hoveredGpu = gpu;
        Q_EMIT hoveredGpuChanged(gpu);
        if (gpu < 0) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(
                event->globalPosition().toPoint(), describeGpu(gpu), this, cellRect(gpu).toAlignedRect());
        }
    }
    QWidget::mouseMoveEvent(event);
}

void HeatmapView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_pressedAt = event->position();
        m_dragFrom = event->position();
        m_dragging = true;
        setCursor(Qt::ClosedHandCursor);
    }
    QWidget::mousePressEvent(event);
}

void HeatmapView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_dragging) {
        m_dragging = false;
        unsetCursor();
        // A click, not a drag: select the GPU under the cursor (or nothing).
        if ((event->position() - m_pressedAt).manhattanLength() < 4) {
            const int gpu = gpuAt(event->position());
            setSelectedGpu(gpu);
            Q_EMIT gpuSelected(m_state.selectedGpu());
        }
    }
    QWidget::mouseReleaseEvent(event);
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent *event)
{
    // By job, a block is a job: a double-click on it opens the job's page rather than zooming.
    if (m_state.arrangement() == Arrangement::ByJob && event->button() == Qt::LeftButton) {
        const JobsPtr jobs = m_state.jobs();
        const int gpu = gpuAt(event->position());
        if (const Job *job = jobs && gpu >= 0 ? jobs->runningJobOn(static_cast<uint32_t>(gpu)) : nullptr) {
            Q_EMIT jobPageRequested(job->id);
            return;
        }
    }
    zoomAt(event->position(), (event->modifiers() & Qt::ShiftModifier) != 0 ? 0.5 : 2.0);
}

void HeatmapView::wheelEvent(QWheelEvent *event)
{
    // One notch (120) zooms by 25%; touchpads send smaller steps for smooth zooming.
    const double notches = event->angleDelta().y() / 120.0;
    if (notches != 0) {
        zoomAt(event->position(), std::pow(1.25, notches));
    }
    event->accept();
}

void HeatmapView::keyPressEvent(QKeyEvent *event)
{
    const QPointF centre(width() / 2.0, height() / 2.0);
    const double step = std::min(width(), height()) * 0.1;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomAt(centre, 1.25);
        break;
    case Qt::Key_Minus:
        zoomAt(centre, 0.8);
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        zoomToFit();
        break;
    case Qt::Key_Escape:
    case Qt::Key_Backspace:
        Q_EMIT upRequested();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (const int gpu = m_state.selectedGpu() >= 0 ? m_state.selectedGpu() : m_hoveredGpu; gpu >= 0) {
            Q_EMIT gpuActivated(gpu);
        }
        break;
    case Qt::Key_J: {
        const int gpu = m_hoveredGpu >= 0 ? m_hoveredGpu : m_state.selectedGpu();
        const JobsPtr jobs = m_state.jobs();
        if (const Job *job = jobs && gpu >= 0 ? jobs->runningJobOn(static_cast<uint32_t>(gpu)) : nullptr) {
            Q_EMIT jobPageRequested(job->id);
        }
        break;
    }
    case Qt::Key_Left:
        panBy({ step, 0 });
        break;
    case Qt::Key_Right:
        panBy({ -step, 0 });
        break;
    case Qt::Key_Up:
        panBy({ 0, step });
        break;
    case Qt::Key_Down:
        panBy({ 0, -step });
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void HeatmapView::leaveEvent(QEvent *event)
{
    if (m_hoveredGpu >= 0) {
        m_hoveredGpu = -1;
        Q_EMIT hoveredGpuChanged(-1);
    }
    QWidget::leaveEvent(event);
}

bool HeatmapView::event(QEvent *event)
{
    // Pinch on a touchpad or touch screen.
    if (event->type() == QEvent::NativeGesture) {
        auto *gesture = static_cast<QNativeGestureEvent *>(event);
        if (gesture->gestureType() == Qt::ZoomNativeGesture) {
            zoomAt(gesture->position(), 1.0 + gesture->value());
            return true;
        }
    }
    // A tooltip request (the mouse rests) shows the live value, refreshed from the current frame.
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int gpu = gpuAt(help->pos());
        if (gpu >= 0) {
            QToolTip::showText(help->globalPos(), describeGpu(gpu), this, cellRect(gpu).toAlignedRect());
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QWidget::event(event);
}

} // namespace fleetscope
