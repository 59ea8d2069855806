#include "model/TrajectoryLedger.h"

#include <algorithm>

namespace mapi {

std::vector<const Checkpoint *> TrajectoryLedger::of(const QString &agentId) const
{
    std::vector<const Checkpoint *> out;
    for (const Checkpoint &c : m_checkpoints)
        if (c.agentId == agentId)
            out.push_back(&c);
    return out;
}

const Checkpoint *TrajectoryLedger::find(const QString &id) const
{
    if (!m_ids.contains(id))
        return nullptr;
    const auto it = std::find_if(m_checkpoints.begin(), m_checkpoints.end(), [&](const Checkpoint &c) { return c.id == id; });
    return it == m_checkpoints.end() ? nullptr : &*it;
}

void TrajectoryLedger::applyEvent(const MapEvent &e, qint64 t, int eventRow)
{
    if (const Json *checkpoint = jsonChild(e.data, "checkpoint"); checkpoint && checkpoint->is_object())
        add(*checkpoint, t, eventRow);
}

void TrajectoryLedger::applyPage(const QString &method, const Json &result)
{
    if (method == QLatin1String("trajectory/get")) {
        if (const Json *checkpoint = jsonChild(result, "checkpoint"); checkpoint && checkpoint->is_object())
            add(*checkpoint, 0, -1);
    } else if (method == QLatin1String("trajectory/list")) {
        if (const Json *list = jsonChild(result, "checkpoints"); list && list->is_array())
            for (const Json &checkpoint : *list)
                if (checkpoint.is_object())
                    add(checkpoint, 0, -1);
    }
}

void TrajectoryLedger::add(const Json &o, qint64 t, int eventRow)
{
    const QString id = jsonString(o, "id");
    if (id.isEmpty())
        return;
    if (m_ids.contains(id)) {
        if (eventRow >= 0)
            for (Checkpoint &c : m_checkpoints)
                if (c.id == id && c.eventRow < 0)
                    c.eventRow = eventRow;
        return;
    }
    Checkpoint c;
    c.id = id;
    c.agentId = jsonString(o, "agentId");
    c.label = jsonString(o, "label");
    c.workSessionId = jsonString(o, "sessionId");
    c.timeMs = jsonInt(o, "timestamp", t);
    if (const Json *metadata = jsonChild(o, "metadata"); metadata && !metadata->is_null()) {
        c.metadata = toQString(*metadata);
        if (c.metadata.size() > kMaxMetadataChars) {
            c.metadata.truncate(kMaxMetadataChars);
            c.metadata += QChar(0x2026);
        }
    }
    c.eventRow = eventRow;
    const auto at = std::upper_bound(m_checkpoints.begin(), m_checkpoints.end(), c.timeMs,
                                     [](qint64 time, const Checkpoint &kept) { return time < kept.timeMs; });
    m_checkpoints.insert(at, std::move(c));
    m_ids.insert(id);
    if (int(m_checkpoints.size()) > kMaxCheckpoints) {
        m_ids.remove(m_checkpoints.front().id);
        m_checkpoints.pop_front();
        ++m_notKept;
    }
    m_changed = true;
}

} // namespace mapi
