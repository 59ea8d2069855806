// Entities of the live system model and the inputs that change it.
//
// Every change to the model is a ModelInput: live traffic and trace replay produce the same
// inputs through ProtocolPipeline, so both end in the same state.
#pragma once

#include "map/MapTypes.h"
#include "map/PayloadConventions.h"
#include "protocol/JsonRpc.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <set>
#include <variant>
#include <vector>

namespace mapi {

// Unknown: not heard from since it was first seen (listed by a snapshot, named by a message): no
// heartbeat and no event of its own yet. Never "healthy" by default; it turns late, then
// unresponsive, on the usual intervals counted from first sight (HealthRules).
enum class Health { Healthy, Late, Unresponsive, Suspended, Disconnected, Stopped, Failed, Unknown };
QString healthName(Health health);

// Health rules. Units: milliseconds. Defaults follow seed 000 (heartbeat every 30 s,
// three missed heartbeats = unavailable).
// A set of ids in sorted order: scope members, an agent's scopes, a session's agents. A tree, not a
// sorted list: a scope that a million agents join in any order costs O(N log N), where inserting
// into a sorted list cost O(N²) (issue 16).
using IdSet = std::set<QString>;
QStringList toStringList(const IdSet &ids);

struct HealthPolicy
{
    qint64 intervalMs = 30000;
    int lateAfterIntervals = 1;
    int unresponsiveAfterIntervals = 3;
    qint64 actionConfirmTimeoutMs = 10000; // an accepted action not confirmed by then is "timed out"
};

struct Agent
{
    QString id;
    QString name;
    QString role;
    QString state;
    QString parentId;
    QString sessionId;
    IdSet scopes;
    Json capabilities;
    Json metadata;
    qint64 registeredAtMs = 0;
    qint64 lastStateChangeMs = 0;
    qint64 unregisteredAtMs = 0;
    qint64 lastActivityMs = 0;     // newest event or message from or about this agent
    qint64 lastHeartbeatMs = 0;
    qint64 knownSinceMs = 0;       // when the model first heard of it
    bool placeholder = true;       // referenced but never described by the server
    bool unregistered = false;

    QString heartbeatStatus;       // from HEARTBEAT / STATUS_UPDATE payloads
    qint64 heartbeatStatusMs = 0;  // when heartbeatStatus was last reported
    std::optional<double> load;
    std::optional<int> tasksRunning;
    std::optional<int> tasksQueued;
    std::optional<double> progress;
    std::optional<qint64> tokensUsed;
    std::optional<qint64> tokensRemaining;
    std::optional<qint64> inputTokens;   // the split of the usage, where reports give it
    std::optional<qint64> outputTokens;
    std::optional<double> costUsd;
    QString lastErrorSeverity;
    QString lastErrorMessage;
    qint64 lastErrorMs = 0;
    QString currentTaskId;
    int messagesSent = 0;
    int messagesReceived = 0;
    QString lastActionId;          // newest operator action on this agent

    Health health = Health::Healthy;
};

struct Session
{
    QString id;
    QString role;
    QString status;                // connected | disconnected | expired
    qint64 connectedAtMs = 0;
    qint64 lastChangeMs = 0;
    IdSet agentIds;
};

struct Scope
{
    QString id;
    QString name;
    QString parentId;
    IdSet members;
    Json metadata;
    qint64 createdAtMs = 0;
    bool placeholder = true;
    bool deleted = false;
};

struct Message
{
    QString id;
    QString eventId;
    int eventRow = -1;             // SystemStore::events() row of the event that carried it
    QString fromAgentId;           // resolved agent id, empty if unresolved
    QString fromRaw;               // as sent (on [M] a session id)
    QString toDisplay;             // address rendered for people
    QStringList toAgentIds;        // resolved recipients, sorted, at most MessageLog::kMaxRecipients
    qint64 recipientsNotKept = 0;  // recipients past that bound: counted, not named
    QString scopeId;
    // The payload as compact JSON text (UTF-8), empty when none. A loaded trace leaves it in the
    // frame (payloadInFrame): SystemStore::messagePayload() reads it from there when asked.
    QByteArray payloadText;
    bool payloadInFrame = false;
    QString payloadType;           // the payload's own "type", if it has one
    std::optional<int> priority;
    QString correlationId;
    // For causal chains (model/CausalChains.h), from the payload's conventions: its envelope's own
    // id (when not the message id) and span id, what it names as its cause (parent_message_id,
    // else trace.parentSpan), and its trace id (002 trace, or a W3C traceparent).
    QString envelopeId;
    QString spanId;
    QString parentRef;
    QString traceId;
    QString rpcRef;                // ConventionInfo::rpcRef: a JSON-RPC request (">id") or response ("<id")
    ConventionKind convention = ConventionKind::None;
    Severity severity = Severity::None; // an error report's (or a failed task's) severity
    QString taskId;
    QString status;                // sent | queued | delivered | dropped | expired | failed
    qint64 timestampMs = 0;
    // Usage the payload reports (conventions: heartbeats, status), kept so that the usage charts
    // need not read payloads.
    std::optional<qint64> tokensUsed;
    std::optional<double> costUsd;
};

struct TaskTransition
{
    qint64 timeMs = 0;
    QString status;
    QString agentId;
    QString detail;
    int messageRow = -1;           // SystemStore::messages() row of the message that made it (-1: an event)
};

struct Task
{
    QString id;
    QString type;
    QString status;                // requested | accepted | rejected | handed-off | in-progress | completed | failed | (server status)
    QString requesterId;
    QString assigneeId;
    std::optional<double> progress;
    qint64 createdAtMs = 0;
    qint64 updatedAtMs = 0;
    // Its transitions, oldest first, are in the store's task history log: SystemStore::taskHistory().
    int historySize = 0;
    int lastTransition = -1;       // row of the newest one in that log (-1: none)
};

enum class ActionKind { Inject, Stop, Suspend, Resume, Send };
// Unknown: the answer was lost (the connection dropped, or the request timed out): the action
// may have taken effect. It stays open, is confirmed if its confirming event arrives, and is
// never sent again by a reconnect, so that nobody sends it twice believing it failed.
enum class ActionStatus { Sent, Accepted, Confirmed, Failed, TimedOut, Unsupported, Unknown };
QString actionKindName(ActionKind kind);
QString actionStatusName(ActionStatus status);

// An operator action, from request to server answer to the first confirming event.
struct OperatorAction
{
    QString id;
    ActionKind kind = ActionKind::Send;
    QString agentId;
    Json params;
    QString method;                // the method actually used
    bool fallback = false;         // true when a documented fallback replaced the method
    QString note;                  // e.g. "map/agents/stop not supported; used map/agents/update state=stopped"
    ActionStatus status = ActionStatus::Sent;
    qint64 sentAtMs = 0;
    qint64 answeredAtMs = 0;
    qint64 settledAtMs = 0;
    QString detail;
    QString messageId;             // for inject/send: the message id the server gave
    QString confirmingEventId;
};

// One applied event, in arrival order (the timeline's backbone). 24 bytes: a million of them is
// much of a loaded trace's memory, so the row keeps numbers; its id, type, kind, agent id and
// receipt time are read through the EventLog that holds it (SystemStore::events()).
struct EventEntry
{
    qint64 timestampMs = 0;
    quint32 idRef = 0;             // EventLog::eventId()
    qint32 receivedDeltaMs = 0;    // EventLog::receivedMs()
    // Its type and the agent it is about (else its source agent), as one row of the log's
    // table of such pairs: EventLog::type(), kind(), agentId(); -1 in a trimmed row.
    int subjectRow = 0;
    // The message it carried or, for an agent event, the state it announced and the previous
    // state it named: one field, as MAP's message events name no agent state and its agent
    // events carry no message. link >= 0: the message's row; link < 0: ~link holds the two
    // state rows plus one, 15 bits each (rows of SystemStore::stateNames(), at most 32,767).
    qint32 link = -1;

    int messageIndex() const { return link >= 0 ? link : -1; }
    int stateRow() const { return link >= 0 ? -1 : int(~quint32(link) & kStateMask) - 1; }
    int previousStateRow() const { return link >= 0 ? -1 : int((~quint32(link) >> kStateBits) & kStateMask) - 1; }
    // Rows -1 (none) to 32,766; the message's row, once set, replaces them.
    void setStates(int state, int previous)
    {
        link = qint32(~(quint32(state + 1) | quint32(previous + 1) << kStateBits));
    }
    void setMessageIndex(int message) { link = message; }

    static constexpr int kStateBits = 15;
    static constexpr quint32 kStateMask = (1u << kStateBits) - 1;
};

struct Gap
{
    enum class Kind { Sequence, Reconnect, ReplayUnavailable } kind = Kind::Sequence;
    qint64 timeMs = 0;
    qint64 fromSequence = -1;      // first missing
    qint64 toSequence = -1;        // last missing
    QString detail;
    bool recovered = false;        // the gap was replayed from the server, all of it
    bool partial = false;          // a replay began but stopped at its bound before the gap was filled
};
QString gapKindName(Gap::Kind kind);

struct ConnectionInfo
{
    QString url;
    QString state;                 // the client state machine's state name
    QString serverName;
    QString serverVersion;
    QString protocolVersion;
    QString sessionId;
    qint64 timeMs = 0;
    // The server's clock against ours (ClockInput): server minus local, ms, and how many live
    // events measured it (0: not measured yet, the offset is taken as 0).
    qint64 clockOffsetMs = 0;
    int clockSamples = 0;
    // What map/connect advertised beyond the core (capabilities.mail, .workspace: enabled).
    bool mail = false;
    bool workspace = false;
    qint64 handshakeMs = 0;        // the last map/connect answer's time (local, ms; 0: none yet)
    bool handshake = false;        // this is a map/connect answer (else a state change: the above stay)
};

// Action lifecycle updates emitted by the client.
struct ActionUpdate
{
    enum class Step { Created, Answered, AnswerLost, Failed, Unsupported, Fallback } step = Step::Created;
    OperatorAction action;         // Created: the whole action; others: id plus changed fields
    qint64 timeMs = 0;
};

// The name an agent, a scope (or anything else with a name and an id) is shown by: its name, or
// its id when it has none.
template<typename Named>
const QString &shownName(const Named &item)
{
    return item.name.isEmpty() ? item.id : item.name;
}

// `reconcile`: a later complete list on the same connection (the client's periodic check, not the
// snapshot after connecting): the store compares it with the model before applying it, and a
// difference is drift (events were missed: ObservationNotes).
struct AgentsSnapshot { SnapshotAgents data; qint64 timeMs = 0; bool complete = true; bool reconcile = false; };
struct ScopesSnapshot { SnapshotScopes data; qint64 timeMs = 0; };
struct MembersSnapshot { SnapshotMembers data; qint64 timeMs = 0; };
struct EventInput { MapEvent event; qint64 receivedMs = 0; };
// A page of what a server keeps beyond the core, as it answered `method` (canonical) asked with
// `params`: conversations (mail/list, mail/get, mail/turns/list, mail/thread/list, mail/replay)
// and trajectory checkpoints (trajectory/list, trajectory/get). The store's ledgers read it.
// A page of what a server keeps beyond the core (mail, trajectory), or its federation's answer or
// error (errorCode != 0: FederationLedger).
struct ExtensionPage { QString method; Json params; Json result; qint64 timeMs = 0; bool failed = false; int errorCode = 0; QString errorMessage; };
struct ProblemInput { ProtocolProblem problem; };
struct GapInput { Gap gap; };
// The server's clock against ours (server minus local, ms; pipeline/ClockSkew.h), from `samples`
// live events, reported at local time `timeMs`.
struct ClockInput { qint64 offsetMs = 0; int samples = 0; qint64 timeMs = 0; };

using ModelInput = std::variant<EventInput, AgentsSnapshot, ScopesSnapshot, MembersSnapshot, GapInput,
                                ProblemInput, ActionUpdate, ConnectionInfo, ClockInput, ExtensionPage>;
// Implicitly shared: the client's queued inputsReady signal hands a batch to the store's thread
// by reference count, not by a deep copy of every event's JSON (which cost the client thread
// about as much as decoding, and the store's thread as much again to free).
using ModelInputs = QList<ModelInput>;

} // namespace mapi
