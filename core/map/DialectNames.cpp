// The names of MAP: event types and their kinds, task statuses, method names and their other
// spellings, what a failed method costs an observation, and error classes. The shapes of the
// objects they name are read in Dialect.cpp; both are declared in Dialect.h.
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

EventFamily eventFamily(EventKind kind)
{
    switch (kind) {
    case EventKind::AgentRegistered:
    case EventKind::AgentUnregistered:
    case EventKind::AgentStateChanged:
    case EventKind::AgentMetadataChanged:
    case EventKind::AgentResumed:
    case EventKind::AgentOrphaned: return EventFamily::Agent;
    case EventKind::ScopeCreated:
    case EventKind::ScopeDeleted:
    case EventKind::ScopeMemberJoined:
    case EventKind::ScopeMemberLeft: return EventFamily::Scope;
    case EventKind::MessageSent: return EventFamily::Message;
    case EventKind::MessageQueued:
    case EventKind::MessageDelivered:
    case EventKind::MessageDropped:
    case EventKind::MessageExpired:
    case EventKind::MessageFailed: return EventFamily::Delivery;
    case EventKind::SessionConnected:
    case EventKind::SessionDisconnected:
    case EventKind::SessionResumed:
    case EventKind::SessionExpired: return EventFamily::Session;
    case EventKind::TaskCreated:
    case EventKind::TaskAssigned:
    case EventKind::TaskStatus:
    case EventKind::TaskCompleted: return EventFamily::Task;
    case EventKind::ConversationCreated:
    case EventKind::ConversationClosed:
    case EventKind::ParticipantJoined:
    case EventKind::ParticipantLeft:
    case EventKind::TurnAdded:
    case EventKind::TurnUpdated:
    case EventKind::ThreadCreated: return EventFamily::Conversation;
    case EventKind::TrajectoryCheckpoint: return EventFamily::Trajectory;
    case EventKind::Other: break;
    }
    return EventFamily::Other;
}

const char *eventFamilyName(EventFamily family)
{
    switch (family) {
    case EventFamily::Agent: return "agent";
    case EventFamily::Scope: return "scope";
    case EventFamily::Message: return "message";
    case EventFamily::Delivery: return "delivery";
    case EventFamily::Session: return "session";
    case EventFamily::Task: return "task";
    case EventFamily::Conversation: return "conversation";
    case EventFamily::Trajectory: return "trajectory";
    case EventFamily::Other: break;
    }
    return "other";
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
        {QStringLiteral("mail.created"), EventKind::ConversationCreated},
        {QStringLiteral("mail.closed"), EventKind::ConversationClosed},
        {QStringLiteral("mail.participant.joined"), EventKind::ParticipantJoined},
        {QStringLiteral("mail.participant.left"), EventKind::ParticipantLeft},
        {QStringLiteral("mail.turn.added"), EventKind::TurnAdded},
        {QStringLiteral("mail.turn.updated"), EventKind::TurnUpdated},
        {QStringLiteral("mail.thread.created"), EventKind::ThreadCreated},
        {QStringLiteral("trajectory.checkpoint"), EventKind::TrajectoryCheckpoint},
    };
    return kinds.value(t, EventKind::Other);
}

QString canonicalTaskStatus(const QString &status)
{
    if (status.isEmpty())
        return status;
    QString s = status.trimmed().toLower();
    s.replace(QLatin1Char('_'), QLatin1Char('-'));
    s.replace(QLatin1Char(' '), QLatin1Char('-'));
    return s;
}

QString canonicalMethodName(const QString &method)
{
    // Only names under map/ with a dot after a slash; map/subscribe.ack is a notification of
    // its own name, not a spelling of another method.
    if (!method.startsWith(QLatin1String("map/")) || !method.contains(QLatin1Char('.'))
        || method == QLatin1String("map/subscribe.ack"))
        return method;
    QString canonical = method;
    canonical.replace(QLatin1Char('.'), QLatin1Char('/'));
    return canonical;
}

QString alternativeMethodName(const QString &canonical)
{
    const qsizetype second = canonical.indexOf(QLatin1Char('/'), 4);
    if (!canonical.startsWith(QLatin1String("map/")) || second < 0)
        return {};
    QString alternative = canonical;
    for (qsizetype i = second; i < alternative.size(); ++i)
        if (alternative[i] == QLatin1Char('/'))
            alternative[i] = QLatin1Char('.');
    return alternative;
}

QString observationLossOf(const QString &method)
{
    static const QHash<QString, QString> losses = {
        {QStringLiteral("map/connect"), QStringLiteral("the server did not say who it is, and the session is the socket's own")},
        {QStringLiteral("map/subscribe"), QStringLiteral("no events are delivered: the model is what the lists say, read again "
                                                         "every reconciliation")},
        {QStringLiteral("map/agents/list"), QStringLiteral("this server does not list agents: agents are inferred from events")},
        {QStringLiteral("map/scopes/list"), QStringLiteral("this server does not list scopes: scopes are inferred from events")},
        {QStringLiteral("map/scopes/members"), QStringLiteral("scope members are inferred from events")},
        // Asked only of a server that advertises mail (MapClientExtensions.cpp).
        {QStringLiteral("mail/list"), QStringLiteral("conversations from before this connection are not shown")},
        {QStringLiteral("mail/get"), QStringLiteral("a conversation's participants from before this connection are not shown")},
        {QStringLiteral("mail/turns/list"), QStringLiteral("a conversation's turns from before this connection are not shown")},
        {QStringLiteral("mail/thread/list"), QStringLiteral("a conversation's threads from before this connection are not shown")},
    };
    return losses.value(method);
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

} // namespace mapi
