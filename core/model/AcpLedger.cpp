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
    case AcpFrame::Kind::Request:
        s.exchanges.push_back({f.id, f.method, f.direction, f.text, QString(), false, messageRow, -1, t, 0});
        break;
    case AcpFrame::Kind::Response: {
        // The latest request of that id still waiting (ids are unique per stream in the SDK); an
        // answer to nothing seen is kept as an exchange of its own.
        const auto waiting = std::find_if(s.exchanges.rbegin(), s.exchanges.rend(),
                                          [&](const AcpExchange &x) { return x.id == f.id && x.responseRow < 0; });
        AcpExchange &x = waiting != s.exchanges.rend() ? *waiting : s.exchanges.emplace_back();
        x.id = f.id;
        x.answer = f.text;
        x.error = f.error;
        x.responseRow = messageRow;
        x.responseMs = t;
        break;
    }
    case AcpFrame::Kind::Notification:
        s.notices.push_back({f.method, f.update, f.text, f.toolCallId, f.toolStatus, messageRow, t});
        break;
    }
}

} // namespace mapi
