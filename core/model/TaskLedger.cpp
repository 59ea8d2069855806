#include "model/TaskLedger.h"

namespace mapi {

const Task *TaskLedger::find(const QString &id) const
{
    const int row = m_row.value(id, -1);
    return row < 0 ? nullptr : &m_tasks[size_t(row)];
}

Task &TaskLedger::ensure(const QString &id, qint64 timeMs)
{
    int row = m_row.value(id, -1);
    if (row < 0) {
        row = int(m_tasks.size());
        Task &added = m_tasks.emplace_back();
        added.id = id;
        added.createdAtMs = timeMs;
        m_row.insert(id, row);
        if (m_firstNew < 0)
            m_firstNew = row;
        ++m_created;
    }
    m_changed.insert(row);
    return m_tasks[size_t(row)];
}

void TaskLedger::transition(const QString &id, const QString &status, const QString &agentId, const QString &detail,
                            int messageRow, qint64 t)
{
    Task &task = ensure(id, t);
    task.status = status;
    task.updatedAtMs = t;
    task.lastTransition = m_history.append(task.lastTransition, {t, status, agentId, detail, messageRow});
    ++task.historySize;
}

void TaskLedger::applyEvent(const MapEvent &e, qint64 t)
{
    const MapEvent::TaskFields &fields = e.task;
    if (fields.id.isEmpty())
        return;
    Task &task = ensure(fields.id, t);
    if (!fields.title.isEmpty())
        task.type = fields.title;
    const QString assignee = fields.assignee.isEmpty() ? e.agentId : fields.assignee;
    if (!assignee.isEmpty())
        task.assigneeId = assignee;
    // Statuses come canonical (Dialect: canonicalTaskStatus). An assignment changes who holds
    // the task, not its status; a completion the task already reached (a server that sends
    // task.status completed, then task.completed) is not a second transition.
    QString status, detail;
    switch (e.kind) {
    case EventKind::TaskCreated: status = fields.status.isEmpty() ? QStringLiteral("open") : fields.status; break;
    case EventKind::TaskAssigned:
        status = task.status.isEmpty() ? QStringLiteral("open") : task.status;
        detail = QStringLiteral("assigned to %1").arg(assignee);
        break;
    case EventKind::TaskStatus: status = fields.current.isEmpty() ? fields.status : fields.current; break;
    case EventKind::TaskCompleted:
        if (task.status == QLatin1String("completed"))
            return;
        status = QStringLiteral("completed");
        break;
    default: break;
    }
    if (!status.isEmpty())
        transition(fields.id, status, assignee, detail, -1, t);
}

void TaskLedger::clear()
{
    m_tasks.clear();
    m_row.clear();
    m_history.clear();
    m_changed.clear();
    m_firstNew = -1;
    m_created = 0;
}

void TaskLedger::swap(TaskLedger &other)
{
    std::swap(m_tasks, other.m_tasks);
    std::swap(m_row, other.m_row);
    std::swap(m_history, other.m_history);
    std::swap(m_changed, other.m_changed);
    std::swap(m_firstNew, other.m_firstNew);
    std::swap(m_created, other.m_created);
}

} // namespace mapi
