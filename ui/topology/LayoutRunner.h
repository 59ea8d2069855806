// Runs computeLayout() off the GUI thread and hands the results back to it.
//
// Thread: create, call and destroy in the GUI thread; finished() is emitted there (queued from
// a private one-thread pool). One job runs at a time. Requests made while it runs are merged
// (a full layout wins over an incremental one) and started when it ends, from a snapshot
// taken then — so an incremental layout always sees the positions the previous one placed.
// Every job carries a generation; cancel() advances it, and a result whose generation is not
// the latest is dropped, never delivered (e.g. a layout of a store that was reset meanwhile).
#pragma once

#include "topology/TopologyLayout.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThreadPool>

#include <functional>

namespace mapi::ui {

class LayoutRunner : public QObject
{
    Q_OBJECT
public:
    // Called in the GUI thread when a job is about to start: the immutable input of that job.
    using SnapshotFunction = std::function<LayoutInput(bool incremental)>;

    explicit LayoutRunner(SnapshotFunction snapshot, QObject *parent = nullptr);
    ~LayoutRunner() override; // waits for a running job: a few milliseconds at 1,000 agents

    void requestIncremental();
    void requestFull();
    void cancel();               // drops the running job's result and every waiting request
    bool isIdle() const { return !m_running && m_wanted == Wanted::Nothing; }

Q_SIGNALS:
    void finished(const mapi::ui::LayoutResult &result);

private:
    enum class Wanted { Nothing, Incremental, Full };
    void want(Wanted kind);
    void startNext();
    void deliver(LayoutResult result);

    SnapshotFunction m_snapshot;
    QThreadPool m_pool;
    quint64 m_generation = 0;    // of the newest job started, bumped by cancel()
    bool m_running = false;
    Wanted m_wanted = Wanted::Nothing;
    QElapsedTimer m_roundTrip;
};

} // namespace mapi::ui
