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

#include "common/ErrorOr.h"
#include "jobs/BackgroundJob.h"
#include "model/SystemStore.h"

#include <QIODevice>
#include <QObject>
#include <QSaveFile>

#include <functional>

#include <limits>
#include <memory>

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

// Turns: one row per conversation turn kept (conversation, subject, participant by name);
// Checkpoints: one per trajectory checkpoint; Acp: one per ACP request (with its response) or
// notification, by stream.
enum class CsvTable { Agents, Messages, Tasks, Turns, Checkpoints, Acp };
// "agents", "messages", "tasks", "turns", "checkpoints", "acp"
bool csvTableFromName(const QString &name, CsvTable &table);

// Writes the table; the number of data rows written (without the header), or why it could not.
ErrorOr<qint64> writeCsv(const SystemStore &store, CsvTable table, QIODevice &out);
ErrorOr<qint64> writeCsv(const SystemStore &store, CsvTable table, const QString &path);

// An export written a slice at a time, so that the thread that owns the store (the window's)
// stays live through a large one (ExportJob). It writes the rows the store had when it was
// made; the store may grow meanwhile, but must not be reset (ExportJob stops then). Thread: the
// store's.
class ExportWriter
{
public:
    virtual ~ExportWriter() = default;
    // Writes up to `maxRows` more rows; false once finished or failed (error() says which).
    virtual bool writeSome(qint64 maxRows) = 0;
    qint64 done() const { return m_done; }   // rows written (a Chrome trace counts its first pass too)
    qint64 total() const { return m_total; } // rows in all
    const QString &error() const { return m_error; }

protected:
    qint64 m_done = 0;
    qint64 m_total = 0;
    QString m_error;
};

std::unique_ptr<ExportWriter> makeChromeTraceWriter(const SystemStore &store, QIODevice &out,
                                                    const ChromeTraceOptions &options = {});
std::unique_ptr<ExportWriter> makeCsvWriter(const SystemStore &store, CsvTable table, QIODevice &out);

// Writes an export to a file in the store's thread, a slice of about kSliceMs at a time with the
// event loop running in between: the window stays live, shows progress() and can cancel(). The
// file appears only once complete (QSaveFile): a cancel, a failure, or a reset of the store
// (a seek back or another trace rebuilds the model: the rows would change under the export)
// leaves no file and says why in finished(). A BackgroundJob (jobs/BackgroundJob.h): cancel()
// ends the attempt at once, as Cancelled.
//
//   auto *job = new ExportJob(store, path, [&](QIODevice &out) { return makeCsvWriter(*store, CsvTable::Messages, out); }, this);
//   connect(job, &ExportJob::finished, this, [job](const JobOutcome &outcome) { ...; job->deleteLater(); });
//   job->start();
class ExportJob : public BackgroundJob
{
    Q_OBJECT
public:
    using MakeWriter = std::function<std::unique_ptr<ExportWriter>(QIODevice &out)>;
    // 15 ms: half a frame at 30 Hz, so repaints and input keep their pace during an export.
    static constexpr int kSliceMs = 15;

    ExportJob(SystemStore *store, const QString &path, MakeWriter makeWriter, QObject *parent = nullptr);
    ~ExportJob() override;

    void start();
    void setSliceMs(int ms) { m_sliceMs = ms; } // tests: 0 writes one step of rows per slice
    QString path() const { return m_path; }

private:
    void requestStop() override;
    void slice(quint64 ticket);
    void end(JobOutcome outcome);

    SystemStore *m_store;
    QString m_path;
    MakeWriter m_makeWriter;
    std::unique_ptr<QSaveFile> m_file;
    std::unique_ptr<ExportWriter> m_writer;
    int m_sliceMs = kSliceMs;
    QMetaObject::Connection m_resetConnection;
};

// One CSV field, quoted when needed (exposed for tests).
QByteArray csvField(const QString &text, bool neutraliseFormula = true);

} // namespace mapi
