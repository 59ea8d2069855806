// A synthetic MAP server for the live-flood benchmark (bench_gui stall --flood AGENTS RATE): it
// answers what a client asks when it connects (map/connect, map/subscribe, the agent and scope
// lists, session info) in the official server's shapes (../shared/reference/map-wire.md), then
// sends `map/event` frames at RATE per second, as the official server frames them: 90 %
// message.sent between random agents, 10 % agent.state.changed. The official server itself
// tops out near 15,000 events/s on the benchmark machine, too few for the 100,000.
//
// Thread: its own (FloodServer::start() moves it there); the sender must not share the GUI
// thread it measures. Frames are made by hand (no JSON library) so that the sender stays cheap.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QThread>
#include <QTimer>
#include <QWebSocket>
#include <QWebSocketServer>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>

class FloodServer : public QObject
{
public:
    FloodServer(int agents, int ratePerSecond) : m_agents(std::max(1, agents)), m_rate(std::max(1, ratePerSecond)) {}

    // Listens on 127.0.0.1 in a thread of its own; returns the URL (empty when it cannot listen).
    QString start()
    {
        moveToThread(&m_thread);
        m_thread.start();
        quint16 port = 0;
        QMetaObject::invokeMethod(this, [this, &port] { port = listen(); }, Qt::BlockingQueuedConnection);
        return port ? QStringLiteral("ws://127.0.0.1:%1").arg(port) : QString();
    }
    void stop()
    {
        QMetaObject::invokeMethod(this, [this] {
            m_tick.stop();
            qDeleteAll(m_sockets);
            m_sockets.clear();
            delete m_server;
            m_server = nullptr;
        }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    qint64 framesSent() const { return m_sent; } // read after stop()

private:
    quint16 listen()
    {
        m_server = new QWebSocketServer(QStringLiteral("flood"), QWebSocketServer::NonSecureMode, this);
        if (!m_server->listen(QHostAddress::LocalHost, 0))
            return 0;
        connect(m_server, &QWebSocketServer::newConnection, this, [this] {
            QWebSocket *socket = m_server->nextPendingConnection();
            m_sockets << socket;
            connect(socket, &QWebSocket::textMessageReceived, this, [this, socket](const QString &text) { answer(socket, text); });
        });
        m_tick.setTimerType(Qt::PreciseTimer);
        m_tick.setInterval(1);
        connect(&m_tick, &QTimer::timeout, this, &FloodServer::sendDue);
        return m_server->serverPort();
    }

    QByteArray agentId(int i) const { return QByteArray("flood-agent-") + QByteArray::number(i); }

    void answer(QWebSocket *socket, const QString &text)
    {
        using Json = nlohmann::json;
        const Json request = Json::parse(text.toStdString(), nullptr, false);
        if (!request.is_object() || !request.contains("id"))
            return;
        const std::string method = request.value("method", "");
        Json result;
        if (method == "map/connect") {
            result = {{"protocolVersion", 1}, {"sessionId", "flood-session"},
                      {"participantId", "flood-client"}, {"capabilities", Json::object()}};
        } else if (method == "map/subscribe") {
            result = {{"subscriptionId", "flood-subscription"}};
            m_subscriber = socket;
        } else if (method == "map/agents/list") {
            Json agents = Json::array();
            for (int i = 0; i < m_agents; ++i)
                agents.push_back({{"id", agentId(i).toStdString()}, {"name", "worker-" + std::to_string(i)},
                                  {"role", i % 100 == 0 ? "coordinator" : "worker"}, {"state", "idle"}});
            result = {{"agents", agents}};
        } else if (method == "map/scopes/list") {
            result = {{"scopes", Json::array()}};
        } else if (method == "map/session/info") {
            result = {{"id", "flood-session"}};
        } else {
            socket->sendTextMessage(QString::fromStdString(Json({{"jsonrpc", "2.0"}, {"id", request["id"]},
                {"error", {{"code", -32601}, {"message", "Method not found"}}}}).dump()));
            return;
        }
        socket->sendTextMessage(QString::fromStdString(Json({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}).dump()));
        if (m_subscriber && !m_tick.isActive()) {
            m_clock.start();
            m_tick.start();
        }
    }

    // Sends what is due since the flood began (at most 50 ms' worth at once, so that a stalled
    // sender does not pile up a burst).
    void sendDue()
    {
        if (!m_subscriber)
            return;
        const qint64 due = m_clock.elapsed() * m_rate / 1000;
        qint64 count = std::min<qint64>(due - m_sent, std::max(1, m_rate / 20));
        if (count <= 0)
            return;
        std::uniform_int_distribution<int> anyAgent(0, m_agents - 1);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        for (; count > 0; --count) {
            const qint64 n = ++m_sent;
            const QByteArray seq = QByteArray::number(n), time = QByteArray::number(now);
            const QByteArray id = "flood-event-" + seq;
            QByteArray event;
            if (n % 10 == 0) {
                const int agent = anyAgent(m_random);
                event = "{\"type\":\"agent.state.changed\",\"data\":{\"agent\":{\"id\":\"" + agentId(agent) + "\",\"state\":\""
                        + (n % 20 == 0 ? "busy" : "idle") + "\"}},\"source\":{\"agentId\":\"" + agentId(agent) + "\"},\"id\":\""
                        + id + "\",\"timestamp\":" + time + "}";
            } else {
                const int from = anyAgent(m_random), to = anyAgent(m_random);
                event = "{\"type\":\"message.sent\",\"data\":{\"message\":{\"id\":\"flood-message-" + seq + "\",\"from\":\""
                        + agentId(from) + "\",\"to\":\"" + agentId(to) + "\",\"payload\":{\"type\":\"chatter\",\"n\":" + seq
                        + "},\"timestamp\":" + time + "}},\"source\":{\"agentId\":\"" + agentId(from) + "\"},\"id\":\"" + id
                        + "\",\"timestamp\":" + time + "}";
            }
            m_subscriber->sendTextMessage(QString::fromLatin1(
                "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"flood-subscription\","
                "\"sequenceNumber\":" + seq + ",\"eventId\":\"" + id + "\",\"timestamp\":" + time + ",\"event\":" + event + "}}"));
        }
    }

    const int m_agents;
    const int m_rate;
    QThread m_thread;
    QWebSocketServer *m_server = nullptr;
    QList<QWebSocket *> m_sockets;
    QWebSocket *m_subscriber = nullptr;
    QTimer m_tick{this}; // a child, so that it moves to the server's thread with it
    QElapsedTimer m_clock;
    qint64 m_sent = 0;
    std::mt19937 m_random{2026};
};
