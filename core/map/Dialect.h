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
enum class EventFamily { Agent, Scope, Message, Delivery, Session, Task, Other };
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
