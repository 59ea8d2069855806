// The attention inbox's rows: the open alerts (AlertMonitor), one row per alert, with what the
// operator did about each (acknowledged, snoozed until a time).
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

#include <vector>

namespace mapi {
class SystemStore;
}

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
        AgentsRole,                 // QStringList: the agents' ids
    };

    explicit AlertModel(const SystemStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    static QString columnTitle(int column); // "" past the last

    void apply(const std::vector<AlertChange> &changes);
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
    void setAcknowledged(const QString &key, bool acknowledged);
    void snooze(const QString &key, qint64 untilLocalMs);

    struct Counts
    {
        int open = 0, critical = 0, acknowledged = 0, snoozed = 0;
    };
    Counts counts(qint64 localNowMs) const;

private:
    struct Row
    {
        Alert alert;
        bool acknowledged = false;
        qint64 snoozedUntilMs = 0;
    };
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
    std::vector<Row> m_rows;
    QHash<QString, int> m_rowOfKey;
};

} // namespace mapi::ui
