// TopologyView: painting (renderTo and its layers). The behaviour is in TopologyView.cpp.
#include "topology/TopologyView.h"

#include "common/PoolThreadPaint.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "topology/TopologyStyle.h"
#include "topology/TopologyViewDetail.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

using namespace topology_view;

// ---- painting --------------------------------------------------------------------------

const TopologyView::LabelFont &TopologyView::labelFont(int pixelSize)
{
    auto it = m_labelFonts.find(pixelSize);
    if (it == m_labelFonts.end()) {
        LabelFont f;
        f.font = font();
        f.font.setPixelSize(pixelSize);
        f.ascent = QFontMetricsF(f.font).ascent();
        it = m_labelFonts.emplace(pixelSize, f).first;
    }
    return it->second;
}

void TopologyView::paintEvent(QPaintEvent *)
{
    // Drawn into an image on a pool thread, then copied to the screen in one piece: at 1,000
    // agents and more most of a frame is antialiased fills (common/PoolThreadPaint.h says why).
    paintFrameOnPoolThread(this, m_frame, [this](QPainter &painter) { renderTo(painter); });
}

void TopologyView::renderTo(QPainter &painter)
{
    const TopologyColors colors(palette());
    painter.fillRect(rect(), colors.background);
    m_drawnEdges.clear();
    m_collapseBadges.clear();
    m_scopeLabels.clear();
    m_nodeLabelsDrawn = 0;
    m_smallestNodeLabel = 0;
    if (m_graph.nodes().empty()) {
        m_minimap.clear();
        painter.setPen(colors.mutedText);
        painter.drawText(rect(), Qt::AlignCenter, tr("No agents yet.\nThey appear here as the MAP system registers them."));
        return;
    }
    const QRectF visibleWorld = worldTransform().inverted().mapRect(QRectF(rect()));
    // A selected agent inside a collapsed subtree lights up the node standing for it.
    m_selectedShown.assign(m_graph.nodes().size(), 0);
    for (const QString &id : std::as_const(m_selectedIds))
        if (const int row = m_graph.row(id); row >= 0)
            m_selectedShown[size_t(m_graph.representative(row))] = 1;
    painter.setRenderHint(QPainter::Antialiasing, true);
    paintScopeBoxes(painter, colors, visibleWorld);
    paintTreeLines(painter, colors);
    // With a causal chain shown, the rest of the traffic steps back so the chain reads.
    const bool chainShown = m_selection && !m_selection->chain().empty();
    painter.setOpacity(chainShown ? 0.3 : 1.0);
    paintTraffic(painter, colors);
    painter.setOpacity(1.0);
    paintChain(painter, colors);
    paintNodes(painter, colors, visibleWorld);
    paintNodeOverlays(painter, colors, visibleWorld);
    paintScopeLabels(painter, colors, visibleWorld); // on top: traffic must not hide a group's name
    if (!m_rubberBand.isNull()) {
        QColor fill = colors.selection;
        fill.setAlpha(40);
        painter.setPen(QPen(colors.selection, 1));
        painter.setBrush(fill);
        painter.drawRect(m_rubberBand);
    }
    if (m_legendVisible)
        paintLegend(painter, colors);
    paintStatus(painter, colors);
    m_minimap.paint(painter, m_graph.nodes(), m_selectedShown, m_minimapRevision, visibleWorld, size(), kStatusLineHeight,
                    devicePixelRatioF(), colors);
}

void TopologyView::paintChain(QPainter &painter, const TopologyColors &colors)
{
    if (!m_selection || m_selection->chain().empty())
        return;
    const SystemStore *store = m_session->store();
    const MessageLog &messages = store->messages();
    const auto &nodes = m_graph.nodes();
    auto shownNode = [&](const QString &agentId) -> const TopologyNode * {
        const int row = m_graph.row(agentId);
        if (row < 0)
            return nullptr;
        const TopologyNode &n = nodes[size_t(m_graph.representative(row))];
        return n.positioned ? &n : nullptr;
    };
    QPen pen(colors.selection, 2.5);
    pen.setCosmetic(true);
    QFont numberFont = font();
    numberFont.setPixelSize(10);
    numberFont.setBold(true);
    painter.setFont(numberFont);
    const QFontMetricsF metrics(numberFont);
    int step = 0;
    for (const int row : m_selection->chain()) {
        if (++step > kMaxChainArrows)
            break;
        if (!messages.isKept(size_t(row)))
            continue; // trimmed by a live session's history bound
        const TopologyNode *from = shownNode(messages.fromAgentId(size_t(row)));
        if (!from)
            continue;
        for (int i = 0; i < messages.recipientCount(size_t(row)) && i < 8; ++i) {
            const TopologyNode *to = shownNode(messages.recipient(size_t(row), i));
            if (!to || to == from)
                continue;
            const QPointF a = mapToView(from->position), b = mapToView(to->position);
            const QLineF line(a, b);
            if (line.length() < 1)
                continue;
            // Ends at the recipient's rim, with a head.
            const double rim = to->radius * m_camera.scale + 2;
            const QPointF tip = line.pointAt(std::max(0.0, 1.0 - rim / line.length()));
            painter.setPen(pen);
            painter.drawLine(a, tip);
            const QLineF back(tip, a);
            const QLineF left = QLineF::fromPolar(9, back.angle() + 25).translated(tip);
            const QLineF right = QLineF::fromPolar(9, back.angle() - 25).translated(tip);
            painter.setPen(Qt::NoPen);
            painter.setBrush(colors.selection);
            painter.drawPolygon(QPolygonF({tip, left.p2(), right.p2()}));
            // The step's number, at a third of the way (answers going back do not cover it).
            const QString number = QString::number(step);
            const QPointF at = line.pointAt(0.35);
            const QRectF badge(at.x() - metrics.horizontalAdvance(number) / 2 - 4, at.y() - metrics.height() / 2,
                               metrics.horizontalAdvance(number) + 8, metrics.height());
            painter.drawRoundedRect(badge, 6, 6);
            painter.setPen(colors.background);
            painter.drawText(badge, Qt::AlignCenter, number);
        }
    }
    painter.setBrush(Qt::NoBrush);
}

void TopologyView::paintScopeBoxes(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &scopes = m_graph.scopes();
    painter.setTransform(worldTransform());
    for (size_t s = 0; s < scopes.size(); ++s) {
        const ScopeGroup &g = scopes[s];
        if (g.deleted || g.box.isNull() || !g.box.intersects(visibleWorld))
            continue;
        const QColor tint = colors.scopeTint(int(s));
        QColor fill = tint;
        fill.setAlpha(colors.dark ? 30 : 22);
        QColor border = tint;
        border.setAlpha(150);
        QPen pen(border, 1.2, g.placeholder ? Qt::DashLine : Qt::SolidLine);
        pen.setCosmetic(true);
        painter.setPen(pen);
        painter.setBrush(fill);
        if (g.parts.size() == 1) {
            painter.drawRoundedRect(g.parts.front(), 12, 12);
            continue;
        }
        // Parts that overlap read as one shape: one outline, one fill.
        QPainterPath outline;
        outline.setFillRule(Qt::WindingFill);
        for (const QRectF &part : g.parts)
            outline.addRoundedRect(part, 12, 12);
        painter.drawPath(outline.simplified());
    }
    painter.resetTransform();
}

void TopologyView::paintScopeLabels(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &scopes = m_graph.scopes();
    QFont labelFont = font();
    labelFont.setPixelSize(11);
    labelFont.setBold(true);
    painter.setFont(labelFont);
    const QFontMetricsF metrics(labelFont);
    // Outer scopes first; a label that would sit on one already drawn (nested boxes share their
    // top edge when zoomed out: the label band is in world units, the text in pixels) moves down
    // below it, or is left out when its part has no room. A scope drawn in separate parts labels
    // each: each part reads on its own.
    std::vector<size_t> order;
    for (size_t s = 0; s < scopes.size(); ++s)
        if (!scopes[s].deleted && !scopes[s].box.isNull() && scopes[s].box.intersects(visibleWorld))
            order.push_back(s);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scopes[a].depth < scopes[b].depth; });
    std::vector<QRectF> placed;
    for (const size_t s : order) {
        const ScopeGroup &g = scopes[s];
        std::vector<QRectF> labelled; // a part that overlaps a labelled part of its scope is of one shape with it
        for (const QRectF &part : g.parts) {
            if (!part.intersects(visibleWorld)
                || std::any_of(labelled.begin(), labelled.end(), [&](const QRectF &l) { return l.intersects(part); }))
                continue;
            labelled.push_back(part);
            const QRectF box(mapToView(part.topLeft()), mapToView(part.bottomRight()));
            if (box.width() < 60)
                continue; // too small to label legibly
            const QString text = metrics.elidedText(QStringLiteral("%1 · %2").arg(g.name).arg(g.members.size()),
                                                    Qt::ElideRight, box.width() - 16);
            QRectF label(box.left() + 8, box.top() + 3, metrics.horizontalAdvance(text), metrics.height());
            for (bool moved = true; moved;) {
                moved = false;
                for (const QRectF &other : placed)
                    if (other.adjusted(-4, -1, 4, 1).intersects(label.adjusted(-4, -1, 4, 1))) {
                        label.moveTop(other.bottom() + 3);
                        moved = true;
                    }
            }
            if (label.bottom() > box.bottom() - 2)
                continue; // no room left in its part
            placed.push_back(label);
            QColor backdrop = colors.background;
            backdrop.setAlpha(170);
            painter.setPen(Qt::NoPen);
            painter.setBrush(backdrop);
            painter.drawRoundedRect(label.adjusted(-4, -1, 4, 1), 4, 4);
            QColor ink = colors.scopeTint(int(s));
            ink = colors.dark ? ink.lighter(125) : ink.darker(135);
            painter.setPen(ink);
            painter.drawText(label.bottomLeft() - QPointF(0, metrics.descent()), text);
            m_scopeLabels.emplace_back(label, int(s));
        }
    }
}

void TopologyView::paintTreeLines(QPainter &painter, const TopologyColors &colors)
{
    const auto &lines = m_camera.scale < kCoarseTreeScale ? m_graph.coarseTreeLines() : m_graph.treeLines();
    QVector<QLineF> normal, faded;
    normal.reserve(int(lines.size()));
    for (const auto &l : lines)
        (isRowDimmed(l.child) ? faded : normal).push_back(l.line);
    painter.setTransform(worldTransform());
    // Horizontal and vertical lines are crisp without antialiasing, and cheaper.
    painter.setRenderHint(QPainter::Antialiasing, false);
    QPen pen(colors.treeEdge, m_camera.scale >= 0.5 ? 1.3 : 1.0);
    pen.setCosmetic(true);
    painter.setPen(pen);
    painter.drawLines(normal);
    if (!faded.isEmpty()) {
        QColor c = colors.treeEdge;
        c.setAlpha(50);
        pen.setColor(c);
        painter.setPen(pen);
        painter.drawLines(faded);
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.resetTransform();
}

void TopologyView::paintTraffic(QPainter &painter, const TopologyColors &colors)
{
    const auto &edges = m_graph.rankedEdges();
    const auto &nodes = m_graph.nodes();
    const auto &scopes = m_graph.scopes();
    const qint64 now = m_session->store()->now();
    const TrafficBudget budget = trafficBudget(m_camera.scale, m_moving);
    const QRectF viewport = QRectF(rect()).adjusted(-8, -8, 8, 8);
    const bool arrows = m_camera.scale >= 0.5;
    painter.setRenderHint(QPainter::Antialiasing, !m_moving);
    painter.setBrush(Qt::NoBrush);
    double inked = 0;
    QLineF segments[kCurveSegments];
    // Draws `e` if any of it is in view; adds what it drew to `inked`.
    auto draw = [&](const TrafficEdge &e) {
        const bool touchesHover = m_hoverRow >= 0 && (e.from == m_hoverRow || e.to == m_hoverRow);
        const TopologyNode &from = nodes[size_t(e.from)];
        if (!from.positioned)
            return;
        const QPointF a = mapToView(from.position);
        QPointF b;
        double targetRadius = 0;
        if (e.to >= 0) {
            const TopologyNode &to = nodes[size_t(e.to)];
            if (!to.positioned)
                return;
            b = mapToView(to.position);
            targetRadius = to.radius * m_camera.scale;
        } else {
            const ScopeGroup &target = scopes[size_t(e.scope)];
            if (target.parts.empty())
                return;
            b = mapToView(target.parts.front().topLeft() + QPointF(6, 6)); // its first part's corner
        }
        const QPointF d = b - a;
        const double length = std::hypot(d.x(), d.y());
        if (length < 2)
            return;
        // Bend to the right of the direction of travel: A→B and B→A never coincide, and
        // neither lies on the tree edge between a parent and its child.
        const QPointF normal(-d.y() / length, d.x() / length);
        const QPointF control = (a + b) / 2 + normal * std::min(0.18 * length, kMaxBulgePixels);
        const QRectF box = QRectF(a, b).normalized().united(QRectF(control, QSizeF(1, 1)));
        if (!box.intersects(viewport))
            return;
        // Flattened into straight pieces, and only those inside the viewport: separate flat-capped
        // lines take the raster engine's fast line path, where a polyline would be stroked whole.
        int count = 0;
        double visibleLength = 0;
        QPointF previous = a;
        for (int i = 1; i <= kCurveSegments; ++i) {
            const QPointF next = quadPoint(a, control, b, double(i) / kCurveSegments);
            if (QRectF(previous, next).normalized().adjusted(-1, -1, 1, 1).intersects(viewport)) {
                segments[count++] = QLineF(previous, next);
                visibleLength += distance(previous, next);
            }
            previous = next;
        }
        if (count == 0)
            return;
        const double recent = TopologyGraph::recentWeight(e, now);
        const bool quiet = recent < 0.05; // nothing in the last ~30 s: a faint hairline
        double width = quiet ? 1.0 : std::clamp(1.0 + 0.9 * std::log2(1.0 + recent), 1.0, 4.0); // view pixels
        if (m_moving)
            width = std::min(width, 2.0);
        QColor color = colors.messageEdge;
        int alpha = quiet ? 45 : int(std::min(190.0, 85 + 20 * recent));
        if (isRowDimmed(e.from) || (e.to >= 0 && isRowDimmed(e.to)))
            alpha = 20;
        if (touchesHover)
            alpha = 255;
        color.setAlpha(alpha);
        painter.setPen(QPen(color, width, Qt::SolidLine, Qt::FlatCap));
        painter.drawLines(segments, count);
        inked += visibleLength * (!m_moving && width > 1.5 ? kWideLineInkFactor : 1.0);
        if (arrows && e.to >= 0 && viewport.contains(b)) {
            const QPointF tangent = b - control;
            const double t = std::hypot(tangent.x(), tangent.y());
            if (t > 1) {
                const QPointF u = tangent / t;
                const QPointF tip = b - u * (targetRadius + 2);
                const double size = 4 + width;
                const QPointF side(-u.y(), u.x());
                const QPointF head[] = {tip, tip - u * size + side * (size * 0.55), tip - u * size - side * (size * 0.55)};
                painter.setPen(Qt::NoPen);
                painter.setBrush(color);
                painter.drawPolygon(head, 3);
                painter.setBrush(Qt::NoBrush);
            }
        }
        m_drawnEdges.push_back({a, control, b, width, e});
    };

    m_trafficLimited = false;
    size_t index = 0;
    for (; index < edges.size(); ++index) {
        if (int(m_drawnEdges.size()) >= budget.edges || inked >= budget.ink || int(index) >= kEdgeScanLimit) {
            m_trafficLimited = true;
            break;
        }
        draw(edges[index]);
    }
    // The agent under the cursor shows all its partners, busy or not, beyond the budget.
    if (m_hoverRow >= 0) {
        int extra = 0;
        for (; index < edges.size() && extra < kHoverEdgeLimit; ++index) {
            const TrafficEdge &e = edges[index];
            if (e.from == m_hoverRow || e.to == m_hoverRow) {
                draw(e);
                ++extra;
            }
        }
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
}

void TopologyView::drawNodeGlyph(QPainter &painter, const TopologyNode &n, QPointF center, double radius, double pixel,
                                 const TopologyColors &colors)
{
    // Departed: a see-through fill in its last health colour; placeholder: no fill at all.
    // Both get a dashed outline in the muted text colour, which reads on either theme.
    const QColor health = healthColor(n.health);
    QColor fill = health;
    if (n.departed)
        fill.setAlpha(95);
    if (n.placeholder)
        fill = Qt::transparent;
    // Hairline pens (width 1) take the raster engine's fast path; wider antialiased ones
    // cost ~2.5× as much per node, which adds up over a thousand nodes.
    const bool ghost = n.placeholder || n.departed;
    QPen outline(ghost ? colors.mutedText : colors.nodeOutline(health), 1.0, ghost ? Qt::DashLine : Qt::SolidLine);
    outline.setCosmetic(true);
    painter.setPen(outline);
    painter.setBrush(fill);
    drawShape(painter, n.shape, center, radius);
    if (n.badge == StateBadge::Busy && radius >= 4 * pixel) {
        QPen ring(colors.nodeOutline(health), radius >= 12 * pixel ? 2.2 : 1.0);
        ring.setCosmetic(true);
        ring.setCapStyle(Qt::RoundCap);
        painter.setPen(ring);
        painter.setBrush(Qt::NoBrush);
        const double R = radius + 4.5 * pixel;
        painter.drawArc(QRectF(center.x() - R, center.y() - R, 2 * R, 2 * R), 100 * 16, -320 * 16);
    }
}

void TopologyView::drawSelectionHalo(QPainter &painter, const TopologyNode &, QPointF center, double radius, double pixel,
                                     const TopologyColors &colors)
{
    QColor halo = colors.selection;
    halo.setAlpha(70);
    painter.setPen(Qt::NoPen);
    painter.setBrush(halo);
    painter.drawEllipse(center, radius + 9 * pixel, radius + 9 * pixel);
}

void TopologyView::drawSelectionRing(QPainter &painter, const TopologyNode &n, QPointF center, double radius, double pixel,
                                     const TopologyColors &colors)
{
    QPen ring(colors.selection, 2.6);
    ring.setCosmetic(true);
    painter.setPen(ring);
    painter.setBrush(Qt::NoBrush);
    const double R = radius + (n.badge == StateBadge::Busy ? 8 : 4.5) * pixel;
    painter.drawEllipse(center, R, R);
}

const QImage &TopologyView::nodeSprite(const TopologyNode &n, double pixelRadius, const TopologyColors &colors, bool selected)
{
    const int quarterPixels = std::max(1, int(std::lround(pixelRadius * 4)));
    const quint64 key = quint64(n.shape) | quint64(n.health) << 3 | quint64(n.badge == StateBadge::Busy) << 6
                        | quint64(n.departed) << 7 | quint64(n.placeholder) << 8 | quint64(selected) << 9
                        | quint64(quarterPixels) << 10;
    auto it = m_sprites.constFind(key);
    if (it != m_sprites.constEnd())
        return *it;
    if (m_sprites.size() > 4096)
        m_sprites.clear(); // a long zoom leaves sprites of sizes no longer drawn
    const double radius = quarterPixels / 4.0;
    const int side = int(std::ceil(2 * (radius + (selected ? 12 : 7)))); // room for the halo (+9) and ring
    const qreal dpr = devicePixelRatioF();
    QImage sprite(QSize(side, side) * dpr, QImage::Format_ARGB32_Premultiplied); // not a QPixmap: painted off the GUI thread
    sprite.setDevicePixelRatio(dpr);
    sprite.fill(Qt::transparent);
    QPainter painter(&sprite);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const QPointF centre(side / 2.0, side / 2.0);
    if (selected)
        drawSelectionHalo(painter, n, centre, radius, 1.0, colors);
    drawNodeGlyph(painter, n, centre, radius, 1.0, colors);
    if (selected)
        drawSelectionRing(painter, n, centre, radius, 1.0, colors);
    painter.end();
    return *m_sprites.insert(key, sprite);
}

void TopologyView::paintNodes(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &nodes = m_graph.nodes();
    const double pixel = 1 / m_camera.scale; // one view pixel in world units
    // Small nodes (most of them, when many are in view) are stamped from cached pictures, one
    // per look and size: a blit costs a fraction of drawing the shape. Larger, selected and
    // hovered ones are drawn as shapes.
    std::vector<int> stamped, stampedSelected;
    painter.setTransform(worldTransform());
    for (size_t v = 0; v < nodes.size(); ++v) {
        const TopologyNode &n = nodes[v];
        if (n.hidden || !n.positioned)
            continue;
        const double r = n.radius;
        const QRectF extent(n.position.x() - r - 8 * pixel, n.position.y() - r - 8 * pixel, 2 * r + 16 * pixel, 2 * r + 16 * pixel);
        if (!extent.intersects(visibleWorld))
            continue;
        const bool selected = m_selectedShown[v];
        const bool hovered = int(v) == m_hoverRow;
        if (r * m_camera.scale < kSpriteMaxRadius && !hovered) {
            (selected ? stampedSelected : stamped).push_back(int(v));
            continue;
        }
        painter.setOpacity(isRowDimmed(int(v)) ? 0.16 : 1.0);
        if (selected)
            drawSelectionHalo(painter, n, n.position, r, pixel, colors);
        drawNodeGlyph(painter, n, n.position, r, pixel, colors);
        if (selected)
            drawSelectionRing(painter, n, n.position, r, pixel, colors);
        if (hovered) {
            QPen ring(colors.text, 1);
            ring.setCosmetic(true);
            painter.setPen(ring);
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(n.position, r + 2 * pixel, r + 2 * pixel);
        }
    }
    painter.resetTransform();
    // The selected first: their halos under their neighbours, as when they are drawn as shapes.
    for (const std::vector<int> *rows : {&stampedSelected, &stamped}) {
        for (int v : *rows) {
            const TopologyNode &n = nodes[size_t(v)];
            const QImage &sprite = nodeSprite(n, n.radius * m_camera.scale, colors, rows == &stampedSelected);
            const double half = sprite.width() / sprite.devicePixelRatio() / 2;
            painter.setOpacity(isRowDimmed(v) ? 0.16 : 1.0);
            painter.drawImage(mapToView(n.position) - QPointF(half, half), sprite);
        }
    }
    painter.setOpacity(1);
}

void TopologyView::paintNodeOverlays(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &nodes = m_graph.nodes();
    const int labelPixels = std::min(kMaxLabelPixels, labelPixelsAt(m_camera.scale));
    const bool allLabels = labelPixels >= kMinLabelPixels;
    const bool secondLine = m_camera.scale >= 1.3;
    const LabelFont &label = labelFont(std::max(kMinLabelPixels + 2, labelPixels));
    const LabelFont &detail = labelFont(std::max(kMinLabelPixels, int(labelPixels * 0.85)));
    QFont badgeFont = font();
    badgeFont.setPixelSize(10);
    badgeFont.setBold(true);
    const QFontMetricsF badgeMetrics(badgeFont);
    const double worldMargin = 60 / m_camera.scale;
    const QRectF cull = visibleWorld.adjusted(-worldMargin, -worldMargin, worldMargin, worldMargin);
    std::vector<QRectF> &sparseLabels = m_sparseLabels; // zoomed out: the labels drawn so far (never one on another)
    sparseLabels.clear();

    for (size_t v = 0; v < nodes.size(); ++v) {
        const TopologyNode &n = nodes[v];
        if (n.hidden || !n.positioned || !cull.contains(n.position))
            continue;
        const bool selected = m_selectedShown[v];
        const bool hovered = int(v) == m_hoverRow;
        const double r = n.radius * m_camera.scale;
        const QPointF center = mapToView(n.position);
        painter.setOpacity(isRowDimmed(int(v)) ? 0.2 : 1.0);

        // State badge at the top right.
        if (n.badge != StateBadge::None && r >= 5)
            drawStateBadge(painter, n.badge, center + QPointF(r * 0.72, -r * 0.72), std::clamp(r * 0.42, 4.5, 8.0));
        // Alert badge at the top left: an open alert names this agent (the Alerts panel says which).
        if (const auto alert = m_alertBadges.constFind(n.id); alert != m_alertBadges.cend() && r >= 2) {
            const double b = std::clamp(r * 0.45, 5.0, 8.0);
            const QPointF at = center + QPointF(-r * 0.72, -r * 0.72);
            painter.setPen(QPen(colors.background, 1.5));
            painter.setBrush(alertSeverityColor(*alert));
            painter.drawEllipse(at, b, b);
            QFont bang = badgeFont;
            bang.setPixelSize(int(std::max(8.0, b * 1.6)));
            painter.setFont(bang);
            painter.setPen(Qt::white);
            painter.drawText(QRectF(at.x() - b, at.y() - b, 2 * b, 2 * b), Qt::AlignCenter, QStringLiteral("!"));
        }

        // Collapse control: "+N" on a collapsed node; "−" on an expanded parent under the cursor or selected.
        if (!n.children.empty() && (n.collapsed ? m_camera.scale >= 0.12 : (hovered || selected) && r >= 5)) {
            const QString text = n.collapsed ? QStringLiteral("+%1").arg(n.descendants) : QStringLiteral("\u2212");
            const double w = std::max(16.0, badgeMetrics.horizontalAdvance(text) + 8);
            const QRectF pill(center.x() + r + 3, center.y() - 8, w, 16);
            painter.setPen(QPen(colors.badgeBorder, 1));
            painter.setBrush(colors.badgeBackground);
            painter.drawRoundedRect(pill, 8, 8);
            painter.setPen(colors.text);
            painter.setFont(badgeFont);
            painter.drawText(pill, Qt::AlignCenter, text);
            m_collapseBadges.emplace_back(pill, int(v));
        }

        // Label below the shape: every node when near enough; else only selected, hovered and coordinators.
        const bool wanted = allLabels || selected || hovered || (n.shape == NodeShape::Hexagon && m_camera.scale >= 0.15);
        if (!wanted)
            continue;
        const double scale = double(label.font.pixelSize()) / TopologyGraph::kLabelPixelSize;
        const double w = n.labelWidth * scale;
        const QPointF topLeft(center.x() - w / 2, center.y() + r + 2);
        // Zoomed out, the labels drawn anyway (a selection of hundreds, the coordinators) must
        // not pile up into grey: one that would overlap a label already drawn is left out
        // (the hovered one always comes).
        const QRectF labelBox(topLeft.x() - 2, topLeft.y(), w + 4, label.font.pixelSize() + 3);
        if (!allLabels && !hovered) {
            if (std::any_of(sparseLabels.begin(), sparseLabels.end(), [&](const QRectF &drawn) { return drawn.intersects(labelBox); }))
                continue;
            sparseLabels.push_back(labelBox);
        }
        QColor backdrop = colors.background;
        backdrop.setAlpha(190);
        painter.fillRect(labelBox, backdrop);
        QFont f = label.font;
        f.setItalic(n.placeholder);
        painter.setFont(f);
        painter.setPen(n.placeholder || n.departed ? colors.mutedText : colors.text);
        painter.drawText(QPointF(topLeft.x(), topLeft.y() + label.ascent + 1), n.label);
        ++m_nodeLabelsDrawn;
        m_smallestNodeLabel = m_smallestNodeLabel == 0 ? f.pixelSize() : std::min(m_smallestNodeLabel, f.pixelSize());
        if (secondLine) {
            QString state = n.state.isEmpty() ? tr("unknown") : n.state;
            if (state.startsWith(QLatin1String("custom:")))
                state = state.mid(7);
            const QString sub = n.departed ? tr("departed") : (n.role.isEmpty() ? state : QStringLiteral("%1 · %2").arg(state, n.role));
            painter.setFont(detail.font);
            painter.setPen(colors.mutedText);
            const double sw = QFontMetricsF(detail.font).horizontalAdvance(sub);
            painter.drawText(QPointF(center.x() - sw / 2, topLeft.y() + label.font.pixelSize() + 3 + detail.ascent), sub);
        }
    }
    painter.setOpacity(1);
}

QRectF TopologyView::legendRect() const
{
    constexpr double row = kLegendRow, column = kLegendColumn, pad = kLegendPad;
    const QRectF box(pad, height() - pad - 8 * row - 2 * pad, 3 * column + pad, 8 * row + 2 * pad); // 8: the health column
    // Only where it leaves the graph most of the view: at most half its width and half its height
    // (on a laptop's narrow centre it would cover the graph; the Legend button shows it again
    // once the view is larger).
    if (box.height() * 2 > height() || box.width() * 2 > width())
        return {};
    return box;
}

void TopologyView::paintLegend(QPainter &painter, const TopologyColors &colors)
{
    QFont f = font();
    f.setPixelSize(11);
    painter.setFont(f);
    const QFontMetricsF metrics(f);
    const QRectF box = legendRect();
    if (box.isNull())
        return; // the view is too small for a legend
    constexpr double row = kLegendRow, column = kLegendColumn, pad = kLegendPad;
    QColor background = colors.badgeBackground;
    background.setAlpha(225);
    painter.setPen(QPen(colors.badgeBorder, 1));
    painter.setBrush(background);
    painter.drawRoundedRect(box, 6, 6);
    auto slot = [&](int col, int line) { return QPointF(box.left() + pad + col * column + 7, box.top() + pad + line * row + row / 2); };
    auto caption = [&](int col, int line, const QString &text) {
        painter.setPen(colors.text);
        const QPointF at = slot(col, line);
        painter.drawText(QPointF(at.x() + 14, at.y() + metrics.ascent() / 2 - 1), text);
    };
    const NodeShape shapes[] = {NodeShape::Hexagon, NodeShape::Circle, NodeShape::SmallCircle, NodeShape::Square, NodeShape::Diamond};
    for (int i = 0; i < 5; ++i) {
        painter.setPen(QPen(colors.nodeOutline(healthColor(Health::Healthy)), 1));
        painter.setBrush(healthColor(Health::Healthy));
        drawShape(painter, shapes[i], slot(0, i), shapeRadius(shapes[i]) * 0.45);
        caption(0, i, shapeDescription(shapes[i]));
    }
    {
        QColor faded = healthColor(Health::Stopped);
        faded.setAlpha(95);
        painter.setPen(QPen(colors.mutedText, 1, Qt::DashLine));
        painter.setBrush(faded);
        painter.drawEllipse(slot(0, 5), 5.5, 5.5);
        caption(0, 5, tr("departed"));
        QFont small = f;
        small.setPixelSize(9);
        small.setBold(true);
        const QRectF pill(slot(0, 6) - QPointF(8, 6), QSizeF(18, 12));
        painter.setPen(QPen(colors.badgeBorder, 1));
        painter.setBrush(colors.background);
        painter.drawRoundedRect(pill, 6, 6);
        painter.setFont(small);
        painter.setPen(colors.text);
        painter.drawText(pill, Qt::AlignCenter, QStringLiteral("+3"));
        painter.setFont(f);
        caption(0, 6, tr("collapsed"));
    }
    {
        QPen ring(colors.text, 1.6);
        painter.setPen(ring);
        painter.setBrush(Qt::NoBrush);
        painter.drawArc(QRectF(slot(1, 0) - QPointF(6, 6), QSizeF(12, 12)), 100 * 16, -320 * 16);
        caption(1, 0, tr("busy"));
        drawStateBadge(painter, StateBadge::Suspended, slot(1, 1), 6);
        caption(1, 1, tr("suspended"));
        drawStateBadge(painter, StateBadge::Stopped, slot(1, 2), 6);
        caption(1, 2, tr("stopped"));
        drawStateBadge(painter, StateBadge::Failed, slot(1, 3), 6);
        caption(1, 3, tr("failed"));
        QPen dashed(colors.mutedText, 1, Qt::DashLine);
        painter.setPen(dashed);
        painter.setBrush(Qt::NoBrush);
        painter.drawEllipse(slot(1, 4), 5.5, 5.5);
        caption(1, 4, tr("placeholder"));
        QColor messages = colors.messageEdge;
        messages.setAlpha(200);
        painter.setPen(QPen(messages, 3, Qt::SolidLine, Qt::RoundCap));
        painter.drawLine(slot(1, 5) - QPointF(7, 0), slot(1, 5) + QPointF(7, 0));
        caption(1, 5, tr("messages (rate)"));
        painter.setPen(QPen(colors.treeEdge, 1.3));
        painter.drawLine(slot(1, 6) - QPointF(7, 0), slot(1, 6) + QPointF(7, 0));
        caption(1, 6, tr("parent → child"));
    }
    const Health healths[] = {Health::Healthy, Health::Unknown, Health::Late, Health::Unresponsive,
                              Health::Suspended, Health::Disconnected, Health::Stopped, Health::Failed};
    for (int i = 0; i < 8; ++i) {
        painter.setPen(Qt::NoPen);
        painter.setBrush(healthColor(healths[i]));
        painter.drawEllipse(slot(2, i), 5, 5);
        caption(2, i, healthName(healths[i]));
    }
}

void TopologyView::paintStatus(QPainter &painter, const TopologyColors &colors)
{
    QFont f = font();
    f.setPixelSize(11);
    painter.setFont(f);
    const auto &nodes = m_graph.nodes();
    QString text = tr("%n agent(s)", nullptr, int(nodes.size()));
    const int hidden = int(nodes.size()) - m_graph.visibleCount();
    if (hidden > 0)
        text += tr(" · %n collapsed", nullptr, hidden);
    const int links = int(m_graph.rankedEdges().size());
    if (m_trafficLimited)
        text += tr(" · busiest %1 of %2 links").arg(m_drawnEdges.size()).arg(links);
    else
        text += tr(" · %n link(s)", nullptr, links);
    text += tr(" · zoom %1 %").arg(qRound(m_camera.scale * 100));
    if (m_hops > 0)
        text += tr(" · %n hop(s) around the selection", nullptr, m_hops);
    const QFontMetricsF metrics(f);
    const double w = metrics.horizontalAdvance(text);
    const QRectF box(width() - w - 20, height() - metrics.height() - 12, w + 12, metrics.height() + 4);
    QColor background = colors.badgeBackground;
    background.setAlpha(200);
    painter.setPen(Qt::NoPen);
    painter.setBrush(background);
    painter.drawRoundedRect(box, 4, 4);
    painter.setPen(colors.mutedText);
    painter.drawText(box, Qt::AlignCenter, text);
}

} // namespace mapi::ui
