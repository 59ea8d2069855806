// What caused each message and what it caused, from what the messages themselves say.
//
// A message's cause, in this order:
//   1. the message it names: parent_message_id (seed 000 metadata), trace.parentSpan (002),
//      matched against message ids, envelope ids (000 message_id, 002 header.messageId, ...)
//      and span ids (002 trace.spanId); or, where the envelope names none, the message carried
//      by the first event of the MAP event's causedBy that carried one (the store resolves it):
//      Link::Parent;
//   2. else the newest earlier message of its conversation, preferring one that was sent to this
//      message's sender (what it answers): a conversation is one correlation id (000/004
//      metadata.correlation_id, 002 header.correlationId, MAP correlationId), else one task id
//      (003 task ids, handoffs), else one trace id (002 trace.traceId, a W3C traceparent in the
//      payload's _meta or metadata, or in the frame's params._meta):
//      Link::Correlation, Link::Task, Link::Trace;
//   3. else, for a JSON-RPC response carried in the payload (MCP, A2A, ...), the request of the
//      same id last sent to its sender: Link::Request.
// What a message led to: the messages whose cause it is. An event that carried a message has
// that message's chain; a task's chain is that of its first message (the one that carried its
// id first). Events that carried none are linked by MAP causedBy in the store's EventLog
// (causesOf, effectsOf), not here.
//
// Built on demand and then kept up to date: update() indexes the messages appended since the
// last call and forgets those a live session trimmed; reset() (the store's wasReset) starts
// over. Thread: the store's. Memory: 16 bytes per message (cause, first effect, next sibling,
// link kind), plus the
// newest message of each open conversation and recipient: at most kMaxOpenConversations
// entries, past which the half not used for longest is forgotten (their next message then
// starts a new chain).
#pragma once

#include "model/SystemStore.h"

#include <QHash>

#include <deque>
#include <limits>
#include <vector>

namespace mapi {

class CausalChains
{
public:
    enum class Link : quint8 { None, Parent, Correlation, Task, Trace, Request };
    static constexpr int kMaxOpenConversations = 1'000'000;

    explicit CausalChains(const SystemStore &store) : m_store(store) {}

    // Indexes up to `maxRows` more messages; true when every message is indexed. A large trace
    // is indexed in slices so that the window stays live (about 1 µs a message here).
    bool update(size_t maxRows = std::numeric_limits<size_t>::max());
    void reset();
    size_t pending() const; // messages not indexed yet
    int causeOf(int row) const;                 // -1: none known
    Link linkOf(int row) const;
    std::vector<int> effectsOf(int row) const;  // direct effects, oldest first
    // The causes of `row`, the root first and `row` last; at most `max` (the nearest kept).
    std::vector<int> chainTo(int row, int max = 1000) const;
    // `row` and everything it led to, breadth first, at most `max` rows.
    std::vector<int> ledTo(int row, int max = 1000) const;
    size_t memoryBytes() const;

    static QString linkName(Link link); // "parent", "correlation", "task", "trace"

private:
    struct Node
    {
        int cause = -1;
        int firstEffect = -1;   // newest effect (the list runs newest first)
        int nextSibling = -1;   // the next older effect of the same cause
        Link link = Link::None;
    };
    const Node *node(int row) const;
    void index(int row);
    void remember(const QString &key, int row);

    const SystemStore &m_store;
    size_t m_base = 0;                 // row of m_nodes[0]
    std::deque<Node> m_nodes;
    size_t m_indexedEnd = 0;           // rows below this are indexed
    struct Open
    {
        int row = -1;                  // the conversation's newest message (to that recipient)
        quint64 used = 0;              // when it was last touched (m_clock), to forget the stalest
    };
    // "key" and "key\x1frecipient" (key: "c:" correlation id, "t:" task id, "r:" trace id).
    QHash<QString, Open> m_open;
    quint64 m_clock = 0;
};

} // namespace mapi
