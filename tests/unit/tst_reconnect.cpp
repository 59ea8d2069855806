// MapClient's connection state machine against a fake transport that plays the server
// (FakeTransport.h): handshake order, authentication, request timeouts, the liveness probe,
// reconnect backoff, gap replay and sequence gaps. Actions and lists: tst_client_actions.cpp.
#include "TestSupport.h"

#include "FakeTransport.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <optional>
#include <atomic>
#include <thread>

using namespace mapi;
using mapi_test::dump;
using mapi_test::s;
using namespace fake_server;


class TestReconnect : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void handshakeOrder();
    void subscribeFilterIsAlwaysAnObject();
    void authRequiredWithApiKey();
    void authRequiredWithoutCredentialFails();
    void authRefusedFails();
    void authRefreshToleratesOddResults();
    void requestTimeoutCallsBack();
    void handshakeTimeoutReconnects();
    void silentServerIsDetectedByProbe();
    void answeredProbeKeepsConnection();
    void backoffDoublesAndResetsAfterLive();
    void reconnectReplaysFromLastEvent();
    void reconnectReplayPagesWhileHasMore();
    void replayStoppedAtItsBoundIsPartial();
    void replayErrorIsReportedAsGap();
    void sequenceJumpGivesOneGap();
    void aStoppedClientTakesNoMoreFrames();
};

void TestReconnect::handshakeOrder()
{
    auto *t = new FakeTransport;
    QList<SentRequest> heldMembers;
    t->handlers[QStringLiteral("map/scopes/members")] = [&heldMembers, t](const Json &) -> std::optional<Answer> {
        heldMembers << t->requests.back();
        return std::nullopt; // answered by the test below
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();

    QTRY_COMPARE(heldMembers.size(), 2);
    QTest::qWait(50);
    QCOMPARE(client.state(), ClientState::Snapshotting); // not live before every member list is in
    QCOMPARE(rec.lives, 0);

    const QStringList m = t->methods();
    QCOMPARE(m.mid(0, 2), (QStringList{QStringLiteral("map/connect"), QStringLiteral("map/subscribe")}));
    QCOMPARE(QSet<QString>(m.begin() + 2, m.begin() + 4),
             (QSet<QString>{QStringLiteral("map/agents/list"), QStringLiteral("map/scopes/list")}));
    QCOMPARE(m.mid(4), (QStringList{QStringLiteral("map/scopes/members"), QStringLiteral("map/scopes/members")}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/subscribe")).front().params, Json({{"filter", Json::object()}}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/connect")).front().params.at("protocolVersion"), Json(1));
    QSet<QString> scopes;
    for (const SentRequest &r : heldMembers)
        scopes << QString::fromStdString(r.params.at("scopeId").get<std::string>());
    QCOMPARE(scopes, (QSet<QString>{QStringLiteral("s1"), QStringLiteral("s2")}));

    for (const SentRequest &r : heldMembers)
        t->reply(r, Answer::ok({{"members", r.params.at("scopeId") == "s1" ? Json{"a1"} : Json::array()}}));
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(rec.lives, 1);
    QCOMPARE(client.sessionId(), QStringLiteral("sess-gui"));
    QCOMPARE(client.subscriptionId(), QStringLiteral("sub-1"));
    QCOMPARE(rec.states, (QList<ClientState>{ClientState::Connecting, ClientState::Subscribing, ClientState::Snapshotting,
                                             ClientState::Live}));

    // What the handshake learned reached the model.
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a1")));
    QCOMPARE(rec.store.agent(QStringLiteral("a1"))->name, QStringLiteral("alpha"));
    QCOMPARE(toStringList(rec.store.scope(QStringLiteral("s1"))->members), QStringList{QStringLiteral("a1")});
    QCOMPARE(rec.store.connection().serverName, QStringLiteral("fake"));
    // The state reaches the store in its own batch, which may come after the agents' (seen under ASan on CI).
    QTRY_COMPARE(rec.store.connection().state, QStringLiteral("live"));
    QCOMPARE(client.support(QStringLiteral("map/scopes/members")), Support::Present);
}

void TestReconnect::subscribeFilterIsAlwaysAnObject()
{
    {
        ClientOptions o = fastOptions();
        o.subscribeFilter = Json{{"eventTypes", {"agent.registered", "agent.state.changed"}}};
        auto *t = new FakeTransport;
        MapClient client(o, t);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        QCOMPARE(t->requestsFor(QStringLiteral("map/subscribe")).front().params, Json({{"filter", o.subscribeFilter}}));
    }
    for (const Json &bad : {Json(), Json("all"), Json::array({1})}) {
        ClientOptions o = fastOptions();
        o.subscribeFilter = bad;
        auto *t = new FakeTransport;
        MapClient client(o, t);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        QCOMPARE(t->requestsFor(QStringLiteral("map/subscribe")).front().params, Json({{"filter", Json::object()}}));
    }
}

void TestReconnect::authRequiredWithApiKey()
{
    ClientOptions o = fastOptions();
    o.auth.method = AuthConfig::Method::ApiKey;
    o.auth.credential = QStringLiteral("k-123");
    o.allowCredentialInClear = true; // fake.invalid is not loopback
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/connect")] = [](const Json &) {
        return Answer::ok({{"authRequired", {{"methods", {"api-key"}}, {"required", true}}}});
    };
    t->handlers[QStringLiteral("map/authenticate")] = [](const Json &params) {
        if (params.value("credential", "") != "k-123")
            return Answer::ok({{"success", false}, {"error", {{"code", "invalid_credentials"}, {"message", "Unknown API key"}}}});
        return Answer::ok({{"success", true}, {"sessionId", "sess-auth"}, {"principal", {{"id", "user-1"}}}});
    };
    MapClient client(o, t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(t->methods().mid(0, 3), (QStringList{QStringLiteral("map/connect"), QStringLiteral("map/authenticate"),
                                                  QStringLiteral("map/subscribe")}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/authenticate")).front().params,
             Json({{"method", "api-key"}, {"credential", "k-123"}}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/connect")).front().params.at("auth"),
             Json({{"method", "api-key"}, {"credential", "k-123"}}));
    QCOMPARE(client.sessionId(), QStringLiteral("sess-auth"));
    QVERIFY(rec.states.contains(ClientState::Authenticating));
    QVERIFY(rec.fatal.isEmpty());
}

void TestReconnect::authRequiredWithoutCredentialFails()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/connect")] = [](const Json &) {
        return Answer::ok({{"authRequired", {{"methods", {"api-key", "bearer"}}, {"required", true}}}});
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Failed);
    QCOMPARE(rec.fatal.size(), 1);
    QVERIFY2(rec.fatal.front().contains(QStringLiteral("api-key")), qPrintable(rec.fatal.front()));
    QCOMPARE(rec.failures, QList<ClientFailure>{ClientFailure::AuthenticationRequired});
    QTest::qWait(400); // well past the 50 ms backoff: no retry helps, none is made
    QCOMPARE(t->opens, 1);
    QCOMPARE(t->methods(), QStringList{QStringLiteral("map/connect")});
    QCOMPARE(client.state(), ClientState::Failed);
    QVERIFY(!t->isOpen());
}

void TestReconnect::authRefusedFails()
{
    ClientOptions o = fastOptions();
    o.auth.method = AuthConfig::Method::Bearer;
    o.auth.credential = QStringLiteral("expired-token");
    o.allowCredentialInClear = true;
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/connect")] = [](const Json &) {
        return Answer::ok({{"authRequired", {{"methods", {"bearer"}}, {"required", true}}}});
    };
    t->handlers[QStringLiteral("map/authenticate")] = [](const Json &) {
        return Answer::ok({{"success", false}, {"error", {{"code", "expired"}, {"message", "Token expired"}}}});
    };
    MapClient client(o, t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Failed);
    QCOMPARE(rec.fatal.size(), 1);
    QVERIFY(rec.fatal.front().contains(QStringLiteral("Token expired")));
    QCOMPARE(rec.failures, QList<ClientFailure>{ClientFailure::AuthenticationRefused});
    QVERIFY(!rec.fatal.front().contains(QStringLiteral("expired-token"))); // the secret is never shown
    QTest::qWait(300);
    QCOMPARE(t->opens, 1);
}

void TestReconnect::authRefreshToleratesOddResults()
{
    // Whatever map/auth/refresh answers, reading it must not throw (an exception leaving a Qt
    // slot terminates the application): odd shapes are a refusal or nothing, never a crash.
    struct Case { Json result; bool refused; };
    const QList<Case> cases = {
        {Json{{"success", true}}, false},
        {Json{{"success", false}, {"error", {{"message", "Token expired"}}}}, true},
        {Json{{"success", "yes"}}, true},
        {Json{{"success", false}, {"error", "just text"}}, true},
        {Json("text"), false},
        {Json::array({1, 2}), false},
        {Json(), false},
    };
    for (const Case &c : cases) {
        auto *t = new FakeTransport;
        t->handlers[QStringLiteral("map/auth/refresh")] = [c](const Json &) { return Answer::ok(c.result); };
        MapClient client(fastOptions(), t);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        const QString before = client.lastError();
        client.refreshAuth(QStringLiteral("new-token"));
        QTest::qWait(50);
        QCOMPARE(client.state(), ClientState::Live);
        QCOMPARE(client.lastError().startsWith(QStringLiteral("token refresh failed")), c.refused);
        if (!c.refused)
            QCOMPARE(client.lastError(), before);
        QVERIFY(!client.lastError().contains(QStringLiteral("new-token"))); // the secret is never shown
    }
}

void TestReconnect::requestTimeoutCallsBack()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    QElapsedTimer clock;
    clock.start();
    int calls = 0;
    RpcError got;
    qint64 after = -1;
    client.request(QStringLiteral("x/never-answered"), Json::object(), [&](bool ok, const Json &, const RpcError &error) {
        ++calls;
        QVERIFY(!ok);
        got = error;
        after = clock.elapsed();
    }, 200);
    QTRY_COMPARE_WITH_TIMEOUT(calls, 1, 2000);
    QCOMPARE(got.code, MapClient::kTimeoutCode);
    QVERIFY2(after >= 190 && after < 1000, qPrintable(QString::number(after)));
    QTest::qWait(300);
    QCOMPARE(calls, 1);                          // exactly once
    QCOMPARE(client.state(), ClientState::Live); // an ordinary request timing out is not fatal
    QCOMPARE(t->opens, 1);

    // A request answered in time is not timed out later.
    int okCalls = 0;
    t->handlers[QStringLiteral("x/fast")] = [](const Json &) { return Answer::ok({{"fine", true}}); };
    client.request(QStringLiteral("x/fast"), Json::object(), [&](bool ok, const Json &result, const RpcError &) {
        QVERIFY(ok);
        QCOMPARE(result, Json({{"fine", true}}));
        ++okCalls;
    }, 200);
    QTRY_COMPARE(okCalls, 1);
    QTest::qWait(500);
    QCOMPARE(okCalls, 1);
}

void TestReconnect::handshakeTimeoutReconnects()
{
    ClientOptions o = fastOptions();
    o.requestTimeoutMs = 300;
    auto *t = new FakeTransport;
    int connects = 0;
    t->handlers[QStringLiteral("map/connect")] = [&connects](const Json &) -> std::optional<Answer> {
        if (++connects == 1)
            return std::nullopt; // the first attempt hangs
        return Answer::ok({{"sessionId", "sess-2"}});
    };
    MapClient client(o, t);
    Recorder rec(client);
    client.start();
    QTRY_VERIFY_WITH_TIMEOUT(t->opens >= 2, 3000);
    QCOMPARE(t->aborts, 1); // the client dropped the hung socket itself
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(client.sessionId(), QStringLiteral("sess-2"));
    QCOMPARE(client.reconnectCount(), 1);
    // The reconnect's gap comes with the inputs of the new connection, which may follow the state
    // change (a CI run under ASan saw none yet right after Live): wait for it.
    QTRY_COMPARE(int(rec.gaps(Gap::Kind::Reconnect).size()), 1);
    const auto gaps = rec.gaps(Gap::Kind::Reconnect);
    QCOMPARE(rec.fatal.size(), 0);
    // The operator learns why the connection was dropped: the cause, not the transport's
    // "closed by client" (onClosed keeps dropAndReconnect's reason).
    QVERIFY2(gaps.front()->detail.contains(QStringLiteral("timed out")), qPrintable(gaps.front()->detail));
    QVERIFY2(!gaps.front()->detail.contains(QStringLiteral("closed by client")), qPrintable(gaps.front()->detail));
}

void TestReconnect::silentServerIsDetectedByProbe()
{
    ClientOptions o = fastOptions();
    o.probeAfterSilenceMs = 200;
    o.probeTimeoutMs = 300;
    auto *t = new FakeTransport;
    t->handlers.remove(QStringLiteral("map/session/info")); // open but silent
    MapClient client(o, t);
    Recorder rec(client);
    qint64 liveAt = -1;
    connect(&client, &MapClient::live, this, [&] {
        if (liveAt < 0)
            liveAt = t->clock.elapsed();
    });
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    // Silence is noticed, the socket dropped and a new one opened, all within 1.5 s of going live.
    QTRY_VERIFY_WITH_TIMEOUT(t->opens >= 2, 1600);
    QCOMPARE(t->aborts, 1);
    const qint64 reopened = t->openTimes.at(1) - liveAt;
    QVERIFY2(reopened <= 1500, qPrintable(QString::number(reopened)));
    QVERIFY2(t->closeTimes.at(0) - liveAt >= o.probeAfterSilenceMs + o.probeTimeoutMs - 10,
             "dropped before the probe could time out");

    const auto probes = t->requestsFor(QStringLiteral("map/session/info"));
    QVERIFY(!probes.isEmpty());
    QCOMPARE(probes.front().params, Json::object());
    bool silentProblem = false;
    for (const ModelInput &in : rec.inputs)
        if (const auto *p = std::get_if<ProblemInput>(&in))
            silentProblem |= p->problem.kind == ProblemKind::NotAnswering
                && p->problem.detail.startsWith(QStringLiteral("the server is not answering since"))
                && p->problem.detail.contains(QStringLiteral("map/session/info"));
    QVERIFY(silentProblem);
    QTRY_COMPARE(client.state(), ClientState::Live); // and it came back
}

void TestReconnect::answeredProbeKeepsConnection()
{
    ClientOptions o = fastOptions();
    o.probeAfterSilenceMs = 200;
    o.probeTimeoutMs = 300;
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/session/info")] = [](const Json &) {
        return Answer::error(-32601, QStringLiteral("Method not found: map/session/info"));
    };
    MapClient client(o, t);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QTest::qWait(1500);
    QCOMPARE(t->opens, 1);
    QCOMPARE(t->aborts, 0);
    QCOMPARE(client.state(), ClientState::Live);
    // -32601 on the preferred probe switches it to map/scopes/list.
    QCOMPARE(t->requestsFor(QStringLiteral("map/session/info")).size(), 1);
    QVERIFY(t->requestsFor(QStringLiteral("map/scopes/list")).size() >= 2);
    QCOMPARE(client.support(QStringLiteral("map/session/info")), Support::Absent);
}

void TestReconnect::backoffDoublesAndResetsAfterLive()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    t->refuseNextOpens = 3;
    const int opensBefore = t->opens;
    const int closesBefore = t->closeTimes.size();
    t->serverClose();
    QCOMPARE(client.state(), ClientState::Backoff);
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), ClientState::Live, 5000);
    QCOMPARE(t->opens, opensBefore + 4);

    // delay i = open i - close i: 50, 100, 200, 400 ms (jitter 0). Timers may fire a little early
    // (coarse timers: 5 %) and late under load.
    const QList<int> expected{50, 100, 200, 400};
    QStringList report;
    for (int i = 0; i < expected.size(); ++i) {
        const qint64 delay = t->openTimes.at(opensBefore + i) - t->closeTimes.at(closesBefore + i);
        report << QString::number(delay);
        QVERIFY2(delay >= expected[i] * 0.9 - 2 && delay <= expected[i] + 150, qPrintable(report.join(QLatin1Char(','))));
    }
    QCOMPARE(client.reconnectCount(), 1);

    // Live again: the next drop starts over at the initial delay.
    const int opensLive = t->opens;
    const int closesLive = t->closeTimes.size();
    t->serverClose();
    QTRY_COMPARE(t->opens, opensLive + 1);
    const qint64 delay = t->openTimes.at(opensLive) - t->closeTimes.at(closesLive);
    QVERIFY2(delay >= 44 && delay <= 200, qPrintable(QString::number(delay)));
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(client.reconnectCount(), 2);
}

void TestReconnect::reconnectReplaysFromLastEvent()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/replay")] = [](const Json &) {
        // [M]: a bare array of inner events, oldest first.
        return Answer::ok(Json::array({mapi_test::innerEvent(QStringLiteral("E3"), QStringLiteral("agent.registered"), 2003,
                                                             {{"agent", mapi_test::regAgent(QStringLiteral("a3"), QStringLiteral("three"))}}),
                                       mapi_test::innerEvent(QStringLiteral("E4"), QStringLiteral("agent.state.changed"), 2004,
                                                             {{"agent", mapi_test::regAgent(QStringLiteral("a3"), QStringLiteral("three"), QStringLiteral("busy"))},
                                                              {"previousState", "idle"}})}));
    };
    // After the reconnect the snapshot still lists a3 (it exists on the server).
    t->handlers[QStringLiteral("map/agents/list")] = [t](const Json &) {
        Json agents = {{{"id", "a1"}, {"name", "alpha"}, {"state", "idle"}}};
        if (t->subscriptions > 1)
            agents.push_back({{"id", "a3"}, {"name", "three"}, {"state", "busy"}});
        return Answer::ok({{"agents", agents}});
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-1"), 1, QStringLiteral("E1"), QStringLiteral("a1")));
    t->push(agentEvent(QStringLiteral("sub-1"), 2, QStringLiteral("E2"), QStringLiteral("a1"), QStringLiteral("busy"),
                       QStringLiteral("agent.state.changed")));
    QTRY_COMPARE(rec.eventIds(), (QStringList{QStringLiteral("E1"), QStringLiteral("E2")}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/replay")).size(), 0); // no replay on the first connect

    const int before = t->requests.size();
    t->serverClose();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(client.subscriptionId(), QStringLiteral("sub-2"));

    const auto replays = t->requestsFor(QStringLiteral("map/replay"));
    QCOMPARE(replays.size(), 1);
    QCOMPARE(replays.front().params.at("subscriptionId"), Json("sub-1")); // the OLD subscription
    QCOMPARE(replays.front().params.at("since"), Json("E2"));             // the last event seen
    const QStringList second = t->methods().mid(before);
    QCOMPARE(second.mid(0, 3), (QStringList{QStringLiteral("map/connect"), QStringLiteral("map/subscribe"),
                                            QStringLiteral("map/replay")}));
    QVERIFY(second.indexOf(QStringLiteral("map/agents/list")) > second.indexOf(QStringLiteral("map/replay")));
    // The dead old subscription is released on the server.
    const auto unsubscribes = t->requestsFor(QStringLiteral("map/unsubscribe"));
    QCOMPARE(unsubscribes.size(), 1);
    QCOMPARE(unsubscribes.front().params.at("subscriptionId"), Json("sub-1"));

    QTRY_COMPARE(rec.eventIds(), (QStringList{QStringLiteral("E1"), QStringLiteral("E2"), QStringLiteral("E3"), QStringLiteral("E4")}));
    QCOMPARE(rec.store.agent(QStringLiteral("a3"))->state, QStringLiteral("busy"));
    const auto reconnectGaps = rec.gaps(Gap::Kind::Reconnect);
    QCOMPARE(int(reconnectGaps.size()), 1);
    QVERIFY(reconnectGaps.front()->recovered);
    QVERIFY(rec.gaps(Gap::Kind::ReplayUnavailable).empty());
}

void TestReconnect::reconnectReplayPagesWhileHasMore()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/replay")] = [](const Json &params) {
        // [T] shape, two pages.
        if (params.value("since", "") == "E2")
            return Answer::ok({{"events", {{{"eventId", "E3"}, {"timestamp", 3},
                                            {"event", {{"id", "evt-3"}, {"type", "agent_registered"}, {"data", {{"agentId", "a3"}, {"name", "three"}}}}}}}},
                               {"hasMore", true}});
        return Answer::ok({{"events", {{{"eventId", "E4"}, {"timestamp", 4},
                                        {"event", {{"id", "evt-4"}, {"type", "agent_state_changed"},
                                                   {"data", {{"agentId", "a3"}, {"previousState", "idle"}, {"newState", "busy"}}}}}}}},
                           {"hasMore", false}});
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-1"), 1, QStringLiteral("E1"), QStringLiteral("a1")));
    t->push(agentEvent(QStringLiteral("sub-1"), 2, QStringLiteral("E2"), QStringLiteral("a2")));
    QTRY_COMPARE(rec.eventIds().size(), 2);
    t->serverClose();
    QTRY_COMPARE(client.state(), ClientState::Live);
    const auto replays = t->requestsFor(QStringLiteral("map/replay"));
    QCOMPARE(replays.size(), 2);
    QCOMPARE(replays.at(0).params.at("since"), Json("E2"));
    QCOMPARE(replays.at(1).params.at("since"), Json("E3"));
    QCOMPARE(replays.at(1).params.at("subscriptionId"), Json("sub-1"));
    QTRY_COMPARE(rec.eventIds().mid(2), (QStringList{QStringLiteral("E3"), QStringLiteral("E4")}));
}

// A replay that reaches its page bound with events still missing is a partial recovery: the
// reconnect gap says so and is not "recovered".
void TestReconnect::replayStoppedAtItsBoundIsPartial()
{
    auto *t = new FakeTransport;
    int page = 0;
    t->handlers[QStringLiteral("map/replay")] = [&page](const Json &) { // always more
        ++page;
        const std::string id = "R" + std::to_string(page);
        return Answer::ok({{"events", {{{"eventId", id}, {"timestamp", 10 + page},
                                        {"event", {{"id", id}, {"type", "agent_registered"},
                                                   {"data", {{"agentId", "r" + std::to_string(page)}}}}}}}},
                           {"hasMore", true}});
    };
    ClientOptions options = fastOptions();
    options.replayMaxPages = 3;
    MapClient client(options, t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-1"), 1, QStringLiteral("E1"), QStringLiteral("a1")));
    QTRY_COMPARE(rec.eventIds().size(), 1);
    t->serverClose();
    QTRY_COMPARE(rec.lives, 2);
    QCOMPARE(t->requestsFor(QStringLiteral("map/replay")).size(), 3); // the bound
    const auto gaps = rec.gaps(Gap::Kind::Reconnect);
    QCOMPARE(int(gaps.size()), 1);
    QVERIFY(!gaps.front()->recovered);
    QVERIFY(gaps.front()->partial);
    QVERIFY2(gaps.front()->detail.contains(QLatin1String("partly recovered: 3 missed events replayed")), qPrintable(gaps.front()->detail));
}

void TestReconnect::replayErrorIsReportedAsGap()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/replay")] = [](const Json &) {
        return Answer::error(-32603, QStringLiteral("Subscription not found: sub-1"));
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-1"), 1, QStringLiteral("E1"), QStringLiteral("a1")));
    QTRY_COMPARE(rec.eventIds().size(), 1);
    t->serverClose();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QCOMPARE(t->requestsFor(QStringLiteral("map/replay")).size(), 1);
    QTRY_COMPARE(int(rec.gaps(Gap::Kind::ReplayUnavailable).size()), 1);
    QVERIFY(rec.gaps(Gap::Kind::ReplayUnavailable).front()->detail.contains(QStringLiteral("E1")));
    QCOMPARE(int(rec.gaps(Gap::Kind::Reconnect).size()), 1);
    QVERIFY(!rec.gaps(Gap::Kind::Reconnect).front()->recovered);
    QCOMPARE(rec.store.counters().gaps, qint64(2));
}

void TestReconnect::sequenceJumpGivesOneGap()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    int eventNo = 0;
    for (qint64 seq : {1, 2, 5, 6})
        t->push(agentEvent(QStringLiteral("sub-1"), seq, QStringLiteral("S%1").arg(++eventNo), QStringLiteral("a%1").arg(seq)));
    QTRY_COMPARE(rec.eventIds().size(), 4);
    const auto gaps = rec.gaps(Gap::Kind::Sequence);
    QCOMPARE(int(gaps.size()), 1);
    QCOMPARE(gaps.front()->fromSequence, qint64(3));
    QCOMPARE(gaps.front()->toSequence, qint64(4));
    QCOMPARE(rec.store.counters().sequenceGaps, qint64(1));

    // A new connection and subscription numbers from 1 again: no gap.
    t->serverClose();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-2"), 1, QStringLiteral("S9"), QStringLiteral("a9")));
    QTRY_VERIFY(rec.eventIds().contains(QStringLiteral("S9")));
    QCOMPARE(int(rec.gaps(Gap::Kind::Sequence).size()), 1);
}

QTEST_GUILESS_MAIN(TestReconnect)
#include "tst_reconnect.moc"

// After stop() the client's sinks (journal, recording) take no frame; what still arrives before
// the socket closes (here while the unsubscribe waits for its answer) must not reach the model
// either, or a saved session replays short of what the window showed (tst_window_recording).
void TestReconnect::aStoppedClientTakesNoMoreFrames()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/unsubscribe")] = [](const Json &) { return std::optional<Answer>(); }; // silent
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->push(agentEvent(QStringLiteral("sub-1"), 1, QStringLiteral("E1"), QStringLiteral("a1")));
    QTRY_COMPARE(rec.eventIds(), QStringList{QStringLiteral("E1")});
    client.stop();
    QCOMPARE(client.state(), ClientState::Closed);
    QVERIFY(t->isOpen()); // the unsubscribe is not answered yet
    t->push(agentEvent(QStringLiteral("sub-1"), 2, QStringLiteral("E2"), QStringLiteral("a2")));
    QCoreApplication::sendPostedEvents(); // inputs are flushed by a queued call: one would be delivered now
    QCOMPARE(rec.eventIds(), QStringList{QStringLiteral("E1")});
    QVERIFY(rec.store.agent(QStringLiteral("a2")) == nullptr);
}
