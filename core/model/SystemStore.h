// The live system model: the single source of truth for agents, sessions, scopes, messages,
// tasks, operator actions, gaps and protocol problems.
//
// Thread: lives in one thread (the GUI thread in the window, the main thread in the CLI);
// inputs arrive in batches through apply(). Entity rows (agents, scopes, tasks, actions) are
// never removed: an unregistered agent or a deleted scope is marked, so view row indexes stay
// valid. History (events, messages, task transitions) is bounded for a live session: past its
// history budget, or when the session's journal drops old frames, the oldest rows are trimmed
// (RowLogs.h: row numbers stay, trimmed rows read empty); the current state and every counter
// stay exact, and historyTrim() says what went.
// Changes are reported through changed() at most every kFlushIntervalMs (≈30 Hz), coalesced.
#pragma once

#include "model/AcpLedger.h"
#include "model/FederationLedger.h"
#include "model/ActionTracker.h"
#include "model/ModelTypes.h"
#include "model/ObservationNotes.h"
#include "model/RowLogs.h"
#include "model/ConversationLedger.h"
#include "model/TaskLedger.h"
#include "model/TrajectoryLedger.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <functional>
#include <vector>

namespace mapi {

// What changed since the last changed() signal. Row numbers index the store's vectors.
struct ChangeSet
{
    QSet<int> agentRows;           // changed or new
    // Agents whose only change is their activity (Agent::lastActivityMs, messagesSent,
    // messagesReceived); never also in agentRows. In a flood nearly every agent is active between
    // two signals: views that do not show the activity skip these (at 10,000 agents each view
    // went over all of them at every signal).
    QSet<int> activeAgentRows;
    int firstNewAgentRow = -1;     // rows >= this are new (-1: none)
    QSet<int> scopeRows;
    int firstNewScopeRow = -1;
    QSet<int> taskRows;
    int firstNewTaskRow = -1;
    QSet<int> actionRows;
    int firstNewActionRow = -1;
    QSet<int> conversationRows;    // changed or new (rows of conversations())
    bool checkpointsChanged = false;
    bool acpChanged = false;       // acpStreams() gained a stream or a frame
    bool federationChanged = false; // federation(): peers, buffer or access said again
    int firstNewMessage = -1;
    int firstNewEvent = -1;
    bool countersChanged = false;
    bool connectionChanged = false;
    bool historyTrimmed = false;   // the oldest history went (SystemStore::historyTrim())
    bool isEmpty() const;
};

struct StoreCounters
{
    qint64 eventsApplied = 0;
    qint64 duplicateEvents = 0;
    qint64 unknownEvents = 0;      // kept as EventKind::Other
    qint64 messages = 0;
    qint64 tasks = 0;
    qint64 gaps = 0;
    qint64 sequenceGaps = 0;
    qint64 problems = 0;
    qint64 futureTimestamps = 0;   // events stamped ahead of their arrival (kFutureToleranceMs)
    qint64 recipientsNotKept = 0;  // recipients past MessageLog::kMaxRecipients of one message
    qint64 agentsNotKept = 0;      // references to agents past SystemStore::maxAgents() (each event,
                                   // message, membership or snapshot entry that named one)
    qint64 historyNotKept = 0;     // events past SystemStore::maxHistoryRows(): applied to the model, not listed
};

// What a live session's history bound has dropped so far (since the last reset()).
struct HistoryTrim
{
    qint64 events = 0;             // rows trimmed from events()
    qint64 messages = 0;           // rows trimmed from messages()
    qint64 beforeMs = 0;           // history before this time (event time, ms since the epoch) is gone; 0: none
    bool any() const { return events > 0 || messages > 0; }
};

class SystemStore : public QObject
{
    Q_OBJECT
public:
    static constexpr int kFlushIntervalMs = 33; // ≈30 Hz: views repaint on this, never per event

    explicit SystemStore(QObject *parent = nullptr);

    // At most this many agents are modelled (about 1.1-1.5 KB each with their indexes): past it,
    // an id not yet known is not added; the events that name it are kept and counted
    // (counts.agentsNotKept), and a problem says so once. 100,000 agents take ~150 MB: ten times
    // the largest fleet we know of, and within the window's 1 GiB budget; the CLI's --max-agents
    // raises it (a million take ~1.5 GB).
    static constexpr int kDefaultMaxAgents = 100000;
    void setMaxAgents(int maxAgents) { m_maxAgents = maxAgents; }
    int maxAgents() const { return m_maxAgents; }
    // Rows are numbered with int from the first event appended since reset() (trimmed rows keep
    // their numbers): past this many, an event still changes the model (agents, scopes, sessions,
    // tasks) but is not listed, nor the message it carried (counts.historyNotKept; a problem says
    // so once). 20,000 events/s reach it after ~30 hours; a new connection numbers from 0 again.
    static constexpr int kDefaultMaxHistoryRows = 2147483647 - (1 << 20);
    void setMaxHistoryRows(int rows) { m_maxHistoryRows = rows; } // tests: a small limit
    int maxHistoryRows() const { return m_maxHistoryRows; }

    void setHealthPolicy(const HealthPolicy &policy);
    const HealthPolicy &healthPolicy() const { return m_policy; }

    void apply(const ModelInputs &inputs);
    void apply(const ModelInput &input);
    // The same, taking what the store keeps (payloads, capabilities, metadata) out of the
    // inputs instead of copying it: the thread that applies frees less.
    void apply(ModelInputs &&inputs);
    void apply(ModelInput &&input);

    // Re-evaluates health and action timeouts at `localNowMs`: the local clock live, the record
    // time in replay. The model's "now" is that instant on the server's clock (local + the
    // measured offset, connection().clockOffsetMs), so that ages compare server timestamps with
    // server time. "now" never goes back, and event timestamps move it only when plausible
    // (kFutureToleranceMs): one event stamped in the future cannot age everything else.
    void advanceTime(qint64 localNowMs);
    qint64 now() const { return m_nowMs; }
    // A local time (a snapshot's, an action's) on the server's clock, with the offset measured so far.
    qint64 serverTime(qint64 localMs) const { return localMs + m_connection.clockOffsetMs; }
    // An event stamped more than this ahead of its arrival (on the server's clock) is taken as
    // arriving when it arrived: counted in counters().futureTimestamps.
    static constexpr qint64 kFutureToleranceMs = 10000;
    static constexpr qint64 kUnmeasuredToleranceMs = 24 * 3600 * 1000; // before the offset is measured

    // Emits the pending ChangeSet immediately (the timer does this otherwise).
    void flushChanges();
    // How often changed() is emitted (default kFlushIntervalMs). A trace load sets a slower
    // rate: the views then repaint less often while a million events arrive.
    void setFlushInterval(int ms) { m_flushTimer.setInterval(ms); }
    int flushInterval() const { return m_flushTimer.interval(); }
    // How long the last changed() took to deliver (its receivers: the views), nanoseconds.
    qint64 lastFlushNs() const { return m_lastFlushNs; }

    // The history bound: when events, messages and task transitions take more than `bytes`
    // (memoryBytes() of their logs), the oldest are trimmed down to 90% of it at the next flush.
    // 0: unbounded (a loaded trace: its history is the point). Kept across reset().
    void setHistoryBudget(size_t bytes);
    // While held (a window's system behind the one in front), changes gather instead of being
    // announced: the views of a system nobody looks at do no work. Releasing announces what
    // gathered as one change set (bounded by the model's rows). The model, its history bound
    // and the detectors (which read the store on their own clock) go on as before; a reset still
    // says so at once.
    void setChangesHeld(bool held);
    bool changesHeld() const { return m_changesHeld; }
    size_t historyBudget() const { return m_historyBudget; }
    size_t historyBytes() const;
    // Trims the events received before `receivedMs` and what came with them (the journal
    // dropped their frames); reported with the next changed().
    void trimHistoryBefore(qint64 receivedMs);
    const HistoryTrim &historyTrim() const { return m_trim; }

    // Empties the model (new connection, new trace). Emits aboutToReset() and wasReset();
    // views reset their models between the two.
    void reset();
    // Exchanges everything this store holds with `other` (rows, counters, history bound and
    // trim, where frames are read from), keeping each one's QObject identity, policy and
    // connections: a live session's model moves to a background store while the views show the
    // past, and back (InspectorSession's time travel). Each store emits aboutToReset() and
    // wasReset(), then a changed() that names every row as new, as a fresh load would.
    void swapContents(SystemStore &other);

    const std::vector<Agent> &agents() const { return m_agents; }
    const std::vector<Scope> &scopes() const { return m_scopes; }
    // Compact logs (model/RowLogs.h); rows stay valid as indexes. messages()[row] is a copy.
    const MessageLog &messages() const { return m_messages; }
    const std::vector<Task> &tasks() const { return m_tasks.tasks(); }
    // A task's transitions, oldest first (built from the compact log: for one task at a time,
    // or a budgeted pass).
    std::vector<TaskTransition> taskHistory(const Task &task) const { return m_tasks.history(task); }
    const std::vector<OperatorAction> &actions() const { return m_actions.actions(); }
    // Conversations (mail) and trajectory checkpoints, bounded (their ledgers' headers say how).
    const ConversationLedger &conversations() const { return m_conversations; }
    const TrajectoryLedger &checkpoints() const { return m_checkpoints; }
    // ACP sessions carried in messages, grouped by stream (AcpLedger.h).
    const AcpLedger &acpStreams() const { return m_acp; }
    const FederationLedger &federation() const { return m_federation; }
    // The participants of `conversation` by agent: one row per agent (a participant named by a
    // session id is that session's agent), then the others (users, unknown sessions) as named.
    struct ParticipantRow { QString agentId; QString name; QString role; QString type; qint64 joinedMs = 0; qint64 leftMs = 0; };
    std::vector<ParticipantRow> conversationParticipants(const Conversation &conversation) const;
    // The agent a reference names: itself when it is a known agent id, a known session's first
    // agent, else empty.
    QString agentBehind(const QString &ref) const { return resolveAgentRef(ref); }
    // Who a participant id (a session id or an agent id) is, shown: an agent's name, a client
    // session as one ("client session 01M8GD5K…"), else the id.
    QString participantName(const QString &participant) const;
    const EventLog &events() const { return m_events; }
    // The frame text that carried event `row`: the frame kept with it (live), else what the
    // frame source reads (a loaded trace keeps its frames compressed in its TraceTimeline).
    // Empty when neither has it (events of a map/replay batch, a trace still loading).
    QByteArray eventFrame(int row) const;
    // The payload of message `row` as JSON text (empty: none): the kept text, or for a loaded
    // trace, read again from the frame of the event that carried it (parses that frame).
    QByteArray messagePayload(int row) const;
    // The same without a copy where the log keeps the payload as text (the OTLP exports' path); a
    // payload read from its frame is put in `storage`. Valid until the store changes.
    QByteArrayView messagePayloadView(int row, QByteArray &storage) const;
    using FrameSource = std::function<QByteArray(int eventRow)>;
    // `files`: the files it reads from, which no export may replace (ExportJob). Kept across reset().
    void setFrameSource(FrameSource source, QStringList files = {})
    {
        m_frameSource = std::move(source);
        m_frameFiles = std::move(files);
    }
    const QStringList &frameFiles() const { return m_frameFiles; }
    // Reads a frame back from a live session's journal (EventLog::journalRef); kept across reset().
    using JournalReader = std::function<QByteArray(const FrameRef &ref)>;
    void setJournalReader(JournalReader reader) { m_journalReader = std::move(reader); }
    // Agent state names announced by events (EventEntry::stateRow(), previousStateRow()).
    const std::vector<QString> &stateNames() const { return m_stateNames; }
    QString stateName(int row) const { return row >= 0 && size_t(row) < m_stateNames.size() ? m_stateNames[size_t(row)] : QString(); }
    // The first kMaxGaps gaps (a gap is one reconnect or one jump in a subscription's sequence
    // numbers: a buggy server could make one per event); later ones are counted
    // (counters().gaps) but not kept, so rows never move.
    static constexpr size_t kMaxGaps = 10000;
    const std::vector<Gap> &gaps() const { return m_gaps; }
    // The newest problems, at most kMaxProblems of them holding at most kMaxProblemBytes of
    // offending frames (64 KiB each at most): past either, the oldest tenth goes at once, and
    // problemsDropped() counts them (counters().problems counts all). A problem's number for
    // good (across drops): its row + problemsDropped().
    static constexpr size_t kMaxProblems = 10000;
    static constexpr qint64 kMaxProblemBytes = 32LL << 20;
    const std::vector<ProtocolProblem> &problems() const { return m_problems; }
    qint64 problemsDropped() const { return m_problemsDropped; }
    // What the observation could not learn (failed methods, unknown event types, a silent server,
    // drift from the server's own list): model/ObservationNotes.h.
    const ObservationNotes &observation() const { return m_observation; }
    const QHash<FastString, Session> &sessions() const { return m_sessions; }
    const StoreCounters &counters() const { return m_counters; }
    const ConnectionInfo &connection() const { return m_connection; }

    const Agent *agent(const QString &id) const;
    // shownName() of agent or scope `id`, or `id` itself when the store does not know it.
    QString agentName(const QString &id) const;
    QString scopeName(const QString &id) const;
    const Scope *scope(const QString &id) const;
    const Task *task(const QString &id) const;
    const OperatorAction *action(const QString &id) const;
    int agentRow(const QString &id) const { return m_agentRow.value(id, -1); }
    int scopeRow(const QString &id) const { return m_scopeRow.value(id, -1); }

    // Agents in the subtree rooted at `id` (itself first), following parentId links.
    QStringList subtree(const QString &id) const;

    // The health rules (model/HealthRules.h) for `agent` at `nowMs`, with this store's policy and sessions.
    Health evaluateHealth(const Agent &agent, qint64 nowMs) const;

Q_SIGNALS:
    void changed(const mapi::ChangeSet &changes);
    void aboutToReset();
    void wasReset();

private:
    void applyEvent(const EventInput &input); // records it, then one handler per family:
    void applyAgentEvent(const MapEvent &event, qint64 timeMs);
    void applyScopeEvent(const MapEvent &event, qint64 timeMs);
    void applyDeliveryEvent(const MapEvent &event, qint64 timeMs, int eventIndex); // queued, delivered, dropped, …
    void applySessionEvent(const MapEvent &event, qint64 timeMs);
    int stateRowOf(const QString &state); // -1: the table is full (EventEntry keeps 15 bits)
    void applyAgentsSnapshot(const AgentsSnapshot &snapshot);
    void checkDrift(const AgentsSnapshot &snapshot);
    static constexpr qint64 kDriftSettleMs = 3000; // changes this recent are not drift (checkDrift)
    void noteUnknownEvent(const MapEvent &e, qint64 receivedMs);
    void applyScopesSnapshot(const ScopesSnapshot &snapshot);
    void applyMembers(const MembersSnapshot &members);
    void applyGap(const Gap &gap);
    void applyProblem(const ProtocolProblem &problem);
    void applyAction(const ActionUpdate &update);
    void applyConnection(const ConnectionInfo &info);
    void applyClock(const ClockInput &clock);
    void applyExtensionEvent(const MapEvent &event, qint64 timeMs, int eventIndex); // StoreExtensions.cpp
    void applyExtensionPage(const ExtensionPage &page);
    void applyAcpFrame(const AcpFrame &frame, int messageRow, qint64 timeMs, const QString &fromAgent, const QString &rawFrom,
                       const QString &toAgent);

    Agent &ensureAgent(const QString &id, qint64 timeMs);
    Scope &ensureScope(const QString &id, qint64 timeMs);
    void mergeAgent(Agent &agent, const AgentRecord &record, qint64 timeMs);
    void setMembership(const QString &scopeId, const QString &agentId, bool member, qint64 timeMs);
    void touchAgent(const QString &id, qint64 timeMs);
    void applyMessage(const MapEvent &event, qint64 timeMs, int eventIndex);
    // `messageRow`: the row `message` will have (it is appended after).
    void applyConvention(Message &message, int messageRow, const ConventionInfo &info, qint64 timeMs);
    void takeTaskChanges(); // the ledger's changed rows and new tasks into the pending change set and counters
    void confirmActions(const MapEvent &event, const Message *message);
    void takeActionChanges(); // the tracker's changed rows into the pending change set
    QString resolveAgentRef(const QString &ref) const; // agent id, or a session's first agent
    // A recipient as named: an agent id, the agent of a known session, empty for a known session
    // without an agent (a client), else the name itself (a placeholder agent to be).
    QString recipientAgent(const QString &ref) const;
    // `eventScopeId`: the scope the event names (data.scopeId): an address equal to it is that
    // scope, never an agent.
    void resolveRecipients(Message &message, const Json &to, const QString &eventScopeId = {});

    // Copies `from` into `to`; while applying an rvalue input (apply(ModelInput &&)) swaps them
    // instead, so the old value is freed with the input, in the thread that made it.
    void keep(Json &to, const Json &from);
    void markAgent(int row);
    void markActive(int row); // only its activity changed (ChangeSet::activeAgentRows)
    // The agent a message names: a new one is a change (a placeholder), a known one only active.
    Agent &activeAgent(const QString &id, qint64 timeMs);
    void markScope(int row);
    void scheduleFlush();
    void trimEventsBefore(size_t eventRow);
    void enforceHistoryBudget();
    void announceEverything();           // after swapContents(): every row is new

    HealthPolicy m_policy;
    qint64 m_nowMs = 0;
    qint64 m_eventArrivedMs = 0; // the local receipt time of the event being applied (actions' clock)

    std::vector<Agent> m_agents;
    int m_maxAgents = kDefaultMaxAgents;
    int m_maxHistoryRows = kDefaultMaxHistoryRows;
    bool m_historyFullSaid = false;
    void applyWithoutHistory(const MapEvent &event, qint64 timeMs); // past m_maxHistoryRows
    // The agent an event's row names: none for an agent past m_maxAgents (the log's names are
    // never trimmed: ten million ids not modelled took ~1.4 GB there).
    QString historyAgentId(const MapEvent &event) const;
    Agent m_agentPastLimit; // what ensureAgent() hands out past m_maxAgents: written to, never kept
    bool m_textsNotKeptSaid = false;
    void sayIfTextsNotKept(qint64 timeMs); // a problem, once, when the logs first drop a text
    QHash<FastString, int> m_agentRow;
    std::vector<Scope> m_scopes;
    QHash<FastString, int> m_scopeRow;
    EventLog m_events;
    MessageLog m_messages{&m_events};
    TaskLedger m_tasks;
    ConversationLedger m_conversations;
    TrajectoryLedger m_checkpoints;
    AcpLedger m_acp;
    FederationLedger m_federation;
    ActionTracker m_actions;
    std::vector<QString> m_stateNames;
    QHash<FastString, int> m_stateRow;
    FrameSource m_frameSource;
    QStringList m_frameFiles;
    JournalReader m_journalReader;
    bool m_takeFromInput = false;        // inside apply(ModelInput &&)
    std::vector<Gap> m_gaps;
    std::vector<ProtocolProblem> m_problems;
    qint64 m_problemsDropped = 0;
    ObservationNotes m_observation;
    qint64 m_problemBytes = 0;           // frames and details of m_problems
    QHash<FastString, Session> m_sessions;
    StoreCounters m_counters;
    ConnectionInfo m_connection;

    size_t m_historyBudget = 0;
    HistoryTrim m_trim;

    ChangeSet m_pending;
    bool m_changesHeld = false;
    QTimer m_flushTimer;
    qint64 m_lastFlushNs = 0;
};

} // namespace mapi

Q_DECLARE_METATYPE(mapi::ChangeSet)
