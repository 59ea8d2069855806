// Painting a view's frame on a thread of QThreadPool::globalInstance() while the GUI thread waits.
//
// Why: Qt 6.4's raster engine cuts every fill of more than about 96 spans (an antialiased or wide
// line, a large shape) into pieces for QThreadPool::globalInstance() and waits for them, unless
// the painting thread is one of that pool's threads. On the GUI thread each such fill therefore
// costs a hand-off and a wake-up of another core; on a virtual machine whose other vCPU is idle
// that costs far more than the fill. A test frame of 300 wide antialiased lines and 1,000 circles
// into a 1600×1000 image: 151 ms on the GUI thread with both cores idle, 88 ms with the other
// core busy, 14 ms on a pool thread (every fill done in place: one hand-off a frame).
// Qt 6.6 and later hand fills to a pool of their own, whose threads these are not: there the
// frame is painted as before, one hand-off later (docs/benchmarks.md, "Painting off the GUI thread").
#pragma once

#include <functional>

class QImage;
class QPainter;
class QWidget;

namespace mapi::ui {

// Runs `paint` on a global pool thread and returns when it is done; runs it here when no pool
// thread is free. Contract: `paint` draws into a QImage only (no QPixmap, no call that needs
// the GUI thread). The GUI thread is blocked meanwhile, so `paint` may read and write the
// caller's state as if it ran here. Thread: the GUI thread.
void paintOnPoolThread(const std::function<void()> &paint);

// A widget's paintEvent through it: `render` draws into `frame` (sized to the widget, at its
// device pixel ratio) on a pool thread, then the frame is copied to the widget in one piece.
void paintFrameOnPoolThread(QWidget *widget, QImage &frame, const std::function<void(QPainter &)> &render);

} // namespace mapi::ui
