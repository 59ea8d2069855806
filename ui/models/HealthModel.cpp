#include "models/HealthModel.h"

#include "common/ColumnTitles.h"
#include "common/ModelSignals.h"
#include "common/TimeText.h"
#include "style/Colors.h"

#include <QDateTime>

#include <algorithm>

namespace mapi::ui {

namespace {

QString timeOrNever(qint64 ms)
{
    return ms <= 0 ? HealthModel::tr("never") : timeOfDay(ms);
}

} // namespace

int healthRank(Health health)
{
    switch (health) {
    case Health::Failed: return 0;
    case Health::Unresponsive: return 1;
    case Health::Disconnected: return 2;
    case Health::Late: return 3;
    case Health::Unknown: return 4;
    case Health::Suspended: return 5;
    case Health::Healthy: return 6;
    case Health::Stopped: return 7;
    }
    return kHealthCount;
}

std::array<Health, kHealthCount> healthsWorstFirst()
{
    return {Health::Failed, Health::Unresponsive, Health::Disconnected, Health::Late,
            Health::Unknown, Health::Suspended, Health::Healthy, Health::Stopped};
}

QString formatAge(qint64 sinceMs, qint64 nowMs)
{
    if (sinceMs <= 0)
        return QStringLiteral("—");
    const qint64 seconds = std::max<qint64>(0, nowMs - sinceMs) / 1000;
    if (seconds < 120)
        return HealthModel::tr("%1 s").arg(seconds);
    if (seconds < 2 * 3600)
        return HealthModel::tr("%1 min").arg(seconds / 60);
    if (seconds < 2 * 86400)
        return HealthModel::tr("%1 h").arg(seconds / 3600);
    return HealthModel::tr("%1 d").arg(seconds / 86400);
}

HealthModel::HealthModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->agents().size()))
    , m_agesAtMs(store->now())
{
    rememberIdentities();
    recount();
    connect(store, &SystemStore::changed, this, &HealthModel::onChanged);
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_rows = 0;
        m_shown.clear();
    });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_agesAtMs = m_store->now();
        endResetModel();
        recount();
    });
}

int HealthModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int HealthModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

int HealthModel::rowOfAgent(const QString &agentId) const
{
    const int row = m_store->agentRow(agentId);
    return row < m_rows ? row : -1;
}

QVariant HealthModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Agent &agent = m_store->agents()[size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case AgentIdRole: return agent.id;
    case HealthRole: return int(agent.health);
    case Qt::DisplayRole:
    case SortRole:
        switch (column) {
        case AgentColumn: return shownName(agent);
        case HealthColumn: return role == SortRole ? QVariant(healthRank(agent.health)) : QVariant(healthName(agent.health));
        case HeartbeatColumn:
            if (role == SortRole) // never-heard agents sort as the longest silent
                return agent.lastHeartbeatMs;
            return formatAge(agent.lastHeartbeatMs, m_store->now());
        case StatusColumn: return agent.heartbeatStatus;
        case LoadColumn:
            if (!agent.load)
                return role == SortRole ? QVariant(-1.0) : QVariant();
            if (role == SortRole)
                return *agent.load;
            // Seed heartbeats report load as a 0..1 fraction; other scales are shown as sent.
            return *agent.load <= 1.0 ? QStringLiteral("%1 %").arg(*agent.load * 100.0, 0, 'f', 0)
                                      : QString::number(*agent.load, 'g', 4);
        case TasksColumn: // "running / queued"; sorted by running
            if (role == SortRole)
                return agent.tasksRunning.value_or(-1); // unreported sorts below zero
            if (agent.tasksRunning && agent.tasksQueued)
                return QStringLiteral("%1 / %2").arg(*agent.tasksRunning).arg(*agent.tasksQueued);
            if (agent.tasksRunning)
                return QString::number(*agent.tasksRunning);
            if (agent.tasksQueued)
                return QStringLiteral("– / %1").arg(*agent.tasksQueued);
            return {};
        }
        return {};
    case Qt::DecorationRole:
        if (column == AgentColumn)
            return healthColor(agent.health);
        return {};
    case Qt::BackgroundRole:
        if (column == HealthColumn) { // a tint keeps the palette's text colour readable in both themes
            QColor tint = healthColor(agent.health);
            tint.setAlpha(72);
            return tint;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (column >= HeartbeatColumn && column != StatusColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case AgentColumn:
            return tr("%1\nid %2\nrole %3 · state %4")
                .arg(shownName(agent), agent.id, agent.role, agent.state);
        case HealthColumn:
            if (agent.health == Health::Failed && !agent.lastErrorMessage.isEmpty())
                return tr("failed: %1 %2").arg(agent.lastErrorSeverity, agent.lastErrorMessage);
            return {};
        case HeartbeatColumn:
            return tr("Last heartbeat %1\nLast activity %2")
                .arg(timeOrNever(agent.lastHeartbeatMs), timeOrNever(agent.lastActivityMs));
        default: return {};
        }
    default:
        return {};
    }
}

QVariant HealthModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        return columnTitle(section, orientation, role,
                           {tr("Agent"), tr("Health"), tr("Beat"), tr("Status"), tr("Load"), tr("Tasks")});
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case HeartbeatColumn: return tr("Time since the last heartbeat (— when none was ever seen)");
        case StatusColumn: return tr("Status reported by the agent's heartbeats");
        case LoadColumn: return tr("Load reported by the agent's heartbeats");
        case TasksColumn: return tr("Tasks running / queued, as reported by the agent's heartbeats");
        default: return {};
        }
    }
    return {};
}

void HealthModel::rememberIdentities()
{
    const std::vector<Agent> &agents = m_store->agents();
    for (size_t row = m_shown.size(); row < size_t(m_rows); ++row)
        m_shown.push_back({agents[row].health, agents[row].name});
}

bool HealthModel::isReported(Column column) const
{
    switch (column) {
    case StatusColumn: return m_statusReported;
    case LoadColumn: return m_loadReported;
    case TasksColumn: return m_tasksReported;
    default: return true;
    }
}

void HealthModel::recount()
{
    std::array<int, kHealthCount> counts{};
    bool status = false, load = false, tasks = false;
    const std::vector<Agent> &agents = m_store->agents();
    for (int row = 0; row < m_rows; ++row) {
        const Agent &agent = agents[size_t(row)];
        ++counts[size_t(agent.health)];
        status = status || !agent.heartbeatStatus.isEmpty();
        load = load || agent.load.has_value();
        tasks = tasks || agent.tasksRunning.has_value() || agent.tasksQueued.has_value();
    }
    if (counts != m_counts) {
        m_counts = counts;
        Q_EMIT healthCountsChanged();
    }
    if (status != m_statusReported || load != m_loadReported || tasks != m_tasksReported) {
        m_statusReported = status;
        m_loadReported = load;
        m_tasksReported = tasks;
        Q_EMIT reportedColumnsChanged();
    }
}

void HealthModel::onChanged(const ChangeSet &changes)
{
    const int oldRows = m_rows;
    const int newRows = int(m_store->agents().size());
    if (newRows > oldRows) {
        beginInsertRows({}, oldRows, newRows - 1);
        m_rows = newRows;
        rememberIdentities();
        endInsertRows();
    }
    // Most changes are heartbeats: only rows whose name or health changed include the columns
    // a worst-first proxy sorts by, so heartbeats do not make it re-sort.
    QSet<int> identityRows, detailRows;
    const std::vector<Agent> &agents = m_store->agents();
    for (int row : changes.agentRows) {
        if (row < 0 || row >= oldRows)
            continue;
        const Agent &agent = agents[size_t(row)];
        Identity &shown = m_shown[size_t(row)];
        if (agent.health != shown.health || agent.name != shown.name) {
            shown = {agent.health, agent.name};
            identityRows.insert(row);
        } else {
            detailRows.insert(row);
        }
    }
    for (int row : changes.activeAgentRows) // their last activity is in the details
        detailRows.insert(row);
    emitRowsChanged(this, identityRows, oldRows, 0, ColumnCount - 1);
    emitRowsChanged(this, detailRows, oldRows, HeartbeatColumn, ColumnCount - 1);
    if (newRows > oldRows || !changes.agentRows.isEmpty())
        recount();
    refreshAges();
}

void HealthModel::refreshAges()
{
    // Ages are shown in whole seconds: the clock moves with every event, the text once a second.
    const qint64 now = m_store->now();
    if (now / 1000 == m_agesAtMs / 1000)
        return;
    m_agesAtMs = now;
    if (m_rows > 0)
        Q_EMIT dataChanged(index(0, HeartbeatColumn), index(m_rows - 1, HeartbeatColumn), {Qt::DisplayRole});
}

// ---- HealthSortProxy ---------------------------------------------------------------------

HealthSortProxy::HealthSortProxy(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(HealthModel::SortRole);
    setDynamicSortFilter(true);
}

bool HealthSortProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const QVariant a = left.data(sortRole());
    const QVariant b = right.data(sortRole());
    const QPartialOrdering order = QVariant::compare(a, b);
    if (order == QPartialOrdering::Less)
        return true;
    if (order == QPartialOrdering::Greater)
        return false;
    const QString nameA = left.siblingAtColumn(HealthModel::AgentColumn).data().toString();
    const QString nameB = right.siblingAtColumn(HealthModel::AgentColumn).data().toString();
    return nameA.compare(nameB, Qt::CaseInsensitive) < 0;
}

} // namespace mapi::ui
