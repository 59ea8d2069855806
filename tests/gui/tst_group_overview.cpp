// The topology of a 10,000-agent system (issue 44 item 2), on the realistic fleet
// (tools/fleet-trace): past TopologyPanel::kGroupsAbove agents the panel shows groups, the most
// troubled first, every text at a legible size; flows between groups are counted; a
// double-click opens a group in the graph, zoomed to its agents and with them selected; the
// graph at its fitted zoom draws no agent label below a legible size; grouping by role and by
// subtree. Offscreen; any Qt warning fails.
#include "FleetTrace.h"
#include "GuiTestSupport.h"

#include "model/SystemStore.h"
#include "panels/TopologyPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "topology/GroupOverview.h"
#include "topology/TopologyView.h"
#include "trace/TraceLoader.h"

#include <QComboBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace mapi;
using namespace mapi::ui;

class GroupOverviewTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    fleet::FleetSummary m_fleet;
    QString m_path;

private Q_SLOTS:
    void initTestCase()
    {
        mapi::test::failOnQtWarnings();
        fleet::FleetOptions options; // 10,000 agents
        m_path = m_dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto written = fleet::writeFleetTrace(m_path, options);
        QVERIFY2(written.ok(), qPrintable(written.error()));
        m_fleet = *written;
    }

    void aLargeSystemIsShownAsGroups()
    {
        InspectorSession session;
        SelectionHub hub;
        TopologyPanel panel(&session, &hub);
        panel.resize(1100, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(!panel.showsGroups()); // nothing yet: the graph

        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult loaded = loadTraceInto(*session.store(), m_path, load);
        QVERIFY2(loaded.ok, qPrintable(loaded.error));
        session.store()->advanceTime(loaded.lastTimeMs);
        session.store()->flushChanges();
        QTRY_VERIFY_WITH_TIMEOUT(panel.showsGroups(), 3000); // past kGroupsAbove agents

        // One group per team, and the coordinator's own scope; the silent team first (the most
        // troubled), then the team whose dependency failed.
        GroupOverview *overview = panel.overview();
        overview->refresh();
        QCOMPARE(int(overview->groups().size()), m_fleet.teams + 1);
        const GroupOverview::Group &first = overview->groups()[0];
        QCOMPARE(first.title, QStringLiteral("team/") + m_fleet.silentTeam);
        QVERIFY(first.health[size_t(Health::Unresponsive)] >= m_fleet.silentAgents);
        QCOMPARE(overview->groups()[1].title, QStringLiteral("team/") + m_fleet.failingTeam);
        QVERIFY(overview->groups()[1].health[size_t(Health::Failed)] >= m_fleet.failedAgents);
        int agents = 0;
        for (const GroupOverview::Group &g : overview->groups())
            agents += int(g.agents.size());
        QCOMPARE(agents, m_fleet.agents);

        // Every text drawn at a legible size, and the flows between teams counted (in parts).
        QVERIFY(!overview->grab().isNull());
        QVERIFY(overview->labelsDrawn() >= 2 * int(overview->groups().size()));
        QVERIFY(overview->smallestLabelPixels() >= GroupOverview::kLabelPixels);
        for (int i = 0; i < 20 && session.store()->messages().size() > 0; ++i)
            overview->refresh();
        const std::vector<GroupOverview::Flow> flows = overview->busiestFlows();
        QVERIFY(!flows.empty());
        qint64 counted = 0;
        for (const GroupOverview::Flow &f : flows) {
            QVERIFY(f.from != f.to);
            counted += f.messages;
        }
        QVERIFY(counted > 0);

        // Double-click the silent team: the graph, on its agents, them selected.
        const QPoint at = first.centre.toPoint();
        QTest::mouseDClick(overview, Qt::LeftButton, {}, at);
        QVERIFY(!panel.showsGroups());
        QCOMPARE(hub.selectedAgents().size(), first.agents.size());
        QVERIFY(panel.findChild<QLabel *>(QStringLiteral("topologySearchStatus"))->text().contains(first.title));
        // And back: the operator's choice holds (no switch back by size).
        panel.findChild<QToolButton *>(QStringLiteral("topologyGroups"))->click();
        QVERIFY(panel.showsGroups());

        // By role: coordinator, leads, workers, sub-agents.
        auto *groupBy = panel.findChild<QComboBox *>(QStringLiteral("topologyGroupBy"));
        groupBy->setCurrentIndex(2);
        Q_EMIT groupBy->activated(2);
        QCOMPARE(overview->groupBy(), GroupOverview::GroupBy::Role);
        QCOMPARE(int(overview->groups().size()), 4);
        // By subtree: one per lead, and the coordinator alone.
        groupBy->setCurrentIndex(1);
        Q_EMIT groupBy->activated(1);
        QCOMPARE(int(overview->groups().size()), m_fleet.teams + 1);
    }

    // The graph itself at its fitted zoom over 10,000 agents: no agent's label below a legible
    // size (the labels that are drawn — selected, hovered, coordinators — are drawn legibly).
    void theFittedGraphDrawsNoIllegibleLabel()
    {
        InspectorSession session;
        SelectionHub hub;
        TopologyPanel panel(&session, &hub);
        panel.resize(1100, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult loaded = loadTraceInto(*session.store(), m_path, load);
        QVERIFY2(loaded.ok, qPrintable(loaded.error));
        session.store()->flushChanges();
        panel.showGroups(false);
        TopologyView *view = panel.view();
        QTRY_VERIFY_WITH_TIMEOUT(view->visibleNodeCount() >= m_fleet.agents / 2, 20000);
        view->zoomToFit(false);
        QVERIFY(view->zoom() < 0.2);
        QVERIFY(!view->grab().isNull());
        QVERIFY2(view->nodeLabelsDrawn() == 0 || view->smallestNodeLabelPixels() >= 7,
                 qPrintable(QStringLiteral("%1 labels, smallest %2 px").arg(view->nodeLabelsDrawn()).arg(view->smallestNodeLabelPixels())));
        QVERIFY2(view->nodeLabelsDrawn() < 50, qPrintable(QString::number(view->nodeLabelsDrawn())));
    }
};

QTEST_MAIN(GroupOverviewTest)
#include "tst_group_overview.moc"
