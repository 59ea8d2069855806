// What a server keeps beyond the core, in the store: conversations (mail) and trajectory
// checkpoints, from their events and from the pages of history the client asks for.
#include "model/SystemStore.h"

#include "map/Dialect.h"

namespace mapi {

void SystemStore::applyExtensionEvent(const MapEvent &e, qint64 t, int eventIndex)
{
    if (eventFamily(e.kind) == EventFamily::Trajectory)
        m_checkpoints.applyEvent(e, t, eventIndex);
    else
        m_conversations.applyEvent(e, t, eventIndex);
    touchAgent(resolveAgentRef(e.agentId), t);
    m_pending.conversationRows.unite(m_conversations.takeChangedRows());
    m_pending.checkpointsChanged = m_checkpoints.takeChanged() || m_pending.checkpointsChanged;
}

void SystemStore::applyExtensionPage(const ExtensionPage &page)
{
    if (page.method.startsWith(QLatin1String("map/federation/"))) {
        m_federation.apply(page.method, page.result, page.failed, page.errorCode, page.errorMessage, page.timeMs);
        m_pending.federationChanged = m_federation.takeChanged() || m_pending.federationChanged;
        return;
    }
    if (page.method.startsWith(QLatin1String("trajectory/")))
        m_checkpoints.applyPage(page.method, page.result);
    else if (page.method.startsWith(QLatin1String("mail/")))
        m_conversations.applyPage(page.method, page.params, page.result);
    m_pending.conversationRows.unite(m_conversations.takeChangedRows());
    m_pending.checkpointsChanged = m_checkpoints.takeChanged() || m_pending.checkpointsChanged;
}

void SystemStore::applyAcpFrame(const AcpFrame &frame, int messageRow, qint64 t, const QString &fromAgent,
                                const QString &rawFrom, const QString &toAgent)
{
    // A sender the console cannot name as an agent (an IDE's client session) by its own id.
    m_acp.apply(frame, messageRow, t, fromAgent.isEmpty() ? rawFrom : fromAgent, toAgent);
    m_pending.acpChanged = m_acp.takeChanged() || m_pending.acpChanged;
}

QString SystemStore::participantName(const QString &participant) const
{
    const QString agentId = resolveAgentRef(participant);
    if (!agentId.isEmpty())
        return agentName(agentId);
    // A session with no agent: a client (an IDE, a user's console), said as one, with its role.
    if (const auto session = m_sessions.constFind(participant); session != m_sessions.constEnd())
        return QStringLiteral("%1 session %2")
            .arg(session->role.isEmpty() ? QStringLiteral("client") : session->role,
                 participant.size() > 12 ? QString(participant.left(10) + u'…') : participant);
    return participant;
}

std::vector<SystemStore::ParticipantRow> SystemStore::conversationParticipants(const Conversation &c) const
{
    std::vector<ParticipantRow> rows;
    QHash<QString, size_t> rowOfAgent;
    for (const ConversationParticipant &p : c.participants) {
        const QString agentId = resolveAgentRef(p.id);
        if (!agentId.isEmpty()) {
            if (const auto it = rowOfAgent.constFind(agentId); it != rowOfAgent.cend()) {
                // The same agent from another session (or by its agent id): one row, in since
                // the first joined, out only when every one of its entries left.
                ParticipantRow &row = rows[*it];
                row.joinedMs = row.joinedMs && p.joinedMs ? std::min(row.joinedMs, p.joinedMs) : std::max(row.joinedMs, p.joinedMs);
                row.leftMs = row.leftMs && p.leftMs ? std::max(row.leftMs, p.leftMs) : 0;
                if (row.role.isEmpty())
                    row.role = p.role;
                continue;
            }
            rowOfAgent.insert(agentId, rows.size());
        }
        ParticipantRow &row = rows.emplace_back();
        row.agentId = agentId;
        row.name = participantName(p.id);
        row.role = p.role;
        // The server calls a session-id participant "user" even when that session is an
        // agent's: what it resolves to says more.
        row.type = agentId.isEmpty() ? p.type : QStringLiteral("agent");
        row.joinedMs = p.joinedMs;
        row.leftMs = p.leftMs;
    }
    return rows;
}

} // namespace mapi
