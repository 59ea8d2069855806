// Health and Tasks panels: their models over the store, worst-first order, time turning agents
// late, task rows and lifecycles, selection, and the health charts' series.
#include "GuiTestSupport.h"
#include "StateSpellings.h"

#include "charts/HealthCharts.h"
#include "charts/HealthHistory.h"
#include "models/HealthModel.h"
#include "models/TaskModels.h"
#include "panels/HealthPanel.h"
#include "panels/TasksPanel.h"
#include "pipeline/ProtocolPipeline.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"

#include <QAbstractItemModelTester>
#include <QChart>
#include <QChartView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QScrollBar>
#include <QTableView>
#include <QTreeView>

using namespace mapi;
using namespace mapi::ui;

namespace {

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

// A message.sent event carrying a seed (000) envelope of `type` from `from` to `to`.
EventInput envelopeEvent(const QString &eventId, const QString &type, const QString &from, const QString &to,
                         const Json &body, qint64 timeMs)
{
    MapEvent e;
    e.eventId = eventId;
    e.rawType = QStringLiteral("message.sent");
    e.type = QStringLiteral("message.sent");
    e.kind = EventKind::MessageSent;
    e.timestampMs = timeMs;
    MessageRecord m;
    m.id = eventId + QStringLiteral("-msg");
    m.from = from;
    m.to = Json(to.toStdString());
    m.setPayload(Json{{"message_id", QString(eventId + QStringLiteral("-env")).toStdString()},
                      {"type", type.toStdString()},
                      {"from", from.toStdString()},
                      {"to", to.toStdString()},
                      {"payload", body}});
    m.timestampMs = timeMs;
    e.message = m;
    return EventInput{e, timeMs};
}

EventInput taskRequest(const QString &taskId, const QString &from, const QString &to, qint64 timeMs)
{
    return envelopeEvent(QStringLiteral("ev-req-") + taskId, QStringLiteral("TASK_REQUEST"), from, to,
                         Json{{"task_id", taskId.toStdString()}, {"task_type", "review"}}, timeMs);
}

// Ranks never decrease down the proxy, and ties are in name order.
void verifyWorstFirst(const QAbstractItemModel &proxy)
{
    for (int row = 1; row < proxy.rowCount(); ++row) {
        const int before = healthRank(Health(proxy.index(row - 1, 0).data(HealthModel::HealthRole).toInt()));
        const int here = healthRank(Health(proxy.index(row, 0).data(HealthModel::HealthRole).toInt()));
        QVERIFY2(before <= here, qPrintable(QStringLiteral("row %1 is worse than the row above").arg(row)));
        if (before == here)
            QVERIFY(proxy.index(row - 1, HealthModel::AgentColumn).data().toString().compare(
                        proxy.index(row, HealthModel::AgentColumn).data().toString(), Qt::CaseInsensitive) <= 0);
    }
}

std::array<int, kHealthCount> countInStore(const SystemStore &store)
{
    std::array<int, kHealthCount> counts{};
    for (const Agent &a : store.agents())
        ++counts[size_t(a.health)];
    return counts;
}

// Series live in the charts' scenes, not under the widget: look through every chart.
QLineSeries *seriesNamed(QWidget &widget, const char *name)
{
    const QList<QChartView *> views = widget.findChildren<QChartView *>();
    for (QChartView *view : views)
        if (auto *series = view->chart()->findChild<QLineSeries *>(QLatin1String(name)))
            return series;
    return nullptr;
}

} // namespace

class TestHealthTasks : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { mapi::test::failOnQtWarnings(); }

    void healthModelHasOneRowPerAgentWorstFirst()
    {
        SystemStore store;
        HealthModel model(&store);
        HealthSortProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, kFatal);
        QAbstractItemModelTester proxyTester(&proxy, kFatal);
        proxy.sort(HealthModel::HealthColumn, Qt::AscendingOrder);

        const QStringList titles{QStringLiteral("Agent"), QStringLiteral("Health"), QStringLiteral("Beat"),
                                 QStringLiteral("Status"), QStringLiteral("Load"), QStringLiteral("Tasks")};
        QCOMPARE(titles.size(), int(HealthModel::ColumnCount));
        for (int column = 0; column < HealthModel::ColumnCount; ++column)
            QCOMPARE(model.headerData(column, Qt::Horizontal).toString(), titles[column]);
        QCOMPARE(model.headerData(HealthModel::LoadColumn, Qt::Horizontal).toString(), QStringLiteral("Load"));

        mapi::test::fillFromCapture(store);
        QVERIFY(store.agents().size() >= 10);
        QCOMPARE(model.rowCount(), int(store.agents().size()));
        QCOMPARE(proxy.rowCount(), model.rowCount());
        verifyWorstFirst(proxy);
        // The capture ends with one failed agent: it comes first.
        QCOMPARE(proxy.index(0, HealthModel::HealthColumn).data().toString(), healthName(Health::Failed));
        int bestRank = 0;
        for (const Agent &a : store.agents())
            bestRank = std::max(bestRank, healthRank(a.health));
        QCOMPARE(healthRank(Health(proxy.index(proxy.rowCount() - 1, 0).data(HealthModel::HealthRole).toInt())), bestRank);
        QCOMPARE(model.healthCounts(), countInStore(store));
        // No heartbeat in this capture: the age column says so.
        QCOMPARE(model.index(0, HealthModel::HeartbeatColumn).data().toString(), QStringLiteral("—"));
    }

    void timeTurnsHealthyAgentsLateThenUnresponsive()
    {
        SystemStore store;
        HealthModel model(&store);
        HealthSortProxy proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, kFatal);
        QAbstractItemModelTester proxyTester(&proxy, kFatal);
        proxy.sort(HealthModel::HealthColumn, Qt::AscendingOrder);

        mapi::test::fillFromCapture(store, "scenario-sdk-transport.ndjson");
        const int agents = model.rowCount();
        QVERIFY(agents >= 10);
        QCOMPARE(model.healthCounts()[size_t(Health::Healthy)], agents);

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy counts(&model, &HealthModel::healthCountsChanged);
        const qint64 start = store.now();
        store.advanceTime(start + 45'000); // past one 30 s interval
        store.flushChanges();
        QVERIFY(!changed.isEmpty());
        QVERIFY(!counts.isEmpty());
        bool healthColumnAnnounced = false;
        for (const QList<QVariant> &args : std::as_const(changed)) {
            const QModelIndex from = args.at(0).toModelIndex();
            const QModelIndex to = args.at(1).toModelIndex();
            healthColumnAnnounced = healthColumnAnnounced
                || (from.column() <= HealthModel::HealthColumn && to.column() >= HealthModel::HealthColumn);
        }
        QVERIFY(healthColumnAnnounced);
        QCOMPARE(model.healthCounts()[size_t(Health::Late)], agents);
        QCOMPARE(model.index(0, HealthModel::HealthColumn).data().toString(), healthName(Health::Late));

        changed.clear();
        store.advanceTime(start + 200'000); // past three intervals
        store.flushChanges();
        QVERIFY(!changed.isEmpty());
        QCOMPARE(model.healthCounts()[size_t(Health::Unresponsive)], agents);
        QCOMPARE(model.healthCounts(), countInStore(store));
        verifyWorstFirst(proxy);

        // The clock moving without health changes still re-announces the ages.
        changed.clear();
        store.advanceTime(start + 260'000);
        store.flushChanges();
        model.refreshAges();
        QVERIFY(!changed.isEmpty());
        QCOMPARE(changed.constLast().at(0).toModelIndex().column(), int(HealthModel::HeartbeatColumn));
    }

    void summaryCountsMatchTheStore()
    {
        InspectorSession session;
        SelectionHub hub;
        HealthPanel panel(&session, &hub);
        auto *summary = panel.findChild<QLabel *>(QStringLiteral("healthSummary"));
        QVERIFY(summary);
        QVERIFY(summary->text().contains(QLatin1String("No agents")));

        QString error;
        QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
        const std::array<int, kHealthCount> counts = countInStore(*session.store());
        QVERIFY(summary->text().contains(QStringLiteral("%1 agents").arg(session.store()->agents().size())));
        for (Health h : healthsWorstFirst()) {
            const QString entry = QStringLiteral("%1&nbsp;%2").arg(counts[size_t(h)]).arg(healthName(h));
            QCOMPARE(summary->text().contains(entry), counts[size_t(h)] > 0);
        }
    }

    void clickingAnAgentSelectsIt()
    {
        InspectorSession session;
        SelectionHub hub;
        mapi::test::fillFromCapture(*session.store());
        HealthPanel panel(&session, &hub);
        panel.resize(500, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *table = panel.findChild<QTableView *>(QStringLiteral("healthTable"));
        QVERIFY(table);
        QVERIFY(table->model()->rowCount() > 2);

        const QModelIndex second = table->model()->index(1, HealthModel::AgentColumn);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(second).center());
        QCOMPARE(hub.selectedAgents(), QStringList{second.data(HealthModel::AgentIdRole).toString()});
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::Agent);

        // A selection made elsewhere is mirrored, without an echo back to the hub.
        const QString third = table->model()->index(2, 0).data(HealthModel::AgentIdRole).toString();
        QSignalSpy echoes(&hub, &SelectionHub::agentSelectionChanged);
        hub.selectAgents({third}, nullptr);
        QCOMPARE(echoes.count(), 1);
        const QModelIndexList rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().data(HealthModel::AgentIdRole).toString(), third);
    }

    // In a dock as narrow as the window's default (about 330 px), the names stay readable: the
    // agent column keeps its width (a stretched agent column shrank to "…" there).
    // The "agents by state" chart groups every spelling of a state the one way (map/AgentStates.h).
    void chartGroupsFollowTheStateClass()
    {
        for (const auto &spelling : mapi::test::stateSpellings()) {
            StateGroup expected = StateGroup::Other;
            switch (spelling.expected) {
            case StateClass::Idle: expected = StateGroup::Idle; break;
            case StateClass::Busy: expected = StateGroup::Busy; break;
            case StateClass::Suspended: expected = StateGroup::Suspended; break;
            case StateClass::Stopping:
            case StateClass::Stopped: expected = StateGroup::Stopped; break;
            case StateClass::Failed: expected = StateGroup::Failed; break;
            case StateClass::Other: break;
            }
            QVERIFY2(stateGroup(QString::fromUtf8(spelling.state), false) == expected, spelling.state);
        }
        QCOMPARE(stateGroup(QStringLiteral("busy"), true), StateGroup::Stopped); // departed
    }

    void agentNamesStayReadableInANarrowDock()
    {
        InspectorSession session;
        SelectionHub hub;
        mapi::test::fillFromCapture(*session.store());
        HealthPanel panel(&session, &hub);
        panel.resize(330, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *table = panel.findChild<QTableView *>(QStringLiteral("healthTable"));
        QVERIFY(table);
        const int needed = table->fontMetrics().horizontalAdvance(QStringLiteral("worker-10.sub-3"));
        QVERIFY2(table->columnWidth(HealthModel::AgentColumn) >= needed,
                 qPrintable(QStringLiteral("agent column %1 px, a name needs %2").arg(table->columnWidth(HealthModel::AgentColumn)).arg(needed)));
        QVERIFY2(table->viewport()->width() < 400, "the dock under test is narrow");
    }

    void taskModelRowsFollowTheStore()
    {
        SystemStore store;
        TaskTableModel model(&store);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setFilterKeyColumn(-1);
        proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
        proxy.setSortRole(TaskTableModel::SortRole);
        QAbstractItemModelTester modelTester(&model, kFatal);
        QAbstractItemModelTester proxyTester(&proxy, kFatal);
        proxy.sort(TaskTableModel::UpdatedColumn, Qt::DescendingOrder);

        mapi::test::fillFromCapture(store);
        QCOMPARE(model.rowCount(), int(store.tasks().size()));
        const int before = model.rowCount();
        const Agent &requester = store.agents().at(0);
        const Agent &assignee = store.agents().at(1);

        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        store.apply(taskRequest(QStringLiteral("t-new"), requester.id, assignee.id, store.now() + 10));
        store.flushChanges();
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.first().at(1).toInt(), before);
        QCOMPARE(inserted.first().at(2).toInt(), before);
        QCOMPARE(model.rowCount(), int(store.tasks().size()));

        const int row = model.rowOfTask(QStringLiteral("t-new"));
        QCOMPARE(row, before);
        QCOMPARE(model.index(row, TaskTableModel::IdColumn).data().toString(), QStringLiteral("t-new"));
        QCOMPARE(model.index(row, TaskTableModel::TypeColumn).data().toString(), QStringLiteral("review"));
        QCOMPARE(model.index(row, TaskTableModel::StatusColumn).data().toString(), QStringLiteral("requested"));
        QCOMPARE(model.index(row, TaskTableModel::RequesterColumn).data().toString(), requester.name);
        QCOMPARE(model.index(row, TaskTableModel::AssigneeColumn).data().toString(), assignee.name);
        QCOMPARE(model.index(row, TaskTableModel::TransitionsColumn).data().toInt(), 1);

        // An accept changes the row in place.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        inserted.clear();
        store.apply(envelopeEvent(QStringLiteral("ev-acc"), QStringLiteral("TASK_ACCEPT"), assignee.id, requester.id,
                                  Json{{"task_id", "t-new"}}, store.now() + 10));
        store.flushChanges();
        QCOMPARE(inserted.count(), 0);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(model.index(row, TaskTableModel::StatusColumn).data().toString(), QStringLiteral("accepted"));
        QCOMPARE(model.index(row, TaskTableModel::TransitionsColumn).data().toInt(), 2);

        proxy.setFilterFixedString(QStringLiteral("REVIEW"));
        QCOMPARE(proxy.rowCount(), 1);
        proxy.setFilterFixedString(QStringLiteral("no such task"));
        QCOMPARE(proxy.rowCount(), 0);
        proxy.setFilterFixedString({});

        store.reset();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(proxy.rowCount(), 0);
    }

    void taskHistoryListsTheLifecycle()
    {
        SystemStore store;
        TaskHistoryModel history(&store);
        QAbstractItemModelTester tester(&history, kFatal);
        mapi::test::fillFromCapture(store);
        const QString a = store.agents().at(0).id;
        const QString b = store.agents().at(1).id;

        history.setTaskId(QStringLiteral("t-life")); // chosen before it exists
        QCOMPARE(history.rowCount(), 0);
        QSignalSpy inserted(&history, &QAbstractItemModel::rowsInserted);
        store.apply(taskRequest(QStringLiteral("t-life"), a, b, store.now() + 10));
        store.flushChanges();
        QCOMPARE(history.rowCount(), 1);
        store.apply(envelopeEvent(QStringLiteral("ev-l2"), QStringLiteral("TASK_ACCEPT"), b, a, Json{{"task_id", "t-life"}},
                                  store.now() + 10));
        store.apply(envelopeEvent(QStringLiteral("ev-l3"), QStringLiteral("TASK_COMPLETE"), b, a,
                                  Json{{"task_id", "t-life"}, {"status", "SUCCESS"}}, store.now() + 20));
        store.flushChanges();
        QCOMPARE(inserted.count(), 2); // one batch per changed()
        QCOMPARE(history.rowCount(), 3);
        const QStringList expected{QStringLiteral("requested"), QStringLiteral("accepted"), QStringLiteral("completed")};
        for (int row = 0; row < 3; ++row)
            QCOMPARE(history.index(row, TaskHistoryModel::StatusColumn).data().toString(), expected[row]);
        QCOMPARE(history.index(1, TaskHistoryModel::AgentColumn).data().toString(), store.agents().at(1).name);
        QCOMPARE(history.index(0, TaskHistoryModel::DetailColumn).data().toString(), QStringLiteral("review"));
        // Colour-coded: completed is drawn in the healthy colour, requested differently.
        QVERIFY(history.index(2, TaskHistoryModel::StatusColumn).data(Qt::DecorationRole).value<QColor>()
                != history.index(0, TaskHistoryModel::StatusColumn).data(Qt::DecorationRole).value<QColor>());

        history.setTaskId({});
        QCOMPARE(history.rowCount(), 0);
    }

    void selectingATaskFocusesItAndShowsItsHistory()
    {
        InspectorSession session;
        SelectionHub hub;
        SystemStore &store = *session.store();
        mapi::test::fillFromCapture(store);
        TasksPanel panel(&session, &hub);
        const QString a = store.agents().at(0).id;
        const QString b = store.agents().at(1).id;
        store.apply(taskRequest(QStringLiteral("t-one"), a, b, store.now() + 10));
        store.apply(taskRequest(QStringLiteral("t-two"), b, a, store.now() + 20));
        store.apply(envelopeEvent(QStringLiteral("ev-t2"), QStringLiteral("TASK_REJECT"), a, b,
                                  Json{{"task_id", "t-two"}, {"reason", "busy"}}, store.now() + 10));
        store.flushChanges();

        auto *table = panel.findChild<QTableView *>(QStringLiteral("tasksTable"));
        auto *historyView = panel.findChild<QTreeView *>(QStringLiteral("taskHistory"));
        QVERIFY(table && historyView);
        QCOMPARE(table->model()->rowCount(), 2);
        QCOMPARE(historyView->model()->rowCount(), 0);

        // Newest activity first: t-two.
        const QModelIndex first = table->model()->index(0, 0);
        QCOMPARE(first.data(TaskTableModel::TaskIdRole).toString(), QStringLiteral("t-two"));
        table->selectionModel()->setCurrentIndex(first, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(hub.focusKind(), SelectionHub::Kind::Task);
        QCOMPARE(hub.focusKey(), QStringLiteral("t-two"));
        QCOMPARE(historyView->model()->rowCount(), 2);
        QCOMPARE(historyView->model()->index(1, TaskHistoryModel::StatusColumn).data().toString(), QStringLiteral("rejected"));
        QVERIFY(panel.findChild<QLabel *>(QStringLiteral("taskHistoryTitle"))->text().contains(QLatin1String("t-two")));

        // Focus from elsewhere selects the task here.
        hub.focus(SelectionHub::Kind::Task, QStringLiteral("t-one"), nullptr);
        QCOMPARE(table->currentIndex().data(TaskTableModel::TaskIdRole).toString(), QStringLiteral("t-one"));
        QCOMPARE(historyView->model()->rowCount(), 1);

        // The filter box narrows the table.
        auto *filter = panel.findChild<QLineEdit *>(QStringLiteral("taskFilter"));
        filter->setText(QStringLiteral("rejected"));
        QTRY_COMPARE(table->model()->rowCount(), 1);
        QCOMPARE(table->model()->index(0, 0).data(TaskTableModel::TaskIdRole).toString(), QStringLiteral("t-two"));
    }

    // Tasks in the SDK's shapes keep their true statuses: a blocked task is blocked, never "in
    // progress", in the table's colour and in the panel's counts.
    void blockedAndFailedTasksAreShownAsTheyAre()
    {
        InspectorSession session;
        SelectionHub hub;
        SystemStore &store = *session.store();
        TasksPanel panel(&session, &hub);
        ProtocolPipeline pipeline;
        qint64 t = 1000;
        const auto event = [&](const char *type, const Json &data) {
            const Json frame = {{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", {{"event", {{"type", type}, {"data", data}}}}}};
            store.apply(pipeline.frameReceived(QByteArray::fromStdString(frame.dump()), t += 10).inputs);
        };
        event("task_created", {{"task", {{"id", "t-b"}, {"title", "wait for review"}, {"status", "in_progress"}}}});
        event("task_status", {{"taskId", "t-b"}, {"previous", "in_progress"}, {"current", "blocked"}});
        event("task.created", {{"task", {{"id", "t-f"}, {"title", "parse"}, {"status", "open"}}}});
        event("task.status", {{"taskId", "t-f"}, {"previous", "open"}, {"current", "failed"}});
        event("task.created", {{"task", {{"id", "t-w"}, {"title", "write"}, {"status", "in_progress"}}}});
        store.flushChanges();
        QCOMPARE(store.task(QStringLiteral("t-b"))->status, QStringLiteral("blocked"));
        QCOMPARE(store.task(QStringLiteral("t-b"))->type, QStringLiteral("wait for review"));
        QCOMPARE(store.task(QStringLiteral("t-f"))->status, QStringLiteral("failed"));
        QCOMPARE(int(taskPhase(QStringLiteral("blocked"))), int(TaskPhase::Blocked));
        QVERIFY(taskPhaseColor(TaskPhase::Blocked, panel.palette()) != taskPhaseColor(TaskPhase::Active, panel.palette()));
        const QString counts = panel.findChild<QLabel *>(QStringLiteral("taskCounts"))->text();
        QVERIFY2(counts.contains(QLatin1String("1&nbsp;blocked")), qPrintable(counts));
        QVERIFY2(counts.contains(QLatin1String("1&nbsp;in progress")), qPrintable(counts));
        QVERIFY2(counts.contains(QLatin1String("1&nbsp;failed")), qPrintable(counts));
    }

    void chartSeriesGainPointsWhenCountersChange()
    {
        SystemStore store;
        HealthHistory history(&store);
        HealthCharts charts(&history);
        charts.resize(800, 600);
        charts.show();
        QVERIFY(QTest::qWaitForWindowExposed(&charts));
        QLineSeries *events = seriesNamed(charts, "eventsSeries");
        QLineSeries *messages = seriesNamed(charts, "messagesSeries");
        QVERIFY(events && messages);

        mapi::test::fillFromCapture(store);
        const qint64 t0 = 1'800'000'000'000;
        history.sampleLive(t0); // baseline only
        QCOMPARE(events->count(), 0);

        const QString a = store.agents().at(0).id;
        const QString b = store.agents().at(1).id;
        for (int i = 0; i < 4; ++i)
            store.apply(envelopeEvent(QStringLiteral("ev-c%1").arg(i), QStringLiteral("HEARTBEAT"), a, b,
                                      Json{{"status", "ACTIVE"}}, store.now() + 1));
        store.flushChanges();
        history.sampleLive(t0 + 2000);
        QCOMPARE(events->count(), 1);
        QCOMPARE(events->at(0).y(), 2.0);   // 4 events in 2 s
        QCOMPARE(messages->at(0).y(), 2.0); // each carried one message
        QCOMPARE(events->at(0).x(), double(t0 + 2000));

        history.sampleLive(t0 + 3000);
        QCOMPARE(events->count(), 2);
        QCOMPARE(events->at(1).y(), 0.0);

        // Agents by state: the top of the stack is every agent.
        QLineSeries *top = seriesNamed(charts, "stateTop5");
        QVERIFY(top);
        QCOMPARE(top->at(1).y(), double(store.agents().size()));

        // Usage: hidden behind a note until an agent reports it.
        auto *note = charts.findChild<QLabel *>(QStringLiteral("noUsageNote"));
        QVERIFY(note && note->isVisible());
        store.apply(envelopeEvent(QStringLiteral("ev-u"), QStringLiteral("STATUS_UPDATE"), a, b,
                                  Json{{"resource_usage", {{"tokens_used", 12000}, {"cost_usd", 0.25}}}}, store.now() + 1));
        store.flushChanges();
        history.sampleLive(t0 + 4000);
        QVERIFY(!note->isVisible());
        QCOMPARE(seriesNamed(charts, "tokensSeries")->at(2).y(), 12.0); // thousands
        QCOMPARE(seriesNamed(charts, "costSeries")->at(2).y(), 0.25);

        // Bounded: memory stays flat, and the session's start stays in the series (the oldest
        // samples are thinned, not dropped). The series get about one point per two pixels, and
        // a spike survives the thinning.
        for (int i = 0; i < HealthHistory::kCapacity + 50; ++i) {
            if (i == HealthHistory::kCapacity)
                for (int k = 0; k < 40; ++k)
                    store.apply(envelopeEvent(QStringLiteral("ev-s%1").arg(k), QStringLiteral("HEARTBEAT"), a, b,
                                              Json{{"status", "ACTIVE"}}, store.now() + 1));
            store.flushChanges();
            history.sampleLive(t0 + 5000 + i * 1000);
        }
        QVERIFY(int(history.samples().size()) <= HealthHistory::kCapacity);
        QVERIFY(int(history.samples().size()) > HealthHistory::kCapacity / 2);
        QVERIFY(history.samples().front().timeMs <= t0 + 3000);
        QCOMPARE(history.samples().back().timeMs, t0 + 5000 + (HealthHistory::kCapacity + 49) * 1000);
        for (size_t i = 1; i < history.samples().size(); ++i)
            QVERIFY(history.samples()[i].timeMs > history.samples()[i - 1].timeMs);
        const QChartView *trafficView = charts.findChild<QChartView *>(QStringLiteral("trafficChart"));
        QVERIFY(events->count() > 20);
        QVERIFY(events->count() <= int(trafficView->chart()->plotArea().width()) / 2 + 1);
        QCOMPARE(events->at(events->count() - 1).x(), double(history.samples().back().timeMs));
        double peak = 0;
        for (const QPointF &p : events->points())
            peak = std::max(peak, p.y());
        QCOMPARE(peak, 40.0);

        store.reset();
        QCOMPARE(int(history.samples().size()), 0);
        QCOMPARE(events->count(), 0);
    }

    void traceSeriesAreDerivedFromTimestamps()
    {
        SystemStore store;
        mapi::test::fillFromCapture(store);
        const QString a = store.agents().at(0).id;
        const QString b = store.agents().at(1).id;
        store.apply(taskRequest(QStringLiteral("t-ok"), a, b, store.now() + 10));
        store.apply(envelopeEvent(QStringLiteral("ev-ok"), QStringLiteral("TASK_COMPLETE"), b, a,
                                  Json{{"task_id", "t-ok"}, {"status", "SUCCESS"}}, store.now() + 500));
        store.apply(taskRequest(QStringLiteral("t-bad"), a, b, store.now() + 10));
        store.apply(envelopeEvent(QStringLiteral("ev-bad"), QStringLiteral("TASK_FAILED"), b, a,
                                  Json{{"task_id", "t-bad"}, {"error_message", "crashed"}}, store.now() + 1500));
        store.flushChanges();

        HealthHistory history(&store);
        QSignalSpy done(&history, &HealthHistory::samplesChanged);
        history.rebuildFromStore();
        QVERIFY(history.isRebuilding());
        QTRY_VERIFY(!history.isRebuilding());
        QTRY_COMPARE(done.count(), 1);
        const std::deque<HealthSample> &samples = history.samples();
        QVERIFY(samples.size() > 1);
        QVERIFY(int(samples.size()) <= HealthHistory::kCapacity);

        // Every event lands in exactly one bucket, every message too.
        const double bucketSeconds = double(samples[1].timeMs - samples[0].timeMs) / 1000.0;
        double events = 0, messages = 0;
        for (const HealthSample &s : samples) {
            events += s.eventsPerSecond * bucketSeconds;
            messages += s.messagesPerSecond * bucketSeconds;
        }
        QCOMPARE(qRound(events), int(store.events().size()));
        QCOMPARE(qRound(messages), int(store.messages().size()));

        // At the end every agent is counted in its final state; tasks ended one each way.
        const HealthSample &last = samples.back();
        std::array<int, kStateGroupCount> finalStates{};
        for (const Agent &agent : store.agents())
            ++finalStates[size_t(stateGroup(agent.state, agent.unregistered))];
        QCOMPARE(last.agentsByState, finalStates);
        QCOMPARE(last.tasksCompleted, 1);
        QCOMPARE(last.tasksFailed, 1);
        QCOMPARE(samples.front().tasksCompleted, 0);

        // A reset abandons a rebuild under way.
        history.rebuildFromStore();
        store.reset();
        QVERIFY(!history.isRebuilding());
        QVERIFY(history.samples().empty());
    }

    void traceOpenedInTheSessionFillsTheCharts()
    {
        InspectorSession session;
        SelectionHub hub;
        HealthPanel panel(&session, &hub);
        panel.resize(500, 900);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QString error;
        QVERIFY2(session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error), qPrintable(error));
        QLineSeries *events = seriesNamed(panel, "eventsSeries");
        QVERIFY(events);
        QTRY_VERIFY(events->count() > 1);
    }

    void chartsFollowTheTheme()
    {
        SystemStore store;
        HealthHistory history(&store);
        HealthCharts charts(&history);
        auto *view = charts.findChild<QChartView *>(QStringLiteral("trafficChart"));
        QVERIFY(view);
        charts.show(); // Qt hands palettes to widgets once they are polished (shown)
        QVERIFY(QTest::qWaitForWindowExposed(&charts));
        // Qt delivers the palette change to widgets from the event loop.
        applyTheme(Theme::Dark);
        QTRY_COMPARE(view->chart()->theme(), QChart::ChartThemeDark);
        QCOMPARE(view->chart()->backgroundBrush().color(), charts.palette().color(QPalette::Base));
        QVERIFY(charts.palette().color(QPalette::Base).lightness() < 128);
        applyTheme(Theme::Light);
        QTRY_COMPARE(view->chart()->theme(), QChart::ChartThemeLight);
        QCOMPARE(view->chart()->backgroundBrush().color(), charts.palette().color(QPalette::Base));
    }
};

QTEST_MAIN(TestHealthTasks)
#include "tst_health_tasks.moc"
