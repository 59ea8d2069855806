// MAP over streams against the official MAPServer (issue 43 item 1): the demo system launched as
// a child speaking NDJSON on its stdin/stdout (tools/demo-system --stdio), and serving a Unix
// domain socket (--unix). The console's model equals the server's view over both; the SDK's own
// stream (--stdio stock) shows its writer fault, which the console survives and names; a child
// that ends is a disconnect with its exit code and is not started again; closing ends the child;
// a line of the child's stdout that is not JSON is counted with its line number.
#include "DemoSystem.h"

#include "client/MapClient.h"
#include "client/StreamTransports.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace mapi;
using namespace mapi::test;

namespace {

QString demoCommand(const QString &writes, const QStringList &extra = {})
{
    QStringList args{QStringLiteral("node"), QStringLiteral(MAPI_DEMO_SCRIPT), QStringLiteral("--mode"), QStringLiteral("extended"),
                     QStringLiteral("--stdio"), writes};
    args += extra;
    for (QString &a : args)
        if (a.contains(u' '))
            a = u'"' + a + u'"';
    return args.join(u' ');
}

QString readUrlFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
}

// The problems among a client's inputs.
QStringList problemDetails(const QList<ModelInputs> &batches)
{
    QStringList out;
    for (const ModelInputs &batch : batches)
        for (const ModelInput &input : batch)
            if (const auto *p = std::get_if<ProblemInput>(&input))
                out << p->problem.detail;
    return out;
}

} // namespace

class StdioLiveTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The CLI launches the system, observes it, and ends it: its model is the server's.
    void launchedSystemModelEqualsTheServers()
    {
        QTemporaryDir dir;
        const QString urlFile = dir.filePath(QStringLiteral("url"));
        RunningCli cli;
        cli.start({QStringLiteral("state"), QStringLiteral("--launch"),
                   demoCommand(QStringLiteral("serialized"), {QStringLiteral("--agents"), QStringLiteral("12"), QStringLiteral("--url-file"), urlFile}),
                   QStringLiteral("--duration"), QStringLiteral("8")});
        QTRY_VERIFY_WITH_TIMEOUT(!readUrlFile(urlFile).isEmpty(), 20000);
        const QString url = readUrlFile(urlFile);
        QTest::qWait(2500); // the agents register and talk
        QVERIFY(!demoHttp(url, QStringLiteral("/control/quiesce"), true).is_null());
        const Json view = demoHttp(url, QStringLiteral("/view"));
        QVERIFY(!view.is_null());
        const CliResult r = cli.finish(30000);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err.right(2000)))));
        const Json state = r.json();
        QVERIFY(state.is_object());
        QVERIFY(view["agents"].size() >= 12);
        const QString diff = diffStateWithView(state, view);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY2(state["connection"].value("url", "").rfind("stdio:node ", 0) == 0, state["connection"].dump().c_str());
        QCOMPARE(state["observation"].value("complete", false), true);
        // Its stderr reached ours, named as the child's.
        QVERIFY2(r.err.contains("map-inspector-cli: [child] MAP demo system listening"), r.err.left(2000).constData());
        // It was ended with the command: its HTTP side no longer answers.
        QTRY_VERIFY_WITH_TIMEOUT(demoHttp(url, QStringLiteral("/status")).is_null(), 10000);
    }

    // The SDK's stream as published: an answer written beside an event fails although the
    // request was done, and a request that causes two events at once ends the session. The
    // client says both for what they are, and does not start the process again.
    void sdkStreamWriterFaultIsNamed()
    {
        ClientOptions options;
        options.url = launchUrl(demoCommand(QStringLiteral("stock"), {QStringLiteral("--agents"), QStringLiteral("4")}));
        MapClient client(options);
        QList<ModelInputs> inputs;
        connect(&client, &MapClient::inputsReady, this, [&](const ModelInputs &batch) { inputs << batch; });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 20000);
        // An agent registered by us: one event (agent.registered) and the answer, written at once.
        QStringList errors;
        bool answered = false;
        QString agentId;
        client.request(QStringLiteral("map/agents/register"), {{"name", "stdio-probe"}, {"role", "worker"}},
                       [&](bool ok, const Json &result, const RpcError &error) {
                           answered = true;
                           if (ok)
                               agentId = QString::fromStdString(result.value("agent", Json::object()).value("id", ""));
                           else
                               errors << error.message;
                       });
        QTRY_VERIFY_WITH_TIMEOUT(answered || client.state() != ClientState::Live, 10000);
        // A message to every agent: message.sent and message.queued in the same tick.
        client.request(QStringLiteral("map/send"), {{"to", {{"broadcast", true}}}, {"payload", {{"hello", "over stdio"}}}},
                       [&](bool ok, const Json &, const RpcError &error) {
                           if (!ok)
                               errors << error.message;
                       });
        // The session the SDK ended: its stdout closes (a disconnect), or the server stops answering
        // (said, and the process left running: the console observes, it does not end what it
        // watches).
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Closed || client.lastError().contains(QLatin1String("known fault")), 20000);
        const QString said = errors.join(u'\n') + u'\n' + client.lastError();
        qInfo("what the client said: %s", qPrintable(said));
        // At least one of the two faults happened, and each that did is named.
        const bool lockNamed = said.contains(QLatin1String("WritableStream is locked"))
            && said.contains(QLatin1String("a known fault of the MAP SDK's server over streams"));
        const bool endNamed = client.lastError().contains(QLatin1String("ends a stream session when one request causes two events at once"));
        QVERIFY2(lockNamed || endNamed, qPrintable(said));
        if (said.contains(QLatin1String("WritableStream is locked")))
            QVERIFY2(lockNamed, qPrintable(said));
        const ClientState state = client.state();
        QTest::qWait(1500);
        QCOMPARE(client.state(), state); // neither started again nor ended by the client
        QVERIFY(state == ClientState::Closed || state == ClientState::Live);
        QCOMPARE(client.reconnectCount(), 0);
    }

    // A child that prints something else and ends: its line is a problem that names its line,
    // the end is a disconnect with the exit code, and nothing starts it again.
    void childThatEndsIsADisconnectWithItsExitCode()
    {
        ClientOptions options;
        options.url = launchUrl(QStringLiteral(
            "node -e \"process.stdout.write('starting up\\n'); process.stderr.write('about to fail\\nAuthorization: Bearer sk-live-0123456789abcdef\\n'); setTimeout(() => process.exit(3), 300)\""));
        QVERIFY2(!launchCommand(options.url).isEmpty(), qPrintable(options.url.toString()));
        MapClient client(options);
        QList<ModelInputs> inputs;
        QStringList stderrLines;
        connect(&client, &MapClient::inputsReady, this, [&](const ModelInputs &batch) { inputs << batch; });
        connect(&client, &MapClient::processOutput, this, [&](const QStringList &lines, qint64) { stderrLines << lines; });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Closed, 15000);
        QVERIFY2(client.lastError().contains(QLatin1String("ended with exit code 3")), qPrintable(client.lastError()));
        const QStringList problems = problemDetails(inputs);
        QVERIFY2(problems.filter(QStringLiteral("(line 1 of the process's output)")).size() == 1, qPrintable(problems.join(u'\n')));
        // Its stderr, a line at a time, redacted (a child's log can quote its credentials).
        QCOMPARE(stderrLines, (QStringList{QStringLiteral("about to fail"), QStringLiteral("Authorization: Bearer REDACTED")}));
        QTest::qWait(1500);
        QCOMPARE(client.state(), ClientState::Closed);
        QCOMPARE(client.reconnectCount(), 0);
    }

    // A command that cannot start says so.
    void commandThatCannotStartSaysSo()
    {
        ClientOptions options;
        options.url = launchUrl(QStringLiteral("/nonexistent/map-system --stdio"));
        MapClient client(options);
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Closed, 10000);
        QVERIFY2(client.lastError().contains(QLatin1String("cannot start /nonexistent/map-system")), qPrintable(client.lastError()));
    }

    // The same system on a Unix domain socket: the CLI's model is the server's.
    void unixSocketModelEqualsTheServers()
    {
        QTemporaryDir dir;
        const QString socketPath = dir.filePath(QStringLiteral("map.sock"));
        DemoProcess demo;
        QVERIFY2(demo.start(QStringLiteral("extended"), 0, {QStringLiteral("--agents"), QStringLiteral("10"), QStringLiteral("--unix"), socketPath}),
                 qPrintable(demo.error()));
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(socketPath), 10000);
        QTest::qWait(1500);
        QVERIFY(!demoHttp(demo.url(), QStringLiteral("/control/quiesce"), true).is_null());
        const CliResult r = runCli({QStringLiteral("state"), QStringLiteral("--url"), QStringLiteral("unix:") + socketPath,
                                    QStringLiteral("--duration"), QStringLiteral("2")},
                                   30000);
        QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        const Json view = demoHttp(demo.url(), QStringLiteral("/view"));
        QVERIFY(view["agents"].size() >= 10);
        const QString diff = diffStateWithView(r.json(), view);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    // Several systems at once (issue 43 item 2, the CLI): one model per system, keyed by its URL,
    // each equal to its server's view; a system that cannot be reached is said and sets the exit
    // code, the others are still observed; watch names the system on every line.
    void severalSystemsAtOnce()
    {
        DemoProcess ws;
        QVERIFY2(ws.start(QStringLiteral("extended"), 0, {QStringLiteral("--agents"), QStringLiteral("6")}), qPrintable(ws.error()));
        QTemporaryDir dir;
        const QString urlFile = dir.filePath(QStringLiteral("url"));
        const QString launch = demoCommand(QStringLiteral("serialized"), {QStringLiteral("--agents"), QStringLiteral("9"), QStringLiteral("--url-file"), urlFile});
        RunningCli cli;
        cli.start({QStringLiteral("state"), QStringLiteral("--url"), ws.url(), QStringLiteral("--launch"), launch,
                   QStringLiteral("--url"), QStringLiteral("ws://127.0.0.1:1"), QStringLiteral("--duration"), QStringLiteral("6")});
        QTRY_VERIFY_WITH_TIMEOUT(!readUrlFile(urlFile).isEmpty(), 20000);
        const QString launchedHttp = readUrlFile(urlFile);
        QTest::qWait(2500);
        QVERIFY(!demoHttp(ws.url(), QStringLiteral("/control/quiesce"), true).is_null());
        QVERIFY(!demoHttp(launchedHttp, QStringLiteral("/control/quiesce"), true).is_null());
        const Json wsView = demoHttp(ws.url(), QStringLiteral("/view"));
        const Json launchedView = demoHttp(launchedHttp, QStringLiteral("/view"));
        const CliResult r = cli.finish(40000);
        QCOMPARE(r.exitCode, 2); // the unreachable one
        const Json systems = r.json().value("systems", Json::object());
        QCOMPARE(systems.size(), size_t(3));
        QString diff = diffStateWithView(systems.value(ws.url().toStdString(), Json::object()), wsView);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        diff = diffStateWithView(systems.value(redactedUrl(launchUrl(launch)).toStdString(), Json::object()), launchedView);
        QVERIFY2(diff.isEmpty(), qPrintable(diff + QString::fromStdString(systems.dump().substr(0, 600))));
        QCOMPARE(systems["ws://127.0.0.1:1"].value("exitCode", 0), 2);

        const CliResult w = runCli({QStringLiteral("watch"), QStringLiteral("--url"), ws.url(), QStringLiteral("--launch"),
                                    demoCommand(QStringLiteral("serialized"), {QStringLiteral("--agents"), QStringLiteral("4")}),
                                    QStringLiteral("--duration"), QStringLiteral("3")},
                                   40000);
        QVERIFY2(w.exitCode == 0, qPrintable(QString::fromUtf8(w.err.right(1500))));
        QStringList summaries;
        for (const QByteArray &line : w.out.split('\n')) {
            const Json j = Json::parse(line.constBegin(), line.constEnd(), nullptr, false);
            if (j.is_object() && j.contains("summary"))
                summaries << QString::fromStdString(j["summary"].value("system", ""));
            else if (j.is_object())
                QVERIFY2(j.contains("system"), line.constData());
        }
        QCOMPARE(summaries.size(), 2); // the launched systems first, then the URLs
        QVERIFY(summaries.first().startsWith(QLatin1String("stdio:node ")));
        QCOMPARE(summaries.last(), ws.url());
    }
};

QTEST_GUILESS_MAIN(StdioLiveTest)
#include "tst_stdio_live.moc"
