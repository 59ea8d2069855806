// The detectors' test fixture (tst_alerts, tst_alert_loops): a SystemStore fed through the real
// pipeline (Wire) with agents a, b, c and coord registered, an AlertEngine over it, seed-000
// messages sent at chosen times, and evaluations at chosen times that list what was raised and
// cleared ("raised loop/exchange:a,b").
#pragma once

#include "TestSupport.h"

#include "alerts/AlertEngine.h"
#include "model/SystemStore.h"

namespace mapi_test {

using mapi::AlertChange;
using mapi::AlertEngine;
using mapi::AlertKind;
using mapi::AlertRules;
using mapi::SystemStore;

constexpr qint64 kAlertFixtureStart = 1790000000000; // ms since the epoch: the agents register then

struct AlertFixture
{
    // Without `watchUnresponsive`, the unresponsive rule is off: most tests let minutes pass
    // without heartbeats, and would otherwise see every agent go silent.
    explicit AlertFixture(AlertRules rules = AlertRules(), bool watchUnresponsive = false)
        : wire(store)
        , engine(withUnresponsive(rules, watchUnresponsive))
    {
        store.setHealthPolicy(mapi::healthPolicyForRules(rules, store.healthPolicy()));
        for (const char *id : {"a", "b", "c", "coord"})
            wire.registerAgent(q(id), q(id) + QStringLiteral("-name"), QStringLiteral("sess-") + q(id), Json::object(),
                               QStringLiteral("idle"), kAlertFixtureStart);
    }
    static QString q(const char *text) { return QString::fromLatin1(text); }
    static AlertRules withUnresponsive(AlertRules rules, bool on)
    {
        rules.rule(AlertKind::Unresponsive).enabled = on;
        return rules;
    }

    // A seed-000 message from `from` to `to` at time `t`.
    QString send(const QString &from, const QString &to, const char *type, const Json &payload, qint64 t)
    {
        const QString id = QStringLiteral("m%1").arg(++counter);
        wire.message(id, from, s(to),
                     Json{{"message_id", s(id)}, {"type", type}, {"from", s(from)}, {"to", s(to)}, {"payload", payload}}, t);
        return id;
    }
    // `pairs` pairs of new agents (numbered from pair `firstPair` on) exchanging a STATUS_QUERY back and forth 20 times: 20 × pairs
    // messages within 40 s, all inside the 60 s window, a loop per pair. Returns the last time.
    qint64 loopingPairs(int pairs, int firstPair = 0)
    {
        for (int i = 2 * firstPair; i < 2 * (firstPair + pairs); ++i)
            wire.registerAgent(QStringLiteral("p%1").arg(i), QStringLiteral("p%1-name").arg(i), QStringLiteral("sess-p%1").arg(i),
                               Json::object(), QStringLiteral("idle"), kAlertFixtureStart);
        qint64 t = kAlertFixtureStart + 1000;
        for (int round = 0; round < 20; ++round)
            for (int pair = firstPair; pair < firstPair + pairs; ++pair) {
                const QString a = QStringLiteral("p%1").arg(2 * pair), b = QStringLiteral("p%1").arg(2 * pair + 1);
                const bool forth = round % 2 == 0;
                send(forth ? a : b, forth ? b : a, "STATUS_QUERY", {{"query_type", "AGENT_STATUS"}}, t += counter % 2);
            }
        return t;
    }
    void heartbeat(const QString &from, qint64 t) { send(from, QStringLiteral("coord"), "HEARTBEAT", {{"status", "ACTIVE"}}, t); }

    // Evaluates at `t`; returns "raised kind:agents" / "cleared kind:agents" lines.
    QStringList at(qint64 t)
    {
        store.advanceTime(t);
        QStringList out;
        for (const AlertChange &c : engine.update(store))
            out << QStringLiteral("%1 %2").arg(c.raised ? QStringLiteral("raised") : QStringLiteral("cleared"), c.alert.key());
        return out;
    }
    // Time passes to `t` with `agent` heartbeating every 20 s (healthy, but not working); then at(t).
    QStringList heartbeatsUntil(const QString &agent, qint64 t)
    {
        qint64 &last = lastHeartbeat[agent];
        for (last = std::max(last, kAlertFixtureStart) + 20000; last <= t; last += 20000)
            heartbeat(agent, last);
        last -= 20000;
        return at(t);
    }
    const mapi::Alert *open(const QString &keyStart) const
    {
        for (const auto &[key, alert] : engine.openAlerts())
            if (key.startsWith(keyStart))
                return &alert;
        return nullptr;
    }

    SystemStore store;
    Wire wire;
    AlertEngine engine;
    int counter = 0;
    QHash<QString, qint64> lastHeartbeat;
};

} // namespace mapi_test
