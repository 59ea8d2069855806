#include "models/AlertModel.h"

#include "alerts/AlertGroups.h"
#include "model/SystemStore.h"
#include "style/Colors.h"

#include <QFont>
#include <QLocale>
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
    case AgentsRole: return agentsAt(index.row());
    case GroupRole: return row.group;
    case IsGroupRole: return row.isGroup;
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn: return alertSeverityName(a.severity);
        case KindColumn:
            if (row.isGroup) // ▾ / ▸: expanded or not, as a tree view draws it
                return QStringLiteral("%1 %2").arg(m_expanded.contains(row.group) ? QChar(0x25BE) : QChar(0x25B8), alertKindName(a.kind));
            return QString((row.group.isEmpty() ? QString() : QStringLiteral("    "))
                   + (a.subject.isEmpty() || a.kind == AlertKind::Loop ? alertKindName(a.kind)
                                                                       : QStringLiteral("%1 (%2)").arg(alertKindName(a.kind), a.subject)));
        case AgentsColumn: return row.isGroup ? groupText(row) : agentsText(a);
        case WaitingColumn: return waitingText(m_store->now() - a.sinceMs);
        case ReasonColumn: {
            const QString reason = row.isGroup ? groupReason(row) : a.reason;
            return row.acknowledged ? tr("acknowledged · %1").arg(reason) : reason;
        }
        }
        break;
    case Qt::ToolTipRole:
        if (row.isGroup)
            return a.reason;
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
    QSet<QString> touched = m_groups ? m_groups->lastTouched() : QSet<QString>(); // groups whose alerts changed
    for (const AlertChange &change : changes) {
        const QString key = change.alert.key();
        const int row = m_rowOfKey.value(key, -1);
        if (m_groups)
            if (const QString group = m_groups->groupOf(key); !group.isEmpty())
                touched.insert(group);
        if (!change.raised) {
            if (auto at = addedAt.find(key); at != addedAt.end()) {
                added[at.value()].reset();
                addedAt.erase(at);
            } else if (row >= 0 && !removedRows.contains(row)) {
                removed.push_back(row);
                removedRows.insert(row);
                if (!m_rows[size_t(row)].group.isEmpty())
                    touched.insert(m_rows[size_t(row)].group);
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
    eraseRows(std::move(removed));
    std::vector<Row> fresh;
    for (std::optional<Alert> &a : added) {
        if (!a)
            continue;
        const QString key = a->key();
        Row row;
        row.alert = std::move(*a);
        if (const auto mark = m_remembered.constFind(key); mark != m_remembered.cend()) { // acknowledged or snoozed before a clear()
            row.acknowledged = mark->acknowledged;
            row.snoozedUntilMs = mark->snoozedUntilMs;
        }
        if (m_groups && m_groups->isGrouped(key)) {
            row.group = m_groups->groupOf(key);
            // Joining a group the operator acknowledged or snoozed: so is this alert (not when the
            // group emptied and formed again in this batch: that is a new storm).
            if (const int groupRow = groupRowOf(row.group);
                groupRow >= 0 && !m_remembered.contains(key) && !m_groups->lastReformed().contains(row.group)) {
                row.acknowledged = m_rows[size_t(groupRow)].acknowledged;
                row.snoozedUntilMs = m_rows[size_t(groupRow)].snoozedUntilMs;
            }
        }
        fresh.push_back(std::move(row));
    }
    if (!fresh.empty()) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + fresh.size()) - 1);
        const size_t firstNew = m_rows.size();
        std::move(fresh.begin(), fresh.end(), std::back_inserter(m_rows));
        for (size_t i = firstNew; i < m_rows.size(); ++i)
            m_rowOfKey.insert(m_rows[i].alert.key(), int(i));
        endInsertRows();
    }
    if (!touched.isEmpty())
        syncGroups(touched);
}

void AlertModel::eraseRows(std::vector<int> rows)
{
    if (rows.empty())
        return;
    // From the bottom up, a run of neighbouring rows at once.
    std::sort(rows.begin(), rows.end(), std::greater<int>());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (const int row : rows) {
        m_rowOfKey.remove(m_rows[size_t(row)].alert.key());
        if (m_rows[size_t(row)].isGroup)
            m_groupRowOf.remove(m_rows[size_t(row)].group);
    }
    for (size_t i = 0; i < rows.size();) {
        size_t j = i + 1;
        while (j < rows.size() && rows[j] == rows[j - 1] - 1)
            ++j;
        const int first = rows[j - 1], last = rows[i];
        beginRemoveRows({}, first, last);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + last + 1);
        endRemoveRows();
        i = j;
    }
    // The rows below the first removed one moved up: only theirs are looked up again (a rebuild
    // of the whole index was 2-5 ms at 10,000 rows, for every part of a storm's verdict).
    for (size_t i = size_t(rows.back()); i < m_rows.size(); ++i) {
        m_rowOfKey[m_rows[i].alert.key()] = int(i);
        if (m_rows[i].isGroup)
            m_groupRowOf[m_rows[i].group] = int(i);
    }
}

void AlertModel::syncGroups(const QSet<QString> &touched)
{
    bool regrouped = false;
    const auto describe = [](Row &row, const AlertGroup &group) {
        row.alert.kind = group.kind;
        row.alert.severity = group.severity;
        row.alert.sinceMs = group.sinceMs;
        row.alert.reason = group.title();
    };
    // First the group rows that go: a group emptied (or never large enough), or one that emptied
    // and formed again within the batch (a new storm: its row starts afresh, folded, unmarked).
    std::vector<int> gone;
    for (const QString &key : touched) {
        const AlertGroup *group = m_groups ? m_groups->group(key) : nullptr;
        if (!group || group->grownAtMs < 0 || m_groups->lastReformed().contains(key)) {
            if (const int row = groupRowOf(key); row >= 0)
                gone.push_back(row);
            if (m_expanded.remove(key))
                regrouped = true; // alerts of the new storm, inserted above while it was listed, fold
        }
    }
    eraseRows(std::move(gone));
    for (const QString &key : touched) {
        const AlertGroup *group = m_groups ? m_groups->group(key) : nullptr;
        if (!group || group->grownAtMs < 0)
            continue;
        if (const int row = groupRowOf(key); row >= 0) {
            const Alert before = m_rows[size_t(row)].alert;
            describe(m_rows[size_t(row)], *group);
            // Its members sort by the group row's place: a listed group that moves takes them along.
            if (m_expanded.contains(key) && (before.severity != group->severity || before.sinceMs != group->sinceMs))
                regrouped = true;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
            continue;
        }
        Row groupRow;
        groupRow.isGroup = true;
        groupRow.group = key;
        groupRow.alert.cachedKey = groupRowKey(key);
        const Mark mark = m_remembered.value(groupRow.alert.cachedKey); // acknowledged or snoozed before a clear()
        groupRow.acknowledged = mark.acknowledged;
        groupRow.snoozedUntilMs = mark.snoozedUntilMs;
        describe(groupRow, *group);
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
        m_rowOfKey.insert(groupRow.alert.cachedKey, int(m_rows.size()));
        m_groupRowOf.insert(key, int(m_rows.size()));
        m_rows.push_back(std::move(groupRow));
        endInsertRows();
        // A group formed around alerts listed singly until now: they move under it. A group the
        // operator had marked before new rules gives its mark to those that had none of their own.
        const bool marked = mark.acknowledged || mark.snoozedUntilMs > 0;
        int firstMarked = int(m_rows.size()), lastMarked = -1;
        for (const QString &member : group->alerts) {
            const int memberRow = rowOf(member);
            if (memberRow < 0)
                continue;
            Row &r = m_rows[size_t(memberRow)];
            if (r.group != key) {
                r.group = key;
                regrouped = true;
            }
            if (marked && !m_remembered.contains(member)) {
                setMark(memberRow, mark.acknowledged, mark.snoozedUntilMs);
                firstMarked = std::min(firstMarked, memberRow);
                lastMarked = std::max(lastMarked, memberRow);
            }
        }
        if (lastMarked >= 0)
            Q_EMIT dataChanged(index(firstMarked, 0), index(lastMarked, ColumnCount - 1));
    }
    if (regrouped)
        Q_EMIT groupingChanged();
}

void AlertModel::evaluationEnded()
{
    m_remembered.clear(); // what the first evaluation after clear() did not raise again is over
}

void AlertModel::clear()
{
    beginResetModel();
    m_remembered.clear();
    for (const Row &row : m_rows)
        if (row.acknowledged || row.snoozedUntilMs > 0)
            m_remembered.insert(row.alert.key(), {row.acknowledged, row.snoozedUntilMs});
    m_expanded.clear();
    m_rows.clear();
    m_rowOfKey.clear();
    m_groupRowOf.clear();
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

QString AlertModel::groupText(const Row &row) const
{
    const AlertGroup *group = m_groups ? m_groups->group(row.group) : nullptr;
    if (!group)
        return {};
    const QString agents = tr("%1 agents").arg(QLocale().toString(group->agentCount));
    return group->where.isEmpty() ? agents : QStringLiteral("%1 %2").arg(agents, group->where);
}

QString AlertModel::groupReason(const Row &row) const
{
    const AlertGroup *group = m_groups ? m_groups->group(row.group) : nullptr;
    const int alerts = group ? int(group->alerts.size()) : 0;
    const QString by = m_groups ? m_groups->rules().groupBy.join(QStringLiteral(", ")) : QString();
    return m_expanded.contains(row.group) ? tr("%1 alerts, grouped by %2 — double-click to fold them").arg(QLocale().toString(alerts), by)
                                          : tr("%1 alerts, grouped by %2 — double-click to list them").arg(QLocale().toString(alerts), by);
}

std::vector<int> AlertModel::memberRowsOf(int groupRow) const
{
    std::vector<int> rows;
    if (groupRow < 0 || size_t(groupRow) >= m_rows.size() || !m_rows[size_t(groupRow)].isGroup)
        return rows;
    const QString &key = m_rows[size_t(groupRow)].group;
    if (const AlertGroup *group = m_groups ? m_groups->group(key) : nullptr) {
        for (const QString &member : group->alerts)
            if (const int row = rowOf(member); row >= 0 && m_rows[size_t(row)].group == key)
                rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

QStringList AlertModel::agentsAt(int row) const
{
    if (row < 0 || size_t(row) >= m_rows.size())
        return {};
    if (!m_rows[size_t(row)].isGroup)
        return m_rows[size_t(row)].alert.agents;
    QStringList agents;
    for (const int member : memberRowsOf(row))
        agents += m_rows[size_t(member)].alert.agents;
    return agents;
}

void AlertModel::setExpanded(const QString &groupKey, bool expanded)
{
    const int row = groupRowOf(groupKey);
    if (row < 0 || expanded == m_expanded.contains(groupKey))
        return;
    if (expanded)
        m_expanded.insert(groupKey);
    else
        m_expanded.remove(groupKey);
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    Q_EMIT groupingChanged();
}

void AlertModel::setMark(int row, bool acknowledged, qint64 snoozedUntilMs)
{
    m_rows[size_t(row)].acknowledged = acknowledged;
    m_rows[size_t(row)].snoozedUntilMs = snoozedUntilMs;
}

void AlertModel::setAcknowledged(const QString &key, bool acknowledged)
{
    const int row = rowOf(key);
    if (row < 0)
        return;
    std::vector<int> rows = memberRowsOf(row);
    rows.push_back(row);
    for (const int r : rows)
        setMark(r, acknowledged, m_rows[size_t(r)].snoozedUntilMs);
    const auto [first, last] = std::minmax_element(rows.begin(), rows.end());
    Q_EMIT dataChanged(index(*first, 0), index(*last, ColumnCount - 1));
}

void AlertModel::snooze(const QString &key, qint64 untilLocalMs)
{
    const int row = rowOf(key);
    if (row < 0)
        return;
    std::vector<int> rows = memberRowsOf(row);
    rows.push_back(row);
    for (const int r : rows)
        setMark(r, m_rows[size_t(r)].acknowledged, untilLocalMs);
    const auto [first, last] = std::minmax_element(rows.begin(), rows.end());
    Q_EMIT dataChanged(index(*first, 0), index(*last, ColumnCount - 1));
}

AlertModel::Counts AlertModel::counts(qint64 localNowMs) const
{
    Counts c;
    for (const Row &row : m_rows) {
        if (row.isGroup) {
            ++c.groups;
            continue;
        }
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
