#include "map/MethodTable.h"

#include "map/Dialect.h"

#include <QHash>

namespace mapi {

MethodEffect methodEffect(const QString &method, const Json &params)
{
    static const QHash<QString, MethodEffect> known = [] {
        QHash<QString, MethodEffect> t;
        for (const char *m : {"map/agents/list", "map/agents/get", "map/scopes/list", "map/scopes/get", "map/scopes/members",
                              "map/structure/graph", "map/replay", "map/session/list", "map/session/info", "map/tasks/list",
                              "map/resources/list", "map/resources/get", "mail/get", "mail/list", "mail/turns/list",
                              "mail/thread/list", "mail/replay", "mail/summary", "trajectory/list", "trajectory/get",
                              "trajectory/content", "workspace/search", "workspace/list", "workspace/read",
                              "map/federation/list", "map/federation/buffer/stats", "cred/list", "cred/status"})
            t.insert(QString::fromLatin1(m), MethodEffect::Reads);
        for (const char *m : {"map/connect", "map/disconnect", "map/authenticate", "map/auth/refresh", "map/subscribe",
                              "map/unsubscribe", "map/subscribe.ack", "map/ack", "map/pause", "map/resume"})
            t.insert(QString::fromLatin1(m), MethodEffect::OwnConnection);
        return t;
    }();
    // map/subscribe.ack is its own name; every other dotted spelling is read as its canonical one.
    const MethodEffect effect = known.value(canonicalMethodName(method), MethodEffect::Changes);
    if (effect == MethodEffect::Reads && canonicalMethodName(method) == QLatin1String("mail/summary")) {
        if (const Json *regenerate = jsonChild(params, "regenerate"); regenerate && !(regenerate->is_boolean() && !regenerate->get<bool>()))
            return MethodEffect::Changes; // asks the server to write a new summary
    }
    return effect;
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
