// The timeline's small antialiased marks (a state change's diamond, a message's head, dot and
// ring), each drawn once per colour into an image that is then copied where the mark goes.
//
// Why: under a flood a paint holds thousands of them, and the raster engine rasterises an
// antialiased polygon or ellipse in several microseconds, where copying a 17 × 17 image costs a
// fraction of one (docs/benchmarks.md, "The timeline's marks as images"). The image is the same
// shape drawn at the same sub-pixel offset, so the pixels are those the shape itself would give.
// Into a device that is not raster (an SVG picture) the shape is drawn as before, as a shape.
// Thread: the GUI thread (the timeline's paint).
#pragma once

#include <QImage>
#include <QRgb>

#include <map>
#include <tuple>

class QColor;
class QPainter;
class QPointF;

namespace mapi::ui {

class MarkerSprites
{
public:
    enum class Shape : quint8 {
        Diamond,  // a state change: filled, outlined by `outline` (1 px)
        HeadDown, // a message's arrowhead at a recipient below the sender: its tip at the centre
        HeadUp,   // the same, at a recipient above the sender
        Dot,      // a message's sender end
        Ring,     // a message within one (folded) lane: `fill` is the ring's colour
    };

    // Draws `shape` centred on (x + 0.5, y): the middle of pixel column x, where the timeline
    // puts its marks. `outline` is read by the diamond only.
    void draw(QPainter &painter, Shape shape, int x, int y, QRgb fill, QRgb outline = 0);

    // The shape itself, antialiased, centred on `centre` (what the images hold).
    static void drawShape(QPainter &painter, Shape shape, const QPointF &centre, const QColor &fill,
                          const QColor &outline);

private:
    static constexpr int kHalf = 8;          // an image reaches kHalf pixels on each side of its centre
    static constexpr size_t kMaxImages = 512; // more (a palette changed many times): start again
    using Key = std::tuple<Shape, QRgb, QRgb, qreal>; // shape, fill, outline, device pixel ratio
    std::map<Key, QImage> m_images;
};

} // namespace mapi::ui
