// Runs computeLayout() off the GUI thread and hands the results back to it.
//
// Thread: create, call and destroy in the GUI thread; laidOut() is emitted there (queued from a
// private one-thread pool). One layout runs at a time. Requests made while it runs are merged
// (a full layout wins over an incremental one) and started when it ends, from a snapshot taken
// then — so an incremental layout always sees the positions the previous one placed.
// A BackgroundJob (core/jobs/BackgroundJob.h), one attempt per layout: its ticket travels with
// the input and comes back with the result; cancel() ends the attempt at once and drops every
// waiting request, and the running layout's result, stale then, is dropped when it arrives,
// never delivered (e.g. a layout of a store that was reset meanwhile).
#pragma once

#include "jobs/BackgroundJob.h"
#include "topology/TopologyLayout.h"

#include <QElapsedTimer>
#include <QThreadPool>

#include <functional>

namespace mapi::ui {

class LayoutRunner : public BackgroundJob
{
    Q_OBJECT
public:
    // Called in the GUI thread when a layout is about to start: the immutable input of that layout.
    using SnapshotFunction = std::function<LayoutInput(bool incremental)>;

    explicit LayoutRunner(SnapshotFunction snapshot, QObject *parent = nullptr);
    ~LayoutRunner() override; // waits for a running layout: a few milliseconds at 1,000 agents

    void requestIncremental();
    void requestFull();
    bool isIdle() const { return !m_computing && m_wanted == Wanted::Nothing; }

Q_SIGNALS:
    // A layout's result, after finished(Done) of its attempt.
    void laidOut(const mapi::ui::LayoutResult &result);

private:
    enum class Wanted { Nothing, Incremental, Full };
    void requestStop() override;
    void want(Wanted kind);
    void startNext();
    void deliver(LayoutResult result);

    SnapshotFunction m_snapshot;
    QThreadPool m_pool;
    bool m_computing = false;    // the pool's thread is busy (with a current or a stale layout)
    Wanted m_wanted = Wanted::Nothing;
    QElapsedTimer m_roundTrip;
};

} // namespace mapi::ui
