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
#include "style/Colors.h"
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

    // The fleet into the session's store, as a trace load leaves it.
    void loadFleet(InspectorSession &session) { loadFleetInto(*session.store()); }
    void loadFleetInto(SystemStore &store)
    {
        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult loaded = loadTraceInto(store, m_path, load);
        QVERIFY2(loaded.ok, qPrintable(loaded.error));
        store.advanceTime(loaded.lastTimeMs);
        store.flushChanges();
    }

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

        loadFleet(session);
        if (QTest::currentTestFailed())
            return;
        QTRY_VERIFY_WITH_TIMEOUT(panel.showsGroups(), 3000); // past kGroupsAbove agents

        // One group per team, and the coordinator's own scope; the silent team first (the most
        // troubled), then the team whose dependency failed.
        GroupOverview *overview = panel.overview();
        overview->refresh();
        QCOMPARE(int(overview->groups().size()), m_fleet.teams + 1);
        const GroupOverview::Group first = overview->groups()[0]; // a copy: refresh() makes them anew
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
        // Counted in parts of a few milliseconds each, until the rows left are too young.
        size_t counted = 0;
        for (int i = 0; i < 1000; ++i) {
            overview->refresh();
            if (overview->countedMessageRows() == counted)
                break;
            counted = overview->countedMessageRows();
        }
        QVERIFY(counted > session.store()->messages().size() / 2);
        QVERIFY(!overview->busiestFlows().empty());
        // Between teams: the leads' status questions, each counted once (the generator's count,
        // less what the last seconds' settling leaves out).
        qint64 betweenTeams = 0;
        const auto &groups = overview->groups();
        for (size_t a = 0; a < groups.size(); ++a)
            for (size_t b = a + 1; b < groups.size(); ++b)
                if (groups[a].title.startsWith(QLatin1String("team/")) && groups[b].title.startsWith(QLatin1String("team/")))
                    betweenTeams += overview->flowBetween(groups[a].key, groups[b].key);
        QVERIFY2(betweenTeams <= m_fleet.crossTeamMessages && betweenTeams >= m_fleet.crossTeamMessages * 95 / 100,
                 qPrintable(QStringLiteral("%1 counted, %2 sent").arg(betweenTeams).arg(m_fleet.crossTeamMessages)));

        // Double-click the silent team: the graph, on its agents, them selected.
        const QPoint at = first.centre.toPoint();
        QTest::mouseDClick(overview, Qt::LeftButton, {}, at);
        QVERIFY(!panel.showsGroups());
        QCOMPARE(hub.selectedAgents().size(), first.agents.size());
        QVERIFY(panel.findChild<QLabel *>(QStringLiteral("topologySearchStatus"))->text().contains(first.title));
        // The operator's choice holds: no switch back to groups by size.
        QTest::qWait(1300);
        QVERIFY(!panel.showsGroups());
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
        loadFleet(session);
        if (QTest::currentTestFailed())
            return;
        panel.showGroups(false);
        TopologyView *view = panel.view();
        QTRY_VERIFY_WITH_TIMEOUT(view->visibleNodeCount() >= m_fleet.agents / 2, 20000);
        view->zoomToFit(false);
        QVERIFY(view->zoom() < 0.2);
        QVERIFY(!view->grab().isNull());
        QVERIFY(view->minimapRect().isNull()); // all of it in view: no map
        QVERIFY2(view->nodeLabelsDrawn() == 0 || view->smallestNodeLabelPixels() >= 7,
                 qPrintable(QStringLiteral("%1 labels, smallest %2 px").arg(view->nodeLabelsDrawn()).arg(view->smallestNodeLabelPixels())));
        QVERIFY2(view->nodeLabelsDrawn() < 50, qPrintable(QString::number(view->nodeLabelsDrawn())));

        // Hundreds selected, zoomed out: their labels are drawn where they do not overlap.
        QStringList silent;
        for (const Agent &agent : session.store()->agents())
            if (agent.name.startsWith(m_fleet.silentTeam + QLatin1Char('-')))
                silent << agent.id;
        QVERIFY(silent.size() >= m_fleet.silentAgents);
        hub.selectAgents(silent);
        view->zoomToAgents(silent);
        QTRY_VERIFY_WITH_TIMEOUT(view->isSettled(), 5000);
        QVERIFY(view->zoom() < 0.5);
        QVERIFY(!view->grab().isNull());
        const std::vector<QRectF> &labels = view->sparseLabelRects();
        QVERIFY(labels.size() >= 2);
        QCOMPARE(int(labels.size()), view->nodeLabelsDrawn());
        for (size_t a = 0; a < labels.size(); ++a)
            for (size_t b = a + 1; b < labels.size(); ++b)
                QVERIFY(!labels[a].intersects(labels[b]));

        // Zoomed in on one team: the map of the whole graph at the bottom right, clear of the
        // legend, its trouble drawn (the silent team's unresponsive agents, the failed ones).
        view->setZoom(0.6);
        const QImage frame = view->grab().toImage();
        const QRectF map = view->minimapRect();
        QVERIFY(!map.isNull());
        QVERIFY(QRectF(view->rect()).contains(map));
        QVERIFY(map.center().x() > view->width() / 2 && map.center().y() > view->height() / 2);
        QVERIFY(!map.intersects(view->legendRect()));
        int unresponsive = 0, failed = 0;
        const QRect pixels = QTransform::fromScale(frame.devicePixelRatio(), frame.devicePixelRatio()).mapRect(map).toRect();
        for (int y = pixels.top(); y <= pixels.bottom(); ++y)
            for (int x = pixels.left(); x <= pixels.right(); ++x) {
                const QRgb c = frame.pixel(x, y) & 0xffffff;
                unresponsive += c == (healthColor(Health::Unresponsive).rgb() & 0xffffff);
                failed += c == (healthColor(Health::Failed).rgb() & 0xffffff);
            }
        QVERIFY2(unresponsive >= 100 && failed >= 20, qPrintable(QStringLiteral("%1 unresponsive, %2 failed pixels").arg(unresponsive).arg(failed)));

        // A click on the map centres the view there; a drag follows; a double-click there
        // collapses nothing.
        const auto centreOfView = [&] { return view->mapToWorld(QPointF(view->width() / 2.0, view->height() / 2.0)); };
        const QPoint topLeft = (map.topLeft() + QPointF(4, 4)).toPoint();
        const QPointF wanted = *view->minimapWorldAt(topLeft);
        QTest::mouseClick(view, Qt::LeftButton, {}, topLeft);
        QVERIFY(QLineF(centreOfView(), wanted).length() < 1);
        const QPoint middle = map.center().toPoint();
        const QPointF wantedMiddle = *view->minimapWorldAt(middle);
        QTest::mousePress(view, Qt::LeftButton, {}, topLeft);
        QTest::mouseMove(view, middle);
        QVERIFY(QLineF(centreOfView(), wantedMiddle).length() < 1);
        QTest::mouseRelease(view, Qt::LeftButton, {}, middle);
        // An agent with sub-agents under the map: a double-click there is the map's.
        QVERIFY(!view->grab().isNull());
        QSet<QString> parents;
        for (const Agent &agent : session.store()->agents())
            parents.insert(agent.parentId);
        QString under;
        for (const Agent &agent : session.store()->agents())
            if (parents.contains(agent.id) && agent.parentId.size() > 0 && view->nodePosition(agent.id)) {
                under = agent.id;
                break;
            }
        QVERIFY(!under.isEmpty());
        view->panBy(view->minimapRect().center() - view->mapToView(*view->nodePosition(under))); // the agent under the map
        QVERIFY(!view->grab().isNull());
        QVERIFY(view->minimapRect().contains(view->mapToView(*view->nodePosition(under))));
        const int shown = view->visibleNodeCount();
        QTest::mouseDClick(view, Qt::LeftButton, {}, view->mapToView(*view->nodePosition(under)).toPoint());
        QCOMPARE(view->visibleNodeCount(), shown);
        QVERIFY(!view->isCollapsed(under));
    }

    // Agents that come in parts (a live system registering them, a trace read in parts): the
    // graph grows by incremental layouts, which append each new family to the right of its placed
    // siblings. It is tidied again as it grows, so a team opens as a block, not as a strip.
    void aGraphReadInPartsIsTidiedAsItGrows()
    {
        InspectorSession session;
        SelectionHub hub;
        TopologyPanel panel(&session, &hub);
        panel.resize(1100, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.showGroups(false);
        TopologyView *view = panel.view();
        // The fleet's agents registered in parts of 400, in the order they registered, each part
        // laid out before the next comes (as a live system's, or a trace's read in parts).
        SystemStore source;
        loadFleetInto(source);
        if (QTest::currentTestFailed())
            return;
        const auto &agents = source.agents();
        for (size_t begin = 0; begin < agents.size(); begin += 400) {
            ModelInputs part;
            for (size_t i = begin; i < std::min(agents.size(), begin + 400); ++i) {
                EventInput input;
                input.event.kind = EventKind::AgentRegistered;
                input.event.type = QStringLiteral("agent.registered");
                input.event.eventId = QStringLiteral("part-%1").arg(i);
                input.event.agentId = agents[i].id;
                input.event.timestampMs = input.receivedMs = 1'000'000 + qint64(i);
                AgentRecord record;
                record.id = agents[i].id;
                record.name = agents[i].name;
                record.role = agents[i].role;
                record.state = QStringLiteral("idle");
                if (!agents[i].parentId.isEmpty())
                    record.parentId = agents[i].parentId;
                input.event.agent = record;
                part.push_back(ModelInput(input));
            }
            session.store()->apply(part);
            session.store()->flushChanges();
            QTRY_COMPARE_WITH_TIMEOUT(view->visibleNodeCount(), int(std::min(agents.size(), begin + 400)), 30000);
        }
        QTRY_VERIFY_WITH_TIMEOUT(view->isSettled(), 30000); // the growth paused: tidied once more
        QVERIFY(view->fullLayoutsApplied() >= 3); // the first, then again as it grew, and at the end

        // Every team's agents lie in a block about as tall as wide (a tidy family wraps its
        // workers into rows at about 2:1), not in a strip.
        QHash<QString, QRectF> teams;
        for (const Agent &agent : session.store()->agents()) {
            const int dash = agent.name.indexOf(QLatin1Char('-'));
            const auto at = view->nodePosition(agent.id);
            if (dash <= 0 || !at || agent.name == QLatin1String("coordinator"))
                continue;
            QRectF &box = teams[agent.name.left(dash)];
            box = box.isNull() ? QRectF(*at, QSizeF(1, 1)) : box.united(QRectF(*at, QSizeF(1, 1)));
        }
        QVERIFY(teams.size() >= m_fleet.teams);
        for (auto it = teams.cbegin(); it != teams.cend(); ++it)
            QVERIFY2(it->width() <= 6 * std::max(it->height(), 200.0),
                     qPrintable(QStringLiteral("team %1: %2 x %3").arg(it.key()).arg(it->width()).arg(it->height())));
    }
};

QTEST_MAIN(GroupOverviewTest)
#include "tst_group_overview.moc"
