// Several systems in one window (issue 43 item 2), with traces: a new source opens beside what
// is shown, never instead of it; each system keeps its own model, panels and actions; the front
// system's panels fill the docks and its actions the menus; the Systems overview lists them all;
// a system whose trace cannot be read closes itself; closing the last leaves an empty one.
// Notifications name their system. Every system's open alerts in one inbox, the system named on
// each row, a row leading to its system's Alerts panel. Every time on one clock, this computer's.
// Offscreen; any Qt warning fails.
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "common/AlertNotifier.h"
#include "controllers/TraceController.h"
#include "common/TimeText.h"
#include "models/AgentTableModel.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "panels/AgentsPanel.h"
#include "pipeline/ClockSkew.h"
#include "session/InspectorSession.h"
#include "systems/SystemView.h"
#include "systems/SystemsAlertModel.h"
#include "systems/SystemsPanel.h"

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace mapi;

class WindowSystemsTest : public QObject
{
    Q_OBJECT
private:
    static bool loaded(const ui::SystemView *system)
    {
        return system->session()->source() == InspectorSession::Source::Trace && !system->session()->isLoadingTrace();
    }
    // The page a dock shows.
    static QWidget *shown(ui::MainWindow &window, const char *dock)
    {
        return qobject_cast<QStackedWidget *>(window.dock(QLatin1String(dock))->widget())->currentWidget();
    }
    // Every action the menus hold, through their submenus.
    static QList<QAction *> menuActions(ui::MainWindow &window)
    {
        QList<QAction *> all;
        for (QMenu *menu : window.menuBar()->findChildren<QMenu *>())
            all += menu->actions();
        return all;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void aSecondTraceOpensBesideTheFirst()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTemporaryDir dir;
        const QString sample = dir.filePath(QStringLiteral("sample.jsonl.zst"));
        QVERIFY(QFile::copy(QStringLiteral(MAPI_SAMPLE_TRACE), sample));
        const QString capture = QStringLiteral(MAPI_TEST_DATA "/scenario-basic.ndjson");

        QCOMPARE(window.systems().size(), 1);
        ui::SystemView *first = window.frontSystem();
        QVERIFY(window.openTraceBeside(sample)); // the window is empty: the first system takes it
        QCOMPARE(window.systems().size(), 1);
        QVERIFY(QTest::qWaitFor([&] { return loaded(first); }, 20000));
        const size_t sampleAgents = first->session()->store()->agents().size();
        QVERIFY(sampleAgents > 0);

        QVERIFY(window.openTraceBeside(capture)); // beside the first, not instead of it
        QCOMPARE(window.systems().size(), 2);
        ui::SystemView *second = window.frontSystem();
        QVERIFY(second != first);
        QVERIFY(QTest::qWaitFor([&] { return loaded(second); }, 20000));
        QCOMPARE(first->session()->tracePath(), QFileInfo(sample).absoluteFilePath());
        QCOMPARE(second->session()->tracePath(), QFileInfo(capture).absoluteFilePath());
        QCOMPARE(first->session()->store()->agents().size(), sampleAgents);
        const size_t captureAgents = second->session()->store()->agents().size();
        QVERIFY(captureAgents > 0 && captureAgents != sampleAgents); // each its own model

        // The front system's panels are the docks' pages; its actions are the window's and the
        // menus' (the other's are in neither, so a shortcut acts on the front one only).
        QCOMPARE(shown(window, "agentsDock"), static_cast<QWidget *>(second->agents()));
        QCOMPARE(window.session(), second->session());
        for (const char *name : {"record", "inject", "stop", "timeTravel", "exportAgentsCsv", "replayPlayPause"}) {
            const QString n = QLatin1String(name);
            QVERIFY2(window.action(n) == second->action(n), name);
            QVERIFY2(window.actions().contains(second->action(n)) && !window.actions().contains(first->action(n)), name);
        }
        QVERIFY(menuActions(window).contains(second->action(QStringLiteral("inject"))));
        QVERIFY(!menuActions(window).contains(first->action(QStringLiteral("inject"))));

        // The overview: both, the front one in bold; a click on the first brings it forward.
        ui::SystemsPanel *overview = window.systemsPanel();
        QVERIFY(window.dock(QStringLiteral("systemsDock"))->isVisibleTo(&window));
        QCOMPARE(overview->model()->rowCount(), 2);
        QCOMPARE(overview->model()->systemAt(0), first);
        QVERIFY(overview->model()->index(1, 0).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(!overview->model()->index(0, 0).data(Qt::FontRole).isValid());
        QVERIFY2(overview->model()->index(0, ui::SystemsModel::SystemColumn).data().toString().startsWith(QStringLiteral("1 · ")),
                 qPrintable(overview->model()->index(0, 0).data().toString()));
        QCOMPARE(overview->model()->index(0, ui::SystemsModel::StateColumn).data().toString(), QStringLiteral("Trace"));
        QCOMPARE(overview->model()->index(0, ui::SystemsModel::AgentsColumn).data().toInt(), int(sampleAgents));
        overview->table()->clicked(overview->model()->index(0, 0));
        QCOMPARE(window.frontSystem(), first);
        QCOMPARE(shown(window, "agentsDock"), static_cast<QWidget *>(first->agents()));
        QVERIFY2(window.windowTitle().startsWith(QLatin1String("sample.jsonl.zst")), qPrintable(window.windowTitle()));
        QVERIFY(window.actions().contains(first->action(QStringLiteral("inject"))));
        QVERIFY(!window.actions().contains(second->action(QStringLiteral("inject"))));

        // Ctrl+PgDown steps to the next system, round.
        window.action(QStringLiteral("nextSystem"))->trigger();
        QCOMPARE(window.frontSystem(), second);
        window.action(QStringLiteral("nextSystem"))->trigger();
        QCOMPARE(window.frontSystem(), first);

        // The sample from the front system's controller (File → Open the sample trace): beside.
        QVERIFY(window.traces()->openSampleTrace());
        QCOMPARE(window.systems().size(), 3);
        ui::SystemView *third = window.frontSystem();
        QVERIFY(QTest::qWaitFor([&] { return loaded(third); }, 20000));
        QCOMPARE(first->session()->tracePath(), QFileInfo(sample).absoluteFilePath());
        QCOMPARE(second->session()->tracePath(), QFileInfo(capture).absoluteFilePath());

        // Closing: the front one goes, the next comes forward; the others keep their models.
        window.closeSystem(third);
        QCOMPARE(window.systems().size(), 2);
        QVERIFY(window.frontSystem() != third);
        QCOMPARE(overview->model()->rowCount(), 2);
        window.closeSystem(first);
        QCOMPARE(window.systems().size(), 1);
        QCOMPARE(window.frontSystem(), second);
        QCOMPARE(second->session()->store()->agents().size(), captureAgents);
        // The last one closed: an empty system takes its place, the welcome page in the centre.
        window.action(QStringLiteral("closeSystem"))->trigger();
        QCOMPARE(window.systems().size(), 1);
        QCOMPARE(window.session()->source(), InspectorSession::Source::None);
        QCOMPARE(window.windowTitle(), QStringLiteral("MAP Inspector"));
    }

    // A system behind the front one announces nothing to its views (they do no work while
    // nobody looks at them); in front again, what gathered comes as one change set.
    void aSystemBehindHoldsItsViewsChanges()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ui::SystemView *behind = window.frontSystem();
        ui::SystemView *front = window.openSystem();
        QCOMPARE(window.frontSystem(), front);
        SystemStore *store = behind->session()->store();
        QVERIFY(store->changesHeld());
        QVERIFY(!front->session()->store()->changesHeld());
        QSignalSpy announced(store, &SystemStore::changed);
        mapi::test::fillFromCapture(*store);
        QVERIFY(!store->agents().empty());
        QCOMPARE(announced.size(), 0);
        QAbstractItemModel *agents = behind->agents()->findChild<QTableView *>()->model();
        QCOMPARE(agents->rowCount(), 0);
        // The overview reads the store itself: its figures do not wait.
        QCOMPARE(window.systemsPanel()->model()->index(0, ui::SystemsModel::AgentsColumn).data().toLongLong(),
                 qint64(store->agents().size()));
        window.showSystem(behind);
        QCOMPARE(announced.size(), 1);
        QVERIFY(agents->rowCount() > 0);
        QVERIFY(front->session()->store()->changesHeld());
        QVERIFY(!store->changesHeld());
    }

    // One inbox across systems: each system's open alerts, its name on every row, the operator's
    // marks from the system's own panel, a cleared alert or a closed system gone; choosing a row
    // brings its system forward with that alert selected in its Alerts panel.
    void oneInboxAcrossSystems()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ui::SystemView *first = window.frontSystem();
        ui::SystemView *second = window.openSystem();
        ui::SystemView *third = window.openSystem();
        QCOMPARE(window.systems().size(), 3);
        const auto alert = [](AlertKind kind, AlertSeverity severity, const QString &agent) {
            Alert a;
            a.kind = kind;
            a.severity = severity;
            a.agents = {agent};
            a.reason = agent + QStringLiteral(" needs a look");
            a.sinceMs = 1000;
            return a;
        };
        const Alert failed = alert(AlertKind::Failed, AlertSeverity::Critical, QStringLiteral("agent-a"));
        const Alert silent = alert(AlertKind::Unresponsive, AlertSeverity::Warning, QStringLiteral("agent-b"));
        const Alert stuck = alert(AlertKind::Stalled, AlertSeverity::Warning, QStringLiteral("agent-c"));
        first->alerts()->model()->apply({AlertChange{failed, true, 1000}});
        second->alerts()->model()->apply({AlertChange{silent, true, 1000}, AlertChange{stuck, true, 1000}});

        ui::SystemsPanel *panel = window.systemsPanel();
        ui::SystemsAlertModel *inbox = panel->alertsModel();
        const auto rowOf = [inbox](const Alert &a) {
            for (int row = 0; row < inbox->rowCount(); ++row)
                if (inbox->keyAt(row) == a.key())
                    return row;
            return -1;
        };
        QCOMPARE(inbox->rowCount(), 3);
        QCOMPARE(inbox->systemAt(rowOf(failed)), first);
        QCOMPARE(inbox->systemAt(rowOf(silent)), second);
        QCOMPARE(inbox->systemAt(rowOf(stuck)), second);
        for (int row = 0; row < inbox->rowCount(); ++row) // the system named on every row
            QCOMPARE(inbox->index(row, ui::SystemsAlertModel::SystemColumn).data().toString(), inbox->systemAt(row)->label());
        QCOMPARE(inbox->index(rowOf(failed), ui::SystemsAlertModel::FirstAlertColumn + ui::AlertModel::ReasonColumn).data().toString(),
                 failed.reason);
        QTableView *table = panel->alertsTable();
        QCOMPARE(table->model()->index(0, ui::SystemsAlertModel::FirstAlertColumn).data(ui::AlertModel::KeyRole).toString(),
                 failed.key()); // critical first, as in a system's own inbox
        QVERIFY2(panel->alertsSummary().contains(QLatin1String("3 open")), qPrintable(panel->alertsSummary()));

        // Acknowledged in its system's panel: greyed here and listed last.
        second->alerts()->model()->setAcknowledged(silent.key(), true);
        QVERIFY(inbox->index(rowOf(silent), 0).data(ui::AlertModel::AcknowledgedRole).toBool());
        QCOMPARE(inbox->index(rowOf(silent), ui::SystemsAlertModel::SystemColumn).data(Qt::ForegroundRole).value<QColor>(), QColor(Qt::gray));
        QCOMPARE(table->model()->index(2, ui::SystemsAlertModel::FirstAlertColumn).data(ui::AlertModel::KeyRole).toString(), silent.key());
        // Snoozed there: hidden here.
        second->alerts()->model()->snooze(stuck.key(), QDateTime::currentMSecsSinceEpoch() + 60000);
        QCOMPARE(table->model()->rowCount(), 2);

        // A row leads to its system: in front, the alert selected in its own panel.
        QCOMPARE(window.frontSystem(), third);
        const QModelIndex failedRow = table->model()->index(0, ui::SystemsAlertModel::SystemColumn);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(failedRow).center());
        QCOMPARE(window.frontSystem(), first);
        QCOMPARE(first->alerts()->selectedKey(), failed.key());
        QVERIFY(window.dock(QStringLiteral("alertsDock"))->isVisible());

        // Cleared in its system: gone here; the system closed: its rows go with it.
        first->alerts()->model()->apply({AlertChange{failed, false, 2000}});
        QCOMPARE(inbox->rowCount(), 2);
        QCOMPARE(rowOf(failed), -1);
        window.closeSystem(second);
        QVERIFY(QTest::qWaitFor([&] { return window.systems().size() == 2; }, 5000));
        QCOMPARE(inbox->rowCount(), 0);
        QVERIFY2(panel->alertsSummary().contains(QLatin1String("none")), qPrintable(panel->alertsSummary()));
    }

    // One clock for every time the window shows (issue 43 item 4): this computer's. The front
    // system's server stamps are shown less its measured offset, another system's with its own;
    // the status bar says which clock.
    void timesAreShownOnThisComputersClock()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ui::SystemView *inStep = window.frontSystem();
        ui::SystemView *ahead = window.openSystem();
        SystemStore *store = ahead->session()->store();
        mapi::test::fillFromCapture(*store);
        store->apply(ModelInputs{ModelInput{ClockInput{90000, ClockSkewEstimator::kMinSamples, 0}}});
        store->flushChanges();
        QTRY_COMPARE(ui::shownClockOffset(), qint64(90000));
        auto *label = window.findChild<QLabel *>(QStringLiteral("clockOffset"));
        QCOMPARE(label->text(), QStringLiteral("times: the recorder's clock · server 90.0 s ahead")); // no live source: a recording's
        // The agents table's last activity: the server's stamp, 90 s earlier on this clock.
        auto *agents = qobject_cast<QTableView *>(shown(window, "agentsDock")->findChild<QTableView *>());
        QVERIFY(agents && agents->model()->rowCount() > 0);
        const QModelIndex first = agents->model()->index(0, ui::AgentTableModel::NameColumn);
        const QString name = first.data().toString();
        const Agent *agent = nullptr;
        for (const Agent &a : store->agents())
            if (a.name == name || a.id == name)
                agent = &a;
        QVERIFY(agent && agent->lastActivityMs > 0);
        QCOMPARE(agents->model()->index(0, ui::AgentTableModel::LastActivityColumn).data(Qt::ToolTipRole).toString(),
                 QDateTime::fromMSecsSinceEpoch(agent->lastActivityMs - 90000).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        // Stamps taken here (a protocol problem's arrival) are shown as they are.
        QCOMPARE(ui::timeOfDay(agent->lastActivityMs, ui::TimePrecision::Seconds, ui::Clock::Local),
                 QDateTime::fromMSecsSinceEpoch(agent->lastActivityMs).toString(QStringLiteral("HH:mm:ss")));

        // The other system in front: its own clock (nothing measured: the server's stamps).
        window.showSystem(inStep);
        QCOMPARE(ui::shownClockOffset(), qint64(0));
        QCOMPARE(label->text(), QStringLiteral("times: the server's clock"));
        window.showSystem(ahead);
        QCOMPARE(ui::shownClockOffset(), qint64(90000));
    }

    // A trace that cannot be read, opened beside another: the warning, then no empty system left.
    void anUnreadableTraceLeavesNoEmptySystem()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openTraceBeside(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QVERIFY(QTest::qWaitFor([&] { return loaded(window.frontSystem()); }, 20000));
        ui::SystemView *first = window.frontSystem();
        QString warning;
        QTimer::singleShot(300, [&warning] {
            if (auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
                warning = box->text();
                box->accept();
            }
        });
        QVERIFY(!window.openTraceBeside(QStringLiteral("/nonexistent/trace.jsonl")));
        QVERIFY2(QTest::qWaitFor([&] { return !warning.isEmpty(); }, 5000), "the window said nothing");
        QVERIFY2(warning.contains(QLatin1String("does not exist")), qPrintable(warning));
        QVERIFY(QTest::qWaitFor([&] { return window.systems().size() == 1; }, 5000));
        QCOMPARE(window.frontSystem(), first);
        QVERIFY(loaded(first));
    }

    // One notifier for every system: each notification's title starts with its system, and the
    // one shown says whose it was (a click brings that system forward).
    void notificationsNameTheirSystem()
    {
        QWidget window;
        ui::AlertNotifier notifier(&window);
        QSignalSpy shown(&notifier, &ui::AlertNotifier::notified);
        Alert alert;
        alert.kind = AlertKind::Failed;
        alert.severity = AlertSeverity::Critical;
        alert.agents = {QStringLiteral("agent-1")};
        alert.reason = QStringLiteral("agent-1 failed");
        notifier.setSystemName(QStringLiteral("2 · production"));
        notifier.offer({AlertChange{alert, true, 1000}}, false, 100000);
        QCOMPARE(shown.size(), 1);
        QVERIFY2(shown.at(0).at(0).toString().startsWith(QStringLiteral("2 · production — ")), qPrintable(shown.at(0).at(0).toString()));
        QCOMPARE(notifier.lastShownSystem(), QStringLiteral("2 · production"));
        // The same alert key from another system is another alert: its clearing there leaves this one.
        notifier.setSystemName(QStringLiteral("3 · staging"));
        notifier.offer({AlertChange{alert, true, 1000}}, false, 100000); // waits: one notification every 10 s
        notifier.setSystemName(QStringLiteral("2 · production"));
        notifier.offer({AlertChange{alert, false, 1100}}, false, 100100);
        notifier.offer({}, false, 1000000);
        QCOMPARE(shown.size(), 2);
        QVERIFY2(shown.at(1).at(0).toString().startsWith(QStringLiteral("3 · staging — ")), qPrintable(shown.at(1).at(0).toString()));
    }
};

QTEST_MAIN(WindowSystemsTest)
#include "tst_window_systems.moc"
