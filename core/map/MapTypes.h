// Dialect-neutral MAP records: what the live model consumes, whatever server sent them.
// Produced by Dialect.h from the official MAPServer, the SDK TestServer and schema shapes.
#pragma once

#include "common/HeapOptional.h"
#include "map/PayloadConventions.h"
#include "protocol/JsonRpc.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace mapi {

// A partial agent description: unset optionals mean "this source did not say".
struct AgentRecord
{
    QString id;
    std::optional<QString> name;
    std::optional<QString> role;
    std::optional<QString> state;
    std::optional<QString> parentId;   // agent.parent, else metadata.parentId, else parentId
    std::optional<QString> sessionId;
    std::optional<QStringList> scopes;
    Json capabilities;                 // null when absent; string array ([M]) or object ([S])
    Json metadata;                     // null when absent
    qint64 registeredAtMs = 0;
    qint64 lastStateChangeMs = 0;
};

struct ScopeRecord
{
    QString id;
    std::optional<QString> name;
    std::optional<QString> parentId;   // parentId ([M]) or parent ([S])
    Json metadata;
};

struct MessageRecord
{
    QString id;
    QString from;                      // as sent: agent id, or (on [M]) the sender's session id
    Json to;                           // address as sent: string, array or object
    // The payload as compact JSON text (empty: none or null) and its own "type" when it has one.
    // Text, not a tree: the store keeps text, and a tree per message was most of the decoding of
    // a loaded trace's messages.
    QByteArray payloadText;
    QString payloadType;
    // What the payload means by the agents' conventions, read by the decoding thread from its
    // parse of the frame (sent messages). Null when not read (deliveries, which the store reads
    // only for a message it never saw sent; records built by hand): the store then reads it
    // from payloadText. Shared: batches are copied by reference count.
    std::shared_ptr<const ConventionInfo> convention;
    // The payload is not in this record (payloadText empty) but in the event's frame: a delivery
    // decoded from simdjson's DOM (Dialect.cpp: messageFrom), a sent payload read there but not
    // written out (ProtocolPipeline::setKeepPayloadText(false): a trace load), or a payload
    // taken out to save memory (dropRawFrames(): a loaded trace). Whoever needs it reads it from the frame
    // (messageInFrame(), SystemStore::messagePayload()).
    bool payloadInFrame = false;
    // The event's frame, for a delivery whose payload is in it, when dropRawFrames() emptied the
    // event's own copy (the store reads it only for a message it never saw sent).
    QByteArray payloadFrame;
    // A delivery decoded from simdjson's DOM leaves its address (`to`, then null) in the frame
    // too, as its payload: the store reads it from there only for a message it never saw sent
    // (converting every delivery's address to a tree was 3 % of the live path).
    bool toInFrame = false;
    std::optional<int> priority;
    QString messageType;
    QString replyTo;
    qint64 timestampMs = 0;

    // payloadText and payloadType from a tree (null: no payload).
    void setPayload(const Json &payload);
};

enum class EventKind {
    AgentRegistered,
    AgentUnregistered,
    AgentStateChanged,
    AgentMetadataChanged,
    AgentResumed,
    AgentOrphaned,
    ScopeCreated,
    ScopeDeleted,
    ScopeMemberJoined,
    ScopeMemberLeft,
    MessageSent,
    MessageQueued,
    MessageDelivered,
    MessageDropped,
    MessageExpired,
    MessageFailed,
    SessionConnected,
    SessionDisconnected,
    SessionResumed,
    SessionExpired,
    TaskCreated,
    TaskAssigned,
    TaskStatus,
    TaskCompleted,
    // Mail (conversations; MAPServer with mail enabled): event.data kept, read by the store's
    // ConversationLedger.
    ConversationCreated,
    ConversationClosed,
    ParticipantJoined,
    ParticipantLeft,
    TurnAdded,
    TurnUpdated,
    ThreadCreated,
    // trajectory.checkpoint (hosts that wire the SDK's trajectory handlers): event.data kept,
    // read by the store's TrajectoryLedger.
    TrajectoryCheckpoint,
    Other, // kept and shown raw, never dropped
};

// Where a frame is kept in a live session's journal (core/session/SessionJournal.h): its record
// line's place in the journal's content, in bytes. Invalid (offset -1): not journaled.
struct FrameRef
{
    qint64 offset = -1;
    qint64 size = 0;
    bool isValid() const { return offset >= 0; }
};

// One MAP event in canonical form. Fields not relevant to the kind stay empty.
struct MapEvent
{
    QString eventId;          // params.eventId, falling back to event.id (dedupe key)
    QString rawType;          // exactly as sent
    QString type;             // canonical: lowercase, dotted, aliases folded
    EventKind kind = EventKind::Other;
    qint64 timestampMs = 0;
    qint64 sequenceNumber = -1; // -1 when absent (replayed events carry none)
    QString subscriptionId;

    QString sourceAgentId;
    QString sourceSessionId;
    QString sourceScopeId;
    QStringList causedBy;
    // A W3C trace context at params._meta.traceparent ("00-<trace id>-<span id>-<flags>"), as sent.
    QString traceParent;

    // On the heap (common/HeapOptional.h): most events carry none of the three, and inline they
    // were two thirds of an event's size.
    HeapOptional<AgentRecord> agent;
    QString agentId;          // subject agent (also set when `agent` is)
    QString previousState;
    QString scopeId;
    HeapOptional<ScopeRecord> scope;
    QStringList deletedScopes; // scope.deleted descendants
    QStringList deliveredTo;   // message.delivered: every recipient it names (data.deliveredTo)
    HeapOptional<MessageRecord> message;
    QString messageId;
    QString sessionId;
    QString sessionRole;
    QString reason;
    // task.* events: what the store reads of them, from data.task (or data itself when it has no
    // task object): read here, not kept as a tree (two per task event were a tenth of the
    // decoder's allocations).
    struct TaskFields
    {
        QString id;       // task.id, else task.taskId, else data.taskId
        QString title;
        QString assignee;
        QString status;   // task.status
        QString current;  // data.current (task.status events); statuses canonical (canonicalTaskStatus)
        QString previous; // data.previous (task.status events)
    } task;

    Json data;                // event.data as received, for the conversation, trajectory and
                              // Other kinds only (the other kinds' fields are all read into the
                              // members above)
    QByteArray rawFrame;      // the exact frame text that carried this event (may be empty for replayed batches)
    FrameRef journalRef;      // live, journaled: where that frame is kept on disk (rawFrame is then empty)
};

struct SnapshotAgents { std::vector<AgentRecord> agents; };
struct SnapshotScopes { std::vector<ScopeRecord> scopes; };
struct SnapshotMembers { QString scopeId; QStringList members; };

} // namespace mapi
