// A MAP server that floods its clients with agent state changes, for the memory and stall
// benchmarks of long live sessions (docs/benchmarks.md, "Long live sessions").
//
//   mapi-flood-server [--port P] [--agents N] [--rate EVENTS_PER_S] [--seconds S] [--messages PERCENT]
//
// --messages: that share of the events are message.sent from one agent to the next, with a small
// payload, instead of state changes (the live OTLP export's benchmark, docs/benchmarks.md).
// It answers what MAP Inspector's client asks on connecting (map/connect, map/subscribe,
// map/agents/list, map/scopes/list; anything else: "method not found", as a server without the
// method does) and then sends each subscriber `agent.state.changed` events in the official
// server's shape (sequence numbers, event ids, a full agent record), cycling over N agents.
// --rate 0 (default): as fast as the socket takes them (it keeps at most 4 MiB queued in the
// socket); otherwise that many events per second. --seconds: stop sending after S seconds of
// flood (0: never). Prints "listening <url>" first, then once a second "sent <total>" per client,
// and "done <total>" when a client's flood ended, on stdout.
//
// Thread: one (the Qt event loop). Listens on 127.0.0.1 only.
#include <QCoreApplication>

#include <algorithm>
#include <QElapsedTimer>
#include <QHash>
#include <QTimer>
#include <QWebSocket>
#include <QWebSocketServer>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <vector>

using Json = nlohmann::json;

namespace {

struct Options
{
    quint16 port = 0;
    int agents = 1000;
    double rate = 0; // events per second; 0: as fast as the socket takes them
    double seconds = 0;
    int messagesPercent = 0; // of the events: message.sent from one agent to the next (the live OTLP export's load)
};

constexpr qint64 kMaxQueuedBytes = 4 * 1024 * 1024;
const char *const kStates[] = {"idle", "busy", "waiting", "busy"};

QByteArray agentId(int i)
{
    return QByteArray("agent-") + QByteArray::number(i).rightJustified(5, '0');
}

Json agentRecord(int i, const char *state, qint64 nowMs)
{
    const std::string id = agentId(i).toStdString();
    return Json{{"id", id},
                {"name", "worker " + std::to_string(i)},
                {"role", i == 0 ? "coordinator" : "worker"},
                {"state", state},
                {"metadata", i == 0 ? Json::object() : Json{{"parentId", agentId(0).toStdString()}}},
                {"sessionId", "flood-session-" + std::to_string(i % 16)},
                {"registeredAt", 1795251940740LL},
                {"lastStateChange", nowMs},
                {"capabilities", {{"messaging", {{"canSend", true}, {"canReceive", true}}}}}};
}

class FloodClient : public QObject
{
public:
    FloodClient(QWebSocket *socket, const Options &options)
        : m_socket(socket)
        , m_options(options)
        , m_lastState(size_t(std::max(options.agents, 0)), nullptr)
    {
        m_socket->setParent(this);
        connect(m_socket, &QWebSocket::textMessageReceived, this, &FloodClient::onRequest);
        connect(m_socket, &QWebSocket::bytesWritten, this, [this] { pump(); });
        connect(m_socket, &QWebSocket::disconnected, this, [this] {
            report("closed");
            deleteLater();
        });
        m_tick.setInterval(10);
        connect(&m_tick, &QTimer::timeout, this, [this] { pump(); });
        m_report.setInterval(1000);
        connect(&m_report, &QTimer::timeout, this, [this] { report("sent"); });
    }

private:
    void reply(const Json &id, const Json &result)
    {
        send(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
    }

    void send(const std::string &frame)
    {
        m_socket->sendTextMessage(QString::fromStdString(frame));
    }

    void onRequest(const QString &text)
    {
        const Json request = Json::parse(text.toStdString(), nullptr, false);
        if (!request.is_object() || !request.contains("id"))
            return;
        const std::string method = request.value("method", "");
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (method == "map/connect") {
            reply(request["id"], {{"protocolVersion", "2024-12"}, {"sessionId", "flood-client"},
                                  {"participantId", "flood-client"},
                                  {"systemInfo", {{"name", "mapi-flood-server"}, {"version", "1"}}}});
        } else if (method == "map/subscribe") {
            reply(request["id"], {{"subscriptionId", "flood-sub"}});
            if (!m_flooding) {
                m_flooding = true;
                m_clock.start();
                m_tick.start();
                m_report.start();
                QTimer::singleShot(0, this, [this] { pump(); });
            }
        } else if (method == "map/agents/list") {
            Json agents = Json::array();
            // Each agent in the state its last event set, as a real server lists them: the client
            // reads the list again now and then (its reconciliation), and a list that contradicts
            // the events would rightly win (a journal retention test ran past that minute).
            for (int i = 0; i < m_options.agents; ++i)
                agents.push_back(agentRecord(i, stateOf(i), now));
            reply(request["id"], {{"agents", agents}});
        } else if (method == "map/scopes/list") {
            reply(request["id"], {{"scopes", Json::array()}});
        } else {
            send(Json{{"jsonrpc", "2.0"}, {"id", request["id"]},
                      {"error", {{"code", -32601}, {"message", "Method not found"}}}}.dump());
        }
    }

    const char *stateOf(int agent) const
    {
        return size_t(agent) < m_lastState.size() && m_lastState[size_t(agent)] ? m_lastState[size_t(agent)] : "idle";
    }

    std::string nextEvent()
    {
        const qint64 n = ++m_sent;
        const int agent = int(n % m_options.agents);
        const char *state = kStates[(n / m_options.agents) % 4];
        const char *previous = kStates[((n / m_options.agents) + 3) % 4];
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const std::string eventId = "ev-" + std::to_string(n);
        if (n % 100 < m_options.messagesPercent) {
            const std::string from = agentId(agent).toStdString();
            const std::string to = agentId((agent + 1) % m_options.agents).toStdString();
            const Json message{{"id", "flood-message-" + std::to_string(n)},
                               {"from", from},
                               {"to", to},
                               {"timestamp", now},
                               {"payload", {{"type", "chat"}, {"text", "work item " + std::to_string(n)}}}};
            const Json event{{"type", "message.sent"}, {"data", {{"message", message}}}, {"source", {{"agentId", from}}},
                             {"id", eventId}, {"timestamp", now}};
            return Json{{"jsonrpc", "2.0"},
                        {"method", "map/event"},
                        {"params", {{"subscriptionId", "flood-sub"}, {"sequenceNumber", n}, {"eventId", eventId},
                                    {"timestamp", now}, {"event", event}}}}
                .dump();
        }
        m_lastState[size_t(agent)] = state;
        const Json event{{"type", "agent.state.changed"},
                         {"data", {{"agent", agentRecord(agent, state, now)}, {"previousState", previous}}},
                         {"source", {{"agentId", agentId(agent).toStdString()}}},
                         {"id", eventId},
                         {"timestamp", now}};
        return Json{{"jsonrpc", "2.0"},
                    {"method", "map/event"},
                    {"params", {{"subscriptionId", "flood-sub"}, {"sequenceNumber", n}, {"eventId", eventId},
                                {"timestamp", now}, {"event", event}}}}
            .dump();
    }

    // Sends what the rate and the socket allow now.
    void pump()
    {
        if (!m_flooding || m_done)
            return;
        const double elapsedS = m_clock.elapsed() / 1000.0;
        if (m_options.seconds > 0 && elapsedS >= m_options.seconds) {
            m_done = true;
            m_tick.stop();
            report("done");
            return;
        }
        const qint64 due = m_options.rate > 0 ? qint64(elapsedS * m_options.rate) : std::numeric_limits<qint64>::max();
        while (m_sent < due && m_socket->bytesToWrite() < kMaxQueuedBytes)
            send(nextEvent());
    }

    void report(const char *what)
    {
        std::printf("%s %lld\n", what, static_cast<long long>(m_sent));
        std::fflush(stdout);
    }

    QWebSocket *m_socket;
    Options m_options;
    QTimer m_tick;
    QTimer m_report;
    QElapsedTimer m_clock;
    qint64 m_sent = 0;
    std::vector<const char *> m_lastState; // per agent, the state its last event set (null: none yet)
    bool m_flooding = false;
    bool m_done = false;
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    Options options;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        const QString &key = args[i];
        const QString value = args[i + 1];
        if (key == QLatin1String("--port"))
            options.port = quint16(value.toUInt());
        else if (key == QLatin1String("--agents"))
            options.agents = std::max(1, value.toInt());
        else if (key == QLatin1String("--rate"))
            options.rate = value.toDouble();
        else if (key == QLatin1String("--seconds"))
            options.seconds = value.toDouble();
        else if (key == QLatin1String("--messages"))
            options.messagesPercent = std::clamp(value.toInt(), 0, 100);
        else {
            std::fprintf(stderr, "mapi-flood-server: unknown option %s\n", qPrintable(key));
            return 1;
        }
    }
    QWebSocketServer server(QStringLiteral("mapi-flood-server"), QWebSocketServer::NonSecureMode);
    if (!server.listen(QHostAddress::LocalHost, options.port)) {
        std::fprintf(stderr, "mapi-flood-server: %s\n", qPrintable(server.errorString()));
        return 2;
    }
    QObject::connect(&server, &QWebSocketServer::newConnection, [&] {
        while (QWebSocket *socket = server.nextPendingConnection())
            new FloodClient(socket, options);
    });
    std::printf("listening ws://127.0.0.1:%u\n", unsigned(server.serverPort()));
    std::fflush(stdout);
    return app.exec();
}
