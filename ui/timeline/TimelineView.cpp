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
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <climits>
#include <cmath>

namespace mapi::ui {

using namespace timeline_view;

TimelineView::TimelineView(SystemStore *store, SelectionHub *selection, QWidget *parent)
    : QAbstractScrollArea(parent)
    , m_store(store)
    , m_selection(selection)
{
    setObjectName(QStringLiteral("timelineView"));
    setFocusPolicy(Qt::StrongFocus);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    m_axis.left = m_headerWidth;
    m_axis.width = 1000; // nominal until the first resize
    m_axis.msPerPixel = kDefaultSpanMs / m_axis.width;

    connect(m_store, &SystemStore::changed, this, &TimelineView::onStoreChanged);
    connect(m_store, &SystemStore::wasReset, this, &TimelineView::onStoreReset);
    connect(m_selection, &SelectionHub::focusChanged, viewport(), qOverload<>(&QWidget::update));
    connect(m_selection, &SelectionHub::chainChanged, viewport(), qOverload<>(&QWidget::update));
    connect(m_selection, &SelectionHub::agentSelectionChanged, viewport(), qOverload<>(&QWidget::update));
    connect(horizontalScrollBar(), &QScrollBar::sliderReleased, this, &TimelineView::syncScrollBars);

    ingest(nullptr);
}

// ---- data ----------------------------------------------------------------------------------

void TimelineView::onStoreChanged(const ChangeSet &changes)
{
    ingest(&changes);
}

void TimelineView::takeAlertChanges(const std::vector<AlertChange> &changes)
{
    if (changes.empty())
        return;
    for (const AlertChange &change : changes) {
        const QString key = change.alert.key();
        if (change.raised) {
            m_openAlerts[key] = AlertSpan{key, change.alert.kind, change.alert.severity, change.alert.agents,
                                          change.alert.sinceMs, -1, change.alert.reason};
            continue;
        }
        auto open = m_openAlerts.find(key);
        AlertSpan span = open != m_openAlerts.end() ? open->second
                                                    : AlertSpan{key, change.alert.kind, change.alert.severity, change.alert.agents,
                                                                change.alert.sinceMs, -1, change.alert.reason};
        if (open != m_openAlerts.end())
            m_openAlerts.erase(open);
        span.untilMs = std::max(change.atMs, span.sinceMs);
        m_clearedAlerts.push_back(std::move(span));
        if (m_clearedAlerts.size() > kMaxClearedAlertSpans)
            m_clearedAlerts.pop_front();
    }
    m_alertSpans.assign(m_clearedAlerts.begin(), m_clearedAlerts.end());
    for (const auto &[key, span] : m_openAlerts)
        m_alertSpans.push_back(span);
    m_alertSpansOfAgentStale = true;
    viewport()->update();
}

void TimelineView::clearAlerts()
{
    m_clearedAlerts.clear();
    m_openAlerts.clear();
    m_alertSpans.clear();
    m_alertSpansOfAgentStale = true;
    viewport()->update();
}

std::pair<double, double> TimelineView::alertExtent(const AlertSpan &span) const
{
    const double from = std::floor(m_axis.mapTimeToX(double(span.sinceMs)));
    const double to = std::floor(m_axis.mapTimeToX(span.untilMs >= 0 ? double(span.untilMs) : liveEdgeMs()));
    return {from, std::max(from + kMarkerSize, to)};
}

void TimelineView::resetZoom()
{
    // Another source: its lanes are folded by its own size again.
    m_autoFoldedKeys.clear();
    m_operatorFolded = false;
    m_autoSpanMs = 0;
    m_userZoomed = false;
    m_axis.msPerPixel = std::clamp(kDefaultSpanMs / std::max(m_axis.width, 1.0), TimelineAxis::kMinMsPerPixel,
                                   TimelineAxis::kMaxMsPerPixel);
    viewport()->update();
}

void TimelineView::onStoreReset()
{
    // Cleared bars belonged to the old store's times; open alerts stay open across a reset (the
    // detectors clear them only when they no longer hold in the new store). The zoom stays: a
    // reset is also time travel's swap between the live and the past model, and the operator's
    // 10 s must stay 10 s both ways (another source calls resetZoom()).
    m_clearedAlerts.clear();
    m_alertSpans.clear();
    for (const auto &[key, span] : m_openAlerts)
        m_alertSpans.push_back(span);
    m_alertSpansOfAgentStale = true;
    m_index.clear();
    m_agentShapes.clear();
    m_scopeShapes.clear();
    m_merged.clear();
    m_scrollY = 0;
    rebuildLanes();
    setFollowLive(true);
    syncScrollBars();
    viewport()->update();
    Q_EMIT dataChanged();
}

void TimelineView::ingest(const ChangeSet *changes)
{
    const TimelineIndex::Ingested ingested = m_index.ingest(*m_store, kIngestSliceRows);
    if (!ingested.complete && !m_ingestScheduled) {
        // A big backlog (a large trace opened): the rest in further slices, letting the event
        // loop run in between.
        m_ingestScheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_ingestScheduled = false;
            const ChangeSet nothingElse;
            ingest(&nothingElse);
        });
    }
    if (layoutInputsChanged(changes))
        rebuildLanes();
    if (ingested.anything) {
        if (m_autoSpanMs <= 0 && !m_index.isEmpty() && ingested.complete) {
            // The first data sets the zoom: all of it (a trace opened), at least kDefaultSpanMs
            // (a live system just connected).
            m_autoSpanMs = std::max((liveEdgeMs() - double(m_index.firstTimeMs())) * 1.06, kDefaultSpanMs);
            if (!m_userZoomed) {
                m_axis.msPerPixel = std::clamp(m_autoSpanMs / std::max(m_axis.width, 1.0),
                                               TimelineAxis::kMinMsPerPixel, TimelineAxis::kMaxMsPerPixel);
                if (!m_followLive)
                    m_axis.placeTimeAt(double(m_index.firstTimeMs()), 0.02);
            }
        }
        applyFollow();
        Q_EMIT dataChanged();
    }
    syncScrollBars();
    viewport()->update();
}

bool TimelineView::layoutInputsChanged(const ChangeSet *changes)
{
    bool changed = false;
    const int agentCount = int(m_store->agents().size());
    const int scopeCount = int(m_store->scopes().size());
    if (agentCount < int(m_agentShapes.size()) || scopeCount < int(m_scopeShapes.size())) {
        m_agentShapes.clear();
        m_scopeShapes.clear();
    }
    const int knownAgents = int(m_agentShapes.size());
    const int knownScopes = int(m_scopeShapes.size());
    for (int row = knownAgents; row < agentCount; ++row)
        m_agentShapes.push_back(TimelineLanes::agentShape(*m_store, row));
    for (int row = knownScopes; row < scopeCount; ++row)
        m_scopeShapes.push_back(TimelineLanes::scopeShape(*m_store, row));
    changed = agentCount > knownAgents || scopeCount > knownScopes || !changes;
    if (!changes)
        return changed;
    // Rows known before whose shape changed.
    auto reshape = [&](const QSet<int> &rows, int known, std::vector<QString> &shapes, auto shapeOf) {
        for (const int row : rows) {
            if (row >= known)
                continue;
            QString shape = shapeOf(*m_store, row);
            if (shape != shapes[size_t(row)]) {
                shapes[size_t(row)] = std::move(shape);
                changed = true;
            }
        }
    };
    reshape(changes->agentRows, knownAgents, m_agentShapes, &TimelineLanes::agentShape);
    reshape(changes->scopeRows, knownScopes, m_scopeShapes, &TimelineLanes::scopeShape);
    return changed;
}

void TimelineView::rebuildLanes()
{
    m_lanes.rebuild(*m_store, m_grouping, m_collapsed);
    // Past kFoldAbove agents the innermost groups start folded (a team is one lane until
    // opened), each the first time it is seen, until the operator folds or opens a group: a
    // trace that loads in parts and a growing fleet fold their later teams too.
    if (!m_operatorFolded && int(m_store->agents().size()) > kFoldAbove) {
        const std::vector<LaneRow> &rows = m_lanes.rows();
        bool folded = false;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (!rows[i].expandable || rows[i].kind != LaneRow::Kind::Group || m_autoFoldedKeys.contains(rows[i].key))
                continue;
            bool inner = true; // no group nested below it
            for (size_t j = i + 1; j < rows.size() && rows[j].depth > rows[i].depth && inner; ++j)
                inner = !(rows[j].kind == LaneRow::Kind::Group && rows[j].expandable);
            if (inner) {
                m_autoFoldedKeys.insert(rows[i].key);
                m_collapsed.insert(rows[i].key);
                folded = true;
            }
        }
        if (folded)
            m_lanes.rebuild(*m_store, m_grouping, m_collapsed);
    }
    // Merged lanes are kept only for rows that are still collapsed.
    QSet<QString> collapsedRows;
    for (const LaneRow &row : m_lanes.rows())
        if (row.collapsed)
            collapsedRows.insert(row.key);
    for (auto it = m_merged.begin(); it != m_merged.end();)
        it = collapsedRows.contains(it.key()) ? std::next(it) : m_merged.erase(it);
    syncScrollBars();
    viewport()->update();
    Q_EMIT lanesChanged();
}

const SortedTimes &TimelineView::rowEndpointTimes(const LaneRow &row) const
{
    if (!row.collapsed)
        return m_index.endpointTimes(row.agentRow);
    if (row.members.size() == 1)
        return m_index.endpointTimes(row.members.front());
    MergedLane &merged = m_merged[row.key];
    if (merged.members != row.members || merged.reorders != m_index.endpointReorders()) {
        // Filled again from the start; meanwhile the last complete lane stays shown (of the
        // same members: a reorder or a trim), so that a lane never blinks empty while refilling.
        if (merged.members != row.members)
            merged.times = SortedTimes();
        merged.members = row.members;
        merged.consumed.assign(row.members.size(), 0);
        merged.reorders = m_index.endpointReorders();
        merged.pending.clear();
        merged.filling = true;
    }
    // A paint merges at most kMergeBudgetPerPaint times over all its lanes (a group of 10,000
    // agents folded at once holds hundreds of thousands): the rest at the next paints, asked for
    // at once, so that no frame stalls while the lanes fill.
    std::vector<qint64> fresh;
    bool complete = true;
    for (size_t i = 0; i < merged.members.size(); ++i) {
        const SortedTimes &lane = m_index.endpointTimes(merged.members[i]);
        if (merged.consumed[i] >= lane.size())
            continue;
        if (m_mergeBudget <= 0) {
            m_mergeIncomplete = true;
            complete = false;
            break;
        }
        const size_t take = std::min(lane.size() - merged.consumed[i], size_t(m_mergeBudget));
        for (size_t k = merged.consumed[i]; k < merged.consumed[i] + take; ++k)
            fresh.push_back(lane.at(k));
        merged.consumed[i] += take;
        m_mergeBudget -= qint64(take);
        if (merged.consumed[i] < lane.size()) {
            m_mergeIncomplete = true;
            complete = false;
            break;
        }
    }
    std::sort(fresh.begin(), fresh.end());
    if (merged.filling) {
        // Filling: the parts merged into a plain sorted vector (one linear merge a paint), made
        // the shown lane once every member is in.
        const auto oldSize = std::ptrdiff_t(merged.pending.size());
        merged.pending.insert(merged.pending.end(), fresh.begin(), fresh.end());
        std::inplace_merge(merged.pending.begin(), merged.pending.begin() + oldSize, merged.pending.end());
        if (complete) {
            merged.times = SortedTimes();
            for (const qint64 t : merged.pending)
                merged.times.insert(t); // in order: appends
            merged.pending = {};
            merged.filling = false;
        }
        return merged.times;
    }
    if (!fresh.empty()) {
        if (!merged.times.empty() && merged.times.back() > fresh.front()) { // rare: merge, then rebuild
            std::vector<qint64> all = merged.times.toVector();
            const auto oldSize = qsizetype(all.size());
            all.insert(all.end(), fresh.begin(), fresh.end());
            std::inplace_merge(all.begin(), all.begin() + oldSize, all.end());
            merged.times = SortedTimes();
            fresh = std::move(all);
        }
        for (const qint64 t : fresh)
            merged.times.insert(t); // in order: appends
    }
    return merged.times;
}

// ---- view state ----------------------------------------------------------------------------

void TimelineView::setGrouping(LaneGrouping grouping)
{
    if (grouping == m_grouping)
        return;
    m_grouping = grouping;
    m_scrollY = 0;
    rebuildLanes();
}

void TimelineView::setCollapsed(const QString &key, bool collapsed)
{
    m_operatorFolded = true;
    if (collapsed == m_collapsed.contains(key))
        return;
    if (collapsed)
        m_collapsed.insert(key);
    else
        m_collapsed.remove(key);
    rebuildLanes();
}

void TimelineView::collapseAll()
{
    m_operatorFolded = true;
    for (const LaneRow &row : m_lanes.rows())
        if (row.expandable)
            m_collapsed.insert(row.key);
    m_scrollY = 0;
    rebuildLanes();
}

void TimelineView::expandAll()
{
    m_operatorFolded = true;
    m_collapsed.clear();
    rebuildLanes();
}

void TimelineView::toggleRow(int row)
{
    if (row < 0 || row >= int(m_lanes.rows().size()) || !m_lanes.rows()[size_t(row)].expandable)
        return;
    const LaneRow &lane = m_lanes.rows()[size_t(row)];
    setCollapsed(lane.key, !lane.collapsed);
}

double TimelineView::liveEdgeMs() const
{
    return std::max(m_index.isEmpty() ? 0.0 : double(m_index.lastTimeMs()), double(m_store->now()));
}

void TimelineView::setReplaying(bool on)
{
    if (m_replaying == on)
        return;
    m_replaying = on;
    viewport()->update();
}

void TimelineView::setFollowLive(bool on)
{
    if (on == m_followLive) {
        if (on)
            applyFollow();
        return;
    }
    m_followLive = on;
    applyFollow();
    syncScrollBars();
    viewport()->update();
    Q_EMIT followLiveChanged(on);
}

void TimelineView::pauseFollowing()
{
    if (!m_followLive)
        return;
    m_followLive = false;
    Q_EMIT followLiveChanged(false);
}

void TimelineView::applyFollow()
{
    if (!m_followLive)
        return;
    const double edge = liveEdgeMs();
    if (edge > 0)
        m_axis.placeTimeAt(edge, kLiveEdge);
}

void TimelineView::clampPan()
{
    if (m_index.isEmpty())
        return;
    // Some data stays in sight: the window may not leave the data by more than 90 % of its span.
    const double span = m_axis.spanMs();
    const double lowest = double(m_index.firstTimeMs()) - 0.9 * span;
    const double highest = std::max(lowest, liveEdgeMs() - 0.1 * span);
    m_axis.startMs = std::clamp(m_axis.startMs, lowest, highest);
}

void TimelineView::zoomAt(double x, double factor)
{
    m_userZoomed = true;
    if (m_followLive)
        x = m_axis.mapTimeToX(liveEdgeMs());
    m_axis.zoomAround(x, factor);
    if (m_followLive)
        applyFollow();
    else
        clampPan();
    syncScrollBars();
    viewport()->update();
}

void TimelineView::zoomBy(double factor)
{
    zoomAt(m_axis.left + m_axis.width / 2, factor);
}

void TimelineView::panByPixels(double dx)
{
    pauseFollowing();
    m_axis.panByPixels(dx);
    clampPan();
    syncScrollBars();
    viewport()->update();
}

void TimelineView::showAll()
{
    if (m_index.isEmpty())
        return;
    m_userZoomed = true;
    const double from = double(m_index.firstTimeMs());
    const double to = liveEdgeMs();
    const double margin = std::max((to - from) * 0.02, 1.0);
    m_axis.showRange(from - margin, to + 2 * margin);
    applyFollow();
    syncScrollBars();
    viewport()->update();
}

void TimelineView::showTimeRange(double fromMs, double toMs)
{
    pauseFollowing();
    m_userZoomed = true;
    m_axis.showRange(fromMs, toMs);
    syncScrollBars();
    viewport()->update();
}

void TimelineView::scrollRowIntoView(int row)
{
    if (row < 0 || row >= int(m_lanes.rows().size()))
        return;
    const LaneRow &lane = m_lanes.rows()[size_t(row)];
    const int visibleHeight = plotRect().height();
    if (lane.top < m_scrollY)
        m_scrollY = lane.top;
    else if (lane.top + lane.height > m_scrollY + visibleHeight)
        m_scrollY = lane.top + lane.height - visibleHeight;
    syncScrollBars();
    viewport()->update();
}

void TimelineView::syncScrollBars()
{
    m_syncingScrollBars = true;
    const QRect plot = plotRect();

    const int maxY = std::max(0, m_lanes.contentHeight() - plot.height());
    m_scrollY = std::clamp(m_scrollY, 0, maxY);
    QScrollBar *vertical = verticalScrollBar();
    vertical->setRange(0, maxY);
    vertical->setPageStep(std::max(1, plot.height()));
    vertical->setSingleStep(TimelineLanes::kLaneHeight);
    vertical->setValue(m_scrollY);

    // The horizontal bar spans the data and the current window. Its units are pixels at the
    // current zoom, coarsened when the range would overflow an int (hours at µs zoom).
    QScrollBar *horizontal = horizontalScrollBar();
    double extentStart = m_axis.startMs;
    double extentEnd = m_axis.endMs();
    if (!m_index.isEmpty()) {
        extentStart = std::min(extentStart, double(m_index.firstTimeMs()));
        extentEnd = std::max(extentEnd, liveEdgeMs());
    }
    if (horizontal->isSliderDown())
        extentStart = std::min(extentStart, m_scrollOriginMs); // keep the origin under the mouse
    const double totalPixels = (extentEnd - extentStart) / m_axis.msPerPixel;
    m_scrollUnitPixels = std::max(1.0, totalPixels / 1e9);
    m_scrollOriginMs = extentStart;
    const double width = std::max(m_axis.width, 1.0);
    horizontal->setRange(0, int(std::max(0.0, (totalPixels - width) / m_scrollUnitPixels)));
    horizontal->setPageStep(std::max(1, int(width / m_scrollUnitPixels)));
    horizontal->setSingleStep(std::max(1, int(20 / m_scrollUnitPixels)));
    horizontal->setValue(int(std::lround((m_axis.startMs - extentStart) / m_axis.msPerPixel / m_scrollUnitPixels)));
    m_syncingScrollBars = false;
}

void TimelineView::scrollContentsBy(int dx, int dy)
{
    if (m_syncingScrollBars)
        return;
    if (dy != 0)
        m_scrollY = verticalScrollBar()->value();
    if (dx != 0) {
        pauseFollowing();
        m_axis.startMs = m_scrollOriginMs + double(horizontalScrollBar()->value()) * m_scrollUnitPixels * m_axis.msPerPixel;
    }
    viewport()->update();
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    m_axis.left = m_headerWidth;
    m_axis.width = std::max(1, plotRect().width());
    // Until the operator zooms, the window keeps the automatic span whatever the size.
    if (!m_userZoomed)
        m_axis.msPerPixel = std::clamp((m_autoSpanMs > 0 ? m_autoSpanMs : kDefaultSpanMs) / m_axis.width,
                                       TimelineAxis::kMinMsPerPixel, TimelineAxis::kMaxMsPerPixel);
    applyFollow();
    syncScrollBars();
}

// ---- geometry ------------------------------------------------------------------------------

QRect TimelineView::plotRect() const
{
    const int top = kRulerHeight + kDensityStripHeight;
    return QRect(m_headerWidth, top, std::max(0, viewport()->width() - m_headerWidth),
                 std::max(0, viewport()->height() - top));
}

int TimelineView::rowTopY(int row) const
{
    return kRulerHeight + kDensityStripHeight + m_lanes.rows()[size_t(row)].top - m_scrollY;
}

int TimelineView::rowCenterY(int row) const
{
    return rowTopY(row) + m_lanes.rows()[size_t(row)].height / 2;
}

TimelineView::VisibleRows TimelineView::visibleRows() const
{
    VisibleRows rows;
    const int count = int(m_lanes.rows().size());
    if (count == 0)
        return rows;
    rows.first = m_lanes.firstRowEndingAfter(m_scrollY);
    rows.last = std::min(count - 1, m_lanes.firstRowEndingAfter(m_scrollY + std::max(0, plotRect().height() - 1)));
    return rows;
}

// Fills `recipientRows` with the rows of a message's recipients; returns the sender's row.
int TimelineView::messageEndpointRows(int messageRow, int senderAgentRow, std::vector<int> &recipientRows) const
{
    recipientRows.clear();
    m_index.forEachRecipient(*m_store, messageRow, [&](int agentRow) {
        const int row = m_lanes.rowOfAgent(agentRow);
        if (row >= 0 && std::find(recipientRows.begin(), recipientRows.end(), row) == recipientRows.end())
            recipientRows.push_back(row);
    });
    return senderAgentRow >= 0 ? m_lanes.rowOfAgent(senderAgentRow) : -1;
}

// For each pixel column c of the plot, the first message at or after the column's left edge;
// entry W is the end of the last column. W + 1 binary searches, each within what is left.
std::vector<int> TimelineView::columnBounds() const
{
    const QRect plot = plotRect();
    const int width = plot.width();
    std::vector<int> bounds(size_t(width) + 1);
    int position = m_index.firstMessageAtOrAfter(m_axis.mapXToTime(plot.left()));
    bounds[0] = position;
    for (int c = 1; c <= width; ++c) {
        position = firstAtOrAfter(m_index.messages(), m_axis.mapXToTime(plot.left() + c), position);
        bounds[size_t(c)] = position;
    }
    return bounds;
}

} // namespace mapi::ui
