// Causal chains (model/CausalChains.h): parent ids (message, envelope and span ids), answers
// within a correlation, a task, a W3C trace; effects in order; a live session's trimmed
// history; the bound on open conversations; the sample trace; the CLI's chain command.
#include "TestSupport.h"

#include "model/CausalChains.h"
#include "pipeline/ProtocolPipeline.h"
#include "trace/TraceLoader.h"
#include "trace/TraceRecord.h"

#include <QProcess>
#include <QTemporaryDir>

using namespace mapi;

namespace {

bool loadLog(SystemStore &store, QTemporaryDir &dir, const QByteArray &lines)
{
    const QString path = dir.filePath(QStringLiteral("log.jsonl"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(lines) != lines.size())
        return false;
    f.close();
    const TraceLoadResult r = loadTraceInto(store, path);
    if (!r.ok)
        qWarning("%s", qPrintable(r.error));
    return r.ok && r.stats.badLineCount == 0;
}

int rowOf(const SystemStore &store, const char *id)
{
    return store.messages().find(QString::fromLatin1(id));
}

} // namespace

class TestCausal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    // 000 envelopes: explicit parents, and a correlation whose answers have none.
    void parentsAndCorrelations()
    {
        QTemporaryDir dir;
        SystemStore store;
        QVERIFY(loadLog(store, dir, R"({"message_id":"a1","type":"TASK_REQUEST","from":"boss","to":"w1","timestamp":1000,"payload":{"task_id":"T1"},"metadata":{"correlation_id":"c1"}}
{"message_id":"a2","type":"TASK_REQUEST","from":"boss","to":"w2","timestamp":1100,"payload":{"task_id":"T2"},"metadata":{"correlation_id":"c2"}}
{"message_id":"a3","type":"TASK_ACCEPT","from":"w1","to":"boss","timestamp":1200,"payload":{"task_id":"T1"},"metadata":{"correlation_id":"c1","parent_message_id":"a1"}}
{"message_id":"a4","type":"TASK_ACCEPT","from":"w2","to":"boss","timestamp":1300,"payload":{"task_id":"T2"},"metadata":{"correlation_id":"c2"}}
{"message_id":"a5","type":"STATUS_UPDATE","from":"w1","to":"boss","timestamp":1400,"payload":{"task_id":"T1"},"metadata":{"correlation_id":"c1","parent_message_id":"a3"}}
{"message_id":"a6","type":"TASK_COMPLETE","from":"w1","to":"boss","timestamp":1500,"payload":{"task_id":"T1","status":"SUCCESS"},"metadata":{"correlation_id":"c1","parent_message_id":"a3"}}
{"message_id":"a7","type":"HEARTBEAT","from":"w1","to":"boss","timestamp":1600,"payload":{"status":"IDLE"}}
)"));
        CausalChains chains(store);
        chains.update();
        const int a1 = rowOf(store, "a1"), a2 = rowOf(store, "a2"), a3 = rowOf(store, "a3"), a4 = rowOf(store, "a4"),
                  a5 = rowOf(store, "a5"), a6 = rowOf(store, "a6"), a7 = rowOf(store, "a7");
        QCOMPARE(chains.causeOf(a1), -1);
        QCOMPARE(chains.causeOf(a3), a1);
        QCOMPARE(chains.linkOf(a3), CausalChains::Link::Parent);
        QCOMPARE(chains.causeOf(a4), a2); // no parent named: what it answers in its correlation
        QCOMPARE(chains.linkOf(a4), CausalChains::Link::Correlation);
        QCOMPARE(chains.causeOf(a5), a3);
        QCOMPARE(chains.causeOf(a6), a3);
        QCOMPARE(chains.causeOf(a7), -1); // nothing links it
        QCOMPARE(chains.effectsOf(a3), (std::vector<int>{a5, a6})); // oldest first
        QCOMPARE(chains.chainTo(a6), (std::vector<int>{a1, a3, a6}));
        QCOMPARE(chains.ledTo(a1), (std::vector<int>{a1, a3, a5, a6}));
        QCOMPARE(chains.ledTo(a1, 2), (std::vector<int>{a1, a3}));
    }

    // 002: a parent span names the message by its span id; 003: a task's messages; a W3C
    // traceparent groups what has nothing else.
    void spansTasksAndTraces()
    {
        QTemporaryDir dir;
        SystemStore store;
        QVERIFY(loadLog(store, dir, R"({"header":{"messageId":"b1","source":"planner","destination":"exec","timestamp":1000},"body":{"action":"TASK_REQUEST","payload":{"task_id":"J"}},"trace":{"traceId":"tr","spanId":"s1"}}
{"header":{"messageId":"b2","source":"exec","destination":"planner","timestamp":2000},"body":{"action":"TASK_COMPLETE","payload":{"task_id":"J2"}},"trace":{"traceId":"tr2","spanId":"s2","parentSpan":"s1"}}
{"id":"c1","from":"manager","to":"dev","type":"TASK_ASSIGNMENT","payload":{"task_id":"feat"}}
{"id":"c2","from":"dev","to":"manager","type":"TASK_UPDATE","payload":{"task_id":"feat","progress":50}}
{"message_id":"d1","type":"QUERY","from":"x","to":"y","timestamp":5000,"payload":{"q":1},"metadata":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
{"message_id":"d2","type":"ANSWER","from":"y","to":"x","timestamp":5100,"payload":{"a":1},"metadata":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}}
)"));
        CausalChains chains(store);
        chains.update();
        QCOMPARE(chains.causeOf(rowOf(store, "b2")), rowOf(store, "b1"));
        QCOMPARE(chains.linkOf(rowOf(store, "b2")), CausalChains::Link::Parent);
        QCOMPARE(chains.causeOf(rowOf(store, "c2")), rowOf(store, "c1"));
        QCOMPARE(chains.linkOf(rowOf(store, "c2")), CausalChains::Link::Task);
        QCOMPARE(chains.causeOf(rowOf(store, "d2")), rowOf(store, "d1"));
        QCOMPARE(chains.linkOf(rowOf(store, "d2")), CausalChains::Link::Trace);
    }

    // Built once, then extended: messages appended later are linked to the earlier ones; a
    // reset starts over.
    void updatesAndResets()
    {
        QTemporaryDir dir;
        SystemStore store;
        QVERIFY(loadLog(store, dir, R"({"message_id":"e1","type":"PING","from":"p","to":"q","timestamp":1000,"payload":{},"metadata":{"correlation_id":"k"}}
)"));
        CausalChains chains(store);
        chains.update();
        QCOMPARE(chains.effectsOf(0), std::vector<int>{});
        ProtocolPipeline pipeline;
        const Json inner = mapi_test::innerEvent(QStringLiteral("ev-late"), QStringLiteral("message.sent"), 2000,
                                                 {{"message", {{"id", "e2"}, {"from", "q"}, {"to", "p"},
                                                               {"payload", {{"type", "PONG"}, {"metadata", {{"correlation_id", "k"}}}}}}}});
        store.apply(pipeline.frameReceived(mapi_test::eventFrame(QStringLiteral("s"), 1, inner), 2000).inputs);
        chains.update();
        QCOMPARE(chains.causeOf(rowOf(store, "e2")), rowOf(store, "e1"));
        QCOMPARE(chains.effectsOf(rowOf(store, "e1")), std::vector<int>{rowOf(store, "e2")});
        store.reset();
        chains.reset();
        chains.update();
        QCOMPARE(chains.causeOf(0), -1);
        QCOMPARE(chains.memoryBytes(), size_t(0));
    }

    // MAP's causedBy (event ids, in the event for the spec's servers, at params for the
    // TestServer), a W3C traceparent at the frame's params._meta, and JSON-RPC exchanges carried
    // in payloads (ids repeat between pairs of agents: each response finds its own request).
    void mapCausedByFrameTraceContextAndJsonRpcPairs()
    {
        SystemStore store;
        ProtocolPipeline pipeline;
        int seq = 0;
        auto send = [&](const char *eventId, const char *id, const char *from, const char *to, const Json &payload,
                        const Json &causedByInEvent = Json(), const Json &causedByInParams = Json(), const char *traceparent = nullptr) {
            Json inner = mapi_test::innerEvent(QString::fromLatin1(eventId), QStringLiteral("message.sent"), 1000 + seq,
                                               {{"message", {{"id", id}, {"from", from}, {"to", to}, {"payload", payload}}}});
            if (!causedByInEvent.is_null())
                inner["causedBy"] = causedByInEvent;
            Json frame = Json::parse(mapi_test::eventFrame(QStringLiteral("s"), ++seq, inner).toStdString());
            if (!causedByInParams.is_null())
                frame["params"]["causedBy"] = causedByInParams;
            if (traceparent)
                frame["params"]["_meta"] = {{"traceparent", traceparent}};
            store.apply(pipeline.frameReceived(mapi_test::dump(frame), 1000 + seq).inputs);
        };
        send("ev-a", "a", "planner", "worker", {{"type", "PLAN"}});
        send("ev-x", "x", "worker", "other", {{"type", "UNRELATED"}});
        send("ev-b", "b", "worker", "planner", {{"type", "RESULT"}}, Json::array({"ev-unknown", "ev-a"}));
        send("ev-c", "c", "planner", "auditor", {{"type", "AUDIT"}}, Json(), Json::array({"ev-b"}));
        // Two messages of one W3C trace, named only by the frame's _meta.
        send("ev-t1", "t1", "p", "q", {{"type", "A"}}, Json(), Json(), "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01");
        send("ev-t2", "t2", "q", "p", {{"type", "B"}}, Json(), Json(), "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01");
        // JSON-RPC: two pairs of agents use id 1; each response answers its own request.
        send("ev-r1", "r1", "host", "tool", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}});
        send("ev-r2", "r2", "cli", "srv", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
        send("ev-r3", "r3", "tool", "host", {{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"ok", true}}}});
        send("ev-r4", "r4", "srv", "cli", {{"jsonrpc", "2.0"}, {"id", 1}, {"error", {{"code", -1}}}});
        send("ev-r5", "r5", "nobody", "host", {{"jsonrpc", "2.0"}, {"id", "9"}, {"result", 1}});
        // Two clients of one server (agents the store knows), both with id 5: each answer finds
        // its own client's request.
        send("ev-k1", "k1", "srv", "c1", {{"type", "HELLO"}});
        send("ev-k2", "k2", "srv", "c2", {{"type", "HELLO"}});
        send("ev-q1", "q1", "c1", "srv", {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "a"}});
        send("ev-q2", "q2", "c2", "srv", {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "b"}});
        send("ev-q3", "q3", "srv", "c1", {{"jsonrpc", "2.0"}, {"id", 5}, {"result", 1}});
        send("ev-q4", "q4", "srv", "c2", {{"jsonrpc", "2.0"}, {"id", 5}, {"result", 2}});

        CausalChains chains(store);
        chains.update();
        QCOMPARE(chains.causeOf(rowOf(store, "b")), rowOf(store, "a")); // the unknown event is skipped
        QCOMPARE(chains.linkOf(rowOf(store, "b")), CausalChains::Link::Parent);
        QCOMPARE(chains.causeOf(rowOf(store, "c")), rowOf(store, "b"));
        QCOMPARE(chains.chainTo(rowOf(store, "c")), (std::vector<int>{rowOf(store, "a"), rowOf(store, "b"), rowOf(store, "c")}));
        QCOMPARE(chains.causeOf(rowOf(store, "x")), -1);
        // Between the events themselves (EventLog): both directions; unknown ids skipped.
        const EventLog &events = store.events();
        auto eventRow = [&](const char *id) { return events.find(QString::fromLatin1(id), IdIndex::hashOf(QString::fromLatin1(id))); };
        QCOMPARE(events.causesOf(size_t(eventRow("ev-b"))), std::vector<int>{eventRow("ev-a")});
        QCOMPARE(events.causesOf(size_t(eventRow("ev-c"))), std::vector<int>{eventRow("ev-b")});
        QCOMPARE(events.effectsOf(size_t(eventRow("ev-a"))), std::vector<int>{eventRow("ev-b")});
        QCOMPARE(events.effectsOf(size_t(eventRow("ev-x"))), std::vector<int>{});

        QCOMPARE(store.messages().traceId(size_t(rowOf(store, "t1"))), QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736"));
        QCOMPARE(chains.causeOf(rowOf(store, "t2")), rowOf(store, "t1"));
        QCOMPARE(chains.linkOf(rowOf(store, "t2")), CausalChains::Link::Trace);

        QCOMPARE(store.messages().rpcRef(size_t(rowOf(store, "r1"))), QStringLiteral(">1"));
        QCOMPARE(store.messages().rpcRef(size_t(rowOf(store, "r3"))), QStringLiteral("<1"));
        QCOMPARE(chains.causeOf(rowOf(store, "r3")), rowOf(store, "r1"));
        QCOMPARE(chains.linkOf(rowOf(store, "r3")), CausalChains::Link::Request);
        QCOMPARE(chains.causeOf(rowOf(store, "r4")), rowOf(store, "r2"));
        QCOMPARE(chains.causeOf(rowOf(store, "r5")), -1); // no request of its id was sent to it
        QCOMPARE(chains.causeOf(rowOf(store, "q3")), rowOf(store, "q1"));
        QCOMPARE(chains.causeOf(rowOf(store, "q4")), rowOf(store, "q2"));
        QCOMPARE(CausalChains::linkName(CausalChains::Link::Request), QStringLiteral("request"));
    }

    // A live session trims its oldest history: the chains forget those rows and never read them.
    void trimmedHistoryIsForgotten()
    {
        SystemStore store;
        ProtocolPipeline pipeline;
        CausalChains chains(store);
        auto send = [&](int i) {
            const QString id = QStringLiteral("m%1").arg(i);
            const Json inner = mapi_test::innerEvent(QStringLiteral("ev%1").arg(i), QStringLiteral("message.sent"), 1000 + i,
                                                     {{"message", {{"id", mapi_test::s(id)}, {"from", i % 2 ? "a" : "b"}, {"to", i % 2 ? "b" : "a"},
                                                                   {"payload", {{"type", "X"}, {"metadata", {{"correlation_id", "one"}}}}}}}});
            store.apply(pipeline.frameReceived(mapi_test::eventFrame(QStringLiteral("s"), i + 1, inner), 1000 + i).inputs);
        };
        for (int i = 0; i < 100; ++i)
            send(i);
        chains.update();
        QCOMPARE(chains.chainTo(99).size(), size_t(100));
        store.trimHistoryBefore(store.events()[60].timestampMs + 1); // receipt times: trims rows before ~60
        store.flushChanges();
        QVERIFY(store.messages().firstRow() > 0);
        const int first = int(store.messages().firstRow());
        chains.update();
        QCOMPARE(chains.causeOf(first), -1); // its cause is gone
        QCOMPARE(int(chains.chainTo(99).size()), 100 - first);
        for (int i = 100; i < 110; ++i)
            send(i);
        chains.update();
        QCOMPARE(chains.causeOf(109), 108);
    }

    // The sample trace (the demo system's, whose envelopes carry parent ids and correlation ids).
    void sampleTraceChains()
    {
        SystemStore store;
        QVERIFY(loadTraceInto(store, QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst")).ok);
        CausalChains chains(store);
        chains.update();
        int linked = 0, parents = 0;
        for (size_t row = 0; row < store.messages().size(); ++row) {
            const int cause = chains.causeOf(int(row));
            if (cause < 0)
                continue;
            ++linked;
            parents += chains.linkOf(int(row)) == CausalChains::Link::Parent;
            QVERIFY(cause < int(row));
            bool listed = false;
            for (const int e : chains.effectsOf(cause))
                listed = listed || e == int(row);
            QVERIFY(listed);
        }
        QVERIFY2(linked > int(store.messages().size()) / 3, qPrintable(QString::number(linked)));
        QVERIFY(parents > 100);
    }

    void cliChain()
    {
        QProcess p;
        p.start(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("chain"), QStringLiteral("--trace"),
                                                QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst"),
                                                QStringLiteral("--message"), QStringLiteral("706b6c26-b2dc-4248-b2ed-1f26182870f6")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const Json out = Json::parse(p.readAllStandardOutput().toStdString());
        QCOMPARE(out["message"]["envelopeId"], Json("706b6c26-b2dc-4248-b2ed-1f26182870f6"));
        QCOMPARE(out["message"]["type"], Json("STATUS_UPDATE"));
        QCOMPARE(out["causedBy"].size(), size_t(2)); // TASK_REQUEST, then TASK_ACCEPT
        QCOMPARE(out["causedBy"][0]["type"], Json("TASK_REQUEST"));
        QCOMPARE(out["causedBy"][1]["type"], Json("TASK_ACCEPT"));
        QCOMPARE(out["message"]["ledTo"][0]["type"], Json("TASK_COMPLETE"));
        QCOMPARE(out["ledToCount"], Json(1));
    }

    // chain --event: an event's MAP causedBy links (no message), and an event that carried a
    // message gives that message's chain; a missing id and a missing choice are usage errors.
    void cliChainOfAnEvent()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("caused.jsonl"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
        auto event = [&](int seq, const char *id, const char *type, const Json &data, const Json &causedBy) {
            Json inner = {{"id", id}, {"type", type}, {"timestamp", 1000 + seq}, {"data", data}};
            if (!causedBy.is_null())
                inner["causedBy"] = causedBy;
            const QByteArray frame = mapi_test::eventFrame(QStringLiteral("s"), seq, inner);
            file.write(encodeRecordLine({1000 + seq, QStringLiteral("recv"), 1, frame, false, Json()}));
        };
        event(1, "e1", "agent.state.changed", {{"agentId", "a"}, {"state", "busy"}}, Json());
        event(2, "e2", "agent.state.changed", {{"agentId", "b"}, {"state", "busy"}}, Json::array({"e1"}));
        event(3, "e3", "agent.state.changed", {{"agentId", "c"}, {"state", "idle"}}, Json::array({"e2"}));
        event(4, "e4", "message.sent", {{"message", {{"id", "m4"}, {"from", "a"}, {"to", "b"}, {"payload", {{"type", "X"}}}}}}, Json());
        file.close();
        auto run = [&](const QStringList &args, Json *out) {
            QProcess p;
            p.start(QStringLiteral(MAPI_CLI_PATH), QStringList{QStringLiteral("chain"), QStringLiteral("--trace"), path} + args);
            p.waitForFinished(60000);
            if (out && p.exitCode() == 0)
                *out = Json::parse(p.readAllStandardOutput().toStdString());
            return p.exitCode();
        };
        Json out;
        QCOMPARE(run({QStringLiteral("--event"), QStringLiteral("e2")}, &out), 0);
        QCOMPARE(out["event"]["id"], Json("e2"));
        QCOMPARE(out["causedBy"].size(), size_t(1));
        QCOMPARE(out["causedBy"][0]["id"], Json("e1"));
        QCOMPARE(out["event"]["ledTo"][0]["id"], Json("e3"));
        QCOMPARE(run({QStringLiteral("--event"), QStringLiteral("e4")}, &out), 0);
        QCOMPARE(out["message"]["id"], Json("m4"));
        QCOMPARE(run({QStringLiteral("--event"), QStringLiteral("nope")}, nullptr), 1);
        QCOMPARE(run({}, nullptr), 1);
    }
};

QTEST_GUILESS_MAIN(TestCausal)
#include "tst_causal.moc"
