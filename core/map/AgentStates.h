// The one reading of an agent's state text, for the store's health rules and every view.
//
// Servers and agents spell states in many ways: MAP's `idle`/`busy`/`suspended`/`stopped`, the
// official server's `custom:<anything>`, the schema's `x-<anything>`, and the seed conventions'
// upper-case words (`BUSY`, `READY`, `STOPPING`, `UNAVAILABLE`, `MAINTENANCE`, …). The class is
// decided by the word alone: case does not matter and a `custom:` or `x-` prefix is read through.
#pragma once

#include <QString>
#include <QStringView>

namespace mapi {

enum class StateClass {
    Other,     // a word none of the rules knows (shown as is, counted as "other")
    Idle,      // idle, ready, available, waiting, registered, initializing, starting
    Busy,      // busy, active, working, running, thinking, processing, executing
    Suspended, // suspended, paused, maintenance
    Stopping,  // stopping: on its way to stopped, still alive
    Stopped,   // stopped, terminated, exited, shutdown
    Failed,    // failed, error, crashed, unavailable
};

StateClass classifyState(QStringView state);
QString stateClassName(StateClass stateClass); // "idle", "busy", …, "other"

} // namespace mapi
