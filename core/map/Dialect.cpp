#include "map/Dialect.h"

#include <QHash>

namespace mapi {

QString canonicalEventType(const QString &rawType)
{
    QString t = rawType.trimmed().toLower();
    t.replace(QLatin1Char('_'), QLatin1Char('.'));
    static const QHash<QString, QString> aliases = {
        {QStringLiteral("scope.member.joined"), QStringLiteral("scope.agent.joined")},
        {QStringLiteral("scope.member.left"), QStringLiteral("scope.agent.left")},
        {QStringLiteral("scope.member.added"), QStringLiteral("scope.agent.joined")},
        {QStringLiteral("scope.joined"), QStringLiteral("scope.agent.joined")},
        {QStringLiteral("scope.left"), QStringLiteral("scope.agent.left")},
        {QStringLiteral("participant.connected"), QStringLiteral("session.connected")},
        {QStringLiteral("participant.disconnected"), QStringLiteral("session.disconnected")},
        {QStringLiteral("session.started"), QStringLiteral("session.connected")},
        {QStringLiteral("agent.state"), QStringLiteral("agent.state.changed")},
        {QStringLiteral("agent.updated"), QStringLiteral("agent.metadata.changed")},
    };
    return aliases.value(t, t);
}

EventKind eventKindFor(const QString &t)
{
    static const QHash<QString, EventKind> kinds = {
        {QStringLiteral("agent.registered"), EventKind::AgentRegistered},
        {QStringLiteral("agent.unregistered"), EventKind::AgentUnregistered},
        {QStringLiteral("agent.state.changed"), EventKind::AgentStateChanged},
        {QStringLiteral("agent.metadata.changed"), EventKind::AgentMetadataChanged},
        {QStringLiteral("agent.resumed"), EventKind::AgentResumed},
        {QStringLiteral("agent.orphaned"), EventKind::AgentOrphaned},
        {QStringLiteral("scope.created"), EventKind::ScopeCreated},
        {QStringLiteral("scope.deleted"), EventKind::ScopeDeleted},
        {QStringLiteral("scope.agent.joined"), EventKind::ScopeMemberJoined},
        {QStringLiteral("scope.agent.left"), EventKind::ScopeMemberLeft},
        {QStringLiteral("message.sent"), EventKind::MessageSent},
        {QStringLiteral("message.queued"), EventKind::MessageQueued},
        {QStringLiteral("message.delivered"), EventKind::MessageDelivered},
        {QStringLiteral("message.dropped"), EventKind::MessageDropped},
        {QStringLiteral("message.expired"), EventKind::MessageExpired},
        {QStringLiteral("message.failed"), EventKind::MessageFailed},
        {QStringLiteral("session.connected"), EventKind::SessionConnected},
        {QStringLiteral("session.disconnected"), EventKind::SessionDisconnected},
        {QStringLiteral("session.resumed"), EventKind::SessionResumed},
        {QStringLiteral("session.expired"), EventKind::SessionExpired},
        {QStringLiteral("task.created"), EventKind::TaskCreated},
        {QStringLiteral("task.assigned"), EventKind::TaskAssigned},
        {QStringLiteral("task.status"), EventKind::TaskStatus},
        {QStringLiteral("task.completed"), EventKind::TaskCompleted},
    };
    return kinds.value(t, EventKind::Other);
}

static std::optional<QString> optString(const Json &object, const char *key)
{
    const Json *child = jsonChild(object, key);
    if (!child || child->is_null())
        return std::nullopt;
    if (child->is_string())
        return QString::fromStdString(child->get_ref<const std::string &>());
    if (child->is_number() || child->is_boolean())
        return toQString(*child);
    if (child->is_object()) { // e.g. {"agentId": "..."} or {"id": "..."} as a reference
        for (const char *k : {"id", "agentId", "scopeId"})
            if (const Json *inner = jsonChild(*child, k); inner && inner->is_string())
                return QString::fromStdString(inner->get_ref<const std::string &>());
    }
    return std::nullopt;
}

static QStringList stringList(const Json &array)
{
    QStringList out;
    if (!array.is_array())
        return out;
    for (const Json &item : array) {
        if (item.is_string())
            out << QString::fromStdString(item.get_ref<const std::string &>());
        else if (item.is_object()) {
            for (const char *k : {"id", "agentId", "scopeId"}) {
                if (const Json *inner = jsonChild(item, k); inner && inner->is_string()) {
                    out << QString::fromStdString(inner->get_ref<const std::string &>());
                    break;
                }
            }
        }
    }
    return out;
}

AgentRecord agentFromJson(const Json &object)
{
    AgentRecord a;
    if (!object.is_object())
        return a;
    a.id = optString(object, "id").value_or(optString(object, "agentId").value_or(QString()));
    a.name = optString(object, "name");
    a.role = optString(object, "role");
    a.state = optString(object, "state");
    if (!a.state)
        a.state = optString(object, "newState");
    a.parentId = optString(object, "parent");
    if (const Json *meta = jsonChild(object, "metadata"); meta && meta->is_object()) {
        a.metadata = *meta;
        if (!a.parentId)
            a.parentId = optString(*meta, "parentId");
    }
    if (!a.parentId)
        a.parentId = optString(object, "parentId");
    a.sessionId = optString(object, "sessionId");
    if (!a.sessionId)
        a.sessionId = optString(object, "ownerId");
    if (const Json *scopes = jsonChild(object, "scopes"); scopes && scopes->is_array())
        a.scopes = stringList(*scopes);
    if (const Json *caps = jsonChild(object, "capabilities"))
        a.capabilities = *caps;
    a.registeredAtMs = jsonInt(object, "registeredAt");
    a.lastStateChangeMs = jsonInt(object, "lastStateChange");
    if (const Json *lifecycle = jsonChild(object, "lifecycle"); lifecycle && lifecycle->is_object()) {
        if (!a.registeredAtMs)
            a.registeredAtMs = jsonInt(*lifecycle, "createdAt");
    }
    a.raw = object;
    return a;
}

ScopeRecord scopeFromJson(const Json &object)
{
    ScopeRecord s;
    if (!object.is_object())
        return s;
    s.id = optString(object, "id").value_or(optString(object, "scopeId").value_or(QString()));
    s.name = optString(object, "name");
    s.parentId = optString(object, "parentId");
    if (!s.parentId)
        s.parentId = optString(object, "parent");
    if (const Json *meta = jsonChild(object, "metadata"))
        s.metadata = *meta;
    s.raw = object;
    return s;
}

MessageRecord messageFromJson(const Json &object)
{
    MessageRecord m;
    if (!object.is_object())
        return m;
    m.id = optString(object, "id").value_or(optString(object, "messageId").value_or(QString()));
    m.from = optString(object, "from").value_or(QString());
    if (const Json *to = jsonChild(object, "to"))
        m.to = *to;
    if (const Json *payload = jsonChild(object, "payload"))
        m.payload = *payload;
    if (const Json *p = jsonChild(object, "priority"); p && p->is_number())
        m.priority = p->get<int>();
    m.messageType = optString(object, "messageType").value_or(QString());
    m.replyTo = optString(object, "replyTo").value_or(QString());
    m.timestampMs = jsonInt(object, "timestamp");
    if (const Json *meta = jsonChild(object, "meta"); meta && meta->is_object()) {
        if (!m.timestampMs)
            m.timestampMs = jsonInt(*meta, "timestamp");
    }
    return m;
}

static void fillSubject(MapEvent &e)
{
    const Json &d = e.data;
    if (!d.is_object())
        return;
    switch (e.kind) {
    case EventKind::AgentRegistered:
    case EventKind::AgentUnregistered:
    case EventKind::AgentStateChanged:
    case EventKind::AgentMetadataChanged:
    case EventKind::AgentResumed:
    case EventKind::AgentOrphaned: {
        if (const Json *agent = jsonChild(d, "agent"); agent && agent->is_object())
            e.agent = agentFromJson(*agent);
        else // [T] flat shapes: {agentId, name, role, ownerId} / {agentId, previousState, newState}
            e.agent = agentFromJson(d);
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
        if (const Json *scope = jsonChild(d, "scope"); scope && scope->is_object())
            e.scope = scopeFromJson(*scope);
        else
            e.scope = scopeFromJson(d);
        if (e.scope->id.isEmpty())
            e.scope->id = e.sourceScopeId;
        e.scopeId = e.scope->id;
        break;
    case EventKind::ScopeDeleted:
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        if (const Json *desc = jsonChild(d, "deletedDescendants"))
            e.deletedScopes = stringList(*desc);
        break;
    case EventKind::ScopeMemberJoined:
    case EventKind::ScopeMemberLeft:
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        e.agentId = optString(d, "agentId").value_or(e.sourceAgentId);
        break;
    case EventKind::MessageSent:
    case EventKind::MessageDelivered:
        if (const Json *msg = jsonChild(d, "message"); msg && msg->is_object())
            e.message = messageFromJson(*msg);
        e.messageId = optString(d, "messageId").value_or(e.message ? e.message->id : QString());
        if (e.message && e.message->id.isEmpty())
            e.message->id = e.messageId;
        e.scopeId = optString(d, "scopeId").value_or(e.sourceScopeId);
        e.agentId = optString(d, "agentId").value_or(QString());
        if (e.agentId.isEmpty()) {
            if (const Json *to = jsonChild(d, "deliveredTo"); to && to->is_array() && !to->empty())
                e.agentId = toQString(to->front());
        }
        break;
    case EventKind::MessageQueued:
    case EventKind::MessageDropped:
    case EventKind::MessageExpired:
    case EventKind::MessageFailed:
        e.messageId = optString(d, "messageId").value_or(QString());
        e.agentId = optString(d, "agentId").value_or(optString(d, "to").value_or(QString()));
        e.reason = optString(d, "reason").value_or(QString());
        break;
    case EventKind::SessionConnected:
    case EventKind::SessionResumed:
        if (const Json *session = jsonChild(d, "session"); session && session->is_object()) {
            e.sessionId = optString(*session, "id").value_or(QString());
            e.sessionRole = optString(*session, "role").value_or(QString());
        } else {
            e.sessionId = optString(d, "participantId").value_or(optString(d, "sessionId").value_or(QString()));
            e.sessionRole = optString(d, "participantType").value_or(QString());
        }
        if (e.sessionId.isEmpty())
            e.sessionId = e.sourceSessionId;
        break;
    case EventKind::SessionDisconnected:
    case EventKind::SessionExpired:
        e.sessionId = optString(d, "sessionId").value_or(optString(d, "participantId").value_or(e.sourceSessionId));
        e.reason = optString(d, "reason").value_or(QString());
        break;
    case EventKind::TaskCreated:
    case EventKind::TaskAssigned:
    case EventKind::TaskStatus:
    case EventKind::TaskCompleted:
        if (const Json *task = jsonChild(d, "task"); task && task->is_object())
            e.task = *task;
        else
            e.task = d;
        e.agentId = optString(d, "agentId").value_or(QString());
        break;
    case EventKind::Other:
        e.agentId = optString(d, "agentId").value_or(e.sourceAgentId);
        break;
    }
}

static void readSource(MapEvent &e, const Json &source)
{
    if (source.is_string()) { // [S]/[T]: a participant id
        e.sourceAgentId = QString::fromStdString(source.get_ref<const std::string &>());
    } else if (source.is_object()) {
        e.sourceAgentId = optString(source, "agentId").value_or(optString(source, "participantId").value_or(QString()));
        e.sourceSessionId = optString(source, "sessionId").value_or(QString());
        e.sourceScopeId = optString(source, "scopeId").value_or(QString());
    }
}

static std::optional<MapEvent> buildEvent(const Json &event, QString &error)
{
    if (!event.is_object()) {
        error = QStringLiteral("event is not an object");
        return std::nullopt;
    }
    MapEvent e;
    e.rawType = optString(event, "type").value_or(QString());
    if (e.rawType.isEmpty()) {
        error = QStringLiteral("event has no type");
        return std::nullopt;
    }
    e.type = canonicalEventType(e.rawType);
    e.kind = eventKindFor(e.type);
    e.eventId = optString(event, "id").value_or(optString(event, "eventId").value_or(QString()));
    e.timestampMs = jsonInt(event, "timestamp");
    if (const Json *source = jsonChild(event, "source"))
        readSource(e, *source);
    if (const Json *caused = jsonChild(event, "causedBy"))
        e.causedBy = stringList(*caused);
    if (const Json *data = jsonChild(event, "data"))
        e.data = *data;
    else
        e.data = Json::object();
    fillSubject(e);
    return e;
}

std::optional<MapEvent> eventFromNotification(const Json &params, QString &error)
{
    const Json *event = jsonChild(params, "event");
    if (!event) {
        error = QStringLiteral("map/event without an \"event\" object");
        return std::nullopt;
    }
    auto e = buildEvent(*event, error);
    if (!e)
        return e;
    // [T]: params.eventId (a ULID) differs from event.id; dedupe on params.eventId.
    if (auto pid = optString(params, "eventId"))
        e->eventId = *pid;
    if (!e->timestampMs)
        e->timestampMs = jsonInt(params, "timestamp");
    e->sequenceNumber = jsonInt(params, "sequenceNumber", -1);
    e->subscriptionId = optString(params, "subscriptionId").value_or(QString());
    if (e->causedBy.isEmpty()) {
        if (const Json *caused = jsonChild(params, "causedBy"))
            e->causedBy = stringList(*caused);
    }
    return e;
}

std::optional<MapEvent> eventFromObject(const Json &object, QString &error)
{
    if (const Json *inner = jsonChild(object, "event"); inner && inner->is_object()) {
        auto e = buildEvent(*inner, error);
        if (e) {
            if (auto pid = optString(object, "eventId"))
                e->eventId = *pid;
            if (!e->timestampMs)
                e->timestampMs = jsonInt(object, "timestamp");
        }
        return e;
    }
    return buildEvent(object, error);
}

SnapshotAgents agentsFromListResult(const Json &result)
{
    SnapshotAgents out;
    const Json *list = result.is_array() ? &result : jsonChild(result, "agents");
    if (!list || !list->is_array())
        return out;
    for (const Json &item : *list) {
        AgentRecord a = agentFromJson(item);
        if (!a.id.isEmpty())
            out.agents.push_back(std::move(a));
    }
    return out;
}

SnapshotScopes scopesFromListResult(const Json &result)
{
    SnapshotScopes out;
    const Json *list = result.is_array() ? &result : jsonChild(result, "scopes");
    if (!list || !list->is_array())
        return out;
    for (const Json &item : *list) {
        ScopeRecord s = scopeFromJson(item);
        if (!s.id.isEmpty())
            out.scopes.push_back(std::move(s));
    }
    return out;
}

QStringList membersFromResult(const Json &result)
{
    const Json *list = result.is_array() ? &result : jsonChild(result, "members");
    if (!list)
        list = jsonChild(result, "agents");
    return list ? stringList(*list) : QStringList();
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

ErrorClass classifyError(int code, const QString &message)
{
    if (code == -32601)
        return ErrorClass::MethodNotFound;
    if (code == -32602)
        return ErrorClass::InvalidParams;
    if (code == 2001)
        return ErrorClass::AgentNotFound;
    if (code == 2002)
        return ErrorClass::ScopeNotFound;
    if (code == 1000 || code == -32001)
        return ErrorClass::AuthRequired;
    if (code == 3001)
        return ErrorClass::InvalidStateTransition;
    if (code == 4001)
        return ErrorClass::RateLimited;
    if (code == -32603) {
        struct Prefix { const char *text; ErrorClass cls; };
        static const Prefix prefixes[] = {
            {"Agent not found", ErrorClass::AgentNotFound},
            {"Scope not found", ErrorClass::ScopeNotFound},
            {"Subscription not found", ErrorClass::SubscriptionNotFound},
            {"Authentication required", ErrorClass::AuthRequired},
            {"Invalid state transition", ErrorClass::InvalidStateTransition},
            {"Invalid agent state", ErrorClass::InvalidStateTransition},
            {"Rate limit exceeded", ErrorClass::RateLimited},
        };
        for (const auto &p : prefixes)
            if (message.startsWith(QLatin1String(p.text)))
                return p.cls;
    }
    return ErrorClass::Other;
}

bool isTerminalState(const QString &state)
{
    return state == QLatin1String("stopped");
}

bool isFailedState(const QString &state)
{
    const QString s = state.toLower();
    return s == QLatin1String("failed") || s == QLatin1String("error") || s == QLatin1String("custom:failed")
        || s == QLatin1String("x-failed") || s == QLatin1String("custom:error");
}

bool isSuspendedState(const QString &state)
{
    return state == QLatin1String("suspended");
}

} // namespace mapi
