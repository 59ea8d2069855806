// Exports of a loaded model: Chrome trace-event JSON (Perfetto, chrome://tracing) and CSV tables.
//
// Chrome trace ({"traceEvents":[...]}): one process (the MAP system), one thread per agent
// (tid = agent row + 1, named by "thread_name" metadata events; tid 0 is the system itself),
//   - one instant event ("ph":"i") per model event (messages, state changes, scopes,
//     sessions, deliveries, ...), on the thread of the agent it concerns, cat = its family;
//   - one complete event ("ph":"X") per task, from its request (or first sighting) to its
//     completion, failure or rejection (open tasks end at the model's clock, args.open = true).
// Times ("ts", "dur") are microseconds since the first exported event; otherData.startMs holds
// that origin as epoch milliseconds.
//
// CSV (RFC 4180: quoted where needed, "" for quotes, CRLF): agents, messages or tasks, one row
// per model row, with a header row. Text that a spreadsheet would run as a formula (=, +, -, @
// first) is prefixed with an apostrophe.
#pragma once

#include "model/SystemStore.h"

#include <QIODevice>

#include <limits>

namespace mapi {

class TraceTimeline;

struct ChromeTraceOptions
{
    qint64 fromMs = std::numeric_limits<qint64>::min(); // events and tasks overlapping [fromMs, toMs]
    qint64 toMs = std::numeric_limits<qint64>::max();
    // With the trace's timeline, agent.state.changed events carry the new state in args
    // (read from their frames).
    const TraceTimeline *timeline = nullptr;
    QString processName = QStringLiteral("MAP system");
    // Not empty: only the events of these agents (their own, and the messages they sent or
    // received) and the tasks they requested or were assigned; only the threads those use.
    QSet<QString> agents;
};

struct ChromeTraceCounts
{
    qint64 instantEvents = 0;
    qint64 taskEvents = 0;
    qint64 threads = 0;          // agents + the system thread
};

bool writeChromeTrace(const SystemStore &store, QIODevice &out, const ChromeTraceOptions &options = {},
                      ChromeTraceCounts *counts = nullptr, QString *error = nullptr);
bool writeChromeTrace(const SystemStore &store, const QString &path, const ChromeTraceOptions &options = {},
                      ChromeTraceCounts *counts = nullptr, QString *error = nullptr);

enum class CsvTable { Agents, Messages, Tasks };
bool csvTableFromName(const QString &name, CsvTable &table); // "agents", "messages", "tasks"

// Writes the table; returns the number of data rows (without the header), or -1 on error.
qint64 writeCsv(const SystemStore &store, CsvTable table, QIODevice &out, QString *error = nullptr);
qint64 writeCsv(const SystemStore &store, CsvTable table, const QString &path, QString *error = nullptr);

// One CSV field, quoted when needed (exposed for tests).
QByteArray csvField(const QString &text, bool neutraliseFormula = true);

} // namespace mapi
