#include "timeline/TimelineLanes.h"

#include "common/NaturalSort.h"
#include "model/SystemStore.h"

#include <QCoreApplication>

#include <algorithm>
#include <functional>

namespace mapi::ui {

namespace {

// The lane of agent row `a`.
LaneRow agentLane(const std::vector<Agent> &agents, int a, int depth)
{
    LaneRow row;
    row.kind = LaneRow::Kind::Agent;
    row.id = agents[size_t(a)].id;
    row.key = QStringLiteral("agent:") + row.id;
    row.label = shownName(agents[size_t(a)]);
    row.agentRow = a;
    row.depth = depth;
    return row;
}

// A group's header row (a scope, or the agents in none), collapsed when `collapsedKeys` says so.
LaneRow groupLane(const QString &key, const QString &scopeId, const QString &label, int depth,
                  const QSet<QString> &collapsedKeys)
{
    LaneRow row;
    row.kind = LaneRow::Kind::Group;
    row.key = key;
    row.id = scopeId;
    row.label = label;
    row.depth = depth;
    row.expandable = true;
    row.collapsed = collapsedKeys.contains(key);
    return row;
}

// Rows (agents or scopes) in the natural order of their labels; labels that sort alike by id, so
// that the order is stable. The labels' sort keys are made once per layout (`keys`, by row): a
// natural comparison per step of a sort of 10,000 agents cost more than the rest of the layout.
template<typename Rows>
auto byLabelThenId(const Rows &rows, const std::vector<QString> &keys)
{
    return [&rows, &keys](int a, int b) {
        const int order = QStringView(keys[size_t(a)]).compare(QStringView(keys[size_t(b)]));
        return order != 0 ? order < 0 : rows[size_t(a)].id < rows[size_t(b)].id;
    };
}

template<typename Rows>
std::vector<QString> labelKeys(const Rows &rows)
{
    std::vector<QString> keys;
    keys.reserve(rows.size());
    for (const auto &row : rows)
        keys.push_back(naturalSortKey(shownName(row)));
    return keys;
}

} // namespace

QString TimelineLanes::agentShape(const SystemStore &store, int agentRow)
{
    const Agent &a = store.agents()[size_t(agentRow)];
    return a.name + QLatin1Char('\n') + a.parentId + QLatin1Char('\n') + toStringList(a.scopes).join(QLatin1Char(','));
}

QString TimelineLanes::scopeShape(const SystemStore &store, int scopeRow)
{
    const Scope &s = store.scopes()[size_t(scopeRow)];
    return s.name + QLatin1Char('\n') + s.parentId + (s.deleted ? QStringLiteral("\nx") : QString());
}

void TimelineLanes::clear()
{
    m_rows.clear();
    m_rowOfAgent.clear();
    m_subtrees.clear();
    m_contentHeight = 0;
}

void TimelineLanes::rebuild(const SystemStore &store, LaneGrouping grouping, const QSet<QString> &collapsedKeys)
{
    clear();
    m_rowOfAgent.assign(store.agents().size(), -1);
    if (grouping == LaneGrouping::Scope)
        buildByScope(store, collapsedKeys);
    else
        buildBySubtree(store, collapsedKeys);
}

void TimelineLanes::addRow(LaneRow row, std::vector<int> subtree)
{
    const int index = int(m_rows.size());
    row.top = m_contentHeight;
    row.height = row.kind == LaneRow::Kind::Group && !row.collapsed ? kGroupHeaderHeight : kLaneHeight;
    if (row.collapsed)
        row.members = subtree;
    else if (row.agentRow >= 0)
        row.members = {row.agentRow};
    for (const int agent : row.members)
        m_rowOfAgent[size_t(agent)] = index;
    m_contentHeight += row.height;
    m_rows.push_back(std::move(row));
    m_subtrees.push_back(std::move(subtree));
}

void TimelineLanes::buildByScope(const SystemStore &store, const QSet<QString> &collapsedKeys)
{
    const auto &scopes = store.scopes();
    const auto &agents = store.agents();
    auto isLive = [&](int scopeRow) { return scopeRow >= 0 && !scopes[size_t(scopeRow)].deleted; };

    // Depth of each live scope in the scope tree (roots 0); a parent cycle stops the walk.
    std::vector<int> depth(scopes.size(), 0);
    std::vector<int> parentOf(scopes.size(), -1);
    for (int s = 0; s < int(scopes.size()); ++s) {
        const int parent = store.scopeRow(scopes[size_t(s)].parentId);
        if (isLive(s) && isLive(parent) && parent != s)
            parentOf[size_t(s)] = parent;
    }
    for (int s = 0; s < int(scopes.size()); ++s) {
        int d = 0;
        for (int p = parentOf[size_t(s)]; p >= 0 && d <= int(scopes.size()); p = parentOf[size_t(p)])
            ++d;
        depth[size_t(s)] = d;
    }
    const std::vector<QString> scopeKeys = labelKeys(scopes);
    const std::vector<QString> agentKeys = labelKeys(agents);
    const auto scopeBefore = byLabelThenId(scopes, scopeKeys);
    const auto agentBefore = byLabelThenId(agents, agentKeys);

    // Each agent in its deepest live scope.
    std::vector<std::vector<int>> agentsIn(scopes.size());
    std::vector<int> unscoped;
    for (int a = 0; a < int(agents.size()); ++a) {
        int best = -1;
        for (const QString &scopeId : agents[size_t(a)].scopes) {
            const int s = store.scopeRow(scopeId);
            if (!isLive(s))
                continue;
            if (best < 0 || depth[size_t(s)] > depth[size_t(best)]
                || (depth[size_t(s)] == depth[size_t(best)] && scopeBefore(s, best)))
                best = s;
        }
        (best >= 0 ? agentsIn[size_t(best)] : unscoped).push_back(a);
    }

    std::vector<std::vector<int>> childScopes(scopes.size());
    std::vector<int> rootScopes;
    for (int s = 0; s < int(scopes.size()); ++s) {
        if (!isLive(s))
            continue;
        (parentOf[size_t(s)] >= 0 ? childScopes[size_t(parentOf[size_t(s)])] : rootScopes).push_back(s);
    }
    // Agents below each scope (its own plus its descendants'); a cycle-free walk from the roots.
    std::vector<std::vector<int>> subtreeAgents(scopes.size());
    std::function<void(int)> collect = [&](int s) {
        std::vector<int> &all = subtreeAgents[size_t(s)];
        all = agentsIn[size_t(s)];
        for (const int child : childScopes[size_t(s)]) {
            collect(child);
            all.insert(all.end(), subtreeAgents[size_t(child)].begin(), subtreeAgents[size_t(child)].end());
        }
    };
    for (const int root : rootScopes)
        collect(root);

    auto emitAgents = [&](std::vector<int> list, int level) {
        std::sort(list.begin(), list.end(), agentBefore);
        for (const int a : list)
            addRow(agentLane(agents, a, level), {a});
    };
    std::function<void(int, int)> emitScope = [&](int s, int level) {
        if (subtreeAgents[size_t(s)].empty())
            return;
        const Scope &scope = scopes[size_t(s)];
        LaneRow row = groupLane(QStringLiteral("scope:") + scope.id, scope.id, shownName(scope), level, collapsedKeys);
        const bool collapsed = row.collapsed;
        addRow(std::move(row), subtreeAgents[size_t(s)]);
        if (collapsed)
            return;
        emitAgents(agentsIn[size_t(s)], level + 1);
        std::vector<int> children = childScopes[size_t(s)];
        std::sort(children.begin(), children.end(), scopeBefore);
        for (const int child : children)
            emitScope(child, level + 1);
    };
    std::sort(rootScopes.begin(), rootScopes.end(), scopeBefore);
    for (const int root : rootScopes)
        emitScope(root, 0);

    if (!unscoped.empty()) {
        LaneRow row = groupLane(QStringLiteral("noscope"), QString(),
                                QCoreApplication::translate("TimelineLanes", "No scope"), 0, collapsedKeys);
        const bool collapsed = row.collapsed;
        addRow(std::move(row), unscoped);
        if (!collapsed)
            emitAgents(unscoped, 1);
    }
}

void TimelineLanes::buildBySubtree(const SystemStore &store, const QSet<QString> &collapsedKeys)
{
    const auto &agents = store.agents();
    const std::vector<QString> agentKeys = labelKeys(agents);
    const auto agentBefore = byLabelThenId(agents, agentKeys);
    std::vector<std::vector<int>> children(agents.size());
    std::vector<int> roots;
    for (int a = 0; a < int(agents.size()); ++a) {
        const int parent = store.agentRow(agents[size_t(a)].parentId);
        (parent >= 0 && parent != a ? children[size_t(parent)] : roots).push_back(a);
    }
    for (auto &list : children)
        std::sort(list.begin(), list.end(), agentBefore);
    std::sort(roots.begin(), roots.end(), agentBefore);

    std::vector<bool> placed(agents.size(), false);
    std::function<std::vector<int>(int)> subtreeOf = [&](int a) {
        std::vector<int> all{a};
        for (const int child : children[size_t(a)])
            if (!placed[size_t(child)]) {
                const std::vector<int> below = subtreeOf(child);
                all.insert(all.end(), below.begin(), below.end());
            }
        return all;
    };
    std::function<void(int, int)> emitAgent = [&](int a, int level) {
        if (placed[size_t(a)])
            return;
        placed[size_t(a)] = true;
        LaneRow row = agentLane(agents, a, level);
        row.expandable = !children[size_t(a)].empty();
        row.collapsed = row.expandable && collapsedKeys.contains(row.key);
        const bool collapsed = row.collapsed;
        addRow(std::move(row), subtreeOf(a));
        if (collapsed) {
            for (const int member : m_subtrees.back())
                placed[size_t(member)] = true;
            return;
        }
        for (const int child : children[size_t(a)])
            emitAgent(child, level + 1);
    };
    for (const int root : roots)
        emitAgent(root, 0);
    // Agents caught in a parent cycle have no root: they start their own trees.
    for (int a = 0; a < int(agents.size()); ++a)
        emitAgent(a, 0);
}

int TimelineLanes::rowOfAgent(int agentRow) const
{
    return agentRow >= 0 && agentRow < int(m_rowOfAgent.size()) ? m_rowOfAgent[size_t(agentRow)] : -1;
}

int TimelineLanes::firstRowEndingAfter(int contentY) const
{
    const auto at = std::upper_bound(m_rows.begin(), m_rows.end(), contentY,
                                     [](int y, const LaneRow &row) { return y < row.top + row.height; });
    return int(at - m_rows.begin());
}

int TimelineLanes::rowAt(int contentY) const
{
    if (contentY < 0)
        return -1;
    const int index = firstRowEndingAfter(contentY);
    return index < int(m_rows.size()) ? index : -1;
}

int TimelineLanes::rowWithKey(const QString &key) const
{
    for (int i = 0; i < int(m_rows.size()); ++i)
        if (m_rows[size_t(i)].key == key)
            return i;
    return -1;
}

QStringList TimelineLanes::agentIdsUnder(const SystemStore &store, int index) const
{
    QStringList ids;
    if (index < 0 || index >= int(m_subtrees.size()))
        return ids;
    for (const int agent : m_subtrees[size_t(index)])
        ids << store.agents()[size_t(agent)].id;
    return ids;
}

int TimelineLanes::groupCount() const
{
    return int(std::count_if(m_rows.begin(), m_rows.end(), [](const LaneRow &row) { return row.expandable; }));
}

} // namespace mapi::ui
