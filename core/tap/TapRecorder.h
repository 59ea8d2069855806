// Writes a tap's records into one trace, in a thread of its own: the relay posts records (a
// time, a direction, a connection, the bytes), this thread redacts, encodes and writes them
// (TraceWriter: rotation, compression, a flush every second).
//
// Bounded: at most kMaxQueuedBytes of records wait for the disk. Past that, records are not
// queued but counted (dropped()), and once the writer catches up a "note" record in the trace
// says how many frames it lacks there, so a trace with a hole never reads as complete. The relay
// is never slowed by the disk.
//
// Thread: post() and the counters from any thread; open() and close() from the thread that owns
// the recorder.
#pragma once

#include "tap/TapConnections.h"
#include "trace/Trace.h"

#include <QObject>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace mapi {

class TapRecorder : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kMaxQueuedBytes = 64 << 20;

    TapRecorder();
    ~TapRecorder() override; // close()

    // Follow who did what (TapConnections), in the writing thread, off the relay's: a copy is
    // published at most every kPublishMs for liveConnections(). Set before open().
    static constexpr int kPublishMs = 250;
    void setFollowConnections(bool on) { m_follow = on; }
    std::shared_ptr<const TapConnections> liveConnections() const; // any thread; null when not following

    // Opens the trace (header url `url`, members `headerExtra`) in the writing thread.
    bool open(const QString &path, const QString &url, const Json &headerExtra, const TraceWriterOptions &options,
              QString *error);
    // Queues a record (thread-safe; never blocks on the disk).
    void post(TraceRecord &&record);
    // Writes what is queued, closes the trace and ends the thread.
    void close();

    qint64 written() const { return m_written.load(std::memory_order_relaxed); }
    qint64 dropped() const { return m_dropped.load(std::memory_order_relaxed); }
    QStringList files() const;

Q_SIGNALS:
    void failed(const QString &error); // the disk refused (emitted in the writing thread)

private:
    void drain(); // in the writing thread

    QThread m_thread;
    QObject *m_anchor = nullptr;     // lives in m_thread: what open() and close() run on there
    TraceWriter *m_writer = nullptr; // lives in m_thread; set and reset under m_mutex
    mutable std::mutex m_mutex;
    std::vector<TraceRecord> m_queue;     // under m_mutex
    qint64 m_queuedBytes = 0;             // under m_mutex
    bool m_drainPosted = false;           // under m_mutex: a drain() is on its way
    qint64 m_droppedUnsaid = 0;           // under m_mutex: dropped, not yet said in a note
    QStringList m_files;                  // under m_mutex
    bool m_follow = false;
    TapConnections m_live;                 // the writing thread's
    QTimer *m_publish = nullptr;           // in the writing thread: publishes m_live once due
    std::shared_ptr<const TapConnections> m_published; // under m_mutex
    std::atomic<qint64> m_written{0};
    std::atomic<qint64> m_dropped{0};
};

} // namespace mapi
