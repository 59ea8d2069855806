#include "systems/FederatedTwins.h"

#include "map/Federation.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"
#include "systems/SystemView.h"

namespace mapi::ui {

namespace {

QString originOf(const Agent &agent)
{
    return federatedOrigin(agent.id, agent.metadata, agent.placeholder);
}

} // namespace

std::vector<FederatedTwin> findFederatedTwins(const QList<SystemView *> &systems, const SystemView *of, const QString &agentId)
{
    std::vector<FederatedTwin> twins;
    const Agent *agent = of ? of->session()->store()->agent(agentId) : nullptr;
    if (!agent || agent->placeholder) // an address only (a message's sender): no id of an agent to match
        return twins;
    const bool federated = !originOf(*agent).isEmpty();
    const QString ownId = federated ? federatedOriginalId(agent->id, agent->metadata) : agent->id;
    for (SystemView *system : systems) {
        if (system == of)
            continue;
        const SystemStore *store = system->session()->store();
        if (federated) {
            const Agent *there = store->agent(ownId);
            if (there && !there->placeholder && originOf(*there).isEmpty())
                twins.push_back({system, there->id});
            continue;
        }
        for (const Agent &other : store->agents())
            if (!other.placeholder && (other.id.endsWith(ownId) || (other.metadata.is_object() && other.metadata.contains("_originalId")))
                && !originOf(other).isEmpty()
                && federatedOriginalId(other.id, other.metadata) == ownId) {
                twins.push_back({system, other.id});
                break;
            }
    }
    return twins;
}

} // namespace mapi::ui
