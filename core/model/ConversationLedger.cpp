#include "model/ConversationLedger.h"

#include <QDateTime>

#include <algorithm>

namespace mapi {

namespace {

const Json kNoObject = Json::object();

const Json &objectAt(const Json &object, std::string_view key)
{
    const Json *child = jsonChild(object, key);
    return child && child->is_object() ? *child : kNoObject;
}

// A time the SDK writes as ms since the epoch; an ISO 8601 string is read too.
qint64 timeAt(const Json &object, const char *key)
{
    const Json *child = jsonChild(object, key);
    if (!child)
        return 0;
    if (child->is_number())
        return saturatedInt(child->get<double>());
    if (child->is_string()) {
        const QDateTime t = QDateTime::fromString(toQString(*child), Qt::ISODateWithMs);
        return t.isValid() ? t.toMSecsSinceEpoch() : 0;
    }
    return 0;
}

void setIfGiven(QString &to, const QString &value)
{
    if (!value.isEmpty())
        to = value;
}

// What a turn says, readable: content.text for text turns (and any content with a text), a
// string content as it is, anything else as compact JSON.
QString readableContent(const Json &content)
{
    if (content.is_string())
        return toQString(content);
    if (const Json *text = jsonChild(content, "text"); text && text->is_string())
        return toQString(*text);
    return toQString(content);
}

} // namespace

const Conversation *ConversationLedger::find(const QString &id) const
{
    const int row = m_row.value(id, -1);
    return row < 0 ? nullptr : &m_conversations[size_t(row)];
}

Conversation *ConversationLedger::ensure(const QString &id, qint64 timeMs)
{
    if (id.isEmpty())
        return nullptr;
    int row = m_row.value(id, -1);
    if (row < 0) {
        if (int(m_conversations.size()) >= kMaxConversations) {
            ++m_conversationsNotKept;
            return nullptr;
        }
        row = int(m_conversations.size());
        Conversation &added = m_conversations.emplace_back();
        added.id = id;
        added.status = QStringLiteral("active");
        added.createdMs = timeMs;
        m_row.insert(id, row);
    }
    m_changed.insert(row);
    return &m_conversations[size_t(row)];
}

void ConversationLedger::applyEvent(const MapEvent &e, qint64 t, int eventRow)
{
    const Json &d = e.data;
    Conversation *c = ensure(jsonString(d, "conversationId"), t);
    if (!c)
        return;
    const int row = m_row.value(c->id);
    c->updatedMs = std::max(c->updatedMs, t);
    switch (e.kind) {
    case EventKind::ConversationCreated:
        setIfGiven(c->type, jsonString(d, "type"));
        setIfGiven(c->subject, jsonString(d, "subject"));
        setIfGiven(c->createdBy, jsonString(d, "createdBy"));
        setIfGiven(c->parentConversationId, jsonString(d, "parentConversationId"));
        c->createdMs = t;
        break;
    case EventKind::ConversationClosed:
        c->status = QStringLiteral("completed");
        c->closedMs = t;
        setIfGiven(c->closedBy, jsonString(d, "closedBy"));
        setIfGiven(c->closeReason, jsonString(d, "reason"));
        break;
    case EventKind::ParticipantJoined:
        addParticipant(*c, row, objectAt(d, "participant"));
        break;
    case EventKind::ParticipantLeft: {
        const QString id = jsonString(d, "participantId");
        for (ConversationParticipant &p : c->participants)
            if (p.id == id && p.leftMs == 0) {
                p.leftMs = t;
                p.leftReason = jsonString(d, "reason");
            }
        break;
    }
    case EventKind::TurnAdded:
        addTurn(*c, row, objectAt(d, "turn"), eventRow);
        break;
    case EventKind::TurnUpdated: {
        const QString id = jsonString(d, "turnId");
        for (ConversationTurn &turn : c->turns)
            if (turn.id == id)
                setIfGiven(turn.status, jsonString(d, "status"));
        break;
    }
    case EventKind::ThreadCreated:
        addThread(*c, row, objectAt(d, "thread"));
        break;
    default:
        break;
    }
}

void ConversationLedger::applyPage(const QString &method, const Json &params, const Json &result)
{
    if (!result.is_object())
        return;
    const auto each = [&](const char *key, const auto &apply) {
        if (const Json *list = jsonChild(result, key); list && list->is_array())
            for (const Json &item : *list)
                if (item.is_object())
                    apply(item);
    };
    if (method == QLatin1String("mail/list")) {
        each("conversations", [&](const Json &c) { mergeConversation(c); });
        return;
    }
    if (const Json *conversation = jsonChild(result, "conversation"); conversation && conversation->is_object())
        mergeConversation(*conversation); // mail/get, mail/join
    QString id = jsonString(params, "conversationId");
    if (id.isEmpty())
        id = jsonString(objectAt(result, "conversation"), "id");
    Conversation *c = ensure(id, 0);
    if (!c)
        return;
    const int row = m_row.value(id);
    each("participants", [&](const Json &p) { addParticipant(m_conversations[size_t(row)], row, p); });
    if (const Json *joined = jsonChild(result, "participant"); joined && joined->is_object()) // mail/join, mail/create
        addParticipant(m_conversations[size_t(row)], row, *joined);
    each("threads", [&](const Json &thread) { addThread(m_conversations[size_t(row)], row, thread); });
    for (const char *key : {"turns", "recentTurns", "history"})
        each(key, [&](const Json &turn) { addTurn(m_conversations[size_t(row)], row, turn, -1); });
    if (const Json *stats = jsonChild(result, "stats"); stats && stats->is_object())
        m_conversations[size_t(row)].serverTurnCount = jsonInt(*stats, "totalTurns", -1);
}

void ConversationLedger::mergeConversation(const Json &o)
{
    Conversation *c = ensure(jsonString(o, "id"), timeAt(o, "createdAt"));
    if (!c)
        return;
    setIfGiven(c->type, jsonString(o, "type"));
    setIfGiven(c->subject, jsonString(o, "subject"));
    setIfGiven(c->status, jsonString(o, "status"));
    setIfGiven(c->createdBy, jsonString(o, "createdBy"));
    setIfGiven(c->parentConversationId, jsonString(o, "parentConversationId"));
    if (const qint64 created = timeAt(o, "createdAt"))
        c->createdMs = created;
    c->updatedMs = std::max(c->updatedMs, timeAt(o, "updatedAt"));
    if (const qint64 closed = timeAt(o, "closedAt"))
        c->closedMs = closed;
}

void ConversationLedger::addParticipant(Conversation &c, int row, const Json &o)
{
    const QString id = jsonString(o, "id");
    if (id.isEmpty())
        return;
    const qint64 joined = timeAt(o, "joinedAt");
    auto it = std::find_if(c.participants.begin(), c.participants.end(),
                           [&](const ConversationParticipant &p) { return p.id == id; });
    if (it == c.participants.end()) {
        if (int(c.participants.size()) >= kMaxPerConversation)
            return;
        it = c.participants.insert(c.participants.end(), ConversationParticipant{});
        it->id = id;
    }
    setIfGiven(it->type, jsonString(o, "type"));
    setIfGiven(it->role, jsonString(o, "role"));
    if (joined)
        it->joinedMs = joined;
    if (const qint64 left = timeAt(o, "leftAt"))
        it->leftMs = left;
    m_changed.insert(row);
}

void ConversationLedger::addThread(Conversation &c, int row, const Json &o)
{
    const QString id = jsonString(o, "id");
    if (id.isEmpty() || int(c.threads.size()) >= kMaxPerConversation)
        return;
    if (std::any_of(c.threads.begin(), c.threads.end(), [&](const ConversationThread &t) { return t.id == id; }))
        return;
    ConversationThread &thread = c.threads.emplace_back();
    thread.id = id;
    thread.subject = jsonString(o, "subject");
    thread.rootTurnId = jsonString(o, "rootTurnId");
    thread.parentThreadId = jsonString(o, "parentThreadId");
    thread.createdBy = jsonString(o, "createdBy");
    thread.createdMs = timeAt(o, "createdAt");
    m_changed.insert(row);
}

void ConversationLedger::addTurn(Conversation &c, int row, const Json &o, int eventRow)
{
    const QString id = jsonString(o, "id");
    if (id.isEmpty())
        return;
    if (m_turnIds.contains(id)) {
        if (eventRow >= 0) // seen in history first: the event is where its frame is
            for (ConversationTurn &turn : c.turns)
                if (turn.id == id && turn.eventRow < 0)
                    turn.eventRow = eventRow;
        return;
    }
    ConversationTurn turn;
    turn.id = id;
    turn.participant = jsonString(o, "participant");
    turn.timeMs = timeAt(o, "timestamp");
    turn.contentType = jsonString(o, "contentType");
    if (const Json *content = jsonChild(o, "content")) {
        turn.text = readableContent(*content);
        if (turn.text.size() > kMaxTurnTextChars) {
            turn.text.truncate(kMaxTurnTextChars);
            turn.textCut = true;
        }
    }
    turn.threadId = jsonString(o, "threadId");
    turn.inReplyTo = jsonString(o, "inReplyTo");
    turn.status = jsonString(o, "status");
    const Json &source = objectAt(o, "source");
    if (jsonString(source, "type") == QLatin1String("intercepted"))
        turn.interceptedMessageId = jsonString(source, "messageId");
    turn.eventRow = eventRow;
    // By time; a turn of the same time goes after those already there (arrival order).
    const auto at = std::upper_bound(c.turns.begin(), c.turns.end(), turn.timeMs,
                                     [](qint64 t, const ConversationTurn &kept) { return t < kept.timeMs; });
    c.turns.insert(at, std::move(turn));
    m_turnIds.insert(id);
    m_turnOrder.push_back(row);
    ++m_turnCount;
    m_changed.insert(row);
    if (m_turnCount > kMaxTurns)
        dropOldestTurn();
}

void ConversationLedger::dropOldestTurn()
{
    while (!m_turnOrder.empty()) {
        const int row = m_turnOrder.front();
        m_turnOrder.pop_front();
        Conversation &c = m_conversations[size_t(row)];
        if (c.turns.empty())
            continue;
        m_turnIds.remove(c.turns.front().id);
        c.turns.pop_front();
        ++c.turnsNotKept;
        --m_turnCount;
        m_changed.insert(row);
        return;
    }
}

} // namespace mapi
