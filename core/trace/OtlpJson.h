// Internal to core: the pieces of OTLP/JSON (trace/Otlp.h says what goes where) that the file
// export (trace/OtlpExport.cpp) and the live export (telemetry/LiveOtlpBatcher) share, so that
// both write an agent, a message, a task and a request byte for byte alike and name the same
// spans with the same ids. Not an API for views: they go through Otlp.h.
//
// Ids: a trace id is hexId(seed, 16), a span id hexId(traceId + ":" + kind + ":" + id, 8) (an
// agent's: kind "agent" and id "{agent id}:{part}"); the seed of the trace id is traceIdSeed().
// Every text written passes through redactSecrets() (common/Redaction.h): Attributes does it
// for attribute values, SpanText for the span's name and status message, appendRequestHead for
// the service name.
//
// Output: JSON text is built in std::string (JsonText), not QByteArray: these writers make dozens
// of small appends per message, and QByteArray::append goes through its general insert() (about a
// quarter of the live export's time on a flood, measured with perf: docs/benchmarks.md). Texts
// are written where they end up (an event into its span's buffer, a span into its request) with
// as few copies as the size limits allow.
#pragma once

#include "trace/Otlp.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace mapi::otlp {

using JsonText = std::string;

inline void append(JsonText &out, const QByteArray &bytes) { out.append(bytes.constData(), size_t(bytes.size())); }

// A 16-byte (trace) or 8-byte (span) id as lower-case hex: the start of a SHA-1 of `seed`, so
// that the same model exports the same ids (two exports of one trace compare). Never all zero
// (that is "no id" in OTLP).
QByteArray hexId(const QByteArray &seed, int bytes);
// Milliseconds since the epoch as OTLP's nanoseconds, appended: a quoted decimal (negative times are 0).
void appendNanos(JsonText &out, qint64 ms);
// `text` as a JSON string literal (quotes included).
void appendString(JsonText &out, const QString &text);
// The first `maxBytes` bytes of UTF-8 `text` at most, cut before a character, never inside one.
QByteArray cutUtf8(const QByteArray &text, qsizetype maxBytes);
QByteArrayView cutUtf8(QByteArrayView text, qsizetype maxBytes);

// The seed of a run's trace id: its oldest kept event (id and time) and the number of events
// appended. A file export of the same model at the same moment gives the same trace id; the
// model of a later moment (more events) another one.
QByteArray traceIdSeed(const EventLog &events);
inline QByteArray traceIdOf(const EventLog &events) { return hexId(traceIdSeed(events), 16); }
// The span of a thing of kind `kind` ("task", "conversation", "trajectory") and id `id`.
QByteArray spanIdFor(const QByteArray &traceId, const char *kind, const QString &id);
// Agent `agentId`'s span `part` (0: its first, the parent of its parts). The system's span for
// messages of no known sender is the agent "map.system"'s (kSystemSpanName).
QByteArray agentSpanId(const QByteArray &traceId, const QString &agentId, int part = 0);
inline constexpr const char *kSystemSpanName = "map.system";

// JSON string literals (quotes included) of texts that repeat, redacted: the names a log interns
// (recipients, addresses, scopes, statuses, tasks), converted, redacted and escaped once per name
// instead of once per message (the live export's cost on a flood: docs/benchmarks.md). Found by
// the text's data and size; an entry holds its text, so that data cannot be freed and reused by
// another text while it is cached. At most kMaxEntries texts: past them it starts again.
// Thread: one at a time.
class TextLiterals
{
public:
    static constexpr int kMaxEntries = 4096;
    const std::string &of(const QString &text);

private:
    struct Entry
    {
        QString text;
        std::string literal;
    };
    QHash<const QChar *, Entry> m_entries;
};

// The "attributes" list of a span or event, as KeyValue objects with AnyValue values, in the
// order added. Empty texts and lists are left out; keys are literals (not escaped).
class Attributes
{
public:
    // Every text passes through redactSecrets() (common/Redaction.h), as in every other export.
    void text(const char *key, const QString &value);
    // UTF-8 read where it is kept: copied only when it must be redacted (mayNeedRedaction).
    void utf8(const char *key, QByteArrayView value);
    // The same, redacted first, then cut to `maxBytes` (cutUtf8). True when it was cut.
    bool cutText(const char *key, QByteArrayView value, qsizetype maxBytes);
    void integer(const char *key, qint64 value);
    void real(const char *key, double value); // left out when not finite
    void boolean(const char *key, bool value);
    void texts(const char *key, const QStringList &values);
    // The same for `count` texts given by `at(i)` (const QString &): no list built.
    template<typename At>
    void texts(const char *key, int count, const At &at)
    {
        textList(key, count, at, [this](const QString &text) { appendRedacted(text); });
    }
    // A text through `literals` (no-op when empty): what text() writes, the work done once per text.
    void text(const char *key, const QString &value, TextLiterals &literals);
    // The same for `count` texts given by `at(i)` (const QString &), as texts() writes them.
    template<typename At>
    void texts(const char *key, int count, const At &at, TextLiterals &literals)
    {
        textList(key, count, at, [&](const QString &text) { m_out += literals.of(text); });
    }
    bool isEmpty() const { return m_out.empty(); }
    // Empties, keeping the allocation: one Attributes reused for every message (the live export).
    void clear() { m_out.clear(); }
    qsizetype size() const { return qsizetype(m_out.size()); }
    // ,"attributes":[…] (nothing when empty)
    void appendTo(JsonText &out) const;

private:
    // An array attribute of `count` texts, each written as a JSON string by `write(at(i))`.
    template<typename At, typename Write>
    void textList(const char *key, int count, const At &at, const Write &write)
    {
        if (count <= 0)
            return;
        begin(key);
        m_out += "{\"arrayValue\":{\"values\":[";
        for (int i = 0; i < count; ++i) {
            if (i)
                m_out += ',';
            m_out += "{\"stringValue\":";
            write(at(i));
            m_out += '}';
        }
        m_out += "]}}}";
    }
    void begin(const char *key);
    void appendRedacted(const QString &text); // as a JSON string, redacted
    void stringValue(QByteArrayView redacted); // {"stringValue":…}}
    JsonText m_out;
    QByteArray m_utf8; // text()'s conversion, its allocation reused
};

// One Event object: {"timeUnixNano":…,"name":"{name}","attributes":[…]}. `name`: a literal.
void appendEvent(JsonText &out, const char *name, qint64 timeMs, const Attributes &attrs);

// One Span object (kind INTERNAL), built field by field.
struct SpanText
{
    QByteArray traceId;
    QByteArray spanId;
    QByteArray parentSpanId;
    QString name;
    qint64 startMs = 0;
    qint64 endMs = 0; // written as max(startMs, endMs)
    Attributes attributes;
    JsonText events; // comma-separated Event objects
    int eventCount = 0;
    int statusCode = 0; // 0 unset, 1 ok, 2 error
    QString statusMessage;

    void addEvent(const char *name, qint64 timeMs, const Attributes &attrs);
    void appendTo(JsonText &out) const; // {"traceId":…,"spanId":…[,"parentSpanId":…] + the tail
    // What follows the ids: ,"name":… to the closing brace. A span encoded before its ids are
    // known (the live export's tasks) is the ids written by appendHead() and this tail.
    void appendTail(JsonText &out) const;
    static void appendHead(JsonText &out, const QByteArray &traceId, const QByteArray &spanId, const QByteArray &parentSpanId);
};

bool isTerminalTaskStatus(const QString &status); // completed, failed, rejected, cancelled/canceled
bool isFailedAgentState(const QString &state);    // failed, error, crashed: the agent span's status ERROR

// An agent's identity: gen_ai.operation.name (invoke_agent), gen_ai.provider.name (its metadata's
// "provider", else "map"), gen_ai.agent.id, gen_ai.agent.name (its name, else its id).
void agentIdentity(Attributes &a, const Agent &agent);
// An agent's attributes (trace/Otlp.h): its identity, usage, map.agent.* facts, message counters.
void agentAttributes(Attributes &a, const Agent &agent);
// The attributes of message `row`'s event "map.message"; returns its time. `payloadMaxBytes` >= 0:
// the payload (redacted) is cut to that many bytes, and when it was, map.message.payload_truncated
// = true follows it (the file export passes -1: whole payloads).
// `literals`: the names (recipients, address, scope, status, task) through it (see TextLiterals).
qint64 messageAttributes(Attributes &a, const SystemStore &store, size_t row, TextLiterals &literals,
                         qsizetype payloadMaxBytes = -1);
// A task's span without its ids (trace, span, parent): its name, times (an open task ends at
// max(its last update, `openEndMs`)), map.task.* attributes, transitions as events, status
// ERROR when failed or rejected. `maxEventBytes` >= 0: transitions stop once the events hold
// that many bytes, and map.task.transitions_not_sent counts the rest (the file export: -1, all).
void fillTaskSpan(SpanText &span, const Task &task, const std::vector<TaskTransition> &history, qint64 openEndMs,
                  qsizetype maxEventBytes = -1);

// One ExportTraceServiceRequest around the spans written between these two (comma-separated Span
// objects): one resource (service.name = `serviceName`, redacted), one scope "map-inspector", the
// schema URL. No newline. The spans go straight into the request's buffer: no copy of them.
void appendRequestHead(JsonText &out, const QString &serviceName);
void appendRequestTail(JsonText &out);

} // namespace mapi::otlp
