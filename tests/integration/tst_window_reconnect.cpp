// The window across a dropped connection and a restarted server, against the official MAP server
// (demo system, incidents scenario): the operator's picture survives both. A drop (the network,
// not the server) keeps every open alert and its acknowledgement and raises nothing again; a
// restart (the server killed, a new run of it on the same port) does not double the agents or the
// alerts: the previous run's agents are departed (hidden in the agents table and the topology by
// default) and their alerts clear. Any Qt warning fails the test.
#include "DropProxy.h"
#include "WindowLiveSupport.h"

#include "alerts/AlertMonitor.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"

#include <QSignalSpy>

#include <map>

using namespace mapi;
using namespace mapi::test;

namespace {

// Open alerts by what a person reads: kind, subject and the agents' shown names. Two alerts with
// one reading are the doubling the operator complained of.
std::map<QString, int> alertsByReading(const AlertMonitor &monitor, const SystemStore &store)
{
    std::map<QString, int> out;
    for (const auto &[key, alert] : monitor.openAlerts()) {
        QStringList names;
        for (const QString &id : alert.agents) {
            const Agent *agent = store.agent(id);
            names << (agent ? agent->name : id);
        }
        names.sort();
        ++out[QStringLiteral("%1 %2 %3").arg(alertKindName(alert.kind), alert.subject, names.join(u','))];
    }
    return out;
}

int liveAgents(const SystemStore &store)
{
    int n = 0;
    for (const Agent &agent : store.agents())
        n += !agent.unregistered && !agent.placeholder;
    return n;
}

} // namespace

class WindowReconnectTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QApplication::setOrganizationName(QStringLiteral("MAP Inspector tests"));
        qInstallMessageHandler(failOnWarnings);
    }

    void dropKeepsAlertsAndRestartDoublesNothing()
    {
        const QStringList options{QStringLiteral("--agents"), QStringLiteral("20"), QStringLiteral("--scenario"),
                                  QStringLiteral("incidents")};
        auto first = std::make_unique<DemoProcess>();
        QVERIFY2(first->start(QStringLiteral("extended"), 0, options), qPrintable(first->error()));
        const int port = first->port();
        DropProxy proxy{QUrl(first->url())};

        ui::MainWindow window;
        window.show();
        ClientOptions connectOptions;
        connectOptions.url = QUrl(proxy.url());
        connectOptions.backoffInitialMs = 300;
        connectOptions.backoffMaxMs = 2000;
        window.connection()->connectTo(connectOptions, true);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 15000);
        const SystemStore *store = window.session()->store();
        AlertMonitor *monitor = window.alertMonitor();
        ui::AlertModel *alerts = window.alertsPanel()->model();

        // The scripted failure (about 8 s in); the operator acknowledges it.
        const auto openOf = [&](AlertKind kind) {
            for (const auto &[key, alert] : monitor->openAlerts())
                if (alert.kind == kind)
                    return key;
            return QString();
        };
        QTRY_VERIFY_WITH_TIMEOUT(!openOf(AlertKind::Failed).isEmpty(), 40000);
        const QString failed = openOf(AlertKind::Failed);
        QTRY_VERIFY(alerts->rowOf(failed) >= 0); // the inbox hears of it at the next turn of the event loop
        alerts->setAcknowledged(failed, true);
        QCOMPARE(alerts->counts(QDateTime::currentMSecsSinceEpoch()).acknowledged, 1);
        QStringList before;
        for (const auto &[key, alert] : monitor->openAlerts())
            before << key;

        // 1. The network drops the connection; the server stays up. Nothing is raised again,
        //    nothing clears, the acknowledgement stays.
        QStringList changedAgain; // alerts of before raised or cleared since the drop
        const QMetaObject::Connection watch = connect(monitor, &AlertMonitor::alertsChanged, this, [&](const std::vector<AlertChange> &changes) {
            for (const AlertChange &change : changes)
                if (before.contains(change.alert.key()))
                    changedAgain << QStringLiteral("%1 %2").arg(change.alert.key(), change.raised ? QStringLiteral("raised") : QStringLiteral("cleared"));
        });
        QSignalSpy resets(monitor, &AlertMonitor::alertsReset);
        proxy.breakNewest(Drop::Reset);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() != ClientState::Live, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live, 20000);
        QTest::qWait(2500); // two evaluations on the reconnected model
        disconnect(watch);
        QCOMPARE(resets.size(), 0);
        QVERIFY2(changedAgain.isEmpty(), qPrintable(changedAgain.join(u'\n')));
        QVERIFY(monitor->openAlerts().count(failed));
        QCOMPARE(alerts->counts(QDateTime::currentMSecsSinceEpoch()).acknowledged, 1);

        // 2. The server is killed and a new run of it starts on the same port: new agent ids for
        //    the same names. The previous run's agents are departed, and their alerts go.
        const int agentsOfFirstRun = liveAgents(*store);
        QVERIFY(agentsOfFirstRun >= 20);
        first->kill();
        first.reset();
        DemoProcess second;
        QVERIFY2(second.start(QStringLiteral("extended"), port, options), qPrintable(second.error()));
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->clientState() == ClientState::Live
                                     && demoHttp(second.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 20,
                                 30000);
        // The new run's own failure, on its own agent.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (const auto &[key, alert] : monitor->openAlerts())
                    if (alert.kind == AlertKind::Failed && key != failed)
                        return true;
                return false;
            }(),
            40000);
        QTest::qWait(1500);
        QVERIFY2(!monitor->openAlerts().count(failed), "the departed agent's failure is still open");
        for (const auto &[reading, count] : alertsByReading(*monitor, *store))
            QVERIFY2(count == 1, qPrintable(QStringLiteral("%1 open %2 times").arg(reading).arg(count)));

        // Agents: as many listed as the new run has, not both runs.
        const int serverAgents = int(demoHttp(second.url(), QStringLiteral("/view")).value("agents", Json::array()).size());
        QCOMPARE(liveAgents(*store), serverAgents);
        QVERIFY(int(store->agents().size()) >= agentsOfFirstRun + serverAgents); // the first run's are kept, departed
        QAbstractItemView *table = agentsView(window);
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), serverAgents + int(std::count_if(store->agents().begin(), store->agents().end(), [](const Agent &a) {
                                                                                   return a.placeholder && !a.unregistered;
                                                                               })),
                                  3000);
        window.close();
    }
};

QTEST_MAIN(WindowReconnectTest)
#include "tst_window_reconnect.moc"
