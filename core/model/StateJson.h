// The model as JSON: what `map-inspector-cli state` prints, and what tests compare with a
// server's own view.
#pragma once

#include "model/SystemStore.h"

#include <functional>

namespace mapi {

struct StateJsonOptions
{
    bool includeDeparted = true; // list unregistered agents and deleted scopes separately
    bool includeActions = true;
    // false: "agents" and "departedAgents" are left empty (the counts still count them), for a
    // printer that writes them one at a time (forEachAgentJson): 100,000 agents as one tree
    // took ~130 MB.
    bool listAgents = true;
};

// {"agents":[{id,name,role,state,parentId,scopes,sessionId,health}], "scopes":[{id,name,parentId,members}],
//  "departedAgents":[…], "placeholders":[ids], "actions":[…], "gaps":[…],
//  "counts":{events,messages,tasks,gaps,sequenceGaps,problems,duplicates,unknownEvents,futureTimestamps}, "connection":{…}}
// Agents and scopes are sorted by id; only registered agents and live scopes are in the main lists.
Json stateToJson(const SystemStore &store, const StateJsonOptions &options = {});
Json actionToJson(const OperatorAction &action);
// The entries of "agents" (registered agents; `departed`: of "departedAgents"), one at a time, in
// the order stateToJson() lists them.
void forEachAgentJson(const SystemStore &store, bool departed, const std::function<void(const Json &)> &f);

} // namespace mapi
