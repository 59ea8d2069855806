// What the server says of its federation to a gateway-role connection (seed 001, "Federation";
// map/federation/list and map/federation/buffer/stats, read by MapClient after each snapshot and
// every kRefreshMs): its peers and what waits in its outage buffer for each. Or why it says
// nothing: the method is missing (-32601: the server has no federation), refused (the official
// server serves them to gateway-role sessions only: -32603 "Federation operations require gateway
// role"), or it failed otherwise (the server's words kept). None is an error of the observation:
// federation is optional.
//
// Bounded: at most kMaxPeers peers and kMaxPeers buffer rows (a list longer than that is cut and
// said in peersNotKept()).
#pragma once

#include "protocol/JsonRpc.h"

#include <QString>

#include <vector>

namespace mapi {

struct FederationPeer
{
    QString systemId;
    QString endpoint;
    QString status;           // as the server says ("connected", "disconnected", …)
    qint64 connectedAtMs = 0; // the server's clock
    qint64 lastActivityMs = 0;
};

class FederationLedger
{
public:
    static constexpr int kMaxPeers = 256;
    static constexpr qint64 kRefreshMs = 10000;
    enum class Access { NotAsked, Listed, Missing, Refused, Failed };

    // An answer, or (`failed`) an error to map/federation/list or /buffer/stats. changed() only
    // when what it says changed (a refresh that says the same is no change).
    void apply(const QString &method, const Json &result, bool failed, int errorCode, const QString &errorMessage, qint64 timeMs);
    bool takeChanged() { return std::exchange(m_changed, false); }
    void clear() { *this = FederationLedger(); }

    Access peersAccess() const { return m_peersAccess; }
    Access bufferAccess() const { return m_bufferAccess; }
    QString peersRefusal() const { return m_peersRefusal; }   // the server's words, when refused or failed
    QString bufferRefusal() const { return m_bufferRefusal; }
    const std::vector<FederationPeer> &peers() const { return m_peers; }
    qint64 peersNotKept() const { return m_peersNotKept; }
    qint64 bufferTotal() const { return m_bufferTotal; }
    const std::vector<std::pair<QString, qint64>> &bufferBySystem() const { return m_bufferBySystem; }
    qint64 listedAtMs() const { return m_listedAtMs; }      // local time of the last answer
    qint64 bufferReadAtMs() const { return m_bufferAtMs; }
    // Whether anything was learnt or refused (a server without federation: false).
    bool hasSomethingToShow() const;

    // {"peers": {...} | "missing" | {"refused": …}, "buffer": …} for state's JSON; null when not asked.
    Json toJson() const;

private:
    Access m_peersAccess = Access::NotAsked;
    Access m_bufferAccess = Access::NotAsked;
    QString m_peersRefusal, m_bufferRefusal;
    std::vector<FederationPeer> m_peers;
    qint64 m_peersNotKept = 0;
    qint64 m_bufferTotal = 0;
    std::vector<std::pair<QString, qint64>> m_bufferBySystem;
    qint64 m_listedAtMs = 0;
    qint64 m_bufferAtMs = 0;
    bool m_changed = false;
};

} // namespace mapi
