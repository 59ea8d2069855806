// OpenTelemetry: a loaded model written as OTLP/JSON, and OTLP/JSON read as a trace.
//
// Every text written passes through redactSecrets() (common/Redaction.h).
//
// The file: JSON Lines, each line one ExportTraceServiceRequest in the protobuf JSON mapping
// of the OTLP definitions (opentelemetry-proto, trace/v1): {"resourceSpans":[{"resource":…,
// "scopeSpans":[{"scope":…,"spans":[…]}]}]}. Trace ids are 32 hex digits, span ids 16; 64-bit
// integers (times in ns since the epoch) are decimal strings; enums are numbers. This is the
// OpenTelemetry Collector's file exporter format; a file holding a single request spread over
// several lines (pretty-printed, up to 256 MiB, nesting limited as frames are) is read as well.
//
// Names follow the OpenTelemetry semantic conventions v1.41.1 for generative AI (status:
// development; schemaUrl https://opentelemetry.io/schemas/1.41.1). What goes where:
//   - an agent: a span "invoke_agent {name}" (kind INTERNAL) with gen_ai.operation.name =
//     invoke_agent, gen_ai.provider.name (the agent's metadata "provider", else "map"),
//     gen_ai.agent.id, gen_ai.agent.name; its parent agent's span is its parent. Its usage:
//     gen_ai.usage.input_tokens / gen_ai.usage.output_tokens where the reports split it,
//     map.usage.tokens_used (the total the reports give), map.cost.usd (US dollars, double:
//     the conventions define no cost attribute). MAP facts under map.agent.* (role, state,
//     scopes, parent_id, session_id, unregistered). A span holds at most kOtlpMessagesPerSpan
//     messages (or 4 MiB of them): an agent that sent more continues in further spans of the
//     same name, children of the first, with map.span.part (a line stays under 16 MiB).
//   - a message: an event "map.message" on its sender's span, at its time: map.message.id,
//     .to (the agent ids it reached), .address (as sent: an agent, "*", a scope), .status,
//     .correlation_id, .task_id, .priority, .payload (the payload as compact JSON text).
//     Messages whose sender is unknown are events of a span "map.system".
//   - a task: a span "task {type or id}" under its assignee's (else its requester's) span,
//     map.task.* (id, type, status, requester_id, assignee_id), status ERROR when it failed or
//     was rejected, its transitions as events "map.task.transition" (map.task.status,
//     map.agent.id, map.task.detail, map.task.from_message: whether a message made it).
//   - a conversation (mail): a span "conversation {subject}" (map.conversation.*: id, type,
//     subject, status, close_reason, participants by name), its turns as events
//     "map.conversation.turn" (map.turn.*: id, participant, content_type, thread_id,
//     in_reply_to, intercepted_message_id, text).
//   - an agent's trajectory checkpoints: a span "trajectory {agent}" under the agent's span,
//     each checkpoint an event "map.trajectory.checkpoint" (map.checkpoint.*: id, label,
//     work_session, metadata). ACP frames are messages, with their payloads, like any other.
//   - one resource per file: service.name (the system's name); one scope "map-inspector".
//
// The live export (telemetry/LiveOtlpBatcher.h) sends the same mapping in windows as a session
// runs; both write through the helpers of trace/OtlpJson.h (same attributes, same ids).
//
// Reading (OtlpImporter) turns spans back into MAP events for the usual pipeline: the agent
// spans above, and those of any framework instrumented with the GenAI conventions (spans with
// gen_ai.agent.id or gen_ai.agent.name, or gen_ai.operation.name invoke_agent/create_agent),
// become agents; a span's agent is its own or its nearest ancestor's, and spans outside every
// agent belong to an agent named after the resource's service.name. map.message events become
// messages; an agent span started inside another agent's work becomes a task the caller gave
// it (TASK_ASSIGNMENT at its start, TASK_COMPLETE or TASK_FAILED at its end, seed 003); token
// usage (gen_ai.usage.*, also the deprecated gen_ai.usage.prompt_tokens/completion_tokens and
// gen_ai.system) adds up per agent and is reported with those messages.
#pragma once

#include "trace/ModelExport.h"
#include "trace/TraceRecord.h"

#include <QHash>

#include <memory>
#include <vector>

namespace mapi {

struct OtlpOptions
{
    QString serviceName = QStringLiteral("MAP system"); // the resource's service.name
};

struct OtlpCounts
{
    qint64 agentSpans = 0;
    qint64 taskSpans = 0;
    qint64 conversationSpans = 0;
    qint64 trajectorySpans = 0;
    qint64 messageEvents = 0;
    qint64 lines = 0; // requests written
};

constexpr const char *kOtlpSchemaUrl = "https://opentelemetry.io/schemas/1.41.1";
// Messages per agent span: keeps each line (request) of the file to a few MB.
constexpr int kOtlpMessagesPerSpan = 1000;

// The file export. It reads the messages once, in the order of the log (a held trace's
// payloads come chunk after chunk), and spools their events to a temporary file (QTemporaryFile:
// about the size of the messages in the output, removed when the writer goes), then writes each
// agent's spans with its messages from there (where no temporary file can be made, each event
// is encoded from the store as its span is written: slower on a held trace, the same bytes).
// Memory: 24 bytes per message besides the store.
std::unique_ptr<ExportWriter> makeOtlpWriter(const SystemStore &store, QIODevice &out, const OtlpOptions &options = {},
                                             OtlpCounts *counts = nullptr);
bool writeOtlpJson(const SystemStore &store, const QString &path, const OtlpOptions &options = {},
                   OtlpCounts *counts = nullptr, QString *error = nullptr);

// A parsed JSON object that is an OTLP trace request (has "resourceSpans").
bool isOtlpRequest(const Json &object);

// Collects the spans of OTLP requests, then gives the MAP events they make, in time order.
// Spans arrive in any order (a parent after its children, traces interleaved), so nothing is
// given before finish(): memory holds the spans read (about their JSON size); kMaxSpans bounds
// it, past which spans are counted as dropped.
class OtlpImporter
{
public:
    static constexpr qint64 kMaxSpans = 2'000'000;
    static constexpr qint64 kMaxEvents = 10'000'000; // span events in all

    explicit OtlpImporter(QString sourceName = {});
    ~OtlpImporter();
    OtlpImporter(OtlpImporter &&) noexcept;
    OtlpImporter &operator=(OtlpImporter &&) noexcept;

    // Reads one request. false, with `why`, when it is none (no resourceSpans array).
    bool add(const Json &request, QString *why = nullptr);
    // The same from its text, read with simdjson where it can (no tree of the whole request is
    // made), else with nlohmann's parser; false, with `why`, when it is no JSON or no request.
    bool add(const QByteArray &text, QString *why = nullptr);
    // Once every request was added: orders what the spans say in time.
    void finish();
    // The records, one a call, after finish(): an "open" record, then map/event frames in time
    // order; false at the end. Each frame is made when it is asked for, so that the events are
    // never all in memory as frames at once.
    bool next(TraceRecord &out);

    qint64 spans() const;
    qint64 droppedSpans() const; // past kMaxSpans or kMaxEvents, or without ids
    qint64 agents() const;
    // Why events are missing: the temporary file that keeps the span events' texts until they are
    // written could not be made, written or read back (those events are not written); empty when
    // nothing was lost.
    QString error() const;
    // For tests: writes to that temporary file fail once it would pass `bytes` (a full disk).
    void setSpoolFailsPastForTest(qint64 bytes);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace mapi
