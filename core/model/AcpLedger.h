// ACP (Agent Client Protocol) sessions tunnelled through MAP messages (map-extensions.md §6):
// the frames of each stream (payload.acpContext.streamId) grouped, requests paired with their
// responses by JSON-RPC id, and the session/update notifications kept in order (message
// chunks make the transcript, tool calls their list). Read from the messages the store applies
// (ConventionInfo::acp), so a trace replays and exports them like the rest.
//
// Bounded: at most kMaxStreams streams (past it a new one is not kept, counted) and
// kMaxFramesPerStream frames each (past it the stream's further frames are counted, not kept);
// texts are cut at AcpFrame::kMaxTextChars. The whole frames stay in the messages' payloads.
// Thread: the store's.
#pragma once

#include "map/PayloadConventions.h"

#include <QHash>

#include <utility>
#include <vector>

namespace mapi {

// A request and, once it came, its response.
struct AcpExchange
{
    QString id;
    QString method;
    QString direction;       // of the request
    QString text;            // the request's readable text (a prompt)
    QString answer;          // the response's readable text (a stop reason, a session, an error)
    bool error = false;
    int requestRow = -1;     // message rows (SystemStore::messages())
    int responseRow = -1;    // -1: no response yet
    qint64 requestMs = 0;
    qint64 responseMs = 0;
};

// A notification (session/update and the like).
struct AcpNotice
{
    QString method;
    QString update;          // sessionUpdate: agent_message_chunk, tool_call, tool_call_update, plan...
    QString text;
    QString toolCallId;
    QString toolStatus;
    int messageRow = -1;
    qint64 timeMs = 0;
};

struct AcpStream
{
    QString streamId;
    QString sessionId;       // the ACP session, once a frame named it
    QString clientRef;       // who opened it: the sender of its first client-to-agent frame
    QString agentId;         // the agent it talks to
    qint64 firstMs = 0;
    qint64 lastMs = 0;
    std::vector<AcpExchange> exchanges;
    std::vector<AcpNotice> notices;
    qint64 framesNotKept = 0;
    int pending() const;     // requests without a response
    QString transcript() const; // the agent's message chunks, joined
};

class AcpLedger
{
public:
    static constexpr int kMaxStreams = 10000;
    static constexpr int kMaxFramesPerStream = 2000;

    const std::vector<AcpStream> &streams() const { return m_streams; }
    const AcpStream *find(const QString &streamId) const;
    qint64 streamsNotKept() const { return m_streamsNotKept; }

    // One frame, carried by message `messageRow` from `fromAgent` (resolved; may be empty) to
    // `toAgent`.
    void apply(const AcpFrame &frame, int messageRow, qint64 timeMs, const QString &fromAgent, const QString &toAgent);

    bool takeChanged() { return std::exchange(m_changed, false); }
    void clear() { *this = AcpLedger(); }

private:
    std::vector<AcpStream> m_streams;
    QHash<QString, int> m_row;
    qint64 m_streamsNotKept = 0;
    bool m_changed = false;
};

} // namespace mapi
