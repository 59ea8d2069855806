#include "model/SystemStore.h"

#include "map/Dialect.h"

#include <QThreadPool>

#include <algorithm>

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
    return agentRows.isEmpty() && scopeRows.isEmpty() && taskRows.isEmpty() && actionRows.isEmpty()
        && firstNewMessage < 0 && firstNewEvent < 0 && !countersChanged && !connectionChanged && !historyTrimmed;
}

static void insertSorted(QStringList &list, const QString &value)
{
    auto it = std::lower_bound(list.begin(), list.end(), value);
    if (it == list.end() || *it != value)
        list.insert(it, value);
}

static void removeSorted(QStringList &list, const QString &value)
{
    auto it = std::lower_bound(list.begin(), list.end(), value);
    if (it != list.end() && *it == value)
        list.erase(it);
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
    advanceTime(m_nowMs);
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
        },
        input);
    scheduleFlush();
}

const Agent *SystemStore::agent(const QString &id) const
{
    const int row = m_agentRow.value(id, -1);
    return row < 0 ? nullptr : &m_agents[size_t(row)];
}

const Scope *SystemStore::scope(const QString &id) const
{
    const int row = m_scopeRow.value(id, -1);
    return row < 0 ? nullptr : &m_scopes[size_t(row)];
}

const Task *SystemStore::task(const QString &id) const
{
    const int row = m_taskRow.value(id, -1);
    return row < 0 ? nullptr : &m_tasks[size_t(row)];
}

const OperatorAction *SystemStore::action(const QString &id) const
{
    const int row = m_actionRow.value(id, -1);
    return row < 0 ? nullptr : &m_actions[size_t(row)];
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
}
void SystemStore::markScope(int row)
{
    m_pending.scopeRows.insert(row);
}
void SystemStore::markTask(int row)
{
    m_pending.taskRows.insert(row);
}
void SystemStore::markAction(int row)
{
    m_pending.actionRows.insert(row);
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
    return m_events.memoryBytes() + m_messages.memoryBytes() + m_taskHistory.memoryBytes();
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
    m_taskHistory.trimOlderThan(boundaryMs);
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
        if (bytes <= m_historyBudget || m_events.empty())
            return;
        const double keep = 0.9 * double(m_historyBudget) / double(bytes);
        const size_t kept = m_events.keptCount();
        const size_t drop = std::max<size_t>({1, kept / 10, size_t(double(kept) * (1.0 - keep))});
        trimEventsBefore(m_events.firstRow() + drop);
    }
}

void SystemStore::flushChanges()
{
    m_flushTimer.stop();
    enforceHistoryBudget();
    if (m_pending.isEmpty())
        return;
    ChangeSet out = std::move(m_pending);
    m_pending = ChangeSet();
    Q_EMIT changed(out);
}

void SystemStore::reset()
{
    flushChanges();
    Q_EMIT aboutToReset();
    m_nowMs = 0;
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
    m_taskHistory.clear();
    m_taskRow.clear();
    m_actions.clear();
    m_actionRow.clear();
    m_stateNames.clear();
    m_stateRow.clear();
    m_gaps.clear();
    m_problems.clear();
    m_problemsDropped = 0;
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
    std::swap(m_tasks, other.m_tasks);
    std::swap(m_taskHistory, other.m_taskHistory);
    std::swap(m_taskRow, other.m_taskRow);
    std::swap(m_actions, other.m_actions);
    std::swap(m_actionRow, other.m_actionRow);
    std::swap(m_stateNames, other.m_stateNames);
    std::swap(m_stateRow, other.m_stateRow);
    std::swap(m_frameSource, other.m_frameSource);
    std::swap(m_journalReader, other.m_journalReader);
    std::swap(m_gaps, other.m_gaps);
    std::swap(m_problems, other.m_problems);
    std::swap(m_problemsDropped, other.m_problemsDropped);
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

Agent &SystemStore::ensureAgent(const QString &id, qint64 timeMs)
{
    int row = m_agentRow.value(id, -1);
    if (row < 0) {
        row = int(m_agents.size());
        Agent a;
        a.id = id;
        a.knownSinceMs = timeMs;
        m_agents.push_back(std::move(a));
        m_agentRow.insert(id, row);
        if (m_pending.firstNewAgentRow < 0)
            m_pending.firstNewAgentRow = row;
    }
    markAgent(row);
    return m_agents[size_t(row)];
}

Scope &SystemStore::ensureScope(const QString &id, qint64 timeMs)
{
    int row = m_scopeRow.value(id, -1);
    if (row < 0) {
        row = int(m_scopes.size());
        Scope s;
        s.id = id;
        s.createdAtMs = timeMs;
        m_scopes.push_back(std::move(s));
        m_scopeRow.insert(id, row);
        if (m_pending.firstNewScopeRow < 0)
            m_pending.firstNewScopeRow = row;
    }
    markScope(row);
    return m_scopes[size_t(row)];
}

Task &SystemStore::ensureTask(const QString &id, qint64 timeMs)
{
    int row = m_taskRow.value(id, -1);
    if (row < 0) {
        row = int(m_tasks.size());
        Task t;
        t.id = id;
        t.createdAtMs = timeMs;
        m_tasks.push_back(std::move(t));
        m_taskRow.insert(id, row);
        ++m_counters.tasks;
        m_pending.countersChanged = true;
        if (m_pending.firstNewTaskRow < 0)
            m_pending.firstNewTaskRow = row;
    }
    markTask(row);
    return m_tasks[size_t(row)];
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
            m_sessions[a.sessionId].agentIds.removeAll(a.id);
        a.sessionId = *r.sessionId;
        Session &s = m_sessions[a.sessionId];
        s.id = a.sessionId;
        if (!s.agentIds.contains(a.id))
            s.agentIds << a.id;
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
    if (member) {
        insertSorted(s.members, agentId);
        insertSorted(a.scopes, scopeId);
    } else {
        removeSorted(s.members, agentId);
        removeSorted(a.scopes, scopeId);
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
        markAgent(row);
    }
}

QString SystemStore::resolveAgentRef(const QString &ref) const
{
    if (ref.isEmpty())
        return {};
    if (m_agentRow.contains(ref))
        return ref;
    const auto session = m_sessions.constFind(ref);
    if (session != m_sessions.constEnd() && !session->agentIds.isEmpty())
        return session->agentIds.first();
    return {};
}

// ---- inputs ----------------------------------------------------------------------------

int SystemStore::stateRowOf(const QString &state)
{
    const auto it = m_stateRow.constFind(state);
    if (it != m_stateRow.constEnd())
        return *it;
    const int row = int(m_stateNames.size());
    if (row > std::numeric_limits<qint16>::max())
        return -1; // EventEntry keeps 16 bits: past 32,768 distinct state names, new ones are not charted
    m_stateNames.push_back(state);
    m_stateRow.insert(state, row);
    return row;
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

void SystemStore::applyEvent(const EventInput &input)
{
    const MapEvent &e = input.event;
    const quint32 idHash = e.eventId.isEmpty() ? 0 : IdIndex::hashOf(e.eventId);
    if (!e.eventId.isEmpty() && m_events.find(e.eventId, idHash) >= 0) {
        ++m_counters.duplicateEvents;
        m_pending.countersChanged = true;
        return;
    }
    const qint64 t = e.timestampMs ? e.timestampMs : input.receivedMs;
    m_nowMs = std::max(m_nowMs, t);
    ++m_counters.eventsApplied;
    m_pending.countersChanged = true;

    const int eventIndex = int(m_events.size());
    EventEntry entry;
    entry.timestampMs = t;
    if (e.agent && e.agent->state)
        entry.stateRow = qint16(stateRowOf(*e.agent->state));
    if (!e.previousState.isEmpty())
        entry.previousStateRow = qint16(stateRowOf(e.previousState));
    m_events.append(entry, e.eventId, idHash, e.type, e.kind, e.agentId.isEmpty() ? e.sourceAgentId : e.agentId,
                    input.receivedMs, e.rawFrame, e.journalRef);
    if (m_pending.firstNewEvent < 0)
        m_pending.firstNewEvent = eventIndex;

    switch (e.kind) {
    case EventKind::AgentRegistered:
    case EventKind::AgentStateChanged:
    case EventKind::AgentMetadataChanged:
    case EventKind::AgentResumed:
    case EventKind::AgentOrphaned: {
        if (e.agentId.isEmpty())
            break;
        Agent &a = ensureAgent(e.agentId, t);
        if (e.agent)
            mergeAgent(a, *e.agent, t);
        // mergeAgent may have added a placeholder parent and moved m_agents: `a` is stale now.
        Agent &fresh = m_agents[size_t(m_agentRow.value(e.agentId))];
        if (e.kind == EventKind::AgentRegistered) {
            fresh.unregistered = false;
            fresh.unregisteredAtMs = 0;
            if (!fresh.registeredAtMs)
                fresh.registeredAtMs = t;
        }
        fresh.lastActivityMs = std::max(fresh.lastActivityMs, t);
        confirmActions(e, nullptr);
        break;
    }
    case EventKind::AgentUnregistered: {
        if (e.agentId.isEmpty())
            break;
        Agent &a = ensureAgent(e.agentId, t);
        if (e.agent)
            mergeAgent(a, *e.agent, t);
        Agent &fresh = m_agents[size_t(m_agentRow.value(e.agentId))];
        fresh.unregistered = true;
        fresh.unregisteredAtMs = t;
        // Scope memberships stay: the official server keeps an unregistered agent in its
        // scopes and emits no scope.agent.left, so removing it here would differ from what
        // the server knows. Servers that do remove it send scope.agent.left.
        break;
    }
    case EventKind::ScopeCreated:
        if (e.scope && !e.scope->id.isEmpty()) {
            Scope &s = ensureScope(e.scope->id, t);
            s.placeholder = false;
            s.deleted = false;
            if (e.scope->name)
                s.name = *e.scope->name;
            if (e.scope->parentId)
                s.parentId = *e.scope->parentId;
            if (!e.scope->metadata.is_null())
                s.metadata = e.scope->metadata;
            s.createdAtMs = t;
        }
        break;
    case EventKind::ScopeDeleted: {
        QStringList ids = e.deletedScopes;
        ids.prepend(e.scopeId);
        for (const QString &id : std::as_const(ids)) {
            if (id.isEmpty())
                continue;
            Scope &s = ensureScope(id, t);
            s.deleted = true;
            const QStringList members = s.members;
            for (const QString &agentId : members)
                setMembership(id, agentId, false, t);
        }
        break;
    }
    case EventKind::ScopeMemberJoined:
    case EventKind::ScopeMemberLeft:
        setMembership(e.scopeId, e.agentId, e.kind == EventKind::ScopeMemberJoined, t);
        touchAgent(e.agentId, t);
        break;
    case EventKind::MessageSent:
        applyMessage(e, t, eventIndex);
        break;
    case EventKind::MessageQueued:
    case EventKind::MessageDelivered:
    case EventKind::MessageDropped:
    case EventKind::MessageExpired:
    case EventKind::MessageFailed: {
        int row = m_messages.find(e.messageId);
        if (row < 0 && e.kind == EventKind::MessageDelivered && e.message) {
            applyMessage(e, t, eventIndex); // a delivery for a message we never saw sent
            row = m_messages.find(e.messageId);
        }
        if (row < 0)
            break;
        m_events.setMessageIndex(size_t(eventIndex), row);
        static const QHash<EventKind, QString> statusFor = {
            {EventKind::MessageQueued, QStringLiteral("queued")},
            {EventKind::MessageDelivered, QStringLiteral("delivered")},
            {EventKind::MessageDropped, QStringLiteral("dropped")},
            {EventKind::MessageExpired, QStringLiteral("expired")},
            {EventKind::MessageFailed, QStringLiteral("failed")},
        };
        m_messages.setStatus(size_t(row), statusFor.value(e.kind));
        if (!e.agentId.isEmpty() && e.agentId != QLatin1String("*") && !m_messages.hasRecipient(size_t(row), e.agentId)) {
            m_messages.addRecipient(size_t(row), e.agentId);
            if (e.kind == EventKind::MessageQueued || e.kind == EventKind::MessageDelivered)
                ensureAgent(e.agentId, t).messagesReceived++;
        }
        if (e.kind == EventKind::MessageDelivered && !m_actions.empty()) { // a copy only when an action may wait on it
            const Message m = m_messages[size_t(row)];
            confirmActions(e, &m);
        }
        break;
    }
    case EventKind::SessionConnected:
    case EventKind::SessionResumed:
    case EventKind::SessionDisconnected:
    case EventKind::SessionExpired: {
        if (e.sessionId.isEmpty())
            break;
        Session &s = m_sessions[e.sessionId];
        s.id = e.sessionId;
        if (!e.sessionRole.isEmpty())
            s.role = e.sessionRole;
        const bool up = e.kind == EventKind::SessionConnected || e.kind == EventKind::SessionResumed;
        s.status = up ? QStringLiteral("connected")
                      : (e.kind == EventKind::SessionExpired ? QStringLiteral("expired") : QStringLiteral("disconnected"));
        if (up && !s.connectedAtMs)
            s.connectedAtMs = t;
        s.lastChangeMs = t;
        for (const QString &agentId : std::as_const(s.agentIds))
            if (const int row = m_agentRow.value(agentId, -1); row >= 0)
                markAgent(row);
        break;
    }
    case EventKind::TaskCreated:
    case EventKind::TaskAssigned:
    case EventKind::TaskStatus:
    case EventKind::TaskCompleted:
        applyTaskEvent(e, t);
        break;
    case EventKind::Other:
        ++m_counters.unknownEvents;
        touchAgent(resolveAgentRef(e.agentId), t);
        break;
    }
    if (e.kind != EventKind::Other)
        touchAgent(resolveAgentRef(e.sourceAgentId), t);
}

void SystemStore::resolveRecipients(Message &m, const Json &to)
{
    auto addRef = [&](QString ref) {
        if (ref.startsWith(QLatin1String("agent:")))
            ref = ref.mid(6);
        else if (ref.startsWith(QLatin1String("scope:"))) {
            m.scopeId = ref.mid(6);
            return;
        }
        if (ref.isEmpty() || ref == QLatin1String("*"))
            return;
        if (m_scopeRow.contains(ref) && !m_agentRow.contains(ref)) {
            m.scopeId = ref;
            return;
        }
        if (!m.toAgentIds.contains(ref))
            m.toAgentIds << ref;
    };
    if (to.is_string()) {
        m.toDisplay = toQString(to);
        addRef(m.toDisplay);
    } else if (to.is_array()) {
        QStringList parts;
        for (const Json &item : to) {
            parts << toQString(item);
            if (item.is_string())
                addRef(toQString(item));
        }
        m.toDisplay = parts.join(QStringLiteral(", "));
    } else if (to.is_object()) {
        m.toDisplay = toQString(to);
        if (const Json *agent = jsonChild(to, "agent"); agent && agent->is_string())
            addRef(toQString(*agent));
        if (const Json *agents = jsonChild(to, "agents"); agents && agents->is_array())
            for (const Json &item : *agents)
                addRef(toQString(item));
        if (const Json *scope = jsonChild(to, "scope"); scope && scope->is_string())
            m.scopeId = toQString(*scope);
    }
}

void SystemStore::applyMessage(const MapEvent &e, qint64 t, int eventIndex)
{
    if (!e.message)
        return;
    const MessageRecord &r = *e.message;
    const QString id = r.id.isEmpty() ? e.eventId : r.id;
    if (m_messages.contains(id))
        return;
    Message m;
    m.id = id;
    m.eventId = e.eventId;
    m.eventRow = eventIndex;
    m.fromRaw = r.from;
    m.payloadText = r.payloadText;
    m.payloadInFrame = r.payloadInFrame;
    m.payloadType = r.payloadType;
    // A delivery whose payload the decoder left in the frame (read here: the message was never
    // seen sent); the store can read that frame again later, so it keeps no text either way.
    QByteArray payloadText = r.payloadText;
    if (r.payloadInFrame && r.payloadText.isEmpty() && !r.convention) {
        const QByteArray &frame = e.rawFrame.isEmpty() ? r.payloadFrame : e.rawFrame;
        if (const std::optional<MessageRecord> full = messageInFrame(frame, id)) {
            payloadText = full->payloadText;
            m.payloadType = full->payloadType;
        }
    }
    m.priority = r.priority;
    m.timestampMs = r.timestampMs ? r.timestampMs : t;
    m.status = e.kind == EventKind::MessageDelivered ? QStringLiteral("delivered") : QStringLiteral("sent");
    resolveRecipients(m, r.to);
    if (!e.scopeId.isEmpty())
        m.scopeId = e.scopeId;
    if (!e.agentId.isEmpty() && !m.toAgentIds.contains(e.agentId))
        m.toAgentIds << e.agentId;

    // Read by the decoding thread for sent messages; a delivery of a message never seen sent is
    // read here, from the text above.
    const ConventionInfo info = r.convention ? *r.convention : interpretPayloadText(payloadText);
    m.tokensUsed = info.tokensUsed;
    m.costUsd = info.costUsd;
    // Sender: the envelope's agent id when it names an agent (on [M] `from` is a session id),
    // else the agent behind `from`, else a placeholder for the envelope's sender.
    if (!info.senderAgentId.isEmpty() && m_agentRow.contains(info.senderAgentId))
        m.fromAgentId = info.senderAgentId;
    else if (const QString resolved = resolveAgentRef(r.from); !resolved.isEmpty())
        m.fromAgentId = resolved;
    else if (!info.senderAgentId.isEmpty())
        m.fromAgentId = info.senderAgentId;
    if (!m.fromAgentId.isEmpty()) {
        Agent &sender = ensureAgent(m.fromAgentId, t);
        sender.messagesSent++;
        sender.lastActivityMs = std::max(sender.lastActivityMs, t);
    }
    for (const QString &to : std::as_const(m.toAgentIds)) {
        Agent &recipient = ensureAgent(to, t);
        recipient.messagesReceived++;
    }
    m.correlationId = info.correlationId;
    if (!m.priority && info.priority)
        m.priority = info.priority;

    applyConvention(m, int(m_messages.size()), info, t);
    const int row = m_messages.append(m);
    m_events.setMessageIndex(size_t(eventIndex), row);
    if (m_pending.firstNewMessage < 0)
        m_pending.firstNewMessage = row;
    ++m_counters.messages;
    confirmActions(e, &m);
}

void SystemStore::applyConvention(Message &m, int messageRow, const ConventionInfo &c, qint64 t)
{
    m.convention = c.kind;
    m.taskId = c.taskId;
    if (c.kind == ConventionKind::None)
        return;
    const QString sender = m.fromAgentId;
    const QString firstRecipient = m.toAgentIds.value(0);
    Agent *from = sender.isEmpty() ? nullptr : &ensureAgent(sender, t);

    switch (c.kind) {
    case ConventionKind::Heartbeat:
    case ConventionKind::StatusUpdate:
    case ConventionKind::StatusResponse:
        if (from) {
            if (c.kind == ConventionKind::Heartbeat)
                from->lastHeartbeatMs = std::max(from->lastHeartbeatMs, t);
            if (!c.heartbeatStatus.isEmpty())
                from->heartbeatStatus = c.heartbeatStatus;
            if (c.load) from->load = c.load;
            if (c.tasksRunning) from->tasksRunning = c.tasksRunning;
            if (c.tasksQueued) from->tasksQueued = c.tasksQueued;
            if (c.progress) from->progress = c.progress;
            if (c.tokensUsed) from->tokensUsed = c.tokensUsed;
            if (c.tokensRemaining) from->tokensRemaining = c.tokensRemaining;
            if (c.costUsd) from->costUsd = c.costUsd;
            if (c.heartbeatStatus == QLatin1String("ERROR")) {
                from->lastErrorSeverity = QStringLiteral("ERROR");
                from->lastErrorMs = t;
            }
        }
        if (!c.taskId.isEmpty() && c.progress) {
            Task &task = ensureTask(c.taskId, t);
            task.progress = c.progress;
            task.updatedAtMs = t;
            if (task.status.isEmpty() || task.status == QLatin1String("accepted") || task.status == QLatin1String("requested"))
                taskTransition(c.taskId, QStringLiteral("in-progress"), sender, QString(), messageRow, t);
        }
        break;
    case ConventionKind::ErrorReport:
        if (from) {
            from->lastErrorSeverity = c.severity.isEmpty() ? QStringLiteral("ERROR") : c.severity;
            from->lastErrorMessage = c.errorMessage.isEmpty() ? c.errorCode : c.errorMessage;
            from->lastErrorMs = t;
        }
        break;
    case ConventionKind::TaskRequest:
        if (!c.taskId.isEmpty()) {
            Task &task = ensureTask(c.taskId, t);
            if (task.type.isEmpty())
                task.type = c.taskType;
            task.requesterId = sender;
            if (!firstRecipient.isEmpty())
                task.assigneeId = firstRecipient;
            taskTransition(c.taskId, QStringLiteral("requested"), sender, c.taskType, messageRow, t);
        }
        break;
    case ConventionKind::TaskAccept:
        if (!c.taskId.isEmpty()) {
            ensureTask(c.taskId, t).assigneeId = sender;
            if (from)
                from->currentTaskId = c.taskId;
            taskTransition(c.taskId, QStringLiteral("accepted"), sender, QString(), messageRow, t);
        }
        break;
    case ConventionKind::TaskReject:
        if (!c.taskId.isEmpty())
            taskTransition(c.taskId, QStringLiteral("rejected"), sender, c.reason, messageRow, t);
        break;
    case ConventionKind::TaskHandoff:
        if (!c.taskId.isEmpty()) {
            const QString target = c.handoffTo.isEmpty() ? firstRecipient : c.handoffTo;
            Task &task = ensureTask(c.taskId, t);
            task.assigneeId = target;
            if (from && from->currentTaskId == c.taskId)
                from->currentTaskId.clear();
            taskTransition(c.taskId, QStringLiteral("handed-off"), sender,
                           QStringLiteral("to %1%2").arg(target, c.reason.isEmpty() ? QString() : QStringLiteral(": ") + c.reason),
                           messageRow, t);
        }
        break;
    case ConventionKind::TaskUpdate:
        if (!c.taskId.isEmpty()) {
            Task &task = ensureTask(c.taskId, t);
            if (c.progress)
                task.progress = c.progress;
            task.updatedAtMs = t;
            if (task.status.isEmpty() || task.status == QLatin1String("accepted"))
                taskTransition(c.taskId, QStringLiteral("in-progress"), sender, QString(), messageRow, t);
        }
        break;
    case ConventionKind::TaskComplete:
        if (!c.taskId.isEmpty()) {
            const bool failed = c.taskStatus == QLatin1String("FAILED") || c.taskStatus == QLatin1String("TIMEOUT");
            taskTransition(c.taskId, failed ? QStringLiteral("failed") : QStringLiteral("completed"), sender,
                           c.taskStatus, messageRow, t);
            if (from && from->currentTaskId == c.taskId)
                from->currentTaskId.clear();
        }
        break;
    case ConventionKind::TaskFailed:
        if (!c.taskId.isEmpty()) {
            taskTransition(c.taskId, QStringLiteral("failed"), sender,
                           c.errorMessage.isEmpty() ? c.errorCode : c.errorMessage, messageRow, t);
            if (from && from->currentTaskId == c.taskId)
                from->currentTaskId.clear();
        }
        if (from) {
            from->lastErrorSeverity = c.severity;
            from->lastErrorMessage = c.errorMessage.isEmpty() ? c.errorCode : c.errorMessage;
            from->lastErrorMs = t;
        }
        break;
    default:
        break;
    }
}

void SystemStore::taskTransition(const QString &taskId, const QString &status, const QString &agentId,
                                 const QString &detail, int messageRow, qint64 t)
{
    Task &task = ensureTask(taskId, t);
    task.status = status;
    task.updatedAtMs = t;
    task.lastTransition = m_taskHistory.append(task.lastTransition, {t, status, agentId, detail, messageRow});
    ++task.historySize;
}

void SystemStore::applyTaskEvent(const MapEvent &e, qint64 t)
{
    const MapEvent::TaskFields &task = e.task;
    const QString &id = task.id;
    if (id.isEmpty())
        return;
    Task &stored = ensureTask(id, t);
    if (!task.title.isEmpty())
        stored.type = task.title;
    QString assignee = task.assignee;
    if (assignee.isEmpty())
        assignee = e.agentId;
    if (!assignee.isEmpty())
        stored.assigneeId = assignee;
    QString status;
    switch (e.kind) {
    case EventKind::TaskCreated: status = task.status.isEmpty() ? QStringLiteral("open") : task.status; break;
    case EventKind::TaskAssigned: status = QStringLiteral("assigned"); break;
    case EventKind::TaskStatus: status = task.current; break;
    case EventKind::TaskCompleted: status = QStringLiteral("completed"); break;
    default: break;
    }
    if (!status.isEmpty())
        taskTransition(id, status, assignee, QString(), -1, t);
}

void SystemStore::applyAgentsSnapshot(const AgentsSnapshot &snapshot)
{
    const qint64 t = snapshot.timeMs;
    m_nowMs = std::max(m_nowMs, t);
    QSet<QString> listed;
    for (const AgentRecord &r : snapshot.data.agents) {
        listed.insert(r.id);
        Agent &a = ensureAgent(r.id, t);
        mergeAgent(a, r, t);
        Agent &fresh = m_agents[size_t(m_agentRow.value(r.id))];
        if (fresh.unregistered) { // back in the server's list: registered again
            fresh.unregistered = false;
            fresh.unregisteredAtMs = 0;
        }
        if (!fresh.lastActivityMs)
            fresh.lastActivityMs = t; // first sight counts as activity; health starts from here
    }
    if (!snapshot.complete)
        return;
    // A complete list is the server's truth: known agents absent from it are gone.
    for (size_t row = 0; row < m_agents.size(); ++row) {
        Agent &a = m_agents[row];
        if (!a.placeholder && !a.unregistered && !listed.contains(a.id)) {
            a.unregistered = true;
            a.unregisteredAtMs = t;
            markAgent(int(row)); // memberships follow map/scopes/members, as on the server
        }
    }
}

void SystemStore::applyScopesSnapshot(const ScopesSnapshot &snapshot)
{
    const qint64 t = snapshot.timeMs;
    QSet<QString> listed;
    for (const ScopeRecord &r : snapshot.data.scopes) {
        listed.insert(r.id);
        Scope &s = ensureScope(r.id, t);
        s.placeholder = false;
        s.deleted = false;
        if (r.name)
            s.name = *r.name;
        if (r.parentId)
            s.parentId = *r.parentId;
        else
            s.parentId.clear();
        if (!r.metadata.is_null())
            s.metadata = r.metadata;
    }
    for (size_t row = 0; row < m_scopes.size(); ++row) {
        Scope &s = m_scopes[row];
        if (!s.placeholder && !s.deleted && !listed.contains(s.id)) {
            s.deleted = true;
            markScope(int(row));
            const QString scopeId = s.id;
            const QStringList members = s.members; // copied: setMembership edits s.members
            for (const QString &agentId : members)
                setMembership(scopeId, agentId, false, t);
        }
    }
}

void SystemStore::applyMembers(const MembersSnapshot &snapshot)
{
    const QString &scopeId = snapshot.data.scopeId;
    if (scopeId.isEmpty())
        return;
    Scope &s = ensureScope(scopeId, snapshot.timeMs);
    const QStringList previous = s.members;
    QSet<QString> now(snapshot.data.members.cbegin(), snapshot.data.members.cend());
    for (const QString &agentId : previous)
        if (!now.contains(agentId))
            setMembership(scopeId, agentId, false, snapshot.timeMs);
    for (const QString &agentId : snapshot.data.members)
        setMembership(scopeId, agentId, true, snapshot.timeMs);
}

void SystemStore::applyGap(const Gap &gap)
{
    if (m_gaps.size() < kMaxGaps)
        m_gaps.push_back(gap);
    ++m_counters.gaps;
    if (gap.kind == Gap::Kind::Sequence)
        ++m_counters.sequenceGaps;
    m_pending.countersChanged = true;
}

void SystemStore::applyProblem(const ProtocolProblem &problem)
{
    const auto bytesOf = [](const ProtocolProblem &p) { return qint64(p.frame.size() + p.detail.size() * 2); };
    m_problems.push_back(problem);
    m_problemBytes += bytesOf(problem);
    if (m_problems.size() > kMaxProblems || m_problemBytes > kMaxProblemBytes) {
        const size_t gone = std::max<size_t>(1, m_problems.size() / 10);
        for (size_t i = 0; i < gone; ++i)
            m_problemBytes -= bytesOf(m_problems[i]);
        m_problems.erase(m_problems.begin(), m_problems.begin() + qsizetype(gone));
        m_problemsDropped += qint64(gone);
    }
    ++m_counters.problems;
    m_pending.countersChanged = true;
}

void SystemStore::applyConnection(const ConnectionInfo &info)
{
    const QString serverName = info.serverName.isEmpty() ? m_connection.serverName : info.serverName;
    const QString serverVersion = info.serverVersion.isEmpty() ? m_connection.serverVersion : info.serverVersion;
    const QString protocol = info.protocolVersion.isEmpty() ? m_connection.protocolVersion : info.protocolVersion;
    const QString session = info.sessionId.isEmpty() ? m_connection.sessionId : info.sessionId;
    m_connection = info;
    m_connection.serverName = serverName;
    m_connection.serverVersion = serverVersion;
    m_connection.protocolVersion = protocol;
    m_connection.sessionId = session;
    m_nowMs = std::max(m_nowMs, info.timeMs);
    m_pending.connectionChanged = true;
}

// ---- operator actions ------------------------------------------------------------------

void SystemStore::settleAction(OperatorAction &a, ActionStatus status, const QString &detail, qint64 t,
                               const QString &eventId)
{
    a.status = status;
    a.settledAtMs = t;
    if (!detail.isEmpty())
        a.detail = detail;
    if (!eventId.isEmpty())
        a.confirmingEventId = eventId;
    markAction(m_actionRow.value(a.id));
}

void SystemStore::applyAction(const ActionUpdate &update)
{
    const OperatorAction &u = update.action;
    const qint64 t = update.timeMs;
    if (update.step == ActionUpdate::Step::Created) {
        if (m_actionRow.contains(u.id))
            return;
        const int row = int(m_actions.size());
        m_actions.push_back(u);
        m_actions.back().sentAtMs = t;
        m_actionRow.insert(u.id, row);
        if (m_pending.firstNewActionRow < 0)
            m_pending.firstNewActionRow = row;
        markAction(row);
        if (!u.agentId.isEmpty()) {
            Agent &a = ensureAgent(u.agentId, t);
            a.lastActionId = u.id;
        }
        return;
    }
    const int row = m_actionRow.value(u.id, -1);
    if (row < 0)
        return;
    OperatorAction &a = m_actions[size_t(row)];
    markAction(row);
    switch (update.step) {
    case ActionUpdate::Step::Answered:
        a.answeredAtMs = t;
        if (!u.messageId.isEmpty())
            a.messageId = u.messageId;
        if (!u.detail.isEmpty())
            a.detail = u.detail;
        if (a.status == ActionStatus::Sent)
            a.status = ActionStatus::Accepted;
        // [M] sends the confirming event before the answer that names the message.
        if (a.status == ActionStatus::Accepted && !a.messageId.isEmpty()) {
            const int messageRow = m_messages.find(a.messageId);
            if (messageRow >= 0) {
                const Message m = m_messages[size_t(messageRow)];
                if (m.status == QLatin1String("delivered"))
                    settleAction(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t);
                else if (a.kind == ActionKind::Send)
                    settleAction(a, ActionStatus::Confirmed, QStringLiteral("message %1").arg(m.status), t);
            }
        }
        // Already in the wanted state: the server emits nothing, so the answer is the confirmation.
        if (a.status == ActionStatus::Accepted && !a.agentId.isEmpty()) {
            const Agent *agent = this->agent(a.agentId);
            const bool alreadyThere = agent
                && ((a.kind == ActionKind::Stop && agent->state == QLatin1String("stopped"))
                    || (a.kind == ActionKind::Suspend && agent->state == QLatin1String("suspended")));
            if (alreadyThere)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("agent already %1").arg(agent->state), t);
        }
        break;
    case ActionUpdate::Step::Failed:
        a.answeredAtMs = t;
        settleAction(a, ActionStatus::Failed, u.detail, t);
        break;
    case ActionUpdate::Step::Unsupported:
        a.answeredAtMs = t;
        settleAction(a, ActionStatus::Unsupported, u.detail, t);
        break;
    case ActionUpdate::Step::Fallback:
        a.fallback = true;
        a.method = u.method;
        a.note = u.note;
        break;
    case ActionUpdate::Step::Created:
        break;
    }
}

void SystemStore::confirmActions(const MapEvent &e, const Message *message)
{
    // Only actions that the server accepted (or that await an answer) are candidates.
    for (size_t row = 0; row < m_actions.size(); ++row) {
        OperatorAction &a = m_actions[row];
        if (a.status != ActionStatus::Accepted && a.status != ActionStatus::Sent)
            continue;
        const qint64 t = e.timestampMs;
        switch (a.kind) {
        case ActionKind::Stop:
        case ActionKind::Suspend:
        case ActionKind::Resume: {
            if (e.kind != EventKind::AgentStateChanged || e.agentId != a.agentId || !e.agent || !e.agent->state)
                break;
            const QString &state = *e.agent->state;
            const bool ok = (a.kind == ActionKind::Stop && (state == QLatin1String("stopped") || state == QLatin1String("stopping")))
                || (a.kind == ActionKind::Suspend && state == QLatin1String("suspended"))
                || (a.kind == ActionKind::Resume && state != QLatin1String("suspended") && state != QLatin1String("stopped"));
            if (ok)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("state → %1").arg(state), t, e.eventId);
            break;
        }
        case ActionKind::Inject:
        case ActionKind::Send: {
            if (!message)
                break;
            if (e.kind == EventKind::MessageDelivered && !a.messageId.isEmpty() && message->id == a.messageId) {
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("delivered"), t, e.eventId);
                break;
            }
            // A reply from the target agent after the action was sent confirms steering.
            const bool isReply = message->convention == ConventionKind::SteeringAck
                || (!a.messageId.isEmpty() && e.message && e.message->replyTo == a.messageId);
            if (a.kind == ActionKind::Inject && e.kind == EventKind::MessageSent && message->fromAgentId == a.agentId
                && isReply && message->timestampMs >= a.sentAtMs - 1000) {
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("the agent acknowledged the steering message"), t,
                             e.eventId);
                break;
            }
            if (a.kind == ActionKind::Send && e.kind == EventKind::MessageSent && !a.messageId.isEmpty()
                && message->id == a.messageId)
                settleAction(a, ActionStatus::Confirmed, QStringLiteral("message sent"), t, e.eventId);
            break;
        }
        }
    }
}

// ---- health ----------------------------------------------------------------------------

Health SystemStore::evaluateHealth(const Agent &a, qint64 nowMs) const
{
    if (a.unregistered || isTerminalState(a.state))
        return Health::Stopped;
    if (isFailedState(a.state))
        return Health::Failed;
    if (a.lastErrorSeverity == QLatin1String("CRITICAL") && a.lastErrorMs >= a.lastHeartbeatMs)
        return Health::Failed;
    if (!a.sessionId.isEmpty()) {
        const auto s = m_sessions.constFind(a.sessionId);
        if (s != m_sessions.constEnd()
            && (s->status == QLatin1String("disconnected") || s->status == QLatin1String("expired")))
            return Health::Disconnected;
    }
    if (isSuspendedState(a.state))
        return Health::Suspended;
    const qint64 reference = std::max({a.lastHeartbeatMs, a.lastActivityMs, a.registeredAtMs, a.knownSinceMs});
    const qint64 age = nowMs - reference;
    if (age > m_policy.intervalMs * m_policy.unresponsiveAfterIntervals)
        return Health::Unresponsive;
    if (age > m_policy.intervalMs * m_policy.lateAfterIntervals)
        return Health::Late;
    return Health::Healthy;
}

void SystemStore::advanceTime(qint64 nowMs)
{
    m_nowMs = std::max(m_nowMs, nowMs);
    for (size_t row = 0; row < m_agents.size(); ++row) {
        Agent &a = m_agents[row];
        const Health h = evaluateHealth(a, m_nowMs);
        if (h != a.health) {
            a.health = h;
            markAgent(int(row));
        }
    }
    for (OperatorAction &a : m_actions) {
        if ((a.status == ActionStatus::Accepted || a.status == ActionStatus::Sent)
            && m_nowMs - a.sentAtMs > m_policy.actionConfirmTimeoutMs)
            settleAction(a, ActionStatus::TimedOut,
                         a.status == ActionStatus::Sent ? QStringLiteral("no answer from the server")
                                                        : QStringLiteral("accepted, but no confirming event"),
                         m_nowMs);
    }
    scheduleFlush();
}

} // namespace mapi
