// Every spelling of an agent state that the seeds and the servers use, with the class it must
// read as (map/AgentStates.h). The unit test checks the classifier against it; each view's test
// checks that the view shows the same class.
#pragma once

#include "map/AgentStates.h"

#include <QString>

#include <vector>

namespace mapi::test {

struct StateSpelling
{
    const char *state;
    StateClass expected;
};

inline const std::vector<StateSpelling> &stateSpellings()
{
    static const std::vector<StateSpelling> spellings = {
        // MAP spec [S], official server [M], TestServer [T]
        {"idle", StateClass::Idle}, {"busy", StateClass::Busy}, {"active", StateClass::Busy},
        {"registered", StateClass::Idle}, {"suspended", StateClass::Suspended}, {"stopping", StateClass::Stopping},
        {"stopped", StateClass::Stopped}, {"failed", StateClass::Failed},
        // [M] custom:<…> and [S] x-<…>: the word after the prefix decides
        {"custom:failed", StateClass::Failed}, {"custom:error", StateClass::Failed}, {"custom:crashed", StateClass::Failed},
        {"custom:busy", StateClass::Busy}, {"custom:stopped", StateClass::Stopped}, {"x-failed", StateClass::Failed},
        {"x-paused", StateClass::Suspended}, {"x-broken", StateClass::Other}, {"custom:thinking", StateClass::Busy},
        // any case
        {"Stopped", StateClass::Stopped}, {"SUSPENDED", StateClass::Suspended}, {"Busy", StateClass::Busy},
        {"CRASHED", StateClass::Failed}, {"crashed", StateClass::Failed},
        // seed 000 heartbeat status words
        {"ACTIVE", StateClass::Busy}, {"IDLE", StateClass::Idle}, {"BUSY", StateClass::Busy},
        {"MAINTENANCE", StateClass::Suspended}, {"ERROR", StateClass::Failed},
        // seed 002 lifecycle
        {"INITIALIZING", StateClass::Idle}, {"READY", StateClass::Idle}, {"STOPPING", StateClass::Stopping},
        {"STOPPED", StateClass::Stopped}, {"UNAVAILABLE", StateClass::Failed},
        // seed 003 / demo system and other common words
        {"working", StateClass::Busy}, {"running", StateClass::Busy}, {"processing", StateClass::Busy},
        {"executing", StateClass::Busy}, {"paused", StateClass::Suspended}, {"terminated", StateClass::Stopped},
        {"exited", StateClass::Stopped}, {"waiting", StateClass::Idle}, {"error", StateClass::Failed},
        // unknown words and nothing
        {"", StateClass::Other}, {"dreaming", StateClass::Other}, {"custom:", StateClass::Other},
        {"  busy ", StateClass::Busy},
    };
    return spellings;
}

} // namespace mapi::test
