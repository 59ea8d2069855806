// The attention inbox's rows: the open alerts (AlertMonitor), one row per alert, with what the
// operator did about each (acknowledged, snoozed until a time).
//
// A storm is one row: alerts whose group (AlertGroups, the rules' "grouping") is large enough
// are members of a group row ("unresponsive — 1,199 agents in team/ingest"), listed under it
// only while it is expanded (AlertOrder hides them otherwise and sorts them right below it).
// A group row's key is "group:" + its group's key; acknowledging or snoozing it does the same
// to every member, and alerts joining it later take its marks (the operator acknowledged the
// storm, not 1,199 agents one by one). Members keep their own rows so that a group that forms
// around singles, or is expanded, needs no copy.
//
// Rows are kept in arrival order; AlertsPanel's proxy sorts them (severity, then acknowledged
// last, then the longest waiting first) and hides the snoozed ones. A raised alert inserts a
// row, a cleared one removes it, one evaluation's changes at once (ten thousand alerts raised by
// a trace's first evaluation are one insertion, not ten thousand); rows are found by key through
// an index. "waiting" is refreshed by refreshWaiting() (once a second).
// Acknowledged and snoozed are the operator's and last as long as the alert is open: an alert that
// clears and is raised again is new; one raised again right after clear() (new rules) is not.
// Thread: GUI thread.
#pragma once

#include "alerts/AlertEngine.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>

#include <vector>

namespace mapi {
class AlertGroups;
class SystemStore;
} // namespace mapi

namespace mapi::ui {

class AlertModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SeverityColumn, KindColumn, AgentsColumn, WaitingColumn, ReasonColumn, ColumnCount };
    enum Role {
        KeyRole = Qt::UserRole + 1, // QString: Alert::key()
        SeverityRole,               // int: AlertSeverity
        SinceRole,                  // qint64: since, model time
        AcknowledgedRole,           // bool
        SnoozedUntilRole,           // qint64: local ms since the epoch, 0: not snoozed
        AgentsRole,                 // QStringList: the agents' ids (a group row: every member's)
        GroupRole,                  // QString: a group row's group key, or the group a member is shown in; else empty
        IsGroupRole,                // bool: a group row
    };

    explicit AlertModel(const SystemStore *store, QObject *parent = nullptr);
    // The groups of the alerts apply() is told (null: no group rows). They must be brought up
    // to date with each batch before it is applied (AlertMonitor::groups() is).
    void setGroups(const mapi::AlertGroups *groups) { m_groups = groups; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    static QString columnTitle(int column); // "" past the last

    void apply(const std::vector<AlertChange> &changes);
    // The detectors' evaluation ended (AlertMonitor::evaluated): marks kept over clear() for
    // alerts it did not raise again are forgotten (its parts may come over several apply() calls).
    void evaluationEnded();
    void clear();
    void refreshWaiting();
    // Whether a snooze ended in (fromLocalMs, toLocalMs]: the panel's filter must look again.
    bool snoozeEndedBetween(qint64 fromLocalMs, qint64 toLocalMs) const;

    int rowOf(const QString &key) const;
    const Alert *alertAt(int row) const;
    // What AlertOrder sorts and filters by, read without QVariants (a storm's thousands of rows
    // are sorted again at every evaluation). `row` must be valid.
    bool acknowledgedAt(int row) const { return m_rows[size_t(row)].acknowledged; }
    qint64 snoozedUntilAt(int row) const { return m_rows[size_t(row)].snoozedUntilMs; }
    bool isGroupAt(int row) const { return m_rows[size_t(row)].isGroup; }
    // A group row's own key, or the group a member row is shown in (empty: a single alert).
    const QString &groupAt(int row) const { return m_rows[size_t(row)].group; }
    // A member row whose group is collapsed: not listed. `row` must be valid.
    bool hiddenInGroupAt(int row) const
    {
        const Row &r = m_rows[size_t(row)];
        return !r.isGroup && !r.group.isEmpty() && !m_expanded.contains(r.group);
    }
    // The row of a group (-1: none).
    int groupRowOf(const QString &groupKey) const { return m_groupRowOf.value(groupKey, -1); }
    static QString groupRowKey(const QString &groupKey) { return QStringLiteral("group:") + groupKey; }
    // The agents of a row: an alert's, or every member's of a group (in member order).
    QStringList agentsAt(int row) const;
    // The member rows of a group row (empty for others).
    std::vector<int> memberRowsOf(int groupRow) const;
    void setExpanded(const QString &groupKey, bool expanded);
    bool isExpanded(const QString &groupKey) const { return m_expanded.contains(groupKey); }
    // A group row's mark goes to all its members too.
    void setAcknowledged(const QString &key, bool acknowledged);
    void snooze(const QString &key, qint64 untilLocalMs);

    // Alerts, not rows: a group row counts in `groups`, its members in the others.
    struct Counts
    {
        int open = 0, critical = 0, acknowledged = 0, snoozed = 0, groups = 0;
    };
    Counts counts(qint64 localNowMs) const;

Q_SIGNALS:
    // Rows changed group (a group formed around alerts already listed, or one was expanded or
    // collapsed): a view's filter and order must look again at every row.
    void groupingChanged();

private:
    struct Row
    {
        Alert alert;          // a group row: its kind, severity, start and title (reason); no agents
        bool acknowledged = false;
        qint64 snoozedUntilMs = 0;
        QString group;        // see groupAt()
        bool isGroup = false;
    };
    QString groupText(const Row &row) const;
    QString groupReason(const Row &row) const;
    // After a batch: group rows made, updated or removed for the groups it touched, members marked.
    void syncGroups(const QSet<QString> &touched);
    void eraseRows(std::vector<int> rows); // any order; reindexes what moved
    void setMark(int row, bool acknowledged, qint64 snoozedUntilMs);
    QString agentsText(const Alert &alert) const;

    // What the operator did about rows forgotten by clear() (new rules: the detectors start
    // over), given back to the same alerts when the next batch raises them again.
    struct Mark
    {
        bool acknowledged = false;
        qint64 snoozedUntilMs = 0;
    };
    QHash<QString, Mark> m_remembered;

    const SystemStore *m_store;
    const mapi::AlertGroups *m_groups = nullptr;
    QSet<QString> m_expanded; // group keys
    std::vector<Row> m_rows;
    QHash<QString, int> m_rowOfKey;
    QHash<QString, int> m_groupRowOf; // group key → its group row (AlertOrder asks at every comparison)
};

} // namespace mapi::ui
