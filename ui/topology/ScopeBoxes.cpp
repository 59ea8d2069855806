#include "ScopeBoxes.h"

#include <QtMath>

#include <algorithm>
#include <map>

namespace mapi::ui {

namespace {

// The shown nodes by row (the y of their centre, rounded: the layout puts a level on one y), each
// row sorted by the x of the centre: "which nodes lie in this rectangle" without a full scan.
class NodeRows
{
public:
    explicit NodeRows(const std::vector<QRectF> &nodes)
        : m_nodes(nodes)
    {
        for (int v = 0; v < int(nodes.size()); ++v) {
            if (nodes[size_t(v)].isNull())
                continue;
            const QPointF c = nodes[size_t(v)].center();
            m_rows[qRound(c.y())].push_back({c.x(), v});
            m_halfWidth = std::max(m_halfWidth, nodes[size_t(v)].width() / 2);
            m_halfHeight = std::max(m_halfHeight, nodes[size_t(v)].height() / 2);
        }
        for (auto &[y, row] : m_rows)
            std::sort(row.begin(), row.end(), [](const Entry &a, const Entry &b) { return a.x < b.x; });
    }

    // True when no node outside `mine` (mine[v] == stamp) intersects `rect`.
    bool holdsOnly(const QRectF &rect, const std::vector<int> &mine, int stamp) const
    {
        const auto first = m_rows.lower_bound(qFloor(rect.top() - m_halfHeight));
        const auto last = m_rows.upper_bound(qCeil(rect.bottom() + m_halfHeight));
        for (auto row = first; row != last; ++row) {
            const std::vector<Entry> &entries = row->second;
            auto it = std::lower_bound(entries.begin(), entries.end(), rect.left() - m_halfWidth,
                                       [](const Entry &e, double x) { return e.x < x; });
            for (; it != entries.end() && it->x <= rect.right() + m_halfWidth; ++it)
                if (mine[size_t(it->node)] != stamp && m_nodes[size_t(it->node)].intersects(rect))
                    return false;
        }
        return true;
    }

    // holdsOnly(grown) for a `grown` that contains `part`, already known to hold only `mine`:
    // only the strips added around it are looked at (a part grows along a row and then one row
    // down, so a scope's parts cost about one look at each of its nodes).
    bool growthHoldsOnly(const QRectF &part, const QRectF &grown, const std::vector<int> &mine, int stamp) const
    {
        const QRectF strips[] = {
            QRectF(QPointF(grown.left(), grown.top()), QPointF(grown.right(), part.top())),       // above
            QRectF(QPointF(grown.left(), part.bottom()), QPointF(grown.right(), grown.bottom())), // below
            QRectF(QPointF(grown.left(), part.top()), QPointF(part.left(), part.bottom())),       // left
            QRectF(QPointF(part.right(), part.top()), QPointF(grown.right(), part.bottom())),     // right
        };
        for (const QRectF &strip : strips)
            if (strip.width() > 0 && strip.height() > 0 && !holdsOnly(strip, mine, stamp))
                return false;
        return true;
    }

private:
    struct Entry
    {
        double x;
        int node;
    };
    const std::vector<QRectF> &m_nodes;
    std::map<int, std::vector<Entry>> m_rows;
    double m_halfWidth = 0, m_halfHeight = 0;
};

} // namespace

std::vector<ScopeBoxOutput> computeScopeBoxes(const std::vector<QRectF> &nodes, const std::vector<ScopeBoxInput> &scopes,
                                              const ScopeBoxMetrics &metrics)
{
    std::vector<ScopeBoxOutput> out(scopes.size());
    const NodeRows rows(nodes);
    // Deepest first: a scope's parts enclose its nested scopes' parts, which must exist by then.
    std::vector<int> order(scopes.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scopes[size_t(a)].depth > scopes[size_t(b)].depth; });
    std::vector<std::vector<int>> children(scopes.size());
    for (size_t s = 0; s < scopes.size(); ++s)
        if (const int p = scopes[s].parent; p >= 0 && size_t(p) < scopes.size() && p != int(s))
            children[size_t(p)].push_back(int(s));

    // mine[v] == stamp: node v is the scope's (its own agent or a nested scope's). A fresh stamp
    // per scope: nothing to clear between scopes.
    std::vector<int> mine(nodes.size(), -1);
    std::vector<std::vector<int>> allMembers(scopes.size()); // own and nested, for the enclosing scope
    for (const int s : order) {
        const ScopeBoxInput &scope = scopes[size_t(s)];
        if (scope.deleted)
            continue;
        std::vector<int> &all = allMembers[size_t(s)];
        for (const int v : scope.members)
            if (v >= 0 && size_t(v) < nodes.size() && !nodes[size_t(v)].isNull())
                all.push_back(v);
        for (const int c : children[size_t(s)])
            all.insert(all.end(), allMembers[size_t(c)].begin(), allMembers[size_t(c)].end());
        for (const int v : all)
            mine[size_t(v)] = s;

        // What the parts must hold: its own agents' rectangles and its nested scopes' parts,
        // from the top left, so that a part grows along rows and then down.
        std::vector<QRectF> items;
        for (const int v : scope.members)
            if (v >= 0 && size_t(v) < nodes.size() && !nodes[size_t(v)].isNull())
                items.push_back(nodes[size_t(v)]);
        for (const int c : children[size_t(s)])
            items.insert(items.end(), out[size_t(c)].parts.begin(), out[size_t(c)].parts.end());
        std::sort(items.begin(), items.end(), [](const QRectF &a, const QRectF &b) {
            return a.top() != b.top() ? a.top() < b.top() : a.left() < b.left();
        });
        // Each item joins the newest part it can grow into (the newest 16 are tried: a scope in
        // many pieces costs no more), else starts a part of its own, checked alone.
        std::vector<QRectF> parts;
        for (const QRectF &item : items) {
            bool merged = false;
            int tried = 0;
            for (auto part = parts.rbegin(); part != parts.rend() && !merged && tried < 16; ++part, ++tried) {
                if (part->contains(item)) {
                    merged = true;
                } else if (const QRectF grown = part->united(item); rows.growthHoldsOnly(*part, grown, mine, s)) {
                    *part = grown;
                    merged = true;
                }
            }
            if (!merged)
                parts.push_back(item);
        }
        ScopeBoxOutput &result = out[size_t(s)];
        // The padding and label band as drawn, where they cover no other agent; less where they
        // would (rows are close: a nested scope's band can reach the labels of the row above).
        for (QRectF &part : parts) {
            for (const double share : {1.0, 0.5, 0.2, 0.0}) {
                const double side = metrics.pad * share, top = (metrics.pad + metrics.labelBand) * share;
                const QRectF padded = part.adjusted(-side, -top, side, side);
                if (share == 0.0 || rows.holdsOnly(padded, mine, s)) {
                    part = padded;
                    break;
                }
            }
            result.box |= part;
        }
        result.parts = std::move(parts);
    }
    return out;
}

} // namespace mapi::ui
