#include "topology/TopologyGraph.h"

#include "common/NaturalSort.h"
#include "common/VectorState.h"
#include "map/Federation.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QMap>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mapi::ui {

namespace {

quint64 trafficKey(int from, int to, int scope)
{
    const quint32 target = to >= 0 ? quint32(to) : (0x80000000u | quint32(scope));
    return (quint64(quint32(from)) << 32) | target;
}

// Merges `b` into `a`: weights are brought to the newer of the two times before adding.
void mergeTraffic(TrafficEdge &a, const TrafficEdge &b)
{
    const double tau = TopologyGraph::kTrafficTimeConstantMs;
    const qint64 last = std::max(a.lastMs, b.lastMs);
    a.weight = a.weight * std::exp(double(a.lastMs - last) / tau) + b.weight * std::exp(double(b.lastMs - last) / tau);
    a.lastMs = last;
    a.total += b.total;
    a.latestMessage = std::max(a.latestMessage, b.latestMessage);
    a.rankKey = std::numeric_limits<double>::quiet_NaN();
}

} // namespace

void TopologyGraph::clear()
{
    m_nodes.clear();
    m_rowById.clear();
    m_representative.clear();
    m_scopes.clear();
    m_storeScopes = 0;
    m_traffic.clear();
    m_edgesFrom.clear();
    m_agentRows.clear();
    m_merged.clear();
    m_rankOrder.clear();
    m_rankKeys.clear();
    m_rankChanged.clear();
    m_inRankedTop.clear();
    m_rankPosition.clear();
    m_rankedDirty = true;
    m_rankedGrown = false;
    m_treeLines.clear();
    m_coarseTreeLines.clear();
}

QFont TopologyGraph::labelFont() const
{
    QFont font = QGuiApplication::font();
    font.setPixelSize(int(kLabelPixelSize));
    return font;
}

TopologyGraph::SyncResult TopologyGraph::syncAll(const SystemStore &store)
{
    clear();
    ChangeSet everything;
    if (!store.agents().empty())
        everything.firstNewAgentRow = 0;
    if (!store.scopes().empty())
        everything.firstNewScopeRow = 0;
    if (!store.messages().empty())
        everything.firstNewMessage = 0;
    return sync(store, everything);
}

TopologyGraph::SyncResult TopologyGraph::sync(const SystemStore &store, const ChangeSet &changes)
{
    SyncResult result;
    const std::vector<Agent> &agents = store.agents();
    if (agents.size() < m_nodes.size()) // only a reset shrinks the store, and it is handled before
        clear();
    const QFontMetricsF metrics(labelFont());

    const size_t knownNodes = m_nodes.size();
    if (agents.size() > knownNodes) {
        m_nodes.resize(agents.size());
        m_representative.resize(agents.size());
        for (size_t row = knownNodes; row < agents.size(); ++row) {
            m_representative[row] = int(row);
            updateNode(int(row), agents[row], metrics, result);
        }
        result.newNodes = result.structure = true;
    }
    for (int row : changes.agentRows)
        if (size_t(row) < knownNodes)
            updateNode(row, agents[size_t(row)], metrics, result);

    const size_t knownScopes = m_storeScopes;
    if (store.scopes().size() > knownScopes) {
        m_scopes.resize(knownScopes); // the systems' groups go (rebuildStructure makes them again): new rows start fresh
        m_scopes.resize(store.scopes().size());
        m_storeScopes = store.scopes().size();
        for (size_t row = knownScopes; row < store.scopes().size(); ++row)
            updateScope(int(row), store);
        result.scopes = true;
    }
    for (int row : changes.scopeRows) {
        if (size_t(row) < knownScopes) {
            updateScope(row, store);
            result.scopes = true;
        }
    }
    if (result.structure || result.scopes)
        rebuildStructure();
    if (changes.firstNewMessage >= 0 && size_t(changes.firstNewMessage) < store.messages().size()) {
        addMessages(store, changes.firstNewMessage);
        result.traffic = true;
    }
    return result;
}

void TopologyGraph::updateNode(int row, const Agent &agent, const QFontMetricsF &metrics, SyncResult &result)
{
    TopologyNode &n = m_nodes[size_t(row)];
    const bool newId = n.id != agent.id;
    if (newId) {
        n.id = agent.id;
        m_rowById.insert(agent.id, row);
        result.names = true;
    }
    if (newId || n.label.isEmpty() || n.name != agent.name) { // the shown name is the id when there is no name
        n.name = agent.name;
        n.label = metrics.elidedText(shownName(agent), Qt::ElideMiddle, kMaxLabelWidth);
        n.labelWidth = metrics.horizontalAdvance(n.label);
        n.nameKey = naturalSortKey(shownName(n));
        n.sortKeyStale = true;
        result.names = true;
    }
    n.role = agent.role;
    n.shape = shapeForRole(agent.role);
    n.radius = shapeRadius(n.shape);
    n.width = std::max(2 * n.radius + 6, n.labelWidth);
    n.state = agent.state;
    n.health = agent.health;
    n.badge = badgeForState(agent.state, agent.health);
    // Its system (federation) comes with its description: read when the agent is new or its
    // placeholder state flips, not at every change of a busy agent (this runs per changed row).
    if (newId || n.placeholder != agent.placeholder) {
        if (QString system = federatedOrigin(agent.id, agent.metadata, agent.placeholder); system != n.system) {
            n.system = std::move(system);
            result.scopes = true; // its system's group
        }
    }
    n.placeholder = agent.placeholder;
    if (n.departed != agent.unregistered) {
        n.departed = agent.unregistered;
        result.structure = result.structure || m_hideDeparted; // a departed subtree may go, or come back
    }
    if (n.parentId != agent.parentId) {
        n.parentId = agent.parentId;
        result.structure = true;
    }
}

void TopologyGraph::updateScope(int row, const SystemStore &store)
{
    const Scope &s = store.scopes()[size_t(row)];
    ScopeGroup &g = m_scopes[size_t(row)];
    g.id = s.id;
    if (const QString name = shownName(s); g.nameKey.isEmpty() || name != g.name) {
        // A renamed scope's members take the new name into their order keys; a new scope's
        // members do anyway (their group changes).
        if (!g.nameKey.isEmpty())
            m_scopeNamesChanged = true;
        g.name = name;
        g.nameKey = naturalSortKey(name);
    }
    g.placeholder = s.placeholder;
    g.deleted = s.deleted;
    g.storeParent = s.parentId.isEmpty() ? -1 : store.scopeRow(s.parentId);
    g.parent = g.storeParent; // a scope of another system without one: its system's group (groupOtherSystems)
    g.system = federatedOrigin(s.id, s.metadata, true); // its metadata, else its address (B:scope:…)
    g.members.clear();
    for (const QString &member : s.members)
        if (const int agentRow = store.agentRow(member); agentRow >= 0)
            g.members.push_back(agentRow);
}

void TopologyGraph::addMessages(const SystemStore &store, int firstRow)
{
    const auto &messages = store.messages();
    auto add = [&](int from, int to, int scope, qint64 t, int messageRow) {
        if (size_t(from) >= m_edgesFrom.size())
            m_edgesFrom.resize(m_nodes.size());
        QHash<int, int> &edges = m_edgesFrom[size_t(from)];
        const int target = to >= 0 ? to : ~scope;
        int index = edges.value(target, -1);
        if (index < 0) {
            index = int(m_traffic.size());
            edges.insert(target, index);
            TrafficEdge e;
            e.from = from;
            e.to = to;
            e.scope = scope;
            e.lastMs = t;
            m_traffic.push_back(e);
            m_rankChanged.push_back(index);
        }
        TrafficEdge &e = m_traffic[size_t(index)];
        if (!std::isnan(e.rankKey))
            m_rankChanged.push_back(index); // NaN: in the list already
        if (t >= e.lastMs) {
            e.weight = e.weight * std::exp(double(e.lastMs - t) / kTrafficTimeConstantMs) + 1;
            e.lastMs = t;
        } else {
            e.weight += std::exp(double(t - e.lastMs) / kTrafficTimeConstantMs);
        }
        ++e.total;
        e.latestMessage = std::max(e.latestMessage, messageRow);
        e.rankKey = std::numeric_limits<double>::quiet_NaN();
    };
    for (size_t row = std::max(size_t(firstRow), messages.firstRow()); row < messages.size(); ++row) {
        const int from = m_agentRows.row(store, messages.fromAgentNameRow(row));
        if (from < 0)
            continue;
        const qint64 timeMs = messages.timestampMs(row);
        const int recipients = messages.recipientCount(row);
        for (int i = 0; i < recipients; ++i)
            if (const int to = m_agentRows.row(store, messages.recipientNameRow(row, i)); to >= 0 && to != from)
                add(from, to, -1, timeMs, int(row));
        if (recipients == 0 && !messages.scopeId(row).isEmpty())
            if (const int scope = store.scopeRow(messages.scopeId(row)); scope >= 0)
                add(from, -1, scope, timeMs, int(row));
    }
    m_rankedGrown = true;
}

// Another system's agents and scopes (federation) in one group per system, drawn as a scope's box
// is: the store's scopes stay as the server has them, the groups come after them, in the order of
// the systems' names. A scope of another system without a parent of its own sits in its group.
void TopologyGraph::groupOtherSystems()
{
    m_scopes.resize(m_storeScopes);
    QMap<QString, int> groupOf;
    for (const TopologyNode &n : m_nodes)
        if (!n.system.isEmpty())
            groupOf.insert(n.system, -1);
    for (size_t s = 0; s < m_storeScopes; ++s)
        if (!m_scopes[s].system.isEmpty())
            groupOf.insert(m_scopes[s].system, -1);
    for (auto it = groupOf.begin(); it != groupOf.end(); ++it) {
        it.value() = int(m_scopes.size());
        ScopeGroup g;
        g.id = QStringLiteral("system:") + it.key();
        g.name = QCoreApplication::translate("TopologyGraph", "system %1").arg(it.key());
        g.nameKey = naturalSortKey(g.name);
        g.system = it.key();
        g.systemGroup = true;
        g.placeholder = false;
        m_scopes.push_back(std::move(g));
    }
    for (size_t v = 0; v < m_nodes.size(); ++v)
        if (!m_nodes[v].system.isEmpty())
            m_scopes[size_t(groupOf.value(m_nodes[v].system))].members.push_back(int(v));
    for (size_t s = 0; s < m_storeScopes; ++s) {
        ScopeGroup &g = m_scopes[s];
        g.parent = g.storeParent >= 0 || g.system.isEmpty() ? g.storeParent : groupOf.value(g.system);
    }
}

void TopologyGraph::rebuildStructure()
{
    const int count = int(m_nodes.size());
    for (TopologyNode &n : m_nodes) {
        n.children.clear();
        n.parent = n.parentId.isEmpty() ? -1 : row(n.parentId);
    }
    for (int v = 0; v < count; ++v)
        if (m_nodes[size_t(v)].parent == v)
            m_nodes[size_t(v)].parent = -1;

    // A buggy server can send parent cycles: the node where a walk up meets its own path
    // becomes a root, so every node has a finite chain of ancestors.
    std::vector<char> mark(size_t(count), 0); // 0 new, 1 on the current walk, 2 done
    std::vector<int> walk;
    for (int v = 0; v < count; ++v) {
        walk.clear();
        int u = v;
        while (u >= 0 && mark[size_t(u)] == 0) {
            mark[size_t(u)] = 1;
            walk.push_back(u);
            u = m_nodes[size_t(u)].parent;
        }
        if (u >= 0 && mark[size_t(u)] == 1)
            m_nodes[size_t(u)].parent = -1;
        for (int w : walk)
            mark[size_t(w)] = 2;
    }
    for (int v = 0; v < count; ++v)
        if (const int p = m_nodes[size_t(v)].parent; p >= 0)
            m_nodes[size_t(p)].children.push_back(v);

    // Scope depths (cycles cut the same way, by a bounded walk) and each agent's deepest scope.
    groupOtherSystems();
    const int scopeCount = int(m_scopes.size());
    for (ScopeGroup &s : m_scopes) {
        s.depth = 0;
        for (int p = s.parent; p >= 0 && s.depth <= scopeCount; p = m_scopes[size_t(p)].parent)
            ++s.depth;
        if (s.depth > scopeCount)
            s.parent = -1;
    }
    std::vector<int> deepestScope(size_t(count), -1);
    for (int s = 0; s < scopeCount; ++s) {
        const ScopeGroup &g = m_scopes[size_t(s)];
        if (g.deleted)
            continue;
        for (int member : g.members) {
            int &best = deepestScope[size_t(member)];
            if (best < 0 || g.depth > m_scopes[size_t(best)].depth
                || (g.depth == m_scopes[size_t(best)].depth && g.name < m_scopes[size_t(best)].name))
                best = s;
        }
    }
    for (int v = 0; v < count; ++v) {
        TopologyNode &n = m_nodes[size_t(v)];
        const int scope = deepestScope[size_t(v)];
        if (n.sortKeyStale || n.group != scope || m_scopeNamesChanged) {
            n.group = scope;
            n.sortKey = (scope >= 0 ? m_scopes[size_t(scope)].nameKey : QString()) + QChar(0x1f) + n.nameKey + QChar(0x1f) + n.id;
            n.sortKeyStale = false;
        }
    }
    m_scopeNamesChanged = false;
    updateVisibility();
}

void TopologyGraph::updateVisibility()
{
    // Parents before children.
    std::vector<int> order;
    order.reserve(m_nodes.size());
    for (size_t v = 0; v < m_nodes.size(); ++v)
        if (m_nodes[v].parent < 0)
            order.push_back(int(v));
    for (size_t i = 0; i < order.size(); ++i)
        for (int c : m_nodes[size_t(order[i])].children)
            order.push_back(c);
    // Subtrees where every agent departed (a restarted server's previous run): hidden unless shown.
    std::vector<char> gone(m_nodes.size(), 0);
    for (auto it = order.rbegin(); m_hideDeparted && it != order.rend(); ++it) {
        const TopologyNode &n = m_nodes[size_t(*it)];
        bool all = n.departed;
        for (int c : n.children)
            all = all && gone[size_t(c)];
        gone[size_t(*it)] = all;
    }
    for (const int v : order) {
        TopologyNode &n = m_nodes[size_t(v)];
        const int p = n.parent;
        n.hidden = gone[size_t(v)] || (p >= 0 && (m_nodes[size_t(p)].hidden || m_nodes[size_t(p)].collapsed));
        // The node drawn for a hidden one: its collapsed ancestor (itself for a departed root:
        // drawn nowhere, its edges skipped as unpositioned).
        m_representative[size_t(v)] = n.hidden && p >= 0 ? m_representative[size_t(p)] : v;
        if (n.hidden)
            n.positioned = false; // when shown again, the layout places it afresh
        if (n.children.empty())
            n.collapsed = false;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        TopologyNode &n = m_nodes[size_t(*it)];
        n.descendants = 0;
        for (int c : n.children)
            n.descendants += 1 + m_nodes[size_t(c)].descendants;
    }
    m_rankedDirty = true;
}

bool TopologyGraph::setHideDeparted(bool hide)
{
    if (m_hideDeparted == hide)
        return false;
    m_hideDeparted = hide;
    updateVisibility();
    return true;
}

int TopologyGraph::visibleCount() const
{
    return int(std::count_if(m_nodes.begin(), m_nodes.end(), [](const TopologyNode &n) { return !n.hidden; }));
}

bool TopologyGraph::setCollapsed(int row, bool collapsed)
{
    TopologyNode &n = m_nodes[size_t(row)];
    if (n.collapsed == collapsed || (collapsed && n.children.empty()))
        return false;
    n.collapsed = collapsed;
    updateVisibility();
    return true;
}

bool TopologyGraph::expandAll()
{
    bool changed = false;
    for (TopologyNode &n : m_nodes) {
        changed = changed || n.collapsed;
        n.collapsed = false;
    }
    if (changed)
        updateVisibility();
    return changed;
}

bool TopologyGraph::collapseBelowRoots()
{
    bool changed = false;
    for (TopologyNode &n : m_nodes) {
        if (n.parent >= 0 && !n.children.empty() && !n.collapsed) {
            n.collapsed = true;
            changed = true;
        }
    }
    if (changed)
        updateVisibility();
    return changed;
}

bool TopologyGraph::expandAncestors(int row)
{
    bool changed = false;
    for (int p = m_nodes[size_t(row)].parent; p >= 0; p = m_nodes[size_t(p)].parent) {
        changed = changed || m_nodes[size_t(p)].collapsed;
        m_nodes[size_t(p)].collapsed = false;
    }
    if (changed)
        updateVisibility();
    return changed;
}

LayoutInput TopologyGraph::layoutSnapshot(bool incremental) const
{
    LayoutInput input;
    input.incremental = incremental;
    input.metrics = m_metrics;
    input.nodes.resize(m_nodes.size());
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const TopologyNode &n = m_nodes[i];
        LayoutNode &l = input.nodes[i];
        l.parent = n.parent;
        l.width = n.width;
        l.visible = !n.hidden;
        l.pinned = incremental && n.positioned;
        l.position = n.target; // not the animated position: pins are where nodes come to rest
        l.sortKey = n.sortKey;
        l.group = n.group;
    }
    return input;
}

bool TopologyGraph::applyLayout(const LayoutResult &result)
{
    const size_t count = std::min(result.positions.size(), m_nodes.size());
    std::vector<char> shownBefore(m_nodes.size());
    for (size_t i = 0; i < m_nodes.size(); ++i)
        shownBefore[i] = m_nodes[i].positioned;
    bool moved = false;
    for (size_t i = 0; i < count; ++i) {
        TopologyNode &n = m_nodes[i];
        if (!result.placed[i] || n.hidden || (result.incremental && n.positioned))
            continue;
        const QPointF target = result.positions[i];
        QPointF start = target;
        if (n.positioned)
            start = n.position;
        else if (!result.incremental && n.parent >= 0 && shownBefore[size_t(n.parent)])
            start = m_nodes[size_t(n.parent)].position; // shown by an expand: unfolds from its parent
        n.from = n.position = start;
        n.target = target;
        n.positioned = true;
        moved = moved || start != target;
    }
    updateGeometry();
    return moved;
}

bool TopologyGraph::hasUnplacedNodes() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(), [](const TopologyNode &n) { return !n.hidden && !n.positioned; });
}

void TopologyGraph::setMoveProgress(double t)
{
    for (TopologyNode &n : m_nodes)
        if (n.positioned)
            n.position = n.from + (n.target - n.from) * t;
    updateGeometry();
}

double TopologyGraph::recentWeight(const TrafficEdge &edge, qint64 nowMs)
{
    return edge.weight * std::exp(-double(std::max<qint64>(0, nowMs - edge.lastMs)) / kTrafficTimeConstantMs);
}

double TopologyGraph::rankKeyOf(TrafficEdge &edge)
{
    if (std::isnan(edge.rankKey))
        edge.rankKey = std::log(std::max(1e-300, edge.weight)) + double(edge.lastMs) / kTrafficTimeConstantMs;
    return edge.rankKey;
}

TopologyGraph::RankedEdges TopologyGraph::rankedEdges()
{
    if (!m_rankedDirty && m_rankedGrown && !m_rankedFromMerged)
        rankChangedEdges();
    if (!m_rankedDirty && !m_rankedGrown)
        return {m_rankedFromMerged ? m_merged : m_traffic, m_rankOrder};
    m_rankedDirty = false;
    m_rankedGrown = false;
    const bool anyHidden = std::any_of(m_nodes.begin(), m_nodes.end(), [](const TopologyNode &n) { return n.hidden; });
    m_rankedFromMerged = anyHidden;
    clearUpperVectorState(); // called while painting, after the raster engine's strokes
    std::deque<TrafficEdge> &merged = m_merged;
    merged.clear();
    if (anyHidden) {
        QHash<quint64, int> index;
        for (const TrafficEdge &e : m_traffic) {
            TrafficEdge shown = e;
            shown.from = representative(e.from);
            shown.to = e.to >= 0 ? representative(e.to) : -1;
            if (shown.from == shown.to)
                continue; // inside one collapsed subtree
            const quint64 key = trafficKey(shown.from, shown.to, shown.scope);
            const auto it = index.constFind(key);
            if (it == index.constEnd()) {
                index.insert(key, int(merged.size()));
                merged.push_back(shown);
            } else {
                mergeTraffic(merged[size_t(*it)], shown);
            }
        }
    }
    std::deque<TrafficEdge> &source = anyHidden ? merged : m_traffic;
    // weight · e^(−(now − last)/τ) ranks like ln(weight) + last/τ, whatever `now` is.
    std::vector<std::pair<double, int>> &keys = m_rankKeys;
    keys.resize(source.size());
    for (size_t i = 0; i < source.size(); ++i)
        keys[i] = {rankKeyOf(source[i]), int(i)};
    // Only the first kRankedInOrder are put in order: a paint looks at no more (on the benchmark
    // machine a full sort of 168,294 keys took 8.7 ms, selecting and sorting the top 20,000 2.0).
    const auto busierFirst = [](const auto &a, const auto &b) { return a.first > b.first; };
    const auto inOrderEnd = keys.begin() + std::ptrdiff_t(std::min(keys.size(), size_t(kRankedInOrder)));
    if (inOrderEnd != keys.end())
        std::nth_element(keys.begin(), inOrderEnd, keys.end(), busierFirst);
    std::sort(keys.begin(), inOrderEnd, busierFirst);
    m_rankOrder.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i)
        m_rankOrder[i] = keys[i].second;
    // From here on, edges whose key becomes NaN are listed for rankChangedEdges(). Ranked from
    // m_merged, m_traffic's keys are not all made: the next ranking is a whole one anyway (one
    // from m_traffic follows a change of visibility, which makes the ranking dirty).
    m_rankChanged.clear();
    m_inRankedTop.assign(anyHidden ? 0 : source.size(), 0);
    m_rankPosition.assign(anyHidden ? 0 : source.size(), -1);
    if (!anyHidden) {
        const size_t top = size_t(inOrderEnd - keys.begin());
        for (size_t i = 0; i < keys.size(); ++i) {
            if (i < top)
                m_inRankedTop[size_t(keys[i].second)] = 1;
            else
                m_rankPosition[size_t(keys[i].second)] = int(i);
        }
    }
    return {source, m_rankOrder};
}

void TopologyGraph::rankChangedEdges()
{
    // Contract: m_rankOrder ranks m_traffic as it was before the edges in m_rankChanged changed
    // or were added, and every edge whose key is NaN is in m_rankChanged. Keys only grow, so an
    // edge outside the previous top that did not change stays at or below the previous top's
    // weakest, which itself only rose: the new top is the top of (previous top ∪ changed).
    // Cost: the changed edges and the top (20,000), not every edge.
    m_rankedGrown = false;
    const size_t count = m_traffic.size();
    const size_t previousCount = m_inRankedTop.size();
    const size_t previousTop = std::min(m_rankOrder.size(), size_t(kRankedInOrder));
    m_inRankedTop.resize(count, 0);
    m_rankPosition.resize(count, -1);
    auto keyOf = [this](int index) { return rankKeyOf(m_traffic[size_t(index)]); };
    std::vector<std::pair<double, int>> &keys = m_rankKeys;
    keys.clear();
    for (size_t i = 0; i < previousTop; ++i)
        keys.emplace_back(keyOf(m_rankOrder[i]), m_rankOrder[i]);
    for (int index : m_rankChanged)
        if (!m_inRankedTop[size_t(index)])
            keys.emplace_back(keyOf(index), index);
    m_rankChanged.clear();
    const auto busierFirst = [](const auto &a, const auto &b) { return a.first > b.first; };
    const auto inOrderEnd = keys.begin() + std::ptrdiff_t(std::min(keys.size(), size_t(kRankedInOrder)));
    if (inOrderEnd != keys.end())
        std::nth_element(keys.begin(), inOrderEnd, keys.end(), busierFirst);
    std::sort(keys.begin(), inOrderEnd, busierFirst);

    if (previousTop < size_t(kRankedInOrder)) {
        // The previous ranking had no rest: every edge was a candidate.
        m_rankOrder.clear();
        for (const auto &key : keys) {
            m_rankPosition[size_t(key.second)] = int(m_rankOrder.size());
            m_rankOrder.push_back(key.second);
        }
    } else {
        // The top keeps its length. m_inRankedTop: bit 1 = in the previous top, 2 = in the new.
        for (auto it = keys.begin(); it != inOrderEnd; ++it)
            m_inRankedTop[size_t(it->second)] |= 2;
        // The rest (in no order) loses the edges that rose into the top, each swapped with its
        // last entry, and gains those that fell out of the top and the new edges below it.
        for (auto it = keys.begin(); it != inOrderEnd; ++it) {
            const int index = it->second;
            if (m_inRankedTop[size_t(index)] & 1 || size_t(index) >= previousCount)
                continue;
            const int at = m_rankPosition[size_t(index)];
            const int last = m_rankOrder.back();
            m_rankOrder[size_t(at)] = last;
            m_rankPosition[size_t(last)] = at;
            m_rankOrder.pop_back();
        }
        for (auto it = inOrderEnd; it != keys.end(); ++it)
            if ((m_inRankedTop[size_t(it->second)] & 1) || size_t(it->second) >= previousCount) {
                m_rankPosition[size_t(it->second)] = int(m_rankOrder.size());
                m_rankOrder.push_back(it->second);
            }
        for (size_t i = 0; i < previousTop; ++i)
            m_inRankedTop[size_t(m_rankOrder[i])] = 0;
        for (auto it = keys.begin(); it != inOrderEnd; ++it)
            m_rankOrder[size_t(it - keys.begin())] = it->second;
    }
    for (auto it = keys.begin(); it != inOrderEnd; ++it)
        m_inRankedTop[size_t(it->second)] = 1;
}

std::vector<char> TopologyGraph::neighbourhood(const std::vector<int> &sources, int hops) const
{
    const size_t count = m_nodes.size();
    std::vector<std::vector<int>> adjacent(count);
    for (size_t v = 0; v < count; ++v) {
        if (const int p = m_nodes[v].parent; p >= 0) {
            adjacent[v].push_back(p);
            adjacent[size_t(p)].push_back(int(v));
        }
    }
    for (const TrafficEdge &e : m_traffic) {
        if (e.to < 0)
            continue; // a scope message does not make every member a neighbour
        adjacent[size_t(e.from)].push_back(e.to);
        adjacent[size_t(e.to)].push_back(e.from);
    }
    std::vector<char> inside(count, 0);
    std::vector<int> frontier;
    for (int s : sources) {
        if (s >= 0 && size_t(s) < count && !inside[size_t(s)]) {
            inside[size_t(s)] = 1;
            frontier.push_back(s);
        }
    }
    for (int step = 0; step < hops && !frontier.empty(); ++step) {
        std::vector<int> next;
        for (int v : frontier) {
            for (int w : adjacent[size_t(v)]) {
                if (!inside[size_t(w)]) {
                    inside[size_t(w)] = 1;
                    next.push_back(w);
                }
            }
        }
        frontier = std::move(next);
    }
    return inside;
}

} // namespace mapi::ui
