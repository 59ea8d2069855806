// The window's header (issue 44 item 5): "is anything wrong?" answered at the top, on the
// realistic fleet (tools/fleet-trace: a team silent, another's dependency failed) — counts per
// health and state, worst first, each a filter of the Agents panel; one line per system when
// several are open, each leading to its own system. Offscreen; any Qt warning fails.
#include "FleetTrace.h"
#include "GuiTestSupport.h"

#include "MainWindow.h"
#include "panels/AgentsPanel.h"
#include "session/InspectorSession.h"
#include "systems/AttentionHeader.h"
#include "systems/SystemView.h"

#include <QApplication>
#include <QDockWidget>
#include <QLocale>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace mapi;

class AttentionHeaderTest : public QObject
{
    Q_OBJECT

    static bool loaded(const ui::SystemView *system)
    {
        return system->session()->source() == InspectorSession::Source::Trace && !system->session()->isLoadingTrace();
    }
    static int withHealth(const ui::SystemView *system, Health health)
    {
        int n = 0;
        for (const Agent &agent : system->session()->store()->agents())
            n += !agent.unregistered && agent.health == health;
        return n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        mapi::test::failOnQtWarnings();
    }

    void countsAreFiltersPerSystem()
    {
        QTemporaryDir dir;
        fleet::FleetOptions options;
        options.agents = 1000;
        const QString path = dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto fleet = fleet::writeFleetTrace(path, options);
        QVERIFY2(fleet.ok(), qPrintable(fleet.error()));

        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ui::AttentionHeader *header = window.attentionHeader();
        QVERIFY(header->isHidden()); // nothing open: nothing to say
        QVERIFY(window.openTraceBeside(path));
        ui::SystemView *first = window.frontSystem();
        QVERIFY(QTest::qWaitFor([&] { return loaded(first); }, 30000));
        header->refresh();
        QVERIFY(header->isVisible());

        // The trouble first: failed before unresponsive before healthy, with their numbers.
        const QString text = header->plainText();
        const QLocale locale;
        const int failed = withHealth(first, Health::Failed);
        const int unresponsive = withHealth(first, Health::Unresponsive);
        QVERIFY2(failed >= fleet->failedAgents && unresponsive >= fleet->silentAgents,
                 qPrintable(QStringLiteral("%1 failed, %2 unresponsive").arg(failed).arg(unresponsive)));
        const qsizetype failedAt = text.indexOf(QStringLiteral("%1 failed").arg(locale.toString(failed)));
        const qsizetype unresponsiveAt = text.indexOf(QStringLiteral("%1 unresponsive").arg(locale.toString(unresponsive)));
        const qsizetype healthyAt = text.indexOf(QLatin1String(" healthy"));
        QVERIFY2(failedAt >= 0 && unresponsiveAt > failedAt && healthyAt > unresponsiveAt, qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("states:")) && text.contains(QLatin1String("open alert")), qPrintable(text));
        QVERIFY2(!text.contains(first->label()), qPrintable(text)); // one system: not named

        // A count is a filter: the Agents panel narrows to those agents.
        const QString unresponsiveLink = QStringLiteral("filter:%1:health:unresponsive").arg(first->number());
        QVERIFY2(header->links().contains(unresponsiveLink), qPrintable(header->links().join(u'\n')));
        header->activate(unresponsiveLink);
        QCOMPARE(first->agents()->filterText(), QStringLiteral("health:unresponsive"));
        auto *agentsTable = first->agents()->findChild<QTableView *>();
        QVERIFY(agentsTable);
        QTRY_COMPARE(agentsTable->model()->rowCount(), unresponsive);
        QVERIFY(window.dock(QStringLiteral("agentsDock"))->isVisible());
        // A state is a filter too: the failing team's agents report "error".
        int inError = 0;
        for (const Agent &agent : first->session()->store()->agents())
            inError += !agent.unregistered && agent.state.compare(QLatin1String("error"), Qt::CaseInsensitive) == 0;
        QVERIFY(inError >= fleet->failedAgents);
        const QString errorLink = QStringLiteral("filter:%1:state:error").arg(first->number());
        QVERIFY2(header->links().contains(errorLink), qPrintable(header->links().join(u'\n')));
        QVERIFY2(text.contains(QStringLiteral("%1 error").arg(locale.toString(inError))), qPrintable(text));
        header->activate(errorLink);
        QTRY_COMPARE(agentsTable->model()->rowCount(), inError);

        // A second system: a line each, named; a link of the one behind brings it to the front.
        QVERIFY(window.openTraceBeside(QStringLiteral(MAPI_SAMPLE_TRACE)));
        ui::SystemView *second = window.frontSystem();
        QVERIFY(second != first);
        QVERIFY(QTest::qWaitFor([&] { return loaded(second); }, 30000));
        header->refresh();
        const QStringList lines = header->plainText().split(u'\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].startsWith(second->label()) && lines[1].startsWith(first->label()), qPrintable(lines.join(u'\n')));
        const QString failedLink = QStringLiteral("filter:%1:health:failed").arg(first->number());
        QVERIFY(header->links().contains(failedLink));
        header->activate(failedLink);
        QCOMPARE(window.frontSystem(), first);
        QCOMPARE(first->agents()->filterText(), QStringLiteral("health:failed"));
        QTRY_COMPARE(agentsTable->model()->rowCount(), failed);
        header->activate(QStringLiteral("alerts:%1").arg(second->number()));
        QCOMPARE(window.frontSystem(), second);
        QVERIFY(window.dock(QStringLiteral("alertsDock"))->isVisible());
    }
};

QTEST_MAIN(AttentionHeaderTest)
#include "tst_attention_header.moc"
