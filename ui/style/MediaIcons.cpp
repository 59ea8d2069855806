#include "style/MediaIcons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace mapi::ui {

namespace {

// A right-pointing triangle in the box (x, y, w, h), or left-pointing.
QPainterPath triangle(double x, double y, double w, double h, bool right)
{
    QPainterPath path;
    if (right) {
        path.moveTo(x, y);
        path.lineTo(x + w, y + h / 2);
        path.lineTo(x, y + h);
    } else {
        path.moveTo(x + w, y);
        path.lineTo(x, y + h / 2);
        path.lineTo(x + w, y + h);
    }
    path.closeSubpath();
    return path;
}

// The glyph on a unit square (0..1), scaled by the painter.
QPainterPath glyphPath(MediaGlyph glyph)
{
    QPainterPath path;
    switch (glyph) {
    case MediaGlyph::Play: path.addPath(triangle(0.25, 0.15, 0.6, 0.7, true)); break;
    case MediaGlyph::Pause:
        path.addRect(0.22, 0.18, 0.2, 0.64);
        path.addRect(0.58, 0.18, 0.2, 0.64);
        break;
    case MediaGlyph::StepBack: // two triangles pointing left
        path.addPath(triangle(0.08, 0.22, 0.42, 0.56, false));
        path.addPath(triangle(0.5, 0.22, 0.42, 0.56, false));
        break;
    case MediaGlyph::StepForward:
        path.addPath(triangle(0.08, 0.22, 0.42, 0.56, true));
        path.addPath(triangle(0.5, 0.22, 0.42, 0.56, true));
        break;
    case MediaGlyph::ToStart: // a bar, then a triangle pointing left
        path.addRect(0.15, 0.2, 0.12, 0.6);
        path.addPath(triangle(0.3, 0.2, 0.55, 0.6, false));
        break;
    case MediaGlyph::ToEnd:
        path.addPath(triangle(0.15, 0.2, 0.55, 0.6, true));
        path.addRect(0.73, 0.2, 0.12, 0.6);
        break;
    }
    return path;
}

QPixmap glyphPixmap(MediaGlyph glyph, int size, const QColor &color)
{
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(size, size);
    painter.setPen(Qt::NoPen);
    painter.setBrush(color);
    painter.drawPath(glyphPath(glyph));
    return pixmap;
}

} // namespace

QIcon mediaIcon(MediaGlyph glyph, const QPalette &palette)
{
    QIcon icon;
    for (const int size : {16, 32}) {
        icon.addPixmap(glyphPixmap(glyph, size, palette.color(QPalette::Active, QPalette::ButtonText)), QIcon::Normal);
        icon.addPixmap(glyphPixmap(glyph, size, palette.color(QPalette::Disabled, QPalette::ButtonText)), QIcon::Disabled);
    }
    return icon;
}

} // namespace mapi::ui
