// Normalisation of what different MAP servers send into the records of MapTypes.h.
//
// Dialects handled (see shared/reference/map-wire.md): the official MAPServer 0.1.15 ([M]),
// the SDK TestServer ([T]) and the JSON schema ([S]). Nothing here throws; anything
// unrecognised is kept as EventKind::Other with its raw data.
#pragma once

#include "map/MapTypes.h"

#include <optional>

namespace mapi {

// "agent_state_changed" -> "agent.state.changed"; aliases folded ("scope_member_joined" ->
// "scope.agent.joined", "participant_connected" -> "session.connected").
QString canonicalEventType(const QString &rawType);
EventKind eventKindFor(const QString &canonicalType);

// What an event is about: the store applies each family in one handler, exports name it.
enum class EventFamily { Agent, Scope, Message, Delivery, Session, Task, Conversation, Trajectory, Other };
EventFamily eventFamily(EventKind kind);
const char *eventFamilyName(EventFamily family); // "agent", "scope", "message", "delivery", ...

AgentRecord agentFromJson(const Json &object);
ScopeRecord scopeFromJson(const Json &object);
MessageRecord messageFromJson(const Json &object);

// A `map/event` notification's params. Returns nullopt (with `error` set) when the shape
// cannot be used at all (no event object).
std::optional<MapEvent> eventFromNotification(const Json &params, QString &error);
// One inner event object (as in [M] map/replay arrays) or a [T] {eventId,timestamp,event} item.
std::optional<MapEvent> eventFromObject(const Json &object, QString &error);

// Result shapes of the snapshot queries, tolerant of every dialect.
SnapshotAgents agentsFromListResult(const Json &result);
SnapshotScopes scopesFromListResult(const Json &result);
QStringList membersFromResult(const Json &result);
// map/replay: [M] bare array, [T] {events:[{eventId,timestamp,event}],hasMore}.
std::vector<MapEvent> eventsFromReplayResult(const Json &result, bool &hasMore);

// The message `messageId` carried by `frame` (a map/event notification or a map/replay result),
// with its payload as text (payloadText, payloadType; its convention is not read). nullopt when
// the frame carries no such message. A message's id is its own, else its event's id (as the
// store reads it).
std::optional<MessageRecord> messageInFrame(const QByteArray &frame, QStringView messageId);
// Its payload text (empty: no such message, or no payload).
QByteArray messagePayloadInFrame(const QByteArray &frame, QStringView messageId);

// A task status as the model keeps it: lowercase, words joined by '-' ("in_progress" ->
// "in-progress", as the seed conventions spell it). Nothing else changes: a status is never
// read as another ("blocked", "working", "x-waiting" stay what the server said).
QString canonicalTaskStatus(const QString &status);

// "[object Object]": what a JavaScript server makes of an address object it does not know
// (MAPServer given agent-inbox's {agentId} addresses). It names nobody: never an agent.
inline bool isUnresolvableAddress(QStringView ref) { return ref == QLatin1String("[object Object]"); }

// Method names. Some servers spell the core methods with dots after the namespace
// ("map/agents.list" for "map/agents/list"). The client tries that spelling once after a -32601
// on the usual one and keeps to what worked; the pipeline reads either as the canonical name.
QString canonicalMethodName(const QString &method);     // "map/agents.list" -> "map/agents/list"
QString alternativeMethodName(const QString &canonical); // "map/agents/list" -> "map/agents.list"; empty: none
// What the observation loses when `method` (canonical) fails, as the end of a sentence ("agents
// are inferred from events"); empty for methods the observation does not depend on.
QString observationLossOf(const QString &method);

// Error classification (map-wire.md §6): [M] reports nearly everything as -32603 with a text.
enum class ErrorClass {
    MethodNotFound,
    AgentNotFound,
    ScopeNotFound,
    SubscriptionNotFound,
    AuthRequired,
    InvalidStateTransition,
    RateLimited,
    InvalidParams,
    Other,
};
ErrorClass classifyError(int code, const QString &message);

} // namespace mapi
