#include "models/AlertModel.h"

#include "model/SystemStore.h"
#include "style/Colors.h"

#include <QFont>

namespace mapi::ui {

namespace {

QColor severityColor(AlertSeverity severity)
{
    return alertSeverityColor(int(severity));
}

QString waitingText(qint64 ms)
{
    const qint64 s = std::max<qint64>(0, ms / 1000);
    if (s < 60)
        return QObject::tr("%1 s").arg(s);
    if (s < 3600)
        return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QObject::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

} // namespace

AlertModel::AlertModel(const SystemStore *store, QObject *parent)
    : QAbstractTableModel(parent)
    , m_store(store)
{
}

int AlertModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AlertModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString AlertModel::agentsText(const Alert &alert) const
{
    if (alert.agents.isEmpty())
        return tr("(the whole system)");
    QStringList names;
    for (const QString &id : alert.agents.mid(0, 4))
        names << m_store->agentName(id);
    QString text = names.join(alert.kind == AlertKind::Deadlock ? QStringLiteral(" → ") : QStringLiteral(", "));
    if (alert.agents.size() > 4)
        text += tr(" and %1 more").arg(alert.agents.size() - 4);
    return text;
}

QVariant AlertModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const Row &row = m_rows[size_t(index.row())];
    const Alert &a = row.alert;
    switch (role) {
    case KeyRole: return a.key();
    case SeverityRole: return int(a.severity);
    case SinceRole: return a.sinceMs;
    case AcknowledgedRole: return row.acknowledged;
    case SnoozedUntilRole: return row.snoozedUntilMs;
    case AgentsRole: return a.agents;
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn: return alertSeverityName(a.severity);
        case KindColumn: return a.subject.isEmpty() || a.kind == AlertKind::Loop ? alertKindName(a.kind)
                                                                                 : QStringLiteral("%1 (%2)").arg(alertKindName(a.kind), a.subject);
        case AgentsColumn: return agentsText(a);
        case WaitingColumn: return waitingText(m_store->now() - a.sinceMs);
        case ReasonColumn: return row.acknowledged ? tr("acknowledged · %1").arg(a.reason) : a.reason;
        }
        break;
    case Qt::ToolTipRole:
        return QStringLiteral("%1\n\n%2\n%3").arg(a.reason, a.agents.join(u'\n'), a.evidence.join(u'\n'));
    case Qt::ForegroundRole:
        if (index.column() == SeverityColumn && !row.acknowledged)
            return severityColor(a.severity);
        if (row.acknowledged)
            return QColor(Qt::gray);
        break;
    case Qt::FontRole:
        if (index.column() == SeverityColumn && !row.acknowledged) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        break;
    default:
        break;
    }
    return {};
}

QVariant AlertModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn: return tr("Severity");
    case KindColumn: return tr("Alert");
    case AgentsColumn: return tr("Agents");
    case WaitingColumn: return tr("Waiting");
    case ReasonColumn: return tr("Reason");
    }
    return {};
}

void AlertModel::apply(const std::vector<AlertChange> &changes)
{
    for (const AlertChange &change : changes) {
        const int row = rowOf(change.alert.key());
        if (!change.raised) {
            if (row >= 0) {
                beginRemoveRows({}, row, row);
                m_rows.erase(m_rows.begin() + row);
                endRemoveRows();
            }
        } else if (row >= 0) { // raised again while shown (a reconnect): refresh it
            m_rows[size_t(row)].alert = change.alert;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        } else {
            beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
            m_rows.push_back({change.alert, false, 0});
            endInsertRows();
        }
    }
}

void AlertModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void AlertModel::refreshWaiting()
{
    if (!m_rows.empty())
        Q_EMIT dataChanged(index(0, WaitingColumn), index(int(m_rows.size()) - 1, WaitingColumn), {Qt::DisplayRole});
}

int AlertModel::rowOf(const QString &key) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].alert.key() == key)
            return int(i);
    return -1;
}

const Alert *AlertModel::alertAt(int row) const
{
    return row >= 0 && size_t(row) < m_rows.size() ? &m_rows[size_t(row)].alert : nullptr;
}

void AlertModel::setAcknowledged(const QString &key, bool acknowledged)
{
    const int row = rowOf(key);
    if (row < 0)
        return;
    m_rows[size_t(row)].acknowledged = acknowledged;
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void AlertModel::snooze(const QString &key, qint64 untilLocalMs)
{
    const int row = rowOf(key);
    if (row < 0)
        return;
    m_rows[size_t(row)].snoozedUntilMs = untilLocalMs;
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

AlertModel::Counts AlertModel::counts(qint64 localNowMs) const
{
    Counts c;
    for (const Row &row : m_rows) {
        ++c.open;
        if (row.snoozedUntilMs > localNowMs)
            ++c.snoozed;
        else if (row.acknowledged)
            ++c.acknowledged;
        else if (row.alert.severity == AlertSeverity::Critical)
            ++c.critical;
    }
    return c;
}

} // namespace mapi::ui
