// MAP over streams, the parts that need no child process (tests/integration/tst_stdio_live runs
// the real one): NDJSON framing (line ends, numbers, blank lines, a last line without '\n', a line
// past the cap that costs no memory), what the console accepts to connect to, a launch command's
// URL and its redaction, and the SDK stream writer's fault named in an answer.
#include "FakeTransport.h"

#include "client/NdjsonFramer.h"
#include "client/StreamTransports.h"

#include <QtTest>

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
