// What each MAP method does to the system it is sent to, for observer mode (which refuses every
// method that changes the system) and for attributing a silent server to one of our own actions.
//
// An allow-list: the methods known to only read, or to touch only the caller's own connection,
// session or subscription; every other method, known or not, counts as one that changes the
// system. The table follows the SDK's method registry (@multi-agent-protocol/sdk 0.1.15: its
// *_METHODS constants, MAPServer's handlers, TestServer's), checked by tst_sdk_events (methodEffects).
#pragma once

#include "map/MapTypes.h"

namespace mapi {

enum class MethodEffect {
    Reads,          // reads the system (lists, gets, replay, mail history, trajectories, files)
    OwnConnection,  // the caller's own connection, session or subscription (connect, subscribe, ack...)
    Changes,        // changes the system for others: sends, steers, registers, creates, joins...
};

// `method`: canonical or as spelled on the wire; `params`: its params, where they decide it
// (mail/summary regenerates a summary when asked to).
MethodEffect methodEffect(const QString &method, const Json &params = Json());
const char *methodEffectName(MethodEffect effect); // "reads", "own-connection", "changes"

} // namespace mapi
