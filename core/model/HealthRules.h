// The health rules: what an agent's health is at a time, from what the model knows of it.
//
// Pure functions of their arguments (no store, no clock of their own), so they are tested
// directly and the store runs them for every agent when its clock advances
// (SystemStore::advanceTime: the wall clock live, the trace's time in a replay).
#pragma once

#include "model/ModelTypes.h"

namespace mapi {

// In order, the first that holds:
//   Stopped       unregistered, or a state of the stopped class (map/AgentStates.h)
//   Failed        a failed-class state, or a CRITICAL error report not followed by a heartbeat
//   Disconnected  its session is disconnected or expired (`session` may be null: unknown)
//   Suspended     a suspended-class state
//   Unresponsive  no sign of life (heartbeat, activity, registration) for more than
//                 policy.unresponsiveAfterIntervals heartbeat intervals
//   Late          the same for more than policy.lateAfterIntervals intervals
//   Healthy       otherwise
Health evaluateHealth(const Agent &agent, const Session *session, const HealthPolicy &policy, qint64 nowMs);

} // namespace mapi
