#include "topology/LayoutRunner.h"

namespace mapi::ui {

LayoutRunner::LayoutRunner(SnapshotFunction snapshot, QObject *parent)
    : BackgroundJob(parent)
    , m_snapshot(std::move(snapshot))
{
    m_pool.setMaxThreadCount(1);
    m_pool.setObjectName(QStringLiteral("topology-layout"));
}

LayoutRunner::~LayoutRunner()
{
    // The layout posts its result to this object: it must be over before the object goes. The
    // posted result itself is discarded with the object's pending events.
    m_pool.clear();
    m_pool.waitForDone();
}

void LayoutRunner::requestIncremental()
{
    want(Wanted::Incremental);
}

void LayoutRunner::requestFull()
{
    want(Wanted::Full);
}

void LayoutRunner::requestStop()
{
    m_wanted = Wanted::Nothing;
    endAttempt(currentTicket(), JobOutcome::cancel()); // the running layout's result is stale now
}

void LayoutRunner::want(Wanted kind)
{
    m_wanted = std::max(m_wanted, kind);
    if (!m_computing)
        startNext();
}

void LayoutRunner::startNext()
{
    LayoutInput input = m_snapshot(m_wanted == Wanted::Incremental);
    m_wanted = Wanted::Nothing;
    input.generation = beginAttempt();
    m_computing = true;
    m_roundTrip.start();
    m_pool.start([this, input = std::move(input)] {
        LayoutResult result = computeLayout(input);
        QMetaObject::invokeMethod(this, [this, result = std::move(result)]() mutable { deliver(std::move(result)); },
                                  Qt::QueuedConnection);
    });
}

void LayoutRunner::deliver(LayoutResult result)
{
    m_computing = false;
    result.roundTripMs = double(m_roundTrip.nsecsElapsed()) / 1e6;
    // The attempt ends before the result goes out: a request made from laidOut() starts the next.
    if (endAttempt(result.generation, JobOutcome::done()))
        Q_EMIT laidOut(result);
    if (m_wanted != Wanted::Nothing && !m_computing)
        startNext();
}

} // namespace mapi::ui
