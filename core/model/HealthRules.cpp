#include "model/HealthRules.h"

#include "map/AgentStates.h"

#include <algorithm>

namespace mapi {

Health evaluateHealth(const Agent &a, const Session *session, const HealthPolicy &policy, qint64 nowMs)
{
    const StateClass state = classifyState(a.state);
    if (a.unregistered || state == StateClass::Stopped)
        return Health::Stopped;
    if (state == StateClass::Failed)
        return Health::Failed;
    if (a.lastErrorSeverity == QLatin1String("CRITICAL") && a.lastErrorMs >= a.lastHeartbeatMs)
        return Health::Failed;
    if (session && (session->status == QLatin1String("disconnected") || session->status == QLatin1String("expired")))
        return Health::Disconnected;
    if (state == StateClass::Suspended)
        return Health::Suspended;
    const qint64 lastSignOfLife = std::max({a.lastHeartbeatMs, a.lastActivityMs, a.registeredAtMs, a.knownSinceMs});
    const qint64 silentMs = nowMs - lastSignOfLife;
    if (silentMs > policy.intervalMs * policy.unresponsiveAfterIntervals)
        return Health::Unresponsive;
    if (silentMs > policy.intervalMs * policy.lateAfterIntervals)
        return Health::Late;
    // Listed, but no heartbeat and no event of its own since first sight: nothing says it is
    // well (a snapshot lists silent agents too).
    if (a.lastHeartbeatMs <= 0 && a.lastActivityMs <= 0)
        return Health::Unknown;
    return Health::Healthy;
}

} // namespace mapi
