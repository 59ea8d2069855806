#include "CrashReport.h"

#if defined(__linux__) || defined(__APPLE__) // backtrace() is in glibc and in macOS's libSystem
#define MAPI_CRASH_REPORT 1
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
#endif

#include <cstring>
#include <initializer_list>

namespace mapi {

#ifdef MAPI_CRASH_REPORT
namespace {

const char *g_program = "program";

// Only async-signal-safe calls from here on: write(2), backtrace_symbols_fd, raise.
void writeText(const char *text)
{
    const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

void writeNumber(int n)
{
    char digits[12];
    int at = int(sizeof digits);
    digits[--at] = '\0';
    unsigned u = n < 0 ? 0u : unsigned(n);
    do {
        digits[--at] = char('0' + u % 10);
        u /= 10;
    } while (u != 0 && at > 0);
    writeText(digits + at);
}

const char *signalText(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "?";
    }
}

void onFatalSignal(int sig)
{
    writeText(g_program);
    writeText(": crashed (signal ");
    writeNumber(sig);
    writeText(": ");
    writeText(signalText(sig));
    writeText("); stack:\n");
    void *frames[64];
    const int count = ::backtrace(frames, 64);
    ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
    // The default action back (SA_RESETHAND does not reset SIGILL on macOS), then the signal again:
    // it ends the process as it would have without this handler.
    struct sigaction fallback{};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(sig, &fallback, nullptr);
    ::raise(sig);
}

} // namespace

void installCrashReport(const char *program)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)program; // the sanitizer's own report says more
    return;
#endif
    g_program = program;
    // backtrace() loads libgcc on its first call, which allocates: done here, not in the handler.
    void *warm[1];
    (void)::backtrace(warm, 1);
    // A stack overflow leaves no stack to run the handler on: it runs on one of its own.
    static char alternateStack[64 * 1024];
    stack_t stack{};
    stack.ss_sp = alternateStack;
    stack.ss_size = sizeof alternateStack;
    ::sigaltstack(&stack, nullptr);
    struct sigaction action{};
    action.sa_handler = onFatalSignal;
    // While the report is written: another fatal signal waits (the first one's status is the
    // process's), and a closed stderr gives EPIPE rather than SIGPIPE.
    sigemptyset(&action.sa_mask);
    for (int blocked : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGPIPE})
        sigaddset(&action.sa_mask, blocked);
    action.sa_flags = SA_RESETHAND | SA_ONSTACK;
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        ::sigaction(sig, &action, nullptr);
}
#else
void installCrashReport(const char *) {}
#endif

} // namespace mapi
