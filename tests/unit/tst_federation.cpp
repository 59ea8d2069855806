// Another system's entities on a federating server (map/Federation.h, issue 43 item 3): the
// helpers that read them, and the reconciliation that follows them by the list alone (the server
// sends no event about them) without calling their coming and going missed events. The frames
// are those the SDK's federation sends (shared/reference/map-extensions.md §2.3).
#include "FakeTransport.h"

#include "map/Federation.h"
#include "model/FederationLedger.h"

#include <limits>

using namespace mapi;
using namespace fake_server;

namespace {

Json federated(const char *system, const char *id, const char *name)
{
    return {{"id", std::string(system) + ":agent:" + id},
            {"name", name},
            {"role", "worker"},
            {"state", "busy"},
            {"metadata", {{"_federatedFrom", system}, {"_originalId", id}}},
            {"visibility", "public"}};
}

Json local(const char *id, const char *name)
{
    return {{"id", id}, {"name", name}, {"role", "analyst"}, {"state", "idle"}, {"metadata", Json::object()}};
}

QStringList problemDetails(const SystemStore &store, ProblemKind kind)
{
    QStringList out;
    for (const ProtocolProblem &p : store.problems())
        if (p.kind == kind)
            out << p.detail;
    return out;
}

} // namespace

class TestFederation : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }

    void addressesAndMetadataAreRead_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("system");
        QTest::addColumn<QString>("original");
        QTest::newRow("an agent of B") << QStringLiteral("B:agent:01M8GD3T5C1FV81EDKGNYKF8H5") << QStringLiteral("B")
                                       << QStringLiteral("01M8GD3T5C1FV81EDKGNYKF8H5");
        QTest::newRow("a scope of B") << QStringLiteral("B:scope:01M8GD3T71D8BX3M8D1C9FZWAN") << QStringLiteral("B")
                                      << QStringLiteral("01M8GD3T71D8BX3M8D1C9FZWAN");
        QTest::newRow("a system named with dashes") << QStringLiteral("prod-eu:agent:x") << QStringLiteral("prod-eu") << QStringLiteral("x");
        QTest::newRow("the server's own") << QStringLiteral("01M8GD3T5ATE8Q6C3K4QJ53KKA") << QString() << QStringLiteral("01M8GD3T5ATE8Q6C3K4QJ53KKA");
        QTest::newRow("no system before") << QStringLiteral(":agent:x") << QString() << QStringLiteral(":agent:x");
        QTest::newRow("nothing after") << QStringLiteral("B:agent:") << QString() << QStringLiteral("B:agent:");
        QTest::newRow("another kind") << QStringLiteral("B:message:x") << QString() << QStringLiteral("B:message:x");
        QTest::newRow("a colon elsewhere") << QStringLiteral("urn:x:agent:y") << QString() << QStringLiteral("urn:x:agent:y");
    }

    void addressesAndMetadataAreRead()
    {
        QFETCH(QString, id);
        QFETCH(QString, system);
        QFETCH(QString, original);
        QCOMPARE(federatedSystemOfAddress(id), system);
        QCOMPARE(federatedOriginalId(id, Json()), original);
        // The metadata, where the server gives it, is what counts.
        const Json metadata = {{"_federatedFrom", "C"}, {"_originalId", "kept"}};
        QCOMPARE(federatedFrom(metadata), QStringLiteral("C"));
        QCOMPARE(federatedOriginalId(id, metadata), QStringLiteral("kept"));
        QCOMPARE(federatedFrom(Json::object()), QString());
        QCOMPARE(federatedFrom(Json("B")), QString());
    }

    void messagesThatCrossedAreTold()
    {
        // As the recipient on A gets it: the sender by B's session id, behind B's prefix.
        Crossing in = messageCrossing(QStringLiteral("B:agent:01M8GD3T5C89D3W6JNNDZG7SK8"), {QStringLiteral("01M8GD3T5ATE8Q6C3K4QJ53KKA")});
        QCOMPARE(in.system, QStringLiteral("B"));
        QVERIFY(in.inbound);
        Crossing out = messageCrossing(QStringLiteral("alice"), {QStringLiteral("bob"), QStringLiteral("B:agent:01M8GD3T5C1FV81EDKGNYKF8H5")});
        QCOMPARE(out.system, QStringLiteral("B"));
        QVERIFY(!out.inbound);
        QVERIFY(messageCrossing(QStringLiteral("alice"), {QStringLiteral("bob")}).system.isEmpty());
    }

    // B's scope lists its members by their ids on B: they are B's agents as A lists them, not
    // placeholders beside them.
    void remoteScopeMembersAreTheRemoteAgents()
    {
        SystemStore store;
        ScopeRecord scope;
        scope.id = QStringLiteral("B:scope:01TEAM");
        scope.name = QStringLiteral("b-team");
        scope.metadata = {{"_federatedFrom", "B"}, {"_originalId", "01TEAM"}};
        store.apply(ModelInputs{ModelInput{ScopesSnapshot{SnapshotScopes{{scope}}, 1000}},
                                ModelInput{MembersSnapshot{SnapshotMembers{scope.id, {QStringLiteral("01BOB"), QStringLiteral("B:agent:01BETH")}}, 1000}}});
        const Scope *team = store.scope(scope.id);
        QVERIFY(team);
        QCOMPARE(team->members.size(), size_t(2));
        QVERIFY(team->members.count(QStringLiteral("B:agent:01BOB")) == 1);
        QVERIFY(team->members.count(QStringLiteral("B:agent:01BETH")) == 1);
        QVERIFY(!store.agent(QStringLiteral("01BOB")));
        // A scope of the server's own keeps its members' ids as given.
        ScopeRecord own;
        own.id = QStringLiteral("01OWN");
        store.apply(ModelInputs{ModelInput{ScopesSnapshot{SnapshotScopes{{scope, own}}, 2000}},
                                ModelInput{MembersSnapshot{SnapshotMembers{own.id, {QStringLiteral("01ALICE")}}, 2000}}});
        QVERIFY(store.scope(own.id)->members.count(QStringLiteral("01ALICE")) == 1);
    }

    // B's agents come and go on A's list with no event: the model follows the list, and only a
    // change of the server's own agents is drift (events missed).
    void remoteAgentsFollowTheListWithoutDrift()
    {
        auto *t = new FakeTransport;
        int lists = 0;
        t->handlers[QStringLiteral("map/agents/list")] = [&lists](const Json &) {
            ++lists;
            Json agents = Json::array({local("01A", "alice")});
            if (lists == 1) {
                agents.push_back(federated("B", "01BOB", "bob"));
            } else { // bob left B, carol joined it, and dave registered on A unannounced
                agents.push_back(federated("B", "01CAROL", "carol"));
                agents.push_back(local("01D", "dave"));
            }
            return std::optional<Answer>(Answer::ok({{"agents", agents}}));
        };
        ClientOptions options;
        options.url = QUrl(QStringLiteral("ws://fake.invalid/map"));
        MapClient client(options, t);
        Recorder rec(client);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        QTRY_VERIFY(rec.store.agent(QStringLiteral("B:agent:01BOB")));
        QCOMPARE(federatedFrom(rec.store.agent(QStringLiteral("B:agent:01BOB"))->metadata), QStringLiteral("B"));

        bool answered = false;
        client.reconcile([&answered](bool ok) { answered = ok; });
        QTRY_VERIFY(answered);
        QTRY_VERIFY(rec.store.agent(QStringLiteral("B:agent:01CAROL")));
        QVERIFY(rec.store.agent(QStringLiteral("B:agent:01BOB"))->unregistered); // followed the list
        QVERIFY(!rec.store.agent(QStringLiteral("B:agent:01CAROL"))->unregistered);
        const QStringList drift = problemDetails(rec.store, ProblemKind::Drift);
        QCOMPARE(drift.size(), 1); // dave: the server's own agent, announced by no event
        QVERIFY2(drift.first().contains(QLatin1String("lists 1 agent(s) the model did not show (dave)")), qPrintable(drift.first()));
        QVERIFY2(!drift.first().contains(QLatin1String("carol")) && !drift.first().contains(QLatin1String("bob"))
                     && !drift.first().contains(QLatin1String("no longer lists")),
                 qPrintable(drift.first()));
    }

    // A gateway's reading of the server's federation: peers as the SDK lists them (a bare array)
    // or wrapped, the buffer by system; missing, refused and other failures said apart; bounded;
    // changed only when what it says changed; numbers of any size read without overflow.
    void gatewayReadingsAreKeptAndBounded()
    {
        const QString list = QStringLiteral("map/federation/list");
        const QString stats = QStringLiteral("map/federation/buffer/stats");
        FederationLedger ledger;
        QVERIFY(ledger.toJson().is_null()); // not asked: nothing to say
        ledger.apply(list, Json(), true, -32603, QStringLiteral("Federation operations require gateway role"), 10);
        QCOMPARE(ledger.peersAccess(), FederationLedger::Access::Refused);
        QVERIFY(ledger.hasSomethingToShow());
        ledger.apply(list, Json(), true, -32603, QStringLiteral("WritableStream is locked"), 11);
        QCOMPARE(ledger.peersAccess(), FederationLedger::Access::Failed); // not a refusal: not "connect as a gateway"
        ledger.apply(stats, Json(), true, -32601, QStringLiteral("Method not found"), 11);
        QCOMPARE(ledger.bufferAccess(), FederationLedger::Access::Missing);
        QCOMPARE(QString::fromStdString(ledger.toJson()["bufferAccess"].get<std::string>()), QStringLiteral("missing"));
        ledger.apply(list, Json(), true, 0, QStringLiteral("an error with code 0 is an error"), 12);
        QCOMPARE(ledger.peersAccess(), FederationLedger::Access::Failed);

        Json peers = Json::array();
        for (int i = 0; i < FederationLedger::kMaxPeers + 5; ++i)
            peers.push_back({{"systemId", "S" + std::to_string(i)}, {"endpoint", "ws://h/gateway"}, {"status", "connected"},
                             {"connectedAt", 1e300}, {"lastActivity", nullptr}});
        peers.push_back("not a peer");
        ledger.apply(list, peers, false, 0, QString(), 20);
        QCOMPARE(ledger.peersAccess(), FederationLedger::Access::Listed);
        QCOMPARE(int(ledger.peers().size()), FederationLedger::kMaxPeers);
        QCOMPARE(ledger.peersNotKept(), 5);
        QCOMPARE(ledger.peers()[0].systemId, QStringLiteral("S0"));
        QCOMPARE(ledger.peers()[0].connectedAtMs, std::numeric_limits<qint64>::max()); // saturated, not undefined
        QCOMPARE(ledger.peers()[0].lastActivityMs, 0); // null: absent
        QVERIFY(ledger.peersRefusal().isEmpty());
        ledger.apply(stats, Json{{"total", 3}, {"bySystem", {{"C", 2}, {"D", 1}}}}, false, 0, QString(), 31);
        QCOMPARE(ledger.bufferTotal(), 3);
        QCOMPARE(ledger.bufferBySystem().size(), size_t(2));
        QVERIFY(ledger.takeChanged());
        ledger.apply(stats, Json{{"total", 3}, {"bySystem", {{"C", 2}, {"D", 1}}}}, false, 0, QString(), 41);
        QVERIFY(!ledger.takeChanged()); // a refresh that says the same
        ledger.apply(list, Json{{"peers", {{{"systemId", "B"}, {"status", "disconnected"}}}}}, false, 0, QString(), 50);
        QCOMPARE(ledger.peers().size(), size_t(1));
        QCOMPARE(ledger.peers()[0].status, QStringLiteral("disconnected"));
        QVERIFY(ledger.takeChanged());
        // The list failing: what the buffer said is no longer known to be so.
        ledger.apply(list, Json(), true, -32603, QStringLiteral("Federation operations require gateway role"), 60);
        QCOMPARE(ledger.bufferAccess(), FederationLedger::Access::NotAsked);
        QCOMPARE(ledger.bufferTotal(), 0);
    }

    // The client says participantType gateway when asked, and reads the federation once live;
    // a refusal is said in the model and is no problem of the observation.
    void clientReadsTheFederationAsAGateway()
    {
        auto *t = new FakeTransport;
        t->handlers[QStringLiteral("map/federation/list")] = [](const Json &) {
            return std::optional<Answer>(Answer::ok(Json::array({{{"systemId", "B"}, {"status", "connected"}}})));
        };
        t->handlers[QStringLiteral("map/federation/buffer/stats")] = [](const Json &) {
            return std::optional<Answer>(Answer::error(-32603, QStringLiteral("Federation operations require gateway role")));
        };
        ClientOptions options;
        options.url = QUrl(QStringLiteral("ws://fake.invalid/map"));
        options.participantType = QStringLiteral("gateway");
        MapClient client(options, t);
        Recorder rec(client);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        QCOMPARE(t->requestsFor(QStringLiteral("map/connect")).front().params.at("participantType"), Json("gateway"));
        QTRY_COMPARE(rec.store.federation().peersAccess(), FederationLedger::Access::Listed);
        QCOMPARE(rec.store.federation().peers().front().systemId, QStringLiteral("B"));
        QTRY_COMPARE(rec.store.federation().bufferAccess(), FederationLedger::Access::Refused);
        QVERIFY(rec.store.observation().complete()); // a refusal is no loss
    }
};

QTEST_GUILESS_MAIN(TestFederation)
#include "tst_federation.moc"
