// MapClient's operator actions (inject, stop, suspend, resume, send) and credential renewal:
// each action tracked from request to answer, with the documented fallbacks where the server
// lacks a method (map-wire.md §5). Same thread as the client.
#include "client/MapClient.h"

#include "map/Dialect.h"

#include <QDateTime>

namespace mapi {

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
