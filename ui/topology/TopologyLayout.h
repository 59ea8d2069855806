// Tidy-tree layout of the agent hierarchy: a pure function of an immutable snapshot, so it can
// run in any thread (LayoutRunner runs it in a pool thread) and be tested without widgets.
//
// Units: world units (1 unit = 1 pixel at zoom 1). y grows downwards; every position lies on a
// level: y = level × LayoutMetrics::levelHeight.
//
// Full layout (Reingold–Tilford style): children are packed left to right as close as their
// subtrees' contours allow, each parent is centred over its first and last child, trees of a
// forest sit side by side. Two departures keep large systems legible: a node whose children
// are all leaves and more than gridThreshold stacks them in a grid of rows (one row per
// level), centred under it — a worker with 30 sub-agents stays about as wide as six of them
// instead of thirty; and a node whose row of child subtrees would be much wider than tall
// wraps them into several rows, one empty level apart, each centred under it. The forest's
// trees wrap the same way, into left-aligned rows.
//
// Incremental layout (stable): pinned nodes keep their positions exactly; every maximal subtree
// of unpinned nodes is laid out tidily on its own and appended — below its parent, right of
// its placed siblings (wrapping leaf siblings into rows like the grid), or, for a new tree,
// after the last tree of the lowest row of trees or at the start of a new row — then pushed
// right until it overlaps nothing.
#pragma once

#include <QPointF>
#include <QString>

#include <vector>

namespace mapi::ui {

struct LayoutMetrics
{
    double levelHeight = 88;      // between tree levels and between leaf-grid rows
    double siblingGap = 14;       // between neighbouring nodes of one family
    double subtreeGap = 26;       // between neighbouring subtrees, below their roots
    double treeGap = 90;          // between the trees of a forest
    int gridThreshold = 6;        // more leaf children than this: stacked in rows
};

struct LayoutNode
{
    int parent = -1;              // index into LayoutInput::nodes; -1 = root. No cycles (the caller breaks them).
    double width = 0;             // horizontal room the node needs: its shape or label, whichever is wider
    bool visible = true;          // false: inside a collapsed subtree; it gets no position
    bool pinned = false;          // incremental layout: keeps `position`
    QPointF position;             // meaningful when pinned
    QString sortKey;              // siblings and roots are ordered by it (full layout)
    int group = -1;               // siblings of one group (≥ 0) stay in one row when a family wraps
};

struct LayoutInput
{
    quint64 generation = 0;       // the attempt's ticket, handed back in the result: the runner drops stale results by it
    bool incremental = false;
    LayoutMetrics metrics;
    std::vector<LayoutNode> nodes;
};

struct LayoutResult
{
    quint64 generation = 0;
    bool incremental = false;
    std::vector<QPointF> positions;   // one per input node
    std::vector<char> placed;         // 1 where positions[i] is meaningful (visible nodes)
    double computeMs = 0;             // time spent in computeLayout, milliseconds
    double roundTripMs = 0;           // set by LayoutRunner: snapshot taken → result delivered in the GUI thread
};

// Thread: re-entrant, no shared state.
LayoutResult computeLayout(const LayoutInput &input);

} // namespace mapi::ui
