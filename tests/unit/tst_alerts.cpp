// The detectors (core/alerts): each rule on synthetic streams pushed through the same pipeline as
// live traffic: it fires, it clears, and it stays quiet on the near miss. And the rules file:
// defaults, round trip, typos refused, and docs/alerts.md showing the real defaults.
#include "AlertFixture.h"
#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "alerts/AlertMonitor.h"
#include "model/SystemStore.h"

#include <QFile>
#include <QSignalSpy>
#include <QTimer>

using namespace mapi;
using mapi_test::s;
using mapi_test::Wire;

namespace {

constexpr qint64 kStart = mapi_test::kAlertFixtureStart;
using Fixture = mapi_test::AlertFixture;

} // namespace

class TestAlerts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi_test::installWarningGuard(); }
    void init() { mapi_test::armWarningGuard(); }
    void cleanup() { MAPI_NO_WARNINGS(); }
    void cleanupTestCase() { MAPI_NO_WARNINGS(); }

    void rulesRoundTripAndTyposAreRefused()
    {
        AlertRules rules;
        rules.loopExchanges = 7;
        rules.budgetUsdPerRole.insert(QStringLiteral("planner"), 25.5);
        rules.rule(AlertKind::Stalled).enabled = false;
        rules.rule(AlertKind::Budget).severity = AlertSeverity::Critical;
        const Json written = alertRulesToJson(rules);
        const ErrorOr<AlertRules> read = alertRulesFromJson(written);
        QVERIFY2(read.ok(), qPrintable(read.error()));
        QCOMPARE(alertRulesToJson(*read), written);
        QCOMPARE(read->loopExchanges, 7);
        QCOMPARE(read->budgetUsdPerRole.value(QStringLiteral("planner")), 25.5);
        QVERIFY(!read->rule(AlertKind::Stalled).enabled);

        // A key left out keeps its default; seconds in the file are milliseconds in the struct.
        const ErrorOr<AlertRules> partial = alertRulesFromJson({{"rules", {{"stalled", {{"afterS", 90}}}}}});
        QVERIFY(partial.ok());
        QCOMPARE(partial->stalledAfterMs, qint64(90000));
        QCOMPARE(partial->deadlockAfterMs, AlertRules().deadlockAfterMs);

        const struct { Json doc; const char *says; } wrong[] = {
            {{{"rules", {{"loop", {{"exchange", 5}}}}}}, "unknown key \"rules.loop.exchange\""},
            {{{"rules", {{"lop", Json::object()}}}}, "unknown rule \"lop\""},
            {{{"rules", {{"loop", {{"exchanges", "20"}}}}}}, "\"rules.loop.exchanges\" must be a whole number"},
            {{{"rules", {{"loop", {{"severity", "loud"}}}}}}, "\"rules.loop.severity\" must be"},
            {{{"heartbeatIntervalS", -1}}, "\"heartbeatIntervalS\" must be"},
            {{{"version", 2}}, "\"version\" must be 1"},
            {{{"rule", Json::object()}}, "unknown key \"rule\""},
        };
        for (const auto &w : wrong) {
            const ErrorOr<AlertRules> r = alertRulesFromJson(w.doc);
            QVERIFY2(!r.ok(), w.says);
            QVERIFY2(r.error().contains(QString::fromUtf8(w.says)), qPrintable(r.error()));
        }
    }

    // docs/alerts.md shows the defaults as `map-inspector-cli rules` prints them: the page cannot drift.
    void documentedDefaultsAreTheDefaults()
    {
        QFile doc(QStringLiteral(MAPI_SOURCE_DIR "/docs/alerts.md"));
        QVERIFY(doc.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(doc.readAll());
        const QString begin = QStringLiteral("<!-- defaults -->\n```json\n");
        const qsizetype start = text.indexOf(begin);
        QVERIFY(start >= 0);
        const qsizetype end = text.indexOf(QStringLiteral("```"), start + begin.size());
        const QByteArray block = text.mid(start + begin.size(), end - start - begin.size()).toUtf8();
        const Json documented = Json::parse(block.constBegin(), block.constEnd(), nullptr, false);
        QCOMPARE(documented, alertRulesToJson(AlertRules()));
    }

    void unresponsiveRaisesAndClears()
    {
        AlertRules rules;
        rules.heartbeatIntervalMs = 1000;
        Fixture f(rules, true);
        for (const char *id : {"b", "c", "coord"})
            f.heartbeat(Fixture::q(id), kStart + 1000);
        f.heartbeat(QStringLiteral("a"), kStart + 1000);
        // Near miss: 2.9 intervals after a's last sign of life.
        QVERIFY(!f.at(kStart + 3900).join(u';').contains(QStringLiteral(":a")));
        const QStringList raised = f.at(kStart + 4100);
        QVERIFY2(raised.contains(QStringLiteral("raised unresponsive:a")), qPrintable(raised.join(u';')));
        const Alert *alert = f.open(QStringLiteral("unresponsive:a"));
        QVERIFY(alert);
        QCOMPARE(alert->sinceMs, kStart + 1000);
        QCOMPARE(alert->severity, AlertSeverity::Warning);
        QVERIFY2(alert->reason.contains(QStringLiteral("3 × 1 s")), qPrintable(alert->reason));
        f.heartbeat(QStringLiteral("a"), kStart + 4200);
        QVERIFY(f.at(kStart + 4300).contains(QStringLiteral("cleared unresponsive:a")));
    }

    // Issue 40: a server that stops answering (or whose list drifted from the model while no
    // events came) is an alert of its own, about the server, until a handshake that stays answered.
    void serverNotAnsweringIsAnAlert()
    {
        Fixture f(AlertRules(), true);
        ConnectionInfo handshake;
        handshake.handshake = true;
        handshake.sessionId = QStringLiteral("s-obs");
        handshake.timeMs = kStart;
        f.store.apply(handshake);
        QVERIFY(!f.at(kStart + 1000).join(u';').contains(QStringLiteral("/server")));
        f.store.apply(f.wire.pipeline().connectionClosed(
            ProtocolPipeline::kServerSilent + QStringLiteral("the server is not answering since 2026-09-21T14:13:20.000Z: no answer "
                                                             "to map/agents/list within 6.0 s"),
            kStart + 2000));
        const QStringList raised = f.at(kStart + 3000);
        QVERIFY2(raised.contains(QStringLiteral("raised unresponsive/server:")), qPrintable(raised.join(u';')));
        const Alert *alert = f.open(QStringLiteral("unresponsive/server"));
        QVERIFY(alert);
        QVERIFY(alert->agents.isEmpty());
        QVERIFY(alert->reason.contains(QStringLiteral("not answering since")));
        handshake.timeMs = kStart + 4000; // reconnected, answering
        f.store.apply(handshake);
        QVERIFY(f.at(kStart + 5000).contains(QStringLiteral("cleared unresponsive/server:")));
    }

    void failedByCriticalReportOrState()
    {
        Fixture f;
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "ERROR"}, {"message", "retrying"}}, kStart + 100);
        QVERIFY(f.at(kStart + 200).isEmpty()); // an ERROR is not a failure
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "CRITICAL"}, {"message", "out of memory"}},
               kStart + 300);
        QCOMPARE(f.at(kStart + 400), QStringList{QStringLiteral("raised failed:a")});
        const Alert *alert = f.open(QStringLiteral("failed:a"));
        QCOMPARE(alert->severity, AlertSeverity::Critical);
        QVERIFY2(alert->reason.contains(QStringLiteral("out of memory")), qPrintable(alert->reason));
        f.heartbeat(QStringLiteral("a"), kStart + 500); // alive again: the store's rule clears it
        QCOMPARE(f.at(kStart + 600), QStringList{QStringLiteral("cleared failed:a")});

        f.wire.setState(QStringLiteral("b"), QStringLiteral("b-name"), QStringLiteral("custom:crashed"), QStringLiteral("idle"), kStart + 700);
        QCOMPARE(f.at(kStart + 800), QStringList{QStringLiteral("raised failed:b")});
    }

    // a ⇄ b exchanging one shape of message, no task progress: 19 exchanges are not a loop, 20 are.
    void loopBetweenTwoAgents()
    {
        Fixture f;
        qint64 t = kStart + 1000;
        auto exchange = [&](int n, const char *type = "STATUS_QUERY") {
            for (int i = 0; i < n; ++i) {
                const bool forth = (f.counter % 2) == 0;
                f.send(forth ? QStringLiteral("a") : QStringLiteral("b"), forth ? QStringLiteral("b") : QStringLiteral("a"), type,
                       {{"query_type", "AGENT_STATUS"}, {"n", i}}, t += 500);
            }
        };
        exchange(19);
        QVERIFY(f.at(t).isEmpty());
        exchange(1);
        const QStringList raised = f.at(t);
        QCOMPARE(raised.size(), 1);
        QVERIFY2(raised.first().startsWith(QStringLiteral("raised loop/")) && raised.first().endsWith(QStringLiteral(":a,b")),
                 qPrintable(raised.first()));
        const Alert *alert = f.open(QStringLiteral("loop/"));
        QCOMPARE(alert->agents, (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
        QCOMPARE(alert->evidence.size(), 20);
        QVERIFY2(alert->reason.contains(QStringLiteral("20 \"STATUS_QUERY\"")), qPrintable(alert->reason));
        // Quiet for a window: cleared.
        QCOMPARE(f.at(t + 61000).size(), 1);
        QVERIFY(f.engine.openAlerts().empty());
    }

    // The loop detector's candidate groups are looked at in pieces when an evaluation runs in
    // slices: 4,000 looping pairs give the same alerts as one evaluation in a single call.
    // AlertMonitor in the window's conditions: an evaluation in slices, and messages arriving
    // between them all along (a flood). Its changes are reported when it ends, and the next
    // evaluation waits for the tick instead of following at once.
    void monitorReportsEvaluationsWhileMessagesKeepArriving()
    {
        Fixture f;
        // Building 4,000 alerts takes several 8 ms slices; 1,000 do under ASan (TestSupport.h).
        constexpr int kPairs = kUnderAddressSanitizer ? 1000 : 4000;
        qint64 t = f.loopingPairs(kPairs);
        f.store.advanceTime(t);
        AlertMonitor monitor;
        monitor.setRules(Fixture::withUnresponsive(AlertRules(), false));
        monitor.setStore(&f.store);
        QSignalSpy changed(&monitor, &AlertMonitor::alertsChanged);
        QSignalSpy evaluated(&monitor, &AlertMonitor::evaluated);
        QTimer traffic; // one message a millisecond from a sender nobody answers: raises nothing
        traffic.setInterval(1);
        connect(&traffic, &QTimer::timeout, this, [&] {
            f.send(QStringLiteral("a"), QStringLiteral("b"), "STATUS_QUERY", {{"query_type", "AGENT_STATUS"}}, ++t);
            f.store.advanceTime(t);
        });
        traffic.start();
        monitor.start();
        QTRY_VERIFY_WITH_TIMEOUT(evaluated.count() >= 1, 30000);
        const qint64 messagesThen = qint64(f.store.messages().size());
        int raised = 0;
        for (const QList<QVariant> &call : std::as_const(changed))
            for (const AlertChange &c : call.at(0).value<std::vector<AlertChange>>())
                raised += c.raised && c.alert.kind == AlertKind::Loop ? 1 : 0;
        QCOMPARE(raised, kPairs);
        QCOMPARE(int(monitor.openAlerts().size()), kPairs);
        // The next evaluation waits for the tick (a second at least), though messages still come.
        QTest::qWait(300);
        QVERIFY(qint64(f.store.messages().size()) > messagesThen);
        QCOMPARE(evaluated.count(), 1);
        traffic.stop();
    }

    void readingStopsAtTheSlicesTime()
    {
        // 20,000 messages take tens of milliseconds to read (5,000 under ASan): a 1 ms slice
        // stops reading partway (the read budget is off), and the evaluation starts only once
        // everything is read.
        Fixture f;
        constexpr int kPairs = kUnderAddressSanitizer ? 1000 : 4000;
        f.store.advanceTime(f.loopingPairs(kPairs));
        AlertEngine sliced(Fixture::withUnresponsive(AlertRules(), false));
        sliced.setEvaluationSliceMs(1);
        sliced.setReadBudget(0);
        QVERIFY(sliced.update(f.store).empty());
        QVERIFY(!sliced.isEvaluating());
        QVERIFY(sliced.isBehind(f.store));
        int calls = 1, raised = 0;
        do {
            for (const AlertChange &c : sliced.update(f.store))
                raised += c.raised;
            ++calls;
        } while (sliced.isBehind(f.store) && calls < 100000);
        QCOMPARE(raised, kPairs);
    }

    void verdictToldAtTheNextTurnAndDroppedWithItsStore()
    {
        Fixture f;
        f.store.advanceTime(f.loopingPairs(10));
        AlertMonitor monitor;
        monitor.setRules(Fixture::withUnresponsive(AlertRules(), false));
        monitor.setSliceMs(0); // one step evaluates everything
        monitor.setStore(&f.store);
        QSignalSpy changed(&monitor, &AlertMonitor::alertsChanged);
        QSignalSpy evaluated(&monitor, &AlertMonitor::evaluated);
        QSignalSpy reset(&monitor, &AlertMonitor::alertsReset);
        monitor.step();
        QCOMPARE(int(monitor.openAlerts().size()), 10);
        QCOMPARE(changed.count(), 0); // not within the slice: its views' work would add to it
        QTRY_COMPARE(evaluated.count(), 1);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(int(changed.at(0).at(0).value<std::vector<AlertChange>>().size()), 10);

        // New alerts evaluated, then the alerts forgotten before the verdict was told: the
        // views hear of the reset only, never of alerts about what was forgotten.
        f.store.advanceTime(f.loopingPairs(3, 10));
        monitor.step();
        monitor.forgetAlerts();
        QCoreApplication::processEvents();
        QTest::qWait(20);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(evaluated.count(), 1);
        QCOMPARE(reset.count(), 1);
        // evaluateNow() tells before it returns.
        monitor.evaluateNow();
        QCOMPARE(evaluated.count(), 2);

        // A storm's verdict comes in parts, a turn of the event loop each, in order (cleared
        // first), and `evaluated` once after the last.
        changed.clear();
        evaluated.clear();
        f.store.advanceTime(f.loopingPairs(1200, 100));
        // The tick comes while the first part is told: that step waits for the end (it does not
        // tell the rest at once: every part stays within 500), then runs.
        bool stepped = false;
        const QMetaObject::Connection tick = connect(&monitor, &AlertMonitor::alertsChanged, this, [&] {
            if (!std::exchange(stepped, true))
                monitor.step();
        });
        monitor.step();
        QCOMPARE(changed.count(), 0);
        QTRY_COMPARE(evaluated.count(), 2); // the storm's, then the waiting step's (nothing new, nothing changed)
        disconnect(tick);
        QVERIFY(stepped);
        QVERIFY2(changed.count() >= 3, qPrintable(QString::number(changed.count())));
        int raised = 0;
        for (const QList<QVariant> &call : std::as_const(changed)) {
            const auto part = call.at(0).value<std::vector<AlertChange>>();
            QVERIFY(part.size() <= 500);
            for (const AlertChange &c : part)
                raised += c.raised;
        }
        QCOMPARE(raised, 1200);
    }

    void loopGroupsEvaluatedInSlices()
    {
        Fixture f;
        constexpr int kPairs = kUnderAddressSanitizer ? 1000 : 4000; // many 1 ms slices either way
        const qint64 t = f.loopingPairs(kPairs);
        AlertEngine sliced(Fixture::withUnresponsive(AlertRules(), false));
        sliced.setEvaluationSliceMs(1);
        sliced.setReadBudget(0);
        f.engine.setReadBudget(0); // one call reads all 20,000 messages and evaluates them
        const QStringList whole = f.at(t);
        QCOMPARE(whole.size(), kPairs);
        QStringList pieces;
        int calls = 0;
        do {
            for (const AlertChange &c : sliced.update(f.store))
                pieces << QStringLiteral("%1 %2").arg(c.raised ? QStringLiteral("raised") : QStringLiteral("cleared"), c.alert.key());
            ++calls;
        } while (sliced.isBehind(f.store) && calls < 100000);
        // Without pieces within the loop step, at most one call per step (8); building 4,000
        // alerts takes well over the 1 ms slice.
        QVERIFY2(calls > 10, qPrintable(QString::number(calls)));
        QStringList sortedWhole = whole, sortedPieces = pieces;
        sortedWhole.sort();
        sortedPieces.sort();
        QCOMPARE(sortedPieces, sortedWhole);
        // And the next evaluation, in slices too, starts its groups from the first again.
        pieces.clear();
        do {
            for (const AlertChange &c : sliced.update(f.store))
                pieces << c.alert.key();
        } while (sliced.isBehind(f.store));
        QVERIFY(!sliced.isEvaluating());
        QCOMPARE(int(sliced.openAlerts().size()), kPairs);
        QCOMPARE(sliced.loopEdgeCount(), 2 * kPairs);
        // A window later every exchange has left it: the loop detector's edges are pruned (in
        // pieces too) and every loop clears.
        f.store.advanceTime(t + 61000);
        pieces.clear();
        calls = 0;
        do {
            for (const AlertChange &c : sliced.update(f.store))
                pieces << QStringLiteral("%1 %2").arg(c.raised ? QStringLiteral("raised") : QStringLiteral("cleared"), c.alert.key());
            ++calls;
        } while (sliced.isEvaluating() && calls < 100000);
        QCOMPARE(int(pieces.size()), kPairs);
        for (const QString &change : std::as_const(pieces))
            QVERIFY2(change.startsWith(QStringLiteral("cleared loop/")), qPrintable(change));
        QVERIFY(sliced.openAlerts().empty());
        QCOMPARE(sliced.loopEdgeCount(), 0); // forgotten, so new pairs are tracked (kMaxLoopEdges)
    }

    void loopNearMisses()
    {
        // Task progress by one of them meanwhile: work, not a loop.
        {
            Fixture f;
            qint64 t = kStart + 1000;
            f.send(QStringLiteral("coord"), QStringLiteral("a"), "TASK_REQUEST", {{"task_id", "T1"}}, t += 10);
            for (int i = 0; i < 30; ++i) {
                f.send(i % 2 ? QStringLiteral("b") : QStringLiteral("a"), i % 2 ? QStringLiteral("a") : QStringLiteral("b"),
                       "CHAT", {{"text", i}}, t += 500);
                if (i == 10)
                    f.send(QStringLiteral("a"), QStringLiteral("coord"), "TASK_UPDATE", {{"task_id", "T1"}, {"progress", 40}}, t += 10);
            }
            QVERIFY2(f.at(t).isEmpty(), qPrintable(f.at(t).join(u';')));
        }
        // A question and its different answer alternating, 9 of each: 18 messages, under the 20 of a
        // loop. (Issue 42: from 20 on, the same question and the same answer are a loop;
        // tst_alert_loops.)
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 9; ++i) {
                f.send(QStringLiteral("a"), QStringLiteral("b"), "STATUS_QUERY", {{"query_type", "X"}}, t += 500);
                f.send(QStringLiteral("b"), QStringLiteral("a"), "STATUS_RESPONSE", {{"state", "ok"}, {"load", 1}}, t += 500);
            }
            QVERIFY(f.at(t).isEmpty());
        }
        // 20 messages one way only: a stream, not an exchange.
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 25; ++i)
                f.send(QStringLiteral("a"), QStringLiteral("b"), "CHAT", {{"text", i}}, t += 500);
            QVERIFY(f.at(t).isEmpty());
        }
        // 20 exchanges spread over more than the window.
        {
            Fixture f;
            qint64 t = kStart + 1000;
            for (int i = 0; i < 20; ++i) {
                f.send(i % 2 ? QStringLiteral("b") : QStringLiteral("a"), i % 2 ? QStringLiteral("a") : QStringLiteral("b"),
                       "CHAT", {{"text", i}}, t += 3500);
                f.at(t);
            }
            QVERIFY(f.engine.openAlerts().empty());
        }
    }

    void loopAroundThreeAgents()
    {
        Fixture f;
        qint64 t = kStart + 1000;
        const QString ring[] = {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")};
        for (int i = 0; i < 21; ++i)
            f.send(ring[i % 3], ring[(i + 1) % 3], "REVIEW", {{"draft", i}}, t += 300);
        const QStringList raised = f.at(t);
        QCOMPARE(raised.size(), 1);
        QVERIFY2(raised.first().endsWith(QStringLiteral(":a,b,c")), qPrintable(raised.first()));
        QVERIFY(f.open(QStringLiteral("loop/"))->reason.contains(QStringLiteral("a → b → c → a")));
    }

    void loopByRate()
    {
        Fixture f;
        qint64 t = kStart;
        // Seven windows at its usual pace, 5 messages a minute (five or more must close to set it).
        for (int w = 0; w < 7; ++w)
            for (int i = 0; i < 5; ++i)
                f.send(QStringLiteral("a"), i % 2 ? QStringLiteral("b") : QStringLiteral("c"), "CHAT", {{"n", i}}, t += 12000);
        QVERIFY(f.at(t).isEmpty());
        // 45 in this window: 9 times the usual, under the 60 minimum: quiet.
        const qint64 burst = t;
        for (int i = 0; i < 40; ++i)
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "CHAT", {{"n", i}}, t += 100);
        QVERIFY(f.at(t).isEmpty());
        for (int i = 0; i < 25; ++i)
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "CHAT", {{"n", i}}, t += 100);
        const QStringList raised = f.at(t);
        QCOMPARE(raised, QStringList{QStringLiteral("raised loop/rate:a")});
        QVERIFY(t - burst < 60000);
        // The minute after, quiet: cleared.
        QCOMPARE(f.at(t + 130000), QStringList{QStringLiteral("cleared loop/rate:a")});
    }

    void stalledWhenBusyWithoutProgress()
    {
        Fixture f; // heartbeats every 30 s keep it healthy; they are not progress
        const QString a = QStringLiteral("a");
        f.wire.setState(a, QStringLiteral("a-name"), QStringLiteral("busy"), QStringLiteral("idle"), kStart + 1000);
        QVERIFY(f.heartbeatsUntil(a, kStart + 1000 + 119000).isEmpty());
        QCOMPARE(f.heartbeatsUntil(a, kStart + 1000 + 121000), QStringList{QStringLiteral("raised stalled:a")});
        QVERIFY(f.open(QStringLiteral("stalled:a"))->reason.contains(QStringLiteral("is \"busy\"")));
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "STATUS_UPDATE", {{"progress", 50}}, kStart + 130000);
        QCOMPARE(f.at(kStart + 131000), QStringList{QStringLiteral("cleared stalled:a")});
    }

    void stalledWhenHoldingATask()
    {
        Fixture f;
        f.send(QStringLiteral("coord"), QStringLiteral("b"), "TASK_REQUEST", {{"task_id", "T7"}}, kStart + 1000);
        f.send(QStringLiteral("b"), QStringLiteral("coord"), "TASK_ACCEPT", {{"task_id", "T7"}}, kStart + 2000);
        QVERIFY(f.heartbeatsUntil(QStringLiteral("b"), kStart + 100000).isEmpty());
        QCOMPARE(f.heartbeatsUntil(QStringLiteral("b"), kStart + 125000), QStringList{QStringLiteral("raised stalled:b")});
        QVERIFY(f.open(QStringLiteral("stalled:b"))->evidence.contains(QStringLiteral("task:T7")));
        f.send(QStringLiteral("b"), QStringLiteral("coord"), "TASK_COMPLETE", {{"task_id", "T7"}, {"status", "SUCCESS"}}, kStart + 126000);
        QCOMPARE(f.at(kStart + 127000), QStringList{QStringLiteral("cleared stalled:b")});
    }

    // A task one agent rejects and another then accepts is held again: the engine had dropped it
    // as settled at the rejection and never looked at it again.
    void stalledWhenHoldingATaskAnotherRejected()
    {
        Fixture f;
        f.send(QStringLiteral("coord"), QStringLiteral("b"), "TASK_REQUEST", {{"task_id", "T8"}}, kStart + 1000);
        f.send(QStringLiteral("b"), QStringLiteral("coord"), "TASK_REJECT", {{"task_id", "T8"}, {"reason", "busy"}}, kStart + 2000);
        QVERIFY(f.at(kStart + 3000).isEmpty()); // the engine reads the rejection (settled) first
        f.send(QStringLiteral("coord"), QStringLiteral("c"), "TASK_REQUEST", {{"task_id", "T8"}}, kStart + 4000);
        f.send(QStringLiteral("c"), QStringLiteral("coord"), "TASK_ACCEPT", {{"task_id", "T8"}}, kStart + 5000);
        QVERIFY(f.heartbeatsUntil(QStringLiteral("c"), kStart + 100000).isEmpty());
        QCOMPARE(f.heartbeatsUntil(QStringLiteral("c"), kStart + 128000), QStringList{QStringLiteral("raised stalled:c")});
        QVERIFY(f.open(QStringLiteral("stalled:c"))->evidence.contains(QStringLiteral("task:T8")));
    }

    void deadlockOfTaskRequests()
    {
        Fixture f;
        f.send(QStringLiteral("a"), QStringLiteral("b"), "TASK_REQUEST", {{"task_id", "T1"}}, kStart + 1000);
        f.send(QStringLiteral("b"), QStringLiteral("c"), "TASK_REQUEST", {{"task_id", "T2"}}, kStart + 1100);
        f.send(QStringLiteral("c"), QStringLiteral("a"), "TASK_REQUEST", {{"task_id", "T3"}}, kStart + 1200);
        QVERIFY(f.at(kStart + 21100).isEmpty()); // T3 has waited 19.9 s
        QCOMPARE(f.at(kStart + 21300), QStringList{QStringLiteral("raised deadlock:a,b,c")});
        const Alert *alert = f.open(QStringLiteral("deadlock:"));
        QCOMPARE(alert->agents, (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
        QCOMPARE(alert->evidence, (QStringList{QStringLiteral("task:T1"), QStringLiteral("task:T2"), QStringLiteral("task:T3")}));
        QCOMPARE(alert->severity, AlertSeverity::Critical);
        QVERIFY2(alert->reason.contains(QStringLiteral("a-name waits on b-name waits on c-name waits on a-name")),
                 qPrintable(alert->reason)); // names, not ids
        f.send(QStringLiteral("b"), QStringLiteral("a"), "TASK_ACCEPT", {{"task_id", "T1"}}, kStart + 22000);
        QCOMPARE(f.at(kStart + 22100), QStringList{QStringLiteral("cleared deadlock:a,b,c")});
    }

    void deadlockNearMissAndHelpRequests()
    {
        // A chain that does not close is not a deadlock.
        {
            Fixture f;
            f.send(QStringLiteral("a"), QStringLiteral("b"), "TASK_REQUEST", {{"task_id", "T1"}}, kStart + 1000);
            f.send(QStringLiteral("b"), QStringLiteral("c"), "TASK_REQUEST", {{"task_id", "T2"}}, kStart + 1100);
            QVERIFY(f.at(kStart + 60000).join(u';').indexOf(QStringLiteral("deadlock")) < 0);
        }
        // Two agents each waiting for the other's help.
        {
            AlertRules rules;
            rules.rule(AlertKind::NeedsHuman).enabled = false;
            Fixture f(rules);
            f.send(QStringLiteral("a"), QStringLiteral("b"), "HELP_REQUEST", {{"help_type", "X"}}, kStart + 1000);
            f.send(QStringLiteral("b"), QStringLiteral("a"), "HELP_REQUEST", {{"help_type", "Y"}}, kStart + 1500);
            QCOMPARE(f.at(kStart + 25000), QStringList{QStringLiteral("raised deadlock:a,b")});
            f.send(QStringLiteral("a"), QStringLiteral("b"), "HELP_RESPONSE", {{"content", "try this"}}, kStart + 26000);
            QCOMPARE(f.at(kStart + 26100), QStringList{QStringLiteral("cleared deadlock:a,b")});
        }
    }

    void budgetPerAgentAndRole()
    {
        Fixture f;
        auto cost = [&](const char *agent, double usd, qint64 t) {
            f.send(Fixture::q(agent), QStringLiteral("coord"), "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", usd}}}}, t);
        };
        cost("a", 9.99, kStart + 1000);
        QVERIFY(f.at(kStart + 1100).isEmpty());
        cost("a", 10.5, kStart + 2000);
        QCOMPARE(f.at(kStart + 2100), QStringList{QStringLiteral("raised budget:a")});
        QVERIFY(f.open(QStringLiteral("budget:a"))->reason.contains(QStringLiteral("10.50 USD, over its limit of 10.00 USD")));

        AlertRules rules;
        rules.budgetUsdPerRole.insert(QStringLiteral("worker"), 20); // the fixture's agents are workers
        Fixture g(rules);
        g.send(QStringLiteral("a"), QStringLiteral("coord"), "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", 15}}}}, kStart + 1000);
        QVERIFY(g.at(kStart + 1100).isEmpty());
    }

    void budgetRate()
    {
        AlertRules rules;
        rules.budgetUsdPerHour = 6; // 0.1 USD a minute
        Fixture f(rules);
        double usd = 0;
        qint64 t = kStart;
        for (int i = 0; i < 12; ++i) // 0.05 USD a minute: under the rate
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", usd += 0.05}}}}, t += 60000);
        QVERIFY(f.at(t).isEmpty());
        for (int i = 0; i < 12; ++i) // 0.5 USD a minute
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", usd += 0.5}}}}, t += 60000);
        // Heartbeats keep it healthy; the rate is what is asked about.
        QCOMPARE(f.at(t), QStringList{QStringLiteral("raised budget/rate:a")});
    }

    void needsHumanWhenHelpIsNotAnswered()
    {
        AlertRules rules;
        rules.rule(AlertKind::Deadlock).enabled = false;
        Fixture f(rules);
        // Answered within a second (as the demo's helpers do): nothing.
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "HELP_REQUEST", {{"help_type", "CODE_REVIEW"}}, kStart + 1000);
        f.send(QStringLiteral("coord"), QStringLiteral("a"), "HELP_RESPONSE", {{"content", "ok"}}, kStart + 1800);
        QVERIFY(f.at(kStart + 60000).isEmpty());
        // Not answered: raised after 30 s, cleared by the answer.
        f.send(QStringLiteral("b"), QStringLiteral("coord"), "HELP_REQUEST", {{"help_type", "APPROVAL"}}, kStart + 61000);
        QVERIFY(f.at(kStart + 90000).isEmpty());
        QCOMPARE(f.at(kStart + 92000), QStringList{QStringLiteral("raised needs-human:b")});
        QVERIFY(f.open(QStringLiteral("needs-human:b"))->evidence.first().startsWith(QStringLiteral("message:m")));
        f.send(QStringLiteral("coord"), QStringLiteral("b"), "HELP_RESPONSE", {{"content", "approved"}}, kStart + 93000);
        QCOMPARE(f.at(kStart + 93100), QStringList{QStringLiteral("cleared needs-human:b")});
        // A state that says it waits for input.
        f.wire.setState(QStringLiteral("c"), QStringLiteral("c-name"), QStringLiteral("input-required"), QStringLiteral("busy"), kStart + 94000);
        QVERIFY(f.at(kStart + 100000).isEmpty());
        QCOMPARE(f.at(kStart + 125000), QStringList{QStringLiteral("raised needs-human/state:c")});
    }

    void errorStormPerAgent()
    {
        AlertRules rules;
        rules.errorStormSystemCount = 0;
        Fixture f(rules);
        qint64 t = kStart;
        for (int i = 0; i < 30; ++i) // warnings do not count
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "WARNING"}}, t += 1000);
        for (int i = 0; i < 9; ++i)
            f.send(QStringLiteral("a"), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "ERROR"}, {"n", i}}, t += 1000);
        QVERIFY(f.at(t).isEmpty());
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "ERROR"}}, t += 1000);
        QCOMPARE(f.at(t), QStringList{QStringLiteral("raised error-storm:a")});
        QCOMPARE(f.open(QStringLiteral("error-storm:a"))->evidence.size(), 10);
        QCOMPARE(f.at(t + 61000), QStringList{QStringLiteral("cleared error-storm:a")});
    }

    void errorStormAcrossTheSystem()
    {
        AlertRules rules;
        rules.errorStormSystemCount = 12;
        Fixture f(rules);
        qint64 t = kStart;
        const char *agents[] = {"a", "b", "c"};
        for (int i = 0; i < 12; ++i) // four each: no agent storms, the system does
            f.send(Fixture::q(agents[i % 3]), QStringLiteral("coord"), "ERROR_REPORT", {{"severity", "ERROR"}}, t += 1000);
        QCOMPARE(f.at(t), QStringList{QStringLiteral("raised error-storm/system:")});
    }

    // A reconnect reads the model again: what still holds stays open without a second "raised".
    void restartReadingKeepsWhatStillHolds()
    {
        Fixture f;
        f.send(QStringLiteral("a"), QStringLiteral("coord"), "STATUS_UPDATE", {{"resource_usage", {{"cost_usd", 11}}}}, kStart + 1000);
        QCOMPARE(f.at(kStart + 1100).size(), 1);
        f.engine.restartReading();
        QVERIFY(f.at(kStart + 1200).isEmpty());
        QVERIFY(f.open(QStringLiteral("budget:a")));
    }

    // Live and replay are one pipeline: the same stream applied to a fresh store in one batch (as a
    // trace loads) gives the same alerts as applied message by message.
    void bulkAndStepwiseAgree()
    {
        Fixture stepwise;
        QStringList raisedStepwise;
        qint64 t = kStart + 1000;
        for (int i = 0; i < 24; ++i) {
            stepwise.send(i % 2 ? QStringLiteral("b") : QStringLiteral("a"), i % 2 ? QStringLiteral("a") : QStringLiteral("b"), "PING",
                          {{"n", i}}, t += 200);
            raisedStepwise << stepwise.at(t);
        }
        Fixture bulk;
        t = kStart + 1000;
        for (int i = 0; i < 24; ++i)
            bulk.send(i % 2 ? QStringLiteral("b") : QStringLiteral("a"), i % 2 ? QStringLiteral("a") : QStringLiteral("b"), "PING",
                      {{"n", i}}, t += 200);
        QCOMPARE(bulk.at(t), raisedStepwise);
        // Both found the loop (agreeing on nothing would prove nothing): raised once, at the 20th.
        QCOMPARE(raisedStepwise.filter(QStringLiteral("raised loop/")).size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestAlerts)
#include "tst_alerts.moc"
