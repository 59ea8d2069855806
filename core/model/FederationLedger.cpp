#include "model/FederationLedger.h"

namespace mapi {

namespace {

qint64 intOr0(const Json &object, std::string_view key)
{
    const Json *v = jsonChild(object, key);
    return v && v->is_number() ? v->get<qint64>() : 0;
}

FederationLedger::Access accessOf(int errorCode)
{
    return errorCode == -32601 ? FederationLedger::Access::Missing : FederationLedger::Access::Refused;
}

const char *accessName(FederationLedger::Access access)
{
    switch (access) {
    case FederationLedger::Access::NotAsked: return "notAsked";
    case FederationLedger::Access::Listed: return "listed";
    case FederationLedger::Access::Missing: return "missing";
    case FederationLedger::Access::Refused: return "refused";
    }
    return "notAsked";
}

} // namespace

void FederationLedger::apply(const QString &method, const Json &result, int errorCode, const QString &errorMessage, qint64 timeMs)
{
    const bool list = method == QLatin1String("map/federation/list");
    const bool buffer = method == QLatin1String("map/federation/buffer/stats");
    if (!list && !buffer)
        return;
    m_changed = true;
    if (errorCode != 0) {
        (list ? m_peersAccess : m_bufferAccess) = accessOf(errorCode);
        (list ? m_peersRefusal : m_bufferRefusal) = errorMessage.left(300);
        return;
    }
    if (list) {
        // The SDK answers a bare array; a server may wrap it ({"peers"|"systems": [...]}).
        const Json *array = result.is_array() ? &result : nullptr;
        for (const char *key : {"peers", "systems"})
            if (!array)
                if (const Json *inner = jsonChild(result, key); inner && inner->is_array())
                    array = inner;
        m_peersAccess = Access::Listed;
        m_peersRefusal.clear();
        m_peers.clear();
        m_peersNotKept = 0;
        if (array)
            for (const Json &p : *array) {
                if (!p.is_object())
                    continue;
                if (int(m_peers.size()) >= kMaxPeers) {
                    ++m_peersNotKept;
                    continue;
                }
                FederationPeer peer;
                peer.systemId = jsonString(p, "systemId");
                peer.endpoint = jsonString(p, "endpoint");
                peer.status = jsonString(p, "status");
                peer.connectedAtMs = intOr0(p, "connectedAt");
                peer.lastActivityMs = intOr0(p, "lastActivity");
                m_peers.push_back(std::move(peer));
            }
        m_listedAtMs = timeMs;
        return;
    }
    m_bufferAccess = Access::Listed;
    m_bufferRefusal.clear();
    m_bufferTotal = intOr0(result, "total");
    m_bufferBySystem.clear();
    if (const Json *by = jsonChild(result, "bySystem"); by && by->is_object())
        for (auto it = by->begin(); it != by->end() && int(m_bufferBySystem.size()) < kMaxPeers; ++it)
            m_bufferBySystem.emplace_back(QString::fromStdString(it.key()), it->is_number() ? it->get<qint64>() : 0);
    m_bufferAtMs = timeMs;
}

bool FederationLedger::hasSomethingToShow() const
{
    return m_peersAccess == Access::Listed || m_peersAccess == Access::Refused || m_bufferAccess == Access::Listed
        || m_bufferAccess == Access::Refused;
}

Json FederationLedger::toJson() const
{
    if (m_peersAccess == Access::NotAsked && m_bufferAccess == Access::NotAsked)
        return Json();
    Json out = Json::object();
    out["peersAccess"] = accessName(m_peersAccess);
    out["bufferAccess"] = accessName(m_bufferAccess);
    if (!m_peersRefusal.isEmpty())
        out["peersRefusal"] = m_peersRefusal.toStdString();
    if (!m_bufferRefusal.isEmpty())
        out["bufferRefusal"] = m_bufferRefusal.toStdString();
    if (m_peersAccess == Access::Listed) {
        Json peers = Json::array();
        for (const FederationPeer &p : m_peers)
            peers.push_back({{"systemId", p.systemId.toStdString()}, {"endpoint", p.endpoint.toStdString()},
                             {"status", p.status.toStdString()}, {"connectedAt", p.connectedAtMs},
                             {"lastActivity", p.lastActivityMs}});
        out["peers"] = std::move(peers);
        if (m_peersNotKept > 0)
            out["peersNotKept"] = m_peersNotKept;
    }
    if (m_bufferAccess == Access::Listed) {
        Json by = Json::object();
        for (const auto &[system, count] : m_bufferBySystem)
            by[system.toStdString()] = count;
        out["buffer"] = {{"total", m_bufferTotal}, {"bySystem", std::move(by)}};
    }
    return out;
}

} // namespace mapi
