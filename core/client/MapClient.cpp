#include "client/MapClient.h"

#include "common/Redaction.h"
#include "map/Dialect.h"
#include "protocol/SimdJsonParser.h"

#include <QDateTime>
#include <QHostAddress>
#include <QRandomGenerator>

#include <algorithm>
#include <cmath>

namespace mapi {

QString AuthConfig::methodName() const
{
    switch (method) {
    case Method::None: return QStringLiteral("none");
    case Method::ApiKey: return QStringLiteral("api-key");
    case Method::Bearer: return QStringLiteral("bearer");
    }
    return {};
}

QString clientStateName(ClientState state)
{
    switch (state) {
    case ClientState::Idle: return QStringLiteral("idle");
    case ClientState::Connecting: return QStringLiteral("connecting");
    case ClientState::Authenticating: return QStringLiteral("authenticating");
    case ClientState::Subscribing: return QStringLiteral("subscribing");
    case ClientState::Snapshotting: return QStringLiteral("snapshotting");
    case ClientState::Live: return QStringLiteral("live");
    case ClientState::Backoff: return QStringLiteral("reconnecting");
    case ClientState::Failed: return QStringLiteral("failed");
    case ClientState::Closed: return QStringLiteral("closed");
    }
    return {};
}

qint64 MapClient::nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

MapClient::MapClient(ClientOptions options, Transport *transport, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_transport(transport ? transport
                            : new WebSocketTransport(std::max<qint64>(64 * 1024 * 1024, 4 * m_options.limits.maxFrameBytes)))
    , m_pipeline(m_options.limits, SimdJsonParser::instance()) // same values as nlohmann, map/event frames several times faster
{
    qRegisterMetaType<mapi::ModelInputs>();
    qRegisterMetaType<mapi::ActionUpdate>();
    if (!m_options.subscribeFilter.is_object())
        m_options.subscribeFilter = Json::object();
    m_transport->setParent(nullptr); // owned by the unique_ptr
    connect(m_transport.get(), &Transport::opened, this, &MapClient::onOpened);
    connect(m_transport.get(), &Transport::closed, this, &MapClient::onClosed);
    connect(m_transport.get(), &Transport::textReceived, this, &MapClient::onText);
    connect(m_transport.get(), &Transport::binaryReceived, this, &MapClient::onBinary);
    connect(m_transport.get(), &Transport::errorOccurred, this, [this](const QString &message) { fail(ClientFailure::Transport, message); });
    m_tick.setInterval(250); // request deadlines and liveness are checked at this granularity
    connect(&m_tick, &QTimer::timeout, this, &MapClient::onTick);
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, [this] {
        setState(ClientState::Connecting);
        m_transport->open(m_options.url);
    });
}

MapClient::~MapClient()
{
    m_stopping = true;
    disconnect(m_transport.get(), nullptr, this, nullptr);
}

void MapClient::setLastError(const QString &error)
{
    // Shown in the status bar and printed by the CLI: server text may quote a credential.
    m_lastError = redactSecrets(error);
    Q_EMIT lastErrorChanged(m_lastError);
}

void MapClient::setState(ClientState state)
{
    if (m_state == state)
        return;
    m_state = state;
    ConnectionInfo info;
    info.url = redactedUrl(m_options.url);
    info.state = clientStateName(state);
    info.sessionId = m_sessionId;
    info.timeMs = nowMs();
    emitInputs({info});
    Q_EMIT stateChanged(state);
}

bool credentialTravelsInClear(const ClientOptions &options)
{
    if (options.auth.method == AuthConfig::Method::None || options.auth.credential.isEmpty()
        || options.url.scheme().compare(QLatin1String("ws"), Qt::CaseInsensitive) != 0)
        return false;
    const QString host = options.url.host();
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0
        || host.endsWith(QLatin1String(".localhost"), Qt::CaseInsensitive))
        return false;
    const QHostAddress address(host);
    return address.isNull() || !address.isLoopback();
}

void MapClient::start()
{
    m_stopping = false;
    if (credentialTravelsInClear(m_options) && !m_options.allowCredentialInClear) {
        fail(ClientFailure::CredentialInClear,
             QStringLiteral("not connecting: the credential would travel unencrypted over ws:// to %1; use wss://, "
                            "or allow it for this connection").arg(m_options.url.host()));
        return;
    }
    m_tick.start();
    setState(ClientState::Connecting);
    m_transport->open(m_options.url);
}

void MapClient::stop()
{
    if (m_stopping)
        return;
    m_stopping = true;
    m_reconnectTimer.stop();
    if (m_transport->isOpen() && !m_subscriptionId.isEmpty()) {
        request(QStringLiteral("map/unsubscribe"), Json{{"subscriptionId", m_subscriptionId.toStdString()}},
                [this](bool, const Json &, const RpcError &) { m_transport->abort(); }, 2000);
    } else {
        m_transport->abort();
        setState(ClientState::Closed);
    }
}

// ---- traffic ---------------------------------------------------------------------------

void MapClient::request(const QString &method, const Json &params, Reply reply, int timeoutMs)
{
    if (!m_transport->isOpen()) {
        if (reply)
            reply(false, Json(), RpcError{kTimeoutCode, QStringLiteral("not connected"), Json()});
        return;
    }
    const qint64 id = m_nextId++;
    const QByteArray frame = FrameCodec::encodeRequest(Json(id), method, params);
    Pending pending;
    pending.method = method;
    pending.reply = std::move(reply);
    pending.deadlineMs = nowMs() + (timeoutMs > 0 ? timeoutMs : m_options.requestTimeoutMs);
    m_pending.insert(jsonIdKey(Json(id)), std::move(pending));
    const qint64 t = nowMs();
    m_pipeline.frameSent(frame, t);
    noteFrameSent(frame, t);
    m_transport->sendText(frame);
}

void MapClient::onOpened()
{
    const qint64 t = nowMs();
    m_lastReceiveMs = t;
    m_probeId.clear();
    emitInputs(m_pipeline.connectionOpened(redactedUrl(m_options.url), t));
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->socketOpened(redactedUrl(m_options.url), t);
    sendConnect();
}

void MapClient::onClosed(const QString &reason)
{
    const qint64 t = nowMs();
    emitInputs(m_pipeline.connectionClosed(reason, t));
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->socketClosed(reason, t);
    failAllPending(QStringLiteral("connection closed"));
    if (m_stopping || m_state == ClientState::Failed) {
        if (m_state != ClientState::Failed)
            setState(ClientState::Closed);
        m_tick.stop();
        return;
    }
    setLastError(reason);
    if (!m_subscriptionId.isEmpty()) {
        m_previousSubscriptionId = m_subscriptionId;
        m_lastEventIdBeforeDrop = m_pipeline.lastEventId(m_subscriptionId);
        if (m_lastEventIdBeforeDrop.isEmpty())
            m_lastEventIdBeforeDrop = m_pipeline.lastEventId();
    }
    m_subscriptionId.clear();
    if (!m_disconnectedAtMs)
        m_disconnectedAtMs = t;
    if (m_options.reconnect)
        scheduleReconnect();
    else
        setState(ClientState::Closed);
}

void MapClient::scheduleReconnect()
{
    const double base = std::min<double>(m_options.backoffMaxMs, m_options.backoffInitialMs * std::pow(2.0, m_attempt));
    const double jitter = 1.0 + m_options.backoffJitter * (2.0 * QRandomGenerator::global()->generateDouble() - 1.0);
    const int delay = std::max(0, int(base * jitter));
    ++m_attempt;
    setState(ClientState::Backoff);
    m_reconnectTimer.start(delay);
}

void MapClient::dropAndReconnect(const QString &reason)
{
    setLastError(reason);
    ProtocolProblem note;
    note.kind = ProblemKind::Malformed;
    note.detail = reason;
    note.timeMs = nowMs();
    if (reason.startsWith(QLatin1String("server silent")))
        emitInputs({ProblemInput{note}});
    m_transport->abort();
}

void MapClient::fail(ClientFailure failure, const QString &message)
{
    setLastError(message);
    m_reconnectTimer.stop();
    setState(ClientState::Failed);
    Q_EMIT fatalError(failure, m_lastError); // redacted
    m_transport->abort();
}

void MapClient::failAllPending(const QString &reason)
{
    auto pending = std::move(m_pending);
    m_pending.clear();
    m_probeId.clear();
    for (auto it = pending.begin(); it != pending.end(); ++it)
        if (it->reply)
            it->reply(false, Json(), RpcError{kTimeoutCode, reason, Json()});
}

void MapClient::addFrameSink(FrameSink *sink)
{
    if (!sink || m_sinks.contains(sink))
        return;
    m_sinks.append(sink);
    if (sink->keepsFrames()) {
        m_frameKeeper = sink;
        // Payloads stay in the frame (read back from the keeper when asked for), as for a trace.
        m_pipeline.setKeepPayloadText(false);
    }
}

void MapClient::removeFrameSink(FrameSink *sink)
{
    m_sinks.removeAll(sink);
    if (sink == m_frameKeeper) {
        m_frameKeeper = nullptr;
        m_pipeline.setKeepPayloadText(true);
    }
}

void MapClient::removeAllFrameSinks()
{
    m_sinks.clear();
    m_frameKeeper = nullptr;
    m_pipeline.setKeepPayloadText(true);
}

void MapClient::noteFrameSent(const QByteArray &frame, qint64 timeMs)
{
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->frameSent(frame, timeMs);
}

FrameRef MapClient::noteFrameReceived(const QByteArray &frame, qint64 timeMs, bool binary)
{
    FrameRef kept;
    for (FrameSink *sink : std::as_const(m_sinks)) {
        const FrameRef ref = sink->frameReceived(frame, timeMs, binary);
        if (sink == m_frameKeeper)
            kept = ref;
    }
    return kept;
}

void MapClient::onBinary(const QByteArray &frame)
{
    const qint64 t = nowMs();
    m_lastReceiveMs = t;
    const FrameRef ref = noteFrameReceived(frame, t, true);
    ModelInputs inputs = m_pipeline.binaryFrameReceived(frame, t).inputs;
    if (ref.isValid() || !m_keepFrames)
        dropRawFrames(inputs, ref);
    emitInputs(std::move(inputs));
}

void MapClient::onText(const QByteArray &frame)
{
    const qint64 t = nowMs();
    m_lastReceiveMs = t;
    const FrameRef ref = noteFrameReceived(frame, t, false);
    // Decoded straight into the pending batch: a list per frame, moved into the batch after,
    // cost an allocation per frame and a move of each event.
    const qsizetype first = m_batch.size();
    if (m_batch.capacity() == 0)
        m_batch.reserve(kBatchReserve);
    InterpretedFrame interpreted = m_pipeline.frameReceived(frame, t, std::move(m_batch));
    m_batch = std::move(interpreted.inputs);
    if (ref.isValid() || !m_keepFrames)
        dropRawFrames(m_batch, ref, first);
    emitInputs({}); // schedules the flush when the frame added inputs
    if (!interpreted.message)
        return;
    const RpcMessage &msg = *interpreted.message;
    switch (msg.kind) {
    case MessageKind::Notification:
        if (msg.method == QLatin1String("map/auth/expiring"))
            Q_EMIT authExpiring(jsonInt(msg.params, "expiresAt"), jsonInt(msg.params, "expiresInMs"));
        break;
    case MessageKind::Request: {
        // MAP defines no server→client requests; answer so the server does not wait forever.
        const Json error = {{"code", -32601}, {"message", "Method not found"}};
        const Json reply = {{"jsonrpc", "2.0"}, {"id", msg.id}, {"error", error}};
        const QByteArray out = QByteArray::fromStdString(reply.dump());
        noteFrameSent(out, t);
        m_transport->sendText(out);
        break;
    }
    case MessageKind::Result:
    case MessageKind::Error: {
        auto it = m_pending.find(jsonIdKey(msg.id));
        if (it == m_pending.end())
            break;
        Pending pending = std::move(*it);
        m_pending.erase(it);
        if (msg.kind == MessageKind::Error && msg.error.code == -32601)
            noteSupport(pending.method, false);
        else
            noteSupport(pending.method, true);
        if (pending.reply)
            pending.reply(msg.kind == MessageKind::Result, msg.result, msg.error);
        break;
    }
    }
}

void MapClient::noteSupport(const QString &method, bool present)
{
    const Support s = present ? Support::Present : Support::Absent;
    if (m_support.value(method, Support::Unknown) == s)
        return;
    m_support.insert(method, s);
    Q_EMIT supportChanged(method, s);
}

void MapClient::onTick()
{
    const qint64 t = nowMs();
    QList<QString> expired;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it)
        if (it->deadlineMs <= t)
            expired << it.key();
    for (const QString &key : std::as_const(expired)) {
        Pending pending = m_pending.take(key);
        if (pending.reply)
            pending.reply(false, Json(), RpcError{kTimeoutCode, QStringLiteral("%1 timed out").arg(pending.method), Json()});
    }
    if (m_state != ClientState::Live || !m_probeId.isEmpty())
        return;
    if (t - m_lastReceiveMs < m_options.probeAfterSilenceMs)
        return;
    // Application-level probe: a WebSocket pong would not prove the MAP router is alive.
    const QString method = support(QStringLiteral("map/session/info")) == Support::Absent
        ? QStringLiteral("map/scopes/list")
        : QStringLiteral("map/session/info");
    m_probeId = method;
    request(method, Json::object(), [this](bool ok, const Json &, const RpcError &error) {
        m_probeId.clear();
        if (!ok && error.code == kTimeoutCode && m_state == ClientState::Live)
            dropAndReconnect(QStringLiteral("server silent: no answer to a liveness probe within %1 ms")
                                 .arg(m_options.probeTimeoutMs));
    }, m_options.probeTimeoutMs);
}

// ---- handshake -------------------------------------------------------------------------

void MapClient::sendConnect()
{
    const bool control = !m_options.observerOnly; // an observer asks to observe and nothing more
    Json params = {
        {"protocolVersion", 1},
        {"participantType", "client"},
        {"name", m_options.clientName.toStdString()},
        {"capabilities",
         {{"observation", {{"canObserve", true}, {"canQuery", true}}},
          {"messaging", {{"canSend", control}, {"canReceive", true}}},
          {"lifecycle", {{"canSteer", control}, {"canStop", control}}}}},
    };
    if (m_options.auth.method != AuthConfig::Method::None)
        params["auth"] = {{"method", m_options.auth.methodName().toStdString()},
                          {"credential", m_options.auth.credential.toStdString()}};
    request(QStringLiteral("map/connect"), params, [this](bool ok, const Json &result, const RpcError &error) {
        if (ok) {
            onConnectResult(result);
        } else if (error.code == -32601) {
            subscribe(); // a server without map/connect: the session exists from accept
        } else if (error.code == kTimeoutCode) {
            dropAndReconnect(QStringLiteral("map/connect: %1").arg(error.message));
        } else if (classifyError(error.code, error.message) == ErrorClass::AuthRequired) {
            fail(ClientFailure::AuthenticationRequired, QStringLiteral("the server requires authentication: %1").arg(error.message));
        } else {
            dropAndReconnect(QStringLiteral("map/connect failed: %1 %2").arg(error.code).arg(error.message));
        }
    });
}

void MapClient::onConnectResult(const Json &result)
{
    if (const Json *required = jsonChild(result, "authRequired")) {
        QStringList methods;
        if (const Json *list = jsonChild(*required, "methods"); list && list->is_array())
            for (const Json &m : *list)
                methods << toQString(m);
        if (const Json *error = jsonChild(result, "error"); error && error->is_object()) {
            fail(ClientFailure::AuthenticationRefused, QStringLiteral("authentication refused: %1 (%2)").arg(jsonString(*error, "message"), jsonString(*error, "code")));
            return;
        }
        if (m_options.auth.method == AuthConfig::Method::None) {
            fail(ClientFailure::AuthenticationRequired, QStringLiteral("the server requires authentication (methods: %1); give a token")
                     .arg(methods.join(QStringLiteral(", "))));
            return;
        }
        authenticate();
        return;
    }
    m_sessionId = jsonString(result, "sessionId");
    noteServer(result);
    subscribe();
}

void MapClient::noteServer(const Json &connectResult)
{
    const Json *sys = jsonChild(connectResult, "systemInfo");
    if (!sys || !sys->is_object())
        return;
    const QString name = jsonString(*sys, "name");
    const QString version = jsonString(*sys, "version");
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->serverIdentified(name, version);
}

void MapClient::authenticate()
{
    setState(ClientState::Authenticating);
    const Json params = {{"method", m_options.auth.methodName().toStdString()},
                         {"credential", m_options.auth.credential.toStdString()}};
    request(QStringLiteral("map/authenticate"), params, [this](bool ok, const Json &result, const RpcError &error) {
        if (!ok) {
            if (error.code == kTimeoutCode)
                dropAndReconnect(QStringLiteral("map/authenticate: %1").arg(error.message));
            else
                fail(ClientFailure::AuthenticationRefused, QStringLiteral("authentication failed: %1").arg(error.message));
            return;
        }
        if (const Json *success = jsonChild(result, "success"); success && success->is_boolean() && !success->get<bool>()) {
            const Json *err = jsonChild(result, "error");
            fail(ClientFailure::AuthenticationRefused, QStringLiteral("authentication refused: %1 (%2)")
                     .arg(err ? jsonString(*err, "message") : QString(), err ? jsonString(*err, "code") : QString()));
            return;
        }
        m_sessionId = jsonString(result, "sessionId");
        noteServer(result);
        subscribe();
    });
}

void MapClient::subscribe()
{
    setState(ClientState::Subscribing);
    request(QStringLiteral("map/subscribe"), Json{{"filter", m_options.subscribeFilter}},
            [this](bool ok, const Json &result, const RpcError &error) {
                if (!ok) {
                    dropAndReconnect(QStringLiteral("map/subscribe failed: %1").arg(error.message));
                    return;
                }
                m_subscriptionId = jsonString(result, "subscriptionId");
                if (!m_previousSubscriptionId.isEmpty() && !m_lastEventIdBeforeDrop.isEmpty())
                    replayGap(m_previousSubscriptionId, m_lastEventIdBeforeDrop, 0, 0);
                else
                    snapshot();
            });
}

void MapClient::replayGap(const QString &oldSubscriptionId, const QString &since, int page, int replayed)
{
    const Json params = {{"subscriptionId", oldSubscriptionId.toStdString()},
                         {"since", since.toStdString()},
                         {"afterEventId", since.toStdString()},
                         {"limit", m_options.replayPageSize}};
    request(QStringLiteral("map/replay"), params,
            [this, oldSubscriptionId, since, page, replayed](bool ok, const Json &result, const RpcError &error) {
                const qint64 t = nowMs();
                if (!ok) {
                    Gap gap;
                    gap.kind = Gap::Kind::ReplayUnavailable;
                    gap.timeMs = t;
                    gap.detail = QStringLiteral("events after %1 could not be replayed (%2); the snapshot fills the state, "
                                                "but messages and transitions in between are missing")
                                     .arg(since, error.message);
                    emitInputs({GapInput{gap}});
                    m_previousSubscriptionId.clear();
                    snapshot();
                    return;
                }
                bool hasMore = false;
                const auto events = eventsFromReplayResult(result, hasMore);
                const int count = int(events.size());
                const QString last = count ? events.back().eventId : QString();
                const int total = replayed + count;
                const bool more = (hasMore || count >= m_options.replayPageSize) && !last.isEmpty();
                if (more && page + 1 < m_options.replayMaxPages) {
                    replayGap(oldSubscriptionId, last, page + 1, total);
                    return;
                }
                m_replayedAfterReconnect = total;
                m_replayOk = !more;       // filled, or stopped at the bound with events still missing
                m_replayPartial = more;
                // The old subscription is dead weight on the server ([M] never drops it).
                request(QStringLiteral("map/unsubscribe"), Json{{"subscriptionId", oldSubscriptionId.toStdString()}}, {});
                m_previousSubscriptionId.clear();
                snapshot();
            });
}

void MapClient::snapshot()
{
    setState(ClientState::Snapshotting);
    m_snapshotOutstanding = 2;
    auto done = [this] {
        if (--m_snapshotOutstanding == 0)
            goLive();
    };
    auto failed = [this](const RpcError &error) {
        if (error.code == kTimeoutCode)
            dropAndReconnect(QStringLiteral("snapshot: %1").arg(error.message));
    };
    request(QStringLiteral("map/agents/list"), Json::object(), [done, failed](bool ok, const Json &, const RpcError &error) {
        if (!ok && error.code == kTimeoutCode)
            return failed(error);
        done();
    });
    request(QStringLiteral("map/scopes/list"), Json::object(), [this, done, failed](bool ok, const Json &result, const RpcError &error) {
        if (!ok) {
            if (error.code == kTimeoutCode)
                return failed(error);
            done();
            return;
        }
        const SnapshotScopes scopes = scopesFromListResult(result);
        for (const ScopeRecord &scope : scopes.scopes) {
            if (support(QStringLiteral("map/scopes/members")) == Support::Absent)
                break;
            ++m_snapshotOutstanding;
            request(QStringLiteral("map/scopes/members"), Json{{"scopeId", scope.id.toStdString()}},
                    [done, failed](bool ok, const Json &, const RpcError &error) {
                        if (!ok && error.code == kTimeoutCode)
                            return failed(error);
                        done();
                    });
        }
        done();
    });
}

void MapClient::goLive()
{
    const qint64 t = nowMs();
    if (m_disconnectedAtMs) {
        Gap gap;
        gap.kind = Gap::Kind::Reconnect;
        gap.timeMs = t;
        gap.recovered = m_replayOk;
        gap.partial = m_replayPartial;
        const QString outcome = m_replayOk ? QStringLiteral("%1 missed events replayed, state re-read").arg(m_replayedAfterReconnect)
            : m_replayPartial ? QStringLiteral("partly recovered: %1 missed events replayed, then the replay stopped at its "
                                               "bound of %2 pages with more missing; state re-read")
                                    .arg(m_replayedAfterReconnect).arg(m_options.replayMaxPages)
                              : QStringLiteral("state re-read; events in between may be missing");
        gap.detail = QStringLiteral("disconnected for %1 s (%2); %3")
                         .arg(double(t - m_disconnectedAtMs) / 1000.0, 0, 'f', 1)
                         .arg(m_lastError, outcome);
        emitInputs({GapInput{gap}});
        ++m_reconnects;
        m_disconnectedAtMs = 0;
    }
    m_replayOk = false;
    m_replayPartial = false;
    m_replayedAfterReconnect = 0;
    m_attempt = 0;
    setState(ClientState::Live);
    Q_EMIT live();
}

// ---- model output ----------------------------------------------------------------------

void MapClient::emitInputs(ModelInputs inputs)
{
    if (m_batch.empty())
        m_batch = std::move(inputs);
    else
        std::move(inputs.begin(), inputs.end(), std::back_inserter(m_batch));
    if (!m_flushQueued && !m_batch.empty()) {
        m_flushQueued = true;
        QMetaObject::invokeMethod(this, &MapClient::flushInputs, Qt::QueuedConnection);
    }
}

void MapClient::flushInputs()
{
    m_flushQueued = false;
    if (m_batch.empty())
        return;
    ModelInputs batch = std::move(m_batch);
    m_batch = ModelInputs();
    if (m_backlog)
        m_backlog->add(batch.size());
    Q_EMIT inputsReady(batch);
    // After handing the batch out, before the next frames are read: this is where a consumer
    // that fell behind holds the reading back.
    if (m_backlog)
        m_backlog->waitForRoom();
}

// ---- operator actions ------------------------------------------------------------------

void MapClient::recordAction(ActionUpdate update)
{
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->actionRecorded(update);
    Q_EMIT actionRecorded(update);
    emitInputs({std::move(update)});
}

QString MapClient::startAction(ActionKind kind, const QString &agentId, const QString &method, const Json &params,
                               const QString &actionId)
{
    ActionUpdate created;
    created.step = ActionUpdate::Step::Created;
    created.timeMs = nowMs();
    created.action.id = actionId.isEmpty() ? QStringLiteral("action-%1-%2").arg(created.timeMs).arg(++m_actionCounter) : actionId;
    created.action.kind = kind;
    created.action.agentId = agentId;
    created.action.params = params;
    created.action.method = method;
    const QString id = created.action.id;
    recordAction(std::move(created));
    return id;
}

void MapClient::sendAction(const QString &actionId, const QString &method, const Json &params,
                           const QString &fallbackMethod, const Json &fallbackParams, const QString &fallbackNote)
{
    auto settle = [this, actionId](ActionUpdate::Step step, const QString &detail, const QString &messageId = {}) {
        ActionUpdate u;
        u.step = step;
        u.timeMs = nowMs();
        u.action.id = actionId;
        u.action.detail = detail;
        u.action.messageId = messageId;
        recordAction(std::move(u));
    };
    auto answerHandler = [settle](bool ok, const Json &result, const RpcError &error) {
        if (ok) {
            QString messageId = jsonString(result, "messageId");
            QString detail;
            if (const Json *injected = jsonChild(result, "injected"); injected && injected->is_boolean() && !injected->get<bool>()) {
                settle(ActionUpdate::Step::Failed, QStringLiteral("the server did not inject the message"));
                return;
            }
            if (const QString used = jsonString(result, "delivery"); !used.isEmpty())
                detail = QStringLiteral("delivery used: %1").arg(used);
            settle(ActionUpdate::Step::Answered, detail, messageId);
        } else if (error.code == kTimeoutCode) { // sent, but the answer never came: it may have been done
            settle(ActionUpdate::Step::AnswerLost,
                   QStringLiteral("no answer (%1): it may have taken effect; its confirming event will tell").arg(error.message));
        } else {
            settle(ActionUpdate::Step::Failed, QStringLiteral("%1 (code %2)").arg(error.message).arg(error.code));
        }
    };
    auto useFallback = [this, actionId, fallbackMethod, fallbackParams, fallbackNote, answerHandler] {
        ActionUpdate u;
        u.step = ActionUpdate::Step::Fallback;
        u.timeMs = nowMs();
        u.action.id = actionId;
        u.action.method = fallbackMethod;
        u.action.note = fallbackNote;
        recordAction(std::move(u));
        request(fallbackMethod, fallbackParams, answerHandler);
    };
    if (m_options.observerOnly) {
        settle(ActionUpdate::Step::Failed, QStringLiteral("refused: an observer-only session sends no control method"));
        return;
    }
    if (m_state != ClientState::Live) {
        settle(ActionUpdate::Step::Failed, QStringLiteral("not connected (%1)").arg(clientStateName(m_state)));
        return;
    }
    if (support(method) == Support::Absent) {
        if (!fallbackMethod.isEmpty())
            useFallback();
        else
            settle(ActionUpdate::Step::Unsupported, QStringLiteral("%1 is not supported by this server").arg(method));
        return;
    }
    request(method, params, [settle, answerHandler, useFallback, method, fallbackMethod](bool ok, const Json &result, const RpcError &error) {
        if (!ok && error.code == -32601) {
            if (!fallbackMethod.isEmpty())
                useFallback();
            else
                settle(ActionUpdate::Step::Unsupported, QStringLiteral("%1 is not supported by this server").arg(method));
            return;
        }
        answerHandler(ok, result, error);
    });
}

static const char *deliveryName(MapClient::Delivery delivery)
{
    switch (delivery) {
    case MapClient::Delivery::Interrupt: return "interrupt";
    case MapClient::Delivery::Queue: return "queue";
    case MapClient::Delivery::BestEffort: return "best-effort";
    }
    return "best-effort";
}

QString MapClient::inject(const QString &agentId, const Json &content, Delivery delivery, const QString &actionId)
{
    const Json params = {{"agentId", agentId.toStdString()}, {"content", content}, {"delivery", deliveryName(delivery)}};
    const QString id = startAction(ActionKind::Inject, agentId, QStringLiteral("map/inject"), params, actionId);
    // Fallback (map-wire.md §5): a message to the agent whose payload marks it as steering.
    const Json fallbackParams = {
        {"to", {{"agent", agentId.toStdString()}}},
        {"payload", {{"type", "STEERING"}, {"content", content}, {"delivery", deliveryName(delivery)}, {"to", agentId.toStdString()}}},
    };
    sendAction(id, QStringLiteral("map/inject"), params, QStringLiteral("map/send"), fallbackParams,
               QStringLiteral("map/inject is not supported by this server; sent as a STEERING message with map/send"));
    return id;
}

QString MapClient::lifecycleAction(ActionKind kind, const QString &agentId, const QString &method, const Json &params,
                                   const char *fallbackState, const QString &actionId, const QString &fallbackCaveat)
{
    const QString id = startAction(kind, agentId, method, params, actionId);
    sendAction(id, method, params, QStringLiteral("map/agents/update"),
               Json{{"agentId", agentId.toStdString()}, {"state", fallbackState}},
               QStringLiteral("%1 is not supported by this server; set state \"%2\" with map/agents/update%3")
                   .arg(method, QLatin1String(fallbackState), fallbackCaveat));
    return id;
}

QString MapClient::stopAgent(const QString &agentId, const QString &reason, bool force, const QString &actionId)
{
    Json params = {{"agentId", agentId.toStdString()}, {"force", force}};
    if (!reason.isEmpty())
        params["reason"] = reason.toStdString();
    return lifecycleAction(ActionKind::Stop, agentId, QStringLiteral("map/agents/stop"), params, "stopped", actionId,
                           QStringLiteral(" (changes the registry only: the agent process is not told)"));
}

QString MapClient::suspendAgent(const QString &agentId, const QString &reason, const QString &actionId)
{
    Json params = {{"agentId", agentId.toStdString()}};
    if (!reason.isEmpty())
        params["reason"] = reason.toStdString();
    return lifecycleAction(ActionKind::Suspend, agentId, QStringLiteral("map/agents/suspend"), params, "suspended", actionId);
}

QString MapClient::resumeAgent(const QString &agentId, const QString &actionId)
{
    return lifecycleAction(ActionKind::Resume, agentId, QStringLiteral("map/agents/resume"),
                           Json{{"agentId", agentId.toStdString()}}, "idle", actionId);
}

QString MapClient::sendMessage(const Json &to, const Json &payload)
{
    const Json params = {{"to", to}, {"payload", payload}};
    const QString target = to.is_string() ? toQString(to) : jsonString(to, "agent");
    const QString id = startAction(ActionKind::Send, target, QStringLiteral("map/send"), params);
    sendAction(id, QStringLiteral("map/send"), params, QString(), Json(), QString());
    return id;
}

void MapClient::refreshAuth(const QString &credential)
{
    m_options.auth.credential = credential;
    const Json params = {{"method", m_options.auth.methodName().toStdString()}, {"credential", credential.toStdString()}};
    request(QStringLiteral("map/auth/refresh"), params, [this](bool ok, const Json &result, const RpcError &error) {
        // Any result shape (a non-boolean success counts as a refusal); nothing here may throw.
        const Json *success = jsonChild(result, "success");
        const bool refused = !ok || (success && !(success->is_boolean() && success->get<bool>()));
        const Json *refusal = jsonChild(result, "error");
        if (refused)
            setLastError(QStringLiteral("token refresh failed: %1").arg(ok && refusal ? jsonString(*refusal, "message") : error.message));
        Q_EMIT authRefreshed(!refused, refused ? m_lastError : QString());
    });
}

} // namespace mapi
