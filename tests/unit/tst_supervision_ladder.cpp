// The supervision ladder (core/alerts/SupervisionLadder): what a rule the operator allowed does by
// itself while its alert stays open — nudge, suspend, stop, each once, in order — and a storm's
// alerts acted on as one. Split from tst_alerts (the detectors), which it shares a fixture with.
#include "AlertFixture.h"
#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "alerts/SupervisionLadder.h"

#include <algorithm>

using namespace mapi;

namespace {

constexpr qint64 kStart = mapi_test::kAlertFixtureStart;

} // namespace

class TestSupervisionLadder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void ladderClimbsInOrderAndStopsWhenCleared()
    {
        SupervisionLadder ladder;
        LadderPlan plan;
        plan.enabled = true;
        plan.nudgeAfterMs = 0;
        plan.suspendAfterMs = 30000;
        plan.stopAfterMs = 90000;
        ladder.setPlan(AlertKind::Stalled, plan);
        Alert stalled;
        stalled.kind = AlertKind::Stalled;
        stalled.agents = QStringList{QStringLiteral("w1")};
        stalled.reason = QStringLiteral("holds task T7 with no progress for 130 s");
        auto steps = [](const std::vector<LadderAction> &actions) {
            QStringList out;
            for (const LadderAction &a : actions)
                out << ladderStepName(a.step) + u':' + a.agents.join(u',');
            return out;
        };
        ladder.alertsChanged({AlertChange{stalled, true, kStart}});
        const std::vector<LadderAction> first = ladder.due(kStart);
        QCOMPARE(steps(first), QStringList{QStringLiteral("nudge:w1")});
        QCOMPARE(first.front().origin, QStringLiteral("automatic (rule stalled)"));
        QVERIFY(first.front().text.contains(stalled.reason));
        QVERIFY(ladder.due(kStart + 29999).empty());
        const std::vector<LadderAction> second = ladder.due(kStart + 30000);
        QCOMPARE(steps(second), QStringList{QStringLiteral("suspend:w1")});
        QCOMPARE(second.front().text, QStringLiteral("automatic (rule stalled): ") + stalled.reason);
        QVERIFY(ladder.due(kStart + 60000).empty()); // each step once
        // Cleared before the stop: the ladder ends there.
        ladder.alertsChanged({AlertChange{stalled, false, kStart + 61000}});
        QVERIFY(ladder.due(kStart + 100000).empty());

        // Raised again, and nobody looked for a while: the steps due come in ladder order.
        ladder.alertsChanged({AlertChange{stalled, true, kStart + 200000}});
        QCOMPARE(steps(ladder.due(kStart + 300000)),
                 (QStringList{QStringLiteral("nudge:w1"), QStringLiteral("suspend:w1"), QStringLiteral("stop:w1")}));
    }

    // A storm climbs as one: the steps of its alerts due together are one action on all their
    // agents; a plan limited to a storm leaves the rule's other alerts alone, and narrowing a
    // plan ends the climbs it no longer covers.
    void ladderActsOnAStormAsOne()
    {
        constexpr qint64 kStart = 1'000'000;
        const QString storm = QStringLiteral("unresponsive|scope:s1");
        const auto groupOf = [&](const QString &alertKey) {
            return alertKey.contains(QLatin1String("lone")) ? QString() : storm;
        };
        std::vector<AlertChange> raised;
        for (int i = 0; i < 50; ++i) {
            Alert a;
            a.kind = AlertKind::Unresponsive;
            a.agents = {QStringLiteral("w%1").arg(i)};
            a.reason = QStringLiteral("silent");
            raised.push_back({a, true, kStart});
        }
        Alert lone;
        lone.kind = AlertKind::Unresponsive;
        lone.agents = {QStringLiteral("lone")};
        raised.push_back({lone, true, kStart});
        LadderPlan plan;
        plan.enabled = true;
        plan.nudgeAfterMs = 0;
        plan.suspendAfterMs = 10000;

        SupervisionLadder ladder;
        ladder.setGroupOf(groupOf);
        ladder.setPlan(AlertKind::Unresponsive, plan);
        ladder.alertsChanged(raised);
        std::vector<LadderAction> steps = ladder.due(kStart);
        QCOMPARE(int(steps.size()), 2); // the storm's nudge and the lone alert's
        const auto stormStep = std::find_if(steps.begin(), steps.end(), [](const LadderAction &a) { return a.agents.size() > 1; });
        QVERIFY(stormStep != steps.end());
        QCOMPARE(stormStep->alertKey, QStringLiteral("group:") + storm);
        QVERIFY2(stormStep->text.contains(QLatin1String("50 unresponsive alerts")), qPrintable(stormStep->text));
        QCOMPARE(int(stormStep->agents.size()), 50);
        QCOMPARE(int(QSet<QString>(stormStep->agents.begin(), stormStep->agents.end()).size()), 50);
        steps = ladder.due(kStart + 10000);
        QCOMPARE(int(steps.size()), 2);
        QCOMPARE(steps[0].step, LadderStep::Suspend);

        // Limited to the storm: the lone alert does not climb.
        SupervisionLadder limited;
        limited.setGroupOf(groupOf);
        plan.onlyGroups = {storm};
        limited.setPlan(AlertKind::Unresponsive, plan);
        limited.alertsChanged(raised);
        steps = limited.due(kStart);
        QCOMPARE(int(steps.size()), 1);
        QCOMPARE(int(steps.front().agents.size()), 50);
        const std::map<QString, Alert> open{{QStringLiteral("k-lone"), lone}, {QStringLiteral("k-w0"), raised[0].alert}};
        QCOMPARE(limited.preview(AlertKind::Unresponsive, open, plan.onlyGroups), QStringList{QStringLiteral("w0")});
        QCOMPARE(limited.preview(AlertKind::Unresponsive, open).size(), 2);

        // Narrowed to another storm while climbing: this storm's climbs end.
        plan.onlyGroups = {QStringLiteral("unresponsive|scope:s2")};
        limited.setPlan(AlertKind::Unresponsive, plan);
        QVERIFY(limited.due(kStart + 60000).empty());
    }

    // New rules: the detectors start over and raise again what still holds; a climb goes on
    // where it was (no second nudge), a climb whose alert the new rules no longer raise ends.
    void ladderKeepsItsPlaceAcrossNewRules()
    {
        SupervisionLadder ladder;
        LadderPlan plan;
        plan.enabled = true;
        plan.nudgeAfterMs = 0;
        plan.suspendAfterMs = 30000;
        ladder.setPlan(AlertKind::Stalled, plan);
        ladder.setPlan(AlertKind::Budget, plan);
        Alert stalled;
        stalled.kind = AlertKind::Stalled;
        stalled.agents = QStringList{QStringLiteral("w1")};
        Alert budget;
        budget.kind = AlertKind::Budget;
        budget.agents = QStringList{QStringLiteral("w2")};
        ladder.alertsChanged({AlertChange{stalled, true, kStart}, AlertChange{budget, true, kStart}});
        QCOMPARE(ladder.due(kStart).size(), size_t(2)); // both nudged
        // Rules changed: only the stall is raised again.
        ladder.alertsChanged({AlertChange{stalled, true, kStart + 10000}});
        ladder.retainOnly({{stalled.key(), stalled}});
        QVERIFY(ladder.due(kStart + 10000).empty()); // no second nudge
        const std::vector<LadderAction> later = ladder.due(kStart + 30000);
        QCOMPARE(later.size(), size_t(1)); // the stall's suspension; the budget's climb has ended
        QCOMPARE(later.front().agents, QStringList{QStringLiteral("w1")});
        QCOMPARE(later.front().step, LadderStep::Suspend);
    }

    void ladderNeedsAnExplicitPlanAndNeverRunsForAnObserver()
    {
        SupervisionLadder ladder;
        Alert loop;
        loop.kind = AlertKind::Loop;
        loop.agents = QStringList{QStringLiteral("a"), QStringLiteral("b")};
        loop.reason = QStringLiteral("20 messages");
        // No plan enabled: nothing, whatever the time.
        ladder.alertsChanged({AlertChange{loop, true, kStart}});
        QVERIFY(ladder.due(kStart + 3600000).empty());
        LadderPlan plan;
        plan.enabled = true;
        ladder.setPlan(AlertKind::Loop, plan);
        std::map<QString, Alert> open{{loop.key(), loop}};
        QCOMPARE(ladder.preview(AlertKind::Loop, open), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
        QVERIFY(ladder.preview(AlertKind::Stalled, open).isEmpty());
        // Observer mode: no climb, and none fires when it is turned off again.
        ladder.alertsChanged({AlertChange{loop, false, kStart + 1}});
        ladder.setObserverOnly(true);
        ladder.alertsChanged({AlertChange{loop, true, kStart + 2}});
        QVERIFY(ladder.due(kStart + 3600000).empty());
        ladder.setObserverOnly(false);
        QVERIFY(ladder.due(kStart + 3600000).empty());
        ladder.alertsChanged({AlertChange{loop, false, kStart + 3600001}, AlertChange{loop, true, kStart + 3600002}});
        QCOMPARE(ladder.due(kStart + 3600002 + 120000).size(), size_t(2)); // nudge, suspend (no stop by default)
        // A new connection: every plan off again.
        ladder.reset();
        QVERIFY(!ladder.anyEnabled());
        ladder.alertsChanged({AlertChange{loop, true, kStart + 4000000}});
        QVERIFY(ladder.due(kStart + 9000000).empty());
    }
};

QTEST_GUILESS_MAIN(TestSupervisionLadder)
#include "tst_supervision_ladder.moc"
