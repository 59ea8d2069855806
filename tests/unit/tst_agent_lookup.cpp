// An agent named as a person names it (model/AgentLookup.h, the CLI's --agent): by id, by a
// unique name among present agents, ambiguity said with the ids to choose from, and the text
// passed through when nothing matches.
#include "TestSupport.h"

#include "model/AgentLookup.h"
#include "model/SystemStore.h"

using namespace mapi;
using mapi_test::Wire;

class TestAgentLookup : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void idsNamesAndAmbiguity()
    {
        SystemStore store;
        Wire wire(store);
        wire.registerAgent(QStringLiteral("id-1"), QStringLiteral("worker-3"), QStringLiteral("s-1"));
        wire.registerAgent(QStringLiteral("id-2"), QStringLiteral("planner"), QStringLiteral("s-2"));
        wire.registerAgent(QStringLiteral("id-3"), QStringLiteral("planner"), QStringLiteral("s-3"));
        wire.registerAgent(QStringLiteral("id-4"), QStringLiteral("reviewer"), QStringLiteral("s-4"));
        wire.registerAgent(QStringLiteral("id-5"), QStringLiteral("reviewer"), QStringLiteral("s-5"));
        wire.event(QStringLiteral("agent.unregistered"), {{"agentId", "id-5"}}, {{"agentId", "id-5"}});
        QVERIFY(store.agent(QStringLiteral("id-5"))->unregistered);

        QCOMPARE(resolveAgentReference(store, QStringLiteral("id-2")).value(), QStringLiteral("id-2")); // an id
        QCOMPARE(resolveAgentReference(store, QStringLiteral("worker-3")).value(), QStringLiteral("id-1")); // a unique name
        // A departed namesake does not make a name ambiguous.
        QCOMPARE(resolveAgentReference(store, QStringLiteral("reviewer")).value(), QStringLiteral("id-4"));
        const ErrorOr<QString> twice = resolveAgentReference(store, QStringLiteral("planner"));
        QVERIFY(!twice);
        QCOMPARE(twice.error(), QStringLiteral("2 agents are named \"planner\": give one of their ids (id-2, id-3)"));
        // Unknown to the model: passed through for the server to judge.
        QCOMPARE(resolveAgentReference(store, QStringLiteral("ghost")).value(), QStringLiteral("ghost"));
    }
};

QTEST_GUILESS_MAIN(TestAgentLookup)
#include "tst_agent_lookup.moc"
