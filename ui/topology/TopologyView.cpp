#include "topology/TopologyView.h"

#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "topology/TopologyStyle.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace mapi::ui {

namespace {

constexpr double kMinScale = 0.02;
constexpr double kMaxScale = 4.0;
// The legend's grid (pixels): 7 rows of 3 columns in a padded box at the bottom left.
constexpr double kLegendRow = 17, kLegendColumn = 118, kLegendPad = 8;
constexpr double kCoarseTreeScale = 0.15;     // below: tree lines without the drops to leaves
constexpr double kSpriteMaxRadius = 7;        // view pixels: smaller nodes are stamped from cached pictures
constexpr int kMinLabelPixels = 7;            // smaller labels are not drawn (except for selected nodes)
constexpr int kMaxLabelPixels = 14;           // zoomed in further, labels stop growing
constexpr int kMoveAnimationMs = 320;
constexpr int kCameraAnimationMs = 260;
constexpr int kDecayRepaintMs = 1000;         // widths decay with τ = 10 s: a 1 s step changes them ≤ 10 %
constexpr int kQuietRepaintMs = 250;          // traffic and health changes repaint at most 4 times a second
constexpr int kStillAfterMs = 150;            // no pan, zoom or animation for this long: draw at full quality
constexpr int kEdgeScanLimit = 20000;         // ranked edges looked at per paint, drawn or culled
constexpr int kHoverEdgeLimit = 300;         // edges of the hovered agent drawn beyond the budget
constexpr int kCurveSegments = 16;            // a message curve is drawn as this many straight pieces
constexpr double kMaxBulgePixels = 90;        // how far a message curve bends away from the straight line

// Message edges drawn at most, busiest first: fewer when zoomed out, where they would only be
// a tangle. What they cost is the length stroked: measured on the raster engine, an
// antialiased hairline ~50 ns per pixel of length, a wider antialiased line ~3× that, a line
// without antialiasing ~25 ns whatever its width. So the visible "ink" is capped too, in
// hairline pixels: ≤ ~4 ms of a still frame; while the view moves, no antialiasing and
// ≤ ~2 ms, so every frame of a pan or zoom stays well inside 16 ms.
struct TrafficBudget
{
    int edges;
    double ink;      // hairline-pixel equivalents
};
TrafficBudget trafficBudget(double scale, bool moving)
{
    const int edges = scale < 0.35 ? 150 : (scale < 0.8 ? 300 : 500);
    return moving ? TrafficBudget{std::min(edges, 200), 70000} : TrafficBudget{edges, 80000};
}
constexpr double kWideLineInkFactor = 3.3; // an antialiased line wider than 1.5 px vs a hairline

// Label font size in view pixels: labels scale with the zoom, like the rest of the picture.
int labelPixelsAt(double scale)
{
    return int(std::lround(TopologyGraph::kLabelPixelSize * scale));
}

QString formatAge(qint64 ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 1000)
        return QCoreApplication::translate("TopologyView", "just now");
    if (ms < 60000)
        return QCoreApplication::translate("TopologyView", "%1 s ago").arg(ms / 1000);
    if (ms < 3600000)
        return QCoreApplication::translate("TopologyView", "%1 min ago").arg(ms / 60000);
    return QCoreApplication::translate("TopologyView", "%1 h ago").arg(ms / 3600000);
}

QPointF quadPoint(const QPointF &a, const QPointF &c, const QPointF &b, double t)
{
    const double u = 1 - t;
    return a * (u * u) + c * (2 * u * t) + b * (t * t);
}

double distance(QPointF a, QPointF b)
{
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

double distanceToSegment(QPointF p, QPointF a, QPointF b)
{
    const QPointF ab = b - a;
    const double lengthSquared = QPointF::dotProduct(ab, ab);
    const double t = lengthSquared > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / lengthSquared, 0.0, 1.0) : 0.0;
    return distance(p, a + ab * t);
}

} // namespace

TopologyView::TopologyView(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_runner(new LayoutRunner([this](bool incremental) { return m_graph.layoutSnapshot(incremental); }, this))
{
    setObjectName(QStringLiteral("topologyView"));
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(200, 150);

    m_cameraAnimation.setDuration(kCameraAnimationMs);
    m_cameraAnimation.setStartValue(0.0);
    m_cameraAnimation.setEndValue(1.0);
    m_cameraAnimation.setEasingCurve(QEasingCurve::OutCubic);
    connect(&m_cameraAnimation, &QVariantAnimation::valueChanged, this, [this](const QVariant &value) {
        const double t = value.toDouble();
        m_center = m_cameraFrom + (m_cameraTo - m_cameraFrom) * t;
        m_scale = std::exp(std::log(m_scaleFrom) + (std::log(m_scaleTo) - std::log(m_scaleFrom)) * t);
        noteMotion();
        update();
    });
    m_moveAnimation.setDuration(kMoveAnimationMs);
    m_moveAnimation.setStartValue(0.0);
    m_moveAnimation.setEndValue(1.0);
    m_moveAnimation.setEasingCurve(QEasingCurve::OutCubic);
    connect(&m_moveAnimation, &QVariantAnimation::valueChanged, this, [this](const QVariant &value) {
        m_graph.setMoveProgress(value.toDouble());
        noteMotion();
        update();
    });
    m_stillTimer.setSingleShot(true);
    m_stillTimer.setInterval(kStillAfterMs);
    connect(&m_stillTimer, &QTimer::timeout, this, [this] {
        m_moving = false;
        update(); // the full-quality frame
    });
    m_quietRepaint.setObjectName(QStringLiteral("topologyRepaint"));
    m_quietRepaint.setSingleShot(true);
    m_quietRepaint.setInterval(kQuietRepaintMs);
    connect(&m_quietRepaint, &QTimer::timeout, this, qOverload<>(&QWidget::update));
    m_decayTimer.setObjectName(QStringLiteral("topologyDecay"));
    m_decayTimer.setInterval(kDecayRepaintMs);
    connect(&m_decayTimer, &QTimer::timeout, this, [this] {
        if (!m_graph.traffic().empty())
            update();
    });

    connect(m_runner, &LayoutRunner::finished, this, &TopologyView::onLayoutFinished);
    SystemStore *store = m_session->store();
    connect(store, &SystemStore::changed, this, &TopologyView::onStoreChanged);
    connect(store, &SystemStore::aboutToReset, this, &TopologyView::onStoreAboutToReset);
    connect(store, &SystemStore::wasReset, this, &TopologyView::onStoreReset);
    if (m_selection) {
        connect(m_selection, &SelectionHub::agentSelectionChanged, this, &TopologyView::onSelectionChanged);
        const QStringList selected = m_selection->selectedAgents();
        m_selectedIds = QSet<QString>(selected.begin(), selected.end());
    }
    onStoreReset(); // the store may already hold a system
}

TopologyView::~TopologyView() = default;

// ---- store and layout ------------------------------------------------------------------

void TopologyView::onStoreChanged(const ChangeSet &changes)
{
    const TopologyGraph::SyncResult result = m_graph.sync(*m_session->store(), changes);
    if (result.newNodes || (result.structure && m_graph.hasUnplacedNodes()))
        requestLayout();
    if (result.structure || result.scopes)
        m_graph.updateGeometry();
    if (result.structure || result.traffic)
        refreshNeighbourhood();
    if (result.names)
        Q_EMIT searchTermsChanged();
    // New agents and structure show at once; traffic and health changes at most every
    // kQuietRepaintMs: a busy system changes something in every 33 ms batch, and a full frame
    // of a thousand agents is worth more to the operator as four per second than as thirty.
    if (result.newNodes || result.structure || result.scopes)
        update();
    else if (!m_quietRepaint.isActive())
        m_quietRepaint.start();
}

void TopologyView::onStoreAboutToReset()
{
    m_runner->cancel();
    m_cameraAnimation.stop();
    m_moveAnimation.stop();
    m_graph.clear();
    m_dimmed.clear();
    m_drawnEdges.clear();
    m_collapseBadges.clear();
    m_scopeLabels.clear();
    m_hoverRow = m_anchorRow = m_revealAfterLayout = -1;
}

void TopologyView::onStoreReset()
{
    m_graph.syncAll(*m_session->store());
    m_autoFit = m_fitAfterLayout = true;
    if (!m_graph.nodes().empty())
        requestLayout();
    refreshNeighbourhood();
    Q_EMIT searchTermsChanged();
    update();
}

void TopologyView::requestLayout()
{
    const auto &nodes = m_graph.nodes();
    const bool anyPlaced = std::any_of(nodes.begin(), nodes.end(), [](const TopologyNode &n) { return n.positioned; });
    if (anyPlaced) {
        m_runner->requestIncremental(); // stable: placed nodes stay where they are
    } else {
        m_fitAfterLayout = true;
        m_runner->requestFull();
    }
}

void TopologyView::onLayoutFinished(const LayoutResult &result)
{
    m_lastLayoutMs = result.computeMs;
    m_lastLayoutRoundTripMs = result.roundTripMs;
    const QPointF anchorBefore = m_anchorRow >= 0 && size_t(m_anchorRow) < m_graph.nodes().size()
                                         && m_graph.nodes()[size_t(m_anchorRow)].positioned
                                     ? m_graph.nodes()[size_t(m_anchorRow)].position
                                     : QPointF(qQNaN(), qQNaN());
    const bool moved = m_graph.applyLayout(result);
    if (!result.incremental) {
        const bool animate = moved && isVisible();
        if (animate) {
            m_moveAnimation.stop();
            m_moveAnimation.start();
        } else {
            m_graph.setMoveProgress(1.0);
        }
        if (m_fitAfterLayout) {
            m_fitAfterLayout = false;
            zoomToFit(animate && !m_autoFit);
        } else if (m_anchorRow >= 0 && !std::isnan(anchorBefore.x())) {
            // Keep the node the operator acted on under the cursor: move the camera with it.
            const QPointF shift = m_graph.nodes()[size_t(m_anchorRow)].target - anchorBefore;
            if (animate) {
                animateCamera(m_center + shift, m_scale);
            } else {
                m_center += shift;
            }
        }
        m_anchorRow = -1;
    } else if (m_autoFit) {
        // Agents that joined after the first layout (a live system registers them one by one)
        // widen the graph: keep it all in view until the operator moves the camera.
        zoomToFit(false);
    }
    if (m_revealAfterLayout >= 0 && size_t(m_revealAfterLayout) < m_graph.nodes().size()
        && m_graph.nodes()[size_t(m_revealAfterLayout)].positioned) {
        const int row = m_revealAfterLayout;
        m_revealAfterLayout = -1;
        animateCamera(m_graph.nodes()[size_t(row)].target, std::max(m_scale, 1.0));
    }
    if (m_graph.hasUnplacedNodes())
        m_runner->requestIncremental(); // agents that arrived after the snapshot
    refreshNeighbourhood();
    update();
    Q_EMIT layoutApplied();
}

bool TopologyView::isSettled() const
{
    return m_runner->isIdle() && !m_graph.hasUnplacedNodes() && m_moveAnimation.state() != QAbstractAnimation::Running
           && m_cameraAnimation.state() != QAbstractAnimation::Running;
}

void TopologyView::relayout()
{
    m_anchorRow = -1;
    for (const QString &id : std::as_const(m_selectedIds)) {
        const int row = m_graph.row(id);
        if (row >= 0 && m_graph.nodes()[size_t(row)].positioned) {
            m_anchorRow = row;
            break;
        }
    }
    m_fitAfterLayout = m_anchorRow < 0;
    m_autoFit = false;
    m_runner->requestFull();
}

void TopologyView::toggleCollapsed(int row)
{
    if (row < 0 || !m_graph.setCollapsed(row, !m_graph.nodes()[size_t(row)].collapsed))
        return;
    m_anchorRow = row;
    m_graph.updateGeometry();
    m_runner->requestFull(); // collapsing frees room, expanding needs it: a tidy layout, animated
    refreshNeighbourhood();
    update();
}

void TopologyView::setCollapsed(const QString &agentId, bool collapsed)
{
    const int row = m_graph.row(agentId);
    if (row >= 0 && m_graph.nodes()[size_t(row)].collapsed != collapsed)
        toggleCollapsed(row);
}

void TopologyView::expandAll()
{
    if (m_graph.expandAll()) {
        m_fitAfterLayout = true;
        m_runner->requestFull();
        update();
    }
}

void TopologyView::collapseBelowRoots()
{
    if (m_graph.collapseBelowRoots()) {
        m_graph.updateGeometry();
        m_fitAfterLayout = true;
        m_runner->requestFull();
        refreshNeighbourhood();
        update();
    }
}

// ---- selection, search, neighbourhood --------------------------------------------------

void TopologyView::onSelectionChanged(const QStringList &ids, QObject *origin)
{
    m_selectedIds = QSet<QString>(ids.begin(), ids.end());
    refreshNeighbourhood();
    if (origin != this && !ids.isEmpty()) {
        const int row = m_graph.row(ids.first());
        if (row >= 0)
            ensureVisible(m_graph.representative(row)); // pan only: the zoom is the operator's
    }
    update();
}

void TopologyView::selectRows(const QList<int> &rows, bool additive)
{
    if (!m_selection)
        return;
    QStringList ids = additive ? m_selection->selectedAgents() : QStringList();
    for (int row : rows) {
        const QString &id = m_graph.nodes()[size_t(row)].id;
        if (additive && ids.contains(id))
            ids.removeAll(id);
        else if (!ids.contains(id))
            ids << id;
    }
    m_selection->selectAgents(ids, this);
}

bool TopologyView::isRowSelected(int row) const
{
    return m_selectedIds.contains(m_graph.nodes()[size_t(row)].id);
}

int TopologyView::findAgent(const QString &text) const
{
    const QString needle = text.trimmed();
    if (needle.isEmpty())
        return -1;
    if (const int row = m_graph.row(needle); row >= 0)
        return row;
    const auto &nodes = m_graph.nodes();
    // Best match wins: exact name, then name prefix, then name or id containing the text;
    // among equals a present agent before a departed one, then the layout order.
    int best = -1;
    int bestRank = 4;
    for (size_t v = 0; v < nodes.size(); ++v) {
        const TopologyNode &n = nodes[v];
        int rank = 4;
        if (n.name.compare(needle, Qt::CaseInsensitive) == 0)
            rank = 0;
        else if (n.name.startsWith(needle, Qt::CaseInsensitive))
            rank = 1;
        else if (n.name.contains(needle, Qt::CaseInsensitive) || n.id.contains(needle, Qt::CaseInsensitive))
            rank = 2;
        if (rank == 4)
            continue;
        rank = rank * 2 + (n.departed ? 1 : 0);
        if (best < 0 || rank < bestRank || (rank == bestRank && n.sortKey < nodes[size_t(best)].sortKey)) {
            best = int(v);
            bestRank = rank;
        }
    }
    return best;
}

bool TopologyView::focusAgent(const QString &text)
{
    const int row = findAgent(text);
    if (row < 0)
        return false;
    if (m_graph.expandAncestors(row)) {
        m_graph.updateGeometry();
        m_revealAfterLayout = row;
        m_runner->requestFull();
    }
    if (m_selection)
        m_selection->selectAgents({m_graph.nodes()[size_t(row)].id}, this);
    m_autoFit = false;
    if (m_graph.nodes()[size_t(row)].positioned && m_revealAfterLayout != row)
        animateCamera(m_graph.nodes()[size_t(row)].target, std::max(m_scale, 1.0));
    else
        m_revealAfterLayout = row;
    refreshNeighbourhood();
    update();
    return true;
}

QStringList TopologyView::searchTerms() const
{
    QStringList terms;
    for (const TopologyNode &n : m_graph.nodes()) {
        if (!n.name.isEmpty())
            terms << n.name;
        terms << n.id;
    }
    terms.removeDuplicates();
    return terms;
}

void TopologyView::setNeighbourhoodHops(int hops)
{
    m_hops = std::max(0, hops);
    refreshNeighbourhood();
    update();
}

void TopologyView::refreshNeighbourhood()
{
    m_dimmed.clear();
    if (m_hops <= 0 || m_selectedIds.isEmpty())
        return;
    std::vector<int> sources;
    for (const QString &id : std::as_const(m_selectedIds))
        if (const int row = m_graph.row(id); row >= 0)
            sources.push_back(row);
    if (sources.empty())
        return;
    const std::vector<char> inside = m_graph.neighbourhood(sources, m_hops);
    m_dimmed.resize(inside.size());
    for (size_t v = 0; v < inside.size(); ++v)
        m_dimmed[v] = inside[v] ? 0 : 1;
}

// ---- camera ----------------------------------------------------------------------------

QTransform TopologyView::worldTransform() const
{
    return QTransform(m_scale, 0, 0, m_scale, width() / 2.0 - m_center.x() * m_scale, height() / 2.0 - m_center.y() * m_scale);
}

QPointF TopologyView::mapToView(QPointF world) const
{
    return (world - m_center) * m_scale + QPointF(width() / 2.0, height() / 2.0);
}

QPointF TopologyView::mapToWorld(QPointF view) const
{
    return (view - QPointF(width() / 2.0, height() / 2.0)) / m_scale + m_center;
}

void TopologyView::zoomToFit(bool animated)
{
    const QRectF bounds = m_graph.restingBounds(); // where an animation is heading, not where it is
    if (bounds.isNull() || width() <= 0 || height() <= 0)
        return;
    constexpr double margin = 24;
    auto fittedScale = [&bounds](const QRectF &area) {
        if (area.width() <= 0 || area.height() <= 0)
            return 0.0;
        return std::min(area.width() / std::max(1.0, bounds.width()), area.height() / std::max(1.0, bounds.height()));
    };
    // The graph goes beside the legend, not under it: above it or to its right, whichever
    // shows the graph larger.
    QRectF area = QRectF(rect()).adjusted(margin, margin, -margin, -margin);
    const QRectF legend = legendRect();
    if (m_legendVisible && !legend.isNull()) {
        const QRectF above(area.left(), area.top(), area.width(), legend.top() - margin - area.top());
        const QRectF right(legend.right() + margin, area.top(), area.right() - legend.right() - margin, area.height());
        area = fittedScale(above) >= fittedScale(right) ? above : right;
    }
    const double scale = std::clamp(fittedScale(area), kMinScale, 1.5);
    // The camera's centre is the view's centre: shift it so that the graph's centre lands on the area's.
    const QPointF center = bounds.center() - (area.center() - QRectF(rect()).center()) / scale;
    if (animated) {
        animateCamera(center, scale);
    } else {
        m_cameraAnimation.stop();
        m_center = center;
        m_scale = scale;
        update();
    }
}

void TopologyView::noteMotion()
{
    m_moving = true;
    m_stillTimer.start();
}

void TopologyView::setZoom(double zoom)
{
    m_cameraAnimation.stop();
    noteMotion();
    m_scale = std::clamp(zoom, kMinScale, kMaxScale);
    m_autoFit = false;
    update();
}

void TopologyView::panBy(QPointF pixels)
{
    m_cameraAnimation.stop();
    noteMotion();
    m_center -= pixels / m_scale;
    m_autoFit = false;
    update();
}

void TopologyView::animateCamera(QPointF center, double scale)
{
    m_cameraAnimation.stop();
    m_cameraFrom = m_center;
    m_scaleFrom = m_scale;
    m_cameraTo = center;
    m_scaleTo = std::clamp(scale, kMinScale, kMaxScale);
    if (!isVisible()) {
        m_center = m_cameraTo;
        m_scale = m_scaleTo;
        return;
    }
    m_cameraAnimation.start();
}

void TopologyView::ensureVisible(int row)
{
    const TopologyNode &n = m_graph.nodes()[size_t(row)];
    if (!n.positioned) {
        m_revealAfterLayout = row;
        return;
    }
    const QRectF comfortable = QRectF(rect()).adjusted(40, 40, -40, -40);
    if (!comfortable.contains(mapToView(n.target))) {
        m_autoFit = false; // the operator's selection now owns the camera
        animateCamera(n.target, m_scale);
    }
}

// ---- queries for tests -----------------------------------------------------------------

int TopologyView::visibleNodeCount() const
{
    const auto &nodes = m_graph.nodes();
    return int(std::count_if(nodes.begin(), nodes.end(), [](const TopologyNode &n) { return !n.hidden && n.positioned; }));
}

std::optional<QPointF> TopologyView::nodePosition(const QString &agentId) const
{
    const int row = m_graph.row(agentId);
    if (row < 0)
        return std::nullopt;
    const TopologyNode &n = m_graph.nodes()[size_t(row)];
    if (n.hidden || !n.positioned)
        return std::nullopt;
    return n.target;
}

bool TopologyView::isCollapsed(const QString &agentId) const
{
    const int row = m_graph.row(agentId);
    return row >= 0 && m_graph.nodes()[size_t(row)].collapsed;
}

int TopologyView::hiddenDescendantCount(const QString &agentId) const
{
    const int row = m_graph.row(agentId);
    return row >= 0 && m_graph.nodes()[size_t(row)].collapsed ? m_graph.nodes()[size_t(row)].descendants : 0;
}

bool TopologyView::isDimmed(const QString &agentId) const
{
    const int row = m_graph.row(agentId);
    return row >= 0 && isRowDimmed(row);
}

void TopologyView::setLegendVisible(bool visible)
{
    m_legendVisible = visible;
    if (m_autoFit)
        zoomToFit(false); // the legend takes room from the graph, or gives it back
    update();
}

// ---- hit testing -----------------------------------------------------------------------

int TopologyView::nodeAt(QPointF viewPos) const
{
    const QPointF world = mapToWorld(viewPos);
    const double slack = 4 / m_scale; // a few pixels of grace around small shapes
    const bool labelsShown = labelPixelsAt(m_scale) >= kMinLabelPixels;
    const auto &nodes = m_graph.nodes();
    int best = -1;
    double bestDistance = 0;
    for (size_t v = 0; v < nodes.size(); ++v) {
        const TopologyNode &n = nodes[v];
        if (n.hidden || !n.positioned)
            continue;
        const double d = distance(world, n.position);
        bool hit = d <= n.radius + slack;
        if (!hit && labelsShown) {
            const QRectF label(n.position.x() - n.labelWidth / 2, n.position.y() + n.radius, n.labelWidth,
                               TopologyGraph::kLabelBlockHeight);
            hit = label.contains(world);
        }
        if (hit && (best < 0 || d < bestDistance)) {
            best = int(v);
            bestDistance = d;
        }
    }
    return best;
}

int TopologyView::collapseBadgeAt(QPointF viewPos) const
{
    for (const auto &[r, row] : m_collapseBadges)
        if (r.adjusted(-2, -2, 2, 2).contains(viewPos))
            return row;
    return -1;
}

const TopologyView::DrawnEdge *TopologyView::edgeAt(QPointF viewPos) const
{
    const DrawnEdge *best = nullptr;
    double bestDistance = 0;
    for (const DrawnEdge &e : m_drawnEdges) {
        const double tolerance = std::max(4.0, e.width / 2 + 2);
        const QRectF box = QRectF(e.start, e.end).normalized().united(QRectF(e.control, QSizeF(1, 1))).adjusted(-tolerance, -tolerance, tolerance, tolerance);
        if (!box.contains(viewPos))
            continue;
        QPointF previous = e.start;
        for (int i = 1; i <= 24; ++i) {
            const QPointF next = quadPoint(e.start, e.control, e.end, i / 24.0);
            const double d = distanceToSegment(viewPos, previous, next);
            if (d <= tolerance && (!best || d < bestDistance)) {
                best = &e;
                bestDistance = d;
            }
            previous = next;
        }
    }
    return best;
}

int TopologyView::scopeLabelAt(QPointF viewPos) const
{
    for (const auto &[r, row] : m_scopeLabels)
        if (r.contains(viewPos))
            return row;
    return -1;
}

// ---- tooltips --------------------------------------------------------------------------

QString TopologyView::nodeToolTip(int row) const
{
    const SystemStore *store = m_session->store();
    const Agent &a = store->agents()[size_t(row)];
    const TopologyNode &n = m_graph.nodes()[size_t(row)];
    QString html = QStringLiteral("<b>%1</b><br><span style='font-size:small'>%2</span><table>")
                       .arg((a.name.isEmpty() ? tr("(unnamed)") : a.name).toHtmlEscaped(), a.id.toHtmlEscaped());
    auto line = [&html](const QString &key, const QString &value) {
        if (!value.isEmpty())
            html += QStringLiteral("<tr><td>%1&nbsp;</td><td>%2</td></tr>").arg(key, value.toHtmlEscaped());
    };
    line(tr("Role"), a.role.isEmpty() ? tr("(none)") : a.role);
    line(tr("State"), a.state.isEmpty() ? tr("(unknown)") : a.state);
    line(tr("Health"), healthName(a.health));
    if (a.placeholder)
        line(tr("Known"), tr("only by reference (placeholder)"));
    if (a.unregistered)
        line(tr("Departed"), formatAge(store->now() - a.unregisteredAtMs));
    if (a.lastActivityMs > 0)
        line(tr("Last activity"), formatAge(store->now() - a.lastActivityMs));
    line(tr("Current task"), a.currentTaskId);
    if (a.progress)
        line(tr("Progress"), QStringLiteral("%1 %").arg(*a.progress, 0, 'f', 0));
    if (a.load)
        line(tr("Load"), QString::number(*a.load, 'g', 3));
    if (a.tokensUsed || a.tokensRemaining)
        line(tr("Tokens"), tr("%1 used, %2 left")
                               .arg(a.tokensUsed ? QString::number(*a.tokensUsed) : QStringLiteral("?"),
                                    a.tokensRemaining ? QString::number(*a.tokensRemaining) : QStringLiteral("?")));
    if (a.costUsd)
        line(tr("Cost"), QStringLiteral("$%1").arg(*a.costUsd, 0, 'f', 4));
    line(tr("Messages"), tr("%1 sent, %2 received").arg(a.messagesSent).arg(a.messagesReceived));
    QStringList scopeNames;
    for (const QString &scopeId : a.scopes) {
        const Scope *s = store->scope(scopeId);
        scopeNames << (s && !s->name.isEmpty() ? s->name : scopeId);
    }
    line(tr("Scopes"), scopeNames.join(QStringLiteral(", ")));
    if (!a.lastErrorMessage.isEmpty())
        line(tr("Last error"), QStringLiteral("%1 %2").arg(a.lastErrorSeverity, a.lastErrorMessage));
    html += QStringLiteral("</table>");
    if (n.collapsed)
        html += tr("<i>%n agent(s) hidden — double-click to expand</i>", nullptr, n.descendants);
    else if (!n.children.empty())
        html += tr("<i>Double-click to collapse its %n descendant(s)</i>", nullptr, n.descendants);
    return html;
}

QString TopologyView::edgeToolTip(const TrafficEdge &e) const
{
    const auto &nodes = m_graph.nodes();
    auto name = [&](int row) { return (nodes[size_t(row)].name.isEmpty() ? nodes[size_t(row)].id : nodes[size_t(row)].name).toHtmlEscaped(); };
    const QString to = e.to >= 0 ? name(e.to) : tr("scope %1").arg(m_graph.scopes()[size_t(e.scope)].name.toHtmlEscaped());
    const double perSecond = TopologyGraph::recentWeight(e, m_session->store()->now()) / (TopologyGraph::kTrafficTimeConstantMs / 1000);
    return tr("<b>%1 → %2</b><br>%n message(s)<br>recent rate %3/s (last 10 s, decaying)<br><i>Click to inspect the latest</i>",
              nullptr, e.total)
        .arg(name(e.from), to, QString::number(perSecond, 'f', 2));
}

QString TopologyView::scopeToolTip(int scopeRow) const
{
    const ScopeGroup &s = m_graph.scopes()[size_t(scopeRow)];
    QString text = tr("<b>Scope %1</b><br>%n member(s)", nullptr, int(s.members.size())).arg(s.name.toHtmlEscaped());
    if (s.parent >= 0)
        text += tr("<br>inside %1").arg(m_graph.scopes()[size_t(s.parent)].name.toHtmlEscaped());
    if (s.placeholder)
        text += tr("<br><i>known only by reference</i>");
    return text;
}

bool TopologyView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QPointF pos = help->pos();
        QString text;
        if (const int row = nodeAt(pos); row >= 0)
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
    m_pressed = true;
    m_dragged = false;
    m_ignoreRelease = false;
    m_pressPos = event->position();
    m_pressCenter = m_center;
    m_rubberBanding = event->button() == Qt::LeftButton && (event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier))
                      && nodeAt(m_pressPos) < 0;
    m_cameraAnimation.stop();
}

void TopologyView::mouseMoveEvent(QMouseEvent *event)
{
    const QPointF pos = event->position();
    if (!m_pressed) {
        const int hover = nodeAt(pos);
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
        m_center = m_pressCenter - (pos - m_pressPos) / m_scale;
        noteMotion();
        m_autoFit = false;
    }
    update();
}

void TopologyView::mouseReleaseEvent(QMouseEvent *event)
{
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
    if (event->button() != Qt::LeftButton)
        return;
    m_pressed = true; // the release that follows ends this gesture, doing nothing more
    m_dragged = false;
    m_ignoreRelease = true;
    m_pressPos = event->position();
    m_pressCenter = m_center;
    if (collapseBadgeAt(m_pressPos) < 0)
        toggleCollapsed(nodeAt(m_pressPos));
}

void TopologyView::wheelEvent(QWheelEvent *event)
{
    double steps = event->angleDelta().y() / 120.0;
    if (steps == 0)
        steps = event->pixelDelta().y() / 50.0;
    if (steps == 0)
        return;
    const QPointF anchor = event->position();
    const QPointF world = mapToWorld(anchor);
    m_cameraAnimation.stop();
    m_scale = std::clamp(m_scale * std::pow(1.2, steps), kMinScale, kMaxScale);
    m_center = world - (anchor - QPointF(width() / 2.0, height() / 2.0)) / m_scale; // the point under the cursor stays
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
        animateCamera(m_center, m_scale * 1.25);
        m_autoFit = false;
        break;
    case Qt::Key_Minus:
        animateCamera(m_center, m_scale / 1.25);
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
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        m_sprites.clear(); // drawn in the old theme's colours
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
    QPainter painter(this);
    renderTo(painter);
}

void TopologyView::renderTo(QPainter &painter)
{
    const TopologyColors colors(palette());
    painter.fillRect(rect(), colors.background);
    m_drawnEdges.clear();
    m_collapseBadges.clear();
    m_scopeLabels.clear();
    if (m_graph.nodes().empty()) {
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
    paintTraffic(painter, colors);
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
        painter.drawRoundedRect(g.box, 12, 12);
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
    for (size_t s = 0; s < scopes.size(); ++s) {
        const ScopeGroup &g = scopes[s];
        if (g.deleted || g.box.isNull() || !g.box.intersects(visibleWorld))
            continue;
        const QRectF box(mapToView(g.box.topLeft()), mapToView(g.box.bottomRight()));
        if (box.width() < 60)
            continue; // too small to label legibly
        const QString text = metrics.elidedText(QStringLiteral("%1 · %2").arg(g.name).arg(g.members.size()),
                                                Qt::ElideRight, box.width() - 16);
        const QRectF label(box.left() + 8, box.top() + 3, metrics.horizontalAdvance(text), metrics.height());
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

void TopologyView::paintTreeLines(QPainter &painter, const TopologyColors &colors)
{
    const auto &lines = m_scale < kCoarseTreeScale ? m_graph.coarseTreeLines() : m_graph.treeLines();
    QVector<QLineF> normal, faded;
    normal.reserve(int(lines.size()));
    for (const auto &l : lines)
        (isRowDimmed(l.child) ? faded : normal).push_back(l.line);
    painter.setTransform(worldTransform());
    // Horizontal and vertical lines are crisp without antialiasing, and cheaper.
    painter.setRenderHint(QPainter::Antialiasing, false);
    QPen pen(colors.treeEdge, m_scale >= 0.5 ? 1.3 : 1.0);
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
    const TrafficBudget budget = trafficBudget(m_scale, m_moving);
    const QRectF viewport = QRectF(rect()).adjusted(-8, -8, 8, 8);
    const bool arrows = m_scale >= 0.5;
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
            targetRadius = to.radius * m_scale;
        } else {
            const QRectF &box = scopes[size_t(e.scope)].box;
            if (box.isNull())
                return;
            b = mapToView(box.topLeft() + QPointF(6, 6));
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

const QPixmap &TopologyView::nodeSprite(const TopologyNode &n, double pixelRadius, const TopologyColors &colors)
{
    const int quarterPixels = std::max(1, int(std::lround(pixelRadius * 4)));
    const quint64 key = quint64(n.shape) | quint64(n.health) << 3 | quint64(n.badge == StateBadge::Busy) << 6
                        | quint64(n.departed) << 7 | quint64(n.placeholder) << 8 | quint64(quarterPixels) << 9;
    auto it = m_sprites.constFind(key);
    if (it != m_sprites.constEnd())
        return *it;
    if (m_sprites.size() > 4096)
        m_sprites.clear(); // a long zoom leaves sprites of sizes no longer drawn
    const double radius = quarterPixels / 4.0;
    const int side = int(std::ceil(2 * (radius + 7)));
    const qreal dpr = devicePixelRatioF();
    QPixmap sprite(QSize(side, side) * dpr);
    sprite.setDevicePixelRatio(dpr);
    sprite.fill(Qt::transparent);
    QPainter painter(&sprite);
    painter.setRenderHint(QPainter::Antialiasing, true);
    drawNodeGlyph(painter, n, QPointF(side / 2.0, side / 2.0), radius, 1.0, colors);
    painter.end();
    return *m_sprites.insert(key, sprite);
}

void TopologyView::paintNodes(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &nodes = m_graph.nodes();
    const double pixel = 1 / m_scale; // one view pixel in world units
    // Small nodes (most of them, when many are in view) are stamped from cached pictures, one
    // per look and size: a blit costs a fraction of drawing the shape. Larger, selected and
    // hovered ones are drawn as shapes.
    std::vector<int> stamped;
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
        if (r * m_scale < kSpriteMaxRadius && !selected && !hovered) {
            stamped.push_back(int(v));
            continue;
        }
        painter.setOpacity(isRowDimmed(int(v)) ? 0.16 : 1.0);
        if (selected) {
            QColor halo = colors.selection;
            halo.setAlpha(70);
            painter.setPen(Qt::NoPen);
            painter.setBrush(halo);
            painter.drawEllipse(n.position, r + 9 * pixel, r + 9 * pixel);
        }
        drawNodeGlyph(painter, n, n.position, r, pixel, colors);
        if (selected) {
            QPen ring(colors.selection, 2.6);
            ring.setCosmetic(true);
            painter.setPen(ring);
            painter.setBrush(Qt::NoBrush);
            const double R = r + (n.badge == StateBadge::Busy ? 8 : 4.5) * pixel;
            painter.drawEllipse(n.position, R, R);
        }
        if (hovered) {
            QPen ring(colors.text, 1);
            ring.setCosmetic(true);
            painter.setPen(ring);
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(n.position, r + 2 * pixel, r + 2 * pixel);
        }
    }
    painter.resetTransform();
    for (int v : stamped) {
        const TopologyNode &n = nodes[size_t(v)];
        const QPixmap &sprite = nodeSprite(n, n.radius * m_scale, colors);
        const double half = sprite.width() / sprite.devicePixelRatio() / 2;
        painter.setOpacity(isRowDimmed(v) ? 0.16 : 1.0);
        painter.drawPixmap(mapToView(n.position) - QPointF(half, half), sprite);
    }
    painter.setOpacity(1);
}

void TopologyView::paintNodeOverlays(QPainter &painter, const TopologyColors &colors, const QRectF &visibleWorld)
{
    const auto &nodes = m_graph.nodes();
    const int labelPixels = std::min(kMaxLabelPixels, labelPixelsAt(m_scale));
    const bool allLabels = labelPixels >= kMinLabelPixels;
    const bool secondLine = m_scale >= 1.3;
    const LabelFont &label = labelFont(std::max(kMinLabelPixels + 2, labelPixels));
    const LabelFont &detail = labelFont(std::max(kMinLabelPixels, int(labelPixels * 0.85)));
    QFont badgeFont = font();
    badgeFont.setPixelSize(10);
    badgeFont.setBold(true);
    const QFontMetricsF badgeMetrics(badgeFont);
    const double worldMargin = 60 / m_scale;
    const QRectF cull = visibleWorld.adjusted(-worldMargin, -worldMargin, worldMargin, worldMargin);

    for (size_t v = 0; v < nodes.size(); ++v) {
        const TopologyNode &n = nodes[v];
        if (n.hidden || !n.positioned || !cull.contains(n.position))
            continue;
        const bool selected = m_selectedShown[v];
        const bool hovered = int(v) == m_hoverRow;
        const double r = n.radius * m_scale;
        const QPointF center = mapToView(n.position);
        painter.setOpacity(isRowDimmed(int(v)) ? 0.2 : 1.0);

        // State badge at the top right.
        if (n.badge != StateBadge::None && r >= 5)
            drawStateBadge(painter, n.badge, center + QPointF(r * 0.72, -r * 0.72), std::clamp(r * 0.42, 4.5, 8.0));

        // Collapse control: "+N" on a collapsed node; "−" on an expanded parent under the cursor or selected.
        if (!n.children.empty() && (n.collapsed ? m_scale >= 0.12 : (hovered || selected) && r >= 5)) {
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
        const bool wanted = allLabels || selected || hovered || (n.shape == NodeShape::Hexagon && m_scale >= 0.15);
        if (!wanted)
            continue;
        const double scale = double(label.font.pixelSize()) / TopologyGraph::kLabelPixelSize;
        const double w = n.labelWidth * scale;
        const QPointF topLeft(center.x() - w / 2, center.y() + r + 2);
        QColor backdrop = colors.background;
        backdrop.setAlpha(190);
        painter.fillRect(QRectF(topLeft.x() - 2, topLeft.y(), w + 4, label.font.pixelSize() + 3), backdrop);
        QFont f = label.font;
        f.setItalic(n.placeholder);
        painter.setFont(f);
        painter.setPen(n.placeholder || n.departed ? colors.mutedText : colors.text);
        painter.drawText(QPointF(topLeft.x(), topLeft.y() + label.ascent + 1), n.label);
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
    const QRectF box(pad, height() - pad - 7 * row - 2 * pad, 3 * column + pad, 7 * row + 2 * pad);
    if (box.top() < 40 || box.right() > width() - 40)
        return {}; // the view is too small for a legend
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
    const Health healths[] = {Health::Healthy, Health::Late, Health::Unresponsive, Health::Suspended,
                              Health::Disconnected, Health::Stopped, Health::Failed};
    for (int i = 0; i < 7; ++i) {
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
    text += tr(" · zoom %1 %").arg(qRound(m_scale * 100));
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
