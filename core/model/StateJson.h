// The model as JSON: what `map-inspector-cli state` prints, and what tests compare with a
// server's own view.
#pragma once

#include "model/SystemStore.h"

namespace mapi {

struct StateJsonOptions
{
    bool includeDeparted = true; // list unregistered agents and deleted scopes separately
    bool includeActions = true;
};

// {"agents":[{id,name,role,state,parentId,scopes,sessionId,health}], "scopes":[{id,name,parentId,members}],
//  "departedAgents":[…], "placeholders":[ids], "actions":[…], "gaps":[…],
//  "counts":{events,messages,tasks,gaps,sequenceGaps,problems,duplicates,unknownEvents,futureTimestamps}, "connection":{…}}
// Agents and scopes are sorted by id; only registered agents and live scopes are in the main lists.
Json stateToJson(const SystemStore &store, const StateJsonOptions &options = {});
Json actionToJson(const OperatorAction &action);

} // namespace mapi
