// The pipeline against recorded captures of real servers (tests/data): what it makes of a whole
// connection equals what the server's own lists say, its problems are the frames a client must
// report (counted here without core's code), odd result shapes are tolerated, the simdjson event
// path equals the general one, sequences are tracked per subscription. (The shapes of single
// events and results are tst_dialect's.)
#include "TestSupport.h"
#include "TraceReplayer.h"

#include "pipeline/ProtocolPipeline.h"
#include "map/Dialect.h"
#include "model/SystemStore.h"
#include "protocol/SimdJsonParser.h"
#include "trace/Trace.h"

#include <QJsonArray>
#include <QTemporaryDir>

#include <algorithm>

using namespace mapi;
using mapi_test::Answer;
using mapi_test::CaptureRecord;
using mapi_test::answers;
using mapi_test::dump;
using mapi_test::idKey;
using mapi_test::jsonObject;
using mapi_test::q;
using mapi_test::s;

namespace {

// Counts the received frames a MAP client must report as protocol problems, without using core:
// binary frames, non-JSON, non-objects, missing/wrong "jsonrpc", wrongly typed members, responses
// that are neither result nor error (or both), responses to no request of ours, and map/event
// notifications without an event object.
// Error answers to the methods an observation is built from (connect, subscribe, the snapshot
// lists): each is a problem of its own (MethodFailed), counted here from the capture alone.
int countObservationMethodErrors(const QList<CaptureRecord> &records)
{
    static const QSet<QString> observed = {QStringLiteral("map/connect"), QStringLiteral("map/subscribe"),
                                           QStringLiteral("map/agents/list"), QStringLiteral("map/scopes/list"),
                                           QStringLiteral("map/scopes/members")};
    QHash<QString, QString> methodOf;
    int errors = 0;
    for (const CaptureRecord &r : records) {
        const QJsonObject o = jsonObject(r.raw);
        if (r.dir == QLatin1String("send") && o.value(QStringLiteral("method")).isString() && o.contains(QStringLiteral("id")))
            methodOf.insert(idKey(o.value(QStringLiteral("id"))), o.value(QStringLiteral("method")).toString());
        else if (r.dir == QLatin1String("recv") && !r.binary && o.value(QStringLiteral("jsonrpc")).toString() == QLatin1String("2.0")
                 && o.value(QStringLiteral("error")).isObject() && !o.contains(QStringLiteral("result"))
                 && observed.contains(methodOf.take(idKey(o.value(QStringLiteral("id"))))))
            ++errors;
    }
    return errors;
}

int countMalformedReceived(const QList<CaptureRecord> &records)
{
    QSet<QString> pending;
    int malformed = 0;
    for (const CaptureRecord &r : records) {
        if (r.dir == QLatin1String("send")) {
            const QJsonObject o = jsonObject(r.raw);
            if (o.value(QStringLiteral("jsonrpc")).toString() == QLatin1String("2.0")
                && o.value(QStringLiteral("method")).isString() && o.contains(QStringLiteral("id")))
                pending.insert(idKey(o.value(QStringLiteral("id"))));
            continue;
        }
        if (r.dir != QLatin1String("recv"))
            continue;
        if (r.binary) {
            ++malformed;
            continue;
        }
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(r.raw, &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            ++malformed;
            continue;
        }
        const QJsonObject o = doc.object();
        if (o.value(QStringLiteral("jsonrpc")).toString() != QLatin1String("2.0")) {
            ++malformed;
            continue;
        }
        if (o.contains(QStringLiteral("method"))) {
            const QJsonValue params = o.value(QStringLiteral("params"));
            if (!o.value(QStringLiteral("method")).isString()
                || !(params.isUndefined() || params.isObject() || params.isArray()))
                ++malformed;
            else if (o.value(QStringLiteral("method")).toString() == QLatin1String("map/event")
                     && !params.toObject().value(QStringLiteral("event")).isObject())
                ++malformed;
            continue;
        }
        const bool hasResult = o.contains(QStringLiteral("result"));
        const bool hasError = o.contains(QStringLiteral("error"));
        if (!o.contains(QStringLiteral("id")) || hasResult == hasError) {
            ++malformed;
            continue;
        }
        if (hasError && !o.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).isDouble()) {
            ++malformed;
            continue;
        }
        if (!pending.remove(idKey(o.value(QStringLiteral("id")))))
            ++malformed; // unmatched response
    }
    return malformed;
}

QStringList sorted(QStringList list)
{
    list.sort();
    return list;
}

} // namespace

class TestDialectCaptures : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void replayedCaptureMatchesServerLists_data();
    void replayedCaptureMatchesServerLists();
    void errorsCaptureProblemsMatchIndependentCount();
    void problemCounterMatchesMalformedFrames();
    void pipelineToleratesOddResultShapes_data();
    void pipelineToleratesOddResultShapes();
    void simdEventPathMatchesGeneralPath();
    void sequencesAreTrackedPerSubscription();
    void repeatedStringsSurviveCacheEviction();
};

void TestDialectCaptures::replayedCaptureMatchesServerLists_data()
{
    QTest::addColumn<QString>("file");
    for (const char *f : {"scenario-basic.ndjson", "scenario-deliver.ndjson", "scenario-testserver.ndjson",
                          "scenario-sdk-transport.ndjson"})
        QTest::newRow(f) << q(f);
}

void TestDialectCaptures::replayedCaptureMatchesServerLists()
{
    QFETCH(QString, file);
    const QString path = mapi_test::dataPath(file);

    SystemStore store;
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats stats;
    QString error;
    QVERIFY2(replayer.replayFile(path, stats, &error), qPrintable(error));
    QCOMPARE(stats.format, QStringLiteral("capture"));
    QVERIFY(stats.badLines.isEmpty());
    QCOMPARE(store.counters().problems, qint64(0));
    QVERIFY(store.counters().eventsApplied > 0);

    const auto all = answers(mapi_test::readCapture(path));
    const Answer *lastAgents = nullptr;
    const Answer *lastScopes = nullptr;
    for (const Answer &a : all) {
        if (a.method == QLatin1String("map/agents/list"))
            lastAgents = &a;
        if (a.method == QLatin1String("map/scopes/list"))
            lastScopes = &a;
    }
    QVERIFY2(lastAgents, "every scenario capture answers map/agents/list at least once");
    QVERIFY(lastAgents->request.isEmpty()); // unfiltered: the whole truth

    // Agents: the registered set, names and states equal the server's last answer.
    QHash<QString, QJsonObject> expected;
    for (const QJsonValue &v : lastAgents->result.toObject().value(QStringLiteral("agents")).toArray())
        expected.insert(v.toObject().value(QStringLiteral("id")).toString(), v.toObject());
    QStringList registered;
    for (const Agent &a : store.agents())
        if (!a.placeholder && !a.unregistered)
            registered << a.id;
    QCOMPARE(sorted(registered), sorted(expected.keys()));
    if (expected.isEmpty()) { // the TestServer capture ends with every agent gone: they must be departed rows
        QVERIFY(std::any_of(store.agents().cbegin(), store.agents().cend(),
                            [](const Agent &a) { return a.unregistered && !a.placeholder; }));
    }
    for (const QString &id : registered) {
        const Agent *a = store.agent(id);
        QCOMPARE(a->name, expected.value(id).value(QStringLiteral("name")).toString());
        QCOMPARE(a->state, expected.value(id).value(QStringLiteral("state")).toString());
    }

    // Scopes: ids, names and parents equal the server's last answer (when it gave one: the
    // sdk-transport capture goes deaf before answering map/scopes/list).
    if (lastScopes) {
        QHash<QString, QJsonObject> scopes;
        for (const QJsonValue &v : lastScopes->result.toObject().value(QStringLiteral("scopes")).toArray())
            scopes.insert(v.toObject().value(QStringLiteral("id")).toString(), v.toObject());
        QStringList live;
        for (const Scope &sc : store.scopes())
            if (!sc.deleted && !sc.placeholder)
                live << sc.id;
        QCOMPARE(sorted(live), sorted(scopes.keys()));
        for (const QString &id : live) {
            const Scope *sc = store.scope(id);
            QCOMPARE(sc->name, scopes.value(id).value(QStringLiteral("name")).toString());
            QCOMPARE(sc->parentId, scopes.value(id).value(QStringLiteral("parentId")).toString());
        }
    } else {
        QCOMPARE(file, QStringLiteral("scenario-sdk-transport.ndjson"));
    }
}

void TestDialectCaptures::errorsCaptureProblemsMatchIndependentCount()
{
    const QString path = mapi_test::dataPath(QStringLiteral("errors.ndjson"));
    const int malformed = countMalformedReceived(mapi_test::readCapture(path));

    SystemStore store;
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats stats;
    QString error;
    QVERIFY2(replayer.replayFile(path, stats, &error), qPrintable(error));
    QVERIFY(stats.badLines.isEmpty());

    // The server of errors.ndjson answers everything it understood correctly: the malformed
    // frames are the ones *we* sent, so no received frame is malformed. The one binary frame we
    // sent (request 105) is answered, and its answer must match (the capture keeps binary frames
    // as text; read as base64 request 105 would be lost and its answer counted as an unmatched
    // response). Received garbage is covered by problemCounterMatchesMalformedFrames.
    QCOMPARE(malformed, 0);
    // Its one failed observation method is said, and nothing else.
    const int methodErrors = countObservationMethodErrors(mapi_test::readCapture(path));
    QCOMPARE(methodErrors, 1);
    QCOMPARE(store.counters().problems, qint64(malformed + methodErrors));
    QCOMPARE(qint64(store.observation().failedMethods().size()), qint64(methodErrors));
    QVERIFY(!store.observation().complete());
    QVERIFY(store.counters().eventsApplied > 0);
    QCOMPARE(store.counters().duplicateEvents, qint64(1)); // scope.created on two subscriptions
}

void TestDialectCaptures::problemCounterMatchesMalformedFrames()
{
    // errors.ndjson as seen by a client whose server misbehaves: every frame we sent also comes
    // back at us. The binary request is recorded as text so that only the echo is binary (see
    // the known bug above). Count independently, then replay.
    QList<QByteArray> lines;
    QList<CaptureRecord> records;
    int seq = 0;
    for (CaptureRecord r : mapi_test::readCapture(mapi_test::dataPath(QStringLiteral("errors.ndjson")))) {
        const bool wasBinary = r.binary;
        r.binary = false;
        auto line = [&](const CaptureRecord &rec) {
            Json j = {{"seq", ++seq}, {"dir", s(rec.dir)}, {"t", rec.timeMs}, {"raw", rec.raw.toStdString()}};
            if (rec.binary)
                j["binary"] = true;
            lines << dump(j);
            records << rec;
        };
        line(r);
        if (r.dir == QLatin1String("send")) {
            CaptureRecord echo = r;
            echo.dir = QStringLiteral("recv");
            echo.binary = wasBinary;
            line(echo);
        }
    }
    const int malformed = countMalformedReceived(records);
    QVERIFY(malformed >= 7); // truncated, prose, no jsonrpc, 1.0, batch, id-only, binary

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(QStringLiteral("mirrored.ndjson")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(lines.join('\n') + '\n');
    file.close();

    SystemStore store;
    mapi::test::TraceReplayer replayer(&store);
    TraceReadStats stats;
    QString error;
    QVERIFY2(replayer.replayFile(file.fileName(), stats, &error), qPrintable(error));
    QVERIFY(store.counters().problems > 0);
    QCOMPARE(store.counters().problems, qint64(malformed + countObservationMethodErrors(records)));
    QCOMPARE(qint64(store.problems().size()), store.counters().problems);
    for (const ProtocolProblem &p : store.problems())
        QVERIFY(!p.frame.isEmpty());
}

void TestDialectCaptures::pipelineToleratesOddResultShapes_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QByteArray>("result");
    for (const char *method : {"map/connect", "map/authenticate", "map/agents/list", "map/agents/get", "map/scopes/list",
                               "map/scopes/members", "map/replay"}) {
        for (const char *result : {R"("ok")", "42", "[1,2]", "null", "true", "{}"})
            QTest::addRow("%s -> %s", method, result) << QString::fromUtf8(method) << QByteArray(result);
    }
}

void TestDialectCaptures::pipelineToleratesOddResultShapes()
{
    // Whatever a server answers, interpreting it must not throw (an exception would leave
    // through a Qt signal emission in MapClient::onText and terminate the application).
    QFETCH(QString, method);
    QFETCH(QByteArray, result);
    ProtocolPipeline pipeline;
    pipeline.frameSent(mapi_test::requestFrame(7, method, {{"scopeId", "s"}, {"subscriptionId", "x"}}), 1);
    bool threw = false;
    InterpretedFrame f;
    try {
        f = pipeline.frameReceived(mapi_test::resultFrame(7, Json::parse(result.toStdString())), 2);
    } catch (...) {
        threw = true;
    }
    QVERIFY(!threw); // map/connect and map/authenticate results that are no object threw until 2026-11-23
    QVERIFY(f.message);
    QCOMPARE(f.requestMethod, method);
    for (const ModelInput &in : f.inputs)
        QVERIFY(!std::holds_alternative<ProblemInput>(in));
}

namespace {

Json optionalJson(const std::optional<QString> &value)
{
    return value ? Json(s(*value)) : Json("<unset>");
}

Json listJson(const QStringList &list)
{
    Json out = Json::array();
    for (const QString &item : list)
        out.push_back(s(item));
    return out;
}

template<typename T>
Json optionalNumber(const std::optional<T> &value)
{
    return value ? Json(*value) : Json("<unset>");
}

Json conventionJson(const ConventionInfo &c)
{
    return {{"kind", int(c.kind)}, {"rawType", s(c.rawType)}, {"envelope", s(c.envelope)},
            {"envelopeId", s(c.envelopeId)}, {"sender", s(c.senderAgentId)}, {"receiver", s(c.receiver)},
            {"correlationId", s(c.correlationId)}, {"parent", s(c.parentMessageId)}, {"traceId", s(c.traceId)},
            {"spanId", s(c.spanId)}, {"priority", optionalNumber(c.priority)}, {"taskId", s(c.taskId)},
            {"taskType", s(c.taskType)}, {"taskStatus", s(c.taskStatus)}, {"handoffTo", s(c.handoffTo)},
            {"reason", s(c.reason)}, {"heartbeat", s(c.heartbeatStatus)}, {"load", optionalNumber(c.load)},
            {"running", optionalNumber(c.tasksRunning)}, {"queued", optionalNumber(c.tasksQueued)},
            {"progress", optionalNumber(c.progress)}, {"tokensUsed", optionalNumber(c.tokensUsed)},
            {"tokensRemaining", optionalNumber(c.tokensRemaining)}, {"cost", optionalNumber(c.costUsd)},
            {"severity", s(c.severity)}, {"errorCode", s(c.errorCode)}, {"errorMessage", s(c.errorMessage)}};
}

// Every field of a model input, so that two decodings can be compared whole.
Json describe(const ModelInput &input)
{
    Json out;
    out["index"] = input.index();
    if (const auto *in = std::get_if<EventInput>(&input)) {
        const MapEvent &e = in->event;
        out["received"] = in->receivedMs;
        out["event"] = {{"eventId", s(e.eventId)}, {"rawType", s(e.rawType)}, {"type", s(e.type)},
                        {"kind", int(e.kind)}, {"timestamp", e.timestampMs}, {"sequence", e.sequenceNumber},
                        {"subscription", s(e.subscriptionId)}, {"sourceAgent", s(e.sourceAgentId)},
                        {"sourceSession", s(e.sourceSessionId)}, {"sourceScope", s(e.sourceScopeId)},
                        {"causedBy", listJson(e.causedBy)}, {"agentId", s(e.agentId)},
                        {"previousState", s(e.previousState)}, {"scopeId", s(e.scopeId)},
                        {"deletedScopes", listJson(e.deletedScopes)}, {"messageId", s(e.messageId)},
                        {"sessionId", s(e.sessionId)}, {"sessionRole", s(e.sessionRole)}, {"reason", s(e.reason)},
                        {"task", {s(e.task.id), s(e.task.title), s(e.task.assignee), s(e.task.status), s(e.task.current)}},
                        {"data", e.data}, {"rawFrame", e.rawFrame.toStdString()}};
        if (e.agent) {
            const AgentRecord &a = *e.agent;
            out["agent"] = {{"id", s(a.id)}, {"name", optionalJson(a.name)}, {"role", optionalJson(a.role)},
                            {"state", optionalJson(a.state)}, {"parent", optionalJson(a.parentId)},
                            {"session", optionalJson(a.sessionId)},
                            {"scopes", a.scopes ? listJson(*a.scopes) : Json("<unset>")},
                            {"capabilities", a.capabilities}, {"metadata", a.metadata},
                            {"registered", a.registeredAtMs}, {"lastStateChange", a.lastStateChangeMs}};
        }
        if (e.scope)
            out["scope"] = {{"id", s(e.scope->id)}, {"name", optionalJson(e.scope->name)},
                            {"parent", optionalJson(e.scope->parentId)}, {"metadata", e.scope->metadata}};
        if (e.message) {
            // A delivery read from simdjson's DOM leaves its payload in the frame: read from
            // there, it must be what the general path wrote.
            MessageRecord m = *e.message;
            if (m.payloadInFrame || m.toInFrame) {
                const std::optional<MessageRecord> full =
                    messageInFrame(e.rawFrame, m.id.isEmpty() ? e.eventId : m.id);
                if (m.payloadInFrame) {
                    m.payloadText = full ? full->payloadText : QByteArray("<not found>");
                    m.payloadType = full ? full->payloadType : QString();
                }
                if (m.toInFrame)
                    m.to = full ? full->to : Json("<not found>");
            }
            // The payload is text (nlohmann's or simdjson's writing, keys in different orders):
            // compared as JSON; its convention as read by either view.
            const Json payload = m.payloadText.isEmpty()
                ? Json("<none>")
                : Json::parse(m.payloadText.constBegin(), m.payloadText.constEnd(), nullptr, false);
            out["message"] = {{"id", s(m.id)}, {"from", s(m.from)}, {"to", m.to}, {"payload", payload},
                              {"payloadType", s(m.payloadType)},
                              {"convention", m.convention ? conventionJson(*m.convention) : Json("<unread>")},
                              {"priority", m.priority ? Json(*m.priority) : Json("<unset>")},
                              {"type", s(m.messageType)}, {"replyTo", s(m.replyTo)}, {"timestamp", m.timestampMs}};
        }
    } else if (const auto *problem = std::get_if<ProblemInput>(&input)) {
        out["problem"] = {int(problem->problem.kind), s(problem->problem.detail), problem->problem.frame.toStdString()};
    } else if (const auto *gap = std::get_if<GapInput>(&input)) {
        out["gap"] = {gap->gap.fromSequence, gap->gap.toSequence, s(gap->gap.detail)};
    }
    return out;
}

Json describe(const InterpretedFrame &frame)
{
    Json out = Json::array();
    for (const ModelInput &input : frame.inputs)
        out.push_back(describe(input));
    out.push_back({{"message", frame.message.has_value()},
                   {"kind", frame.message ? int(frame.message->kind) : -1},
                   {"method", frame.message ? s(frame.message->method) : std::string()}});
    return out;
}

} // namespace

void TestDialectCaptures::simdEventPathMatchesGeneralPath()
{
    // With SimdJsonParser the pipeline reads map/event frames straight from simdjson's DOM
    // (ProtocolPipeline::interpretEventFast); it must give exactly what the general path gives,
    // on every real frame and on the odd ones below.
    QList<QByteArray> frames;
    for (const char *capture : {"scenario-basic.ndjson", "scenario-deliver.ndjson", "scenario-sdk-transport.ndjson",
                                "scenario-testserver.ndjson", "methods-tour.ndjson", "errors.ndjson"}) {
        const QList<CaptureRecord> records = mapi_test::readCapture(mapi_test::dataPath(q(capture)));
        QVERIFY2(!records.isEmpty(), capture);
        for (const CaptureRecord &r : records)
            if (r.dir == QLatin1String("recv") && !r.binary)
                frames << r.raw;
    }
    const auto event = [](const char *params) -> QByteArray {
        return QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":)") + params + "}";
    };
    frames << event(R"({"event":{"type":"agent.registered","type":"agent.state.changed","data":{"agent":{"id":"a","id":"b","state":"x"}}}})")
           << event(R"({"eventId":"e1","eventId":"e2","sequenceNumber":3,"subscriptionId":"s","event":{"type":"agent.registered","data":{"agent":{"id":"a","metadata":{"parentId":{"agentId":"p"},"n":-0}}}}})")
           << event(R"({"event":{"type":"message.sent","data":{"message":{"id":7,"from":true,"to":{"agentId":"x"},"payload":{"v":[1,-0,2.5e3]},"priority":-0}}}})")
           << event(R"({"event":{"type":"message.delivered","data":{"messageId":"m","deliveredTo":[12,"b"]}}})")
           << event(R"({"event":{"type":"message.delivered","data":{"message":{"id":"d1","payload":{"v":[1,-0,2.5e3,-0.0],"k":1,"k":"last","s":"é\u0001\"x"}}}}})")
           << event(R"({"event":{"type":"message.delivered","data":{"message":{"id":"d2","payload":[1,2.5,-3,1e300,"x",null,true,{}]}}}})")
           << event(R"({"event":{"type":"message.delivered","data":{"messageId":"m","deliveredTo":[{"id":"o"}]}}})")
           << event(R"({"event":{"type":"agent.state.changed","timestamp":1.5e12,"source":"participant-1","data":{"agentId":"a","previousState":"idle","newState":"busy"}}})")
           << event(R"({"event":{"type":"AGENT_REGISTERED","source":{"agentId":null,"participantId":"p"},"causedBy":[{"id":"c1"},"c2",3]}})")
           << event(R"({"event":{"type":"task.status","data":{"taskId":"t","current":"done"}}})")
           << event(R"({"event":{"type":"task.created","data":{"task":{"id":"t","type":"x"},"agentId":"a"}}})")
           << event(R"({"event":{"type":"scope.created","data":["not","an","object"]}})")
           << event(R"({"event":{"type":"scope.deleted","data":{"scopeId":"s","deletedDescendants":["a",{"scopeId":"b"}]}}})")
           << event(R"({"event":{"type":"session.connected","data":{"participantId":"p","participantType":"agent"}}})")
           << event(R"({"event":{"type":"custom.thing","data":{"agentId":18446744073709551615}}})")
           << event(R"({"event":{"type":"custom.thing","data":{"agentId":-9223372036854775808,"x":1e308}}})")
           << event(R"({"event":{"type":"agent.registered","data":{"agent":{"id":"a","registeredAt":-0,"lastStateChange":"12"}}}})")
           << event(R"({"event":{"type":""}})") << event(R"({"event":"flat"})") << event(R"({"noevent":1})")
           << event(R"({"params":{}, "event":{"type":"x"}})") << event(R"([1,2])") << event(R"("text")")
           << event("{\"event\":{\"type\":\"x\",\"data\":{\"s\":\"\xff\"}}}")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","id":1,"params":{"event":{"type":"x"}}})")
           << QByteArray(R"({"jsonrpc":"1.0","method":"map/event","params":{"event":{"type":"x"}}})")
           << QByteArray(R"({"jsonrpc":"2.0","jsonrpc":"1.0","method":"map/event","params":{"event":{"type":"x"}}})")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","method":"other","params":{"event":{"type":"x"}}})")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"type":"x"}},"params":[]})")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"type":"x","data":{"big":123456789012345678901234567890}}}})")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"type":"x"}})")
           << QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":)") + QByteArray(200, '[') + QByteArray(200, ']') + "}";
    // Around the nesting limit (128 by default): the frame's own 3 levels plus the data's.
    for (int depth : {120, 122, 123, 124, 125, 126, 127, 128, 129}) {
        QByteArray arrays = QByteArray(depth - 3, '[') + QByteArray(depth - 3, ']');
        QByteArray objects;
        for (int i = 0; i < depth - 3; ++i)
            objects += R"({"k":)";
        objects += "1" + QByteArray(depth - 3, '}');
        frames << event(QByteArray(R"({"event":{"type":"x","data":)" + arrays + "}}").constData())
               << event(QByteArray(R"({"event":{"type":"x","data":)" + objects + "}}").constData());
    }
    ProtocolPipeline general;
    ProtocolPipeline fast({}, SimdJsonParser::instance());
    int events = 0;
    for (const QByteArray &frame : std::as_const(frames)) {
        const InterpretedFrame a = general.frameReceived(frame, 100);
        const InterpretedFrame b = fast.frameReceived(frame, 100);
        const Json da = describe(a);
        const Json db = describe(b);
        if (da.dump(-1, ' ', false, Json::error_handler_t::replace) != db.dump(-1, ' ', false, Json::error_handler_t::replace)) // as text: 0 and -0.0 are equal as JSON numbers, not to a reader
            QFAIL(qPrintable(QStringLiteral("decodings differ for %1:\n general %2\n fast    %3")
                                 .arg(QString::fromUtf8(frame.left(300)), QString::fromStdString(da.dump()),
                                      QString::fromStdString(db.dump()))));
        for (const ModelInput &input : a.inputs)
            events += std::holds_alternative<EventInput>(input) ? 1 : 0;
    }
    QVERIFY(events > 100); // the comparison saw real events, not only problems
}

void TestDialectCaptures::sequencesAreTrackedPerSubscription()
{
    // Events of two subscriptions interleaved (the pipeline keeps the last one at hand): a gap is
    // found in the subscription it belongs to, and only there; a new socket numbers from 1 again.
    for (const bool fast : {false, true}) {
        ProtocolPipeline pipeline({}, fast ? SimdJsonParser::instance() : nullptr);
        pipeline.connectionOpened(QStringLiteral("ws://x"), 0);
        QList<Gap> gaps;
        const auto receive = [&](const char *subscription, int sequence, const char *eventId) {
            const QByteArray frame = QByteArray(R"({"jsonrpc":"2.0","method":"map/event","params":{"subscriptionId":")")
                + subscription + R"(","sequenceNumber":)" + QByteArray::number(sequence) + R"(,"eventId":")" + eventId
                + R"(","event":{"type":"agent.registered","data":{"agent":{"id":"a"}}}}})";
            const InterpretedFrame out = pipeline.frameReceived(frame, 1);
            for (const ModelInput &input : out.inputs)
                if (const auto *gap = std::get_if<GapInput>(&input))
                    gaps << gap->gap;
        };
        receive("s1", 1, "e1");
        receive("s2", 1, "e2");
        receive("s1", 2, "e3");
        receive("s2", 2, "e4");
        receive("s1", 3, "e5");
        QVERIFY(gaps.isEmpty());
        receive("s2", 5, "e6"); // 3 and 4 of s2 never arrived
        receive("s1", 4, "e7");
        QCOMPARE(gaps.size(), 1);
        QVERIFY2(gaps.front().detail.contains(QStringLiteral("s2")), qPrintable(gaps.front().detail));
        QCOMPARE(gaps.front().fromSequence, qint64(3));
        QCOMPARE(gaps.front().toSequence, qint64(4));
        QCOMPARE(pipeline.lastEventId(QStringLiteral("s1")), QStringLiteral("e7"));
        QCOMPARE(pipeline.lastEventId(QStringLiteral("s2")), QStringLiteral("e6"));
        QCOMPARE(pipeline.lastEventId(), QStringLiteral("e7"));

        pipeline.connectionOpened(QStringLiteral("ws://x"), 2);
        gaps.clear();
        receive("s2", 1, "e8");
        receive("s1", 1, "e9");
        QVERIFY(gaps.isEmpty());
        receive("s1", 3, "e10");
        QCOMPARE(gaps.size(), 1);
        QVERIFY(gaps.front().detail.contains(QStringLiteral("s1")));
        QCOMPARE(gaps.front().fromSequence, qint64(2));
        QCOMPARE(pipeline.lastEventId(QStringLiteral("s2")), QStringLiteral("e8"));
    }
}

void TestDialectCaptures::repeatedStringsSurviveCacheEviction()
{
    // The decoder keeps repeating strings in a bounded cache: far more distinct agent ids than it
    // holds, then the first ones again, must all read back as sent.
    ProtocolPipeline pipeline({}, SimdJsonParser::instance());
    const auto agentOf = [&](const QByteArray &id) -> QString {
        const QByteArray frame = R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"type":"agent.registered","data":{"agent":{"id":")"
            + id + R"(","state":"idle"}}}}})";
        const InterpretedFrame out = pipeline.frameReceived(frame, 1);
        const auto *event = out.inputs.isEmpty() ? nullptr : std::get_if<EventInput>(&out.inputs.front());
        return event && event->event.agent ? event->event.agent->id : QStringLiteral("<none>");
    };
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 20000; ++i) {
            const QByteArray id = "agent-" + QByteArray::number(i) + (i % 3 ? "-é" : "");
            QCOMPARE(agentOf(id), QString::fromUtf8(id));
        }
    }
}

QTEST_GUILESS_MAIN(TestDialectCaptures)
#include "tst_dialect_captures.moc"
