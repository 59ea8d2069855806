// The MAP client connection: connect → authenticate when asked → subscribe (always with an
// explicit filter) → snapshot (agents, scopes, members) → live, with request timeouts, an
// application-level liveness probe, reconnection with backoff, gap replay, capability
// discovery and tracked operator actions.
//
// Thread: a QObject living in one thread (it may be a worker thread). Everything it learns
// leaves through inputsReady() in batches (one per event-loop turn), to be applied by a
// SystemStore in whatever thread that lives.
#pragma once

#include "client/Transport.h"
#include "pipeline/FrameSink.h"
#include "pipeline/InputBacklog.h"
#include "pipeline/ProtocolPipeline.h"
#include "model/ModelTypes.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <deque>
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
    // map/connect's participantType: "client", or "gateway" (a gateway-role connection: the
    // server's federation methods, its peers and buffers, answer it: FederationLedger).
    QString participantType = QStringLiteral("client");
    Json subscribeFilter = Json::object(); // never absent: a filter-less subscribe breaks [M] for everyone
    int requestTimeoutMs = 10000;
    // Liveness: probe after this much silence, and give the probe this long. Their sum plus the
    // 250 ms tick bounds the detection of an open-but-silent socket (defaults: 10.25 s).
    int probeAfterSilenceMs = 4000;
    int probeTimeoutMs = 6000;
    // Liveness while live (issue 40): a probe at least this often even while events flow (a
    // server can send events and answer nothing), and a reconciliation of the server's agent
    // list with the model this often (map/agents/list; a difference is drift: events were
    // missed). 0 turns either off. A reconciliation costs one list, walked page by page where
    // the server pages (listAgents; MAPServer does not): some 300 bytes an agent on the wire, 3 MB
    // a minute at 10,000 agents, and its comparison with the model (docs/benchmarks.md).
    int livenessIntervalMs = 10000;
    int reconcileIntervalMs = 60000;
    bool reconnect = true;
    int backoffInitialMs = 500;
    int backoffMaxMs = 30000;
    double backoffJitter = 0.2;        // ± fraction applied to each delay
    int replayPageSize = 500;
    int replayMaxPages = 40;           // bounded: 20,000 events at most per reconnect
    // Observer-only: map/connect asks for observation capabilities only, and the client itself
    // refuses every control method (inject, stop, suspend, resume, send) without sending it.
    bool observerOnly = false;
    // A credential is not sent over plain ws:// to a host that is not loopback unless the operator
    // said so for this connection (credentialTravelsInClear() tells when to ask).
    bool allowCredentialInClear = false;
};

// Whether connecting with `options` would send a credential unencrypted over the network: ws://
// (not wss://), a credential (the token set, or one in the URL itself: user info, or a query
// parameter with a secret's name such as ?token= or ?api_key=), and a host other than localhost,
// 127.0.0.0/8 or ::1 (a name is not resolved for this: only "localhost" counts as loopback).
bool credentialTravelsInClear(const ClientOptions &options);

enum class ClientState { Idle, Connecting, Authenticating, Subscribing, Snapshotting, Live, Backoff, Failed, Closed };
QString clientStateName(ClientState state);

enum class Support { Unknown, Present, Absent };

// Why a connection gave up for good (MapClient::fatalError).
enum class ClientFailure { AuthenticationRequired, AuthenticationRefused, Transport, CredentialInClear };

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
    // Hands every frame, socket open and close and action step to `sink` from now on, in wire
    // order (FrameSink.h). A sink that keepsFrames() (the session journal) keeps the received
    // frames for reading back: the events carry its reference instead of their bytes, and
    // message payloads the decoder has read are not kept either (dropRawFrames()). At most one
    // such sink. Client's thread; a sink is removed before it is destroyed.
    void addFrameSink(FrameSink *sink);
    void removeFrameSink(FrameSink *sink);
    void removeAllFrameSinks();
    // Backpressure: each batch handed out by inputsReady() is added to `backlog`, which its
    // consumer empties as it applies them; while the backlog is full, the client waits before
    // it reads further frames (the socket's buffers fill and TCP slows the server), so a
    // consumer that falls behind never makes batches pile up in memory. Null: no bound.
    void setInputBacklog(std::shared_ptr<InputBacklog> backlog) { m_backlog = std::move(backlog); }
    // false: events carry no frame at all, and message payloads the decoder has read are not
    // kept (a one-shot command that prints the model keeps memory to the model's size).
    void setKeepFrames(bool keep) { m_keepFrames = keep; }
    // true: message payload texts stay in the records even when the frames go (above): for a
    // consumer that reads every payload and has no journal to read them back from (the CLI's
    // live OTLP export). The store's history budget bounds them like the rest of its history.
    void setKeepPayloadTexts(bool keep) { m_keepPayloadTexts = keep; }
    // Observer-only from now on (or no longer): control methods are refused while on. The
    // capabilities asked for by map/connect follow at the next connection.
    void setObserverOnly(bool on) { m_options.observerOnly = on; }
    // Unsubscribes (server memory: [M] never drops a closed socket's subscriptions), then closes.
    void stop();

    // Generic request. The callback runs once: with the result, or with an error (code,
    // message); timeouts use code kTimeoutCode. `method` is canonical: a server that answers
    // -32601 to a list the observation is built from (map/agents/list, map/scopes/list,
    // map/scopes/members) is asked once under its other spelling (alternativeMethodName:
    // map/agents.list), and the spelling that worked is used from then on (the pipeline reports a
    // MethodFallback).
    // Observer-only: a method that changes the system, or one MethodTable.h does not name, is
    // refused without being sent: the callback runs before request() returns, with code
    // kRefusedCode and a message that names the method ("refused: observer mode: map/send
    // changes the system and is not sent"). Reads and the client's own connection go out.
    static constexpr int kTimeoutCode = -32099;
    static constexpr int kRefusedCode = -32098;
    using Reply = std::function<void(bool ok, const Json &result, const RpcError &error)>;
    void request(const QString &method, const Json &params, Reply reply, int timeoutMs = -1);

    // Asks the server something cheap now (as the periodic probe does); no answer within
    // probeTimeoutMs is a NotAnswering problem and a reconnect.
    void checkLiveness();
    // Compares the server's agent list with the model now (as every reconcileIntervalMs); `done`
    // runs once with whether the server answered (a drift, if any, reaches the model first).
    void reconcile(std::function<void(bool answered)> done = {});

    // Operator actions. Each returns the action id (`actionId` when given: a caller in another
    // thread names its actions before they exist) and is tracked in the model.
    enum class Delivery { Interrupt, Queue, BestEffort };
    QString inject(const QString &agentId, const Json &content, Delivery delivery, const QString &actionId = {});
    QString stopAgent(const QString &agentId, const QString &reason = {}, bool force = false, const QString &actionId = {});
    QString suspendAgent(const QString &agentId, const QString &reason = {}, const QString &actionId = {});
    QString resumeAgent(const QString &agentId, const QString &actionId = {});
    QString sendMessage(const Json &to, const Json &payload);

    // map/auth/refresh with a new credential (also used for every later reconnect); the answer
    // comes as authRefreshed().
    void refreshAuth(const QString &credential);

Q_SIGNALS:
    void inputsReady(const mapi::ModelInputs &inputs);
    void stateChanged(mapi::ClientState state);
    // Why the connection dropped or failed; emitted before the stateChanged() it explains.
    void lastErrorChanged(const QString &error);
    void live();                                   // snapshot done, events flowing
    // No retry will help: the server refused or requires credentials, or the transport
    // cannot work (TLS). The kind says which, for the caller's decisions; the text is for people.
    void fatalError(mapi::ClientFailure failure, const QString &message);
    void authExpiring(qint64 expiresAtMs, qint64 expiresInMs);
    // The server's answer to refreshAuth(): accepted, or refused with why (no secret in it).
    void authRefreshed(bool accepted, const QString &why);
    void supportChanged(const QString &method, mapi::Support support);
    // A trajectory/content.chunk notification: its params as JSON text (ContentStreams reads it).
    void contentChunk(const QByteArray &paramsJson);
    void actionRecorded(const mapi::ActionUpdate &update); // also given to every frame sink
    // A launched process's standard error (StreamTransports.h), redacted, in batches at most
    // every kProcessOutputFlushMs; `skipped` lines older than the batch's were not kept (a child
    // that floods its stderr costs at most kMaxProcessOutputBatch redactions a batch, and the
    // MAP frames on its stdout keep flowing).
    void processOutput(const QStringList &lines, qint64 skipped);

private:
    struct Pending
    {
        QString method;    // canonical
        QString sentAs;    // as spelled on the wire
        Json params;       // kept only where it may be asked again under the other spelling
        Reply reply;
        qint64 sentAtMs = 0;
        qint64 deadlineMs = 0;
        int timeoutMs = -1;
    };
    void sendRequest(Pending pending, const Json &params);
    // A probe's or reconciliation's answer: a real deadline missed on a live connection is
    // notAnswering(), unless frames kept arriving meanwhile (then only the third such miss in a row).
    void unanswered(bool ok, const RpcError &error, const QString &method, qint64 sentAtMs, int waitedMs);
    // The server answered -32601 to `pending` under its usual spelling: true when it was asked
    // again under the other one.
    bool tryOtherSpelling(Pending &pending, const RpcError &error);
    // A probe (or a reconciliation) got no answer: a NotAnswering problem, then a reconnect.
    void notAnswering(const QString &method, int waitedMs);
    // " 0.2 s after our map/send (…)" when the server went quiet or closed shortly after one of
    // our methods that changes the system; empty otherwise.
    QString afterOurAction(qint64 stoppedAtMs) const;
    // A server's error said for what it is (the SDK's stream writer fault), and what a stream's
    // end with `unanswered` requests pending means ("" when nothing is known of it).
    RpcError explainServerError(RpcError error);
    QString streamEndExplained(int unanswered) const;

    void setState(ClientState state);
    void setLastError(const QString &error); // before the state change it explains
    void onOpened();
    void onClosed(const QString &reason);
    void onText(const QByteArray &frame);
    void onBinary(const QByteArray &frame);
    void onTick();
    void sendConnect();
    void onConnectResult(const Json &result);
    void noteServer(const Json &connectResult); // tells the sinks the server's name
    void authenticate();
    void subscribe();
    void replayGap(const QString &oldSubscriptionId, const QString &since, int page, int replayed);
    void snapshot();
    void goLive();
    // MapClientExtensions.cpp: conversations and checkpoints from before this connection.
    void noteExtensions(const Json &connectResult);
    void readExtensionHistory();
    // map/federation/list, then /buffer/stats (FederationLedger), after each snapshot and every
    // FederationLedger::kRefreshMs while the server serves them to this connection.
    void readFederation();
    bool m_federationServed = false;
    qint64 m_lastFederationReadMs = 0;
    // map/agents/list, walked while the server gives a nextCursor (MapClientAgentList.cpp);
    // `done` once: the last page's outcome and when it was asked.
    using AgentListDone = std::function<void(bool ok, const RpcError &error, qint64 sentAtMs)>;
    void listAgents(AgentListDone done, const QString &cursor = {}, int page = 0);
    void listConversations(const QString &cursor, int page, QStringList ids);
    void listCheckpoints(const QString &cursor, int page);
    void dropAndReconnect(const QString &reason);
    void scheduleReconnect();
    void fail(ClientFailure failure, const QString &message);
    void noteFrameSent(const QByteArray &frame, qint64 timeMs);
    FrameRef noteFrameReceived(const QByteArray &frame, qint64 timeMs, bool binary);
    void emitInputs(ModelInputs inputs);
    // Room made for a new batch's inputs at once: a list grown an input at a time moved every
    // event it held at each doubling (events are some 650 bytes). Bursts still grow it.
    static constexpr qsizetype kBatchReserve = 64;
    void flushInputs();
    void noteSupport(const QString &method, bool present);
    void failAllPending(const QString &reason);

    QString startAction(ActionKind kind, const QString &agentId, const QString &method, const Json &params,
                        const QString &actionId = {});
    void sendAction(const QString &actionId, const QString &method, const Json &params,
                    const QString &fallbackMethod, const Json &fallbackParams, const QString &fallbackNote);
    // stop, suspend, resume: `method`, or where the server lacks it, map/agents/update setting
    // `fallbackState` (the action's note says so, followed by `fallbackCaveat`).
    QString lifecycleAction(ActionKind kind, const QString &agentId, const QString &method, const Json &params,
                            const char *fallbackState, const QString &actionId, const QString &fallbackCaveat = {});
    void recordAction(ActionUpdate update);

    static qint64 nowMs();

    ClientOptions m_options;
    std::unique_ptr<Transport> m_transport;
    ProtocolPipeline m_pipeline;
    QList<FrameSink *> m_sinks;
    FrameSink *m_frameKeeper = nullptr; // the sink of m_sinks that keepsFrames()
    std::shared_ptr<InputBacklog> m_backlog;
    bool m_keepFrames = true;
    bool m_keepPayloadTexts = false;
    ClientState m_state = ClientState::Idle;
    QHash<QString, Pending> m_pending;
    qint64 m_nextId = 1;
    QTimer m_tick;
    QTimer m_reconnectTimer;
    // A launched process's stderr lines waiting for the next batch, the newest
    // kMaxProcessOutputBatch of them; the older ones are counted in m_processOutputSkipped.
    static constexpr int kProcessOutputFlushMs = 100;
    static constexpr qsizetype kMaxProcessOutputBatch = 2000; // what a session keeps (InspectorSession::kMaxProcessOutputLines)
    void flushProcessOutput();
    QTimer m_processOutputFlush;
    std::deque<QByteArray> m_processOutputPending;
    qint64 m_processOutputSkipped = 0;
    qint64 m_lastReceiveMs = 0;
    QString m_probeId;
    int m_attempt = 0;
    int m_reconnects = 0;
    bool m_stopping = false;
    bool m_writerLockSeen = false; // the server answered "WritableStream is locked" (explainServerError)
    qint64 m_silenceSaidSinceMs = -1; // a launched system's silence already said (notAnswering)
    qint64 m_disconnectedAtMs = 0;
    QString m_sessionId;
    QString m_subscriptionId;
    QString m_previousSubscriptionId;
    QString m_lastEventIdBeforeDrop;
    QString m_lastError;
    QString m_dropReason; // why dropAndReconnect() closed the socket, for the close that follows
    int m_snapshotOutstanding = 0;
    bool m_mailAdvertised = false; // this connection's map/connect advertised capabilities.mail
    int m_replayedAfterReconnect = 0;
    bool m_replayOk = false;
    bool m_replayPartial = false;  // the last replay stopped at replayMaxPages with events still missing
    QHash<QString, Support> m_support;
    // canonical method -> the spelling this server answers to (empty: asked under both, neither
    // known). For the client's life: one server, whatever its reconnects.
    QHash<QString, QString> m_methodSpelling;
    QSet<QString> m_spellingsRefused; // canonical methods refused under both spellings
    int m_unansweredWhileBusy = 0;    // probes missed while frames kept arriving, in a row
    qint64 m_lastProbeMs = 0;
    qint64 m_lastReconcileMs = 0;
    bool m_reconciling = false;
    QString m_lastChangeMethod;   // our last method that changes the system, as sent ...
    qint64 m_lastChangeAtMs = 0;  // ... and when
    ModelInputs m_batch;
    bool m_flushQueued = false;
    int m_actionCounter = 0;
};

} // namespace mapi

Q_DECLARE_METATYPE(mapi::ModelInputs)
Q_DECLARE_METATYPE(mapi::ActionUpdate)
