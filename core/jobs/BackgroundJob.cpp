#include "jobs/BackgroundJob.h"

namespace mapi {

void BackgroundJob::cancel()
{
    if (!m_running)
        return;
    m_stopRequested = true;
    requestStop();
}

quint64 BackgroundJob::beginAttempt()
{
    if (m_running) {
        m_stopRequested = true;
        requestStop();
        endAttempt(m_ticket, JobOutcome::cancel()); // if requestStop() did not already
    }
    m_running = true;
    m_stopRequested = false;
    return ++m_ticket;
}

bool BackgroundJob::endAttempt(quint64 ticket, JobOutcome outcome)
{
    if (!isCurrent(ticket))
        return false;
    m_running = false;
    if (m_stopRequested)
        outcome = JobOutcome::cancel();
    m_outcome = std::move(outcome);
    Q_EMIT finished(m_outcome);
    return true;
}

} // namespace mapi
