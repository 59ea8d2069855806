#include "map/PayloadConventions.h"
#include "map/Dialect.h"
#include "map/JsonViews.h"

#include <QHash>

namespace mapi {

QString conventionName(ConventionKind kind)
{
    switch (kind) {
    case ConventionKind::None: return {};
    case ConventionKind::TaskRequest: return QStringLiteral("task-request");
    case ConventionKind::TaskAccept: return QStringLiteral("task-accept");
    case ConventionKind::TaskReject: return QStringLiteral("task-reject");
    case ConventionKind::TaskHandoff: return QStringLiteral("task-handoff");
    case ConventionKind::TaskUpdate: return QStringLiteral("task-update");
    case ConventionKind::TaskComplete: return QStringLiteral("task-complete");
    case ConventionKind::TaskFailed: return QStringLiteral("task-failed");
    case ConventionKind::TaskCreated: return QStringLiteral("task-created");
    case ConventionKind::TaskStatus: return QStringLiteral("task-status");
    case ConventionKind::TaskAssigned: return QStringLiteral("task-assigned");
    case ConventionKind::Heartbeat: return QStringLiteral("heartbeat");
    case ConventionKind::StatusUpdate: return QStringLiteral("status-update");
    case ConventionKind::StatusQuery: return QStringLiteral("status-query");
    case ConventionKind::StatusResponse: return QStringLiteral("status-response");
    case ConventionKind::ErrorReport: return QStringLiteral("error-report");
    case ConventionKind::HelpRequest: return QStringLiteral("help-request");
    case ConventionKind::HelpResponse: return QStringLiteral("help-response");
    case ConventionKind::Broadcast: return QStringLiteral("broadcast");
    case ConventionKind::Steering: return QStringLiteral("steering");
    case ConventionKind::SteeringAck: return QStringLiteral("steering-ack");
    }
    return {};
}

static ConventionKind kindForType(const QString &rawType)
{
    QString t = rawType.trimmed().toUpper();
    t.replace(QLatin1Char('.'), QLatin1Char('_'));
    t.replace(QLatin1Char('-'), QLatin1Char('_'));
    t.replace(QLatin1Char(' '), QLatin1Char('_'));
    static const QHash<QString, ConventionKind> kinds = {
        {QStringLiteral("TASK_REQUEST"), ConventionKind::TaskRequest},
        {QStringLiteral("TASK_ASSIGNMENT"), ConventionKind::TaskRequest},
        {QStringLiteral("TASK_ASSIGN"), ConventionKind::TaskRequest},
        {QStringLiteral("TASK_ACCEPT"), ConventionKind::TaskAccept},
        {QStringLiteral("TASK_ACCEPTED"), ConventionKind::TaskAccept},
        {QStringLiteral("TASK_REJECT"), ConventionKind::TaskReject},
        {QStringLiteral("TASK_REJECTED"), ConventionKind::TaskReject},
        {QStringLiteral("TASK_HANDOFF"), ConventionKind::TaskHandoff},
        {QStringLiteral("TASK_UPDATE"), ConventionKind::TaskUpdate},
        {QStringLiteral("TASK_PROGRESS"), ConventionKind::TaskUpdate},
        {QStringLiteral("TASK_COMPLETE"), ConventionKind::TaskComplete},
        {QStringLiteral("TASK_COMPLETED"), ConventionKind::TaskComplete},
        {QStringLiteral("TASK_FAILED"), ConventionKind::TaskFailed},
        {QStringLiteral("TASK_CREATED"), ConventionKind::TaskCreated},
        {QStringLiteral("TASK_STATUS"), ConventionKind::TaskStatus},
        {QStringLiteral("TASK_ASSIGNED"), ConventionKind::TaskAssigned},
        {QStringLiteral("HEARTBEAT"), ConventionKind::Heartbeat},
        {QStringLiteral("STATUS_UPDATE"), ConventionKind::StatusUpdate},
        {QStringLiteral("STATUS_QUERY"), ConventionKind::StatusQuery},
        {QStringLiteral("STATUS_RESPONSE"), ConventionKind::StatusResponse},
        {QStringLiteral("ERROR"), ConventionKind::ErrorReport},
        {QStringLiteral("ERROR_REPORT"), ConventionKind::ErrorReport},
        {QStringLiteral("HELP_REQUEST"), ConventionKind::HelpRequest},
        {QStringLiteral("HELP_RESPONSE"), ConventionKind::HelpResponse},
        {QStringLiteral("BROADCAST"), ConventionKind::Broadcast},
        {QStringLiteral("STEERING"), ConventionKind::Steering},
        {QStringLiteral("MAP_INSPECTOR_STEERING"), ConventionKind::Steering},
        {QStringLiteral("STEERING_ACK"), ConventionKind::SteeringAck},
    };
    return kinds.value(t, ConventionKind::None);
}

// The conventions are read through a JSON view (map/JsonViews.h), so the decoding thread reads
// a payload straight from simdjson's DOM and nothing builds an nlohmann tree of it.

// A scalar member as text (strings as they are, numbers and booleans as JSON); objects, arrays,
// null and absent members give an empty string. Values that repeat from message to message
// (types, statuses, agent ids) say Text::Repeats and share one string (map/JsonViews.h); ids and
// free text must not, or they would fill that cache with strings seen once.
template<typename View>
static QString str(const View &object, std::string_view key, Text text = Text::Unique)
{
    const View child = object.child(key);
    if (child.isNull() || child.isObject() || child.isArray())
        return {};
    return scalarText(child, text);
}

template<typename View>
static QString firstString(const View &object, std::initializer_list<std::string_view> keys, Text text = Text::Unique)
{
    for (const std::string_view k : keys) {
        QString v = str(object, k, text);
        if (!v.isEmpty())
            return v;
    }
    return {};
}

template<typename View>
static std::optional<double> number(const View &object, std::string_view key)
{
    const View v = object.child(key);
    if (v.isNumber())
        return v.toJson().template get<double>();
    return std::nullopt;
}

// `object[key]` as a number into `out`, converted to its type; `out` unchanged when absent.
template<typename View, typename T>
static void readNumber(const View &object, std::string_view key, std::optional<T> &out)
{
    if (const auto v = number(object, key))
        out = T(*v);
}

Severity severityOf(const QString &s)
{
    if (s == QLatin1String("CRITICAL") || s == QLatin1String("FATAL"))
        return Severity::Critical;
    if (s == QLatin1String("ERROR"))
        return Severity::Error;
    if (s == QLatin1String("WARNING") || s == QLatin1String("WARN"))
        return Severity::Warning;
    if (s == QLatin1String("INFO"))
        return Severity::Info;
    return Severity::None;
}

static QString normaliseSeverity(QString s)
{
    s = s.toUpper();
    if (s == QLatin1String("LOW"))
        return QStringLiteral("INFO");
    if (s == QLatin1String("MEDIUM"))
        return QStringLiteral("WARNING");
    if (s == QLatin1String("HIGH"))
        return QStringLiteral("ERROR");
    return s;
}

// An ACP frame (AcpFrame): what it is, and the words a person reads of it.
template<typename View>
static std::shared_ptr<const AcpFrame> readAcpFrame(const View &acp, const View &context)
{
    auto f = std::make_shared<AcpFrame>();
    f->streamId = str(context, "streamId");
    f->sessionId = str(context, "sessionId");
    f->direction = str(context, "direction", Text::Repeats);
    f->method = str(acp, "method", Text::Repeats);
    f->id = str(acp, "id");
    f->kind = f->method.isEmpty() ? AcpFrame::Kind::Response
        : f->id.isEmpty()         ? AcpFrame::Kind::Notification
                                  : AcpFrame::Kind::Request;
    const View params = acp.child("params");
    const auto textOfContent = [](const View &content) {
        if (content.isObject())
            return str(content, "text");
        QString joined; // a prompt: [{type:"text", text}, ...]
        if (content.isArray())
            content.forEachItem([&](const View &block) {
                if (block.isObject() && !str(block, "text").isEmpty())
                    joined += (joined.isEmpty() ? QString() : QStringLiteral("\n")) + str(block, "text");
            });
        return joined;
    };
    if (f->method == QLatin1String("session/prompt") && params.isObject()) {
        f->text = textOfContent(params.child("prompt"));
    } else if (f->method == QLatin1String("session/update") && params.isObject()) {
        const View update = params.child("update");
        if (update.isObject()) {
            f->update = str(update, "sessionUpdate", Text::Repeats);
            f->toolCallId = str(update, "toolCallId");
            f->toolStatus = str(update, "status", Text::Repeats);
            f->text = textOfContent(update.child("content"));
            if (f->text.isEmpty())
                f->text = str(update, "title");
        }
    } else if (params.isObject() && params.child("toolCall").isObject()) { // request_permission
        f->toolCallId = str(params.child("toolCall"), "toolCallId");
        f->text = str(params.child("toolCall"), "title");
    } else if (const View error = acp.child("error"); error.isObject()) {
        f->error = true;
        f->text = str(error, "message");
    } else if (const View result = acp.child("result"); result.isObject()) {
        if (const QString stop = str(result, "stopReason", Text::Repeats); !stop.isEmpty())
            f->text = QStringLiteral("stop: ") + stop;
        else if (const QString session = str(result, "sessionId"); !session.isEmpty())
            f->text = QStringLiteral("session ") + session;
    }
    if (f->text.size() > AcpFrame::kMaxTextChars)
        f->text.truncate(AcpFrame::kMaxTextChars);
    return f;
}

template<typename View>
static void readBody(ConventionInfo &c, const View &body)
{
    if (!body.isObject())
        return;
    if (c.taskId.isEmpty())
        c.taskId = firstString(body, {"task_id", "taskId"});
    if (c.taskId.isEmpty()) {
        if (const View ctx = body.child("context"); ctx.isObject())
            c.taskId = firstString(ctx, {"task_id", "taskId"});
    }
    if (c.taskType.isEmpty())
        c.taskType = firstString(body, {"task_type", "taskType"}, Text::Repeats);
    if (c.kind == ConventionKind::TaskComplete || c.kind == ConventionKind::TaskUpdate
        || c.kind == ConventionKind::StatusResponse)
        c.taskStatus = firstString(body, {"status", "outcome"}, Text::Repeats).toUpper();
    if (c.kind == ConventionKind::TaskHandoff)
        c.handoffTo = firstString(body, {"to_agent", "toAgent", "to"}, Text::Repeats);
    if (c.kind == ConventionKind::TaskCreated) {
        if (const View task = body.child("task"); task.isObject()) {
            if (c.taskId.isEmpty())
                c.taskId = firstString(task, {"id", "taskId", "task_id"});
            c.taskType = firstString(task, {"title", "name"}, Text::Repeats);
            c.taskStatus = canonicalTaskStatus(str(task, "status", Text::Repeats));
            c.assignee = str(task, "assignee", Text::Repeats);
        }
    } else if (c.kind == ConventionKind::TaskStatus) {
        c.taskStatus = canonicalTaskStatus(firstString(body, {"current", "status"}, Text::Repeats));
        c.previousStatus = canonicalTaskStatus(str(body, "previous", Text::Repeats));
    } else if (c.kind == ConventionKind::TaskAssigned) {
        c.assignee = firstString(body, {"agentId", "assignee"}, Text::Repeats);
    }
    if (c.reason.isEmpty())
        c.reason = firstString(body, {"reason", "error_message"});

    if (c.kind == ConventionKind::Heartbeat) {
        c.heartbeatStatus = str(body, "status", Text::Repeats).toUpper();
        c.load = number(body, "load");
        readNumber(body, "tasks_running", c.tasksRunning);
        readNumber(body, "tasks_queued", c.tasksQueued);
    }
    readNumber(body, "progress", c.progress);
    const View usage = body.child("resource_usage");
    const View &u = usage.isObject() ? usage : body;
    readNumber(u, "tokens_used", c.tokensUsed);
    readNumber(u, "tokens_remaining", c.tokensRemaining);
    readNumber(u, "input_tokens", c.inputTokens);
    if (!c.inputTokens)
        readNumber(u, "prompt_tokens", c.inputTokens);
    readNumber(u, "output_tokens", c.outputTokens);
    if (!c.outputTokens)
        readNumber(u, "completion_tokens", c.outputTokens);
    readNumber(u, "cost_usd", c.costUsd);
    if (c.kind == ConventionKind::StatusUpdate && c.heartbeatStatus.isEmpty()) {
        if (const View status = body.child("status"); status.isObject())
            c.heartbeatStatus = str(status, "state", Text::Repeats).toUpper();
        else
            c.heartbeatStatus = str(body, "status", Text::Repeats).toUpper();
    }
    if (c.kind == ConventionKind::ErrorReport || c.kind == ConventionKind::TaskFailed) {
        c.severity = normaliseSeverity(str(body, "severity", Text::Repeats));
        c.errorCode = firstString(body, {"error_code", "error_type", "code"}, Text::Repeats);
        c.errorMessage = firstString(body, {"error_message", "message", "detail"});
        if (c.kind == ConventionKind::TaskFailed && c.severity.isEmpty())
            c.severity = QStringLiteral("ERROR");
    }
    if (c.senderAgentId.isEmpty())
        c.senderAgentId = firstString(body, {"agent_id", "requester_id", "responder_id"}, Text::Repeats);
}

template<typename View>
static ConventionInfo interpret(const View &payload)
{
    ConventionInfo c;
    if (!payload.isObject())
        return c;

    View body; // absent
    if (const View header = payload.child("header"); header.isObject()) {
        // 002: header/body/trace
        c.envelope = QStringLiteral("002");
        c.envelopeId = firstString(header, {"messageId", "message_id"});
        c.correlationId = firstString(header, {"correlationId", "correlation_id"});
        c.senderAgentId = firstString(header, {"source", "from"}, Text::Repeats);
        c.receiver = firstString(header, {"destination", "to"}, Text::Repeats);
        if (auto p = number(header, "priority"))
            c.priority = int(*p);
        const View b = payload.child("body");
        c.rawType = b.present() ? firstString(b, {"action", "type"}, Text::Repeats) : QString();
        if (c.rawType.isEmpty())
            c.rawType = str(header, "type", Text::Repeats);
        if (b.present())
            body = b.child("payload");
        if (!body.isObject())
            body = b;
        if (const View trace = payload.child("trace"); trace.isObject()) {
            c.traceId = firstString(trace, {"traceId", "trace_id"});
            c.spanId = firstString(trace, {"spanId", "span_id"});
            c.parentSpanId = firstString(trace, {"parentSpan", "parentSpanId", "parent_span_id"});
        }
    } else if (payload.child("protocol_version").present() || payload.child("sender_id").present()) {
        // 004: protocol_version/sender_id/receiver_id/message_type
        c.envelope = QStringLiteral("004");
        c.envelopeId = str(payload, "message_id");
        c.senderAgentId = str(payload, "sender_id", Text::Repeats);
        c.receiver = str(payload, "receiver_id", Text::Repeats);
        body = payload.child("payload");
        c.rawType = body.present() ? firstString(body, {"type", "action", "task_type"}, Text::Repeats) : QString();
        if (kindForType(c.rawType) == ConventionKind::None)
            c.rawType = str(payload, "message_type", Text::Repeats);
    } else {
        c.rawType = firstString(payload, {"type", "message_type", "kind"}, Text::Repeats);
        if (payload.child("message_id").present()) {
            c.envelope = QStringLiteral("000");
            c.envelopeId = str(payload, "message_id");
        } else if (payload.child("id").present() && payload.child("from").present()) {
            c.envelope = QStringLiteral("003");
            c.envelopeId = str(payload, "id");
        } else {
            c.envelope = QStringLiteral("bare");
        }
        if (c.envelope != QLatin1String("bare")) {
            c.senderAgentId = str(payload, "from", Text::Repeats);
            c.receiver = str(payload, "to", Text::Repeats);
            body = payload.child("payload");
        }
        if (!body.isObject())
            body = payload;
        if (auto p = number(payload, "priority"))
            c.priority = int(*p);
    }

    if (const View meta = payload.child("metadata"); meta.isObject()) {
        if (c.correlationId.isEmpty())
            c.correlationId = firstString(meta, {"correlation_id", "correlationId"});
        c.parentMessageId = firstString(meta, {"parent_message_id", "parentMessageId"});
        if (!c.priority) {
            const QString p = str(meta, "priority", Text::Repeats).toLower();
            if (p == QLatin1String("critical")) c.priority = 10;
            else if (p == QLatin1String("high")) c.priority = 8;
            else if (p == QLatin1String("normal")) c.priority = 5;
            else if (p == QLatin1String("low")) c.priority = 2;
        }
    }
    if (c.correlationId.isEmpty())
        c.correlationId = firstString(payload, {"correlation_id", "correlationId"});
    // A JSON-RPC exchange in the payload: requests and their responses pair up by id.
    if (const View version = payload.child("jsonrpc"); version.isString() && str(payload, "jsonrpc") == QLatin1String("2.0")) {
        const View id = payload.child("id");
        QString idText;
        if (id.isString())
            idText = str(payload, "id");
        else if (id.isNumber())
            idText = QString::fromStdString(id.toJson().dump());
        const bool request = payload.child("method").isString();
        const bool response = !request && (payload.child("result").present() || payload.child("error").present());
        if (!idText.isEmpty() && (request || response))
            c.rpcRef = (request ? QLatin1Char('>') : QLatin1Char('<')) + idText;
    }
    if (const View acp = payload.child("acp"); acp.isObject())
        if (const View context = payload.child("acpContext"); context.isObject() && context.child("streamId").isString())
            c.acp = readAcpFrame(acp, context);
    // W3C trace context (MAP's _meta, or an envelope's metadata): "00-<trace id>-<span id>-<flags>".
    // Its trace id groups the messages of one distributed trace (CausalChains).
    if (c.traceId.isEmpty()) {
        for (const char *holder : {"_meta", "metadata"}) {
            const View h = payload.child(holder);
            const QString traceparent = h.isObject() ? str(h, "traceparent") : QString();
            if (traceparent.size() >= 55 && traceparent.at(2) == QLatin1Char('-') && traceparent.at(35) == QLatin1Char('-')) {
                c.traceId = traceparent.mid(3, 32);
                break;
            }
        }
    }

    c.kind = kindForType(c.rawType);
    if (body.present())
        readBody(c, body);
    if (c.kind == ConventionKind::None && !c.taskId.isEmpty())
        c.kind = ConventionKind::TaskUpdate; // a message about a task we cannot classify better
    if (c.kind == ConventionKind::None)
        c.envelope.clear();
    return c;
}

ConventionInfo interpretPayload(const Json &payload)
{
    return interpret(JsonView{&payload});
}

ConventionInfo interpretPayload(simdjson::dom::element payload, bool *differs)
{
    return interpret(SimdView{payload, true, differs});
}

ConventionInfo interpretPayloadText(const QByteArray &payloadText)
{
    if (payloadText.isEmpty())
        return {};
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parseText(parser, payloadText, root) != simdjson::SUCCESS)
        return {};
    bool differs = false;
    ConventionInfo info = interpret(SimdView{root, true, &differs});
    if (!differs)
        return info;
    const Json tree = Json::parse(payloadText.constBegin(), payloadText.constEnd(), nullptr, false);
    return tree.is_discarded() ? ConventionInfo() : interpretPayload(tree);
}

} // namespace mapi
