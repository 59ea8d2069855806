#include "model/AgentLookup.h"

#include "model/SystemStore.h"

namespace mapi {

ErrorOr<QString> resolveAgentReference(const SystemStore &store, const QString &given)
{
    if (const Agent *a = store.agent(given); a && !a->placeholder)
        return given;
    QStringList named;
    for (const Agent &a : store.agents())
        if (!a.placeholder && !a.unregistered && a.name == given)
            named << a.id;
    if (named.size() > 1)
        return Failure{QStringLiteral("%1 agents are named \"%2\": give one of their ids (%3)")
                           .arg(named.size())
                           .arg(given, named.join(QStringLiteral(", ")))};
    return named.isEmpty() ? given : named.constFirst();
}

} // namespace mapi
