// SPDX-License-Identifier: Apache-2.0
#include "app/firstpaint.h"

#include <QBackingStore>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QPaintDevice>
#include <QWidget>

namespace fleetscope {
namespace {

void prepareFirstPaint(QWidget *window)
{
    // A layout's activation posts a request to its parent's: a few rounds reach the top (the desk's tree is about
    // six layouts deep); a round with nothing posted costs nothing.
    for (int round = 0; round < 8; ++round) {
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    if (QGuiApplication::platformName() != QLatin1String("xcb")) {
        return;
    }
    QBackingStore *store = window->backingStore();
    if (store == nullptr) {
        return;
    }
    store->resize(window->size()); // what Qt's first paint would do; the same size then keeps this memory
    QPaintDevice *device = store->paintDevice();
    if (device != nullptr && device->devType() == QInternal::Image) {
        window->render(device);
    }
}

// Sees the window's show event before the window does: Qt sends it after its children's and before mapping it (not
// a spontaneous one, from the window system, of a window already mapped).
class FirstPaint : public QObject
{
public:
    using QObject::QObject;
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Show && !event->spontaneous() && watched == parent()) {
            prepareFirstPaint(static_cast<QWidget *>(watched));
        }
        return false;
    }
};

} // namespace

void prepareFirstPaintOnShow(QWidget *window)
{
    window->installEventFilter(new FirstPaint(window));
}

} // namespace fleetscope
