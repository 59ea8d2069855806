#include "topology/TopologyLayout.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace mapi::ui {

namespace {

// Horizontal extent of a subtree on each level, relative to its root's x; index 0 = the root's level.
struct Contour
{
    std::vector<double> left;
    std::vector<double> right;
    size_t levels() const { return left.size(); }
    void append(double l, double r)
    {
        left.push_back(l);
        right.push_back(r);
    }
};

struct Workspace
{
    explicit Workspace(const LayoutInput &in)
        : input(in)
        , metrics(in.metrics)
        , children(in.nodes.size())
        , relX(in.nodes.size(), 0.0)
        , relLevel(in.nodes.size(), 1)
        , contours(in.nodes.size())
        , positions(in.nodes.size())
        , placed(in.nodes.size(), 0)
    {
    }

    double width(int v) const { return input.nodes[size_t(v)].width; }
    bool isLeaf(int v) const { return children[size_t(v)].empty(); }

    const LayoutInput &input;
    const LayoutMetrics &metrics;
    std::vector<std::vector<int>> children; // the children this layout arranges, in order
    std::vector<double> relX;               // x relative to the parent
    std::vector<int> relLevel;              // levels below the parent: 1, or 1 + grid row
    std::vector<Contour> contours;          // released once merged into the parent's
    std::vector<QPointF> positions;
    std::vector<char> placed;
};

// Packs contours left to right, `gap(level)` apart. Returns each one's offset from the first
// and leaves their union (relative to the first) in `merged`. The inputs are consumed.
template<typename Gap>
std::vector<double> packSideBySide(Workspace &ws, const std::vector<int> &nodes, Gap gap, Contour &merged)
{
    std::vector<double> offsets(nodes.size(), 0.0);
    for (size_t i = 0; i < nodes.size(); ++i) {
        Contour &next = ws.contours[size_t(nodes[i])];
        if (i == 0) {
            merged = std::move(next);
            next = Contour();
            continue;
        }
        double shift = -std::numeric_limits<double>::infinity();
        const size_t common = std::min(merged.levels(), next.levels());
        for (size_t d = 0; d < common; ++d)
            shift = std::max(shift, merged.right[d] + gap(d) - next.left[d]);
        offsets[i] = shift;
        for (size_t d = 0; d < next.levels(); ++d) {
            if (d < merged.levels())
                merged.right[d] = next.right[d] + shift; // `next` lies right of everything on shared levels
            else
                merged.append(next.left[d] + shift, next.right[d] + shift);
        }
        next = Contour();
    }
    return offsets;
}

double extent(const Contour &c)
{
    return *std::max_element(c.right.begin(), c.right.end()) - *std::min_element(c.left.begin(), c.left.end());
}

// Children in one row, or — when that row would be far wider than the subtrees are tall — in
// several rows of about equal width, so that the family is about kWrapAspect times as wide as
// high. A coordinator with 30 workers of 30 sub-agents each becomes ~4 rows of 8 families
// instead of one row 30 families wide that no window can show legibly.
std::vector<std::vector<int>> wrapIntoRows(const Workspace &ws, const std::vector<int> &kids)
{
    constexpr double kWrapAspect = 2.0;
    constexpr size_t kMinToWrap = 4;
    const LayoutMetrics &m = ws.metrics;
    double total = m.subtreeGap * double(kids.size() - 1);
    size_t tallest = 0;
    for (int k : kids) {
        total += extent(ws.contours[size_t(k)]);
        tallest = std::max(tallest, ws.contours[size_t(k)].levels());
    }
    const double height = double(tallest + 1) * m.levelHeight; // + the empty level between rows
    const size_t rows = kids.size() < kMinToWrap
                            ? 1
                            : std::clamp<size_t>(size_t(std::lround(std::sqrt(total / (kWrapAspect * height)))), 1, kids.size());
    // Rows of about `target` width; a group (a run of children with the same LayoutNode::group)
    // is not split across rows unless it alone is wider than a row.
    std::vector<std::vector<int>> out(1);
    const double target = total / double(rows);
    double filled = 0;
    auto place = [&](int k, bool mayBreak) {
        const double w = extent(ws.contours[size_t(k)]);
        if (mayBreak && !out.back().empty() && filled + w > target && out.size() < rows) {
            out.emplace_back();
            filled = 0;
        }
        out.back().push_back(k);
        filled += w + m.subtreeGap;
    };
    for (size_t begin = 0; begin < kids.size();) {
        const int group = ws.input.nodes[size_t(kids[begin])].group;
        size_t end = begin;
        double runWidth = 0;
        for (; end < kids.size() && (end == begin || (group >= 0 && ws.input.nodes[size_t(kids[end])].group == group)); ++end)
            runWidth += extent(ws.contours[size_t(kids[end])]) + m.subtreeGap;
        if (group < 0 || runWidth > target * 1.15) {
            for (size_t i = begin; i < end; ++i)
                place(kids[i], true);
        } else {
            if (!out.back().empty() && filled + runWidth > target * 1.15 && out.size() < rows) {
                out.emplace_back();
                filled = 0;
            }
            for (size_t i = begin; i < end; ++i)
                place(kids[i], false);
        }
        begin = end;
    }
    return out;
}

// Arranges the children of `v` (whose own subtrees are done) and builds v's contour.
void shapeNode(Workspace &ws, int v)
{
    const std::vector<int> &kids = ws.children[size_t(v)];
    const double half = ws.width(v) / 2;
    Contour contour;
    contour.append(-half, half);
    const LayoutMetrics &m = ws.metrics;

    const bool grid = int(kids.size()) > m.gridThreshold
                      && std::all_of(kids.begin(), kids.end(), [&](int k) { return ws.isLeaf(k); });
    if (grid) {
        const int n = int(kids.size());
        const int columns = std::max(m.gridThreshold, int(std::ceil(std::sqrt(double(n)))));
        const int usedColumns = std::min(n, columns);
        double cell = 0;
        for (int k : kids)
            cell = std::max(cell, ws.width(k));
        cell += m.siblingGap;
        for (int i = 0; i < n; ++i) {
            const int k = kids[size_t(i)];
            const int row = i / columns;
            const double x = (i % columns - (usedColumns - 1) / 2.0) * cell;
            ws.relX[size_t(k)] = x;
            ws.relLevel[size_t(k)] = 1 + row;
            const double l = x - ws.width(k) / 2, r = x + ws.width(k) / 2;
            if (contour.levels() <= size_t(1 + row))
                contour.append(l, r);
            else
                contour.right[size_t(1 + row)] = r;
            ws.contours[size_t(k)] = Contour();
        }
    } else if (!kids.empty()) {
        // One row of subtrees, or several stacked with an empty level between them (for the
        // lines that lead to the lower rows), each row centred under the node.
        int level = 1;
        for (const std::vector<int> &row : wrapIntoRows(ws, kids)) {
            Contour merged;
            const std::vector<double> offsets =
                packSideBySide(ws, row, [&](size_t d) { return d == 0 ? m.siblingGap : m.subtreeGap; }, merged);
            const double middle = (offsets.front() + offsets.back()) / 2;
            for (size_t i = 0; i < row.size(); ++i) {
                ws.relX[size_t(row[i])] = offsets[i] - middle;
                ws.relLevel[size_t(row[i])] = level;
            }
            if (level > 1) // the empty level above the row: its connecting line spans the row
                contour.append(merged.left[0] - middle, merged.right[0] - middle);
            for (size_t d = 0; d < merged.levels(); ++d)
                contour.append(merged.left[d] - middle, merged.right[d] - middle);
            level = int(contour.levels()) + 1;
        }
    }
    ws.contours[size_t(v)] = std::move(contour);
}

// Post-order without recursion: chains of thousands of agents must not exhaust a pool thread's stack.
std::vector<int> preOrder(const Workspace &ws, int root)
{
    std::vector<int> order{root};
    for (size_t i = 0; i < order.size(); ++i)
        for (int k : ws.children[size_t(order[i])])
            order.push_back(k);
    return order;
}

void shapeSubtree(Workspace &ws, int root)
{
    const std::vector<int> order = preOrder(ws, root);
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        shapeNode(ws, *it);
}

void placeSubtree(Workspace &ws, int root, QPointF rootPosition)
{
    const std::vector<int> order = preOrder(ws, root);
    ws.positions[size_t(root)] = rootPosition;
    ws.placed[size_t(root)] = 1;
    for (int v : order) {
        for (int k : ws.children[size_t(v)]) {
            ws.positions[size_t(k)] = ws.positions[size_t(v)]
                                      + QPointF(ws.relX[size_t(k)], ws.relLevel[size_t(k)] * ws.metrics.levelHeight);
            ws.placed[size_t(k)] = 1;
        }
    }
}

// The trees side by side, wrapped into left-aligned rows like a wide family: a system whose
// agents name no parent is a forest of a thousand one-node trees.
void fullLayout(Workspace &ws, const std::vector<int> &roots)
{
    for (int r : roots)
        shapeSubtree(ws, r);
    int level = 0;
    for (const std::vector<int> &row : wrapIntoRows(ws, roots)) {
        Contour merged;
        const std::vector<double> offsets = packSideBySide(ws, row, [&](size_t) { return ws.metrics.treeGap; }, merged);
        const double left = *std::min_element(merged.left.begin(), merged.left.end());
        for (size_t i = 0; i < row.size(); ++i)
            placeSubtree(ws, row[i], QPointF(offsets[i] - left, level * ws.metrics.levelHeight));
        level += int(merged.levels()) + 1;
    }
}

// Occupied horizontal intervals per level, for the incremental placement.
class Occupancy
{
public:
    explicit Occupancy(const Workspace &ws)
        : m_ws(ws)
    {
    }
    int levelOf(double y) const { return int(std::lround(y / m_ws.metrics.levelHeight)); }
    void add(int v)
    {
        const QPointF p = m_ws.positions[size_t(v)];
        const double half = m_ws.width(v) / 2;
        const int level = levelOf(p.y());
        Level &row = m_levels[level];
        const std::pair<double, double> interval(p.x() - half, p.x() + half);
        row.intervals.insert(std::upper_bound(row.intervals.begin(), row.intervals.end(), interval), interval);
        row.widest = std::max(row.widest, 2 * half);
        m_leftmost = std::min(m_leftmost, p.x() - half);
        m_rightmost = std::max(m_rightmost, p.x() + half);
        m_top = std::min(m_top, level);
        m_bottom = std::max(m_bottom, level);
    }
    bool empty() const { return m_levels.empty(); }
    double leftmost() const { return m_leftmost; }
    double width() const { return m_rightmost - m_leftmost; }
    int topLevel() const { return m_top; }
    int bottomLevel() const { return m_bottom; }

    // The smallest shift >= 0 that lets `contour`, its root at (x, level), overlap nothing.
    // Each level's intervals are sorted by start, so a level is searched from the first interval
    // that can reach the block (binary search) and only forward: the block only moves right, and
    // an interval it was moved past cannot overlap it again. O(levels × (log n + overlaps)) per
    // pass, instead of rescanning every interval after each move (minutes at 1,000 agents).
    double freeShift(const Contour &contour, double x, int level, double gap) const
    {
        double shift = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (size_t d = 0; d < contour.levels(); ++d) {
                const auto it = m_levels.find(level + int(d));
                if (it == m_levels.end())
                    continue;
                const Level &row = it->second;
                double l = x + shift + contour.left[d];
                double r = x + shift + contour.right[d];
                // An interval reaching past l - gap starts after l - gap - widest.
                auto k = std::lower_bound(row.intervals.begin(), row.intervals.end(),
                                          std::make_pair(l - gap - row.widest, -std::numeric_limits<double>::infinity()));
                for (; k != row.intervals.end() && k->first < r + gap; ++k) {
                    if (l < k->second + gap) {
                        shift = k->second + gap - (x + contour.left[d]);
                        l = x + shift + contour.left[d];
                        r = x + shift + contour.right[d];
                        moved = true;
                    }
                }
            }
        }
        return shift;
    }

private:
    const Workspace &m_ws;
    struct Level
    {
        std::vector<std::pair<double, double>> intervals; // [left, right] of placed nodes, by left
        double widest = 0;
    };
    std::map<int, Level> m_levels;
    double m_leftmost = std::numeric_limits<double>::infinity();
    double m_rightmost = -std::numeric_limits<double>::infinity();
    int m_top = std::numeric_limits<int>::max();
    int m_bottom = std::numeric_limits<int>::min();
};

// Where a new tree goes: right of the last tree of the lowest row of roots while that row is
// narrower than twice the forest is high (so a forest growing one agent at a time wraps into
// rows of about 2:1, like the full layout), else at the start of a new row below everything.
QPointF appendRootPosition(const Workspace &ws, int root, const Contour &block, const Occupancy &occupancy)
{
    if (occupancy.empty())
        return QPointF(-block.left[0], 0);
    const LayoutMetrics &m = ws.metrics;
    int rowLevel = std::numeric_limits<int>::min();
    double rowRight = 0;
    for (size_t v = 0; v < ws.input.nodes.size(); ++v) {
        const LayoutNode &n = ws.input.nodes[v];
        if (int(v) == root || !ws.placed[v] || (n.parent >= 0 && ws.input.nodes[size_t(n.parent)].visible))
            continue;
        const int level = occupancy.levelOf(ws.positions[v].y());
        const double right = ws.positions[v].x() + ws.width(int(v)) / 2;
        if (level > rowLevel) {
            rowLevel = level;
            rowRight = right;
        } else if (level == rowLevel) {
            rowRight = std::max(rowRight, right);
        }
    }
    constexpr double kMinRowWidth = 1200;
    const double height = (occupancy.bottomLevel() - occupancy.topLevel() + 1) * m.levelHeight;
    const double blockWidth = extent(block);
    if (rowLevel != std::numeric_limits<int>::min()
        && rowRight + m.treeGap + blockWidth - occupancy.leftmost() <= std::max(kMinRowWidth, 2 * height))
        return QPointF(rowRight + m.treeGap - block.left[0], rowLevel * m.levelHeight);
    return QPointF(occupancy.leftmost() - block.left[0], (occupancy.bottomLevel() + 2) * m.levelHeight);
}

// Where a new block (rooted at `root`, child of the placed `parent`) goes before collisions are
// resolved: right of its placed siblings, or — for a leaf among leaves — the next cell of
// their rows, wrapping like the full layout's grid.
QPointF appendPosition(const Workspace &ws, const std::vector<std::vector<int>> &visibleChildren, int parent, int root,
                       const Contour &block, const Occupancy &occupancy)
{
    const LayoutMetrics &m = ws.metrics;
    const QPointF p = ws.positions[size_t(parent)];
    const int childLevel = occupancy.levelOf(p.y()) + 1;
    std::map<int, std::vector<int>> rows; // level → placed siblings, by x
    bool siblingsAreLeaves = true;
    for (int s : visibleChildren[size_t(parent)]) {
        if (s == root || !ws.placed[size_t(s)])
            continue;
        rows[occupancy.levelOf(ws.positions[size_t(s)].y())].push_back(s);
        siblingsAreLeaves = siblingsAreLeaves && visibleChildren[size_t(s)].empty();
    }
    if (rows.empty())
        return QPointF(p.x(), childLevel * m.levelHeight);
    for (auto &[level, row] : rows)
        std::sort(row.begin(), row.end(), [&](int a, int b) { return ws.positions[size_t(a)].x() < ws.positions[size_t(b)].x(); });

    const std::vector<int> &firstRow = rows.begin()->second;
    const bool blockIsLeaf = block.levels() == 1;
    if (blockIsLeaf && siblingsAreLeaves) {
        const auto &[lastLevel, lastRow] = *rows.rbegin();
        const int capacity = std::max(m.gridThreshold, int(firstRow.size()));
        if (int(lastRow.size()) < capacity) {
            const int right = lastRow.back();
            double pitch = (ws.width(right) + ws.width(root)) / 2 + m.siblingGap;
            if (firstRow.size() >= 2)
                pitch = std::max(pitch, (ws.positions[size_t(firstRow.back())].x() - ws.positions[size_t(firstRow.front())].x())
                                            / double(firstRow.size() - 1));
            return QPointF(ws.positions[size_t(right)].x() + pitch, lastLevel * m.levelHeight);
        }
        return QPointF(ws.positions[size_t(firstRow.front())].x(), (lastLevel + 1) * m.levelHeight);
    }
    const int right = firstRow.back();
    const double gap = blockIsLeaf && siblingsAreLeaves ? m.siblingGap : m.subtreeGap;
    return QPointF(ws.positions[size_t(right)].x() + ws.width(right) / 2 + gap - block.left[0],
                   rows.begin()->first * m.levelHeight);
}

void incrementalLayout(Workspace &ws, const std::vector<std::vector<int>> &visibleChildren)
{
    const auto &nodes = ws.input.nodes;
    Occupancy occupancy(ws);
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].visible && nodes[i].pinned) {
            ws.positions[i] = nodes[i].position;
            ws.placed[i] = 1;
            occupancy.add(int(i));
        }
    }
    // Blocks in input order: the caller lists agents in arrival order, so earlier arrivals
    // claim the nearer places.
    for (size_t i = 0; i < nodes.size(); ++i) {
        const LayoutNode &n = nodes[i];
        if (!n.visible || n.pinned || (n.parent >= 0 && !nodes[size_t(n.parent)].pinned))
            continue;
        const int root = int(i);
        shapeSubtree(ws, root);
        const Contour block = std::move(ws.contours[i]);
        ws.contours[i] = Contour();
        const QPointF anchor = n.parent >= 0 ? appendPosition(ws, visibleChildren, n.parent, root, block, occupancy)
                                             : appendRootPosition(ws, root, block, occupancy);
        const double shift = occupancy.freeShift(block, anchor.x(), occupancy.levelOf(anchor.y()), ws.metrics.siblingGap);
        placeSubtree(ws, root, anchor + QPointF(shift, 0));
        for (int v : preOrder(ws, root))
            occupancy.add(v);
    }
}

} // namespace

LayoutResult computeLayout(const LayoutInput &input)
{
    QElapsedTimer timer;
    timer.start();
    const auto &nodes = input.nodes;
    Workspace ws(input);

    // Children lists: every visible child (for the incremental sibling search), and the ones
    // this layout arranges (all visible ones, or only the unpinned ones when incremental).
    std::vector<std::vector<int>> visibleChildren(nodes.size());
    std::vector<int> roots;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const LayoutNode &n = nodes[i];
        if (!n.visible)
            continue;
        if (n.parent < 0 || !nodes[size_t(n.parent)].visible)
            roots.push_back(int(i));
        else
            visibleChildren[size_t(n.parent)].push_back(int(i));
    }
    auto bySortKey = [&](int a, int b) {
        const int c = nodes[size_t(a)].sortKey.compare(nodes[size_t(b)].sortKey);
        return c != 0 ? c < 0 : a < b;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
        std::vector<int> &kids = ws.children[i];
        for (int k : visibleChildren[i])
            if (!input.incremental || !nodes[size_t(k)].pinned)
                kids.push_back(k);
        std::sort(kids.begin(), kids.end(), bySortKey);
    }
    std::sort(roots.begin(), roots.end(), bySortKey);

    if (input.incremental)
        incrementalLayout(ws, visibleChildren);
    else
        fullLayout(ws, roots);

    LayoutResult result;
    result.generation = input.generation;
    result.incremental = input.incremental;
    result.positions = std::move(ws.positions);
    result.placed = std::move(ws.placed);
    result.computeMs = double(timer.nsecsElapsed()) / 1e6;
    return result;
}

} // namespace mapi::ui
