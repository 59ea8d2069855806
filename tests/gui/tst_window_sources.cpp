// Another source leaves nothing of the previous one on screen (issue 41 item 7): opening a trace
// over another empties, at once, the alerts (not a second later), the selection and the
// inspector's item, the evidence chain lit in the timeline and topology, and the topology's
// search; the Alerts panel says it is loading instead of "Nothing needs attention" until the
// detectors have read the new model. Offscreen; any Qt warning fails.
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "controllers/TraceController.h"
#include "alerts/AlertMonitor.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace mapi;

class WindowSourcesTest : public QObject
{
    Q_OBJECT
private:
    static QString alertsSummary(ui::MainWindow &window)
    {
        return window.alertsPanel()->findChild<QLabel *>(QStringLiteral("alertsSummary"))->text();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void anotherTraceLeavesNothingOfThePrevious()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTemporaryDir dir;
        const QString first = dir.filePath(QStringLiteral("first.jsonl.zst"));
        const QString second = dir.filePath(QStringLiteral("second.jsonl.zst"));
        QVERIFY(QFile::copy(QStringLiteral(MAPI_SAMPLE_TRACE), first));
        QVERIFY(QFile::copy(QStringLiteral(MAPI_SAMPLE_TRACE), second));

        QSignalSpy evaluated(window.alertMonitor(), &AlertMonitor::evaluated);
        QVERIFY(window.traces()->openTrace(first));
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 20000));
        // The sample run ends with open alerts (its failed agent at least).
        // The panel hears of them at the turn of the event loop after the evaluation.
        QVERIFY(QTest::qWaitFor([&] { return !window.alertMonitor()->openAlerts().empty(); }, 20000));
        QVERIFY(QTest::qWaitFor([&] { return window.alertsPanel()->model()->rowCount() > 0; }, 1000));

        // The operator's state on the first trace: an agent selected and inspected, a chain lit,
        // a search typed.
        const SystemStore *store = window.session()->store();
        QVERIFY(!store->agents().empty() && store->messages().size() > 3);
        ui::SelectionHub *hub = window.selection();
        hub->selectAgents({store->agents().front().id});
        hub->focus(ui::SelectionHub::Kind::Task, QStringLiteral("task-of-the-first-trace"));
        hub->setChain({1, 2, 3});
        auto *search = window.findChild<QLineEdit *>(QStringLiteral("topologySearch"));
        QVERIFY(search);
        search->setText(QStringLiteral("worker-1"));

        evaluated.clear();
        QVERIFY(window.traces()->openTrace(second));
        // At once, before anything of the second trace is read.
        QVERIFY(window.alertMonitor()->openAlerts().empty());
        QCOMPARE(window.alertsPanel()->model()->rowCount(), 0);
        QVERIFY2(alertsSummary(window).startsWith(QLatin1String("Loading the trace")), qPrintable(alertsSummary(window)));
        QVERIFY(hub->selectedAgents().isEmpty());
        QCOMPARE(hub->focusKind(), ui::SelectionHub::Kind::None);
        QVERIFY(hub->chain().empty());
        QVERIFY(search->text().isEmpty());

        // Loaded, then read by the detectors: the second trace's own alerts, and a summary that
        // counts them.
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 20000));
        QVERIFY(QTest::qWaitFor([&] { return !evaluated.isEmpty(); }, 20000));
        QVERIFY(!window.alertMonitor()->openAlerts().empty());
        QVERIFY2(alertsSummary(window).contains(QLatin1String("open")), qPrintable(alertsSummary(window)));
    }
};

QTEST_MAIN(WindowSourcesTest)
#include "tst_window_sources.moc"
