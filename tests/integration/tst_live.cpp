// Against the official MAP server (demo system fixture, stock or extended mode):
// the inspector's model equals the server's own view, no event is lost, and the control
// actions round-trip (extended) or fall back visibly (stock).
#include "DemoSystem.h"
#include "pipeline/ClockSkew.h"

#include "client/MapClient.h"
#include "model/StateJson.h"
#include "model/SystemStore.h"
#include "trace/Trace.h"

#include <QDateTime>
#include <QProcess>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QFile>
#include <QtTest>

#include <set>

#ifdef Q_OS_LINUX
#include <signal.h>
#include <sys/resource.h>
#endif

using namespace mapi;
using namespace mapi::test;

class LiveTest : public QObject
{
    Q_OBJECT
private:
    QString m_url;
    QString m_mode;

    void quiesce() { QVERIFY(!demoHttp(m_url, QStringLiteral("/control/quiesce"), true).is_null()); }
    void activity() { QVERIFY(!demoHttp(m_url, QStringLiteral("/control/activity"), true).is_null()); }
    Json view() { return demoHttp(m_url, QStringLiteral("/view")); }

    // An agent that obeys: registered, idle or busy, not the failing or silent one.
    QString pickAgent(const QString &role)
    {
        const Json v = view();
        for (const Json &a : v.value("agents", Json::array())) {
            const QString state = jsonString(a, "state");
            const QString name = jsonString(a, "name");
            if ((state == QLatin1String("idle") || state == QLatin1String("busy")) && jsonString(a, "role") == role
                && !name.contains(QLatin1String("silent")) && !name.contains(QLatin1String("fail")))
                return jsonString(a, "id");
        }
        return {};
    }
    QString nameOf(const QString &id)
    {
        for (const Json &a : view().value("agents", Json::array()))
            if (jsonString(a, "id") == id)
                return jsonString(a, "name");
        return {};
    }
    QString agentState(const QString &id)
    {
        for (const Json &a : view().value("agents", Json::array()))
            if (jsonString(a, "id") == id)
                return jsonString(a, "state");
        return {};
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_mode = qEnvironmentVariable("MAPI_DEMO_MODE");
        m_url = fixtureUrl();
        QVERIFY2(!m_url.isEmpty(), "the demo system fixture did not start");
        // Let the simulation build its population (24 agents, spawned in waves).
        QTRY_VERIFY_WITH_TIMEOUT(view().value("agents", Json::array()).size() >= 20, 30000);
    }

    void stateEqualsServerView()
    {
        quiesce();
        const CliResult cli = runCli({QStringLiteral("state"), QStringLiteral("--url"), m_url, QStringLiteral("--duration"), QStringLiteral("1")});
        const Json serverView = view();
        activity();
        QVERIFY2(cli.exitCode == 0, cli.err.constData());
        const Json state = cli.json();
        QVERIFY2(!state.is_null(), cli.err.constData());
        QVERIFY(state["agents"].size() >= 20);
        const QString diff = diffStateWithView(state, serverView);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QCOMPARE(state["counts"]["problems"].get<int>(), 0);
        QCOMPARE(state["connection"]["server"].is_string(), true);
    }

    // Every event the server emits while we are subscribed arrives, once, in order.
    void noEventLostIn20Seconds()
    {
        quiesce();
        ClientOptions options;
        options.url = QUrl(m_url);
        MapClient client(options);
        SystemStore store;
        qint64 received = 0;
        connect(&client, &MapClient::inputsReady, &store, [&](const ModelInputs &inputs) {
            for (const ModelInput &input : inputs)
                if (std::holds_alternative<EventInput>(input))
                    ++received;
            store.apply(inputs);
        });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 15000);
        QTest::qWait(500);
        const qint64 emittedBefore = demoHttp(m_url, QStringLiteral("/stats")).value("eventsEmitted", qint64(-1));
        const qint64 receivedBefore = received;
        QVERIFY(emittedBefore >= 0);

        activity();
        QTest::qWait(20000);
        quiesce();
        QTest::qWait(1500); // drain
        const qint64 emittedAfter = demoHttp(m_url, QStringLiteral("/stats")).value("eventsEmitted", qint64(-1));
        const qint64 emitted = emittedAfter - emittedBefore;
        const qint64 got = received - receivedBefore;
        qInfo("events emitted by the server in 20 s: %lld, received: %lld", static_cast<long long>(emitted),
              static_cast<long long>(got));
        QVERIFY2(emitted > 400, "the demo system produced too little traffic for the test to mean anything");
        QCOMPARE(got, emitted);
        QCOMPARE(store.counters().sequenceGaps, qint64(0));
        QCOMPARE(store.counters().duplicateEvents, qint64(0));
        QCOMPARE(store.counters().problems, qint64(0));
        QCOMPARE(client.reconnectCount(), 0);
        client.stop();
        QTRY_VERIFY(client.state() == ClientState::Closed);
        activity();
    }

    void injectRoundTrip()
    {
        const QString agent = pickAgent(QStringLiteral("worker"));
        QVERIFY(!agent.isEmpty());
        const QString name = nameOf(agent); // named as a person would: --agent takes a unique name
        QVERIFY(!name.isEmpty() && name != agent);
        const CliResult cli = runCli({QStringLiteral("inject"), QStringLiteral("--url"), m_url, QStringLiteral("--agent"), name,
                                      QStringLiteral("--message"), QStringLiteral("re-prioritise the review"),
                                      QStringLiteral("--delivery"), QStringLiteral("queue"), QStringLiteral("--timeout"),
                                      m_mode == QLatin1String("stock") ? QStringLiteral("3") : QStringLiteral("15")});
        const Json outcome = cli.json();
        QVERIFY2(!outcome.is_null(), cli.err.constData());
        QCOMPARE(jsonString(outcome, "agentId"), agent);
        if (m_mode == QLatin1String("extended")) {
            QVERIFY2(cli.exitCode == 0, cli.err.constData());
            QCOMPARE(jsonString(outcome, "status"), QStringLiteral("confirmed"));
            QCOMPARE(jsonString(outcome, "method"), QStringLiteral("map/inject"));
            QCOMPARE(outcome["fallback"].get<bool>(), false);
        } else {
            // Stock MAPServer has no map/inject and never delivers messages: the fallback is
            // used and labelled, and the outcome is honestly "not confirmed".
            QVERIFY2(cli.exitCode == 5, cli.err.constData());
            QCOMPARE(jsonString(outcome, "method"), QStringLiteral("map/send"));
            QCOMPARE(outcome["fallback"].get<bool>(), true);
            QVERIFY(jsonString(outcome, "note").contains(QLatin1String("not supported")));
            QCOMPARE(jsonString(outcome, "status"), QStringLiteral("timed-out"));
        }
    }

    // The recorder flushes every second: killed (as a crash or kill -9 would), it loses at most
    // the last second, and what it wrote reads back, whatever the compression. A second recorder
    // that is not killed says what the first should hold: every event it received up to a
    // second before the kill (and a second of slack for a busy machine).
    void killedRecorderLosesAtMostTheLastSecond_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("plain") << QStringLiteral("killed.jsonl");
        QTest::newRow("zstd") << QStringLiteral("killed.jsonl.zst");
        QTest::newRow("gzip") << QStringLiteral("killed.jsonl.gz");
    }
    void killedRecorderLosesAtMostTheLastSecond()
    {
        if (m_mode == QLatin1String("extended"))
            QSKIP("the recorder does not depend on the server's mode: run once, in stock mode (RUN_SERIAL)");
        QFETCH(QString, name);
        activity();
        QTemporaryDir dir;
        const QString killedPath = dir.filePath(name);
        const QString witnessPath = dir.filePath(QStringLiteral("witness.jsonl"));
        auto record = [&](QProcess &process, const QString &path, const QString &seconds) {
            process.start(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("record"), QStringLiteral("--url"), m_url,
                                                          QStringLiteral("--duration"), seconds, QStringLiteral("--out"), path});
            return process.waitForStarted(10000);
        };
        QProcess witness;
        QVERIFY(record(witness, witnessPath, QStringLiteral("7")));
        QProcess killed;
        QVERIFY(record(killed, killedPath, QStringLiteral("120")));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(killedPath).size() > 0, 15000);
        QTest::qWait(3500); // several flushes, events flowing meanwhile
        const qint64 killedAtMs = QDateTime::currentMSecsSinceEpoch();
        killed.kill();
        QVERIFY(killed.waitForFinished(10000));
        QCOMPARE(killed.exitStatus(), QProcess::CrashExit);
        QVERIFY(witness.waitForFinished(20000));
        // A crash says so, with what the witness wrote (Qt gives a signal's number as exitCode).
        const QByteArray witnessSaid = witness.readAllStandardError();
        QVERIFY2(witness.exitStatus() == QProcess::NormalExit,
                 qPrintable(QStringLiteral("the witness crashed (signal %1): %2").arg(witness.exitCode()).arg(QString::fromUtf8(witnessSaid))));
        QVERIFY2(witness.exitCode() == 0, witnessSaid.constData());

        // Event ids by receive time.
        auto events = [](const QString &path, TraceReadStats &stats) {
            std::vector<std::pair<qint64, std::string>> out;
            QString error;
            const bool ok = readTrace(path, [&](const TraceRecord &r) {
                const Json frame = Json::parse(r.raw.constBegin(), r.raw.constEnd(), nullptr, false);
                if (r.dir == QLatin1String("recv") && frame.is_object() && frame.value("method", "") == "map/event")
                    out.emplace_back(r.timeMs, frame["params"].value("eventId", ""));
                return true;
            }, stats, &error);
            if (!ok)
                qWarning("%s: %s", qPrintable(path), qPrintable(error));
            return out;
        };
        TraceReadStats killedStats, witnessStats;
        const auto kept = events(killedPath, killedStats);
        const auto all = events(witnessPath, witnessStats);
        // The kill may cut the last line (a write or compressed block ends mid-line): that line
        // only is reported, never kept.
        QVERIFY(killedStats.badLines.size() <= 1);
        if (!killedStats.badLines.empty())
            QCOMPARE(killedStats.badLines.front(), killedStats.lines);
        std::set<std::string> keptIds;
        for (const auto &e : kept)
            keptIds.insert(e.second);
        // From its first event on (it subscribed after the witness), up to one second between
        // flushes before the kill, plus up to one more for a recorder that reads its socket behind
        // the witness on a busy machine. The test runs alone (RUN_SERIAL) so that other tests'
        // load does not stretch that second.
        QVERIFY(!kept.empty());
        const qint64 mustHaveFrom = kept.front().first;
        const qint64 mustHaveUpTo = killedAtMs - 2000;
        qint64 expected = 0;
        qint64 oldestLostMs = killedAtMs; // by the witness's clock: what the loss really was
        QStringList missing;
        for (const auto &[timeMs, id] : all) {
            if (timeMs <= mustHaveFrom)
                continue;
            if (!keptIds.count(id))
                oldestLostMs = std::min(oldestLostMs, timeMs);
            if (timeMs > mustHaveUpTo)
                continue;
            ++expected;
            if (!keptIds.count(id))
                missing << QString::fromStdString(id);
        }
        qInfo("%s: %zu events kept; the oldest event lost was received %lld ms before the kill; the witness "
              "received %lld from the first to 2 s before the kill, %lld of them missing",
              qPrintable(name), kept.size(), static_cast<long long>(killedAtMs - oldestLostMs),
              static_cast<long long>(expected), static_cast<long long>(missing.size()));
        QVERIFY2(expected > 20, "too little traffic for the test to mean anything");
        QVERIFY2(missing.isEmpty(), qPrintable(QStringList(missing.mid(0, 10)).join(QLatin1Char(' '))));
    }

    // A crash names itself and its stack on stderr (app/CrashReport.h) and still ends as a crash
    // (the signal's status, for a supervisor or a core dump): what a CI log or a user's report
    // needs to find where it happened. The signal is sent from outside, as a fault would raise it.
    void crashNamesItsStack()
    {
#ifndef Q_OS_LINUX
        QSKIP("the stack is written on Linux and macOS; the signal is sent the Linux way here");
#else
        if (m_mode == QLatin1String("extended"))
            QSKIP("does not depend on the server's mode: run once, in stock mode");
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("crashing.jsonl"));
        QProcess cli;
        cli.setChildProcessModifier([] { // no core file in the test's folder
            const rlimit none{0, 0};
            ::setrlimit(RLIMIT_CORE, &none);
        });
        cli.start(QStringLiteral(MAPI_CLI_PATH), {QStringLiteral("record"), QStringLiteral("--url"), m_url, QStringLiteral("--duration"),
                                                  QStringLiteral("60"), QStringLiteral("--out"), out});
        QVERIFY(cli.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(out).size() > 0, 15000); // connected and recording
        QCOMPARE(::kill(pid_t(cli.processId()), SIGSEGV), 0);
        QVERIFY(cli.waitForFinished(10000));
        const QString said = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitStatus(), QProcess::CrashExit);
        QCOMPARE(cli.exitCode(), int(SIGSEGV));
        QVERIFY2(said.contains(QLatin1String("map-inspector-cli: crashed (signal 11: SIGSEGV); stack:\n")), qPrintable(said));
        // At least the handler's own frame, in the executable, and the frames below it.
        const QStringList frames = said.section(QLatin1String("stack:\n"), 1).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(frames.size() >= 3, qPrintable(said));
        QVERIFY2(frames.front().contains(QLatin1String("map-inspector-cli(")), qPrintable(said));
#endif
    }

    void suspendResumeStopRoundTrip()
    {
        const QString agent = pickAgent(QStringLiteral("subagent"));
        QVERIFY(!agent.isEmpty());
        const bool stock = m_mode == QLatin1String("stock");
        auto run = [&](const QString &command) {
            const CliResult cli = runCli({command, QStringLiteral("--url"), m_url, QStringLiteral("--agent"), agent,
                                          QStringLiteral("--reason"), QStringLiteral("integration test")});
            const Json outcome = cli.json();
            if (cli.exitCode != 0 || outcome.is_null())
                qWarning("%s: exit %d: %s", qPrintable(command), cli.exitCode, cli.err.constData());
            return std::make_pair(cli, outcome);
        };

        auto [suspendCli, suspended] = run(QStringLiteral("suspend"));
        QVERIFY2(suspendCli.exitCode == 0, suspendCli.err.constData());
        QCOMPARE(jsonString(suspended, "status"), QStringLiteral("confirmed"));
        QCOMPARE(suspended["fallback"].get<bool>(), stock);
        if (stock)
            QCOMPARE(jsonString(suspended, "method"), QStringLiteral("map/agents/update"));
        QCOMPARE(agentState(agent), QStringLiteral("suspended"));

        auto [resumeCli, resumed] = run(QStringLiteral("resume"));
        QVERIFY2(resumeCli.exitCode == 0, resumeCli.err.constData());
        QCOMPARE(jsonString(resumed, "status"), QStringLiteral("confirmed"));
        QVERIFY(agentState(agent) != QLatin1String("suspended"));

        auto [stopCli, stopped] = run(QStringLiteral("stop"));
        QVERIFY2(stopCli.exitCode == 0, stopCli.err.constData());
        QCOMPARE(jsonString(stopped, "status"), QStringLiteral("confirmed"));
        QCOMPARE(stopped["fallback"].get<bool>(), stock);
        if (stock) {
            QCOMPARE(jsonString(stopped, "method"), QStringLiteral("map/agents/update"));
            QVERIFY(stopCli.err.contains("fallback used"));
        } else {
            QCOMPARE(jsonString(stopped, "method"), QStringLiteral("map/agents/stop"));
        }
        QCOMPARE(agentState(agent), QStringLiteral("stopped"));
    }

    // A damaged file is named by line: the CLI's warning lists the unreadable lines' numbers
    // (the first 20, then "..."), and state's JSON lists them too.
    void damagedTraceLinesAreNamed()
    {
        QFile in(QStringLiteral(MAPI_SOURCE_DIR "/tests/data/scenario-deliver.ndjson"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QList<QByteArray> lines = in.readAll().split('\n');
        QList<qint64> damaged;
        for (qint64 number : {5, 9, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59})
            damaged << number;
        for (qint64 number : damaged)
            lines[number - 1] = QByteArrayLiteral("{\"seq\": oops");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.ndjson"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(lines.join('\n'));
        out.close();

        const CliResult cli = runCli({QStringLiteral("state"), QStringLiteral("--trace"), path});
        QVERIFY2(cli.exitCode == 0, cli.err.constData());
        QVERIFY2(cli.err.contains("22 unreadable line(s) skipped: 5, 9, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, "
                                  "54, 55, 56, 57, ..."),
                 cli.err.constData());
        Json listed = cli.json()["trace"]["badLines"];
        QCOMPARE(int(listed.size()), int(damaged.size()));
        for (int i = 0; i < damaged.size(); ++i)
            QCOMPARE(listed[size_t(i)].get<qint64>(), damaged[i]);
    }

    // The official server with its clock two minutes behind ours: the client measures the offset
    // from the live events (the model's health and timeouts use it: tst_health) and reports it.
    void serverClockOffsetIsMeasured()
    {
        DemoProcess skewed;
        QVERIFY2(skewed.start(QStringLiteral("stock"), 0, {QStringLiteral("--agents"), QStringLiteral("4"), QStringLiteral("--clock-skew-ms"),
                                                            QStringLiteral("-120000")}),
                 qPrintable(skewed.error()));
        const CliResult cli = runCli({QStringLiteral("state"), QStringLiteral("--url"), skewed.url(), QStringLiteral("--duration"),
                                      QStringLiteral("3")});
        QVERIFY2(cli.exitCode == 0, cli.err.constData());
        const Json state = cli.json(); // one document: the loop below walks into it
        const Json &connection = state["connection"];
        const qint64 offset = connection.value("clockOffsetMs", qint64(0));
        QVERIFY2(offset > -121000 && offset < -119000, qPrintable(QString::number(offset)));
        QVERIFY(connection.value("clockSamples", 0) >= ClockSkewEstimator::kMinSamples);
        QCOMPARE(state["counts"].value("futureTimestamps", -1), 0);
        for (const Json &agent : state["agents"])
            QCOMPARE(QString::fromStdString(agent.value("health", std::string())), QStringLiteral("healthy"));
    }

    // --observer: the CLI observes (state works) and refuses control commands without sending them.
    void observerRefusesControl()
    {
        const QString agent = pickAgent(QStringLiteral("worker"));
        QVERIFY(!agent.isEmpty());
        const QString before = agentState(agent);
        const CliResult look = runCli({QStringLiteral("state"), QStringLiteral("--observer"), QStringLiteral("--url"), m_url});
        QVERIFY2(look.exitCode == 0, look.err.constData());
        QVERIFY(look.json()["agents"].size() >= 20);
        for (const QString &command : {QStringLiteral("stop"), QStringLiteral("suspend")}) {
            const CliResult cli = runCli({command, QStringLiteral("--observer"), QStringLiteral("--url"), m_url,
                                          QStringLiteral("--agent"), agent});
            QVERIFY2(cli.exitCode == 4, qPrintable(QStringLiteral("exit %1%2: %3").arg(cli.exitCode)
                                                        .arg(cli.crashed ? QStringLiteral(" (crashed)") : QString())
                                                        .arg(QString::fromUtf8(cli.err))));
            QVERIFY2(cli.err.contains("Observer-only"), cli.err.constData());
        }
        QCOMPARE(agentState(agent) == QLatin1String("stopped") || agentState(agent) == QLatin1String("suspended"),
                 before == QLatin1String("stopped") || before == QLatin1String("suspended")); // untouched
    }

    void unknownAgentActionFailsClearly()
    {
        const CliResult cli = runCli({QStringLiteral("suspend"), QStringLiteral("--url"), m_url, QStringLiteral("--agent"),
                                      QStringLiteral("no-such-agent")});
        QVERIFY2(cli.exitCode == 4, cli.err.constData());
        QVERIFY(cli.err.startsWith("map-inspector-cli: "));
        QCOMPARE(cli.err.count('\n'), 1); // one clear line
    }
};

QTEST_GUILESS_MAIN(LiveTest)
#include "tst_live.moc"
