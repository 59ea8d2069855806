// The model as OTLP/JSON (trace/Otlp.h says what goes where).
#include "trace/Otlp.h"

#include "common/Redaction.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mapi {

namespace {

// A 16-byte (trace) or 8-byte (span) id as lower-case hex: the start of a SHA-1 of `seed`,
// so that the same model exports the same ids (two exports of one trace compare).
QByteArray hexId(const QByteArray &seed, int bytes)
{
    QByteArray id = QCryptographicHash::hash(seed, QCryptographicHash::Sha1).left(bytes);
    if (id.count('\0') == id.size()) // all zero is "no id" in OTLP
        id[0] = 1;
    return id.toHex();
}

QByteArray nanos(qint64 ms)
{
    return '"' + QByteArray::number(std::max<qint64>(0, ms) * 1000000) + '"';
}

void appendString(QByteArray &out, const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    appendJsonString(out, utf8.constData(), utf8.size());
}

void appendString(QByteArray &out, const QByteArray &utf8)
{
    appendJsonString(out, utf8.constData(), utf8.size());
}

// The "attributes" list of a span or event, as KeyValue objects with AnyValue values.
class Attributes
{
public:
    // Every text passes through redactSecrets() (common/Redaction.h), as in every other export.
    void text(const char *key, const QString &value) { utf8(key, value.toUtf8()); }
    void utf8(const char *key, const QByteArray &value)
    {
        if (value.isEmpty())
            return;
        begin(key);
        m_out += "{\"stringValue\":";
        appendString(m_out, redactSecrets(value));
        m_out += "}}";
    }
    void integer(const char *key, qint64 value)
    {
        begin(key);
        m_out += "{\"intValue\":\"" + QByteArray::number(value) + "\"}}";
    }
    void real(const char *key, double value)
    {
        if (!std::isfinite(value))
            return;
        begin(key);
        m_out += "{\"doubleValue\":" + QByteArray::number(value, 'g', 17) + "}}";
    }
    void boolean(const char *key, bool value)
    {
        begin(key);
        m_out += value ? "{\"boolValue\":true}}" : "{\"boolValue\":false}}";
    }
    void texts(const char *key, const QStringList &values)
    {
        if (values.isEmpty())
            return;
        begin(key);
        m_out += "{\"arrayValue\":{\"values\":[";
        for (qsizetype i = 0; i < values.size(); ++i) {
            if (i)
                m_out += ',';
            m_out += "{\"stringValue\":";
            appendString(m_out, redactSecrets(values[i]));
            m_out += '}';
        }
        m_out += "]}}}";
    }
    bool isEmpty() const { return m_out.isEmpty(); }
    // ,"attributes":[…] (nothing when empty)
    void appendTo(QByteArray &out) const
    {
        if (m_out.isEmpty())
            return;
        out += ",\"attributes\":[";
        out += m_out;
        out += ']';
    }

private:
    void begin(const char *key)
    {
        if (!m_out.isEmpty())
            m_out += ',';
        m_out += "{\"key\":\"";
        m_out += key; // keys are literals of this file: no escaping needed
        m_out += "\",\"value\":";
    }
    QByteArray m_out;
};

struct SpanText
{
    QByteArray traceId;
    QByteArray spanId;
    QByteArray parentSpanId;
    QString name;
    qint64 startMs = 0;
    qint64 endMs = 0;
    Attributes attributes;
    QByteArray events; // comma-separated Event objects
    int eventCount = 0;
    int statusCode = 0; // 0 unset, 1 ok, 2 error
    QString statusMessage;

    void addEvent(const char *name, qint64 timeMs, const Attributes &attrs)
    {
        if (eventCount++)
            events += ',';
        events += "{\"timeUnixNano\":" + nanos(timeMs) + ",\"name\":\"" + name + '"';
        attrs.appendTo(events);
        events += '}';
    }

    void appendTo(QByteArray &out) const
    {
        out += "{\"traceId\":\"" + traceId + "\",\"spanId\":\"" + spanId + '"';
        if (!parentSpanId.isEmpty())
            out += ",\"parentSpanId\":\"" + parentSpanId + '"';
        out += ",\"name\":";
        appendString(out, redactSecrets(name)); // made of agent names and task types: text from the system
        out += ",\"kind\":1,\"startTimeUnixNano\":" + nanos(startMs) + ",\"endTimeUnixNano\":" + nanos(std::max(startMs, endMs));
        attributes.appendTo(out);
        if (eventCount) {
            out += ",\"events\":[";
            out += events;
            out += ']';
        }
        if (statusCode) {
            out += ",\"status\":{\"code\":" + QByteArray::number(statusCode);
            if (!statusMessage.isEmpty()) {
                out += ",\"message\":";
                appendString(out, redactSecrets(statusMessage));
            }
            out += '}';
        }
        out += '}';
    }
};

bool isTerminalTaskStatus(const QString &status)
{
    return status == QLatin1String("completed") || status == QLatin1String("failed") || status == QLatin1String("rejected")
        || status == QLatin1String("cancelled") || status == QLatin1String("canceled");
}

class OtlpWriter final : public ExportWriter
{
public:
    OtlpWriter(const SystemStore &store, QIODevice &out, const OtlpOptions &options, OtlpCounts *counts)
        : m_store(store)
        , m_out(out)
        , m_options(options)
        , m_counts(counts)
        , m_agentCount(store.agents().size()) // agents registered during the export are not in it
        , m_messageEnd(store.messages().size())
        , m_nextMessage(store.messages().firstRow())
        , m_sent(m_agentCount + 1)             // the last: messages of no known sender
        , m_taskCount(store.tasks().size())    // likewise the tasks
        , m_conversationCount(store.conversations().conversations().size())
    {
        // Checkpoints by agent: one span each (the agents of the checkpoints, in first-seen order).
        for (const Checkpoint &c : store.checkpoints().checkpoints())
            if (!m_checkpointAgents.contains(c.agentId))
                m_checkpointAgents << c.agentId;
        const EventLog &events = store.events();
        const size_t first = events.firstRow();
        QByteArray seed = "map-inspector:";
        if (first < events.size())
            seed += events.eventId(first).toUtf8() + ':' + QByteArray::number(events[first].timestampMs);
        seed += ':' + QByteArray::number(qulonglong(events.size()));
        m_traceId = hexId(seed, 16);
        m_total = qint64(m_messageEnd - m_nextMessage) * 2 + qint64(m_agentCount) + qint64(m_taskCount)
            + qint64(m_conversationCount) + qint64(m_checkpointAgents.size());
        if (m_counts)
            *m_counts = {};
    }

    bool writeSome(qint64 maxRows) override
    {
        qint64 budget = std::max<qint64>(1, maxRows);
        // 1. Each sender's message rows (rows are numbers: 4 bytes a message).
        for (; m_nextMessage < m_messageEnd && budget > 0; ++m_nextMessage, --budget, ++m_done) {
            const int row = m_store.agentRow(m_store.messages().fromAgentId(m_nextMessage));
            m_sent[row >= 0 && size_t(row) < m_agentCount ? size_t(row) : m_agentCount].push_back(int(m_nextMessage));
        }
        if (m_nextMessage < m_messageEnd)
            return true;
        // 2. Agents, with their messages; 3. tasks.
        const size_t agentCount = m_agentCount;
        while (budget > 0 && m_nextAgent <= agentCount) {
            const qint64 work = writeAgentPart(m_nextAgent, m_nextPart);
            budget -= work;
            m_done += work;
            if (m_nextPart == 0) // the agent is done
                ++m_nextAgent;
            if (!flushIfFull())
                return false;
        }
        const auto &tasks = m_store.tasks();
        while (budget > 0 && m_nextAgent > agentCount && m_nextTask < m_taskCount) {
            writeTask(tasks[m_nextTask++]);
            --budget;
            ++m_done;
            if (!flushIfFull())
                return false;
        }
        // 4. Conversations, with their turns; 5. each agent's checkpoints.
        while (budget > 0 && m_nextTask >= m_taskCount && m_nextConversation < m_conversationCount) {
            writeConversation(m_store.conversations().conversations()[m_nextConversation++]);
            --budget;
            ++m_done;
            if (!flushIfFull())
                return false;
        }
        while (budget > 0 && m_nextConversation >= m_conversationCount && m_nextCheckpointAgent < m_checkpointAgents.size()) {
            writeCheckpoints(m_checkpointAgents[m_nextCheckpointAgent++]);
            --budget;
            ++m_done;
            if (!flushIfFull())
                return false;
        }
        if (m_nextAgent <= agentCount || m_nextTask < m_taskCount || m_nextConversation < m_conversationCount
            || m_nextCheckpointAgent < m_checkpointAgents.size())
            return true;
        if (!flushLine())
            return false;
        m_done = m_total;
        return false;
    }

private:
    // An agent this export writes a span for (not one registered since it began).
    bool exported(const QString &agentId) const
    {
        const int row = m_store.agentRow(agentId);
        return row >= 0 && size_t(row) < m_agentCount;
    }

    QByteArray agentSpanId(const QString &agentId, int part = 0) const
    {
        return hexId(m_traceId + ":agent:" + agentId.toUtf8() + ':' + QByteArray::number(part), 8);
    }

    // Span `part` of agent row `row` (agents().size(): the system's span for messages of no
    // known sender): at most kOtlpMessagesPerSpan messages, so that a slice stays short however
    // many one agent sent. Sets `part` to the next one, or 0 when the agent is done. Returns the
    // rows of work done (its messages; 1 for the agent with its last part).
    qint64 writeAgentPart(size_t row, size_t &part)
    {
        const std::vector<int> &sent = m_sent[row];
        const bool system = row == m_agentCount;
        if (system && sent.empty())
            return 1;
        static const Agent kNone;
        const Agent &agent = system ? kNone : m_store.agents()[row];
        const QString id = system ? QStringLiteral("map.system") : agent.id;
        const MessageLog &messages = m_store.messages();
        if (part == 0) { // the agent's whole span: from its start (or first message) to its end (or last)
            m_agentStartMs = system ? std::numeric_limits<qint64>::max()
                                    : (agent.registeredAtMs > 0 ? agent.registeredAtMs : agent.knownSinceMs);
            m_agentEndMs = system ? 0 : (agent.unregistered ? agent.unregisteredAtMs : std::max(agent.lastActivityMs, m_store.now()));
            for (const int m : sent) {
                m_agentStartMs = std::min(m_agentStartMs, messages.timestampMs(size_t(m)));
                m_agentEndMs = std::max(m_agentEndMs, messages.timestampMs(size_t(m)));
            }
        }
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = agentSpanId(id, int(part));
        if (part > 0)
            span.parentSpanId = agentSpanId(id, 0);
        else if (!system && !agent.parentId.isEmpty() && exported(agent.parentId))
            span.parentSpanId = agentSpanId(agent.parentId);
        span.name = system ? QStringLiteral("map.system") : QStringLiteral("invoke_agent %1").arg(agent.name.isEmpty() ? agent.id : agent.name);
        // This part: from the message after the previous part's, up to kOtlpMessagesPerSpan
        // messages or kPartBytes of them, whichever comes first (large payloads).
        const size_t from = part == 0 ? 0 : m_nextMessageOfAgent;
        size_t to = from;
        if (!system)
            agentAttributes(span.attributes, agent);
        if (part > 0)
            span.attributes.integer("map.span.part", qint64(part));
        while (to < sent.size() && to - from < size_t(kOtlpMessagesPerSpan) && span.events.size() < kPartBytes)
            addMessage(span, size_t(sent[to++]));
        const bool last = to >= sent.size();
        span.startMs = part == 0 ? m_agentStartMs : messages.timestampMs(size_t(sent[from]));
        span.endMs = last ? m_agentEndMs : messages.timestampMs(size_t(sent[to]));
        m_nextMessageOfAgent = to;
        if (!system && part == 0 && isFailedState(agent.state)) {
            span.statusCode = 2;
            span.statusMessage = agent.lastErrorMessage;
        }
        span.appendTo(spanBuffer());
        if (m_counts)
            ++m_counts->agentSpans;
        const qint64 work = qint64(to - from);
        ++part;
        if (!last)
            return work;
        part = 0;
        std::vector<int>().swap(m_sent[row]); // done with its rows
        return work + 1;
    }

    static bool isFailedState(const QString &state)
    {
        return state == QLatin1String("failed") || state == QLatin1String("error") || state == QLatin1String("crashed");
    }

    void agentAttributes(Attributes &a, const Agent &agent) const
    {
        a.text("gen_ai.operation.name", QStringLiteral("invoke_agent"));
        QString provider;
        if (agent.metadata.is_object())
            if (const auto it = agent.metadata.find("provider"); it != agent.metadata.end() && it->is_string())
                provider = toQString(*it);
        a.text("gen_ai.provider.name", provider.isEmpty() ? QStringLiteral("map") : provider);
        a.text("gen_ai.agent.id", agent.id);
        a.text("gen_ai.agent.name", agent.name.isEmpty() ? agent.id : agent.name);
        if (agent.inputTokens)
            a.integer("gen_ai.usage.input_tokens", *agent.inputTokens);
        if (agent.outputTokens)
            a.integer("gen_ai.usage.output_tokens", *agent.outputTokens);
        if (agent.tokensUsed)
            a.integer("map.usage.tokens_used", *agent.tokensUsed);
        if (agent.costUsd)
            a.real("map.cost.usd", *agent.costUsd);
        a.text("map.agent.role", agent.role);
        a.text("map.agent.state", agent.state);
        a.text("map.agent.parent_id", agent.parentId);
        a.text("map.agent.session_id", agent.sessionId);
        QStringList scopes;
        for (const auto &scope : agent.scopes)
            scopes << QString(scope);
        a.texts("map.agent.scopes", scopes);
        if (agent.unregistered)
            a.boolean("map.agent.unregistered", true);
        a.integer("map.agent.messages_sent", agent.messagesSent);
        a.integer("map.agent.messages_received", agent.messagesReceived);
    }

    void addMessage(SpanText &span, size_t row)
    {
        const Message m = m_store.messages()[row];
        Attributes a;
        a.text("map.message.id", m.id);
        a.texts("map.message.to", m.toAgentIds);
        a.text("map.message.address", m.toDisplay);
        a.text("map.message.scope_id", m.scopeId);
        a.text("map.message.status", m.status);
        a.text("map.message.correlation_id", m.correlationId);
        a.text("map.message.task_id", m.taskId);
        if (m.priority)
            a.integer("map.message.priority", *m.priority);
        a.utf8("map.message.payload", m_store.messagePayload(int(row)));
        span.addEvent("map.message", m.timestampMs, a);
        if (m_counts)
            ++m_counts->messageEvents;
    }

    void writeTask(const Task &task)
    {
        const std::vector<TaskTransition> history = m_store.taskHistory(task);
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = hexId(m_traceId + ":task:" + task.id.toUtf8(), 8);
        const QString owner = !task.assigneeId.isEmpty() ? task.assigneeId : task.requesterId;
        if (!owner.isEmpty() && exported(owner))
            span.parentSpanId = agentSpanId(owner);
        span.name = QStringLiteral("task %1").arg(task.type.isEmpty() ? task.id : task.type);
        span.startMs = task.createdAtMs;
        span.endMs = isTerminalTaskStatus(task.status) ? task.updatedAtMs : std::max(task.updatedAtMs, m_store.now());
        span.attributes.text("map.task.id", task.id);
        span.attributes.text("map.task.type", task.type);
        span.attributes.text("map.task.status", task.status);
        span.attributes.text("map.task.requester_id", task.requesterId);
        span.attributes.text("map.task.assignee_id", task.assigneeId);
        if (task.progress)
            span.attributes.real("map.task.progress", *task.progress);
        QString lastDetail;
        for (const TaskTransition &t : history) {
            Attributes a;
            a.text("map.task.status", t.status);
            a.text("map.agent.id", t.agentId);
            a.text("map.task.detail", t.detail);
            a.boolean("map.task.from_message", t.messageRow >= 0);
            span.addEvent("map.task.transition", t.timeMs, a);
            if (!t.detail.isEmpty())
                lastDetail = t.detail;
        }
        if (task.status == QLatin1String("failed") || task.status == QLatin1String("rejected")) {
            span.statusCode = 2;
            span.statusMessage = lastDetail;
        }
        span.appendTo(spanBuffer());
        if (m_counts)
            ++m_counts->taskSpans;
    }

    // A span of this trace named `name`, its id made from `kind` and `id` (stable across exports).
    SpanText spanFor(const char *kind, const QString &id, const QString &name) const
    {
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = hexId(m_traceId + ':' + kind + ':' + id.toUtf8(), 8);
        span.name = name;
        return span;
    }

    // A conversation: a span from its creation to its close (or now), its turns as events.
    void writeConversation(const Conversation &c)
    {
        SpanText span = spanFor("conversation", c.id, QStringLiteral("conversation %1").arg(c.subject.isEmpty() ? c.id : c.subject));
        span.startMs = c.createdMs > 0 ? c.createdMs : (c.turns.empty() ? c.updatedMs : c.turns.front().timeMs);
        span.endMs = c.closedMs > 0 ? c.closedMs : std::max(c.updatedMs, m_store.now());
        span.attributes.text("map.conversation.id", c.id);
        span.attributes.text("map.conversation.type", c.type);
        span.attributes.text("map.conversation.subject", c.subject);
        span.attributes.text("map.conversation.status", c.status);
        span.attributes.text("map.conversation.close_reason", c.closeReason);
        QStringList participants;
        for (const SystemStore::ParticipantRow &p : m_store.conversationParticipants(c))
            participants << p.name;
        span.attributes.texts("map.conversation.participants", participants);
        for (const ConversationTurn &t : c.turns) {
            Attributes a;
            a.text("map.turn.id", t.id);
            a.text("map.turn.participant", m_store.participantName(t.participant));
            a.text("map.turn.content_type", t.contentType);
            a.text("map.turn.thread_id", t.threadId);
            a.text("map.turn.in_reply_to", t.inReplyTo);
            a.text("map.turn.intercepted_message_id", t.interceptedMessageId);
            a.text("map.turn.text", t.text);
            span.addEvent("map.conversation.turn", t.timeMs, a);
        }
        span.appendTo(spanBuffer());
        if (m_counts)
            ++m_counts->conversationSpans;
    }

    // An agent's trajectory: a span under the agent's, its checkpoints as events.
    void writeCheckpoints(const QString &agentId)
    {
        SpanText span = spanFor("trajectory", agentId, QStringLiteral("trajectory %1").arg(m_store.agentName(agentId)));
        if (exported(agentId))
            span.parentSpanId = agentSpanId(agentId);
        // Not gen_ai.agent.id: read back (OtlpImporter), an agent span inside its own agent's
        // would be a task; under the agent's span it belongs to that agent anyway.
        span.attributes.text("map.checkpoint.agent_id", agentId);
        const std::vector<const Checkpoint *> checkpoints = m_store.checkpoints().of(agentId);
        span.startMs = checkpoints.front()->timeMs;
        span.endMs = checkpoints.back()->timeMs;
        for (const Checkpoint *c : checkpoints) {
            Attributes a;
            a.text("map.checkpoint.id", c->id);
            a.text("map.checkpoint.label", c->label);
            a.text("map.checkpoint.work_session", c->workSessionId);
            a.text("map.checkpoint.metadata", c->metadata);
            span.addEvent("map.trajectory.checkpoint", c->timeMs, a);
        }
        span.appendTo(spanBuffer());
        if (m_counts)
            ++m_counts->trajectorySpans;
    }

    QByteArray &spanBuffer()
    {
        if (!m_spans.isEmpty())
            m_spans += ',';
        return m_spans;
    }

    // One request per line, of about kLineBytes: small enough for any reader, few enough lines.
    static constexpr qsizetype kLineBytes = 4 << 20;
    bool flushIfFull() { return m_spans.size() < kLineBytes || flushLine(); }

    bool flushLine()
    {
        if (m_spans.isEmpty())
            return true;
        QByteArray line = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":";
        appendString(line, redactSecrets(m_options.serviceName)); // a text attribute like the others (callers pass the URL)
        line += "}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"map-inspector\",\"version\":\"" MAPI_VERSION "\"},\"spans\":[";
        line += m_spans;
        line += "],\"schemaUrl\":\"";
        line += kOtlpSchemaUrl;
        line += "\"}],\"schemaUrl\":\"";
        line += kOtlpSchemaUrl;
        line += "\"}]}\n";
        m_spans.clear();
        if (m_out.write(line) != line.size()) {
            m_error = m_out.errorString();
            return false;
        }
        if (m_counts)
            ++m_counts->lines;
        return true;
    }

    const SystemStore &m_store;
    QIODevice &m_out;
    OtlpOptions m_options;
    OtlpCounts *m_counts;
    QByteArray m_traceId;
    size_t m_agentCount;
    size_t m_messageEnd;
    size_t m_nextMessage;
    std::vector<std::vector<int>> m_sent; // per agent row: the rows of the messages it sent
    size_t m_taskCount;
    size_t m_nextAgent = 0;
    size_t m_nextPart = 0;  // of m_nextAgent's spans
    size_t m_nextMessageOfAgent = 0; // index into its sent messages where the next part starts
    // A part's events stop growing past this: with a line flushed at kLineBytes, a line stays
    // below 2 × 4 MiB plus one message, far from the reader's 16 MiB frame limit.
    static constexpr qsizetype kPartBytes = 4 << 20;
    qint64 m_agentStartMs = 0; // m_nextAgent's whole span
    qint64 m_agentEndMs = 0;
    size_t m_nextTask = 0;
    size_t m_conversationCount;
    size_t m_nextConversation = 0;
    QStringList m_checkpointAgents;
    qsizetype m_nextCheckpointAgent = 0;
    QByteArray m_spans; // the spans of the line being filled, comma-separated
};

} // namespace

std::unique_ptr<ExportWriter> makeOtlpWriter(const SystemStore &store, QIODevice &out, const OtlpOptions &options, OtlpCounts *counts)
{
    return std::make_unique<OtlpWriter>(store, out, options, counts);
}

bool writeOtlpJson(const SystemStore &store, const QString &path, const OtlpOptions &options, OtlpCounts *counts, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    const std::unique_ptr<ExportWriter> writer = makeOtlpWriter(store, file, options, counts);
    while (writer->writeSome(1 << 16)) {
    }
    if (!writer->error().isEmpty() || !file.commit()) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, writer->error().isEmpty() ? file.errorString() : writer->error());
        return false;
    }
    return true;
}

} // namespace mapi
