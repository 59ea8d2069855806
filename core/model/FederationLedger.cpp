#include "model/FederationLedger.h"

#include <algorithm>
#include <limits>

namespace mapi {

namespace {

// Any JSON number as a count or a time, saturated (1e300 and NaN are not undefined behaviour).
qint64 numberOr0(const Json *v)
{
    if (!v || !v->is_number())
        return 0;
    if (v->is_number_float())
        return saturatedInt(v->get<double>());
    if (v->is_number_unsigned())
        return qint64(std::min<quint64>(v->get<quint64>(), quint64(std::numeric_limits<qint64>::max())));
    return v->get<qint64>();
}

FederationLedger::Access accessOf(int errorCode, const QString &message)
{
    if (errorCode == -32601)
        return FederationLedger::Access::Missing;
    // The SDK's handlers: -32603 "Federation operations require gateway role" (its -32003 flattened).
    if (errorCode == -32003 || message.contains(QLatin1String("gateway"), Qt::CaseInsensitive))
        return FederationLedger::Access::Refused;
    return FederationLedger::Access::Failed;
}

const char *accessName(FederationLedger::Access access)
{
    switch (access) {
    case FederationLedger::Access::NotAsked: return "notAsked";
    case FederationLedger::Access::Listed: return "listed";
    case FederationLedger::Access::Missing: return "missing";
    case FederationLedger::Access::Refused: return "refused";
    case FederationLedger::Access::Failed: return "failed";
    }
    return "notAsked";
}

} // namespace

void FederationLedger::apply(const QString &method, const Json &result, bool failed, int errorCode, const QString &errorMessage,
                             qint64 timeMs)
{
    const bool list = method == QLatin1String("map/federation/list");
    const bool buffer = method == QLatin1String("map/federation/buffer/stats");
    if (!list && !buffer)
        return;
    const Json before = toJson();
    (list ? m_listedAtMs : m_bufferAtMs) = timeMs;
    if (failed) {
        (list ? m_peersAccess : m_bufferAccess) = accessOf(errorCode, errorMessage);
        (list ? m_peersRefusal : m_bufferRefusal) = errorMessage.left(300);
        if (list) { // what the buffer said before is no longer known to be so
            m_bufferAccess = Access::NotAsked;
            m_bufferTotal = 0;
            m_bufferBySystem.clear();
        }
    } else if (list) {
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
                peer.systemId = jsonString(p, "systemId").left(200);
                peer.endpoint = jsonString(p, "endpoint").left(500);
                peer.status = jsonString(p, "status").left(100);
                peer.connectedAtMs = numberOr0(jsonChild(p, "connectedAt"));
                peer.lastActivityMs = numberOr0(jsonChild(p, "lastActivity"));
                m_peers.push_back(std::move(peer));
            }
    } else {
        m_bufferAccess = Access::Listed;
        m_bufferRefusal.clear();
        m_bufferTotal = numberOr0(jsonChild(result, "total"));
        m_bufferBySystem.clear();
        if (const Json *by = jsonChild(result, "bySystem"); by && by->is_object())
            for (auto it = by->begin(); it != by->end() && int(m_bufferBySystem.size()) < kMaxPeers; ++it)
                m_bufferBySystem.emplace_back(QString::fromStdString(it.key()).left(200), numberOr0(&*it));
    }
    m_changed = m_changed || toJson() != before;
}

bool FederationLedger::hasSomethingToShow() const
{
    const auto says = [](Access a) { return a == Access::Listed || a == Access::Refused || a == Access::Failed; };
    return says(m_peersAccess) || says(m_bufferAccess);
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
