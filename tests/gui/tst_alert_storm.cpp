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
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "trace/TraceLoader.h"

#include <QApplication>
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
        QTRY_VERIFY_WITH_TIMEOUT(delivery.webhook()->queued() == 0 && delivery.webhook()->sent() == qint64(receiver.bodies.size())
                                     && receiver.bodies.size() > 0,
                                 10000);
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

        // The connection never came up: the store was not reset under the test.
        QCOMPARE(session.store()->agents().size() >= size_t(fleet->agents), true);
        session.disconnectFromServer();
    }
};

QTEST_MAIN(TestAlertStorm)
#include "tst_alert_storm.moc"
