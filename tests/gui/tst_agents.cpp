// The Agents panel (table, filter language, sorting, selection, details). The models' change
// signals and the Scopes panel: tst_agent_models.cpp.
#include "AgentsTestSupport.h"

using namespace mapi;
using namespace mapi::ui;
using namespace mapi::test_agents;

class TestAgents : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void filterParses_data();
    void filterParses();
    void filterRejects_data();
    void filterRejects();
    void filterThroughLineEdit();
    void sortsByHealth();
    void ctrlClickSelectsSeveral();
    void mirrorsSelectionFromElsewhere();
};

void TestAgents::filterParses_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QStringList>("expected");
    const QString c = QStringLiteral("coordinator"), w1 = QStringLiteral("worker-1"), w2 = QStringLiteral("worker-2"),
                  w10 = QStringLiteral("worker-10"), h = QStringLiteral("data helper"), g = QStringLiteral("gone");
    auto sorted = [](QStringList l) {
        l.sort();
        return l;
    };
    QTest::newRow("empty") << QString() << sorted({c, w1, w2, w10, h, g});
    QTest::newRow("blank") << QStringLiteral("   ") << sorted({c, w1, w2, w10, h, g});
    QTest::newRow("role") << QStringLiteral("role:worker") << sorted({w1, w2, w10, g});
    QTest::newRow("case-insensitive") << QStringLiteral("ROLE:Worker") << sorted({w1, w2, w10, g});
    QTest::newRow("role is whole-word") << QStringLiteral("role:work") << QStringList();
    QTest::newRow("state") << QStringLiteral("state:busy") << sorted({w1});
    QTest::newRow("custom state") << QStringLiteral("state:failed") << sorted({w10});
    QTest::newRow("full custom state") << QStringLiteral("state:custom:failed") << sorted({w10});
    QTest::newRow("negated") << QStringLiteral("-state:stopped") << sorted({c, w1, w2, w10, h});
    QTest::newRow("health") << QStringLiteral("health:late") << sorted({w2});
    QTest::newRow("health stopped") << QStringLiteral("health:stopped") << sorted({g});
    QTest::newRow("or") << QStringLiteral("health:late OR health:failed") << sorted({w2, w10});
    QTest::newRow("or binds tighter") << QStringLiteral("role:worker health:late OR health:suspended") << sorted({w2});
    QTest::newRow("and") << QStringLiteral("role:worker -health:stopped") << sorted({w1, w2, w10});
    QTest::newRow("regex") << QStringLiteral("name:~^worker-\\d$") << sorted({w1, w2});
    QTest::newRow("regex with group") << QStringLiteral("name:~^(worker-1|gone)$") << sorted({w1, g});
    QTest::newRow("regex ci") << QStringLiteral("name:~^WORKER-1") << sorted({w1, w10});
    QTest::newRow("name substring") << QStringLiteral("name:work") << sorted({w1, w2, w10});
    QTest::newRow("bare word") << QStringLiteral("worker") << sorted({w1, w2, w10, g});
    QTest::newRow("bare regex") << QStringLiteral("~^(data|gone)") << sorted({h, g});
    QTest::newRow("bare negated") << QStringLiteral("-worker") << sorted({c, h});
    QTest::newRow("quoted bare") << QStringLiteral("\"data helper\"") << sorted({h});
    QTest::newRow("quoted value") << QStringLiteral("name:\"data helper\"") << sorted({h});
    QTest::newRow("negated quoted") << QStringLiteral("-name:\"data helper\" -worker") << sorted({c});
    QTest::newRow("quoted bare id") << QStringLiteral("\"a-w1\"") << sorted({w1, w10});
    QTest::newRow("quoted colon is text") << QStringLiteral("\"state:busy\"") << QStringList();
    QTest::newRow("scope by name") << QStringLiteral("scope:squad-a") << sorted({w1, w10});
    QTest::newRow("scope by id") << QStringLiteral("scope:s-b") << sorted({w2, h});
    QTest::newRow("scope substring") << QStringLiteral("scope:squad") << sorted({w1, w2, w10, h});
    QTest::newRow("parent by name") << QStringLiteral("parent:coordinator") << sorted({w1, w2, w10, g});
    QTest::newRow("parent by id") << QStringLiteral("parent:a-w1") << sorted({h});
    QTest::newRow("id substring") << QStringLiteral("id:a-w1") << sorted({w1, w10});
    QTest::newRow("session") << QStringLiteral("session:sess-1") << sorted({w1, w10, h});
    QTest::newRow("task") << QStringLiteral("task:t-4") << sorted({w1});
    QTest::newRow("no such task") << QStringLiteral("task:t-1") << QStringList();
    QTest::newRow("is departed") << QStringLiteral("is:departed") << sorted({g});
    QTest::newRow("not departed") << QStringLiteral("-is:departed role:worker") << sorted({w1, w2, w10});
    QTest::newRow("lower-case or is a word") << QStringLiteral("health:late or") << sorted({w2}); // "w-or-ker"
}

void TestAgents::filterParses()
{
    QFETCH(QString, query);
    QFETCH(QStringList, expected);
    SystemStore store;
    fillSmallSystem(store);
    const AgentFilter filter = AgentFilter::parse(query);
    QVERIFY2(filter.isValid(), qPrintable(filter.errorString()));
    QCOMPARE(filter.errorPosition(), -1);
    QCOMPARE(namesMatching(filter, store), expected);
}

void TestAgents::filterRejects_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("position");
    QTest::newRow("unknown key") << QStringLiteral("role:worker colour:red") << QStringLiteral("Unknown key 'colour'") << 12;
    QTest::newRow("unterminated quote") << QStringLiteral("name:\"data helper") << QStringLiteral("Unterminated quote") << 5;
    QTest::newRow("invalid regex") << QStringLiteral("name:~(worker") << QStringLiteral("Invalid regular expression '(worker'")
                                   << 13;
    QTest::newRow("empty regex") << QStringLiteral("name:~") << QStringLiteral("Empty regular expression") << 5;
    QTest::newRow("unknown health") << QStringLiteral("health:sick") << QStringLiteral("Unknown health 'sick'") << 7;
    QTest::newRow("missing value") << QStringLiteral("role:") << QStringLiteral("Missing value after 'role:'") << 5;
    QTest::newRow("missing key") << QStringLiteral(":worker") << QStringLiteral("Missing key") << 0;
    QTest::newRow("leading OR") << QStringLiteral("OR role:worker") << QStringLiteral("OR needs a term on its left") << 0;
    QTest::newRow("double OR") << QStringLiteral("a OR OR b") << QStringLiteral("OR needs a term on its left") << 5;
    QTest::newRow("trailing OR") << QStringLiteral("role:worker OR") << QStringLiteral("OR needs a term on its right") << 12;
    QTest::newRow("lone dash") << QStringLiteral("- role:worker") << QStringLiteral("'-' must be followed by a term") << 0;
    QTest::newRow("parentheses") << QStringLiteral("(role:worker OR role:x)") << QStringLiteral("Parentheses are not supported")
                                 << 0;
    QTest::newRow("is regex") << QStringLiteral("is:~dep") << QStringLiteral("is: takes a word") << 3;
    QTest::newRow("unknown is") << QStringLiteral("is:gone") << QStringLiteral("Unknown is:gone") << 3;
    QTest::newRow("empty quotes") << QStringLiteral("\"\"") << QStringLiteral("Empty quotes") << 0;
}

void TestAgents::filterRejects()
{
    QFETCH(QString, query);
    QFETCH(QString, message);
    QFETCH(int, position);
    SystemStore store;
    fillSmallSystem(store);
    const AgentFilter filter = AgentFilter::parse(query);
    QVERIFY(!filter.isValid());
    QVERIFY2(filter.errorString().startsWith(message), qPrintable(filter.errorString()));
    QCOMPARE(filter.errorPosition(), position);
    QVERIFY(namesMatching(filter, store).isEmpty()); // an invalid filter matches nothing
}

void TestAgents::filterThroughLineEdit()
{
    InspectorSession session;
    SelectionHub hub;
    AgentsPanel panel(&session, &hub);
    panel.resize(1000, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fillSmallSystem(*session.store());

    auto *edit = panel.findChild<QLineEdit *>(QStringLiteral("agentFilter"));
    auto *view = panel.findChild<QTableView *>(QStringLiteral("agentsTable"));
    auto *showDeparted = panel.findChild<QCheckBox *>(QStringLiteral("showDeparted"));
    QVERIFY(edit && view && showDeparted);
    const QAbstractItemModel *rows = view->model();
    // Departed agents are hidden by default (a restarted server's previous run would double the
    // list), and the count says so.
    QVERIFY(!showDeparted->isChecked());
    QCOMPARE(rows->rowCount(), 5);
    QVERIFY2(panel.findChild<QLabel *>(QStringLiteral("agentCount"))->text().contains(QLatin1String("1 departed hidden")),
             qPrintable(panel.findChild<QLabel *>(QStringLiteral("agentCount"))->text()));
    QTest::mouseClick(showDeparted, Qt::LeftButton, Qt::NoModifier, QPoint(5, showDeparted->height() / 2));
    QVERIFY(showDeparted->isChecked());
    QCOMPARE(rows->rowCount(), 6);

    panel.focusFilter();
    QTest::keyClicks(edit, QStringLiteral("role:worker -health:stopped"));
    QCOMPARE(rows->rowCount(), 6); // debounced: nothing applied on the keystroke itself
    QTRY_COMPARE(rows->rowCount(), 3);
    QCOMPARE(column(rows, AgentTableModel::NameColumn),
             (QStringList{QStringLiteral("worker-1"), QStringLiteral("worker-2"), QStringLiteral("worker-10")}));
    QVERIFY(edit->styleSheet().isEmpty());

    // A query that does not parse: red border, the reason in the tooltip, the last good
    // filter stays applied.
    edit->selectAll();
    QTest::keyClicks(edit, QStringLiteral("colour:red"));
    QTRY_VERIFY(edit->toolTip().contains(QLatin1String("Unknown key 'colour'")));
    QVERIFY(edit->styleSheet().contains(QLatin1String("border")));
    QCOMPARE(rows->rowCount(), 3);
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("agentCount"))->text().contains(QLatin1String("previous filter")));

    // Enter applies at once, without waiting for the debounce.
    edit->selectAll();
    QTest::keyClicks(edit, QStringLiteral("health:failed OR is:departed"));
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(column(rows, AgentTableModel::NameColumn),
             (QStringList{QStringLiteral("gone (departed)"), QStringLiteral("worker-10")}));
    QVERIFY(edit->styleSheet().isEmpty());

    // "Show departed" off hides departed agents whatever the query.
    QTest::mouseClick(showDeparted, Qt::LeftButton, Qt::NoModifier, QPoint(5, showDeparted->height() / 2));
    QVERIFY(!showDeparted->isChecked());
    QCOMPARE(column(rows, AgentTableModel::NameColumn), QStringList{QStringLiteral("worker-10")});
    edit->clear();
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(rows->rowCount(), 5);
}

void TestAgents::sortsByHealth()
{
    InspectorSession session;
    SelectionHub hub;
    AgentsPanel panel(&session, &hub);
    panel.resize(1000, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.findChild<QCheckBox *>(QStringLiteral("showDeparted"))->setChecked(true); // "gone" listed too
    fillSmallSystem(*session.store());
    auto *view = panel.findChild<QTableView *>(QStringLiteral("agentsTable"));
    QHeaderView *header = view->horizontalHeader();

    // First click on the Health header: worst first.
    const int x = header->sectionViewportPosition(AgentTableModel::HealthColumn) + header->sectionSize(AgentTableModel::HealthColumn) / 2;
    QTest::mouseClick(header->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, header->height() / 2));
    QCOMPARE(header->sortIndicatorSection(), int(AgentTableModel::HealthColumn));
    QCOMPARE(column(view->model(), AgentTableModel::HealthColumn),
             (QStringList{QStringLiteral("failed"), QStringLiteral("late"), QStringLiteral("suspended"), QStringLiteral("healthy"),
                          QStringLiteral("healthy"), QStringLiteral("stopped")}));
    // Equal health falls back to the name.
    QCOMPARE(view->model()->index(3, AgentTableModel::NameColumn).data().toString(), QStringLiteral("coordinator"));
    QCOMPARE(view->model()->index(4, AgentTableModel::NameColumn).data().toString(), QStringLiteral("worker-1"));

    // A live change re-sorts: worker-1 fails and moves up to the failed one.
    session.store()->apply(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-w1"), kLaterMs, QStringLiteral("failed")));
    session.store()->advanceTime(kLaterMs);
    session.store()->flushChanges();
    QCOMPARE(column(view->model(), AgentTableModel::NameColumn).mid(0, 2),
             (QStringList{QStringLiteral("worker-1"), QStringLiteral("worker-10")}));

    // Second click: best first.
    QTest::mouseClick(header->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, header->height() / 2));
    QCOMPARE(view->model()->index(0, AgentTableModel::HealthColumn).data().toString(), QStringLiteral("stopped"));
}

void TestAgents::ctrlClickSelectsSeveral()
{
    InspectorSession session;
    SelectionHub hub;
    AgentsPanel panel(&session, &hub);
    panel.resize(1000, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.findChild<QCheckBox *>(QStringLiteral("showDeparted"))->setChecked(true); // "gone" listed too
    fillSmallSystem(*session.store());
    auto *view = panel.findChild<QTableView *>(QStringLiteral("agentsTable"));
    QSignalSpy hubSpy(&hub, &SelectionHub::agentSelectionChanged);

    // Sorted by name: coordinator, data helper, gone, worker-1, worker-2, worker-10.
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, rowCenter(view, 0));
    QCOMPARE(hub.selectedAgents(), QStringList{QStringLiteral("a-coord")});
    QCOMPARE(hub.focusKind(), SelectionHub::Kind::Agent);
    QCOMPARE(hub.focusKey(), QStringLiteral("a-coord"));
    QCOMPARE(hubSpy.last().at(1).value<QObject *>(), &panel);

    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, rowCenter(view, 3));
    QCOMPARE(hub.selectedAgents(), (QStringList{QStringLiteral("a-coord"), QStringLiteral("a-w1")}));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, rowCenter(view, 4));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, rowCenter(view, 5));
    QCOMPARE(hub.selectedAgents(),
             (QStringList{QStringLiteral("a-coord"), QStringLiteral("a-w1"), QStringLiteral("a-w2"), QStringLiteral("a-w10")}));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, rowCenter(view, 0));
    QCOMPARE(hub.selectedAgents(), (QStringList{QStringLiteral("a-w1"), QStringLiteral("a-w2"), QStringLiteral("a-w10")}));
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("agentCount"))->text().contains(QLatin1String("3 selected")));
}

void TestAgents::mirrorsSelectionFromElsewhere()
{
    InspectorSession session;
    SelectionHub hub;
    AgentsPanel panel(&session, &hub);
    panel.resize(1000, 120); // short: the selected rows are scrolled into view
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fillSmallSystem(*session.store());
    auto *view = panel.findChild<QTableView *>(QStringLiteral("agentsTable"));
    QSignalSpy hubSpy(&hub, &SelectionHub::agentSelectionChanged);

    QObject topology; // stands for another panel
    hub.selectAgents({QStringLiteral("a-w10"), QStringLiteral("a-w2")}, &topology);
    QCOMPARE(hubSpy.count(), 1); // the panel did not echo it back
    QStringList selectedIds;
    for (const QModelIndex &index : view->selectionModel()->selectedRows())
        selectedIds << index.data(AgentTableModel::AgentIdRole).toString();
    selectedIds.sort();
    QCOMPARE(selectedIds, (QStringList{QStringLiteral("a-w10"), QStringLiteral("a-w2")}));
    QCOMPARE(view->currentIndex().data(AgentTableModel::AgentIdRole).toString(), QStringLiteral("a-w2")); // topmost
    QVERIFY(view->viewport()->rect().intersects(view->visualRect(view->currentIndex())));
    QCOMPARE(hub.selectedAgents(), (QStringList{QStringLiteral("a-w10"), QStringLiteral("a-w2")}));

    hub.selectAgents({}, &topology);
    QVERIFY(!view->selectionModel()->hasSelection());
}

QTEST_MAIN(TestAgents)
#include "tst_agents.moc"
