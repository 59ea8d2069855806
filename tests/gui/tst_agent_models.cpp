// The agent and scope models: rows inserted and changed in ranges, relative times refreshed,
// the model tester over a capture, the scope tree kept up to date, and the Scopes panel's clicks.
#include "AgentsTestSupport.h"

using namespace mapi;
using namespace mapi::ui;
using namespace mapi::test_agents;

class TestAgentModels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void showsAgentDetails();
    void insertsNewAgentsOnePerBatch();
    void changedRowsBecomeRanges();
    void lastActivityRefreshesOncePerSecond();
    void activityAloneRefreshesItsColumnOnly();
    void modelsPassTheTesterOverACapture();
    void scopeTreeUpdatesIncrementally();
    void scopesPanelClicksSelect();
};

void TestAgentModels::showsAgentDetails()
{
    SystemStore store;
    fillSmallSystem(store);
    AgentTableModel model(&store);
    const auto cell = [&](const char *id, int column, int role = Qt::DisplayRole) {
        return model.index(store.agentRow(QLatin1String(id)), column).data(role);
    };
    // Each column under its own title (the titles are a list in column order: a reordered enum shows here).
    const std::pair<int, const char *> titles[] = {
        {AgentTableModel::NameColumn, "Name"},           {AgentTableModel::HealthColumn, "Health"},
        {AgentTableModel::StateColumn, "State"},         {AgentTableModel::RoleColumn, "Role"},
        {AgentTableModel::ParentColumn, "Parent"},       {AgentTableModel::ScopesColumn, "Scopes"},
        {AgentTableModel::LastActivityColumn, "Last activity"}, {AgentTableModel::TaskColumn, "Current task"},
        {AgentTableModel::SessionColumn, "Session"},     {AgentTableModel::TokensColumn, "Tokens"},
        {AgentTableModel::CostColumn, "Cost"},           {AgentTableModel::IdColumn, "Id"},
        {AgentTableModel::SystemColumn, "System"},
    };
    QCOMPARE(int(std::size(titles)), int(AgentTableModel::ColumnCount));
    for (const auto &[column, title] : titles)
        QCOMPARE(model.headerData(column, Qt::Horizontal).toString(), QString::fromLatin1(title));
    QCOMPARE(cell("a-w1", AgentTableModel::TaskColumn).toString(), QStringLiteral("t-42 (40 %)"));
    QCOMPARE(cell("a-w1", AgentTableModel::TokensColumn).toString(), QLocale().toString(qint64(12345)));
    QCOMPARE(cell("a-w1", AgentTableModel::TokensColumn, AgentTableModel::SortRole).toLongLong(), 12345);
    QCOMPARE(cell("a-w1", AgentTableModel::CostColumn).toString(), QStringLiteral("$") + QLocale().toString(0.0123, 'f', 4));
    QCOMPARE(cell("a-w2", AgentTableModel::TokensColumn, AgentTableModel::SortRole).toLongLong(), -1); // not reported
    QCOMPARE(cell("a-helper", AgentTableModel::ParentColumn).toString(), QStringLiteral("worker-1"));
    QCOMPARE(cell("a-w1", AgentTableModel::ScopesColumn).toString(), QStringLiteral("squad-a"));
    QCOMPARE(cell("a-w1", AgentTableModel::SessionColumn).toString(), QStringLiteral("sess-1"));
    QCOMPARE(cell("a-w10", AgentTableModel::HealthColumn).toString(), QStringLiteral("failed"));
    QVERIFY(!cell("a-w10", AgentTableModel::HealthColumn, Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(cell("a-w10", AgentTableModel::HealthColumn, AgentTableModel::HealthRole).toInt(), int(Health::Failed));

    // Departed: marked in the text, greyed and italic.
    QCOMPARE(cell("a-gone", AgentTableModel::NameColumn).toString(), QStringLiteral("gone (departed)"));
    QVERIFY(cell("a-gone", AgentTableModel::NameColumn, AgentTableModel::InactiveRole).toBool());
    QVERIFY(cell("a-gone", AgentTableModel::StateColumn, Qt::FontRole).value<QFont>().italic());
    QCOMPARE(cell("a-gone", AgentTableModel::StateColumn, Qt::ForegroundRole).value<QColor>(), inactiveTextColor());
    QVERIFY(!cell("a-w1", AgentTableModel::NameColumn, Qt::ForegroundRole).isValid());

    // A placeholder (a parent never described) reads as such.
    store.apply(agentsSnapshot({agentRecord("a-orphan", "orphan", "worker", "idle", "a-ghost", "sess-o", {})}, kLaterMs));
    store.flushChanges();
    QCOMPARE(cell("a-ghost", AgentTableModel::NameColumn).toString(), QStringLiteral("a-ghost (placeholder)"));
    QCOMPARE(cell("a-orphan", AgentTableModel::ParentColumn).toString(), QStringLiteral("a-ghost"));
}

void TestAgentModels::insertsNewAgentsOnePerBatch()
{
    SystemStore store;
    fillSmallSystem(store);
    AgentTableModel model(&store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);

    store.apply(agentsSnapshot({agentRecord("a-n1", "new-1", "worker", "idle", "a-coord", "sess-n", {}),
                                agentRecord("a-n2", "new-2", "worker", "idle", "a-coord", "sess-n", {}),
                                agentRecord("a-n3", "new-3", "worker", "idle", "", "sess-n", {})},
                               kLaterMs));
    store.flushChanges();
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.at(0).at(1).toInt(), 6);
    QCOMPARE(inserted.at(0).at(2).toInt(), 8);
    QCOMPARE(model.rowCount(), 9);
    QCOMPARE(model.index(8, AgentTableModel::NameColumn).data().toString(), QStringLiteral("new-3"));

    // The same through the panel's proxy: filtered rows still arrive in one go.
    AgentFilterProxy proxy;
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&model);
    QVERIFY(proxy.setFilter(AgentFilter::parse(QStringLiteral("name:~^new"))));
    QCOMPARE(proxy.rowCount(), 3);
    QSignalSpy proxyInserted(&proxy, &QAbstractItemModel::rowsInserted);
    store.apply(agentsSnapshot({agentRecord("a-n4", "new-4", "worker", "idle", "", "sess-n", {}),
                                agentRecord("a-x", "other", "worker", "idle", "", "sess-n", {}),
                                agentRecord("a-n5", "new-5", "worker", "idle", "", "sess-n", {})},
                               kLaterMs));
    store.flushChanges();
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(proxy.rowCount(), 5);
    QCOMPARE(proxyInserted.count(), 1); // new-4 and new-5 land next to each other
}

void TestAgentModels::changedRowsBecomeRanges()
{
    SystemStore store;
    fillSmallSystem(store);
    store.apply(agentsSnapshot({agentRecord("a-n1", "new-1", "worker", "idle", "", "sess-n", {}),
                                agentRecord("a-n2", "new-2", "worker", "idle", "", "sess-n", {})},
                               kLaterMs));
    store.flushChanges(); // 8 agents
    AgentTableModel model(&store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    // Rows 1, 2 and 4 change: two ranges, 1–2 and 4–4.
    for (const char *id : {"a-w1", "a-w2", "a-helper"})
        store.apply(agentEvent(EventKind::AgentStateChanged, QLatin1String(id), kLaterMs + 1, QStringLiteral("busy")));
    store.flushChanges();
    QCOMPARE(changed.count(), 2);
    QSet<QPair<int, int>> ranges;
    for (const QList<QVariant> &signal : std::as_const(changed)) {
        const auto topLeft = signal.at(0).value<QModelIndex>(), bottomRight = signal.at(1).value<QModelIndex>();
        QCOMPARE(topLeft.column(), 0);
        QCOMPARE(bottomRight.column(), AgentTableModel::ColumnCount - 1);
        ranges.insert({topLeft.row(), bottomRight.row()});
    }
    QCOMPARE(ranges, (QSet<QPair<int, int>>{{1, 2}, {4, 4}}));

    // More than half (5 of 8): one signal over the whole table.
    changed.clear();
    for (const char *id : {"a-coord", "a-w2", "a-w10", "a-n1", "a-n2"})
        store.apply(agentEvent(EventKind::AgentStateChanged, QLatin1String(id), kLaterMs + 2, QStringLiteral("idle")));
    store.flushChanges();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>(), model.index(0, 0));
    QCOMPARE(changed.at(0).at(1).value<QModelIndex>(), model.index(7, AgentTableModel::ColumnCount - 1));

    // A rename also refreshes the Parent column of everyone (children show the new name).
    changed.clear();
    AgentRecord renamed;
    renamed.id = QStringLiteral("a-coord");
    renamed.name = QStringLiteral("boss");
    store.apply(agentsSnapshot({renamed}, kLaterMs + 3));
    store.flushChanges();
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.at(1).at(0).value<QModelIndex>(), model.index(0, AgentTableModel::ParentColumn));
    QCOMPARE(changed.at(1).at(1).value<QModelIndex>(), model.index(7, AgentTableModel::ParentColumn));
    QCOMPARE(model.index(store.agentRow(QStringLiteral("a-w1")), AgentTableModel::ParentColumn).data().toString(),
             QStringLiteral("boss"));
}

void TestAgentModels::lastActivityRefreshesOncePerSecond()
{
    SystemStore store;
    fillSmallSystem(store);
    AgentTableModel model(&store);
    const int w2 = store.agentRow(QStringLiteral("a-w2"));
    // Listed but never heard from: no last activity to show.
    QCOMPARE(model.index(w2, AgentTableModel::LastActivityColumn).data().toString(), QStringLiteral("\u2014"));
    QCOMPARE(healthName(store.agent(QStringLiteral("a-w2"))->health), QStringLiteral("late")); // 40 s since first sight
    store.apply({agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-w2"), kStartMs, QStringLiteral("idle"))});
    store.flushChanges();
    QCOMPARE(model.index(w2, AgentTableModel::LastActivityColumn).data().toString(), QStringLiteral("40 s ago"));

    store.advanceTime(kLaterMs + 5000); // no health changes at +5 s
    store.flushChanges();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 2 * AgentTableModel::kRelativeTimeRefreshMs + 500);
    const QList<QVariant> signal = changed.takeFirst();
    QCOMPARE(signal.at(0).value<QModelIndex>(), model.index(0, AgentTableModel::LastActivityColumn));
    QCOMPARE(signal.at(1).value<QModelIndex>(), model.index(5, AgentTableModel::LastActivityColumn));
    QVERIFY(!signal.at(2).value<QList<int>>().contains(AgentTableModel::SortRole)); // no re-sort needed
    QCOMPARE(model.index(w2, AgentTableModel::LastActivityColumn).data().toString(), QStringLiteral("45 s ago"));
    QCOMPARE(model.index(w2, AgentTableModel::LastActivityColumn).data(AgentTableModel::SortRole).toLongLong(), kStartMs);

    // The clock stands still (a replayed trace): nothing more to announce.
    QTest::qWait(AgentTableModel::kRelativeTimeRefreshMs + 300);
    QCOMPARE(changed.count(), 0);
}

// A message moves only its sender's last activity: the table announces that column alone, so a
// proxy sorted by name does not re-sort 10,000 rows at each notification of a flood; sorted by
// last activity, it still does.
void TestAgentModels::activityAloneRefreshesItsColumnOnly()
{
    SystemStore store;
    fillSmallSystem(store);
    AgentTableModel model(&store);
    AgentFilterProxy proxy;
    proxy.setSourceModel(&model);
    proxy.sort(AgentTableModel::LastActivityColumn, Qt::DescendingOrder);
    QVERIFY(proxy.index(0, AgentTableModel::NameColumn).data().toString() != QStringLiteral("worker-2"));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    const int w2 = store.agentRow(QStringLiteral("a-w2"));
    store.apply(ModelInputs{conventionMessage("m-3", "a-w2", "a-gone", {{"text", "hello"}}, kLaterMs + 2000)});
    store.flushChanges();
    // The sender and the recipient were active; nothing else of theirs changed.
    QSet<int> rows;
    for (const QList<QVariant> &signal : std::as_const(changed)) {
        const QModelIndex topLeft = signal.at(0).value<QModelIndex>(), bottomRight = signal.at(1).value<QModelIndex>();
        QCOMPARE(topLeft.column(), int(AgentTableModel::LastActivityColumn));
        QCOMPARE(bottomRight.column(), int(AgentTableModel::LastActivityColumn));
        for (int row = topLeft.row(); row <= bottomRight.row(); ++row)
            rows.insert(row);
    }
    QCOMPARE(rows, (QSet<int>{w2, store.agentRow(QStringLiteral("a-gone"))}));
    QCOMPARE(proxy.index(0, AgentTableModel::NameColumn).data().toString(), QStringLiteral("worker-2"));
}

void TestAgentModels::modelsPassTheTesterOverACapture()
{
    SystemStore store;
    AgentTableModel agents(&store);
    AgentFilterProxy proxy;
    ScopeTreeModel scopes(&store);
    QAbstractItemModelTester agentsTester(&agents, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester scopesTester(&scopes, QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&agents);
    proxy.sort(AgentTableModel::HealthColumn);
    QVERIFY(proxy.setFilter(AgentFilter::parse(QStringLiteral("-role:coordinator"))));

    mapi::test::fillFromCapture(store);
    QCOMPARE(agents.rowCount(), 20);
    QCOMPARE(proxy.rowCount(), 19);
    QCOMPARE(scopes.rowCount(), 2); // project (holding squad-a and squad-b), and "temp", deleted
    QCOMPARE(scopes.index(1, 0).data().toString(), QStringLiteral("temp (deleted)"));
    const QModelIndex project = scopes.index(0, 0);
    QCOMPARE(project.data().toString(), QStringLiteral("project"));
    QCOMPARE(scopes.index(0, ScopeTreeModel::MembersColumn).data().toInt(), 7);
    QCOMPARE(scopes.rowCount(project), 2 + 7);
    QCOMPARE(scopes.index(0, 0, project).data().toString(), QStringLiteral("squad-a"));
    QCOMPARE(scopes.rowCount(scopes.index(0, 0, project)), 9);
    // squad-a holds the failed sub-agent: its worst health is "failed".
    QCOMPARE(Health(scopes.index(0, ScopeTreeModel::MembersColumn, project).data(ScopeTreeModel::HealthRole).toInt()),
             Health::Failed);

    proxy.setShowDeparted(false);
    QCOMPARE(proxy.rowCount(), 13); // seven departed agents hidden (one is the coordinator)
    proxy.sort(AgentTableModel::LastActivityColumn, Qt::DescendingOrder);

    store.reset();
    QCOMPARE(agents.rowCount(), 0);
    QCOMPARE(proxy.rowCount(), 0);
    QCOMPARE(scopes.rowCount(), 0);
    mapi::test::fillFromCapture(store);
    QCOMPARE(agents.rowCount(), 20);
    QCOMPARE(scopes.rowCount(), 2);
}

void TestAgentModels::scopeTreeUpdatesIncrementally()
{
    SystemStore store;
    ScopeTreeModel model(&store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QTreeView view;
    view.setModel(&model);
    fillSmallSystem(store);
    QCOMPARE(treeShape(&model), QStringLiteral("s-project[s-a[a-w1,a-w10],s-b[a-helper,a-w2],a-coord]"));

    const QPersistentModelIndex squadA = model.indexOfScope(QStringLiteral("s-a"));
    view.expand(model.indexOfScope(QStringLiteral("s-project")));
    view.expand(squadA);
    view.setCurrentIndex(model.index(1, 0, squadA)); // a-w10
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);

    // A member joins squad-a, one leaves squad-b, a sub-scope appears under squad-a.
    ModelInputs batch;
    batch.push_back(membershipEvent(EventKind::ScopeMemberJoined, "s-a", "a-helper", kLaterMs + 1));
    batch.push_back(membershipEvent(EventKind::ScopeMemberLeft, "s-b", "a-w2", kLaterMs + 1));
    std::vector<ScopeRecord> scopes = baseScopes();
    scopes.push_back(scopeRecord("s-a1", "squad-a/1", "s-a"));
    batch.push_back(scopesSnapshot(scopes, kLaterMs + 1));
    store.apply(batch);
    store.flushChanges();
    QCOMPARE(treeShape(&model), QStringLiteral("s-project[s-a[s-a1,a-helper,a-w1,a-w10],s-b[a-helper],a-coord]"));
    QCOMPARE(resets.count(), 0);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(inserted.count(), 1); // s-a1 and a-helper are adjacent: one range
    QVERIFY(squadA.isValid());
    QCOMPARE(squadA.data().toString(), QStringLiteral("squad-a"));
    QVERIFY(view.isExpanded(squadA));
    QCOMPARE(view.currentIndex().data(ScopeTreeModel::IdRole).toString(), QStringLiteral("a-w10"));
    QCOMPARE(model.index(squadA.row(), ScopeTreeModel::MembersColumn, squadA.parent()).data().toInt(), 3);

    // squad-b moves under squad-a; squad-a/1 is deleted (greyed, kept).
    scopes = baseScopes();
    scopes[2] = scopeRecord("s-b", "squad-b", "s-a");
    store.apply(scopesSnapshot(scopes, kLaterMs + 2));
    store.flushChanges();
    QCOMPARE(treeShape(&model), QStringLiteral("s-project[s-a[s-a1,s-b[a-helper],a-helper,a-w1,a-w10],a-coord]"));
    const QModelIndex deleted = model.indexOfScope(QStringLiteral("s-a1"));
    QCOMPARE(deleted.data().toString(), QStringLiteral("squad-a/1 (deleted)"));
    QVERIFY(deleted.data(Qt::FontRole).value<QFont>().italic());
    QVERIFY(view.isExpanded(squadA));

    // A renamed member moves to its new place by name: one row out, one row in.
    removed.clear();
    inserted.clear();
    AgentRecord renamed;
    renamed.id = QStringLiteral("a-w1");
    renamed.name = QStringLiteral("zed");
    store.apply(agentsSnapshot({renamed}, kLaterMs + 2));
    store.flushChanges();
    QCOMPARE(treeShape(&model), QStringLiteral("s-project[s-a[s-a1,s-b[a-helper],a-helper,a-w10,a-w1],a-coord]"));
    QCOMPARE(removed.count(), 1);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(resets.count(), 0);
    QCOMPARE(view.currentIndex().data(ScopeTreeModel::IdRole).toString(), QStringLiteral("a-w10"));

    // A scope whose parent is not known yet waits at the top level, and moves under its parent
    // when that appears (only the parent is in the batch).
    store.apply(scopeCreated("s-y", "squad-y", "s-late", kLaterMs + 3));
    store.flushChanges();
    QCOMPARE(treeShape(&model), QStringLiteral("s-project[s-a[s-a1,s-b[a-helper],a-helper,a-w10,a-w1],a-coord],s-y"));
    store.apply(scopeCreated("s-late", "late", "s-a", kLaterMs + 4));
    store.flushChanges();
    QCOMPARE(treeShape(&model),
             QStringLiteral("s-project[s-a[s-late[s-y],s-a1,s-b[a-helper],a-helper,a-w10,a-w1],a-coord]"));

    // A parent cycle sent by a buggy server does not hang or lose scopes: the scopes in it, and
    // those below it, go to the top level.
    store.apply(scopeCreated("s-project", "project", "s-b", kLaterMs + 5));
    store.flushChanges();
    QCOMPARE(treeShape(&model),
             QStringLiteral("s-late,s-project[a-coord],s-a[a-helper,a-w10,a-w1],s-a1,s-b[a-helper],s-y"));

    // Agent changes repaint their rows and their scopes' rows only.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    store.apply(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-coord"), kLaterMs + 6, QStringLiteral("busy")));
    store.flushChanges();
    QCOMPARE(changed.count(), 2); // a-coord under s-project, and s-project
}

void TestAgentModels::scopesPanelClicksSelect()
{
    InspectorSession session;
    SelectionHub hub;
    ScopesPanel panel(&session, &hub);
    panel.resize(400, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fillSmallSystem(*session.store());
    auto *view = panel.findChild<QTreeView *>(QStringLiteral("scopesTree"));
    QVERIFY(view);
    const QModelIndex project = view->model()->index(0, 0);
    QVERIFY(view->isExpanded(project)); // top-level scopes open as they appear
    const QModelIndex squadA = view->model()->index(0, 0, project);
    QVERIFY(!view->isExpanded(squadA));

    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, view->visualRect(squadA).center());
    QCOMPARE(hub.focusKind(), SelectionHub::Kind::Scope);
    QCOMPARE(hub.focusKey(), QStringLiteral("s-a"));

    view->expand(squadA);
    const QModelIndex worker10 = view->model()->index(1, 0, squadA);
    QCOMPARE(worker10.data(ScopeTreeModel::IdRole).toString(), QStringLiteral("a-w10"));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, view->visualRect(worker10).center());
    QCOMPARE(hub.selectedAgents(), QStringList{QStringLiteral("a-w10")});
    QCOMPARE(hub.focusKind(), SelectionHub::Kind::Agent);
    QCOMPARE(hub.focusKey(), QStringLiteral("a-w10"));

    // A scope focused elsewhere becomes the tree's current row.
    QObject inspector;
    hub.focus(SelectionHub::Kind::Scope, QStringLiteral("s-b"), &inspector);
    QCOMPARE(view->currentIndex().data(ScopeTreeModel::IdRole).toString(), QStringLiteral("s-b"));
}

QTEST_MAIN(TestAgentModels)
#include "tst_agent_models.moc"
