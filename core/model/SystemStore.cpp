#include "model/SystemStore.h"

#include "map/Dialect.h"

#include <QElapsedTimer>
#include <QThreadPool>

#include <algorithm>
#include <limits>

namespace mapi {

QString healthName(Health health)
{
    switch (health) {
    case Health::Healthy: return QStringLiteral("healthy");
    case Health::Late: return QStringLiteral("late");
    case Health::Unresponsive: return QStringLiteral("unresponsive");
    case Health::Suspended: return QStringLiteral("suspended");
    case Health::Disconnected: return QStringLiteral("disconnected");
    case Health::Stopped: return QStringLiteral("stopped");
    case Health::Failed: return QStringLiteral("failed");
    case Health::Unknown: return QStringLiteral("unknown");
    }
    return {};
}

QString actionKindName(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Inject: return QStringLiteral("inject");
    case ActionKind::Stop: return QStringLiteral("stop");
    case ActionKind::Suspend: return QStringLiteral("suspend");
    case ActionKind::Resume: return QStringLiteral("resume");
    case ActionKind::Send: return QStringLiteral("send");
    }
    return {};
}

QString actionStatusName(ActionStatus status)
{
    switch (status) {
    case ActionStatus::Sent: return QStringLiteral("sent");
    case ActionStatus::Accepted: return QStringLiteral("accepted");
    case ActionStatus::Confirmed: return QStringLiteral("confirmed");
    case ActionStatus::Failed: return QStringLiteral("failed");
    case ActionStatus::TimedOut: return QStringLiteral("timed-out");
    case ActionStatus::Unsupported: return QStringLiteral("unsupported");
    case ActionStatus::Unknown: return QStringLiteral("unknown");
    }
    return {};
}

QString gapKindName(Gap::Kind kind)
{
    switch (kind) {
    case Gap::Kind::Sequence: return QStringLiteral("sequence");
    case Gap::Kind::Reconnect: return QStringLiteral("reconnect");
    case Gap::Kind::ReplayUnavailable: return QStringLiteral("replay-unavailable");
    }
    return {};
}

bool ChangeSet::isEmpty() const
{
    return agentRows.isEmpty() && activeAgentRows.isEmpty() && scopeRows.isEmpty() && taskRows.isEmpty() && actionRows.isEmpty()
        && conversationRows.isEmpty() && !checkpointsChanged && !acpChanged && !federationChanged && firstNewMessage < 0 && firstNewEvent < 0 && !countersChanged && !connectionChanged && !historyTrimmed;
}

QStringList toStringList(const IdSet &ids)
{
    QStringList list;
    list.reserve(qsizetype(ids.size()));
    for (const QString &id : ids)
        list << id;
    return list;
}

SystemStore::SystemStore(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<mapi::ChangeSet>();
    m_flushTimer.setObjectName(QStringLiteral("storeFlush"));
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(kFlushIntervalMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &SystemStore::flushChanges);
}

void SystemStore::setHealthPolicy(const HealthPolicy &policy)
{
    m_policy = policy;
    advanceTime(m_nowMs - m_connection.clockOffsetMs); // now, on the local clock: the clock does not move
}

void SystemStore::apply(const ModelInputs &inputs)
{
    for (const ModelInput &input : inputs)
        apply(input);
}

void SystemStore::apply(ModelInputs &&inputs)
{
    if (!inputs.isDetached()) { // shared with someone else: theirs to keep
        apply(std::as_const(inputs));
        return;
    }
    for (ModelInput &input : inputs)
        apply(std::move(input));
}

void SystemStore::apply(ModelInput &&input)
{
    m_takeFromInput = true;
    apply(std::as_const(input));
    m_takeFromInput = false;
}

void SystemStore::keep(Json &to, const Json &from)
{
    if (m_takeFromInput) // the input is an rvalue the caller gave away; it takes the old value
        to.swap(const_cast<Json &>(from)); // with it, to be freed where the input was made (TraceLoader)
    else
        to = from;
}

void SystemStore::apply(const ModelInput &input)
{
    m_tasks.setEventRow(int(m_events.size())); // the row an event input gets
    std::visit(
        [this](const auto &value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, EventInput>)
                applyEvent(value);
            else if constexpr (std::is_same_v<T, AgentsSnapshot>)
                applyAgentsSnapshot(value);
            else if constexpr (std::is_same_v<T, ScopesSnapshot>)
                applyScopesSnapshot(value);
            else if constexpr (std::is_same_v<T, MembersSnapshot>)
                applyMembers(value);
            else if constexpr (std::is_same_v<T, GapInput>)
                applyGap(value.gap);
            else if constexpr (std::is_same_v<T, ProblemInput>)
                applyProblem(value.problem);
            else if constexpr (std::is_same_v<T, ActionUpdate>)
                applyAction(value);
            else if constexpr (std::is_same_v<T, ConnectionInfo>)
                applyConnection(value);
            else if constexpr (std::is_same_v<T, ClockInput>)
                applyClock(value);
            else if constexpr (std::is_same_v<T, ExtensionPage>)
                applyExtensionPage(value);
        },
        input);
    scheduleFlush();
}

const Agent *SystemStore::agent(const QString &id) const
{
    const int row = m_agentRow.value(id, -1);
    return row < 0 ? nullptr : &m_agents[size_t(row)];
}

QString SystemStore::agentName(const QString &id) const
{
    const Agent *a = agent(id);
    return a ? shownName(*a) : id;
}

QString SystemStore::scopeName(const QString &id) const
{
    const Scope *s = scope(id);
    return s ? shownName(*s) : id;
}

const Scope *SystemStore::scope(const QString &id) const
{
    const int row = m_scopeRow.value(id, -1);
    return row < 0 ? nullptr : &m_scopes[size_t(row)];
}

const Task *SystemStore::task(const QString &id) const
{
    return m_tasks.find(id);
}

const OperatorAction *SystemStore::action(const QString &id) const
{
    return m_actions.find(id);
}

QStringList SystemStore::subtree(const QString &id) const
{
    QHash<QString, QStringList> children;
    for (const Agent &a : m_agents)
        if (!a.parentId.isEmpty())
            children[a.parentId] << a.id;
    QStringList out;
    QStringList queue{id};
    QSet<QString> seen;
    while (!queue.isEmpty()) {
        const QString next = queue.takeFirst();
        if (seen.contains(next))
            continue; // guards against parent cycles sent by a buggy server
        seen.insert(next);
        out << next;
        queue << children.value(next);
    }
    return out;
}

// ---- changes ---------------------------------------------------------------------------

void SystemStore::markAgent(int row)
{
    m_pending.agentRows.insert(row);
    if (!m_pending.activeAgentRows.isEmpty())
        m_pending.activeAgentRows.remove(row);
}
void SystemStore::markActive(int row)
{
    if (!m_pending.agentRows.contains(row))
        m_pending.activeAgentRows.insert(row);
}

Agent &SystemStore::activeAgent(const QString &id, qint64 timeMs)
{
    const int row = m_agentRow.value(id, -1);
    if (row < 0)
        return ensureAgent(id, timeMs);
    markActive(row);
    return m_agents[size_t(row)];
}

void SystemStore::markScope(int row)
{
    m_pending.scopeRows.insert(row);
}

void SystemStore::scheduleFlush()
{
    if (!m_flushTimer.isActive())
        m_flushTimer.start();
}

// About what an event row costs in the logs (row, id, index, journal reference): sizes the id
// index's generations to the rows a budget keeps.
constexpr size_t kHistoryBytesPerEvent = 100;

void SystemStore::setHistoryBudget(size_t bytes)
{
    m_historyBudget = bytes;
    const size_t rows = bytes ? bytes / kHistoryBytesPerEvent : IdIndex::kGenerationRows * 4;
    m_events.setExpectedRows(rows, bytes > 0);
    m_messages.setExpectedRows(rows, bytes > 0);
}

size_t SystemStore::historyBytes() const
{
    return m_events.memoryBytes() + m_messages.memoryBytes() + m_tasks.historyBytes();
}

void SystemStore::trimEventsBefore(size_t eventRow)
{
    eventRow = std::min(eventRow, m_events.size());
    if (eventRow <= m_events.firstRow())
        return;
    const qint64 events = qint64(eventRow - m_events.firstRow());
    // Messages are appended in the order of the events that carry them.
    size_t messageRow = m_messages.firstRow();
    while (messageRow < m_messages.size() && m_messages.eventRow(messageRow) < int(eventRow))
        ++messageRow;
    const qint64 messages = qint64(messageRow - m_messages.firstRow());
    m_events.trimBefore(eventRow);
    m_messages.trimBefore(messageRow);
    const qint64 boundaryMs = m_events.empty() ? m_nowMs : m_events.front().timestampMs;
    m_tasks.trimHistoryBeforeEvent(int(eventRow));
    m_trim.events += events;
    m_trim.messages += messages;
    m_trim.beforeMs = std::max(m_trim.beforeMs, boundaryMs);
    m_pending.historyTrimmed = true;
}

void SystemStore::trimHistoryBefore(qint64 receivedMs)
{
    size_t row = m_events.firstRow();
    while (row < m_events.size() && m_events.receivedMs(row) < receivedMs)
        ++row;
    if (row == m_events.firstRow())
        return;
    trimEventsBefore(row);
    scheduleFlush();
}

void SystemStore::enforceHistoryBudget()
{
    if (m_historyBudget == 0)
        return;
    // Rows cost about the same on average: drop the share that brings the logs to 90%. Texts
    // are freed by the 1 MiB block, so a pass may free less than its share: a few more passes
    // (each at least a tenth of what is kept) settle it.
    for (int pass = 0; pass < 4; ++pass) {
        const size_t bytes = historyBytes();
        if (bytes <= m_historyBudget)
            return;
        if (m_events.empty()) { // past the last row number only task transitions come (applyWithoutHistory)
            m_tasks.trimHistoryBeforeEvent(std::numeric_limits<int>::max());
            return;
        }
        const double keep = 0.9 * double(m_historyBudget) / double(bytes);
        const size_t kept = m_events.keptCount();
        const size_t drop = std::max<size_t>({1, kept / 10, size_t(double(kept) * (1.0 - keep))});
        trimEventsBefore(m_events.firstRow() + drop);
    }
}

void SystemStore::setChangesHeld(bool held)
{
    if (m_changesHeld == held)
        return;
    m_changesHeld = held;
    if (!held)
        flushChanges();
}

void SystemStore::flushChanges()
{
    m_flushTimer.stop();
    enforceHistoryBudget();
    if (m_pending.isEmpty() || m_changesHeld)
        return;
    ChangeSet out = std::move(m_pending);
    m_pending = ChangeSet();
    QElapsedTimer views;
    views.start();
    Q_EMIT changed(out);
    m_lastFlushNs = views.nsecsElapsed();
}

void SystemStore::reset()
{
    flushChanges();
    Q_EMIT aboutToReset();
    m_nowMs = 0;
    m_lastFlushNs = 0;
    m_textsNotKeptSaid = false;
    m_historyFullSaid = false;
    m_agents.clear();
    m_agentRow.clear();
    m_scopes.clear();
    m_scopeRow.clear();
    // A loaded trace's million events and their messages took 0.4 s to free: the GUI thread
    // hands them to a pool thread (their strings' reference counts are atomic; nothing else
    // refers to the rows once they left the store).
    struct DroppedRows
    {
        EventLog events;
        MessageLog messages;
    };
    auto dropped = std::make_shared<DroppedRows>();
    dropped->events = std::move(m_events);
    dropped->messages = std::move(m_messages);
    m_events = EventLog();
    m_messages = MessageLog(&m_events);
    setHistoryBudget(m_historyBudget);
    if (dropped->events.size() + dropped->messages.size() > 10000)
        QThreadPool::globalInstance()->start([dropped = std::move(dropped)]() mutable { dropped.reset(); });
    m_tasks.clear();
    m_conversations.clear();
    m_checkpoints.clear();
    m_federation.clear();
    m_acp.clear();
    m_actions.clear();
    m_stateNames.clear();
    m_stateRow.clear();
    m_gaps.clear();
    m_problems.clear();
    m_problemsDropped = 0;
    m_observation.clear();
    m_problemBytes = 0;
    m_sessions.clear();
    m_counters = StoreCounters();
    m_connection = ConnectionInfo();
    m_trim = HistoryTrim();
    m_pending = ChangeSet();
    Q_EMIT wasReset();
}

void SystemStore::swapContents(SystemStore &other)
{
    if (&other == this)
        return;
    flushChanges();
    other.flushChanges();
    Q_EMIT aboutToReset();
    Q_EMIT other.aboutToReset();
    std::swap(m_nowMs, other.m_nowMs);
    std::swap(m_agents, other.m_agents);
    std::swap(m_agentRow, other.m_agentRow);
    std::swap(m_scopes, other.m_scopes);
    std::swap(m_scopeRow, other.m_scopeRow);
    std::swap(m_events, other.m_events);
    std::swap(m_messages, other.m_messages);
    m_messages.setEventLog(&m_events); // each message log reads the event log of its own store
    other.m_messages.setEventLog(&other.m_events);
    m_tasks.swap(other.m_tasks);
    std::swap(m_conversations, other.m_conversations);
    std::swap(m_checkpoints, other.m_checkpoints);
    std::swap(m_federation, other.m_federation);
    std::swap(m_acp, other.m_acp);
    m_actions.swap(other.m_actions);
    std::swap(m_stateNames, other.m_stateNames);
    std::swap(m_stateRow, other.m_stateRow);
    std::swap(m_frameSource, other.m_frameSource);
    std::swap(m_journalReader, other.m_journalReader);
    std::swap(m_gaps, other.m_gaps);
    std::swap(m_problems, other.m_problems);
    std::swap(m_problemsDropped, other.m_problemsDropped);
    std::swap(m_observation, other.m_observation);
    std::swap(m_problemBytes, other.m_problemBytes);
    std::swap(m_sessions, other.m_sessions);
    std::swap(m_counters, other.m_counters);
    std::swap(m_connection, other.m_connection);
    std::swap(m_historyBudget, other.m_historyBudget);
    std::swap(m_trim, other.m_trim);
    m_pending = ChangeSet();
    other.m_pending = ChangeSet();
    Q_EMIT wasReset();
    Q_EMIT other.wasReset();
    announceEverything();
    other.announceEverything();
}

void SystemStore::announceEverything()
{
    ChangeSet all;
    if (!m_agents.empty())
        all.firstNewAgentRow = 0;
    if (!m_scopes.empty())
        all.firstNewScopeRow = 0;
    if (!m_tasks.empty())
        all.firstNewTaskRow = 0;
    if (!m_actions.empty())
        all.firstNewActionRow = 0;
    for (int row = 0; row < int(m_conversations.conversations().size()); ++row)
        all.conversationRows.insert(row);
    all.checkpointsChanged = !m_checkpoints.checkpoints().empty();
    all.federationChanged = m_federation.hasSomethingToShow();
    all.acpChanged = !m_acp.streams().empty();
    if (!m_messages.empty())
        all.firstNewMessage = int(m_messages.firstRow());
    if (!m_events.empty())
        all.firstNewEvent = int(m_events.firstRow());
    all.countersChanged = true;
    all.connectionChanged = true;
    all.historyTrimmed = m_trim.any();
    m_pending = std::move(all);
    flushChanges();
}

// ---- entities --------------------------------------------------------------------------

namespace {

// The row of entity `id` in `rows`, appending a new one (its id set and its `since` member set to
// `timeMs`) when there is none, and noting the first new row of the batch in `firstNewRow`.
template<typename Entity>
int findOrAppend(std::vector<Entity> &rows, QHash<FastString, int> &rowOf, const QString &id,
                                  int &firstNewRow, qint64 Entity::*since, qint64 timeMs)
{
    int row = rowOf.value(id, -1);
    if (row >= 0)
        return row;
    row = int(rows.size());
    Entity &added = rows.emplace_back();
    added.id = id;
    added.*since = timeMs;
    rowOf.insert(id, row);
    if (firstNewRow < 0)
        firstNewRow = row;
    return row;
}

} // namespace

void SystemStore::sayIfTextsNotKept(qint64 timeMs)
{
    if (m_textsNotKeptSaid || m_events.textsNotKept() + m_messages.textsNotKept() == 0)
        return;
    m_textsNotKeptSaid = true;
    applyProblem({ProblemKind::LimitReached,
                  tr("More than 4 GiB of ids and payloads held at once: texts past that are not kept "
                     "(counts.textsNotKept); the frames still hold them"),
                  {}, timeMs, {}});
}

QByteArray SystemStore::eventFrame(int row) const
{
    if (row < 0 || !m_events.isKept(size_t(row)))
        return {};
    QByteArray kept = m_events.keptFrame(size_t(row));
    if (!kept.isEmpty())
        return kept;
    if (const FrameRef ref = m_events.journalRef(size_t(row)); ref.isValid())
        return m_journalReader ? m_journalReader(ref) : QByteArray();
    return m_frameSource ? m_frameSource(row) : QByteArray();
}

QByteArray SystemStore::messagePayload(int row) const
{
    if (row < 0 || !m_messages.isKept(size_t(row)))
        return {};
    if (!m_messages.payloadInFrame(size_t(row))) {
        const QByteArrayView text = m_messages.payloadText(size_t(row));
        return QByteArray(text.data(), text.size());
    }
    return messagePayloadInFrame(eventFrame(m_messages.eventRow(size_t(row))), m_messages.id(size_t(row)));
}

QByteArrayView SystemStore::messagePayloadView(int row, QByteArray &storage) const
{
    if (row >= 0 && m_messages.isKept(size_t(row)) && !m_messages.payloadInFrame(size_t(row)))
        return m_messages.payloadText(size_t(row));
    storage = messagePayload(row);
    return storage;
}

QString SystemStore::historyAgentId(const MapEvent &e) const
{
    const bool full = m_agents.size() >= size_t(m_maxAgents);
    for (const QString *id : {&e.agentId, &e.sourceAgentId})
        if (!id->isEmpty() && (!full || m_agentRow.contains(*id)))
            return *id;
    return {};
}

void SystemStore::applyWithoutHistory(const MapEvent &e, qint64 t)
{
    ++m_counters.historyNotKept;
    if (!m_historyFullSaid) {
        m_historyFullSaid = true;
        applyProblem({ProblemKind::LimitReached,
                      tr("%1 events in this history, the most it can number: newer events still change the model "
                         "but are not listed (counts.historyNotKept); connect again to list them").arg(m_maxHistoryRows),
                      {}, t, {}});
    }
    switch (eventFamily(e.kind)) {
    case EventFamily::Agent: applyAgentEvent(e, t); break;
    case EventFamily::Scope: applyScopeEvent(e, t); break;
    case EventFamily::Session: applySessionEvent(e, t); break;
    case EventFamily::Task: m_tasks.applyEvent(e, t); break;
    // A message still tells its agents' activity, heartbeats, status and tasks (its conventions).
    case EventFamily::Message: applyMessage(e, t, -1); break;
    case EventFamily::Delivery:
        if (e.kind == EventKind::MessageDelivered && !m_messages.contains(e.messageId))
            applyMessage(e, t, -1);
        break;
    case EventFamily::Other:
        ++m_counters.unknownEvents;
        noteUnknownEvent(e, m_eventArrivedMs);
        break;
    case EventFamily::Conversation: // a turn or a checkpoint is a row of the history itself
    case EventFamily::Trajectory: break;
    }
    if (eventFamily(e.kind) != EventFamily::Other)
        touchAgent(resolveAgentRef(e.sourceAgentId), t);
    if (m_tasks.hasChanges())
        takeTaskChanges();
}

Agent &SystemStore::ensureAgent(const QString &id, qint64 timeMs)
{
    if (m_agents.size() >= size_t(m_maxAgents) && !m_agentRow.contains(id)) {
        if (m_counters.agentsNotKept++ == 0)
            applyProblem({ProblemKind::LimitReached,
                          tr("More than %1 agents: agents past that are not modelled; the events that name them "
                             "are kept and counted (counts.agentsNotKept)").arg(m_maxAgents),
                          {}, timeMs, {}});
        m_pending.countersChanged = true;
        m_agentPastLimit = Agent();
        m_agentPastLimit.id = id;
        return m_agentPastLimit;
    }
    const int row = findOrAppend(m_agents, m_agentRow, id, m_pending.firstNewAgentRow, &Agent::knownSinceMs, timeMs);
    markAgent(row);
    return m_agents[size_t(row)];
}

Scope &SystemStore::ensureScope(const QString &id, qint64 timeMs)
{
    const int row = findOrAppend(m_scopes, m_scopeRow, id, m_pending.firstNewScopeRow, &Scope::createdAtMs, timeMs);
    markScope(row);
    return m_scopes[size_t(row)];
}

void SystemStore::mergeAgent(Agent &a, const AgentRecord &r, qint64 timeMs)
{
    a.placeholder = false;
    if (r.name)
        a.name = *r.name;
    if (r.role)
        a.role = *r.role;
    if (r.state && *r.state != a.state) {
        a.state = *r.state;
        a.lastStateChangeMs = r.lastStateChangeMs ? r.lastStateChangeMs : timeMs;
    }
    if (r.lastStateChangeMs)
        a.lastStateChangeMs = r.lastStateChangeMs;
    if (r.parentId && *r.parentId != a.id)
        a.parentId = *r.parentId;
    if (r.sessionId && !r.sessionId->isEmpty() && *r.sessionId != a.sessionId) {
        if (!a.sessionId.isEmpty())
            m_sessions[a.sessionId].agentIds.erase(a.id);
        a.sessionId = *r.sessionId;
        Session &s = m_sessions[a.sessionId];
        s.id = a.sessionId;
        s.agentIds.insert(a.id);
    }
    if (r.scopes) {
        for (const QString &scopeId : *r.scopes)
            setMembership(scopeId, a.id, true, timeMs);
    }
    if (!r.capabilities.is_null())
        keep(a.capabilities, r.capabilities);
    if (!r.metadata.is_null())
        keep(a.metadata, r.metadata);
    if (r.registeredAtMs)
        a.registeredAtMs = r.registeredAtMs;
    // Last, because it may grow m_agents and invalidate `a`: a dangling parent becomes a
    // placeholder, never an error.
    const QString parentId = a.parentId;
    if (!parentId.isEmpty() && !m_agentRow.contains(parentId))
        ensureAgent(parentId, timeMs);
}

void SystemStore::setMembership(const QString &scopeId, const QString &agentId, bool member, qint64 timeMs)
{
    if (scopeId.isEmpty() || agentId.isEmpty())
        return;
    Scope &s = ensureScope(scopeId, timeMs);
    Agent &a = ensureAgent(agentId, timeMs);
    if (&a == &m_agentPastLimit)
        return;
    if (member) {
        s.members.insert(agentId);
        a.scopes.insert(scopeId);
    } else {
        s.members.erase(agentId);
        a.scopes.erase(scopeId);
    }
}

void SystemStore::touchAgent(const QString &id, qint64 timeMs)
{
    if (id.isEmpty())
        return;
    const int row = m_agentRow.value(id, -1);
    if (row < 0)
        return;
    Agent &a = m_agents[size_t(row)];
    if (timeMs > a.lastActivityMs) {
        a.lastActivityMs = timeMs;
        markActive(row);
    }
}

QString SystemStore::recipientAgent(const QString &ref) const
{
    // A client's session (MAPServer names senders by session, and queues replies to them): its
    // agent if it has one, else nobody's lane, never a placeholder agent.
    if (m_agentRow.contains(ref))
        return ref;
    const auto session = m_sessions.constFind(ref);
    if (session == m_sessions.constEnd())
        return ref;
    return session->agentIds.empty() ? QString() : QString(*session->agentIds.begin());
}

QString SystemStore::resolveAgentRef(const QString &ref) const
{
    if (ref.isEmpty())
        return {};
    if (m_agentRow.contains(ref))
        return ref;
    const auto session = m_sessions.constFind(ref);
    if (session != m_sessions.constEnd() && !session->agentIds.empty())
        return *session->agentIds.begin();
    return {};
}

} // namespace mapi
