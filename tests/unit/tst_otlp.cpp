// OpenTelemetry (trace/Otlp.h): the OTLP/JSON export checked with an independent reader
// (QJsonDocument) line by line, the round trip export → import against the model, agents that
// sent more than a span holds, spans of other frameworks (GenAI conventions, deprecated names,
// a pretty-printed file), and hostile files. The checks against the official OpenTelemetry JS
// SDK and the OTLP protobuf definitions are in tests/integration/tst_otel_interop.cpp.
#include "TestSupport.h"

#include "map/PayloadConventions.h"
#include "model/StateJson.h"
#include "trace/Otlp.h"
#include "trace/TraceLoader.h"

#include <QBuffer>
#include <QFile>
#include <QTemporaryFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace mapi;

namespace {

QByteArray exportToBytes(const SystemStore &store, OtlpCounts *counts = nullptr)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const auto writer = makeOtlpWriter(store, buffer, {}, counts);
    while (writer->writeSome(100)) { // small slices: the sliced path is the one checked
    }
    if (!writer->error().isEmpty())
        qWarning("export failed: %s", qPrintable(writer->error()));
    return bytes;
}

QList<QJsonObject> allSpans(const QByteArray &file)
{
    QList<QJsonObject> spans;
    for (const QByteArray &line : file.split('\n')) {
        if (line.isEmpty())
            continue;
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            qWarning("not a JSON object: %s", qPrintable(error.errorString()));
            return {};
        }
        for (const QJsonValue rs : doc.object().value(QStringLiteral("resourceSpans")).toArray())
            for (const QJsonValue ss : rs.toObject().value(QStringLiteral("scopeSpans")).toArray())
                for (const QJsonValue span : ss.toObject().value(QStringLiteral("spans")).toArray())
                    spans << span.toObject();
    }
    return spans;
}

QJsonValue attribute(const QJsonObject &owner, const QString &key)
{
    for (const QJsonValue kv : owner.value(QStringLiteral("attributes")).toArray())
        if (kv.toObject().value(QStringLiteral("key")).toString() == key)
            return kv.toObject().value(QStringLiteral("value"));
    return QJsonValue(QJsonValue::Undefined);
}

bool load(SystemStore &store, const QString &path, TraceLoadResult *result = nullptr)
{
    TraceLoadOptions options;
    options.keepTimeline = true;
    const TraceLoadResult r = loadTraceInto(store, path, options);
    if (result)
        *result = r;
    if (!r.ok)
        qWarning("load failed: %s", qPrintable(r.error));
    return r.ok;
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A span of another framework, in the OTLP JSON mapping.
Json span(const std::string &id, const std::string &parent, const std::string &name, qint64 startMs, qint64 endMs, Json attributes,
          int statusCode = 0)
{
    Json attrs = Json::array();
    for (auto it = attributes.begin(); it != attributes.end(); ++it) {
        Json value;
        if (it->is_string())
            value = {{"stringValue", *it}};
        else if (it->is_number_integer())
            value = {{"intValue", *it}}; // a number, as the JS SDK writes it
        else
            value = {{"doubleValue", *it}};
        attrs.push_back({{"key", it.key()}, {"value", value}});
    }
    Json s = {{"traceId", "0af7651916cd43dd8448eb211c80319c"},
              {"spanId", id},
              {"name", name},
              {"kind", 1},
              {"startTimeUnixNano", std::to_string(startMs * 1000000)},
              {"endTimeUnixNano", std::to_string(endMs * 1000000)},
              {"attributes", attrs}};
    if (!parent.empty())
        s["parentSpanId"] = parent;
    if (statusCode)
        s["status"] = {{"code", statusCode}, {"message", "tool timed out"}};
    return s;
}

Json request(const Json &spans, const std::string &service = "crew")
{
    return {{"resourceSpans",
             {{{"resource", {{"attributes", {{{"key", "service.name"}, {"value", {{"stringValue", service}}}}}}}},
               {"scopeSpans", {{{"scope", {{"name", "framework"}}}, {"spans", spans}}}}}}}};
}

} // namespace

class TestOtlp : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void exportFollowsTheMappingAndConventions()
    {
        SystemStore store;
        QVERIFY(load(store, QStringLiteral(MAPI_SAMPLE_TRACE)));
        QVERIFY(store.agents().size() > 10);
        QVERIFY(store.messages().size() > 1000);
        OtlpCounts counts;
        const QByteArray file = exportToBytes(store, &counts);
        const QList<QJsonObject> spans = allSpans(file);
        QCOMPARE(qint64(spans.size()), counts.agentSpans + counts.taskSpans);
        QCOMPARE(counts.taskSpans, qint64(store.tasks().size()));
        QCOMPARE(counts.messageEvents, qint64(store.messages().size()));

        static const QRegularExpression traceHex(QStringLiteral("^[0-9a-f]{32}$")), spanHex(QStringLiteral("^[0-9a-f]{16}$")),
            decimal(QStringLiteral("^[0-9]+$"));
        QSet<QString> ids;
        QString traceId;
        for (const QJsonObject &s : spans) {
            QVERIFY(traceHex.match(s.value(QStringLiteral("traceId")).toString()).hasMatch());
            QVERIFY(spanHex.match(s.value(QStringLiteral("spanId")).toString()).hasMatch());
            QVERIFY(decimal.match(s.value(QStringLiteral("startTimeUnixNano")).toString()).hasMatch());
            QVERIFY(s.value(QStringLiteral("startTimeUnixNano")).toString().toULongLong()
                    <= s.value(QStringLiteral("endTimeUnixNano")).toString().toULongLong());
            QCOMPARE(s.value(QStringLiteral("kind")).toInt(), 1);
            if (traceId.isEmpty())
                traceId = s.value(QStringLiteral("traceId")).toString();
            QCOMPARE(s.value(QStringLiteral("traceId")).toString(), traceId); // one trace
            QVERIFY(!ids.contains(s.value(QStringLiteral("spanId")).toString()));
            ids.insert(s.value(QStringLiteral("spanId")).toString());
        }
        int agentSpans = 0, events = 0;
        QSet<QString> agentIds;
        for (const QJsonObject &s : spans) {
            const QString parent = s.value(QStringLiteral("parentSpanId")).toString();
            QVERIFY2(parent.isEmpty() || ids.contains(parent), "a parent span id that is no span");
            events += int(s.value(QStringLiteral("events")).toArray().size());
            if (!s.value(QStringLiteral("name")).toString().startsWith(QLatin1String("invoke_agent ")))
                continue;
            ++agentSpans;
            QCOMPARE(attribute(s, QStringLiteral("gen_ai.operation.name")).toObject().value(QStringLiteral("stringValue")).toString(),
                     QStringLiteral("invoke_agent"));
            const QString id = attribute(s, QStringLiteral("gen_ai.agent.id")).toObject().value(QStringLiteral("stringValue")).toString();
            const Agent *agent = store.agent(id);
            QVERIFY2(agent, qPrintable(id));
            agentIds.insert(id);
            QCOMPARE(attribute(s, QStringLiteral("gen_ai.agent.name")).toObject().value(QStringLiteral("stringValue")).toString(), agent->name);
            QVERIFY(!attribute(s, QStringLiteral("gen_ai.provider.name")).isUndefined());
            if (agent->tokensUsed) // int64 as a decimal string
                QCOMPARE(attribute(s, QStringLiteral("map.usage.tokens_used")).toObject().value(QStringLiteral("intValue")).toString(),
                         QString::number(*agent->tokensUsed));
            if (agent->costUsd)
                QCOMPARE(attribute(s, QStringLiteral("map.cost.usd")).toObject().value(QStringLiteral("doubleValue")).toDouble(), *agent->costUsd);
        }
        QCOMPARE(agentIds.size(), int(store.agents().size()));
        QCOMPARE(events - int(store.messages().size()) >= 0, true); // messages plus task transitions
        QVERIFY(agentSpans >= int(store.agents().size()));
        // The same model exports the same bytes (ids derive from the model, not from chance).
        QCOMPARE(exportToBytes(store), file);
    }

    void roundTripKeepsTheModel()
    {
        SystemStore original;
        QVERIFY(load(original, QStringLiteral(MAPI_SAMPLE_TRACE)));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sample.otlp.json"));
        QString error;
        QVERIFY2(writeOtlpJson(original, path, {}, nullptr, &error), qPrintable(error));
        SystemStore imported;
        TraceLoadResult r;
        QVERIFY(load(imported, path, &r));
        QCOMPARE(r.stats.format, QStringLiteral("otlp"));
        QCOMPARE(r.stats.badLineCount, 0);

        auto agentsJson = [](const SystemStore &store) { return stateToJson(store).at("agents"); };
        QCOMPARE(agentsJson(imported), agentsJson(original));
        QCOMPARE(imported.messages().size(), original.messages().size());
        QSet<QString> originalIds, importedIds;
        for (size_t row = 0; row < original.messages().size(); ++row)
            originalIds.insert(original.messages().id(row));
        for (size_t row = 0; row < imported.messages().size(); ++row)
            importedIds.insert(imported.messages().id(row));
        QCOMPARE(importedIds, originalIds);
        // Every payload, as JSON (the import writes a payload's text into its frame as it is).
        QHash<QString, QByteArray> originalPayloads;
        for (size_t row = 0; row < original.messages().size(); ++row)
            originalPayloads.insert(original.messages().id(row), original.messagePayload(int(row)));
        int payloads = 0;
        for (size_t row = 0; row < imported.messages().size(); ++row) {
            const QByteArray back = imported.messagePayload(int(row));
            const QByteArray was = originalPayloads.value(imported.messages().id(row));
            QCOMPARE(Json::parse(back.toStdString(), nullptr, false), Json::parse(was.toStdString(), nullptr, false));
            payloads += back.size() > 2 ? 1 : 0;
        }
        QVERIFY(payloads > 100); // the sample's messages carry payloads: the comparison compared some
        QCOMPARE(imported.tasks().size(), original.tasks().size());
        for (const Task &t : original.tasks()) {
            const Task *back = imported.task(t.id);
            QVERIFY2(back, qPrintable(t.id));
            QCOMPARE(back->status, t.status);
            QCOMPARE(back->assigneeId, t.assigneeId);
            QCOMPARE(back->historySize, t.historySize);
        }
    }

    // The export spools its message events to a temporary file; where none can be made it
    // encodes them from the store instead: the same bytes.
    void exportWithoutATemporaryFileWritesTheSame()
    {
#ifndef Q_OS_UNIX
        QSKIP("the temporary folder is set through TMPDIR, which Windows does not read");
#endif
        SystemStore store;
        QVERIFY(load(store, QStringLiteral(MAPI_SAMPLE_TRACE)));
        QVERIFY(!store.messages().empty());
        const auto exportBytes = [&store] {
            QByteArray bytes;
            QBuffer buffer(&bytes);
            buffer.open(QIODevice::WriteOnly);
            const auto writer = makeOtlpWriter(store, buffer);
            while (writer->writeSome(100)) {
            }
            return writer->error().isEmpty() ? bytes : QByteArray("error: " + writer->error().toUtf8());
        };
        const QByteArray spooled = exportBytes();
        QVERIFY(spooled.startsWith("{\"resourceSpans\""));
        const QByteArray tmpdir = qgetenv("TMPDIR");
        // The temporary folder a file (QDir::tempPath() reads TMPDIR on Unix): nothing can be
        // made in it, even by root.
        QTemporaryDir dir;
        const QString notAFolder = dir.filePath(QStringLiteral("a-file"));
        QFile file(notAFolder);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        qputenv("TMPDIR", notAFolder.toUtf8());
        QTemporaryFile probe;
        QVERIFY(!probe.open());
        const QByteArray direct = exportBytes();
        if (tmpdir.isNull())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", tmpdir);
        QCOMPARE(direct.size(), spooled.size());
        QVERIFY(direct == spooled);
    }

    // An agent that sent 2,500 messages: three spans (1,000 events each at most), the later
    // ones children of the first; all 2,500 come back.
    void longSendersContinueInParts()
    {
        QTemporaryDir dir;
        QByteArray log;
        for (int i = 0; i < 2500; ++i)
            log += QStringLiteral("{\"message_id\":\"m%1\",\"type\":\"HEARTBEAT\",\"from\":\"talker\",\"to\":\"listener\","
                                  "\"timestamp\":%2,\"payload\":{\"status\":\"ACTIVE\",\"resource_usage\":{\"tokens_used\":%3,"
                                  "\"input_tokens\":%4,\"output_tokens\":%5}}}\n")
                       .arg(i).arg(1764000000000LL + i * 10).arg(i * 4).arg(i * 3).arg(i).toUtf8();
        const QString logPath = dir.filePath(QStringLiteral("log.jsonl"));
        QVERIFY(writeFile(logPath, log));
        SystemStore store;
        QVERIFY(load(store, logPath));
        QCOMPARE(store.messages().size(), size_t(2500));
        const Agent *talker = store.agent(QStringLiteral("talker"));
        QVERIFY(talker);
        QCOMPARE(talker->inputTokens.value_or(-1), 2499 * 3);
        QCOMPARE(talker->outputTokens.value_or(-1), 2499);

        const QByteArray file = exportToBytes(store);
        QString firstId;
        QList<QJsonObject> parts;
        for (const QJsonObject &s : allSpans(file)) {
            if (attribute(s, QStringLiteral("gen_ai.agent.id")).toObject().value(QStringLiteral("stringValue")).toString() != QLatin1String("talker"))
                continue;
            parts << s;
            QVERIFY(s.value(QStringLiteral("events")).toArray().size() <= kOtlpMessagesPerSpan);
            QCOMPARE(attribute(s, QStringLiteral("gen_ai.usage.input_tokens")).toObject().value(QStringLiteral("intValue")).toString(),
                     QString::number(2499 * 3));
            QCOMPARE(attribute(s, QStringLiteral("gen_ai.usage.output_tokens")).toObject().value(QStringLiteral("intValue")).toString(),
                     QString::number(2499));
        }
        QCOMPARE(parts.size(), 3);
        const QString first = parts[0].value(QStringLiteral("spanId")).toString();
        QVERIFY(attribute(parts[0], QStringLiteral("map.span.part")).isUndefined());
        for (int i = 1; i < 3; ++i) {
            QCOMPARE(parts[i].value(QStringLiteral("parentSpanId")).toString(), first);
            QCOMPARE(attribute(parts[i], QStringLiteral("map.span.part")).toObject().value(QStringLiteral("intValue")).toString(), QString::number(i));
        }
        const QString path = dir.filePath(QStringLiteral("parts.otlp.json"));
        QVERIFY(writeFile(path, file));
        SystemStore back;
        QVERIFY(load(back, path));
        QCOMPARE(back.messages().size(), size_t(2500));
        QCOMPARE(back.agents().size(), size_t(2));
        QCOMPARE(back.agent(QStringLiteral("talker"))->inputTokens.value_or(-1), 2499 * 3);
    }

    // Large payloads: parts end at 4 MiB of messages, so no line reaches the reader's 16 MiB
    // limit and the file reads back whole; a secret in a payload does not reach the file.
    void largePayloadsAndSecrets()
    {
        QTemporaryDir dir;
        QByteArray log;
        const QByteArray filler(20000, 'x');
        for (int i = 0; i < 1200; ++i)
            log += "{\"message_id\":\"p" + QByteArray::number(i) + "\",\"type\":\"REPORT\",\"from\":\"big\",\"to\":\"sink\","
                   "\"timestamp\":" + QByteArray::number(1764000000000LL + i) + ",\"payload\":{\"text\":\"" + filler
                + "\",\"api_key\":\"sk-live-0123456789abcdef\"}}\n";
        const QString logPath = dir.filePath(QStringLiteral("big.jsonl"));
        QVERIFY(writeFile(logPath, log));
        SystemStore store;
        QVERIFY(load(store, logPath));
        QCOMPARE(store.messages().size(), size_t(1200));
        const QByteArray file = exportToBytes(store);
        QVERIFY(!file.contains("sk-live-0123456789abcdef"));
        qsizetype longest = 0;
        for (const QByteArray &line : file.split('\n'))
            longest = std::max(longest, line.size());
        QVERIFY2(longest < 16 * 1024 * 1024, qPrintable(QString::number(longest)));
        int parts = 0;
        for (const QJsonObject &s : allSpans(file))
            parts += attribute(s, QStringLiteral("gen_ai.agent.id")).toObject().value(QStringLiteral("stringValue")).toString() == QLatin1String("big");
        QVERIFY(parts >= 6); // 24 MB of payloads in parts of at most 4 MiB (each below 1,000 messages)
        const QString path = dir.filePath(QStringLiteral("big.otlp.json"));
        QVERIFY(writeFile(path, file));
        SystemStore back;
        TraceLoadResult r;
        QVERIFY(load(back, path, &r));
        QCOMPARE(r.stats.badLineCount, 0);
        QCOMPARE(back.messages().size(), size_t(1200));
    }

    // Issue 42 item 2e: span names are made of agent names and task types, text from the system:
    // redacted like every other text of the file.
    void spanNamesAreRedacted()
    {
        QTemporaryDir dir;
        const QByteArray secret = "sk-live-9f8e7d6c5b4a3f2e1d0c";
        const QByteArray log = "{\"message_id\":\"m1\",\"type\":\"TASK_REQUEST\",\"from\":\"" + secret
            + "\",\"to\":\"sink\",\"timestamp\":1764000000000,\"payload\":{\"task_id\":\"t1\"}}\n";
        const QString logPath = dir.filePath(QStringLiteral("leaky.jsonl"));
        QVERIFY(writeFile(logPath, log));
        SystemStore store;
        QVERIFY(load(store, logPath));
        QVERIFY(store.agent(QString::fromLatin1(secret))); // the model keeps what the system said
        const QByteArray file = exportToBytes(store);
        QVERIFY(!allSpans(file).isEmpty());
        QVERIFY2(!file.contains(secret), file.left(2000).constData());
    }

    // Spans of a framework instrumented with the GenAI conventions, in a pretty-printed file:
    // agents from invoke_agent spans (one with only the deprecated gen_ai.system, one known by
    // name only), parents from the span tree, tasks from invocations inside another agent's
    // work, usage summed from the model calls (deprecated prompt/completion names too), the
    // service's own spans as an agent, and a failed invocation as a failed task.
    void genAiSpansOfOtherFrameworks()
    {
        const qint64 t0 = 1764000000000LL;
        Json spans = Json::array({
            span("00000000000000a1", "", "POST /run", t0, t0 + 900, Json::object()),
            span("00000000000000b1", "00000000000000a1", "invoke_agent planner", t0 + 10, t0 + 800,
                 {{"gen_ai.operation.name", "invoke_agent"}, {"gen_ai.agent.id", "planner"}, {"gen_ai.agent.name", "Planner"},
                  {"gen_ai.system", "openai"}}),
            span("00000000000000b2", "00000000000000b1", "chat gpt", t0 + 20, t0 + 60,
                 {{"gen_ai.operation.name", "chat"}, {"gen_ai.usage.prompt_tokens", 100}, {"gen_ai.usage.completion_tokens", 40}}),
            // The agent span repeats its calls' sum: not counted twice.
            span("00000000000000c1", "00000000000000b1", "invoke_agent coder", t0 + 100, t0 + 400,
                 {{"gen_ai.operation.name", "invoke_agent"}, {"gen_ai.agent.name", "coder"}, {"gen_ai.usage.input_tokens", 700},
                  {"gen_ai.usage.output_tokens", 300}}),
            span("00000000000000c2", "00000000000000c1", "chat claude", t0 + 110, t0 + 200,
                 {{"gen_ai.usage.input_tokens", 500}, {"gen_ai.usage.output_tokens", 200}}),
            span("00000000000000c3", "00000000000000c2", "chat claude", t0 + 210, t0 + 300,
                 {{"gen_ai.usage.input_tokens", 200}, {"gen_ai.usage.output_tokens", 100}, {"gen_ai.usage.cost", 0.25}}),
            span("00000000000000d1", "00000000000000b1", "invoke_agent tester", t0 + 500, t0 + 700,
                 {{"gen_ai.operation.name", "invoke_agent"}, {"gen_ai.agent.id", "tester"}}, 2),
        });
        // Pretty-printed: one request over many lines.
        const QByteArray text = QByteArray::fromStdString(request(spans).dump(2));
        QVERIFY(text.startsWith("{\n"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("crew.json"));
        QVERIFY(writeFile(path, text));
        SystemStore store;
        TraceLoadResult r;
        QVERIFY(load(store, path, &r));
        QCOMPARE(r.stats.format, QStringLiteral("otlp"));

        QCOMPARE(store.agents().size(), size_t(4));
        const Agent *crew = store.agent(QStringLiteral("crew"));
        const Agent *planner = store.agent(QStringLiteral("planner"));
        const Agent *coder = store.agent(QStringLiteral("coder"));
        const Agent *tester = store.agent(QStringLiteral("tester"));
        QVERIFY(crew && planner && coder && tester);
        QCOMPARE(crew->role, QStringLiteral("service"));
        QCOMPARE(planner->name, QStringLiteral("Planner"));
        QCOMPARE(planner->role, QStringLiteral("agent"));
        QCOMPARE(planner->parentId, QStringLiteral("crew"));
        QCOMPARE(coder->parentId, QStringLiteral("planner"));
        QCOMPARE(tester->parentId, QStringLiteral("planner"));
        QCOMPARE(planner->metadata.value("provider", std::string()), std::string("openai"));
        QCOMPARE(planner->inputTokens.value_or(-1), 100);
        QCOMPARE(planner->outputTokens.value_or(-1), 40);
        QCOMPARE(coder->inputTokens.value_or(-1), 700);
        QCOMPARE(coder->outputTokens.value_or(-1), 300);
        QCOMPARE(coder->tokensUsed.value_or(-1), 1000);
        QCOMPARE(coder->costUsd.value_or(-1), 0.25);
        QVERIFY(!tester->tokensUsed);

        QCOMPARE(store.tasks().size(), size_t(3)); // crew → planner, planner → coder, planner → tester
        const Task *coding = store.task(QStringLiteral("otlp-00000000000000c1"));
        const Task *testing = store.task(QStringLiteral("otlp-00000000000000d1"));
        QVERIFY(coding && testing);
        QCOMPARE(coding->requesterId, QStringLiteral("planner"));
        QCOMPARE(coding->assigneeId, QStringLiteral("coder"));
        QCOMPARE(coding->status, QStringLiteral("completed"));
        QCOMPARE(coding->createdAtMs, t0 + 100);
        QCOMPARE(coding->updatedAtMs, t0 + 400);
        QCOMPARE(testing->status, QStringLiteral("failed"));
        QVERIFY(coder->messagesSent >= 1 && planner->messagesSent >= 2);
    }

    // Damage: a line that is no JSON, a request without resourceSpans, spans with bad or zero
    // ids (dropped and counted), a parent cycle, times as numbers or missing, an enum by name:
    // the rest loads.
    void hostileFilesLoseOnlyTheirDamage()
    {
        const qint64 t0 = 1764000000000LL;
        Json good = request(Json::array({
            span("00000000000000a1", "00000000000000a2", "invoke_agent a", t0, t0 + 10, {{"gen_ai.agent.id", "a"}}),
            span("00000000000000a2", "00000000000000a1", "step", t0, t0 + 10, Json::object()), // a cycle with a1
            span("00000000000000a3", "00000000000000a3", "invoke_agent b", t0 + 5, t0 + 8, {{"gen_ai.agent.id", "b"}}), // its own parent
        }));
        Json odd = request(Json::array({
            span("0000000000000000", "", "zero id", t0, t0 + 1, Json::object()),
            span("xyz", "", "bad id", t0, t0 + 1, Json::object()),
        }));
        Json numbers = request(Json::array(
            {span("00000000000000e1", "", "invoke_agent c", t0, t0 + 3, {{"gen_ai.agent.id", "c"}, {"gen_ai.usage.input_tokens", 77}})}));
        auto &s = numbers["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        s["startTimeUnixNano"] = (t0 + 1) * 1000000; // a number, not a string
        s.erase("endTimeUnixNano");
        s["status"] = {{"code", "STATUS_CODE_ERROR"}};
        // An integer beyond 64 bits, which simdjson refuses and nlohmann's parser reads: the
        // request is read all the same.
        QByteArray bigInteger = QByteArray::fromStdString(
            request(Json::array({span("00000000000000f1", "", "invoke_agent d", t0, t0 + 4, {{"gen_ai.agent.id", "d"}})})).dump());
        bigInteger.replace("\"kind\":1", "\"kind\":1,\"droppedEventsCount\":123456789012345678901234567890");
        QVERIFY(bigInteger.contains("123456789012345678901234567890"));
        // A -0 reads as the integer 0, as nlohmann's parser reads it (what an intValue must be).
        // simdjson 3.0.1 (Debian 12) reads it so too; a simdjson that reads a double -0.0 sends
        // the request through nlohmann (OtlpImporter::add): this is where that would show.
        QByteArray numbersText = QByteArray::fromStdString(numbers.dump());
        numbersText.replace("{\"intValue\":77}", "{\"intValue\":-0}");
        QVERIFY(numbersText.contains("-0}"));
        const QByteArray file = QByteArray::fromStdString(good.dump()) + "\nnot json at all\n{\"resourceSpans\":5}\n"
            + QByteArray::fromStdString(odd.dump()) + '\n' + numbersText + '\n' + bigInteger + '\n';
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("hostile.otlp.json"));
        QVERIFY(writeFile(path, file));
        SystemStore store;
        TraceLoadResult r;
        QVERIFY(load(store, path, &r));
        QCOMPARE(r.stats.format, QStringLiteral("otlp"));
        QCOMPARE(r.stats.badLineCount, 2);
        QCOMPARE(r.stats.otlpSpansDropped, 2);
        QVERIFY(store.agent(QStringLiteral("a")));
        QVERIFY(store.agent(QStringLiteral("b")));
        QVERIFY(store.agent(QStringLiteral("c")));
        QCOMPARE(store.agent(QStringLiteral("c"))->registeredAtMs, t0 + 1);
        QCOMPARE(store.agent(QStringLiteral("c"))->inputTokens.value_or(-1), 0);
        QVERIFY(store.agent(QStringLiteral("d")));
    }

    // A message's payload text goes into its frame as it is when it is JSON on one line, parsed
    // when it spans lines, as a string when it is not JSON; nothing another attribute holds
    // (an id, a recipient that reads like the frame's own "payload" key) takes its place.
    void messagePayloadsReadAsWritten()
    {
        const qint64 t0 = 1764000000000LL;
        auto str = [](const std::string &v) { return Json{{"stringValue", v}}; };
        auto message = [&](const std::string &id, qint64 t, const Json &payloadText, const Json &to) {
            Json attributes = Json::array({{{"key", "map.message.id"}, {"value", str(id)}}, {{"key", "map.message.to"}, {"value", to}}});
            if (!payloadText.is_null())
                attributes.push_back({{"key", "map.message.payload"}, {"value", str(payloadText.get<std::string>())}});
            return Json{{"name", "map.message"}, {"timeUnixNano", std::to_string(t * 1000000)}, {"attributes", attributes}};
        };
        const Json toB = {{"arrayValue", {{"values", {str("b")}}}}};
        // A recipient that is an object {"payload": 0}: in the frame, after the payload's placeholder.
        const Json toLikeTheFrame = {
            {"arrayValue", {{"values", {{{"kvlistValue", {{"values", {{{"key", "payload"}, {"value", {{"intValue", "0"}}}}}}}}}}}}}};
        // Its note holds what the frame's placeholder for a payload looks like.
        const Json assignment = {{"type", "TASK_ASSIGNMENT"}, {"task_id", "t1"}, {"note", "\"payload\":0"}};
        const Json list = Json::array({1, 2, {{"x", nullptr}}});
        Json agentSpan = span("00000000000000a1", "", "invoke_agent a", t0, t0 + 100,
                              {{"gen_ai.agent.id", "a"}, {"map.agent.messages_sent", 5}});
        agentSpan["events"] = Json::array({
            message("m-object", t0 + 1, assignment.dump(), toB),
            message("m-lines", t0 + 2, "{\n  \"type\": \"STATUS_UPDATE\",\n  \"status\": \"ok\"\n}", toB),
            message("m-text", t0 + 3, "plain words, not JSON", toB),
            message("\"payload\":0", t0 + 4, list.dump(), toLikeTheFrame),
            message("m-none", t0 + 5, Json(), toB),
            // What nlohmann's lexer reads but no frame parser would: a byte order mark first, a NUL after.
            message("m-bom", t0 + 6, std::string("\xEF\xBB\xBF{\"a\":1}"), toB),
            message("m-nul", t0 + 7, std::string("{}\0 after", 9), toB),
        });
        Json b = span("00000000000000b1", "", "invoke_agent b", t0, t0 + 100, {{"gen_ai.agent.id", "b"}, {"map.agent.messages_sent", 0}});
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("payloads.otlp.json"));
        QVERIFY(writeFile(path, QByteArray::fromStdString(request(Json::array({agentSpan, b})).dump()) + '\n'));
        SystemStore store;
        TraceLoadResult r;
        QVERIFY(load(store, path, &r));
        QCOMPARE(r.stats.badLineCount, 0);
        QCOMPARE(store.counters().problems, qint64(0));
        QHash<QString, Json> payloads;
        for (size_t row = 0; row < store.messages().size(); ++row)
            payloads.insert(store.messages().id(row), Json::parse(store.messagePayload(int(row)).toStdString(), nullptr, false));
        QCOMPARE(payloads.size(), 7);
        QCOMPARE(payloads.value(QStringLiteral("m-object")), assignment);
        QCOMPARE(payloads.value(QStringLiteral("m-lines")), Json({{"type", "STATUS_UPDATE"}, {"status", "ok"}}));
        QCOMPARE(payloads.value(QStringLiteral("m-text")), Json("plain words, not JSON"));
        QCOMPARE(payloads.value(QStringLiteral("\"payload\":0")), list);
        QCOMPARE(payloads.value(QStringLiteral("m-none")), Json::object());
        QCOMPARE(payloads.value(QStringLiteral("m-bom")), Json({{"a", 1}}));
        QVERIFY(!payloads.value(QStringLiteral("m-nul")).is_discarded()); // read, as JSON or as its text
        QVERIFY(store.task(QStringLiteral("t1"))); // the assignment was read as one
    }

    // The span events' texts wait in a temporary file between the reading and the writing of
    // their events (issue 45 item 4): they come back byte for byte, in time order rather than in
    // the file's, across the file's buffered writes (1 MB), with their ids, recipients and tasks.
    void spooledTextsReadBackExactly()
    {
        const qint64 t0 = 1764000000000LL;
        auto str = [](const std::string &v) { return Json{{"stringValue", v}}; };
        auto message = [&](const std::string &id, qint64 t, const std::string &payloadText, const Json &to) {
            Json attributes = Json::array({{{"key", "map.message.to"}, {"value", to}}, {{"key", "map.message.payload"}, {"value", str(payloadText)}}});
            if (!id.empty())
                attributes.push_back({{"key", "map.message.id"}, {"value", str(id)}});
            return Json{{"name", "map.message"}, {"timeUnixNano", std::to_string(t * 1000000)}, {"attributes", attributes}};
        };
        const Json toB = {{"arrayValue", {{"values", {str("b")}}}}};
        const Json toBoth = {{"arrayValue", {{"values", {str("b"), str("c")}}}}};
        // Large texts, written in the reverse of their time order: five of them pass the buffer's 1 MB.
        std::vector<std::pair<std::string, Json>> expected; // id, payload
        Json events = Json::array();
        for (int i = 0; i < 5; ++i) {
            const std::string id = "big-" + std::to_string(i);
            const Json payload = {{"type", "STATUS_UPDATE"}, {"text", std::string(300000 + size_t(i), char('a' + i))}};
            events.push_back(message(id, t0 + 50 - i, payload.dump(), i % 2 ? toBoth : toB));
            expected.emplace_back(id, payload);
        }
        events.push_back(message("lines", t0 + 60, "{\n \"x\": [1, 2]\n}", toB));
        expected.emplace_back("lines", Json({{"x", {1, 2}}}));
        events.push_back(message("words", t0 + 61, std::string("words\0 and a NUL", 16), toB));
        events.push_back(message("", t0 + 62, "{\"no\":\"id\"}", toB));
        Json agentSpan = span("00000000000000a1", "", "invoke_agent a", t0, t0 + 100, {{"gen_ai.agent.id", "a"}, {"map.agent.messages_sent", 8}});
        agentSpan["events"] = events;
        Json task = span("00000000000000c1", "", "task t1", t0, t0 + 100, {{"map.task.id", "t1"}, {"map.task.type", "review"}});
        auto transition = [&](qint64 t, const std::string &status) {
            return Json{{"name", "map.task.transition"},
                        {"timeUnixNano", std::to_string(t * 1000000)},
                        {"attributes", {{{"key", "map.task.status"}, {"value", str(status)}}, {{"key", "map.agent.id"}, {"value", str("b")}}}}};
        };
        task["events"] = Json::array({transition(t0 + 70, "accepted"), transition(t0 + 80, "completed")});
        Json b = span("00000000000000b1", "", "invoke_agent b", t0, t0 + 100, {{"gen_ai.agent.id", "b"}, {"map.agent.messages_sent", 0}});
        Json c = span("00000000000000d1", "", "invoke_agent c", t0, t0 + 100, {{"gen_ai.agent.id", "c"}, {"map.agent.messages_sent", 0}});
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("spooled.otlp.json"));
        QVERIFY(writeFile(path, QByteArray::fromStdString(request(Json::array({agentSpan, task, b, c})).dump()) + '\n'));
        SystemStore store;
        TraceLoadResult r;
        QVERIFY(load(store, path, &r));
        QCOMPARE(r.stats.badLineCount, 0);
        QVERIFY(r.stats.streamError.isEmpty());
        QHash<QString, int> rows;
        for (size_t row = 0; row < store.messages().size(); ++row)
            rows.insert(store.messages().id(row), int(row));
        QCOMPARE(rows.size(), 8);
        for (const auto &[id, payload] : expected) {
            const QString key = QString::fromStdString(id);
            QVERIFY2(rows.contains(key), id.c_str());
            QCOMPARE(Json::parse(store.messagePayload(rows.value(key)).toStdString(), nullptr, false), payload);
        }
        // Not JSON: the text itself, its NUL kept.
        const Json words = Json::parse(store.messagePayload(rows.value(QStringLiteral("words"))).toStdString(), nullptr, false);
        QCOMPARE(words, Json(std::string("words\0 and a NUL", 16)));
        QVERIFY(rows.contains(QStringLiteral("otlp-message-1"))); // the one without an id is given one
        // The recipients as each event said them: a list of two (kept as JSON text in the spool),
        // or one.
        const MessageLog &log = store.messages();
        for (int i = 0; i < 5; ++i) {
            const size_t row = size_t(rows.value(QStringLiteral("big-%1").arg(i)));
            QCOMPARE(log.recipientCount(row), i % 2 ? 2 : 1);
            QVERIFY(log.hasRecipient(row, QStringLiteral("b")));
            QCOMPARE(log.hasRecipient(row, QStringLiteral("c")), i % 2 == 1);
        }
        const Task *t1 = store.task(QStringLiteral("t1"));
        QVERIFY(t1);
        QCOMPARE(t1->assigneeId, QStringLiteral("b"));
    }

    // The temporary file for the span events' texts cannot be made: the import says so (the
    // trace's stream error) and writes the other events, never an event of other bytes.
    void importWithoutATemporaryFileSaysSo()
    {
#ifndef Q_OS_UNIX
        QSKIP("the temporary folder is set through TMPDIR, which Windows does not read");
#endif
        const qint64 t0 = 1764000000000LL;
        Json agentSpan = span("00000000000000a1", "", "invoke_agent a", t0, t0 + 100, {{"gen_ai.agent.id", "a"}, {"map.agent.messages_sent", 1}});
        agentSpan["events"] = Json::array({{{"name", "map.message"},
                                            {"timeUnixNano", std::to_string((t0 + 1) * 1000000)},
                                            {"attributes", {{{"key", "map.message.id"}, {"value", {{"stringValue", "m1"}}}}}}}});
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("one.otlp.json"));
        QVERIFY(writeFile(path, QByteArray::fromStdString(request(Json::array({agentSpan})).dump()) + '\n'));
        const QString notAFolder = dir.filePath(QStringLiteral("a-file"));
        QVERIFY(writeFile(notAFolder, QByteArray("x")));
        const QByteArray tmpdir = qgetenv("TMPDIR");
        qputenv("TMPDIR", notAFolder.toUtf8());
        SystemStore store;
        TraceLoadResult r;
        const bool loaded = load(store, path, &r);
        if (tmpdir.isNull())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", tmpdir);
        QVERIFY(loaded);
        QVERIFY2(r.stats.streamError.contains(QStringLiteral("temporary file")), qPrintable(r.stats.streamError));
        QVERIFY(store.agent(QStringLiteral("a")));
        QCOMPARE(int(store.messages().size()), 0);
    }

    // A write to that file fails midway (a full disk): error() says why, and what was written
    // before comes back whole; nothing else is written.
    void spoolWriteFailureIsReported()
    {
        const qint64 t0 = 1764000000000LL;
        Json events = Json::array();
        for (int i = 0; i < 8; ++i) { // 8 × 300 KB: the buffer (1 MB) is written three times
            const Json payload = {{"n", i}, {"text", std::string(300000, char('a' + i))}};
            events.push_back({{"name", "map.message"},
                              {"timeUnixNano", std::to_string((t0 + 1 + i) * 1000000)},
                              {"attributes",
                               {{{"key", "map.message.id"}, {"value", {{"stringValue", "m" + std::to_string(i)}}}},
                                {{"key", "map.message.payload"}, {"value", {{"stringValue", payload.dump()}}}}}}});
        }
        Json agentSpan = span("00000000000000a1", "", "invoke_agent a", t0, t0 + 100, {{"gen_ai.agent.id", "a"}, {"map.agent.messages_sent", 8}});
        agentSpan["events"] = events;
        OtlpImporter importer(QStringLiteral("full.otlp.json"));
        importer.setSpoolFailsPastForTest(1500000); // the first megabyte is written, the second is not
        QVERIFY(importer.add(QByteArray::fromStdString(request(Json::array({agentSpan})).dump())));
        importer.finish();
        QVERIFY2(importer.error().contains(QStringLiteral("temporary file")), qPrintable(importer.error()));
        TraceRecord record;
        int messages = 0;
        while (importer.next(record)) {
            const Json frame = Json::parse(record.raw.toStdString(), nullptr, false);
            static const Json::json_pointer at("/params/event/data/message");
            if (frame.is_discarded() || !frame.contains(at)) // the agent's and the open's frames
                continue;
            const Json &message = frame.at(at);
            const Json &payload = message.at("payload");
            QCOMPARE(message.at("id").get<std::string>(), "m" + std::to_string(payload.at("n").get<int>()));
            QCOMPARE(payload.at("text").get<std::string>(), std::string(300000, char('a' + payload.at("n").get<int>())));
            ++messages;
        }
        QVERIFY(messages >= 1);
        QVERIFY(messages < 8);
    }

    void usageSplitFromReports()
    {
        const ConventionInfo own = interpretPayload(Json::parse(R"({"type":"STATUS_UPDATE","resource_usage":{"tokens_used":10,"input_tokens":7,"output_tokens":3}})"));
        QCOMPARE(own.inputTokens.value_or(-1), 7);
        QCOMPARE(own.outputTokens.value_or(-1), 3);
        const ConventionInfo api = interpretPayload(Json::parse(R"({"type":"HEARTBEAT","prompt_tokens":11,"completion_tokens":4})"));
        QCOMPARE(api.inputTokens.value_or(-1), 11);
        QCOMPARE(api.outputTokens.value_or(-1), 4);
        const ConventionInfo none = interpretPayload(Json::parse(R"({"type":"HEARTBEAT","tokens_used":5})"));
        QVERIFY(!none.inputTokens && !none.outputTokens);
    }
};

QTEST_GUILESS_MAIN(TestOtlp)
#include "tst_otlp.moc"
