// The fake MAP server of the client's unit tests: a Transport that answers requests through
// per-method handlers, records what the client sends and lets a test push frames and close the
// socket; a Recorder of everything a client emits, applied to a store. Header only (no Q_OBJECT:
// FakeTransport only emits Transport's signals).
#pragma once

#include "TestSupport.h"

#include "client/MapClient.h"
#include "client/Transport.h"
#include "model/SystemStore.h"

#include <QElapsedTimer>
#include <QTimer>

#include <optional>

namespace fake_server {

using namespace mapi;
using mapi_test::dump;
using mapi_test::s;

struct Answer
{
    Json result;
    bool isError = false;
    int code = 0;
    QString message;
    static Answer ok(Json result) { return {std::move(result), false, 0, {}}; }
    static Answer error(int code, const QString &message) { return {Json(), true, code, message}; }
};

// Given the request params, the server's answer; nullopt: the server stays silent.
using Handler = std::function<std::optional<Answer>(const Json &params)>;

struct SentRequest
{
    Json id;
    QString method;
    Json params;
    int connection = 0;
};

// A Transport that is also the server: it answers requests through per-method handlers
// (asynchronously, on the connection they arrived on), records every frame the client sends,
// and lets the test push frames, close the socket and refuse connection attempts.
class FakeTransport final : public Transport
{
public:
    explicit FakeTransport(QObject *parent = nullptr)
        : Transport(parent)
    {
        clock.start();
        installDefaults();
    }

    void open(const QUrl &) override
    {
        ++opens;
        openTimes << clock.elapsed();
        const bool refuse = refuseNextOpens > 0;
        if (refuse)
            --refuseNextOpens;
        QTimer::singleShot(0, this, [this, refuse] {
            if (refuse) {
                closeTimes << clock.elapsed();
                Q_EMIT closed(QStringLiteral("connection refused"));
                return;
            }
            m_open = true;
            ++connection;
            Q_EMIT opened();
        });
    }

    void abort() override
    {
        if (!m_open)
            return;
        m_open = false;
        ++aborts;
        closeTimes << clock.elapsed();
        Q_EMIT closed(QStringLiteral("closed by client"));
    }

    void sendText(const QByteArray &utf8) override
    {
        sent << utf8;
        const Json frame = Json::parse(utf8.toStdString(), nullptr, false);
        if (!frame.is_object() || !frame.contains("method") || !frame.contains("id"))
            return;
        const SentRequest request{frame.at("id"), QString::fromStdString(frame.at("method").get<std::string>()),
                                  frame.value("params", Json()), connection};
        requests << request;
        const auto handler = handlers.constFind(request.method);
        if (handler == handlers.constEnd() || !*handler)
            return;
        if (const std::optional<Answer> answer = (*handler)(request.params))
            reply(request, *answer);
    }

    bool isOpen() const override { return m_open; }

    // ---- the server side ----

    void reply(const SentRequest &request, const Answer &answer)
    {
        const QByteArray frame = answer.isError ? mapi_test::errorFrame(request.id, answer.code, answer.message)
                                                : mapi_test::resultFrame(request.id, answer.result);
        const int onConnection = request.connection;
        QTimer::singleShot(0, this, [this, frame, onConnection] {
            if (m_open && connection == onConnection)
                Q_EMIT textReceived(frame);
        });
    }

    void push(const QByteArray &frame)
    {
        if (m_open)
            Q_EMIT textReceived(frame);
    }

    void serverClose(const QString &reason = QStringLiteral("server went away"))
    {
        if (!m_open)
            return;
        m_open = false;
        closeTimes << clock.elapsed();
        Q_EMIT closed(reason);
    }

    QStringList methods() const
    {
        QStringList out;
        for (const SentRequest &r : requests)
            out << r.method;
        return out;
    }

    QList<SentRequest> requestsFor(const QString &method) const
    {
        QList<SentRequest> out;
        for (const SentRequest &r : requests)
            if (r.method == method)
                out << r;
        return out;
    }

    void installDefaults()
    {
        handlers[QStringLiteral("map/connect")] = [](const Json &) {
            return Answer::ok({{"protocolVersion", "2024-12"}, {"sessionId", "sess-gui"}, {"participantId", "sess-gui"},
                               {"systemInfo", {{"name", "fake"}, {"version", "0.1.15"}}}});
        };
        handlers[QStringLiteral("map/subscribe")] = [this](const Json &) {
            return Answer::ok({{"subscriptionId", "sub-" + std::to_string(++subscriptions)}});
        };
        handlers[QStringLiteral("map/agents/list")] = [](const Json &) {
            return Answer::ok({{"agents", {{{"id", "a1"}, {"name", "alpha"}, {"state", "idle"}}}}});
        };
        handlers[QStringLiteral("map/scopes/list")] = [](const Json &) {
            return Answer::ok({{"scopes", {{{"id", "s1"}, {"name", "one"}}, {{"id", "s2"}, {"name", "two"}}}}});
        };
        handlers[QStringLiteral("map/scopes/members")] = [](const Json &params) {
            return Answer::ok({{"members", params.value("scopeId", "") == "s1" ? Json{"a1"} : Json::array()}});
        };
        handlers[QStringLiteral("map/unsubscribe")] = [](const Json &) { return Answer::ok({{"success", true}}); };
        handlers[QStringLiteral("map/replay")] = [](const Json &) { return Answer::ok(Json::array()); };
        handlers[QStringLiteral("map/session/info")] = [](const Json &) {
            return Answer::ok({{"id", "sess-gui"}, {"status", "connected"}});
        };
    }

    QHash<QString, Handler> handlers;
    QList<SentRequest> requests;
    QList<QByteArray> sent;
    int opens = 0;
    int aborts = 0;
    int connection = 0;     // increments on every successful open
    int subscriptions = 0;
    int refuseNextOpens = 0;
    QElapsedTimer clock;
    QList<qint64> openTimes;
    QList<qint64> closeTimes;

private:
    bool m_open = false;
};

ClientOptions fastOptions()
{
    ClientOptions o;
    o.url = QUrl(QStringLiteral("ws://fake.invalid/map"));
    o.backoffInitialMs = 50;
    o.backoffJitter = 0;
    return o;
}

// Everything a client emits, collected.
struct Recorder
{
    explicit Recorder(MapClient &client)
    {
        QObject::connect(&client, &MapClient::inputsReady, [this](const ModelInputs &in) {
            inputs.append(in);
            store.apply(in);
        });
        QObject::connect(&client, &MapClient::stateChanged, [this](ClientState st) { states << st; });
        QObject::connect(&client, &MapClient::live, [this] { ++lives; });
        QObject::connect(&client, &MapClient::fatalError, [this](ClientFailure f, const QString &m) {
            fatal << m;
            failures << f;
        });
        QObject::connect(&client, &MapClient::actionRecorded, [this](const ActionUpdate &u) { actions << u; });
    }

    std::vector<const Gap *> gaps(Gap::Kind kind) const
    {
        std::vector<const Gap *> out;
        for (const ModelInput &in : inputs)
            if (const auto *g = std::get_if<GapInput>(&in); g && g->gap.kind == kind)
                out.push_back(&g->gap);
        return out;
    }

    QStringList eventIds() const
    {
        QStringList out;
        for (const ModelInput &in : inputs)
            if (const auto *e = std::get_if<EventInput>(&in))
                out << e->event.eventId;
        return out;
    }

    QList<ActionUpdate::Step> steps(const QString &actionId) const
    {
        QList<ActionUpdate::Step> out;
        for (const ActionUpdate &u : actions)
            if (u.action.id == actionId)
                out << u.step;
        return out;
    }

    ModelInputs inputs;
    SystemStore store;
    QList<ClientState> states;
    int lives = 0;
    QStringList fatal;
    QList<ClientFailure> failures;
    QList<ActionUpdate> actions;
};

QByteArray agentEvent(const QString &subscriptionId, qint64 seq, const QString &eventId, const QString &agentId,
                      const QString &state = QStringLiteral("idle"), const QString &type = QStringLiteral("agent.registered"))
{
    return mapi_test::eventFrame(subscriptionId, seq,
                                 mapi_test::innerEvent(eventId, type, 1000 + seq,
                                                       {{"agent", mapi_test::regAgent(agentId, agentId, state)}},
                                                       {{"agentId", s(agentId)}}));
}

QString stepName(ActionUpdate::Step step)
{
    switch (step) {
    case ActionUpdate::Step::Created: return QStringLiteral("created");
    case ActionUpdate::Step::Answered: return QStringLiteral("answered");
    case ActionUpdate::Step::AnswerLost: return QStringLiteral("answer-lost");
    case ActionUpdate::Step::Failed: return QStringLiteral("failed");
    case ActionUpdate::Step::Unsupported: return QStringLiteral("unsupported");
    case ActionUpdate::Step::Fallback: return QStringLiteral("fallback");
    }
    return {};
}

QStringList stepNames(const QList<ActionUpdate::Step> &steps)
{
    QStringList out;
    for (ActionUpdate::Step st : steps)
        out << stepName(st);
    return out;
}

} // namespace fake_server
