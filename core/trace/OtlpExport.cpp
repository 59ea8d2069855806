// The model as OTLP/JSON (trace/Otlp.h says what goes where).
#include "trace/Otlp.h"

#include "trace/OtlpJson.h"

#include <QFileInfo>
#include <QSaveFile>
#include <QTemporaryFile>

#include <algorithm>
#include <limits>

namespace mapi {

namespace {

using namespace otlp;

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
        m_traceId = traceIdOf(store.events()); // the live export's too (telemetry/LiveOtlpBatcher)
        m_total = qint64(m_messageEnd - m_nextMessage) * 2 + qint64(m_agentCount) + qint64(m_taskCount)
            + qint64(m_conversationCount) + qint64(m_checkpointAgents.size());
        if (m_counts)
            *m_counts = {};
    }

    bool writeSome(qint64 maxRows) override
    {
        qint64 budget = std::max<qint64>(1, maxRows);
        // 1. Each message's event, in the log's order (the trace file's: a held trace's payloads
        // are read chunk after chunk), into the spool; its place there noted under its sender.
        for (; m_nextMessage < m_messageEnd && budget > 0; ++m_nextMessage, --budget, ++m_done) {
            const int row = m_store.agentRow(m_store.messages().fromAgentId(m_nextMessage));
            SpooledEvent spooled;
            if (!spoolMessage(m_nextMessage, spooled))
                return false;
            m_sent[row >= 0 && size_t(row) < m_agentCount ? size_t(row) : m_agentCount].push_back(spooled);
        }
        if (m_nextMessage < m_messageEnd)
            return true;
        if (!m_spoolRead && !openSpoolForReading())
            return false;
        // 2. Agents, with their messages; 3. tasks.
        const size_t agentCount = m_agentCount;
        while (budget > 0 && m_nextAgent <= agentCount) {
            const qint64 work = writeAgentPart(m_nextAgent, m_nextPart);
            if (!m_error.isEmpty())
                return false;
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

    QByteArray agentSpanId(const QString &agentId, int part = 0) const { return otlp::agentSpanId(m_traceId, agentId, part); }

    // Span `part` of agent row `row` (agents().size(): the system's span for messages of no
    // known sender): at most kOtlpMessagesPerSpan messages, so that a slice stays short however
    // many one agent sent. Sets `part` to the next one, or 0 when the agent is done. Returns the
    // rows of work done (its messages; 1 for the agent with its last part).
    qint64 writeAgentPart(size_t row, size_t &part)
    {
        const std::vector<SpooledEvent> &sent = m_sent[row];
        const bool system = row == m_agentCount;
        if (system && sent.empty())
            return 1;
        static const Agent kNone;
        const Agent &agent = system ? kNone : m_store.agents()[row];
        const QString id = system ? QStringLiteral("map.system") : agent.id;
        if (part == 0) { // the agent's whole span: from its start (or first message) to its end (or last)
            m_agentStartMs = system ? std::numeric_limits<qint64>::max()
                                    : (agent.registeredAtMs > 0 ? agent.registeredAtMs : agent.knownSinceMs);
            m_agentEndMs = system ? 0 : (agent.unregistered ? agent.unregisteredAtMs : std::max(agent.lastActivityMs, m_store.now()));
            for (const SpooledEvent &m : sent) {
                m_agentStartMs = std::min(m_agentStartMs, m.timeMs);
                m_agentEndMs = std::max(m_agentEndMs, m.timeMs);
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
        while (to < sent.size() && to - from < size_t(kOtlpMessagesPerSpan) && qsizetype(span.events.size()) < kPartBytes)
            addMessage(span, sent[to++]);
        const bool last = to >= sent.size();
        span.startMs = part == 0 ? m_agentStartMs : sent[from].timeMs;
        span.endMs = last ? m_agentEndMs : sent[to].timeMs;
        m_nextMessageOfAgent = to;
        if (!system && part == 0 && isFailedAgentState(agent.state)) {
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
        std::vector<SpooledEvent>().swap(m_sent[row]); // done with its events
        return work + 1;
    }

    // The spool: every message's "map.message" event, encoded in the order of the log, in a
    // temporary file (about the size of the messages in the export), read back by sender. Reading
    // the payloads sender by sender instead would seek all over a held trace (a chunk decompressed
    // per message: 65.7 s for 400,000 messages, docs/benchmarks.md).
    // Where no temporary file can be made (or for an event of 4 GiB), an event is encoded from
    // the store when its span is written, as before the spool: slower on a held trace, same bytes.
    struct SpooledEvent
    {
        qint64 offset = -1; // in the spool; -1: encoded from the store when written
        qint64 timeMs = 0;
        quint32 bytes = 0;
        int row = 0;        // the message's row (the store's log)
    };

    bool spoolMessage(size_t row, SpooledEvent &spooled)
    {
        spooled.row = int(row);
        if (!m_spool && !m_noSpool) {
            m_spool = std::make_unique<QTemporaryFile>();
            if (!m_spool->open()) {
                m_spool.reset();
                m_noSpool = true;
            }
        }
        m_messageAttributes.clear();
        spooled.timeMs = messageAttributes(m_messageAttributes, m_store, row, m_literals);
        if (m_noSpool)
            return true;
        const size_t before = m_spoolBuffer.size();
        appendEvent(m_spoolBuffer, "map.message", spooled.timeMs, m_messageAttributes);
        if (m_spoolBuffer.size() - before > std::numeric_limits<quint32>::max()) {
            m_spoolBuffer.resize(before);
            return true;
        }
        spooled.offset = m_spoolBytes + qint64(before);
        spooled.bytes = quint32(m_spoolBuffer.size() - before);
        return m_spoolBuffer.size() < kSpoolBufferBytes || flushSpool();
    }

    bool flushSpool()
    {
        if (m_spool->write(m_spoolBuffer.data(), qint64(m_spoolBuffer.size())) != qint64(m_spoolBuffer.size())) {
            m_error = QStringLiteral("the export's temporary file: %1").arg(m_spool->errorString());
            return false;
        }
        m_spoolBytes += qint64(m_spoolBuffer.size());
        m_spoolBuffer.clear();
        return true;
    }

    // The spool read back event by event, unbuffered (a read per event; not mapped: the mapped
    // pages of a spool of hundreds of megabytes would count as the process's memory).
    bool openSpoolForReading()
    {
        m_spoolRead = true;
        if (!m_spool)
            return true; // no message
        if (!flushSpool()) // flushSpool() said why
            return false;
        std::string().swap(m_spoolBuffer);
        m_spool->close(); // kept on disk until the writer goes (QTemporaryFile's autoRemove)
        m_spoolReader.setFileName(m_spool->fileName());
        if (!m_spoolReader.open(QIODevice::ReadOnly | QIODevice::Unbuffered)) {
            m_error = QStringLiteral("the export's temporary file: %1").arg(m_spoolReader.errorString());
            return false;
        }
        return true;
    }

    void addMessage(SpanText &span, const SpooledEvent &spooled)
    {
        if (spooled.offset < 0) {
            m_messageAttributes.clear();
            const qint64 timeMs = messageAttributes(m_messageAttributes, m_store, size_t(spooled.row), m_literals);
            span.addEvent("map.message", timeMs, m_messageAttributes);
        } else {
            const size_t mark = span.events.size();
            if (span.eventCount)
                span.events += ',';
            const size_t at = span.events.size();
            span.events.resize(at + spooled.bytes);
            if (!m_spoolReader.seek(spooled.offset)
                || m_spoolReader.read(span.events.data() + at, spooled.bytes) != qint64(spooled.bytes)) {
                span.events.resize(mark);
                m_error = QStringLiteral("the export's temporary file: %1").arg(m_spoolReader.errorString());
                return;
            }
            ++span.eventCount;
        }
        if (m_counts)
            ++m_counts->messageEvents;
    }

    void writeTask(const Task &task)
    {
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = spanIdFor(m_traceId, "task", task.id);
        const QString owner = !task.assigneeId.isEmpty() ? task.assigneeId : task.requesterId;
        if (!owner.isEmpty() && exported(owner))
            span.parentSpanId = agentSpanId(owner);
        fillTaskSpan(span, task, m_store.taskHistory(task), m_store.now());
        span.appendTo(spanBuffer());
        if (m_counts)
            ++m_counts->taskSpans;
    }

    // A span of this trace named `name`, its id made from `kind` and `id` (stable across exports).
    SpanText spanFor(const char *kind, const QString &id, const QString &name) const
    {
        SpanText span;
        span.traceId = m_traceId;
        span.spanId = spanIdFor(m_traceId, kind, id);
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

    // The line being filled, for one more span: its request's head first, else a comma.
    JsonText &spanBuffer()
    {
        if (m_line.empty()) {
            appendRequestHead(m_line, m_options.serviceName);
            m_lineHeadBytes = qsizetype(m_line.size());
        } else {
            m_line += ',';
        }
        return m_line;
    }

    // One request per line, of about kLineBytes: small enough for any reader, few enough lines.
    static constexpr qsizetype kLineBytes = 4 << 20;
    bool flushIfFull() { return qsizetype(m_line.size()) - m_lineHeadBytes < kLineBytes || flushLine(); } // its spans' bytes

    bool flushLine()
    {
        if (m_line.empty())
            return true;
        appendRequestTail(m_line);
        m_line += '\n';
        const qint64 written = m_out.write(m_line.data(), qint64(m_line.size()));
        const bool complete = written == qint64(m_line.size());
        m_line.clear();
        if (!complete) {
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
    std::vector<std::vector<SpooledEvent>> m_sent; // per agent row: the events of the messages it sent (24 B each)
    std::unique_ptr<QTemporaryFile> m_spool;        // created at the first message
    bool m_noSpool = false;                         // none could be made: events encoded from the store
    static constexpr size_t kSpoolBufferBytes = size_t(1) << 20;
    JsonText m_spoolBuffer;                         // written to the spool a megabyte at a time
    qint64 m_spoolBytes = 0;                        // written to the spool so far
    bool m_spoolRead = false;                       // phase 1 is over
    QFile m_spoolReader;                            // the spool, read back (closed before the spool goes: declared after it)
    Attributes m_messageAttributes;                 // reused for every message
    TextLiterals m_literals;                        // the messages' names, each encoded once
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
    JsonText m_line; // the line being filled: its request's head and spans so far (comma-separated)
    qsizetype m_lineHeadBytes = 0;
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
