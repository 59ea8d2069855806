#include "model/AgentGroupLabels.h"

#include "model/SystemStore.h"

namespace mapi {

QSet<QString> parentScopeIds(const SystemStore &store)
{
    QSet<QString> parents;
    for (const Scope &scope : store.scopes())
        if (!scope.deleted && !scope.parentId.isEmpty())
            parents.insert(scope.parentId);
    return parents;
}

bool isMoreSpecificScope(const Scope &a, const Scope &b, const QSet<QString> &scopeParents)
{
    const bool aLeaf = !scopeParents.contains(a.id), bLeaf = !scopeParents.contains(b.id);
    if (aLeaf != bLeaf)
        return aLeaf;
    if (a.members.size() != b.members.size())
        return a.members.size() < b.members.size();
    return a.name != b.name ? a.name < b.name : a.id < b.id; // a total order: one agent, one group
}

const Scope *mostSpecificScope(const Agent &agent, const SystemStore &store, const QSet<QString> &scopeParents)
{
    const Scope *best = nullptr;
    for (const QString &id : agent.scopes) {
        const Scope *s = store.scope(id);
        if (s && !s->deleted && (!best || isMoreSpecificScope(*s, *best, scopeParents)))
            best = s;
    }
    return best;
}

const Agent &topBelowRoot(const Agent &agent, const SystemStore &store)
{
    const Agent *top = &agent;
    for (int steps = 0; steps < 64; ++steps) {
        const Agent *parent = top->parentId.isEmpty() ? nullptr : store.agent(top->parentId);
        if (!parent || parent->parentId.isEmpty())
            break;
        top = parent;
    }
    return *top;
}

} // namespace mapi
