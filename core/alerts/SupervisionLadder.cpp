#include "alerts/SupervisionLadder.h"

#include <QLocale>
#include <QSet>

#include <tuple>

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
    // Switched off, or limited to other groups: those climbs of that kind end now.
    for (auto it = m_climbs.begin(); it != m_climbs.end();)
        it = it->second.alert.kind == kind && (!plan.enabled || !inPlan(plan, it->first)) ? m_climbs.erase(it) : std::next(it);
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
        const LadderPlan &plan = m_plans[size_t(c.alert.kind)];
        if (m_observer || !plan.enabled || c.alert.agents.isEmpty() || m_climbs.count(key) || !inPlan(plan, key))
            continue;
        m_climbs.emplace(key, Climb{c.alert, c.atMs, 0});
    }
}

void SupervisionLadder::retainOnly(const std::map<QString, Alert> &openAlerts)
{
    for (auto it = m_climbs.begin(); it != m_climbs.end();)
        it = openAlerts.count(it->first) ? std::next(it) : m_climbs.erase(it);
}

bool SupervisionLadder::inPlan(const LadderPlan &plan, const QString &alertKey) const
{
    return plan.onlyGroups.isEmpty() || plan.onlyGroups.contains(groupOf(alertKey));
}

std::vector<LadderAction> SupervisionLadder::due(qint64 nowMs)
{
    std::vector<LadderAction> out;
    if (m_observer)
        return out;
    // (kind, step, group) → its merged action in `out`.
    std::map<std::tuple<int, int, QString>, size_t> merged;
    std::vector<QSet<QString>> agentsOf; // per action in `out`: its agents, for the merge
    std::vector<int> alertsOf;           // per action in `out`: the alerts merged into it
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
            const QString group = groupOf(key);
            if (!group.isEmpty()) {
                const auto [it, added] = merged.try_emplace({int(climb.alert.kind), int(step), group}, out.size());
                if (!added) { // another alert of the storm: its agents join the step
                    LadderAction &action = out[it->second];
                    for (const QString &id : climb.alert.agents)
                        if (!agentsOf[it->second].contains(id)) {
                            agentsOf[it->second].insert(id);
                            action.agents << id;
                        }
                    action.alertKey = QStringLiteral("group:") + group;
                    ++alertsOf[it->second];
                    continue;
                }
            }
            LadderAction action;
            action.step = step;
            action.kind = climb.alert.kind;
            action.agents = climb.alert.agents;
            action.alertKey = key;
            action.origin = origin;
            action.text = step == LadderStep::Nudge ? QString(plan.nudgeText).replace(QLatin1String("%1"), climb.alert.reason)
                                                    : QStringLiteral("%1: %2").arg(origin, climb.alert.reason);
            out.push_back(action);
            agentsOf.emplace_back(action.agents.begin(), action.agents.end());
            alertsOf.push_back(1);
        }
    }
    // A storm's step speaks of the storm, not of its first alert's figures ("silent for 312 s"
    // is one agent's): "1,031 unresponsive alerts at once (a storm)".
    for (size_t i = 0; i < out.size(); ++i) {
        if (alertsOf[i] < 2)
            continue;
        LadderAction &action = out[i];
        const QString reason = QStringLiteral("%1 %2 alerts at once (a storm)")
                                   .arg(QLocale(QLocale::English).toString(alertsOf[i]), alertKindName(action.kind));
        action.text = action.step == LadderStep::Nudge
                          ? QString(m_plans[size_t(action.kind)].nudgeText).replace(QLatin1String("%1"), reason)
                          : QStringLiteral("%1: %2").arg(action.origin, reason);
    }
    return out;
}

QStringList SupervisionLadder::preview(AlertKind kind, const std::map<QString, Alert> &openAlerts, const QStringList &onlyGroups) const
{
    QStringList agents;
    QSet<QString> seen;
    for (const auto &[key, alert] : openAlerts)
        if (alert.kind == kind && (onlyGroups.isEmpty() || onlyGroups.contains(groupOf(key))))
            for (const QString &id : alert.agents)
                if (!seen.contains(id)) {
                    seen.insert(id);
                    agents << id;
                }
    return agents;
}

} // namespace mapi
