// The topology's camera: which world point sits at the view's centre, and how many view pixels
// one world unit spans.
//
// A plain value type with no widget behind it (like TimelineAxis), so tests exercise the maths
// directly. Units: world coordinates are the layout's (TopologyLayout); view coordinates are the
// widget's pixels, origin at its top left. `viewport` is the widget's size: the owner keeps it
// current (TopologyView does in resizeEvent()).
#pragma once

#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QTransform>

namespace mapi::ui {

struct TopologyCamera
{
    // Zoom limits: 2% shows 10,000 agents whole in a window; 400% makes a node's second label
    // line legible with room around it.
    static constexpr double kMinScale = 0.02;
    static constexpr double kMaxScale = 4.0;

    QPointF center;  // world point at the viewport's centre
    double scale = 1.0; // view pixels per world unit, within [kMinScale, kMaxScale]
    QSizeF viewport;

    QPointF mapToView(QPointF world) const;
    QPointF mapToWorld(QPointF view) const;
    QTransform worldTransform() const; // world → view, for a QPainter

    // Moves the picture by `pixels` (the content follows the pointer).
    void panByPixels(QPointF pixels) { center -= pixels / scale; }
    // Sets the scale (clamped to the limits) keeping the world point under `anchor` under it.
    void zoomAround(QPointF anchor, double newScale);

    // Where `bounds` (world) shows as large as fits into `area` (view pixels), at most at
    // `maxScale`, centred on the area (which need not be centred in the viewport). Null bounds or
    // an empty area leave the camera as it is.
    void fit(const QRectF &bounds, const QRectF &area, double maxScale);

    // The camera a fraction `t` (0…1) of the way from `from` to `to`: the centre moves linearly,
    // the scale geometrically, so that a zoom looks even all the way.
    static TopologyCamera between(const TopologyCamera &from, const TopologyCamera &to, double t);
};

// The scale at which `bounds` fills `area` (the smaller of the two ratios); 0 for an empty area.
double scaleToFit(const QRectF &bounds, const QRectF &area);

} // namespace mapi::ui
