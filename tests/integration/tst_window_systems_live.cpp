// Two live systems in one window (issue 43 items 2 and 4), each the official MAPServer (the demo
// system), one with its clock 90 s ahead: connected through the Connect dialog, the second beside
// the first; each model equals its own server's view; the overview shows each one's clock; the
// agents of the skewed one stay healthy (its ages are on its own clock); each timeline has its
// own agents' lanes; the memory budget is split between them; an injection goes to the front
// system's server only; a trace opens beside them as a third; and one server dying leaves the
// other live and followed. Any Qt warning fails.
#include "WindowLiveSupport.h"

#include "dialogs/ConnectDialog.h"
#include "dialogs/ConnectionProfiles.h"
#include "panels/TimelinePanel.h"
#include "pipeline/ClockSkew.h"
#include "systems/SystemView.h"
#include "systems/SystemsPanel.h"
#include "timeline/TimelineView.h"

#include <QDockWidget>
#include <QStandardPaths>

using namespace mapi;
using namespace mapi::test;

class WindowSystemsLiveTest : public QObject
{
    Q_OBJECT
private:
    // The window's own path: Connect…, the URL typed, OK; observer or not as the dialog says.
    static void connectThroughDialog(ui::MainWindow &window, const QString &url)
    {
        answerNextDialog([url](QDialog *dialog) {
            auto *connect = qobject_cast<ui::ConnectDialog *>(dialog);
            QVERIFY(connect);
            connect->setUrl(url);
        });
        window.action(QStringLiteral("connect"))->trigger();
    }
    static QString modelAgainstServer(const ui::SystemView *system, const QString &url)
    {
        return diffStateWithView(stateToJson(*system->session()->store()), demoHttp(url, QStringLiteral("/view")));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        qInstallMessageHandler(failOnWarnings);
    }

    void twoSystemsEachOnItsOwnClock()
    {
        DemoProcess inStep;
        QVERIFY2(inStep.start(QStringLiteral("extended"), 0, {QStringLiteral("--agents"), QStringLiteral("10")}), qPrintable(inStep.error()));
        DemoProcess ahead;
        QVERIFY2(ahead.start(QStringLiteral("extended"), 0,
                             {QStringLiteral("--agents"), QStringLiteral("6"), QStringLiteral("--heartbeat-ms"), QStringLiteral("500"),
                              QStringLiteral("--clock-skew-ms"), QStringLiteral("90000")}),
                 qPrintable(ahead.error()));
        ui::MainWindow window;
        window.setMemoryBudget(qint64(512) << 20);
        window.show();
        connectThroughDialog(window, inStep.url());
        QCOMPARE(window.systems().size(), 1); // the empty window's system took it
        ui::SystemView *first = window.frontSystem();
        connectThroughDialog(window, ahead.url());
        QCOMPARE(window.systems().size(), 2); // beside the first, which stays connected
        ui::SystemView *second = window.frontSystem();
        QVERIFY(second != first);
        for (const ui::SystemView *system : {first, second})
            QTRY_VERIFY_WITH_TIMEOUT(system->session()->clientState() == ClientState::Live, 15000);

        // Each model is its own server's (the demo systems go quiet first: nothing in flight).
        for (const std::pair<ui::SystemView *, QString> &each : {std::pair{first, inStep.url()}, std::pair{second, ahead.url()}}) {
            QVERIFY(!demoHttp(each.second, QStringLiteral("/control/quiesce"), true).is_null());
            QString diff;
            QVERIFY2(QTest::qWaitFor([&] { return (diff = modelAgainstServer(each.first, each.second)).isEmpty(); }, 20000),
                     qPrintable(diff));
        }
        QVERIFY(first->session()->store()->agents().size() != second->session()->store()->agents().size());
        for (const QString &url : {inStep.url(), ahead.url()}) // traffic and heartbeats again
            QVERIFY(!demoHttp(url, QStringLiteral("/control/activity"), true).is_null());

        // The budget is split: each live system has half, its history two fifths of that.
        for (const ui::SystemView *system : {first, second}) {
            QCOMPARE(system->session()->memoryBudget(), qint64(256) << 20);
            QCOMPARE(system->session()->store()->historyBudget(), size_t((qint64(256) << 20) * 2 / 5));
        }

        // Each system's clock on its own row; the skewed one's agents are not made late by it.
        const SystemStore *aheadStore = second->session()->store();
        QTRY_VERIFY_WITH_TIMEOUT(aheadStore->connection().clockSamples >= ClockSkewEstimator::kMinSamples, 20000);
        const QString aheadClock = ui::SystemsModel::clockText(second);
        QVERIFY2(aheadClock.startsWith(QLatin1String("+8")) || aheadClock.startsWith(QLatin1String("+9")), qPrintable(aheadClock));
        QTRY_COMPARE_WITH_TIMEOUT(ui::SystemsModel::clockText(first), QStringLiteral("in step"), 20000);
        ui::SystemsPanel *overview = window.systemsPanel();
        QTRY_COMPARE_WITH_TIMEOUT(overview->model()->index(1, ui::SystemsModel::ClockColumn).data().toString(), aheadClock, 3000);
        QTest::qWait(3000); // several heartbeat intervals
        int healthy = 0;
        for (const Agent &a : aheadStore->agents())
            healthy += a.health == Health::Healthy;
        QVERIFY2(healthy >= int(aheadStore->agents().size()) - 2, qPrintable(QStringLiteral("%1 of %2").arg(healthy).arg(aheadStore->agents().size())));

        // Each timeline has a lane for each of its own agents.
        for (const ui::SystemView *system : {first, second}) {
            const SystemStore *store = system->session()->store();
            const ui::TimelineView *timeline = system->timeline()->view();
            for (int row = 0; row < int(store->agents().size()); ++row)
                QVERIFY2(timeline->lanes().rowOfAgent(row) >= 0, qPrintable(store->agents()[size_t(row)].id));
        }

        // An injection from the window acts on the front system's server, and is tracked there.
        QCOMPARE(window.frontSystem(), second);
        const QString target = aheadStore->agents().front().id;
        const ActionStart started = window.session()->inject({target}, Json{{"text", "from the second system's front"}},
                                                              MapClient::Delivery::Queue);
        QCOMPARE(started.actionIds.size(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(aheadStore->action(started.actionIds.front())
                                     && aheadStore->action(started.actionIds.front())->status != ActionStatus::Sent,
                                 10000);
        QCOMPARE(aheadStore->action(started.actionIds.front())->status == ActionStatus::Failed, false);
        QVERIFY(first->session()->store()->action(started.actionIds.front()) == nullptr);

        // A trace opens beside the two live systems, never instead of one.
        QVERIFY(window.openTraceBeside(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QCOMPARE(window.systems().size(), 3);
        ui::SystemView *trace = window.frontSystem();
        QTRY_VERIFY_WITH_TIMEOUT(!trace->session()->isLoadingTrace(), 20000);
        QCOMPARE(first->session()->clientState(), ClientState::Live);
        QCOMPARE(second->session()->clientState(), ClientState::Live);
        // Traces are not bounded: the live two keep their halves.
        QCOMPARE(first->session()->memoryBudget(), qint64(256) << 20);
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            window.showSystem(first);
            window.resize(1600, 1000);
            QDockWidget *systems = window.dock(QStringLiteral("systemsDock"));
            systems->show();
            systems->raise();
            window.resizeDocks({systems}, {430}, Qt::Vertical); // the overview and the inbox under it
            QTest::qWait(2500); // the overview's figures, a second apart
            window.grab().save(QDir(shots).filePath(QStringLiteral("systems-overview.png")));
        }

        // One server dies: its system says so; the other stays live and keeps being followed.
        inStep.kill();
        QTRY_VERIFY_WITH_TIMEOUT(first->session()->clientState() != ClientState::Live, 15000);
        const qint64 before = aheadStore->counters().eventsApplied;
        QTRY_VERIFY_WITH_TIMEOUT(aheadStore->counters().eventsApplied > before + 5, 15000);
        QCOMPARE(second->session()->clientState(), ClientState::Live);
        QVERIFY(ui::SystemsModel::stateText(first) != ui::SystemsModel::stateText(second));
    }

    // A fleet: the connected systems saved under a name (profiles made for those without one),
    // then opened together in another window, each a system of its own, both live.
    void aFleetOpensTogether()
    {
        DemoProcess one;
        QVERIFY2(one.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("3")}), qPrintable(one.error()));
        DemoProcess two;
        QVERIFY2(two.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("4")}), qPrintable(two.error()));
        QStringList saved;
        {
            ui::MainWindow window;
            for (const QString &url : {one.url(), two.url()}) {
                ClientOptions options;
                options.url = QUrl(url);
                window.systemForNewSource()->connection()->connectTo(options, true);
            }
            QCOMPARE(window.systems().size(), 2);
            QStringList left;
            saved = window.saveFleet(QStringLiteral("staging/pair"), &left);
            QCOMPARE(saved, QStringList({one.url(), two.url()}));
            QVERIFY(left.isEmpty());
        }
        QVERIFY(ui::ConnectionProfiles::fleets().contains(QStringLiteral("staging/pair")));
        QCOMPARE(ui::ConnectionProfiles::fleetProfiles(QStringLiteral("staging/pair")), saved);

        ui::MainWindow window;
        window.show();
        QCOMPARE(window.openFleet(QStringLiteral("staging/pair")), 2);
        QCOMPARE(window.systems().size(), 2);
        QStringList urls;
        for (const ui::SystemView *system : window.systems()) {
            QTRY_VERIFY_WITH_TIMEOUT(system->session()->clientState() == ClientState::Live, 15000);
            QVERIFY(system->session()->observerOnly());
            urls << system->session()->connectionUrl().toString();
        }
        QCOMPARE(urls, saved);
        for (const ui::SystemView *system : window.systems())
            QTRY_VERIFY_WITH_TIMEOUT(!system->session()->store()->agents().empty(), 15000);
        ui::ConnectionProfiles::removeFleet(QStringLiteral("staging/pair"));
        QVERIFY(!ui::ConnectionProfiles::fleets().contains(QStringLiteral("staging/pair")));
        for (const QString &name : saved)
            ui::ConnectionProfiles::remove(name);
    }
};

QTEST_MAIN(WindowSystemsLiveTest)
#include "tst_window_systems_live.moc"
