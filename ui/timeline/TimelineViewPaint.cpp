// TimelineView: painting (renderTo and its layers). The behaviour is in TimelineView.cpp.
#include "timeline/TimelineView.h"

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

#include <limits>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>

namespace mapi::ui {

using namespace timeline_view;

// ---- painting ------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent *)
{
    m_mergeBudget = kMergeBudgetPerPaint;
    m_mergeIncomplete = false;
    QPainter p(viewport());
    renderTo(p);
    m_mergeBudget = std::numeric_limits<qint64>::max();
    if (m_mergeIncomplete) // folded lanes still filling: the rest at the next frame
        QTimer::singleShot(33, viewport(), qOverload<>(&QWidget::update));
}

void TimelineView::renderTo(QPainter &p)
{
    const QRect plot = plotRect();
    p.fillRect(viewport()->rect(), palette().color(QPalette::Base));
    const VisibleRows rows = visibleRows();
    const std::vector<int> bounds = columnBounds();

    p.save();
    p.setClipRect(plot);
    paintLaneBackgrounds(p, rows);
    paintStates(p, rows);
    paintMessages(p, rows, bounds);
    paintGaps(p);
    paintActions(p);
    paintAlerts(p, rows);
    paintTrimmedHistory(p);
    p.restore();

    paintRuler(p, bounds);
    paintHeaders(p, rows);

    if (m_lanes.rows().empty()) {
        p.setPen(palette().color(QPalette::Disabled, QPalette::Text));
        p.drawText(plot, Qt::AlignCenter, tr("No agents yet: open a trace or connect to a MAP system"));
    }
}

QColor TimelineView::laneBackground(int rowIndex) const
{
    const QPalette &pal = palette();
    const LaneRow &row = m_lanes.rows()[size_t(rowIndex)];
    if (row.kind == LaneRow::Kind::Group && !row.collapsed)
        return mixed(pal.color(QPalette::Base), pal.color(QPalette::Window), 0.8);
    return pal.color(rowIndex % 2 ? QPalette::AlternateBase : QPalette::Base);
}

// Everything tall and thin in the plot is filled with opaque colours (blended by hand): the
// raster engine hands translucent fills of many scanlines to a thread pool, whose hand-offs
// cost more than the fill itself for one-pixel lines.
void TimelineView::paintLaneBackgrounds(QPainter &p, const VisibleRows &rows) const
{
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const QStringList selected = m_selection->selectedAgents();
    const QColor highlight = pal.color(QPalette::Highlight);
    const QColor mid = pal.color(QPalette::Mid);
    const double step = timelineTickStepMs(m_axis.msPerPixel, 90);
    std::vector<int> gridX;
    for (double t = std::ceil(m_axis.startMs / step) * step; t <= m_axis.endMs(); t += step)
        gridX.push_back(int(std::floor(m_axis.mapTimeToX(t))));
    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        const QRect rect(plot.left(), rowTopY(r), plot.width(), row.height);
        QColor fill = laneBackground(r);
        if (row.kind == LaneRow::Kind::Agent && selected.contains(row.id))
            fill = mixed(fill, highlight, 0.18);
        p.fillRect(rect, fill);
        const QColor grid = mixed(fill, mid, 0.2);
        for (const int x : gridX)
            p.fillRect(QRect(x, rect.top(), 1, rect.height()), grid);
        p.fillRect(QRect(rect.left(), rect.bottom(), rect.width(), 1), mixed(fill, mid, 0.3));
    }
    // The live edge: the newest data (or the store's clock).
    const double edge = liveEdgeMs();
    if (edge > 0 && m_axis.containsTime(edge)) {
        p.setPen(QPen(mixed(pal.color(QPalette::Base), highlight, 0.6), 1, Qt::DashLine));
        const int x = int(std::floor(m_axis.mapTimeToX(edge)));
        p.drawLine(x, plot.top(), x, plot.bottom());
    }
}

void TimelineView::paintGaps(QPainter &p) const
{
    const QRect plot = plotRect();
    const auto &gaps = m_index.gaps();
    const int firstGap = firstAtOrAfter(gaps, m_axis.mapXToTime(plot.left() - kHitSlop));
    QVector<QLine> hatch;
    for (int i = firstGap; i < int(gaps.size()) && gaps[size_t(i)].timeMs <= m_axis.mapXToTime(plot.right() + kHitSlop); ++i) {
        const Gap &gap = m_store->gaps()[size_t(gaps[size_t(i)].gapRow)];
        const int x = int(std::floor(m_axis.mapTimeToX(double(gaps[size_t(i)].timeMs))));
        // A hatched band, drawn as an opaque fill plus short strokes (a pattern brush would
        // blend a texture over every scanline).
        const QColor base = palette().color(QPalette::Base);
        p.fillRect(QRect(x - 3, plot.top(), 7, plot.height()), mixed(base, gapColor(gap.recovered), 0.15));
        hatch.clear();
        for (int y = plot.top(); y < plot.bottom(); y += 5)
            hatch.push_back(QLine(x - 3, y + 6, x + 3, y));
        p.setPen(QPen(mixed(base, gapColor(gap.recovered), 0.6), 1));
        p.drawLines(hatch);
        p.setPen(QPen(gapColor(gap.recovered), 2, gap.recovered ? Qt::DashLine : Qt::SolidLine));
        p.drawLine(x, plot.top(), x, plot.bottom());
    }
}

// A live session's trimmed history: the plot left of the boundary is shaded and labelled, so
// an empty stretch there reads as "dropped by the history bound", not "nothing happened".
void TimelineView::paintTrimmedHistory(QPainter &p) const
{
    if (m_index.trimmedEvents() <= 0)
        return;
    const QRect plot = plotRect();
    const double boundary = double(m_index.trimmedBeforeMs());
    if (boundary < m_axis.startMs)
        return;
    const int x = std::min(plot.right(), int(std::floor(m_axis.mapTimeToX(boundary))));
    const QColor base = palette().color(QPalette::Base);
    const QColor mid = palette().color(QPalette::Mid);
    p.fillRect(QRect(plot.left(), plot.top(), x - plot.left(), plot.height()), mixed(base, mid, 0.35));
    p.setPen(QPen(mid, 2));
    p.drawLine(x, plot.top(), x, plot.bottom());
    p.setPen(palette().color(QPalette::Text));
    const QString text = historyTrimmedText(m_index.trimmedBeforeMs(), m_index.trimmedEvents());
    const QRect label = p.fontMetrics().boundingRect(text).adjusted(-4, -2, 4, 2);
    QRect box(std::max(plot.left() + 2, x - label.width() - 4), plot.top() + 4, label.width(), label.height());
    p.fillRect(box, mixed(base, mid, 0.15));
    p.drawText(box, Qt::AlignCenter, text);
}

QString historyTrimmedText(qint64 beforeMs, qint64 events)
{
    return TimelineView::tr("history before %1 trimmed (%Ln events)", nullptr, int(std::min<qint64>(events, INT_MAX)))
        .arg(formatTime(double(beforeMs)));
}

void TimelineView::paintStates(QPainter &p, const VisibleRows &rows) const
{
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const double edge = liveEdgeMs();
    const double t0 = m_axis.startMs;
    const double t1 = m_axis.endMs();
    int focusedEvent = -1;
    if (m_selection->focusKind() == SelectionHub::Kind::Event)
        focusedEvent = m_selection->focusKey().toInt();

    // Each state's colour once a paint (agentStateColor compares the name with a dozen others):
    // a flood changes states thousands of times in view.
    std::vector<QColor> colorOfState;
    const auto stateColor = [&](int stateId) -> const QColor & {
        if (stateId < 0)
            stateId = -1;
        const size_t slot = size_t(stateId + 1);
        if (slot >= colorOfState.size())
            colorOfState.resize(slot + 1);
        QColor &color = colorOfState[slot];
        if (!color.isValid())
            color = agentStateColor(m_index.stateName(stateId));
        return color;
    };
    // Strips on whole pixels, without antialiasing: the raster engine's fast path for
    // rectangles (an antialiased rectangle goes through its rasteriser).
    p.setRenderHint(QPainter::Antialiasing, false);
    const QRgb markOutline = pal.color(QPalette::Base).rgba();
    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        if (row.agentRow < 0)
            continue;
        const Agent &agent = m_store->agents()[size_t(row.agentRow)];
        const auto &marks = m_index.stateMarks(row.agentRow);
        if (marks.empty())
            paintWorkMarks(p, r, row, focusedEvent); // the strip below may end this row early
        const int stripTop = rowTopY(r) + row.height - kStateStripHeight - 2;
        auto fillStrip = [&](double from, double to, const QColor &color) {
            const double x0 = std::max(double(plot.left()), m_axis.mapTimeToX(from));
            const double x1 = std::min(double(plot.right() + 1), m_axis.mapTimeToX(to));
            if (x1 > x0) {
                const int left = int(std::lround(x0));
                p.fillRect(QRect(left, stripTop, std::max(1, int(std::lround(x1)) - left), kStateStripHeight), color);
            }
        };
        if (marks.empty()) {
            // Known from a snapshot only: its current state since the model heard of it.
            if (!agent.unregistered && agent.knownSinceMs > 0 && !agent.state.isEmpty())
                fillStrip(double(agent.knownSinceMs), edge, agentStateColor(agent.state));
            continue;
        }
        // The strip: each mark's state until the next mark. Where marks are closer than a pixel
        // the walk jumps to the next pixel column (binary search), so the cost stays per pixel.
        int i = std::max(0, firstAtOrAfter(marks, t0) - 1);
        while (i < int(marks.size()) && double(marks[size_t(i)].timeMs) <= t1) {
            const TimelineIndex::StateMark &mark = marks[size_t(i)];
            const double next = i + 1 < int(marks.size()) ? double(marks[size_t(i + 1)].timeMs) : edge;
            if (mark.kind() != EventKind::AgentUnregistered)
                fillStrip(double(mark.timeMs), next, stateColor(mark.stateId));
            const double markX = m_axis.mapTimeToX(double(mark.timeMs));
            i = m_axis.mapTimeToX(next) - markX < 1 ? std::max(i + 1, firstAtOrAfter(marks, m_axis.mapXToTime(std::floor(markX) + 1), i))
                                                     : i + 1;
        }
        // The marks, at most one per kMarkerSize / 2 pixels.
        int j = firstAtOrAfter(marks, m_axis.mapXToTime(plot.left() - kMarkerSize));
        const double lastTime = m_axis.mapXToTime(plot.right() + kMarkerSize);
        while (j < int(marks.size()) && double(marks[size_t(j)].timeMs) <= lastTime) {
            const TimelineIndex::StateMark &mark = marks[size_t(j)];
            const double x = std::floor(m_axis.mapTimeToX(double(mark.timeMs))) + 0.5;
            const double top = rowTopY(r) + 2;
            const double bottom = rowTopY(r) + row.height - 2;
            const bool drawnAsShape = mark.kind() == EventKind::AgentRegistered || mark.kind() == EventKind::AgentUnregistered
                                      || mark.eventRow == focusedEvent; // rare: antialiased here
            p.setRenderHint(QPainter::Antialiasing, drawnAsShape);
            if (mark.kind() == EventKind::AgentRegistered) {
                p.setPen(QPen(healthColor(Health::Healthy), 2));
                p.drawLine(QPointF(x, top), QPointF(x, bottom));
            } else if (mark.kind() == EventKind::AgentUnregistered) {
                p.setPen(QPen(pal.color(QPalette::Text), 2));
                p.drawLine(QPointF(x, top), QPointF(x, bottom));
                p.drawLine(QPointF(x - 3, bottom - 6), QPointF(x + 3, bottom));
                p.drawLine(QPointF(x + 3, bottom - 6), QPointF(x - 3, bottom));
            } else {
                QColor color = stateColor(mark.stateId);
                color.setAlpha(255);
                static_assert(kStateStripHeight % 2 == 0 && kMarkerSize == 7, "the diamond's image: centred on a whole row, 3.5 px each way");
                m_sprites.draw(p, MarkerSprites::Shape::Diamond, int(std::floor(x)), stripTop + kStateStripHeight / 2, color.rgba(), markOutline);
            }
            if (mark.eventRow == focusedEvent) {
                p.setPen(QPen(pal.color(QPalette::Highlight), 2));
                p.setBrush(Qt::NoBrush);
                p.drawEllipse(QPointF(x, (top + bottom) / 2), row.height / 2.0 - 1, row.height / 2.0 - 1);
            }
            p.setRenderHint(QPainter::Antialiasing, false);
            j = std::max(j + 1, firstAtOrAfter(marks, m_axis.mapXToTime(x + kMarkerSize / 2.0), j));
        }
        paintWorkMarks(p, r, row, focusedEvent);
    }
    p.setBrush(Qt::NoBrush);
}

TimelineView::MessageExtent TimelineView::messageExtent(const TimelineIndex::MessageRef &ref, const VisibleRows &rows,
                                                        std::vector<int> &recipientRows) const
{
    MessageExtent extent;
    const QRect plot = plotRect();
    auto visible = [&](int row) { return row >= rows.first && row <= rows.last; };
    extent.senderRow = messageEndpointRows(ref.messageRow, ref.senderAgentRow, recipientRows);
    if (m_index.convention(ref.messageRow) == ConventionKind::Heartbeat) {
        // Drawn as a tick at the top of the sender's lane.
        extent.drawable = extent.endVisible = visible(extent.senderRow);
        if (extent.drawable) {
            extent.minY = rowTopY(extent.senderRow);
            extent.maxY = extent.minY + 10;
        }
        return extent;
    }
    if (extent.senderRow < 0 && recipientRows.empty())
        return extent;
    extent.senderY = extent.senderRow >= 0 ? rowCenterY(extent.senderRow) : rowCenterY(recipientRows.front()) - 10;
    extent.minY = extent.maxY = extent.senderY;
    extent.endVisible = visible(extent.senderRow);
    for (const int row : recipientRows) {
        extent.minY = std::min(extent.minY, rowCenterY(row));
        extent.maxY = std::max(extent.maxY, rowCenterY(row));
        extent.endVisible = extent.endVisible || visible(row);
    }
    extent.drawable = extent.maxY >= plot.top() && extent.minY <= plot.bottom();
    return extent;
}

bool TimelineView::columnIsDense(int from, int to, const VisibleRows &rows) const
{
    const int count = to - from;
    if (count <= kMaxArrowsPerColumn)
        return false;
    if (count > kArrowCheckLimit)
        return true;
    int drawn = 0;
    for (int i = from; i < to; ++i) {
        if (messageExtent(m_index.messages()[size_t(i)], rows, m_scratchRows).drawable && ++drawn > kMaxArrowsPerColumn)
            return true;
    }
    return false;
}

void TimelineView::paintWorkMarks(QPainter &p, int r, const LaneRow &row, int focusedEvent) const
{
    const auto &marks = m_index.workMarks(row.agentRow);
    if (marks.empty())
        return;
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    static const QColor checkpointColor(0x7b, 0x3f, 0xbf); // violet: apart from every state and health colour
    static const QColor turnColor(0x1f, 0x8a, 0x8a);       // teal
    const double top = rowTopY(r) + 3;
    const double h = kMarkerSize / 2.0;
    p.setRenderHint(QPainter::Antialiasing, true);
    int j = firstAtOrAfter(marks, m_axis.mapXToTime(plot.left() - kMarkerSize));
    const double lastTime = m_axis.mapXToTime(plot.right() + kMarkerSize);
    while (j < int(marks.size()) && double(marks[size_t(j)].timeMs) <= lastTime) {
        const TimelineIndex::WorkMark &mark = marks[size_t(j)];
        const double x = std::floor(m_axis.mapTimeToX(double(mark.timeMs))) + 0.5;
        p.setPen(QPen(pal.color(QPalette::Base), 1));
        if (mark.kind() == EventKind::TrajectoryCheckpoint) {
            // A flag: its pole at the time, its cloth to the right.
            p.setBrush(checkpointColor);
            p.drawPolygon(QPolygonF({QPointF(x, top), QPointF(x + 2 * h, top + h * 0.7), QPointF(x, top + 1.4 * h)}));
            p.setPen(QPen(checkpointColor, 1.5));
            p.drawLine(QPointF(x, top), QPointF(x, top + 2.4 * h));
        } else {
            p.setBrush(turnColor);
            p.drawEllipse(QPointF(x, top + h * 0.8), h * 0.8, h * 0.8);
        }
        if (mark.eventRow == focusedEvent) {
            p.setPen(QPen(pal.color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(QPointF(x + h * 0.5, top + h), h * 1.6, h * 1.6);
        }
        j = std::max(j + 1, firstAtOrAfter(marks, m_axis.mapXToTime(x + kMarkerSize / 2.0), j));
    }
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineView::paintMessages(QPainter &p, const VisibleRows &rows, const std::vector<int> &bounds) const
{
    const int width = int(bounds.size()) - 1;
    std::vector<char> dense(size_t(std::max(0, width)), 0);
    bool anyDense = false;
    for (int c = 0; c < width; ++c) {
        dense[size_t(c)] = columnIsDense(bounds[size_t(c)], bounds[size_t(c + 1)], rows);
        anyDense = anyDense || dense[size_t(c)];
    }
    if (anyDense)
        paintDensity(p, rows, dense);

    int focusedMessage = -1;
    if (m_selection->focusKind() == SelectionHub::Kind::Message)
        focusedMessage = m_selection->focusKey().toInt();
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    std::vector<int> labelRightEdge(size_t(std::max(0, rows.last - rows.first + 1)), INT_MIN);
    const auto &messages = m_index.messages();
    for (int c = 0; c < width; ++c) {
        if (dense[size_t(c)])
            continue;
        for (int i = bounds[size_t(c)]; i < bounds[size_t(c + 1)]; ++i)
            paintMessage(p, messages[size_t(i)], rows, focusedMessage, labelRightEdge);
    }
    // Dense columns show a heat map; the focused message and its causal chain (a few hundred
    // rows at most) still show on top, each found by its time.
    if (anyDense) {
        std::vector<int> shown = m_selection->chain();
        if (focusedMessage >= 0)
            shown.push_back(focusedMessage);
        const MessageLog &log = m_store->messages();
        for (const int row : shown) {
            if (!log.isKept(size_t(row)))
                continue;
            const qint64 t = log.timestampMs(size_t(row));
            auto at = std::lower_bound(messages.begin(), messages.end(), t,
                                       [](const TimelineIndex::MessageRef &m, qint64 time) { return m.timeMs < time; });
            while (at != messages.end() && at->timeMs == t && at->messageRow != row)
                ++at;
            if (at == messages.end() || at->messageRow != row)
                continue;
            // Its column, by its position among the messages (as the columns were cut).
            const int position = int(at - messages.begin());
            const int column = int(std::upper_bound(bounds.begin(), bounds.end(), position) - bounds.begin()) - 1;
            if (column >= 0 && column < width && dense[size_t(column)])
                paintMessage(p, *at, rows, focusedMessage, labelRightEdge);
        }
    }
    p.setFont(font());
}

void TimelineView::paintMessage(QPainter &p, const TimelineIndex::MessageRef &ref, const VisibleRows &rows,
                                int focusedMessage, std::vector<int> &labelRightEdge) const
{
    const MessageExtent extent = messageExtent(ref, rows, m_scratchRows);
    if (!extent.drawable)
        return;
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const ConventionKind convention = m_store->messages().convention(size_t(ref.messageRow));
    const int x = int(std::floor(m_axis.mapTimeToX(double(ref.timeMs))));
    const bool focused = ref.messageRow == focusedMessage;
    // In the focused message's causal chain: a lighter band behind it (the focused one has the full one).
    const bool inChain = !focused && m_selection->inChain(ref.messageRow);
    QColor color = messageColor(convention, pal);
    if (convention == ConventionKind::Heartbeat) {
        p.fillRect(QRect(x, extent.minY + 2, focused || inChain ? 3 : 1, 7), focused || inChain ? pal.color(QPalette::Highlight) : color);
        return;
    }
    if (!extent.endVisible)
        color = mixed(pal.color(QPalette::Base), color, 0.3); // passing through: both ends are scrolled away

    const int lineTop = std::max(extent.minY, plot.top() - 8);
    const int lineBottom = std::min(extent.maxY, plot.bottom() + 8);
    if (focused)
        p.fillRect(QRect(x - 2, lineTop, 5, lineBottom - lineTop + 1), pal.color(QPalette::Highlight));
    else if (inChain)
        p.fillRect(QRect(x - 1, lineTop, 3, lineBottom - lineTop + 1), mixed(pal.color(QPalette::Base), pal.color(QPalette::Highlight), 0.6));
    if (lineBottom > lineTop)
        p.fillRect(QRect(x, lineTop, 1, lineBottom - lineTop + 1), color);

    using Shape = MarkerSprites::Shape;
    for (const int row : m_scratchRows) {
        const int y = rowCenterY(row);
        if (y < plot.top() - 8 || y > plot.bottom() + 8)
            continue;
        // Within one (collapsed) lane: a ring instead of an arrow.
        const Shape shape = row == extent.senderRow ? Shape::Ring : y > extent.senderY ? Shape::HeadDown : Shape::HeadUp;
        m_sprites.draw(p, shape, x, y, color.rgba());
    }
    if (extent.senderRow >= 0 && extent.senderY >= plot.top() - 4 && extent.senderY <= plot.bottom() + 4)
        m_sprites.draw(p, Shape::Dot, x, extent.senderY, color.rgba());

    // A short label beside the sender's end, where the lane has room for it.
    if (extent.senderRow >= rows.first && extent.senderRow <= rows.last) {
        int &rightEdge = labelRightEdge[size_t(extent.senderRow - rows.first)];
        if (x + 4 > rightEdge) {
            const QString label = messageLabel(convention, m_store->messages().payloadType(size_t(ref.messageRow)));
            if (!label.isEmpty()) {
                const QFontMetrics metrics = p.fontMetrics();
                p.setPen(color);
                p.drawText(QPoint(x + 5, rowTopY(extent.senderRow) + metrics.ascent()), label);
                rightEdge = x + 5 + metrics.horizontalAdvance(label) + 6;
            }
        }
    }
}

void TimelineView::paintDensity(QPainter &p, const VisibleRows &rows, const std::vector<char> &dense) const
{
    const QRect plot = plotRect();
    const int width = int(dense.size());
    const QColor heat = palette().color(QPalette::Highlight);
    // A cell's opacity by its count of endpoints (log scale, full from kDensitySaturation on): a
    // table, not a log2 per column and lane (a tenth of the timeline's paint under a flood).
    static const std::array<int, kDensitySaturation + 1> kAlphaOfCount = [] {
        std::array<int, kDensitySaturation + 1> alpha{};
        const double saturation = std::log2(1.0 + kDensitySaturation);
        for (int count = 1; count <= kDensitySaturation; ++count)
            alpha[size_t(count)] = int(40 + 215 * std::min(1.0, std::log2(1.0 + count) / saturation));
        return alpha;
    }();
    // A cell is at least kMinCellWidth wide so a lone dense column reads as a block, not a line:
    // it reaches up to kPad pixels past its column on each side.
    constexpr int kMinCellWidth = 3;
    constexpr int kPad = kMinCellWidth / 2;
    // A lane's cells are written into one row of pixels (pixel i + kPad is plot column i), copied
    // down the cells' height and drawn as one opaque image per stretch of cells: a flood made one
    // fill per cell before, about 19,000 a paint (docs/benchmarks.md, "The timeline's marks as images").
    int tallest = 0;
    for (int r = rows.first; r <= rows.last; ++r)
        tallest = std::max(tallest, m_lanes.rows()[size_t(r)].height - kStateStripHeight - 7);
    if (tallest <= 0 || width <= 0)
        return;
    if (m_densityCells.width() < width + 2 * kPad || m_densityCells.height() < tallest)
        m_densityCells = QImage(width + 2 * kPad, tallest, QImage::Format_RGB32);
    QRgb *const line = reinterpret_cast<QRgb *>(m_densityCells.scanLine(0));
    std::array<QRgb, kDensitySaturation + 1> colorOfCount{}; // 0: not made yet (an opaque colour is never 0)

    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        if (row.kind == LaneRow::Kind::Group && !row.collapsed)
            continue;
        const SortedTimes &times = rowEndpointTimes(row);
        const int height = row.height - kStateStripHeight - 7;
        if (times.empty() || height <= 0)
            continue;
        const QColor background = laneBackground(r);
        colorOfCount.fill(0);
        const int top = rowTopY(r) + 3;
        int written = 0, writtenEnd = 0; // the stretch of `line` not drawn yet: [written, writtenEnd)
        auto drawStretch = [&] {
            if (writtenEnd <= written)
                return;
            const size_t bytes = size_t(writtenEnd - written) * sizeof(QRgb);
            for (int y = 1; y < height; ++y)
                std::memcpy(reinterpret_cast<QRgb *>(m_densityCells.scanLine(y)) + written, line + written, bytes);
            p.drawImage(QPoint(plot.left() - kPad + written, top), m_densityCells,
                        QRect(written, 0, writtenEnd - written, height));
            written = writtenEnd = 0;
        };
        auto fillCell = [&](int fromColumn, int toColumn, int count) {
            int left = fromColumn, cellWidth = toColumn - fromColumn;
            if (cellWidth < kMinCellWidth) {
                left -= (kMinCellWidth - cellWidth) / 2;
                cellWidth = kMinCellWidth;
            }
            left += kPad;
            if (left > writtenEnd)
                drawStretch(); // a gap: the pixels between keep what is under them
            if (writtenEnd <= written)
                written = left;
            QRgb &color = colorOfCount[size_t(count)];
            if (color == 0)
                color = mixed(background, heat, kAlphaOfCount[size_t(count)] / 255.0).rgb();
            std::fill(line + left, line + left + cellWidth, color);
            writtenEnd = std::max(writtenEnd, left + cellWidth);
        };
        int c = 0;
        while (c < width) {
            if (!dense[size_t(c)]) {
                ++c;
                continue;
            }
            // One run of dense columns: walk the lane's times column by column; a cell is a
            // stretch of columns with the same strength.
            size_t position = times.lowerBound(m_axis.mapXToTime(plot.left() + c));
            int runStart = -1, runCount = 0;
            for (; c < width && dense[size_t(c)]; ++c) {
                const size_t end = times.lowerBound(m_axis.mapXToTime(plot.left() + c + 1), position);
                const int count = std::min(int(end - position), kDensitySaturation);
                position = end;
                if (kAlphaOfCount[size_t(count)] != kAlphaOfCount[size_t(runCount)]) {
                    if (runCount > 0)
                        fillCell(runStart, c, runCount);
                    runStart = c;
                    runCount = count;
                }
            }
            if (runCount > 0)
                fillCell(runStart, c, runCount);
        }
        drawStretch();
    }
}

void TimelineView::paintActions(QPainter &p) const
{
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const auto &actions = m_index.actions();
    const VisibleRows rows = visibleRows();
    const bool actionFocused = m_selection->focusKind() == SelectionHub::Kind::Action;
    p.setRenderHint(QPainter::Antialiasing, true);
    const double lastTime = m_axis.mapXToTime(plot.right() + kMarkerSize);
    for (int i = firstAtOrAfter(actions, m_axis.mapXToTime(plot.left() - kMarkerSize));
         i < int(actions.size()) && double(actions[size_t(i)].timeMs) <= lastTime; ++i) {
        const int row = m_lanes.rowOfAgent(actions[size_t(i)].agentRow);
        if (row < rows.first || row > rows.last)
            continue;
        const OperatorAction &action = m_store->actions()[size_t(actions[size_t(i)].actionRow)];
        const QColor color = actionStatusColor(action.status);
        const double x = std::floor(m_axis.mapTimeToX(double(actions[size_t(i)].timeMs))) + 0.5;
        const double top = rowTopY(row) + 1;
        const double bottom = rowTopY(row) + m_lanes.rows()[size_t(row)].height - 1;
        p.setPen(QPen(color, 1, Qt::DotLine));
        p.drawLine(QPointF(x, top), QPointF(x, bottom));
        // A flag hanging from the lane's top edge.
        const QPolygonF flag({QPointF(x, top), QPointF(x + 8, top + 3.5), QPointF(x, top + 7)});
        p.setPen(QPen(pal.color(QPalette::Text), 1));
        p.setBrush(color);
        p.drawPolygon(flag);
        if (actionFocused && m_selection->focusKey() == action.id) {
            p.setPen(QPen(pal.color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x - 3, top - 1, 13, bottom - top + 1));
        }
    }
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);
}

// A bar along the top of each lane an alert names, with a triangle where it was raised; a
// cleared alert's bar is lighter. Drawn in m_alertSpans' order (cleared first, open on top), also
// where a folded lane holds several agents. Cost: the agents that have alerts, plus the spans of
// those in view; the index from agents to spans is made again only after a change.
void TimelineView::paintAlerts(QPainter &p, const VisibleRows &rows) const
{
    if (m_alertSpans.empty())
        return;
    const std::vector<Agent> &agents = m_store->agents();
    if (m_alertSpansOfAgentStale || m_alertSpansOfAgentCount != agents.size()) {
        for (std::vector<int> &spans : m_alertSpansOfAgent)
            spans.clear();
        m_alertSpansOfAgent.resize(agents.size());
        for (size_t i = 0; i < m_alertSpans.size(); ++i)
            for (const QString &id : m_alertSpans[i].agents)
                if (const int agentRow = m_store->agentRow(id); agentRow >= 0)
                    m_alertSpansOfAgent[size_t(agentRow)].push_back(int(i));
        m_alertSpansOfAgentStale = false;
        m_alertSpansOfAgentCount = agents.size();
    }
    const QRect plot = plotRect();
    const QColor base = palette().color(QPalette::Base);
    const QPen outline(palette().color(QPalette::Text), 1);
    // (span, lane) of the agents in view, then drawn in the spans' order.
    std::vector<std::pair<int, int>> shown;
    for (size_t agentRow = 0; agentRow < m_alertSpansOfAgent.size(); ++agentRow) {
        const std::vector<int> &spans = m_alertSpansOfAgent[agentRow];
        if (spans.empty())
            continue;
        const int row = m_lanes.rowOfAgent(int(agentRow));
        if (row < rows.first || row > rows.last)
            continue;
        for (const int i : spans)
            shown.emplace_back(i, row);
    }
    std::sort(shown.begin(), shown.end());
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const auto &[i, row] : shown) {
        const AlertSpan &span = m_alertSpans[size_t(i)];
        const auto [from, to] = alertExtent(span);
        if (to < plot.left() || from > plot.right())
            continue;
        QColor color = alertSeverityColor(int(span.severity));
        if (span.untilMs >= 0)
            color = mixed(color, base, 0.55);
        const double top = rowTopY(row);
        p.fillRect(QRectF(from, top, to - from, kAlertBarHeight), color);
        const QPolygonF sign({QPointF(from, top), QPointF(from + kMarkerSize, top), QPointF(from + kMarkerSize / 2.0, top + kMarkerSize)});
        p.setPen(outline);
        p.setBrush(color);
        p.drawPolygon(sign);
    }
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineView::paintRuler(QPainter &p, const std::vector<int> &bounds) const
{
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const QRect ruler(0, 0, viewport()->width(), kRulerHeight);
    p.fillRect(ruler, pal.color(QPalette::Window));
    const QRect strip(plot.left(), kRulerHeight, plot.width(), kDensityStripHeight);
    p.fillRect(QRect(0, kRulerHeight, viewport()->width(), kDensityStripHeight),
               mixed(pal.color(QPalette::Base), pal.color(QPalette::Window), 0.5));

    // Message rate per pixel column (log scale), over the whole system.
    const int width = int(bounds.size()) - 1;
    int densest = 0;
    for (int c = 0; c < width; ++c)
        densest = std::max(densest, bounds[size_t(c + 1)] - bounds[size_t(c)]);
    if (densest > 0) {
        QColor bar = messageColor(ConventionKind::None, pal);
        bar.setAlpha(160);
        const double scale = std::log2(1.0 + densest);
        for (int c = 0; c < width; ++c) {
            const int count = bounds[size_t(c + 1)] - bounds[size_t(c)];
            if (count == 0)
                continue;
            const int h = std::max(1, int(std::lround(kDensityStripHeight * std::log2(1.0 + count) / scale)));
            p.fillRect(QRect(strip.left() + c, strip.bottom() + 1 - h, 1, h), bar);
        }
    }

    const double step = timelineTickStepMs(m_axis.msPerPixel, 90);
    p.setPen(pal.color(QPalette::WindowText));
    const QFontMetrics metrics = p.fontMetrics();
    // Ticks fall on round times of the clock shown (common/TimeText.h), not of the server's.
    const double shownOffset = double(shownClockOffset());
    const double firstTick = std::ceil((m_axis.startMs - shownOffset) / step) * step + shownOffset;
    const int utcOffset = QDateTime::fromMSecsSinceEpoch(qint64(firstTick - shownOffset)).offsetFromUtc();
    p.save();
    p.setClipRect(QRect(plot.left(), 0, plot.width(), kRulerHeight));
    for (double t = firstTick; t <= m_axis.endMs() + step; t += step) {
        const int x = int(std::floor(m_axis.mapTimeToX(t)));
        p.drawLine(x, kRulerHeight - 5, x, kRulerHeight - 1);
        p.drawText(QPoint(x + 3, (kRulerHeight - 4 + metrics.ascent()) / 2), formatTime(t, step, utcOffset));
    }
    p.restore();
    QColor line = pal.color(QPalette::Mid);
    p.fillRect(QRect(0, kRulerHeight + kDensityStripHeight - 1, viewport()->width(), 1), line);

    // Above the headers: what the window spans and whether it follows the newest data (the live
    // edge, or a replay's position).
    // Short: the header column is about 200 px wide, and the span must fit beside it.
    const QString status = (m_followLive ? (m_replaying ? tr("▶ follows replay") : tr("● follows live")) : tr("❚❚ paused"))
                           + QStringLiteral("  ")
                           + tr("%1 shown").arg(formatDuration(m_axis.spanMs()));
    p.setPen(m_followLive ? healthColor(Health::Healthy) : pal.color(QPalette::WindowText));
    p.drawText(QRect(6, 0, m_headerWidth - 8, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft, status);
}

void TimelineView::paintHeaders(QPainter &p, const VisibleRows &rows) const
{
    const QRect plot = plotRect();
    const QPalette &pal = palette();
    const QRect area(0, plot.top(), m_headerWidth, plot.height());
    p.save();
    p.setClipRect(area);
    p.fillRect(area, pal.color(QPalette::Window));
    const QStringList selected = m_selection->selectedAgents();
    QColor separator = pal.color(QPalette::Mid);
    separator.setAlpha(70);
    const QFontMetrics metrics = p.fontMetrics();
    QFont bold = font();
    bold.setBold(true);

    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        const int top = rowTopY(r);
        const QRect rect(0, top, m_headerWidth, row.height);
        if (row.kind == LaneRow::Kind::Agent && selected.contains(row.id))
            p.fillRect(rect, mixed(pal.color(QPalette::Window), pal.color(QPalette::Highlight), 0.3));
        p.fillRect(QRect(0, rect.bottom(), m_headerWidth, 1), separator);

        int x = 6 + row.depth * kIndentPerLevel;
        const double cy = top + row.height / 2.0;
        if (row.expandable) {
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(Qt::NoPen);
            p.setBrush(pal.color(QPalette::WindowText));
            const QPolygonF triangle = row.collapsed
                ? QPolygonF({QPointF(x + 2, cy - 4), QPointF(x + 7, cy), QPointF(x + 2, cy + 4)})
                : QPolygonF({QPointF(x, cy - 2.5), QPointF(x + 8, cy - 2.5), QPointF(x + 4, cy + 2.5)});
            p.drawPolygon(triangle);
            p.setBrush(Qt::NoBrush);
            p.setRenderHint(QPainter::Antialiasing, false);
        }
        x += 12;
        const Agent *agent = row.agentRow >= 0 ? &m_store->agents()[size_t(row.agentRow)] : nullptr;
        if (agent) {
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(Qt::NoPen);
            p.setBrush(healthColor(agent->health));
            p.drawEllipse(QPointF(x + 4, cy), 4, 4);
            p.setBrush(Qt::NoBrush);
            p.setRenderHint(QPainter::Antialiasing, false);
            x += 13;
        }
        QString suffix;
        if (row.collapsed)
            suffix = QStringLiteral(" (%1)").arg(row.members.size());
        const int suffixWidth = metrics.horizontalAdvance(suffix);
        const bool departed = agent && agent->unregistered;
        p.setFont(row.kind == LaneRow::Kind::Group || row.collapsed ? bold : font());
        p.setPen(departed ? pal.color(QPalette::Disabled, QPalette::WindowText) : pal.color(QPalette::WindowText));
        const int available = std::max(0, m_headerWidth - x - 6 - suffixWidth);
        const QString label = p.fontMetrics().elidedText(row.label, Qt::ElideMiddle, available);
        p.drawText(QRect(x, top, available, row.height), Qt::AlignVCenter | Qt::AlignLeft, label);
        if (!suffix.isEmpty()) {
            p.setFont(font());
            p.setPen(pal.color(QPalette::Disabled, QPalette::WindowText));
            p.drawText(QRect(x + p.fontMetrics().horizontalAdvance(label) + 8, top, suffixWidth + 4, row.height),
                       Qt::AlignVCenter | Qt::AlignLeft, suffix);
        }
        p.setFont(font());
    }
    p.restore();
    p.fillRect(QRect(m_headerWidth - 1, 0, 1, viewport()->height()), pal.color(QPalette::Mid));
}

} // namespace mapi::ui
