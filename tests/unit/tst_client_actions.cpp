// MapClient's requests beyond the connection, against the fake server of FakeTransport.h: operator
// actions with their documented fallbacks, observer mode, the lists under either spelling and
// walked page by page, requests from the server, a clean stop and the input backlog.
#include "FakeTransport.h"

#include "pipeline/InputBacklog.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <atomic>
#include <thread>

using namespace mapi;
using namespace fake_server;
using mapi_test::dump;
using mapi_test::s;

class TestClientActions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void stopFallsBackToUpdate();
    void injectFallsBackToSteeringMessage();
    void actionsWhenNotLiveFail();
    void actionWithALostAnswerIsUnknownUntilItsEvent();
    void observerOnlyClientSendsNoControl();
    void actionErrorsAndRefusals();
    void serverRequestIsAnsweredMethodNotFound();
    void stopUnsubscribesAndCloses();
    void backlogCountsWhatTheClientHandsOut();
    void backlogHoldsTheProducerUntilThereIsRoom();
    void observerRefusesEveryMethodThatChanges();
    void listsUnderTheOtherSpelling();
    void neitherSpellingIsSaid();
    void agentListIsWalkedPageByPage();
    void agentListWalkCutShortRetiresNobody();
    void actionsKeepOneClockWhateverTheServerSays_data();
    void actionsKeepOneClockWhateverTheServerSays();
};

void TestClientActions::stopFallsBackToUpdate()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/agents/stop")] = [](const Json &) {
        return Answer::error(-32601, QStringLiteral("Method not found: map/agents/stop"));
    };
    int updateCalls = 0;
    t->handlers[QStringLiteral("map/agents/update")] = [t, &updateCalls](const Json &params) {
        // [M] emits the state change before it answers.
        ++updateCalls;
        t->push(agentEvent(QStringLiteral("sub-1"), updateCalls, QStringLiteral("STOP-EVT-%1").arg(updateCalls),
                           QString::fromStdString(params.at("agentId").get<std::string>()), QStringLiteral("stopped"),
                           QStringLiteral("agent.state.changed")));
        return Answer::ok({{"agent", {{"id", params.at("agentId")}, {"state", "stopped"}}}});
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    const QString first = client.stopAgent(QStringLiteral("a1"), QStringLiteral("operator request"));
    QTRY_COMPARE(stepNames(rec.steps(first)), (QStringList{QStringLiteral("created"), QStringLiteral("fallback"),
                                                           QStringLiteral("answered")}));
    const auto stops = t->requestsFor(QStringLiteral("map/agents/stop"));
    QCOMPARE(stops.size(), 1);
    QCOMPARE(stops.front().params, Json({{"agentId", "a1"}, {"force", false}, {"reason", "operator request"}}));
    const auto updates = t->requestsFor(QStringLiteral("map/agents/update"));
    QCOMPARE(updates.size(), 1);
    QCOMPARE(updates.front().params, Json({{"agentId", "a1"}, {"state", "stopped"}}));
    QCOMPARE(client.support(QStringLiteral("map/agents/stop")), Support::Absent);
    for (const ActionUpdate &u : rec.actions)
        if (u.step == ActionUpdate::Step::Fallback)
            QCOMPARE(u.action.method, QStringLiteral("map/agents/update"));

    // In the model: fallback noted and confirmed by the state event.
    QTRY_VERIFY(rec.store.action(first) && rec.store.action(first)->status == ActionStatus::Confirmed);
    QVERIFY(rec.store.action(first)->fallback);
    QCOMPARE(rec.store.action(first)->method, QStringLiteral("map/agents/update"));

    // Known absent: the next stop goes straight to the fallback.
    const QString second = client.stopAgent(QStringLiteral("a2"));
    QTRY_COMPARE(stepNames(rec.steps(second)), (QStringList{QStringLiteral("created"), QStringLiteral("fallback"),
                                                            QStringLiteral("answered")}));
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/stop")).size(), 1);
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/update")).size(), 2);
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/update")).back().params, Json({{"agentId", "a2"}, {"state", "stopped"}}));
}

void TestClientActions::injectFallsBackToSteeringMessage()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/inject")] = [](const Json &) {
        return Answer::error(-32601, QStringLiteral("Method not found: map/inject"));
    };
    t->handlers[QStringLiteral("map/send")] = [](const Json &) { return Answer::ok({{"messageId", "msg-9"}}); };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    const Json content = "Please summarise your progress.";
    const QString id = client.inject(QStringLiteral("a1"), content, MapClient::Delivery::Queue);
    QTRY_COMPARE(stepNames(rec.steps(id)), (QStringList{QStringLiteral("created"), QStringLiteral("fallback"),
                                                        QStringLiteral("answered")}));
    const auto injects = t->requestsFor(QStringLiteral("map/inject"));
    QCOMPARE(injects.size(), 1);
    QCOMPARE(injects.front().params, Json({{"agentId", "a1"}, {"content", content}, {"delivery", "queue"}}));
    const auto sends = t->requestsFor(QStringLiteral("map/send"));
    QCOMPARE(sends.size(), 1);
    QCOMPARE(sends.front().params.at("to"), Json({{"agent", "a1"}}));
    const Json payload = sends.front().params.at("payload");
    QCOMPARE(payload.at("type"), Json("STEERING"));
    QCOMPARE(payload.at("content"), content);
    QCOMPARE(payload.at("delivery"), Json("queue"));
    QCOMPARE(interpretPayload(payload).kind, ConventionKind::Steering);
    for (const ActionUpdate &u : rec.actions)
        if (u.step == ActionUpdate::Step::Answered)
            QCOMPARE(u.action.messageId, QStringLiteral("msg-9"));
    QCOMPARE(client.support(QStringLiteral("map/inject")), Support::Absent);
}

void TestClientActions::actionsWhenNotLiveFail()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    const QString id = client.stopAgent(QStringLiteral("a1")); // never started: Idle
    QCOMPARE(stepNames(rec.steps(id)), (QStringList{QStringLiteral("created"), QStringLiteral("failed")}));
    QVERIFY(rec.actions.back().action.detail.contains(QStringLiteral("not connected")));
    QVERIFY(t->sent.isEmpty());

    // While reconnecting, too.
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    t->refuseNextOpens = 1000;
    t->serverClose();
    QCOMPARE(client.state(), ClientState::Backoff);
    const int sentBefore = t->sent.size();
    const QString during = client.inject(QStringLiteral("a1"), Json("hi"), MapClient::Delivery::Interrupt);
    QCOMPARE(stepNames(rec.steps(during)), (QStringList{QStringLiteral("created"), QStringLiteral("failed")}));
    QCOMPARE(t->sent.size(), sentBefore);
    QTRY_VERIFY(rec.store.action(during));
    QCOMPARE(rec.store.action(during)->status, ActionStatus::Failed);
}

// The server takes the stop but the connection drops before its answer: the stop may have been
// done, so it is "unknown", not "failed" (an operator would send it again); the reconnect does not
// send it again; the state change that comes later confirms it.
void TestClientActions::actionWithALostAnswerIsUnknownUntilItsEvent()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/agents/stop")] = [](const Json &) { return std::optional<Answer>(); }; // no answer
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    const QString stop = client.stopAgent(QStringLiteral("a1"));
    QTRY_COMPARE(t->requestsFor(QStringLiteral("map/agents/stop")).size(), 1);
    t->serverClose();
    QCOMPARE(stepNames(rec.steps(stop)), (QStringList{QStringLiteral("created"), QStringLiteral("answer-lost")}));
    QTRY_VERIFY(rec.store.action(stop) && rec.store.action(stop)->status == ActionStatus::Unknown);
    QVERIFY2(rec.store.action(stop)->detail.contains(QLatin1String("may have taken effect")), qPrintable(rec.store.action(stop)->detail));
    rec.store.advanceTime(rec.store.action(stop)->sentAtMs + 10 * rec.store.healthPolicy().actionConfirmTimeoutMs);
    QCOMPARE(rec.store.action(stop)->status, ActionStatus::Unknown); // not "timed out" either: nobody knows

    QTRY_COMPARE(rec.lives, 2); // reconnected
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/stop")).size(), 1); // and not sent again
    t->push(agentEvent(client.subscriptionId(), 1, QStringLiteral("STOPPED-1"), QStringLiteral("a1"), QStringLiteral("stopped"),
                       QStringLiteral("agent.state.changed")));
    QTRY_COMPARE(rec.store.action(stop)->status, ActionStatus::Confirmed);
    QCOMPARE(rec.store.action(stop)->confirmingEventId, QStringLiteral("STOPPED-1"));
}

// Observer-only is enforced by the client itself, not only by the window's disabled buttons: it
// asks map/connect to observe and nothing more, and refuses control methods without sending them.
void TestClientActions::observerOnlyClientSendsNoControl()
{
    auto *t = new FakeTransport;
    ClientOptions options = fastOptions();
    options.observerOnly = true;
    MapClient client(options, t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    const Json caps = t->requestsFor(QStringLiteral("map/connect")).front().params.at("capabilities");
    QCOMPARE(caps["observation"]["canObserve"], Json(true));
    QCOMPARE(caps["lifecycle"]["canStop"], Json(false));
    QCOMPARE(caps["lifecycle"]["canSteer"], Json(false));
    QCOMPARE(caps["messaging"]["canSend"], Json(false));

    const int sentBefore = t->sent.size();
    const QStringList refused = {client.stopAgent(QStringLiteral("a1")), client.suspendAgent(QStringLiteral("a1")),
                                 client.resumeAgent(QStringLiteral("a1")),
                                 client.inject(QStringLiteral("a1"), Json("x"), MapClient::Delivery::Interrupt),
                                 client.sendMessage(Json{{"agent", "a1"}}, Json{{"hi", 1}})};
    for (const QString &id : refused) {
        QCOMPARE(stepNames(rec.steps(id)), (QStringList{QStringLiteral("created"), QStringLiteral("failed")}));
        QTRY_VERIFY(rec.store.action(id));
        QVERIFY2(rec.store.action(id)->detail.contains(QLatin1String("observer-only")), qPrintable(rec.store.action(id)->detail));
    }
    QCOMPARE(t->sent.size(), sentBefore); // nothing went out

    client.setObserverOnly(false); // the operator switched observer mode off
    client.stopAgent(QStringLiteral("a1"));
    QTRY_COMPARE(t->requestsFor(QStringLiteral("map/agents/stop")).size(), 1);
}

void TestClientActions::actionErrorsAndRefusals()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/agents/stop")] = [](const Json &) {
        return Answer::error(-32603, QStringLiteral("Agent not found: ghost"));
    };
    t->handlers[QStringLiteral("map/inject")] = [](const Json &) { return Answer::ok({{"injected", false}}); };
    t->handlers[QStringLiteral("map/send")] = [](const Json &) {
        return Answer::error(-32601, QStringLiteral("Method not found: map/send"));
    };
    t->handlers[QStringLiteral("map/agents/suspend")] = [](const Json &) {
        return Answer::ok({{"suspended", true}});
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);

    const QString stop = client.stopAgent(QStringLiteral("ghost"));
    const QString inject = client.inject(QStringLiteral("a1"), Json("x"), MapClient::Delivery::BestEffort);
    const QString send = client.sendMessage(Json{{"agent", "a1"}}, Json{{"hi", 1}});
    const QString suspend = client.suspendAgent(QStringLiteral("a1"));
    QTRY_COMPARE(rec.steps(suspend).size(), 2);
    QTRY_COMPARE(rec.steps(send).size(), 2);
    QCOMPARE(stepNames(rec.steps(stop)), (QStringList{QStringLiteral("created"), QStringLiteral("failed")}));
    QCOMPARE(stepNames(rec.steps(inject)), (QStringList{QStringLiteral("created"), QStringLiteral("failed")}));
    QCOMPARE(stepNames(rec.steps(send)), (QStringList{QStringLiteral("created"), QStringLiteral("unsupported")}));
    QCOMPARE(stepNames(rec.steps(suspend)), (QStringList{QStringLiteral("created"), QStringLiteral("answered")}));
    // An error that is not -32601 is no reason to try the fallback.
    QVERIFY(t->requestsFor(QStringLiteral("map/agents/update")).isEmpty());
    QCOMPARE(client.support(QStringLiteral("map/agents/stop")), Support::Present);
    QCOMPARE(t->requestsFor(QStringLiteral("map/inject")).front().params.at("delivery"), Json("best-effort"));
    QTRY_VERIFY(rec.store.action(stop) && rec.store.action(stop)->status == ActionStatus::Failed);
    QVERIFY(rec.store.action(stop)->detail.contains(QStringLiteral("-32603")));
    QTRY_VERIFY(rec.store.action(send) && rec.store.action(send)->status == ActionStatus::Unsupported);
}

void TestClientActions::serverRequestIsAnsweredMethodNotFound()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    const int before = t->sent.size();
    t->push(R"({"jsonrpc":"2.0","id":"srv-1","method":"client/ping","params":{}})");
    QCOMPARE(t->sent.size(), before + 1);
    const Json reply = Json::parse(t->sent.back().toStdString());
    QCOMPARE(reply.at("id"), Json("srv-1"));
    QCOMPARE(reply.at("error").at("code"), Json(-32601));
    QVERIFY(!reply.contains("result"));
}

void TestClientActions::stopUnsubscribesAndCloses()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    client.stop();
    QTRY_COMPARE(client.state(), ClientState::Closed);
    const auto unsubscribes = t->requestsFor(QStringLiteral("map/unsubscribe"));
    QCOMPARE(unsubscribes.size(), 1);
    QCOMPARE(unsubscribes.front().params, Json({{"subscriptionId", "sub-1"}}));
    QTest::qWait(300);
    QCOMPARE(t->opens, 1); // a requested stop is not a reason to reconnect
    QVERIFY(!t->isOpen());
}

// Every batch the client hands out is counted in its backlog until the consumer says it applied
// it: the count is what holds the reading back (InspectorSession removes as it applies).
void TestClientActions::backlogCountsWhatTheClientHandsOut()
{
    auto *t = new FakeTransport;
    MapClient client(fastOptions(), t);
    auto backlog = std::make_shared<InputBacklog>(1000000);
    client.setInputBacklog(backlog);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(rec.lives, 1);
    QVERIFY(rec.inputs.size() > 0);
    QCOMPARE(backlog->size(), qint64(rec.inputs.size()));
    backlog->remove(rec.inputs.size());
    QCOMPARE(backlog->size(), 0);
    QCOMPARE(backlog->waits(), 0);
}

void TestClientActions::backlogHoldsTheProducerUntilThereIsRoom()
{
    InputBacklog backlog(100);
    std::atomic<bool> returned{false};
    backlog.add(150); // over the limit: the producer's next wait blocks
    std::thread producer([&] {
        backlog.waitForRoom();
        returned = true;
    });
    QTRY_COMPARE(backlog.waits(), 1);
    QTest::qWait(50);
    QVERIFY(!returned);
    backlog.remove(60);            // 90: under the limit, not yet under half of it
    QTest::qWait(50);
    QVERIFY(!returned);
    backlog.remove(40);            // 50: room
    QTRY_VERIFY(returned);
    producer.join();

    // A consumer about to wait for the producer's thread releases it first.
    returned = false;
    backlog.add(200);
    std::thread held([&] {
        backlog.waitForRoom();
        returned = true;
    });
    QTRY_COMPARE(backlog.waits(), 2);
    backlog.hold(false);
    QTRY_VERIFY(returned);
    held.join();
    backlog.hold(true);
    backlog.clear();
    QCOMPARE(backlog.size(), 0);
}


// Observer mode below the actions too: a generic request that changes the system (the deny-list
// of map/MethodTable.cpp), or that the console cannot classify, is refused without being sent,
// and the caller hears why; reads go out.
void TestClientActions::observerRefusesEveryMethodThatChanges()
{
    auto *t = new FakeTransport;
    for (const char *method : {"map/federation/list", "map/federation/buffer/stats", "map/send"})
        t->handlers[QString::fromLatin1(method)] = [](const Json &) { return Answer::ok(Json::object()); };
    ClientOptions options = fastOptions();
    options.observerOnly = true;
    MapClient client(options, t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    const int sentBefore = t->sent.size();
    for (const char *method : {"map/send", "map/inject", "map/scopes/create", "mail/turn", "map/agents/register",
                               "map/agents/stop", "map/federation/route", "map/federation/buffer/flush",
                               "trajectory/checkpoint", "x-vendor/do"}) {
        int code = 0;
        QString message;
        client.request(QString::fromLatin1(method), Json::object(), [&code, &message](bool ok, const Json &, const RpcError &e) {
            code = ok ? 1 : e.code;
            message = e.message;
        });
        QCOMPARE(code, MapClient::kRefusedCode); // answered at once, before request() returns
        QVERIFY2(message.contains(QLatin1String("observer mode")) && message.contains(QLatin1String(method)),
                 qPrintable(message));
    }
    int code = 0;
    QString message;
    client.request(QStringLiteral("map/send"), Json{{"to", {{"agent", "a1"}}}, {"payload", "hi"}},
                   [&code, &message](bool ok, const Json &, const RpcError &e) {
                       code = ok ? 1 : e.code;
                       message = e.message;
                   });
    QCOMPARE(code, MapClient::kRefusedCode);
    QCOMPARE(message, QStringLiteral("refused: observer mode: map/send changes the system and is not sent"));
    QCOMPARE(t->sent.size(), sentBefore); // nothing went on the wire
    QVERIFY(t->requestsFor(QStringLiteral("map/send")).isEmpty());

    // Reads, and the client's own subscription, go out.
    client.request(QStringLiteral("map/agents/get"), Json{{"agentId", "a1"}}, {});
    QTRY_COMPARE(t->requestsFor(QStringLiteral("map/agents/get")).size(), 1);
    const int listsBefore = t->requestsFor(QStringLiteral("map/agents/list")).size();
    client.request(QStringLiteral("map/agents/list"), Json::object(), {});
    QTRY_COMPARE(t->requestsFor(QStringLiteral("map/agents/list")).size(), listsBefore + 1);
    for (const char *method : {"map/federation/list", "map/federation/buffer/stats"}) { // the client reads them itself too
        const qsizetype before = t->requestsFor(QString::fromLatin1(method)).size();
        client.request(QString::fromLatin1(method), Json::object(), {});
        QTRY_COMPARE(t->requestsFor(QString::fromLatin1(method)).size(), before + 1);
    }

    client.setObserverOnly(false); // observer mode off: the same request goes out
    client.request(QStringLiteral("map/send"), Json{{"to", {{"agent", "a1"}}}, {"payload", "hi"}}, {});
    QTRY_COMPARE(t->requestsFor(QStringLiteral("map/send")).size(), 1);
}

// A server that knows its lists only as map/agents.list: asked once under that spelling, kept for
// the server, said once (MethodFallback), and nothing is missing.
void TestClientActions::listsUnderTheOtherSpelling()
{
    auto *t = new FakeTransport;
    t->handlers[QStringLiteral("map/agents/list")] = [](const Json &) {
        return std::optional<Answer>(Answer::error(-32601, QStringLiteral("Method not found")));
    };
    t->handlers[QStringLiteral("map/agents.list")] = [](const Json &) {
        return std::optional<Answer>(Answer::ok({{"agents", Json::array({{{"id", "a1"}, {"name", "one"}, {"state", "idle"}}})}}));
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a1")));
    QVERIFY2(rec.store.observation().complete(), qPrintable(rec.store.observation().missing().join(u'|')));
    bool answered = false;
    client.reconcile([&answered](bool ok) { answered = ok; });
    QTRY_VERIFY(answered);
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/list")).size(), 1); // asked once under the usual name
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents.list")).size(), 2); // then always the other
    int fallbacks = 0, failures = 0;
    for (const ProtocolProblem &p : rec.store.problems()) {
        fallbacks += p.kind == ProblemKind::MethodFallback;
        failures += p.kind == ProblemKind::MethodFailed;
    }
    QCOMPARE(fallbacks, 1);
    QCOMPARE(failures, 1); // the first refusal, said, then taken back by the fallback
}

// Neither spelling: the observation goes live on what it can learn and says what it lacks.
void TestClientActions::neitherSpellingIsSaid()
{
    auto *t = new FakeTransport;
    for (const char *m : {"map/scopes/list", "map/scopes.list"})
        t->handlers[QString::fromLatin1(m)] = [](const Json &) {
            return std::optional<Answer>(Answer::error(-32601, QStringLiteral("Method not found")));
        };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QTRY_VERIFY(!rec.store.observation().complete());
    const QStringList missing = rec.store.observation().missing();
    QCOMPARE(missing.size(), 1);
    QVERIFY2(missing.front().contains(QLatin1String("does not list scopes: scopes are inferred from events")), qPrintable(missing.front()));
    QVERIFY(missing.front().contains(QLatin1String("-32601")));
}


namespace {

Json agentsPage(std::initializer_list<const char *> ids, const char *nextCursor = nullptr)
{
    Json agents = Json::array();
    for (const char *id : ids)
        agents.push_back({{"id", id}, {"name", std::string("agent-") + id}, {"state", "idle"}});
    Json page = {{"agents", agents}};
    if (nextCursor)
        page["nextCursor"] = nextCursor;
    return page;
}

int problemsOf(const SystemStore &store, ProblemKind kind, QString *detail = nullptr)
{
    int n = 0;
    for (const ProtocolProblem &p : store.problems())
        if (p.kind == kind) {
            ++n;
            if (detail)
                *detail = p.detail;
        }
    return n;
}

} // namespace

// A server that pages map/agents/list (the spec's nextCursor): the snapshot reads every page, and
// a reconciliation compares the whole list, not its first page, with the model.
void TestClientActions::agentListIsWalkedPageByPage()
{
    auto *t = new FakeTransport;
    bool secondList = false;
    t->handlers[QStringLiteral("map/agents/list")] = [&secondList](const Json &params) {
        const std::string cursor = params.value("cursor", "");
        if (!secondList)
            return std::optional<Answer>(Answer::ok(cursor.empty() ? agentsPage({"a1", "a2"}, "page-2") : agentsPage({"a3"})));
        // Later: a2 has gone, a4 came, and nobody said so in an event.
        return std::optional<Answer>(Answer::ok(cursor.empty() ? agentsPage({"a1"}, "next") : agentsPage({"a3", "a4"})));
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a3")));
    QVERIFY(rec.store.agent(QStringLiteral("a1")) && rec.store.agent(QStringLiteral("a2")));
    QVERIFY2(rec.store.observation().complete(), qPrintable(rec.store.observation().missing().join(u'|')));
    const QList<SentRequest> firstWalk = t->requestsFor(QStringLiteral("map/agents/list"));
    QCOMPARE(firstWalk.size(), 2);
    QCOMPARE(dump(firstWalk[0].params), QByteArray("{}")); // no limit: a server's own page size
    QCOMPARE(dump(firstWalk[1].params), QByteArray("{\"cursor\":\"page-2\"}"));

    secondList = true;
    bool answered = false;
    client.reconcile([&answered](bool ok) { answered = ok; });
    QTRY_VERIFY(answered);
    QCOMPARE(t->requestsFor(QStringLiteral("map/agents/list")).size(), 4);
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a4")));
    QVERIFY(rec.store.agent(QStringLiteral("a2"))->unregistered); // missing from the whole list
    QVERIFY(!rec.store.agent(QStringLiteral("a3"))->unregistered); // on the second page only
    QVERIFY(!rec.store.agent(QStringLiteral("a1"))->unregistered);
    QString drift;
    QCOMPARE(problemsOf(rec.store, ProblemKind::Drift, &drift), 1);
    QVERIFY2(drift.contains(QLatin1String("lists 1 agent(s) the model did not show (agent-a4)")), qPrintable(drift));
}

// A walk that fails half-way is a partial list: the agents of its pages count, none is retired.
void TestClientActions::agentListWalkCutShortRetiresNobody()
{
    auto *t = new FakeTransport;
    bool broken = false;
    t->handlers[QStringLiteral("map/agents/list")] = [&broken](const Json &params) {
        const std::string cursor = params.value("cursor", "");
        if (cursor.empty())
            return std::optional<Answer>(Answer::ok(broken ? agentsPage({"a1", "a5"}, "page-2") : agentsPage({"a1", "a2"}, "page-2")));
        if (broken)
            return std::optional<Answer>(Answer::error(-32603, QStringLiteral("cursor expired")));
        return std::optional<Answer>(Answer::ok(agentsPage({"a3"})));
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a3")));
    broken = true;
    bool answered = false;
    client.reconcile([&answered](bool ok) { answered = ok; });
    QTRY_VERIFY(answered);
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a5"))); // the first page still counts
    for (const char *id : {"a1", "a2", "a3"})
        QVERIFY2(!rec.store.agent(QString::fromLatin1(id))->unregistered, id);
    QCOMPARE(problemsOf(rec.store, ProblemKind::Drift), 0);
    QString failed;
    QCOMPARE(problemsOf(rec.store, ProblemKind::MethodFailed, &failed), 1);
    QVERIFY2(failed.contains(QLatin1String("cursor expired")), qPrintable(failed));
}

void TestClientActions::actionsKeepOneClockWhateverTheServerSays_data()
{
    QTest::addColumn<qint64>("skewMs");
    QTest::newRow("server 90 s ahead") << qint64(90000);
    QTest::newRow("server 90 s behind") << qint64(-90000);
    QTest::newRow("same clock") << qint64(0);
}

// An action's durations are measured on one clock (the console's), whatever the server's clock
// says: with the server 90 s ahead, nothing is "timed out" at once; with it 90 s behind, nothing
// waits 90 s too long. Its confirming event counts from when it arrived.
void TestClientActions::actionsKeepOneClockWhateverTheServerSays()
{
    QFETCH(qint64, skewMs);
    auto *t = new FakeTransport;
    qint64 seq = 0;
    const auto stamped = [&seq, skewMs](const QString &id, const QString &agent, const QString &state, const QString &type) {
        return mapi_test::eventFrame(QStringLiteral("sub-1"), ++seq,
                                     mapi_test::innerEvent(id, type, QDateTime::currentMSecsSinceEpoch() + skewMs,
                                                           {{"agent", mapi_test::regAgent(agent, agent, state)}},
                                                           {{"agentId", s(agent)}}));
    };
    bool confirmStops = true;
    t->handlers[QStringLiteral("map/agents/stop")] = [&, t](const Json &params) {
        const QString agent = QString::fromStdString(params.at("agentId").get<std::string>());
        if (confirmStops) // the state change follows the answer by 300 ms
            QTimer::singleShot(300, t, [&, t, agent] {
                t->push(stamped(QStringLiteral("STOP-") + agent, agent, QStringLiteral("stopped"), QStringLiteral("agent.state.changed")));
            });
        return std::optional<Answer>(Answer::ok({{"agent", {{"id", params.at("agentId")}, {"state", "stopping"}}}}));
    };
    MapClient client(fastOptions(), t);
    Recorder rec(client);
    client.start();
    QTRY_COMPARE(client.state(), ClientState::Live);
    HealthPolicy policy;
    policy.actionConfirmTimeoutMs = 2000;
    rec.store.setHealthPolicy(policy);
    const auto tick = [&rec] { rec.store.advanceTime(QDateTime::currentMSecsSinceEpoch()); }; // as the window's and the CLI's ticks do
    const auto tickUntil = [&rec, &tick](const QString &id, ActionStatus status, int withinMs) {
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < withinMs) {
            tick();
            const OperatorAction *a = rec.store.action(id);
            if (a && a->status == status)
                return true;
            QTest::qWait(20);
        }
        return false;
    };

    // Sent before the server's clock is known: the events that show it come after (the
    // offset then jumps from 0 to the skew). No event ever confirms it: timed out after the
    // 2 s it may wait, not at once and not 90 s late.
    confirmStops = false;
    const QString lost = client.stopAgent(QStringLiteral("a2"));
    QTRY_COMPARE(actionStatusName(rec.store.action(lost) ? rec.store.action(lost)->status : ActionStatus::Sent),
                 QStringLiteral("accepted"));
    for (int i = 1; i <= 7; ++i) { // events from which the client measures the server's clock: 5 at least, 100 ms apart
        t->push(stamped(QStringLiteral("REG-%1").arg(i), QStringLiteral("a%1").arg(i), QStringLiteral("idle"),
                        QStringLiteral("agent.registered")));
        QTest::qWait(110);
        tick();
    }
    QTRY_VERIFY(rec.store.agent(QStringLiteral("a7")) && rec.store.connection().clockSamples > 0);
    QVERIFY2(std::abs(rec.store.connection().clockOffsetMs - skewMs) < 2000,
             qPrintable(QString::number(rec.store.connection().clockOffsetMs)));
    tick();
    const OperatorAction *a = rec.store.action(lost);
    QVERIFY2(QDateTime::currentMSecsSinceEpoch() - a->sentAtMs < 1900, "the test ran too slowly to mean anything");
    QCOMPARE(actionStatusName(a->status), QStringLiteral("accepted")); // not timed out at once
    QVERIFY(tickUntil(lost, ActionStatus::TimedOut, 2500));
    a = rec.store.action(lost);
    QVERIFY2(a->settledAtMs - a->sentAtMs > 2000 && a->settledAtMs - a->sentAtMs < 3000,
             qPrintable(QStringLiteral("timed out %1 ms after it was sent").arg(a->settledAtMs - a->sentAtMs)));

    // Confirmed by its event, 300 ms on: never timed out first; the wait measured on one clock.
    confirmStops = true;
    const QString confirmed = client.stopAgent(QStringLiteral("a1"));
    QVERIFY(tickUntil(confirmed, ActionStatus::Confirmed, 4000));
    a = rec.store.action(confirmed);
    QVERIFY2(a->settledAtMs - a->sentAtMs >= 250 && a->settledAtMs - a->sentAtMs < 1800,
             qPrintable(QStringLiteral("settled %1 ms after it was sent").arg(a->settledAtMs - a->sentAtMs)));
}

QTEST_GUILESS_MAIN(TestClientActions)
#include "tst_client_actions.moc"
