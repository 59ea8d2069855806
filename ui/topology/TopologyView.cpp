#include "topology/TopologyView.h"

#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "topology/TopologyStyle.h"
#include "topology/TopologyViewDetail.h"

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

using namespace topology_view;

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
        m_camera = TopologyCamera::between(m_cameraFrom, m_cameraTo, value.toDouble());
        noteMotion();
        update();
    });
    m_moveAnimation.setDuration(kMoveAnimationMs);
    m_moveAnimation.setStartValue(0.0);
    m_moveAnimation.setEndValue(1.0);
    m_moveAnimation.setEasingCurve(QEasingCurve::OutCubic);
    connect(&m_moveAnimation, &QVariantAnimation::valueChanged, this, [this](const QVariant &value) {
        m_graph.setMoveProgress(value.toDouble());
        ++m_minimapRevision;
        noteMotion();
        update();
    });
    m_tidyWhenStill.setSingleShot(true);
    m_tidyWhenStill.setInterval(kTidyWhenStillMs);
    connect(&m_tidyWhenStill, &QTimer::timeout, this, [this] {
        if (!m_autoFit || m_tidyPending)
            return;
        if (size_t(visibleNodeCount()) >= m_placedAtFullLayout + kTidyWhenStillAppended) {
            m_fitAfterLayout = true;
            m_tidyPending = true;
            m_runner->requestFull();
        }
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

    connect(m_runner, &LayoutRunner::laidOut, this, &TopologyView::onLayoutFinished);
    SystemStore *store = m_session->store();
    connect(store, &SystemStore::changed, this, &TopologyView::onStoreChanged);
    connect(store, &SystemStore::aboutToReset, this, &TopologyView::onStoreAboutToReset);
    connect(store, &SystemStore::wasReset, this, &TopologyView::onStoreReset);
    if (m_selection) {
        connect(m_selection, &SelectionHub::agentSelectionChanged, this, &TopologyView::onSelectionChanged);
        connect(m_selection, &SelectionHub::chainChanged, this, qOverload<>(&QWidget::update));
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
    ++m_minimapRevision;
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
    m_placedAtFullLayout = 0;
    m_tidyPending = false;
    m_tidyWhenStill.stop();
    m_minimap.clear();
    ++m_minimapRevision;
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
    const size_t placed = size_t(visibleNodeCount());
    if (placed == 0) {
        m_fitAfterLayout = true;
        m_runner->requestFull();
    } else if (!m_tidyPending
               && placed - std::min(placed, m_placedAtFullLayout) >= std::max(kTidyAfterGrowth, m_placedAtFullLayout / 4)) {
        // Tidy again (m_placedAtFullLayout): animated, a selected agent kept in place, the
        // whole graph fitted while the operator has not moved the camera.
        m_anchorRow = -1;
        for (const QString &id : std::as_const(m_selectedIds)) {
            const int row = m_graph.row(id);
            if (row >= 0 && nodes[size_t(row)].positioned) {
                m_anchorRow = row;
                break;
            }
        }
        m_fitAfterLayout = m_fitAfterLayout || (m_autoFit && m_anchorRow < 0);
        m_tidyPending = true; // until it comes back, more growth is appended (merged into it by the runner)
        m_runner->requestFull();
    } else {
        m_runner->requestIncremental(); // stable: placed nodes stay where they are
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
    ++m_minimapRevision;
    if (!result.incremental) {
        m_tidyPending = false;
        m_tidyWhenStill.stop();
        ++m_fullLayouts;
        m_placedAtFullLayout = size_t(visibleNodeCount());
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
                animateCamera(m_camera.center + shift, m_camera.scale);
            } else {
                m_camera.center += shift;
            }
        }
        m_anchorRow = -1;
    } else if (m_autoFit) {
        // Agents that joined after the first layout (a live system registers them one by one)
        // widen the graph: keep it all in view until the operator moves the camera.
        zoomToFit(false);
        if (size_t(visibleNodeCount()) >= m_placedAtFullLayout + kTidyWhenStillAppended)
            m_tidyWhenStill.start(); // restarted by each one: fires once the growth paused
    }
    if (m_revealAfterLayout >= 0 && size_t(m_revealAfterLayout) < m_graph.nodes().size()
        && m_graph.nodes()[size_t(m_revealAfterLayout)].positioned) {
        const int row = m_revealAfterLayout;
        m_revealAfterLayout = -1;
        animateCamera(m_graph.nodes()[size_t(row)].target, std::max(m_camera.scale, 1.0));
    }
    if (m_graph.hasUnplacedNodes())
        m_runner->requestIncremental(); // agents that arrived after the snapshot
    refreshNeighbourhood();
    update();
    Q_EMIT layoutApplied();
}

bool TopologyView::isSettled() const
{
    return m_runner->isIdle() && !m_graph.hasUnplacedNodes() && !(m_tidyWhenStill.isActive() && m_autoFit)
           && m_moveAnimation.state() != QAbstractAnimation::Running
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

void TopologyView::setShowDeparted(bool show)
{
    if (!m_graph.setHideDeparted(!show))
        return;
    m_graph.updateGeometry();
    m_runner->requestFull(); // the old run's tree goes (or comes back): a tidy layout, animated
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
    ++m_minimapRevision;
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
        animateCamera(m_graph.nodes()[size_t(row)].target, std::max(m_camera.scale, 1.0));
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

TopologyCamera TopologyView::camera() const
{
    TopologyCamera current = m_camera;
    current.viewport = QSizeF(size());
    return current;
}

QTransform TopologyView::worldTransform() const
{
    return camera().worldTransform();
}

QPointF TopologyView::mapToView(QPointF world) const
{
    return camera().mapToView(world);
}

QPointF TopologyView::mapToWorld(QPointF view) const
{
    return camera().mapToWorld(view);
}

void TopologyView::zoomToFit(bool animated)
{
    const QRectF bounds = m_graph.restingBounds(); // where an animation is heading, not where it is
    if (bounds.isNull() || width() <= 0 || height() <= 0)
        return;
    constexpr double margin = 24;
    // The graph goes beside the legend, not under it: above it or to its right, whichever
    // shows the graph larger.
    QRectF area = QRectF(rect()).adjusted(margin, margin, -margin, -margin);
    const QRectF legend = legendRect();
    if (m_legendVisible && !legend.isNull()) {
        const QRectF above(area.left(), area.top(), area.width(), legend.top() - margin - area.top());
        const QRectF right(legend.right() + margin, area.top(), area.right() - legend.right() - margin, area.height());
        area = scaleToFit(bounds, above) >= scaleToFit(bounds, right) ? above : right;
    }
    TopologyCamera fitted = camera();
    fitted.fit(bounds, area, 1.5); // never blown up past 150%: a few agents stay a readable size
    if (animated) {
        animateCamera(fitted.center, fitted.scale);
    } else {
        m_cameraAnimation.stop();
        m_camera = fitted;
        update();
    }
}

void TopologyView::zoomToAgents(const QStringList &agentIds)
{
    QRectF bounds;
    for (const QString &id : agentIds) {
        const int row = m_graph.row(id);
        if (row < 0)
            continue;
        // An agent inside a collapsed subtree is where its visible ancestor is drawn.
        int shown = row;
        for (int steps = 0; steps < 64 && shown >= 0 && m_graph.nodes()[size_t(shown)].hidden; ++steps)
            shown = m_graph.nodes()[size_t(shown)].parent;
        if (shown < 0)
            continue;
        const TopologyNode &n = m_graph.nodes()[size_t(shown)];
        if (n.hidden || !n.positioned)
            continue;
        // Where the layout puts it, not where an animation has it now.
        const QRectF extent(n.target.x() - n.radius, n.target.y() - n.radius, 2 * n.radius, 2 * n.radius);
        bounds = bounds.isNull() ? extent : bounds.united(extent);
    }
    if (bounds.isNull() || width() <= 0 || height() <= 0)
        return;
    constexpr double margin = 24;
    TopologyCamera fitted = camera();
    fitted.fit(bounds, QRectF(rect()).adjusted(margin, margin, -margin, -margin), 1.5);
    m_autoFit = false; // the operator asked for these: a growing graph does not pull the view back
    animateCamera(fitted.center, fitted.scale);
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
    m_camera.scale = std::clamp(zoom, TopologyCamera::kMinScale, TopologyCamera::kMaxScale);
    m_autoFit = false;
    update();
}

void TopologyView::panBy(QPointF pixels)
{
    m_cameraAnimation.stop();
    noteMotion();
    m_camera.panByPixels(pixels);
    m_autoFit = false;
    update();
}

void TopologyView::animateCamera(QPointF center, double scale)
{
    m_cameraAnimation.stop();
    m_cameraFrom = camera();
    m_cameraTo = m_cameraFrom;
    m_cameraTo.center = center;
    m_cameraTo.scale = std::clamp(scale, TopologyCamera::kMinScale, TopologyCamera::kMaxScale);
    if (!isVisible()) {
        m_camera = m_cameraTo;
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
        animateCamera(n.target, m_camera.scale);
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

void TopologyView::setAlertBadges(const QHash<QString, int> &severityByAgent)
{
    if (severityByAgent == m_alertBadges)
        return;
    m_alertBadges = severityByAgent;
    update();
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
    const double slack = 4 / m_camera.scale; // a few pixels of grace around small shapes
    const bool labelsShown = labelPixelsAt(m_camera.scale) >= kMinLabelPixels;
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
    for (const QString &scopeId : a.scopes)
        scopeNames << store->scopeName(scopeId);
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
    auto name = [&](int row) { return shownName(nodes[size_t(row)]).toHtmlEscaped(); };
    const QString to = e.to >= 0 ? name(e.to) : tr("scope %1").arg(m_graph.scopes()[size_t(e.scope)].name.toHtmlEscaped());
    const double perSecond = TopologyGraph::recentWeight(e, m_session->store()->now()) / (TopologyGraph::kTrafficTimeConstantMs / 1000);
    return tr("<b>%1 → %2</b><br>%n message(s)<br>recent rate %3/s (last 10 s, decaying)<br><i>Click to inspect the latest</i>",
              nullptr, e.total)
        .arg(name(e.from), to, QString::number(perSecond, 'f', 2));
}

QString TopologyView::scopeToolTip(int scopeRow) const
{
    if (scopeRow < 0 || size_t(scopeRow) >= m_graph.scopes().size())
        return {}; // a label of the last paint, its group gone since (another system's groups follow the model)
    const ScopeGroup &s = m_graph.scopes()[size_t(scopeRow)];
    if (s.systemGroup)
        return tr("<b>System %1</b><br>%n agent(s) of another system, listed by this server through federation "
                  "(it sends no event about them: they follow its list)", nullptr, int(s.members.size()))
            .arg(s.system.toHtmlEscaped());
    QString text = tr("<b>Scope %1</b><br>%n member(s)", nullptr, int(s.members.size())).arg(s.name.toHtmlEscaped());
    if (s.parent >= 0)
        text += tr("<br>inside %1").arg(m_graph.scopes()[size_t(s.parent)].name.toHtmlEscaped());
    if (s.placeholder)
        text += tr("<br><i>known only by reference</i>");
    return text;
}

} // namespace mapi::ui
