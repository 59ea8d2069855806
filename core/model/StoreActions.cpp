// SystemStore: the operator actions' audit trail, and the health rules over the store's clock.
#include "model/SystemStore.h"

#include "map/AgentStates.h"
#include "map/Dialect.h"

#include <algorithm>

namespace mapi {

// ---- operator actions ------------------------------------------------------------------

void SystemStore::settleAction(OperatorAction &a, ActionStatus status, const QString &detail, qint64 t,
                               const QString &eventId)
{
    a.status = status;
    a.settledAtMs = t;
    if (!detail.isEmpty())
        a.detail = detail;
    if (!eventId.isEmpty())
        a.confirmingEventId = eventId;
    markAction(m_actionRow.value(a.id));
}

void SystemStore::applyAction(const ActionUpdate &update)
{
    const OperatorAction &u = update.action;
    const qint64 t = update.timeMs;
    if (update.step == ActionUpdate::Step::Created) {
        if (m_actionRow.contains(u.id))
            return;
        const int row = int(m_actions.size());
        m_actions.push_back(u);
        m_actions.back().sentAtMs = t;
        m_actionRow.insert(u.id, row);
        if (m_pending.firstNewActionRow < 0)
            m_pending.firstNewActionRow = row;
        markAction(row);
        if (!u.agentId.isEmpty()) {
            Agent &a = ensureAgent(u.agentId, t);
            a.lastActionId = u.id;
        }
        return;
    }
    const int row = m_actionRow.value(u.id, -1);
    if (row < 0)
        return;
    OperatorAction &a = m_actions[size_t(row)];
    markAction(row);
    switch (update.step) {
    case ActionUpdate::Step::Answered:
        a.answeredAtMs = t;
        if (!u.messageId.isEmpty())
            a.messageId = u.messageId;
        if (!u.detail.isEmpty())
            a.detail = u.detail;
        if (a.status == ActionStatus::Sent)
            a.status = ActionStatus::Accepted;
        // [M] sends the confirming event before the answer that names the message.
        if (a.status == ActionStatus::Accepted && !a.messageId.isEmpty()) {
            const int messageRow = m_messages.find(a.messageId);
            if (messageRow >= 0) {
                const Message m = m_messages[size_t(messageRow)];
                if (m.status == QLatin1String("delivered"))
                    settleAction(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t);
                else if (a.kind == ActionKind::Send)
                    settleAction(a, ActionStatus::Confirmed, QStringLiteral("message %1").arg(m.status), t);
            }
        }
        // Already in the wanted state: the server emits nothing, so the answer is the confirmation.
        if (a.status == ActionStatus::Accepted && !a.agentId.isEmpty()) {
            const Agent *agent = this->agent(a.agentId);
            const bool alreadyThere = agent
                && ((a.kind == ActionKind::Stop && agent->state == QLatin1String("stopped"))
                    || (a.kind == ActionKind::Suspend && agent->state == QLatin1String("suspended")));
            if (alreadyThere)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("agent already %1").arg(agent->state), t);
        }
        break;
    case ActionUpdate::Step::Failed:
        a.answeredAtMs = t;
        settleAction(a, ActionStatus::Failed, u.detail, t);
        break;
    case ActionUpdate::Step::Unsupported:
        a.answeredAtMs = t;
        settleAction(a, ActionStatus::Unsupported, u.detail, t);
        break;
    case ActionUpdate::Step::Fallback:
        a.fallback = true;
        a.method = u.method;
        a.note = u.note;
        break;
    case ActionUpdate::Step::Created:
        break;
    }
}

void SystemStore::confirmActions(const MapEvent &e, const Message *message)
{
    // Only actions that the server accepted (or that await an answer) are candidates.
    for (size_t row = 0; row < m_actions.size(); ++row) {
        OperatorAction &a = m_actions[row];
        if (a.status != ActionStatus::Accepted && a.status != ActionStatus::Sent)
            continue;
        const qint64 t = e.timestampMs;
        switch (a.kind) {
        case ActionKind::Stop:
        case ActionKind::Suspend:
        case ActionKind::Resume: {
            if (e.kind != EventKind::AgentStateChanged || e.agentId != a.agentId || !e.agent || !e.agent->state)
                break;
            const QString &state = *e.agent->state;
            const bool ok = (a.kind == ActionKind::Stop && (state == QLatin1String("stopped") || state == QLatin1String("stopping")))
                || (a.kind == ActionKind::Suspend && state == QLatin1String("suspended"))
                || (a.kind == ActionKind::Resume && state != QLatin1String("suspended") && state != QLatin1String("stopped"));
            if (ok)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("state → %1").arg(state), t, e.eventId);
            break;
        }
        case ActionKind::Inject:
        case ActionKind::Send: {
            if (!message)
                break;
            if (e.kind == EventKind::MessageDelivered && !a.messageId.isEmpty() && message->id == a.messageId) {
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t, e.eventId);
                break;
            }
            // A reply from the target agent after the action was sent confirms steering.
            const bool isReply = message->convention == ConventionKind::SteeringAck
                || (!a.messageId.isEmpty() && e.message && e.message->replyTo == a.messageId);
            if (a.kind == ActionKind::Inject && e.kind == EventKind::MessageSent && message->fromAgentId == a.agentId
                && isReply && message->timestampMs >= a.sentAtMs - 1000) {
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("the agent acknowledged the steering message"), t,
                             e.eventId);
                break;
            }
            if (a.kind == ActionKind::Send && e.kind == EventKind::MessageSent && !a.messageId.isEmpty()
                && message->id == a.messageId)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("message sent"), t, e.eventId);
            break;
        }
        }
    }
}

// ---- health ----------------------------------------------------------------------------

Health SystemStore::evaluateHealth(const Agent &a, qint64 nowMs) const
{
    const StateClass state = classifyState(a.state);
    if (a.unregistered || state == StateClass::Stopped)
        return Health::Stopped;
    if (state == StateClass::Failed)
        return Health::Failed;
    if (a.lastErrorSeverity == QLatin1String("CRITICAL") && a.lastErrorMs >= a.lastHeartbeatMs)
        return Health::Failed;
    if (!a.sessionId.isEmpty()) {
        const auto s = m_sessions.constFind(a.sessionId);
        if (s != m_sessions.constEnd()
            && (s->status == QLatin1String("disconnected") || s->status == QLatin1String("expired")))
            return Health::Disconnected;
    }
    if (state == StateClass::Suspended)
        return Health::Suspended;
    const qint64 reference = std::max({a.lastHeartbeatMs, a.lastActivityMs, a.registeredAtMs, a.knownSinceMs});
    const qint64 age = nowMs - reference;
    if (age > m_policy.intervalMs * m_policy.unresponsiveAfterIntervals)
        return Health::Unresponsive;
    if (age > m_policy.intervalMs * m_policy.lateAfterIntervals)
        return Health::Late;
    return Health::Healthy;
}

void SystemStore::advanceTime(qint64 nowMs)
{
    m_nowMs = std::max(m_nowMs, nowMs);
    for (size_t row = 0; row < m_agents.size(); ++row) {
        Agent &a = m_agents[row];
        const Health h = evaluateHealth(a, m_nowMs);
        if (h != a.health) {
            a.health = h;
            markAgent(int(row));
        }
    }
    for (OperatorAction &a : m_actions) {
        if ((a.status == ActionStatus::Accepted || a.status == ActionStatus::Sent)
            && m_nowMs - a.sentAtMs > m_policy.actionConfirmTimeoutMs)
            settleAction(a, ActionStatus::TimedOut,
                         a.status == ActionStatus::Sent ? QStringLiteral("no answer from the server")
                                                        : QStringLiteral("accepted, but no confirming event"),
                         m_nowMs);
    }
    scheduleFlush();
}

} // namespace mapi
