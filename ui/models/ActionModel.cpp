#include "models/ActionModel.h"

#include "style/Colors.h"

#include <QDateTime>
#include <QFont>

#include <algorithm>

namespace mapi::ui {

ActionModel::ActionModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
    , m_rows(int(store->actions().size()))
{
    connect(store, &SystemStore::changed, this, &ActionModel::applyChanges);
    connect(store, &SystemStore::aboutToReset, this, [this] { beginResetModel(); });
    connect(store, &SystemStore::wasReset, this, [this] {
        m_rows = int(m_store->actions().size());
        endResetModel();
    });
}

QColor ActionModel::statusColor(ActionStatus status)
{
    switch (status) {
    case ActionStatus::Confirmed: return healthColor(Health::Healthy);
    case ActionStatus::Failed: return healthColor(Health::Failed);
    case ActionStatus::TimedOut: return healthColor(Health::Unresponsive);
    case ActionStatus::Unsupported: return healthColor(Health::Disconnected);
    case ActionStatus::Sent:
    case ActionStatus::Accepted: break;
    }
    return {};
}

QString ActionModel::latencyText(qint64 sentMs, qint64 stepMs)
{
    if (stepMs <= 0)
        return QStringLiteral("—");
    const qint64 ms = std::max<qint64>(0, stepMs - sentMs);
    if (ms < 1000)
        return tr("%1 ms").arg(ms);
    return tr("%1 s").arg(double(ms) / 1000.0, 0, 'f', ms < 10000 ? 2 : 1);
}

void ActionModel::applyChanges(const ChangeSet &changes)
{
    const int total = int(m_store->actions().size());
    const int oldRows = m_rows;
    if (total > oldRows) {
        beginInsertRows({}, oldRows, total - 1);
        m_rows = total;
        endInsertRows();
    }
    // Rows inserted just now are painted fresh; only older rows need dataChanged.
    std::vector<int> rows;
    rows.reserve(size_t(changes.actionRows.size()));
    for (int row : changes.actionRows)
        if (row < oldRows)
            rows.push_back(row);
    if (rows.empty())
        return;
    if (rows.size() * 2 > size_t(oldRows)) {
        Q_EMIT dataChanged(index(0, 0), index(oldRows - 1, ColumnCount - 1));
        return;
    }
    std::sort(rows.begin(), rows.end());
    size_t first = 0;
    for (size_t i = 1; i <= rows.size(); ++i) {
        if (i < rows.size() && rows[i] == rows[i - 1] + 1)
            continue;
        Q_EMIT dataChanged(index(rows[first], 0), index(rows[i - 1], ColumnCount - 1));
        first = i;
    }
}

int ActionModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int ActionModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ActionModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const OperatorAction &a = m_store->actions()[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SentColumn: return QDateTime::fromMSecsSinceEpoch(a.sentAtMs).toString(QStringLiteral("HH:mm:ss.zzz"));
        case KindColumn: return actionKindName(a.kind);
        case TargetColumn: {
            const Agent *agent = m_store->agent(a.agentId);
            return agent && !agent->name.isEmpty() ? agent->name : a.agentId;
        }
        case MethodColumn: return a.method;
        case FallbackColumn: return a.fallback ? tr("fallback") : QString();
        case StatusColumn: return actionStatusName(a.status);
        case DetailColumn: return a.detail;
        case AnswerColumn: return latencyText(a.sentAtMs, a.answeredAtMs);
        case SettledColumn:
            return a.status == ActionStatus::Sent || a.status == ActionStatus::Accepted ? QStringLiteral("—")
                                                                                         : latencyText(a.sentAtMs, a.settledAtMs);
        }
        break;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case SentColumn: return QDateTime::fromMSecsSinceEpoch(a.sentAtMs).toString(Qt::ISODateWithMs);
        case TargetColumn: return a.agentId;
        case FallbackColumn: return a.fallback ? a.note : QString();
        case DetailColumn: return a.detail;
        case AnswerColumn: return tr("Time from sending the request to the server's answer");
        case SettledColumn: return tr("Time from sending the request to its confirmation, failure or time-out");
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == StatusColumn) {
            const QColor color = statusColor(a.status);
            if (color.isValid())
                return color;
        }
        break;
    case Qt::FontRole:
        if (index.column() == StatusColumn && statusColor(a.status).isValid()) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == AnswerColumn || index.column() == SettledColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case ActionIdRole: return a.id;
    case StatusRole: return int(a.status);
    default: break;
    }
    return {};
}

QVariant ActionModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SentColumn: return tr("Sent");
    case KindColumn: return tr("Action");
    case TargetColumn: return tr("Agent");
    case MethodColumn: return tr("Method");
    case FallbackColumn: return tr("Fallback");
    case StatusColumn: return tr("Status");
    case DetailColumn: return tr("Detail");
    case AnswerColumn: return tr("Answer");
    case SettledColumn: return tr("Settled");
    }
    return {};
}

} // namespace mapi::ui
