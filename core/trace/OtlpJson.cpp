// The shared pieces of OTLP/JSON (trace/OtlpJson.h); moved out of OtlpExport.cpp unchanged, so
// that the file export writes what it wrote before.
#include "trace/OtlpJson.h"

#include "common/JsonEscape.h"
#include "common/Redaction.h"

#include <QCryptographicHash>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace mapi::otlp {

QByteArray hexId(const QByteArray &seed, int bytes)
{
    QByteArray id = QCryptographicHash::hash(seed, QCryptographicHash::Sha1).left(bytes);
    if (id.count('\0') == id.size()) // all zero is "no id" in OTLP
        id[0] = 1;
    return id.toHex();
}

void appendNanos(JsonText &out, qint64 ms)
{
    char digits[26];
    digits[0] = '"';
    char *end = std::to_chars(digits + 1, digits + sizeof digits - 1, std::max<qint64>(0, ms) * 1000000).ptr;
    *end++ = '"';
    out.append(digits, size_t(end - digits));
}

void appendString(JsonText &out, const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    appendJsonStringTo(out, utf8.constData(), size_t(utf8.size()));
}

QByteArrayView cutUtf8(QByteArrayView text, qsizetype maxBytes)
{
    if (text.size() <= maxBytes)
        return text;
    qsizetype end = std::max<qsizetype>(0, maxBytes);
    while (end > 0 && (quint8(text[end]) & 0xC0) == 0x80) // text[end] starts the first character left out
        --end;
    return text.first(end);
}

QByteArray cutUtf8(const QByteArray &text, qsizetype maxBytes)
{
    return text.size() <= maxBytes ? text : cutUtf8(QByteArrayView(text), maxBytes).toByteArray();
}

QByteArray traceIdSeed(const EventLog &events)
{
    const size_t first = events.firstRow();
    QByteArray seed = "map-inspector:";
    if (first < events.size())
        seed += events.eventId(first).toUtf8() + ':' + QByteArray::number(events[first].timestampMs);
    seed += ':' + QByteArray::number(qulonglong(events.size()));
    return seed;
}

QByteArray spanIdFor(const QByteArray &traceId, const char *kind, const QString &id)
{
    return hexId(traceId + ':' + kind + ':' + id.toUtf8(), 8);
}

QByteArray agentSpanId(const QByteArray &traceId, const QString &agentId, int part)
{
    return hexId(traceId + ":agent:" + agentId.toUtf8() + ':' + QByteArray::number(part), 8);
}

// ---- TextLiterals -------------------------------------------------------------------------

const std::string &TextLiterals::of(const QString &text)
{
    auto it = m_entries.find(text.constData());
    if (it != m_entries.end() && it->text.size() == text.size())
        return it->literal;
    if (it == m_entries.end() && m_entries.size() >= kMaxEntries) {
        m_entries.clear();
        it = m_entries.end();
    }
    Entry entry{text, std::string()};
    const QByteArray redacted = redactSecrets(text.toUtf8());
    appendJsonStringTo(entry.literal, redacted.constData(), size_t(redacted.size()));
    if (it != m_entries.end()) {
        *it = std::move(entry);
        return it->literal;
    }
    return m_entries.insert(text.constData(), std::move(entry))->literal;
}

// ---- Attributes ---------------------------------------------------------------------------

void Attributes::text(const char *key, const QString &value, TextLiterals &literals)
{
    if (value.isEmpty())
        return;
    begin(key);
    m_out += "{\"stringValue\":";
    m_out += literals.of(value);
    m_out += "}}";
}

void Attributes::text(const char *key, const QString &value)
{
    if (value.isEmpty())
        return;
    // ASCII (ids, states, addresses: nearly every text) converted into a buffer kept between
    // calls; anything else through toUtf8(). Redacted either way.
    const qsizetype n = value.size();
    m_utf8.resize(n);
    char *out = m_utf8.data();
    const QChar *in = value.constData();
    for (qsizetype i = 0; i < n; ++i) {
        if (in[i].unicode() >= 0x80) {
            utf8(key, value.toUtf8());
            return;
        }
        out[i] = char(in[i].unicode());
    }
    utf8(key, m_utf8);
}

void Attributes::utf8(const char *key, QByteArrayView value)
{
    if (value.isEmpty())
        return;
    begin(key);
    if (mayNeedRedaction(value))
        stringValue(redactSecrets(value.toByteArray()));
    else
        stringValue(value);
}

bool Attributes::cutText(const char *key, QByteArrayView value, qsizetype maxBytes)
{
    if (value.isEmpty())
        return false;
    // Redacted before it is cut: a cut could leave a secret's start that the rules no longer see.
    QByteArray redactedCopy;
    if (mayNeedRedaction(value)) {
        redactedCopy = redactSecrets(value.toByteArray());
        value = redactedCopy;
    }
    const QByteArrayView cut = cutUtf8(value, maxBytes);
    if (!cut.isEmpty()) {
        begin(key);
        stringValue(cut);
    }
    return cut.size() < value.size();
}

void Attributes::integer(const char *key, qint64 value)
{
    begin(key);
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    m_out += "{\"intValue\":\"";
    m_out.append(digits, size_t(end - digits));
    m_out += "\"}}";
}

void Attributes::real(const char *key, double value)
{
    if (!std::isfinite(value))
        return;
    begin(key);
    m_out += "{\"doubleValue\":";
    append(m_out, QByteArray::number(value, 'g', 17));
    m_out += "}}";
}

void Attributes::boolean(const char *key, bool value)
{
    begin(key);
    m_out += value ? "{\"boolValue\":true}}" : "{\"boolValue\":false}}";
}

void Attributes::texts(const char *key, const QStringList &values)
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

void Attributes::appendRedacted(const QString &text)
{
    appendString(m_out, redactSecrets(text));
}

void Attributes::appendTo(JsonText &out) const
{
    if (m_out.empty())
        return;
    out += ",\"attributes\":[";
    out += m_out;
    out += ']';
}

void Attributes::begin(const char *key)
{
    if (!m_out.empty())
        m_out += ',';
    m_out += "{\"key\":\"";
    m_out += key; // keys are literals of the exports: no escaping needed
    m_out += "\",\"value\":";
}

void Attributes::stringValue(QByteArrayView redacted)
{
    m_out += "{\"stringValue\":";
    appendJsonStringTo(m_out, redacted.data(), size_t(redacted.size()));
    m_out += "}}";
}

// ---- events and spans ---------------------------------------------------------------------

void appendEvent(JsonText &out, const char *name, qint64 timeMs, const Attributes &attrs)
{
    out += "{\"timeUnixNano\":";
    appendNanos(out, timeMs);
    out += ",\"name\":\"";
    out += name;
    out += '"';
    attrs.appendTo(out);
    out += '}';
}

void SpanText::addEvent(const char *name, qint64 timeMs, const Attributes &attrs)
{
    if (eventCount++)
        events += ',';
    appendEvent(events, name, timeMs, attrs);
}

void SpanText::appendTo(JsonText &out) const
{
    appendHead(out, traceId, spanId, parentSpanId);
    appendTail(out);
}

void SpanText::appendHead(JsonText &out, const QByteArray &traceId, const QByteArray &spanId, const QByteArray &parentSpanId)
{
    out += "{\"traceId\":\"";
    append(out, traceId);
    out += "\",\"spanId\":\"";
    append(out, spanId);
    out += '"';
    if (!parentSpanId.isEmpty()) {
        out += ",\"parentSpanId\":\"";
        append(out, parentSpanId);
        out += '"';
    }
}

void SpanText::appendTail(JsonText &out) const
{
    out += ",\"name\":";
    appendString(out, redactSecrets(name)); // made of agent names and task types: text from the system
    out += ",\"kind\":1,\"startTimeUnixNano\":";
    appendNanos(out, startMs);
    out += ",\"endTimeUnixNano\":";
    appendNanos(out, std::max(startMs, endMs));
    attributes.appendTo(out);
    if (eventCount) {
        out += ",\"events\":[";
        out += events;
        out += ']';
    }
    if (statusCode) {
        out += ",\"status\":{\"code\":";
        out += std::to_string(statusCode);
        if (!statusMessage.isEmpty()) {
            out += ",\"message\":";
            appendString(out, redactSecrets(statusMessage));
        }
        out += '}';
    }
    out += '}';
}

bool isTerminalTaskStatus(const QString &status)
{
    return status == QLatin1String("completed") || status == QLatin1String("failed") || status == QLatin1String("rejected")
        || status == QLatin1String("cancelled") || status == QLatin1String("canceled");
}

bool isFailedAgentState(const QString &state)
{
    return state == QLatin1String("failed") || state == QLatin1String("error") || state == QLatin1String("crashed");
}

// ---- the model's things -------------------------------------------------------------------

void agentIdentity(Attributes &a, const Agent &agent)
{
    a.text("gen_ai.operation.name", QStringLiteral("invoke_agent"));
    QString provider;
    if (agent.metadata.is_object())
        if (const auto it = agent.metadata.find("provider"); it != agent.metadata.end() && it->is_string())
            provider = toQString(*it);
    a.text("gen_ai.provider.name", provider.isEmpty() ? QStringLiteral("map") : provider);
    a.text("gen_ai.agent.id", agent.id);
    a.text("gen_ai.agent.name", agent.name.isEmpty() ? agent.id : agent.name);
}

void agentAttributes(Attributes &a, const Agent &agent)
{
    agentIdentity(a, agent);
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

qint64 messageAttributes(Attributes &a, const SystemStore &store, size_t row, TextLiterals &literals,
                         qsizetype payloadMaxBytes)
{
    // Field by field from the log (a whole Message would copy a dozen texts and the payload for
    // each of a flood's messages: the live export's path). The log's interned names (one string
    // per name: MessageLog's NameTable) go through `literals`.
    const MessageLog &log = store.messages();
    TextArena::Scratch scratch;
    a.utf8("map.message.id", log.idUtf8(row, scratch));
    a.texts(
        "map.message.to", log.recipientCount(row), [&](int i) -> const QString & { return log.recipient(row, i); },
        literals);
    a.text("map.message.address", log.toDisplay(row), literals);
    a.text("map.message.scope_id", log.scopeId(row), literals);
    a.text("map.message.status", log.status(row), literals);
    a.utf8("map.message.correlation_id", log.correlationIdUtf8(row, scratch));
    a.text("map.message.task_id", log.taskId(row), literals);
    if (const std::optional<int> priority = log.priority(row))
        a.integer("map.message.priority", *priority);
    QByteArray payloadRead; // a payload read from its frame; a kept text is read in place
    const QByteArrayView payload = store.messagePayloadView(int(row), payloadRead);
    if (payloadMaxBytes < 0)
        a.utf8("map.message.payload", payload);
    else if (a.cutText("map.message.payload", payload, payloadMaxBytes))
        a.boolean("map.message.payload_truncated", true);
    return log.timestampMs(row);
}

void fillTaskSpan(SpanText &span, const Task &task, const std::vector<TaskTransition> &history, qint64 openEndMs,
                  qsizetype maxEventBytes)
{
    span.name = QStringLiteral("task %1").arg(task.type.isEmpty() ? task.id : task.type);
    span.startMs = task.createdAtMs;
    span.endMs = isTerminalTaskStatus(task.status) ? task.updatedAtMs : std::max(task.updatedAtMs, openEndMs);
    span.attributes.text("map.task.id", task.id);
    span.attributes.text("map.task.type", task.type);
    span.attributes.text("map.task.status", task.status);
    span.attributes.text("map.task.requester_id", task.requesterId);
    span.attributes.text("map.task.assignee_id", task.assigneeId);
    if (task.progress)
        span.attributes.real("map.task.progress", *task.progress);
    QString lastDetail;
    qint64 notSent = 0;
    for (const TaskTransition &t : history) {
        if (!t.detail.isEmpty())
            lastDetail = t.detail;
        if (maxEventBytes >= 0 && qsizetype(span.events.size()) >= maxEventBytes) {
            ++notSent;
            continue;
        }
        Attributes a;
        a.text("map.task.status", t.status);
        a.text("map.agent.id", t.agentId);
        a.text("map.task.detail", t.detail);
        a.boolean("map.task.from_message", t.messageRow >= 0);
        span.addEvent("map.task.transition", t.timeMs, a);
    }
    if (notSent)
        span.attributes.integer("map.task.transitions_not_sent", notSent);
    if (task.status == QLatin1String("failed") || task.status == QLatin1String("rejected")) {
        span.statusCode = 2;
        span.statusMessage = lastDetail;
    }
}

void appendRequestHead(JsonText &out, const QString &serviceName)
{
    out += "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":";
    appendString(out, redactSecrets(serviceName)); // a text attribute like the others (callers pass the URL)
    out += "}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"map-inspector\",\"version\":\"" MAPI_VERSION "\"},\"spans\":[";
}

void appendRequestTail(JsonText &out)
{
    out += "],\"schemaUrl\":\"";
    out += kOtlpSchemaUrl;
    out += "\"}],\"schemaUrl\":\"";
    out += kOtlpSchemaUrl;
    out += "\"}]}";
}

} // namespace mapi::otlp
