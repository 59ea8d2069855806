// Trajectory checkpoints (hosts that wire the SDK's trajectory handlers): what an agent recorded
// of its work at meaningful points, from `trajectory.checkpoint` events and from
// trajectory/list and trajectory/get results (SystemStore::applyExtensionPage()). The content of a
// checkpoint is never kept here: the console fetches it on demand (trajectory/content).
//
// Bounded: at most kMaxCheckpoints (past it the oldest go first, counted), each one's metadata
// kept as compact JSON cut at kMaxMetadataChars.
// Thread: the store's.
#pragma once

#include "map/MapTypes.h"
#include "protocol/JsonRpc.h"

#include <QSet>

#include <deque>
#include <utility>
#include <vector>

namespace mapi {

struct Checkpoint
{
    QString id;
    QString agentId;       // the agent whose work it records (as the checkpoint names it)
    QString label;
    QString workSessionId; // the agent's work session (checkpoint.sessionId), not a MAP session
    qint64 timeMs = 0;
    QString metadata;      // compact JSON, cut at kMaxMetadataChars
    int eventRow = -1;     // the trajectory.checkpoint event (-1: known from a list)
};

class TrajectoryLedger
{
public:
    static constexpr int kMaxCheckpoints = 100000;
    static constexpr int kMaxMetadataChars = 2000;

    // Oldest first (by time; ties in arrival order).
    const std::deque<Checkpoint> &checkpoints() const { return m_checkpoints; }
    std::vector<const Checkpoint *> of(const QString &agentId) const;
    const Checkpoint *find(const QString &id) const;
    qint64 notKept() const { return m_notKept; }

    void applyEvent(const MapEvent &event, qint64 timeMs, int eventRow);
    void applyPage(const QString &method, const Json &result);

    bool takeChanged() { return std::exchange(m_changed, false); }
    void clear() { *this = TrajectoryLedger(); }

private:
    void add(const Json &checkpoint, qint64 timeMs, int eventRow);

    std::deque<Checkpoint> m_checkpoints;
    QSet<QString> m_ids;
    qint64 m_notKept = 0;
    bool m_changed = false;
};

} // namespace mapi
