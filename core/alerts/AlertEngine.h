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
// samples up to 32) is bounded by the store's agents; the loop detector's (sender, recipient)
// pairs seen within the loop window (at most kMaxLoopEdges, each its newest loopExchanges messages:
// time, store row and shape, 24 bytes each; at the default 20 an edge is one deque block, about
// 650 bytes with its hash node, 65 MB at the bound) and loop candidates (kMaxLoopGroups), open
// help requests (at most kMaxOpenHelpRequests: past it new ones are not tracked) and evidence
// (kMaxEvidence ids per alert) have fixed bounds. Shapes are tallied when a candidate is
// evaluated (in memory reused from one to the next); nothing is kept per shape. Past a bound the
// engine counts what it did not track (notTracked()).
#pragma once

#include "alerts/AlertRules.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QStringList>

#include <deque>
#include <functional>
#include <optional>
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
    QString cachedKey;             // key() as made (AlertEngine sets it; empty: computed)
};

struct AlertChange
{
    Alert alert;
    bool raised = true;            // false: cleared
    qint64 atMs = 0;               // model time of the change
};

// {"alert", "state", "severity", "agents", "agentId", "since", "reason", "evidence", "subject"?, "at"};
// with `store`, also "agentNames" (the agents' shown names, in the order of "agents"): what a
// person reads beside the ids a program matches on.
Json alertChangeToJson(const AlertChange &change, const SystemStore *store = nullptr);

// The health policy the rules imply (heartbeat interval, intervals until unresponsive) over `base`.
struct HealthPolicy;
HealthPolicy healthPolicyForRules(const AlertRules &rules, const HealthPolicy &base);

class AlertEngine
{
public:
    static constexpr int kMaxEvidence = 20;
    static constexpr int kMaxLoopEdges = 100000;
    static constexpr int kMaxOpenHelpRequests = 100000;
    static constexpr int kMaxLoopGroups = 10000;  // pairs and rings watched as loop candidates at once
    // An edge that carries its share looks again for rings through it every this many messages
    // (AlertEngineReading.cpp, noteLoopEdge).
    static constexpr quint32 kRingSearchEvery = 16;
    // A loop repeats a small exchange: on each edge of its pair or ring, at most this many shapes
    // that repeat (a question asked in up to three wordings, an answer in up to three). More is a
    // conversation, not a loop.
    static constexpr int kMaxLoopShapesPerEdge = 3;
    // The alert's subject for a pair or ring looping (the other loop alert's subject is "rate").
    static constexpr const char *kLoopExchangeSubject = "exchange";

    explicit AlertEngine(const AlertRules &rules = AlertRules());
    // Not copied: an evaluation under way holds positions in its own maps (m_compare).
    AlertEngine(const AlertEngine &) = delete;
    AlertEngine &operator=(const AlertEngine &) = delete;

    void setRules(const AlertRules &rules) { m_rules = rules; }
    const AlertRules &rules() const { return m_rules; }

    // Reads what `store` gained since the last call, at most readBudget() messages, and, once it
    // has read everything, evaluates every rule at store.now(). Returns the alerts raised and
    // cleared by this call, cleared first (nothing while it is still behind: rules evaluated on
    // half the news would raise what the other half clears).
    std::vector<AlertChange> update(const SystemStore &store);
    // True while messages wait to be read, or an evaluation is under way in slices: call
    // update() again (the window yields to its event loop between calls, so that a loaded
    // trace's million messages, or ten thousand open alerts, never freeze it).
    bool isBehind(const SystemStore &store) const;
    // Messages of `store` not read yet (how far behind the reading is).
    qint64 unreadMessages(const SystemStore &store) const;
    // An evaluation is under way in slices (its next update() call goes on with it).
    bool isEvaluating() const { return m_step != Idle; }
    // The evaluation under way stopped within its last step (the comparison with what was open).
    bool isComparing() const { return m_step == Compare && m_compare.started; }
    // Tests: the comparison stops at each of its clock checks (every 256 alerts) as if its slice
    // were over, so that its slices can be seen whatever the machine's speed.
    void setCompareStopsAtEveryCheck(bool on) { m_compareStopsAtEveryCheck = on; }
    // Evaluation in slices: once a call has worked this long (ms), it stops between two steps
    // of the evaluation (the setup, each family of rules, the comparison with what was open), or
    // within the steps that go in pieces (pruning the loop edges, the loop groups, the
    // comparison), and the next call goes on; every call that reads nothing makes progress. Messages
    // that arrive meanwhile are read after the evaluation (all its steps see one store). 0 (the default): one call
    // evaluates everything. The rules see the clock of the evaluation's first step.
    void setEvaluationSliceMs(int ms) { m_evaluationSliceMs = ms; }
    // Time spent in the steps of the last complete evaluation, all slices together (ns).
    qint64 lastEvaluationNs() const { return m_lastEvaluationNs; }
    // Evaluations completed so far: one more after the update() call that returned its changes.
    qint64 evaluationCount() const { return m_evaluationCount; }
    // Messages read per update() call (default kDefaultReadBudget; 0: all). About 1.5-2.5 µs each (docs/benchmarks.md).
    // 12-20 ms of reading a slice when nothing else runs; with an evaluation slice set, reading
    // also stops at the slice's time (three systems flooding on two cores made 8,000 take 40 ms).
    static constexpr int kDefaultReadBudget = 8000;
    void setReadBudget(int messages) { m_readBudget = messages; }

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
    // Pairs (sender, recipient) the loop detector remembers messages of, within its window (at
    // most kMaxLoopEdges; each evaluation forgets those that left it).
    int loopEdgeCount() const { return int(m_edges.size()); }

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
        qint64 rateRow = -1;          // newest message of the current window (a store row)
        // Error reports at or above the storm severity (time, message row), newest last (at most errorStormCount).
        std::deque<std::pair<qint64, qint64>> errors;
        // Cost reports (time, USD), oldest first, thinned to at most kMaxCostSamples.
        std::deque<std::pair<qint64, double>> costSamples;
        qint64 costRow = -1;          // newest message that reported its cost
    };
    static constexpr size_t kMaxCostSamples = 32;

    // Loop detection works on agent numbers (idOf()), not ids: one message costs a few hash lookups.
    // A directed edge: the messages one agent sent to another, whatever their shape.
    struct EdgeKey
    {
        int from = 0;
        int to = 0;
        bool operator==(const EdgeKey &o) const { return from == o.from && to == o.to; }
        friend size_t qHash(const EdgeKey &k, size_t seed = 0) { return qHashMulti(seed, k.from, k.to); }
    };
    struct Sent
    {
        qint64 timeMs = 0;
        qint64 row = 0;               // the store row (evidence, and the shape's type for the reason)
        quint64 shape = 0;            // payloadShape(): its type and key names, not its values
    };
    struct Edge
    {
        std::deque<Sent> sent;        // newest last, at most loopExchanges
        quint32 sinceRingSearch = 0;  // messages since this edge last looked for rings through it
    };
    struct LoopGroup
    {
        std::vector<int> ring;        // the agents in sending order (2 or 3), from the smallest agent number
    };
    // A group's identity: its agents in sending order from the smallest agent number (c = -1 for
    // a pair), so that the two directions of a ring are two candidates.
    struct LoopKey
    {
        int a = 0, b = 0, c = -1;
        bool operator==(const LoopKey &o) const { return a == o.a && b == o.b && c == o.c; }
        friend size_t qHash(const LoopKey &k, size_t seed = 0) { return qHashMulti(seed, k.a, k.b, k.c); }
    };
    // One edge of a candidate as an evaluation sees it: its messages within the window, and of
    // them those whose shape repeats there (seen at least twice on this edge).
    struct EdgeTally
    {
        int messages = 0;
        int repeated = 0;             // messages of a shape seen at least twice
        int repeatedShapes = 0;       // how many shapes that is
        qint64 firstMs = 0;           // the oldest of those messages
        // The repeated shapes, most frequent first, at most kMaxLoopShapesPerEdge: (shape, its newest row).
        std::vector<std::pair<quint64, qint64>> shapes;
        // The edge repeats a small exchange: 1 to kMaxLoopShapesPerEdge shapes repeat, and their
        // messages are at least half of the edge's (not ever-new content with a few repeats in it).
        bool repeats() const { return repeatedShapes >= 1 && repeatedShapes <= kMaxLoopShapesPerEdge && 2 * repeated >= messages; }
    };
    // Memory tallyEdge() reuses from one edge to the next.
    struct TallyScratch
    {
        struct Run { quint64 shape; int count; qint64 newestRow; };
        std::vector<Sent> sent;
        std::vector<Run> runs;
    };
    // `rows` gets the rows of the repeated messages.
    static EdgeTally tallyEdge(const Edge &edge, qint64 since, TallyScratch &scratch, std::vector<qint64> &rows);
    // The shape's name in a reason, quoted: the payload's type of `row`, else its convention, else
    // its first key names ("{text}"), else (a row trimmed from history) the shape's hash.
    static QString shapeName(const SystemStore &store, qint64 row, quint64 shape);
    int idOf(const QString &agentId);
    // "message:<id>" for a store row still kept, else empty (the history bound trimmed it).
    static QString messageEvidence(const SystemStore &store, qint64 row);
    // The evidence of the newest kMaxEvidence of `count` message rows (rowAt(i), oldest first), those still kept.
    static QStringList newestMessageEvidence(const SystemStore &store, size_t count, const std::function<qint64(size_t)> &rowAt);
    struct HelpRequest
    {
        QString requester;
        QString helper;               // empty: not addressed to a known agent
        QString messageId;
        QString taskId;
        qint64 timeMs = 0;
    };

    // Reads new messages up to the read budget, and stops early once `slice` has run the
    // evaluation slice's time (looked at every kReadTimeCheckEvery messages).
    void readMessages(const SystemStore &store, const QElapsedTimer &slice);
    static constexpr size_t kReadTimeCheckEvery = 128; // a clock read per ~0.2-0.3 ms of reading
    // Read in every call whatever the slice's time, so that a call always moves the reading on.
    // 2,048 (3-5 ms, meant to outrun a flood) made pieces of 6-30 ms on a machine at half speed
    // with three systems at 20,000 messages/s each (3-5 us a message); the slice's clock is what
    // bounds a piece, and with three floods the detectors kept their pace (6 evaluations in 30 s
    // per system, as with 2,048; docs/benchmarks.md, "The detectors' pieces bounded").
    static constexpr size_t kMinReadPerCall = 256;
    void readMessage(const SystemStore &store, size_t row);
    void noteLoopEdge(int from, int to, quint64 shape, qint64 t, qint64 row);
    void rollRateBucket(AgentTrack &track, qint64 t) const;
    void readTasks(const SystemStore &store);
    // Drops what left the rules' windows: agents' errors and rates here; the loop detector's
    // exchanges in pruneLoopEdges(), in pieces (up to kMaxLoopEdges edges, each a deque to
    // walk: one piece of 20-40 ms in a flood at 10,000 agents). False when `outOfTime` said stop:
    // the next call goes on from m_nextEdge (nothing inserts into m_edges during an evaluation).
    void pruneWindows(qint64 now);
    bool pruneLoopEdges(qint64 now, const std::function<bool()> &outOfTime);

    // The evaluation's last step (AlertEngineCompare.cpp): drops alerts whose agents all departed
    // from m_current, compares it with m_open, and makes it m_open. In slices: nullopt when
    // `outOfTime` said stop; the next call goes on from m_compare. m_open is not touched until
    // the last slice (openAlerts() stays the last verdict meanwhile).
    std::optional<std::vector<AlertChange>> compareInSlices(const SystemStore &store, qint64 now,
                                                            const std::function<bool()> &outOfTime);
    void evaluateAgents(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateServer(const SystemStore &store, std::map<QString, Alert> &out) const; // with the agents' step
    // False when `outOfTime` said stop before every candidate group was looked at: the next
    // call goes on from where it stopped (m_nextLoop).
    bool evaluateLoops(const SystemStore &store, qint64 now, std::map<QString, Alert> &out,
                       const std::function<bool()> &outOfTime);
    void evaluateDeadlocks(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateNeedsHuman(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    void evaluateErrorStorms(const SystemStore &store, std::map<QString, Alert> &out);
    void evaluateBudgets(const SystemStore &store, qint64 now, std::map<QString, Alert> &out);
    const AgentTrack &trackOf(const QString &agentId) const; // an empty track for an agent never seen sending
    bool enabled(AlertKind kind) const { return m_rules.rule(kind).enabled; }
    Alert make(AlertKind kind, QStringList agents, qint64 since, QString reason, QStringList evidence = {},
               QString subject = {}) const;

    AlertRules m_rules;
    int m_readBudget = kDefaultReadBudget;
    size_t m_nextMessage = 0;
    size_t m_nextTask = 0;
    QHash<QString, AgentTrack> m_agents;
    QHash<QString, int> m_ids;            // agent id → number, for loop detection
    QStringList m_names;                  // number → agent id
    QHash<EdgeKey, Edge> m_edges;
    QHash<int, QSet<int>> m_edgesFrom;    // from → the agents it sent to within the window
    QHash<LoopKey, LoopGroup> m_loops;    // candidate groups
    QHash<LoopKey, LoopGroup>::iterator m_nextLoop; // the next group an evaluation in slices looks at
    bool m_loopsUnderWay = false;                   // m_nextLoop is valid (reset by each evaluation's setup)
    QHash<EdgeKey, Edge>::iterator m_nextEdge;      // the next edge pruneLoopEdges() looks at
    bool m_pruneUnderWay = false;                   // m_nextEdge is valid (reset likewise)
    // Tasks not settled (rows of store.tasks()), and when each was last seen to move.
    QHash<int, qint64> m_openTasks;
    // The others, and how many transitions each had when it settled. With m_openTasks, one entry
    // per row of store.tasks(): bounded as the store's tasks are.
    QHash<int, int> m_settledTasks;
    // Unanswered help requests by requester, oldest first; m_helpCount in all.
    QHash<QString, std::vector<HelpRequest>> m_help;
    int m_helpCount = 0;
    std::deque<std::pair<qint64, qint64>> m_systemErrors; // all agents (time, row), newest last (at most errorStormSystemCount)
    std::map<QString, Alert> m_open;
    qint64 m_notTracked = 0;
    // An evaluation in slices: the next step (0: none under way), its clock, what it found so far.
    enum Step { Idle, Setup, PruneLoopEdges, Agents, Loops, Deadlocks, NeedsHuman, ErrorStorms, Budgets, Compare };
    int m_step = Idle;
    qint64 m_evaluationNow = 0;
    std::map<QString, Alert> m_current;
    // Where a comparing in slices stands (compareInSlices()); reset at each evaluation's setup.
    struct CompareState
    {
        bool started = false;
        bool merging = false; // the dropping is done
        std::map<QString, Alert>::iterator drop;    // next alert of m_current to check for departed agents
        std::map<QString, Alert>::iterator current; // next alert of m_current to compare
        std::map<QString, Alert>::iterator open;    // next alert of m_open not yet passed
        std::vector<std::map<QString, Alert>::iterator> cleared; // in m_open
        std::vector<std::map<QString, Alert>::iterator> raised;  // in m_current
    };
    CompareState m_compare;
    bool m_compareStopsAtEveryCheck = false;
    int m_evaluationSliceMs = 0;
    qint64 m_evaluationNs = 0;
    qint64 m_lastEvaluationNs = 0;
    qint64 m_evaluationCount = 0;
};

} // namespace mapi
