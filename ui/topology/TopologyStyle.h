// How the topology draws an agent: role → shape, state → badge, and the colours of the graph,
// derived from the application palette (light and dark themes) plus healthColor().
#pragma once

#include "model/ModelTypes.h"

#include <QColor>
#include <QPalette>
#include <QPointF>
#include <QString>

class QPainter;

namespace mapi::ui {

enum class NodeShape {
    Hexagon,      // coordinators, orchestrators, supervisors, managers, leads
    Circle,       // workers and plain agents
    SmallCircle,  // sub-agents
    Square,       // monitors and observers
    Diamond,      // any other (or no) role
};

enum class StateBadge {
    None,         // idle, or a state without a badge
    Busy,         // busy, working, running, thinking…: a ring around the node
    Suspended,    // a pause badge
    Stopped,      // a stop badge
    Failed,       // a "!" badge
};

NodeShape shapeForRole(const QString &role);
StateBadge badgeForState(const QString &state, Health health);
double shapeRadius(NodeShape shape);                // world units
QString shapeDescription(NodeShape shape);          // for the legend

// Draws the shape with the painter's current pen and brush (circles as ellipses).
void drawShape(QPainter &painter, NodeShape shape, QPointF center, double radius);
// Draws `badge` as a small disc at `center` (screen units when the painter is untransformed).
void drawStateBadge(QPainter &painter, StateBadge badge, QPointF center, double radius);

// Colours of one paint, read from the palette at the start of each paint so a theme switch
// applies on the next frame.
struct TopologyColors
{
    explicit TopologyColors(const QPalette &palette);

    bool dark = false;
    QColor background;
    QColor text;
    QColor mutedText;
    QColor treeEdge;
    QColor messageEdge;
    QColor selection;
    QColor badgeBackground;   // collapse badges and labels' backdrop
    QColor badgeBorder;

    QColor scopeTint(int scopeIndex) const;   // a hue per scope, from the highlight's
    QColor nodeOutline(const QColor &fill) const;
};

} // namespace mapi::ui
