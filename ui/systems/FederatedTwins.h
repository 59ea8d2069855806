// The same agent in two open systems (issue 43 item 3): a federating server lists another
// system's agent as "<system>:agent:<id>" with metadata._originalId; when that other system is
// open in the window too, the agent there, by the same id, is its twin.
//
// Agents' ids are the servers' own (ULIDs in the SDK): the same id in two systems is the same
// agent. A federated agent (of system A) has at most one twin per other open system: the agent
// of its original id there, if that system lists it as its own. An agent of a system's own has a
// twin in each other open system that lists it as federated. Found when asked (the Inspector
// asks when it shows an agent): a lookup per system, a pass over the federated agents of each.
// Thread: GUI thread.
#pragma once

#include <QList>
#include <QString>

#include <vector>

namespace mapi::ui {

class SystemView;

struct FederatedTwin
{
    SystemView *system = nullptr;
    QString agentId; // its id in that system
};

std::vector<FederatedTwin> findFederatedTwins(const QList<SystemView *> &systems, const SystemView *of, const QString &agentId);

} // namespace mapi::ui
