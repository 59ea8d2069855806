// The window fits a laptop (issue 41 items 1 and 2): its minimum size is at most 1024×640 when
// idle, replaying a trace and time travelling; at 1024×700 no two toolbar buttons overlap, every
// shown dock is at least as large as its content's minimum, and the replay scrubber takes at
// least half of the replay bar, with a tick for each bookmark. Offscreen; any Qt warning fails.
// MAPI_TEST_SHOTS=DIR also saves the window at 1024×700 and 1366×768, live-idle and in replay.
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "controllers/TraceController.h"
#include "alerts/AlertMonitor.h"
#include "models/AgentTableModel.h"
#include "replay/ReplayBar.h"
#include "replay/ScrubberSlider.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "model/SystemStore.h"
#include "timeline/TimelineView.h"

#include <QApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QFile>
#include <QHeaderView>
#include <QSettings>
#include <QTableView>
#include <QTreeView>
#include <QTemporaryDir>
#include <QStandardPaths>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace mapi;

namespace {

constexpr QSize kLaptopMinimum(1024, 640);

// What keeps the window wide or tall: every visible child whose minimum reaches `size`.
QString widestChildren(const QWidget &window, const QSize &size)
{
    QStringList out;
    for (const QWidget *w : window.findChildren<QWidget *>()) {
        if (!w->isVisible())
            continue;
        const QSize min = w->minimumSizeHint().expandedTo(w->minimumSize());
        if (min.width() > size.width() * 3 / 5 || min.height() > size.height() * 3 / 5)
            out << QStringLiteral("%1 (%2) %3×%4").arg(w->objectName(), QString::fromLatin1(w->metaObject()->className()))
                       .arg(min.width()).arg(min.height());
    }
    // The docks and the centre, whose minimums add up side by side.
    if (const auto *main = qobject_cast<const QMainWindow *>(&window)) {
        for (const QDockWidget *dock : main->findChildren<QDockWidget *>())
            if (dock->isVisible())
                out << QStringLiteral("dock %1 in %2: %3×%4").arg(dock->objectName()).arg(int(main->dockWidgetArea(const_cast<QDockWidget *>(dock))))
                           .arg(dock->minimumSizeHint().width()).arg(dock->minimumSizeHint().height());
        if (main->centralWidget())
            out << QStringLiteral("centre %1×%2").arg(main->centralWidget()->minimumSizeHint().width()).arg(main->centralWidget()->minimumSizeHint().height());
    }
    return out.join(QStringLiteral("; "));
}

void checkMinimum(const ui::MainWindow &window, const char *mode)
{
    const QSize min = window.minimumSizeHint().expandedTo(window.minimumSize());
    QVERIFY2(min.width() <= kLaptopMinimum.width() && min.height() <= kLaptopMinimum.height(),
             qPrintable(QStringLiteral("%1: minimum %2×%3; held by: %4")
                            .arg(QLatin1String(mode)).arg(min.width()).arg(min.height()).arg(widestChildren(window, min))));
}

// No two visible buttons of one toolbar overlap, and none sticks out of its toolbar.
void checkToolbars(const ui::MainWindow &window)
{
    for (const QToolBar *bar : window.findChildren<QToolBar *>()) {
        if (!bar->isVisible())
            continue;
        QList<const QWidget *> items;
        for (const QWidget *w : bar->findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
            if (w->isVisible() && w->width() > 0 && !w->inherits("QToolBarExtension") && !w->inherits("QToolBarSeparator")
                && w->parentWidget() == bar && w->geometry().intersects(bar->rect()))
                items << w;
        for (int i = 0; i < items.size(); ++i) {
            QVERIFY2(bar->rect().contains(items[i]->geometry()),
                     qPrintable(QStringLiteral("%1: %2 sticks out").arg(bar->objectName(), items[i]->objectName())));
            for (int j = i + 1; j < items.size(); ++j)
                QVERIFY2(!items[i]->geometry().intersects(items[j]->geometry()),
                         qPrintable(QStringLiteral("%1: %2 overlaps %3").arg(bar->objectName(), items[i]->objectName(),
                                                                                items[j]->objectName())));
        }
    }
}

void checkDocks(const ui::MainWindow &window)
{
    for (const QDockWidget *dock : window.findChildren<QDockWidget *>()) {
        if (!dock->isVisible() || !dock->widget() || dock->visibleRegion().isEmpty())
            continue; // tabbed behind another: shown when its tab is chosen
        const QSize need = dock->widget()->minimumSizeHint().expandedTo(dock->widget()->minimumSize());
        QVERIFY2(dock->widget()->width() >= need.width() && dock->widget()->height() >= need.height(),
                 qPrintable(QStringLiteral("%1: %2×%3 for a content of at least %4×%5")
                                .arg(dock->objectName()).arg(dock->widget()->width()).arg(dock->widget()->height())
                                .arg(need.width()).arg(need.height())));
    }
}

void shot(QWidget &window, const QString &name)
{
    const QString dir = qEnvironmentVariable("MAPI_TEST_SHOTS");
    if (dir.isEmpty())
        return;
    QApplication::processEvents();
    window.grab().save(dir + u'/' + name + QStringLiteral(".png"));
}

} // namespace

class WindowFitTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void idleWindowFitsALaptop()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        checkMinimum(window, "idle");
        QVERIFY(!window.findChild<ui::TimelineView *>()->replaying());
        window.resize(1024, 700);
        QTest::qWait(50);
        QCOMPARE(window.size(), QSize(1024, 700));
        checkToolbars(window);
        checkDocks(window);
        shot(window, QStringLiteral("fit-idle-1024x700"));
        window.resize(1366, 768);
        QTest::qWait(50);
        checkToolbars(window);
        checkDocks(window);
        shot(window, QStringLiteral("fit-idle-1366x768"));
    }

    void replayFitsAndTheScrubberIsWide()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTemporaryDir dir; // the bookmark is kept beside the trace: a copy, not the repository's file
        const QString trace = dir.filePath(QStringLiteral("demo.jsonl.zst"));
        QVERIFY(QFile::copy(QStringLiteral(MAPI_SAMPLE_TRACE), trace));
        QVERIFY(window.traces()->openTrace(trace));
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 20000));
        QVERIFY(window.replayBar()->isVisible());
        // Issue 41 item 9: the timeline follows the replay and says so, not "following" as if live.
        QVERIFY(window.findChild<ui::TimelineView *>()->replaying());
        QCOMPARE(window.findChild<QToolButton *>(QStringLiteral("timelineFollow"))->text(), QStringLiteral("Follow replay"));
        checkMinimum(window, "replay");
        // With an agent inspected too (its record is wide).
        for (const Agent &a : window.session()->store()->agents())
            if (a.health == Health::Failed)
                window.selection()->selectAgents({a.id}, window.dock(QStringLiteral("agentsDock")));
        QTest::qWait(100);
        checkMinimum(window, "replay, an agent inspected");
        window.resize(1024, 700);
        QTest::qWait(50);
        QCOMPARE(window.size(), QSize(1024, 700));
        checkToolbars(window);
        checkDocks(window);
        const ui::ReplayBar *bar = window.replayBar();
        QVERIFY2(bar->scrubber()->width() * 2 >= bar->width(),
                 qPrintable(QStringLiteral("scrubber %1 px of a %2 px bar").arg(bar->scrubber()->width()).arg(bar->width())));
        // A bookmark is a tick on it, where its time is.
        QVERIFY(window.replayBar()->addBookmark(QStringLiteral("here"), QString()));
        QCOMPARE(bar->scrubber()->ticks().size(), size_t(1));
        const ReplayController *replay = window.session()->replay();
        const double expected = double(replay->positionMs() - replay->startMs()) / double(replay->endMs() - replay->startMs());
        QVERIFY(std::abs(bar->scrubber()->ticks().front().at - expected) < 1e-9);
        QVERIFY(!bar->scrubber()->liveEdge()); // a trace has no live edge
        // The alerts open at the end of the run are spans along it, from when each began; the
        // sample's failed agent is one, critical.
        const auto failedSpan = [bar] {
            const std::vector<ui::ScrubberSlider::Span> &spans = bar->scrubber()->spans();
            return std::any_of(spans.begin(), spans.end(), [bar](const ui::ScrubberSlider::Span &s) {
                return s.critical && bar->scrubber()->spanTitle(s).startsWith(QStringLiteral("failed · ")) && s.to == 1.0 && s.from < 1.0;
            });
        };
        const auto titles = [bar] {
            QStringList out;
            for (const ui::ScrubberSlider::Span &s : bar->scrubber()->spans())
                out << QStringLiteral("%1 %2-%3 %4").arg(bar->scrubber()->spanTitle(s)).arg(s.from).arg(s.to).arg(s.critical);
            return out.join(u'\n');
        };
        QVERIFY2(QTest::qWaitFor(failedSpan, 20000), qPrintable(titles()));
        shot(window, QStringLiteral("fit-replay-1024x700"));
        window.resize(1366, 768);
        QTest::qWait(50);
        checkDocks(window);
        shot(window, QStringLiteral("fit-replay-1366x768"));
        QVERIFY(window.replayBar()->removeBookmark(0));
        QVERIFY(bar->scrubber()->ticks().empty());
    }

    // The default layout serves the views (issue 41 item 6) at 1366×768 and 1920×1080: the agents
    // table shows name, health, state and role; the scopes tree its names; the tasks table ten
    // rows or more; the Alerts panel and the inspector are in different tab groups, and
    // Evidence brings the inspector forward with the alerts still in view.
    void defaultLayoutServesTheViews_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }
    void defaultLayoutServesTheViews()
    {
        QFETCH(QSize, size);
        QSettings().remove(QStringLiteral("layout")); // the default layout, not one an earlier test saved
        ui::MainWindow window;
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.traces()->openTrace(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QVERIFY(QTest::qWaitFor([&] { return !window.session()->isLoadingTrace(); }, 20000));
        QVERIFY(QTest::qWaitFor([&] { return !window.alertMonitor()->openAlerts().empty(); }, 20000));
        QTest::qWait(100);
        QCOMPARE(window.size(), size);

        auto *agents = window.dock(QStringLiteral("agentsDock"))->findChild<QTableView *>(QStringLiteral("agentsTable"));
        QVERIFY(agents && !agents->visibleRegion().isEmpty());
        for (int column : {int(ui::AgentTableModel::NameColumn), int(ui::AgentTableModel::HealthColumn), int(ui::AgentTableModel::StateColumn),
                           int(ui::AgentTableModel::RoleColumn)}) {
            QHeaderView *header = agents->horizontalHeader();
            QVERIFY(!header->isSectionHidden(column));
            const int right = header->sectionViewportPosition(column) + header->sectionSize(column);
            QVERIFY2(right <= agents->viewport()->width(),
                     qPrintable(QStringLiteral("agents column %1 ends at %2 of a %3 px view").arg(column).arg(right).arg(agents->viewport()->width())));
        }

        QDockWidget *scopesDock = window.dock(QStringLiteral("scopesDock"));
        scopesDock->raise();
        QTest::qWait(50);
        auto *scopes = scopesDock->findChild<QTreeView *>();
        QVERIFY(scopes && !scopes->visibleRegion().isEmpty());
        QVERIFY2(scopes->header()->sectionSize(0) >= scopes->fontMetrics().horizontalAdvance(QStringLiteral("squad-a · 18")),
                 qPrintable(QString::number(scopes->header()->sectionSize(0))));

        QDockWidget *tasksDock = window.dock(QStringLiteral("tasksDock"));
        tasksDock->raise();
        QTest::qWait(50);
        auto *tasks = tasksDock->findChild<QTableView *>(QStringLiteral("tasksTable"));
        QVERIFY(tasks && !tasks->visibleRegion().isEmpty());
        const int rows = tasks->viewport()->height() / tasks->verticalHeader()->defaultSectionSize();
        QVERIFY2(rows >= 10, qPrintable(QStringLiteral("%1 task rows").arg(rows)));

        QDockWidget *alertsDock = window.dock(QStringLiteral("alertsDock"));
        QDockWidget *inspectorDock = window.dock(QStringLiteral("inspectorDock"));
        QVERIFY(!window.tabifiedDockWidgets(inspectorDock).contains(alertsDock));
        alertsDock->raise();
        QTest::qWait(50);
        QVERIFY(inspectorDock->visibleRegion().isEmpty()); // Health is in front of it at first
        auto *alertsTable = alertsDock->findChild<QTableView *>();
        QVERIFY(alertsTable && alertsTable->model()->rowCount() > 0);
        alertsTable->selectRow(0);
        auto *inspect = alertsDock->findChild<QToolButton *>(QStringLiteral("alertInspect"));
        QVERIFY(inspect && inspect->isEnabled());
        inspect->click();
        QTest::qWait(50);
        QVERIFY(!inspectorDock->visibleRegion().isEmpty());
        QVERIFY(!alertsDock->visibleRegion().isEmpty());
        shot(window, QStringLiteral("layout-replay-%1x%2").arg(size.width()).arg(size.height()));
    }
};

QTEST_MAIN(WindowFitTest)
#include "tst_window_fit.moc"
