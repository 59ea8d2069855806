#include "client/MapClient.h"
#include "client/StreamTransports.h"

#include "common/Redaction.h"
#include "map/Dialect.h"
#include "map/MethodTable.h"
#include "protocol/SimdJsonParser.h"

#include <QDateTime>
#include <QHostAddress>
#include <QUrlQuery>
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
                            : createTransport(m_options.url, std::max<qint64>(64 * 1024 * 1024, 4 * m_options.limits.maxFrameBytes)))
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
    connect(m_transport.get(), &Transport::diagnosticLine, this, [this](const QByteArray &line) {
        m_processOutputPending.push_back(line);
        if (qsizetype(m_processOutputPending.size()) > kMaxProcessOutputBatch) {
            m_processOutputPending.pop_front();
            ++m_processOutputSkipped;
        }
        if (!m_processOutputFlush.isActive())
            m_processOutputFlush.start();
    });
    m_processOutputFlush.setSingleShot(true);
    m_processOutputFlush.setInterval(kProcessOutputFlushMs);
    connect(&m_processOutputFlush, &QTimer::timeout, this, &MapClient::flushProcessOutput);
    connect(m_transport.get(), &Transport::lineDropped, this, [this](qint64 lineNumber, qint64 bytes) {
        emitInputs({ProblemInput{makeProblem(ProblemKind::OversizedFrame,
                                             QStringLiteral("line %1 of the stream is %2 bytes long, over the limit of a line: dropped")
                                                 .arg(lineNumber).arg(bytes),
                                             {}, nowMs())}});
    });
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
    // Stopping: the handshake's late answers (a snapshot, a replay) must not make it live again.
    if (m_stopping && state != ClientState::Closed && state != ClientState::Failed)
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
    const bool token = options.auth.method != AuthConfig::Method::None && !options.auth.credential.isEmpty();
    bool inUrl = !options.url.userInfo().isEmpty();
    for (const auto &[name, value] : QUrlQuery(options.url).queryItems())
        inUrl = inUrl || (!value.isEmpty() && isSecretName(name.toStdString()));
    if ((!token && !inUrl) || options.url.scheme().compare(QLatin1String("ws"), Qt::CaseInsensitive) != 0)
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
        // Closed for the model now: an owner that deletes the client right after stop() (the
        // session does) never sees the unsubscribe answered, and the model would stay "live".
        setState(ClientState::Closed);
    } else {
        m_transport->abort();
        setState(ClientState::Closed);
    }
}

// ---- traffic ---------------------------------------------------------------------------

void MapClient::request(const QString &method, const Json &params, Reply reply, int timeoutMs)
{
    if (m_options.observerOnly && methodEffect(method, params) == MethodEffect::Changes) {
        const QString why = methodIsClassified(method)
            ? QStringLiteral("refused: observer mode: %1 changes the system and is not sent").arg(method)
            : QStringLiteral("refused: observer mode: %1 is not a method the console knows, and what it cannot "
                             "classify is not sent").arg(method);
        if (reply)
            reply(false, Json(), RpcError{kRefusedCode, why, Json()});
        return;
    }
    Pending pending;
    pending.method = method;
    const QString spelling = m_methodSpelling.value(method);
    pending.sentAs = spelling.isEmpty() ? method : spelling;
    // Kept only to ask again under the other spelling (tryOtherSpelling).
    if (!observationLossOf(method).isEmpty() && !alternativeMethodName(method).isEmpty())
        pending.params = params;
    pending.reply = std::move(reply);
    pending.timeoutMs = timeoutMs;
    sendRequest(std::move(pending), params);
}

void MapClient::sendRequest(Pending pending, const Json &params)
{
    if (!m_transport->isOpen()) {
        if (pending.reply)
            pending.reply(false, Json(), RpcError{kTimeoutCode, QStringLiteral("not connected"), Json()});
        return;
    }
    const qint64 id = m_nextId++;
    const QByteArray frame = FrameCodec::encodeRequest(Json(id), pending.sentAs, params);
    const qint64 t = nowMs();
    pending.sentAtMs = t;
    pending.deadlineMs = t + (pending.timeoutMs > 0 ? pending.timeoutMs : m_options.requestTimeoutMs);
    if (methodEffect(pending.method, params) == MethodEffect::Changes) {
        m_lastChangeMethod = pending.sentAs;
        m_lastChangeAtMs = t;
    }
    m_pending.insert(jsonIdKey(Json(id)), std::move(pending));
    m_pipeline.frameSent(frame, t);
    noteFrameSent(frame, t);
    m_transport->sendText(frame);
}

bool MapClient::tryOtherSpelling(Pending &pending, const RpcError &error)
{
    // Only the lists the observation is built from: a method that changes something is never
    // sent twice, and a probe must not turn into two.
    // Every request refused under the usual spelling is asked again (a loop of scope members
    // refused together, each), until the other spelling is known not to work either.
    const QString other = alternativeMethodName(pending.method);
    if (other.isEmpty() || observationLossOf(pending.method).isEmpty() || pending.sentAs != pending.method
        || m_spellingsRefused.contains(pending.method))
        return false;
    const QString method = pending.method;
    pending.sentAs = other;
    // Refused again: neither spelling works, and the caller hears the first refusal. Anything
    // else (a result, another error, a timeout) reaches the caller as it is.
    pending.reply = [this, method, original = std::move(pending.reply), error](bool ok, const Json &result,
                                                                              const RpcError &otherError) {
        const bool refused = !ok && otherError.code == -32601;
        if (refused)
            m_spellingsRefused.insert(method);
        if (original)
            original(ok, result, refused ? error : otherError);
    };
    const Json params = pending.params;
    sendRequest(std::move(pending), params);
    return true;
}

void MapClient::onOpened()
{
    const qint64 t = nowMs();
    m_lastReceiveMs = t;
    m_probeId.clear();
    m_dropReason.clear();
    m_unansweredWhileBusy = 0;
    emitInputs(m_pipeline.connectionOpened(redactedUrl(m_options.url), t));
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->socketOpened(redactedUrl(m_options.url), t);
    sendConnect();
}

void MapClient::flushProcessOutput()
{
    m_processOutputFlush.stop();
    if (m_processOutputPending.empty() && m_processOutputSkipped == 0)
        return;
    QStringList lines;
    lines.reserve(qsizetype(m_processOutputPending.size()));
    for (const QByteArray &line : m_processOutputPending)
        lines << redactSecrets(QString::fromUtf8(line)); // a child's log can quote its credentials
    m_processOutputPending.clear();
    Q_EMIT processOutput(lines, std::exchange(m_processOutputSkipped, 0));
}

void MapClient::onClosed(const QString &transportReason)
{
    flushProcessOutput(); // its last words come before the close that follows them
    const qint64 t = nowMs();
    // A socket we dropped closes for the reason we dropped it (the transport only knows that we
    // closed it); that reason is what traces record, so replay says the same.
    const bool weDropped = !m_dropReason.isEmpty();
    const QString reason = weDropped ? m_dropReason : transportReason;
    m_dropReason.clear();
    emitInputs(m_pipeline.connectionClosed(reason, t));
    for (FrameSink *sink : std::as_const(m_sinks))
        sink->socketClosed(reason, t);
    const int unanswered = int(m_pending.size());
    failAllPending(QStringLiteral("connection closed"));
    if (m_stopping || m_state == ClientState::Failed) {
        if (m_state != ClientState::Failed)
            setState(ClientState::Closed);
        m_tick.stop();
        return;
    }
    // A drop of ours (a silent server) already said what came before it.
    const QString after = weDropped ? QString() : afterOurAction(t);
    setLastError(reason + after + (after.isEmpty() ? streamEndExplained(unanswered) : QString()));
    if (!m_subscriptionId.isEmpty()) {
        m_previousSubscriptionId = m_subscriptionId;
        m_lastEventIdBeforeDrop = m_pipeline.lastEventId(m_subscriptionId);
        if (m_lastEventIdBeforeDrop.isEmpty())
            m_lastEventIdBeforeDrop = m_pipeline.lastEventId();
    }
    m_subscriptionId.clear();
    if (!m_disconnectedAtMs)
        m_disconnectedAtMs = t;
    if (m_options.reconnect && m_transport->reopensByItself())
        scheduleReconnect();
    else
        setState(ClientState::Closed); // a launched process starts again only when asked
}

// The SDK's MAPServer over a stream (ndJsonStream, 0.1.15) takes its writer's lock for each
// message: an answer written while an event is being written fails with -32603 "Invalid state:
// WritableStream is locked" although the request did its work, and two events at once end the
// session (shared/reference/map-extensions.md 1.3). Both are said for what they are.
RpcError MapClient::explainServerError(RpcError error)
{
    if (error.code == -32603 && error.message.contains(QLatin1String("WritableStream is locked"))) {
        m_writerLockSeen = true;
        error.message += QStringLiteral(" (the server could not write its answer while it wrote an event: a known fault of the MAP "
                                        "SDK's server over streams. The request may well have been done: the model shows what happened)");
    }
    return error;
}

QString MapClient::streamEndExplained(int unanswered) const
{
    // Only where the fault was seen on this connection: a command that crashes or a server that
    // ends for its own reasons is not this (soon after one of our changes, afterOurAction says it).
    if (!qobject_cast<const StreamTransport *>(m_transport.get()) || !m_writerLockSeen)
        return {};
    return QStringLiteral("; %1 request(s) unanswered (a known fault of the MAP SDK's server over streams: it ends a stream "
                          "session when one request causes two events at once, already seen on this connection as "
                          "\"WritableStream is locked\"; a host that writes through one writer avoids it)")
        .arg(unanswered);
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
    if (!m_transport->isOpen())
        return; // closed already (its pending requests were failed by that close): nothing to drop
    setLastError(reason);
    m_dropReason = reason;
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
    if (m_stopping) // as in onText: not the session's any more
        return;
    const qint64 t = nowMs();
    m_lastReceiveMs = t;
    const FrameRef ref = noteFrameReceived(frame, t, true);
    ModelInputs inputs = m_pipeline.binaryFrameReceived(frame, t).inputs;
    if (ref.isValid() || !m_keepFrames)
        dropRawFrames(inputs, ref, 0, !m_keepPayloadTexts);
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
    // Stopped: what still arrives before the socket closes (the answer to the unsubscribe, events
    // sent meanwhile) is not the session's. Its journal and recording no longer take frames, so
    // the model takes none either: a saved session or a recording replays to what was shown.
    if (m_stopping)
        m_batch.erase(m_batch.begin() + first, m_batch.end());
    // A stream's line that does not parse (a child's own log line on its stdout) names its line.
    if (const QString origin = m_transport->frameOrigin(); !origin.isEmpty())
        for (qsizetype i = first; i < m_batch.size(); ++i)
            if (auto *problem = std::get_if<ProblemInput>(&m_batch[i]))
                problem->problem.detail += QStringLiteral(" (%1)").arg(origin);
    if (ref.isValid() || !m_keepFrames)
        dropRawFrames(m_batch, ref, first, !m_keepPayloadTexts);
    emitInputs({}); // schedules the flush when the frame added inputs
    if (!interpreted.message)
        return;
    const RpcMessage &msg = *interpreted.message;
    switch (msg.kind) {
    case MessageKind::Notification:
        if (msg.method == QLatin1String("map/auth/expiring"))
            Q_EMIT authExpiring(jsonInt(msg.params, "expiresAt"), jsonInt(msg.params, "expiresInMs"));
        else if (msg.method == QLatin1String("trajectory/content.chunk"))
            Q_EMIT contentChunk(QByteArray::fromStdString(msg.params.dump(-1, ' ', false, Json::error_handler_t::replace)));
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
        if (msg.kind == MessageKind::Error && msg.error.code == -32601) {
            if (tryOtherSpelling(pending, msg.error))
                break;
            noteSupport(pending.method, false);
        } else {
            // The other spelling worked: kept for this server (the pipeline says so: MethodFallback).
            if (pending.sentAs != pending.method)
                m_methodSpelling.insert(pending.method, pending.sentAs);
            noteSupport(pending.method, true);
        }
        if (pending.reply)
            pending.reply(msg.kind == MessageKind::Result, msg.result, explainServerError(msg.error));
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

// ---- handshake -------------------------------------------------------------------------

void MapClient::sendConnect()
{
    const bool control = !m_options.observerOnly; // an observer asks to observe and nothing more
    Json params = {
        {"protocolVersion", 1},
        {"participantType", m_options.participantType.toStdString()},
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
    noteExtensions(connectResult);
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
    listAgents([done, failed](bool ok, const RpcError &error, qint64) {
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
    if (m_stopping)
        return; // a snapshot answered after stop(): the connection is closing
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
    m_lastProbeMs = m_lastReconcileMs = t; // the snapshot just read the server
    // The snapshot's inputs go out before the state does: the session then has them when it
    // hears of Live (a command acting on an agent by name at Live must find it).
    flushInputs();
    setState(ClientState::Live);
    Q_EMIT live();
    readExtensionHistory();
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

} // namespace mapi
