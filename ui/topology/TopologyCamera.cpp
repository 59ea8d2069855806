#include "topology/TopologyCamera.h"

#include <algorithm>
#include <cmath>

namespace mapi::ui {

namespace {

QPointF viewportCenter(QSizeF viewport)
{
    return QPointF(viewport.width() / 2.0, viewport.height() / 2.0);
}

} // namespace

QPointF TopologyCamera::mapToView(QPointF world) const
{
    return (world - center) * scale + viewportCenter(viewport);
}

QPointF TopologyCamera::mapToWorld(QPointF view) const
{
    return (view - viewportCenter(viewport)) / scale + center;
}

QTransform TopologyCamera::worldTransform() const
{
    const QPointF offset = viewportCenter(viewport) - center * scale;
    return QTransform(scale, 0, 0, scale, offset.x(), offset.y());
}

void TopologyCamera::zoomAround(QPointF anchor, double newScale)
{
    const QPointF world = mapToWorld(anchor);
    scale = std::clamp(newScale, kMinScale, kMaxScale);
    center = world - (anchor - viewportCenter(viewport)) / scale;
}

double scaleToFit(const QRectF &bounds, const QRectF &area)
{
    if (area.width() <= 0 || area.height() <= 0)
        return 0.0;
    return std::min(area.width() / std::max(1.0, bounds.width()), area.height() / std::max(1.0, bounds.height()));
}

void TopologyCamera::fit(const QRectF &bounds, const QRectF &area, double maxScale)
{
    if (bounds.isNull() || area.width() <= 0 || area.height() <= 0)
        return;
    scale = std::clamp(scaleToFit(bounds, area), kMinScale, std::min(maxScale, kMaxScale));
    // The camera's centre is the viewport's: shift it so that the bounds' centre lands on the area's.
    center = bounds.center() - (area.center() - viewportCenter(viewport)) / scale;
}

TopologyCamera TopologyCamera::between(const TopologyCamera &from, const TopologyCamera &to, double t)
{
    TopologyCamera c = to;
    c.center = from.center + (to.center - from.center) * t;
    c.scale = std::exp(std::log(from.scale) + (std::log(to.scale) - std::log(from.scale)) * t);
    return c;
}

} // namespace mapi::ui
