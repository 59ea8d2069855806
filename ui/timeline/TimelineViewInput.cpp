// TimelineView: hit testing, tooltips and the mouse and keyboard (what a point of the view is,
// and what pointing at it does).
#include "timeline/TimelineView.h"

#include "map/Federation.h"
#include "model/SystemStore.h"
#include "style/Colors.h"
#include "timeline/TimelineColors.h"
#include "timeline/TimelineViewDetail.h"

#include <QApplication>
#include <QCursor>
#include <QDateTime>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPolygonF>
#include <QScrollBar>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <climits>
#include <cmath>

namespace mapi::ui {

using namespace timeline_view;

// ---- hit testing and tooltips --------------------------------------------------------------

TimelineView::Hit TimelineView::hitTest(const QPoint &pos) const
{
    Hit hit;
    const QRect plot = plotRect();
    if (pos.y() < plot.top() || pos.y() > plot.bottom())
        return hit;
    const int rowIndex = m_lanes.rowAt(pos.y() - plot.top() + m_scrollY);
    if (pos.x() < m_headerWidth) {
        if (rowIndex < 0)
            return hit;
        const LaneRow &row = m_lanes.rows()[size_t(rowIndex)];
        const int toggleLeft = 6 + row.depth * kIndentPerLevel;
        hit.kind = row.expandable && pos.x() >= toggleLeft - 3 && pos.x() <= toggleLeft + 11 ? Hit::Kind::GroupToggle
                                                                                               : Hit::Kind::LaneHeader;
        hit.index = rowIndex;
        return hit;
    }
    if (!plot.contains(pos))
        return hit;
    const double x = pos.x();
    const double fromTime = m_axis.mapXToTime(x - kHitSlop);
    const double toTime = m_axis.mapXToTime(x + kHitSlop + 1);

    // Operator actions and lifecycle marks lie on top of the arrows: they win.
    if (rowIndex >= 0) {
        // The item of `list` (sorted by time) drawn nearest to x, `offsetPx` right of its time,
        // within the slop; `accept` filters, `rowOf` gives what the hit names.
        auto nearest = [&](const auto &list, double from, double offsetPx, Hit::Kind kind, auto accept, auto rowOf) {
            double best = kHitSlop + 1;
            for (int i = firstAtOrAfter(list, from); i < int(list.size()) && double(list[size_t(i)].timeMs) < toTime; ++i) {
                const auto &item = list[size_t(i)];
                if (!accept(item))
                    continue;
                const double distance = std::abs(std::floor(m_axis.mapTimeToX(double(item.timeMs))) + offsetPx - x);
                if (distance < best) {
                    best = distance;
                    hit.kind = kind;
                    hit.index = rowOf(item);
                }
            }
            return hit.kind != Hit::Kind::None;
        };
        // An alert's bar along the lane's top edge (the most severe when several overlap).
        if (pos.y() - rowTopY(rowIndex) < kAlertBarHit) {
            int bestSeverity = -1;
            for (size_t i = 0; i < m_alertSpans.size(); ++i) {
                const AlertSpan &span = m_alertSpans[i];
                const auto [from, to] = alertExtent(span);
                if (x < from - kHitSlop || x > to + kHitSlop || int(span.severity) < bestSeverity)
                    continue;
                for (const QString &id : span.agents)
                    if (m_lanes.rowOfAgent(m_store->agentRow(id)) == rowIndex) {
                        bestSeverity = int(span.severity);
                        hit.kind = Hit::Kind::Alert;
                        hit.index = int(i);
                        break;
                    }
            }
            if (hit.kind == Hit::Kind::Alert)
                return hit;
        }
        const auto onThisRow = [&](const auto &action) { return m_lanes.rowOfAgent(action.agentRow) == rowIndex; };
        if (nearest(m_index.actions(), fromTime - 8 * m_axis.msPerPixel, 4, Hit::Kind::Action, onThisRow,
                    [](const auto &action) { return action.actionRow; }))
            return hit;
        const auto &marks = m_index.stateMarks(m_lanes.rows()[size_t(rowIndex)].agentRow);
        if (nearest(marks, fromTime, 0, Hit::Kind::StateMark, [](const auto &) { return true; },
                    [](const auto &mark) { return mark.eventRow; }))
            return hit;
        if (nearest(m_index.workMarks(m_lanes.rows()[size_t(rowIndex)].agentRow), fromTime, 0, Hit::Kind::WorkMark,
                    [](const auto &) { return true; }, [](const auto &mark) { return mark.eventRow; }))
            return hit;
    }

    // Arrows, as painted: a dense column is one density cell.
    const VisibleRows rows = visibleRows();
    const auto &messages = m_index.messages();
    auto columnRange = [&](int column) {
        const int start = m_index.firstMessageAtOrAfter(m_axis.mapXToTime(plot.left() + column));
        return std::make_pair(start, firstAtOrAfter(messages, m_axis.mapXToTime(plot.left() + column + 1), start));
    };
    const auto [columnStart, columnEnd] = columnRange(pos.x() - plot.left());
    if (columnIsDense(columnStart, columnEnd, rows)) {
        hit.kind = Hit::Kind::Dense;
        hit.count = columnEnd - columnStart;
        return hit;
    }
    double best = kHitSlop + 1;
    std::vector<int> recipientRows;
    const int first = m_index.firstMessageAtOrAfter(fromTime);
    for (int i = first; i < int(messages.size()) && double(messages[size_t(i)].timeMs) < toTime; ++i) {
        const TimelineIndex::MessageRef &ref = messages[size_t(i)];
        const double messageX = std::floor(m_axis.mapTimeToX(double(ref.timeMs)));
        const auto [cStart, cEnd] = columnRange(int(messageX) - plot.left());
        if (columnIsDense(cStart, cEnd, rows))
            continue; // drawn as density, not as an arrow
        const MessageExtent extent = messageExtent(ref, rows, recipientRows);
        if (!extent.drawable || pos.y() < extent.minY - kHitSlop || pos.y() > extent.maxY + kHitSlop)
            continue;
        const double distance = std::abs(messageX - x);
        if (distance < best) {
            best = distance;
            hit.kind = Hit::Kind::Message;
            hit.index = ref.messageRow;
        }
    }
    if (hit.kind != Hit::Kind::None)
        return hit;

    const auto &gaps = m_index.gaps();
    for (int i = firstAtOrAfter(gaps, fromTime); i < int(gaps.size()) && double(gaps[size_t(i)].timeMs) < toTime; ++i) {
        hit.kind = Hit::Kind::Gap;
        hit.index = gaps[size_t(i)].gapRow;
    }
    return hit;
}

QString TimelineView::messageToolTip(int messageRow) const
{
    const Message &m = m_store->messages()[size_t(messageRow)];
    QStringList recipients;
    for (const QString &id : m.toAgentIds)
        recipients << agentName(*m_store, id);
    if (recipients.isEmpty())
        recipients << (m.toDisplay.isEmpty() ? tr("(no recipient)") : m.toDisplay);
    QString kind = conventionName(m.convention);
    if (kind.isEmpty())
        kind = m.payloadType;
    QStringList details;
    if (!kind.isEmpty())
        details << kind;
    if (!m.taskId.isEmpty())
        details << tr("task %1").arg(m.taskId);
    if (!m.status.isEmpty())
        details << m.status;
    if (const Crossing c = messageCrossing(m.fromAgentId.isEmpty() ? m.fromRaw : m.fromAgentId, m.toAgentIds); !c.system.isEmpty())
        details << (c.inbound ? tr("crossed from system %1") : tr("crossed to system %1")).arg(c.system); // federation
    return QStringLiteral("<b>%1 → %2</b><br>%3<br>%4")
        .arg(agentName(*m_store, m.fromAgentId).toHtmlEscaped(), recipients.join(QStringLiteral(", ")).toHtmlEscaped(),
             details.join(QStringLiteral(" · ")).toHtmlEscaped(), formatTime(double(m.timestampMs)));
}

QString TimelineView::markToolTip(int eventRow) const
{
    const EventEntry &e = m_store->events()[size_t(eventRow)];
    QString state;
    const QString &agentId = m_store->events().agentId(e);
    for (const TimelineIndex::StateMark &mark : m_index.stateMarks(m_store->agentRow(agentId)))
        if (mark.eventRow == eventRow)
            state = m_index.stateName(mark.stateId);
    QString what;
    if (m_store->events().kind(e) == EventKind::AgentRegistered)
        what = state.isEmpty() ? tr("registered") : tr("registered, %1").arg(state);
    else if (m_store->events().kind(e) == EventKind::AgentUnregistered)
        what = tr("unregistered");
    else
        what = state.isEmpty() ? tr("state changed") : tr("state → %1").arg(state);
    return QStringLiteral("<b>%1</b>: %2<br>%3")
        .arg(agentName(*m_store, agentId).toHtmlEscaped(), what.toHtmlEscaped(), formatTime(double(e.timestampMs)));
}

QString TimelineView::workMarkToolTip(int eventRow) const
{
    const EventEntry &e = m_store->events()[size_t(eventRow)];
    const QString who = agentName(*m_store, m_store->agentBehind(m_store->events().agentId(e)));
    if (m_store->events().kind(e) == EventKind::TrajectoryCheckpoint) {
        for (const Checkpoint &c : m_store->checkpoints().checkpoints())
            if (c.eventRow == eventRow)
                return QStringLiteral("<b>%1</b>: checkpoint %2<br>%3").arg(who.toHtmlEscaped(), c.label.toHtmlEscaped(),
                                                                          formatTime(double(e.timestampMs)));
    } else {
        for (const Conversation &c : m_store->conversations().conversations())
            for (const ConversationTurn &t : c.turns)
                if (t.eventRow == eventRow)
                    return QStringLiteral("<b>%1</b> in “%2”: %3<br>%4")
                        .arg(who.toHtmlEscaped(), c.subject.toHtmlEscaped(), t.text.left(200).toHtmlEscaped(),
                             formatTime(double(e.timestampMs)));
    }
    return QStringLiteral("<b>%1</b>: %2<br>%3").arg(who.toHtmlEscaped(), m_store->events().type(e).toHtmlEscaped(),
                                                   formatTime(double(e.timestampMs)));
}

QString TimelineView::actionToolTip(int actionRow) const
{
    const OperatorAction &a = m_store->actions()[size_t(actionRow)];
    QString text = QStringLiteral("<b>%1 %2</b>: %3<br>%4 %5")
                       .arg(actionKindName(a.kind).toHtmlEscaped(), agentName(*m_store, a.agentId).toHtmlEscaped(),
                            actionStatusName(a.status).toHtmlEscaped(), tr("sent"), formatTime(double(m_store->serverTime(a.sentAtMs))));
    if (!a.method.isEmpty())
        text += QStringLiteral("<br>") + a.method.toHtmlEscaped();
    if (!a.note.isEmpty())
        text += QStringLiteral("<br>") + a.note.toHtmlEscaped();
    if (!a.detail.isEmpty())
        text += QStringLiteral("<br>") + a.detail.toHtmlEscaped();
    return text;
}

QString TimelineView::gapToolTip(int gapRow) const
{
    const Gap &g = m_store->gaps()[size_t(gapRow)];
    QString text = QStringLiteral("<b>%1</b>: %2").arg(tr("Gap (%1)").arg(gapKindName(g.kind)).toHtmlEscaped(),
                                                      g.recovered ? tr("replayed from the server") : tr("data missing"));
    if (g.fromSequence >= 0)
        text += QStringLiteral("<br>") + tr("sequence %1–%2").arg(g.fromSequence).arg(g.toSequence);
    text += QStringLiteral("<br>") + formatTime(double(m_store->serverTime(g.timeMs))); // noticed on our clock
    if (!g.detail.isEmpty())
        text += QStringLiteral("<br>") + g.detail.toHtmlEscaped();
    return text;
}

QString TimelineView::alertToolTip(int spanIndex) const
{
    const AlertSpan &span = m_alertSpans[size_t(spanIndex)];
    QStringList names;
    for (const QString &id : span.agents.mid(0, 5))
        names << agentName(*m_store, id);
    if (span.agents.size() > 5)
        names << tr("%n more", nullptr, int(span.agents.size() - 5));
    const QString when = span.untilMs < 0 ? tr("since %1, open").arg(formatTime(double(span.sinceMs)))
                                          : tr("%1 to %2, cleared").arg(formatTime(double(span.sinceMs)), formatTime(double(span.untilMs)));
    return QStringLiteral("<b>%1: %2</b> %3<br>%4<br>%5")
        .arg(alertSeverityName(span.severity), alertKindName(span.kind), names.join(QStringLiteral(", ")).toHtmlEscaped(),
             span.reason.toHtmlEscaped(), when.toHtmlEscaped());
}

QString TimelineView::headerToolTip(int rowIndex) const
{
    const LaneRow &row = m_lanes.rows()[size_t(rowIndex)];
    if (row.agentRow >= 0) {
        const Agent &a = m_store->agents()[size_t(row.agentRow)];
        QString text = QStringLiteral("<b>%1</b><br>%2<br>%3 · %4 · %5")
                           .arg(row.label.toHtmlEscaped(), a.id.toHtmlEscaped(), a.role.toHtmlEscaped(),
                                a.state.toHtmlEscaped(), healthName(a.health));
        if (row.collapsed)
            text += QStringLiteral("<br>") + tr("collapsed: this lane stands for %1 agents").arg(row.members.size());
        return text;
    }
    const int agents = int(m_lanes.agentIdsUnder(*m_store, rowIndex).size());
    return QStringLiteral("<b>%1</b><br>%2").arg(row.label.toHtmlEscaped(),
                                                agents == 1 ? tr("1 agent") : tr("%1 agents").arg(agents));
}

bool TimelineView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const Hit hit = hitTest(help->pos());
        QString text;
        switch (hit.kind) {
        case Hit::Kind::Message: text = messageToolTip(hit.index); break;
        case Hit::Kind::StateMark: text = markToolTip(hit.index); break;
        case Hit::Kind::WorkMark: text = workMarkToolTip(hit.index); break;
        case Hit::Kind::Action: text = actionToolTip(hit.index); break;
        case Hit::Kind::Gap: text = gapToolTip(hit.index); break;
        case Hit::Kind::Alert: text = alertToolTip(hit.index); break;
        case Hit::Kind::LaneHeader:
        case Hit::Kind::GroupToggle: text = headerToolTip(hit.index); break;
        case Hit::Kind::Dense:
            text = tr("%1 messages in this pixel column: zoom in (Ctrl+wheel, +, double-click) to see them one by one")
                       .arg(hit.count);
            break;
        case Hit::Kind::None: break;
        }
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

// ---- interaction ---------------------------------------------------------------------------

void TimelineView::clickAt(const QPoint &pos, Qt::KeyboardModifiers modifiers)
{
    const Hit hit = hitTest(pos);
    switch (hit.kind) {
    case Hit::Kind::Message:
        m_selection->focus(SelectionHub::Kind::Message, QString::number(hit.index), this);
        break;
    case Hit::Kind::StateMark:
    case Hit::Kind::WorkMark: // the Work panel fetches a focused checkpoint's content
        m_selection->focus(SelectionHub::Kind::Event, QString::number(hit.index), this);
        break;
    case Hit::Kind::Action:
        m_selection->focus(SelectionHub::Kind::Action, m_store->actions()[size_t(hit.index)].id, this);
        break;
    case Hit::Kind::Alert: { // copies: the handlers may change the spans
        const QString key = m_alertSpans[size_t(hit.index)].key;
        const QStringList agents = m_alertSpans[size_t(hit.index)].agents;
        m_selection->selectAgents(agents, this);
        Q_EMIT alertClicked(key);
        break;
    }
    case Hit::Kind::GroupToggle:
        toggleRow(hit.index);
        break;
    case Hit::Kind::LaneHeader: {
        const LaneRow &row = m_lanes.rows()[size_t(hit.index)];
        if (row.kind == LaneRow::Kind::Agent && !row.collapsed) {
            QStringList ids{row.id};
            if (modifiers & Qt::ControlModifier) {
                ids = m_selection->selectedAgents();
                if (ids.contains(row.id))
                    ids.removeAll(row.id);
                else
                    ids << row.id;
            }
            m_selection->selectAgents(ids, this);
        } else {
            m_selection->selectAgents(m_lanes.agentIdsUnder(*m_store, hit.index), this);
        }
        break;
    }
    case Hit::Kind::Gap:
    case Hit::Kind::Dense:
    case Hit::Kind::None:
        break;
    }
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    const QPoint delta = event->angleDelta();
    const double x = event->position().x();
    if (event->modifiers() & Qt::ControlModifier) {
        const int notches = delta.y() != 0 ? delta.y() : delta.x();
        zoomAt(std::max(x, double(plotRect().left())), std::pow(kWheelZoomStep, notches / 120.0));
    } else if ((event->modifiers() & Qt::ShiftModifier) || x < m_headerWidth) {
        const int notches = delta.y() != 0 ? delta.y() : delta.x();
        m_scrollY -= int(std::lround(notches / 120.0 * 3 * TimelineLanes::kLaneHeight));
        syncScrollBars();
        viewport()->update();
    } else {
        const int notches = delta.x() != 0 ? delta.x() : delta.y();
        panByPixels(-notches / 120.0 * m_axis.width / 10);
    }
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    m_pressed = true;
    m_dragging = false;
    m_pressPos = event->position().toPoint();
    m_pressStartMs = m_axis.startMs;
    m_pressScrollY = m_scrollY;
    event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (!m_pressed)
        return;
    const QPoint delta = event->position().toPoint() - m_pressPos;
    if (!m_dragging && delta.manhattanLength() < QApplication::startDragDistance())
        return;
    if (!m_dragging) {
        m_dragging = true;
        viewport()->setCursor(Qt::ClosedHandCursor);
    }
    // Dragging the plot moves time; dragging the headers moves only the lanes.
    if (m_pressPos.x() >= m_headerWidth && delta.x() != 0) {
        pauseFollowing();
        m_axis.startMs = m_pressStartMs - delta.x() * m_axis.msPerPixel;
        clampPan();
    }
    m_scrollY = m_pressScrollY - delta.y();
    syncScrollBars();
    viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_pressed) {
        QAbstractScrollArea::mouseReleaseEvent(event);
        return;
    }
    m_pressed = false;
    if (m_dragging) {
        m_dragging = false;
        viewport()->unsetCursor();
    } else {
        clickAt(event->position().toPoint(), event->modifiers());
    }
    event->accept();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *event)
{
    const Hit hit = hitTest(event->position().toPoint());
    if (hit.kind == Hit::Kind::LaneHeader)
        toggleRow(hit.index);
    else if (hit.kind == Hit::Kind::Dense)
        zoomAt(event->position().x(), 4);
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    const int pageHeight = plotRect().height();
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_Minus: {
        // Around the mouse when it is over the plot, else around the middle.
        const QPoint cursor = viewport()->mapFromGlobal(QCursor::pos());
        const double x = plotRect().contains(cursor) ? cursor.x() : m_axis.left + m_axis.width / 2;
        zoomAt(x, event->key() == Qt::Key_Minus ? 1 / kKeyZoomStep : kKeyZoomStep);
        break;
    }
    case Qt::Key_Left:
        panByPixels(-m_axis.width / 8);
        break;
    case Qt::Key_Right:
        panByPixels(m_axis.width / 8);
        break;
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_PageUp:
    case Qt::Key_PageDown: {
        const int step = event->key() == Qt::Key_Up || event->key() == Qt::Key_Down ? TimelineLanes::kLaneHeight : pageHeight;
        m_scrollY += event->key() == Qt::Key_Up || event->key() == Qt::Key_PageUp ? -step : step;
        syncScrollBars();
        viewport()->update();
        break;
    }
    case Qt::Key_Home:
        if (!m_index.isEmpty()) {
            pauseFollowing();
            m_axis.placeTimeAt(double(m_index.firstTimeMs()), 0.02);
            syncScrollBars();
            viewport()->update();
        }
        break;
    case Qt::Key_End:
        setFollowLive(true);
        syncScrollBars();
        viewport()->update();
        break;
    case Qt::Key_0:
        showAll();
        break;
    default:
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    event->accept();
}

} // namespace mapi::ui
