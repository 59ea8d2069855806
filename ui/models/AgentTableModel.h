// The Agents table: one row per agent of the SystemStore (store row = model row), and the proxy
// that sorts it and applies the filter language (AgentFilter) and the "show departed" switch.
//
// Thread: GUI thread (the store's). Updates follow SystemStore::changed at ≤ 30 Hz: one
// beginInsertRows per batch of new agents, dataChanged over merged row ranges (one whole-table
// signal when more than half the rows changed), a model reset around SystemStore::reset().
#pragma once

#include "model/ModelTypes.h"
#include "models/AgentFilter.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QIcon>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <vector>

namespace mapi {
class SystemStore;
struct ChangeSet;
} // namespace mapi

namespace mapi::ui {

// A small round swatch in healthColor(health), for item views (cached; GUI thread).
QIcon healthDotIcon(Health health);
// Text colour for departed agents, placeholders and deleted scopes: between the palette's text
// and base colours, so it reads as "inactive" in light and dark themes alike.
QColor inactiveTextColor();
// How a departed agent or a placeholder reads in every list: greyed (ForegroundRole) and in
// italics (FontRole). Invalid for other roles and for active rows.
QVariant inactiveRowStyle(int role, bool inactive);
// "12 s ago", "3 min ago", … (formatAge() of the Health panel, so both read alike); "—" when
// `thenMs` is 0 (never).
QString relativeTime(qint64 thenMs, qint64 nowMs);

class AgentTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    // Health and state come right after the name: a docked panel is narrow, and they are what
    // an operator scans for.
    enum Column {
        NameColumn,
        HealthColumn,
        StateColumn,
        RoleColumn,
        ParentColumn,
        ScopesColumn,
        LastActivityColumn,
        TaskColumn,
        SessionColumn,
        TokensColumn,
        CostColumn,
        IdColumn,     // hidden by default in the panel
        SystemColumn, // another system's agent (federation): its system; shown once there is one
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole + 1, // raw value to sort by: qint64, double or QString (per column);
                                     // health sorts by healthRank(), worst first
        AgentIdRole,                 // QString
        HealthRole,                  // int(mapi::Health)
        InactiveRole,                // bool: departed (unregistered) or placeholder
    };

    // The system an agent comes from when a federating server lists another system's agents
    // (map/Federation.h: its metadata, or a sender's "B:agent:…" address); "" for the server's own.
    static QString originSystem(const Agent &agent);

    // The relative "last activity" column is refreshed on this interval (one dataChanged over
    // that column), because its text depends on the clock, not on the agent.
    static constexpr int kRelativeTimeRefreshMs = 1000;

    explicit AgentTableModel(const SystemStore *store, QObject *parent = nullptr);

    const SystemStore *store() const { return m_store; }
    const Agent *agentAt(int row) const;
    int rowOfAgent(const QString &id) const; // -1 when unknown

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void onStoreChanged(const ChangeSet &changes);
    void onAboutToReset();
    void onWasReset();
    void refreshRelativeTimes();
    void emitColumn(int column);
    QVariant displayText(const Agent &agent, int column) const;
    QVariant sortValue(const Agent &agent, int column) const;
    QString toolTip(const Agent &agent) const;

    const SystemStore *m_store;
    int m_rowCount = 0;
    std::vector<QString> m_names;      // per row, to notice renames (the Parent column shows names)
    std::vector<QString> m_scopeNames; // per scope row, to notice renames (the Scopes column)
    qint64 m_lastRefreshNowMs = -1;
    QTimer m_relativeTimeTimer;
};

// Sorting (by AgentTableModel::SortRole; text in natural order, so worker-2 comes before
// worker-10; the name breaks ties) and
// filtering (AgentFilter, "show departed") over an AgentTableModel.
class AgentFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit AgentFilterProxy(QObject *parent = nullptr);

    void setSourceModel(QAbstractItemModel *model) override;

    // An invalid filter is ignored (the previous one stays); returns whether it was applied.
    bool setFilter(const AgentFilter &filter);
    const AgentFilter &filter() const { return m_filter; }
    // Departed (unregistered) agents listed or not; placeholders are always listed (they are
    // agents the traffic names and the list does not: hiding them would hide traffic).
    void setShowDeparted(bool show);
    bool showDeparted() const { return m_showDeparted; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    static int compareValues(const QVariant &left, const QVariant &right);

    AgentTableModel *m_agents = nullptr;
    AgentFilter m_filter;
    bool m_showDeparted = true;
};

} // namespace mapi::ui
