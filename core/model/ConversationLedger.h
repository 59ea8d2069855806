// The conversations a MAP server keeps when its host enables mail (MAPServer `mail:{enabled}`):
// each conversation with its participants, threads and turns, from the `mail.*` events and from
// the pages of history the client asks for (mail/list, mail/get, mail/turns/list,
// mail/thread/list, mail/replay results: SystemStore::applyExtensionPage()).
//
// Participants are kept as the server names them: a session id (the creator and whoever joined)
// or an agent id (initial participants). SystemStore::conversationParticipants() shows them by
// agent, one row per agent.
//
// Bounded (a console runs for days): at most kMaxConversations conversations (rows are never
// removed; past the bound a new one is not kept and is counted), kMaxTurns turns over all of them
// (past it the oldest go first, counted per conversation: the server still has them), and a
// turn's readable text cut at kMaxTurnTextChars (its whole content stays in the event's frame,
// which the inspector opens). Participants and threads: kMaxPerConversation each.
// Thread: the store's.
#pragma once

#include "map/MapTypes.h"
#include "protocol/JsonRpc.h"

#include <QHash>
#include <QSet>

#include <deque>
#include <utility>
#include <vector>

namespace mapi {

struct ConversationTurn
{
    QString id;
    QString participant;          // as the server names it: a session id or an agent id
    qint64 timeMs = 0;
    QString contentType;          // text, data, event, reference or x-*
    QString text;                 // content.text, else the content as compact JSON; cut (textCut)
    bool textCut = false;
    QString threadId;
    QString inReplyTo;            // a turn id
    QString interceptedMessageId; // source.type "intercepted": the map/send message it records
    QString status;
    int eventRow = -1;            // the mail.turn.added event (-1: known from a history page)
};

struct ConversationParticipant
{
    QString id;                   // as the server names it (see ConversationTurn::participant)
    QString type;                 // "agent" or "user"
    QString role;
    qint64 joinedMs = 0;
    qint64 leftMs = 0;            // 0: still in
    QString leftReason;
};

struct ConversationThread
{
    QString id;
    QString subject;
    QString rootTurnId;
    QString parentThreadId;
    QString createdBy;
    qint64 createdMs = 0;
};

struct Conversation
{
    QString id;
    QString type;                 // user-session, agent-task, multi-agent, mixed, or any string
    QString subject;
    QString status;               // active, completed, ...
    qint64 createdMs = 0, updatedMs = 0, closedMs = 0; // ms since the epoch, the server's clock
    QString createdBy, closedBy;  // participant ids, as the server names them
    QString closeReason;
    QString parentConversationId;
    std::vector<ConversationParticipant> participants;
    std::vector<ConversationThread> threads;
    std::deque<ConversationTurn> turns; // by time (ties: arrival order)
    qint64 turnsNotKept = 0;      // older turns dropped past kMaxTurns (the server still has them)
    qint64 serverTurnCount = -1;  // mail/get stats.totalTurns, when asked (-1: unknown)
};

class ConversationLedger
{
public:
    static constexpr int kMaxConversations = 10000;
    static constexpr int kMaxTurns = 100000;
    static constexpr int kMaxTurnTextChars = 4000;
    static constexpr int kMaxPerConversation = 1000; // participants, and threads

    const std::vector<Conversation> &conversations() const { return m_conversations; }
    const Conversation *find(const QString &id) const;
    bool empty() const { return m_conversations.empty(); }
    qint64 turnCount() const { return m_turnCount; }
    qint64 conversationsNotKept() const { return m_conversationsNotKept; }

    // A mail.* event (`eventRow`: its row in the store's event log).
    void applyEvent(const MapEvent &event, qint64 timeMs, int eventRow);
    // A page of history: the result of `method` (canonical) asked with `params`.
    void applyPage(const QString &method, const Json &params, const Json &result);

    // The rows changed since the last call (new ones included).
    bool hasChanges() const { return !m_changed.isEmpty(); }
    QSet<int> takeChangedRows() { return std::exchange(m_changed, {}); }

    void clear() { *this = ConversationLedger(); }

private:
    Conversation *ensure(const QString &id, qint64 timeMs); // null past kMaxConversations
    void mergeConversation(const Json &object);
    void addParticipant(Conversation &c, int row, const Json &participant);
    void addThread(Conversation &c, int row, const Json &thread);
    void addTurn(Conversation &c, int row, const Json &turn, int eventRow);
    void dropOldestTurn();

    std::vector<Conversation> m_conversations;
    QHash<QString, int> m_row;
    // Every kept turn's conversation row, in the order the turns were added: the bound drops
    // from the front (each conversation's oldest turn).
    std::deque<int> m_turnOrder;
    QSet<QString> m_turnIds;       // of the kept turns: a turn seen live and in history is one turn
    qint64 m_turnCount = 0;
    qint64 m_conversationsNotKept = 0;
    QSet<int> m_changed;
};

} // namespace mapi
