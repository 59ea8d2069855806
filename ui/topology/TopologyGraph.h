// What the topology shows, derived from the SystemStore: one node per agent row (rows are never
// removed, so a node's index is its agent row), the hierarchy (Agent::parentId, cycles broken)
// with collapsed subtrees, the message traffic between agents with its recent rate, the scope
// groups, and the positions the layout produced.
//
// Thread: GUI thread only. Fed from SystemStore::changed (coalesced, ≤ 30 Hz), never per event.
// Geometry (tree lines, scope boxes) is cached and rebuilt by updateGeometry() when
// positions move, so a paint only reads it.
#pragma once

#include "model/AgentRowsByName.h"
#include "model/SystemStore.h"
#include "topology/ScopeBoxes.h"
#include "topology/TopologyLayout.h"
#include "topology/TopologyStyle.h"

#include <QFont>
#include <QHash>
#include <QLineF>
#include <QRectF>
#include <QVector>

#include <deque>
#include <limits>
#include <vector>

class QFontMetricsF;

namespace mapi::ui {

struct TopologyNode
{
    QString id;
    QString name;
    QString label;                // name (else id), elided to kMaxLabelWidth at the label font
    double labelWidth = 0;        // world units
    QString role;
    QString state;
    Health health = Health::Healthy;
    NodeShape shape = NodeShape::Diamond;
    StateBadge badge = StateBadge::None;
    double radius = 14;           // world units
    double width = 0;             // room the layout gives it: shape or label, whichever is wider
    bool placeholder = true;
    bool departed = false;        // unregistered
    QString system;               // another system's agent (federation, map/Federation.h): that system; "" for the server's own

    QString parentId;             // as the store has it
    int parent = -1;              // its row; -1 for a root, or where the link would close a cycle
    std::vector<int> children;    // rows
    bool collapsed = false;
    bool hidden = false;          // inside a collapsed subtree, or of a departed subtree not shown
    int descendants = 0;          // all of them, hidden or not
    QString sortKey;              // siblings order: deepest scope's name, then name (numbers compared as numbers)
    QString nameKey;              // naturalSortKey of its shown name (kept: 10,000 keys cost ~8 ms a rebuild)
    bool sortKeyStale = true;     // its name changed since sortKey was made
    int group = -1;               // its deepest scope's row: the layout keeps such siblings together

    bool positioned = false;      // has a layout position (hidden nodes drop theirs)
    QPointF position;             // where it is drawn now (moves while an animation runs)
    QPointF from;                 // animation start
    QPointF target;               // where the layout put it
};

// Messages between two agents (or from an agent to a scope), in one direction.
struct TrafficEdge
{
    int from = -1;                // agent row
    int to = -1;                  // agent row; -1 for a scope message
    int scope = -1;               // scope row of a scope message
    double weight = 0;            // decayed message count at lastMs: Σ exp(-(lastMs − tᵢ)/τ)
    qint64 lastMs = 0;            // store time (ms) of the newest message
    int total = 0;
    int latestMessage = -1;       // store row of the newest message
    // ln(weight) + lastMs/τ, what rankedEdges() orders by; NaN until it is computed again after
    // the edge changed (a flood changes few of 600,000 edges between two paints: a logarithm each
    // at every paint cost ~10 ms).
    double rankKey = std::numeric_limits<double>::quiet_NaN();
};

struct ScopeGroup
{
    QString id;
    QString name;
    QString nameKey;              // naturalSortKey(name)
    int parent = -1;              // scope row; -1 for a top scope (or a cycle)
    int storeParent = -1;         // the parent the store gives (a scope of another system without one sits in its system's group)
    QString system;               // another system's scope: that system; for a system's group, the system it stands for
    bool systemGroup = false;     // not a scope: the group of another system's agents and scopes (after the store's scopes)
    int depth = 0;
    bool placeholder = true;
    bool deleted = false;
    std::vector<int> members;     // agent rows
    QRectF box;                   // world units: the parts' union; null when no member is shown
    std::vector<QRectF> parts;    // world units: what is drawn (ScopeBoxes.h), covering no other scope's agent
};

class TopologyGraph
{
public:
    static constexpr double kTrafficTimeConstantMs = 10000; // "recent" rate: exponential decay, τ = 10 s
    static constexpr double kMaxLabelWidth = 118;           // world units; longer names are elided
    static constexpr double kLabelPixelSize = 11;           // label font size at zoom 1, world units
    static constexpr double kLabelBlockHeight = 15;         // below the shape, world units

    struct SyncResult
    {
        bool newNodes = false;    // nodes that need a position
        bool structure = false;   // parents, children or visibility changed
        bool traffic = false;
        bool scopes = false;
        bool names = false;       // a name or id to search changed or appeared
    };

    void clear();
    SyncResult syncAll(const SystemStore &store);
    SyncResult sync(const SystemStore &store, const ChangeSet &changes);

    const std::vector<TopologyNode> &nodes() const { return m_nodes; }
    const std::vector<ScopeGroup> &scopes() const { return m_scopes; }
    const std::deque<TrafficEdge> &traffic() const { return m_traffic; }
    int row(const QString &agentId) const { return m_rowById.value(agentId, -1); }
    // The node drawn for `row`: itself, or the collapsed ancestor hiding it.
    int representative(int row) const { return m_representative[size_t(row)]; }
    int visibleCount() const;

    // Collapse and expand. Return false when nothing changed. The caller re-lays out.
    bool setCollapsed(int row, bool collapsed);
    bool expandAll();
    bool collapseBelowRoots();   // every node with children except the roots
    bool expandAncestors(int row);
    // Hides subtrees in which every agent departed (default: hidden). False when nothing changed.
    bool setHideDeparted(bool hide);
    bool hidesDeparted() const { return m_hideDeparted; }

    // Layout: the immutable input of a job, and its result applied. Returns true when placed
    // nodes moved (a full layout): the caller animates with setMoveProgress().
    LayoutInput layoutSnapshot(bool incremental) const;
    bool applyLayout(const LayoutResult &result);
    bool hasUnplacedNodes() const;
    void setMoveProgress(double t); // 0 = from, 1 = target; eased by the caller

    // Traffic. Edges between visible representatives (rebuilt when traffic or visibility
    // changed): the kRankedInOrder busiest first, in order, then the rest in no order. The order
    // does not depend on the time: every edge decays alike.
    static constexpr int kRankedInOrder = 20000;
    // The edges in that order, as indexes into the shown edges (a paint draws a few hundred of
    // them: copying 600,000 edges in order at each paint of a flood took most of its 30 ms).
    // Valid until the graph next changes.
    struct RankedEdges
    {
        const std::deque<TrafficEdge> &edges;
        const std::vector<int> &order;
        size_t size() const { return order.size(); }
        const TrafficEdge &operator[](size_t rank) const { return edges[size_t(order[rank])]; }
    };
    RankedEdges rankedEdges();
    static double recentWeight(const TrafficEdge &edge, qint64 nowMs);

    // 1 for rows within `hops` of `sources` (parent, children and message partners are one hop).
    std::vector<char> neighbourhood(const std::vector<int> &sources, int hops) const;

    // Geometry, world units. updateGeometry() after positions or visibility changed.
    void updateGeometry();
    QRectF restingBounds() const;               // once every node is where the layout put it
    QRectF nodeBounds(int row, bool atRest = false) const; // shape and label
    struct TreeLine { QLineF line; int child; };
    // Parent → child connections as horizontal and vertical lines; the coarse set leaves out
    // the short drops to leaves (far out, a family's bus stands for them).
    const std::vector<TreeLine> &treeLines() const { return m_treeLines; }
    const std::vector<TreeLine> &coarseTreeLines() const { return m_coarseTreeLines; }

private:
    void updateNode(int row, const Agent &agent, const QFontMetricsF &metrics, SyncResult &result);
    void updateScope(int row, const SystemStore &store);
    void addMessages(const SystemStore &store, int firstRow);
    void rankChangedEdges();
    static double rankKeyOf(TrafficEdge &edge); // edge.rankKey, made when NaN
    void rebuildStructure();
    std::vector<ScopeBoxOutput> scopeBoxes(bool atRest) const;
    void addTreeLine(const TreeLine &line, bool coarseToo);
    void updateVisibility();
    void groupOtherSystems();
    QFont labelFont() const;

    std::vector<TopologyNode> m_nodes;
    QHash<QString, int> m_rowById;
    std::vector<int> m_representative;
    AgentRowsByName m_agentRows;    // messages' senders and recipients; cleared with the graph
    std::vector<ScopeGroup> m_scopes; // the store's scopes by row, then one group per other system (rebuildStructure)
    size_t m_storeScopes = 0;         // how many of m_scopes are the store's
    // One edge per pair (sender, recipient agent or scope) that ever exchanged a message: bounded
    // by the agents the store keeps. The ranking's state below is one entry per edge too.
    // A deque and an index per sender: neither is ever copied or rehashed whole as the edges
    // grow (a flood at 1,000 agents reaches 600,000 edges; one table of them all rehashed, and
    // the vector moved, in a single 30 ms step of the GUI thread).
    std::deque<TrafficEdge> m_traffic;
    std::vector<QHash<int, int>> m_edgesFrom; // per sender row: recipient row, or ~scope row → index in m_traffic
    std::deque<TrafficEdge> m_merged;         // m_traffic between shown representatives, when some are hidden
    std::vector<int> m_rankOrder;             // rankedEdges(): indexes into m_traffic or m_merged
    bool m_rankedFromMerged = false;          // m_rankOrder indexes m_merged
    std::vector<std::pair<double, int>> m_rankKeys; // kept to reuse its allocation
    bool m_scopeNamesChanged = false;        // every node's sortKey is to be made again
    bool m_rankedDirty = true;                // the ranking is to be made again from every edge
    // Only traffic was added since the last ranking: when that ranking was of m_traffic, it is
    // brought up to date from the edges that changed (an edge's rank key only grows, so the new
    // busiest are among the old busiest and the changed ones). A flood changes a few thousand of
    // 600,000 edges between two paints; ranking them all again took half of a 15 ms paint.
    bool m_rankedGrown = false;
    // Edges of m_traffic whose rank key changed (or that are new) since the last ranking, each
    // once: an edge enters when its key becomes NaN. Bounded by the edges; emptied by a ranking.
    std::vector<int> m_rankChanged;
    std::vector<char> m_inRankedTop;          // per edge of m_traffic: among the kRankedInOrder busiest
    std::vector<int> m_rankPosition;          // per edge of m_traffic outside that top: its place in m_rankOrder
    std::vector<TreeLine> m_treeLines;
    std::vector<TreeLine> m_coarseTreeLines;
    LayoutMetrics m_metrics;
    bool m_hideDeparted = true;
};

} // namespace mapi::ui
