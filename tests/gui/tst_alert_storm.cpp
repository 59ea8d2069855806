// An alert storm in the window (issue 44 item 3), on the realistic fleet (tools/fleet-trace): a
// team of more than 1,000 agents falls silent and another team's shared dependency fails. Over a
// live session (a local server that never answers keeps it "live" without a word), the inbox,
// the desktop notification and the webhook each tell the silent team's storm once: one group
// row that lists its alerts on demand, one notification naming it, one webhook call; acknowledge,
// snooze and the actions' agent selection act on the whole group. Offscreen; any Qt warning fails.
#include "FleetTrace.h"
#include "GuiTestSupport.h"

#include "alerts/AlertMonitor.h"
#include "alerts/AlertRules.h"
#include "alerts/AlertWebhook.h"
#include "common/AlertNotifier.h"
#include "controllers/AlertDeliveryController.h"
#include "dialogs/SupervisionDialog.h"
#include "models/AlertModel.h"
#include "models/AlertOrder.h"
#include "model/SystemStore.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "trace/TraceLoader.h"

#include <QApplication>
#include <QCheckBox>
#include <QDateTime>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QToolButton>
#include <QWidget>
#include <QtTest>

#include <algorithm>

using namespace mapi;
using namespace mapi::ui;

namespace {

// Takes HTTP POSTs and answers 204; keeps each request's body.
class HookReceiver : public QObject
{
public:
    std::vector<Json> bodies;

    HookReceiver()
    {
        QVERIFY(m_server.listen(QHostAddress::LocalHost));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
        });
    }
    QUrl url() const { return QUrl(QStringLiteral("http://127.0.0.1:%1/hook").arg(m_server.serverPort())); }

private:
    void read(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        qsizetype length = 0;
        for (const QByteArray &line : buffer.left(end).split('\n'))
            if (line.toLower().startsWith("content-length:"))
                length = line.mid(15).trimmed().toLongLong();
        if (buffer.size() < end + 4 + length)
            return;
        bodies.push_back(Json::parse(buffer.mid(end + 4, length).toStdString(), nullptr, false));
        m_buffers.remove(socket);
        socket->write("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

// An unresponsive alert of agent `agent` that began at `sinceMs`: agents the store does not know
// share an empty scope, so the default grouping puts them all in one group.
AlertChange unresponsive(int agent, bool raised, qint64 sinceMs = 1000)
{
    Alert a;
    a.kind = AlertKind::Unresponsive;
    a.agents = {QStringLiteral("agent-%1").arg(agent)};
    a.sinceMs = sinceMs;
    a.reason = QStringLiteral("no heartbeat");
    return {a, raised, sinceMs};
}

QList<int> visibleRowsOfGroup(QAbstractItemModel *view, const QString &groupKey)
{
    QList<int> rows;
    for (int r = 0; r < view->rowCount(); ++r)
        if (view->index(r, 0).data(AlertModel::GroupRole).toString() == groupKey)
            rows << r;
    return rows;
}

} // namespace

class TestAlertStorm : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        mapi::test::failOnQtWarnings();
    }

    void aStormIsOneRowOneNotificationOneWebhookCall()
    {
        // A fleet whose silent team (about 12 % of it) has more than 1,000 agents.
        QTemporaryDir dir;
        fleet::FleetOptions options;
        options.agents = 8600;
        const QString path = dir.filePath(QStringLiteral("fleet.jsonl.zst"));
        const auto fleet = fleet::writeFleetTrace(path, options);
        QVERIFY2(fleet.ok(), qPrintable(fleet.error()));
        QVERIFY2(fleet->silentAgents >= 1000, qPrintable(QString::number(fleet->silentAgents)));

        // A live session: a server that accepts and never answers (the handshake stays under way).
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        InspectorSession session;
        ClientOptions client;
        client.url = QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(silent.serverPort()));
        client.requestTimeoutMs = client.probeAfterSilenceMs = client.probeTimeoutMs = 10 * 60000;
        session.connectTo(client, false);
        QCOMPARE(session.source(), InspectorSession::Source::Live);

        AlertRules rules; // the defaults group by scope, 5 alerts or more
        rules.groupWaitMs = 0; // told at the evaluation's end (the default waits 30 s for the rest of a storm)
        AlertMonitor monitor;
        monitor.setRules(rules);
        monitor.setStore(session.store());
        SelectionHub hub;
        QWidget window; // never shown: not in front, so notifications are given
        AlertsPanel panel(&session, &hub, &monitor);
        AlertDeliveryController delivery(&session, &monitor, &window);
        HookReceiver receiver;
        delivery.webhook()->setTarget(receiver.url(), QString(), AlertSeverity::Info);
        QSignalSpy notified(delivery.notifier(), &AlertNotifier::notified);

        TraceLoadOptions load;
        load.readerThread = false;
        const TraceLoadResult loaded = loadTraceInto(*session.store(), path, load);
        QVERIFY2(loaded.ok, qPrintable(loaded.error));
        session.store()->advanceTime(loaded.lastTimeMs);
        monitor.evaluateNow();

        // The storm's group: every alert of the silent team's agents, grouped.
        const QString where = QStringLiteral("in team/") + fleet->silentTeam;
        const AlertGroup *storm = nullptr;
        for (const auto &[key, g] : monitor.groups().groups())
            if (g.kind == AlertKind::Unresponsive && g.where == where)
                storm = &g;
        QVERIFY(storm);
        QCOMPARE(int(storm->alerts.size()), fleet->silentAgents);
        const QString groupKey = storm->key;

        // The inbox: one row for it, not 1,000; the alerts of all kinds fit a screen.
        auto *table = panel.findChild<QTableView *>(QStringLiteral("alertsTable"));
        QAbstractItemModel *view = table->model();
        QCOMPARE(visibleRowsOfGroup(view, groupKey).size(), 1);
        QVERIFY2(view->rowCount() < 40, qPrintable(QString::number(view->rowCount())));
        QVERIFY(panel.model()->counts(QDateTime::currentMSecsSinceEpoch()).open > fleet->silentAgents + fleet->failedAgents - 10);
        const int groupRow = visibleRowsOfGroup(view, groupKey).first();
        const QString agentsText = view->index(groupRow, AlertModel::AgentsColumn).data().toString();
        QVERIFY2(agentsText.contains(where) && agentsText.contains(QLocale().toString(fleet->silentAgents)), qPrintable(agentsText));
        QVERIFY(panel.findChild<QLabel *>(QStringLiteral("alertsSummary"))->text().contains(QLatin1String("group")));

        // One notification for the whole evaluation, headed by a group, counting groups, not agents.
        QCOMPARE(notified.size(), 1);
        const QString text = notified.first().at(1).toString();
        QVERIFY2(text.contains(QLatin1String("agents in team/")), qPrintable(text));
        const QRegularExpression more(QStringLiteral("and (\\d+) more"));
        const QRegularExpressionMatch m = more.match(text);
        QVERIFY2(!m.hasMatch() || m.captured(1).toInt() < 40, qPrintable(text));

        // One webhook call for the storm; none for its agents one by one.
        QTRY_VERIFY_WITH_TIMEOUT(delivery.webhook()->isIdle() && receiver.bodies.size() > 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(delivery.webhook()->sent() + delivery.webhook()->failed(), qint64(receiver.bodies.size()), 10000);
        const QStringList stormAgentList = panel.model()->agentsAt(panel.model()->groupRowOf(groupKey));
        const QSet<QString> stormAgents(stormAgentList.begin(), stormAgentList.end());
        QCOMPARE(stormAgents.size(), fleet->silentAgents);
        int stormCalls = 0, singleCallsOfTheTeam = 0, singleCalls = 0;
        for (const Json &body : receiver.bodies) {
            if (body.value("group", std::string()) == groupKey.toStdString()) {
                ++stormCalls;
                QCOMPARE(body.value("state", std::string()), std::string("new"));
                QCOMPARE(body.value("open", 0), fleet->silentAgents);
            }
            if (body.value("alert", std::string()) == "unresponsive" && body.contains("agentId") && body["agentId"].is_string()) {
                ++singleCalls;
                singleCallsOfTheTeam += stormAgents.contains(QString::fromStdString(body["agentId"].get<std::string>()));
            }
        }
        QCOMPARE(stormCalls, 1);
        QCOMPARE(singleCallsOfTheTeam, 0);
        qInfo("webhook calls: %d (one per group or single alert; %d single unresponsive)", int(receiver.bodies.size()), singleCalls);
        QVERIFY2(receiver.bodies.size() < 40, qPrintable(QString::number(receiver.bodies.size())));

        // Selecting the group selects every agent of it (inject, suspend and stop act on those).
        panel.selectKey(AlertModel::groupRowKey(groupKey));
        QCOMPARE(hub.selectedAgents().size(), fleet->silentAgents);

        // Supervise… on the storm: the dialog offers that storm only, its rule ticked; the ladder
        // then acts on the storm as one (one nudge to all its agents, not one per alert).
        QSignalSpy supervise(&panel, &AlertsPanel::superviseRequested);
        panel.findChild<QToolButton *>(QStringLiteral("alertSupervise"))->click();
        QCOMPARE(supervise.size(), 1);
        QCOMPARE(supervise.first().at(0).toString(), AlertModel::groupRowKey(groupKey));
        SupervisionLadder ladder;
        ladder.setGroupOf([&](const QString &alertKey) { return monitor.groups().groupOf(alertKey); });
        {
            SupervisionDialog dialog(ladder, monitor.openAlerts(), session.store(), false, storm);
            auto *only = dialog.findChild<QCheckBox *>(QStringLiteral("superviseStormOnly"));
            QVERIFY(only && only->isChecked() && only->text().contains(where));
            QVERIFY(dialog.findChild<QCheckBox *>(QStringLiteral("supervise-unresponsive"))->isChecked());
            QVERIFY(!dialog.findChild<QCheckBox *>(QStringLiteral("supervise-failed"))->isChecked());
            auto *preview = dialog.findChild<QLabel *>(QStringLiteral("preview-unresponsive"));
            QVERIFY2(preview->text().startsWith(QLatin1String("1 storm"))
                         && preview->text().contains(QString::number(fleet->silentAgents - 5) + QLatin1String(" more")),
                     qPrintable(preview->text()));
            QCOMPARE(dialog.plan(AlertKind::Unresponsive).onlyGroups, QStringList{groupKey});
            only->setChecked(false); // the whole rule: every unresponsive alert
            QVERIFY(dialog.plan(AlertKind::Unresponsive).onlyGroups.isEmpty());
            QVERIFY2(!preview->text().startsWith(QLatin1String("1 storm")), qPrintable(preview->text()));
            only->setChecked(true);
            LadderPlan plan = dialog.plan(AlertKind::Unresponsive);
            // Opened again on a rule already limited to the storm: its limit is kept, and
            // unticking "only the storm" gives the whole rule back.
            LadderPlan limitedBefore = plan;
            SupervisionLadder again;
            again.setPlan(AlertKind::Unresponsive, limitedBefore);
            SupervisionDialog reopened(again, monitor.openAlerts(), session.store(), false, storm);
            auto *keep = reopened.findChild<QCheckBox *>(QStringLiteral("superviseKeepLimits"));
            QVERIFY(keep && keep->isChecked());
            QCOMPARE(reopened.plan(AlertKind::Unresponsive).onlyGroups, QStringList{groupKey});
            reopened.findChild<QCheckBox *>(QStringLiteral("superviseStormOnly"))->setChecked(false);
            QVERIFY(reopened.plan(AlertKind::Unresponsive).onlyGroups.isEmpty());
            plan.suspendAfterMs = -1;
            ladder.setPlan(AlertKind::Unresponsive, plan);
        }
        std::vector<AlertChange> open;
        const qint64 now = session.store()->now();
        for (const auto &[key, alert] : monitor.openAlerts())
            open.push_back({alert, true, now});
        Alert outside; // an unresponsive agent of another team: the rule's, not the storm's
        outside.kind = AlertKind::Unresponsive;
        outside.agents = {session.store()->agents().front().id};
        QVERIFY(!stormAgents.contains(outside.agents.first()));
        open.push_back({outside, true, now});
        ladder.alertsChanged(open);
        const std::vector<LadderAction> steps = ladder.due(now);
        QCOMPARE(int(steps.size()), 1); // one nudge, the storm's; the other alerts left alone
        QCOMPARE(steps.front().step, LadderStep::Nudge);
        QCOMPARE(steps.front().alertKey, AlertModel::groupRowKey(groupKey));
        const QStringList selected = hub.selectedAgents();
        QCOMPARE(QSet<QString>(steps.front().agents.begin(), steps.front().agents.end()),
                 QSet<QString>(selected.begin(), selected.end()));
        QCOMPARE(int(steps.front().agents.size()), fleet->silentAgents);

        // Listing: its alerts right below it; folding hides them again.
        auto *list = panel.findChild<QToolButton *>(QStringLiteral("alertExpand"));
        QVERIFY(list->isEnabled());
        list->click();
        QList<int> rows = visibleRowsOfGroup(view, groupKey);
        QCOMPARE(rows.size(), fleet->silentAgents + 1);
        QVERIFY(view->index(rows.first(), 0).data(AlertModel::IsGroupRole).toBool());
        QCOMPARE(rows.last() - rows.first(), fleet->silentAgents); // contiguous, the group first
        QCOMPARE(panel.selectedKey(), AlertModel::groupRowKey(groupKey)); // the selection stayed
        list->click();
        QCOMPARE(visibleRowsOfGroup(view, groupKey).size(), 1);

        // Acknowledging the group acknowledges its alerts; it sorts after what still waits.
        panel.acknowledgeSelected();
        rows = visibleRowsOfGroup(view, groupKey);
        QVERIFY(view->index(rows.first(), 0).data(AlertModel::AcknowledgedRole).toBool());
        const AlertModel *model = panel.model();
        const std::vector<int> members = model->memberRowsOf(model->groupRowOf(groupKey));
        QCOMPARE(int(members.size()), fleet->silentAgents);
        for (const int member : members)
            QVERIFY(model->acknowledgedAt(member));
        for (int r = rows.first() + 1; r < view->rowCount(); ++r)
            QVERIFY(view->index(r, 0).data(AlertModel::AcknowledgedRole).toBool());

        // Snoozing it hides the group.
        panel.selectKey(AlertModel::groupRowKey(groupKey));
        panel.snoozeSelected(3600000);
        QVERIFY(visibleRowsOfGroup(view, groupKey).isEmpty());
        for (const int member : model->memberRowsOf(model->groupRowOf(groupKey)))
            QVERIFY(model->snoozedUntilAt(member) > QDateTime::currentMSecsSinceEpoch());

        // New rules that group the same way: the storm forms again, and is not sent as new again.
        const size_t callsBefore = receiver.bodies.size();
        monitor.setRules(rules);
        monitor.evaluateNow();
        QTRY_VERIFY_WITH_TIMEOUT(delivery.webhook()->isIdle(), 10000);
        for (size_t i = callsBefore; i < receiver.bodies.size(); ++i)
            QVERIFY(receiver.bodies[i].value("group", std::string()) != groupKey.toStdString());
        // Rules without grouping: the storm is no group any more, and is said resolved, once.
        AlertRules ungrouped = rules;
        ungrouped.groupBy.clear();
        monitor.setRules(ungrouped);
        monitor.evaluateNow();
        QTRY_VERIFY_WITH_TIMEOUT(delivery.webhook()->isIdle(), 10000);
        int resolved = 0, news = 0;
        for (const Json &body : receiver.bodies)
            if (body.value("group", std::string()) == groupKey.toStdString())
                (body.value("state", std::string()) == "resolved" ? resolved : news) += 1;
        QCOMPARE(news, 1);
        QCOMPARE(resolved, 1);

        // The connection never came up: the store was not reset under the test.
        QCOMPARE(session.store()->agents().size() >= size_t(fleet->agents), true);
        session.disconnectFromServer();
    }

    // The inbox's rows over a storm told in parts, as AlertMonitor tells a verdict: a group that
    // forms around alerts already listed, members joining an acknowledged group, the group's
    // start when its earliest alert clears, a storm that ends and one that forms again at once,
    // and marks kept over new rules for every part of the first verdict.
    void groupRowsFollowTheStormInParts()
    {
        SystemStore store;
        AlertGroups groups; // the defaults: by scope, 5 alerts make a group
        AlertModel model(&store);
        model.setGroups(&groups);
        AlertOrder order;
        order.setSourceModel(&model);
        order.setDynamicSortFilter(true);
        order.sort(0);
        connect(&model, &AlertModel::groupingChanged, &order, &AlertOrder::regroup);
        QSignalSpy regrouped(&model, &AlertModel::groupingChanged);
        const auto tell = [&](const std::vector<AlertChange> &part) {
            groups.apply(part, store, 5000);
            model.apply(part);
        };

        tell({unresponsive(0, true, 1300), unresponsive(1, true, 1100), unresponsive(2, true, 1200)});
        QCOMPARE(order.rowCount(), 3); // too few: single rows
        QCOMPARE(regrouped.size(), 0);
        tell({unresponsive(3, true, 1400), unresponsive(4, true, 1500), unresponsive(5, true, 1600)});
        QCOMPARE(regrouped.size(), 1); // formed around the three listed singly
        QCOMPARE(order.rowCount(), 1);
        const QString groupKey = order.index(0, 0).data(AlertModel::GroupRole).toString();
        QVERIFY(order.index(0, 0).data(AlertModel::IsGroupRole).toBool());
        QCOMPARE(order.index(0, 0).data(AlertModel::SinceRole).toLongLong(), qint64(1100));
        QCOMPARE(model.agentsAt(model.groupRowOf(groupKey)).size(), 6);

        // Acknowledged as a group; an alert joining later is acknowledged with it.
        model.setAcknowledged(AlertModel::groupRowKey(groupKey), true);
        tell({unresponsive(6, true, 1700)});
        QVERIFY(model.acknowledgedAt(model.rowOf(unresponsive(6, true).alert.key())));
        QCOMPARE(model.counts(0).acknowledged, 7);

        // Listed: the group first, its alerts right below it, oldest first.
        model.setExpanded(groupKey, true);
        QCOMPARE(order.rowCount(), 8);
        QVERIFY(order.index(0, 0).data(AlertModel::IsGroupRole).toBool());
        for (int r = 1; r < 8; ++r) {
            QCOMPARE(order.index(r, 0).data(AlertModel::GroupRole).toString(), groupKey);
            if (r > 1)
                QVERIFY(order.index(r - 1, 0).data(AlertModel::SinceRole).toLongLong() <= order.index(r, 0).data(AlertModel::SinceRole).toLongLong());
        }

        // Its earliest alert clears: the group's start is the next one's.
        tell({unresponsive(1, false)});
        QCOMPARE(model.alertAt(model.groupRowOf(groupKey))->sinceMs, qint64(1200));

        // The storm ends and, in the same batch, another forms: a new row, folded, not acknowledged.
        std::vector<AlertChange> turnover;
        for (const int agent : {0, 2, 3, 4, 5, 6})
            turnover.push_back(unresponsive(agent, false));
        for (int agent = 10; agent < 16; ++agent)
            turnover.push_back(unresponsive(agent, true, 3000));
        tell(turnover);
        QCOMPARE(order.rowCount(), 1);
        QVERIFY(!model.isExpanded(groupKey));
        QVERIFY(!model.acknowledgedAt(model.groupRowOf(groupKey)));
        QCOMPARE(model.counts(0).acknowledged, 0);
        QCOMPARE(model.alertAt(model.groupRowOf(groupKey))->sinceMs, qint64(3000));

        // New rules: the inbox forgets and the detectors raise again, the verdict in two parts;
        // the group's acknowledgement comes back to every alert of it, whichever part brought it.
        model.setAcknowledged(AlertModel::groupRowKey(groupKey), true);
        model.clear();
        groups.clear();
        std::vector<AlertChange> first, second;
        for (int agent = 10; agent < 16; ++agent)
            (agent < 13 ? first : second).push_back(unresponsive(agent, true, 3000));
        first.push_back(unresponsive(20, true, 3500)); // new: acknowledged with its group
        first.push_back(unresponsive(21, true, 3500));
        tell(first);
        tell(second);
        model.evaluationEnded();
        QCOMPARE(order.rowCount(), 1);
        QVERIFY(model.acknowledgedAt(model.groupRowOf(groupKey)));
        QCOMPARE(model.counts(0).acknowledged, 8);

        // The storm clears at once: no row is left.
        std::vector<AlertChange> end;
        for (const int agent : {10, 11, 12, 13, 14, 15, 20, 21})
            end.push_back(unresponsive(agent, false));
        tell(end);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(order.rowCount(), 0);
        QCOMPARE(model.groupRowOf(groupKey), -1);
    }
};

QTEST_MAIN(TestAlertStorm)
#include "tst_alert_storm.moc"
