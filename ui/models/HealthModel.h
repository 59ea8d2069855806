// Item model of the Health panel: one row per agent (SystemStore::agents() row), with its
// health, time since its last heartbeat and what its heartbeats report; and the proxy that
// sorts worst-first.
//
// Thread: GUI thread. Follows SystemStore::changed (≤ 30 Hz) by row ranges; reset with the
// store. "Time since heartbeat" is relative to SystemStore::now(), which moves without agent
// changes, so the owner calls refreshAges() on its clock (the panel: once a second).
#pragma once

#include "model/SystemStore.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <array>
#include <vector>

namespace mapi::ui {

constexpr int kHealthCount = 8; // number of Health values
// Worst first: failed 0, unresponsive, disconnected, late, suspended, healthy, stopped 6.
int healthRank(Health health);
// Every Health value in worst-first order.
std::array<Health, kHealthCount> healthsWorstFirst();

// "12 s", "4 min", "2 h", "3 d"; "—" when `sinceMs` is 0 (never).
QString formatAge(qint64 sinceMs, qint64 nowMs);

class HealthModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { AgentColumn, HealthColumn, HeartbeatColumn, StatusColumn, LoadColumn, TasksColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // raw value for sorting; the health column gives healthRank()
        AgentIdRole,
        HealthRole,                  // int(Health)
    };

    explicit HealthModel(const SystemStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Agents per health, indexed by int(Health), over the rows announced to views.
    const std::array<int, kHealthCount> &healthCounts() const { return m_counts; }
    // Whether any agent reports what the column shows (status, load and tasks come only from
    // heartbeats and status updates; views hide columns nobody reports).
    bool isReported(Column column) const;
    int rowOfAgent(const QString &agentId) const;

    // Re-announces the heartbeat-age column when the store's clock moved since last time.
    void refreshAges();

Q_SIGNALS:
    void healthCountsChanged();
    void reportedColumnsChanged();

private:
    void onChanged(const ChangeSet &changes);
    void rememberIdentities();
    void recount();

    // What views were last told about the columns a proxy sorts worst-first by.
    struct Identity
    {
        Health health = Health::Healthy;
        QString name;
    };

    const SystemStore *m_store;
    int m_rows = 0;                  // rows announced to views
    std::vector<Identity> m_shown;   // per announced row
    qint64 m_agesAtMs = 0;           // SystemStore::now() the age column was last announced for
    std::array<int, kHealthCount> m_counts{};
    bool m_statusReported = false;
    bool m_loadReported = false;
    bool m_tasksReported = false;
};

// Sorts by the column's HealthModel::SortRole, ties broken by agent name, so sorting the
// health column ascending lists the worst agents first and keeps each group in a stable order.
class HealthSortProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit HealthSortProxy(QObject *parent = nullptr);

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;
};

} // namespace mapi::ui
