#include "model/AcpLedger.h"

#include <algorithm>

namespace mapi {

int AcpStream::pending() const
{
    return int(std::count_if(exchanges.begin(), exchanges.end(), [](const AcpExchange &x) { return x.responseRow < 0; }));
}

QString AcpStream::transcript() const
{
    QString text;
    for (const AcpNotice &n : notices)
        if (n.update == QLatin1String("agent_message_chunk"))
            text += n.text;
    return text;
}

const AcpStream *AcpLedger::find(const QString &streamId) const
{
    const int row = m_row.value(streamId, -1);
    return row < 0 ? nullptr : &m_streams[size_t(row)];
}

void AcpLedger::apply(const AcpFrame &f, int messageRow, qint64 t, const QString &fromAgent, const QString &toAgent)
{
    int row = m_row.value(f.streamId, -1);
    if (row < 0) {
        if (int(m_streams.size()) >= kMaxStreams) {
            ++m_streamsNotKept;
            return;
        }
        row = int(m_streams.size());
        m_streams.emplace_back().streamId = f.streamId;
        m_streams.back().firstMs = t;
        m_row.insert(f.streamId, row);
    }
    AcpStream &s = m_streams[size_t(row)];
    m_changed = true;
    s.lastMs = std::max(s.lastMs, t);
    if (!f.sessionId.isEmpty())
        s.sessionId = f.sessionId;
    const bool fromClient = f.direction == QLatin1String("client-to-agent");
    if (fromClient && s.clientRef.isEmpty())
        s.clientRef = fromAgent;
    if (s.agentId.isEmpty())
        s.agentId = fromClient ? toAgent : fromAgent;
    if (int(s.exchanges.size() + s.notices.size()) >= kMaxFramesPerStream) {
        ++s.framesNotKept;
        return;
    }
    switch (f.kind) {
    case AcpFrame::Kind::Request: {
        AcpExchange &x = s.exchanges.emplace_back();
        x.id = f.id;
        x.method = f.method;
        x.direction = f.direction;
        x.text = f.text;
        x.requestRow = messageRow;
        x.requestMs = t;
        break;
    }
    case AcpFrame::Kind::Response: {
        // The latest request of that id still waiting (ids are unique per stream in the SDK).
        const auto it = std::find_if(s.exchanges.rbegin(), s.exchanges.rend(),
                                     [&](const AcpExchange &x) { return x.id == f.id && x.responseRow < 0; });
        if (it == s.exchanges.rend()) { // an answer to nothing seen: kept as a lone exchange
            AcpExchange &x = s.exchanges.emplace_back();
            x.id = f.id;
            x.answer = f.text;
            x.error = f.error;
            x.responseRow = messageRow;
            x.responseMs = t;
            break;
        }
        it->answer = f.text;
        it->error = f.error;
        it->responseRow = messageRow;
        it->responseMs = t;
        break;
    }
    case AcpFrame::Kind::Notification: {
        AcpNotice &n = s.notices.emplace_back();
        n.method = f.method;
        n.update = f.update;
        n.text = f.text;
        n.toolCallId = f.toolCallId;
        n.toolStatus = f.toolStatus;
        n.messageRow = messageRow;
        n.timeMs = t;
        break;
    }
    }
}

void AcpLedger::clear()
{
    AcpLedger empty;
    swap(empty);
}

void AcpLedger::swap(AcpLedger &other)
{
    std::swap(m_streams, other.m_streams);
    std::swap(m_row, other.m_row);
    std::swap(m_streamsNotKept, other.m_streamsNotKept);
    std::swap(m_changed, other.m_changed);
}

} // namespace mapi
