// TurnShare (one waiting piece a turn of the event loop, in the order asked, shared by owners),
// the detectors taking their turns through one (a window's several systems), and the
// detectors' last step in slices keeping the open verdict whole until it ends.
#include "AlertFixture.h"
#include "TestSupport.h"
#include "alerts/AlertMonitor.h"
#include "common/TurnShare.h"

#include <QSignalSpy>
#include <QTimer>

#include <memory>

using namespace mapi;
using mapi_test::AlertFixture;

class TstTurnShare : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void piecesRunOneAtATimeInTheOrderAsked()
    {
        TurnShare share;
        QObject a, b, c;
        QStringList ran;
        // A witness timer counts the turns of the event loop: two pieces never see one count
        // (one piece a turn, not the whole queue at once).
        int turns = 0;
        QTimer witness;
        witness.setInterval(0);
        QObject::connect(&witness, &QTimer::timeout, [&] { ++turns; });
        witness.start();
        std::vector<int> seenAt;
        // Each owner's piece asks again twice (a backlog in slices): a piece asked during its
        // run goes behind the others, so the owners take turns.
        QHash<QString, int> left{{QStringLiteral("a"), 3}, {QStringLiteral("b"), 3}, {QStringLiteral("c"), 3}};
        std::function<void(QObject *, QString)> askFor = [&](QObject *owner, const QString &name) {
            share.ask(owner, 0, [&, owner, name] {
                ran << name;
                seenAt.push_back(turns);
                if (--left[name] > 0)
                    askFor(owner, name);
            });
        };
        askFor(&a, QStringLiteral("a"));
        askFor(&b, QStringLiteral("b"));
        askFor(&c, QStringLiteral("c"));
        QVERIFY(ran.isEmpty()); // never within the call that asks
        QTRY_COMPARE(ran.size(), 9);
        QCOMPARE(ran.join(QString()), QStringLiteral("abcabcabc"));
        QCOMPARE(share.waitingCount(), size_t(0));
        for (size_t i = 1; i < seenAt.size(); ++i)
            QVERIFY2(seenAt[i] > seenAt[i - 1], qPrintable(QStringLiteral("pieces %1 and %2 in one turn").arg(i - 1).arg(i)));
    }

    void askingAgainKeepsOnePlaceAndCancelAndGoneOwnersDrop()
    {
        TurnShare share;
        QObject a, kept;
        auto gone = std::make_unique<QObject>();
        QStringList ran;
        share.ask(&a, 0, [&] { ran << QStringLiteral("a0"); });
        share.ask(&a, 0, [&] { ran << QStringLiteral("a0 again"); }); // the same (owner, kind): no second piece
        share.ask(&a, 1, [&] { ran << QStringLiteral("a1"); });       // another kind waits on its own
        share.ask(gone.get(), 0, [&] { ran << QStringLiteral("gone"); });
        share.ask(&kept, 0, [&] { ran << QStringLiteral("kept"); });
        QCOMPARE(share.waitingCount(), size_t(4));
        QVERIFY(share.isWaiting(&a, 0));
        share.cancel(&a, 1);
        QVERIFY(!share.isWaiting(&a, 1));
        gone.reset(); // its piece is skipped, not run on a dead owner
        QTRY_COMPARE(ran, (QStringList{QStringLiteral("a0"), QStringLiteral("kept")}));
        QTest::qWait(10);
        QCOMPARE(ran.size(), 2);
        share.ask(&a, 0, [&] { ran << QStringLiteral("a0 later"); });
        share.cancelAll(&a);
        QTest::qWait(10);
        QCOMPARE(ran.size(), 2);
    }

    void monitorsShareTheirTurnsAndMoveWhatWaits()
    {
        AlertFixture first, second;
        first.store.advanceTime(first.loopingPairs(1500));
        second.store.advanceTime(second.loopingPairs(1500));
        TurnShare share;
        AlertMonitor one, two;
        for (AlertMonitor *m : {&one, &two}) {
            m->setRules(AlertFixture::withUnresponsive(AlertRules(), false));
            m->setSliceMs(1);
        }
        one.setStore(&first.store);
        two.setStore(&second.store);
        // A slice waiting in the monitor's own share moves to the window's when it is given one.
        one.step();
        two.step();
        QVERIFY(one.openAlerts().empty());
        one.setTurnShare(&share);
        two.setTurnShare(&share);
        QCOMPARE(share.waitingCount(), size_t(2));
        QSignalSpy oneDone(&one, &AlertMonitor::evaluated), twoDone(&two, &AlertMonitor::evaluated);
        // Both go on through the one share, and both finish: neither waits for the other's end.
        QTRY_VERIFY_WITH_TIMEOUT(oneDone.count() >= 1 && twoDone.count() >= 1, 20000);
        QCOMPARE(int(one.openAlerts().size()), 1500);
        QCOMPARE(int(two.openAlerts().size()), 1500);
        // A monitor that goes is forgotten by the share (nothing of it runs later).
        second.store.advanceTime(second.store.now() + 61000);
        two.step();
        size_t withThree = 0;
        {
            AlertFixture third;
            third.store.advanceTime(third.loopingPairs(500));
            AlertMonitor three;
            three.setTurnShare(&share);
            three.setRules(AlertFixture::withUnresponsive(AlertRules(), false));
            three.setStore(&third.store);
            three.setSliceMs(1);
            three.step(); // a backlog: its next slice waits in the share
            withThree = share.waitingCount();
            QVERIFY(withThree >= 1);
        }
        QCOMPARE(share.waitingCount(), withThree - 1); // taken out when it went, not left to be skipped
        QTRY_COMPARE_WITH_TIMEOUT(share.waitingCount(), size_t(0), 20000);
    }

    void theOpenVerdictStaysWholeWhileTheNextIsComparedInSlices()
    {
        AlertFixture f;
        f.engine.setEvaluationSliceMs(1);
        f.engine.setReadBudget(0);
        f.engine.setCompareStopsAtEveryCheck(true); // the comparison in slices on any machine
        int comparingStops = 0;
        QString broken; // what went wrong between slices (QCOMPARE cannot return from a lambda)
        const auto evaluate = [&](int expectedAfter) {
            std::map<QString, Alert> before = f.engine.openAlerts();
            QStringList beforeKeys;
            for (const auto &[key, alert] : before)
                beforeKeys << key;
            int calls = 0, raised = 0, cleared = 0;
            do {
                const std::vector<AlertChange> changes = f.engine.update(f.store);
                for (const AlertChange &c : changes)
                    (c.raised ? raised : cleared) += 1;
                comparingStops += f.engine.isComparing();
                if (f.engine.isEvaluating()) {
                    // Between slices, what openAlerts() shows is the last verdict, whole.
                    QStringList keys;
                    for (const auto &[key, alert] : f.engine.openAlerts())
                        keys << key;
                    if (keys != beforeKeys)
                        broken = QStringLiteral("%1 keys shown between slices, %2 before").arg(keys.size()).arg(beforeKeys.size());
                    for (const auto &[key, alert] : f.engine.openAlerts())
                        if (alert.agents.isEmpty() || alert.reason.isEmpty())
                            broken = QStringLiteral("moved from between slices: ") + key;
                }
                ++calls;
            } while ((f.engine.isEvaluating() || f.engine.isBehind(f.store)) && calls < 100000);
            if (int(f.engine.openAlerts().size()) != expectedAfter)
                broken = QStringLiteral("%1 open after, %2 expected").arg(f.engine.openAlerts().size()).arg(expectedAfter);
            return std::make_pair(raised, cleared);
        };
        const qint64 t = f.loopingPairs(1000);
        f.store.advanceTime(t);
        QCOMPARE(evaluate(1000), std::make_pair(1000, 0));
        QVERIFY2(broken.isEmpty(), qPrintable(broken));
        const qint64 t2 = f.loopingPairs(2000, 1000); // 2,000 more pairs, in the same window
        f.store.advanceTime(t2);
        QCOMPARE(evaluate(3000), std::make_pair(2000, 0));
        QVERIFY2(broken.isEmpty(), qPrintable(broken));
        f.store.advanceTime(t2 + 61000); // every exchange has left the window
        QCOMPARE(evaluate(0), std::make_pair(0, 3000));
        QVERIFY2(broken.isEmpty(), qPrintable(broken));
        // Each evaluation's comparison stopped several times (every 256 alerts), the last one
        // while only clearing (a storm's end: nothing new to merge with).
        QVERIFY2(comparingStops >= 3 * 3, qPrintable(QString::number(comparingStops)));
    }
};

QTEST_GUILESS_MAIN(TstTurnShare)
#include "tst_turn_share.moc"
