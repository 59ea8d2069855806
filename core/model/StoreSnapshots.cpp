// SystemStore: what the server's lists say (the snapshot and each reconciliation: agents, scopes,
// members, with the drift check), gaps, protocol problems, the connection and its clock. (The
// class is declared in SystemStore.h; events and messages are applied in StoreEvents.cpp.)
#include "model/SystemStore.h"

#include "map/Federation.h"

#include <QDateTime>

#include <algorithm>

namespace mapi {

// A reconciliation list against the model, before it is applied: the agents the server lists
// that the model does not show as present, and the ones it shows that the server no longer lists.
void SystemStore::checkDrift(const AgentsSnapshot &snapshot)
{
    QSet<QString> listed;
    QStringList unseen, stale;
    QHash<QString, QString> listedName; // an agent the model does not know yet: named as listed
    const bool full = m_agents.size() >= size_t(m_maxAgents); // agents past the bound are not modelled
    // An agent that left within the last seconds may have its event still on the way (a server
    // may write the list before events it emitted just before): not drift.
    const qint64 settled = serverTime(snapshot.timeMs) - kDriftSettleMs;
    // Another system's agents (a federating server) come and go with no event at all: following
    // them by the list is how they are observed, not a sign of events missed (map/Federation.h).
    for (const AgentRecord &r : snapshot.data.agents) {
        listed.insert(r.id);
        if (!federatedFrom(r.metadata).isEmpty())
            continue;
        const Agent *a = agent(r.id);
        if ((!a && !full) || (a && (a->placeholder || (a->unregistered && a->unregisteredAtMs < settled)))) {
            unseen << r.id;
            if (r.name && !r.name->isEmpty())
                listedName.insert(r.id, *r.name);
        }
    }
    for (const Agent &a : m_agents)
        if (!a.placeholder && !a.unregistered && !listed.contains(a.id) && std::max(a.lastActivityMs, a.knownSinceMs) < settled
            && federatedFrom(a.metadata).isEmpty())
            stale << a.id;
    if (unseen.isEmpty() && stale.isEmpty())
        return;
    const auto some = [this, &listedName](const QStringList &ids) -> QString { // a QString: a QStringBuilder would outlive its parts
        QStringList names;
        for (const QString &id : ids.mid(0, 5))
            names << listedName.value(id, agentName(id));
        return names.join(QStringLiteral(", ")) + (ids.size() > 5 ? QStringLiteral(", …") : QString());
    };
    QStringList parts;
    if (!unseen.isEmpty())
        parts << QStringLiteral("lists %1 agent(s) the model did not show (%2)").arg(unseen.size()).arg(some(unseen));
    if (!stale.isEmpty())
        parts << QStringLiteral("no longer lists %1 agent(s) the model showed as present (%2)").arg(stale.size()).arg(some(stale));
    const qint64 lastEvent = m_events.keptCount() ? m_events.back().timestampMs : 0;
    applyProblem(makeProblem(
        ProblemKind::Drift,
        QStringLiteral("the server's agent list differs from the model: it %1; events were missed%2. The model now follows "
                       "the server's list")
            .arg(parts.join(QStringLiteral(" and ")),
                 lastEvent ? QStringLiteral(" (the last event arrived at %1)")
                                 .arg(QDateTime::fromMSecsSinceEpoch(lastEvent).toUTC().toString(Qt::ISODateWithMs))
                           : QString()),
        {}, snapshot.timeMs));
}

void SystemStore::applyAgentsSnapshot(const AgentsSnapshot &snapshot)
{
    if (snapshot.reconcile && snapshot.complete)
        checkDrift(snapshot);
    const qint64 t = serverTime(snapshot.timeMs);
    m_nowMs = std::max(m_nowMs, t);
    QSet<QString> listed;
    for (const AgentRecord &r : snapshot.data.agents) {
        listed.insert(r.id);
        Agent &a = ensureAgent(r.id, t);
        if (&a == &m_agentPastLimit)
            continue;
        mergeAgent(a, r, t);
        Agent &fresh = m_agents[size_t(m_agentRow.value(r.id))];
        if (fresh.unregistered) { // back in the server's list: registered again
            fresh.unregistered = false;
            fresh.unregisteredAtMs = 0;
        }
    }
    if (!snapshot.complete)
        return;
    // A complete list is the server's truth: known agents absent from it are gone.
    for (size_t row = 0; row < m_agents.size(); ++row) {
        Agent &a = m_agents[row];
        if (!a.placeholder && !a.unregistered && !listed.contains(a.id)) {
            a.unregistered = true;
            a.unregisteredAtMs = t;
            markAgent(int(row)); // memberships follow map/scopes/members, as on the server
        }
    }
}

void SystemStore::applyScopesSnapshot(const ScopesSnapshot &snapshot)
{
    const qint64 t = serverTime(snapshot.timeMs);
    QSet<QString> listed;
    for (const ScopeRecord &r : snapshot.data.scopes) {
        listed.insert(r.id);
        Scope &s = ensureScope(r.id, t);
        s.placeholder = false;
        s.deleted = false;
        if (r.name)
            s.name = *r.name;
        if (r.parentId)
            s.parentId = *r.parentId;
        else
            s.parentId.clear();
        if (!r.metadata.is_null())
            s.metadata = r.metadata;
    }
    for (size_t row = 0; row < m_scopes.size(); ++row) {
        Scope &s = m_scopes[row];
        if (!s.placeholder && !s.deleted && !listed.contains(s.id)) {
            s.deleted = true;
            markScope(int(row));
            const QString scopeId = s.id;
            const IdSet members = std::move(s.members); // setMembership edits s.members
            for (const QString &agentId : members)
                setMembership(scopeId, agentId, false, t);
        }
    }
}

void SystemStore::applyMembers(const MembersSnapshot &snapshot)
{
    const QString &scopeId = snapshot.data.scopeId;
    if (scopeId.isEmpty())
        return;
    const qint64 t = serverTime(snapshot.timeMs);
    Scope &s = ensureScope(scopeId, t);
    // Another system's scope lists its members by their ids on that system (the SDK's
    // FederatedScopeManager), while its agents are listed here as "<system>:agent:<id>": joined
    // under those, or they would stand as placeholders beside themselves (map/Federation.h).
    QStringList members = snapshot.data.members;
    if (const QString system = federatedOrigin(scopeId, s.metadata, true); !system.isEmpty())
        for (QString &id : members)
            if (federatedSystemOfAddress(id).isEmpty())
                id = system + QStringLiteral(":agent:") + id;
    const IdSet now(members.cbegin(), members.cend());
    std::vector<QString> gone;
    for (const QString &agentId : s.members)
        if (now.count(agentId) == 0)
            gone.push_back(agentId);
    for (const QString &agentId : gone)
        setMembership(scopeId, agentId, false, t);
    for (const QString &agentId : std::as_const(members))
        setMembership(scopeId, agentId, true, t);
}

void SystemStore::applyGap(const Gap &gap)
{
    if (m_gaps.size() < kMaxGaps)
        m_gaps.push_back(gap);
    ++m_counters.gaps;
    if (gap.kind == Gap::Kind::Sequence)
        ++m_counters.sequenceGaps;
    m_pending.countersChanged = true;
}

void SystemStore::applyProblem(const ProtocolProblem &problem)
{
    m_observation.note(problem);
    const auto bytesOf = [](const ProtocolProblem &p) { return qint64(p.frame.size() + p.detail.size() * 2); };
    m_problems.push_back(problem);
    m_problemBytes += bytesOf(problem);
    if (m_problems.size() > kMaxProblems || m_problemBytes > kMaxProblemBytes) {
        const size_t gone = std::max<size_t>(1, m_problems.size() / 10);
        for (size_t i = 0; i < gone; ++i)
            m_problemBytes -= bytesOf(m_problems[i]);
        m_problems.erase(m_problems.begin(), m_problems.begin() + qsizetype(gone));
        m_problemsDropped += qint64(gone);
    }
    ++m_counters.problems;
    m_pending.countersChanged = true;
}

void SystemStore::applyConnection(const ConnectionInfo &info)
{
    const QString serverName = info.serverName.isEmpty() ? m_connection.serverName : info.serverName;
    const QString serverVersion = info.serverVersion.isEmpty() ? m_connection.serverVersion : info.serverVersion;
    const QString protocol = info.protocolVersion.isEmpty() ? m_connection.protocolVersion : info.protocolVersion;
    const QString session = info.sessionId.isEmpty() ? m_connection.sessionId : info.sessionId;
    const ConnectionInfo clock = m_connection; // measured by ClockInput, not by this
    m_connection = info;
    m_connection.serverName = serverName;
    m_connection.serverVersion = serverVersion;
    m_connection.protocolVersion = protocol;
    m_connection.sessionId = session;
    m_connection.clockOffsetMs = clock.clockOffsetMs;
    m_connection.clockSamples = clock.clockSamples;
    if (!info.handshake) { // a state change, not a map/connect answer: what it advertised stays
        m_connection.mail = clock.mail;
        m_connection.workspace = clock.workspace;
        m_connection.handshakeMs = clock.handshakeMs;
    } else {
        m_connection.handshakeMs = info.timeMs;
    }
    m_nowMs = std::max(m_nowMs, serverTime(info.timeMs));
    m_pending.connectionChanged = true;
}

void SystemStore::applyClock(const ClockInput &clock)
{
    m_connection.clockOffsetMs = clock.offsetMs;
    m_connection.clockSamples = clock.samples;
    m_pending.connectionChanged = true;
    // The one time "now" may go back: it was on the local clock (snapshots before the offset was
    // known) and is put on the server's, or else a server behind us would age every agent.
    m_nowMs = serverTime(clock.timeMs);
}

} // namespace mapi
