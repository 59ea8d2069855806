// The topology canvas: agents as nodes in a tidy tree, scopes as tinted boxes, message traffic
// as curves whose width shows the recent rate. A plain QWidget that paints itself (see
// README.md for why not QGraphicsView): only what intersects the viewport is drawn, with
// less detail the further out the zoom.
//
// Thread: GUI thread. Reads the InspectorSession's store on SystemStore::changed (≤ 30 Hz) and
// handles its reset; layouts run off-thread through LayoutRunner and come back queued.
// Units: "world" = layout units (1 unit = 1 px at zoom 1); "view" = widget pixels.
#pragma once

#include "topology/TopologyCamera.h"
#include "topology/LayoutRunner.h"
#include "topology/TopologyGraph.h"
#include "topology/TopologyMinimap.h"

#include <QHash>
#include <QImage>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QVariantAnimation>
#include <QWidget>

#include <map>
#include <optional>

namespace mapi {
class InspectorSession;
}

namespace mapi::ui {

class SelectionHub;
struct TopologyColors;

class TopologyView : public QWidget
{
    Q_OBJECT
public:
    // A graph grown by incremental layouts is laid out in full once it stopped growing this long.
    static constexpr int kTidyWhenStillMs = 1500;
    TopologyView(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);
    ~TopologyView() override;

    // Navigation. Zoom 1 = one world unit per pixel.
    void zoomToFit(bool animated = true);
    // The camera on these agents (those drawn), animated; as far as 150 %.
    void zoomToAgents(const QStringList &agentIds);
    // The scope labels the last paint drew (view rectangles, scope rows): never on one another.
    const std::vector<std::pair<QRectF, int>> &scopeLabelRects() const { return m_scopeLabels; }
    // The agents' labels the last paint drew, and the smallest of their fonts in pixels (tests:
    // no text below a legible size at any zoom).
    int nodeLabelsDrawn() const { return m_nodeLabelsDrawn; }
    int smallestNodeLabelPixels() const { return m_smallestNodeLabel; }
    // Zoomed out (labels only for the selected, hovered and coordinators): where the last paint
    // drew them; never one on another.
    const std::vector<QRectF> &sparseLabelRects() const { return m_sparseLabels; }
    const TopologyGraph &graph() const { return m_graph; } // for tests: nodes and scope parts as drawn
    void setZoom(double zoom);                    // around the view's centre, immediately
    double zoom() const { return m_camera.scale; }
    void panBy(QPointF pixels);                   // moves the picture by `pixels`, immediately
    QPointF mapToView(QPointF world) const;
    QPointF mapToWorld(QPointF view) const;

    // Search: an id, a name, or the start of a name (case-insensitive); else any name or id
    // containing it. Selects the agent, expands what hides it, centres and zooms in on it.
    // Returns false when nothing matches.
    bool focusAgent(const QString &text);
    bool hasAgent(const QString &text) const { return findAgent(text) >= 0; } // what focusAgent() would find
    QStringList searchTerms() const;              // names and ids, for the search box's completer
    // Dims everything further than `hops` from the selected agents (0 = off).
    void setNeighbourhoodHops(int hops);
    int neighbourhoodHops() const { return m_hops; }
    int alertBadgeCount() const { return int(m_alertBadges.size()); } // for tests

    void relayout();                              // a full tidy layout, on request
    void expandAll();
    void collapseBelowRoots();
    void setLegendVisible(bool visible);
    // Agents with an open alert (core/alerts) and the most severe one's severity (0 info,
    // 1 warning, 2 critical): a "!" badge at the node's top left, in the severity's colour.
    void setAlertBadges(const QHash<QString, int> &severityByAgent);

    // Paints what the view shows, in view coordinates (0, 0, width(), height()), on any device:
    // the screen (paintEvent), a QImage (PNG export) or a QSvgGenerator (SVG export, as vectors).
    void renderTo(QPainter &painter);

    // For tests and benchmarks.
    int visibleNodeCount() const;                 // shown and placed
    std::optional<QPointF> nodePosition(const QString &agentId) const; // where the layout put it (world); none when hidden or unplaced
    bool isCollapsed(const QString &agentId) const;
    // Departed agents whose whole subtree departed too (the previous run of a restarted server)
    // are not drawn unless shown; a departed agent with present children stays, greyed.
    void setShowDeparted(bool show);
    void setCollapsed(const QString &agentId, bool collapsed);
    int hiddenDescendantCount(const QString &agentId) const; // shown on a collapsed node's badge
    bool isDimmed(const QString &agentId) const;
    bool isSettled() const;                       // no layout running or due (a tidy included), no animation
    QRectF legendRect() const;                    // where the legend goes (view); null when the view is too small for it
    QRectF minimapRect() const { return m_minimap.rect(); } // where the last frame drew the map (view); null when it did not
    std::optional<QPointF> minimapWorldAt(QPointF viewPos) const { return m_minimap.worldAt(viewPos); } // for tests
    double lastLayoutMs() const { return m_lastLayoutMs; }           // computeLayout() in the pool thread
    int fullLayoutsApplied() const { return m_fullLayouts; }         // since construction
    double lastLayoutRoundTripMs() const { return m_lastLayoutRoundTripMs; } // snapshot → applied

Q_SIGNALS:
    void layoutApplied();
    void searchTermsChanged();

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void changeEvent(QEvent *event) override;
    bool event(QEvent *event) override;

private:
    // What the last paint drew that a click or a tooltip can hit, in view coordinates.
    struct DrawnEdge
    {
        QPointF start, control, end;
        double width = 1;
        TrafficEdge edge;
    };
    struct LabelFont
    {
        QFont font;
        double ascent = 0;
    };

    void onStoreChanged(const mapi::ChangeSet &changes);
    void onStoreAboutToReset();
    void onStoreReset();
    void onSelectionChanged(const QStringList &ids, QObject *origin);
    void onLayoutFinished(const mapi::ui::LayoutResult &result);
    void requestLayout();
    void refreshNeighbourhood();
    void toggleCollapsed(int row);
    void animateCamera(QPointF center, double scale);
    void moveCameraTo(QPointF world);
    void noteMotion();   // the camera or nodes moved: cheaper frames until kStillAfterMs pass
    void ensureVisible(int row);
    void selectRows(const QList<int> &rows, bool additive);

    QTransform worldTransform() const;
    int nodeAt(QPointF viewPos) const;
    int collapseBadgeAt(QPointF viewPos) const;
    const DrawnEdge *edgeAt(QPointF viewPos) const;
    int scopeLabelAt(QPointF viewPos) const;
    int findAgent(const QString &text) const;
    QString nodeToolTip(int row) const;
    QString edgeToolTip(const TrafficEdge &edge) const;
    QString scopeToolTip(int scopeRow) const;
    bool isRowSelected(int row) const;
    bool isRowDimmed(int row) const { return !m_dimmed.empty() && m_dimmed[size_t(row)]; }
    const LabelFont &labelFont(int pixelSize);

    void paintScopeBoxes(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld);
    void paintScopeLabels(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld);
    void paintTreeLines(QPainter &painter, const TopologyColors &colors);
    void paintTraffic(QPainter &painter, const TopologyColors &colors);
    // The focused message's causal chain (SelectionHub::chain): each message an arrow from its
    // sender to its recipients, numbered in causal order; at most kMaxChainArrows.
    void paintChain(QPainter &painter, const TopologyColors &colors);
    static constexpr int kMaxChainArrows = 200;
    void paintNodes(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld);
    // Shape, fill, outline and busy ring; `pixel` = one view pixel in the painter's units.
    static void drawNodeGlyph(QPainter &painter, const TopologyNode &node, QPointF center, double radius, double pixel,
                              const TopologyColors &colors);
    static void drawSelectionHalo(QPainter &painter, const TopologyNode &node, QPointF center, double radius, double pixel,
                                  const TopologyColors &colors);
    static void drawSelectionRing(QPainter &painter, const TopologyNode &node, QPointF center, double radius, double pixel,
                                  const TopologyColors &colors);
    // `selected`: with the selection's halo and ring (a thousand selected agents zoomed out were
    // 26 ms a frame as shapes, docs/benchmarks.md).
    const QImage &nodeSprite(const TopologyNode &node, double pixelRadius, const TopologyColors &colors, bool selected);
    void paintNodeOverlays(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld);
    void paintLegend(QPainter &painter, const TopologyColors &colors);
    void paintStatus(QPainter &painter, const TopologyColors &colors);

    InspectorSession *m_session;
    QPointer<SelectionHub> m_selection;
    TopologyGraph m_graph;
    LayoutRunner *m_runner;

    // The camera. Its viewport is whatever size() was when it was last set: camera() gives it
    // with the current size (a hidden widget's resizeEvent() comes late).
    TopologyCamera m_camera;
    TopologyCamera camera() const;
    QVariantAnimation m_cameraAnimation;          // 0 → 1, from m_cameraFrom to m_cameraTo
    TopologyCamera m_cameraFrom, m_cameraTo;
    QVariantAnimation m_moveAnimation;            // 0 → 1, node moves after a full layout
    bool m_autoFit = true;                        // fit again on resize and growth until the operator moves the camera
    bool m_fitAfterLayout = true;                 // the next full layout ends with a fit
    int m_anchorRow = -1;                         // stays put on screen through the next full layout
    // Agents placed by the last full layout. Incremental layouts append a new family to the right
    // of its placed siblings, so a graph that grew mostly by them (a trace read in parts, a live
    // system registering its agents) becomes a strip: once the placed agents have grown by a
    // quarter (and by kTidyAfterGrowth at least) since, the next layout is a full one again.
    // Amortised: full layouts at geometric sizes, a few at 10,000 agents.
    size_t m_placedAtFullLayout = 0;
    static constexpr size_t kTidyAfterGrowth = 64;
    bool m_tidyPending = false;                   // a tidy full layout was asked for and has not come back
    // And once the growth paused (no incremental layout for kTidyWhenStillMs) with at least
    // kTidyWhenStillAppended agents appended since the last full layout, while the view still fits
    // the whole graph by itself (m_autoFit): the end of a trace's load, of a system's registering.
    // A few agents appended, or a camera the operator moved, keep the placed nodes where they are.
    QTimer m_tidyWhenStill;
    static constexpr size_t kTidyWhenStillAppended = 32;
    int m_fullLayouts = 0;                        // applied so far (for tests)
    int m_revealAfterLayout = -1;                 // centred once the layout placed it

    QSet<QString> m_selectedIds;
    std::vector<char> m_selectedShown;            // per row, rebuilt each paint: selected, or standing for a selected hidden agent
    int m_hops = 0;
    std::vector<char> m_dimmed;                   // per row; empty when no neighbourhood is set
    int m_hoverRow = -1;
    bool m_legendVisible = true;
    TopologyMinimap m_minimap;
    quint64 m_minimapRevision = 0;                // bumped when what the map shows may have changed
    bool m_minimapDragging = false;               // a press on the map moves the view until release

    // Mouse gesture in progress.
    QPointF m_pressPos;
    QPointF m_pressCenter;                        // the camera's centre when the gesture began
    bool m_pressed = false;
    bool m_dragged = false;
    bool m_rubberBanding = false;
    bool m_ignoreRelease = false;
    QRectF m_rubberBand;

    std::vector<DrawnEdge> m_drawnEdges;
    bool m_trafficLimited = false;                           // the last paint left busy edges out
    std::vector<std::pair<QRectF, int>> m_collapseBadges;    // view rect → row
    std::vector<std::pair<QRectF, int>> m_scopeLabels;       // view rect → scope row
    int m_nodeLabelsDrawn = 0;
    std::vector<QRectF> m_sparseLabels;
    int m_smallestNodeLabel = 0;
    std::map<int, LabelFont> m_labelFonts;                   // by pixel size
    QHash<quint64, QImage> m_sprites;                        // small nodes' pictures, by look and size
    QImage m_frame; // what paintEvent() drew last (renderTo() on a pool thread: common/PoolThreadPaint.h)
    QTimer m_decayTimer;
    QTimer m_stillTimer;                                     // ends m_moving
    QTimer m_quietRepaint;                                   // paces repaints for traffic and health
    bool m_moving = false;                                   // pan, zoom or animation in progress

    double m_lastLayoutMs = 0;
    double m_lastLayoutRoundTripMs = 0;
    QHash<QString, int> m_alertBadges; // agent id → severity of its most severe open alert
};

} // namespace mapi::ui
