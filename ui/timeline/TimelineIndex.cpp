#include "timeline/TimelineIndex.h"

#include "model/SystemStore.h"

#include <algorithm>
#include <limits>

namespace mapi::ui {

namespace {

// Inserts keeping `list` sorted by timeMs; equal times keep arrival order. Nearly always an
// append: data arrives in time order apart from small reorderings.
template<typename List, typename T = typename List::value_type>
void insertByTime(List &list, const T &item)
{
    if (list.empty() || list.back().timeMs <= item.timeMs) {
        list.push_back(item);
        return;
    }
    const auto at = std::upper_bound(list.begin(), list.end(), item.timeMs,
                                     [](qint64 t, const T &entry) { return t < entry.timeMs; });
    list.insert(at, item);
}

bool isLifecycleEvent(EventKind kind)
{
    return kind == EventKind::AgentRegistered || kind == EventKind::AgentStateChanged
        || kind == EventKind::AgentUnregistered;
}

bool isWorkEvent(EventKind kind)
{
    return kind == EventKind::TrajectoryCheckpoint || kind == EventKind::TurnAdded;
}

const SortedTimes kNoTimes;
const std::deque<TimelineIndex::StateMark> kNoMarks;
const std::deque<TimelineIndex::WorkMark> kNoWorkMarks;

} // namespace

void TimelineIndex::clear()
{
    *this = TimelineIndex();
}

void TimelineIndex::dropTrimmedRows(const SystemStore &store)
{
    const int firstEvent = int(store.events().firstRow());
    const int firstMessage = int(store.messages().firstRow());
    m_trimmedEvents = store.historyTrim().events;
    m_trimmedBeforeMs = store.historyTrim().beforeMs;
    if (firstMessage > m_messageBase) {
        const size_t gone = std::min(size_t(firstMessage - m_messageBase), m_conventions.size());
        m_recipientsIndexed.erase(m_recipientsIndexed.begin(), m_recipientsIndexed.begin() + qsizetype(gone));
        m_firstRecipient.erase(m_firstRecipient.begin(), m_firstRecipient.begin() + qsizetype(gone));
        m_conventions.erase(m_conventions.begin(), m_conventions.begin() + qsizetype(gone));
        // Sorted by time, which follows arrival nearly always: the leading run of trimmed rows
        // goes now (cost: the rows trimmed, not the rows kept); a trimmed row that arrived out
        // of order goes with a later trim, once the rows before it have gone.
        m_messages.erase(m_messages.begin(),
                         std::find_if(m_messages.begin(), m_messages.end(),
                                      [&](const MessageRef &m) { return m.messageRow >= firstMessage; }));
        m_messageBase = firstMessage;
        m_messageRows = std::max(m_messageRows, firstMessage);
    }
    // Endpoints keep only times; the kept messages start at the oldest kept message's time.
    const qint64 endpointsFrom = m_messages.empty() ? m_trimmedBeforeMs : m_messages.front().timeMs;
    m_firstTimeMs = std::numeric_limits<qint64>::max();
    for (Lane &lane : m_lanes) {
        lane.marks.erase(lane.marks.begin(), std::find_if(lane.marks.begin(), lane.marks.end(), [&](const StateMark &mark) {
                             return mark.eventRow >= firstEvent;
                         }));
        lane.work.erase(lane.work.begin(), std::find_if(lane.work.begin(), lane.work.end(), [&](const WorkMark &mark) {
                            return mark.eventRow >= firstEvent;
                        }));
        // Endpoint times only shade the density strip, which the trimmed stretch covers: they
        // go once they are half the lane (a move of the rest costs as much as the rows gone).
        const size_t keptTimes = lane.endpointTimes.lowerBound(double(endpointsFrom));
        if (keptTimes < lane.endpointTimes.size())
            m_firstTimeMs = std::min(m_firstTimeMs, lane.endpointTimes.at(keptTimes));
        if (keptTimes * 2 >= lane.endpointTimes.size())
            lane.endpointTimes.eraseFront(keptTimes);
        if (!lane.marks.empty())
            m_firstTimeMs = std::min(m_firstTimeMs, lane.marks.front().timeMs);
    }
    ++m_endpointReorders; // caches built from lane tails start over
    if (!m_messages.empty())
        m_firstTimeMs = std::min(m_firstTimeMs, m_messages.front().timeMs);
    if (!m_actions.empty())
        m_firstTimeMs = std::min(m_firstTimeMs, m_actions.front().timeMs);
    if (!m_gaps.empty())
        m_firstTimeMs = std::min(m_firstTimeMs, m_gaps.front().timeMs);
    if (m_firstTimeMs == std::numeric_limits<qint64>::max())
        m_firstTimeMs = m_lastTimeMs;
    m_eventRows = std::max(m_eventRows, firstEvent);
}

TimelineIndex::Ingested TimelineIndex::ingest(const SystemStore &store, int maxRows)
{
    Ingested result;
    if (store.historyTrim().events != m_trimmedEvents || int(store.messages().firstRow()) > m_messageBase) {
        dropTrimmedRows(store);
        result.anything = true;
    }
    const auto &agents = store.agents();
    if (agents.size() > m_lanes.size()) {
        m_lanes.resize(agents.size());
        result.newAgents = true;
        result.anything = true;
    }

    const auto &messages = store.messages();
    const int messageEnd = int(std::min<qint64>(qint64(messages.size()), qint64(m_messageRows) + maxRows));
    for (int row = m_messageRows; row < messageEnd; ++row) {
        const qint64 timeMs = messages.timestampMs(size_t(row));
        const int sender = m_agentRows.row(store, messages.fromAgentNameRow(size_t(row)));
        insertByTime(m_messages, MessageRef{timeMs, row, sender});
        if (sender >= 0)
            addEndpoint(sender, timeMs);
        m_recipientsIndexed.push_back(0);
        m_firstRecipient.push_back(-1);
        m_conventions.push_back(quint8(messages.convention(size_t(row))));
        indexNewRecipients(store, row);
        extendTimeRange(timeMs);
        result.anything = true;
    }
    m_messageRows = messageEnd;

    // Delivery events add recipients to messages already indexed (scope-addressed messages
    // learn theirs this way; messages indexed later pick all theirs up then); lifecycle events
    // become state marks.
    const auto &events = store.events();
    const int eventEnd = int(std::min<qint64>(qint64(events.size()), qint64(m_eventRows) + maxRows));
    std::vector<int> lifecycleRows;
    for (int row = m_eventRows; row < eventEnd; ++row) {
        const EventEntry &e = events[size_t(row)];
        if (e.messageIndex() >= 0 && e.messageIndex() < m_messageRows && indexNewRecipients(store, e.messageIndex()))
            result.anything = true;
        if (isLifecycleEvent(events.kind(e))) {
            lifecycleRows.push_back(row);
        } else if (isWorkEvent(events.kind(e))) {
            // A turn names its participant by session id or agent id: the agent behind it.
            const int agentRow = store.agentRow(store.agentBehind(events.agentId(e)));
            if (agentRow >= 0 && size_t(agentRow) < m_lanes.size()) {
                insertByTime(m_lanes[size_t(agentRow)].work, WorkMark{e.timestampMs, row, quint8(events.kind(e))});
                extendTimeRange(e.timestampMs);
                result.anything = true;
            }
        }
    }
    m_eventRows = eventEnd;
    result.complete = m_messageRows == int(messages.size()) && m_eventRows == int(events.size());
    if (!lifecycleRows.empty()) {
        ingestStateEvents(store, lifecycleRows, m_eventRows == int(events.size()));
        result.anything = true;
    }

    const auto &actions = store.actions();
    for (int row = m_actionRows; row < int(actions.size()); ++row) {
        const OperatorAction &a = actions[size_t(row)];
        const qint64 at = store.serverTime(a.sentAtMs); // the timeline's clock is the server's; an action's is ours
        insertByTime(m_actions, ActionRef{at, row, store.agentRow(a.agentId)});
        extendTimeRange(at);
        result.anything = true;
    }
    m_actionRows = int(actions.size());

    const auto &gaps = store.gaps();
    for (int row = m_gapRows; row < int(gaps.size()); ++row) {
        const qint64 at = store.serverTime(gaps[size_t(row)].timeMs); // noticed here: on our clock, as an action
        insertByTime(m_gaps, GapRef{at, row});
        extendTimeRange(at);
        result.anything = true;
    }
    m_gapRows = int(gaps.size());
    return result;
}

void TimelineIndex::ingestStateEvents(const SystemStore &store, const std::vector<int> &eventRows, bool reachedNewest)
{
    // When these are the newest events, the store's agent holds the state of each agent's last
    // lifecycle event among them; only earlier ones need their frame decoded.
    QHash<int, int> lastEventOfAgent;
    for (const int row : eventRows) {
        const int agentRow = store.agentRow(store.events().agentId(store.events()[size_t(row)]));
        if (agentRow >= 0 && reachedNewest)
            lastEventOfAgent.insert(agentRow, row);
    }
    for (const int row : eventRows) {
        const EventEntry &e = store.events()[size_t(row)];
        const int agentRow = store.agentRow(store.events().agentId(e));
        if (agentRow < 0)
            continue;
        const QString state = lastEventOfAgent.value(agentRow) == row ? store.agents()[size_t(agentRow)].state
                                                                       : store.stateName(e.stateRow());
        insertByTime(m_lanes[size_t(agentRow)].marks,
                     StateMark{e.timestampMs, row, state.isEmpty() ? qint16(-1) : internState(state),
                               quint8(store.events().kind(e))});
        extendTimeRange(e.timestampMs);
    }
}

bool TimelineIndex::indexNewRecipients(const SystemStore &store, int messageRow)
{
    const MessageLog &messages = store.messages();
    if (messageRow < m_messageBase || size_t(messageRow - m_messageBase) >= m_recipientsIndexed.size())
        return false;
    quint16 &done = m_recipientsIndexed[size_t(messageRow - m_messageBase)];
    const int total = std::min<int>(messages.recipientCount(size_t(messageRow)), std::numeric_limits<quint16>::max());
    if (done >= total)
        return false;
    const qint64 timeMs = messages.timestampMs(size_t(messageRow));
    const int sender = m_agentRows.row(store, messages.fromAgentNameRow(size_t(messageRow)));
    // The store keeps a message's recipients sorted by id, so one learned later (a delivery naming
    // another agent, as the official server's do) may come before those counted. From one
    // counted recipient, known here, every other is new. From more (rare: a message that gains
    // recipients twice after it was indexed), those past the count are taken as the new ones,
    // which can put one on a neighbour's lane instead.
    int &first = m_firstRecipient[size_t(messageRow - m_messageBase)];
    const bool oneKnown = done == 1 && first >= 0;
    for (int i = oneKnown ? 0 : done; i < total; ++i) {
        const int recipient = m_agentRows.row(store, messages.recipientNameRow(size_t(messageRow), i));
        if (recipient < 0 || (oneKnown && recipient == first))
            continue;
        if (first < 0)
            first = recipient;
        if (recipient != sender)
            addEndpoint(recipient, timeMs);
    }
    done = quint16(total);
    return true;
}

void TimelineIndex::addEndpoint(int agentRow, qint64 timeMs)
{
    if (agentRow >= int(m_lanes.size()))
        m_lanes.resize(size_t(agentRow) + 1);
    if (!m_lanes[size_t(agentRow)].endpointTimes.insert(timeMs))
        ++m_endpointReorders;
}

void TimelineIndex::extendTimeRange(qint64 timeMs)
{
    if (timeMs <= 0)
        return;
    if (isEmpty()) {
        m_firstTimeMs = m_lastTimeMs = timeMs;
        return;
    }
    m_firstTimeMs = std::min(m_firstTimeMs, timeMs);
    m_lastTimeMs = std::max(m_lastTimeMs, timeMs);
}

qint16 TimelineIndex::internState(const QString &state)
{
    const auto found = m_stateIds.constFind(state);
    if (found != m_stateIds.constEnd())
        return qint16(*found);
    if (m_stateNames.size() >= kMaxStates)
        return -1;
    const int id = int(m_stateNames.size());
    m_stateNames << state;
    m_stateIds.insert(state, id);
    return qint16(id);
}

int TimelineIndex::firstMessageAtOrAfter(double timeMs) const
{
    const auto at = std::lower_bound(m_messages.begin(), m_messages.end(), timeMs,
                                     [](const MessageRef &m, double t) { return double(m.timeMs) < t; });
    return int(at - m_messages.begin());
}

const SortedTimes &TimelineIndex::endpointTimes(int agentRow) const
{
    return agentRow >= 0 && agentRow < int(m_lanes.size()) ? m_lanes[size_t(agentRow)].endpointTimes : kNoTimes;
}

const std::deque<TimelineIndex::StateMark> &TimelineIndex::stateMarks(int agentRow) const
{
    return agentRow >= 0 && agentRow < int(m_lanes.size()) ? m_lanes[size_t(agentRow)].marks : kNoMarks;
}

const std::deque<TimelineIndex::WorkMark> &TimelineIndex::workMarks(int agentRow) const
{
    return agentRow >= 0 && agentRow < int(m_lanes.size()) ? m_lanes[size_t(agentRow)].work : kNoWorkMarks;
}

const QString &TimelineIndex::stateName(int stateId) const
{
    static const QString unknown;
    return stateId >= 0 && stateId < int(m_stateNames.size()) ? m_stateNames.at(stateId) : unknown;
}

} // namespace mapi::ui
