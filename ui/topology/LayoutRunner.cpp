#include "topology/LayoutRunner.h"

namespace mapi::ui {

LayoutRunner::LayoutRunner(SnapshotFunction snapshot, QObject *parent)
    : QObject(parent)
    , m_snapshot(std::move(snapshot))
{
    m_pool.setMaxThreadCount(1);
    m_pool.setObjectName(QStringLiteral("topology-layout"));
}

LayoutRunner::~LayoutRunner()
{
    // The job posts its result to this object: it must be over before the object goes. The
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

void LayoutRunner::cancel()
{
    ++m_generation;
    m_wanted = Wanted::Nothing;
}

void LayoutRunner::want(Wanted kind)
{
    m_wanted = std::max(m_wanted, kind);
    if (!m_running)
        startNext();
}

void LayoutRunner::startNext()
{
    LayoutInput input = m_snapshot(m_wanted == Wanted::Incremental);
    m_wanted = Wanted::Nothing;
    input.generation = ++m_generation;
    m_running = true;
    m_roundTrip.start();
    m_pool.start([this, input = std::move(input)] {
        LayoutResult result = computeLayout(input);
        QMetaObject::invokeMethod(this, [this, result = std::move(result)]() mutable { deliver(std::move(result)); },
                                  Qt::QueuedConnection);
    });
}

void LayoutRunner::deliver(LayoutResult result)
{
    m_running = false;
    result.roundTripMs = double(m_roundTrip.nsecsElapsed()) / 1e6;
    if (result.generation == m_generation)
        Q_EMIT finished(result);
    if (m_wanted != Wanted::Nothing)
        startNext();
}

} // namespace mapi::ui
