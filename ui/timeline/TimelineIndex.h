// Time-sorted index structures over the SystemStore, built incrementally for the timeline.
//
// The store keeps messages, events, actions and gaps in arrival order, and row numbers never
// change, so the index remembers how many rows of each it has taken in and ingest() only looks
// at the rows added since. When a live session's store trims its oldest history, ingest()
// first drops what the index held of the trimmed rows (one pass over each list), so the index
// is bounded by the store's history budget. Messages arrive nearly in time order: a new entry is appended, or inserted
// a few places from the end when it is older than the newest (binary search, short move).
// Painting and hit-testing find the visible part of every list with binary searches on time.
//
// Memory: 16 bytes per message in the global index, 4 bytes per message endpoint (sender and
// each recipient) in the per-lane lists (SortedTimes), 7 bytes per message for its first
// recipient, recipients indexed and convention (any other recipient is read from the store),
// 16 bytes per agent state change.
// Thread: GUI thread (reads the store, which lives there).
#pragma once

#include "map/MapTypes.h"
#include "map/PayloadConventions.h"
#include "model/AgentRowsByName.h"
#include "protocol/FastHash.h"
#include "timeline/SortedTimes.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <deque>
#include <limits>
#include <utility>
#include <vector>

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

class TimelineIndex
{
public:
    struct MessageRef
    {
        qint64 timeMs = 0;
        int messageRow = -1;      // SystemStore::messages() row
        int senderAgentRow = -1;  // SystemStore::agents() row, -1 when the sender is unresolved
    };
    // A change of an agent's lifecycle: registration, a state change or unregistration.
    // 16 bytes (a trace of a million events may hold a few hundred thousand).
    struct StateMark
    {
        qint64 timeMs = 0;
        int eventRow = -1;        // SystemStore::events() row
        qint16 stateId = -1;      // stateName(); -1 when the state could not be told
        quint8 kindValue = quint8(EventKind::AgentStateChanged);
        EventKind kind() const { return EventKind(kindValue); }
    };
    // A conversation turn (on its participant's lane) or a trajectory checkpoint (on the lane of
    // the agent whose work it records): a mark above the state strip.
    struct WorkMark
    {
        qint64 timeMs = 0;
        int eventRow = -1;        // SystemStore::events() row (mail.turn.added, trajectory.checkpoint)
        quint8 kindValue = quint8(EventKind::TrajectoryCheckpoint);
        EventKind kind() const { return EventKind(kindValue); }
    };
    struct ActionRef
    {
        qint64 timeMs = 0;        // when the operator sent it
        int actionRow = -1;       // SystemStore::actions() row
        int agentRow = -1;        // the target agent's row, -1 if unknown to the store
    };
    struct GapRef
    {
        qint64 timeMs = 0;
        int gapRow = -1;          // SystemStore::gaps() row
    };
    struct Ingested
    {
        bool anything = false;    // some row was added (or a message gained recipients)
        bool newAgents = false;   // the store has more agents than at the last ingest
        bool complete = true;     // caught up with the store (false: call again for the rest)
    };

    // Forgets everything (the store was reset).
    void clear();
    // Takes in the rows the store gained since the last call: at most `maxRows` messages and
    // `maxRows` events per call, so a huge backlog (a trace just opened) can be taken in slices
    // between other GUI work. Slicing does not change the result.
    Ingested ingest(const SystemStore &store, int maxRows = std::numeric_limits<int>::max());

    bool isEmpty() const { return m_firstTimeMs > m_lastTimeMs; }
    qint64 firstTimeMs() const { return m_firstTimeMs; }   // oldest indexed time (valid if !isEmpty())
    qint64 lastTimeMs() const { return m_lastTimeMs; }     // newest indexed time

    // Every message, sorted by timestamp (stable: equal times keep arrival order).
    const std::deque<MessageRef> &messages() const { return m_messages; }
    // Index of the first message at or after `timeMs` (messages().size() if none).
    int firstMessageAtOrAfter(double timeMs) const;
    // The payload convention of a message (a compact copy: painting reads it for every message
    // in view without touching the store's large Message records).
    ConventionKind convention(int messageRow) const
    {
        return messageRow >= m_messageBase && size_t(messageRow - m_messageBase) < m_conventions.size()
            ? ConventionKind(m_conventions[size_t(messageRow - m_messageBase)]) : ConventionKind::None;
    }
    // Calls f(agentRow) for each resolved recipient of an indexed message (SystemStore::messages()
    // row): the first one known from here, the others (a message of several) read from the
    // store's own list (a copy here was a hash entry and a vector per such message: 3 MB at a
    // million events). GUI thread (the store's): the agent rows' cache is filled as it goes.
    template<typename F>
    void forEachRecipient(const SystemStore &store, int messageRow, F &&f) const
    {
        if (messageRow < m_messageBase || size_t(messageRow - m_messageBase) >= m_firstRecipient.size())
            return;
        const size_t at = size_t(messageRow - m_messageBase);
        const int first = m_firstRecipient[at];
        if (first >= 0)
            f(first);
        if (m_recipientsIndexed[at] < (first >= 0 ? 2 : 1))
            return;
        const MessageLog &messages = store.messages();
        if (!messages.isKept(size_t(messageRow)))
            return;
        const int total = messages.recipientCount(size_t(messageRow));
        for (int i = 0; i < total; ++i)
            if (const int agentRow = m_agentRows.row(store, messages.recipientNameRow(size_t(messageRow), i));
                agentRow >= 0 && agentRow != first)
                f(agentRow);
    }

    int laneCount() const { return int(m_lanes.size()); }
    // Times of the messages an agent sent or received, sorted; one entry per message per lane.
    const SortedTimes &endpointTimes(int agentRow) const;
    // How many endpoint times were inserted before the end of their lane so far. Caches built
    // from lane tails (merged lanes of collapsed groups) start over when this changes.
    quint64 endpointReorders() const { return m_endpointReorders; }
    const std::deque<StateMark> &stateMarks(int agentRow) const;
    const std::deque<WorkMark> &workMarks(int agentRow) const;
    const QString &stateName(int stateId) const;

    const std::vector<ActionRef> &actions() const { return m_actions; }   // sorted by time
    const std::vector<GapRef> &gaps() const { return m_gaps; }            // sorted by time

    // The store's trimmed history as of the last ingest (events.any(): none trimmed).
    qint64 trimmedEvents() const { return m_trimmedEvents; }
    qint64 trimmedBeforeMs() const { return m_trimmedBeforeMs; }

private:
    struct Lane
    {
        SortedTimes endpointTimes;
        std::deque<StateMark> marks;        // a deque: trimming drops its head without moving the rest
        std::deque<WorkMark> work;          // likewise
    };

    void extendTimeRange(qint64 timeMs);
    void addEndpoint(int agentRow, qint64 timeMs);
    bool indexNewRecipients(const SystemStore &store, int messageRow);
    qint16 internState(const QString &state); // -1 past kMaxStates names
    // Distinct state names kept (StateMark::stateId is 16 bits): a server inventing more is
    // shown as unknown states from there on, not given ever more memory.
    static constexpr int kMaxStates = std::numeric_limits<qint16>::max();
    void ingestStateEvents(const SystemStore &store, const std::vector<int> &eventRows, bool reachedNewest);
    void dropTrimmedRows(const SystemStore &store);

    std::deque<MessageRef> m_messages;         // a deque, as Lane::marks
    // Per message row from m_messageBase (the store's first kept message when last trimmed):
    std::deque<quint16> m_recipientsIndexed;   // recipients already in lanes
    std::deque<int> m_firstRecipient;          // first recipient's agent row, -1 none
    mutable AgentRowsByName m_agentRows;       // cleared with the index (a store reset makes a new log)
    std::deque<quint8> m_conventions;          // its ConventionKind
    int m_messageBase = 0;
    std::vector<Lane> m_lanes;                 // per agent row
    std::vector<ActionRef> m_actions;
    std::vector<GapRef> m_gaps;
    QStringList m_stateNames;
    QHash<FastString, int> m_stateIds;

    int m_messageRows = 0;   // rows of each store list taken in so far
    int m_eventRows = 0;
    int m_actionRows = 0;
    int m_gapRows = 0;
    quint64 m_endpointReorders = 0;
    qint64 m_trimmedEvents = 0;
    qint64 m_trimmedBeforeMs = 0;
    qint64 m_firstTimeMs = 1;
    qint64 m_lastTimeMs = 0;
};

} // namespace mapi::ui
