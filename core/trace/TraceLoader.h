// Loading a trace (or capture, or imported log) of any size into a SystemStore, off the GUI
// thread, with progress and cancellation:
//
//   file ──reader thread──▶ records ──decoding thread──▶ batches of ModelInputs ──▶ apply()
//        (decompress, split lines,        (ProtocolPipeline per connection,       (the store's
//         parse record lines)              simdjson-backed codec)                  thread)
//
// Decoding never touches the store; only applyTraceBatch() does, in the store's thread. The
// file is read in 1 MiB pieces, never whole; at most a few batches are in flight, so memory
// is the model plus the timeline (TraceTimeline.h), whatever the file size.
//
// Three ways in:
//   - loadTraceBatches(): the core loop, runs in the calling (worker) thread, hands each batch
//     to a callback; the caller forwards them to the store's thread.
//   - TraceLoadJob: a QObject for the window that does exactly that (worker thread, bounded
//     queue, progress signals, cancel(), the store filled in the job's thread).
//   - loadTraceInto(): synchronous, for the CLI, tests and benchmarks (decodes on helper
//     threads, applies in the calling thread).
#pragma once

#include "jobs/BackgroundJob.h"
#include "model/SystemStore.h"
#include "trace/Trace.h"
#include "trace/TraceTimeline.h"

#include <QElapsedTimer>
#include <QObject>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace mapi {

struct TraceLoadOptions
{
    CodecLimits limits;
    bool fastParser = true;        // SimdJsonParser in the pipelines (same values, faster)
    // false (default): EventEntry::rawFrame stays empty, TraceTimeline::frameForEvent() reads
    // the frame on demand; saves about the file's size in memory. Needs keepTimeline.
    bool keepRawFrames = false;
    bool keepTimeline = true;      // keep the records for seeking (TraceTimeline)
    bool readerThread = true;      // read and parse lines on their own thread
    int firstBatchRecords = 200;   // a small first batch: the first view comes at once
    // Small batches freed soon after they were decoded cost half the CPU of large ones (cache
    // and allocator); the queues between threads hold about inFlightRecords records.
    int batchRecords = 64;
    int inFlightRecords = 1024;
    qint64 untilTimeMs = -1;       // >= 0: stop after the last record at or before this time
    const std::atomic<bool> *cancel = nullptr; // set it (any thread) to stop early
};

struct TraceLoadBatch
{
    ModelInputs inputs;
    // The records of this batch that produced inputs, in order: (record index, input count).
    std::vector<std::pair<qint64, int>> records;
    qint64 bytesRead = 0;          // progress: file bytes consumed so far ...
    qint64 bytesTotal = 0;         // ... of the file's size
    qint64 recordsRead = 0;        // records read so far
    qint64 lastTimeMs = 0;         // newest record time so far
};

struct TraceLoadResult
{
    bool ok = false;               // false: unreadable file or unknown format (see error)
    bool cancelled = false;
    QString error;
    TraceReadStats stats;
    qint64 lastTimeMs = 0;
    std::shared_ptr<TraceTimeline> timeline; // when keepTimeline
};

using TraceBatchSink = std::function<bool(TraceLoadBatch &&batch)>; // false: stop loading

// Parses `path` into batches. Runs in the calling thread (plus the reader thread); `sink` is
// called in the calling thread, in file order. No QObject is involved. `timeline`: where to keep
// the records (created when null and options.keepTimeline); pass it to applyTraceBatch too.
TraceLoadResult loadTraceBatches(const QString &path, const TraceLoadOptions &options, const TraceBatchSink &sink,
                                 std::shared_ptr<TraceTimeline> timeline = {});

// Applies a batch in the store's thread and records which trace record each new event came
// from (for TraceTimeline::frameForEvent). `timeline` may be null. What the store keeps is
// moved out of the batch's inputs.
void applyTraceBatch(SystemStore &store, TraceLoadBatch &batch, TraceTimeline *timeline);

// Synchronous: decodes on helper threads and applies in the calling thread; then advances the
// store's clock to the last record and, when frames were left in the timeline, makes the timeline
// the store's frame source (SystemStore::eventFrame, messagePayload). `afterBatch` (optional) runs after each applied batch.
TraceLoadResult loadTraceInto(SystemStore &store, const QString &path, const TraceLoadOptions &options = {},
                              const std::function<void(const TraceLoadBatch &)> &afterBatch = {});

// For the window: loads into `store` on a worker thread; the store is reset first and filled
// in this object's thread (the store's), a few milliseconds at a time, so the GUI stays live.
// A BackgroundJob (jobs/BackgroundJob.h): progress() in file bytes; cancel() stops the reader
// and decoder, and finished(Cancelled) follows once they stopped (at most a batch later).
//
//   auto *job = new TraceLoadJob(&store, this);
//   connect(job, &TraceLoadJob::progress, bar, [bar](qint64 done, qint64 total) { ... });
//   connect(job, &TraceLoadJob::finished, this, [job](const JobOutcome &outcome) {
//       auto timeline = job->result().timeline;           // for ReplayController, frames
//       job->deleteLater();
//   });
//   job->start(path);
class TraceLoadJob : public BackgroundJob
{
    Q_OBJECT
public:
    // While loading: the store's changes and the progress reach the window at 10 Hz, not 30
    // (the GUI thread applies the batches and is the load's bottleneck; painting every panel 30
    // times a second took about a tenth of it).
    static constexpr int kLoadingFlushIntervalMs = 100;
    // ... and less often when the views take long over one change (10,000 agents: 40–150 ms):
    // the interval is (kLoadingViewShare − 1) × their last time, so that they take at most a
    // sixth of the thread, and they still show the load at least once a second.
    static constexpr int kLoadingViewShare = 6;
    static constexpr int kMaxLoadingFlushIntervalMs = 1000;

    explicit TraceLoadJob(SystemStore *store, QObject *parent = nullptr);
    ~TraceLoadJob() override; // cancels and waits for the worker

    // Resets the store and loads `path` into it; a load still running ends first, as Cancelled.
    void start(const QString &path, const TraceLoadOptions &options = {});
    const TraceLoadResult &result() const { return m_result; }

Q_SIGNALS:
    void firstBatchApplied();       // the first view: something to show

private:
    void requestStop() override;
    void joinWorker();
    void drain(quint64 ticket);
    void finish(quint64 ticket);

    QElapsedTimer m_sinceProgress;

    struct Shared;
    SystemStore *m_store;
    std::shared_ptr<Shared> m_shared;
    std::thread m_worker;
    TraceLoadResult m_result;
    bool m_firstApplied = false;
};

} // namespace mapi
