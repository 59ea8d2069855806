#include "models/TaskModels.h"

#include "common/ColumnTitles.h"
#include "common/ModelSignals.h"
#include "common/TimeText.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QGuiApplication>
#include <QHash>
#include <QPalette>

#include <algorithm>

namespace mapi::ui {

namespace {

QString fullTime(qint64 ms)
{
    return ms <= 0 ? QString() : QDateTime::fromMSecsSinceEpoch(shownTime(ms)).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

// Status cells: a solid swatch as decoration and a light tint behind the text, so the text
// keeps the palette's colour (readable in both themes).
QVariant statusCellRole(const QString &status, int role)
{
    const QColor color = taskPhaseColor(taskPhase(status), QGuiApplication::palette());
    if (role == Qt::DecorationRole)
        return color;
    QColor tint = color;
    tint.setAlpha(56);
    return tint;
}

} // namespace

TaskPhase taskPhase(const QString &status)
{
    // Called for every task on each change batch and chart sample: one hash lookup, and a
    // lower-cased second try only for servers' own capitalisation.
    static const QHash<QString, TaskPhase> phases = {
        {QStringLiteral("completed"), TaskPhase::Completed}, {QStringLiteral("done"), TaskPhase::Completed},
        {QStringLiteral("succeeded"), TaskPhase::Completed}, {QStringLiteral("success"), TaskPhase::Completed},
        {QStringLiteral("failed"), TaskPhase::Failed},       {QStringLiteral("error"), TaskPhase::Failed},
        {QStringLiteral("timeout"), TaskPhase::Failed},      {QStringLiteral("timed-out"), TaskPhase::Failed},
        {QStringLiteral("rejected"), TaskPhase::Rejected},
        {QStringLiteral("cancelled"), TaskPhase::Cancelled}, {QStringLiteral("canceled"), TaskPhase::Cancelled},
        {QStringLiteral("handed-off"), TaskPhase::HandedOff}, {QStringLiteral("handoff"), TaskPhase::HandedOff},
        {QStringLiteral("requested"), TaskPhase::Pending},   {QStringLiteral("open"), TaskPhase::Pending},
        {QStringLiteral("pending"), TaskPhase::Pending},     {QStringLiteral("created"), TaskPhase::Pending},
        {QStringLiteral("accepted"), TaskPhase::Active},     {QStringLiteral("assigned"), TaskPhase::Active},
        {QStringLiteral("in-progress"), TaskPhase::Active},  {QStringLiteral("in_progress"), TaskPhase::Active},
        {QStringLiteral("blocked"), TaskPhase::Blocked},     {QStringLiteral("waiting"), TaskPhase::Blocked},
        {QStringLiteral("input-required"), TaskPhase::Blocked}, {QStringLiteral("paused"), TaskPhase::Blocked},
    };
    if (status.isEmpty())
        return TaskPhase::Pending;
    auto found = phases.constFind(status);
    if (found == phases.constEnd())
        found = phases.constFind(status.toLower());
    // Anything else (accepted, assigned, in-progress, servers' working states) is under way.
    return found == phases.constEnd() ? TaskPhase::Active : *found;
}

QColor taskPhaseColor(TaskPhase phase, const QPalette &palette)
{
    switch (phase) {
    case TaskPhase::Pending: return palette.color(QPalette::PlaceholderText);
    case TaskPhase::Active: return palette.color(QPalette::Highlight);
    case TaskPhase::Blocked: return healthColor(Health::Late);
    case TaskPhase::HandedOff: return healthColor(Health::Late);
    case TaskPhase::Completed: return healthColor(Health::Healthy);
    case TaskPhase::Failed: return healthColor(Health::Failed);
    case TaskPhase::Rejected: return healthColor(Health::Unresponsive);
    case TaskPhase::Cancelled: return healthColor(Health::Disconnected);
    }
    return palette.color(QPalette::Text);
}

// ---- TaskTableModel ----------------------------------------------------------------------

TaskTableModel::TaskTableModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->tasks().size()))
{
    refreshAgentNames({});
    connect(store, &SystemStore::changed, this, &TaskTableModel::onChanged);
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_rows = 0;
        m_agentNames.clear();
    });
    connect(store, &SystemStore::wasReset, this, [this] { endResetModel(); });
}

int TaskTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int TaskTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

int TaskTableModel::rowOfTask(const QString &taskId) const
{
    const Task *task = m_store->task(taskId);
    if (!task)
        return -1;
    const int row = int(task - m_store->tasks().data());
    return row < m_rows ? row : -1;
}

QVariant TaskTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Task &task = m_store->tasks()[size_t(index.row())];
    const int column = index.column();
    if (role == TaskIdRole)
        return task.id;
    if (role == ProgressRole)
        return task.progress ? QVariant(*task.progress) : QVariant();
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (column) {
        case IdColumn: return role == SortRole ? QVariant(index.row()) : QVariant(task.id); // sorted by arrival
        case TypeColumn: return task.type;
        case StatusColumn: return task.status;
        case RequesterColumn: return m_store->agentName(task.requesterId);
        case AssigneeColumn: return m_store->agentName(task.assigneeId);
        case ProgressColumn:
            if (role == SortRole)
                return task.progress ? *task.progress : -1.0;
            return task.progress ? QStringLiteral("%1 %").arg(*task.progress, 0, 'f', 0) : QString();
        case UpdatedColumn:
            if (role == SortRole)
                return std::max(task.updatedAtMs, task.createdAtMs);
            return timeOfDay(std::max(task.updatedAtMs, task.createdAtMs));
        case TransitionsColumn: return task.historySize;
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (column) {
        case RequesterColumn: return task.requesterId;
        case AssigneeColumn: return task.assigneeId;
        case UpdatedColumn:
            return tr("Created %1\nUpdated %2").arg(fullTime(task.createdAtMs), fullTime(task.updatedAtMs));
        default: return {};
        }
    }
    if (column == StatusColumn && (role == Qt::DecorationRole || role == Qt::BackgroundRole))
        return statusCellRole(task.status, role);
    if (role == Qt::TextAlignmentRole && (column == ProgressColumn || column == TransitionsColumn))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant TaskTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == IdColumn)
        return tr("Task id; sorts in order of arrival");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn: return tr("Task");
    case TypeColumn: return tr("Type");
    case StatusColumn: return tr("Status");
    case RequesterColumn: return tr("Requester");
    case AssigneeColumn: return tr("Assignee");
    case ProgressColumn: return tr("Progress");
    case UpdatedColumn: return tr("Updated");
    case TransitionsColumn: return tr("Steps");
    }
    return {};
}

// Returns true when the display name of any agent changed (or a new named agent appeared):
// requester/assignee cells show names, so they must follow renames.
bool TaskTableModel::refreshAgentNames(const QSet<int> &agentRows)
{
    const std::vector<Agent> &agents = m_store->agents();
    bool changed = false;
    for (int row : agentRows) {
        if (row < 0 || size_t(row) >= m_agentNames.size())
            continue;
        const QString name = m_store->agentName(agents[size_t(row)].id);
        if (name != m_agentNames[size_t(row)]) {
            m_agentNames[size_t(row)] = name;
            changed = true;
        }
    }
    for (size_t row = m_agentNames.size(); row < agents.size(); ++row) {
        m_agentNames.push_back(m_store->agentName(agents[row].id));
        changed = true;
    }
    return changed;
}

void TaskTableModel::onChanged(const ChangeSet &changes)
{
    const int oldRows = m_rows;
    const int newRows = int(m_store->tasks().size());
    if (newRows > oldRows) {
        beginInsertRows({}, oldRows, newRows - 1);
        m_rows = newRows;
        endInsertRows();
    }
    if (refreshAgentNames(changes.agentRows) && oldRows > 0)
        Q_EMIT dataChanged(index(0, RequesterColumn), index(oldRows - 1, AssigneeColumn));
    // A task's id never changes: leaving its column out spares a proxy sorted by it (the
    // default, arrival order) from re-sorting on every update.
    emitRowsChanged(this, changes.taskRows, oldRows, TypeColumn, ColumnCount - 1);
}

// ---- TaskHistoryModel --------------------------------------------------------------------

TaskHistoryModel::TaskHistoryModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
    connect(store, &SystemStore::changed, this, &TaskHistoryModel::onChanged);
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_taskRow = -1;
        m_rows = 0;
        m_steps.clear();
    });
    connect(store, &SystemStore::wasReset, this, [this] { endResetModel(); });
}

const Task *TaskHistoryModel::task() const
{
    return m_taskRow < 0 ? nullptr : &m_store->tasks()[size_t(m_taskRow)];
}

void TaskHistoryModel::setTaskId(const QString &taskId)
{
    if (taskId == m_taskId)
        return;
    beginResetModel();
    m_taskId = taskId;
    const Task *found = taskId.isEmpty() ? nullptr : m_store->task(taskId);
    m_taskRow = found ? int(found - m_store->tasks().data()) : -1;
    m_steps = found ? m_store->taskHistory(*found) : std::vector<TaskTransition>();
    m_rows = int(m_steps.size());
    endResetModel();
}

void TaskHistoryModel::onChanged(const ChangeSet &changes)
{
    if (m_taskId.isEmpty())
        return;
    if (m_taskRow < 0) { // the task may have arrived since it was chosen (or since a reset)
        if (changes.firstNewTaskRow < 0)
            return;
        const Task *found = m_store->task(m_taskId);
        if (!found)
            return;
        m_taskRow = int(found - m_store->tasks().data());
    }
    const Task &current = *task();
    const int newRows = current.historySize;
    if (newRows > m_rows) {
        beginInsertRows({}, m_rows, newRows - 1);
        m_steps = m_store->taskHistory(current);
        m_rows = newRows;
        endInsertRows();
    }
    // Agent names follow renames; the history is short, so checking its agents is cheap.
    if (m_rows > 0 && !changes.agentRows.isEmpty()) {
        for (const TaskTransition &step : m_steps) {
            if (changes.agentRows.contains(m_store->agentRow(step.agentId))) {
                Q_EMIT dataChanged(index(0, AgentColumn), index(m_rows - 1, AgentColumn));
                break;
            }
        }
    }
}

int TaskHistoryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int TaskHistoryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TaskHistoryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !task())
        return {};
    const TaskTransition &step = m_steps[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn: return timeOfDay(step.timeMs, TimePrecision::Milliseconds);
        case StatusColumn: return step.status;
        case AgentColumn: return m_store->agentName(step.agentId);
        case DetailColumn: return step.detail;
        }
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TimeColumn: return fullTime(step.timeMs);
        case AgentColumn: return step.agentId;
        case DetailColumn:
            return step.messageRow < 0 || !m_store->messages().isKept(size_t(step.messageRow))
                ? step.detail
                : tr("%1\nmessage %2").arg(step.detail, m_store->messages().id(size_t(step.messageRow)));
        default: return {};
        }
    case Qt::DecorationRole:
    case Qt::BackgroundRole:
        if (index.column() == StatusColumn)
            return statusCellRole(step.status, role);
        return {};
    default:
        return {};
    }
}

QVariant TaskHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Time"), tr("Status"), tr("Agent"), tr("Detail")});
}

} // namespace mapi::ui
