// The whole graph in a corner of the topology while the view shows only part of it: a dot per
// shown agent in its health's colour, the failed and unresponsive ones larger and on top and the
// selected ones ringed, so trouble and the selection are seen from anywhere; the view's own
// rectangle drawn on it. A press or a drag on it moves the view there (TopologyView's input).
//
// Shown only when it helps and costs the graph little room: some of the graph is out of view,
// and the view is at least three times the map's size each way. The dots are drawn into an image
// again in the first frame that shows it after the graph, the selection or the palette changed
// (TopologyView counts revisions): three passes over the agents writing pixels, 1–2.5 ms at 10,000
// (bench_fleet_views). A frame that does not show it pays only the pass for the graph's bounds.
//
// Thread: the one that paints TopologyView (a pool thread while the GUI thread waits, or the GUI
// thread: common/PoolThreadPaint.h) and the GUI thread for input; never both at once.
#pragma once

#include <QImage>
#include <QRectF>

#include <optional>
#include <vector>

class QPainter;

namespace mapi::ui {

struct TopologyColors;
struct TopologyNode;

class TopologyMinimap
{
public:
    static constexpr double kMaxWidth = 220;   // view pixels
    static constexpr double kMaxHeight = 150;

    // Draws it (or nothing) at the bottom right of a `viewSize` view, above `bottomMargin` pixels
    // kept for the status line. `visibleWorld`: what the view shows, in world units. `selected`:
    // per node row, 1 for a selected agent (or a collapsed node standing for one).
    void paint(QPainter &painter, const std::vector<TopologyNode> &nodes, const std::vector<char> &selected,
               quint64 revision, const QRectF &visibleWorld, QSizeF viewSize, double bottomMargin, double devicePixelRatio,
               const TopologyColors &colors);

    // Where it was drawn last (view pixels); null when it was not.
    QRectF rect() const { return m_drawn; }
    // The world point under a view point of the map; none outside it, unless `clampToMap` (a drag
    // that left the map goes on along its edge). None when the map is not shown.
    std::optional<QPointF> worldAt(QPointF viewPos, bool clampToMap = false) const;
    void clear();

private:
    void rebuild(const std::vector<TopologyNode> &nodes, const std::vector<char> &selected, QSizeF size,
                 double devicePixelRatio, const TopologyColors &colors);

    QImage m_image;              // the dots, at the device pixel ratio
    QRectF m_world;              // the graph's bounds (world units); null: nothing shown
    QSizeF m_size;               // the map's size for them (view pixels)
    bool m_dotsStale = true;     // m_image is not of the current revision yet
    QRectF m_drawn;              // view pixels
    quint64 m_builtRevision = ~quint64(0);
    double m_builtRatio = 0;     // the device pixel ratio it was drawn at
};

} // namespace mapi::ui
