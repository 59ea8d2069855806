// Alert storms grouped (issue 44 item 3): open alerts of one kind that share the labels the
// rules name (AlertRules::groupBy: the agent's scope, its subtree, its role, the alert's cause)
// form one group: "unresponsive — 1,199 agents in team/ingest". A group of at least
// AlertRules::groupMinAlerts alerts is one row, one notification and one webhook call per change,
// timed like Alertmanager's group_wait and group_interval: the first notice waits groupWaitMs for
// the rest of the storm, the next ones come at most every groupIntervalMs, and only when alerts
// were added. Fewer alerts stay single, as before.
//
// Labels are taken when an alert is raised, from its first agent:
//   scope   — the most specific scope the agent is in: one without sub-scopes (its squad or
//             team rather than the project above them), the smallest of those; else the
//             smallest; by name on a tie;
//   subtree — the agent's topmost ancestor below a root (a team lead in coordinator → leads →
//             workers), or the agent itself when its parent is a root or it has none;
//   role    — the agent's role;
//   cause   — the alert's reason with every number made "#" ("no heartbeat or activity for # s").
// Follows AlertMonitor's changes in the order told; memory: one entry per open alert.
// Thread: the store's.
#pragma once

#include "alerts/AlertEngine.h"

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>

#include <limits>
#include <map>
#include <set>
#include <vector>

namespace mapi {

class SystemStore;

struct AlertGroup
{
    QString key;          // "unresponsive|scope:<scope id>" — kind, then each label's value, in groupBy order
    AlertKind kind = AlertKind::Unresponsive;
    AlertSeverity severity = AlertSeverity::Info; // the worst of the alerts it has held (one kind: one severity, in practice)
    QString where;        // the labels for a person: "in team/ingest", "under payments-lead, role worker"
    std::set<QString> alerts; // keys of its open alerts
    int agentCount = 0;   // agents of its alerts, each counted once per alert (one per alert for most kinds)
    qint64 sinceMs = 0;   // the earliest open alert's start (model time)
    std::multiset<qint64> starts; // every open alert's start: sinceMs again when the earliest clears

    // Notification bookkeeping (model time): when it reached the size of a group, when it was last
    // notified (-1: never), alerts added and cleared since then.
    qint64 grownAtMs = -1;
    qint64 notifiedAtMs = -1;
    int addedSinceNotice = 0;
    int clearedSinceNotice = 0;

    // "unresponsive — 1,199 agents in team/ingest"
    QString title() const;
};

class AlertGroups
{
public:
    void setRules(const AlertRules &rules);
    const AlertRules &rules() const { return m_rules; }

    // Follows one part of a verdict (AlertMonitor::alertsChanged) at model time `nowMs`.
    void apply(const std::vector<AlertChange> &changes, const SystemStore &store, qint64 nowMs);
    void clear();

    const std::map<QString, AlertGroup> &groups() const { return m_groups; }
    // The groups the last apply() changed (grown, shrunk, formed, emptied), and of those the ones
    // that emptied and formed again within it (a new storm: its row starts afresh).
    const QSet<QString> &lastTouched() const { return m_lastTouched; }
    const QSet<QString> &lastReformed() const { return m_lastReformed; }
    // The group an open alert is in (empty: not open here, or grouping is off).
    QString groupOf(const QString &alertKey) const { return m_groupOfAlert.value(alertKey); }
    // Its group is shown and notified as one: it has reached groupMinAlerts since it formed (it
    // stays so until it empties, so that a raise and its clear are told the same way).
    bool isGrouped(const QString &alertKey) const;
    const AlertGroup *group(const QString &groupKey) const;

    struct Notice
    {
        QString groupKey;
        QString title;
        AlertKind kind = AlertKind::Unresponsive;
        AlertSeverity severity = AlertSeverity::Info;
        int open = 0;     // alerts open in it now
        int added = 0;    // since its last notice (all of them for the first)
        int cleared = 0;
        bool first = false;
        bool resolved = false; // a notified group whose every alert cleared (told once, at once)
        QString where;    // AlertGroup::where
    };
    // The notices due at model time `nowMs`, each group's bookkeeping moved on: a group seen for
    // groupWaitMs and never notified; a notified one with alerts added and groupIntervalMs passed;
    // a notified one that emptied (resolved). A group that emptied unnotified is never told.
    std::vector<Notice> due(qint64 nowMs);
    // Every notice not told yet, whatever the wait and the interval (the end of a watch).
    std::vector<Notice> flush() { return noticesAt(nowForFlush(), true); }
    // A notice as one JSON object — what `watch --group` prints and the webhook posts:
    // {"group", "title", "state": "new" | "grown" | "resolved", "severity", "open", "added",
    //  "cleared", "at" (model time, ms)}, and "system" when `system` is not empty.
    static Json noticeToJson(const Notice &notice, qint64 atMs, const QString &system = {});

    // The labels of `alert` as AlertRules::groupBy names them (tests, the inspector).
    // `scopeParents`: the ids of scopes that have sub-scopes (null: looked up here).
    QString groupKeyFor(const Alert &alert, const SystemStore &store, QString *where = nullptr,
                        const QSet<QString> *scopeParents = nullptr) const;

private:
    std::vector<Notice> noticesAt(qint64 nowMs, bool everything);
    static qint64 nowForFlush() { return std::numeric_limits<qint64>::max() / 2; }

    AlertRules m_rules;
    std::map<QString, AlertGroup> m_groups;
    QHash<QString, QString> m_groupOfAlert; // open alert key → its group's key
    QHash<QString, int> m_agentsOfAlert;    // open alert key → its agent count
    std::vector<Notice> m_resolved;         // notified groups that emptied, until due() tells them
    QHash<QString, qint64> m_startOfAlert;  // open alert key → its start
    QSet<QString> m_lastTouched, m_lastReformed;
};

} // namespace mapi
