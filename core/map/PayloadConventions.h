// The payload conventions agents put inside MAP messages (shared/seeds 000, 002, 003, 004):
// task lifecycle, heartbeats, status/progress/usage, error reports, help requests, steering.
//
// Four envelopes are recognised:
//   000  {message_id, type, from, to, timestamp, priority, payload, metadata{correlation_id}}
//   002  {header{messageId, correlationId, type, source, destination, priority}, body{action, payload}, trace{traceId, spanId}}
//   003  {id, from, to, type, payload, metadata{correlation_id, priority}}
//   004  {protocol_version, message_id, sender_id, receiver_id, message_type, payload, metadata{correlation_id}}
// and a bare payload ({type: "HEARTBEAT", ...} or {task_id, ...}) is accepted as well.
#pragma once

#include "protocol/JsonRpc.h"

#include <QByteArray>
#include <QString>

#include <memory>
#include <optional>

namespace mapi {

enum class ConventionKind {
    None,
    TaskRequest,    // TASK_REQUEST, TASK_ASSIGNMENT
    TaskAccept,
    TaskReject,
    TaskHandoff,
    TaskUpdate,     // TASK_UPDATE
    TaskComplete,
    TaskFailed,
    // The SDK's task shapes carried as payloads (macro-agent's task bridge): {type:"task.created",
    // task:{id,title,status,assignee}}, {type:"task.status",taskId,previous,current},
    // {type:"task.assigned",taskId,agentId}. Statuses canonical (Dialect: canonicalTaskStatus).
    TaskCreated,
    TaskStatus,
    TaskAssigned,
    Heartbeat,
    StatusUpdate,
    StatusQuery,
    StatusResponse,
    ErrorReport,    // ERROR, ERROR_REPORT
    HelpRequest,
    HelpResponse,
    Broadcast,
    Steering,       // the inspector's own steering payload (map/send fallback for map/inject)
    SteeringAck,    // the last (MessageLog counts messages by kind up to it)
};

QString conventionName(ConventionKind kind);

// An error report's severity, ordered (seed 003's low/medium/high read as INFO/WARNING/ERROR).
enum class Severity : quint8 { None, Info, Warning, Error, Critical };
// INFO, WARNING, ERROR, CRITICAL (FATAL reads as CRITICAL); None for anything else.
Severity severityOf(const QString &normalisedSeverity);

// One ACP (Agent Client Protocol) frame tunnelled in a MAP message's payload, as the SDK's
// createACPStream / ACPAgentAdapter send it (the SDK's isACPEnvelope): payload.acp, a JSON-RPC
// message, and payload.acpContext {streamId, sessionId, direction}.
struct AcpFrame
{
    enum class Kind : quint8 { Request, Response, Notification };
    Kind kind = Kind::Notification;
    QString streamId;
    QString sessionId;        // the ACP session (absent until session/new answered)
    QString direction;        // "client-to-agent" or "agent-to-client"
    QString id;               // requests and responses: the JSON-RPC id, as text
    QString method;           // requests and notifications
    // Readable: a prompt's text, a chunk's text (session/update), a tool call's title, a
    // permission request's tool, an error's message, a prompt's stop reason. Cut at kMaxTextChars.
    QString text;
    static constexpr int kMaxTextChars = 4000;
    QString update;           // session/update: its sessionUpdate (agent_message_chunk, tool_call, ...)
    QString toolCallId;       // tool_call, tool_call_update, request_permission
    QString toolStatus;
    bool error = false;       // a response with an error
};

struct ConventionInfo
{
    ConventionKind kind = ConventionKind::None;
    QString rawType;           // the type string as written
    QString envelope;          // "000", "002", "003", "004", "bare" or empty
    QString envelopeId;        // message_id / header.messageId / id
    QString senderAgentId;     // from / sender_id / header.source
    QString receiver;          // to / receiver_id / header.destination
    QString correlationId;
    QString parentMessageId;
    QString traceId;           // 002 trace.traceId, or a W3C traceparent's trace id
    QString spanId;            // 002 trace.spanId
    QString parentSpanId;      // 002 trace.parentSpan
    // A JSON-RPC 2.0 exchange carried in the payload (MCP, A2A and the like): ">" + the id of a
    // request (it has a method), "<" + the id of a response (result or error, no method); the id as
    // written (a string, or the number's text).
    QString rpcRef;
    std::optional<int> priority; // 1..10 scale where given numerically
    std::shared_ptr<const AcpFrame> acp; // an ACP frame (null: none)

    QString taskId;
    QString taskType;
    QString taskStatus;        // SUCCESS/FAILED/PARTIAL/TIMEOUT for completions; TaskCreated, TaskStatus:
                               // the task's status, canonical ("in-progress", "blocked", "failed")
    QString handoffTo;
    QString assignee;          // TaskCreated (task.assignee), TaskAssigned (agentId)
    QString previousStatus;    // TaskStatus: its `previous`, canonical
    QString reason;

    QString heartbeatStatus;   // ACTIVE/IDLE/BUSY/MAINTENANCE/ERROR
    std::optional<double> load;
    std::optional<int> tasksRunning;
    std::optional<int> tasksQueued;
    std::optional<double> progress;  // percent
    std::optional<qint64> tokensUsed;
    std::optional<qint64> tokensRemaining;
    // The split of the usage where the report gives it (input_tokens/output_tokens, or an LLM
    // API's prompt_tokens/completion_tokens), cumulative like tokens_used.
    std::optional<qint64> inputTokens;
    std::optional<qint64> outputTokens;
    std::optional<double> costUsd;

    QString severity;          // INFO/WARNING/ERROR/CRITICAL (003's low..critical mapped)
    QString errorCode;
    QString errorMessage;
};

ConventionInfo interpretPayload(const Json &payload);
// The same from the payload as JSON text (empty or not JSON: nothing recognised). Parses with
// simdjson: for messages whose payload the decoder did not interpret (MessageRecord::convention).
ConventionInfo interpretPayloadText(const QByteArray &payloadText);

} // namespace mapi
