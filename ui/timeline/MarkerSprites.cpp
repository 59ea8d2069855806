#include "timeline/MarkerSprites.h"

#include <QPaintEngine>
#include <QPainter>
#include <QPolygonF>

namespace mapi::ui {

void MarkerSprites::drawShape(QPainter &painter, Shape shape, const QPointF &centre, const QColor &fill,
                              const QColor &outline)
{
    const double cx = centre.x(), cy = centre.y();
    switch (shape) {
    case Shape::Diamond: {
        constexpr double h = 3.5;
        painter.setPen(QPen(outline, 1));
        painter.setBrush(fill);
        painter.drawPolygon(QPolygonF({QPointF(cx, cy - h), QPointF(cx + h, cy), QPointF(cx, cy + h), QPointF(cx - h, cy)}));
        break;
    }
    case Shape::HeadDown:
    case Shape::HeadUp: {
        const double direction = shape == Shape::HeadDown ? 1 : -1;
        painter.setPen(Qt::NoPen);
        painter.setBrush(fill);
        painter.drawPolygon(QPolygonF({QPointF(cx, cy), QPointF(cx - 3.5, cy - 6 * direction), QPointF(cx + 3.5, cy - 6 * direction)}));
        break;
    }
    case Shape::Dot:
        painter.setPen(Qt::NoPen);
        painter.setBrush(fill);
        painter.drawEllipse(centre, 2.5, 2.5);
        break;
    case Shape::Ring:
        painter.setPen(QPen(fill, 1.5));
        painter.setBrush(Qt::NoBrush);
        painter.drawEllipse(centre, 3.5, 3.5);
        break;
    }
    painter.setPen(Qt::NoPen);
    painter.setBrush(Qt::NoBrush);
}

void MarkerSprites::draw(QPainter &painter, Shape shape, int x, int y, QRgb fill, QRgb outline)
{
    const QPointF centre(x + 0.5, y);
    const QColor fillColor = QColor::fromRgba(fill);
    if (!painter.paintEngine() || painter.paintEngine()->type() != QPaintEngine::Raster) {
        const bool antialiased = painter.testRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::Antialiasing, true);
        drawShape(painter, shape, centre, fillColor, QColor::fromRgba(outline));
        painter.setRenderHint(QPainter::Antialiasing, antialiased);
        return;
    }
    const qreal ratio = painter.device() ? painter.device()->devicePixelRatioF() : 1.0;
    const Key key(shape, fill, shape == Shape::Diamond ? outline : 0, ratio);
    auto it = m_images.find(key);
    if (it == m_images.end()) {
        if (m_images.size() >= kMaxImages)
            m_images.clear();
        QImage image(QSize(2 * kHalf + 1, 2 * kHalf + 1) * ratio, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(ratio);
        image.fill(Qt::transparent);
        QPainter imagePainter(&image);
        imagePainter.setRenderHint(QPainter::Antialiasing, true);
        drawShape(imagePainter, shape, QPointF(kHalf + 0.5, kHalf), fillColor, QColor::fromRgba(outline));
        imagePainter.end();
        it = m_images.emplace(key, std::move(image)).first;
    }
    painter.drawImage(QPointF(x - kHalf, y - kHalf), it->second);
}

} // namespace mapi::ui
