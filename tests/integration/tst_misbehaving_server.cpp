// A hostile or buggy MAP server: malformed, oversized, deeply nested, binary and
// unmatched frames, then silence. Nothing crashes, every bad frame is counted and kept, the
// valid frames around them still apply, and an open-but-silent socket is detected within 15 s.
#include "client/MapClient.h"
#include "model/SystemStore.h"

#include <QElapsedTimer>
#include <QWebSocket>
#include <QWebSocketServer>
#include <QtTest>

using namespace mapi;

class HostileServer : public QObject
{
    Q_OBJECT
public:
    QWebSocketServer server{QStringLiteral("hostile"), QWebSocketServer::NonSecureMode};
    QList<QWebSocket *> sockets;
    int connections = 0;
    bool silent = false;          // the first connection stops answering (its socket stays open)
    bool sendHostileBurst = true; // after the snapshot, send the bad frames once
    qint64 lastFrameSentMs = 0;
    QElapsedTimer clock;

    HostileServer()
    {
        clock.start();
        server.listen(QHostAddress::LocalHost, 0);
        connect(&server, &QWebSocketServer::newConnection, this, [this] {
            QWebSocket *socket = server.nextPendingConnection();
            socket->setMaxAllowedIncomingMessageSize(64 * 1024 * 1024);
            sockets << socket;
            ++connections;
            connect(socket, &QWebSocket::textMessageReceived, this, [this, socket](const QString &text) { onRequest(socket, text); });
        });
    }
    QString url() const { return QStringLiteral("ws://127.0.0.1:%1").arg(server.serverPort()); }

    void send(QWebSocket *socket, const QByteArray &frame)
    {
        socket->sendTextMessage(QString::fromUtf8(frame));
        lastFrameSentMs = clock.elapsed();
    }

    void onRequest(QWebSocket *socket, const QString &text)
    {
        if (silent && socket == sockets.value(0))
            return; // only the first connection goes deaf, as with the official server's writer bug
        const Json request = Json::parse(text.toStdString(), nullptr, false);
        const std::string method = request.value("method", "");
        Json result;
        if (method == "map/connect")
            result = {{"protocolVersion", "2024-12"}, {"sessionId", "S1"}, {"systemInfo", {{"name", "hostile"}}}};
        else if (method == "map/subscribe")
            result = {{"subscriptionId", "sub1"}};
        else if (method == "map/agents/list")
            result = {{"agents", {{{"id", "a1"}, {"name", "one"}, {"state", "idle"}}}}};
        else if (method == "map/scopes/list")
            result = {{"scopes", Json::array()}};
        else if (method == "map/session/info")
            result = {{"id", "S1"}};
        else {
            send(socket, QByteArray::fromStdString(Json({{"jsonrpc", "2.0"}, {"id", request["id"]},
                                                         {"error", {{"code", -32601}, {"message", "Method not found"}}}}).dump()));
            return;
        }
        send(socket, QByteArray::fromStdString(Json({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}).dump()));
        if (method == "map/scopes/list" && sendHostileBurst) {
            sendHostileBurst = false;
            QTimer::singleShot(100, this, [this, socket] { burst(socket); });
        }
    }

    static QByteArray event(int sequence, const char *id, const Json &agent)
    {
        const Json params = {{"subscriptionId", "sub1"}, {"sequenceNumber", sequence}, {"eventId", id},
                             {"event", {{"id", id}, {"type", "agent.registered"}, {"timestamp", 1000 + sequence},
                                        {"data", {{"agent", agent}}}}}};
        return QByteArray::fromStdString(Json({{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", params}}).dump());
    }

    static constexpr int kBadFrames = 9;
    void burst(QWebSocket *socket)
    {
        send(socket, event(1, "E1", {{"id", "a2"}, {"name", "two"}, {"state", "busy"}}));
        send(socket, "{not json");                                                     // 1 invalid JSON
        socket->sendBinaryMessage(QByteArray("\x00\x01\x02", 3));                     // 2 binary frame
        send(socket, "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"x\":\""
                         + QByteArray(2 * 1024 * 1024, 'a') + "\"}}");                // 3 oversized (limit 1 MiB)
        send(socket, QByteArray(100000, '[') + QByteArray(100000, ']'));               // 4 deeply nested
        send(socket, "[{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{}}]"); // 5 batch
        send(socket, "{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}");               // 6 unmatched response
        send(socket, "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"sub1\"}}"); // 7 no event
        send(socket, "null");                                                          // 8 not an object
        send(socket, "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}");                 // 9 wrong version
        send(socket, event(2, "E2", {{"id", "a3"}, {"name", "three"}, {"state", "idle"}, {"metadata", {{"parentId", "ghost"}}}}));
        send(socket, event(5, "E5", {{"id", "a4"}, {"name", "four"}, {"state", "custom:odd"}})); // sequence gap 3–4
    }
};

class MisbehavingServerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void hostileFramesAreCountedAndNothingElseIsLost()
    {
        HostileServer server;
        ClientOptions options;
        options.url = QUrl(server.url());
        options.limits.maxFrameBytes = 1024 * 1024;
        MapClient client(options);
        SystemStore store;
        connect(&client, &MapClient::inputsReady, &store, [&](const ModelInputs &in) { store.apply(in); });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(store.agent(QStringLiteral("a4")) != nullptr, 10000);
        QCOMPARE(client.state(), ClientState::Live);

        QCOMPARE(store.counters().problems, qint64(HostileServer::kBadFrames));
        QSet<ProblemKind> kinds;
        for (const ProtocolProblem &p : store.problems()) {
            kinds.insert(p.kind);
            QVERIFY(!p.detail.isEmpty());
            QVERIFY(p.frame.size() <= ProtocolProblem::kMaxKeptProblemBytes);
            QVERIFY(!p.frame.isEmpty());
        }
        for (ProblemKind k : {ProblemKind::InvalidJson, ProblemKind::BinaryFrame, ProblemKind::OversizedFrame,
                              ProblemKind::TooDeep, ProblemKind::NotJsonRpc, ProblemKind::UnmatchedResponse,
                              ProblemKind::Malformed})
            QVERIFY2(kinds.contains(k), qPrintable(problemKindName(k)));

        // The valid frames around the bad ones all applied.
        QVERIFY(store.agent(QStringLiteral("a1")));
        QCOMPARE(store.agent(QStringLiteral("a2"))->state, QStringLiteral("busy"));
        QCOMPARE(store.agent(QStringLiteral("a3"))->parentId, QStringLiteral("ghost"));
        QVERIFY(store.agent(QStringLiteral("ghost"))->placeholder);
        QCOMPARE(store.agent(QStringLiteral("a4"))->state, QStringLiteral("custom:odd"));
        QCOMPARE(store.counters().sequenceGaps, qint64(1));
        QCOMPARE(store.gaps().front().fromSequence, qint64(3));
        QCOMPARE(store.gaps().front().toSequence, qint64(4));
        client.stop();
    }

    void silentServerIsDetectedWithin15Seconds()
    {
        HostileServer server;
        server.sendHostileBurst = false;
        ClientOptions options; // default liveness settings: that is what is being proven
        options.url = QUrl(server.url());
        options.backoffInitialMs = 100;
        MapClient client(options);
        SystemStore store;
        connect(&client, &MapClient::inputsReady, &store, [&](const ModelInputs &in) { store.apply(in); });
        client.start();
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 10000);
        server.silent = true;
        const qint64 silentSince = server.lastFrameSentMs;
        QTRY_VERIFY_WITH_TIMEOUT(server.connections == 2, 20000);
        const qint64 detectedAfter = server.clock.elapsed() - silentSince;
        qInfo("silence detected and reconnect started %lld ms after the last frame", static_cast<long long>(detectedAfter));
        QVERIFY2(detectedAfter <= 15000, qPrintable(QString::number(detectedAfter)));
        bool noted = false;
        for (const ProtocolProblem &p : store.problems())
            noted |= p.kind == ProblemKind::NotAnswering && p.detail.startsWith(QLatin1String("the server is not answering since"));
        QVERIFY(noted);
        server.silent = false;
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == ClientState::Live, 10000);
        client.stop();
    }
};

QTEST_GUILESS_MAIN(MisbehavingServerTest)
#include "tst_misbehaving_server.moc"
