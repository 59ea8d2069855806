// Run diff (trace/RunDiff.h): two runs whose agents have different ids, matched by name, role
// and place in the tree; only-in-one agents; the first divergence of their conversations;
// deltas; a run against itself; and the CLI's JSON and exit codes.
#include "TestSupport.h"

#include "pipeline/ProtocolPipeline.h"
#include "trace/RunDiff.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

using namespace mapi;
using mapi_test::eventFrame;
using mapi_test::innerEvent;

namespace {

// Builds a run from MAP events, as the live client would receive them.
class Run
{
public:
    explicit Run(qint64 startMs) : m_start(startMs) {}

    void agent(const QString &id, const QString &name, const QString &role, const QString &parent, qint64 atMs)
    {
        Json a = {{"id", mapi_test::s(id)}, {"name", mapi_test::s(name)}, {"role", mapi_test::s(role)}, {"state", "active"}};
        if (!parent.isEmpty())
            a["parent"] = mapi_test::s(parent);
        event(QStringLiteral("agent.registered"), atMs, {{"agent", a}});
    }
    void message(const QString &from, const QString &to, const QString &type, qint64 atMs, const QString &taskId = {})
    {
        Json payload = {{"type", mapi_test::s(type)}};
        if (!taskId.isEmpty())
            payload["task_id"] = mapi_test::s(taskId);
        const QString id = QStringLiteral("m%1-%2").arg(m_start).arg(++m_messages);
        event(QStringLiteral("message.sent"), atMs,
              {{"message", {{"id", mapi_test::s(id)}, {"from", mapi_test::s(from)}, {"to", mapi_test::s(to)}, {"payload", payload}}}},
              {{"agentId", mapi_test::s(from)}});
    }
    // A turn said by `agentId` in conversation c-1 (mail.turn.added), and a checkpoint of its work.
    void turn(const QString &agentId, qint64 atMs)
    {
        const QString id = QStringLiteral("turn%1-%2").arg(m_start).arg(++m_messages);
        event(QStringLiteral("mail.turn.added"), atMs,
              {{"conversationId", "c-1"},
               {"turn", {{"id", mapi_test::s(id)}, {"conversationId", "c-1"}, {"participant", mapi_test::s(agentId)},
                         {"timestamp", m_start + atMs}, {"contentType", "text"}, {"content", {{"text", "hi"}}}}}},
              {{"agentId", mapi_test::s(agentId)}});
    }
    void checkpoint(const QString &agentId, qint64 atMs)
    {
        const QString id = QStringLiteral("cp%1-%2").arg(m_start).arg(++m_messages);
        event(QStringLiteral("trajectory.checkpoint"), atMs,
              {{"checkpoint", {{"id", mapi_test::s(id)}, {"agentId", mapi_test::s(agentId)}, {"timestamp", m_start + atMs}}}},
              {{"agentId", mapi_test::s(agentId)}});
    }
    SystemStore &store() { return m_store; }

private:
    void event(const QString &type, qint64 atMs, const Json &data, const Json &source = Json())
    {
        const qint64 t = m_start + atMs;
        const QString id = QStringLiteral("e%1-%2").arg(m_start).arg(++m_events);
        m_store.apply(m_pipeline.frameReceived(eventFrame(QStringLiteral("s1"), m_events, innerEvent(id, type, t, data, source)), t).inputs);
    }
    qint64 m_start;
    int m_events = 0;
    int m_messages = 0;
    ProtocolPipeline m_pipeline;
    SystemStore m_store;
};

// The same system twice: a coordinator and two workers; run B's second worker fails its task
// at 5 s where run A's completes it, and B has an auditor A does not.
void script(Run &run, const QString &prefix, bool variant)
{
    const QString c = prefix + QStringLiteral("-c"), w1 = prefix + QStringLiteral("-w1"), w2 = prefix + QStringLiteral("-w2");
    run.agent(c, QStringLiteral("coordinator"), QStringLiteral("coordinator"), {}, 0);
    run.agent(w1, QStringLiteral("worker"), QStringLiteral("worker"), c, 100);
    run.agent(w2, QStringLiteral("worker"), QStringLiteral("worker"), c, 200);
    run.message(c, w1, QStringLiteral("TASK_ASSIGNMENT"), 1000, QStringLiteral("t1"));
    run.message(c, w2, QStringLiteral("TASK_ASSIGNMENT"), 1100, QStringLiteral("t2"));
    run.message(w1, c, QStringLiteral("TASK_COMPLETE"), 4000, QStringLiteral("t1"));
    run.message(w2, c, variant ? QStringLiteral("TASK_FAILED") : QStringLiteral("TASK_COMPLETE"), 5000, QStringLiteral("t2"));
    if (variant)
        run.agent(prefix + QStringLiteral("-a"), QStringLiteral("auditor"), QStringLiteral("auditor"), c, 8000);
    run.message(c, w1, QStringLiteral("HEARTBEAT"), 9000);
}

} // namespace

class TestRunDiff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void aRunEqualsItself()
    {
        Run a(1764000000000), b(1765000000000); // other ids, other times, same behaviour
        script(a, QStringLiteral("A"), false);
        script(b, QStringLiteral("B"), false);
        const Json d = diffRuns(profileRun(a.store()), profileRun(b.store()));
        QVERIFY2(d["equal"] == Json(true), d.dump(1).c_str());
        QCOMPARE(d["agents"]["matched"], Json(3));
        QVERIFY(d["firstDivergence"].is_null());
    }

    void agentsMatchedAcrossIdsAndTheFirstDivergenceFound()
    {
        Run a(1764000000000), b(1765000000000);
        script(a, QStringLiteral("A"), false);
        script(b, QStringLiteral("B"), true);
        const Json d = diffRuns(profileRun(a.store(), QStringLiteral("a")), profileRun(b.store(), QStringLiteral("b")), &a.store(), &b.store());
        QCOMPARE(d["equal"], Json(false));
        QCOMPARE(d["agents"]["matched"], Json(3));
        QCOMPARE(d["agents"]["onlyA"].size(), size_t(0));
        QCOMPARE(d["agents"]["onlyB"].size(), size_t(1));
        QCOMPARE(d["agents"]["onlyB"][0]["key"], Json("coordinator/auditor#auditor"));
        QCOMPARE(d["agents"]["onlyB"][0]["id"], Json("B-a"));
        // The two workers share a key: paired in registration order.
        bool secondWorkerChanged = false;
        for (const Json &c : d["agents"]["changed"])
            if (c["key"] == Json("coordinator/worker#worker[2]")) {
                secondWorkerChanged = true;
                QCOMPARE(c["idA"], Json("A-w2"));
                QCOMPARE(c["idB"], Json("B-w2"));
                QCOMPARE(c["fields"]["tasksFailed"], Json({0, 1}));
            }
        QVERIFY2(secondWorkerChanged, d["agents"].dump(1).c_str());

        // First divergence: the second worker's answer at 5 s (before the auditor at 8 s).
        const Json &first = d["firstDivergence"];
        QCOMPARE(first["kind"], Json("conversation"));
        QCOMPARE(first["offsetMs"], Json(5000));
        QCOMPARE(first["agents"], Json({"coordinator/worker#worker[2]", "coordinator#coordinator"}));
        QCOMPARE(first["index"], Json(0));
        QCOMPARE(first["messageA"]["type"], Json("TASK_COMPLETE"));
        QCOMPARE(first["messageB"]["type"], Json("TASK_FAILED"));
        QCOMPARE(first["messageA"]["id"], Json("m1764000000000-4"));
        QCOMPARE(first["timeA"], Json(1764000000000 + 5000));
        QCOMPARE(first["timeB"], Json(1765000000000 + 5000));

        // Deltas.
        QCOMPARE(d["deltas"]["agents"]["delta"], Json(1));
        QCOMPARE(d["deltas"]["tasksFailed"]["a"], Json(0));
        QCOMPARE(d["deltas"]["tasksFailed"]["b"], Json(1));
        QCOMPARE(d["deltas"]["messages"]["delta"], Json(0));
        QCOMPARE(d["conversations"]["differingCount"], Json(1));
        QCOMPARE(d["conversations"]["differing"][0]["typeA"], Json("TASK_COMPLETE"));
    }

    // The CLI: JSON on stdout, 0 for equal runs, 1 for different ones, 6 for an unreadable one.
    // Conversations and checkpoints are compared per agent, like messages: the diff names the
    // worker that said less and checkpointed less, not only that the run did.
    void turnsAndCheckpointsComparedPerAgent()
    {
        Run a(1764000000000), b(1765000000000);
        script(a, QStringLiteral("A"), false);
        script(b, QStringLiteral("B"), false);
        for (Run *run : {&a, &b}) {
            const QString prefix = run == &a ? QStringLiteral("A") : QStringLiteral("B");
            run->turn(prefix + QStringLiteral("-c"), 9500);
            run->turn(prefix + QStringLiteral("-w1"), 9600);
            run->checkpoint(prefix + QStringLiteral("-w1"), 9700);
        }
        a.turn(QStringLiteral("A-w1"), 9800); // only in A: a second turn and checkpoint of the first worker
        a.checkpoint(QStringLiteral("A-w1"), 9900);
        const Json d = diffRuns(profileRun(a.store()), profileRun(b.store()));
        QCOMPARE(d["equal"], Json(false));
        QCOMPARE(d["agents"]["changed"].size(), size_t(1));
        const Json &changed = d["agents"]["changed"][0];
        QCOMPARE(changed["key"], Json("coordinator/worker#worker"));
        QCOMPARE(changed["fields"]["turnsSaid"], Json({2, 1}));
        QCOMPARE(changed["fields"]["checkpoints"], Json({2, 1}));
        QVERIFY(!changed["fields"].contains("messagesSent"));
        QCOMPARE(d["deltas"]["turns"]["delta"], Json(-1));
        QCOMPARE(d["deltas"]["checkpoints"]["delta"], Json(-1));
    }

    void cliExitCodes()
    {
        QTemporaryDir dir;
        const QString sample = QStringLiteral(MAPI_SOURCE_DIR "/resources/sample/demo-system.jsonl.zst");
        QByteArray err;
        auto cli = [&err](const QStringList &args, QByteArray *out = nullptr) {
            QProcess p;
            p.start(QStringLiteral(MAPI_CLI_PATH), args);
            if (!p.waitForFinished(60000))
                return -1;
            if (out)
                *out = p.readAllStandardOutput();
            err = p.readAllStandardError();
            return p.exitCode();
        };
        QByteArray out;
        QCOMPARE(cli({QStringLiteral("diff"), sample, sample}, &out), 0);
        QCOMPARE(Json::parse(out.toStdString())["equal"], Json(true));
        // The first half of the same run: different, and it says where.
        const QString cut = dir.filePath(QStringLiteral("cut.jsonl.zst"));
        QCOMPARE(cli({QStringLiteral("convert"), QStringLiteral("--trace"), sample, QStringLiteral("--out"), cut, QStringLiteral("--to"),
                      QStringLiteral("1795401348102")}), 0);
        QCOMPARE(cli({QStringLiteral("diff"), sample, cut}, &out), 1);
        const Json d = Json::parse(out.toStdString());
        QCOMPARE(d["equal"], Json(false));
        QVERIFY(d["firstDivergence"]["timeA"].get<qint64>() > 1795401348102);
        QVERIFY(d["deltas"]["messages"]["delta"].get<qint64>() < 0);
        // And for people, on stderr: a summary (issue 41), not 50 KB of JSON.
        QVERIFY2(err.contains("the runs differ") && err.contains("first divergence:") && err.contains("messages:"), err.constData());
        QVERIFY(err.size() < 4000);
        QCOMPARE(cli({QStringLiteral("diff"), sample, dir.filePath(QStringLiteral("absent.jsonl"))}, &out), 6);
        QVERIFY(out.isEmpty());
        QCOMPARE(cli({QStringLiteral("diff"), sample}, &out), 1);
        QVERIFY(out.isEmpty()); // a usage error prints no JSON
        // Slips (issue 41): a mistyped command is named with what was meant; an output name that
        // says no format writes nothing.
        QCOMPARE(cli({QStringLiteral("stat"), QStringLiteral("--url"), QStringLiteral("ws://127.0.0.1:1")}), 1);
        QVERIFY2(err.contains("unknown command 'stat': did you mean 'state'?"), err.constData());
        QCOMPARE(cli({QStringLiteral("frobnicate")}), 1);
        QVERIFY2(err.contains("unknown command 'frobnicate' (see --help)"), err.constData());
        const QString txt = dir.filePath(QStringLiteral("x.txt"));
        QCOMPARE(cli({QStringLiteral("convert"), QStringLiteral("--trace"), sample, QStringLiteral("--out"), txt}), 1);
        QVERIFY(!QFile::exists(txt));
    }
};

QTEST_GUILESS_MAIN(TestRunDiff)
#include "tst_run_diff.moc"
