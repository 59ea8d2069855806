#include "models/AgentGroupsModel.h"

#include "model/AgentGroupLabels.h"
#include "model/SystemStore.h"
#include "models/AgentFilter.h"
#include "style/Colors.h"

#include <QHash>
#include <QLocale>

#include <algorithm>

namespace mapi::ui {

AgentGroupsModel::AgentGroupsModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
}

void AgentGroupsModel::setGroupBy(GroupBy groupBy)
{
    if (groupBy == m_groupBy)
        return;
    beginResetModel(); // other groups: nothing selected stays
    m_groupBy = groupBy;
    m_groups.clear();
    endResetModel();
    refresh();
}

QString AgentGroupsModel::scopeFilter(const Scope &scope, const QSet<QString> &scopeParents) const
{
    // The scope's members, less those whose most specific scope is another: every scope more
    // specific than this one that some member is in is left out by name ("fleet" without its
    // teams: the coordinator, not the 25 leads who are in their teams too).
    QStringList terms{QStringLiteral("scope:") + AgentFilter::exactly(scope.id)};
    QSet<QString> excluded;
    for (const QString &memberId : scope.members) {
        const Agent *member = m_store->agent(memberId);
        if (!member)
            continue;
        for (const QString &otherId : member->scopes) {
            const Scope *other = otherId == scope.id || excluded.contains(otherId) ? nullptr : m_store->scope(otherId);
            if (other && !other->deleted && isMoreSpecificScope(*other, scope, scopeParents)) {
                excluded.insert(otherId);
                terms << QStringLiteral("-scope:") + AgentFilter::exactly(otherId);
            }
        }
    }
    return terms.join(u' ');
}

void AgentGroupsModel::refresh()
{
    std::vector<Group> groups;
    if (m_store && m_groupBy != GroupBy::None) {
        QHash<QString, size_t> at;
        const QSet<QString> scopeParents = m_groupBy == GroupBy::Scope ? parentScopeIds(*m_store) : QSet<QString>();
        for (const Agent &agent : m_store->agents()) {
            if (agent.unregistered)
                continue; // as the table lists them by default
            QString key;
            const Scope *scope = nullptr;
            switch (m_groupBy) {
            case GroupBy::Role: key = agent.role.toLower(); break; // as role: compares
            case GroupBy::Scope:
                scope = mostSpecificScope(agent, *m_store, scopeParents);
                key = scope ? scope->id : QString();
                break;
            case GroupBy::Parent: key = agent.parentId; break;
            case GroupBy::None: break;
            }
            auto it = at.find(key);
            if (it == at.end()) {
                it = at.insert(key, groups.size());
                Group g;
                switch (m_groupBy) { // its title and its filter, made once a group
                case GroupBy::Role:
                    g.title = key.isEmpty() ? tr("(no role)") : agent.role;
                    g.filter = key.isEmpty() ? QStringLiteral("-role:~.") : QStringLiteral("role:") + AgentFilter::quoted(key);
                    break;
                case GroupBy::Scope:
                    g.title = scope ? (scope->name.isEmpty() ? scope->id : scope->name) : tr("(in no scope)");
                    g.filter = scope ? scopeFilter(*scope, scopeParents) : QStringLiteral("-scope:~.");
                    break;
                case GroupBy::Parent:
                    g.title = key.isEmpty() ? tr("(no parent)") : tr("under %1").arg(m_store->agentName(key));
                    g.filter = key.isEmpty() ? QStringLiteral("-parent:~.") : QStringLiteral("parent:") + AgentFilter::exactly(key);
                    break;
                case GroupBy::None: break;
                }
                groups.push_back(std::move(g));
            }
            Group &g = groups[*it];
            ++g.agents;
            ++g.health[size_t(agent.health)];
        }
        std::sort(groups.begin(), groups.end(), [](const Group &a, const Group &b) {
            if (a.trouble() != b.trouble())
                return a.trouble() > b.trouble();
            return a.agents != b.agents ? a.agents > b.agents : a.title < b.title;
        });
    }
    // Rows move as their trouble and size change: a selected group stays selected where it went
    // (by its filter), not on the row number it had.
    Q_EMIT layoutAboutToBeChanged();
    const QModelIndexList before = persistentIndexList();
    QStringList beforeFilters;
    for (const QModelIndex &index : before)
        beforeFilters << filter(index.row());
    m_groups = std::move(groups);
    QHash<QString, int> rowOfFilter;
    for (size_t i = 0; i < m_groups.size(); ++i)
        rowOfFilter.insert(m_groups[i].filter, int(i));
    QModelIndexList after;
    for (qsizetype i = 0; i < before.size(); ++i) {
        const int row = rowOfFilter.value(beforeFilters[i], -1);
        after << (row >= 0 ? index(row, before[i].column()) : QModelIndex());
    }
    changePersistentIndexList(before, after);
    Q_EMIT layoutChanged();
}

QString AgentGroupsModel::filter(int row) const
{
    return row >= 0 && size_t(row) < m_groups.size() ? m_groups[size_t(row)].filter : QString();
}

int AgentGroupsModel::agentsIn(int row) const
{
    return row >= 0 && size_t(row) < m_groups.size() ? m_groups[size_t(row)].agents : 0;
}

int AgentGroupsModel::healthIn(int row, Health health) const
{
    return row >= 0 && size_t(row) < m_groups.size() ? m_groups[size_t(row)].health[size_t(health)] : 0;
}

int AgentGroupsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_groups.size());
}

int AgentGroupsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AgentGroupsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_groups.size())
        return {};
    const Group &g = m_groups[size_t(index.row())];
    const auto count = [&g](Health h) { return g.health[size_t(h)]; };
    const int other = g.agents - count(Health::Failed) - count(Health::Unresponsive) - count(Health::Late) - count(Health::Healthy);
    const Health shown[] = {Health::Failed, Health::Unresponsive, Health::Late, Health::Healthy};
    if (role == Qt::DisplayRole) {
        const QLocale locale;
        switch (index.column()) {
        case GroupColumn: return g.title;
        case AgentsColumn: return locale.toString(g.agents);
        case OtherColumn: return other > 0 ? locale.toString(other) : QString();
        default: {
            const int n = count(shown[index.column() - FailedColumn]);
            return n > 0 ? locale.toString(n) : QString(); // zero left blank: the eye goes to what is not
        }
        }
    }
    if (role == Qt::ForegroundRole && index.column() >= FailedColumn && index.column() < OtherColumn)
        return healthColor(shown[index.column() - FailedColumn]);
    if (role == Qt::TextAlignmentRole && index.column() != GroupColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole)
        return tr("%1: click to list its agents (%2)").arg(g.title, g.filter);
    return {};
}

QVariant AgentGroupsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case GroupColumn: return tr("Group");
    case AgentsColumn: return tr("Agents");
    case FailedColumn: return tr("Failed");
    case UnresponsiveColumn: return tr("Unresponsive");
    case LateColumn: return tr("Late");
    case HealthyColumn: return tr("Healthy");
    case OtherColumn: return tr("Other");
    }
    return {};
}

} // namespace mapi::ui
