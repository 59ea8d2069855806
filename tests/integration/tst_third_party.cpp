// MAP programs that others wrote, from npm, pinned in tools/interop (no LLM, no key, loopback):
//   - macro-agent 0.2.4 hosting its own MAP server (MAPServer behind the SDK's stock WebSocket
//     adapter, which stops delivering events to a subscriber after the first direct message);
//   - agent-inbox 0.2.3 agents on the official MAPServer.
// The CLI records each; the model is then checked against what the server itself holds (its
// agent list, reported by the launcher) and against the frames it sent (parsed here with
// QJsonDocument, not with core's code): messages, tasks with titles and true statuses, scope
// addresses kept as scopes, and the deaf server caught (exit 8, said in "missing"). Then the
// alert detectors over each recording (issue 42, item 8: traffic they were not tuned on): only
// what the programs' traffic justifies is raised, and a quiet system after it raises nothing.
// (Making agent-inbox agents answer each other in a loop would need an auto-reply that neither
// agent-inbox, a message router, nor its launcher has; tst_alert_loops covers that shape.)
#include "DemoSystem.h"
#include "alerts/AlertEngine.h"
#include "map/Dialect.h"
#include "model/SystemStore.h"
#include "trace/TraceLoader.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace mapi;
using namespace mapi::test;

namespace {

const QString kInterop = QStringLiteral(MAPI_SOURCE_DIR "/tools/interop");

// What both launchers are given: a port, one client to wait for, time to settle, two minutes.
QStringList launcherArgs(int port)
{
    return {QStringLiteral("--port"), QString::number(port), QStringLiteral("--wait-clients"), QStringLiteral("1"),
            QStringLiteral("--settle-ms"), QStringLiteral("1500"), QStringLiteral("--duration"), QStringLiteral("120")};
}

// The inner events a trace received, in order, each once (our own parse of the file): map/event
// notifications, and the events of map/replay answers (MAPServer's bare array) that the client
// asked for after a reconnect.
QList<QJsonObject> receivedEvents(const QString &tracePath)
{
    QList<QJsonObject> events;
    QSet<QString> seen;
    const auto add = [&](const QJsonObject &event) {
        const QString id = event.value(QStringLiteral("id")).toString();
        if (!event.isEmpty() && (id.isEmpty() || !seen.contains(id))) {
            seen.insert(id);
            events << event;
        }
    };
    QFile f(tracePath);
    if (!f.open(QIODevice::ReadOnly))
        return events;
    while (!f.atEnd()) {
        const QJsonObject line = QJsonDocument::fromJson(f.readLine()).object();
        if (line.value(QStringLiteral("dir")).toString() != QLatin1String("recv"))
            continue;
        QJsonObject frame = line.value(QStringLiteral("frame")).toObject();
        if (frame.isEmpty())
            frame = QJsonDocument::fromJson(line.value(QStringLiteral("raw")).toString().toUtf8()).object();
        if (frame.value(QStringLiteral("method")).toString() == QLatin1String("map/event"))
            add(frame.value(QStringLiteral("params")).toObject().value(QStringLiteral("event")).toObject());
        for (const QJsonValue &item : frame.value(QStringLiteral("result")).toArray())
            if (item.toObject().contains(QStringLiteral("type")))
                add(item.toObject());
    }
    return events;
}

QSet<QString> ids(const Json &array)
{
    QSet<QString> out;
    if (array.is_array())
        for (const Json &item : array)
            out.insert(QString::fromStdString(item.value("id", std::string())));
    return out;
}

QSet<QString> ids(const QJsonArray &array)
{
    QSet<QString> out;
    for (const QJsonValue &item : array)
        out.insert(item.toObject().value(QStringLiteral("id")).toString());
    return out;
}

// Every agent id the state names anywhere: live, departed, placeholders.
QSet<QString> everyAgentId(const Json &state)
{
    QSet<QString> out = ids(state["agents"]);
    for (const char *key : {"departedAgents", "placeholders"})
        if (state.contains(key))
            for (const Json &item : state[key])
                out.insert(QString::fromStdString(item.is_string() ? item.get<std::string>() : item.value("id", std::string())));
    return out;
}

// The alert detectors over a recorded trace, replayed as the window replays one (records in
// order, the store's clock at each record's time) and evaluated after every record (these
// traces are a few dozen records): every alert raised, "kind[/subject][ agent,agent] | reason".
// Twice: with the default rules; and with the agents taken as alive through ten minutes of
// silence after the last record (heartbeat interval of an hour), what that silence raises.
struct AlertReplay
{
    QStringList raised;
    QStringList raisedWhenQuiet;
    qint64 messages = 0;
    int evaluations = 0;
    QString error;
};

AlertReplay replayAlerts(const QString &tracePath)
{
    AlertReplay out;
    for (const bool quiet : {false, true}) {
        AlertRules rules;
        if (quiet)
            rules.heartbeatIntervalMs = 3600000;
        SystemStore store;
        store.setHealthPolicy(healthPolicyForRules(rules, store.healthPolicy()));
        AlertEngine engine(rules);
        QStringList replayedOnly; // the quiet run's replay: already seen by the first run
        QStringList *raised = quiet ? &replayedOnly : &out.raised;
        const auto evaluate = [&] {
            for (const AlertChange &c : engine.update(store)) {
                QString head = alertKindName(c.alert.kind);
                if (!c.alert.subject.isEmpty())
                    head += u'/' + c.alert.subject;
                if (!c.alert.agents.isEmpty())
                    head += u' ' + c.alert.agents.join(u',');
                if (c.raised)
                    *raised << head + QStringLiteral(" | ") + c.alert.reason;
            }
            while (engine.isBehind(store))
                engine.update(store);
        };
        TraceLoadOptions options;
        options.readerThread = false;
        options.firstBatchRecords = 1;
        options.batchRecords = 1;
        const TraceLoadResult r = loadTraceInto(store, tracePath, options, [&](const TraceLoadBatch &batch) {
            store.advanceTime(batch.lastTimeMs);
            if (!quiet) {
                evaluate();
                ++out.evaluations;
            }
        });
        if (!r.ok) {
            out.error = r.error;
            return out;
        }
        evaluate();
        if (!quiet) {
            out.messages = qint64(store.messages().size());
            continue;
        }
        raised = &out.raisedWhenQuiet;
        for (qint64 t = 10000; t <= 600000; t += 10000) {
            store.advanceTime(r.lastTimeMs + t);
            evaluate();
        }
    }
    return out;
}

} // namespace

class ThirdPartyTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY2(QDir(kInterop + QStringLiteral("/node_modules/macro-agent")).exists(),
                 "tools/interop is not installed: run scripts/install-deps.sh");
    }

    // macro-agent's own MAP server. Its stock adapter goes deaf to our subscription after the
    // first direct message: the observation must end incomplete (exit 8) with the drift said,
    // and the model must follow the server's own list at the end.
    void macroAgentServer()
    {
        QTemporaryDir dir;
        const int port = freePort();
        Launcher launcher;
        QVERIFY(launcher.start(QStringLiteral(MAPI_NODE), kInterop + QStringLiteral("/macro-agent-server.mjs"), launcherArgs(port)));
        const QJsonObject ready = launcher.waitFor(QStringLiteral("ready"), 60000);
        QVERIFY(!ready.isEmpty());
        QCOMPARE(ready.value(QStringLiteral("version")).toString(), QStringLiteral("0.2.4"));
        const QString url = ready.value(QStringLiteral("url")).toString();
        const QString trace = dir.filePath(QStringLiteral("macro.jsonl"));
        RunningCli record;
        record.start({QStringLiteral("record"), QStringLiteral("--url"), url, QStringLiteral("--duration"), QStringLiteral("25"),
                      QStringLiteral("--out"), trace});
        const QJsonObject done = launcher.waitFor(QStringLiteral("trafficDone"), 60000);
        QVERIFY(!done.isEmpty());
        QVERIFY2(record.process.state() != QProcess::NotRunning, "the recording ended before the traffic did");
        const CliResult r = record.finish(90000);
        // Deaf after the first direct message: caught, and said (its probe unanswered, or its
        // list differing from the model), whichever the server's state shows first.
        QCOMPARE(r.exitCode, 8);
        QVERIFY2(r.err.contains("the server's agent list differs from the model") || r.err.contains("the server is not answering since"),
                 r.err.constData());

        const CliResult state = runCli({QStringLiteral("state"), QStringLiteral("--trace"), trace});
        QCOMPARE(state.exitCode, 0);
        const Json model = state.json();
        QVERIFY(model.is_object());
        // The server's own list (at the end of its traffic) is the model's, after the final check.
        const QJsonObject server = done.value(QStringLiteral("server")).toObject();
        QCOMPARE(ids(model["agents"]), ids(server.value(QStringLiteral("agents")).toArray()));
        QVERIFY(!model["missing"].empty());
        // Scope addresses stay scopes: macro-agent sends to "swarm:macro-agent", a scope nobody created.
        const QList<QJsonObject> events = receivedEvents(trace);
        QVERIFY(!events.isEmpty());
        QVERIFY(!everyAgentId(model).contains(QStringLiteral("swarm:macro-agent")));
        // Messages and tasks: exactly those of the frames it did send.
        int sent = 0;
        QHash<QString, std::pair<QString, QString>> tasks; // id -> (title, status)
        for (const QJsonObject &e : events) {
            if (e.value(QStringLiteral("type")).toString() != QLatin1String("message.sent"))
                continue;
            ++sent;
            const QJsonObject payload = e.value(QStringLiteral("data")).toObject().value(QStringLiteral("message")).toObject()
                                            .value(QStringLiteral("payload")).toObject();
            const QString type = payload.value(QStringLiteral("type")).toString();
            if (type == QLatin1String("task.created")) {
                const QJsonObject t = payload.value(QStringLiteral("task")).toObject();
                tasks[t.value(QStringLiteral("id")).toString()] = {t.value(QStringLiteral("title")).toString(),
                                                                   t.value(QStringLiteral("status")).toString()};
            } else if (type == QLatin1String("task.status")) {
                tasks[payload.value(QStringLiteral("taskId")).toString()].second = payload.value(QStringLiteral("current")).toString();
            } else if (type == QLatin1String("task.completed")) {
                tasks[payload.value(QStringLiteral("taskId")).toString()].second = QStringLiteral("completed");
            }
        }
        QCOMPARE(model["counts"]["messages"].get<int>(), sent);
        // ... which, with the events the reconnect replayed, are all the server published.
        QCOMPARE(sent, server.value(QStringLiteral("messagesSent")).toInt());
        QVERIFY2(!tasks.isEmpty(), "no task message reached the observer: the test would prove nothing");
        QHash<QString, std::pair<QString, QString>> modelled;
        for (const Json &t : model["tasks"])
            modelled[QString::fromStdString(t["id"].get<std::string>())] = {QString::fromStdString(t["title"].get<std::string>()),
                                                                            QString::fromStdString(t["status"].get<std::string>())};
        for (auto it = tasks.cbegin(); it != tasks.cend(); ++it) {
            QVERIFY2(modelled.contains(it.key()), qPrintable(it.key()));
            if (!it->first.isEmpty())
                QCOMPARE(modelled[it.key()].first, it->first);
            QCOMPARE(modelled[it.key()].second, canonicalTaskStatus(it->second));
        }

        // The detectors over the recording. macro-agent's traffic: registrations, four tasks
        // created by the coordinator for the swarm scope (two stay "open", never accepted), one
        // completed and one failed (a task failing, not an agent); 15 "interop.chat" messages
        // going round three peers and two workers (2-3 on each edge, one shape: no loop, for
        // which a pair or a ring of three needs 20 within a minute), one scope message, one custom
        // event. No help request, no cost or token report, no error report, no heartbeat (and
        // under 90 s of recording: nobody is silent three intervals). What it justifies is the
        // server going deaf (above): the server's "unresponsive", with the sentence the recorder
        // said; nothing else, of any kind. Taken as alive through ten quiet minutes, nobody is
        // stalled (no task was accepted, every agent idle).
        const AlertReplay alerts = replayAlerts(trace);
        QVERIFY2(alerts.error.isEmpty(), qPrintable(alerts.error));
        QCOMPARE(alerts.messages, qint64(sent));
        QVERIFY(alerts.evaluations > sent);
        for (const QString &alert : alerts.raised) {
            const QString reason = alert.section(QStringLiteral(" | "), 1);
            QVERIFY2(alert.startsWith(QStringLiteral("unresponsive/server | ")) && !reason.isEmpty() && r.err.contains(reason.toUtf8()),
                     qPrintable(alerts.raised.join(u'\n')));
        }
        // When the recorder dropped the connection for the silence, the trace holds it: raised.
        if (r.err.contains("connection lost (server silent:"))
            QVERIFY2(!alerts.raised.isEmpty(), r.err.constData());
        QVERIFY2(alerts.raisedWhenQuiet.isEmpty(), qPrintable(alerts.raisedWhenQuiet.join(u'\n')));
    }

    // agent-inbox agents on the official MAPServer (with the lock-free adapter: nothing goes
    // deaf): a complete observation whose messages are the server's, and whose "[object Object]"
    // addresses (agent-inbox's {agentId} addresses, stringified by the server) are nobody.
    void agentInboxAgents()
    {
        QTemporaryDir dir;
        const int port = freePort();
        Launcher launcher;
        QVERIFY(launcher.start(QStringLiteral(MAPI_NODE), kInterop + QStringLiteral("/agent-inbox-agents.mjs"), launcherArgs(port)));
        const QJsonObject ready = launcher.waitFor(QStringLiteral("ready"), 60000);
        QVERIFY(!ready.isEmpty());
        QCOMPARE(ready.value(QStringLiteral("version")).toString(), QStringLiteral("0.2.3"));
        const QString trace = dir.filePath(QStringLiteral("inbox.jsonl"));
        RunningCli record;
        record.start({QStringLiteral("record"), QStringLiteral("--url"), ready.value(QStringLiteral("url")).toString(),
                      QStringLiteral("--duration"), QStringLiteral("15"), QStringLiteral("--out"), trace});
        const QJsonObject done = launcher.waitFor(QStringLiteral("trafficDone"), 60000);
        QVERIFY(!done.isEmpty());
        const CliResult r = record.finish(60000);
        QVERIFY2(r.exitCode == 0, r.err.constData());

        const CliResult state = runCli({QStringLiteral("state"), QStringLiteral("--trace"), trace});
        QCOMPARE(state.exitCode, 0);
        const Json model = state.json();
        const QJsonObject server = done.value(QStringLiteral("server")).toObject();
        QCOMPARE(ids(model["agents"]), ids(server.value(QStringLiteral("agents")).toArray()));
        QCOMPARE(model["counts"]["messages"].get<int>(), server.value(QStringLiteral("messagesSent")).toInt());
        QVERIFY(model["missing"].empty());
        QVERIFY(!everyAgentId(model).contains(QStringLiteral("[object Object]")));
        // The scope it sends to is a scope of the model, never an agent.
        for (const QJsonValue &s : server.value(QStringLiteral("scopes")).toArray()) {
            const QString scopeId = s.toObject().value(QStringLiteral("id")).toString();
            QVERIFY(ids(model["scopes"]).contains(scopeId));
            QVERIFY(!everyAgentId(model).contains(scopeId));
        }

        // The detectors over the recording. agent-inbox's traffic: ten notes between the two
        // systems' gateways and three sendViaMap, all addressed {agentId} (the server's
        // "[object Object]": nobody, so no pair of agents for a loop) but one, to a scope; no
        // task, help request, cost or error report; agents idle. It justifies no alert at all,
        // and a quiet system after it raises none.
        const AlertReplay alerts = replayAlerts(trace);
        QVERIFY2(alerts.error.isEmpty(), qPrintable(alerts.error));
        QCOMPARE(alerts.messages, qint64(server.value(QStringLiteral("messagesSent")).toInt()));
        QVERIFY(alerts.evaluations > alerts.messages);
        QVERIFY2(alerts.raised.isEmpty(), qPrintable(alerts.raised.join(u'\n')));
        QVERIFY2(alerts.raisedWhenQuiet.isEmpty(), qPrintable(alerts.raisedWhenQuiet.join(u'\n')));
    }
};

QTEST_GUILESS_MAIN(ThirdPartyTest)
#include "tst_third_party.moc"
