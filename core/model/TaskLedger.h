// The tasks the system works on: each task's current state and the chain of its transitions
// (requested → accepted → in progress → completed, failed, rejected, handed off), from MAP's task
// events and the seed conventions carried in messages.
//
// Part of the store (SystemStore::tasks(), taskHistory() read it); kept apart because it owns the
// rows, their index and the transition log. The store decides what a message means for a task
// (StoreEvents.cpp); the ledger keeps the result. Rows are never removed; transitions older than
// the store's history bound are trimmed (the current state stays exact).
// Thread: the store's.
#pragma once

#include "model/ModelTypes.h"
#include "model/RowLogs.h"
#include "protocol/FastHash.h"

#include <QHash>
#include <QSet>

#include <utility>
#include <vector>

namespace mapi {

class TaskLedger
{
public:
    const std::vector<Task> &tasks() const { return m_tasks; }
    const Task *find(const QString &id) const;
    bool empty() const { return m_tasks.empty(); }
    // A task's transitions, oldest first.
    std::vector<TaskTransition> history(const Task &task) const { return m_history.chain(task.lastTransition); }

    // Task `id`, created (at `timeMs`) when it is new; marked changed either way.
    Task &ensure(const QString &id, qint64 timeMs);
    // Task `id` enters `status` (created when new): its current state and a new transition.
    // `messageRow`: the message that said so (-1: an event did).
    void transition(const QString &id, const QString &status, const QString &agentId, const QString &detail,
                    int messageRow, qint64 timeMs);
    // MAP's task events (task.created, task.assigned, task.status, task.completed).
    void applyEvent(const MapEvent &event, qint64 timeMs);

    size_t historyBytes() const { return m_history.memoryBytes(); }
    void setEventRow(int eventRow) { m_history.setEventRow(eventRow); }
    void trimHistoryBeforeEvent(int eventRow) { m_history.trimBeforeEvent(eventRow); }

    // The rows changed since the last call (new ones included), the first new row (-1: none),
    // and how many tasks were created.
    bool hasChanges() const { return !m_changed.isEmpty(); }
    QSet<int> takeChangedRows() { return std::exchange(m_changed, {}); }
    int takeFirstNewRow() { return std::exchange(m_firstNew, -1); }
    qint64 takeCreated() { return std::exchange(m_created, 0); }

    void clear();
    void swap(TaskLedger &other);

private:
    std::vector<Task> m_tasks;
    QHash<FastString, int> m_row;
    TaskHistoryLog m_history;
    QSet<int> m_changed;
    int m_firstNew = -1;
    qint64 m_created = 0;
};

} // namespace mapi
