// Every panel and command reachable by typing (issue 41): Ctrl+Shift+A and F1 open one searchable
// list of the menus' commands with their shortcuts; typing filters it, Enter runs the first match
// (a panel comes forward and takes the focus). Panel entries keep their plain names even when
// the dock's title carries counts ("Alerts (1, 1 critical)"). Offscreen; any Qt warning fails.
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "dialogs/CommandPalette.h"

#include <QApplication>
#include <QDockWidget>
#include <QLineEdit>
#include <QPointer>
#include <QStandardPaths>
#include <QtTest>

using namespace mapi;

class CommandPaletteTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void typingFindsAPanelAndEnterBringsItForward()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QDockWidget *tasks = window.dock(QStringLiteral("tasksDock"));
        QVERIFY(tasks->visibleRegion().isEmpty()); // behind the timeline at first
        window.dock(QStringLiteral("alertsDock"))->setWindowTitle(QStringLiteral("Alerts (1, 1 critical)"));

        QTest::keyClick(&window, Qt::Key_A, Qt::ControlModifier | Qt::ShiftModifier);
        QPointer<ui::CommandPalette> palette(window.findChild<ui::CommandPalette *>());
        QVERIFY(palette && palette->isVisible());
        // Every panel is there, by its plain name, with its key; commands with theirs.
        const QStringList all = palette->shownTexts();
        for (const char *panel : {"Show the Agents panel", "Show the Alerts panel", "Show the Conversations panel", "Show the Agent work panel"})
            QVERIFY2(all.contains(QLatin1String(panel)), panel);
        QVERIFY(all.contains(QStringLiteral("Save session as")));
        QVERIFY(!all.join(u'\n').contains(QLatin1String("critical")));

        QTest::keyClicks(palette->searchBox(), QStringLiteral("tasks pan"));
        // "Show the Tasks panel" (Alt+5) first, then View's show/hide toggle "Tasks panel".
        QCOMPARE(palette->shownTexts(), (QStringList{QStringLiteral("Show the Tasks panel"), QStringLiteral("Tasks panel")}));
        QTest::keyClick(palette->searchBox(), Qt::Key_Return);
        QTRY_VERIFY(palette.isNull()); // closed and deleted
        QTRY_VERIFY(!tasks->visibleRegion().isEmpty());
        QTRY_VERIFY2(tasks->isAncestorOf(window.focusWidget()), window.focusWidget() ? window.focusWidget()->metaObject()->className() : "none");
    }

    void f1ListsShortcutsAndFilters()
    {
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.action(QStringLiteral("shortcuts"))->trigger();
        auto *palette = window.findChild<ui::CommandPalette *>();
        QVERIFY(palette);
        const qsizetype all = palette->shownTexts().size();
        QVERIFY(all > 30);
        QTest::keyClicks(palette->searchBox(), QStringLiteral("save session"));
        const QStringList shown = palette->shownTexts();
        QVERIFY2(!shown.isEmpty() && shown.size() < 4, qPrintable(shown.join(u',')));
        QVERIFY2(shown.contains(QStringLiteral("Save session as")), qPrintable(shown.join(u'|')));
        palette->close();
    }
};

QTEST_MAIN(CommandPaletteTest)
#include "tst_command_palette.moc"
