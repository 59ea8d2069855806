#include "models/ActionModel.h"

#include "common/ColumnTitles.h"
#include "common/ModelSignals.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QFont>

#include <algorithm>

namespace mapi::ui {

ActionModel::ActionModel(const SystemStore *store, QObject *parent)
    : LogTableModel(store, ColumnCount, [store] { return int(store->actions().size()); }, {}, parent)
{
    connect(store, &SystemStore::changed, this, &ActionModel::applyChanges);
}

QColor ActionModel::statusColor(ActionStatus status)
{
    switch (status) {
    case ActionStatus::Confirmed: return healthColor(Health::Healthy);
    case ActionStatus::Failed: return healthColor(Health::Failed);
    case ActionStatus::TimedOut: return healthColor(Health::Unresponsive);
    case ActionStatus::Unsupported: return healthColor(Health::Disconnected);
    case ActionStatus::Unknown: return healthColor(Health::Late);
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
    // Rows inserted just now are painted fresh; only older rows need dataChanged.
    const int oldRows = followLog();
    emitRowsChanged(this, changes.actionRows, oldRows, 0, ColumnCount - 1);
}

QVariant ActionModel::entryData(size_t row, int column, int role) const
{
    const OperatorAction &a = m_store->actions()[row];
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case SentColumn: return QDateTime::fromMSecsSinceEpoch(a.sentAtMs).toString(QStringLiteral("HH:mm:ss.zzz"));
        case KindColumn: return actionKindName(a.kind);
        case TargetColumn: return m_store->agentName(a.agentId);
        case MethodColumn: return a.method;
        case FallbackColumn: return a.fallback ? tr("fallback") : QString();
        case StatusColumn: return actionStatusName(a.status);
        case DetailColumn: {
            const QString origin = m_origin ? m_origin(a.id) : QString();
            return origin.isEmpty() ? a.detail : a.detail.isEmpty() ? origin : QStringLiteral("%1 · %2").arg(origin, a.detail);
        }
        case AnswerColumn: return latencyText(a.sentAtMs, a.answeredAtMs);
        case SettledColumn:
            return a.status == ActionStatus::Sent || a.status == ActionStatus::Accepted || a.status == ActionStatus::Unknown
                ? QStringLiteral("—")
                                                                                         : latencyText(a.sentAtMs, a.settledAtMs);
        }
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case SentColumn: return QDateTime::fromMSecsSinceEpoch(a.sentAtMs).toString(Qt::ISODateWithMs);
        case TargetColumn: return a.agentId;
        case FallbackColumn: return a.fallback ? a.note : QString();
        case DetailColumn: return a.detail;
        case AnswerColumn: return tr("Time from sending the request to the server's answer");
        case SettledColumn: return tr("Time from sending the request to its confirmation, failure or time-out");
        }
        break;
    case Qt::ForegroundRole:
        if (column == StatusColumn) {
            const QColor color = statusColor(a.status);
            if (color.isValid())
                return color;
        }
        break;
    case Qt::FontRole:
        if (column == StatusColumn && statusColor(a.status).isValid()) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        break;
    case Qt::TextAlignmentRole:
        if (column == AnswerColumn || column == SettledColumn)
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
    return columnTitle(section, orientation, role, {tr("Sent"), tr("Action"), tr("Agent"), tr("Method"), tr("Fallback"), tr("Status"), tr("Detail"), tr("Answer"), tr("Settled")});
}

} // namespace mapi::ui
