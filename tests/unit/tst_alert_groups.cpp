// Alert storms grouped (core/alerts/AlertGroups, issue 44 item 3): the grouping rules read
// strictly, a storm of unresponsive agents in one scope as one group, the labels, and the
// notices timed like Alertmanager's group_wait and group_interval. On the realistic fleet
// (tools/fleet-trace): 1,000 agents, a team falling silent, another's dependency failing.
#include "FleetTrace.h"
#include "TestSupport.h"
#include "alerts/AlertEngine.h"
#include "alerts/AlertGroups.h"
#include "model/SystemStore.h"
#include "trace/TraceLoader.h"

#include <QTemporaryDir>

using namespace mapi;

class TstAlertGroups : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    SystemStore m_store;
    fleet::FleetSummary m_fleet;
    std::vector<AlertChange> m_verdict; // the detectors' changes at the fleet's end, as told

private Q_SLOTS:
    void initTestCase()
    {
        fleet::FleetOptions options;
        options.agents = 1000;
        const QString path = m_dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto written = fleet::writeFleetTrace(path, options);
        QVERIFY2(written.ok(), qPrintable(written.error()));
        m_fleet = *written;
        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult r = loadTraceInto(m_store, path, load);
        QVERIFY2(r.ok, qPrintable(r.error));
        m_store.advanceTime(r.lastTimeMs);
        AlertEngine engine;
        do {
            std::vector<AlertChange> part = engine.update(m_store);
            m_verdict.insert(m_verdict.end(), part.begin(), part.end());
        } while (engine.isBehind(m_store));
        QVERIFY(m_verdict.size() >= size_t(m_fleet.silentAgents + m_fleet.failedAgents));
    }

    void groupingRulesAreReadStrictly()
    {
        const ErrorOr<AlertRules> read = alertRulesFromJson(
            {{"grouping", {{"groupBy", {"subtree", "role"}}, {"groupWaitS", 10}, {"groupIntervalS", 60}, {"minAlerts", 3}}}});
        QVERIFY2(read.ok(), qPrintable(read.error()));
        QCOMPARE(read->groupBy, (QStringList{QStringLiteral("subtree"), QStringLiteral("role")}));
        QCOMPARE(read->groupWaitMs, qint64(10000));
        QCOMPARE(read->groupIntervalMs, qint64(60000));
        QCOMPARE(read->groupMinAlerts, 3);
        QCOMPARE(alertRulesToJson(*read)["grouping"], (Json{{"groupBy", {"subtree", "role"}}, {"groupWaitS", 10.0}, {"groupIntervalS", 60.0}, {"minAlerts", 3}}));
        QVERIFY(alertRulesFromJson({{"grouping", {{"groupBy", Json::array()}}}})->groupBy.isEmpty()); // off

        const struct { Json doc; const char *says; } wrong[] = {
            {{{"grouping", {{"groupBy", {"team"}}}}}, "unknown label \"team\""},
            {{{"grouping", {{"groupBy", {"scope", "scope"}}}}}, "names \"scope\" twice"},
            {{{"grouping", {{"groupBy", "scope"}}}}, "\"grouping.groupBy\" must be a list"},
            {{{"grouping", {{"groupBy", {7}}}}}, "unknown label 7"},
            {{{"grouping", {{"groupWaitS", -1}}}}, "\"grouping.groupWaitS\" must be a number of seconds from 0"},
            {{{"grouping", {{"groupIntervalS", 0.5}}}}, "\"grouping.groupIntervalS\" must be a number of seconds from 1"},
            {{{"grouping", {{"minAlerts", 1}}}}, "\"grouping.minAlerts\" must be a whole number from 2"},
            {{{"grouping", {{"minAlerts", 2.5}}}}, "\"grouping.minAlerts\" must be a whole number"},
            {{{"grouping", {{"group_by", {"scope"}}}}}, "unknown key \"grouping.group_by\""},
            {{{"grouping", Json::array()}}, "\"grouping\" must be an object"},
        };
        for (const auto &w : wrong) {
            const ErrorOr<AlertRules> r = alertRulesFromJson(w.doc);
            QVERIFY2(!r.ok(), w.says);
            QVERIFY2(r.error().contains(QString::fromUtf8(w.says)), qPrintable(r.error()));
        }
    }

    void aStormInOneScopeIsOneGroup()
    {
        AlertGroups groups; // the defaults: by scope, 5 alerts make a group
        const qint64 now = m_store.now();
        groups.apply(m_verdict, m_store, now);
        const AlertGroup *silent = nullptr, *failed = nullptr;
        for (const auto &[key, g] : groups.groups()) {
            if (g.kind == AlertKind::Unresponsive && g.where == QStringLiteral("in team/") + m_fleet.silentTeam)
                silent = &g;
            if (g.kind == AlertKind::Failed && g.where == QStringLiteral("in team/") + m_fleet.failingTeam)
                failed = &g;
        }
        QVERIFY(silent && failed);
        QCOMPARE(int(silent->alerts.size()), m_fleet.silentAgents);
        QCOMPARE(silent->title(), QStringLiteral("unresponsive — %1 agents in team/%2").arg(m_fleet.silentAgents).arg(m_fleet.silentTeam));
        QCOMPARE(int(failed->alerts.size()), m_fleet.failedAgents);
        QCOMPARE(failed->severity, AlertSeverity::Critical);
        // The silent team's lead is in "fleet" (the leads) too: it counts with its team.
        int unresponsiveGroups = 0;
        for (const auto &[key, g] : groups.groups())
            unresponsiveGroups += g.kind == AlertKind::Unresponsive;
        QCOMPARE(unresponsiveGroups, 1);
        for (const AlertChange &c : m_verdict)
            if (c.alert.kind == AlertKind::Unresponsive && groups.groupOf(c.alert.key()) == silent->key)
                QVERIFY(groups.isGrouped(c.alert.key()));

        // Clearing the storm empties the group and forgets it.
        std::vector<AlertChange> cleared;
        for (const AlertChange &c : m_verdict)
            if (groups.groupOf(c.alert.key()) == silent->key)
                cleared.push_back({c.alert, false, now + 1000});
        const QString silentKey = silent->key;
        groups.apply(cleared, m_store, now + 1000);
        QVERIFY(!groups.group(silentKey));
        QVERIFY(groups.groupOf(cleared.front().alert.key()).isEmpty());
    }

    void labelsBySubtreeRoleAndCause()
    {
        AlertRules rules;
        rules.groupBy = {QStringLiteral("subtree"), QStringLiteral("cause")};
        AlertGroups groups;
        groups.setRules(rules);
        groups.apply(m_verdict, m_store, m_store.now());
        // The silent team's workers and sub-agents sit under its lead (the lead's subtree is its
        // own); their reasons differ only in numbers (seconds of silence): one group for all.
        const AlertGroup *under = nullptr;
        for (const auto &[key, g] : groups.groups())
            if (g.kind == AlertKind::Unresponsive && g.where.startsWith(QStringLiteral("under %1-lead").arg(m_fleet.silentTeam)))
                under = &g;
        QVERIFY(under);
        QCOMPARE(int(under->alerts.size()), m_fleet.silentAgents);
        QVERIFY2(under->where.contains(QStringLiteral("no heartbeat or activity for # s")), qPrintable(under->where));

        rules.groupBy = {QStringLiteral("role")};
        groups.setRules(rules);
        groups.apply(m_verdict, m_store, m_store.now());
        QStringList roles;
        for (const auto &[key, g] : groups.groups())
            if (g.kind == AlertKind::Unresponsive)
                roles << g.where;
        roles.sort();
        QCOMPARE(roles, (QStringList{QStringLiteral("role lead"), QStringLiteral("role subagent"), QStringLiteral("role worker")}));

        rules.groupBy = {};
        groups.setRules(rules);
        groups.apply(m_verdict, m_store, m_store.now());
        QVERIFY(groups.groups().empty()); // grouping off: every alert single
    }

    void noticesWaitForTheStormAndComeAtIntervals()
    {
        AlertRules rules;
        rules.groupWaitMs = 30000;
        rules.groupIntervalMs = 300000;
        AlertGroups groups;
        groups.setRules(rules);
        const qint64 t0 = m_store.now();
        // The storm arrives in two halves, 10 s apart: one notice for both, after the wait.
        std::vector<AlertChange> silent;
        for (const AlertChange &c : m_verdict)
            if (c.alert.kind == AlertKind::Unresponsive)
                silent.push_back(c);
        const size_t half = silent.size() / 2;
        groups.apply({silent.begin(), silent.begin() + std::ptrdiff_t(half)}, m_store, t0);
        QVERIFY(groups.due(t0 + 10000).empty());
        groups.apply({silent.begin() + std::ptrdiff_t(half), silent.end()}, m_store, t0 + 10000);
        QVERIFY(groups.due(t0 + 29999).empty());
        std::vector<AlertGroups::Notice> notices = groups.due(t0 + 30000);
        QVERIFY(!notices.empty());
        const AlertGroups::Notice &storm = notices.front(); // the largest of equal severity first
        QVERIFY(storm.first);
        QCOMPARE(storm.open, m_fleet.silentAgents);
        QCOMPARE(storm.added, storm.open);
        QVERIFY(groups.due(t0 + 31000).empty()); // told once

        // Within the interval nothing more, however much is added; after it, one notice with
        // what was added and cleared since.
        const AlertChange extra = silent.front();
        std::vector<AlertChange> clearOne{{extra.alert, false, t0 + 40000}};
        groups.apply(clearOne, m_store, t0 + 40000);
        QVERIFY(groups.due(t0 + 400000).empty()); // only a clear: nothing added, nothing told
        groups.apply({extra}, m_store, t0 + 50000);
        QVERIFY(groups.due(t0 + 300000 + 29999).empty());
        notices = groups.due(t0 + 400000 + 1);
        QCOMPARE(int(notices.size()), 1);
        QVERIFY(!notices.front().first);
        QCOMPARE(notices.front().added, 1);
        QCOMPARE(notices.front().cleared, 1);
    }

    // A group stays one until it empties (a raise and its clear told the same way); a told group
    // that empties is told resolved; one that empties within its wait is told nothing; flush()
    // tells what waits.
    void aGroupStaysOneUntilItEmpties()
    {
        AlertGroups groups; // 5 make a group, 30 s wait
        const qint64 t0 = m_store.now();
        std::vector<AlertChange> failed;
        for (const AlertChange &c : m_verdict)
            if (c.alert.kind == AlertKind::Failed)
                failed.push_back(c);
        QVERIFY(failed.size() >= 10);
        const auto clearing = [](std::vector<AlertChange> changes, size_t from, size_t to) {
            std::vector<AlertChange> out;
            for (size_t i = from; i < to; ++i)
                out.push_back({changes[i].alert, false, 0});
            return out;
        };
        groups.apply({failed.begin(), failed.begin() + 6}, m_store, t0);
        const QString key = failed.front().alert.key();
        QVERIFY(groups.isGrouped(key));
        groups.apply(clearing(failed, 1, 5), m_store, t0 + 1000); // down to 2: still a group
        QVERIFY(groups.isGrouped(key));
        std::vector<AlertGroups::Notice> told = groups.due(t0 + 30000);
        QCOMPARE(int(told.size()), 1);
        QCOMPARE(told.front().open, 2);
        QCOMPARE(told.front().cleared, 4);
        groups.apply(clearing(failed, 0, 1), m_store, t0 + 31000);
        groups.apply(clearing(failed, 5, 6), m_store, t0 + 31000);
        told = groups.due(t0 + 31000);
        QCOMPARE(int(told.size()), 1);
        QVERIFY(told.front().resolved);
        QVERIFY2(told.front().title.endsWith(QStringLiteral("all cleared")), qPrintable(told.front().title));
        QVERIFY(groups.groups().empty());

        // Within the wait, raised and cleared: nothing told; raised and still open: flush() tells it.
        groups.apply({failed.begin(), failed.begin() + 6}, m_store, t0 + 40000);
        groups.apply(clearing(failed, 0, 6), m_store, t0 + 41000);
        QVERIFY(groups.due(t0 + 100000).empty());
        groups.apply({failed.begin(), failed.begin() + 6}, m_store, t0 + 50000);
        QVERIFY(groups.due(t0 + 50001).empty());
        told = groups.flush();
        QCOMPARE(int(told.size()), 1);
        QVERIFY(told.front().first);
        QCOMPARE(told.front().open, 6);
        // Five do not make a group below minAlerts: set to 7, six stay single.
        AlertRules rules;
        rules.groupMinAlerts = 7;
        groups.setRules(rules);
        groups.apply({failed.begin(), failed.begin() + 6}, m_store, t0);
        QVERIFY(!groups.isGrouped(key));
        QVERIFY(groups.flush().empty());
    }
};

QTEST_GUILESS_MAIN(TstAlertGroups)
#include "tst_alert_groups.moc"
