// The labels a large system is grouped by, wherever it is shown as groups: alert storms
// (core/alerts/AlertGroups) and the topology's overview (ui/topology/GroupOverview).
//   scope   — the most specific scope an agent is in: one without sub-scopes (its squad or team
//             rather than the project above them), the smallest of those; else the smallest; by
//             name, then id, on a tie;
//   subtree — the agent's topmost ancestor below a root (a team lead in coordinator → leads →
//             workers), or the agent itself when its parent is a root or it has none.
// Thread: the store's.
#pragma once

#include "model/ModelTypes.h"

#include <QSet>
#include <QString>

namespace mapi {

class SystemStore;

// The ids of scopes that have sub-scopes (looked up once for many agents).
QSet<QString> parentScopeIds(const SystemStore &store);
// Whether scope `a` is more specific than `b` (the order mostSpecificScope() picks by).
bool isMoreSpecificScope(const Scope &a, const Scope &b, const QSet<QString> &scopeParents);
// Null when the agent is in no (live) scope.
const Scope *mostSpecificScope(const Agent &agent, const SystemStore &store, const QSet<QString> &scopeParents);
// At most 64 steps up: a parent cycle ends there.
const Agent &topBelowRoot(const Agent &agent, const SystemStore &store);

} // namespace mapi
