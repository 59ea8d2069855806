// TopologyView's input: tooltips, mouse (select, rubber band, pan, collapse badges), wheel zoom,
// keyboard, and the widget events that start or stop its work. GUI thread.
#include "topology/TopologyView.h"

#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "topology/TopologyViewDetail.h"

#include <QApplication>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <utility>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

using namespace topology_view;

bool TopologyView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QPointF pos = help->pos();
        QString text;
        if (m_minimap.worldAt(pos))
            text = tr("The whole graph: failed and unresponsive agents are the larger dots, the selection is ringed. "
                      "Click or drag to move the view there.");
        else if (const int row = nodeAt(pos); row >= 0)
            text = nodeToolTip(row);
        else if (const int badge = collapseBadgeAt(pos); badge >= 0)
            text = nodeToolTip(badge);
        else if (const DrawnEdge *edge = edgeAt(pos))
            text = edgeToolTip(edge->edge);
        else if (const int scope = scopeLabelAt(pos); scope >= 0)
            text = scopeToolTip(scope);
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

// ---- mouse and keyboard ----------------------------------------------------------------

void TopologyView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton && event->button() != Qt::MiddleButton) {
        QWidget::mousePressEvent(event);
        return;
    }
    if (const auto world = m_minimap.worldAt(event->position()); world && event->button() == Qt::LeftButton && !m_pressed) {
        m_minimapDragging = true;
        moveCameraTo(*world);
        return;
    }
    m_pressed = true;
    m_dragged = false;
    m_ignoreRelease = false;
    m_pressPos = event->position();
    m_pressCenter = m_camera.center;
    m_rubberBanding = event->button() == Qt::LeftButton && (event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier))
                      && nodeAt(m_pressPos) < 0;
    m_cameraAnimation.stop();
}

void TopologyView::mouseMoveEvent(QMouseEvent *event)
{
    const QPointF pos = event->position();
    if (m_minimapDragging && !(event->buttons() & Qt::LeftButton))
        m_minimapDragging = false; // its release went elsewhere (a dialog opened meanwhile)
    if (m_minimapDragging) {
        if (const auto world = m_minimap.worldAt(pos, true))
            moveCameraTo(*world);
        return;
    }
    if (!m_pressed) {
        const int hover = m_minimap.worldAt(pos) ? -1 : nodeAt(pos);
        if (hover != m_hoverRow) {
            m_hoverRow = hover;
            update();
        }
        return;
    }
    if (!m_dragged && (pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance())
        m_dragged = true;
    if (!m_dragged)
        return;
    if (m_rubberBanding) {
        m_rubberBand = QRectF(m_pressPos, pos).normalized();
    } else {
        setCursor(Qt::ClosedHandCursor);
        m_camera.center = m_pressCenter;
        m_camera.panByPixels(pos - m_pressPos);
        noteMotion();
        m_autoFit = false;
    }
    update();
}

void TopologyView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && std::exchange(m_minimapDragging, false))
        return;
    if (!m_pressed)
        return;
    m_pressed = false;
    unsetCursor();
    const QPointF pos = event->position();
    const bool additive = event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier);
    if (m_rubberBanding) {
        m_rubberBanding = false;
        if (m_dragged) {
            QList<int> rows;
            const auto &nodes = m_graph.nodes();
            for (size_t v = 0; v < nodes.size(); ++v)
                if (!nodes[v].hidden && nodes[v].positioned && m_rubberBand.contains(mapToView(nodes[v].position))
                    && !isRowSelected(int(v)))
                    rows << int(v);
            m_rubberBand = QRectF();
            selectRows(rows, true);
            update();
            return;
        }
    }
    if (m_dragged || m_ignoreRelease || event->button() != Qt::LeftButton)
        return;
    if (const int badge = collapseBadgeAt(pos); badge >= 0) {
        toggleCollapsed(badge);
    } else if (const int row = nodeAt(pos); row >= 0) {
        selectRows({row}, additive);
    } else if (const DrawnEdge *edge = edgeAt(pos)) {
        if (m_selection)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(edge->edge.latestMessage), this);
    } else if (!additive && m_selection) {
        m_selection->selectAgents({}, this);
    }
}

void TopologyView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || m_minimap.worldAt(event->position()))
        return;
    m_pressed = true; // the release that follows ends this gesture, doing nothing more
    m_dragged = false;
    m_ignoreRelease = true;
    m_pressPos = event->position();
    m_pressCenter = m_camera.center;
    if (collapseBadgeAt(m_pressPos) < 0)
        toggleCollapsed(nodeAt(m_pressPos));
}

// The map's press and drag: the camera's centre there, at once (the map follows the pointer).
void TopologyView::moveCameraTo(QPointF world)
{
    m_cameraAnimation.stop();
    m_camera.center = world;
    m_autoFit = false;
    noteMotion();
    update();
}

void TopologyView::wheelEvent(QWheelEvent *event)
{
    double steps = event->angleDelta().y() / 120.0;
    if (steps == 0)
        steps = event->pixelDelta().y() / 50.0;
    if (steps == 0)
        return;
    m_cameraAnimation.stop();
    m_camera = camera();
    m_camera.zoomAround(event->position(), m_camera.scale * std::pow(1.2, steps)); // the point under the cursor stays
    noteMotion();
    m_autoFit = false;
    update();
    event->accept();
}

void TopologyView::keyPressEvent(QKeyEvent *event)
{
    constexpr double step = 80; // pixels per arrow key press
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        animateCamera(m_camera.center, m_camera.scale * 1.25);
        m_autoFit = false;
        break;
    case Qt::Key_Minus:
        animateCamera(m_camera.center, m_camera.scale / 1.25);
        m_autoFit = false;
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        zoomToFit(true);
        break;
    case Qt::Key_Left: panBy(QPointF(step, 0)); break;
    case Qt::Key_Right: panBy(QPointF(-step, 0)); break;
    case Qt::Key_Up: panBy(QPointF(0, step)); break;
    case Qt::Key_Down: panBy(QPointF(0, -step)); break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void TopologyView::leaveEvent(QEvent *event)
{
    if (m_hoverRow >= 0) {
        m_hoverRow = -1;
        update();
    }
    QWidget::leaveEvent(event);
}

void TopologyView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (m_autoFit)
        zoomToFit(false);
}

void TopologyView::changeEvent(QEvent *event)
{
    // The palette's colour group follows the window's activation (the selection's colour differs
    // on some platforms): sprites and the minimap are drawn with it.
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange
        || event->type() == QEvent::ActivationChange || event->type() == QEvent::EnabledChange) {
        m_sprites.clear(); // drawn in the old theme's colours
        ++m_minimapRevision;
    }
    QWidget::changeEvent(event);
}

void TopologyView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    m_decayTimer.start();
}

void TopologyView::hideEvent(QHideEvent *event)
{
    m_decayTimer.stop(); // nothing to repaint while hidden
    QWidget::hideEvent(event);
}

} // namespace mapi::ui
