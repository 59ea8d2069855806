#include "map/PayloadConventions.h"

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

static QString str(const Json &object, const char *key)
{
    return jsonString(object, key);
}

static QString firstString(const Json &object, std::initializer_list<const char *> keys)
{
    for (const char *k : keys) {
        QString v = str(object, k);
        if (!v.isEmpty())
            return v;
    }
    return {};
}

static std::optional<double> number(const Json &object, const char *key)
{
    const Json *v = jsonChild(object, key);
    if (v && v->is_number())
        return v->get<double>();
    return std::nullopt;
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

static void readBody(ConventionInfo &c, const Json &body)
{
    if (!body.is_object())
        return;
    if (c.taskId.isEmpty())
        c.taskId = firstString(body, {"task_id", "taskId"});
    if (c.taskId.isEmpty()) {
        if (const Json *ctx = jsonChild(body, "context"); ctx && ctx->is_object())
            c.taskId = firstString(*ctx, {"task_id", "taskId"});
    }
    if (c.taskType.isEmpty())
        c.taskType = firstString(body, {"task_type", "taskType"});
    if (c.kind == ConventionKind::TaskComplete || c.kind == ConventionKind::TaskUpdate
        || c.kind == ConventionKind::StatusResponse)
        c.taskStatus = firstString(body, {"status", "outcome"}).toUpper();
    if (c.kind == ConventionKind::TaskHandoff)
        c.handoffTo = firstString(body, {"to_agent", "toAgent", "to"});
    if (c.reason.isEmpty())
        c.reason = firstString(body, {"reason", "error_message"});

    if (c.kind == ConventionKind::Heartbeat) {
        c.heartbeatStatus = str(body, "status").toUpper();
        c.load = number(body, "load");
        if (auto v = number(body, "tasks_running"))
            c.tasksRunning = int(*v);
        if (auto v = number(body, "tasks_queued"))
            c.tasksQueued = int(*v);
    }
    if (auto p = number(body, "progress"))
        c.progress = *p;
    const Json *usage = jsonChild(body, "resource_usage");
    const Json &u = (usage && usage->is_object()) ? *usage : body;
    if (auto v = number(u, "tokens_used"))
        c.tokensUsed = qint64(*v);
    if (auto v = number(u, "tokens_remaining"))
        c.tokensRemaining = qint64(*v);
    if (auto v = number(u, "cost_usd"))
        c.costUsd = *v;
    if (c.kind == ConventionKind::StatusUpdate && c.heartbeatStatus.isEmpty()) {
        if (const Json *status = jsonChild(body, "status"); status && status->is_object())
            c.heartbeatStatus = str(*status, "state").toUpper();
        else
            c.heartbeatStatus = str(body, "status").toUpper();
    }
    if (c.kind == ConventionKind::ErrorReport || c.kind == ConventionKind::TaskFailed) {
        c.severity = normaliseSeverity(str(body, "severity"));
        c.errorCode = firstString(body, {"error_code", "error_type", "code"});
        c.errorMessage = firstString(body, {"error_message", "message", "detail"});
        if (c.kind == ConventionKind::TaskFailed && c.severity.isEmpty())
            c.severity = QStringLiteral("ERROR");
    }
    if (c.senderAgentId.isEmpty())
        c.senderAgentId = firstString(body, {"agent_id", "requester_id", "responder_id"});
}

ConventionInfo interpretPayload(const Json &payload)
{
    ConventionInfo c;
    if (!payload.is_object())
        return c;

    const Json *body = nullptr;
    if (const Json *header = jsonChild(payload, "header"); header && header->is_object()) {
        // 002: header/body/trace
        c.envelope = QStringLiteral("002");
        c.envelopeId = firstString(*header, {"messageId", "message_id"});
        c.correlationId = firstString(*header, {"correlationId", "correlation_id"});
        c.senderAgentId = firstString(*header, {"source", "from"});
        c.receiver = firstString(*header, {"destination", "to"});
        if (auto p = number(*header, "priority"))
            c.priority = int(*p);
        const Json *b = jsonChild(payload, "body");
        c.rawType = b ? firstString(*b, {"action", "type"}) : QString();
        if (c.rawType.isEmpty())
            c.rawType = str(*header, "type");
        if (b)
            body = jsonChild(*b, "payload");
        if (!body || !body->is_object())
            body = b;
        if (const Json *trace = jsonChild(payload, "trace"); trace && trace->is_object()) {
            c.traceId = firstString(*trace, {"traceId", "trace_id"});
            c.spanId = firstString(*trace, {"spanId", "span_id"});
        }
    } else if (jsonChild(payload, "protocol_version") || jsonChild(payload, "sender_id")) {
        // 004: protocol_version/sender_id/receiver_id/message_type
        c.envelope = QStringLiteral("004");
        c.envelopeId = str(payload, "message_id");
        c.senderAgentId = str(payload, "sender_id");
        c.receiver = str(payload, "receiver_id");
        body = jsonChild(payload, "payload");
        c.rawType = body ? firstString(*body, {"type", "action", "task_type"}) : QString();
        if (kindForType(c.rawType) == ConventionKind::None)
            c.rawType = str(payload, "message_type");
    } else {
        c.rawType = firstString(payload, {"type", "message_type", "kind"});
        if (jsonChild(payload, "message_id")) {
            c.envelope = QStringLiteral("000");
            c.envelopeId = str(payload, "message_id");
        } else if (jsonChild(payload, "id") && jsonChild(payload, "from")) {
            c.envelope = QStringLiteral("003");
            c.envelopeId = str(payload, "id");
        } else {
            c.envelope = QStringLiteral("bare");
        }
        if (c.envelope != QLatin1String("bare")) {
            c.senderAgentId = str(payload, "from");
            c.receiver = str(payload, "to");
            body = jsonChild(payload, "payload");
        }
        if (!body || !body->is_object())
            body = &payload;
        if (auto p = number(payload, "priority"))
            c.priority = int(*p);
    }

    if (const Json *meta = jsonChild(payload, "metadata"); meta && meta->is_object()) {
        if (c.correlationId.isEmpty())
            c.correlationId = firstString(*meta, {"correlation_id", "correlationId"});
        c.parentMessageId = firstString(*meta, {"parent_message_id", "parentMessageId"});
        if (!c.priority) {
            const QString p = str(*meta, "priority").toLower();
            if (p == QLatin1String("critical")) c.priority = 10;
            else if (p == QLatin1String("high")) c.priority = 8;
            else if (p == QLatin1String("normal")) c.priority = 5;
            else if (p == QLatin1String("low")) c.priority = 2;
        }
    }
    if (c.correlationId.isEmpty())
        c.correlationId = firstString(payload, {"correlation_id", "correlationId"});

    c.kind = kindForType(c.rawType);
    if (body)
        readBody(c, *body);
    if (c.kind == ConventionKind::None && !c.taskId.isEmpty())
        c.kind = ConventionKind::TaskUpdate; // a message about a task we cannot classify better
    if (c.kind == ConventionKind::None)
        c.envelope.clear();
    return c;
}

} // namespace mapi
