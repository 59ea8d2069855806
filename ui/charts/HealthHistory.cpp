#include "charts/HealthHistory.h"

#include "map/AgentStates.h"
#include "map/Dialect.h"
#include "models/TaskModels.h"

#include <QElapsedTimer>

#include <algorithm>
#include <limits>
#include <optional>

namespace mapi::ui {

StateGroup stateGroup(const QString &state, bool unregistered)
{
    if (unregistered)
        return StateGroup::Stopped;
    switch (classifyState(state)) {
    case StateClass::Idle: return StateGroup::Idle;
    case StateClass::Busy: return StateGroup::Busy;
    case StateClass::Suspended: return StateGroup::Suspended;
    case StateClass::Stopping:
    case StateClass::Stopped: return StateGroup::Stopped;
    case StateClass::Failed: return StateGroup::Failed;
    case StateClass::Other: break;
    }
    return StateGroup::Other;
}

QString stateGroupName(StateGroup group)
{
    switch (group) {
    case StateGroup::Idle: return HealthHistory::tr("idle");
    case StateGroup::Busy: return HealthHistory::tr("busy");
    case StateGroup::Suspended: return HealthHistory::tr("suspended");
    case StateGroup::Stopped: return HealthHistory::tr("stopped");
    case StateGroup::Failed: return HealthHistory::tr("failed");
    case StateGroup::Other: return HealthHistory::tr("other");
    }
    return {};
}

namespace {

// A trace rebuild works at most this long per event-loop turn (half a 60 Hz frame).
constexpr qint64 kSliceNs = 8'000'000;
// Loops look at the clock every this many items.
constexpr size_t kClockEvery = 64;

constexpr int kNotCounted = -1;

enum TaskOutcome { OutcomeCompleted, OutcomeFailed, OutcomeCount };

int taskOutcome(const QString &status)
{
    switch (taskPhase(status)) {
    case TaskPhase::Completed: return OutcomeCompleted;
    case TaskPhase::Failed: return OutcomeFailed;
    default: return kNotCounted;
    }
}

bool reportsUsage(ConventionKind kind)
{
    return kind == ConventionKind::Heartbeat || kind == ConventionKind::StatusUpdate
        || kind == ConventionKind::StatusResponse;
}

bool changesAgentState(EventKind kind)
{
    return kind == EventKind::AgentRegistered || kind == EventKind::AgentStateChanged
        || kind == EventKind::AgentResumed || kind == EventKind::AgentUnregistered
        || kind == EventKind::AgentMetadataChanged;
}

// From `timeMs` on, entity `entity` counts in `group` (kNotCounted: in none).
struct GroupChange
{
    qint64 timeMs = 0;
    int entity = 0;
    int group = kNotCounted;
};

struct UsageReport
{
    qint64 timeMs = 0;
    int agent = 0;
    std::optional<qint64> tokens;
    std::optional<double> cost;
};

// Walks changes in time order and keeps per-group counts. Two lists of changes, each sorted here
// by time (stably): `first` (the entities' initial groups) goes before `then` at equal times, as
// if the two were one list sorted stably. Kept apart rather than joined: a trace's state changes
// are a few MB, and a joined copy (with a sort's buffer) was the window's peak after a load.
class GroupSweep
{
public:
    GroupSweep(std::vector<GroupChange> first, std::vector<GroupChange> then, size_t entities, size_t groups)
        : m_first(std::move(first))
        , m_then(std::move(then))
        , m_current(entities, kNotCounted)
        , m_counts(groups, 0)
    {
        sortByTime(m_first);
        sortByTime(m_then);
    }
    // Applies every change before `endMs`.
    void advanceTo(qint64 endMs)
    {
        for (;;) {
            const bool fromFirst = m_nextFirst < m_first.size()
                && (m_nextThen == m_then.size() || m_first[m_nextFirst].timeMs <= m_then[m_nextThen].timeMs);
            const GroupChange *c = fromFirst ? &m_first[m_nextFirst]
                                             : (m_nextThen < m_then.size() ? &m_then[m_nextThen] : nullptr);
            if (!c || c->timeMs >= endMs)
                return;
            ++(fromFirst ? m_nextFirst : m_nextThen);
            int &current = m_current[size_t(c->entity)];
            if (current != kNotCounted)
                --m_counts[size_t(current)];
            current = c->group;
            if (current != kNotCounted)
                ++m_counts[size_t(current)];
        }
    }
    int count(int group) const { return m_counts[size_t(group)]; }

private:
    static void sortByTime(std::vector<GroupChange> &changes)
    {
        const auto earlier = [](const GroupChange &a, const GroupChange &b) { return a.timeMs < b.timeMs; };
        if (!std::is_sorted(changes.begin(), changes.end(), earlier)) // a trace's usually are: no buffer then
            std::stable_sort(changes.begin(), changes.end(), earlier);
    }
    std::vector<GroupChange> m_first;
    std::vector<GroupChange> m_then;
    std::vector<int> m_current;
    std::vector<int> m_counts;
    size_t m_nextFirst = 0;
    size_t m_nextThen = 0;
};

// What an event says an agent's state became: kNotCounted when it says nothing.
// `before` receives the group the agent was in before the event (kNotCounted: absent).
int groupOfEvent(const SystemStore &store, const EventEntry &entry, int *before)
{
    const EventKind kind = store.events().kind(entry);
    if (kind == EventKind::AgentRegistered)
        *before = kNotCounted;
    else
        *before = int(entry.previousStateRow() < 0 ? StateGroup::Other
                                                   : stateGroup(store.stateName(entry.previousStateRow()), false));
    if (kind == EventKind::AgentUnregistered)
        return int(StateGroup::Stopped);
    if (entry.stateRow() >= 0)
        return int(stateGroup(store.stateName(entry.stateRow()), false));
    return kNotCounted;
}

} // namespace

// Derives HealthHistory samples from a store filled by a trace replay, in time slices.
// Reads the store by index below the sizes it saw at construction (rows are never removed).
class TraceHistoryBuilder
{
public:
    explicit TraceHistoryBuilder(const SystemStore &store)
        : m_store(store)
        , m_eventCount(store.events().size())
        , m_messageCount(store.messages().size())
        , m_taskCount(store.tasks().size())
        , m_agentCount(store.agents().size())
        , m_agentBefore(m_agentCount, kNoStateEvent)
    {
    }

    // Works for about `budgetNs`; true when the samples are ready.
    bool runFor(qint64 budgetNs)
    {
        QElapsedTimer clock;
        clock.start();
        while (m_phase != Phase::Done) {
            if (!step(clock, budgetNs))
                return false;
        }
        return true;
    }

    std::deque<HealthSample> takeSamples() { return std::move(m_samples); }

private:
    enum class Phase { Events, Messages, Tasks, Buckets, Sweep, Done };
    static constexpr int kNoStateEvent = -2;

    // One phase (or part of it); false when the budget ran out.
    bool step(const QElapsedTimer &clock, qint64 budgetNs)
    {
        // Calls scan(i) for the rows left of this phase; false when the budget ran out first.
        auto scanRows = [&](size_t count, auto &&scan) {
            for (; m_cursor < count; ++m_cursor) {
                if (m_cursor % kClockEvery == 0 && clock.nsecsElapsed() > budgetNs)
                    return false;
                scan(m_cursor);
            }
            return true;
        };
        // A phase that scans rows: on to `next` once all are scanned.
        auto scanPhase = [&](size_t count, auto &&scan, Phase next) {
            if (!scanRows(count, scan))
                return false;
            if (next == Phase::Buckets)
                chooseBuckets(); // from what the first three phases found
            nextPhase(next);
            return true;
        };
        switch (m_phase) {
        case Phase::Events:
            return scanPhase(m_eventCount, [&](size_t i) { scanEvent(m_store.events()[i]); }, Phase::Messages);
        case Phase::Messages:
            return scanPhase(m_messageCount, [&](size_t i) { scanMessage(i); }, Phase::Tasks);
        case Phase::Tasks:
            return scanPhase(m_taskCount, [&](size_t i) { scanTask(int(i), m_store.tasks()[i]); }, Phase::Buckets);
        case Phase::Buckets:
            // A second pass over the event log rather than a copy of every event's time (8 bytes
            // an event, more while the copy grew: the window's peak memory after a load).
            return scanPhase(m_eventCount, [&](size_t i) { countEvent(m_store.events()[i]); }, Phase::Sweep);
        case Phase::Sweep:
            if (clock.nsecsElapsed() > budgetNs / 4)
                return false; // sorting and bucketing take a few ms: in a turn of their own
            sweep();
            m_phase = Phase::Done;
            return true;
        case Phase::Done:
            return true;
        }
        return true;
    }

    void nextPhase(Phase phase)
    {
        m_phase = phase;
        m_cursor = 0;
    }

    void scanEvent(const EventEntry &entry)
    {
        const qint64 t = entry.timestampMs;
        m_firstMs = std::min(m_firstMs, t);
        m_lastMs = std::max(m_lastMs, t);
        if (!changesAgentState(m_store.events().kind(entry)))
            return;
        const int row = m_store.agentRow(m_store.events().agentId(entry));
        if (row < 0 || size_t(row) >= m_agentCount)
            return;
        int before = kNotCounted;
        const int group = groupOfEvent(m_store, entry, &before);
        if (group == kNotCounted)
            return;
        if (m_agentBefore[size_t(row)] == kNoStateEvent)
            m_agentBefore[size_t(row)] = before;
        m_agentChanges.push_back({t, row, group});
    }

    void scanMessage(size_t messageRow)
    {
        const MessageLog &messages = m_store.messages();
        const QString &from = messages.fromAgentId(messageRow);
        if (!reportsUsage(messages.convention(messageRow)) || from.isEmpty())
            return;
        const int row = m_store.agentRow(from);
        if (row < 0 || size_t(row) >= m_agentCount)
            return;
        const std::optional<qint64> tokens = messages.tokensUsed(messageRow);
        const std::optional<double> cost = messages.costUsd(messageRow);
        if (tokens || cost)
            m_usage.push_back({messages.timestampMs(messageRow), row, tokens, cost});
    }

    void scanTask(int row, const Task &task)
    {
        int previous = kNotCounted;
        for (const TaskTransition &step : m_store.taskHistory(task)) {
            const int outcome = taskOutcome(step.status);
            if (outcome != previous)
                m_taskChanges.push_back({step.timeMs, row, outcome});
            previous = outcome;
        }
    }

    // Whole seconds per bucket, as few as fit the trace into kCapacity samples. Buckets end at
    // the last event, so the newest rate covers a whole bucket; the first bucket may start
    // before the first event instead.
    void chooseBuckets()
    {
        if (m_eventCount == 0)
            return;
        const qint64 span = m_lastMs - m_firstMs + 1;
        m_secondsPerBucket = std::max<qint64>(1, (span + HealthHistory::kCapacity * 1000 - 1)
                                                     / (HealthHistory::kCapacity * 1000LL));
        m_bucketMs = m_secondsPerBucket * 1000;
        const size_t buckets = size_t((span + m_bucketMs - 1) / m_bucketMs);
        m_origin = m_lastMs + 1 - qint64(buckets) * m_bucketMs;
        m_eventsIn.assign(buckets, 0);
        m_messagesIn.assign(buckets, 0);
    }

    size_t bucketOf(qint64 t) const
    {
        return std::min(m_eventsIn.size() - 1, size_t(std::max<qint64>(0, t - m_origin) / m_bucketMs));
    }

    void countEvent(const EventEntry &entry)
    {
        const size_t bucket = bucketOf(entry.timestampMs);
        ++m_eventsIn[bucket];
        // Messages are appended in event order, so the first event naming a new row created it.
        if (entry.messageIndex() >= m_messagesSeen) {
            ++m_messagesIn[bucket];
            m_messagesSeen = entry.messageIndex() + 1;
        }
    }

    void sweep()
    {
        if (m_eventsIn.empty())
            return;
        // Each agent counts from when the model first heard of it: in the state its first state
        // event says it left, or (no such event) in its final state.
        std::vector<GroupChange> initialGroups;
        const std::vector<Agent> &agents = m_store.agents();
        for (size_t row = 0; row < m_agentCount; ++row) {
            const Agent &agent = agents[row];
            const int before = m_agentBefore[row];
            const int initial = before == kNoStateEvent ? int(stateGroup(agent.state, agent.unregistered)) : before;
            if (initial != kNotCounted)
                initialGroups.push_back({agent.knownSinceMs, int(row), initial});
        }
        GroupSweep agentSweep(std::move(initialGroups), std::move(m_agentChanges), m_agentCount, kStateGroupCount);
        GroupSweep taskSweep({}, std::move(m_taskChanges), m_taskCount, OutcomeCount);
        std::stable_sort(m_usage.begin(), m_usage.end(),
                         [](const UsageReport &a, const UsageReport &b) { return a.timeMs < b.timeMs; });

        const size_t buckets = m_eventsIn.size();
        std::vector<std::optional<qint64>> tokens(m_agentCount);
        std::vector<std::optional<double>> costs(m_agentCount);
        qint64 tokenTotal = 0;
        double costTotal = 0;
        bool usageReported = false;
        size_t nextUsage = 0;
        const double seconds = double(m_secondsPerBucket);
        for (size_t b = 0; b < buckets; ++b) {
            HealthSample sample;
            sample.timeMs = m_origin + qint64(b + 1) * m_bucketMs;
            sample.eventsPerSecond = m_eventsIn[b] / seconds;
            sample.messagesPerSecond = m_messagesIn[b] / seconds;
            agentSweep.advanceTo(sample.timeMs);
            for (int g = 0; g < kStateGroupCount; ++g)
                sample.agentsByState[size_t(g)] = agentSweep.count(g);
            taskSweep.advanceTo(sample.timeMs);
            sample.tasksCompleted = taskSweep.count(OutcomeCompleted);
            sample.tasksFailed = taskSweep.count(OutcomeFailed);
            for (; nextUsage < m_usage.size() && m_usage[nextUsage].timeMs < sample.timeMs; ++nextUsage) {
                const UsageReport &report = m_usage[nextUsage];
                if (report.tokens) {
                    tokenTotal += *report.tokens - tokens[size_t(report.agent)].value_or(0);
                    tokens[size_t(report.agent)] = report.tokens;
                }
                if (report.cost) {
                    costTotal += *report.cost - costs[size_t(report.agent)].value_or(0.0);
                    costs[size_t(report.agent)] = report.cost;
                }
                usageReported = true;
            }
            sample.tokensUsed = tokenTotal;
            sample.costUsd = costTotal;
            sample.usageReported = usageReported;
            m_samples.push_back(sample);
        }
    }

    const SystemStore &m_store;
    const size_t m_eventCount;
    const size_t m_messageCount;
    const size_t m_taskCount;
    const size_t m_agentCount;
    Phase m_phase = Phase::Events;
    size_t m_cursor = 0;

    qint64 m_firstMs = std::numeric_limits<qint64>::max();
    qint64 m_lastMs = std::numeric_limits<qint64>::min();
    qint64 m_secondsPerBucket = 1;
    qint64 m_bucketMs = 1000;
    qint64 m_origin = 0;                  // start of the first bucket
    std::vector<int> m_eventsIn;          // per bucket
    std::vector<int> m_messagesIn;
    int m_messagesSeen = 0;
    std::vector<int> m_agentBefore;       // per agent row: group before its first state event
    std::vector<GroupChange> m_agentChanges;
    std::vector<GroupChange> m_taskChanges;
    std::vector<UsageReport> m_usage;
    std::deque<HealthSample> m_samples;
};

// ---- HealthHistory -----------------------------------------------------------------------

namespace {

// Two consecutive samples as one: rates keep their peak (a spike survives the thinning, as in
// the charts' own grouping), counts and usage their newest value.
HealthSample merged(const HealthSample &older, const HealthSample &newer)
{
    HealthSample m = newer;
    m.eventsPerSecond = std::max(older.eventsPerSecond, newer.eventsPerSecond);
    m.messagesPerSecond = std::max(older.messagesPerSecond, newer.messagesPerSecond);
    return m;
}

} // namespace

HealthHistory::HealthHistory(const SystemStore *store, QObject *parent)
    : QObject(parent)
    , m_store(store)
{
    m_rebuildTimer.setInterval(0);
    connect(&m_rebuildTimer, &QTimer::timeout, this, &HealthHistory::continueRebuild);
    // The builder reads the store by index: it must not outlive the rows it reads.
    connect(store, &SystemStore::aboutToReset, this, [this] {
        if (m_keepLive && m_keepLive())
            clearDerived();
        else
            clear();
    });
}

HealthHistory::~HealthHistory() = default;

void HealthHistory::clearDerived()
{
    m_rebuildTimer.stop();
    m_builder.reset();
    if (m_derived.empty())
        return;
    m_derived.clear();
    if (m_showDerived)
        Q_EMIT samplesChanged();
}

void HealthHistory::clear()
{
    clearDerived();
    m_baselineTimeMs = -1;
    m_showDerived = false;
    if (m_live.empty())
        return;
    m_live.clear();
    Q_EMIT samplesChanged();
}

void HealthHistory::showLive()
{
    clearDerived();
    if (!m_showDerived)
        return;
    m_showDerived = false;
    Q_EMIT samplesChanged();
}

void HealthHistory::sampleLive(qint64 timeMs, const SystemStore &live)
{
    const StoreCounters &counters = live.counters();
    if (m_baselineTimeMs >= 0 && timeMs > m_baselineTimeMs) {
        const double seconds = double(timeMs - m_baselineTimeMs) / 1000.0;
        HealthSample sample;
        sample.timeMs = timeMs;
        sample.eventsPerSecond = double(counters.eventsApplied - m_baselineEvents) / seconds;
        sample.messagesPerSecond = double(counters.messages - m_baselineMessages) / seconds;
        for (const Agent &agent : live.agents()) {
            ++sample.agentsByState[size_t(stateGroup(agent.state, agent.unregistered))];
            if (agent.tokensUsed)
                sample.tokensUsed += *agent.tokensUsed;
            if (agent.costUsd)
                sample.costUsd += *agent.costUsd;
            if (agent.tokensUsed || agent.costUsd)
                sample.usageReported = true;
        }
        for (const Task &task : live.tasks()) {
            const int outcome = taskOutcome(task.status);
            if (outcome == OutcomeCompleted)
                ++sample.tasksCompleted;
            else if (outcome == OutcomeFailed)
                ++sample.tasksFailed;
        }
        m_live.push_back(sample);
        if (m_live.size() > size_t(kCapacity)) {
            // The oldest half, two samples into one: kCapacity / 4 slots come free.
            const size_t half = size_t(kCapacity) / 2;
            std::deque<HealthSample> thinned;
            for (size_t i = 0; i + 1 < half; i += 2)
                thinned.push_back(merged(m_live[i], m_live[i + 1]));
            thinned.insert(thinned.end(), m_live.begin() + qsizetype(half), m_live.end());
            m_live = std::move(thinned);
        }
    }
    m_baselineTimeMs = timeMs;
    m_baselineEvents = counters.eventsApplied;
    m_baselineMessages = counters.messages;
    if (!m_showDerived && !m_live.empty() && m_live.back().timeMs == timeMs)
        Q_EMIT samplesChanged();
}

void HealthHistory::rebuildFromStore()
{
    clearDerived();
    m_showDerived = true;
    m_builder = std::make_unique<TraceHistoryBuilder>(*m_store);
    m_rebuildTimer.start();
}

void HealthHistory::continueRebuild()
{
    if (!m_builder || !m_builder->runFor(kSliceNs))
        return;
    m_rebuildTimer.stop();
    m_derived = m_builder->takeSamples();
    m_builder.reset();
    // Announced from the next turn: the charts' refresh is a few milliseconds of its own.
    QMetaObject::invokeMethod(this, &HealthHistory::samplesChanged, Qt::QueuedConnection);
}

} // namespace mapi::ui
