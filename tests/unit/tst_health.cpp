// Health rules of SystemStore: heartbeat age against HealthPolicy, agent states, session
// connectivity and departures, and the rows advanceTime() marks as changed.
#include "TestSupport.h"

#include "model/HealthRules.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "pipeline/ClockSkew.h"

#include <QSignalSpy>

using namespace mapi;
using mapi_test::s;
using mapi_test::Wire;

namespace {

constexpr qint64 kStart = 1'000'000;

HealthPolicy oneSecond()
{
    HealthPolicy p;
    p.intervalMs = 1000;
    return p;
}

// A store with agent "w1" (session "sess-1") registered at kStart and a peer "coord".
struct Fixture
{
    explicit Fixture(const HealthPolicy &policy = oneSecond())
        : wire(store)
    {
        store.setHealthPolicy(policy);
        wire.registerAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("sess-c"), Json::object(),
                           QStringLiteral("idle"), kStart - 5);
        wire.registerAgent(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("sess-1"), Json::object(),
                           QStringLiteral("idle"), kStart);
    }

    // A seed-000 HEARTBEAT from w1 at time `t` (sent over w1's session, as on [M]).
    void heartbeat(qint64 t)
    {
        wire.message(QStringLiteral("hb-%1").arg(t), QStringLiteral("sess-1"), "coord",
                     Json{{"message_id", "hb-" + std::to_string(t)}, {"type", "HEARTBEAT"}, {"from", "w1"}, {"to", "coord"},
                          {"payload", {{"status", "ACTIVE"}, {"load", 0.2}}}},
                     t);
    }

    Health healthAt(qint64 t)
    {
        store.advanceTime(t);
        return store.agent(QStringLiteral("w1"))->health;
    }

    SystemStore store;
    Wire wire;
};

QString name(Health h)
{
    return healthName(h);
}

} // namespace

class TestHealth : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void heartbeatAgeThresholds_data();
    void heartbeatAgeThresholds();
    void heartbeatRestoresHealthy();
    void listedButNotHeardFromIsUnknown();
    void statesOverrideAge_data();
    void statesOverrideAge();
    void sessionDisconnectedThenBack();
    void unregisteredIsStopped();
    void criticalErrorReportIsFailed();
    void customPolicyChangesThresholds();
    void advanceTimeMarksChangedRows();
    void healthAppearsInStateJson();
    void rulesApplyInOrder_data();
    void rulesApplyInOrder();
    void serverClockSkewIsCorrected_data();
    void serverClockSkewIsCorrected();
    void oneTimestampInMicrosecondsMovesNothing();
    void clockEstimateIgnoresOutliersAndReplays();
};

void TestHealth::heartbeatAgeThresholds_data()
{
    QTest::addColumn<qint64>("age");
    QTest::addColumn<Health>("expected");
    QTest::newRow("right after") << qint64(0) << Health::Healthy;
    QTest::newRow("one interval exactly") << qint64(1000) << Health::Healthy;
    QTest::newRow("just over one interval") << qint64(1001) << Health::Late;
    QTest::newRow("three intervals exactly") << qint64(3000) << Health::Late;
    QTest::newRow("just over three intervals") << qint64(3001) << Health::Unresponsive;
    QTest::newRow("long silence") << qint64(60000) << Health::Unresponsive;
}

void TestHealth::heartbeatAgeThresholds()
{
    QFETCH(qint64, age);
    QFETCH(Health, expected);
    Fixture f;
    const qint64 beat = kStart + 20000;
    f.heartbeat(beat);
    QCOMPARE(f.store.agent(QStringLiteral("w1"))->lastHeartbeatMs, beat);
    QCOMPARE(name(f.healthAt(beat + age)), name(expected));
    QCOMPARE(name(f.store.evaluateHealth(*f.store.agent(QStringLiteral("w1")), beat + age)), name(expected));
}

void TestHealth::heartbeatRestoresHealthy()
{
    Fixture f;
    f.heartbeat(kStart + 100);
    QCOMPARE(name(f.healthAt(kStart + 100 + 3500)), name(Health::Unresponsive));
    f.heartbeat(kStart + 100 + 3600);
    QCOMPARE(name(f.healthAt(kStart + 100 + 3700)), name(Health::Healthy));
    // Any event about the agent also counts as a sign of life.
    QCOMPARE(name(f.healthAt(kStart + 100 + 3600 + 1500)), name(Health::Late));
    f.wire.setState(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("busy"), QStringLiteral("idle"),
                    kStart + 100 + 3600 + 1600);
    QCOMPARE(name(f.healthAt(kStart + 100 + 3600 + 1700)), name(Health::Healthy));
}

// An agent a snapshot lists, with no heartbeat and no event of its own: never "healthy" by
// default. Unknown until the late threshold (counted from first sight), then late and
// unresponsive as usual; an event about it makes it healthy.
void TestHealth::listedButNotHeardFromIsUnknown()
{
    Fixture f;
    AgentsSnapshot snapshot;
    AgentRecord quiet;
    quiet.id = QStringLiteral("quiet");
    quiet.name = QStringLiteral("quiet-worker");
    quiet.state = QStringLiteral("idle");
    snapshot.data.agents.push_back(quiet);
    snapshot.timeMs = kStart + 100;
    snapshot.complete = false;
    f.store.apply(ModelInputs{snapshot});
    const auto healthOfQuiet = [&](qint64 t) {
        f.store.advanceTime(t);
        return name(f.store.agent(QStringLiteral("quiet"))->health);
    };
    QCOMPARE(healthOfQuiet(kStart + 100), name(Health::Unknown));
    QCOMPARE(healthOfQuiet(kStart + 1100), name(Health::Unknown)); // one interval exactly
    QCOMPARE(healthOfQuiet(kStart + 1101), name(Health::Late));
    QCOMPARE(healthOfQuiet(kStart + 3101), name(Health::Unresponsive));
    f.wire.setState(QStringLiteral("quiet"), QStringLiteral("quiet-worker"), QStringLiteral("busy"), QStringLiteral("idle"),
                    kStart + 3200);
    QCOMPARE(healthOfQuiet(kStart + 3300), name(Health::Healthy));
}

void TestHealth::statesOverrideAge_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<Health>("expected");
    QTest::newRow("suspended") << "suspended" << Health::Suspended;
    QTest::newRow("stopped") << "stopped" << Health::Stopped;
    QTest::newRow("custom:failed") << "custom:failed" << Health::Failed;
    QTest::newRow("failed ([S])") << "failed" << Health::Failed;
    QTest::newRow("x-failed ([S] custom)") << "x-failed" << Health::Failed;
    QTest::newRow("busy is age-based") << "busy" << Health::Healthy;
    QTest::newRow("custom:thinking is age-based") << "custom:thinking" << Health::Healthy;
}

void TestHealth::statesOverrideAge()
{
    QFETCH(QString, state);
    QFETCH(Health, expected);
    Fixture f;
    const qint64 t = kStart + 50;
    f.wire.setState(QStringLiteral("w1"), QStringLiteral("worker-1"), state, QStringLiteral("idle"), t);
    QCOMPARE(name(f.healthAt(t + 10)), name(expected));
    // States that say it all do not decay with silence; age-based ones do.
    const Health later = f.healthAt(t + 10 * 1000);
    if (expected == Health::Healthy)
        QCOMPARE(name(later), name(Health::Unresponsive));
    else
        QCOMPARE(name(later), name(expected));
}

void TestHealth::sessionDisconnectedThenBack()
{
    Fixture f;
    const qint64 t = kStart + 100;
    f.wire.event(QStringLiteral("session.disconnected"), {{"sessionId", "sess-1"}, {"resumeToken", "resume_X"}},
                 {{"sessionId", "sess-1"}}, {}, t);
    QCOMPARE(name(f.healthAt(t + 1)), name(Health::Disconnected));
    QCOMPARE(name(f.store.agent(QStringLiteral("coord"))->health), name(Health::Healthy)); // other session unaffected
    // Disconnected wins over age.
    QCOMPARE(name(f.healthAt(t + 100000)), name(Health::Disconnected));

    const qint64 back = t + 100000 + 10;
    f.wire.event(QStringLiteral("session.resumed"), {{"session", {{"id", "sess-1"}, {"role", "agent"}}}}, {{"sessionId", "sess-1"}},
                 {}, back);
    f.heartbeat(back + 1);
    QCOMPARE(name(f.healthAt(back + 2)), name(Health::Healthy));

    // [T]: participant_disconnected of the owner (ownerId = session).
    f.wire.event(QStringLiteral("participant_disconnected"), {{"participantId", "sess-1"}, {"participantType", "agent"}}, "sess-1",
                 {}, back + 10);
    QCOMPARE(name(f.healthAt(back + 11)), name(Health::Disconnected));
    f.wire.event(QStringLiteral("session.expired"), {{"sessionId", "sess-1"}}, Json(), {}, back + 20);
    QCOMPARE(f.store.sessions().value(QStringLiteral("sess-1")).status, QStringLiteral("expired"));
    QCOMPARE(name(f.healthAt(back + 21)), name(Health::Disconnected));
}

void TestHealth::unregisteredIsStopped()
{
    Fixture f;
    f.heartbeat(kStart + 10);
    f.wire.event(QStringLiteral("agent.unregistered"), {{"agentId", "w1"}}, {{"agentId", "w1"}}, {}, kStart + 20);
    QCOMPARE(name(f.healthAt(kStart + 21)), name(Health::Stopped));
    // Stopped beats a disconnected session.
    f.wire.event(QStringLiteral("session.disconnected"), {{"sessionId", "sess-1"}}, Json(), {}, kStart + 30);
    QCOMPARE(name(f.healthAt(kStart + 31)), name(Health::Stopped));
}

void TestHealth::criticalErrorReportIsFailed()
{
    Fixture f;
    f.heartbeat(kStart + 10);
    f.wire.message(QStringLiteral("err"), QStringLiteral("sess-1"), "coord",
                   Json{{"id", "e-1"}, {"from", "w1"}, {"to", "coord"}, {"type", "ERROR_REPORT"},
                        {"payload", {{"severity", "critical"}, {"message", "out of budget"}}}},
                   kStart + 20);
    QCOMPARE(f.store.agent(QStringLiteral("w1"))->lastErrorSeverity, QStringLiteral("CRITICAL"));
    QCOMPARE(name(f.healthAt(kStart + 21)), name(Health::Failed));
    // A later heartbeat means it recovered.
    f.heartbeat(kStart + 30);
    QCOMPARE(name(f.healthAt(kStart + 31)), name(Health::Healthy));

    // A "high" (ERROR) report does not mark the agent failed.
    f.wire.message(QStringLiteral("err2"), QStringLiteral("sess-1"), "coord",
                   Json{{"id", "e-2"}, {"from", "w1"}, {"to", "coord"}, {"type", "ERROR_REPORT"},
                        {"payload", {{"severity", "high"}, {"message", "retrying"}}}},
                   kStart + 40);
    QCOMPARE(name(f.healthAt(kStart + 41)), name(Health::Healthy));
}

void TestHealth::customPolicyChangesThresholds()
{
    HealthPolicy policy = oneSecond();
    policy.lateAfterIntervals = 2;
    policy.unresponsiveAfterIntervals = 5;
    Fixture f(policy);
    f.heartbeat(kStart + 10);
    QCOMPARE(name(f.healthAt(kStart + 10 + 1500)), name(Health::Healthy)); // late with the default policy
    QCOMPARE(name(f.healthAt(kStart + 10 + 2000)), name(Health::Healthy));
    QCOMPARE(name(f.healthAt(kStart + 10 + 2001)), name(Health::Late));
    QCOMPARE(name(f.healthAt(kStart + 10 + 4000)), name(Health::Late)); // unresponsive with the default policy
    QCOMPARE(name(f.healthAt(kStart + 10 + 5001)), name(Health::Unresponsive));

    // Changing the policy re-evaluates at once.
    HealthPolicy lenient = policy;
    lenient.intervalMs = 10000;
    f.store.setHealthPolicy(lenient);
    QCOMPARE(name(f.store.agent(QStringLiteral("w1"))->health), name(Health::Healthy));
}

void TestHealth::advanceTimeMarksChangedRows()
{
    Fixture f;
    f.heartbeat(kStart + 10);
    f.store.advanceTime(kStart + 20);
    QSignalSpy spy(&f.store, &SystemStore::changed);
    f.store.flushChanges();
    spy.clear();

    // Nothing changes: no signal at all.
    f.store.advanceTime(kStart + 500);
    f.store.flushChanges();
    QCOMPARE(spy.count(), 0);

    // w1 (heartbeat at +10) turns late; coord (registered at -5, silent since) too.
    f.store.advanceTime(kStart + 1011);
    f.store.flushChanges();
    QCOMPARE(spy.count(), 1);
    ChangeSet c = qvariant_cast<ChangeSet>(spy.takeFirst().at(0));
    QCOMPARE(c.agentRows,
             (QSet<int>{f.store.agentRow(QStringLiteral("coord")), f.store.agentRow(QStringLiteral("w1"))}));
    QCOMPARE(c.firstNewAgentRow, -1);

    // Only w1 gets a heartbeat: only w1's row changes back.
    f.heartbeat(kStart + 1100);
    f.store.flushChanges();
    spy.clear();
    f.store.advanceTime(kStart + 1101);
    f.store.flushChanges();
    QCOMPARE(spy.count(), 1);
    c = qvariant_cast<ChangeSet>(spy.takeFirst().at(0));
    QCOMPARE(c.agentRows, QSet<int>{f.store.agentRow(QStringLiteral("w1"))});
    QCOMPARE(name(f.store.agent(QStringLiteral("w1"))->health), name(Health::Healthy));
    QCOMPARE(name(f.store.agent(QStringLiteral("coord"))->health), name(Health::Late));

    // Time never runs backwards.
    f.store.advanceTime(kStart);
    QCOMPARE(f.store.now(), kStart + 1101);
    QCOMPARE(name(f.store.agent(QStringLiteral("coord"))->health), name(Health::Late));
}

void TestHealth::healthAppearsInStateJson()
{
    Fixture f;
    f.wire.setState(QStringLiteral("w1"), QStringLiteral("worker-1"), QStringLiteral("suspended"), QStringLiteral("idle"), kStart + 1);
    f.store.advanceTime(kStart + 2);
    const Json agents = stateToJson(f.store).at("agents");
    QCOMPARE(agents.size(), size_t(2));
    QCOMPARE(agents[1].at("id"), Json("w1"));
    QCOMPARE(agents[1].at("health"), Json("suspended"));
    QCOMPARE(agents[0].at("health"), Json("healthy"));
}

// A server whose clock is two minutes off: its events' timestamps are compared with its own time
// (local clock + the measured offset), so nobody looks late or early, and an operator action (stamped
// on the local clock) times out after its timeout, not two minutes early or late.
void TestHealth::serverClockSkewIsCorrected_data()
{
    QTest::addColumn<qint64>("skewMs");
    QTest::newRow("server 2 min behind") << qint64(-120000);
    QTest::newRow("server 2 min ahead") << qint64(120000);
    QTest::newRow("in step") << qint64(0);
}

void TestHealth::serverClockSkewIsCorrected()
{
    QFETCH(qint64, skewMs);
    SystemStore store; // the default policy: 30 s heartbeat interval, late after 1, unresponsive after 3
    Wire wire(store);
    wire.setServerClockOffset(skewMs);
    const QStringList agents = {QStringLiteral("a0"), QStringLiteral("a1"), QStringLiteral("a2")};
    for (const QString &id : agents)
        wire.registerAgent(id, id, {}, Json::object(), QStringLiteral("busy"), kStart);
    int n = 0;
    for (qint64 t = kStart + 200; t < kStart + 20000; t += 200, ++n)
        wire.message(QStringLiteral("m%1").arg(n), agents[n % 3], "a0", Json{{"n", n}}, t);
    QCOMPARE(store.connection().clockOffsetMs, skewMs); // no transit time in this wire
    QVERIFY(store.connection().clockSamples >= ClockSkewEstimator::kMinSamples);
    QCOMPARE(store.counters().futureTimestamps, 0);

    const qint64 localNow = wire.now() + 1000;
    store.advanceTime(localNow);
    QCOMPARE(store.now(), localNow + skewMs);
    for (const QString &id : agents)
        QCOMPARE(name(store.agent(id)->health), name(Health::Healthy));

    // An action sent now (local clock) is not timed out before its timeout, and is after it.
    ActionUpdate created;
    created.step = ActionUpdate::Step::Created;
    created.timeMs = localNow;
    created.action.id = QStringLiteral("act-1");
    created.action.kind = ActionKind::Stop;
    created.action.agentId = QStringLiteral("a1");
    store.apply(ModelInput(created));
    const qint64 timeout = store.healthPolicy().actionConfirmTimeoutMs;
    store.advanceTime(localNow + timeout - 1000);
    QCOMPARE(actionStatusName(store.action(QStringLiteral("act-1"))->status), actionStatusName(ActionStatus::Sent));
    store.advanceTime(localNow + timeout + 1000);
    QCOMPARE(actionStatusName(store.action(QStringLiteral("act-1"))->status), actionStatusName(ActionStatus::TimedOut));
    // Silence still counts: a minute and a half later on the server's clock they are late.
    store.advanceTime(localNow + 91000);
    QCOMPARE(name(store.agent(QStringLiteral("a2"))->health), name(Health::Unresponsive));
}

// One event stamped in microseconds (a thousand times "now"): "now" does not jump, nothing times
// out, health stays as it was, and the event is counted.
void TestHealth::oneTimestampInMicrosecondsMovesNothing()
{
    Fixture f;
    f.heartbeat(kStart + 500);
    ActionUpdate created;
    created.step = ActionUpdate::Step::Created;
    created.timeMs = kStart + 600;
    created.action.id = QStringLiteral("act-1");
    created.action.kind = ActionKind::Suspend;
    created.action.agentId = QStringLiteral("w1");
    f.store.apply(ModelInput(created));
    const qint64 before = f.store.now();
    f.wire.eventStampedAt(QStringLiteral("agent.state.changed"),
                          {{"agent", mapi_test::regAgent(QStringLiteral("coord"), QStringLiteral("coordinator"), QStringLiteral("busy"))},
                           {"previousState", "idle"}},
                          {{"agentId", "coord"}}, (kStart + 650) * 1000);
    QCOMPARE(f.store.counters().futureTimestamps, 1);
    QVERIFY2(f.store.now() < before + 1000, qPrintable(QString::number(f.store.now())));
    QCOMPARE(f.store.agent(QStringLiteral("coord"))->state, QStringLiteral("busy")); // the event itself is kept
    QCOMPARE(name(f.healthAt(kStart + 900)), name(Health::Healthy));
    QCOMPARE(actionStatusName(f.store.action(QStringLiteral("act-1"))->status), actionStatusName(ActionStatus::Sent));
}

// The estimate is a median over live events: a few absurd timestamps do not move it, and events
// replayed after a reconnect (old by design) are not measured at all.
void TestHealth::clockEstimateIgnoresOutliersAndReplays()
{
    ClockSkewEstimator clock;
    qint64 local = 1'795'000'000'000; // a real epoch time: a day behind it is still positive
    auto sample = [&](qint64 offset) {
        local += 150;
        return clock.addSample(local + offset, local);
    };
    for (int i = 0; i < 4; ++i)
        QVERIFY(!sample(-31000)); // fewer than kMinSamples: nothing reported yet
    QVERIFY(sample(-31000));
    QCOMPARE(clock.offsetMs(), -31000);
    QVERIFY(!sample(1'000'000'000'000)); // microseconds
    QVERIFY(!sample(-86'400'000));        // a day behind
    QVERIFY(!sample(-31010));
    QCOMPARE(clock.offsetMs(), -31000);
    // Bursts: one sample per kSampleEveryMs of arrival time.
    const qint64 at = local;
    QVERIFY(!clock.addSample(at + 5'000'000, at + 1));
    QCOMPARE(clock.samples(), 8);

    // Through the pipeline: replayed events (a map/replay result) are not samples.
    SystemStore store;
    Wire wire(store);
    wire.setServerClockOffset(-60000);
    wire.registerAgent(QStringLiteral("a"), QStringLiteral("a"));
    Json events = Json::array();
    for (int i = 0; i < 50; ++i)
        events.push_back(mapi_test::innerEvent(QStringLiteral("old-%1").arg(i), QStringLiteral("agent.heartbeat"), kStart - 3'600'000,
                                               Json::object(), {{"agentId", "a"}}));
    wire.call(QStringLiteral("map/replay"), {{"subscriptionId", "sub-1"}}, events);
    QCOMPARE(store.connection().clockSamples, 0);
    for (int i = 0; i < 6; ++i)
        wire.event(QStringLiteral("agent.heartbeat"), Json::object(), {{"agentId", "a"}}, {}, wire.now() + 200);
    QCOMPARE(store.connection().clockOffsetMs, -60000);
}

QTEST_GUILESS_MAIN(TestHealth)
// The rules themselves (model/HealthRules.h), without a store: when several hold, the first wins.
void TestHealth::rulesApplyInOrder_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<bool>("unregistered");
    QTest::addColumn<bool>("critical");       // a CRITICAL error report after the last heartbeat
    QTest::addColumn<QString>("session");     // its session's status ("": none known)
    QTest::addColumn<qint64>("silentMs");     // since the last sign of life
    QTest::addColumn<int>("expected");
    const qint64 anHour = 3600000;
    QTest::newRow("unregistered beats everything") << QStringLiteral("crashed") << true << true << QStringLiteral("disconnected") << anHour << int(Health::Stopped);
    QTest::newRow("a stopped state") << QStringLiteral("Stopped") << false << true << QStringLiteral("expired") << anHour << int(Health::Stopped);
    QTest::newRow("a failed state beats a lost session") << QStringLiteral("error") << false << false << QStringLiteral("disconnected") << anHour << int(Health::Failed);
    QTest::newRow("a critical report") << QStringLiteral("busy") << false << true << QStringLiteral("disconnected") << qint64(0) << int(Health::Failed);
    QTest::newRow("a lost session beats suspended") << QStringLiteral("suspended") << false << false << QStringLiteral("expired") << anHour << int(Health::Disconnected);
    QTest::newRow("suspended beats silence") << QStringLiteral("SUSPENDED") << false << false << QStringLiteral("connected") << anHour << int(Health::Suspended);
    QTest::newRow("silent past 3 intervals") << QStringLiteral("busy") << false << false << QStringLiteral("") << qint64(90001) << int(Health::Unresponsive);
    QTest::newRow("silent at 3 intervals") << QStringLiteral("busy") << false << false << QStringLiteral("") << qint64(90000) << int(Health::Late);
    QTest::newRow("silent past 1 interval") << QStringLiteral("idle") << false << false << QStringLiteral("connected") << qint64(30001) << int(Health::Late);
    QTest::newRow("heard from within the interval") << QStringLiteral("idle") << false << false << QStringLiteral("connected") << qint64(30000) << int(Health::Healthy);
}

void TestHealth::rulesApplyInOrder()
{
    QFETCH(QString, state);
    QFETCH(bool, unregistered);
    QFETCH(bool, critical);
    QFETCH(QString, session);
    QFETCH(qint64, silentMs);
    QFETCH(int, expected);
    const qint64 now = 1795000000000;
    Agent agent;
    agent.id = QStringLiteral("a1");
    agent.state = state;
    agent.unregistered = unregistered;
    agent.lastHeartbeatMs = now - silentMs;
    if (critical) {
        agent.lastErrorSeverity = QStringLiteral("CRITICAL");
        agent.lastErrorMs = agent.lastHeartbeatMs;
    }
    Session known;
    known.status = session;
    const HealthPolicy policy; // 30 s interval, late after 1, unresponsive after 3
    const Health health = evaluateHealth(agent, session.isEmpty() ? nullptr : &known, policy, now);
    QCOMPARE(healthName(health), healthName(Health(expected)));
}

#include "tst_health.moc"
