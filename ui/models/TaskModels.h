// Item models of the Tasks panel: every task of the store (one row per SystemStore::tasks()
// row), and the lifecycle of one task (its Task::history).
//
// Thread: GUI thread, like the store. Both models follow SystemStore::changed (≤ 30 Hz): new
// rows arrive with one beginInsertRows per batch, changed rows as merged dataChanged ranges,
// and aboutToReset()/wasReset() bracket a model reset.
#pragma once

#include "model/SystemStore.h"

#include <QAbstractTableModel>
#include <QColor>

#include <vector>

class QPalette;

namespace mapi::ui {

// Where a task status sits in its lifecycle. The store uses the seed vocabulary (requested,
// accepted, rejected, handed-off, in-progress, completed, failed); servers' task.* events
// add their own words (open, assigned, cancelled, …), folded here.
// Blocked: the task waits on something (the SDK's "blocked", "waiting", A2A's "input-required"):
// not under way, and never shown as if it were.
enum class TaskPhase { Pending, Active, Blocked, HandedOff, Completed, Failed, Rejected, Cancelled };
TaskPhase taskPhase(const QString &status);
// Colour of a status, legible on the palette's base in light and dark themes.
QColor taskPhaseColor(TaskPhase phase, const QPalette &palette);

class TaskTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { IdColumn, TypeColumn, StatusColumn, RequesterColumn, AssigneeColumn, ProgressColumn,
                  UpdatedColumn, TransitionsColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // raw value for sorting (numbers stay numbers)
        TaskIdRole,
        ProgressRole,                // double 0..100, or invalid when not reported
    };

    explicit TaskTableModel(const SystemStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Store row of a task id, or -1.
    int rowOfTask(const QString &taskId) const;

private:
    void onChanged(const ChangeSet &changes);
    bool refreshAgentNames(const QSet<int> &agentRows);

    const SystemStore *m_store;
    int m_rows = 0;                    // rows announced to views (the store may be ahead until its next changed())
    std::vector<QString> m_agentNames; // display name per agent row, to notice renames
};

class TaskHistoryModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, StatusColumn, AgentColumn, DetailColumn, ColumnCount };

    explicit TaskHistoryModel(const SystemStore *store, QObject *parent = nullptr);

    // Shows the lifecycle of `taskId` (empty: nothing).
    void setTaskId(const QString &taskId);
    QString taskId() const { return m_taskId; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void onChanged(const ChangeSet &changes);
    const Task *task() const;

    const SystemStore *m_store;
    QString m_taskId;
    int m_taskRow = -1;
    int m_rows = 0; // transitions announced to views
    std::vector<TaskTransition> m_steps; // the task's transitions (SystemStore::taskHistory), refreshed with m_rows
};

} // namespace mapi::ui
