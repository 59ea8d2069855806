#include "timeline/TimelineView.h"

#include "model/SystemStore.h"
#include "style/Colors.h"
#include "timeline/TimelineColors.h"

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

namespace {

constexpr int kStateStripHeight = 4;
constexpr int kMarkerSize = 7;
constexpr int kIndentPerLevel = 12;
constexpr int kHitSlop = 4;              // pixels around a mark or an arrow that still hit it
constexpr double kWheelZoomStep = 1.25;  // per wheel notch
constexpr double kKeyZoomStep = 1.5;
constexpr int kDensitySaturation = 64;   // endpoints per pixel column drawn at full strength

// Local clock time for the ruler and tooltips; below a millisecond the microseconds follow.
// `utcOffsetSeconds`: the local offset from UTC at that time. The ruler passes one offset for
// the whole window instead of asking the time zone database per label (which reads files).
QString formatTime(double timeMs, double precisionMs, int utcOffsetSeconds)
{
    const qint64 wholeMs = qint64(std::floor(timeMs));
    const qint64 msOfDay = ((wholeMs + qint64(utcOffsetSeconds) * 1000) % 86400000 + 86400000) % 86400000;
    QString text = QStringLiteral("%1:%2:%3")
                       .arg(msOfDay / 3600000, 2, 10, QLatin1Char('0'))
                       .arg(msOfDay / 60000 % 60, 2, 10, QLatin1Char('0'))
                       .arg(msOfDay / 1000 % 60, 2, 10, QLatin1Char('0'));
    if (precisionMs < 1000)
        text += QStringLiteral(".%1").arg(msOfDay % 1000, 3, 10, QLatin1Char('0'));
    if (precisionMs < 1) {
        const int micros = std::clamp(int(std::lround((timeMs - double(wholeMs)) * 1000)), 0, 999);
        text += QStringLiteral("'%1").arg(micros, 3, 10, QLatin1Char('0'));
    }
    return text;
}

QString formatTime(double timeMs)
{
    return formatTime(timeMs, 1, QDateTime::fromMSecsSinceEpoch(qint64(timeMs)).offsetFromUtc());
}

QString formatDuration(double ms)
{
    if (ms < 1)
        return QStringLiteral("%1 µs").arg(ms * 1000, 0, 'f', 0);
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms, 0, 'g', 3);
    if (ms < 120000)
        return QStringLiteral("%1 s").arg(ms / 1000, 0, 'g', 3);
    if (ms < 7200000)
        return QStringLiteral("%1 min").arg(ms / 60000, 0, 'g', 3);
    return QStringLiteral("%1 h").arg(ms / 3600000, 0, 'g', 3);
}

QColor mixed(const QColor &a, const QColor &b, double amountOfB)
{
    const double k = std::clamp(amountOfB, 0.0, 1.0);
    return QColor::fromRgbF(float(a.redF() * (1 - k) + b.redF() * k), float(a.greenF() * (1 - k) + b.greenF() * k),
                            float(a.blueF() * (1 - k) + b.blueF() * k));
}

template<typename List, typename T = typename List::value_type>
int firstAtOrAfter(const List &list, double timeMs, int from = 0)
{
    const auto at = std::lower_bound(list.begin() + std::clamp(from, 0, int(list.size())), list.end(), timeMs,
                                     [](const T &entry, double t) { return double(entry.timeMs) < t; });
    return int(at - list.begin());
}

int firstTimeAtOrAfter(const std::vector<qint64> &times, double timeMs, int from)
{
    const auto at = std::lower_bound(times.begin() + std::clamp(from, 0, int(times.size())), times.end(), timeMs,
                                     [](qint64 entry, double t) { return double(entry) < t; });
    return int(at - times.begin());
}

// A message's short label: its convention, else the payload's own type.
QString messageLabel(ConventionKind convention, const QString &payloadType)
{
    QString label = conventionName(convention);
    if (label.isEmpty())
        label = payloadType;
    return label.size() > 18 ? label.left(17) + QChar(0x2026) : label;
}

QString agentName(const SystemStore &store, const QString &id)
{
    if (id.isEmpty())
        return QCoreApplication::translate("TimelineView", "(unknown)");
    const Agent *agent = store.agent(id);
    return agent && !agent->name.isEmpty() ? agent->name : id;
}

} // namespace

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
    connect(m_selection, &SelectionHub::agentSelectionChanged, viewport(), qOverload<>(&QWidget::update));
    connect(horizontalScrollBar(), &QScrollBar::sliderReleased, this, &TimelineView::syncScrollBars);

    ingest(nullptr);
}

// ---- data ----------------------------------------------------------------------------------

void TimelineView::onStoreChanged(const ChangeSet &changes)
{
    ingest(&changes);
}

void TimelineView::onStoreReset()
{
    m_index.clear();
    m_agentShapes.clear();
    m_scopeShapes.clear();
    m_merged.clear();
    m_autoSpanMs = 0;
    m_userZoomed = false;
    m_scrollY = 0;
    m_axis.msPerPixel = std::clamp(kDefaultSpanMs / std::max(m_axis.width, 1.0), TimelineAxis::kMinMsPerPixel,
                                   TimelineAxis::kMaxMsPerPixel);
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
    for (const int row : changes->agentRows) {
        if (row >= knownAgents)
            continue;
        QString shape = TimelineLanes::agentShape(*m_store, row);
        if (shape != m_agentShapes[size_t(row)]) {
            m_agentShapes[size_t(row)] = std::move(shape);
            changed = true;
        }
    }
    for (const int row : changes->scopeRows) {
        if (row >= knownScopes)
            continue;
        QString shape = TimelineLanes::scopeShape(*m_store, row);
        if (shape != m_scopeShapes[size_t(row)]) {
            m_scopeShapes[size_t(row)] = std::move(shape);
            changed = true;
        }
    }
    return changed;
}

void TimelineView::rebuildLanes()
{
    m_lanes.rebuild(*m_store, m_grouping, m_collapsed);
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

const std::vector<qint64> &TimelineView::rowEndpointTimes(const LaneRow &row) const
{
    if (!row.collapsed)
        return m_index.endpointTimes(row.agentRow);
    if (row.members.size() == 1)
        return m_index.endpointTimes(row.members.front());
    MergedLane &merged = m_merged[row.key];
    if (merged.members != row.members || merged.reorders != m_index.endpointReorders()) {
        merged = MergedLane();
        merged.members = row.members;
        merged.consumed.assign(row.members.size(), 0);
        merged.reorders = m_index.endpointReorders();
    }
    std::vector<qint64> fresh;
    for (size_t i = 0; i < merged.members.size(); ++i) {
        const std::vector<qint64> &lane = m_index.endpointTimes(merged.members[i]);
        if (lane.size() > merged.consumed[i]) {
            fresh.insert(fresh.end(), lane.begin() + qsizetype(merged.consumed[i]), lane.end());
            merged.consumed[i] = lane.size();
        }
    }
    if (!fresh.empty()) {
        std::sort(fresh.begin(), fresh.end());
        const auto oldSize = qsizetype(merged.times.size());
        merged.times.insert(merged.times.end(), fresh.begin(), fresh.end());
        if (oldSize > 0 && merged.times[size_t(oldSize - 1)] > merged.times[size_t(oldSize)])
            std::inplace_merge(merged.times.begin(), merged.times.begin() + oldSize, merged.times.end());
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
    for (const LaneRow &row : m_lanes.rows())
        if (row.expandable)
            m_collapsed.insert(row.key);
    m_scrollY = 0;
    rebuildLanes();
}

void TimelineView::expandAll()
{
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
    m_index.forEachRecipient(messageRow, [&](int agentRow) {
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

// ---- painting ------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    renderTo(p);
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

    p.setRenderHint(QPainter::Antialiasing, true);
    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        if (row.agentRow < 0)
            continue;
        const Agent &agent = m_store->agents()[size_t(row.agentRow)];
        const auto &marks = m_index.stateMarks(row.agentRow);
        const int stripTop = rowTopY(r) + row.height - kStateStripHeight - 2;
        auto fillStrip = [&](double from, double to, const QColor &color) {
            const double x0 = std::max(double(plot.left()), m_axis.mapTimeToX(from));
            const double x1 = std::min(double(plot.right() + 1), m_axis.mapTimeToX(to));
            if (x1 > x0)
                p.fillRect(QRectF(x0, stripTop, std::max(1.0, x1 - x0), kStateStripHeight), color);
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
            if (mark.kind != EventKind::AgentUnregistered)
                fillStrip(double(mark.timeMs), next, agentStateColor(m_index.stateName(mark.stateId)));
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
            if (mark.kind == EventKind::AgentRegistered) {
                p.setPen(QPen(healthColor(Health::Healthy), 2));
                p.drawLine(QPointF(x, top), QPointF(x, bottom));
            } else if (mark.kind == EventKind::AgentUnregistered) {
                p.setPen(QPen(pal.color(QPalette::Text), 2));
                p.drawLine(QPointF(x, top), QPointF(x, bottom));
                p.drawLine(QPointF(x - 3, bottom - 6), QPointF(x + 3, bottom));
                p.drawLine(QPointF(x + 3, bottom - 6), QPointF(x - 3, bottom));
            } else {
                QColor color = agentStateColor(m_index.stateName(mark.stateId));
                color.setAlpha(255);
                const double cy = stripTop + kStateStripHeight / 2.0;
                const double h = kMarkerSize / 2.0;
                const QPolygonF diamond({QPointF(x, cy - h), QPointF(x + h, cy), QPointF(x, cy + h), QPointF(x - h, cy)});
                p.setPen(QPen(pal.color(QPalette::Base), 1));
                p.setBrush(color);
                p.drawPolygon(diamond);
            }
            if (mark.eventRow == focusedEvent) {
                p.setPen(QPen(pal.color(QPalette::Highlight), 2));
                p.setBrush(Qt::NoBrush);
                p.drawEllipse(QPointF(x, (top + bottom) / 2), row.height / 2.0 - 1, row.height / 2.0 - 1);
            }
            j = std::max(j + 1, firstAtOrAfter(marks, m_axis.mapXToTime(x + kMarkerSize / 2.0), j));
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
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
    QColor color = messageColor(convention, pal);
    if (convention == ConventionKind::Heartbeat) {
        p.fillRect(QRect(x, extent.minY + 2, focused ? 3 : 1, 7), focused ? pal.color(QPalette::Highlight) : color);
        return;
    }
    if (!extent.endVisible)
        color = mixed(pal.color(QPalette::Base), color, 0.3); // passing through: both ends are scrolled away

    const int lineTop = std::max(extent.minY, plot.top() - 8);
    const int lineBottom = std::min(extent.maxY, plot.bottom() + 8);
    if (focused)
        p.fillRect(QRect(x - 2, lineTop, 5, lineBottom - lineTop + 1), pal.color(QPalette::Highlight));
    if (lineBottom > lineTop)
        p.fillRect(QRect(x, lineTop, 1, lineBottom - lineTop + 1), color);

    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    const double cx = x + 0.5;
    for (const int row : m_scratchRows) {
        const double y = rowCenterY(row);
        if (y < plot.top() - 8 || y > plot.bottom() + 8)
            continue;
        if (row == extent.senderRow) {
            // Within one (collapsed) lane: a ring instead of an arrow.
            p.setPen(QPen(color, 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(QPointF(cx, y), 3.5, 3.5);
            p.setPen(Qt::NoPen);
            p.setBrush(color);
            continue;
        }
        const double direction = y > extent.senderY ? 1 : -1;
        const QPolygonF head({QPointF(cx, y), QPointF(cx - 3.5, y - 6 * direction), QPointF(cx + 3.5, y - 6 * direction)});
        p.drawPolygon(head);
    }
    if (extent.senderRow >= 0 && extent.senderY >= plot.top() - 4 && extent.senderY <= plot.bottom() + 4)
        p.drawEllipse(QPointF(cx, extent.senderY), 2.5, 2.5);
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);

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
    const double saturation = std::log2(1.0 + kDensitySaturation);
    // A cell is at least kMinCellWidth wide so a lone dense column reads as a block, not a line.
    constexpr int kMinCellWidth = 3;
    QColor background;
    auto fillCell = [&](int fromColumn, int toColumn, int top, int height, int alpha) {
        int left = plot.left() + fromColumn;
        int cellWidth = toColumn - fromColumn;
        if (cellWidth < kMinCellWidth) {
            left -= (kMinCellWidth - cellWidth) / 2;
            cellWidth = kMinCellWidth;
        }
        p.fillRect(QRect(left, top, cellWidth, height), mixed(background, heat, alpha / 255.0));
    };

    for (int r = rows.first; r <= rows.last; ++r) {
        const LaneRow &row = m_lanes.rows()[size_t(r)];
        if (row.kind == LaneRow::Kind::Group && !row.collapsed)
            continue;
        const std::vector<qint64> &times = rowEndpointTimes(row);
        if (times.empty())
            continue;
        background = laneBackground(r);
        const int top = rowTopY(r) + 3;
        const int height = row.height - kStateStripHeight - 7;
        int c = 0;
        while (c < width) {
            if (!dense[size_t(c)]) {
                ++c;
                continue;
            }
            // One run of dense columns: walk the lane's times column by column.
            int position = firstTimeAtOrAfter(times, m_axis.mapXToTime(plot.left() + c), 0);
            int runStart = -1, runAlpha = 0;
            for (; c < width && dense[size_t(c)]; ++c) {
                const int end = firstTimeAtOrAfter(times, m_axis.mapXToTime(plot.left() + c + 1), position);
                const int count = end - position;
                position = end;
                const int alpha = count > 0 ? int(40 + 215 * std::min(1.0, std::log2(1.0 + count) / saturation)) : 0;
                if (alpha != runAlpha) {
                    if (runAlpha > 0)
                        fillCell(runStart, c, top, height, runAlpha);
                    runStart = c;
                    runAlpha = alpha;
                }
            }
            if (runAlpha > 0)
                fillCell(runStart, c, top, height, runAlpha);
        }
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
    const double firstTick = std::ceil(m_axis.startMs / step) * step;
    const int utcOffset = QDateTime::fromMSecsSinceEpoch(qint64(firstTick)).offsetFromUtc();
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
    const QString status = (m_followLive ? tr("● following") : tr("❚❚ paused")) + QStringLiteral("  ")
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
        double best = kHitSlop + 1;
        const auto &actions = m_index.actions();
        for (int i = firstAtOrAfter(actions, fromTime - 8 * m_axis.msPerPixel);
             i < int(actions.size()) && double(actions[size_t(i)].timeMs) < toTime; ++i) {
            if (m_lanes.rowOfAgent(actions[size_t(i)].agentRow) != rowIndex)
                continue;
            const double distance = std::abs(std::floor(m_axis.mapTimeToX(double(actions[size_t(i)].timeMs))) + 4 - x);
            if (distance < best) {
                best = distance;
                hit.kind = Hit::Kind::Action;
                hit.index = actions[size_t(i)].actionRow;
            }
        }
        if (hit.kind != Hit::Kind::None)
            return hit;
        const LaneRow &row = m_lanes.rows()[size_t(rowIndex)];
        const auto &marks = m_index.stateMarks(row.agentRow);
        for (int i = firstAtOrAfter(marks, fromTime); i < int(marks.size()) && double(marks[size_t(i)].timeMs) < toTime; ++i) {
            const double distance = std::abs(std::floor(m_axis.mapTimeToX(double(marks[size_t(i)].timeMs))) - x);
            if (distance < best) {
                best = distance;
                hit.kind = Hit::Kind::StateMark;
                hit.index = marks[size_t(i)].eventRow;
            }
        }
        if (hit.kind != Hit::Kind::None)
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

QString TimelineView::actionToolTip(int actionRow) const
{
    const OperatorAction &a = m_store->actions()[size_t(actionRow)];
    QString text = QStringLiteral("<b>%1 %2</b>: %3<br>%4 %5")
                       .arg(actionKindName(a.kind).toHtmlEscaped(), agentName(*m_store, a.agentId).toHtmlEscaped(),
                            actionStatusName(a.status).toHtmlEscaped(), tr("sent"), formatTime(double(a.sentAtMs)));
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
    text += QStringLiteral("<br>") + formatTime(double(g.timeMs));
    if (!g.detail.isEmpty())
        text += QStringLiteral("<br>") + g.detail.toHtmlEscaped();
    return text;
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
        case Hit::Kind::Action: text = actionToolTip(hit.index); break;
        case Hit::Kind::Gap: text = gapToolTip(hit.index); break;
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
        m_selection->focus(SelectionHub::Kind::Event, QString::number(hit.index), this);
        break;
    case Hit::Kind::Action:
        m_selection->focus(SelectionHub::Kind::Action, m_store->actions()[size_t(hit.index)].id, this);
        break;
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
