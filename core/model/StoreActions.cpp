// SystemStore: the operator actions (model/ActionTracker) and the health rules
// (model/HealthRules) run over the store's rows and clock.
#include "model/SystemStore.h"

#include "model/HealthRules.h"

namespace mapi {

// ---- operator actions ------------------------------------------------------------------

void SystemStore::applyAction(const ActionUpdate &update)
{
    ActionTracker::Lookups lookups;
    lookups.messageStatus = [this](const QString &id) -> std::optional<QString> {
        const int row = m_messages.find(id);
        return row < 0 ? std::nullopt : std::optional<QString>(m_messages[size_t(row)].status);
    };
    lookups.agentState = [this](const QString &id) -> std::optional<QString> {
        const Agent *a = agent(id);
        return a ? std::optional<QString>(a->state) : std::nullopt;
    };
    // Actions keep the client's stamps, on the local clock (ActionTracker: one clock for their
    // durations, whatever offset the server's clock shows now or later).
    const int row = m_actions.apply(update, lookups);
    if (row >= 0 && update.step == ActionUpdate::Step::Created && !update.action.agentId.isEmpty())
        ensureAgent(update.action.agentId, serverTime(update.timeMs)).lastActionId = update.action.id;
    takeActionChanges();
}

void SystemStore::confirmActions(const MapEvent &e, const Message *message)
{
    // When the event arrived, on the console's clock (the actions' clock); an event without a
    // receipt time (a test's, an import's) counts at its timestamp brought onto that clock.
    m_actions.confirm(e, message, m_eventArrivedMs > 0 ? m_eventArrivedMs : e.timestampMs - m_connection.clockOffsetMs);
    takeActionChanges();
}

void SystemStore::takeActionChanges()
{
    m_pending.actionRows.unite(m_actions.takeChangedRows());
    const int firstNew = m_actions.takeFirstNewRow();
    if (firstNew >= 0 && m_pending.firstNewActionRow < 0)
        m_pending.firstNewActionRow = firstNew;
}

// ---- health ----------------------------------------------------------------------------

Health SystemStore::evaluateHealth(const Agent &a, qint64 nowMs) const
{
    const auto session = a.sessionId.isEmpty() ? m_sessions.constEnd() : m_sessions.constFind(a.sessionId);
    return mapi::evaluateHealth(a, session == m_sessions.constEnd() ? nullptr : &*session, m_policy, nowMs);
}

void SystemStore::advanceTime(qint64 localNowMs)
{
    m_nowMs = std::max(m_nowMs, serverTime(localNowMs));
    for (size_t row = 0; row < m_agents.size(); ++row) {
        Agent &a = m_agents[row];
        const Health h = evaluateHealth(a, m_nowMs);
        if (h != a.health) {
            a.health = h;
            markAgent(int(row));
        }
    }
    m_actions.expire(localNowMs, m_policy.actionConfirmTimeoutMs); // the actions' clock is the console's
    takeActionChanges();
    scheduleFlush();
}

} // namespace mapi
