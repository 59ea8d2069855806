#include "models/AlertModel.h"

#include "model/SystemStore.h"
#include "style/Colors.h"

#include <QFont>
#include <QSet>

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>

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
    return columnTitle(section);
}

QString AlertModel::columnTitle(int column)
{
    switch (column) {
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
    std::vector<int> removed;            // rows of cleared alerts
    std::vector<std::optional<Alert>> added; // new rows (nullopt: raised and cleared in this batch)
    QHash<QString, size_t> addedAt;
    QSet<int> removedRows;
    for (const AlertChange &change : changes) {
        const QString key = change.alert.key();
        const int row = m_rowOfKey.value(key, -1);
        if (!change.raised) {
            if (auto at = addedAt.find(key); at != addedAt.end()) {
                added[at.value()].reset();
                addedAt.erase(at);
            } else if (row >= 0 && !removedRows.contains(row)) {
                removed.push_back(row);
                removedRows.insert(row);
            }
        } else if (row >= 0 && !removedRows.contains(row)) { // raised again while shown (a reconnect): refresh it
            m_rows[size_t(row)].alert = change.alert;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        } else if (auto at = addedAt.find(key); at != addedAt.end()) {
            added[at.value()] = change.alert;
        } else {
            addedAt.insert(key, added.size());
            added.push_back(change.alert);
        }
    }
    // Removals from the bottom up, a run of neighbouring rows at once.
    std::sort(removed.begin(), removed.end(), std::greater<int>());
    for (const int row : removed)
        m_rowOfKey.remove(m_rows[size_t(row)].alert.key());
    for (size_t i = 0; i < removed.size();) {
        size_t j = i + 1;
        while (j < removed.size() && removed[j] == removed[j - 1] - 1)
            ++j;
        const int first = removed[j - 1], last = removed[i];
        beginRemoveRows({}, first, last);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + last + 1);
        endRemoveRows();
        i = j;
    }
    // The rows below the first removed one moved up: only theirs are looked up again (a rebuild
    // of the whole index was 2-5 ms at 10,000 rows, for every part of a storm's verdict).
    if (!removed.empty())
        for (size_t i = size_t(removed.back()); i < m_rows.size(); ++i)
            m_rowOfKey[m_rows[i].alert.key()] = int(i);
    std::vector<Row> fresh;
    for (std::optional<Alert> &a : added) {
        if (!a)
            continue;
        const Mark mark = m_remembered.value(a->key()); // acknowledged or snoozed before a clear()
        fresh.push_back({std::move(*a), mark.acknowledged, mark.snoozedUntilMs});
    }
    m_remembered.clear(); // what the first evaluation after clear() did not raise again is over
    if (!fresh.empty()) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + fresh.size()) - 1);
        const size_t firstNew = m_rows.size();
        std::move(fresh.begin(), fresh.end(), std::back_inserter(m_rows));
        for (size_t i = firstNew; i < m_rows.size(); ++i)
            m_rowOfKey.insert(m_rows[i].alert.key(), int(i));
        endInsertRows();
    }
}

void AlertModel::clear()
{
    beginResetModel();
    m_remembered.clear();
    for (const Row &row : m_rows)
        if (row.acknowledged || row.snoozedUntilMs > 0)
            m_remembered.insert(row.alert.key(), {row.acknowledged, row.snoozedUntilMs});
    m_rows.clear();
    m_rowOfKey.clear();
    endResetModel();
}

bool AlertModel::snoozeEndedBetween(qint64 fromLocalMs, qint64 toLocalMs) const
{
    for (const Row &row : m_rows)
        if (row.snoozedUntilMs > fromLocalMs && row.snoozedUntilMs <= toLocalMs)
            return true;
    return false;
}

void AlertModel::refreshWaiting()
{
    if (!m_rows.empty())
        Q_EMIT dataChanged(index(0, WaitingColumn), index(int(m_rows.size()) - 1, WaitingColumn), {Qt::DisplayRole});
}

int AlertModel::rowOf(const QString &key) const
{
    return m_rowOfKey.value(key, -1);
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
