#include "map/MethodTable.h"

#include "map/Dialect.h"

#include <QHash>

namespace mapi {

namespace {

// Allowed in observer mode: what only reads the system.
constexpr const char *kReads[] = {
    "map/agents/list", "map/agents/get", "map/scopes/list", "map/scopes/get", "map/scopes/members",
    "map/structure/graph", "map/replay", "map/session/list", "map/session/info", "map/tasks/list",
    "map/resources/list", "map/resources/get", "map/federation/list", "map/federation/buffer/stats",
    "mail/get", "mail/list", "mail/turns/list", "mail/thread/list", "mail/replay",
    "mail/summary", // a read unless it asks for a new summary (methodEffect)
    "trajectory/list", "trajectory/get", "trajectory/content", "workspace/search", "workspace/list", "workspace/read",
    "cred/list", "cred/status",
};

// Allowed in observer mode: the caller's own connection, session and subscriptions. The client
// needs them to observe at all (map/auth/refresh renews its own credential; it changes nothing
// another participant sees).
constexpr const char *kOwnConnection[] = {
    "map/connect", "map/disconnect", "map/authenticate", "map/auth/refresh", "map/subscribe", "map/unsubscribe",
    "map/subscribe.ack", "map/ack", "map/pause", "map/resume", "map/subscriptions/subscribe",
    "map/subscriptions/unsubscribe", "map/subscriptions/pause", "map/subscriptions/resume",
};

// The deny-list: refused in observer mode. Named one by one (rather than left to "unknown") so
// the test can tell a decided method from one nobody has looked at.
constexpr const char *kChanges[] = {
    // messages and steering
    "map/send", "map/send/scope", "map/inject",
    // agents
    "map/agents/register", "map/agents/unregister", "map/agents/spawn", "map/agents/update",
    "map/agents/update/state", "map/agents/update/metadata", "map/agents/suspend", "map/agents/resume",
    "map/agents/stop",
    // scopes and tasks
    "map/scopes/create", "map/scopes/delete", "map/scopes/join", "map/scopes/leave",
    "map/tasks/create", "map/tasks/assign", "map/tasks/update",
    // sessions and permissions: load takes over a session (maybe another's); close unregisters
    // the session's agents and leaves their scopes
    "map/session/load", "map/session/close", "map/permissions/update",
    // federation: everything but list and buffer/stats
    "map/federation/connect", "map/federation/disconnect", "map/federation/route", "map/federation/buffer/flush",
    // mail
    "mail/create", "mail/close", "mail/join", "mail/leave", "mail/invite", "mail/turn", "mail/thread/create",
    // trajectories and credentials (cred/get issues a credential for a resource)
    "trajectory/checkpoint", "cred/get",
    // the server's notifications: a client has no reason to send them, and one that did would
    // speak for the server
    "map/event", "map/message", "map/auth/expiring", "trajectory/content.chunk",
};

const QHash<QString, MethodEffect> &table()
{
    static const QHash<QString, MethodEffect> t = [] {
        QHash<QString, MethodEffect> out;
        for (const char *m : kReads)
            out.insert(QString::fromLatin1(m), MethodEffect::Reads);
        for (const char *m : kOwnConnection)
            out.insert(QString::fromLatin1(m), MethodEffect::OwnConnection);
        for (const char *m : kChanges)
            out.insert(QString::fromLatin1(m), MethodEffect::Changes);
        return out;
    }();
    return t;
}

} // namespace

MethodEffect methodEffect(const QString &method, const Json &params)
{
    // map/subscribe.ack is its own name; every other dotted spelling is read as its canonical one.
    const QString canonical = canonicalMethodName(method);
    // Not named: Changes. Observer mode refuses what it cannot classify.
    const MethodEffect effect = table().value(canonical, MethodEffect::Changes);
    if (effect == MethodEffect::Reads && canonical == QLatin1String("mail/summary")) {
        if (const Json *regenerate = jsonChild(params, "regenerate"); regenerate && !(regenerate->is_boolean() && !regenerate->get<bool>()))
            return MethodEffect::Changes; // asks the server to write a new summary
    }
    return effect;
}

bool methodIsClassified(const QString &method)
{
    return table().contains(canonicalMethodName(method));
}

const char *methodEffectName(MethodEffect effect)
{
    switch (effect) {
    case MethodEffect::Reads: return "reads";
    case MethodEffect::OwnConnection: return "own-connection";
    case MethodEffect::Changes: return "changes";
    }
    return "changes";
}

} // namespace mapi
