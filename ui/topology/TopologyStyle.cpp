#include "topology/TopologyStyle.h"

#include "map/AgentStates.h"
#include "style/Colors.h"

#include <QCoreApplication>
#include <QPainter>
#include <QPolygonF>
#include <QtMath>

namespace mapi::ui {

NodeShape shapeForRole(const QString &role)
{
    const QString r = role.toLower();
    auto has = [&](const char *word) { return r.contains(QLatin1String(word)); };
    // "sub" first: "subagent" also contains "agent".
    if (has("sub") || has("child") || has("helper"))
        return NodeShape::SmallCircle;
    if (has("coordinat") || has("orchestrat") || has("supervis") || has("manager") || has("lead") || has("planner"))
        return NodeShape::Hexagon;
    if (has("monitor") || has("observ") || has("watch") || has("audit"))
        return NodeShape::Square;
    if (has("worker") || has("agent") || has("executor") || has("assistant"))
        return NodeShape::Circle;
    return NodeShape::Diamond;
}

StateBadge badgeForState(const QString &state, Health health)
{
    if (health == Health::Failed)
        return StateBadge::Failed;
    switch (classifyState(state)) {
    case StateClass::Busy: return StateBadge::Busy;
    case StateClass::Suspended: return StateBadge::Suspended;
    case StateClass::Stopping:
    case StateClass::Stopped: return StateBadge::Stopped;
    case StateClass::Failed: return StateBadge::Failed;
    case StateClass::Idle:
    case StateClass::Other: break;
    }
    return StateBadge::None;
}

double shapeRadius(NodeShape shape)
{
    switch (shape) {
    case NodeShape::Hexagon: return 20;
    case NodeShape::Circle: return 14;
    case NodeShape::SmallCircle: return 9.5;
    case NodeShape::Square: return 12.5;
    case NodeShape::Diamond: return 14;
    }
    return 14;
}

QString shapeDescription(NodeShape shape)
{
    switch (shape) {
    case NodeShape::Hexagon: return QCoreApplication::translate("TopologyLegend", "coordinator");
    case NodeShape::Circle: return QCoreApplication::translate("TopologyLegend", "worker");
    case NodeShape::SmallCircle: return QCoreApplication::translate("TopologyLegend", "sub-agent");
    case NodeShape::Square: return QCoreApplication::translate("TopologyLegend", "monitor");
    case NodeShape::Diamond: return QCoreApplication::translate("TopologyLegend", "other role");
    }
    return {};
}

// Hexagon and diamond outlines, `r` from centre to corner.
static QPolygonF cornerPolygon(NodeShape shape, QPointF c, double r)
{
    QPolygonF polygon;
    if (shape == NodeShape::Hexagon) {
        for (int i = 0; i < 6; ++i) {
            const double a = qDegreesToRadians(60.0 * i);
            polygon << c + QPointF(r * std::cos(a), r * std::sin(a));
        }
    } else {
        polygon << c + QPointF(0, -r) << c + QPointF(r, 0) << c + QPointF(0, r) << c + QPointF(-r, 0);
    }
    return polygon;
}

void drawShape(QPainter &painter, NodeShape shape, QPointF center, double radius)
{
    switch (shape) {
    case NodeShape::Circle:
    case NodeShape::SmallCircle:
        painter.drawEllipse(center, radius, radius);
        return;
    case NodeShape::Square: {
        const double h = radius * 0.86;
        painter.drawRoundedRect(QRectF(center - QPointF(h, h), center + QPointF(h, h)), h * 0.22, h * 0.22);
        return;
    }
    case NodeShape::Hexagon:
    case NodeShape::Diamond:
        painter.drawPolygon(cornerPolygon(shape, center, radius));
        return;
    }
}

void drawStateBadge(QPainter &painter, StateBadge badge, QPointF c, double r)
{
    QColor fill;
    switch (badge) {
    case StateBadge::None:
    case StateBadge::Busy:
        return; // busy is a ring around the node, drawn with the node
    case StateBadge::Suspended: fill = healthColor(Health::Suspended); break;
    case StateBadge::Stopped: fill = healthColor(Health::Stopped); break;
    case StateBadge::Failed: fill = healthColor(Health::Failed); break;
    }
    painter.setPen(QPen(Qt::white, std::max(1.0, r * 0.18)));
    painter.setBrush(fill);
    painter.drawEllipse(c, r, r);
    painter.setPen(Qt::NoPen);
    painter.setBrush(Qt::white);
    const double g = r * 0.42;
    switch (badge) {
    case StateBadge::Suspended:
        painter.drawRect(QRectF(c.x() - g, c.y() - g, g * 0.7, 2 * g));
        painter.drawRect(QRectF(c.x() + g * 0.3, c.y() - g, g * 0.7, 2 * g));
        break;
    case StateBadge::Stopped:
        painter.drawRect(QRectF(c.x() - g * 0.85, c.y() - g * 0.85, g * 1.7, g * 1.7));
        break;
    case StateBadge::Failed:
        painter.drawRect(QRectF(c.x() - g * 0.22, c.y() - g * 1.1, g * 0.44, g * 1.35));
        painter.drawEllipse(QPointF(c.x(), c.y() + g * 0.85), g * 0.25, g * 0.25);
        break;
    case StateBadge::None:
    case StateBadge::Busy:
        break;
    }
}

static QColor blend(const QColor &a, const QColor &b, double t)
{
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

TopologyColors::TopologyColors(const QPalette &palette)
{
    background = palette.color(QPalette::Base);
    text = palette.color(QPalette::Text);
    dark = background.lightness() < 128;
    mutedText = palette.color(QPalette::PlaceholderText);
    treeEdge = blend(text, background, dark ? 0.55 : 0.6);
    selection = palette.color(QPalette::Highlight);
    // Messages: the highlight's hue turned towards violet, so traffic never reads as selection.
    const double hue = std::fmod(std::max(0.0, double(selection.hslHueF())) + 40.0 / 360.0, 1.0);
    messageEdge = QColor::fromHslF(float(hue), 0.62f, dark ? 0.68f : 0.46f);
    badgeBackground = palette.color(QPalette::Window);
    badgeBorder = palette.color(QPalette::Mid);
}

QColor TopologyColors::scopeTint(int scopeIndex) const
{
    // Golden-angle steps from the highlight's hue: neighbouring scopes get far-apart hues.
    const double base = std::max(0.0, double(selection.hslHueF()));
    const double hue = std::fmod(base + 0.38196601 * (scopeIndex + 1), 1.0);
    return QColor::fromHslF(float(hue), 0.5f, dark ? 0.62f : 0.45f);
}

QColor TopologyColors::nodeOutline(const QColor &fill) const
{
    return dark ? fill.lighter(145) : fill.darker(150);
}

} // namespace mapi::ui
