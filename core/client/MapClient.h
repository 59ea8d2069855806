// The MAP client connection: connect → authenticate when asked → subscribe (always with an
// explicit filter) → snapshot (agents, scopes, members) → live, with request timeouts, an
// application-level liveness probe, reconnection with backoff, gap replay, capability
// discovery and tracked operator actions.
//
// Thread: a QObject living in one thread (it may be a worker thread). Everything it learns
// leaves through inputsReady() in batches (one per event-loop turn), to be applied by a
// SystemStore in whatever thread that lives.
#pragma once

#include "client/FrameJournal.h"
#include "client/ProtocolPipeline.h"
#include "client/Transport.h"
#include "model/ModelTypes.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <memory>

namespace mapi {

struct AuthConfig
{
    enum class Method { None, ApiKey, Bearer } method = Method::None;
    QString credential; // secret: never logged, never written to traces or settings
    QString methodName() const;
};

struct ClientOptions
{
    QUrl url;
    AuthConfig auth;
    CodecLimits limits;
    QString clientName = QStringLiteral("map-inspector");
    Json subscribeFilter = Json::object(); // never absent: a filter-less subscribe breaks [M] for everyone
    int requestTimeoutMs = 10000;
    // Liveness: probe after this much silence, and give the probe this long. The sum (plus the
    // 250 ms tick) bounds the detection of an open-but-silent socket: 5 + 8 + 0.25 < 15 s.
    int probeAfterSilenceMs = 4000;
    int probeTimeoutMs = 6000;
    bool reconnect = true;
    int backoffInitialMs = 500;
    int backoffMaxMs = 30000;
    double backoffJitter = 0.2;        // ± fraction applied to each delay
    int replayPageSize = 500;
    int replayMaxPages = 40;           // bounded: 20,000 events at most per reconnect
};

enum class ClientState { Idle, Connecting, Authenticating, Subscribing, Snapshotting, Live, Backoff, Failed, Closed };
QString clientStateName(ClientState state);

enum class Support { Unknown, Present, Absent };

class MapClient : public QObject
{
    Q_OBJECT
public:
    // Takes ownership of `transport`; a WebSocketTransport when null.
    explicit MapClient(ClientOptions options, Transport *transport = nullptr, QObject *parent = nullptr);
    ~MapClient() override;

    const ClientOptions &options() const { return m_options; }
    ClientState state() const { return m_state; }
    QString sessionId() const { return m_sessionId; }
    QString subscriptionId() const { return m_subscriptionId; }
    QString lastError() const { return m_lastError; }
    int reconnectCount() const { return m_reconnects; }

    Support support(const QString &method) const { return m_support.value(method, Support::Unknown); }

    void start();
    // Keeps every frame received in `journal` from now on (null: none): the events carry the
    // journal's reference to their frame instead of its bytes, and message payloads the decoder
    // has read are not kept either (MapEvent::journalRef; dropRawFrames()). Client's thread.
    void setFrameJournal(FrameJournal *journal);
    // false: events carry no frame at all, and message payloads the decoder has read are not
    // kept (a one-shot command that prints the model keeps memory to the model's size).
    void setKeepFrames(bool keep) { m_keepFrames = keep; }
    // Unsubscribes (server memory: [M] never drops a closed socket's subscriptions), then closes.
    void stop();

    // Generic request. The callback runs once: with the result, or with an error (code,
    // message); timeouts use code kTimeoutCode.
    static constexpr int kTimeoutCode = -32099;
    using Reply = std::function<void(bool ok, const Json &result, const RpcError &error)>;
    void request(const QString &method, const Json &params, Reply reply, int timeoutMs = -1);

    // Operator actions. Each returns the action id and is tracked in the model.
    enum class Delivery { Interrupt, Queue, BestEffort };
    QString inject(const QString &agentId, const Json &content, Delivery delivery);
    QString stopAgent(const QString &agentId, const QString &reason = {}, bool force = false);
    QString suspendAgent(const QString &agentId, const QString &reason = {});
    QString resumeAgent(const QString &agentId);
    QString sendMessage(const Json &to, const Json &payload);

    void refreshAuth(const QString &credential);

Q_SIGNALS:
    void inputsReady(const mapi::ModelInputs &inputs);
    void stateChanged(mapi::ClientState state);
    void live();                                   // snapshot done, events flowing
    void fatalError(const QString &message);       // no retry will help (auth refused, TLS)
    void authExpiring(qint64 expiresAtMs, qint64 expiresInMs);
    void supportChanged(const QString &method, mapi::Support support);
    // Raw traffic, for trace recording. Times: ms since epoch.
    void frameSent(const QByteArray &frame, qint64 timeMs);
    void frameReceived(const QByteArray &frame, qint64 timeMs, bool binary);
    void socketOpened(const QString &redactedUrl, qint64 timeMs);
    void socketClosed(const QString &reason, qint64 timeMs);
    void actionRecorded(const mapi::ActionUpdate &update);

private:
    struct Pending
    {
        QString method;
        Reply reply;
        qint64 deadlineMs = 0;
    };

    void setState(ClientState state);
    void onOpened();
    void onClosed(const QString &reason);
    void onText(const QByteArray &frame);
    void onBinary(const QByteArray &frame);
    void onTick();
    void sendConnect();
    void onConnectResult(const Json &result);
    void authenticate();
    void subscribe();
    void replayGap(const QString &oldSubscriptionId, const QString &since, int page, int replayed);
    void snapshot();
    void goLive();
    void dropAndReconnect(const QString &reason);
    void scheduleReconnect();
    void fail(const QString &message);
    void emitInputs(ModelInputs inputs);
    void flushInputs();
    void noteSupport(const QString &method, bool present);
    void failAllPending(const QString &reason);

    QString startAction(ActionKind kind, const QString &agentId, const QString &method, const Json &params);
    void sendAction(const QString &actionId, const QString &method, const Json &params,
                    const QString &fallbackMethod, const Json &fallbackParams, const QString &fallbackNote);
    void recordAction(ActionUpdate update);

    static qint64 nowMs();

    ClientOptions m_options;
    std::unique_ptr<Transport> m_transport;
    ProtocolPipeline m_pipeline;
    FrameJournal *m_journal = nullptr;
    bool m_keepFrames = true;
    ClientState m_state = ClientState::Idle;
    QHash<QString, Pending> m_pending;
    qint64 m_nextId = 1;
    QTimer m_tick;
    QTimer m_reconnectTimer;
    qint64 m_lastReceiveMs = 0;
    QString m_probeId;
    int m_attempt = 0;
    int m_reconnects = 0;
    bool m_stopping = false;
    qint64 m_disconnectedAtMs = 0;
    QString m_sessionId;
    QString m_subscriptionId;
    QString m_previousSubscriptionId;
    QString m_lastEventIdBeforeDrop;
    QString m_lastError;
    int m_snapshotOutstanding = 0;
    int m_replayedAfterReconnect = 0;
    bool m_replayOk = false;
    QHash<QString, Support> m_support;
    ModelInputs m_batch;
    bool m_flushQueued = false;
    int m_actionCounter = 0;
};

} // namespace mapi

Q_DECLARE_METATYPE(mapi::ModelInputs)
Q_DECLARE_METATYPE(mapi::ActionUpdate)
