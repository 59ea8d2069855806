// The inspector, actions and problems panels and their models: JsonTreeModel (tree, merge),
// ActionModel (action lifecycle through the store), ProblemModel/GapModel (errors capture).
#include "GuiTestSupport.h"
#include "TraceReplayer.h"

#include "models/ActionModel.h"
#include "models/JsonTreeModel.h"
#include "models/ProblemModel.h"
#include "panels/ActionsPanel.h"
#include "panels/InspectorPanel.h"
#include "panels/ProblemsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "trace/TraceRecord.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QTreeWidget>

#include <functional>

using namespace mapi;
using namespace mapi::ui;
using Kind = SelectionHub::Kind;

namespace {

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

QModelIndex childByKey(const QAbstractItemModel &model, const QString &key, const QModelIndex &parent = {})
{
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, JsonTreeModel::KeyColumn, parent);
        if (index.data().toString() == key)
            return index;
    }
    return {};
}

QString valueOf(const QAbstractItemModel &model, const QString &key, const QModelIndex &parent = {})
{
    return childByKey(model, key, parent).siblingAtColumn(JsonTreeModel::ValueColumn).data().toString();
}

QStringList topLevelKeys(const QAbstractItemModel &model)
{
    QStringList keys;
    for (int row = 0; row < model.rowCount(); ++row)
        keys << model.index(row, JsonTreeModel::KeyColumn).data().toString();
    return keys;
}

OrderedJson parseJson(const QString &text)
{
    const std::string utf8 = text.toStdString();
    return OrderedJson::parse(utf8, nullptr, false);
}

// The test's own view of an action's lifecycle steps, applied through the store like the client's.
ActionUpdate actionStep(ActionUpdate::Step step, const QString &id, qint64 timeMs, const QString &detail = {})
{
    ActionUpdate update;
    update.step = step;
    update.action.id = id;
    update.action.detail = detail;
    update.timeMs = timeMs;
    return update;
}

ActionUpdate createdAction(const QString &id, ActionKind kind, const QString &agentId, const QString &method, qint64 timeMs)
{
    ActionUpdate update = actionStep(ActionUpdate::Step::Created, id, timeMs);
    update.action.kind = kind;
    update.action.agentId = agentId;
    update.action.method = method;
    return update;
}

AgentsSnapshot agentsSnapshot(const QStringList &ids, qint64 timeMs)
{
    AgentsSnapshot snapshot;
    snapshot.timeMs = timeMs;
    for (const QString &id : ids) {
        AgentRecord record;
        record.id = id;
        record.name = QStringLiteral("name-") + id;
        record.state = QStringLiteral("idle");
        snapshot.data.agents.push_back(record);
    }
    return snapshot;
}

EventInput stateChanged(const QString &eventId, const QString &agentId, const QString &state, qint64 timeMs)
{
    MapEvent event;
    event.eventId = eventId;
    event.rawType = QStringLiteral("agent.state.changed");
    event.type = event.rawType;
    event.kind = EventKind::AgentStateChanged;
    event.timestampMs = timeMs;
    event.agentId = agentId;
    AgentRecord record;
    record.id = agentId;
    record.state = state;
    event.agent = record;
    return EventInput{event, timeMs};
}

// errors.ndjson's malformed frames (bad JSON, not JSON-RPC, a batch, a binary frame) were sent by
// the recorder to the server. Fed back as received frames they are what a misbehaving server
// sends: the real pipeline must turn each into a kept problem. Returns how many were fed.
int replayMalformedFramesAsReceived(SystemStore &store)
{
    mapi::test::TraceReplayer replayer(&store);
    const FrameCodec codec;
    int fed = 0;
    TraceReadStats stats;
    QString error;
    readTrace(QStringLiteral(MAPI_TEST_DATA "/errors.ndjson"), [&](const TraceRecord &record) {
        if (record.dir == QLatin1String("send") && (record.binary || !codec.decode(record.raw).ok())) {
            TraceRecord received = record;
            received.dir = QStringLiteral("recv");
            replayer.feed(received);
            ++fed;
        }
        return true;
    }, stats, &error);
    store.flushChanges();
    return fed;
}

const Agent *describedAgent(const SystemStore &store)
{
    for (const Agent &a : store.agents())
        if (!a.placeholder && !a.name.isEmpty() && !a.state.isEmpty())
            return &a;
    return nullptr;
}

} // namespace

class TestInspector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void jsonTreeShowsNestedDocument();
    void jsonTreeMergesUpdatesWithoutReset();
    void inspectorShowsFocusedAgent();
    void inspectorFollowsFocusedAgentChanges();
    void inspectorShowsExactMessageFrame();
    void inspectorShowsTaskHistoryAndPayloads();
    void secretsInAPayloadNeverReachTheScreenOrClipboard();
    void inspectorShowsProblemFrame();
    void inspectorEscapesInvalidBytesAndNotesTruncation();
    void inspectorBoundsLargeFrames();
    void copyPutsJsonOnClipboard();
    void inspectorShowsHintWhenItemIsGone();
    void actionModelFollowsLifecycleThroughStore();
    void actionsPanelFocusesSelectedAction();
    void problemModelsMatchStoreAfterErrorsCapture();
    void problemsPanelFocusesSelectedProblem();
    void chainTabFollowsMapCausedByBetweenEvents();
};

void TestInspector::initTestCase()
{
    mapi::test::failOnQtWarnings();
}

void TestInspector::jsonTreeShowsNestedDocument()
{
    JsonTreeModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    const QString longText = QString(300, QLatin1Char('x')) + QStringLiteral("\nsecond line");
    OrderedJson doc = OrderedJson::parse(R"({"name":"worker-3","count":3,"ratio":0.5,"ok":true,"nothing":null,
        "tags":["a","b",{"deep":[1,2]}],"meta":{"x":{"y":"z"}},"empty":{}})");
    doc["long"] = longText.toStdString();
    model.setJson(doc);

    QCOMPARE(topLevelKeys(model), (QStringList{QStringLiteral("name"), QStringLiteral("count"), QStringLiteral("ratio"),
                                               QStringLiteral("ok"), QStringLiteral("nothing"), QStringLiteral("tags"),
                                               QStringLiteral("meta"), QStringLiteral("empty"), QStringLiteral("long")}));
    auto typeOf = [&model](const QString &key) { return childByKey(model, key).siblingAtColumn(JsonTreeModel::TypeColumn).data().toString(); };
    QCOMPARE(typeOf(QStringLiteral("name")), QStringLiteral("string"));
    QCOMPARE(typeOf(QStringLiteral("count")), QStringLiteral("number"));
    QCOMPARE(typeOf(QStringLiteral("ok")), QStringLiteral("boolean"));
    QCOMPARE(typeOf(QStringLiteral("nothing")), QStringLiteral("null"));
    QCOMPARE(typeOf(QStringLiteral("tags")), QStringLiteral("array"));
    QCOMPARE(typeOf(QStringLiteral("meta")), QStringLiteral("object"));
    QCOMPARE(valueOf(model, QStringLiteral("name")), QStringLiteral("worker-3"));
    QCOMPARE(valueOf(model, QStringLiteral("ratio")), QStringLiteral("0.5"));
    QCOMPARE(valueOf(model, QStringLiteral("tags")), QStringLiteral("[ 3 items ]"));
    QCOMPARE(model.rowCount(childByKey(model, QStringLiteral("empty"))), 0);

    const QModelIndex tags = childByKey(model, QStringLiteral("tags"));
    QCOMPARE(model.rowCount(tags), 3);
    QCOMPARE(model.index(0, JsonTreeModel::KeyColumn, tags).data().toString(), QStringLiteral("[0]"));
    QCOMPARE(model.index(1, JsonTreeModel::ValueColumn, tags).data().toString(), QStringLiteral("b"));
    const QModelIndex deep = childByKey(model, QStringLiteral("deep"), model.index(2, 0, tags));
    QCOMPARE(model.rowCount(deep), 2);
    const QModelIndex deepSecond = model.index(1, 0, deep);
    QCOMPARE(deepSecond.data(JsonTreeModel::PathRole).toString(), QStringLiteral("/tags/2/deep/1"));
    QCOMPARE(deepSecond.parent(), deep);
    QCOMPARE(parseJson(tags.data(JsonTreeModel::CopyTextRole).toString()), doc["tags"]);

    // Long strings: elided on one line in the view, whole in the tooltip and in the copy text.
    const QModelIndex longValue = childByKey(model, QStringLiteral("long")).siblingAtColumn(JsonTreeModel::ValueColumn);
    const QString shown = longValue.data().toString();
    QVERIFY(shown.size() <= JsonTreeModel::kDisplayChars + 1);
    QVERIFY(shown.endsWith(QChar(0x2026)));
    QVERIFY(!shown.contains(QLatin1Char('\n')));
    QCOMPARE(longValue.data(Qt::ToolTipRole).toString(), longText);
    QCOMPARE(longValue.data(JsonTreeModel::CopyTextRole).toString(), longText);

    model.setJson(OrderedJson(42)); // a scalar root has no rows
    QCOMPARE(model.rowCount(), 0);
    model.setJson(OrderedJson::parse(R"([1,[2,3]])"));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rowCount(model.index(1, 0)), 2);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestInspector::jsonTreeMergesUpdatesWithoutReset()
{
    JsonTreeModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    OrderedJson before = OrderedJson::parse(R"({"name":"a","count":1,"nothing":null,"tags":["x"],"meta":{"x":{"y":"z"}}})");
    model.setJson(before);
    const QPersistentModelIndex name = childByKey(model, QStringLiteral("name"));
    const QModelIndex meta = childByKey(model, QStringLiteral("meta"));
    const QPersistentModelIndex y = childByKey(model, QStringLiteral("y"), childByKey(model, QStringLiteral("x"), meta));
    QVERIFY(y.isValid());
    QCOMPARE(model.rowCount(childByKey(model, QStringLiteral("tags"))), 1);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    OrderedJson after = OrderedJson::parse(R"({"name":"a","count":2,"added":true,"tags":["x","y"],"meta":{"x":{"y":"w"}}})");
    model.setJson(after);

    QCOMPARE(reset.count(), 0);
    QCOMPARE(topLevelKeys(model), (QStringList{QStringLiteral("name"), QStringLiteral("count"), QStringLiteral("added"),
                                               QStringLiteral("tags"), QStringLiteral("meta")}));
    QVERIFY(name.isValid());
    QCOMPARE(name.data().toString(), QStringLiteral("name"));
    QVERIFY(y.isValid());
    QCOMPARE(QModelIndex(y).siblingAtColumn(JsonTreeModel::ValueColumn).data().toString(), QStringLiteral("w"));
    QCOMPARE(removed.count(), 1); // "nothing"
    QCOMPARE(removed.first().at(0).value<QModelIndex>(), QModelIndex());
    QCOMPARE(inserted.count(), 2); // "added" at the top level, "y" appended to tags
    QSet<QString> changedPaths;
    for (const QList<QVariant> &args : std::as_const(changed)) {
        const auto topLeft = args.at(0).value<QModelIndex>();
        const auto bottomRight = args.at(1).value<QModelIndex>();
        QCOMPARE(topLeft.row(), bottomRight.row());
        changedPaths.insert(topLeft.data(JsonTreeModel::PathRole).toString());
    }
    QCOMPARE(changedPaths, (QSet<QString>{QStringLiteral("/count"), QStringLiteral("/tags"), QStringLiteral("/meta/x/y")}));
    QCOMPARE(model.json(), after);

    // A member changing from object to scalar drops its children.
    model.setJson(OrderedJson::parse(R"({"name":"a","meta":5})"));
    QCOMPARE(model.rowCount(childByKey(model, QStringLiteral("meta"))), 0);
    QVERIFY(!y.isValid());
    QVERIFY(name.isValid());
}

void TestInspector::inspectorShowsFocusedAgent()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QVERIFY(tree);
    QAbstractItemModelTester tester(tree->model(), kFatal);
    auto *hint = panel.findChild<QLabel *>(QStringLiteral("inspectorHint"));
    QCOMPARE(hint->text(), QStringLiteral("Select an agent, message, task or action to inspect it."));

    // Actions are refused with a typed reason, and nothing is tracked: no source, then a trace.
    const ActionStart idle = session.stop({QStringLiteral("agent-1")}, QString());
    QCOMPARE(idle.refused, ActionBlock::NotLive);
    QVERIFY(idle.actionIds.isEmpty());

    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
    const Agent *agent = describedAgent(*session.store());
    QVERIFY(agent);
    const size_t actionsBefore = session.store()->actions().size();
    const ActionStart replaying = session.inject({agent->id}, Json("hello"), MapClient::Delivery::BestEffort);
    QCOMPARE(replaying.refused, ActionBlock::Replaying);
    QVERIFY(replaying.actionIds.isEmpty());
    QVERIFY(!session.actionBlockedReason().isEmpty());
    QCOMPARE(session.store()->actions().size(), actionsBefore);
    hub.focus(Kind::Agent, agent->id);

    const QString header = panel.findChild<QLabel *>(QStringLiteral("inspectorHeader"))->text();
    QVERIFY2(header.contains(agent->name.toHtmlEscaped()), qPrintable(header));
    QVERIFY2(header.contains(agent->state.toHtmlEscaped()), qPrintable(header));
    QVERIFY2(header.contains(healthName(agent->health)), qPrintable(header));
    const QAbstractItemModel &model = *tree->model();
    QCOMPARE(valueOf(model, QStringLiteral("id")), agent->id);
    QCOMPARE(valueOf(model, QStringLiteral("name")), agent->name);
    QCOMPARE(valueOf(model, QStringLiteral("state")), agent->state);
    QCOMPARE(valueOf(model, QStringLiteral("health")), healthName(agent->health));
    for (const char *key : {"metadata", "capabilities", "heartbeat", "usage", "lastError", "session", "scopes"})
        QVERIFY2(childByKey(model, QLatin1String(key)).isValid(), key);
    // Without a frame the raw tab shows the JSON itself, and "pretty" has nothing to reformat.
    const OrderedJson raw = parseJson(panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"))->toPlainText());
    QCOMPARE(QString::fromStdString(raw.value("name", std::string())), agent->name);
    QVERIFY(!panel.findChild<QCheckBox *>(QStringLiteral("prettyToggle"))->isEnabled());
}

void TestInspector::inspectorFollowsFocusedAgentChanges()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QAbstractItemModelTester tester(tree->model(), kFatal);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const Agent *agent = describedAgent(*session.store());
    QVERIFY(agent);
    const QString id = agent->id;
    hub.focus(Kind::Agent, id);

    const QAbstractItemModel &model = *tree->model();
    const QPersistentModelIndex name = childByKey(model, QStringLiteral("name"));
    const QPersistentModelIndex scopes = childByKey(model, QStringLiteral("scopes"));
    tree->setCurrentIndex(name);
    tree->expand(scopes);
    QSignalSpy reset(tree->model(), &QAbstractItemModel::modelReset);

    SystemStore *store = session.store();
    store->apply(stateChanged(QStringLiteral("inspector-test-1"), id, QStringLiteral("busy"), store->now() + 1000));
    store->flushChanges();

    QCOMPARE(valueOf(model, QStringLiteral("state")), QStringLiteral("busy"));
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("inspectorHeader"))->text().contains(QStringLiteral("busy")));
    QCOMPARE(reset.count(), 0);
    QVERIFY(name.isValid());
    QCOMPARE(tree->currentIndex(), QModelIndex(name));
    QVERIFY(tree->isExpanded(scopes));

    // A change to another agent does not rebuild this one.
    QSignalSpy changed(tree->model(), &QAbstractItemModel::dataChanged);
    const Agent *other = nullptr;
    for (const Agent &a : store->agents())
        if (a.id != id)
            other = &a;
    QVERIFY(other);
    store->apply(stateChanged(QStringLiteral("inspector-test-2"), other->id, QStringLiteral("busy"), store->now() + 1000));
    store->flushChanges();
    QCOMPARE(changed.count(), 0);

    // Hidden, the panel leaves the work for when it is shown again.
    panel.hide();
    store->apply(stateChanged(QStringLiteral("inspector-test-3"), id, QStringLiteral("idle"), store->now() + 1000));
    store->flushChanges();
    QCOMPARE(valueOf(model, QStringLiteral("state")), QStringLiteral("busy"));
    panel.show();
    QCOMPARE(valueOf(model, QStringLiteral("state")), QStringLiteral("idle"));
}

void TestInspector::inspectorShowsExactMessageFrame()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QAbstractItemModelTester tester(tree->model(), kFatal);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
    const SystemStore &store = *session.store();

    // A message whose event has a frame; looked up by event id, independently of the panel.
    // A loaded trace keeps its frames in its timeline: the store reads them on demand.
    int messageRow = -1;
    QByteArray frame;
    for (size_t m = 0; m < store.messages().size() && messageRow < 0; ++m) {
        const QString eventId = store.messages()[m].eventId;
        for (size_t i = 0; i < store.events().size(); ++i) {
            if (!eventId.isEmpty() && store.events().eventId(i) == eventId && !store.eventFrame(int(i)).isEmpty()) {
                QVERIFY(store.events().keptFrame(i).isEmpty());
                messageRow = int(m);
                frame = store.eventFrame(int(i));
                break;
            }
        }
    }
    QVERIFY(messageRow >= 0);
    QVERIFY(frame.contains(store.messages()[size_t(messageRow)].eventId.toUtf8()));
    QCOMPARE(redactSecrets(frame), frame); // nothing to redact: the comparison below is exact
    hub.focus(Kind::Message, QString::number(messageRow));

    auto *raw = panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"));
    QCOMPARE(raw->toPlainText(), QString::fromUtf8(frame));
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("inspectorHeader"))->text().contains(QStringLiteral("Message")));
    const QAbstractItemModel &model = *tree->model();
    QCOMPARE(valueOf(model, QStringLiteral("id")), store.messages()[size_t(messageRow)].id);
    QVERIFY(childByKey(model, QStringLiteral("payload")).isValid());
    const QModelIndex frameNode = childByKey(model, QStringLiteral("frame"));
    QCOMPARE(parseJson(frameNode.data(JsonTreeModel::CopyTextRole).toString()), parseJson(QString::fromUtf8(frame)));

    panel.findChild<QPushButton *>(QStringLiteral("copyRawButton"))->click();
    QCOMPARE(QGuiApplication::clipboard()->text(), QString::fromUtf8(frame));

    auto *pretty = panel.findChild<QCheckBox *>(QStringLiteral("prettyToggle"));
    QVERIFY(pretty->isEnabled());
    pretty->setChecked(true);
    QVERIFY(raw->toPlainText() != QString::fromUtf8(frame));
    QVERIFY(raw->toPlainText().contains(QLatin1Char('\n')));
    QCOMPARE(parseJson(raw->toPlainText()), parseJson(QString::fromUtf8(frame)));
    pretty->setChecked(false);
    QCOMPARE(raw->toPlainText(), QString::fromUtf8(frame));
}

// A capture (not redacted on disk: it is someone else's file) whose message carries a credential
// by name, a Bearer token in prose and a key inside stringified JSON: the tree, the raw text and
// every copy show "REDACTED" instead, and the rest of the message as it is.
void TestInspector::secretsInAPayloadNeverReachTheScreenOrClipboard()
{
    const QByteArray secrets[] = {"tok_live_0123456789", "sk-proj-Abc123Def456Ghi789", "hunter2-pw-42"};
    const Json payload = {{"apiToken", "tok_live_0123456789"},
                          {"note", "retry with Authorization: Bearer sk-proj-Abc123Def456Ghi789"},
                          {"config", Json({{"db_password", "hunter2-pw-42"}, {"host", "db.internal"}}).dump()},
                          {"task", "summarise the report"}};
    const Json event = {{"jsonrpc", "2.0"},
                        {"method", "map/event"},
                        {"params",
                         {{"subscriptionId", "sub-1"},
                          {"sequenceNumber", 1},
                          {"eventId", "evt-1"},
                          {"timestamp", 1795252123713},
                          {"event",
                           {{"type", "message.sent"},
                            {"id", "evt-1"},
                            {"timestamp", 1795252123713},
                            {"source", {{"agentId", "a1"}}},
                            {"data", {{"message", {{"id", "msg-1"}, {"from", "a1"}, {"to", "a2"}, {"payload", payload}}}}}}}}}};
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("secrets.ndjson"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    const Json line = {{"seq", 1}, {"dir", "recv"}, {"t", 1795252123714.0}, {"raw", event.dump()}};
    file.write(QByteArray::fromStdString(line.dump()) + '\n');
    file.close();

    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    QString error;
    QVERIFY2(session.openTraceAndWait(path, &error), qPrintable(error));
    QCOMPARE(int(session.store()->messages().size()), 1);
    hub.focus(Kind::Message, QStringLiteral("0"));

    auto *raw = panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"));
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QVERIFY(raw->toPlainText().contains(QLatin1String("summarise the report")));
    panel.findChild<QPushButton *>(QStringLiteral("copyRawButton"))->click();
    const QString copiedRaw = QGuiApplication::clipboard()->text();
    panel.findChild<QPushButton *>(QStringLiteral("copyJsonButton"))->click();
    const QString copiedJson = QGuiApplication::clipboard()->text();
    QVERIFY(copiedJson.contains(QLatin1String("REDACTED")));
    QString treeText;
    std::function<void(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
        for (int r = 0; r < tree->model()->rowCount(parent); ++r) {
            const QModelIndex index = tree->model()->index(r, 0, parent);
            treeText += index.data(JsonTreeModel::CopyTextRole).toString() + QLatin1Char('\n');
            walk(index);
        }
    };
    walk(QModelIndex());
    for (const QByteArray &secret : secrets) {
        const QString s = QString::fromLatin1(secret);
        QVERIFY2(!raw->toPlainText().contains(s), qPrintable(raw->toPlainText()));
        QVERIFY2(!copiedRaw.contains(s) && !copiedJson.contains(s), secret.constData());
        QVERIFY2(!treeText.contains(s), secret.constData());
    }
}

// The demo system's recording: a task's history (from the store's compact history log) names
// the messages that moved it, and a message's payload is read back from the trace's frame.
void TestInspector::inspectorShowsTaskHistoryAndPayloads()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QVERIFY(tree);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_SAMPLE_TRACE), &error), qPrintable(error));
    const SystemStore &store = *session.store();
    const Task *task = nullptr;
    for (const Task &t : store.tasks())
        if (t.historySize >= 4 && (!task || t.historySize > task->historySize))
            task = &t;
    QVERIFY(task);
    const std::vector<TaskTransition> steps = store.taskHistory(*task);
    QCOMPARE(int(steps.size()), task->historySize);
    hub.focus(Kind::Task, task->id);
    const QAbstractItemModel &model = *tree->model();
    QCOMPARE(valueOf(model, QStringLiteral("id")), task->id);
    const QModelIndex history = childByKey(model, QStringLiteral("history"));
    QVERIFY(history.isValid());
    QCOMPARE(model.rowCount(history), task->historySize);
    int named = 0;
    for (int i = 0; i < task->historySize; ++i) {
        const QModelIndex step = model.index(i, 0, history);
        QCOMPARE(valueOf(model, QStringLiteral("status"), step), steps[size_t(i)].status);
        if (steps[size_t(i)].messageRow >= 0) {
            QCOMPARE(valueOf(model, QStringLiteral("messageId"), step),
                     store.messages().id(size_t(steps[size_t(i)].messageRow)));
            ++named;
        }
    }
    QVERIFY(named > 0);

    // A message of the task: its payload as the trace holds it, though the store keeps none.
    const int messageRow = steps.front().messageRow >= 0 ? steps.front().messageRow : steps.back().messageRow;
    QVERIFY(messageRow >= 0);
    QVERIFY(store.messages().payloadInFrame(size_t(messageRow)));
    hub.focus(Kind::Message, QString::number(messageRow)); // messages are focused by row
    const QModelIndex payload = childByKey(model, QStringLiteral("payload"));
    QVERIFY(payload.isValid());
    QVERIFY(model.rowCount(payload) > 0);
    const Json kept = Json::parse(store.messagePayload(messageRow).toStdString());
    QVERIFY(kept.is_object());
    QCOMPARE(valueOf(model, QStringLiteral("type"), payload), QString::fromStdString(kept.value("type", std::string())));
}

void TestInspector::inspectorShowsProblemFrame()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/errors.ndjson"), &error), qPrintable(error));
    QVERIFY(replayMalformedFramesAsReceived(*session.store()) > 0);
    const SystemStore &store = *session.store();
    QVERIFY(!store.problems().empty());
    const int row = int(store.problems().size()) - 1;
    const ProtocolProblem &problem = store.problems()[size_t(row)];
    hub.focus(Kind::Problem, QString::number(row));

    QCOMPARE(panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"))->toPlainText(), QString::fromUtf8(problem.frame));
    const QString header = panel.findChild<QLabel *>(QStringLiteral("inspectorHeader"))->text();
    QVERIFY2(header.contains(problemKindName(problem.kind)), qPrintable(header));
    const QAbstractItemModel &model = *panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"))->model();
    QCOMPARE(valueOf(model, QStringLiteral("detail")), problem.detail);
    QCOMPARE(valueOf(model, QStringLiteral("frameBytes")), QString::number(problem.frame.size()));
}

void TestInspector::inspectorEscapesInvalidBytesAndNotesTruncation()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    ProtocolProblem problem;
    problem.kind = ProblemKind::InvalidJson;
    problem.detail = QStringLiteral("not UTF-8");
    problem.timeMs = 1795251953524;
    problem.frame = QByteArray("{\"text\":\"caf\xc3\xa9 \xff\xfe\x01\"") + QByteArray(ProtocolProblem::kMaxKeptProblemBytes, ' ');
    problem.frame.truncate(ProtocolProblem::kMaxKeptProblemBytes);
    session.store()->apply(ProblemInput{problem});
    session.store()->flushChanges();
    hub.focus(Kind::Problem, QStringLiteral("0"));

    const QString raw = panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"))->toPlainText();
    QVERIFY2(raw.startsWith(QStringLiteral("{\"text\":\"caf\u00e9 \\xFF\\xFE\\x01\"")), qPrintable(raw.left(40)));
    QVERIFY(!raw.contains(QChar::ReplacementCharacter));
    const QString note = panel.findChild<QLabel *>(QStringLiteral("rawNote"))->text();
    QVERIFY2(note.contains(QStringLiteral("Truncated")), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("\\xNN")), qPrintable(note));
    const QAbstractItemModel &model = *panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"))->model();
    QCOMPARE(valueOf(model, QStringLiteral("truncated")), QStringLiteral("true"));
}

void TestInspector::inspectorBoundsLargeFrames()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    // A message.sent frame with a 400 KB payload, through the real pipeline.
    const QByteArray text(400 * 1000, 'x');
    const QByteArray frame = QByteArray("{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"eventId\":\"big-1\",\"timestamp\":1795252123713,"
                                        "\"event\":{\"type\":\"message.sent\",\"id\":\"big-1\",\"timestamp\":1795252123713,\"data\":{\"message\":"
                                        "{\"id\":\"m-big\",\"from\":\"a\",\"to\":\"b\",\"timestamp\":1795252123712,\"payload\":{\"text\":\"")
        + text + "\"}}}}}}";
    mapi::test::TraceReplayer replayer(session.store());
    TraceRecord record;
    record.dir = QStringLiteral("recv");
    record.raw = frame;
    record.timeMs = 1795252123713;
    replayer.feed(record);
    session.store()->flushChanges();
    QCOMPARE(int(session.store()->messages().size()), 1);
    hub.focus(Kind::Message, QStringLiteral("0"));

    // The payload is in the tree (elided); the frame is too big to parse there again.
    const QAbstractItemModel &model = *panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"))->model();
    const QModelIndex payloadText = childByKey(model, QStringLiteral("text"), childByKey(model, QStringLiteral("payload")));
    QCOMPARE(payloadText.siblingAtColumn(JsonTreeModel::ValueColumn).data(JsonTreeModel::CopyTextRole).toString().size(), text.size());
    QCOMPARE(valueOf(model, QStringLiteral("frame")), QStringLiteral("null"));
    QCOMPARE(valueOf(model, QStringLiteral("frameBytes")), QString::number(frame.size()));
    // The raw tab shows the beginning; "Copy raw" copies the whole frame.
    const QString shown = panel.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"))->toPlainText();
    QCOMPARE(shown.size(), InspectorPanel::kMaxShownRawChars);
    QVERIFY(QString::fromUtf8(frame).startsWith(shown));
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("rawNote"))->text().contains(QStringLiteral("Showing the first")));
    panel.findChild<QPushButton *>(QStringLiteral("copyRawButton"))->click();
    QCOMPARE(QGuiApplication::clipboard()->text(), QString::fromUtf8(frame));
}

void TestInspector::copyPutsJsonOnClipboard()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
    const Agent *agent = describedAgent(*session.store());
    QVERIFY(agent);
    hub.focus(Kind::Agent, agent->id);
    QGuiApplication::clipboard()->clear();

    panel.findChild<QPushButton *>(QStringLiteral("copyJsonButton"))->click();
    const OrderedJson copied = parseJson(QGuiApplication::clipboard()->text());
    QVERIFY(copied.is_object());
    QCOMPARE(QString::fromStdString(copied.value("name", std::string())), agent->name);
    QCOMPARE(QString::fromStdString(copied.value("id", std::string())), agent->id);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QCOMPARE(copied, static_cast<JsonTreeModel *>(tree->model())->json());

    // Ctrl+C in the tree copies the selected node's value, unquoted and whole.
    tree->setCurrentIndex(childByKey(*tree->model(), QStringLiteral("name")).siblingAtColumn(JsonTreeModel::ValueColumn));
    QTest::keyClick(tree, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QGuiApplication::clipboard()->text(), agent->name);
    tree->setCurrentIndex(childByKey(*tree->model(), QStringLiteral("scopes")));
    QTest::keyClick(tree, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(parseJson(QGuiApplication::clipboard()->text()).size(), size_t(agent->scopes.size()));
}

void TestInspector::inspectorShowsHintWhenItemIsGone()
{
    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    auto *tree = panel.findChild<QTreeView *>(QStringLiteral("inspectorTree"));
    QAbstractItemModelTester tester(tree->model(), kFatal);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
    panel.show(); // store-driven refreshes wait while the panel is hidden
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const QString id = describedAgent(*session.store())->id;
    hub.focus(Kind::Agent, id);
    QVERIFY(tree->model()->rowCount() > 0);

    // A new trace without that agent: the model resets and the panel says so.
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/errors.ndjson"), &error), qPrintable(error));
    QVERIFY(!session.store()->agent(id));
    QCOMPARE(tree->model()->rowCount(), 0);
    const QString hint = panel.findChild<QLabel *>(QStringLiteral("inspectorHint"))->text();
    QVERIFY2(hint.contains(id) && hint.contains(QStringLiteral("not in the model")), qPrintable(hint));

    // It arrives later: shown without refocusing.
    session.store()->apply(agentsSnapshot({id}, session.store()->now() + 10));
    session.store()->flushChanges();
    QCOMPARE(valueOf(*tree->model(), QStringLiteral("id")), id);
}

void TestInspector::actionModelFollowsLifecycleThroughStore()
{
    SystemStore store;
    ActionModel model(&store);
    QAbstractItemModelTester tester(&model, kFatal);
    const qint64 t0 = 1795251953000;
    store.apply(agentsSnapshot({QStringLiteral("a1"), QStringLiteral("a2"), QStringLiteral("a3")}, t0));
    store.flushChanges();

    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    store.apply(ModelInputs{createdAction(QStringLiteral("act-1"), ActionKind::Suspend, QStringLiteral("a1"), QStringLiteral("map/agents/suspend"), t0 + 100),
                            createdAction(QStringLiteral("act-2"), ActionKind::Stop, QStringLiteral("a2"), QStringLiteral("map/agents/stop"), t0 + 110),
                            createdAction(QStringLiteral("act-3"), ActionKind::Inject, QStringLiteral("a3"), QStringLiteral("map/inject"), t0 + 120)});
    store.flushChanges();
    QCOMPARE(inserted.count(), 1); // one insert per batch
    QCOMPARE(inserted.first().at(1).toInt(), 0);
    QCOMPARE(inserted.first().at(2).toInt(), 2);
    QCOMPARE(model.rowCount(), 3);
    auto cell = [&model](int row, int column, int role = Qt::DisplayRole) { return model.index(row, column).data(role); };
    QCOMPARE(cell(0, ActionModel::StatusColumn).toString(), QStringLiteral("sent"));
    QCOMPARE(cell(0, ActionModel::TargetColumn).toString(), QStringLiteral("name-a1"));
    QCOMPARE(cell(0, ActionModel::KindColumn).toString(), QStringLiteral("suspend"));
    QCOMPARE(cell(0, ActionModel::AnswerColumn).toString(), QStringLiteral("—"));

    // Answered: only row 0 changes.
    changed.clear();
    store.apply(actionStep(ActionUpdate::Step::Answered, QStringLiteral("act-1"), t0 + 145));
    store.flushChanges();
    QCOMPARE(cell(0, ActionModel::StatusColumn).toString(), QStringLiteral("accepted"));
    QCOMPARE(cell(0, ActionModel::AnswerColumn).toString(), QStringLiteral("45 ms"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 0);
    QCOMPARE(changed.first().at(1).value<QModelIndex>().row(), 0);

    // Confirmed by the server's event.
    changed.clear();
    store.apply(stateChanged(QStringLiteral("ev-1"), QStringLiteral("a1"), QStringLiteral("suspended"), t0 + 1600));
    store.flushChanges();
    QCOMPARE(cell(0, ActionModel::StatusColumn).toString(), QStringLiteral("confirmed"));
    QCOMPARE(cell(0, ActionModel::StatusColumn, Qt::ForegroundRole).value<QColor>(), healthColor(Health::Healthy));
    QCOMPARE(cell(0, ActionModel::SettledColumn).toString(), QStringLiteral("1.50 s"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 0);
    QCOMPARE(changed.first().at(1).value<QModelIndex>().row(), 0);

    // Two of three rows change: more than half, so one signal over the whole table.
    changed.clear();
    store.apply(ModelInputs{actionStep(ActionUpdate::Step::Failed, QStringLiteral("act-2"), t0 + 300, QStringLiteral("agent not found")),
                            actionStep(ActionUpdate::Step::Unsupported, QStringLiteral("act-3"), t0 + 310, QStringLiteral("no map/inject"))});
    store.flushChanges();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>(), model.index(0, 0));
    QCOMPARE(changed.first().at(1).value<QModelIndex>(), model.index(2, ActionModel::ColumnCount - 1));
    QCOMPARE(cell(1, ActionModel::StatusColumn).toString(), QStringLiteral("failed"));
    QCOMPARE(cell(1, ActionModel::StatusColumn, Qt::ForegroundRole).value<QColor>(), healthColor(Health::Failed));
    QCOMPARE(cell(1, ActionModel::DetailColumn).toString(), QStringLiteral("agent not found"));
    QCOMPARE(cell(2, ActionModel::StatusColumn).toString(), QStringLiteral("unsupported"));
    QCOMPARE(cell(2, ActionModel::StatusColumn, Qt::ForegroundRole).value<QColor>(), healthColor(Health::Disconnected));

    // A fallback shows its note as tooltip; a time-out is orange.
    ActionUpdate fallback = actionStep(ActionUpdate::Step::Fallback, QStringLiteral("act-4"), t0 + 400);
    fallback.action.method = QStringLiteral("map/agents/update");
    fallback.action.note = QStringLiteral("map/agents/resume not supported; used map/agents/update state=idle");
    store.apply(ModelInputs{createdAction(QStringLiteral("act-4"), ActionKind::Resume, QStringLiteral("a2"), QStringLiteral("map/agents/resume"), t0 + 400),
                            fallback});
    store.advanceTime(t0 + 400 + store.healthPolicy().actionConfirmTimeoutMs + 1);
    store.flushChanges();
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(cell(3, ActionModel::FallbackColumn).toString(), QStringLiteral("fallback"));
    QCOMPARE(cell(3, ActionModel::FallbackColumn, Qt::ToolTipRole).toString(), fallback.action.note);
    QCOMPARE(cell(3, ActionModel::MethodColumn).toString(), QStringLiteral("map/agents/update"));
    QCOMPARE(cell(3, ActionModel::StatusColumn).toString(), QStringLiteral("timed-out"));
    QCOMPARE(cell(3, ActionModel::StatusColumn, Qt::ForegroundRole).value<QColor>(), healthColor(Health::Unresponsive));

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    store.reset();
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 0);
}

void TestInspector::actionsPanelFocusesSelectedAction()
{
    InspectorSession session;
    SelectionHub hub;
    ActionsPanel actions(&session, &hub);
    InspectorPanel inspector(&session, &hub);
    auto *table = actions.findChild<QTableView *>(QStringLiteral("actionsTable"));
    QVERIFY(table);
    QAbstractItemModelTester tester(table->model(), kFatal);
    SystemStore *store = session.store();
    const qint64 t0 = 1795251953000;
    store->apply(agentsSnapshot({QStringLiteral("a1"), QStringLiteral("a2")}, t0));
    store->apply(ModelInputs{createdAction(QStringLiteral("act-1"), ActionKind::Stop, QStringLiteral("a1"), QStringLiteral("map/agents/stop"), t0 + 10),
                             createdAction(QStringLiteral("act-2"), ActionKind::Suspend, QStringLiteral("a2"), QStringLiteral("map/agents/suspend"), t0 + 20)});
    store->flushChanges();
    QCOMPARE(table->model()->rowCount(), 2);
    QVERIFY(actions.findChild<QLabel *>(QStringLiteral("actionsSummary"))->text().contains(QStringLiteral("2 in flight")));
    inspector.show(); // store-driven refreshes wait while the panel is hidden
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));

    table->selectRow(1);
    QCOMPARE(hub.focusKind(), Kind::Action);
    QCOMPARE(hub.focusKey(), QStringLiteral("act-2"));
    const QString header = inspector.findChild<QLabel *>(QStringLiteral("inspectorHeader"))->text();
    QVERIFY2(header.contains(QStringLiteral("suspend")) && header.contains(QStringLiteral("name-a2")), qPrintable(header));

    // The inspector follows the action's progress.
    store->apply(actionStep(ActionUpdate::Step::Failed, QStringLiteral("act-2"), t0 + 90, QStringLiteral("refused")));
    store->flushChanges();
    const QAbstractItemModel &tree = *inspector.findChild<QTreeView *>(QStringLiteral("inspectorTree"))->model();
    QCOMPARE(valueOf(tree, QStringLiteral("status")), QStringLiteral("failed"));
    QCOMPARE(valueOf(tree, QStringLiteral("answerLatencyMs")), QStringLiteral("70"));

    // Focus set elsewhere selects the row here, without echoing it back.
    QSignalSpy focus(&hub, &SelectionHub::focusChanged);
    hub.focus(Kind::Action, QStringLiteral("act-1"));
    QCOMPARE(focus.count(), 1);
    QCOMPARE(table->currentIndex().row(), 0);
    hub.focus(Kind::Agent, QStringLiteral("a1"));
    QVERIFY(!table->currentIndex().isValid());

    // Keyboard focus entering the table makes a row current without selecting it: no focus change.
    table->selectionModel()->setCurrentIndex(table->model()->index(1, 0), QItemSelectionModel::NoUpdate);
    QCOMPARE(hub.focusKind(), Kind::Agent);
    QCOMPARE(hub.focusKey(), QStringLiteral("a1"));
}

void TestInspector::problemModelsMatchStoreAfterErrorsCapture()
{
    SystemStore store;
    ProblemModel problems(&store);
    GapModel gaps(&store);
    QAbstractItemModelTester problemsTester(&problems, kFatal);
    QAbstractItemModelTester gapsTester(&gaps, kFatal);
    mapi::test::fillFromCapture(store, "errors.ndjson");
    QCOMPARE(problems.rowCount(), int(store.problems().size()));
    QCOMPARE(gaps.rowCount(), int(store.gaps().size()));

    const int before = problems.rowCount();
    const int fed = replayMalformedFramesAsReceived(store);
    QVERIFY(fed >= 5);
    QCOMPARE(int(store.problems().size()), before + fed);
    QCOMPARE(problems.rowCount(), int(store.problems().size()));
    QSet<QString> kinds;
    for (int row = 0; row < problems.rowCount(); ++row)
        kinds.insert(problems.index(row, ProblemModel::KindColumn).data().toString());
    for (ProblemKind kind : {ProblemKind::InvalidJson, ProblemKind::NotJsonRpc, ProblemKind::BinaryFrame})
        QVERIFY2(kinds.contains(problemKindName(kind)), qPrintable(problemKindName(kind)));
    for (int row = 0; row < problems.rowCount(); ++row) {
        const ProtocolProblem &p = store.problems()[size_t(row)];
        QCOMPARE(problems.index(row, ProblemModel::KindColumn).data().toString(), problemKindName(p.kind));
        QCOMPARE(problems.index(row, ProblemModel::DetailColumn).data().toString(), p.detail);
    }

    QSignalSpy problemInserts(&problems, &QAbstractItemModel::rowsInserted);
    QSignalSpy gapInserts(&gaps, &QAbstractItemModel::rowsInserted);
    Gap gap;
    gap.kind = Gap::Kind::Sequence;
    gap.timeMs = store.now();
    gap.fromSequence = 5;
    gap.toSequence = 7;
    gap.detail = QStringLiteral("sequence jumped");
    ProtocolProblem problem;
    problem.kind = ProblemKind::BinaryFrame;
    problem.frame = QByteArray("\x00\x01", 2);
    store.apply(ModelInputs{GapInput{gap}, ProblemInput{problem}, ProblemInput{problem}});
    store.flushChanges();
    QCOMPARE(problemInserts.count(), 1);
    QCOMPARE(problems.rowCount(), int(store.problems().size()));
    QCOMPARE(gapInserts.count(), 1);
    QCOMPARE(gaps.rowCount(), int(store.gaps().size()));
    const int last = gaps.rowCount() - 1;
    QCOMPARE(gaps.index(last, GapModel::KindColumn).data().toString(), gapKindName(Gap::Kind::Sequence));
    QCOMPARE(gaps.index(last, GapModel::MissingColumn).data().toString(), QStringLiteral("#5 – #7 (3 events)"));
    QCOMPARE(gaps.index(last, GapModel::RecoveredColumn).data().toString(), QStringLiteral("lost"));
    QCOMPARE(gaps.index(last, GapModel::RecoveredColumn).data(Qt::ForegroundRole).value<QColor>(), healthColor(Health::Unresponsive));

    store.reset();
    QCOMPARE(problems.rowCount(), 0);
    QCOMPARE(gaps.rowCount(), 0);
}

void TestInspector::problemsPanelFocusesSelectedProblem()
{
    InspectorSession session;
    SelectionHub hub;
    ProblemsPanel panel(&session, &hub);
    InspectorPanel inspector(&session, &hub);
    auto *table = panel.findChild<QTableView *>(QStringLiteral("problemsTable"));
    QVERIFY(table);
    QAbstractItemModelTester tester(table->model(), kFatal);
    QAbstractItemModelTester gapsTester(panel.findChild<QTableView *>(QStringLiteral("gapsTable"))->model(), kFatal);
    QString error;
    QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/errors.ndjson"), &error), qPrintable(error));
    QVERIFY(replayMalformedFramesAsReceived(*session.store()) > 0);
    QCOMPARE(table->model()->rowCount(), int(session.store()->problems().size()));
    QVERIFY(panel.findChild<QLabel *>(QStringLiteral("problemsTitle"))->text().contains(QString::number(table->model()->rowCount())));

    table->selectRow(0);
    QCOMPARE(hub.focusKind(), Kind::Problem);
    QCOMPARE(hub.focusKey(), QStringLiteral("0"));
    QCOMPARE(inspector.findChild<QPlainTextEdit *>(QStringLiteral("inspectorRaw"))->toPlainText(),
             QString::fromUtf8(session.store()->problems().front().frame));
}

// Events that carry no message, linked by MAP causedBy (in the event, and at params as the
// TestServer puts it): the Chain tab shows the cause root first, the event, and what it led to;
// activating an entry inspects that event.
void TestInspector::chainTabFollowsMapCausedByBetweenEvents()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("caused.jsonl"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(encodeHeaderLine(QStringLiteral("ws://h"), 1000));
    auto event = [&](int seq, const char *id, const char *agent, const char *state, const Json &causedBy, bool atParams) {
        Json inner = {{"id", id}, {"type", "agent.state.changed"}, {"timestamp", 1000 + seq},
                      {"data", {{"agentId", agent}, {"state", state}}}};
        Json params = {{"subscriptionId", "s"}, {"sequenceNumber", seq}, {"eventId", id}, {"event", inner}};
        if (!causedBy.is_null())
            (atParams ? params : params["event"])["causedBy"] = causedBy;
        const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", params}};
        file.write(encodeRecordLine({1000 + seq, QStringLiteral("recv"), 1, QByteArray::fromStdString(frame.dump()), false, Json()}));
    };
    event(1, "e1", "a", "busy", Json(), false);
    event(2, "e2", "b", "busy", Json::array({"e1"}), false);
    event(3, "e3", "c", "idle", Json::array({"e2"}), true);
    event(4, "e4", "d", "idle", Json(), false);
    file.close();

    InspectorSession session;
    SelectionHub hub;
    InspectorPanel panel(&session, &hub);
    QString error;
    QVERIFY2(session.openTraceAndWait(path, &error), qPrintable(error));
    const EventLog &events = session.store()->events();
    auto rowOf = [&](const char *id) { return events.find(QString::fromLatin1(id), IdIndex::hashOf(QString::fromLatin1(id))); };
    QVERIFY(rowOf("e2") >= 0);
    hub.focus(Kind::Event, QString::number(rowOf("e2")));
    QTreeWidget *tree = panel.chainTree();
    QTRY_COMPARE(tree->topLevelItemCount(), 2);
    QCOMPARE(tree->topLevelItem(0)->data(0, Qt::UserRole + 1).toInt(), rowOf("e1"));
    QTreeWidgetItem *focused = tree->topLevelItem(1);
    QCOMPARE(focused->data(0, Qt::UserRole + 1).toInt(), rowOf("e2"));
    QVERIFY(focused->font(0).bold());
    QCOMPARE(focused->childCount(), 1);
    QCOMPARE(focused->child(0)->data(0, Qt::UserRole + 1).toInt(), rowOf("e3"));
    QVERIFY(focused->text(0).startsWith(QLatin1String("agent.state.changed")));
    Q_EMIT tree->itemActivated(focused->child(0), 0);
    QTRY_COMPARE(hub.focusKey(), QString::number(rowOf("e3")));
    QCOMPARE(hub.focusKind(), Kind::Event);
    // An event nothing links: no chain.
    hub.focus(Kind::Event, QString::number(rowOf("e4")));
    QTRY_COMPARE(tree->topLevelItemCount(), 0);
}

QTEST_MAIN(TestInspector)
#include "tst_inspector.moc"
