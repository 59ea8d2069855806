// The Agents panel (table, filter language, selection) and the Scopes panel (scope tree).
#include "GuiTestSupport.h"

#include "models/AgentFilter.h"
#include "models/AgentTableModel.h"
#include "models/ScopeTreeModel.h"
#include "panels/AgentsPanel.h"
#include "panels/ScopesPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QFont>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeView>
#include <QtTest>

#include <algorithm>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr qint64 kStartMs = 1'800'000'000'000;
constexpr qint64 kLaterMs = kStartMs + 40'000; // past one 30 s health interval

AgentRecord agentRecord(const char *id, const char *name, const char *role, const char *state, const char *parent,
                        const char *session, const QStringList &scopes)
{
    AgentRecord r;
    r.id = QLatin1String(id);
    r.name = QString::fromUtf8(name);
    r.role = QLatin1String(role);
    r.state = QLatin1String(state);
    if (*parent)
        r.parentId = QLatin1String(parent);
    r.sessionId = QLatin1String(session);
    r.scopes = scopes;
    return r;
}

ScopeRecord scopeRecord(const char *id, const char *name, const char *parent)
{
    ScopeRecord r;
    r.id = QLatin1String(id);
    r.name = QLatin1String(name);
    if (*parent)
        r.parentId = QLatin1String(parent);
    return r;
}

ModelInput agentEvent(EventKind kind, const QString &agentId, qint64 timeMs, const QString &state = QString())
{
    EventInput input;
    input.event.kind = kind;
    input.event.agentId = agentId;
    input.event.timestampMs = timeMs;
    if (!state.isEmpty()) {
        AgentRecord r;
        r.id = agentId;
        r.state = state;
        input.event.agent = r;
    }
    input.receivedMs = timeMs;
    return input;
}

ModelInput membershipEvent(EventKind kind, const char *scopeId, const char *agentId, qint64 timeMs)
{
    EventInput input;
    input.event.kind = kind;
    input.event.scopeId = QLatin1String(scopeId);
    input.event.agentId = QLatin1String(agentId);
    input.event.timestampMs = timeMs;
    input.receivedMs = timeMs;
    return input;
}

// A message from `from` to `to` carrying a seed-convention payload (bare format).
ModelInput conventionMessage(const char *id, const char *from, const char *to, const Json &payload, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::MessageSent;
    input.event.timestampMs = timeMs;
    MessageRecord message;
    message.id = QLatin1String(id);
    message.from = QLatin1String(from);
    message.to = Json(to);
    message.setPayload(payload);
    message.timestampMs = timeMs;
    input.event.message = message;
    input.receivedMs = timeMs;
    return input;
}

ModelInput scopeCreated(const char *id, const char *name, const char *parent, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::ScopeCreated;
    input.event.scope = scopeRecord(id, name, parent);
    input.event.timestampMs = timeMs;
    input.receivedMs = timeMs;
    return input;
}

ModelInput scopesSnapshot(const std::vector<ScopeRecord> &scopes, qint64 timeMs)
{
    ScopesSnapshot snapshot;
    snapshot.data.scopes = scopes;
    snapshot.timeMs = timeMs;
    return snapshot;
}

ModelInput agentsSnapshot(const std::vector<AgentRecord> &agents, qint64 timeMs)
{
    AgentsSnapshot snapshot;
    snapshot.data.agents = agents;
    snapshot.timeMs = timeMs;
    snapshot.complete = false; // adds, never retires
    return snapshot;
}

const std::vector<ScopeRecord> &baseScopes()
{
    static const std::vector<ScopeRecord> scopes = {
        scopeRecord("s-project", "project", ""),
        scopeRecord("s-a", "squad-a", "s-project"),
        scopeRecord("s-b", "squad-b", "s-project"),
    };
    return scopes;
}

// Six agents, one per interesting case:
//   coordinator  healthy      worker-1  healthy, busy     worker-2  late (silent 40 s)
//   worker-10    failed       data helper  suspended      gone      departed (unregistered)
// worker-1 works on task t-42 (40 %) and reported 12345 tokens, $0.0123.
void fillSmallSystem(SystemStore &store)
{
    const QStringList project{QStringLiteral("s-project")}, a{QStringLiteral("s-a")}, b{QStringLiteral("s-b")};
    ModelInputs inputs;
    inputs.push_back(scopesSnapshot(baseScopes(), kStartMs));
    inputs.push_back(agentsSnapshot({agentRecord("a-coord", "coordinator", "coordinator", "idle", "", "sess-c", project),
                                     agentRecord("a-w1", "worker-1", "worker", "busy", "a-coord", "sess-1", a),
                                     agentRecord("a-w2", "worker-2", "worker", "idle", "a-coord", "sess-2", b),
                                     agentRecord("a-w10", "worker-10", "worker", "custom:failed", "a-coord", "sess-10", a),
                                     agentRecord("a-helper", "data helper", "subagent", "suspended", "a-w1", "sess-1", b),
                                     agentRecord("a-gone", "gone", "worker", "stopped", "a-coord", "sess-g", {})},
                                    kStartMs));
    inputs.push_back(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-coord"), kLaterMs, QStringLiteral("idle")));
    inputs.push_back(agentEvent(EventKind::AgentStateChanged, QStringLiteral("a-w1"), kLaterMs, QStringLiteral("busy")));
    inputs.push_back(agentEvent(EventKind::AgentUnregistered, QStringLiteral("a-gone"), kLaterMs));
    inputs.push_back(conventionMessage("m-1", "a-w1", "a-coord", {{"type", "TASK_ACCEPT"}, {"task_id", "t-42"}}, kLaterMs));
    inputs.push_back(conventionMessage("m-2", "a-w1", "a-coord",
                                       {{"type", "STATUS_UPDATE"},
                                        {"task_id", "t-42"},
                                        {"progress", 40},
                                        {"resource_usage", {{"tokens_used", 12345}, {"cost_usd", 0.0123}}}},
                                       kLaterMs));
    store.apply(inputs);
    store.advanceTime(kLaterMs);
    store.flushChanges();
}

QStringList namesMatching(const AgentFilter &filter, const SystemStore &store)
{
    QStringList names;
    for (const Agent &agent : store.agents())
        if (filter.matches(agent, store))
            names << agent.name;
    names.sort();
    return names;
}

QStringList column(const QAbstractItemModel *model, int col, int role = Qt::DisplayRole)
{
    QStringList out;
    for (int row = 0; row < model->rowCount(); ++row)
        out << model->index(row, col).data(role).toString();
    return out;
}

QPoint rowCenter(QTableView *view, int row)
{
    return view->visualRect(view->model()->index(row, AgentTableModel::NameColumn)).center();
}

// "name[child,child…]" for a tree, to compare structures in one QCOMPARE.
QString treeShape(const QAbstractItemModel *model, const QModelIndex &parent = QModelIndex())
{
    QStringList parts;
    for (int row = 0; row < model->rowCount(parent); ++row) {
        const QModelIndex index = model->index(row, 0, parent);
        QString part = index.data(ScopeTreeModel::IdRole).toString();
        if (model->rowCount(index) > 0)
            part += QLatin1Char('[') + treeShape(model, index) + QLatin1Char(']');
        parts << part;
    }
    return parts.join(QLatin1Char(','));
}

} // namespace

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
    void showsAgentDetails();
    void insertsNewAgentsOnePerBatch();
    void changedRowsBecomeRanges();
    void lastActivityRefreshesOncePerSecond();
    void activityAloneRefreshesItsColumnOnly();
    void modelsPassTheTesterOverACapture();
    void scopeTreeUpdatesIncrementally();
    void scopesPanelClicksSelect();
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

    // "Show departed" hides departed agents and placeholders whatever the query.
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

void TestAgents::showsAgentDetails()
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

void TestAgents::insertsNewAgentsOnePerBatch()
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

void TestAgents::changedRowsBecomeRanges()
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

void TestAgents::lastActivityRefreshesOncePerSecond()
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
void TestAgents::activityAloneRefreshesItsColumnOnly()
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

void TestAgents::modelsPassTheTesterOverACapture()
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

    proxy.setShowInactive(false);
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

void TestAgents::scopeTreeUpdatesIncrementally()
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

void TestAgents::scopesPanelClicksSelect()
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

QTEST_MAIN(TestAgents)
#include "tst_agents.moc"
