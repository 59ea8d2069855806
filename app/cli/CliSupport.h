// What the commands of map-inspector-cli share: exit codes, output, credentials, progress and
// the options every command reads. Everything here runs on the main thread.
#pragma once

#include "common/ErrorOr.h"
#include "client/MapClient.h"
#include "trace/TraceLoader.h"

#include <QCommandLineParser>
#include <QElapsedTimer>

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

class QTimer;

namespace mapi {
class SystemStore;
}

namespace mapi::cli {

// Exit codes (documented in the README and --help).
enum Exit {
    Ok = 0,
    Usage = 1,
    ConnectionFailed = 2,
    AuthRefused = 3,
    ActionFailed = 4,
    ActionTimedOut = 5,
    TraceUnreadable = 6,
    OutputUnwritable = 7,
    Different = 1,        // diff: the runs differ (the JSON on stdout says how; a usage error prints none)
    ObservedWithGaps = 8, // an observation (state --url --duration, record, watch) lost the connection or events on the way
    AlertRaised = 9       // watch --exit-on SEVERITY: an alert of that severity or worse was raised
};

// Whether `name` is one of the commands; else the command a slip of the keys most likely meant
// (at most two letters off), or empty.
bool isCommand(const QString &name);
QString nearestCommand(const QString &name);

// Prints "map-inspector-cli: MESSAGE" (redacted) on stderr and returns `code`.
int failWith(int code, const QString &message);
// JSON on stdout, redacted like every other way out (common/Redaction.h).
void printJson(const Json &json, int indent = 2); // indent -1: one line (JSON Lines)
// The same (indent 2) for a stateToJson() document made with listAgents false: its agents are
// written one at a time from the store, so the whole model is never one tree in memory.
void printStateJson(const SystemStore &store, const Json &state);

struct Common
{
    ClientOptions options;   // the first system's (options.url)
    // Every --url/--launch given, in order: state and watch observe them all at once (options
    // with each URL in turn); the other live commands take one.
    QList<QUrl> urls;
    double durationS = 0;
    // An observation for a duration the operator asked for (state --url --duration S, record):
    // it survives drops, reports them, and exits with ObservedWithGaps when it lost anything.
    bool observing = false;
    QString tokenFile; // --token-file: read again when the server says the credential expires
    // record without --duration (an unattended collector): runs until SIGTERM or SIGINT, and its
    // first connection is retried with the client's backoff like every later one (the system may
    // come up after the collector), instead of failing fast.
    bool untilStopped = false;
    int maxAgents = SystemStore::kDefaultMaxAgents; // --max-agents
};

// Stopping on a signal (record without --duration, tap), the same on every platform:
// catchStopSignals() makes the first SIGINT or SIGTERM (and on Windows SIGBREAK, Ctrl+Break)
// only set a flag, which a StopSignalWatch reads from the event loop every 100 ms (a signal
// handler may do nothing else safely, and on Windows it runs on another thread). The handler
// then gives that signal back its default action, so a second one ends the process at once,
// killed by the signal (a shell shows 130 for SIGINT, 143 for SIGTERM), whatever the command was
// doing. Windows sends no SIGTERM: Ctrl+C is SIGINT, Ctrl+Break (and GenerateConsoleCtrlEvent
// CTRL_BREAK_EVENT, what a supervisor can send to a console process group) is SIGBREAK; closing the
// console or a TerminateProcess ends the process without either. Call it before anything that a
// supervisor could see start (a listening line, a file), so that no early signal is lost.
void catchStopSignals();
// The signal that first asked to stop; 0 while none did.
int stopSignalReceived();
// Calls `stop` once, from the event loop, within 100 ms of the first stop signal (at once on the
// first tick when it came before). Lives on the thread that made it.
class StopSignalWatch
{
public:
    explicit StopSignalWatch(std::function<void()> stop);
    ~StopSignalWatch();
    StopSignalWatch(const StopSignalWatch &) = delete;
    StopSignalWatch &operator=(const StopSignalWatch &) = delete;

private:
    std::unique_ptr<QTimer> m_poll;
};

// A credential file: its text without surrounding white space (a trailing newline is usual).
ErrorOr<QString> readTokenFile(const QString &path);
// --token, --token-file, --token-env and --auth.
ErrorOr<AuthConfig> readAuth(const QCommandLineParser &p);

// The memory budget of a one-shot command (InspectorSession::setMemoryBudget): 40 % of it, 16 MB,
// holds recent history (some 100,000 events: enough to tell a replayed event from a new one), so
// memory grows with agents, scopes and open tasks, not with events.
constexpr qint64 kCliMemoryBudgetBytes = 40 << 20;

// What a command that reads a trace into `store` reads it with: at most --max-agents agents.
// `modelOnly` (state, stats: they print the model and counts, never the history): the store
// keeps the recent history a one-shot live command keeps (40 % of kCliMemoryBudgetBytes) and no
// timeline is kept, so a trace of any length costs what its agents, scopes and tasks cost.
TraceLoadOptions traceLoadFor(SystemStore &store, const Common &common, bool modelOnly = false);


Json badLinesJson(const TraceReadStats &stats, int max = -1);
// Warnings about a damaged file, on stderr (the data that could be read is still used).
void reportDamage(const TraceReadStats &stats);
// The same, and the model's bounds that the trace reached (SystemStore::maxAgents()).
void reportDamage(const TraceReadStats &stats, const SystemStore &store);

// A long read's progress on stderr, for a person at a terminal: from 2 s on, every 2 s, "read 1,234
// of 3,456 MB (35 %)" on one line; nothing for a script (stderr is not a terminal) or a short read.
// Ctrl+C stops the command, as any other.
class ReadProgress
{
public:
    ReadProgress()
        : m_terminal(stderrIsTerminal())
    {
        m_clock.start();
    }
    ~ReadProgress() { done(); }
    // Ends the progress line (before anything else is printed).
    void done()
    {
        if (m_shown)
            std::fputc('\n', stderr);
        m_shown = false;
        m_terminal = false;
    }
    std::function<void(const TraceLoadBatch &)> callback()
    {
        if (!m_terminal)
            return {};
        return [this](const TraceLoadBatch &b) {
            if (m_clock.elapsed() < m_nextMs || b.bytesTotal <= 0)
                return;
            m_nextMs = m_clock.elapsed() + 2000;
            m_shown = true;
            std::fprintf(stderr, "\rmap-inspector-cli: read %lld of %lld MB (%d %%), %lld records",
                         static_cast<long long>(b.bytesRead >> 20), static_cast<long long>(b.bytesTotal >> 20),
                         int(100 * b.bytesRead / b.bytesTotal), static_cast<long long>(b.recordsRead));
            std::fflush(stderr);
        };
    }

private:
    static bool stderrIsTerminal();
    QElapsedTimer m_clock;
    qint64 m_nextMs = 2000;
    bool m_terminal = false;
    bool m_shown = false;
};

TraceLoadOptions loadOptions(const Common &common);
QString isoTime(qint64 ms);
// An optional time: nullopt when the option is not given.
ErrorOr<std::optional<qint64>> timeOption(const QCommandLineParser &p, const QString &name);
// --from and --to (convert, bundle).
struct TimeRange
{
    std::optional<qint64> from, to;
};
ErrorOr<TimeRange> timeRangeOption(const QCommandLineParser &p);

} // namespace mapi::cli
