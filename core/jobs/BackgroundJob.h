// The one life cycle of the window's background work: loading a trace, writing an export, laying
// out the topology. Each is a BackgroundJob, so all three start, report, cancel and end alike:
//
//   start …            an attempt begins (beginAttempt() gives it a ticket)
//   progress(d, t)     any number of times, in the job's thread
//   finished(outcome)  exactly once per attempt, in the job's thread: Done, Failed (with the
//                      reason) or Cancelled. A new attempt begun while one runs ends that one
//                      first, as Cancelled.
//
// The rules every job keeps, written once here:
//   - cancel() asks the running work to stop (requestStop()); the attempt then ends as Cancelled,
//     whatever the work reports. Work in the job's own thread ends at once; work on other threads
//     ends when it has stopped (a trace load joins its reader first), never later than its next
//     batch.
//   - Stale results are never delivered: an attempt that ended (cancelled or superseded) has an
//     old ticket, and endAttempt() with an old ticket does nothing. Work on another thread hands
//     its ticket back with its result; the job checks it in its own thread (isCurrent()).
//
// Thread: a QObject of the thread that owns it (the GUI thread in the window); every member is
// called there. requestStop() may reach other threads (atomics), nothing else does.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

namespace mapi {

// How an attempt ended: a typed outcome, never a string to compare.
struct JobOutcome
{
    enum class End { Done, Failed, Cancelled };
    End end = End::Done;
    QString error; // Failed: why, for the operator

    bool ok() const { return end == End::Done; }
    bool cancelled() const { return end == End::Cancelled; }
    static JobOutcome done() { return {}; }
    static JobOutcome failed(const QString &why) { return {End::Failed, why}; }
    static JobOutcome cancel() { return {End::Cancelled, {}}; }
};

class BackgroundJob : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    bool isRunning() const { return m_running; }
    // Asks the running attempt to stop; it ends as Cancelled (at once, or once its work stopped).
    // Nothing happens when no attempt runs.
    void cancel();
    // The last attempt's outcome (Done before any attempt ended).
    const JobOutcome &outcome() const { return m_outcome; }
    bool wasCancelled() const { return m_outcome.cancelled(); }

Q_SIGNALS:
    void progress(qint64 done, qint64 total);
    void finished(const mapi::JobOutcome &outcome);

protected:
    // A new attempt: ends a running one as Cancelled first. Returns the new attempt's ticket.
    quint64 beginAttempt();
    quint64 currentTicket() const { return m_ticket; }
    // True while attempt `ticket` is the running one (a result carrying it is not stale).
    bool isCurrent(quint64 ticket) const { return m_running && ticket == m_ticket; }
    bool stopRequested() const { return m_stopRequested; }
    // Ends attempt `ticket` with `outcome` (Cancelled when cancel() was called) and emits
    // finished(). Returns false, doing nothing, for a stale ticket or an attempt already ended.
    bool endAttempt(quint64 ticket, JobOutcome outcome);

    // The work-specific half of cancel(): make the running work stop soon. A job whose work runs
    // in its own thread calls endAttempt() from here; others call it once the work stopped.
    virtual void requestStop() = 0;

private:
    quint64 m_ticket = 0;
    bool m_running = false;
    bool m_stopRequested = false;
    JobOutcome m_outcome;
};

} // namespace mapi

Q_DECLARE_METATYPE(mapi::JobOutcome)
