#include "map/Dialect.h"
#include "map/DialectSimd.h"
#include "map/JsonViews.h"
#include "protocol/Utf16Repair.h"

#include <QHash>

#include <tuple>

namespace mapi {

// Scalars are read through toJson(): no allocation for numbers, and exactly nlohmann's
// conversions (integer casts, dumps of non-string scalars).
template<typename View>
static qint64 intOf(const View &object, std::string_view key, qint64 fallback = 0)
{
    const View child = object.child(key);
    if (!child.isNumber())
        return fallback;
    const Json value = child.toJson();
    if (value.is_number_integer())
        return value.get<qint64>();
    return saturatedInt(value.get<double>());
}


template<typename View>
static std::optional<QString> optString(const View &object, std::string_view key, Text text = Text::Repeats)
{
    const View child = object.child(key);
    if (child.isNull())
        return std::nullopt;
    if (child.isString())
        return child.string(text);
    if (child.isNumber() || child.isBoolean())
        return scalarText(child, text);
    if (child.isObject()) { // e.g. {"agentId": "..."} or {"id": "..."} as a reference
        for (const char *k : {"id", "agentId", "scopeId"})
            if (const View inner = child.child(k); inner.isString())
                return inner.string(text);
    }
    return std::nullopt;
}

// optString(key), else optString(otherKey), else `fallback`; the second key is looked up only
// when the first is absent (each lookup scans the object's members).
template<typename View>
static QString eitherString(const View &object, std::string_view key, std::string_view otherKey,
                            Text text = Text::Repeats, const QString &fallback = QString())
{
    if (std::optional<QString> value = optString(object, key, text))
        return std::move(*value);
    return optString(object, otherKey, text).value_or(fallback);
}

template<typename View>
static QStringList stringList(const View &array, Text text = Text::Repeats)
{
    QStringList out;
    if (!array.isArray())
        return out;
    array.forEachItem([&](const View &item) {
        if (item.isString()) {
            out << item.string(text);
        } else if (item.isObject()) {
            for (const char *k : {"id", "agentId", "scopeId"}) {
                if (const View inner = item.child(k); inner.isString()) {
                    out << inner.string(text);
                    break;
                }
            }
        }
    });
    return out;
}

template<typename View>
static AgentRecord agentFrom(const View &object)
{
    AgentRecord a;
    if (!object.isObject())
        return a;
    a.id = eitherString(object, "id", "agentId");
    a.name = optString(object, "name");
    a.role = optString(object, "role");
    a.state = optString(object, "state");
    if (!a.state)
        a.state = optString(object, "newState");
    a.parentId = optString(object, "parent");
    if (const View meta = object.child("metadata"); meta.isObject()) {
        a.metadata = meta.toJson();
        if (!a.parentId)
            a.parentId = optString(meta, "parentId");
    }
    if (!a.parentId)
        a.parentId = optString(object, "parentId");
    a.sessionId = optString(object, "sessionId");
    if (!a.sessionId)
        a.sessionId = optString(object, "ownerId");
    if (const View scopes = object.child("scopes"); scopes.isArray())
        a.scopes = stringList(scopes);
    if (const View caps = object.child("capabilities"); caps.present())
        a.capabilities = caps.toJson();
    a.registeredAtMs = intOf(object, "registeredAt");
    a.lastStateChangeMs = intOf(object, "lastStateChange");
    if (const View lifecycle = object.child("lifecycle"); lifecycle.isObject()) {
        if (!a.registeredAtMs)
            a.registeredAtMs = intOf(lifecycle, "createdAt");
    }
    return a;
}

template<typename View>
static ScopeRecord scopeFrom(const View &object)
{
    ScopeRecord s;
    if (!object.isObject())
        return s;
    s.id = eitherString(object, "id", "scopeId");
    s.name = optString(object, "name");
    s.parentId = optString(object, "parentId");
    if (!s.parentId)
        s.parentId = optString(object, "parent");
    if (const View meta = object.child("metadata"); meta.present())
        s.metadata = meta.toJson();
    return s;
}

static ConventionInfo conventionOf(const JsonView &payload)
{
    return interpretPayload(*payload.json);
}

static ConventionInfo conventionOf(const SimdView &payload)
{
    return interpretPayload(payload.element, payload.differs);
}

// `delivery`: a message.delivered event's copy of the message, which the store reads only for a
// message it never saw sent: what the payload means is not read here, and when the frame is at
// hand (simdjson's view of a map/event: the event keeps its frame) neither is its text
// (payloadInFrame: the store reads it from the frame in that rare case). Writing a payload's
// text was a fifth of the decoding of a loaded trace, and half the payloads are deliveries'.
template<typename View>
static MessageRecord messageFrom(const View &object, bool delivery = false)
{
    MessageRecord m;
    if (!object.isObject())
        return m;
    m.id = eitherString(object, "id", "messageId", Text::Unique);
    m.from = optString(object, "from").value_or(QString());
    constexpr bool frameAtHand = std::is_same_v<View, SimdView>;
    if (const View to = object.child("to"); to.present()) {
        if (delivery && frameAtHand)
            m.toInFrame = true;
        else
            m.to = to.toJson();
    }
    bool keepText = true;
    if constexpr (frameAtHand)
        keepText = object.keepPayloadText;
    if (const View payload = object.child("payload"); !payload.isNull() && delivery && frameAtHand) {
        m.payloadInFrame = true;
    } else if (!payload.isNull()) {
        const bool readConvention = !delivery;
        if (keepText || !readConvention)
            m.payloadText = payload.text();
        else
            m.payloadInFrame = true; // read, not written: the store reads the text from the frame when asked
        if (payload.isObject()) {
            if (const View type = payload.child("type"); !type.isNull() && !type.isObject() && !type.isArray())
                m.payloadType = scalarText(type);
        }
        if (readConvention)
            m.convention = std::make_shared<const ConventionInfo>(conventionOf(payload));
    }
    if (const View p = object.child("priority"); p.isNumber())
        m.priority = p.toJson().template get<int>();
    m.messageType = optString(object, "messageType").value_or(QString());
    m.replyTo = optString(object, "replyTo").value_or(QString());
    m.timestampMs = intOf(object, "timestamp");
    if (const View meta = object.child("meta"); meta.isObject()) {
        if (!m.timestampMs)
            m.timestampMs = intOf(meta, "timestamp");
    }
    return m;
}

AgentRecord agentFromJson(const Json &object)
{
    return agentFrom(JsonView{&object});
}

ScopeRecord scopeFromJson(const Json &object)
{
    return scopeFrom(JsonView{&object});
}

MessageRecord messageFromJson(const Json &object)
{
    return messageFrom(JsonView{&object});
}

void MessageRecord::setPayload(const Json &value)
{
    payloadText.clear();
    payloadType.clear();
    convention.reset();
    payloadInFrame = false;
    if (value.is_null())
        return;
    payloadText = JsonView{&value}.text();
    if (value.is_object())
        payloadType = jsonString(value, "type");
}

// A scalar member as text (numbers and booleans as JSON writes them); objects, arrays and null
// read as empty (as jsonString does).
template<typename View>
static QString scalarField(const View &object, std::string_view key, Text text = Text::Repeats)
{
    const View child = object.child(key);
    if (!child.present() || child.isNull() || child.isObject() || child.isArray())
        return {};
    return scalarText(child, text);
}

// The scope a message address names ({scope: id}, "scope:id"), else empty.
static QString scopeOfAddress(const Json &to)
{
    if (to.is_object()) {
        if (const Json *scope = jsonChild(to, "scope"); scope && scope->is_string())
            return toQString(*scope);
    } else if (to.is_string()) {
        const QString text = toQString(to);
        if (text.startsWith(QLatin1String("scope:")))
            return text.mid(6);
    }
    return {};
}

// The event's subject, read from its data (`d`, the view of e.data).
template<typename View>
static void fillSubject(MapEvent &e, const View &d)
{
    if (!d.isObject())
        return;
    switch (e.kind) {
    case EventKind::AgentRegistered:
    case EventKind::AgentUnregistered:
    case EventKind::AgentStateChanged:
    case EventKind::AgentMetadataChanged:
    case EventKind::AgentResumed:
    case EventKind::AgentOrphaned: {
        if (const View agent = d.child("agent"); agent.isObject())
            e.agent = agentFrom(agent);
        else // [T] flat shapes: {agentId, name, role, ownerId} / {agentId, previousState, newState}
            e.agent = agentFrom(d);
        e.agentId = e.agent->id;
        if (e.agentId.isEmpty())
            e.agentId = optString(d, "agentId").value_or(e.sourceAgentId);
        e.agent->id = e.agentId;
        if (e.kind == EventKind::AgentStateChanged && !e.agent->state)
            e.agent->state = optString(d, "newState");
        e.previousState = optString(d, "previousState").value_or(QString());
        e.reason = optString(d, "reason").value_or(QString());
        break;
    }
    case EventKind::ScopeCreated:
        if (const View scope = d.child("scope"); scope.isObject())
            e.scope = scopeFrom(scope);
        else
            e.scope = scopeFrom(d);
        if (e.scope->id.isEmpty())
            e.scope->id = e.sourceScopeId;
        e.scopeId = e.scope->id;
        break;
    case EventKind::ScopeDeleted:
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        if (const View desc = d.child("deletedDescendants"); desc.present())
            e.deletedScopes = stringList(desc);
        break;
    case EventKind::ScopeMemberJoined:
    case EventKind::ScopeMemberLeft:
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        e.agentId = optString(d, "agentId").value_or(e.sourceAgentId);
        break;
    case EventKind::MessageSent:
    case EventKind::MessageDelivered: {
        const bool delivery = e.kind == EventKind::MessageDelivered;
        if (const View msg = d.child("message"); msg.isObject()) {
            e.message = messageFrom(msg, delivery);
        } else if (d.child("messageId").present() || d.child("from").present() || d.child("payload").present()) {
            // The SDK's typed data (MessageSentEventData, MessageDeliveredEventData): the
            // message's own fields at the top of data.
            e.message = messageFrom(d, delivery);
        }
        e.messageId = optString(d, "messageId", Text::Unique).value_or(e.message ? e.message->id : QString());
        if (e.message && e.message->id.isEmpty())
            e.message->id = e.messageId;
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        // A sent message's address names its scope ({scope: id}); a delivery's scope is what the
        // event says (its address may be left in the frame: MessageRecord::toInFrame).
        if (e.message && e.scopeId.isEmpty() && !delivery)
            e.scopeId = scopeOfAddress(e.message->to);
        e.agentId = optString(d, "agentId").value_or(QString());
        if (const View to = d.child("deliveredTo"); to.isArray() && !to.empty()) {
            e.deliveredTo = stringList(to); // every recipient ([C], the SDK's typed delivery)
            if (e.agentId.isEmpty() && !e.deliveredTo.isEmpty())
                e.agentId = e.deliveredTo.front();
        }
        if (isUnresolvableAddress(e.agentId))
            e.agentId.clear();
        break;
    }
    case EventKind::MessageQueued:
    case EventKind::MessageDropped:
    case EventKind::MessageExpired:
    case EventKind::MessageFailed:
        e.messageId = optString(d, "messageId", Text::Unique).value_or(QString());
        e.agentId = optString(d, "agentId").value_or(QString());
        if (e.agentId.isEmpty()) { // the address it was for: an id, or {agent} / {agents:[...]} (the first)
            if (const View to = d.child("to"); to.isString() || to.isNumber()) {
                e.agentId = scalarText(to);
            } else if (to.isObject()) {
                if (const View agent = to.child("agent"); agent.isString())
                    e.agentId = agent.string();
                else if (const View agents = to.child("agents"); agents.isArray() && !agents.empty())
                    e.agentId = scalarText(agents.front());
                else
                    e.agentId = optString(to, "id").value_or(QString());
            }
        }
        e.reason = optString(d, "reason").value_or(QString());
        if (isUnresolvableAddress(e.agentId))
            e.agentId.clear();
        break;
    case EventKind::SessionConnected:
    case EventKind::SessionResumed:
        if (const View session = d.child("session"); session.isObject()) {
            e.sessionId = optString(session, "id").value_or(QString());
            e.sessionRole = optString(session, "role").value_or(QString());
        } else {
            e.sessionId = eitherString(d, "participantId", "sessionId");
            e.sessionRole = optString(d, "participantType").value_or(QString());
        }
        if (e.sessionId.isEmpty())
            e.sessionId = e.sourceSessionId;
        break;
    case EventKind::SessionDisconnected:
    case EventKind::SessionExpired:
        e.sessionId = eitherString(d, "sessionId", "participantId", Text::Repeats, e.sourceSessionId);
        e.reason = optString(d, "reason").value_or(QString());
        break;
    case EventKind::TaskCreated:
    case EventKind::TaskAssigned:
    case EventKind::TaskStatus:
    case EventKind::TaskCompleted:
    {
        const View task = d.child("task");
        const View fields = task.isObject() ? task : d;
        e.task.id = scalarField(fields, "id", Text::Unique);
        if (e.task.id.isEmpty())
            e.task.id = scalarField(fields, "taskId", Text::Unique);
        if (e.task.id.isEmpty())
            e.task.id = scalarField(d, "taskId", Text::Unique);
        e.task.title = scalarField(fields, "title");
        if (e.task.title.isEmpty())
            e.task.title = scalarField(fields, "name");
        e.task.assignee = scalarField(fields, "assignee");
        e.task.status = canonicalTaskStatus(scalarField(fields, "status"));
        e.task.current = canonicalTaskStatus(scalarField(d, "current"));
        if (e.task.current.isEmpty() && e.kind == EventKind::TaskStatus)
            e.task.current = canonicalTaskStatus(scalarField(d, "status"));
        e.task.previous = canonicalTaskStatus(scalarField(d, "previous"));
        e.agentId = optString(d, "agentId").value_or(e.task.assignee); // who holds it
        break;
    }
    default: { // Other, and the conversation and trajectory kinds (DialectNames.cpp: eventFamily)
        // Kept raw; its subject agent read where the SDK's typed data puts it (mail, trajectory,
        // permissions), else its source. A client's permissions name a client, not an agent.
        e.agentId = optString(d, "agentId").value_or(QString());
        if (e.agentId.isEmpty()) {
            if (const View checkpoint = d.child("checkpoint"); checkpoint.isObject()) {
                e.agentId = optString(checkpoint, "agentId").value_or(QString());
            } else if (const View participant = d.child("participant"); participant.isObject()) {
                if (const View info = participant.child("agentInfo"); info.isObject())
                    e.agentId = optString(info, "agentId").value_or(QString());
                if (e.agentId.isEmpty() && scalarField(participant, "type") == QLatin1String("agent"))
                    e.agentId = scalarField(participant, "id");
            } else if (const View turn = d.child("turn"); turn.isObject()) {
                e.agentId = scalarField(turn, "participant");
                if (const View source = turn.child("source"); source.isObject())
                    e.messageId = scalarField(source, "messageId", Text::Unique);
            }
        }
        if (e.agentId.isEmpty()) {
            if (const QString client = scalarField(d, "clientId"); !client.isEmpty())
                e.sessionId = client;
            else if (!d.child("conversationId").present())
                e.agentId = e.sourceAgentId; // a conversation's own events are about no agent
        }
        break;
    }
    }
}

template<typename View>
static void readSource(MapEvent &e, const View &source)
{
    if (source.isString()) { // [S]/[T]: a participant id
        e.sourceAgentId = source.string();
    } else if (source.isObject()) {
        e.sourceAgentId = eitherString(source, "agentId", "participantId");
        e.sourceSessionId = optString(source, "sessionId").value_or(QString());
        e.sourceScopeId = optString(source, "scopeId").value_or(QString());
    }
}

// Canonical type and kind of a raw event type. Types repeat: each thread keeps the answers in a
// small direct-mapped cache, so the common case costs a hash and a compare.
static std::pair<QString, EventKind> typeAndKind(const QString &rawType)
{
    struct Known
    {
        QString rawType;
        QString type;
        EventKind kind = EventKind::Other;
    };
    constexpr size_t kSlots = 256;
    thread_local std::unique_ptr<Known[]> known(new Known[kSlots]);
    Known &slot = known[fastHash(rawType) & (kSlots - 1)];
    if (slot.rawType.isNull() || slot.rawType != rawType) {
        slot.type = canonicalEventType(rawType);
        slot.kind = eventKindFor(slot.type);
        slot.rawType = rawType;
    }
    return {slot.type, slot.kind};
}

// Whether MapEvent::data keeps event.data: for unknown kinds only; the other kinds' fields are
// all read by fillSubject, and converting and freeing data they never use was a third of the
// cost of loading a trace.
static bool keepsData(EventKind kind)
{
    const EventFamily family = eventFamily(kind);
    return family == EventFamily::Other || family == EventFamily::Conversation || family == EventFamily::Trajectory;
}

// Fills `e` (default-constructed: the caller's slot, so that the event is made where it stays,
// not moved there). False: not an event (`error` says why; `e` is then partly filled).
template<typename View>
static bool buildEvent(const View &event, MapEvent &e, QString &error)
{
    if (!event.isObject()) {
        error = QStringLiteral("event is not an object");
        return false;
    }
    e.rawType = optString(event, "type").value_or(QString());
    if (e.rawType.isEmpty()) {
        error = QStringLiteral("event has no type");
        return false;
    }
    std::tie(e.type, e.kind) = typeAndKind(e.rawType);
    e.eventId = eitherString(event, "id", "eventId", Text::Unique);
    e.timestampMs = intOf(event, "timestamp");
    if (const View source = event.child("source"); source.present())
        readSource(e, source);
    if (const View caused = event.child("causedBy"); caused.present())
        e.causedBy = stringList(caused, Text::Unique); // event ids
    if (const View data = event.child("data"); data.present()) {
        if (keepsData(e.kind))
            e.data = data.toJson();
        fillSubject(e, data);
    } else {
        static const Json noData = Json::object(); // read as an empty object: agent events still name their subject
        if (keepsData(e.kind))
            e.data = noData;
        fillSubject(e, JsonView{&noData});
    }
    return true;
}

template<typename View>
static std::optional<MapEvent> buildEvent(const View &event, QString &error)
{
    std::optional<MapEvent> e(std::in_place);
    if (!buildEvent(event, *e, error))
        return std::nullopt;
    return e;
}

// As buildEvent(): fills `event`, false when `params` is not a map/event's.
template<typename View>
static bool eventFromParams(const View &params, MapEvent &event, QString &error)
{
    const View inner = params.child("event");
    if (!inner.present()) {
        error = QStringLiteral("map/event without an \"event\" object");
        return false;
    }
    if (!buildEvent(inner, event, error))
        return false;
    // [T]: params.eventId (a ULID) differs from event.id; dedupe on params.eventId. On the
    // official server both hold the same id: the one read from event.id is kept (not converted
    // again).
    if (!params.child("eventId").isText(event.eventId)) {
        if (std::optional<QString> id = optString(params, "eventId", Text::Unique))
            event.eventId = std::move(*id);
    }
    if (!event.timestampMs)
        event.timestampMs = intOf(params, "timestamp");
    event.sequenceNumber = intOf(params, "sequenceNumber", -1);
    event.subscriptionId = optString(params, "subscriptionId").value_or(QString());
    if (event.causedBy.isEmpty()) {
        if (const View caused = params.child("causedBy"); caused.present())
            event.causedBy = stringList(caused, Text::Unique);
    }
    if (const View meta = params.child("_meta"); meta.isObject())
        event.traceParent = optString(meta, "traceparent").value_or(QString());
    return true;
}

std::optional<MapEvent> eventFromNotification(const Json &params, QString &error)
{
    std::optional<MapEvent> e(std::in_place);
    if (!eventFromParams(JsonView{&params}, *e, error))
        return std::nullopt;
    return e;
}

bool eventFromNotification(simdjson::dom::element params, MapEvent &out, QString &error, bool &differs,
                           bool keepPayloadText)
{
    differs = false;
    return eventFromParams(SimdView{params, true, &differs, keepPayloadText}, out, error);
}

std::optional<MapEvent> eventFromObject(const Json &object, QString &error)
{
    const JsonView view{&object};
    if (const JsonView inner = view.child("event"); inner.isObject()) {
        auto e = buildEvent(inner, error);
        if (e) {
            if (auto pid = optString(view, "eventId", Text::Unique))
                e->eventId = *pid;
            if (!e->timestampMs)
                e->timestampMs = jsonInt(object, "timestamp");
        }
        return e;
    }
    return buildEvent(view, error);
}

// A list result: the array itself, or the array under `key`; items without an id are skipped.
template<typename Record, typename FromJson>
std::vector<Record> recordsFromListResult(const Json &result, const char *key, FromJson fromJson)
{
    std::vector<Record> out;
    const Json *list = result.is_array() ? &result : jsonChild(result, key);
    if (!list || !list->is_array())
        return out;
    for (const Json &item : *list) {
        Record record = fromJson(item);
        if (!record.id.isEmpty())
            out.push_back(std::move(record));
    }
    return out;
}

SnapshotAgents agentsFromListResult(const Json &result)
{
    return {recordsFromListResult<AgentRecord>(result, "agents", agentFromJson)};
}

SnapshotScopes scopesFromListResult(const Json &result)
{
    return {recordsFromListResult<ScopeRecord>(result, "scopes", scopeFromJson)};
}

QStringList membersFromResult(const Json &result)
{
    const Json *list = result.is_array() ? &result : jsonChild(result, "members");
    if (!list)
        list = jsonChild(result, "agents");
    return list ? stringList(JsonView{list}) : QStringList();
}

std::vector<MapEvent> eventsFromReplayResult(const Json &result, bool &hasMore)
{
    std::vector<MapEvent> out;
    hasMore = false;
    const Json *list = result.is_array() ? &result : jsonChild(result, "events");
    if (const Json *more = jsonChild(result, "hasMore"); more && more->is_boolean())
        hasMore = more->get<bool>();
    if (!list || !list->is_array())
        return out;
    for (const Json &item : *list) {
        QString error;
        if (auto e = eventFromObject(item, error))
            out.push_back(std::move(*e));
    }
    return out;
}

std::optional<MessageRecord> messageInFrame(const QByteArray &frame, QStringView messageId)
{
    // A delivery read from simdjson's DOM leaves its payload in the frame: the general path
    // below writes it.
    const auto found = [&](const MapEvent &e) {
        return e.message && !e.message->payloadInFrame && !e.message->toInFrame
            && (e.message->id.isEmpty() ? e.eventId : e.message->id) == messageId;
    };
    // A map/event read from simdjson's DOM, so the text is the one the load wrote.
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    simdjson::dom::element method;
    simdjson::dom::element params;
    if (parseText(parser, frame, root) == simdjson::SUCCESS && root.type() == simdjson::dom::element_type::OBJECT
        && lastMember(simdjson::dom::object(root), "method", method)
        && method.type() == simdjson::dom::element_type::STRING && std::string_view(method) == "map/event"
        && lastMember(simdjson::dom::object(root), "params", params)) {
        QString error;
        bool differs = false;
        if (MapEvent e; eventFromNotification(params, e, error, differs) && !differs && found(e))
            return std::move(*e.message);
    }
    Json json = Json::parse(frame.constBegin(), frame.constEnd(), nullptr, false);
    if (json.is_discarded()) { // read as the pipeline read it: lone surrogates as U+FFFD
        QByteArray repaired = frame;
        if (repairLoneSurrogates(repaired) > 0)
            json = Json::parse(repaired.constBegin(), repaired.constEnd(), nullptr, false);
    }
    if (!json.is_object())
        return std::nullopt;
    QString error;
    if (const Json *p = jsonChild(json, "params"); p && jsonString(json, "method") == QLatin1String("map/event")) {
        if (std::optional<MapEvent> e = eventFromNotification(*p, error); e && found(*e))
            return std::move(*e->message);
    } else if (const Json *result = jsonChild(json, "result")) {
        bool hasMore = false;
        for (MapEvent &e : eventsFromReplayResult(*result, hasMore))
            if (found(e))
                return std::move(*e.message);
    }
    return std::nullopt;
}

QByteArray messagePayloadInFrame(const QByteArray &frame, QStringView messageId)
{
    const std::optional<MessageRecord> message = messageInFrame(frame, messageId);
    return message ? message->payloadText : QByteArray();
}

} // namespace mapi
