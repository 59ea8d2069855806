// The Agents panel's groups (issue 44 item 4): a large system's agents counted by role, by scope
// (the most specific one, core/model/AgentGroupLabels) or by parent, one row a group with its
// agents per health, the most troubled first. A row's filter() narrows the agent table to it.
// Counted again by refresh() (the panel calls it once a second while the groups show): one pass
// over the agents, a few milliseconds at 10,000. GUI thread.
#pragma once

#include "model/ModelTypes.h"
#include "models/HealthModel.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QSet>

#include <array>
#include <vector>

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

class AgentGroupsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum class GroupBy { None, Role, Scope, Parent };
    enum Column { GroupColumn, AgentsColumn, FailedColumn, UnresponsiveColumn, LateColumn, HealthyColumn, OtherColumn, ColumnCount };

    explicit AgentGroupsModel(const SystemStore *store, QObject *parent = nullptr);

    void setGroupBy(GroupBy groupBy);
    GroupBy groupBy() const { return m_groupBy; }
    void refresh();

    // The filter query that lists a row's agents ("role:worker", "scope:\"team/ingest\"").
    QString filter(int row) const;
    int agentsIn(int row) const;
    int healthIn(int row, Health health) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString scopeFilter(const Scope &scope, const QSet<QString> &scopeParents) const;

    struct Group
    {
        QString title;
        QString filter;
        std::array<int, kHealthCount> health{};
        int agents = 0;
        int trouble() const { return health[size_t(Health::Failed)] + health[size_t(Health::Unresponsive)]; }
    };

    QPointer<const SystemStore> m_store;
    GroupBy m_groupBy = GroupBy::None;
    std::vector<Group> m_groups;
};

} // namespace mapi::ui
