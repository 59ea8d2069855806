// interpretPayload: the payload conventions of the seed documents (000, 002, 003, 004 and a
// bare payload) inside MAP messages. Payloads are written as the seeds show them.
#include "TestSupport.h"

#include "map/PayloadConventions.h"

using namespace mapi;

Q_DECLARE_METATYPE(mapi::ConventionKind)

namespace {

// Seed 000 envelope: {message_id, type, from, to, timestamp, priority, payload, metadata}.
Json env000(const char *type, const Json &payload, const Json &metadata = Json::object(), int priority = 5)
{
    return {{"message_id", "req-001"}, {"type", type},     {"from", "coordinator-agent"},
            {"to", "worker-agent-1"},  {"timestamp", "2026-01-28T10:00:00Z"},
            {"priority", priority},    {"payload", payload}, {"metadata", metadata}};
}

// Seed 003 envelope: {id, timestamp, from, to, type, payload, metadata{correlation_id, priority}}.
Json env003(const char *type, const Json &payload, const Json &metadata)
{
    return {{"id", "6f1c0b1e-1111-4c3a-9d7e-000000000003"}, {"timestamp", "2026-01-28T10:00:00Z"},
            {"from", "agent-analyst"}, {"to", "agent-reviewer"}, {"type", type},
            {"payload", payload}, {"metadata", metadata}};
}

// Every field, to compare two readings.
QStringList fields(const ConventionInfo &c)
{
    const auto n = [](const auto &v) { return v ? QString::number(*v) : QStringLiteral("-"); };
    return {conventionName(c.kind), c.rawType, c.envelope, c.envelopeId, c.senderAgentId, c.receiver,
            c.correlationId, c.parentMessageId, c.traceId, c.spanId, n(c.priority), c.taskId, c.taskType,
            c.taskStatus, c.handoffTo, c.reason, c.heartbeatStatus, n(c.load), n(c.tasksRunning),
            n(c.tasksQueued), n(c.progress), n(c.tokensUsed), n(c.tokensRemaining), n(c.costUsd), c.severity,
            c.errorCode, c.errorMessage};
}

QStringList viewMismatches;

// interpretPayload() on nlohmann's tree, checked against the reading of the same payload as text
// from simdjson's DOM (what the decoding thread does): every field must agree.
ConventionInfo interpretBoth(const Json &payload)
{
    const ConventionInfo tree = interpretPayload(payload);
    const std::string text = payload.dump();
    const ConventionInfo dom = interpretPayloadText(QByteArray(text.data(), qsizetype(text.size())));
    if (fields(tree) != fields(dom))
        viewMismatches << QStringLiteral("%1:\n  tree %2\n  dom  %3")
                              .arg(QString::fromStdString(text), fields(tree).join(u'|'), fields(dom).join(u'|'));
    return tree;
}

QString kindName(ConventionKind kind)
{
    return conventionName(kind);
}

} // namespace

class TestConventions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup()
    {
        MAPI_NO_WARNINGS();
        QVERIFY2(viewMismatches.isEmpty(), qPrintable(viewMismatches.join(u'\n')));
        viewMismatches.clear();
    }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void envelope000TaskRequest();
    void envelope002HeaderBodyTrace();
    void envelope003Handoff();
    void envelope004();
    void barePayloads();
    void taskLifecycleTypes_data();
    void taskLifecycleTypes();
    void taskCompleteWithFailedStatus();
    void taskFailed();
    void heartbeat();
    void statusUpdateUsageAndProgress();
    void errorReportSeverity_data();
    void errorReportSeverity();
    void correlationIds();
    void priorityStrings_data();
    void priorityStrings();
    void typeSpellingsAreNormalised_data();
    void typeSpellingsAreNormalised();
    void nonObjectPayloads_data();
    void nonObjectPayloads();
    void unknownTypeIsNone();
};

void TestConventions::envelope000TaskRequest()
{
    const Json payload = {{"task_id", "task-001"}, {"task_type", "code_review"}, {"input", "function add(a, b) {}"},
                          {"requirements", {{"language", "javascript"}}}, {"timeout", 300}};
    const ConventionInfo c = interpretBoth(env000("TASK_REQUEST", payload,
                                                     {{"parent_task_id", "main-task-001"}, {"correlation_id", "corr-001"}}));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskRequest));
    QCOMPARE(c.rawType, QStringLiteral("TASK_REQUEST"));
    QCOMPARE(c.envelope, QStringLiteral("000"));
    QCOMPARE(c.envelopeId, QStringLiteral("req-001"));
    QCOMPARE(c.senderAgentId, QStringLiteral("coordinator-agent"));
    QCOMPARE(c.receiver, QStringLiteral("worker-agent-1"));
    QCOMPARE(c.taskId, QStringLiteral("task-001"));
    QCOMPARE(c.taskType, QStringLiteral("code_review"));
    QCOMPARE(c.correlationId, QStringLiteral("corr-001"));
    QCOMPARE(c.priority.value_or(-1), 5);
}

void TestConventions::envelope002HeaderBodyTrace()
{
    const Json message = {
        {"header", {{"messageId", "msg_uuid_123"}, {"correlationId", "corr_uuid_456"}, {"type", "REQUEST"},
                    {"source", "agent-analyzer"}, {"destination", "agent-planner"},
                    {"timestamp", "2026-01-10T14:30:00Z"}, {"priority", 1}, {"ttl", 30000}}},
        {"body", {{"action", "STATUS_UPDATE"}, {"payload", {{"progress", 40}, {"task_id", "t-2"}}}, {"context", Json::object()}}},
        {"trace", {{"traceId", "trace_123"}, {"spanId", "span_456"}, {"parentSpan", "span_123"}}}};
    const ConventionInfo c = interpretBoth(message);
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::StatusUpdate));
    QCOMPARE(c.envelope, QStringLiteral("002"));
    QCOMPARE(c.envelopeId, QStringLiteral("msg_uuid_123"));
    QCOMPARE(c.correlationId, QStringLiteral("corr_uuid_456"));
    QCOMPARE(c.senderAgentId, QStringLiteral("agent-analyzer"));
    QCOMPARE(c.receiver, QStringLiteral("agent-planner"));
    QCOMPARE(c.traceId, QStringLiteral("trace_123"));
    QCOMPARE(c.spanId, QStringLiteral("span_456"));
    QCOMPARE(c.priority.value_or(-1), 1);
    QCOMPARE(c.progress.value_or(-1), 40.0);
    QCOMPARE(c.taskId, QStringLiteral("t-2"));

    // 002 with an application action nobody standardised ("analyze"): not a convention.
    Json analyze = message;
    analyze["body"]["action"] = "analyze";
    analyze["body"]["payload"] = {{"content", "..."}};
    const ConventionInfo none = interpretBoth(analyze);
    QCOMPARE(kindName(none.kind), kindName(ConventionKind::None));
}

void TestConventions::envelope003Handoff()
{
    const Json payload = {{"task_id", "task-42"}, {"from_agent", "agent-analyst"}, {"to_agent", "agent-specialist"},
                          {"reason", "CAPABILITY_LIMIT"}, {"context", {{"task_id", "task-42"}, {"task_type", "review"}}}};
    const ConventionInfo c =
        interpretBoth(env003("TASK_HANDOFF", payload, {{"correlation_id", "corr-9"}, {"priority", "high"}, {"retry_count", 0}}));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskHandoff));
    QCOMPARE(c.envelope, QStringLiteral("003"));
    QCOMPARE(c.envelopeId, QStringLiteral("6f1c0b1e-1111-4c3a-9d7e-000000000003"));
    QCOMPARE(c.senderAgentId, QStringLiteral("agent-analyst"));
    QCOMPARE(c.receiver, QStringLiteral("agent-reviewer"));
    QCOMPARE(c.taskId, QStringLiteral("task-42"));
    QCOMPARE(c.handoffTo, QStringLiteral("agent-specialist"));
    QCOMPARE(c.reason, QStringLiteral("CAPABILITY_LIMIT"));
    QCOMPARE(c.correlationId, QStringLiteral("corr-9"));
    QCOMPARE(c.priority.value_or(-1), 8);
}

void TestConventions::envelope004()
{
    const Json error = {{"protocol_version", "1.0"}, {"message_id", "uuid-4"}, {"timestamp", "2026-01-01T00:00:00Z"},
                        {"sender_id", "agent-a"}, {"receiver_id", "agent-b"}, {"message_type", "error"},
                        {"payload", {{"code", "INVALID_PAYLOAD"}, {"message", "missing field x"}, {"details", Json::object()}}},
                        {"metadata", {{"correlation_id", "uuid-3"}}}};
    ConventionInfo c = interpretBoth(error);
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::ErrorReport));
    QCOMPARE(c.envelope, QStringLiteral("004"));
    QCOMPARE(c.envelopeId, QStringLiteral("uuid-4"));
    QCOMPARE(c.senderAgentId, QStringLiteral("agent-a"));
    QCOMPARE(c.receiver, QStringLiteral("agent-b"));
    QCOMPARE(c.correlationId, QStringLiteral("uuid-3"));
    QCOMPARE(c.errorCode, QStringLiteral("INVALID_PAYLOAD"));
    QCOMPARE(c.errorMessage, QStringLiteral("missing field x"));

    // A convention type inside the 004 payload wins over the generic message_type.
    const Json done = {{"protocol_version", "1.0"}, {"message_id", "uuid-5"}, {"sender_id", "agent-b"},
                       {"receiver_id", "broadcast"}, {"message_type", "event"},
                       {"payload", {{"type", "TASK_COMPLETE"}, {"task_id", "t-77"}, {"status", "partial"}}}};
    c = interpretBoth(done);
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskComplete));
    QCOMPARE(c.rawType, QStringLiteral("TASK_COMPLETE"));
    QCOMPARE(c.taskId, QStringLiteral("t-77"));
    QCOMPARE(c.taskStatus, QStringLiteral("PARTIAL"));
    QCOMPARE(c.receiver, QStringLiteral("broadcast"));

    // message_type "request" with an unknown action: nothing to interpret.
    c = interpretBoth(Json{{"protocol_version", "1.0"}, {"sender_id", "a"}, {"message_type", "request"},
                              {"payload", {{"action", "fetch"}, {"parameters", Json::object()}}}});
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::None));
    QVERIFY(c.envelope.isEmpty());
}

void TestConventions::barePayloads()
{
    ConventionInfo c = interpretBoth(Json{{"type", "HEARTBEAT"}, {"status", "busy"}, {"load", 0.7}});
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::Heartbeat));
    QCOMPARE(c.envelope, QStringLiteral("bare"));
    QCOMPARE(c.heartbeatStatus, QStringLiteral("BUSY"));
    QVERIFY(c.senderAgentId.isEmpty());

    // No type but a task id: a message about a task.
    c = interpretBoth(Json{{"task_id", "t-9"}, {"progress", 55}});
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskUpdate));
    QCOMPARE(c.taskId, QStringLiteral("t-9"));
    QCOMPARE(c.progress.value_or(-1), 55.0);

    // The inspector's own steering payload (map/inject fallback).
    c = interpretBoth(Json{{"type", "STEERING"}, {"content", "stop and summarise"}, {"to", "a1"}});
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::Steering));
}

void TestConventions::taskLifecycleTypes_data()
{
    QTest::addColumn<QString>("type");
    QTest::addColumn<ConventionKind>("kind");
    QTest::newRow("TASK_REQUEST") << "TASK_REQUEST" << ConventionKind::TaskRequest;
    QTest::newRow("TASK_ASSIGNMENT (003)") << "TASK_ASSIGNMENT" << ConventionKind::TaskRequest;
    QTest::newRow("TASK_ACCEPT") << "TASK_ACCEPT" << ConventionKind::TaskAccept;
    QTest::newRow("TASK_REJECT") << "TASK_REJECT" << ConventionKind::TaskReject;
    QTest::newRow("TASK_HANDOFF") << "TASK_HANDOFF" << ConventionKind::TaskHandoff;
    QTest::newRow("TASK_UPDATE") << "TASK_UPDATE" << ConventionKind::TaskUpdate;
    QTest::newRow("TASK_COMPLETE") << "TASK_COMPLETE" << ConventionKind::TaskComplete;
    QTest::newRow("TASK_FAILED") << "TASK_FAILED" << ConventionKind::TaskFailed;
    QTest::newRow("STATUS_QUERY") << "STATUS_QUERY" << ConventionKind::StatusQuery;
    QTest::newRow("STATUS_RESPONSE") << "STATUS_RESPONSE" << ConventionKind::StatusResponse;
    QTest::newRow("HELP_REQUEST") << "HELP_REQUEST" << ConventionKind::HelpRequest;
    QTest::newRow("HELP_RESPONSE") << "HELP_RESPONSE" << ConventionKind::HelpResponse;
    QTest::newRow("BROADCAST") << "BROADCAST" << ConventionKind::Broadcast;
}

void TestConventions::taskLifecycleTypes()
{
    QFETCH(QString, type);
    QFETCH(ConventionKind, kind);
    const std::string t = type.toStdString();
    const ConventionInfo c = interpretBoth(env000(t.c_str(), {{"task_id", "task-001"}, {"reason", "OVERLOADED"}}));
    QCOMPARE(kindName(c.kind), kindName(kind));
    QCOMPARE(c.taskId, QStringLiteral("task-001"));
    QCOMPARE(c.envelope, QStringLiteral("000"));
    if (kind == ConventionKind::TaskReject)
        QCOMPARE(c.reason, QStringLiteral("OVERLOADED"));
}

void TestConventions::taskCompleteWithFailedStatus()
{
    const ConventionInfo c = interpretBoth(env000("TASK_COMPLETE", {{"task_id", "task-001"}, {"status", "FAILED"},
                                                                      {"output", Json::object()}, {"duration", 59}}));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskComplete));
    QCOMPARE(c.taskStatus, QStringLiteral("FAILED"));

    const ConventionInfo ok = interpretBoth(env000("TASK_COMPLETE", {{"task_id", "task-001"}, {"status", "success"}}));
    QCOMPARE(ok.taskStatus, QStringLiteral("SUCCESS"));
}

void TestConventions::taskFailed()
{
    const ConventionInfo c = interpretBoth(env000("TASK_FAILED", {{"task_id", "task-001"}, {"error_code", "EXECUTION_ERROR"},
                                                                    {"error_message", "Failed to parse input code"},
                                                                    {"retry_possible", true}}, Json::object(), 8));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::TaskFailed));
    QCOMPARE(c.taskId, QStringLiteral("task-001"));
    QCOMPARE(c.errorCode, QStringLiteral("EXECUTION_ERROR"));
    QCOMPARE(c.errorMessage, QStringLiteral("Failed to parse input code"));
    QCOMPARE(c.severity, QStringLiteral("ERROR")); // a failed task is an error unless it says otherwise
    QCOMPARE(c.priority.value_or(-1), 8);
}

void TestConventions::heartbeat()
{
    const ConventionInfo c = interpretBoth(env000("HEARTBEAT", {{"status", "ACTIVE"}, {"load", 0.45}, {"tasks_running", 3},
                                                                  {"tasks_queued", 5}, {"capabilities", {"code_review"}}},
                                                     Json::object(), 1));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::Heartbeat));
    QCOMPARE(c.heartbeatStatus, QStringLiteral("ACTIVE"));
    QVERIFY(c.load);
    QCOMPARE(*c.load, 0.45);
    QCOMPARE(c.tasksRunning.value_or(-1), 3);
    QCOMPARE(c.tasksQueued.value_or(-1), 5);
    QCOMPARE(c.priority.value_or(-1), 1);

    // Fields that are absent stay absent (the store must not overwrite with zero).
    const ConventionInfo thin = interpretBoth(env000("HEARTBEAT", {{"status", "IDLE"}}));
    QVERIFY(!thin.load);
    QVERIFY(!thin.tasksRunning);
    QVERIFY(!thin.tasksQueued);
}

void TestConventions::statusUpdateUsageAndProgress()
{
    const Json payload = {{"agent_id", "agent-analyst"},
                          {"status", {{"state", "BUSY"}, {"capability_level", 80}, {"error_rate", 0.01}}},
                          {"current_tasks", {"task-42"}},
                          {"resource_usage", {{"tokens_used", 12000}, {"tokens_remaining", 88000}, {"cost_usd", 0.42},
                                              {"cpu_usage", 30}, {"memory_usage", 50}}},
                          {"health_metrics", {{"uptime_seconds", 360}}},
                          {"progress", 60}};
    const ConventionInfo c = interpretBoth(env003("STATUS_UPDATE", payload, {{"priority", "normal"}}));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::StatusUpdate));
    QCOMPARE(c.tokensUsed.value_or(-1), qint64(12000));
    QCOMPARE(c.tokensRemaining.value_or(-1), qint64(88000));
    QVERIFY(c.costUsd);
    QCOMPARE(*c.costUsd, 0.42);
    QCOMPARE(c.progress.value_or(-1), 60.0);
    QCOMPARE(c.heartbeatStatus, QStringLiteral("BUSY"));
    QCOMPARE(c.priority.value_or(-1), 5);

    // 000-style STATUS_RESPONSE: progress percent and a task status.
    const ConventionInfo r = interpretBoth(env000("STATUS_RESPONSE", {{"query_id", "sq-001"}, {"task_id", "task-001"},
                                                                        {"status", "RUNNING"}, {"progress", 45}}));
    QCOMPARE(kindName(r.kind), kindName(ConventionKind::StatusResponse));
    QCOMPARE(r.progress.value_or(-1), 45.0);
    QCOMPARE(r.taskStatus, QStringLiteral("RUNNING"));
    QCOMPARE(r.taskId, QStringLiteral("task-001"));
}

void TestConventions::errorReportSeverity_data()
{
    QTest::addColumn<QString>("severity");
    QTest::addColumn<QString>("expected");
    QTest::newRow("003 low") << "low" << "INFO";
    QTest::newRow("003 medium") << "medium" << "WARNING";
    QTest::newRow("003 high") << "high" << "ERROR";
    QTest::newRow("003 critical") << "critical" << "CRITICAL";
    QTest::newRow("000 WARNING") << "WARNING" << "WARNING";
    QTest::newRow("000 INFO") << "INFO" << "INFO";
}

void TestConventions::errorReportSeverity()
{
    QFETCH(QString, severity);
    QFETCH(QString, expected);
    const Json payload = {{"error_id", "err-1"}, {"agent_id", "agent-analyst"}, {"task_id", "task-42"},
                          {"error_type", "RATE_LIMIT"}, {"severity", severity.toStdString()},
                          {"message", "429 from upstream"}, {"recovery_attempts", Json::array()}};
    const ConventionInfo c = interpretBoth(env003("ERROR_REPORT", payload, {{"priority", "critical"}}));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::ErrorReport));
    QCOMPARE(c.severity, expected);
    QCOMPARE(c.errorCode, QStringLiteral("RATE_LIMIT"));
    QCOMPARE(c.errorMessage, QStringLiteral("429 from upstream"));
    QCOMPARE(c.taskId, QStringLiteral("task-42"));

    // 000 ERROR with error_code and error_message.
    const ConventionInfo e = interpretBoth(env000("ERROR", {{"error_type", "PROTOCOL_ERROR"}, {"error_code", "INVALID_MESSAGE_FORMAT"},
                                                              {"error_message", "Missing required field: task_id"},
                                                              {"severity", severity.toStdString()}}));
    QCOMPARE(kindName(e.kind), kindName(ConventionKind::ErrorReport));
    QCOMPARE(e.errorCode, QStringLiteral("INVALID_MESSAGE_FORMAT"));
    QCOMPARE(e.errorMessage, QStringLiteral("Missing required field: task_id"));
    QCOMPARE(e.severity, expected);
}

void TestConventions::correlationIds()
{
    ConventionInfo c = interpretBoth(env000("TASK_ACCEPT", {{"task_id", "t"}},
                                               {{"correlation_id", "trace-001"}, {"parent_message_id", "main-001"}}));
    QCOMPARE(c.correlationId, QStringLiteral("trace-001"));
    QCOMPARE(c.parentMessageId, QStringLiteral("main-001"));

    c = interpretBoth(env003("TASK_UPDATE", {{"task_id", "t"}}, {{"correlationId", "camel-1"}}));
    QCOMPARE(c.correlationId, QStringLiteral("camel-1"));

    // A bare payload may carry it at the top level.
    c = interpretBoth(Json{{"type", "TASK_UPDATE"}, {"task_id", "t"}, {"correlation_id", "top-1"}});
    QCOMPARE(c.correlationId, QStringLiteral("top-1"));

    // 002: the header's correlationId wins over metadata.
    c = interpretBoth(Json{{"header", {{"messageId", "m"}, {"correlationId", "hdr"}}},
                              {"body", {{"action", "TASK_UPDATE"}, {"payload", {{"task_id", "t"}}}}},
                              {"metadata", {{"correlation_id", "meta"}}}});
    QCOMPARE(c.correlationId, QStringLiteral("hdr"));
}

void TestConventions::priorityStrings_data()
{
    QTest::addColumn<QString>("priority");
    QTest::addColumn<int>("expected");
    QTest::newRow("critical") << "critical" << 10;
    QTest::newRow("high") << "high" << 8;
    QTest::newRow("normal") << "normal" << 5;
    QTest::newRow("low") << "low" << 2;
    QTest::newRow("upper case") << "HIGH" << 8;
    QTest::newRow("unknown word") << "whenever" << -1;
}

void TestConventions::priorityStrings()
{
    QFETCH(QString, priority);
    QFETCH(int, expected);
    const ConventionInfo c = interpretBoth(env003("TASK_UPDATE", {{"task_id", "t"}}, {{"priority", priority.toStdString()}}));
    QCOMPARE(c.priority.value_or(-1), expected);

    // A numeric envelope priority wins over the metadata word.
    const ConventionInfo numeric =
        interpretBoth(env000("TASK_UPDATE", {{"task_id", "t"}}, {{"priority", priority.toStdString()}}, 3));
    QCOMPARE(numeric.priority.value_or(-1), 3);
}

void TestConventions::typeSpellingsAreNormalised_data()
{
    QTest::addColumn<QString>("type");
    QTest::addColumn<ConventionKind>("kind");
    QTest::newRow("lower case") << "heartbeat" << ConventionKind::Heartbeat;
    QTest::newRow("dotted") << "task.complete" << ConventionKind::TaskComplete;
    QTest::newRow("dashed") << "task-accepted" << ConventionKind::TaskAccept;
    QTest::newRow("spaced") << "Status Update" << ConventionKind::StatusUpdate;
    QTest::newRow("padded") << "  ERROR_REPORT  " << ConventionKind::ErrorReport;
}

void TestConventions::typeSpellingsAreNormalised()
{
    QFETCH(QString, type);
    QFETCH(ConventionKind, kind);
    const std::string t = type.toStdString();
    const ConventionInfo c = interpretBoth(env000(t.c_str(), {{"task_id", "x"}}));
    QCOMPARE(kindName(c.kind), kindName(kind));
    QCOMPARE(c.rawType, type); // as written
}

void TestConventions::nonObjectPayloads_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::newRow("string") << QByteArray(R"("Please summarise your progress.")");
    QTest::newRow("array") << QByteArray(R"([{"type":"HEARTBEAT"}])");
    QTest::newRow("number") << QByteArray("42");
    QTest::newRow("null") << QByteArray("null");
    QTest::newRow("bool") << QByteArray("true");
}

void TestConventions::nonObjectPayloads()
{
    QFETCH(QByteArray, payload);
    const ConventionInfo c = interpretBoth(Json::parse(payload.toStdString()));
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::None));
    QVERIFY(c.envelope.isEmpty());
    QVERIFY(c.taskId.isEmpty());
    QVERIFY(!c.priority);
}

void TestConventions::unknownTypeIsNone()
{
    // What the demo agents of the captures send ({"type":"assign","task":...}): not a seed type.
    const ConventionInfo c = interpretBoth(Json{{"type", "assign"}, {"task", "task for worker-1"}});
    QCOMPARE(kindName(c.kind), kindName(ConventionKind::None));
    QVERIFY(c.envelope.isEmpty());
    QCOMPARE(c.rawType, QStringLiteral("assign"));
}

QTEST_GUILESS_MAIN(TestConventions)
#include "tst_conventions.moc"
