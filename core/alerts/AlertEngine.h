// The detectors: what in the model needs an operator's attention, as alerts that are raised and
// cleared (unresponsive, failed, loop, stalled, deadlock, budget, needs-human, error-storm;
// AlertRules.h says when each fires, docs/alerts.md for operators).
//
// The engine reads the store, never writes it: live and replay feed it alike. update() reads the
// messages and tasks the store gained since the last call, then evaluates every rule at the
// store's "now" (server time live, record time in a replay) and returns what was raised and
// cleared. Callers run it on a timer (the CLI's watch: every second) and after the store resets
// call restartReading().
// Thread: the store's. Not a QObject: the caller decides when it runs.
//
// Memory: what the engine keeps per agent (a few numbers, error times up to errorStormCount, cost
// samples up to 32) is bounded by the store's agents; message pairs seen within the loop window (at most kMaxLoopEdges), open help requests
// (at most kMaxOpenHelpRequests, the oldest dropped first) and evidence (kMaxEvidence ids per
// alert) have fixed bounds. Past a bound the engine counts what it did not track (notTracked()).
#pragma once

#include "alerts/AlertRules.h"

#include <QHash>
#include <QSet>
#include <QStringList>

#include <deque>
#include <map>
#include <vector>

namespace mapi {

class SystemStore;
struct Agent;

struct Alert
{
    AlertKind kind = AlertKind::Unresponsive;
    AlertSeverity severity = AlertSeverity::Warning;
    QString subject;               // what of the agents it is about when one kind has several ("subtree", "tokens", "rate", "system"), else empty
    QStringList agents;            // the agents concerned: sorted, except a deadlock's, in the cycle's order
    qint64 sinceMs = 0;            // when the condition began (model time, ms since the epoch)
    QString reason;                // one sentence for the operator
    // What made it fire, newest last, at most kMaxEvidence: "message:<id>", "task:<id>", "agent:<id>".
    QStringList evidence;

    // One open alert per key: its kind, subject and agents.
    QString key() const;
};

struct AlertChange
{
    Alert alert;
    bool raised = true;            // false: cleared
    qint64 atMs = 0;               // model time of the change
};

// {"alert", "state", "severity", "agents", "agentId", "since", "reason", "evidence", "subject"?, "at"}
Json alertChangeToJson(const AlertChange &change);

// The health policy the rules imply (heartbeat interval, intervals until unresponsive) over `base`.
struct HealthPolicy;
HealthPolicy healthPolicyForRules(const AlertRules &rules, const HealthPolicy &base);

class AlertEngine
{
public:
    static constexpr int kMaxEvidence = 20;
    static constexpr int kMaxLoopEdges = 100000;
    static constexpr int kMaxOpenHelpRequests = 100000;

    explicit AlertEngine(const AlertRules &rules = AlertRules());

    void setRules(const AlertRules &rules) { m_rules = rules; }
    const AlertRules &rules() const { return m_rules; }

    // Reads what `store` gained since the last call and evaluates every rule at store.now().
    // Returns the alerts raised and cleared by this call, cleared first.
    std::vector<AlertChange> update(const SystemStore &store);

    // The store was reset (a new connection's model, a trace): read it again from its first row.
    // Open alerts stay open until an update finds them no longer true, so a reconnect does not
    // clear and raise again what still holds.
    void restartReading();
    // Forgets everything, open alerts included (nothing is reported as cleared).
    void reset();

    const std::map<QString, Alert> &openAlerts() const { return m_open; }
    // Messages and waits the engine did not track because a bound was full, or because the
    // store had trimmed them before they were read.
    qint64 notTracked() const { return m_notTracked; }

private:
    struct AgentTrack
    {
        qint64 lastWorkMs = 0;        // newest message it sent that is not a heartbeat
        qint64 lastTaskProgressMs = 0; // newest task move it made (accept, update, handoff, done)
        // Its sending rate, in windows of loopWindowMs: the current one and the usual count.
        qint64 bucketStartMs = 0;
        int bucketCount = 0;
        double usualCount = 0;
        int bucketsClosed = 0;
        QString rateEvidence;         // newest message of the current window
        // Error reports at or above the storm severity, newest last (at most errorStormCount).
        std::deque<std::pair<qint64, QString>> errors;
        // Cost reports (time, USD), oldest first, thinned to at most kMaxCostSamples.
        std::deque<std::pair<qint64, double>> costSamples;
        QString costEvidence;         // newest message that reported its cost
    };
    static constexpr size_t kMaxCostSamples = 32;

    // A directed edge of messages of one shape (loop detection).
    struct Edge
    {
        std::deque<std::pair<qint64, QString>> times; // message time and id, newest last, at most loopExchanges
    };
    struct LoopGroup
    {
        QStringList ring;             // the agents in sending order (2 or 3)
        quint64 shape = 0;
        QString shapeText;            // for the reason: the message type
    };
    struct HelpRequest
    {
        QString requester;
        QString helper;               // empty: not addressed to a known agent
        QString messageId;
        QString taskId;
        qint64 timeMs = 0;
    };

    void readMessages(const SystemStore &store);
    void readMessage(const SystemStore &store, size_t row);
    void noteLoopEdge(const QString &from, const QString &to, quint64 shape, const QString &type, qint64 t, const QString &id);
    void rollRateBucket(AgentTrack &track, qint64 t) const;
    void readTasks(const SystemStore &store);
    void pruneWindows(qint64 now);

    void evaluateAgents(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateLoops(qint64 now, std::map<QString, Alert> &out);
    void evaluateDeadlocks(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateNeedsHuman(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateErrorStorms(qint64 now, std::map<QString, Alert> &out);
    void evaluateBudgets(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    bool enabled(AlertKind kind) const { return m_rules.rule(kind).enabled; }
    Alert make(AlertKind kind, QStringList agents, qint64 since, QString reason, QStringList evidence = {},
               QString subject = {}) const;

    AlertRules m_rules;
    size_t m_nextMessage = 0;
    size_t m_nextTask = 0;
    QHash<QString, AgentTrack> m_agents;
    // Loop edges: key "from\x1Fto\x1Fshape"; and for each "from\x1Fshape" the agents it sent to.
    QHash<QString, Edge> m_edges;
    QHash<QString, QSet<QString>> m_edgesFrom;
    std::map<QString, LoopGroup> m_loops; // candidate groups, by alert key
    // Tasks not settled (rows of store.tasks()), and when each was last seen to move.
    QHash<int, qint64> m_openTasks;
    std::deque<HelpRequest> m_help;       // unanswered, oldest first
    std::deque<std::pair<qint64, QString>> m_systemErrors; // all agents, newest last (at most errorStormSystemCount)
    std::map<QString, Alert> m_open;
    qint64 m_notTracked = 0;
};

} // namespace mapi
