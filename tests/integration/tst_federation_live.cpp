// Federation (issue 43 item 3) against two official MAP systems federated by our own glue on the
// SDK's federation pieces (tools/demo-system/federation.mjs): the console connected to system A
// lists B's agents and scope as B's (their system and their own ids), follows B's agents coming
// and going by the list alone (A sends no event about them) without calling that missed events,
// and the window groups them under their system: a System column, the filter system:B, a box
// for system B in the topology around its agents and its scope.
#include "DemoSystem.h"
#include "MainWindow.h"
#include "controllers/ConnectionController.h"
#include "models/AgentTableModel.h"
#include "panels/FederationPanel.h"
#include "panels/InspectorPanel.h"
#include "panels/TopologyPanel.h"
#include "session/InspectorSession.h"
#include "systems/SystemView.h"
#include "topology/TopologyView.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QWebSocket>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

namespace {

const QString kGlue = QStringLiteral(MAPI_SOURCE_DIR "/tools/demo-system/federation.mjs");

QString str(const Json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

} // namespace

class FederationLiveTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
    }

    // An observation of A while agents of B come and go: B's agents are A's to list, marked as
    // B's; the end-of-observation check finds the list changed by federation alone, which is no
    // missed event: the observation is complete (exit 0).
    void remoteAgentsAreListedAsTheirSystemsAndAreNoDrift()
    {
        Launcher glue;
        QVERIFY(glue.start(QStringLiteral(MAPI_NODE), kGlue, {QStringLiteral("--churn-ms"), QStringLiteral("700")}));
        const QJsonObject ready = glue.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        const QString a = ready.value(QStringLiteral("a")).toString();
        QStringList bIds;
        for (const QJsonValue &v : ready.value(QStringLiteral("agentsB")).toArray())
            bIds << v.toObject().value(QStringLiteral("id")).toString();
        QCOMPARE(bIds.size(), 3);

        const CliResult r = runCli({QStringLiteral("state"), QStringLiteral("--url"), a, QStringLiteral("--duration"), QStringLiteral("5")}, 60000);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        const Json state = Json::parse(r.out.constBegin(), r.out.constEnd(), nullptr, false);
        QVERIFY2(state.is_object(), r.out.left(300).constData());
        QCOMPARE(state["observation"]["complete"].get<bool>(), true);
        for (const Json &p : state["problems"]) // nothing said about events missed
            QVERIFY2(str(p, "kind") != QLatin1String("drift"), p.dump().c_str());
        QStringList fromB, local;
        for (const Json &agent : state["agents"]) {
            const QString id = str(agent, "id");
            if (str(agent, "federatedFrom") == QLatin1String("B")) {
                QVERIFY2(id.startsWith(QLatin1String("B:agent:")), qPrintable(id));
                QCOMPARE(str(agent, "originalId"), id.mid(8));
                fromB << str(agent, "originalId");
            } else {
                QVERIFY2(!agent.contains("federatedFrom"), agent.dump().c_str());
                local << str(agent, "name");
            }
        }
        for (const QString &id : std::as_const(bIds))
            QVERIFY2(fromB.contains(id), qPrintable(fromB.join(u' ')));
        local.sort();
        QCOMPARE(local, (QStringList{QStringLiteral("alice"), QStringLiteral("arthur")}));
        bool scopeOfB = false;
        for (const Json &scope : state["scopes"])
            scopeOfB = scopeOfB || (str(scope, "id").startsWith(QLatin1String("B:scope:")) && str(scope, "name") == QLatin1String("b-team"));
        QVERIFY2(scopeOfB, state["scopes"].dump().c_str());
    }

    // A gateway-role connection (the glue grants the role on /gateway; the CLI says --gateway)
    // reads A's peers and its outage buffer; a client connection is refused them, which is said
    // as such and is not an incomplete observation.
    void aGatewayReadsPeersAndBuffers()
    {
        Launcher glue;
        QVERIFY(glue.start(QStringLiteral(MAPI_NODE), kGlue, {}));
        const QJsonObject ready = glue.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        const QString a = ready.value(QStringLiteral("a")).toString();

        // Something in A's buffer: a route to a system that never connects (the SDK queues it).
        QWebSocket gateway;
        QStringList answers;
        connect(&gateway, &QWebSocket::textMessageReceived, this, [&answers](const QString &t) { answers << t; });
        gateway.open(QUrl(a + QStringLiteral("/gateway")));
        QTRY_COMPARE(gateway.state(), QAbstractSocket::ConnectedState);
        gateway.sendTextMessage(QStringLiteral(R"({"jsonrpc":"2.0","id":1,"method":"map/connect","params":{"protocolVersion":1,"participantType":"gateway","name":"test-gateway"}})"));
        QTRY_COMPARE(answers.size(), 1);
        gateway.sendTextMessage(QStringLiteral(R"({"jsonrpc":"2.0","id":2,"method":"map/federation/route","params":{"systemId":"C","payload":{"n":1}}})"));
        QTRY_COMPARE(answers.size(), 2);
        QVERIFY2(answers[1].contains(QLatin1String("\"queued\":true")), qPrintable(answers[1]));

        const CliResult asClient = runCli({QStringLiteral("state"), QStringLiteral("--url"), a, QStringLiteral("--duration"), QStringLiteral("1")}, 60000);
        QVERIFY2(asClient.exitCode == 0, asClient.err.constData());
        const Json client = asClient.json();
        QCOMPARE(str(client["federation"], "peersAccess"), QStringLiteral("refused"));
        QVERIFY2(str(client["federation"], "peersRefusal").contains(QLatin1String("gateway")), client["federation"].dump().c_str());
        QCOMPARE(client["observation"]["complete"].get<bool>(), true);

        const CliResult asGateway = runCli({QStringLiteral("state"), QStringLiteral("--url"), a + QStringLiteral("/gateway"),
                                            QStringLiteral("--gateway"), QStringLiteral("--duration"), QStringLiteral("1")}, 60000);
        QVERIFY2(asGateway.exitCode == 0, asGateway.err.constData());
        const Json federation = asGateway.json()["federation"];
        QCOMPARE(str(federation, "peersAccess"), QStringLiteral("listed"));
        QCOMPARE(federation["peers"].size(), size_t(1));
        QCOMPARE(str(federation["peers"][0], "systemId"), QStringLiteral("B"));
        QCOMPARE(str(federation["peers"][0], "status"), QStringLiteral("connected"));
        QCOMPARE(str(federation, "bufferAccess"), QStringLiteral("listed"));
        QVERIFY2(federation["buffer"]["bySystem"].value("C", 0) >= 1, federation.dump().c_str());
    }

    // The window on A's gateway address: the Federation panel lists B and the buffer, and
    // discarding (the session's flush, which the panel asks for once confirmed) empties it.
    void windowShowsPeersAndDiscardsTheBuffer()
    {
        Launcher glue;
        QVERIFY(glue.start(QStringLiteral(MAPI_NODE), kGlue, {}));
        const QJsonObject ready = glue.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        const QString a = ready.value(QStringLiteral("a")).toString();
        QWebSocket gateway; // two messages for a system C that never connects: buffered by A
        int answers = 0;
        connect(&gateway, &QWebSocket::textMessageReceived, this, [&answers] { ++answers; });
        gateway.open(QUrl(a + QStringLiteral("/gateway")));
        QTRY_COMPARE(gateway.state(), QAbstractSocket::ConnectedState);
        gateway.sendTextMessage(QStringLiteral(R"({"jsonrpc":"2.0","id":1,"method":"map/connect","params":{"protocolVersion":1,"participantType":"gateway"}})"));
        gateway.sendTextMessage(QStringLiteral(R"({"jsonrpc":"2.0","id":2,"method":"map/federation/route","params":{"systemId":"C","payload":{"n":1}}})"));
        gateway.sendTextMessage(QStringLiteral(R"({"jsonrpc":"2.0","id":3,"method":"map/federation/route","params":{"systemId":"C","payload":{"n":2}}})"));
        QTRY_COMPARE(answers, 3);

        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        ClientOptions options;
        options.url = QUrl(a + QStringLiteral("/gateway"));
        options.participantType = QStringLiteral("gateway");
        window.connection()->connectTo(options, false);
        ui::FederationPanel *panel = window.frontSystem()->federation();
        QDockWidget *dock = window.dock(QStringLiteral("federationDock"));
        QTRY_VERIFY_WITH_TIMEOUT(dock->isVisible(), 15000);
        QTRY_COMPARE(panel->peersTable()->rowCount(), 1);
        QCOMPARE(panel->peersTable()->item(0, 0)->text(), QStringLiteral("B"));
        QCOMPARE(panel->peersTable()->item(0, 2)->text(), QStringLiteral("connected"));
        QTRY_VERIFY2(panel->bufferText().contains(QLatin1String("C: 2")), qPrintable(panel->bufferText()));
        QVERIFY(ui::FederationPanel::discardQuestion(QStringLiteral("C"), 2).contains(QLatin1String("not delivered")));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            dock->raise();
            QTest::qWait(500);
            window.grab().save(QDir(shots).filePath(QStringLiteral("federation-gateway.png")));
        }
        bool done = false;
        qint64 discarded = -1;
        window.session()->discardFederationBuffer(QStringLiteral("C"), [&](bool ok, qint64 n, const QString &why) {
            QVERIFY2(ok, qPrintable(why));
            done = true;
            discarded = n;
        });
        QTRY_VERIFY(done);
        QCOMPARE(discarded, 2);
        QTRY_VERIFY2(panel->bufferText().contains(QLatin1String("empty")), qPrintable(panel->bufferText()));
    }

    // The window on A: B's agents carry their system in the agents table (the System column comes
    // with them) and `system:B` shows them alone.
    void windowGroupsRemoteAgentsByTheirSystem()
    {
        Launcher glue;
        QVERIFY(glue.start(QStringLiteral(MAPI_NODE), kGlue, {}));
        const QJsonObject ready = glue.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        ClientOptions options;
        options.url = QUrl(ready.value(QStringLiteral("a")).toString());
        window.connection()->connectTo(options, true);
        const SystemStore *store = window.session()->store();
        QTRY_VERIFY_WITH_TIMEOUT(store->agents().size() >= 5, 15000);

        QDockWidget *dock = window.dock(QStringLiteral("agentsDock"));
        auto *table = dock->findChild<QTableView *>();
        QVERIFY(table);
        QTRY_VERIFY(!table->isColumnHidden(ui::AgentTableModel::SystemColumn));
        QStringList systems;
        for (int row = 0; row < table->model()->rowCount(); ++row)
            systems << table->model()->index(row, ui::AgentTableModel::SystemColumn).data().toString();
        QCOMPARE(systems.count(QStringLiteral("B")), 3);
        QCOMPARE(systems.count(QString()), 2);

        auto *filter = dock->findChild<QLineEdit *>();
        QVERIFY(filter);
        filter->setText(QStringLiteral("system:B"));
        QTRY_COMPARE(table->model()->rowCount(), 3);
        for (int row = 0; row < 3; ++row)
            QCOMPARE(table->model()->index(row, ui::AgentTableModel::SystemColumn).data().toString(), QStringLiteral("B"));
        filter->setText(QStringLiteral("-system:B"));
        QTRY_COMPARE(table->model()->rowCount(), 2);

        // The topology: one group for system B around its three agents, B's scope inside it.
        const ui::TopologyGraph &graph = window.frontSystem()->topology()->view()->graph();
        int systemB = -1;
        for (size_t s = 0; s < graph.scopes().size(); ++s)
            if (graph.scopes()[s].systemGroup && graph.scopes()[s].system == QLatin1String("B"))
                systemB = int(s);
        QVERIFY(systemB >= 0);
        QCOMPARE(graph.scopes()[size_t(systemB)].members.size(), size_t(3));
        for (int member : graph.scopes()[size_t(systemB)].members)
            QVERIFY2(graph.nodes()[size_t(member)].id.startsWith(QLatin1String("B:agent:")), qPrintable(graph.nodes()[size_t(member)].id));
        bool teamInsideB = false;
        for (const ui::ScopeGroup &g : graph.scopes())
            teamInsideB = teamInsideB || (g.name == QLatin1String("b-team") && g.parent == systemB && g.members.size() == 2);
        QVERIFY(teamInsideB);
        for (const ui::ScopeGroup &g : graph.scopes()) // the server's own agents are in no system's group
            if (g.systemGroup)
                QCOMPARE(g.system, QStringLiteral("B"));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            filter->clear();
            QTest::qWait(2500); // the layout settles
            window.grab().save(QDir(shots).filePath(QStringLiteral("federation.png")));
        }
    }

    // Both systems open in one window: B's agent as A lists it (B:agent:<id>) and the agent B
    // lists as its own are twins; the Inspector offers each from the other, and choosing it
    // brings the other system forward with the agent selected and inspected.
    void twinsLinkAcrossTwoOpenSystems()
    {
        Launcher glue;
        QVERIFY(glue.start(QStringLiteral(MAPI_NODE), kGlue, {}));
        const QJsonObject ready = glue.waitFor(QStringLiteral("ready"), 30000);
        QVERIFY(!ready.isEmpty());
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        ClientOptions options;
        options.url = QUrl(ready.value(QStringLiteral("a")).toString());
        window.connection()->connectTo(options, true);
        ui::SystemView *systemA = window.frontSystem();
        QTRY_VERIFY_WITH_TIMEOUT(systemA->session()->store()->agents().size() >= 5, 15000);
        QString remote; // a B agent as A lists it
        for (const Agent &agent : systemA->session()->store()->agents())
            if (agent.id.startsWith(QLatin1String("B:agent:")) && !agent.placeholder)
                remote = agent.id;
        QVERIFY(!remote.isEmpty());
        const QString original = remote.mid(int(qstrlen("B:agent:")));

        // With A alone, nothing to offer.
        window.dock(QStringLiteral("inspectorDock"))->show();
        systemA->selection()->focus(ui::SelectionHub::Kind::Agent, remote, nullptr);
        QTRY_COMPARE(systemA->inspector()->shownKey(), remote);
        QVERIFY(systemA->inspector()->twinButton()->isHidden());

        options.url = QUrl(ready.value(QStringLiteral("b")).toString());
        window.systemForNewSource()->connection()->connectTo(options, true);
        ui::SystemView *systemB = window.systems().last();
        QVERIFY(systemB != systemA);
        QTRY_VERIFY_WITH_TIMEOUT(systemB->session()->store()->agent(original) != nullptr, 15000);

        window.showSystem(systemA);
        systemA->selection()->focus(ui::SelectionHub::Kind::Agent, remote, nullptr);
        QToolButton *twin = systemA->inspector()->twinButton();
        QTRY_VERIFY(!twin->isHidden());
        QVERIFY2(twin->toolTip().contains(systemB->label()), qPrintable(twin->toolTip()));
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            systemA->selection()->selectAgents({remote});
            window.dock(QStringLiteral("inspectorDock"))->raise();
            QTest::qWait(2500); // the layout settles
            window.grab().save(QDir(shots).filePath(QStringLiteral("federation-twins.png")));
        }
        twin->click();
        QCOMPARE(window.frontSystem(), systemB);
        QCOMPARE(systemB->selection()->focusKey(), original);
        QCOMPARE(systemB->selection()->selectedAgents(), QStringList{original});

        // And back: B's own agent has its twin in A.
        QToolButton *back = systemB->inspector()->twinButton();
        QTRY_VERIFY(!back->isHidden());
        QVERIFY2(back->toolTip().contains(systemA->label()), qPrintable(back->toolTip()));
        back->click();
        QCOMPARE(window.frontSystem(), systemA);
        QCOMPARE(systemA->selection()->focusKey(), remote);
    }
};

QTEST_MAIN(FederationLiveTest)
#include "tst_federation_live.moc"
