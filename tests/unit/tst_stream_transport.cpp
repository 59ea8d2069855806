// MAP over streams, the parts that need no MAP system (tests/integration/tst_stdio_live runs the
// real one): NDJSON framing (line ends, numbers, blank lines, a last line without '\n', a line
// past the cap that costs no memory), what the console accepts to connect to, a launch command's
// URL and its redaction, the SDK stream writer's fault named in an answer, how a command is found
// (PATH, the folders beside it), that a launched command ends with what it started (Unix: with
// `sh` and `sleep` as the command), and a child's stderr flood reaching the session in bounded
// batches.
#include "FakeTransport.h"

#include "client/NdjsonFramer.h"
#include "client/ProcessLaunch.h"
#include "client/StreamTransports.h"

#include <QtTest>

#ifdef Q_OS_UNIX
#include <csignal>
#endif

using namespace mapi;
using namespace fake_server;

namespace {

QStringList texts(const std::vector<NdjsonFramer::Line> &lines)
{
    QStringList out;
    for (const NdjsonFramer::Line &l : lines)
        out << (l.tooLong ? QStringLiteral("<%1: %2 bytes>").arg(l.number).arg(l.bytes)
                          : QStringLiteral("%1:%2").arg(l.number).arg(QString::fromUtf8(l.text)));
    return out;
}

#ifdef Q_OS_LINUX
// Whether process `pid` is gone (a zombie waiting for its new parent counts as gone).
bool processGone(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');
    return close < 0 || text.mid(close + 2, 1) == "Z";
}
#endif

} // namespace

class TestStreamTransport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void linesAreSplitAndNumbered()
    {
        NdjsonFramer framer(1024);
        QStringList got = texts(framer.feed(QByteArrayLiteral("{\"a\":1}\n\n  \r\n{\"b\"")));
        QCOMPARE(got, (QStringList{QStringLiteral("1:{\"a\":1}")}));
        got = texts(framer.feed(QByteArrayLiteral(":2}\r\nlog line\n{\"c\":3}")));
        QCOMPARE(got, (QStringList{QStringLiteral("4:{\"b\":2}"), QStringLiteral("5:log line")}));
        QCOMPARE(texts(framer.finish()), QStringList{QStringLiteral("6:{\"c\":3}")}); // no '\n' at the end: still a line
        QCOMPARE(framer.linesSeen(), qint64(6));
        QVERIFY(framer.finish().empty());
    }

    void byteAtATimeGivesTheSameLines()
    {
        const QByteArray stream = QByteArrayLiteral("{\"x\":\"\\u00e9\"}\r\nnot json\n\n{\"y\":[1,2]}\n");
        NdjsonFramer whole(64), bytes(64);
        const QStringList expected = texts(whole.feed(stream));
        QStringList got;
        for (char c : stream)
            got += texts(bytes.feed(&c, 1));
        QCOMPARE(got, expected);
        QCOMPARE(expected.size(), 3);
    }

    // A line past the cap is said (number and length), costs at most the cap, and the lines
    // after it are read as usual.
    void lineOverTheCapIsDroppedAndCounted()
    {
        NdjsonFramer framer(100);
        std::vector<NdjsonFramer::Line> lines = framer.feed(QByteArrayLiteral("{\"ok\":1}\n"));
        const QByteArray chunk(64 * 1024, 'x');
        for (int i = 0; i < 160; ++i) // 10 MiB without a newline
            for (auto &l : framer.feed(chunk))
                lines.push_back(l);
        for (auto &l : framer.feed(QByteArrayLiteral("yy\n{\"after\":2}\n")))
            lines.push_back(l);
        QCOMPARE(texts(lines), (QStringList{QStringLiteral("1:{\"ok\":1}"), QStringLiteral("<2: %1 bytes>").arg(160 * 64 * 1024 + 2),
                                            QStringLiteral("3:{\"after\":2}")}));
        // Exactly at the cap is not too long.
        NdjsonFramer exact(4);
        QCOMPARE(texts(exact.feed(QByteArrayLiteral("abcd\nabcde\n"))), (QStringList{QStringLiteral("1:abcd"), QStringLiteral("<2: 5 bytes>")}));
    }

    void targetsTheConsoleConnectsTo()
    {
        QVERIFY(connectionTargetError(QUrl(QStringLiteral("ws://127.0.0.1:8080"))).isEmpty());
        QVERIFY(connectionTargetError(QUrl(QStringLiteral("wss://map.example.org/map"))).isEmpty());
        QVERIFY(connectionTargetError(QUrl(QStringLiteral("unix:/run/map.sock"))).isEmpty());
        QVERIFY(connectionTargetError(launchUrl(QStringLiteral("node server.mjs --stdio"))).isEmpty());
        for (const char *bad : {"http://127.0.0.1:8080", "ws://", "unix:", "ftp://x", "127.0.0.1:8080"})
            QVERIFY2(connectionTargetError(QUrl(QString::fromLatin1(bad))).contains(QLatin1String("stdio:COMMAND")), bad);
        QVERIFY(!connectionTargetError(launchUrl(QStringLiteral("   "))).isEmpty());
    }

    // The command as typed comes back as program and arguments (quotes kept together), and is
    // shown with its secrets redacted.
    void launchUrlKeepsTheCommand()
    {
        const QUrl url = launchUrl(QStringLiteral("node \"my server.mjs\" --name 'a b' --x=1?#%"));
        QCOMPARE(url.scheme(), QStringLiteral("stdio"));
        QCOMPARE(launchCommand(url), (QStringList{QStringLiteral("node"), QStringLiteral("my server.mjs"), QStringLiteral("--name"),
                                                  QStringLiteral("'a"), QStringLiteral("b'"), QStringLiteral("--x=1?#%")}));
        QCOMPARE(launchCommand(QUrl(url.toString())), launchCommand(url)); // through its text (profiles, settings)
        QVERIFY(launchCommand(QUrl(QStringLiteral("ws://h"))).isEmpty());
        const QString shown = redactedUrl(launchUrl(QStringLiteral("node s.mjs --header 'Authorization: Bearer sk-live-0123456789abcdef'")));
        QVERIFY2(shown.startsWith(QLatin1String("stdio:node s.mjs")) && !shown.contains(QLatin1String("sk-live-0123456789abcdef")),
                 qPrintable(shown));
    }

    // A local socket nobody listens on: said as a close (the client backs off), not a wait forever.
    void localSocketThatFailsIsAClose()
    {
        LocalSocketTransport transport(1024);
        int opened = 0;
        QStringList closed;
        connect(&transport, &Transport::opened, this, [&] { ++opened; });
        connect(&transport, &Transport::closed, this, [&](const QString &why) { closed << why; });
        transport.open(QUrl(QStringLiteral("unix:/nonexistent-folder/map.sock")));
        QTRY_COMPARE_WITH_TIMEOUT(closed.size(), 1, 5000);
        QCOMPARE(opened, 0);
        QVERIFY(!closed.first().isEmpty());
        QTest::qWait(100);
        QCOMPARE(closed.size(), 1); // once
    }

    void commandFoundOnThePathOrBesideIt()
    {
        QTemporaryDir home, elsewhere;
        QFile tool(home.filePath(QStringLiteral("fake-npx")));
        QVERIFY(tool.open(QIODevice::WriteOnly));
        tool.write("#!/bin/sh\n");
        tool.close();
        QVERIFY(tool.setPermissions(tool.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeUser));
        const QStringList command{QStringLiteral("fake-npx"), QStringLiteral("-y"), QStringLiteral("a b")};

        const QString onPath = home.path();
        LaunchPlan plan = planLaunch(command, &onPath, nullptr);
        QVERIFY2(plan.error.isEmpty(), qPrintable(plan.error));
        QCOMPARE(QFileInfo(plan.program).canonicalFilePath(), QFileInfo(tool).canonicalFilePath());
        QCOMPARE(plan.arguments, (QStringList{QStringLiteral("-y"), QStringLiteral("a b")}));
        QVERIFY(plan.pathPrefix.isEmpty());

        // Not on the PATH (a macOS program started from the Finder), but in a folder searched
        // after it: found there, and that folder goes first on the child's PATH (npx finds node).
        const QString otherPath = elsewhere.path();
        const QStringList extra{home.path()};
        plan = planLaunch(command, &otherPath, &extra);
        QVERIFY2(plan.error.isEmpty(), qPrintable(plan.error));
        QCOMPARE(QFileInfo(plan.program).canonicalFilePath(), QFileInfo(tool).canonicalFilePath());
        QCOMPARE(QFileInfo(plan.pathPrefix).canonicalFilePath(), QFileInfo(home.path()).canonicalFilePath());

        const QStringList none;
        plan = planLaunch(command, &otherPath, &none);
        QVERIFY2(plan.error.contains(QLatin1String("fake-npx is not found on this computer's PATH")), qPrintable(plan.error));
        plan = planLaunch({QStringLiteral("./bin/server"), QStringLiteral("x")}, &otherPath, &none);
        QVERIFY(plan.error.isEmpty()); // a path is the operator's: started as given
        QCOMPARE(plan.program, QStringLiteral("./bin/server"));
        QVERIFY(planLaunch({}, &otherPath, &none).error.contains(QLatin1String("no command")));
    }

    // The launched command is ended with the processes it started: when the console ends it,
    // and when it ends by itself leaving one behind.
    void commandEndsWithWhatItStarted_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<bool>("endedByTheConsole");
        QTest::newRow("ended by the console") << QStringLiteral("sleep 300 & echo $! > $0; exec sleep 301") << true;
        QTest::newRow("ends by itself") << QStringLiteral("sleep 300 & echo $! > $0; sleep 0.5; exit 3") << false;
    }
    void commandEndsWithWhatItStarted()
    {
#ifndef Q_OS_LINUX
        QSKIP("reads /proc");
#else
        QFETCH(QString, script);
        QFETCH(bool, endedByTheConsole);
        QTemporaryDir dir;
        const QString pidFile = dir.filePath(QStringLiteral("grandchild.pid"));
        ProcessTransport transport(1 << 20);
        QStringList closed;
        connect(&transport, &Transport::closed, this, [&](const QString &why) { closed << why; });
        transport.open(launchUrl(QStringLiteral("sh -c \"%1\" %2").arg(script, pidFile))); // QProcess::splitCommand's quotes
        qint64 grandchild = 0;
        QTRY_VERIFY_WITH_TIMEOUT((grandchild = [&] {
                                     QFile f(pidFile);
                                     return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong() : 0;
                                 }()) > 0, 5000);
        QVERIFY(!processGone(grandchild));
        if (endedByTheConsole)
            transport.abort(); // stdin closed: `sleep` does not care; SIGTERM to the group after the grace
        QTRY_VERIFY_WITH_TIMEOUT(processGone(grandchild), 3 * ProcessTransport::kGraceMs);
        if (!endedByTheConsole)
            QTRY_VERIFY2(!closed.isEmpty() && closed.first().contains(QLatin1String("exit code 3")), qPrintable(closed.join(u'|')));
        ::kill(pid_t(grandchild), SIGKILL); // nothing left behind by a failing run
#endif
    }

    // A child that floods its stderr: the session gets batches of the newest lines with the count
    // of those skipped, not a queued signal per line.
    void stderrFloodArrivesInBoundedBatches()
    {
        auto *t = new FakeTransport;
        ClientOptions options;
        options.url = QUrl(QStringLiteral("ws://127.0.0.1:1"));
        MapClient client(options, t);
        QList<QStringList> batches;
        qint64 skipped = 0;
        connect(&client, &MapClient::processOutput, this, [&](const QStringList &lines, qint64 notKept) {
            batches << lines;
            skipped += notKept;
        });
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        for (int i = 1; i <= 10000; ++i)
            Q_EMIT t->diagnosticLine(QByteArray("line ") + QByteArray::number(i) + (i == 10000 ? " token=sk-secret-value-1234567890" : ""));
        QTRY_COMPARE(batches.size(), 1);
        QCOMPARE(skipped, 8000);
        QCOMPARE(batches.first().size(), 2000);
        QCOMPARE(batches.first().first(), QStringLiteral("line 8001"));
        QVERIFY2(!batches.first().last().contains(QLatin1String("sk-secret-value")), qPrintable(batches.first().last())); // redacted
        // The last words before a close come before it.
        Q_EMIT t->diagnosticLine("last words");
        QStringList order;
        connect(&client, &MapClient::processOutput, this, [&] { order << QStringLiteral("output"); });
        connect(&client, &MapClient::stateChanged, this, [&] { order << QStringLiteral("state"); });
        t->serverClose();
        QTRY_VERIFY(!order.isEmpty());
        QCOMPARE(order.first(), QStringLiteral("output"));
        QCOMPARE(batches.last(), QStringList{QStringLiteral("last words")});
    }

    // -32603 "WritableStream is locked": the request was likely done; the answer says so.
    void writerLockAnswerIsExplained()
    {
        auto *t = new FakeTransport;
        t->handlers[QStringLiteral("map/agents/register")] = [](const Json &) {
            return Answer::error(-32603, QStringLiteral("Invalid state: WritableStream is locked"));
        };
        t->handlers[QStringLiteral("map/agents/get")] = [](const Json &) { return Answer::error(-32603, QStringLiteral("Agent not found")); };
        ClientOptions options;
        options.url = QUrl(QStringLiteral("ws://127.0.0.1:1"));
        MapClient client(options, t);
        client.start();
        QTRY_COMPARE(client.state(), ClientState::Live);
        QString said, other;
        client.request(QStringLiteral("map/agents/register"), {{"name", "n"}}, [&](bool, const Json &, const RpcError &e) { said = e.message; });
        client.request(QStringLiteral("map/agents/get"), {{"agentId", "x"}}, [&](bool, const Json &, const RpcError &e) { other = e.message; });
        QTRY_VERIFY(!said.isEmpty() && !other.isEmpty());
        QVERIFY2(said.startsWith(QLatin1String("Invalid state: WritableStream is locked"))
                     && said.contains(QLatin1String("a known fault of the MAP SDK's server over streams"))
                     && said.contains(QLatin1String("may well have been done")),
                 qPrintable(said));
        QCOMPARE(other, QStringLiteral("Agent not found")); // other errors as they are
    }
};

QTEST_GUILESS_MAIN(TestStreamTransport)
#include "tst_stream_transport.moc"
