// The loop detector on real patterns (issue 42, item 8). A pair, or a ring of three, repeating a
// small exchange of shapes (a query and the same reply, alternating, no task progress) is a loop,
// whatever the number of shapes up to AlertEngine::kMaxLoopShapesPerEdge on each edge; ever-new
// shapes, task progress between the exchanges, or traffic that stops are not. Then traffic the
// detector was not tuned on: every recorded capture in tests/data, the imported seed logs and the
// sample trace of the demo system, replayed through it, raise no loop; an agent-inbox style
// conversation (the shapes tools/interop's agent-inbox puts on the wire) that really loops is
// caught. The repository holds no recording of the third-party programs' traffic
// (tests/integration/tst_third_party.cpp runs them live), so none is replayed here.
#include "AlertFixture.h"
#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "model/SystemStore.h"
#include "trace/TraceLoader.h"

using namespace mapi;
using mapi_test::s;

namespace {

constexpr qint64 kStart = mapi_test::kAlertFixtureStart;
using Fixture = mapi_test::AlertFixture;

const QString kA = QStringLiteral("a");
const QString kB = QStringLiteral("b");
const QString kC = QStringLiteral("c");

// a asks b for its status, b gives the same answer: message i of the exchange (even: the query).
void queryOrReply(Fixture &f, int i, qint64 t)
{
    if (i % 2 == 0)
        f.send(kA, kB, "STATUS_QUERY", {{"query_type", "AGENT_STATUS"}, {"attempt", i / 2 + 1}}, t);
    else
        f.send(kB, kA, "STATUS_RESPONSE", {{"status", {{"state", "waiting"}}}, {"load", 0.25}}, t);
}

QStringList loopsRaised(const std::vector<AlertChange> &changes)
{
    QStringList out;
    for (const AlertChange &c : changes)
        if (c.raised && c.alert.kind == AlertKind::Loop)
            out << c.alert.key() + QStringLiteral(" (") + c.alert.reason + u')';
    return out;
}

} // namespace

class TestAlertLoops : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    // The case: a query and the same reply alternating, no task progress. Raised at the
    // rule's 20 messages (not at 19), naming both shapes; cleared only below half of it.
    // (Before issue 42 edges were kept per shape and a pair needed one shape both ways: this
    // exchange never made a candidate and nothing was raised.)
    void queryAndSameReplyAlternatingIsALoop()
    {
        Fixture f;
        std::vector<qint64> times;
        qint64 t = kStart + 1000;
        for (int i = 0; i < 19; ++i) {
            queryOrReply(f, i, t += 500);
            times.push_back(t);
        }
        QVERIFY(f.at(t).isEmpty());
        queryOrReply(f, 19, t += 500);
        times.push_back(t);
        QCOMPARE(f.at(t), QStringList{QStringLiteral("raised loop/exchange:a,b")});
        const Alert *alert = f.open(QStringLiteral("loop/exchange:a,b"));
        QVERIFY(alert);
        QCOMPARE(alert->agents, (QStringList{kA, kB}));
        QCOMPARE(alert->evidence.size(), 20);
        QCOMPARE(alert->sinceMs, times.front());
        QCOMPARE(alert->reason, QStringLiteral("20 messages repeating the exchange \"STATUS_QUERY\" → \"STATUS_RESPONSE\" "
                                               "within 60 s around a → b → a, no task progress"));
        // The exchange stops. Ten of the twenty still within the window: half, still open; nine: cleared.
        QVERIFY(f.at(times[9] + 60001).isEmpty());
        QVERIFY(f.open(QStringLiteral("loop/exchange:a,b")));
        QCOMPARE(f.at(times[10] + 60001), QStringList{QStringLiteral("cleared loop/exchange:a,b")});
    }

    // a drafts for b, b reviews for c, c asks a to revise: three shapes around a ring of three.
    void ringOfThreeWithADifferentShapeOnEachEdge()
    {
        Fixture f;
        qint64 t = kStart + 1000;
        auto step = [&](int i) {
            switch (i % 3) {
            case 0: f.send(kA, kB, "DRAFT", {{"draft", "v"}, {"version", i}}, t += 300); break;
            case 1: f.send(kB, kC, "REVIEW", {{"comments", Json::array({"too long"})}, {"verdict", "revise"}}, t += 300); break;
            default: f.send(kC, kA, "REVISE", {{"notes", "shorten it"}, {"round", i}}, t += 300); break;
            }
        };
        for (int i = 0; i < 19; ++i)
            step(i);
        QVERIFY(f.at(t).isEmpty());
        step(19);
        QCOMPARE(f.at(t), QStringList{QStringLiteral("raised loop/exchange:a,b,c")});
        const Alert *alert = f.open(QStringLiteral("loop/exchange:a,b,c"));
        QVERIFY2(alert->reason.contains(QStringLiteral("\"DRAFT\" → \"REVIEW\" → \"REVISE\"")), qPrintable(alert->reason));
        QVERIFY2(alert->reason.contains(QStringLiteral("around a → b → c → a")), qPrintable(alert->reason));
        QCOMPARE(alert->evidence.size(), 20);
    }

    // Up to three shapes on an edge are one exchange asked in several wordings; four are a
    // conversation. And ever-new shapes, or new content with a repeated question in it, are no loop.
    void manyShapesAreAConversation()
    {
        // Each message a new key set, 40 of them back and forth within 20 s: never a loop.
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 40; ++i) {
                f.send(i % 2 ? kB : kA, i % 2 ? kA : kB, "CHAT", {{s(QStringLiteral("topic%1").arg(i)), "..."}}, t += 500);
                QVERIFY2(f.at(t).isEmpty(), qPrintable(QString::number(i)));
            }
            QCOMPARE(f.engine.loopEdgeCount(), 2); // both ways were watched: the shapes are what said no
        }
        // The question in three wordings, the same answer: a loop (at the threshold).
        // In four wordings, 40 messages: each wording repeats, but they are too many.
        for (const int wordings : {3, 4}) {
            Fixture f;
            qint64 t = kStart + 1000;
            QStringList raised;
            for (int i = 0; i < 40; ++i) {
                if (i % 2 == 0)
                    f.send(kA, kB, "STATUS_QUERY", {{s(QStringLiteral("wording%1").arg((i / 2) % wordings)), true}}, t += 500);
                else
                    f.send(kB, kA, "STATUS_RESPONSE", {{"state", "waiting"}}, t += 500);
                raised << f.at(t);
                if (wordings == 3 && i == 18)
                    QVERIFY(raised.isEmpty()); // 19 messages
            }
            if (wordings == 3) {
                QCOMPARE(raised, QStringList{QStringLiteral("raised loop/exchange:a,b")});
                const QString reason = f.open(QStringLiteral("loop/exchange:a,b"))->reason;
                QVERIFY2(reason.contains(QStringLiteral("\"STATUS_QUERY\" → \"STATUS_RESPONSE\"")), qPrintable(reason));
            } else {
                QVERIFY2(raised.isEmpty(), qPrintable(raised.join(u';')));
            }
        }
        // The same question now and then among ever-new messages (two new for each repeat), the
        // same answer each time: most of what a sends is new, so it is no loop (counting only the
        // repeated messages, over 20 of them, it would be).
        {
            Fixture f;
            qint64 t = kStart + 1000;
            QStringList raised;
            for (int round = 0; round < 20; ++round) {
                f.send(kA, kB, "STATUS_QUERY", {{"query_type", "AGENT_STATUS"}}, t += 500);
                for (int k = 0; k < 2; ++k)
                    f.send(kA, kB, "NOTE", {{s(QStringLiteral("finding%1").arg(2 * round + k)), "..."}}, t += 500);
                f.send(kB, kA, "STATUS_RESPONSE", {{"state", "waiting"}}, t += 500);
                raised << f.at(t);
            }
            QVERIFY2(raised.isEmpty(), qPrintable(raised.join(u';')));
        }
    }

    // A request and its response that lead somewhere: task progress between them (a task
    // convention message, or a status update about a task) means work, not a loop; an exchange
    // that stops is forgotten; progress clears a loop that was raised.
    void progressOrStoppingIsNoLoop()
    {
        struct Progress { const char *type; Json payload; };
        const Progress progress[] = {
            {"TASK_UPDATE", {{"task_id", "T1"}, {"progress", 40}}},
            {"STATUS_UPDATE", {{"task_id", "T1"}, {"progress", 0.5}, {"status", {{"state", "ACTIVE"}}}}},
        };
        for (const Progress &p : progress) {
            Fixture f;
            qint64 t = kStart + 1000;
            QStringList raised;
            for (int i = 0; i < 40; ++i) {
                queryOrReply(f, i, t += 500);
                if (i % 8 == 7) // b reports progress on its task every fourth answer
                    f.send(kB, QStringLiteral("coord"), p.type, p.payload, t += 10);
                raised << f.at(t);
            }
            QVERIFY2(raised.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(QString::fromLatin1(p.type), raised.join(u';'))));
        }
        // Twelve messages and done: nothing, and a window later nothing is left of them.
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 12; ++i)
                queryOrReply(f, i, t += 500);
            QVERIFY(f.at(t).isEmpty());
            QVERIFY(f.at(t + 61000).isEmpty());
            QCOMPARE(f.engine.loopEdgeCount(), 0);
        }
        // A loop, then the task moves: cleared at once (no waiting for the window).
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 24; ++i)
                queryOrReply(f, i, t += 500);
            QCOMPARE(f.at(t), QStringList{QStringLiteral("raised loop/exchange:a,b")});
            f.send(kB, QStringLiteral("coord"), "TASK_UPDATE", {{"task_id", "T1"}, {"progress", 60}}, t += 100);
            QCOMPARE(f.at(t), QStringList{QStringLiteral("cleared loop/exchange:a,b")});
        }
    }

    // An agent-inbox style conversation (tools/interop/agent-inbox-agents.mjs, docs/map-programs.md):
    // agents registered on the official server, `from` the sender's session id, payloads as
    // agent-inbox sends them. Its launcher's own traffic (15 notes routed between two systems,
    // three sendViaMap) is no loop; two inboxes whose auto-replies answer each other are. The
    // recipients here are agent ids the server resolves (agent-inbox's {"agentId"} address
    // reaches MAPServer 0.1.15 as "[object Object]", which names nobody: no edge, no loop).
    void agentInboxStyleConversation()
    {
        SystemStore store;
        mapi_test::Wire wire(store);
        AlertEngine engine(Fixture::withUnresponsive(AlertRules(), false));
        const QString alpha = QStringLiteral("01M8GJMYJ89CKRAMDWWZ8CB673"), beta = QStringLiteral("01M8GJMYKQ7T0ZV5M1N2XKD0FA");
        const QString gwAlpha = QStringLiteral("01M8GJMYM2H8W6Q4T0S3V9RZ1B"), gwBeta = QStringLiteral("01M8GJMYN5PD3K7X2C8E4G6J0H");
        const QHash<QString, QString> sessionOf = {{alpha, QStringLiteral("01M8GJMX01S")}, {beta, QStringLiteral("01M8GJMX02S")},
                                                    {gwAlpha, QStringLiteral("01M8GJMX03S")}, {gwBeta, QStringLiteral("01M8GJMX04S")}};
        wire.registerAgent(alpha, QStringLiteral("agent-inbox"), sessionOf[alpha], Json::object(), QStringLiteral("idle"), kStart);
        wire.registerAgent(beta, QStringLiteral("agent-inbox"), sessionOf[beta], Json::object(), QStringLiteral("idle"), kStart);
        wire.registerAgent(gwAlpha, QStringLiteral("inbox-alpha"), sessionOf[gwAlpha], Json::object(), QStringLiteral("idle"), kStart);
        wire.registerAgent(gwBeta, QStringLiteral("inbox-beta"), sessionOf[gwBeta], Json::object(), QStringLiteral("idle"), kStart);
        int counter = 0;
        auto send = [&](const QString &from, const QString &to, const Json &payload, qint64 t) {
            wire.message(QStringLiteral("01M8GJN47BMTJ8YCR2QN%1").arg(++counter, 6, 10, QLatin1Char('0')), sessionOf[from], s(to), payload, t);
        };
        auto loopsAt = [&](qint64 t) {
            store.advanceTime(t);
            return loopsRaised(engine.update(store));
        };
        QStringList raised;
        // The launcher's traffic: notes between users of the two systems through the gateways
        // (normalised content), every third one local (it never touches MAP), then sendViaMap.
        qint64 t = kStart + 1000;
        for (int n = 0; n < 15; ++n) {
            if (n % 3 == 2)
                continue;
            const bool fromAlpha = n % 2 == 0;
            send(fromAlpha ? gwAlpha : gwBeta, fromAlpha ? gwBeta : gwAlpha,
                 {{"type", "text"}, {"text", s(QStringLiteral("interop message %1 of 15").arg(n + 1))}}, t += 20);
            raised << loopsAt(t);
        }
        send(alpha, beta, {{"text", "alpha to beta"}}, t += 20);
        send(beta, alpha, {{"text", "beta to alpha"}}, t += 20);
        raised << loopsAt(t + 1000);
        QVERIFY2(raised.isEmpty(), qPrintable(raised.join(u';')));

        // A while later, two inboxes that answer every note: alpha forwards what it receives as
        // a note (agent-inbox's normalised content), beta's auto-reply goes back through
        // sendViaMap (the caller's object as is, no type). Every second: raised at the 20th.
        t += 61000;
        int messages = 0;
        int raisedAt = -1;
        for (int i = 0; i < 30; ++i) {
            for (const bool fromAlpha : {true, false}) {
                if (fromAlpha)
                    send(alpha, beta, {{"type", "text"}, {"text", s(QStringLiteral("Re: note %1 - please confirm the report format").arg(i))}},
                         t += 1000);
                else
                    send(beta, alpha, {{"text", "Auto-reply: received, I will get back to you"}}, t += 1000);
                ++messages;
                const QStringList now = loopsAt(t);
                if (!now.isEmpty() && raisedAt < 0)
                    raisedAt = messages;
                raised << now;
            }
        }
        QCOMPARE(raisedAt, 20);
        QCOMPARE(raised.size(), 1);
        QVERIFY2(raised.first().startsWith(QStringLiteral("loop/exchange:") + std::min(alpha, beta) + u',' + std::max(alpha, beta)),
                 qPrintable(raised.first()));
        QVERIFY2(raised.first().contains(QStringLiteral("\"text\" → \"{text}\"")), qPrintable(raised.first()));
    }

    // Traffic the detector was not tuned on: every recorded capture, the imported seed logs and
    // the demo system's sample trace (a minute, 40 agents), replayed through the detectors an
    // evaluation every few records. Payloads kept (shapes by key names, as live) and left in the
    // frames (shapes by type: the window's replay of a trace). No loop, anywhere along them.
    void recordedTrafficRaisesNoLoop_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("keepPayloads");
        QStringList files;
        for (const char *capture : {"scenario-basic.ndjson", "scenario-deliver.ndjson", "scenario-sdk-transport.ndjson",
                                    "scenario-testserver.ndjson", "methods-tour.ndjson", "errors.ndjson", "import/seed-000.jsonl",
                                    "import/seed-002.json", "import/seed-003.jsonl", "import/seed-004.jsonl"})
            files << mapi_test::dataPath(QString::fromLatin1(capture));
        files << QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");
        for (const QString &path : std::as_const(files))
            for (const bool keep : {true, false})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(path.section(u'/', -1), keep ? QStringLiteral("payloads")
                                                                                                 : QStringLiteral("types"))))
                    << path << keep;
    }
    void recordedTrafficRaisesNoLoop()
    {
        QFETCH(QString, path);
        QFETCH(bool, keepPayloads);
        SystemStore store;
        AlertEngine engine;
        TraceLoadOptions options;
        options.keepRawFrames = keepPayloads;
        options.readerThread = false;
        options.firstBatchRecords = 16;
        options.batchRecords = 16;
        QStringList raised;
        int evaluations = 0;
        const TraceLoadResult r = loadTraceInto(store, path, options, [&](const TraceLoadBatch &) {
            raised << loopsRaised(engine.update(store));
            ++evaluations;
        });
        QVERIFY2(r.ok, qPrintable(r.error));
        raised << loopsRaised(engine.update(store)); // at the end (loadTraceInto advanced the clock to the last record)
        QVERIFY2(raised.isEmpty(), qPrintable(raised.join(u';')));
        QVERIFY(evaluations > 0);
        if (path.endsWith(QLatin1String(".zst"))) { // the demo system: real traffic both ways, watched
            QVERIFY(store.messages().size() > 1000);
            QVERIFY(evaluations > 100);
        }
    }
};

QTEST_GUILESS_MAIN(TestAlertLoops)
#include "tst_alert_loops.moc"
