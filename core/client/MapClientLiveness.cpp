// MapClient's liveness (issue 40): the tick that times requests out, the probe after silence
// (and at least every livenessIntervalMs while events flow), the reconciliation of the server's
// agent list with the model, and what is said when the server stops answering.
#include "client/MapClient.h"
#include "client/StreamTransports.h"

#include "map/MethodTable.h"
#include "model/FederationLedger.h"

#include <QDateTime>

#include <algorithm>

namespace mapi {

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
    if (m_state != ClientState::Live)
        return;
    if (m_options.reconcileIntervalMs > 0 && t - m_lastReconcileMs >= m_options.reconcileIntervalMs)
        reconcile();
    if (m_federationServed && t - m_lastFederationReadMs >= FederationLedger::kRefreshMs)
        readFederation();
    if (!m_probeId.isEmpty())
        return;
    const bool silent = t - m_lastReceiveMs >= m_options.probeAfterSilenceMs;
    const bool due = m_options.livenessIntervalMs > 0 && t - m_lastProbeMs >= m_options.livenessIntervalMs;
    if (silent || due)
        checkLiveness();
}

void MapClient::checkLiveness()
{
    if (m_state != ClientState::Live || !m_probeId.isEmpty())
        return;
    // Application-level probe: a WebSocket pong would not prove the MAP router is alive.
    const QString method = support(QStringLiteral("map/session/info")) == Support::Absent
        ? QStringLiteral("map/scopes/list")
        : QStringLiteral("map/session/info");
    m_probeId = method;
    const qint64 sentAt = m_lastProbeMs = nowMs();
    request(method, Json::object(), [this, method, sentAt](bool ok, const Json &, const RpcError &error) {
        m_probeId.clear();
        unanswered(ok, error, method, sentAt, m_options.probeTimeoutMs);
    }, m_options.probeTimeoutMs);
}

void MapClient::unanswered(bool ok, const RpcError &error, const QString &method, qint64 sentAtMs, int waitedMs)
{
    if (ok || error.code != kTimeoutCode) {
        m_unansweredWhileBusy = 0; // answered (an error is an answer too)
        return;
    }
    // A deadline that passed on an open, live connection (a close fails its requests as well).
    if (m_state != ClientState::Live || !m_transport->isOpen())
        return;
    // Frames kept arriving: the answer may wait behind them (a flood, or this client's own
    // backpressure holding the socket). Three such misses in a row still count.
    if (m_lastReceiveMs > sentAtMs && ++m_unansweredWhileBusy < 3)
        return;
    notAnswering(method, waitedMs);
}

void MapClient::reconcile(std::function<void(bool answered)> done)
{
    m_lastReconcileMs = nowMs();
    if (m_state != ClientState::Live || m_reconciling || support(QStringLiteral("map/agents/list")) == Support::Absent) {
        if (done)
            done(m_state == ClientState::Live && !m_reconciling);
        return;
    }
    m_reconciling = true;
    // The pipeline reads a complete list after the snapshot as a reconciliation
    // (AgentsSnapshot::reconcile). The usual request timeout: a long list takes its time.
    listAgents([this, done](bool ok, const RpcError &error, qint64 sentAt) {
        m_reconciling = false;
        unanswered(ok, error, QStringLiteral("map/agents/list"), sentAt, m_options.requestTimeoutMs);
        if (!done)
            return;
        // After the inputs of this answer (their flush is queued already): the model has the
        // drift, if any, by the time `done` runs.
        const bool answered = ok || error.code != kTimeoutCode;
        QMetaObject::invokeMethod(this, [done, answered] { done(answered); }, Qt::QueuedConnection);
    });
}

void MapClient::notAnswering(const QString &method, int waitedMs)
{
    // The socket closes for this reason; the pipeline makes it a NotAnswering problem (live and
    // in replay alike: ProtocolPipeline::kServerSilent).
    const qint64 since = m_lastReceiveMs;
    const QString what = QStringLiteral("the server is not answering since %1: no answer to %2 within %3 s%4")
                             .arg(QDateTime::fromMSecsSinceEpoch(since).toUTC().toString(Qt::ISODateWithMs), method)
                             .arg(double(waitedMs) / 1000.0, 0, 'f', 1)
                             .arg(afterOurAction(since));
    if (!m_transport->reopensByItself()) {
        // A launched system is observed, not ended: dropping would end the process, and nothing
        // would start it again. Said once per silence; Disconnect ends it.
        if (m_silenceSaidSinceMs == since)
            return;
        m_silenceSaidSinceMs = since;
        setLastError(what);
        emitInputs({ProblemInput{makeProblem(ProblemKind::NotAnswering, what + QStringLiteral("; the process is left running"), {},
                                             nowMs())}});
        return;
    }
    dropAndReconnect(ProtocolPipeline::kServerSilent + what);
}

QString MapClient::afterOurAction(qint64 stoppedAtMs) const
{
    // Within 5 s: the stock SDK WebSocket adapter fails within a tick of the request.
    const qint64 after = stoppedAtMs - m_lastChangeAtMs;
    if (m_lastChangeMethod.isEmpty() || after < -1000 || after > 5000)
        return {};
    const QString known = qobject_cast<const StreamTransport *>(m_transport.get())
        ? QStringLiteral("a known fault of the MAP SDK's server over streams: it ends a stream session when one request causes "
                         "two events at once; a host that writes through one writer avoids it")
        : QStringLiteral("a known failure of servers built on the SDK's stock WebSocket adapter when one request emits two events");
    return QStringLiteral(", %1 s after our %2 (%3)").arg(double(std::max<qint64>(after, 0)) / 1000.0, 0, 'f', 1).arg(m_lastChangeMethod, known);
}

} // namespace mapi
