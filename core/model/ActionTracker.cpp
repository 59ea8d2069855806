#include "model/ActionTracker.h"

#include <utility>

namespace mapi {

const OperatorAction *ActionTracker::find(const QString &id) const
{
    const int row = m_row.value(id, -1);
    return row < 0 ? nullptr : &m_actions[size_t(row)];
}

void ActionTracker::settle(OperatorAction &a, ActionStatus status, const QString &detail, qint64 t, const QString &eventId)
{
    a.status = status;
    a.settledAtMs = t;
    if (!detail.isEmpty())
        a.detail = detail;
    if (!eventId.isEmpty())
        a.confirmingEventId = eventId;
    mark(a);
}

int ActionTracker::apply(const ActionUpdate &update, const Lookups &lookups)
{
    const OperatorAction &u = update.action;
    const qint64 t = update.timeMs;
    if (update.step == ActionUpdate::Step::Created) {
        if (m_row.contains(u.id))
            return -1;
        const int row = int(m_actions.size());
        m_actions.push_back(u);
        m_actions.back().sentAtMs = t;
        m_row.insert(u.id, row);
        if (m_firstNew < 0)
            m_firstNew = row;
        mark(m_actions.back());
        return row;
    }
    const int row = m_row.value(u.id, -1);
    if (row < 0)
        return -1;
    OperatorAction &a = m_actions[size_t(row)];
    mark(a);
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
            if (const std::optional<QString> status = lookups.messageStatus(a.messageId)) {
                if (*status == QLatin1String("delivered"))
                    settle(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t);
                else if (a.kind == ActionKind::Send)
                    settle(a, ActionStatus::Confirmed, QStringLiteral("message %1").arg(*status), t);
            }
        }
        // Already in the wanted state: the server emits nothing, so the answer is the confirmation.
        if (a.status == ActionStatus::Accepted && !a.agentId.isEmpty()) {
            const std::optional<QString> state = lookups.agentState(a.agentId);
            const bool alreadyThere = state
                && ((a.kind == ActionKind::Stop && *state == QLatin1String("stopped"))
                    || (a.kind == ActionKind::Suspend && *state == QLatin1String("suspended")));
            if (alreadyThere)
                settle(a, ActionStatus::Confirmed, QStringLiteral("agent already %1").arg(*state), t);
        }
        break;
    case ActionUpdate::Step::AnswerLost:
        if (a.status == ActionStatus::Sent || a.status == ActionStatus::Accepted) { // not if its event came first
            a.status = ActionStatus::Unknown;
            a.detail = u.detail;
        }
        break;
    case ActionUpdate::Step::Failed:
        a.answeredAtMs = t;
        settle(a, ActionStatus::Failed, u.detail, t);
        break;
    case ActionUpdate::Step::Unsupported:
        a.answeredAtMs = t;
        settle(a, ActionStatus::Unsupported, u.detail, t);
        break;
    case ActionUpdate::Step::Fallback:
        a.fallback = true;
        a.method = u.method;
        a.note = u.note;
        break;
    case ActionUpdate::Step::Created:
        break;
    }
    return row;
}

void ActionTracker::confirm(const MapEvent &e, const Message *message, qint64 arrivedMs)
{
    // Only actions that the server accepted, that await an answer, or whose answer was lost are candidates.
    for (OperatorAction &a : m_actions) {
        if (a.status != ActionStatus::Accepted && a.status != ActionStatus::Sent && a.status != ActionStatus::Unknown)
            continue;
        const qint64 t = arrivedMs;
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
                settle(a, ActionStatus::Confirmed, QStringLiteral("state → %1").arg(state), t, e.eventId);
            break;
        }
        case ActionKind::Inject:
        case ActionKind::Send: {
            if (!message)
                break;
            if (e.kind == EventKind::MessageDelivered && !a.messageId.isEmpty() && message->id == a.messageId) {
                settle(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t, e.eventId);
                break;
            }
            // A reply from the target agent after the action was sent confirms steering.
            const bool isReply = message->convention == ConventionKind::SteeringAck
                || (!a.messageId.isEmpty() && e.message && e.message->replyTo == a.messageId);
            if (a.kind == ActionKind::Inject && e.kind == EventKind::MessageSent && message->fromAgentId == a.agentId
                && isReply && arrivedMs >= a.sentAtMs) { // a reply that arrived after we sent, on one clock
                settle(a, ActionStatus::Confirmed, QStringLiteral("the agent acknowledged the steering message"), t,
                       e.eventId);
                break;
            }
            if (a.kind == ActionKind::Send && e.kind == EventKind::MessageSent && !a.messageId.isEmpty()
                && message->id == a.messageId)
                settle(a, ActionStatus::Confirmed, QStringLiteral("message sent"), t, e.eventId);
            break;
        }
        }
    }
}

void ActionTracker::expire(qint64 localNowMs, qint64 timeoutMs)
{
    for (OperatorAction &a : m_actions) {
        if ((a.status == ActionStatus::Accepted || a.status == ActionStatus::Sent) && localNowMs - a.sentAtMs > timeoutMs)
            settle(a, ActionStatus::TimedOut,
                   a.status == ActionStatus::Sent ? QStringLiteral("no answer from the server")
                                                  : QStringLiteral("accepted, but no confirming event"),
                   localNowMs);
    }
}

void ActionTracker::clear()
{
    m_actions.clear();
    m_row.clear();
    m_changed.clear();
    m_firstNew = -1;
}

void ActionTracker::swap(ActionTracker &other)
{
    std::swap(m_actions, other.m_actions);
    std::swap(m_row, other.m_row);
    std::swap(m_changed, other.m_changed);
    std::swap(m_firstNew, other.m_firstNew);
}

} // namespace mapi
