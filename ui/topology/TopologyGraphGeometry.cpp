// TopologyGraph's geometry (TopologyGraph.h): each node's rectangle, the scope boxes around them,
// the bounds of the whole picture at rest, and the tree lines from parents to children. Split
// from TopologyGraph.cpp (the model side: sync, structure, traffic) by concern.
#include "topology/TopologyGraph.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mapi::ui {

QRectF TopologyGraph::nodeBounds(int row, bool atRest) const
{
    const TopologyNode &n = m_nodes[size_t(row)];
    const QPointF at = atRest ? n.target : n.position;
    const double half = std::max(n.width / 2, n.radius);
    return QRectF(at.x() - half, at.y() - n.radius - 4, 2 * half, 2 * n.radius + 6 + kLabelBlockHeight);
}

std::vector<ScopeBoxOutput> TopologyGraph::scopeBoxes(bool atRest) const
{
    // Around the members shown (or the collapsed nodes standing for them), in parts that cover no
    // other scope's agent (ScopeBoxes.h), enclosing nested scopes' parts.
    std::vector<QRectF> nodes(m_nodes.size());
    for (size_t v = 0; v < m_nodes.size(); ++v)
        if (!m_nodes[v].hidden && m_nodes[v].positioned)
            nodes[v] = nodeBounds(int(v), atRest);
    std::vector<ScopeBoxInput> scopes(m_scopes.size());
    for (size_t s = 0; s < m_scopes.size(); ++s) {
        const ScopeGroup &g = m_scopes[s];
        ScopeBoxInput &in = scopes[s];
        in.parent = g.parent;
        in.depth = g.depth;
        in.deleted = g.deleted;
        in.members.reserve(g.members.size());
        for (int member : g.members)
            in.members.push_back(representative(member));
    }
    return computeScopeBoxes(nodes, scopes);
}

QRectF TopologyGraph::restingBounds() const
{
    QRectF bounds;
    for (size_t v = 0; v < m_nodes.size(); ++v)
        if (!m_nodes[v].hidden && m_nodes[v].positioned)
            bounds |= nodeBounds(int(v), true);
    for (const ScopeBoxOutput &scope : scopeBoxes(true))
        bounds |= scope.box;
    return bounds;
}

void TopologyGraph::addTreeLine(const TreeLine &line, bool coarseToo)
{
    m_treeLines.push_back(line);
    if (coarseToo)
        m_coarseTreeLines.push_back(line);
}

void TopologyGraph::updateGeometry()
{
    m_treeLines.clear();
    m_coarseTreeLines.clear();

    // Left edge of each shown subtree (post-order), for the trunks of families in several rows.
    std::vector<int> order;
    for (size_t v = 0; v < m_nodes.size(); ++v)
        if (m_nodes[v].parent < 0 && m_nodes[v].positioned)
            order.push_back(int(v));
    for (size_t i = 0; i < order.size(); ++i)
        for (int c : m_nodes[size_t(order[i])].children)
            if (!m_nodes[size_t(c)].hidden && m_nodes[size_t(c)].positioned)
                order.push_back(c);
    std::vector<double> subtreeLeft(m_nodes.size(), 0.0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const TopologyNode &n = m_nodes[size_t(*it)];
        double left = n.position.x() - n.width / 2;
        for (int c : n.children)
            if (!m_nodes[size_t(c)].hidden && m_nodes[size_t(c)].positioned)
                left = std::min(left, subtreeLeft[size_t(c)]);
        subtreeLeft[size_t(*it)] = left;
    }

    // Detailed: the first row of children hangs from a bus halfway down; lower rows (a grid
    // of leaves, or wrapped subtrees) from buses half a level above them, joined by a trunk
    // left of the whole family, so no line crosses a node or a label.
    const double half = m_metrics.levelHeight / 2;
    for (int v : order) {
        const TopologyNode &p = m_nodes[size_t(v)];
        if (p.collapsed)
            continue;
        double firstRowY = std::numeric_limits<double>::infinity(), lastRowY = -firstRowY;
        double familyLeft = std::numeric_limits<double>::infinity();
        for (int c : p.children) {
            const TopologyNode &child = m_nodes[size_t(c)];
            if (child.hidden || !child.positioned)
                continue;
            if (child.position.y() <= p.position.y() + 1) {
                addTreeLine({QLineF(p.position, child.position), c}, true); // stale after a re-parenting
                continue;
            }
            firstRowY = std::min(firstRowY, child.position.y());
            lastRowY = std::max(lastRowY, child.position.y());
            familyLeft = std::min(familyLeft, subtreeLeft[size_t(c)]);
        }
        if (std::isinf(firstRowY))
            continue;
        const double busY = p.position.y() + (firstRowY - p.position.y()) / 2;
        const bool rows = lastRowY > firstRowY + 1;
        const double trunkX = familyLeft - m_metrics.siblingGap / 2;
        struct Bus
        {
            double y, left, right;
        };
        std::vector<Bus> buses; // one per row of children: a handful
        for (int c : p.children) {
            const TopologyNode &child = m_nodes[size_t(c)];
            if (child.hidden || !child.positioned || child.position.y() <= p.position.y() + 1)
                continue;
            const bool first = child.position.y() <= firstRowY + 1;
            const double y = first ? busY : child.position.y() - half;
            const bool leaf = std::none_of(child.children.begin(), child.children.end(),
                                           [&](int g) { return !m_nodes[size_t(g)].hidden && m_nodes[size_t(g)].positioned; });
            addTreeLine({QLineF(child.position.x(), y, child.position.x(), child.position.y()), c}, !leaf);
            auto bus = std::find_if(buses.begin(), buses.end(), [&](const Bus &b) { return std::abs(b.y - y) < 1; });
            if (bus == buses.end()) {
                const double start = first && !rows ? p.position.x() : (first ? std::min(trunkX, p.position.x()) : trunkX);
                bus = buses.insert(buses.end(), Bus{y, start, start});
            }
            bus->left = std::min(bus->left, child.position.x());
            bus->right = std::max(bus->right, child.position.x());
        }
        addTreeLine({QLineF(p.position.x(), p.position.y(), p.position.x(), busY), v}, true);
        for (const Bus &bus : buses)
            addTreeLine({QLineF(bus.left, bus.y, bus.right, bus.y), v}, true);
        if (rows)
            addTreeLine({QLineF(trunkX, busY, trunkX, lastRowY - half), v}, true);
    }

    std::vector<ScopeBoxOutput> boxes = scopeBoxes(false);
    for (size_t s = 0; s < boxes.size(); ++s) {
        m_scopes[s].box = boxes[s].box;
        m_scopes[s].parts = std::move(boxes[s].parts);
    }
}

} // namespace mapi::ui
