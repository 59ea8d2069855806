// What each MAP method does to the system it is sent to, for observer mode (which refuses every
// method that changes the system) and for attributing a silent server to one of our own actions.
//
// Every method the console knows is named here, in one of three lists: the reads and the
// caller's own connection (both allowed in observer mode), and the deny-list of methods that
// change the system. A method none of them names counts as one that changes the system:
// observer mode refuses what it cannot classify. The lists follow the SDK's method registry
// (@multi-agent-protocol/sdk 0.1.15: METHOD_REGISTRY and the *_METHODS constants, MAPServer's
// and TestServer's handler tables, the permission rules); tst_sdk_events
// (everySdkMethodIsClassified) walks them in the installed SDK and fails on a method none of the
// lists names, so a new SDK's method is decided here before it can fall to "unknown".
#pragma once

#include "map/MapTypes.h"

namespace mapi {

enum class MethodEffect {
    Reads,          // reads the system (lists, gets, replay, mail history, trajectories, files)
    OwnConnection,  // the caller's own connection, session or subscription (connect, subscribe, ack...)
    Changes,        // changes the system for others: sends, steers, registers, creates, joins...
};

// `method`: canonical or as spelled on the wire; `params`: its params, where they decide it
// (mail/summary regenerates a summary when asked to). Unknown methods: Changes.
MethodEffect methodEffect(const QString &method, const Json &params = Json());
// Whether one of the lists names `method` (either spelling); false: methodEffect() says Changes
// only because it does not know the method.
bool methodIsClassified(const QString &method);
const char *methodEffectName(MethodEffect effect); // "reads", "own-connection", "changes"

} // namespace mapi
