#include "models/ScopeTreeModel.h"

#include "common/ColumnTitles.h"
#include "common/TimeText.h"
#include "common/NaturalSort.h"
#include "model/SystemStore.h"
#include "models/AgentTableModel.h"
#include "models/HealthModel.h"

#include <QDateTime>
#include <QFont>
#include <QSet>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <optional>

namespace mapi::ui {

struct ScopeTreeModel::ChildKey
{
    NodeKind kind;
    QString id;
    QString sortName; // the name siblings are ordered by (the id when there is no name)
    QString sortKey;  // naturalSortKey(sortName): compared as plain text
};

struct ScopeTreeModel::Node
{
    NodeKind kind = NodeKind::Scope;
    QString id;                 // empty for the invisible root
    QString sortName;           // the name it was placed by, to notice renames
    Node *parent = nullptr;
    int row = 0;                // index in parent->children
    std::vector<std::unique_ptr<Node>> children; // scopes first, then members
};

namespace {

// One string per child identity, so child lists can be compared with a hash set.
QString keyString(ScopeTreeModel::NodeKind kind, const QString &id)
{
    return (kind == ScopeTreeModel::NodeKind::Scope ? QLatin1Char('s') : QLatin1Char('m')) + id;
}

std::optional<Health> worstHealth(const Scope &scope, const SystemStore &store)
{
    std::optional<Health> worst;
    for (const QString &agentId : scope.members) {
        const Agent *agent = store.agent(agentId);
        if (agent && (!worst || healthRank(agent->health) < healthRank(*worst)))
            worst = agent->health;
    }
    return worst;
}

} // namespace

ScopeTreeModel::ScopeTreeModel(const SystemStore *store, QObject *parent)
    : QAbstractItemModel(parent)
    , m_store(store)
    , m_root(std::make_unique<Node>())
{
    rebuild();
    connect(store, &SystemStore::changed, this, &ScopeTreeModel::onStoreChanged);
    connect(store, &SystemStore::aboutToReset, this, &ScopeTreeModel::onAboutToReset);
    connect(store, &SystemStore::wasReset, this, &ScopeTreeModel::onWasReset);
}

ScopeTreeModel::~ScopeTreeModel() = default;

// ---- structure -----------------------------------------------------------------------------

ScopeTreeModel::ScopeChildren ScopeTreeModel::scopeChildren() const
{
    ScopeChildren out;
    for (const Scope &scope : m_store->scopes()) {
        // The parent counts only if it is known and the chain above it never comes back
        // (a buggy server can send cycles); otherwise the scope is shown at the top level.
        QString parentId = scope.parentId;
        if (!parentId.isEmpty()) {
            QSet<QString> seen{scope.id};
            for (QString up = parentId; !up.isEmpty();) {
                const Scope *ancestor = m_store->scope(up);
                if (!ancestor || seen.contains(up)) {
                    if (!ancestor && up == parentId)
                        parentId.clear(); // unknown parent
                    else if (ancestor)
                        parentId.clear(); // cycle
                    break;
                }
                seen.insert(up);
                up = ancestor->parentId;
            }
        }
        out[parentId] << scope.id;
    }
    return out;
}

QHash<QString, QString> ScopeTreeModel::placement(const ScopeChildren &children)
{
    QHash<QString, QString> out;
    for (auto it = children.cbegin(); it != children.cend(); ++it) {
        for (const QString &id : it.value())
            out.insert(id, it.key());
    }
    return out;
}

std::vector<ScopeTreeModel::ChildKey> ScopeTreeModel::wantedChildren(const Node *node, const ScopeChildren &children) const
{
    // By natural order of names through precomputed keys: a natural comparison per step of a
    // sort of a scope's thousands of members, at every change of the scope, was most of it.
    const auto byName = [](const ChildKey &a, const ChildKey &b) {
        const int c = QStringView(a.sortKey).compare(QStringView(b.sortKey));
        return c != 0 ? c < 0 : a.id < b.id;
    };
    std::vector<ChildKey> out;
    const QStringList scopeIds = children.value(node->id);
    for (const QString &id : scopeIds) {
        const QString name = m_store->scopeName(id);
        out.push_back({NodeKind::Scope, id, name, naturalSortKey(name)});
    }
    std::sort(out.begin(), out.end(), byName);
    const size_t firstMember = out.size();
    if (node != m_root.get()) {
        if (const Scope *scope = m_store->scope(node->id)) {
            out.reserve(out.size() + size_t(scope->members.size()));
            for (const QString &agentId : scope->members) {
                const QString name = m_store->agentName(agentId);
                out.push_back({NodeKind::Member, agentId, name, naturalSortKey(name)});
            }
        }
    }
    std::sort(out.begin() + qsizetype(firstMember), out.end(), byName);
    return out;
}

std::unique_ptr<ScopeTreeModel::Node> ScopeTreeModel::buildNode(const ChildKey &key, Node *parent, const ScopeChildren &children)
{
    auto node = std::make_unique<Node>();
    node->kind = key.kind;
    node->id = key.id;
    node->sortName = key.sortName;
    node->parent = parent;
    if (key.kind == NodeKind::Member) {
        m_memberNodes.insert(key.id, node.get());
        return node;
    }
    m_scopeNodes.insert(key.id, node.get());
    for (const ChildKey &child : wantedChildren(node.get(), children))
        node->children.push_back(buildNode(child, node.get(), children));
    renumber(node.get());
    return node;
}

void ScopeTreeModel::renumber(Node *node)
{
    for (size_t i = 0; i < node->children.size(); ++i)
        node->children[i]->row = int(i);
}

void ScopeTreeModel::forget(Node *node)
{
    if (node->kind == NodeKind::Member) {
        m_memberNodes.remove(node->id, node);
        return;
    }
    // A scope that moved may already be registered under its new node.
    if (m_scopeNodes.value(node->id) == node)
        m_scopeNodes.remove(node->id);
    for (const auto &child : node->children)
        forget(child.get());
}

void ScopeTreeModel::removeChildren(Node *node, int first, int last)
{
    beginRemoveRows(indexOf(node), first, last);
    for (int i = first; i <= last; ++i)
        forget(node->children[size_t(i)].get());
    node->children.erase(node->children.begin() + first, node->children.begin() + last + 1);
    renumber(node);
    endRemoveRows();
}

// Which entries to keep so that what stays is already in order: a longest strictly increasing
// subsequence of `positions` (an entry's place in the wanted list; -1 = not wanted any more).
static std::vector<bool> keptInOrder(const std::vector<int> &positions)
{
    const size_t n = positions.size();
    std::vector<size_t> tails;              // tails[k]: entry ending the best run of length k + 1
    std::vector<qsizetype> previous(n, -1); // the entry before it in that run
    for (size_t i = 0; i < n; ++i) {
        if (positions[i] < 0)
            continue;
        const auto it = std::lower_bound(tails.begin(), tails.end(), positions[i],
                                         [&positions](size_t entry, int value) { return positions[entry] < value; });
        if (it != tails.begin())
            previous[i] = qsizetype(*(it - 1));
        if (it == tails.end())
            tails.push_back(i);
        else
            *it = i;
    }
    std::vector<bool> keep(n, false);
    for (qsizetype i = tails.empty() ? -1 : qsizetype(tails.back()); i >= 0; i = previous[size_t(i)])
        keep[size_t(i)] = true;
    return keep;
}

// Makes node's child list equal to the store's, touching only what differs: first removals (as
// ranges, from the end) of what is gone or out of place after a rename, then insertions (as
// ranges) of what is missing, built with their whole subtree. Child scopes kept in place are
// not visited: whoever changed them is on the caller's list too.
void ScopeTreeModel::reconcile(Node *node, const ScopeChildren &children)
{
    const std::vector<ChildKey> want = wantedChildren(node, children);
    QHash<QString, int> wantedAt;
    wantedAt.reserve(qsizetype(want.size()));
    for (size_t i = 0; i < want.size(); ++i)
        wantedAt.insert(keyString(want[i].kind, want[i].id), int(i));
    std::vector<int> positions;
    positions.reserve(node->children.size());
    for (const auto &child : node->children)
        positions.push_back(wantedAt.value(keyString(child->kind, child->id), -1));
    const std::vector<bool> keep = keptInOrder(positions);

    for (int i = int(node->children.size()) - 1; i >= 0; --i) {
        if (keep[size_t(i)])
            continue;
        const int last = i;
        while (i > 0 && !keep[size_t(i - 1)])
            --i;
        removeChildren(node, i, last);
    }

    const auto same = [](const Node *n, const ChildKey &key) { return n->kind == key.kind && n->id == key.id; };
    size_t pos = 0;
    while (pos < want.size()) {
        if (pos < node->children.size() && same(node->children[pos].get(), want[pos])) {
            node->children[pos]->sortName = want[pos].sortName;
            ++pos;
            continue;
        }
        const Node *nextKept = pos < node->children.size() ? node->children[pos].get() : nullptr;
        size_t end = pos;
        while (end < want.size() && !(nextKept && same(nextKept, want[end])))
            ++end;
        beginInsertRows(indexOf(node), int(pos), int(end) - 1);
        std::vector<std::unique_ptr<Node>> fresh;
        for (size_t i = pos; i < end; ++i)
            fresh.push_back(buildNode(want[i], node, children));
        node->children.insert(node->children.begin() + qsizetype(pos), std::make_move_iterator(fresh.begin()),
                              std::make_move_iterator(fresh.end()));
        renumber(node);
        endInsertRows();
        pos = end;
    }
}

void ScopeTreeModel::emitChanged(const std::vector<Node *> &nodes)
{
    std::map<Node *, std::vector<int>> rowsByParent;
    for (Node *node : nodes)
        rowsByParent[node->parent].push_back(node->row);
    for (auto &[parent, rows] : rowsByParent) {
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        size_t start = 0;
        for (size_t i = 1; i <= rows.size(); ++i) {
            if (i == rows.size() || rows[i] != rows[i - 1] + 1) {
                Node *first = parent->children[size_t(rows[start])].get();
                Node *last = parent->children[size_t(rows[i - 1])].get();
                Q_EMIT dataChanged(indexOf(first, 0), indexOf(last, ColumnCount - 1));
                start = i;
            }
        }
    }
}

void ScopeTreeModel::onStoreChanged(const ChangeSet &changes)
{
    // Structure follows scopes (membership, nesting, names); a renamed member moves too. Only
    // the child lists that can differ are reconciled: those of changed scopes, of their old and
    // new parents, and of the scopes holding a renamed member.
    QSet<QString> stale; // scope ids whose child list to reconcile; "" = the top level
    for (int row : changes.agentRows) {
        const Agent &agent = m_store->agents()[size_t(row)];
        const auto range = m_memberNodes.equal_range(agent.id);
        for (auto it = range.first; it != range.second; ++it) {
            if ((*it)->sortName != m_store->agentName(agent.id))
                stale.insert((*it)->parent->id);
        }
    }
    if (!changes.scopeRows.isEmpty() || !stale.isEmpty()) {
        const ScopeChildren children = scopeChildren();
        QHash<QString, QString> placedUnder = placement(children);
        for (int row : changes.scopeRows) {
            const QString &id = m_store->scopes()[size_t(row)].id;
            stale << id << placedUnder.value(id);
        }
        // Nesting can change for scopes that did not change themselves (a cycle elsewhere).
        for (auto it = placedUnder.cbegin(); it != placedUnder.cend(); ++it) {
            const auto before = m_placedUnder.constFind(it.key());
            if (before == m_placedUnder.cend())
                stale << it.value();
            else if (*before != it.value())
                stale << *before << it.value();
        }
        m_placedUnder = std::move(placedUnder);
        for (const QString &id : std::as_const(stale)) {
            if (Node *node = id.isEmpty() ? m_root.get() : m_scopeNodes.value(id))
                reconcile(node, children);
        }
    }

    std::vector<Node *> changed;
    for (int row : changes.scopeRows) {
        if (Node *node = m_scopeNodes.value(m_store->scopes()[size_t(row)].id))
            changed.push_back(node);
    }
    for (int row : changes.agentRows) {
        const auto range = m_memberNodes.equal_range(m_store->agents()[size_t(row)].id);
        for (auto it = range.first; it != range.second; ++it) {
            changed.push_back(*it);
            changed.push_back((*it)->parent); // its scope shows the members' worst health
        }
    }
    if (!changed.empty())
        emitChanged(changed);
}

void ScopeTreeModel::onAboutToReset()
{
    beginResetModel();
    m_root->children.clear();
    m_scopeNodes.clear();
    m_memberNodes.clear();
    m_placedUnder.clear();
}

void ScopeTreeModel::onWasReset()
{
    rebuild();
    endResetModel();
}

void ScopeTreeModel::rebuild()
{
    const ScopeChildren children = scopeChildren();
    m_placedUnder = placement(children);
    for (const ChildKey &key : wantedChildren(m_root.get(), children))
        m_root->children.push_back(buildNode(key, m_root.get(), children));
    renumber(m_root.get());
}

// ---- QAbstractItemModel --------------------------------------------------------------------

ScopeTreeModel::Node *ScopeTreeModel::nodeOf(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Node *>(index.internalPointer()) : m_root.get();
}

QModelIndex ScopeTreeModel::indexOf(Node *node, int column) const
{
    return node == m_root.get() ? QModelIndex() : createIndex(node->row, column, node);
}

QModelIndex ScopeTreeModel::indexOfScope(const QString &scopeId) const
{
    Node *node = m_scopeNodes.value(scopeId);
    return node ? indexOf(node) : QModelIndex();
}

QModelIndex ScopeTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (column < 0 || column >= ColumnCount || (parent.isValid() && parent.column() != 0))
        return {};
    const Node *node = nodeOf(parent);
    if (row < 0 || row >= int(node->children.size()))
        return {};
    return createIndex(row, column, node->children[size_t(row)].get());
}

QModelIndex ScopeTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    return indexOf(nodeOf(child)->parent);
}

int ScopeTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return int(nodeOf(parent)->children.size());
}

int ScopeTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant ScopeTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node *node = nodeOf(index);
    const int column = index.column();
    if (role == NodeKindRole)
        return int(node->kind);
    if (role == IdRole)
        return node->id;

    if (node->kind == NodeKind::Member) {
        const Agent *agent = m_store->agent(node->id);
        if (!agent)
            return {};
        const bool inactive = agent->unregistered || agent->placeholder;
        const QString name = shownName(*agent);
        switch (role) {
        case Qt::DisplayRole:
            if (column != NameColumn)
                return {};
            if (agent->placeholder)
                return tr("%1 (placeholder)").arg(name);
            return agent->unregistered ? tr("%1 (departed)").arg(name) : name;
        case Qt::DecorationRole:
            return column == NameColumn ? QVariant(healthDotIcon(agent->health)) : QVariant();
        case HealthRole:
            return int(agent->health);
        case Qt::ForegroundRole:
        case Qt::FontRole:
            return inactiveRowStyle(role, inactive);
        case Qt::ToolTipRole:
            return tr("<b>%1</b> — %2<br>role: %3 · state: %4<br>id: %5")
                .arg(name.toHtmlEscaped(), healthName(agent->health), agent->role.toHtmlEscaped(),
                     agent->state.toHtmlEscaped(), agent->id.toHtmlEscaped());
        default:
            return {};
        }
    }

    const Scope *scope = m_store->scope(node->id);
    if (!scope)
        return {};
    const bool inactive = scope->deleted || scope->placeholder;
    const QString name = shownName(*scope);
    switch (role) {
    case Qt::DisplayRole:
        if (column == MembersColumn)
            return int(scope->members.size());
        return scope->deleted ? tr("%1 (deleted)").arg(name) : name;
    case Qt::DecorationRole:
        if (column == MembersColumn) {
            if (const auto worst = worstHealth(*scope, *m_store))
                return healthDotIcon(*worst);
        }
        return {};
    case HealthRole:
        if (const auto worst = worstHealth(*scope, *m_store))
            return int(*worst);
        return {};
    case Qt::ForegroundRole:
        return inactive ? QVariant(inactiveTextColor()) : QVariant();
    case Qt::FontRole: {
        QFont font;
        if (inactive)
            font.setItalic(true);
        else
            font.setBold(true);
        return font;
    }
    case Qt::ToolTipRole: {
        std::array<int, kHealthCount> perHealth{};
        for (const QString &agentId : scope->members) {
            if (const Agent *agent = m_store->agent(agentId))
                ++perHealth[size_t(agent->health)];
        }
        QStringList counts; // worst first
        for (Health health : healthsWorstFirst()) {
            if (const int n = perHealth[size_t(health)])
                counts << QStringLiteral("%1 %2").arg(n).arg(healthName(health));
        }
        QStringList lines;
        lines << QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped()) << tr("id: %1").arg(scope->id.toHtmlEscaped());
        lines << tr("%n member(s)", nullptr, int(scope->members.size()))
                     + (counts.isEmpty() ? QString() : QStringLiteral(": ") + counts.join(QLatin1String(", ")));
        if (scope->deleted)
            lines << tr("<i>Deleted: kept here greyed so its history stays visible.</i>");
        if (scope->placeholder)
            lines << tr("<i>Placeholder: referenced but never described by the server.</i>");
        if (scope->createdAtMs > 0)
            lines << tr("known since %1").arg(timeOfDay(scope->createdAtMs));
        return lines.join(QLatin1String("<br>"));
    }
    case Qt::TextAlignmentRole:
        return column == MembersColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default:
        return {};
    }
}

QVariant ScopeTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Scope / agent"), tr("Members")});
}

} // namespace mapi::ui
