#include "alerts/AlertMonitor.h"

#include "model/SystemStore.h"

#include <QElapsedTimer>

#include <algorithm>
#include <utility>

namespace mapi {

AlertMonitor::AlertMonitor(QObject *parent)
    : QObject(parent)
{
    m_tick.setObjectName(QStringLiteral("alertTick"));
    m_tick.setInterval(kIntervalMs);
    connect(&m_tick, &QTimer::timeout, this, &AlertMonitor::step);
    m_slice.setObjectName(QStringLiteral("alertSlice"));
    m_slice.setSingleShot(true);
    m_slice.setInterval(0);
    connect(&m_slice, &QTimer::timeout, this, &AlertMonitor::step);
    m_engine.setEvaluationSliceMs(kSliceMs);
    m_tell.setObjectName(QStringLiteral("alertTell"));
    m_tell.setSingleShot(true);
    m_tell.setInterval(0);
    connect(&m_tell, &QTimer::timeout, this, &AlertMonitor::tellVerdict);
}

void AlertMonitor::setStore(SystemStore *store)
{
    if (m_store)
        disconnect(m_store, nullptr, this, nullptr);
    m_store = store;
    dropVerdict();
    m_engine.reset();
    Q_EMIT alertsReset();
    if (store) {
        // A verdict on the content that goes is told before it goes (a time travel's swap, a
        // reconnect's fresh model): its views still show that content.
        connect(store, &SystemStore::aboutToReset, this, &AlertMonitor::tellVerdict);
        connect(store, &SystemStore::wasReset, this, [this] { m_engine.restartReading(); });
    }
}

void AlertMonitor::setRules(const AlertRules &rules)
{
    dropVerdict();
    m_engine.reset();
    m_engine.setRules(rules);
    Q_EMIT alertsReset();
}

void AlertMonitor::step()
{
    if (!m_store)
        return;
    tellVerdict(); // a verdict not yet told (the tick and a slice in one turn) is never replaced unheard
    const qint64 evaluationsBefore = m_engine.evaluationCount();
    std::vector<AlertChange> changes = m_engine.update(*m_store);
    if (m_engine.evaluationCount() == evaluationsBefore) {
        // Still reading, or evaluating in slices: go on at the next turn of the event loop.
        if (m_engine.isBehind(*m_store))
            m_slice.start();
        return;
    }
    // An evaluation ended: its changes are reported even when messages arrived between its
    // slices (a flood always brings some), and the next one waits for the tick. Going on at once
    // lost the changes and evaluated back to back, a slice at every turn of the event loop.
    m_slice.stop();
    // An evaluation over thousands of open alerts or tasks can take a hundred milliseconds (in
    // slices): then evaluate less often, so that the detectors never take more than a tenth of
    // the thread.
    m_tick.setInterval(int(std::clamp<qint64>(10 * m_engine.lastEvaluationNs() / 1000000, kIntervalMs, 60000)));
    // Told at the next turn of the event loop, not in this slice: the views' work on a storm's
    // thousands of changes (10-15 ms) would otherwise add to the evaluation's last step.
    m_verdict = std::move(changes);
    m_verdictDue = true;
    m_tell.start();
}

void AlertMonitor::tellVerdict()
{
    if (!std::exchange(m_verdictDue, false))
        return;
    const std::vector<AlertChange> changes = std::exchange(m_verdict, {});
    if (!changes.empty())
        Q_EMIT alertsChanged(changes);
    Q_EMIT evaluated();
}

void AlertMonitor::dropVerdict()
{
    m_tell.stop();
    m_verdict.clear();
    m_verdictDue = false;
}

void AlertMonitor::evaluateNow()
{
    if (!m_store)
        return;
    tellVerdict(); // one finished by the last slice comes first
    // An evaluation under way in slices is finished first (it saw an older clock), then one
    // runs over everything now.
    for (int round = 0; round < 2; ++round) {
        if (round == 0 && !m_engine.isEvaluating())
            continue;
        std::vector<AlertChange> changes = m_engine.update(*m_store);
        while (m_engine.isBehind(*m_store))
            changes = m_engine.update(*m_store);
        if (!changes.empty())
            Q_EMIT alertsChanged(changes);
        Q_EMIT evaluated();
    }
}

} // namespace mapi
