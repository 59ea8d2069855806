// The live model as OTLP/JSON request bodies (telemetry/LiveOtlpBatcher.h says what goes where).
#include "telemetry/LiveOtlpBatcher.h"

#include "common/Redaction.h"
#include "trace/OtlpJson.h"

#include <algorithm>
#include <cmath>

namespace mapi {

using namespace otlp;

namespace {

// An agent's window part n: not the file export's part ids (agentSpanId(…, n)), whose parts hold
// other messages: one receiver given both never sees two spans under one id.
QByteArray livePartSpanId(const QByteArray &traceId, const QString &agentId, int part)
{
    return hexId(traceId + ":agent:" + agentId.toUtf8() + ":live:" + QByteArray::number(part), 8);
}

QString agentSpanName(const QString &shown)
{
    return QStringLiteral("invoke_agent %1").arg(shown);
}

// The increase of a cumulative counter since `last` was sent; one that went down (the agent
// restarted its count) counts from 0.
qint64 increase(qint64 now, const std::optional<qint64> &last)
{
    return last && now >= *last ? now - *last : now;
}

bool sameCost(const std::optional<double> &a, const std::optional<double> &b)
{
    if (!a || !b)
        return !a && !b;
    return *a == *b || (std::isnan(*a) && std::isnan(*b)); // a NaN report must not make activity at every change
}

// A span that would not fit a body alone: its ids, times and name (cut), flagged.
SpanText stubSpan(const QByteArray &traceId, const QByteArray &spanId, const QByteArray &parentSpanId, const QString &name,
                  qint64 startMs, qint64 endMs)
{
    SpanText stub;
    stub.traceId = traceId;
    stub.spanId = spanId;
    stub.parentSpanId = parentSpanId;
    stub.name = QString::fromUtf8(cutUtf8(redactSecrets(name.toUtf8()), 256)); // redacted before cut: a cut secret matches no rule
    stub.startMs = startMs;
    stub.endMs = endMs;
    stub.attributes.boolean("map.span.truncated", true);
    return stub;
}

} // namespace

// Spans packed into requests of at most kMaxBodyBytes, each written once, straight into its
// request (a span that does not fit is cut back out and goes into the next request).
class LiveOtlpBatcher::Bodies
{
public:
    Bodies(const QString &serviceName, std::vector<OtlpBody> &out) : m_service(serviceName), m_out(out)
    {
        JsonText empty;
        appendRequestHead(empty, serviceName);
        const qsizetype head = qsizetype(empty.size());
        appendRequestTail(empty);
        m_tailBytes = qsizetype(empty.size()) - head;
        m_overhead = qsizetype(empty.size()) + 1; // with a comma
    }
    // The largest span a body holds.
    qsizetype maxSpanBytes() const { return kMaxBodyBytes - m_overhead; }

    void add(const SpanText &span)
    {
        if (!add([&span](JsonText &out) { span.appendTo(out); }, span.eventCount))
            add([&](JsonText &out) { stubSpan(span.traceId, span.spanId, span.parentSpanId, span.name, span.startMs, span.endMs).appendTo(out); },
                0);
    }
    // A span written by `write`; false (nothing added) when it alone is larger than a body.
    template<typename Write>
    bool add(const Write &write, int events)
    {
        for (;;) {
            if (m_spanCount == 0 && m_body.empty())
                appendRequestHead(m_body, m_service);
            const size_t mark = m_body.size();
            if (m_spanCount)
                m_body += ',';
            write(m_body);
            const qsizetype spanBytes = qsizetype(m_body.size() - mark) - (m_spanCount ? 1 : 0);
            if (spanBytes > maxSpanBytes()) {
                m_body.resize(mark);
                return false;
            }
            if (m_spanCount && qsizetype(m_body.size()) + m_tailBytes > kMaxBodyBytes) {
                m_body.resize(mark); // into the next request
                flush();
                continue;
            }
            ++m_spanCount;
            m_eventCount += events;
            return true;
        }
    }
    void flush()
    {
        if (m_spanCount == 0)
            return;
        appendRequestTail(m_body);
        OtlpBody body;
        body.json = QByteArray(m_body.data(), qsizetype(m_body.size()));
        body.spans = m_spanCount;
        body.events = m_eventCount;
        m_out.push_back(std::move(body));
        m_body.clear();
        m_spanCount = 0;
        m_eventCount = 0;
    }

private:
    const QString &m_service;
    std::vector<OtlpBody> &m_out;
    qsizetype m_tailBytes = 0; // the request's closing, after its last span
    qsizetype m_overhead = 0;  // the request's opening and closing, and a comma
    JsonText m_body;           // the request being filled: its head and spans so far
    qint64 m_spanCount = 0;
    qint64 m_eventCount = 0;
};

LiveOtlpBatcher::LiveOtlpBatcher(const SystemStore &store, OtlpOptions options)
    : m_store(store)
    , m_options(std::move(options))
    , m_nextMessage(store.messages().size()) // history: not sent
{
    // A service name of megabytes would leave no room in a body (the file export keeps it whole).
    m_options.serviceName = QString::fromUtf8(cutUtf8(m_options.serviceName.toUtf8(), 1024));
    for (const Agent &agent : store.agents())
        noteAgent(agent);
}

void LiveOtlpBatcher::reset()
{
    m_nextMessage = 0; // the store's new message log numbers from 0
    m_windowOfSender.clear(); // and its names
}

// ---- noting -------------------------------------------------------------------------------

void LiveOtlpBatcher::noteChanges(const ChangeSet &changes)
{
    const std::vector<Agent> &agents = m_store.agents();
    if (!changes.agentRows.isEmpty()) {
        std::vector<int> rows(changes.agentRows.cbegin(), changes.agentRows.cend());
        std::sort(rows.begin(), rows.end()); // parents (registered first) before their children
        for (const int row : rows)
            if (row >= 0 && size_t(row) < agents.size())
                noteAgent(agents[size_t(row)]);
    }
    if (changes.firstNewMessage >= 0) {
        const MessageLog &log = m_store.messages();
        size_t row = std::max({size_t(changes.firstNewMessage), m_nextMessage, log.firstRow()});
        for (; row < log.size(); ++row)
            addMessage(senderWindow(log, row), row);
        m_nextMessage = std::max(m_nextMessage, log.size());
    }
    if (!changes.taskRows.isEmpty()) {
        const std::vector<Task> &tasks = m_store.tasks();
        std::vector<int> rows(changes.taskRows.cbegin(), changes.taskRows.cend());
        std::sort(rows.begin(), rows.end());
        for (const int row : rows) {
            if (row < 0 || size_t(row) >= tasks.size())
                continue;
            const Task &task = tasks[size_t(row)];
            if (isTerminalTaskStatus(task.status) && !m_tasksSent.contains(task.id))
                noteTask(task, m_store.now());
        }
    }
}

void LiveOtlpBatcher::noteAgent(const Agent &agent)
{
    AgentLive &st = m_agents[agent.id];
    if (st.rootTrace < 0) {
        if (!agent.placeholder)
            rootDue(agent.id);
        return; // its root will carry its state and usage as of then
    }
    // Activity against what was last sent: repeated notes of one change make one activity.
    bool active = false;
    qint64 atMs = 0;
    if (agent.state != st.state) {
        active = true;
        atMs = agent.lastStateChangeMs;
    }
    if (agent.tokensUsed != st.tokensUsed || agent.inputTokens != st.inputTokens || agent.outputTokens != st.outputTokens
        || !sameCost(agent.costUsd, st.costUsd)) {
        active = true;
        atMs = atMs > 0 ? std::min(atMs, agent.lastActivityMs) : agent.lastActivityMs;
    }
    if (agent.unregistered && !st.unregisteredSent) {
        active = true;
        atMs = atMs > 0 ? std::min(atMs, agent.unregisteredAtMs) : agent.unregisteredAtMs;
    }
    if (!agent.unregistered)
        st.unregisteredSent = false; // registered again: a later unregistration is news again
    if (active)
        noteActivity(agentWindow(agent.id), atMs > 0 ? atMs : m_store.now());
}

void LiveOtlpBatcher::noteAlerts(const std::vector<AlertChange> &changes)
{
    for (const AlertChange &c : changes) {
        Attributes a;
        a.text("map.alert.kind", alertKindName(c.alert.kind));
        a.text("map.alert.severity", alertSeverityName(c.alert.severity));
        a.text("map.alert.state", c.raised ? QStringLiteral("raised") : QStringLiteral("cleared"));
        a.cutText("map.alert.reason", c.alert.reason.toUtf8(), kMaxAlertReasonBytes);
        a.text("map.alert.subject", c.alert.subject);
        a.texts("map.alert.agents", c.alert.agents.mid(0, kMaxAlertAgents));
        JsonText event;
        appendEvent(event, "map.alert", c.atMs, a);
        int placed = 0;
        for (const QString &agentId : c.alert.agents) {
            if (placed >= kMaxAlertAgents)
                break;
            if (m_store.agentRow(agentId) < 0)
                continue;
            addEvent(agentWindow(agentId), event, c.atMs);
            ++placed;
        }
        if (placed == 0)
            addEvent(systemWindow(), event, c.atMs);
    }
}

void LiveOtlpBatcher::noteTask(const Task &task, qint64 openEndMs)
{
    m_tasksSent.insert(task.id);
    SpanText span;
    fillTaskSpan(span, task, m_store.taskHistory(task), openEndMs, kPartEventBytes);
    PendingTask pending;
    pending.taskId = task.id;
    const QString owner = !task.assigneeId.isEmpty() ? task.assigneeId : task.requesterId;
    if (!owner.isEmpty() && m_store.agentRow(owner) >= 0) {
        pending.ownerId = owner;
        rootDue(owner); // its root goes no later than the task: a receiver has the parent
    }
    span.appendTail(pending.tail);
    pending.events = span.eventCount;
    pending.name = span.name;
    pending.startMs = span.startMs;
    pending.endMs = span.endMs;
    m_pendingBytes += qsizetype(pending.tail.size());
    m_tasks.push_back(std::move(pending));
}

void LiveOtlpBatcher::rootDue(const QString &agentId)
{
    AgentLive &st = m_agents[agentId];
    if (st.rootTrace == m_trace || st.rootDue)
        return;
    st.rootDue = true;
    m_rootsDue.push_back(agentId);
}

LiveOtlpBatcher::Window &LiveOtlpBatcher::agentWindow(const QString &agentId)
{
    if (const auto it = m_windowOf.constFind(agentId); it != m_windowOf.cend())
        return m_windows[size_t(*it)];
    rootDue(agentId); // its parts need their parent
    Window window;
    window.agentId = agentId;
    window.name = m_store.agentName(agentId);
    m_windowOf.insert(agentId, int(m_windows.size()));
    m_windows.push_back(std::move(window));
    return m_windows.back();
}

LiveOtlpBatcher::Window &LiveOtlpBatcher::systemWindow()
{
    if (m_systemWindow < 0) {
        m_systemWindow = int(m_windows.size());
        Window window;
        window.name = QString::fromLatin1(kSystemSpanName);
        m_windows.push_back(std::move(window));
    }
    return m_windows[size_t(m_systemWindow)];
}

LiveOtlpBatcher::Window &LiveOtlpBatcher::senderWindow(const MessageLog &log, size_t row)
{
    const size_t nameRow = size_t(log.fromAgentNameRow(row));
    if (nameRow < m_windowOfSender.size() && m_windowOfSender[nameRow] >= 0)
        return m_windows[size_t(m_windowOfSender[nameRow])];
    const QString &sender = log.fromAgentId(row);
    if (sender.isEmpty() || m_store.agentRow(sender) < 0)
        return systemWindow(); // not kept: the sender may register later
    Window &window = agentWindow(sender);
    if (nameRow >= m_windowOfSender.size())
        m_windowOfSender.resize(nameRow + 1, -1);
    m_windowOfSender[nameRow] = int(&window - m_windows.data());
    return window;
}

// A part holds at most kOtlpMessagesPerSpan events and kPartEventBytes of them (at least one).
LiveOtlpBatcher::Chunk &LiveOtlpBatcher::chunkFor(Window &window, qsizetype eventBytes)
{
    if (window.chunks.empty() || window.chunks.back().count >= kOtlpMessagesPerSpan
        || qsizetype(window.chunks.back().events.size()) + 1 + eventBytes > kPartEventBytes)
        window.chunks.emplace_back();
    return window.chunks.back();
}

void LiveOtlpBatcher::addEvent(Window &window, const JsonText &event, qint64 timeMs)
{
    Chunk &chunk = chunkFor(window, qsizetype(event.size()));
    if (chunk.count)
        chunk.events += ',';
    chunk.events += event;
    noteEvent(window, chunk, qsizetype(event.size()), timeMs);
}

void LiveOtlpBatcher::noteActivity(Window &window, qint64 timeMs)
{
    if (timeMs > 0)
        window.startMs = std::min(window.startMs, timeMs);
}

// The file export's event, its payload cut past kMaxPayloadBytes; one still past kMaxEventBytes
// (escaping, ten thousand recipients) without its payload, and past that its id alone.
void LiveOtlpBatcher::addMessage(Window &window, size_t row)
{
    Attributes &a = m_messageAttributes; // one for every message: its allocation is kept
    for (const qsizetype payloadCap : {kMaxPayloadBytes, qsizetype(0)}) {
        a.clear();
        const qint64 timeMs = messageAttributes(a, m_store, row, m_literals, payloadCap);
        if (writeEvent(window, "map.message", timeMs, a, kMaxEventBytes))
            return;
    }
    a.clear();
    TextArena::Scratch scratch;
    a.cutText("map.message.id", m_store.messages().idUtf8(row, scratch), 1024);
    a.boolean("map.message.truncated", true);
    writeEvent(window, "map.message", m_store.messages().timestampMs(row), a, kPartEventBytes);
}

// Written straight into its part (a flood's every message: no copy through another buffer). The
// part is chosen by an estimate of the event's size; one that overfills it moves to a new part.
bool LiveOtlpBatcher::writeEvent(Window &window, const char *name, qint64 timeMs, const Attributes &a, qsizetype maxBytes)
{
    constexpr qsizetype kAroundAttributes = 100; // appendEvent's text around the attributes, at most
    Chunk *chunk = &chunkFor(window, a.size() + kAroundAttributes);
    const size_t mark = chunk->events.size();
    if (chunk->count)
        chunk->events += ',';
    const size_t at = chunk->events.size();
    appendEvent(chunk->events, name, timeMs, a);
    const qsizetype eventBytes = qsizetype(chunk->events.size() - at);
    if (eventBytes > maxBytes) {
        chunk->events.resize(mark);
        return false;
    }
    if (chunk->count && qsizetype(chunk->events.size()) > kPartEventBytes) { // the estimate was short
        JsonText event = chunk->events.substr(at);
        chunk->events.resize(mark);
        window.chunks.emplace_back();
        chunk = &window.chunks.back();
        chunk->events = std::move(event);
    }
    noteEvent(window, *chunk, eventBytes, timeMs);
    return true;
}

void LiveOtlpBatcher::noteEvent(Window &window, Chunk &chunk, qsizetype eventBytes, qint64 timeMs)
{
    ++chunk.count;
    if (timeMs > 0) {
        chunk.firstMs = std::min(chunk.firstMs, timeMs);
        chunk.lastMs = std::max(chunk.lastMs, timeMs);
    }
    m_pendingBytes += eventBytes + 1;
    noteActivity(window, timeMs);
}

// ---- taking -------------------------------------------------------------------------------

// The trace of a take() at `nowMs`: the first one, else the current one, or the next period's.
void LiveOtlpBatcher::useTraceOf(qint64 nowMs)
{
    const qint64 period = m_tracePeriodMs > 0 ? nowMs / m_tracePeriodMs : 0;
    if (m_traceId.isEmpty()) {
        const EventLog &events = m_store.events();
        if (events.firstRow() < events.size()) {
            m_traceId = traceIdOf(events); // the file export's
        } else { // no event yet: the file export's seed would be the same for every such session
            const ConnectionInfo &c = m_store.connection();
            m_traceId = hexId("map-inspector:live:" + c.url.toUtf8() + ':' + c.sessionId.toUtf8() + ':'
                                  + QByteArray::number(nowMs),
                              16);
        }
        m_firstTraceId = m_traceId;
        m_period = period;
        return;
    }
    if (period <= m_period) // the same period (or time went back: never an earlier trace again)
        return;
    m_period = period;
    ++m_trace;
    m_traceId = hexId(m_firstTraceId + ":period:" + QByteArray::number(period), 16);
    // Every root is unsent in this trace: those with something pending are due again, parents
    // (registered first) usually before their children.
    std::vector<QString> due;
    for (const Window &window : m_windows)
        if (!window.agentId.isEmpty())
            due.push_back(window.agentId);
    for (const PendingTask &task : m_tasks)
        if (!task.ownerId.isEmpty())
            due.push_back(task.ownerId);
    std::stable_sort(due.begin(), due.end(),
                     [this](const QString &a, const QString &b) { return m_store.agentRow(a) < m_store.agentRow(b); });
    for (const QString &id : due)
        rootDue(id);
}

std::vector<OtlpBody> LiveOtlpBatcher::take(qint64 nowMs, bool final)
{
    std::vector<OtlpBody> out;
    if (final)
        for (const Task &task : m_store.tasks())
            if (!isTerminalTaskStatus(task.status) && !m_tasksSent.contains(task.id))
                noteTask(task, nowMs);
    if (!m_rootsDue.empty() || !m_windows.empty() || !m_tasks.empty()) {
        useTraceOf(nowMs);
        Bodies bodies(m_options.serviceName, out);
        sendRoots(bodies, final, nowMs);
        for (Window &window : m_windows)
            sendParts(bodies, window, nowMs);
        sendTasks(bodies);
        bodies.flush();
        m_windows.clear();
        m_windowOf.clear();
        m_windowOfSender.clear();
        m_systemWindow = -1;
        m_tasks.clear();
        m_pendingBytes = 0;
    }
    m_lastTakeMs = nowMs;
    return out;
}

void LiveOtlpBatcher::sendRoots(Bodies &bodies, bool final, qint64 nowMs)
{
    std::vector<QString> later;
    const std::vector<Agent> &agents = m_store.agents();
    // In a later trace, a parent's root counts when it is in this trace: sent, or due (now).
    const auto rootHere = [this](const QString &agentId) {
        const auto it = m_agents.constFind(agentId);
        return it != m_agents.cend() && (it->rootTrace == m_trace || it->rootDue);
    };
    for (const QString &id : m_rootsDue) {
        AgentLive &st = m_agents[id];
        if (st.rootTrace == m_trace)
            continue;
        const int row = m_store.agentRow(id);
        if (row < 0 && !final) { // the store reset and does not know it (yet): wait for it
            later.push_back(id);
            continue;
        }
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = agentSpanId(m_traceId, id, 0);
        if (row >= 0) {
            const Agent &agent = agents[size_t(row)];
            // The parent's root only when it is in this trace (sent, or due now): a placeholder parent
            // that never did anything has no span, and a receiver would show a parent missing.
            if (!agent.parentId.isEmpty() && m_store.agentRow(agent.parentId) >= 0 && rootHere(agent.parentId))
                span.parentSpanId = agentSpanId(m_traceId, agent.parentId);
            span.name = agentSpanName(shownName(agent));
            agentAttributes(span.attributes, agent);
            span.startMs = agent.registeredAtMs > 0 ? agent.registeredAtMs : agent.knownSinceMs;
            span.endMs = agent.knownSinceMs;
            if (st.rootTrace >= 0) { // again, in a later trace: from the period's start to its first activity
                constexpr qint64 kNone = std::numeric_limits<qint64>::max();
                const auto window = m_windowOf.constFind(id);
                const qint64 firstMs = window != m_windowOf.cend() ? m_windows[size_t(*window)].startMs : kNone;
                span.startMs = std::min(std::max(span.startMs, m_period * m_tracePeriodMs), firstMs);
                span.endMs = firstMs != kNone ? firstMs : nowMs;
            }
            if (isFailedAgentState(agent.state)) {
                span.statusCode = 2;
                span.statusMessage = agent.lastErrorMessage;
            }
            // What the root says is the baseline of the parts' activity and usage.
            st.tokensUsed = agent.tokensUsed;
            st.inputTokens = agent.inputTokens;
            st.outputTokens = agent.outputTokens;
            st.costUsd = agent.costUsd;
            st.state = agent.state;
            st.unregisteredSent = agent.unregistered;
        } else { // the run ends without the store knowing it again: its identity alone
            Agent known;
            known.id = id;
            span.name = agentSpanName(id);
            agentIdentity(span.attributes, known);
            span.startMs = span.endMs = m_lastTakeMs > 0 ? m_lastTakeMs : nowMs;
        }
        bodies.add(span);
        st.rootTrace = m_trace;
        st.rootDue = false;
    }
    m_rootsDue.swap(later);
}

void LiveOtlpBatcher::sendParts(Bodies &bodies, Window &window, qint64 nowMs)
{
    const bool system = window.agentId.isEmpty();
    const QString id = system ? QString::fromLatin1(kSystemSpanName) : window.agentId;
    const int row = system ? -1 : m_store.agentRow(id);
    const Agent *agent = row >= 0 ? &m_store.agents()[size_t(row)] : nullptr;
    AgentLive *st = system ? nullptr : &m_agents[id];
    const qint64 windowStart = window.startMs != std::numeric_limits<qint64>::max() ? window.startMs
                               : m_lastTakeMs > 0                                   ? m_lastTakeMs
                                                                                    : nowMs;
    const QByteArray rootId = agentSpanId(m_traceId, id, 0);
    if (system && m_systemRootTrace != m_trace) { // as the file export's, without events: its parts hold them
        SpanText root;
        root.traceId = m_traceId;
        root.spanId = rootId;
        root.name = id;
        root.startMs = root.endMs = windowStart;
        bodies.add(root);
        m_systemRootTrace = m_trace;
    }
    const size_t parts = std::max<size_t>(1, window.chunks.size()); // activity without events: one part
    for (size_t k = 0; k < parts; ++k) {
        Chunk *chunk = k < window.chunks.size() ? &window.chunks[k] : nullptr;
        const bool last = k + 1 == parts;
        int &part = system ? m_systemNextPart : st->nextPart;
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = livePartSpanId(m_traceId, id, part);
        span.parentSpanId = rootId;
        Attributes &a = span.attributes;
        if (system) {
            span.name = id;
        } else if (agent) {
            span.name = agentSpanName(shownName(*agent));
            agentIdentity(a, *agent);
        } else { // the store reset and does not know it (yet)
            Agent known;
            known.id = id;
            known.name = window.name;
            span.name = agentSpanName(window.name);
            agentIdentity(a, known);
        }
        if (agent && last) {
            if (agent->inputTokens)
                if (const qint64 more = increase(*agent->inputTokens, st->inputTokens); more > 0)
                    a.integer("gen_ai.usage.input_tokens", more);
            if (agent->outputTokens)
                if (const qint64 more = increase(*agent->outputTokens, st->outputTokens); more > 0)
                    a.integer("gen_ai.usage.output_tokens", more);
            if (agent->tokensUsed)
                a.integer("map.usage.tokens_used", *agent->tokensUsed);
            if (agent->costUsd)
                a.real("map.cost.usd", *agent->costUsd);
            st->tokensUsed = agent->tokensUsed;
            st->inputTokens = agent->inputTokens;
            st->outputTokens = agent->outputTokens;
            st->costUsd = agent->costUsd;
            st->state = agent->state;
        }
        if (agent) {
            a.text("map.agent.state", agent->state);
            if (last && agent->unregistered) {
                a.boolean("map.agent.unregistered", true);
                st->unregisteredSent = true;
            }
            a.integer("map.agent.messages_sent", agent->messagesSent);
            a.integer("map.agent.messages_received", agent->messagesReceived);
        }
        a.integer("map.span.part", part);
        if (chunk) {
            span.events = std::move(chunk->events); // the window is done with once sent
            span.eventCount = chunk->count;
        }
        const bool chunkTimed = chunk && chunk->count > 0 && chunk->firstMs != std::numeric_limits<qint64>::max();
        span.startMs = k == 0 || !chunkTimed ? windowStart : chunk->firstMs;
        span.endMs = last || !chunkTimed ? nowMs : chunk->lastMs;
        // A server's stamps can run ahead of the model's now (before the clock offset is
        // measured) or the offset can move now back: the span still holds its events.
        if (chunkTimed) {
            span.startMs = std::min(span.startMs, chunk->firstMs);
            span.endMs = std::max(span.endMs, chunk->lastMs);
        }
        if (agent && last && isFailedAgentState(agent->state)) {
            span.statusCode = 2;
            span.statusMessage = agent->lastErrorMessage;
        }
        bodies.add(span);
        ++part;
    }
}

void LiveOtlpBatcher::sendTasks(Bodies &bodies)
{
    for (const PendingTask &task : m_tasks) {
        const QByteArray spanId = spanIdFor(m_traceId, "task", task.taskId);
        const QByteArray parentId = task.ownerId.isEmpty() ? QByteArray() : agentSpanId(m_traceId, task.ownerId);
        const bool added = bodies.add(
            [&](JsonText &out) {
                SpanText::appendHead(out, m_traceId, spanId, parentId);
                out += task.tail;
            },
            task.events);
        if (!added)
            bodies.add(stubSpan(m_traceId, spanId, parentId, task.name, task.startMs, task.endMs));
    }
}

} // namespace mapi
