// What a crashing executable says before it goes: its name, the signal, and the stack.
#pragma once

namespace mapi {

// On a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) writes "PROGRAM: crashed (signal
// N: NAME); stack:" and the stack's frames to stderr, then lets the signal take its default
// course (a core dump where the system keeps one, and the same exit status as without this), so
// that a crash seen once, in CI or at a user's desk, names where it happened. The frames carry
// addresses and symbol names only: no data, so nothing secret. Call once, early in main(), on the
// main thread. On Windows it does nothing.
void installCrashReport(const char *program);

} // namespace mapi
