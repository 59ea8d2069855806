// Entities of another MAP system that a federating server lists as its own (issue 43 item 3).
//
// The SDK's FederatedAgentRegistry and FederatedScopeManager (0.1.15) keep a peer's agents as
// "<system>:agent:<id>" and its scopes as "<system>:scope:<id>", with metadata
// {"_federatedFrom": "<system>", "_originalId": "<id>"}. The server sends no event when one
// appears, changes or leaves: only map/agents/list and map/scopes/list show them, so a
// reconciliation that finds them is no sign of missed events. A message that crossed names its
// sender "<system>:agent:<its session id there>" (shared/reference/map-extensions.md §2).
#pragma once

#include "protocol/JsonRpc.h"

#include <QString>
#include <QStringList>

namespace mapi {

// The system a listed agent or scope comes from, by its metadata; "" for the server's own.
QString federatedFrom(const Json &metadata);
// The system an agent or scope comes from: its metadata's, else, for an entity known only by its
// address (a placeholder: a message's sender "B:agent:<session id>"), the system the address
// names; "" for the server's own.
QString federatedOrigin(const QString &id, const Json &metadata, bool placeholder);
// "B" from an address that names another system's entity ("B:agent:…", "B:scope:…"); "".
QString federatedSystemOfAddress(const QString &id);
// A message between systems, by its endpoints' addresses: the other system, and whether the
// message came from it (its sender is "B:agent:…") or went to it. Empty system: within this one.
struct Crossing
{
    QString system;
    bool inbound = true;
};
Crossing messageCrossing(const QString &from, const QStringList &to);
// Its id on its own system: metadata._originalId, else what follows "<system>:agent:" or
// "<system>:scope:", else the id itself.
QString federatedOriginalId(const QString &id, const Json &metadata);

} // namespace mapi
