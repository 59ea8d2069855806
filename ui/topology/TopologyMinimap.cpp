#include "topology/TopologyMinimap.h"

#include "style/Colors.h"
#include "topology/TopologyGraph.h"
#include "topology/TopologyStyle.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <utility>

namespace mapi::ui {

namespace {

constexpr double kMinSide = 28; // view pixels: a very wide or tall graph still gets a usable strip

bool shown(const TopologyNode &n) { return !n.hidden && n.positioned; }

bool troubled(const TopologyNode &n) { return n.health == Health::Failed || n.health == Health::Unresponsive; }

// A filled square of `side` device pixels centred on (x, y), clipped to the image.
void stamp(QImage &image, int x, int y, int side, QRgb colour)
{
    const int x0 = std::max(0, x - side / 2), x1 = std::min(image.width(), x - side / 2 + side);
    const int y0 = std::max(0, y - side / 2), y1 = std::min(image.height(), y - side / 2 + side);
    for (int yy = y0; yy < y1; ++yy) {
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(yy));
        std::fill(line + x0, line + std::max(x0, x1), colour);
    }
}

// A square outline of `side` device pixels centred on (x, y).
void ring(QImage &image, int x, int y, int side, QRgb colour)
{
    const int half = side / 2;
    for (int d = -half; d <= half; ++d) {
        for (const auto &[px, py] : {std::pair{x + d, y - half}, {x + d, y + half}, {x - half, y + d}, {x + half, y + d}})
            if (px >= 0 && py >= 0 && px < image.width() && py < image.height())
                reinterpret_cast<QRgb *>(image.scanLine(py))[px] = colour;
    }
}

} // namespace

void TopologyMinimap::clear()
{
    m_image = QImage();
    m_world = m_drawn = QRectF();
    m_size = QSizeF();
    m_dotsStale = true;
    m_builtRevision = ~quint64(0);
    m_builtRatio = 0;
}

void TopologyMinimap::paint(QPainter &painter, const std::vector<TopologyNode> &nodes, const std::vector<char> &selected,
                            quint64 revision, const QRectF &visibleWorld, QSizeF viewSize, double bottomMargin,
                            double devicePixelRatio, const TopologyColors &colors)
{
    m_drawn = QRectF();
    if (revision != m_builtRevision || devicePixelRatio != m_builtRatio) {
        // The map's size follows the graph's shape: its bounds first.
        QRectF world;
        for (const TopologyNode &n : nodes)
            if (shown(n))
                world = world.isNull() ? QRectF(n.position, QSizeF(1, 1)) : world.united(QRectF(n.position, QSizeF(1, 1)));
        if (world.isNull()) {
            clear();
            return;
        }
        m_world = world.adjusted(-20, -20, 20, 20); // a node's radius or so around the outermost
        QSizeF size(kMaxWidth, kMaxWidth * m_world.height() / std::max(1.0, m_world.width()));
        if (size.height() > kMaxHeight)
            size = QSizeF(kMaxHeight * m_world.width() / std::max(1.0, m_world.height()), kMaxHeight);
        m_size = size.expandedTo(QSizeF(kMinSide, kMinSide));
        m_builtRevision = revision;
        m_builtRatio = devicePixelRatio;
        m_dotsStale = true;
    }
    if (m_world.isNull())
        return;
    const QSizeF size = m_size;
    // Only while part of the graph is out of view, and where it leaves the graph most of the view.
    if (visibleWorld.contains(m_world.adjusted(20, 20, -20, -20)) || viewSize.width() < 3 * size.width()
        || viewSize.height() < 3 * size.height())
        return;
    if (std::exchange(m_dotsStale, false)) // drawn only when shown: a fitted view pays the bounds' pass alone
        rebuild(nodes, selected, size, devicePixelRatio, colors);
    m_drawn = QRectF(QPointF(viewSize.width() - size.width() - 8, viewSize.height() - bottomMargin - size.height()), size);
    painter.save();
    painter.resetTransform();
    painter.setOpacity(1);
    painter.drawImage(m_drawn.topLeft(), m_image);
    painter.setClipRect(m_drawn);
    // The view's own rectangle on it (at least a few pixels: zoomed far in it would vanish).
    const double sx = size.width() / m_world.width(), sy = size.height() / m_world.height();
    QRectF view(m_drawn.left() + (visibleWorld.left() - m_world.left()) * sx, m_drawn.top() + (visibleWorld.top() - m_world.top()) * sy,
                visibleWorld.width() * sx, visibleWorld.height() * sy);
    if (view.width() < 6 || view.height() < 6)
        view = QRectF(view.center() - QPointF(3, 3), QSizeF(6, 6));
    QColor fill = colors.selection;
    fill.setAlpha(40);
    painter.setPen(QPen(colors.selection, 1.5));
    painter.setBrush(fill);
    painter.drawRect(view);
    painter.restore();
    painter.setPen(QPen(colors.badgeBorder, 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(m_drawn.adjusted(-0.5, -0.5, 0.5, 0.5));
}

std::optional<QPointF> TopologyMinimap::worldAt(QPointF viewPos, bool clampToMap) const
{
    if (m_drawn.isNull() || (!clampToMap && !m_drawn.contains(viewPos)))
        return std::nullopt;
    const double fx = (viewPos.x() - m_drawn.left()) / m_drawn.width();
    const double fy = (viewPos.y() - m_drawn.top()) / m_drawn.height();
    return QPointF(m_world.left() + std::clamp(fx, 0.0, 1.0) * m_world.width(),
                   m_world.top() + std::clamp(fy, 0.0, 1.0) * m_world.height());
}

void TopologyMinimap::rebuild(const std::vector<TopologyNode> &nodes, const std::vector<char> &selected, QSizeF size,
                              double devicePixelRatio, const TopologyColors &colors)
{
    const QSize pixels = (size * devicePixelRatio).toSize();
    m_image = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
    m_image.setDevicePixelRatio(devicePixelRatio);
    QColor background = colors.badgeBackground;
    background.setAlpha(230);
    m_image.fill(background);
    const double sx = pixels.width() / m_world.width(), sy = pixels.height() / m_world.height();
    const auto at = [&](const TopologyNode &n) {
        return std::pair{int(std::lround((n.position.x() - m_world.left()) * sx)), int(std::lround((n.position.y() - m_world.top()) * sy))};
    };
    const int dot = std::max(1, int(std::lround(1.5 * devicePixelRatio)));
    // Healthy and quiet first, the selection's rings over them, trouble over everything (a ring
    // of a dense selection would otherwise hide it).
    for (const TopologyNode &n : nodes)
        if (shown(n) && !troubled(n)) {
            const auto [x, y] = at(n);
            stamp(m_image, x, y, dot, qPremultiply(healthColor(n.health).rgba()));
        }
    const QRgb selection = qPremultiply(colors.selection.rgba());
    for (size_t v = 0; v < nodes.size() && v < selected.size(); ++v)
        if (selected[v] && shown(nodes[v])) {
            const auto [x, y] = at(nodes[v]);
            ring(m_image, x, y, 4 * dot + 1, selection);
        }
    for (const TopologyNode &n : nodes)
        if (shown(n) && troubled(n)) {
            const auto [x, y] = at(n);
            stamp(m_image, x, y, 2 * dot + 1, qPremultiply(healthColor(n.health).rgba()));
        }
}

} // namespace mapi::ui
