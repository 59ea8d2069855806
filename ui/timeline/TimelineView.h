// The timeline view: a sequence diagram of the system over time.
//
// Time runs left to right; one lane per agent, grouped (by scope or by subtree) in collapsible
// groups down the left header column. Messages are vertical arrows from the sender's lane to
// each recipient's lane at the message's time (heartbeats are ticks on the sender's lane),
// lifecycle changes are marks on a state strip at the bottom of each lane, operator actions are
// flags, gaps in the event stream are hatched red bands across every lane, alerts (open, and the
// last kMaxClearedAlertSpans cleared) are bars in their severity's colour along the top of each
// lane they name, from when the condition began to now (open) or to when it cleared.
//
// Updates: from SystemStore::changed only (≤ 30 Hz): the index takes in the new rows and the
// viewport is scheduled for one repaint. Painting touches only the visible time range (binary
// searches on time-sorted indexes) and the visible lanes. Level of detail: a pixel column where
// more than kMaxArrowsPerColumn arrows would cross the visible lanes is drawn as density cells
// per lane instead of single arrows, so the cost of a frame is bounded by its width
// (× kArrowCheckLimit), not by the data.
//
// Follow live (on by default) keeps the newest data at the right edge; any manual scroll pauses
// it (data keeps arriving), End or setFollowLive(true) resumes. Zooming keeps following.
// Thread: GUI thread.
#pragma once

#include "alerts/AlertEngine.h"
#include "session/SelectionHub.h"
#include "timeline/MarkerSprites.h"
#include "timeline/TimelineAxis.h"
#include "timeline/TimelineIndex.h"
#include "timeline/TimelineLanes.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QHash>
#include <QImage>
#include <QSet>

#include <deque>
#include <map>
#include <limits>
#include <vector>

namespace mapi {
class SystemStore;
struct ChangeSet;
}

namespace mapi::ui {

class TimelineView : public QAbstractScrollArea
{
    Q_OBJECT
public:
    static constexpr int kMaxArrowsPerColumn = 3;  // more crossing the visible lanes: a density cell
    static constexpr int kArrowCheckLimit = 16;    // more in a column: dense without looking closer
    static constexpr int kRulerHeight = 22;
    static constexpr int kDensityStripHeight = 8;   // global message rate under the ruler
    static constexpr int kDefaultHeaderWidth = 200;
    static constexpr double kDefaultSpanMs = 10000;  // first view of a live system
    static constexpr double kLiveEdge = 0.96;        // following: newest data at 96 % of the width
    // Rows of each kind taken in per slice when the store has a backlog: ≈ 10–30 ms of work,
    // so opening a million-message trace does not freeze the window while the index builds.
    static constexpr int kIngestSliceRows = 8000;
    // Cleared alerts kept as bars (the oldest go first); open ones are bounded by the detectors.
    static constexpr size_t kMaxClearedAlertSpans = 1000;

    TimelineView(SystemStore *store, SelectionHub *selection, QWidget *parent = nullptr);

    const TimelineAxis &axis() const { return m_axis; }
    const TimelineLanes &lanes() const { return m_lanes; }
    const TimelineIndex &index() const { return m_index; }

    LaneGrouping grouping() const { return m_grouping; }
    void setGrouping(LaneGrouping grouping);
    bool isCollapsed(const QString &key) const { return m_collapsed.contains(key); }
    void setCollapsed(const QString &key, bool collapsed);
    void collapseAll();
    void expandAll();

    bool followLive() const { return m_followLive; }
    void setFollowLive(bool on);
    // Replaying (a trace, or a live session's past): following means following the replay's
    // position, and the view says so instead of "following" as if it were live.
    void setReplaying(bool on);
    bool replaying() const { return m_replaying; }
    // Another source: the next data sets the zoom again (all of a trace, at least
    // kDefaultSpanMs live). A store reset alone keeps the zoom (time travel swaps stores).
    void resetZoom();

    // Zoom by `factor` (> 1 zooms in) around viewport x; while following, around the live edge.
    void zoomAt(double x, double factor);
    void zoomBy(double factor);                   // around the centre of the plot
    void panByPixels(double dx);                  // a manual scroll: pauses following
    void showAll();                               // fits all data (keeps following if on)
    void showTimeRange(double fromMs, double toMs); // a manual scroll: pauses following
    void scrollRowIntoView(int row);

    // Paints what the viewport shows, in viewport coordinates (0, 0, viewport()->size()), on any
    // device: the screen (paintEvent), a QImage (PNG export) or a QSvgGenerator (SVG export).
    void renderTo(QPainter &painter);

    // Geometry in viewport coordinates, for painting, hit-testing and tests.
    QRect plotRect() const;
    int rowTopY(int row) const;
    int rowCenterY(int row) const;
    double liveEdgeMs() const;                    // newest data time, or the store's clock if later

    // An alert as the timeline draws it: raised at sinceMs, open (untilMs < 0) or cleared.
    struct AlertSpan
    {
        QString key;               // Alert::key()
        AlertKind kind = AlertKind::Unresponsive;
        AlertSeverity severity = AlertSeverity::Warning;
        QStringList agents;
        qint64 sinceMs = 0;
        qint64 untilMs = -1;
        QString reason;
    };
    // The alerts one evaluation raised and cleared (AlertMonitor::alertsChanged), and a reset.
    void takeAlertChanges(const std::vector<AlertChange> &changes);
    void clearAlerts();
    const std::vector<AlertSpan> &alertSpans() const { return m_alertSpans; }

    struct Hit
    {
        enum class Kind { None, Message, StateMark, WorkMark, Action, Alert, Gap, LaneHeader, GroupToggle, Dense };
        Kind kind = Kind::None;
        int index = -1;   // message / event (StateMark, WorkMark) / action / gap row, alert span, or the lane row for headers
        int count = 0;    // Dense: messages in the pixel column
    };
    Hit hitTest(const QPoint &viewportPos) const;

Q_SIGNALS:
    void followLiveChanged(bool on);
    void lanesChanged();       // rows rebuilt (grouping, collapse, new agents)
    void dataChanged();        // new rows taken in from the store
    void alertClicked(const QString &key); // the operator clicked an alert's bar (its agents are selected)

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    // Endpoint times of a collapsed row's members merged into one sorted list, refreshed from
    // the tails the member lanes gained since the last paint.
    struct MergedLane
    {
        std::vector<int> members;
        std::vector<size_t> consumed;
        SortedTimes times;            // the shown lane: complete (the last complete one while filling)
        std::vector<qint64> pending;  // while filling: what is merged so far, sorted
        bool filling = true;
        quint64 reorders = 0;
    };

    void onStoreChanged(const ChangeSet &changes);
    void onStoreReset();
    void ingest(const ChangeSet *changes); // nullptr: everything is new
    bool layoutInputsChanged(const ChangeSet *changes);
    void rebuildLanes();
    void applyFollow();
    void syncScrollBars();
    void clampPan();
    void pauseFollowing();
    void toggleRow(int row);
    void clickAt(const QPoint &pos, Qt::KeyboardModifiers modifiers);
    const SortedTimes &rowEndpointTimes(const LaneRow &row) const;

    struct VisibleRows
    {
        int first = 0;
        int last = -1;    // inclusive
    };
    VisibleRows visibleRows() const;
    int messageEndpointRows(int messageRow, int senderRow, std::vector<int> &recipientRows) const;
    // Where a message's arrow (or heartbeat tick) lies, in viewport y.
    struct MessageExtent
    {
        int senderRow = -1;
        int senderY = 0;
        int minY = 0;
        int maxY = 0;
        bool drawable = false;    // something of it lies in the plot
        bool endVisible = false;  // the sender's or a recipient's lane is in view
    };
    MessageExtent messageExtent(const TimelineIndex::MessageRef &ref, const VisibleRows &rows,
                                std::vector<int> &recipientRows) const;
    bool columnIsDense(int from, int to, const VisibleRows &rows) const;

    QColor laneBackground(int row) const;
    void paintLaneBackgrounds(QPainter &p, const VisibleRows &rows) const;
    void paintGaps(QPainter &p) const;
    void paintTrimmedHistory(QPainter &p) const;
    void paintStates(QPainter &p, const VisibleRows &rows) const;
    // A lane's turns (round) and checkpoints (flags), at the top of row `r`, thinned to one per
    // few pixels like the state marks.
    void paintWorkMarks(QPainter &p, int r, const LaneRow &row, int focusedEvent) const;
    void paintMessages(QPainter &p, const VisibleRows &rows, const std::vector<int> &bounds) const;
    void paintMessage(QPainter &p, const TimelineIndex::MessageRef &ref, const VisibleRows &rows, int focusedMessage,
                      std::vector<int> &labelRightEdge) const;
    void paintDensity(QPainter &p, const VisibleRows &rows, const std::vector<char> &dense) const;
    void paintActions(QPainter &p) const;
    void paintAlerts(QPainter &p, const VisibleRows &rows) const;
    // The x extent of an alert's bar in viewport coordinates.
    std::pair<double, double> alertExtent(const AlertSpan &span) const;
    void paintRuler(QPainter &p, const std::vector<int> &bounds) const;
    void paintHeaders(QPainter &p, const VisibleRows &rows) const;
    std::vector<int> columnBounds() const;

    QString messageToolTip(int messageRow) const;
    QString markToolTip(int eventRow) const;
    QString workMarkToolTip(int eventRow) const; // a checkpoint's label, a turn's words
    QString actionToolTip(int actionRow) const;
    QString gapToolTip(int gapRow) const;
    QString alertToolTip(int span) const;
    QString headerToolTip(int row) const;

    SystemStore *m_store;
    SelectionHub *m_selection;
    TimelineIndex m_index;
    TimelineLanes m_lanes;
    TimelineAxis m_axis;
    LaneGrouping m_grouping = LaneGrouping::Scope;
    QSet<QString> m_collapsed;
    std::vector<QString> m_agentShapes;
    std::vector<QString> m_scopeShapes;
    mutable QHash<QString, MergedLane> m_merged;   // by collapsed row key
    static constexpr qint64 kMergeBudgetPerPaint = 60000; // endpoint times merged into folded lanes per paint (about 2 ms)
    // Outside a paint (a picture exported, a hit test) unbounded: what is asked is merged whole.
    mutable qint64 m_mergeBudget = std::numeric_limits<qint64>::max();
    mutable bool m_mergeIncomplete = false;        // a folded lane is still filling: paint again
    // Past kFoldAbove agents the innermost lane groups start folded (issue 44 item 4).
    static constexpr int kFoldAbove = 300;
    QSet<QString> m_autoFoldedKeys;                // groups folded by size for this source (each once)
    bool m_operatorFolded = false;                 // the operator folded or opened a group: left as they are
    mutable std::vector<int> m_scratchRows;         // one message's recipient rows (painting, density)
    mutable MarkerSprites m_sprites;                // the small marks' images, one per shape and colour
    mutable QImage m_densityCells;                  // a lane's density cells, composed before drawing
    std::deque<AlertSpan> m_clearedAlerts;          // oldest first, at most kMaxClearedAlertSpans
    std::map<QString, AlertSpan> m_openAlerts;      // by key
    std::vector<AlertSpan> m_alertSpans;            // the two above, cleared first: what is painted
    // m_alertSpans by the store's row of each agent they name (indexes, ascending), made again at
    // the first paint after the spans or the store's agents changed: a paint then visits the
    // agents in view, not every span (a flood keeps thousands of loop alerts open).
    mutable std::vector<std::vector<int>> m_alertSpansOfAgent;
    mutable bool m_alertSpansOfAgentStale = true;
    mutable size_t m_alertSpansOfAgentCount = 0;    // the store's agents when it was made

    bool m_followLive = true;
    bool m_replaying = false;
    double m_autoSpanMs = 0;            // span chosen when the first data arrived (0: none yet)
    bool m_userZoomed = false;          // once the operator zooms, resizing keeps the scale
    bool m_ingestScheduled = false;     // a slice of a backlog is queued
    int m_headerWidth = kDefaultHeaderWidth;
    int m_scrollY = 0;                  // content y at the top of the lanes area
    double m_scrollOriginMs = 0;        // horizontal scroll bar value 0 ↔ this time
    double m_scrollUnitPixels = 1;      // pixels per scroll bar unit (> 1 for very long ranges)
    bool m_syncingScrollBars = false;

    QPoint m_pressPos;
    double m_pressStartMs = 0;
    int m_pressScrollY = 0;
    bool m_pressed = false;
    bool m_dragging = false;
};

// "history before 12:00:03.250 trimmed (1,234 events)": the timeline's and the status bar's words.
QString historyTrimmedText(qint64 beforeMs, qint64 events);

} // namespace mapi::ui
