// The window's header (issue 44 item 5): "is anything wrong?" answered at the top, on the
// realistic fleet (tools/fleet-trace: a team silent, another's dependency failed) — counts per
// health and state, worst first, each a filter of the Agents panel; one line per system when
// several are open, each leading to its own system. The Agents panel's groups (item 4).
// Offscreen; any Qt warning fails.
#include "FleetTrace.h"
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "models/AgentGroupsModel.h"
#include "panels/AgentsPanel.h"
#include "session/InspectorSession.h"
#include "systems/AttentionHeader.h"
#include "systems/SystemView.h"

#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QLocale>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace mapi;

class AttentionHeaderTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_path;             // the 1,000-agent fleet
    fleet::FleetSummary m_fleet;

    static bool loaded(const ui::SystemView *system)
    {
        return system->session()->source() == InspectorSession::Source::Trace && !system->session()->isLoadingTrace();
    }
    static int withHealth(const ui::SystemView *system, Health health)
    {
        int n = 0;
        for (const Agent &agent : system->session()->store()->agents())
            n += !agent.unregistered && agent.health == health;
        return n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
        fleet::FleetOptions options; // one fleet for every case: each opens it in a window of its own
        options.agents = 1000;
        m_path = m_dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto written = fleet::writeFleetTrace(m_path, options);
        QVERIFY2(written.ok(), qPrintable(written.error()));
        m_fleet = *written;
    }

    void countsAreFiltersPerSystem()
    {
        const QString &path = m_path;
        const fleet::FleetSummary *fleet = &m_fleet;

        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ui::AttentionHeader *header = window.attentionHeader();
        QVERIFY(header->isHidden()); // nothing open: nothing to say
        QVERIFY(window.openTraceBeside(path));
        ui::SystemView *first = window.frontSystem();
        QVERIFY(QTest::qWaitFor([&] { return loaded(first); }, 30000));
        header->refresh();
        QVERIFY(header->isVisible());

        // The trouble first: failed before unresponsive before healthy, with their numbers.
        const QString text = header->plainText();
        const QLocale locale;
        const int failed = withHealth(first, Health::Failed);
        const int unresponsive = withHealth(first, Health::Unresponsive);
        QVERIFY2(failed >= fleet->failedAgents && unresponsive >= fleet->silentAgents,
                 qPrintable(QStringLiteral("%1 failed, %2 unresponsive").arg(failed).arg(unresponsive)));
        const qsizetype failedAt = text.indexOf(QStringLiteral("%1 failed").arg(locale.toString(failed)));
        const qsizetype unresponsiveAt = text.indexOf(QStringLiteral("%1 unresponsive").arg(locale.toString(unresponsive)));
        const qsizetype healthyAt = text.indexOf(QLatin1String(" healthy"));
        QVERIFY2(failedAt >= 0 && unresponsiveAt > failedAt && healthyAt > unresponsiveAt, qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("states:")) && text.contains(QLatin1String("open alert")), qPrintable(text));
        QVERIFY2(!text.contains(first->label()), qPrintable(text)); // one system: not named

        // A count is a filter: the Agents panel narrows to those agents.
        const QString unresponsiveLink = QStringLiteral("filter:%1:health:unresponsive").arg(first->number());
        QVERIFY2(header->links().contains(unresponsiveLink), qPrintable(header->links().join(u'\n')));
        header->activate(unresponsiveLink);
        QCOMPARE(first->agents()->filterText(), QStringLiteral("health:unresponsive"));
        auto *agentsTable = first->agents()->findChild<QTableView *>();
        QVERIFY(agentsTable);
        QTRY_COMPARE(agentsTable->model()->rowCount(), unresponsive);
        QVERIFY(window.dock(QStringLiteral("agentsDock"))->isVisible());
        // A state is a filter too: the failing team's agents report "error".
        int inError = 0;
        for (const Agent &agent : first->session()->store()->agents())
            inError += !agent.unregistered && agent.state.compare(QLatin1String("error"), Qt::CaseInsensitive) == 0;
        QVERIFY(inError >= fleet->failedAgents);
        const QString errorLink = QStringLiteral("filter:%1:state:error").arg(first->number());
        QVERIFY2(header->links().contains(errorLink), qPrintable(header->links().join(u'\n')));
        QVERIFY2(text.contains(QStringLiteral("%1 error").arg(locale.toString(inError))), qPrintable(text));
        header->activate(errorLink);
        QTRY_COMPARE(agentsTable->model()->rowCount(), inError);

        // A second system: a line each, named; a link of the one behind brings it to the front.
        QVERIFY(window.openTraceBeside(QStringLiteral(MAPI_SAMPLE_TRACE)));
        ui::SystemView *second = window.frontSystem();
        QVERIFY(second != first);
        QVERIFY(QTest::qWaitFor([&] { return loaded(second); }, 30000));
        header->refresh();
        const QStringList lines = header->plainText().split(u'\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].startsWith(second->label()) && lines[1].startsWith(first->label()), qPrintable(lines.join(u'\n')));
        const QString failedLink = QStringLiteral("filter:%1:health:failed").arg(first->number());
        QVERIFY(header->links().contains(failedLink));
        header->activate(failedLink);
        QCOMPARE(window.frontSystem(), first);
        QCOMPARE(first->agents()->filterText(), QStringLiteral("health:failed"));
        QTRY_COMPARE(agentsTable->model()->rowCount(), failed);
        header->activate(QStringLiteral("alerts:%1").arg(second->number()));
        QCOMPARE(window.frontSystem(), second);
        QVERIFY(window.dock(QStringLiteral("alertsDock"))->isVisible());
    }

    // The Agents panel in groups (issue 44 item 4): past 300 agents a source opens counted by
    // scope, the most troubled group first, its health per column; a click lists a group's
    // agents; by role and by parent.
    void agentsAreCountedInGroups()
    {
        const QString &path = m_path;
        const fleet::FleetSummary *fleet = &m_fleet;
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openTraceBeside(path));
        ui::SystemView *system = window.frontSystem();
        QVERIFY(QTest::qWaitFor([&] { return loaded(system); }, 30000));
        window.dock(QStringLiteral("agentsDock"))->show();
        window.dock(QStringLiteral("agentsDock"))->raise();

        ui::AgentGroupsModel *groups = system->agents()->groups();
        QTRY_COMPARE_WITH_TIMEOUT(groups->groupBy(), ui::AgentGroupsModel::GroupBy::Scope, 3000);
        QTRY_COMPARE_WITH_TIMEOUT(groups->rowCount(), fleet->teams + 1, 3000);
        int total = 0;
        for (int r = 0; r < groups->rowCount(); ++r)
            total += groups->agentsIn(r);
        QCOMPARE(total, fleet->agents);
        // The most troubled first: the failing team (failed agents count first), then the silent one.
        const QString failing = QStringLiteral("team/") + fleet->failingTeam;
        const QString silent = QStringLiteral("team/") + fleet->silentTeam;
        // (The order follows the health counts, which settle with the trace's last batches: on a
        // loaded machine, after the group count.)
        const auto firstTwoNames = [&] { return QStringList{groups->index(0, 0).data().toString(), groups->index(1, 0).data().toString()}; };
        QTRY_VERIFY2_WITH_TIMEOUT(firstTwoNames().contains(failing) && firstTwoNames().contains(silent), qPrintable(firstTwoNames().join(u',')),
                                  10000);
        const QStringList firstTwo = firstTwoNames();
        const int failingRow = int(firstTwo.indexOf(failing));
        QVERIFY(groups->healthIn(failingRow, Health::Failed) >= fleet->failedAgents);

        // A click lists the group's agents.
        auto *groupsView = system->agents()->findChild<QTableView *>(QStringLiteral("agentGroupsTable"));
        QVERIFY(groupsView && groupsView->isVisible());
        groupsView->clicked(groups->index(failingRow, 0));
        QCOMPARE(system->agents()->filterText(), groups->filter(failingRow));
        auto *agentsTable = system->agents()->findChild<QTableView *>(QStringLiteral("agentsTable"));
        QTRY_COMPARE(agentsTable->model()->rowCount(), groups->agentsIn(failingRow));

        // The coordinator's scope, "fleet", holds the 25 leads too, but their most specific
        // scope is their team's: its group, and its list, is the coordinator alone.
        int fleetRow = -1;
        for (int r = 0; r < groups->rowCount(); ++r)
            if (groups->index(r, 0).data().toString() == QLatin1String("fleet"))
                fleetRow = r;
        QVERIFY(fleetRow >= 0);
        QCOMPARE(groups->agentsIn(fleetRow), 1);
        groupsView->clicked(groups->index(fleetRow, 0));
        QTRY_COMPARE(agentsTable->model()->rowCount(), 1);

        // By role: coordinator, leads, workers, sub-agents; by parent: one group per parent.
        auto *groupBy = system->agents()->findChild<QComboBox *>(QStringLiteral("agentGroupBy"));
        groupBy->setCurrentIndex(groupBy->findData(int(ui::AgentGroupsModel::GroupBy::Role)));
        Q_EMIT groupBy->activated(groupBy->currentIndex());
        QCOMPARE(groups->rowCount(), 4);
        groupsView->clicked(groups->index(0, 0));
        QTRY_COMPARE(agentsTable->model()->rowCount(), groups->agentsIn(0));
        groupBy->setCurrentIndex(groupBy->findData(int(ui::AgentGroupsModel::GroupBy::Parent)));
        Q_EMIT groupBy->activated(groupBy->currentIndex());
        QVERIFY(groups->rowCount() > fleet->teams);
        for (const int r : {0, groups->rowCount() / 2, groups->rowCount() - 1}) { // exactly its children, not "w01" in "w010"
            groupsView->clicked(groups->index(r, 0));
            QTRY_COMPARE(agentsTable->model()->rowCount(), groups->agentsIn(r));
        }
        // The operator's pick holds.
        QTest::qWait(1200);
        QCOMPARE(groups->groupBy(), ui::AgentGroupsModel::GroupBy::Parent);
    }
};

QTEST_MAIN(AttentionHeaderTest)
#include "tst_attention_header.moc"
