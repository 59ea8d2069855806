// SystemStore: applying events, messages and their conventions, and tasks. (The class is declared
// in SystemStore.h; its parts live in one file per concern: snapshots, reconciliation, gaps,
// problems and the connection in StoreSnapshots.cpp.)
#include "model/SystemStore.h"

#include "map/Dialect.h"

#include <QDateTime>

#include <algorithm>
#include <limits>

namespace mapi {

namespace {
// a + b, held at the ends of qint64: a trace's arrival times and a server's timestamps are
// whatever the file or the server says (the fuzzer found 9223372036854775806 + 10000).
qint64 saturatingAdd(qint64 a, qint64 b)
{
    if (b > 0 && a > std::numeric_limits<qint64>::max() - b)
        return std::numeric_limits<qint64>::max();
    if (b < 0 && a < std::numeric_limits<qint64>::min() - b)
        return std::numeric_limits<qint64>::min();
    return a + b;
}
} // namespace

// ---- inputs ----------------------------------------------------------------------------

int SystemStore::stateRowOf(const QString &state)
{
    const auto it = m_stateRow.constFind(state);
    if (it != m_stateRow.constEnd())
        return *it;
    const int row = int(m_stateNames.size());
    if (row >= int(EventEntry::kStateMask))
        return -1; // EventEntry keeps 15 bits: past 32,767 distinct state names, new ones are not charted
    m_stateNames.push_back(state);
    m_stateRow.insert(state, row);
    return row;
}

void SystemStore::applyEvent(const EventInput &input)
{
    const MapEvent &e = input.event;
    const EventLog::IdKey id = EventLog::idKey(e.eventId);
    if (!e.eventId.isEmpty() && m_events.find(id) >= 0) {
        ++m_counters.duplicateEvents;
        m_pending.countersChanged = true;
        return;
    }
    // The event's time on the server's clock: its timestamp, unless it is absent or implausibly
    // far ahead of the arrival (a wrong unit, a broken clock): then the arrival.
    // Until the offset is measured, a server ahead of us and one wrong timestamp look alike:
    // then only a day ahead is implausible, and event times do not move "now" (the local clock
    // does, through advanceTime()).
    m_eventArrivedMs = input.receivedMs;
    const qint64 arrival = saturatingAdd(input.receivedMs, m_connection.clockOffsetMs); // serverTime(), held at the ends
    const bool clockKnown = m_connection.clockSamples > 0 || input.receivedMs <= 0;
    qint64 t = e.timestampMs ? e.timestampMs : arrival;
    if (input.receivedMs > 0 && t > saturatingAdd(arrival, clockKnown ? kFutureToleranceMs : kUnmeasuredToleranceMs)) {
        ++m_counters.futureTimestamps;
        t = arrival;
    }
    if (clockKnown)
        m_nowMs = std::max(m_nowMs, t);
    ++m_counters.eventsApplied;
    m_pending.countersChanged = true;
    if (m_events.size() >= size_t(m_maxHistoryRows))
        return applyWithoutHistory(e, t);
    const int eventIndex = int(m_events.size());
    EventEntry entry;
    entry.timestampMs = t;
    entry.setStates(e.agent && e.agent->state ? stateRowOf(*e.agent->state) : -1,
                    e.previousState.isEmpty() ? -1 : stateRowOf(e.previousState));
    m_events.append(entry, id, e.type, e.kind, historyAgentId(e),
                    input.receivedMs, e.rawFrame, e.journalRef);
    if (m_pending.firstNewEvent < 0)
        m_pending.firstNewEvent = eventIndex;
    sayIfTextsNotKept(t);
    // MAP causedBy: the events it names that are still kept (the first few; a message's cause is
    // resolved from them too, in applyMessage).
    for (qsizetype i = 0, linked = 0; i < e.causedBy.size() && linked < EventLog::kMaxCausesPerEvent; ++i) {
        const int cause = m_events.find(e.causedBy[i], IdIndex::hashOf(e.causedBy[i]));
        if (cause >= 0 && cause < eventIndex) {
            m_events.addCause(size_t(eventIndex), size_t(cause));
            ++linked;
        }
    }

    switch (eventFamily(e.kind)) {
    case EventFamily::Agent: applyAgentEvent(e, t); break;
    case EventFamily::Scope: applyScopeEvent(e, t); break;
    case EventFamily::Message: applyMessage(e, t, eventIndex); break;
    case EventFamily::Delivery: applyDeliveryEvent(e, t, eventIndex); break;
    case EventFamily::Session: applySessionEvent(e, t); break;
    case EventFamily::Task: m_tasks.applyEvent(e, t); break;
    case EventFamily::Conversation:
    case EventFamily::Trajectory: applyExtensionEvent(e, t, eventIndex); break;
    case EventFamily::Other:
        ++m_counters.unknownEvents;
        noteUnknownEvent(e, input.receivedMs);
        touchAgent(resolveAgentRef(e.agentId), t);
        break;
    }
    if (eventFamily(e.kind) != EventFamily::Other)
        touchAgent(resolveAgentRef(e.sourceAgentId), t);
    if (m_tasks.hasChanges())
        takeTaskChanges();
}

void SystemStore::applyAgentEvent(const MapEvent &e, qint64 t)
{
    if (e.agentId.isEmpty())
        return;
    Agent &a = ensureAgent(e.agentId, t);
    if (&a == &m_agentPastLimit)
        return;
    if (e.agent)
        mergeAgent(a, *e.agent, t);
    // mergeAgent may have added a placeholder parent and moved m_agents: `a` is stale now.
    Agent &fresh = m_agents[size_t(m_agentRow.value(e.agentId))];
    if (e.kind == EventKind::AgentUnregistered) {
        fresh.unregistered = true;
        fresh.unregisteredAtMs = t;
        // Scope memberships stay: the official server keeps an unregistered agent in its
        // scopes and emits no scope.agent.left, so removing it here would differ from what
        // the server knows. Servers that do remove it send scope.agent.left.
        return;
    }
    if (e.kind == EventKind::AgentRegistered) {
        fresh.unregistered = false;
        fresh.unregisteredAtMs = 0;
        if (!fresh.registeredAtMs)
            fresh.registeredAtMs = t;
    }
    fresh.lastActivityMs = std::max(fresh.lastActivityMs, t);
    confirmActions(e, nullptr);
}

void SystemStore::applyScopeEvent(const MapEvent &e, qint64 t)
{
    switch (e.kind) {
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
            const IdSet members = std::move(s.members); // setMembership edits s.members
            for (const QString &agentId : members)
                setMembership(id, agentId, false, t);
        }
        break;
    }
    default: // joined or left
        setMembership(e.scopeId, e.agentId, e.kind == EventKind::ScopeMemberJoined, t);
        touchAgent(e.agentId, t);
        break;
    }
}

void SystemStore::applyDeliveryEvent(const MapEvent &e, qint64 t, int eventIndex)
{
    int row = m_messages.find(e.messageId);
    if (row < 0 && e.kind == EventKind::MessageDelivered && e.message) {
        applyMessage(e, t, eventIndex); // a delivery for a message we never saw sent
        row = m_messages.find(e.messageId);
    }
    if (row < 0)
        return;
    m_events.setMessageIndex(size_t(eventIndex), row);
    static const QHash<EventKind, QString> statusFor = {
        {EventKind::MessageQueued, QStringLiteral("queued")},
        {EventKind::MessageDelivered, QStringLiteral("delivered")},
        {EventKind::MessageDropped, QStringLiteral("dropped")},
        {EventKind::MessageExpired, QStringLiteral("expired")},
        {EventKind::MessageFailed, QStringLiteral("failed")},
    };
    m_messages.setStatus(size_t(row), statusFor.value(e.kind));
    const auto addRecipient = [&](const QString &named) {
        const QString agentId = recipientAgent(named);
        if (agentId.isEmpty() || agentId == QLatin1String("*") || m_messages.hasRecipient(size_t(row), agentId))
            return;
        if (!m_messages.addRecipient(size_t(row), agentId))
            ++m_counters.recipientsNotKept;
        if (e.kind == EventKind::MessageQueued || e.kind == EventKind::MessageDelivered)
            ensureAgent(agentId, t).messagesReceived++;
    };
    addRecipient(e.agentId);
    for (const QString &agentId : e.deliveredTo) // a delivery that names every recipient
        if (!isUnresolvableAddress(agentId))
            addRecipient(agentId);
    if (e.kind == EventKind::MessageDelivered && !m_actions.empty()) { // a copy only when an action may wait on it
        const Message m = m_messages[size_t(row)];
        confirmActions(e, &m);
    }
}

void SystemStore::applySessionEvent(const MapEvent &e, qint64 t)
{
    if (e.sessionId.isEmpty())
        return;
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
}

// An address as people read it: at most this many of a list's entries, and this many characters.
static constexpr int kDisplayedRecipients = 16;
static constexpr qsizetype kMaxAddressChars = 512;

static QString shortAddress(QString text)
{
    if (text.size() > kMaxAddressChars) {
        text.truncate(kMaxAddressChars);
        text += QChar(0x2026);
    }
    return text;
}

void SystemStore::resolveRecipients(Message &m, const Json &to, const QString &eventScopeId)
{
    // Repeats are dropped as they come: a scan of the few named so far, then a set (a message to
    // a million agents is linear, one to three agents allocates nothing more). Past
    // MessageLog::kMaxRecipients they are counted, not named.
    constexpr qsizetype kScanUpTo = 16;
    QSet<QString> named; // every id seen, once the list is past kScanUpTo
    auto seen = [&](const QString &ref) {
        if (named.isEmpty() && m.toAgentIds.size() < kScanUpTo)
            return m.toAgentIds.contains(ref);
        if (named.isEmpty())
            named = QSet<QString>(m.toAgentIds.cbegin(), m.toAgentIds.cend());
        if (named.contains(ref))
            return true;
        named.insert(ref);
        return false;
    };
    auto addRef = [&](QString ref) {
        if (ref.startsWith(QLatin1String("agent:")))
            ref = ref.mid(6);
        else if (ref.startsWith(QLatin1String("scope:"))) {
            m.scopeId = ref.mid(6);
            return;
        }
        // "[object Object]": a JavaScript client addressed an object the server turned into text
        // (agent-inbox's {agentId} addresses on MAPServer): nobody, not an agent of that name.
        if (ref.isEmpty() || ref == QLatin1String("*") || isUnresolvableAddress(ref))
            return;
        // A scope's id as the address: the event's own scope, or a scope the model knows.
        if (ref == eventScopeId || (m_scopeRow.contains(ref) && !m_agentRow.contains(ref))) {
            m.scopeId = ref;
            return;
        }
        ref = recipientAgent(ref);
        if (ref.isEmpty() || seen(ref))
            return;
        if (m.toAgentIds.size() < MessageLog::kMaxRecipients)
            m.toAgentIds << ref;
        else
            ++m.recipientsNotKept;
    };
    if (to.is_string()) {
        m.toDisplay = shortAddress(toQString(to));
        addRef(toQString(to));
    } else if (to.is_array()) {
        QStringList parts;
        for (const Json &item : to) {
            if (parts.size() < kDisplayedRecipients)
                parts << toQString(item);
            if (item.is_string())
                addRef(toQString(item));
        }
        m.toDisplay = parts.join(QStringLiteral(", "));
        if (const size_t more = to.size() - size_t(parts.size()); more > 0)
            m.toDisplay += QStringLiteral(" … %1 more").arg(more);
        m.toDisplay = shortAddress(m.toDisplay);
    } else if (to.is_object()) {
        m.toDisplay = shortAddress(toQString(to));
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
    // Its address too (MessageRecord::toInFrame).
    QByteArray payloadText = r.payloadText;
    std::optional<MessageRecord> full;
    const bool payloadThere = r.payloadInFrame && r.payloadText.isEmpty() && !r.convention;
    if (payloadThere || r.toInFrame)
        full = messageInFrame(e.rawFrame.isEmpty() ? r.payloadFrame : e.rawFrame, id);
    if (payloadThere && full) {
        payloadText = full->payloadText;
        m.payloadType = full->payloadType;
    }
    m.priority = r.priority;
    m.timestampMs = r.timestampMs ? r.timestampMs : t;
    m.status = e.kind == EventKind::MessageDelivered ? QStringLiteral("delivered") : QStringLiteral("sent");
    resolveRecipients(m, r.toInFrame && full ? full->to : r.to, e.scopeId);
    if (!e.scopeId.isEmpty())
        m.scopeId = e.scopeId;
    if (!e.agentId.isEmpty() && !m.toAgentIds.contains(e.agentId)) {
        if (m.toAgentIds.size() < MessageLog::kMaxRecipients)
            m.toAgentIds << e.agentId;
        else
            ++m.recipientsNotKept;
    }
    m_counters.recipientsNotKept += m.recipientsNotKept;

    // Read by the decoding thread for sent messages; a delivery of a message never seen sent is
    // read here, from the text above.
    const ConventionInfo info = r.convention ? *r.convention : interpretPayloadText(payloadText);
    m.tokensUsed = info.tokensUsed;
    m.costUsd = info.costUsd;
    if (info.envelopeId != m.id)
        m.envelopeId = info.envelopeId;
    m.spanId = info.spanId;
    m.parentRef = info.parentMessageId.isEmpty() ? info.parentSpanId : info.parentMessageId;
    m.traceId = info.traceId;
    m.rpcRef = info.rpcRef;
    // MAP's own causality, where the envelope names no parent: the first event in causedBy that
    // carried a message names that message. A W3C trace context at the frame's _meta gives the
    // trace id that groups the conversation, where the payload gives none (its span id is the
    // sender's current span, which no message is known by: not a parent).
    if (m.parentRef.isEmpty())
        for (const QString &cause : e.causedBy) {
            const int causeEvent = m_events.find(cause, IdIndex::hashOf(cause));
            const int carried = causeEvent >= 0 ? m_events[size_t(causeEvent)].messageIndex() : -1;
            if (carried >= 0 && m_messages.isKept(size_t(carried))) {
                m.parentRef = m_messages.id(size_t(carried));
                break;
            }
        }
    if (const QString &tp = e.traceParent; m.traceId.isEmpty() && tp.size() >= 55 && tp.at(2) == QLatin1Char('-')
                                            && tp.at(35) == QLatin1Char('-') && tp.at(52) == QLatin1Char('-')) {
        if (m.traceId.isEmpty())
            m.traceId = tp.mid(3, 32).toLower();
    }
    // Sender: the envelope's agent id when it names an agent (on [M] `from` is a session id),
    // else the agent behind `from`, else a placeholder for the envelope's sender.
    if (!info.senderAgentId.isEmpty() && m_agentRow.contains(info.senderAgentId))
        m.fromAgentId = info.senderAgentId;
    else if (const QString resolved = resolveAgentRef(r.from); !resolved.isEmpty())
        m.fromAgentId = resolved;
    else if (!info.senderAgentId.isEmpty())
        m.fromAgentId = info.senderAgentId;
    if (!m.fromAgentId.isEmpty()) {
        Agent &sender = activeAgent(m.fromAgentId, t);
        sender.messagesSent++;
        sender.lastActivityMs = std::max(sender.lastActivityMs, t);
    }
    for (const QString &to : std::as_const(m.toAgentIds)) {
        Agent &recipient = activeAgent(to, t);
        recipient.messagesReceived++;
    }
    m.correlationId = info.correlationId;
    if (!m.priority && info.priority)
        m.priority = info.priority;

    applyConvention(m, eventIndex < 0 ? -1 : int(m_messages.size()), info, t);
    if (eventIndex < 0) { // past the history's last row (applyWithoutHistory): the model only
        ++m_counters.messages;
        confirmActions(e, &m);
        return;
    }
    const int row = m_messages.append(m);
    if (info.acp)
        applyAcpFrame(*info.acp, row, t, m.fromAgentId, r.from, m.toAgentIds.value(0));
    sayIfTextsNotKept(t);
    m_events.setMessageIndex(size_t(eventIndex), row);
    if (m_pending.firstNewMessage < 0)
        m_pending.firstNewMessage = row;
    ++m_counters.messages;
    confirmActions(e, &m);
}

void SystemStore::applyConvention(Message &m, int messageRow, const ConventionInfo &c, qint64 t)
{
    m.convention = c.kind;
    m.severity = severityOf(c.severity);
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
            if (!c.heartbeatStatus.isEmpty()) {
                from->heartbeatStatus = c.heartbeatStatus;
                from->heartbeatStatusMs = std::max(from->heartbeatStatusMs, t);
            }
            if (c.load) from->load = c.load;
            if (c.tasksRunning) from->tasksRunning = c.tasksRunning;
            if (c.tasksQueued) from->tasksQueued = c.tasksQueued;
            if (c.progress) from->progress = c.progress;
            if (c.tokensUsed) from->tokensUsed = c.tokensUsed;
            if (c.tokensRemaining) from->tokensRemaining = c.tokensRemaining;
            if (c.inputTokens) from->inputTokens = c.inputTokens;
            if (c.outputTokens) from->outputTokens = c.outputTokens;
            if (c.costUsd) from->costUsd = c.costUsd;
            if (c.heartbeatStatus == QLatin1String("ERROR")) {
                from->lastErrorSeverity = QStringLiteral("ERROR");
                from->lastErrorMs = t;
            }
        }
        if (!c.taskId.isEmpty() && c.progress) {
            Task &task = m_tasks.ensure(c.taskId, t);
            task.progress = c.progress;
            task.updatedAtMs = t;
            if (task.status.isEmpty() || task.status == QLatin1String("accepted") || task.status == QLatin1String("requested"))
                m_tasks.transition(c.taskId, QStringLiteral("in-progress"), sender, QString(), messageRow, t);
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
            Task &task = m_tasks.ensure(c.taskId, t);
            if (task.type.isEmpty())
                task.type = c.taskType;
            task.requesterId = sender;
            if (!firstRecipient.isEmpty())
                task.assigneeId = firstRecipient;
            m_tasks.transition(c.taskId, QStringLiteral("requested"), sender, c.taskType, messageRow, t);
        }
        break;
    case ConventionKind::TaskCreated:
        if (!c.taskId.isEmpty()) {
            Task &task = m_tasks.ensure(c.taskId, t);
            if (!c.taskType.isEmpty())
                task.type = c.taskType;
            task.requesterId = sender;
            if (!c.assignee.isEmpty())
                task.assigneeId = c.assignee;
            m_tasks.transition(c.taskId, c.taskStatus.isEmpty() ? QStringLiteral("open") : c.taskStatus, sender, QString(),
                               messageRow, t);
        }
        break;
    case ConventionKind::TaskStatus:
        if (!c.taskId.isEmpty() && !c.taskStatus.isEmpty())
            m_tasks.transition(c.taskId, c.taskStatus, sender, c.reason, messageRow, t);
        break;
    case ConventionKind::TaskAssigned:
        if (!c.taskId.isEmpty()) {
            Task &task = m_tasks.ensure(c.taskId, t);
            if (!c.assignee.isEmpty())
                task.assigneeId = c.assignee;
            const QString status = task.status.isEmpty() ? QStringLiteral("open") : task.status; // unchanged
            m_tasks.transition(c.taskId, status, sender, QStringLiteral("assigned to %1").arg(c.assignee), messageRow, t);
        }
        break;
    case ConventionKind::TaskAccept:
        if (!c.taskId.isEmpty()) {
            m_tasks.ensure(c.taskId, t).assigneeId = sender;
            if (from)
                from->currentTaskId = c.taskId;
            m_tasks.transition(c.taskId, QStringLiteral("accepted"), sender, QString(), messageRow, t);
        }
        break;
    case ConventionKind::TaskReject:
        if (!c.taskId.isEmpty())
            m_tasks.transition(c.taskId, QStringLiteral("rejected"), sender, c.reason, messageRow, t);
        break;
    case ConventionKind::TaskHandoff:
        if (!c.taskId.isEmpty()) {
            const QString target = c.handoffTo.isEmpty() ? firstRecipient : c.handoffTo;
            Task &task = m_tasks.ensure(c.taskId, t);
            task.assigneeId = target;
            if (from && from->currentTaskId == c.taskId)
                from->currentTaskId.clear();
            m_tasks.transition(c.taskId, QStringLiteral("handed-off"), sender,
                           QStringLiteral("to %1%2").arg(target, c.reason.isEmpty() ? QString() : QStringLiteral(": ") + c.reason),
                           messageRow, t);
        }
        break;
    case ConventionKind::TaskUpdate:
        if (!c.taskId.isEmpty()) {
            Task &task = m_tasks.ensure(c.taskId, t);
            if (c.progress)
                task.progress = c.progress;
            task.updatedAtMs = t;
            if (task.status.isEmpty() || task.status == QLatin1String("accepted"))
                m_tasks.transition(c.taskId, QStringLiteral("in-progress"), sender, QString(), messageRow, t);
        }
        break;
    case ConventionKind::TaskComplete:
        if (!c.taskId.isEmpty()) {
            const bool failed = c.taskStatus == QLatin1String("FAILED") || c.taskStatus == QLatin1String("TIMEOUT");
            m_tasks.transition(c.taskId, failed ? QStringLiteral("failed") : QStringLiteral("completed"), sender,
                           c.taskStatus, messageRow, t);
            if (from && from->currentTaskId == c.taskId)
                from->currentTaskId.clear();
        }
        break;
    case ConventionKind::TaskFailed:
        if (!c.taskId.isEmpty()) {
            m_tasks.transition(c.taskId, QStringLiteral("failed"), sender,
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

void SystemStore::takeTaskChanges()
{
    if (const qint64 created = m_tasks.takeCreated()) {
        m_counters.tasks += created;
        m_pending.countersChanged = true;
    }
    m_pending.taskRows.unite(m_tasks.takeChangedRows());
    const int firstNew = m_tasks.takeFirstNewRow();
    if (firstNew >= 0 && m_pending.firstNewTaskRow < 0)
        m_pending.firstNewTaskRow = firstNew;
}

// The first event of a type the model does not understand: a Problems row with a sample; every
// one counted by type (ObservationNotes).
void SystemStore::noteUnknownEvent(const MapEvent &e, qint64 receivedMs)
{
    if (!m_observation.countUnknown(e.type))
        return; // a type seen before: counted
    Json sample = {{"type", e.type.toStdString()}, {"data", e.data}};
    if (!e.sourceAgentId.isEmpty())
        sample["source"] = {{"agentId", e.sourceAgentId.toStdString()}};
    const QByteArray text = QByteArray::fromStdString(sample.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (!m_observation.addUnknownType(e.type, receivedMs, text))
        return;
    applyProblem(makeProblem(ProblemKind::UnknownEvent,
                             QStringLiteral("events of type \"%1\" are not understood by the model: kept raw (timeline, "
                                            "inspector) and counted by type")
                                 .arg(e.type),
                             text.left(ObservationNotes::kMaxSampleBytes), receivedMs));
}

} // namespace mapi
