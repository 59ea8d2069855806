// Constants and helpers shared by TopologyView.cpp and TopologyViewPaint.cpp (the view's behaviour and its
// painting). Internal to the view: nothing else includes it.
#pragma once

#include "topology/TopologyGraph.h"

#include <QCoreApplication>
#include <QPointF>
#include <QString>

#include <algorithm>
#include <cmath>

namespace mapi::ui::topology_view {

// The legend's grid (pixels): 7 rows of 3 columns in a padded box at the bottom left.
constexpr double kLegendRow = 17, kLegendColumn = 118, kLegendPad = 8;
constexpr double kStatusLineHeight = 36; // view pixels kept free at the bottom for the status line (paintStatus)
constexpr double kCoarseTreeScale = 0.15;     // below: tree lines without the drops to leaves
constexpr double kSpriteMaxRadius = 7;        // view pixels: smaller nodes are stamped from cached pictures
constexpr int kMinLabelPixels = 7;            // smaller labels are not drawn (except for selected nodes)
constexpr int kMaxLabelPixels = 14;           // zoomed in further, labels stop growing
constexpr int kMoveAnimationMs = 320;
constexpr int kCameraAnimationMs = 260;
constexpr int kDecayRepaintMs = 1000;         // widths decay with τ = 10 s: a 1 s step changes them ≤ 10 %
constexpr int kQuietRepaintMs = 250;          // traffic and health changes repaint at most 4 times a second
constexpr int kStillAfterMs = 150;            // no pan, zoom or animation for this long: draw at full quality
constexpr int kEdgeScanLimit = TopologyGraph::kRankedInOrder; // ranked edges looked at per paint, drawn or culled
constexpr int kHoverEdgeLimit = 300;         // edges of the hovered agent drawn beyond the budget
constexpr int kCurveSegments = 16;            // a message curve is drawn as this many straight pieces
constexpr double kMaxBulgePixels = 90;        // how far a message curve bends away from the straight line

// Message edges drawn at most, busiest first: fewer when zoomed out, where they would only be
// a tangle. What they cost is the length stroked: measured on the raster engine, an
// antialiased hairline ~50 ns per pixel of length, a wider antialiased line ~3× that, a line
// without antialiasing ~25 ns whatever its width. So the visible "ink" is capped too, in
// hairline pixels: ≤ ~4 ms of a still frame; while the view moves, no antialiasing and
// ≤ ~2 ms, so every frame of a pan or zoom stays well inside 16 ms.
struct TrafficBudget
{
    int edges;
    double ink;      // hairline-pixel equivalents
};
inline TrafficBudget trafficBudget(double scale, bool moving)
{
    const int edges = scale < 0.35 ? 150 : (scale < 0.8 ? 300 : 500);
    return moving ? TrafficBudget{std::min(edges, 200), 70000} : TrafficBudget{edges, 80000};
}
constexpr double kWideLineInkFactor = 3.3; // an antialiased line wider than 1.5 px vs a hairline

// Label font size in view pixels: labels scale with the zoom, like the rest of the picture.
inline int labelPixelsAt(double scale)
{
    return int(std::lround(TopologyGraph::kLabelPixelSize * scale));
}

inline QString formatAge(qint64 ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 1000)
        return QCoreApplication::translate("TopologyView", "just now");
    if (ms < 60000)
        return QCoreApplication::translate("TopologyView", "%1 s ago").arg(ms / 1000);
    if (ms < 3600000)
        return QCoreApplication::translate("TopologyView", "%1 min ago").arg(ms / 60000);
    return QCoreApplication::translate("TopologyView", "%1 h ago").arg(ms / 3600000);
}

inline QPointF quadPoint(const QPointF &a, const QPointF &c, const QPointF &b, double t)
{
    const double u = 1 - t;
    return a * (u * u) + c * (2 * u * t) + b * (t * t);
}

inline double distance(QPointF a, QPointF b)
{
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

inline double distanceToSegment(QPointF p, QPointF a, QPointF b)
{
    const QPointF ab = b - a;
    const double lengthSquared = QPointF::dotProduct(ab, ab);
    const double t = lengthSquared > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / lengthSquared, 0.0, 1.0) : 0.0;
    return distance(p, a + ab * t);
}

} // namespace mapi::ui::topology_view
