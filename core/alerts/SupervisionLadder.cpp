#include "alerts/SupervisionLadder.h"

namespace mapi {

QString ladderStepName(LadderStep step)
{
    switch (step) {
    case LadderStep::Nudge: return QStringLiteral("nudge");
    case LadderStep::Suspend: return QStringLiteral("suspend");
    case LadderStep::Stop: return QStringLiteral("stop");
    }
    return {};
}

void SupervisionLadder::setPlan(AlertKind kind, const LadderPlan &plan)
{
    m_plans[size_t(kind)] = plan;
    if (!plan.enabled) // switched off: climbs of that kind end now
        for (auto it = m_climbs.begin(); it != m_climbs.end();)
            it = it->second.alert.kind == kind ? m_climbs.erase(it) : std::next(it);
}

bool SupervisionLadder::anyEnabled() const
{
    for (const LadderPlan &p : m_plans)
        if (p.enabled)
            return true;
    return false;
}

void SupervisionLadder::reset()
{
    m_plans = {};
    m_climbs.clear();
}

void SupervisionLadder::setObserverOnly(bool observer)
{
    m_observer = observer;
    if (observer)
        m_climbs.clear();
}

void SupervisionLadder::alertsChanged(const std::vector<AlertChange> &changes)
{
    for (const AlertChange &c : changes) {
        const QString key = c.alert.key();
        if (!c.raised) {
            m_climbs.erase(key);
            continue;
        }
        if (m_observer || !m_plans[size_t(c.alert.kind)].enabled || c.alert.agents.isEmpty() || m_climbs.count(key))
            continue;
        m_climbs.emplace(key, Climb{c.alert, c.atMs, 0});
    }
}

void SupervisionLadder::retainOnly(const std::map<QString, Alert> &openAlerts)
{
    for (auto it = m_climbs.begin(); it != m_climbs.end();)
        it = openAlerts.count(it->first) ? std::next(it) : m_climbs.erase(it);
}

std::vector<LadderAction> SupervisionLadder::due(qint64 nowMs)
{
    std::vector<LadderAction> out;
    if (m_observer)
        return out;
    for (auto &[key, climb] : m_climbs) {
        const LadderPlan &plan = m_plans[size_t(climb.alert.kind)];
        if (!plan.enabled)
            continue;
        const qint64 after[3] = {plan.nudgeAfterMs, plan.suspendAfterMs, plan.stopAfterMs};
        const QString origin = QStringLiteral("automatic (rule %1)").arg(alertKindName(climb.alert.kind));
        while (climb.nextStep < 3) {
            const qint64 wait = after[climb.nextStep];
            if (wait < 0) { // this step is not part of the plan
                ++climb.nextStep;
                continue;
            }
            if (nowMs - climb.raisedAtMs < wait)
                break;
            const LadderStep step = LadderStep(climb.nextStep++);
            LadderAction action;
            action.step = step;
            action.kind = climb.alert.kind;
            action.agents = climb.alert.agents;
            action.alertKey = key;
            action.origin = origin;
            action.text = step == LadderStep::Nudge ? QString(plan.nudgeText).replace(QLatin1String("%1"), climb.alert.reason)
                                                    : QStringLiteral("%1: %2").arg(origin, climb.alert.reason);
            out.push_back(action);
        }
    }
    return out;
}

QStringList SupervisionLadder::preview(AlertKind kind, const std::map<QString, Alert> &openAlerts) const
{
    QStringList agents;
    for (const auto &[key, alert] : openAlerts)
        if (alert.kind == kind)
            for (const QString &id : alert.agents)
                if (!agents.contains(id))
                    agents << id;
    return agents;
}

} // namespace mapi
