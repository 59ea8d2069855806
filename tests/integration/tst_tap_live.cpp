// The passive tap (map-inspector-cli tap) in front of the official MAPServer (the demo system):
// the simulated agents (the SDK's AgentConnection) and an observer (map-inspector-cli record)
// connect through it. Every frame arrives unchanged both ways, the agents' own requests and the
// server's answers to them are in the tap's trace, and that trace replays to the server's view.
#include "DemoSystem.h"

#include "MainWindow.h"
#include "panels/ConnectionsPanel.h"
#include "session/InspectorSession.h"
#include "systems/SystemView.h"
#include "model/SystemStore.h"
#include "controllers/TraceController.h"
#include "tap/WebSocketTap.h"
#include "trace/Trace.h"

#include <QDir>
#include <QDockWidget>
#include <QSignalSpy>
#include <QTableWidget>

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;
using namespace mapi::test;

namespace {

std::vector<TraceRecord> readRecords(const QString &path)
{
    std::vector<TraceRecord> records;
    TraceReadStats stats;
    QString error;
    readTrace(path, [&](const TraceRecord &r) { records.push_back(r); return true; }, stats, &error);
    return records;
}

// The frames of connection `conn` in one direction, in order.
QList<QByteArray> framesOf(const std::vector<TraceRecord> &records, int conn, const QString &dir)
{
    QList<QByteArray> out;
    for (const TraceRecord &r : records)
        if (r.connection == conn && r.dir == dir)
            out << r.raw;
    return out;
}

// The tap's stdout lines so far, parsed.
QList<QJsonObject> linesOf(QProcess &process, QList<QJsonObject> &seen)
{
    while (process.canReadLine())
        seen << QJsonDocument::fromJson(process.readLine()).object();
    return seen;
}

} // namespace

class TapLiveTest : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_tapTrace;      // written by the first test, opened in the window by the second
    int m_participants = 0;
    QStringList m_agentNames; // the server's agents, by name

private Q_SLOTS:
    void agentsAndAnObserverThroughTheTap()
    {
        QTemporaryDir &dir = m_dir;
        const QString via = dir.filePath(QStringLiteral("via"));
        const QString tapTrace = dir.filePath(QStringLiteral("tap.jsonl.zst"));
        const QString clientTrace = dir.filePath(QStringLiteral("client.jsonl"));
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("8"), QStringLiteral("--rate"), QStringLiteral("20"),
                             QStringLiteral("--heartbeat-ms"), QStringLiteral("1000"), QStringLiteral("--agents-via-file"), via}),
                 qPrintable(demo.error()));

        RunningCli tap;
        tap.start({QStringLiteral("tap"), QStringLiteral("--upstream"), demo.url(), QStringLiteral("--out"), tapTrace});
        QList<QJsonObject> lines;
        QString tapUrl;
        QTRY_VERIFY_WITH_TIMEOUT((tap.process.waitForReadyRead(10), linesOf(tap.process, lines), !lines.isEmpty()), 15000);
        tapUrl = lines.first().value(QStringLiteral("listening")).toString();
        QVERIFY2(tapUrl.startsWith(QLatin1String("ws://127.0.0.1:")), qPrintable(tapUrl));

        // The observer first (it sees every registration), then the agents, both through the tap.
        RunningCli observer;
        observer.start({QStringLiteral("record"), QStringLiteral("--url"), tapUrl, QStringLiteral("--duration"), QStringLiteral("10"),
                        QStringLiteral("--out"), clientTrace});
        QTRY_VERIFY_WITH_TIMEOUT((tap.process.waitForReadyRead(10), linesOf(tap.process, lines).size() >= 2), 15000);
        QTest::qWait(1000); // subscribed before the first agent registers
        {
            QFile file(via);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(tapUrl.toUtf8());
        }
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(demo.url(), QStringLiteral("/view")).value("agents", Json::array()).size() >= 8, 30000);
        QTest::qWait(3000); // messages, heartbeats, tasks
        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        const CliResult recorded = observer.finish(40000);
        QVERIFY2(recorded.exitCode == 0, recorded.err.constData());
        const Json view = demoHttp(demo.url(), QStringLiteral("/view"));
        tap.process.terminate(); // SIGTERM: the tap closes everyone and writes the trace out
        const CliResult tapped = tap.finish(20000);
        QVERIFY2(tapped.exitCode == 0, tapped.err.constData());

        // Who connected: the observer on "/", the agents' connections on "/agent".
        const std::vector<TraceRecord> records = readRecords(tapTrace);
        QVERIFY(!records.empty());
        int agentConnections = 0;
        for (const TraceRecord &r : records)
            if (r.dir == QLatin1String("open"))
                agentConnections += r.raw.endsWith("/agent");
        QVERIFY2(agentConnections >= 2, qPrintable(QString::number(agentConnections)));
        QJsonObject summary;
        for (const QByteArray &line : tapped.out.split('\n'))
            if (line.contains("\"summary\""))
                summary = QJsonDocument::fromJson(line).object().value(QStringLiteral("summary")).toObject();
        QCOMPARE(summary.value(QStringLiteral("participants")).toInt(), agentConnections + 1);
        QCOMPARE(summary.value(QStringLiteral("recordsNotWritten")).toInt(), 0);

        // Unchanged both ways: what the observer sent and received (its own recording) is what
        // the tap took from it and gave it, frame for frame.
        const std::vector<TraceRecord> client = readRecords(clientTrace);
        const QList<QByteArray> clientSent = framesOf(client, 1, QStringLiteral("send"));
        const QList<QByteArray> clientGot = framesOf(client, 1, QStringLiteral("recv"));
        QVERIFY(clientSent.size() >= 4 && clientGot.size() >= 20);
        QCOMPARE(framesOf(records, 1, QStringLiteral("send")), clientSent);
        const QList<QByteArray> tapGave = framesOf(records, 1, QStringLiteral("recv"));
        QCOMPARE(tapGave.mid(0, clientGot.size()), clientGot);
        QVERIFY2(tapGave.size() - clientGot.size() <= 2, "frames the tap forwarded that the observer did not get");

        // What a subscription cannot show: each agent's own requests and the server's answers.
        int registrations = 0;
        int answers = 0;
        for (const TraceRecord &r : records) {
            if (r.connection == 1)
                continue;
            registrations += r.dir == QLatin1String("send") && r.raw.contains("\"map/connect\"");
            answers += r.dir == QLatin1String("recv") && r.raw.contains("\"result\"");
        }
        QVERIFY2(registrations >= agentConnections, qPrintable(QString::number(registrations)));
        QVERIFY(answers >= registrations);

        // The tap's trace replays to the server's view.
        const CliResult state = runCli({QStringLiteral("state"), QStringLiteral("--trace"), tapTrace});
        QVERIFY2(state.exitCode == 0, state.err.constData());
        const QString diff = diffStateWithView(state.json(), view);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        m_tapTrace = tapTrace;
        m_participants = agentConnections + 1;
        for (const Json &agent : view["agents"])
            m_agentNames << QString::fromStdString(agent.value("name", std::string()));
    }

    // The window opens the tap's trace with a lane and a row per connection, named by who it was.
    void theWindowShowsALanePerConnection()
    {
        if (m_tapTrace.isEmpty())
            QSKIP("needs the trace of agentsAndAnObserverThroughTheTap");
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        ui::ConnectionsPanel *panel = window.frontSystem()->connections();
        QSignalSpy read(panel, &ui::ConnectionsPanel::connectionsRead);
        QVERIFY(window.frontSystem()->traces()->openTrace(m_tapTrace));
        QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 20000);
        QDockWidget *dock = window.dock(QStringLiteral("connectionsDock"));
        QTRY_VERIFY(dock->isVisible()); // a tap's trace brings the panel out
        QTableWidget *table = panel->table();
        QCOMPARE(table->rowCount(), m_participants);
        QStringList who;
        int closed = 0;
        for (int row = 0; row < table->rowCount(); ++row) {
            who << table->item(row, 1)->text();
            closed += !table->item(row, 5)->text().isEmpty();
            QVERIFY(table->item(row, 6)->data(Qt::DisplayRole).toLongLong() > 0); // each sent something
        }
        QVERIFY2(who.contains(QStringLiteral("map-inspector-cli (client)")), qPrintable(who.join(QLatin1String(", "))));
        QVERIFY(table->item(who.indexOf(QStringLiteral("map-inspector-cli (client)")), 10)->data(Qt::DisplayRole).toLongLong() > 10); // its events
        int agentsNamed = 0; // an agent connection is named after the agent it connected as
        for (const QString &w : std::as_const(who))
            agentsNamed += m_agentNames.contains(w.section(QLatin1String(" ("), 0, 0));
        QCOMPARE(agentsNamed, m_participants - 1);
        QCOMPARE(closed, m_participants); // each left, and the table says how
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            dock->raise();
            QTest::qWait(500);
            window.grab().save(QDir(shots).filePath(QStringLiteral("tap-trace.png")));
        }
        // Another trace, not a tap's: the panel has nothing to show and steps back.
        QSignalSpy availability(panel, &ui::ConnectionsPanel::availabilityChanged);
        QVERIFY(window.frontSystem()->traces()->openTrace(QStringLiteral(MAPI_SAMPLE_TRACE)));
        QTRY_VERIFY_WITH_TIMEOUT(!availability.isEmpty() && !availability.last().at(0).toBool(), 20000);
    }

    // Systems → Start a tap: the window runs the tap, observes through it, and follows who
    // connects; closing that system stops the tap and leaves its trace whole.
    void theWindowRunsATapAndObservesThroughIt()
    {
        const QString via = m_dir.filePath(QStringLiteral("via-window"));
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0,
                            {QStringLiteral("--agents"), QStringLiteral("8"), QStringLiteral("--agents-via-file"), via}),
                 qPrintable(demo.error()));
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        TapOptions options;
        options.upstream = QUrl(demo.url());
        options.tracePath = m_dir.filePath(QStringLiteral("window-tap.jsonl.zst"));
        QString error;
        ui::SystemView *system = window.startTap(options, &error);
        QVERIFY2(system, qPrintable(error));
        const QUrl tapUrl = system->session()->connectionUrl();
        QVERIFY2(tapUrl.toString().startsWith(QLatin1String("ws://127.0.0.1:")), qPrintable(tapUrl.toString()));
        QVERIFY(system->session()->observerOnly());
        {
            QFile file(via);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(tapUrl.toString().toUtf8());
        }
        // The model, through the tap; the panel, every participant as it comes.
        QTRY_VERIFY_WITH_TIMEOUT(system->session()->store()->agents().size() >= 8, 30000);
        QDockWidget *dock = window.dock(QStringLiteral("connectionsDock"));
        QTRY_VERIFY(dock->isVisible());
        QTableWidget *table = system->connections()->table();
        QTRY_VERIFY_WITH_TIMEOUT(table->rowCount() >= 3, 10000); // the window and the agents' connections
        QTRY_VERIFY_WITH_TIMEOUT(table->item(0, 1) && table->item(0, 1)->text() == QLatin1String("map-inspector (client)"), 5000);
        if (const QString shots = qEnvironmentVariable("MAPI_TEST_SHOTS"); !shots.isEmpty()) {
            dock->raise();
            QTest::qWait(1500);
            window.grab().save(QDir(shots).filePath(QStringLiteral("tap-live.png")));
        }
        const int participants = table->rowCount();
        window.closeSystem(system);
        // Stopped with it: everyone it relayed was closed by the tap, and the trace says so.
        int tapClosed = 0;
        for (const TraceRecord &r : readRecords(options.tracePath))
            tapClosed += r.dir == QLatin1String("close") && r.raw.startsWith("tap closed (code 1001");
        QVERIFY2(tapClosed >= participants - 1, qPrintable(QString::number(tapClosed)));
    }

    void refusesAnUpstreamThatWouldCarryCredentialsInClear()
    {
        const CliResult refused = runCli({QStringLiteral("tap"), QStringLiteral("--upstream"), QStringLiteral("ws://192.0.2.10:8080/map")});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("in clear"), refused.err.constData());
        const CliResult wideOpen = runCli({QStringLiteral("tap"), QStringLiteral("--upstream"), QStringLiteral("ws://127.0.0.1:9/"),
                                           QStringLiteral("--listen"), QStringLiteral("0.0.0.0:0")});
        QCOMPARE(wideOpen.exitCode, 1);
        QVERIFY2(wideOpen.err.contains("this machine only"), wideOpen.err.constData());
    }
};

QTEST_MAIN(TapLiveTest)
#include "tst_tap_live.moc"
