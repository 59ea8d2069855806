// The passive tap (core/tap/WebSocketTap.h) between a WebSocket client and a server of the
// test's own, on loopback: what it forwards (bytes, headers, path, close codes), what it refuses,
// and what it records. The official server behind it: tests/integration/tst_tap_live.cpp.
#include "TestSupport.h"

#include "tap/TapConnections.h"
#include "tap/WebSocketTap.h"
#include "trace/Trace.h"

#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>
#include <QWebSocket>
#include <QWebSocketServer>

using namespace mapi;

namespace {

// The upstream: keeps what it received and how it was asked, answers what the test says.
struct Upstream
{
    QWebSocketServer server{QStringLiteral("upstream"), QWebSocketServer::NonSecureMode};
    QList<QWebSocket *> sockets;
    QList<QByteArray> received; // text as UTF-8 bytes; binary prefixed "bin:"
    QNetworkRequest lastRequest;
    int closeCode = -1;
    QString closeReason;

    Upstream()
    {
        server.listen(QHostAddress::LocalHost, 0);
        QObject::connect(&server, &QWebSocketServer::newConnection, &server, [this] {
            QWebSocket *s = server.nextPendingConnection();
            sockets << s;
            lastRequest = s->request();
            QObject::connect(s, &QWebSocket::textMessageReceived, s, [this](const QString &t) { received << t.toUtf8(); });
            QObject::connect(s, &QWebSocket::binaryMessageReceived, s, [this](const QByteArray &b) { received << "bin:" + b; });
            QObject::connect(s, &QWebSocket::disconnected, s, [this, s] {
                closeCode = s->closeCode();
                closeReason = s->closeReason();
            });
        });
    }
    QUrl url() const { return QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(server.serverPort())); }
};

std::vector<TraceRecord> readAll(const QString &path)
{
    std::vector<TraceRecord> records;
    TraceReadStats stats;
    QString error;
    readTrace(path, [&](const TraceRecord &r) { records.push_back(r); return true; }, stats, &error);
    return records;
}

} // namespace

class TapTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void refusesWhatWouldLeakCredentials_data()
    {
        QTest::addColumn<QString>("upstream");
        QTest::addColumn<bool>("refused");
        QTest::newRow("loopback ws") << "ws://127.0.0.1:9000/map" << false;
        QTest::newRow("localhost ws") << "ws://localhost:9000" << false;
        QTest::newRow("ipv6 loopback ws") << "ws://[::1]:9000" << false;
        QTest::newRow("another machine over wss") << "wss://map.example.org/ws" << false;
        QTest::newRow("another machine over plain ws") << "ws://10.1.2.3:9000" << true;
        QTest::newRow("a name over plain ws") << "ws://map.example.org:9000" << true;
        QTest::newRow("user info") << "ws://user:pw@127.0.0.1:9000" << true;
        QTest::newRow("not a websocket") << "http://127.0.0.1:9000" << true;
        QTest::newRow("no host") << "ws://" << true;
    }
    void refusesWhatWouldLeakCredentials()
    {
        QFETCH(QString, upstream);
        QFETCH(bool, refused);
        QCOMPARE(!WebSocketTap::upstreamError(QUrl(upstream)).isEmpty(), refused);
        QVERIFY(!WebSocketTap::listenError(QHostAddress(QStringLiteral("0.0.0.0"))).isEmpty());
        QVERIFY(!WebSocketTap::listenError(QHostAddress(QStringLiteral("192.168.1.4"))).isEmpty());
        QVERIFY(WebSocketTap::listenError(QHostAddress(QStringLiteral("::1"))).isEmpty());
        WebSocketTap tap;
        TapOptions options;
        options.upstream = QUrl(upstream);
        QString error;
        QCOMPARE(!tap.start(options, &error), refused);
        QCOMPARE(tap.listenUrl().isEmpty(), refused);
        QCOMPARE(error.isEmpty(), !refused);
    }

    void upstreamAddressKeepsThePathAndQueryAskedFor()
    {
        const QUrl base(QStringLiteral("ws://127.0.0.1:9000"));
        QCOMPARE(WebSocketTap::upstreamFor(base, QUrl(QStringLiteral("/agent?name=a"))).toString(),
                 QStringLiteral("ws://127.0.0.1:9000/agent?name=a"));
        QCOMPARE(WebSocketTap::upstreamFor(base, QUrl(QStringLiteral("/"))).toString(), QStringLiteral("ws://127.0.0.1:9000/"));
        const QUrl withPath(QStringLiteral("ws://127.0.0.1:9000/map/?v=1"));
        QCOMPARE(WebSocketTap::upstreamFor(withPath, QUrl(QStringLiteral("/"))).toString(), QStringLiteral("ws://127.0.0.1:9000/map/?v=1"));
        QCOMPARE(WebSocketTap::upstreamFor(withPath, QUrl(QStringLiteral("/agent?x=%20y"))).toString(QUrl::FullyEncoded),
                 QStringLiteral("ws://127.0.0.1:9000/map/agent?v=1&x=%20y"));
    }

    void forwardsEveryByteAndCloseAndRecordsThemRedacted()
    {
        Upstream upstream;
        QTemporaryDir dir;
        WebSocketTap tap;
        TapOptions options;
        options.upstream = upstream.url();
        options.tracePath = dir.filePath(QStringLiteral("tap.jsonl"));
        QString error;
        QVERIFY2(tap.start(options, &error), qPrintable(error));
        QSignalSpy closed(&tap, &WebSocketTap::participantClosed);

        QWebSocket client;
        QList<QByteArray> clientGot;
        connect(&client, &QWebSocket::textMessageReceived, this, [&](const QString &t) { clientGot << t.toUtf8(); });
        connect(&client, &QWebSocket::binaryMessageReceived, this, [&](const QByteArray &b) { clientGot << "bin:" + b; });
        QUrl url = tap.listenUrl();
        url.setPath(QStringLiteral("/agent"));
        url.setQuery(QStringLiteral("name=worker&resumeToken=resume-secret-4711"));
        QNetworkRequest request(url);
        request.setRawHeader("Authorization", "Bearer header-secret-0815abc");
        request.setRawHeader("X-Custom", "kept");
        client.open(request);
        QTRY_COMPARE(client.state(), QAbstractSocket::ConnectedState);

        // Spacing, key order, escapes and non-ASCII text are the frame's own: none may change.
        const QByteArray odd = QByteArrayLiteral("{ \"method\" :\"map/connect\",\"jsonrpc\":\"2.0\",  \"id\":7,"
                                                 "\"params\":{\"token\":\"frame-secret-9999\",\"text\":\"caf\xc3\xa9 \\u00e9\\n\"} }");
        const QByteArray notJson = QByteArrayLiteral("not JSON {");
        const QByteArray binary = QByteArray::fromHex("00ff10807f");
        client.sendTextMessage(QString::fromUtf8(odd));
        client.sendTextMessage(QString::fromUtf8(notJson));
        client.sendBinaryMessage(binary);
        QTRY_COMPARE(upstream.received.size(), 3);
        QCOMPARE(upstream.received[0], odd);
        QCOMPARE(upstream.received[1], notJson);
        QCOMPARE(upstream.received[2], "bin:" + binary);
        // The handshake: path and query as asked, the participant's own headers, not the tap's.
        QCOMPARE(upstream.lastRequest.url().path(), QStringLiteral("/agent"));
        QCOMPARE(QUrlQuery(upstream.lastRequest.url()).queryItemValue(QStringLiteral("resumeToken")), QStringLiteral("resume-secret-4711"));
        QCOMPARE(upstream.lastRequest.rawHeader("Authorization"), QByteArray("Bearer header-secret-0815abc"));
        QCOMPARE(upstream.lastRequest.rawHeader("X-Custom"), QByteArray("kept"));

        const QByteArray answer = QByteArrayLiteral("{\"jsonrpc\":\"2.0\",\"id\":7,   \"result\":{\"z\":1,\"a\":[ ]}}");
        upstream.sockets[0]->sendTextMessage(QString::fromUtf8(answer));
        upstream.sockets[0]->sendBinaryMessage(binary);
        QTRY_COMPARE(clientGot.size(), 2);
        QCOMPARE(clientGot[0], answer);
        QCOMPARE(clientGot[1], "bin:" + binary);

        // The server's close code and reason reach the participant as they were.
        upstream.sockets[0]->close(QWebSocketProtocol::CloseCode(4001), QStringLiteral("work done"));
        QTRY_COMPARE(client.state(), QAbstractSocket::UnconnectedState);
        QCOMPARE(int(client.closeCode()), 4001);
        QCOMPARE(client.closeReason(), QStringLiteral("work done"));
        QTRY_COMPARE(closed.size(), 1);
        QCOMPARE(closed[0][1].toString(), QStringLiteral("server"));

        // The other way: the participant's close reaches the server.
        QWebSocket second;
        second.open(tap.listenUrl());
        QTRY_COMPARE(second.state(), QAbstractSocket::ConnectedState);
        QTRY_COMPARE(upstream.sockets.size(), 2);
        second.close(QWebSocketProtocol::CloseCode(3001), QStringLiteral("leaving"));
        QTRY_COMPARE(upstream.closeCode, 3001);
        QCOMPARE(upstream.closeReason, QStringLiteral("leaving"));
        QTRY_COMPARE(closed.size(), 2);

        const TapCounts counts = tap.counts();
        QCOMPARE(counts.participants, 2);
        QCOMPARE(counts.framesToServer, 3);
        QCOMPARE(counts.framesToParticipants, 2);
        tap.stop();

        // The trace: both directions, a connection per participant, who connected when; no secret.
        QFile file(options.tracePath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        for (const char *secret : {"resume-secret-4711", "frame-secret-9999", "header-secret-0815abc"})
            QVERIFY2(!text.contains(secret), secret);
        QVERIFY(text.startsWith("{\"app\""));
        QVERIFY(text.left(text.indexOf('\n')).contains("\"tap\":{\"listen\":"));
        const std::vector<TraceRecord> records = readAll(options.tracePath);
        QStringList shape;
        for (const TraceRecord &r : records)
            shape << QStringLiteral("%1:%2").arg(r.connection).arg(r.dir);
        QCOMPARE(shape.join(QLatin1Char(' ')), QStringLiteral("1:open 1:send 1:send 1:send 1:recv 1:recv 1:close 2:open 2:close"));
        QVERIFY(records[0].raw.contains("/agent?name=worker&resumeToken="));
        QVERIFY(records[1].raw.contains("\"token\":\"REDACTED\""));
        QCOMPARE(records[2].raw, notJson);
        QVERIFY(records[3].binary);
        QCOMPARE(records[3].raw, binary);
        QCOMPARE(records[4].raw, answer);
        QCOMPARE(QString::fromUtf8(records[6].raw), QStringLiteral("server closed (code 4001: work done)"));
        QCOMPARE(QString::fromUtf8(records[8].raw), QStringLiteral("participant closed (code 3001: leaving)"));
    }

    void stoppingClosesEveryoneAndAVanishedServerIsAnAbnormalClose()
    {
        Upstream upstream;
        QTemporaryDir dir;
        QStringList closes; // by the tap's participantClosed: "by code" (outlives the tap, which may say more as it goes)
        WebSocketTap tap;
        TapOptions options;
        options.upstream = upstream.url();
        options.tracePath = dir.filePath(QStringLiteral("tap.jsonl"));
        QString error;
        QVERIFY2(tap.start(options, &error), qPrintable(error));

        // The server vanishes without a close frame: the tap drops the participant's connection
        // too (1006: no close frame goes). Said by the tap, not read at the participant: Qt's
        // client may write a close frame of its own on a dropped connection, and emit
        // aboutToClose for it, depending on timing (seen under ASan).
        connect(&tap, &WebSocketTap::participantClosed, this,
                [&](int, const QString &by, int code, const QString &) { closes << QStringLiteral("%1 %2").arg(by).arg(code); });
        QWebSocket first;
        first.open(tap.listenUrl());
        QTRY_COMPARE(upstream.sockets.size(), 1);
        QTRY_COMPARE(first.state(), QAbstractSocket::ConnectedState);
        // The server has accepted, but the tap may not have read its answer yet: vanishing then is
        // an upstream that failed to open ("tap 1011", seen under ASan). A message the tap
        // forwards proves its side open (it holds messages back until then).
        first.sendTextMessage(QStringLiteral("hello"));
        QTRY_COMPARE(upstream.received.size(), 1);
        upstream.sockets[0]->abort();
        QTRY_COMPARE(first.state(), QAbstractSocket::UnconnectedState);
        QCOMPARE(closes, QStringList{QStringLiteral("server 1006")});

        // The tap stops with a participant connected: both sides get 1001, as the trace says.
        QWebSocket second;
        second.open(tap.listenUrl());
        QTRY_COMPARE(upstream.sockets.size(), 2);
        QTRY_COMPARE(second.state(), QAbstractSocket::ConnectedState);
        QTRY_COMPARE(upstream.sockets[1]->state(), QAbstractSocket::ConnectedState);
        tap.stop();
        QTRY_COMPARE(second.state(), QAbstractSocket::UnconnectedState);
        QCOMPARE(int(second.closeCode()), int(QWebSocketProtocol::CloseCodeGoingAway));
        QCOMPARE(second.closeReason(), QStringLiteral("the tap stopped"));
        QTRY_COMPARE(upstream.closeCode, int(QWebSocketProtocol::CloseCodeGoingAway));

        QStringList recorded;
        for (const TraceRecord &r : readAll(options.tracePath))
            if (r.dir == QLatin1String("close"))
                recorded << QString::fromUtf8(r.raw);
        QCOMPARE(recorded.size(), 2);
        QVERIFY2(recorded[0].startsWith(QLatin1String("server closed (code 1006")), qPrintable(recorded[0]));
        QCOMPARE(recorded[1], QStringLiteral("tap closed (code 1001: the tap stopped)"));
    }

    void queryValuesThatMayBeCredentialsAreNotShown()
    {
        const QString shown = WebSocketTap::shownUrl(
            QUrl(QStringLiteral("ws://u:p@127.0.0.1:9/agent?name=worker&ticket=t-123456&sig=abcdef&role=coder")));
        QCOMPARE(shown, QStringLiteral("ws://127.0.0.1:9/agent?name=worker&ticket=REDACTED&sig=REDACTED&role=coder"));
    }

    void connectionsSayWhoDidWhat()
    {
        TapConnections all;
        const auto add = [&](qint64 t, const char *dir, int conn, const QByteArray &raw) {
            TraceRecord r;
            r.timeMs = t;
            r.dir = QString::fromLatin1(dir);
            r.connection = conn;
            r.raw = raw;
            all.add(r);
        };
        add(1000, "open", 1, "ws://127.0.0.1:9/agent?name=w");
        add(1001, "send", 1, R"({"jsonrpc":"2.0","id":1,"method":"map/connect","params":{"participantType":"agent","name":"worker-7"}})");
        add(1002, "recv", 1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"note\":\"no \\\"error\\\" here\"}}"); // "error" only inside a string
        add(1003, "send", 1, R"({"jsonrpc":"2.0","method":"map/agents/heartbeat","params":{"id":"x"}})"); // a notification
        add(1004, "recv", 1, R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}})");
        add(1005, "recv", 1, R"({"jsonrpc":"2.0","method":"map/event","params":{"event":{"id":"e1","type":"agent_registered"}}})");
        add(1006, "recv", 1, R"({"jsonrpc":"2.0","id":"s1","method":"map/agents/stop","params":{}})"); // the server asks
        add(1006, "recv", 1, R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":{"method":"x/y"}}})");
        add(1007, "open", 2, "ws://127.0.0.1:9/");
        // A hostile participant: values of the wrong type are read as absent, never thrown on.
        add(1007, "send", 2, R"({"jsonrpc":"2.0","id":null,"method":null})");
        add(1007, "send", 2, R"({"jsonrpc":"2.0","id":1,"method":"map/connect","params":{"name":null,"participantType":7}})");
        add(-9000000000000000000LL, "recv", 2, R"({"method":"map/event"})"); // a stamp far in the past: the first bucket's
        add(9000000000000000000LL, "recv", 2, R"({"method":"map/event"})");  // far ahead: clamped, no overflow
        add(1008, "note", 2, "tap: 2 message(s) of this participant were never delivered");
        add(1009, "close", 2, "tap closed (code 1011: upstream refused: Connection refused)");
        add(1010, "close", 1, "server closed (code 4001: work done)");
        const std::vector<TapConnection> &c = all.connections();
        QCOMPARE(c.size(), size_t(2));
        QCOMPARE(c[0].who, QStringLiteral("worker-7"));
        QCOMPARE(c[0].role, QStringLiteral("agent"));
        QCOMPARE(c[0].sent, 2);
        QCOMPARE(c[0].requests, 1);
        QCOMPARE(c[0].received, 5);
        QCOMPARE(c[0].errors, 2); // the one whose data names a method too
        QCOMPARE(c[0].notifications, 1);
        QCOMPARE(c[0].closedBy, QStringLiteral("server"));
        QCOMPARE(c[0].closeText, QStringLiteral("code 4001: work done"));
        QCOMPARE(c[0].buckets.size(), size_t(1));
        QCOMPARE(c[0].buckets[0].errors, 2u);
        QCOMPARE(c[1].who, QStringLiteral("7")); // no name: its participantType, a number said as it is
        QCOMPARE(c[1].received, 2);
        QVERIFY(c[1].buckets.size() <= size_t(TapConnections::kMaxBuckets));
        QVERIFY(all.lastMs() <= TapConnections::kLatestMs);
        QCOMPARE(c[1].closedBy, QStringLiteral("tap"));
        QCOMPARE(c[1].notes.size(), 1);

        // Bounded: a day of activity keeps at most kMaxBuckets buckets, every count kept.
        for (qint64 t = 0; t < 86400000; t += 1000)
            add(2000 + t, "recv", 1, R"({"jsonrpc":"2.0","method":"map/event","params":{}})");
        QVERIFY(all.connections()[0].buckets.size() <= size_t(TapConnections::kMaxBuckets));
        quint64 received = 0;
        for (const TapActivityBucket &b : all.connections()[0].buckets)
            received += b.received;
        QCOMPARE(received, quint64(5 + 86400));
        QCOMPARE(all.bucketMs() % TapConnections::kFirstBucketMs, 0);

        // Past kMaxConnections, records are counted, not kept, and nothing grows with them.
        TapConnections many;
        for (int conn = 1; conn <= TapConnections::kMaxConnections + 3; ++conn) {
            TraceRecord r;
            r.timeMs = 1000 + conn;
            r.dir = QStringLiteral("open");
            r.connection = conn;
            r.raw = "ws://127.0.0.1:9/agent";
            many.add(r);
        }
        QCOMPARE(int(many.connections().size()), TapConnections::kMaxConnections);
        QCOMPARE(many.recordsNotFollowed(), 3);
    }

    void anUpstreamThatRefusesClosesTheParticipantAndSaysWhy()
    {
        QTcpServer closedPort; // a port nobody listens on: taken, then given back
        QVERIFY(closedPort.listen(QHostAddress::LocalHost, 0));
        const quint16 port = closedPort.serverPort();
        closedPort.close();
        WebSocketTap tap;
        TapOptions options;
        options.upstream = QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port));
        QString error;
        QVERIFY2(tap.start(options, &error), qPrintable(error));
        QWebSocket client;
        client.open(tap.listenUrl());
        QTRY_COMPARE(client.state(), QAbstractSocket::UnconnectedState);
        QCOMPARE(int(client.closeCode()), int(QWebSocketProtocol::CloseCodeBadOperation));
        QVERIFY2(client.closeReason().contains(QLatin1String("upstream")), qPrintable(client.closeReason()));
        QTRY_COMPARE(tap.counts().upstreamFailures, 1);
        QCOMPARE(tap.counts().open, 0);
    }
};

QTEST_GUILESS_MAIN(TapTest)
#include "tst_tap.moc"
