#include "common/PoolThreadPaint.h"

#include <QImage>
#include <QPainter>
#include <QSemaphore>
#include <QWidget>
#include <QThreadPool>

namespace mapi::ui {

void paintOnPoolThread(const std::function<void()> &paint)
{
    QSemaphore done;
    const bool started = QThreadPool::globalInstance()->tryStart([&paint, &done] {
        paint();
        done.release();
    });
    if (!started) {
        paint();
        return;
    }
    done.acquire();
}

void paintFrameOnPoolThread(QWidget *widget, QImage &frame, const std::function<void(QPainter &)> &render)
{
    const qreal dpr = widget->devicePixelRatioF();
    const QSize pixels = (QSizeF(widget->size()) * dpr).toSize();
    if (frame.size() != pixels || frame.devicePixelRatio() != dpr) {
        frame = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
        frame.setDevicePixelRatio(dpr);
    }
    paintOnPoolThread([&frame, &render] {
        QPainter painter(&frame);
        render(painter);
    });
    QPainter painter(widget);
    painter.drawImage(0, 0, frame);
}

} // namespace mapi::ui
