// Causes and effects of messages (model/CausalChains.h says how they are found).
#include "model/CausalChains.h"

#include <algorithm>

namespace mapi {

QString CausalChains::linkName(Link link)
{
    switch (link) {
    case Link::None: return {};
    case Link::Parent: return QStringLiteral("parent");
    case Link::Correlation: return QStringLiteral("correlation");
    case Link::Task: return QStringLiteral("task");
    case Link::Trace: return QStringLiteral("trace");
    case Link::Request: return QStringLiteral("request");
    }
    return {};
}

void CausalChains::reset()
{
    m_nodes.clear();
    m_open.clear();
    m_base = m_indexedEnd = m_store.messages().firstRow();
    m_clock = 0;
}

size_t CausalChains::pending() const
{
    const size_t end = m_store.messages().size();
    return end > m_indexedEnd ? end - m_indexedEnd : 0;
}

bool CausalChains::update(size_t maxRows)
{
    const MessageLog &messages = m_store.messages();
    if (messages.size() < m_indexedEnd) { // the store was emptied without reset()
        reset();
    }
    // Rows a live session trimmed: their nodes go; links to them read as none (below m_base).
    while (m_base < messages.firstRow() && !m_nodes.empty()) {
        m_nodes.pop_front();
        ++m_base;
    }
    if (m_nodes.empty()) {
        m_base = std::max(m_base, messages.firstRow());
        m_indexedEnd = std::max(m_indexedEnd, m_base);
    }
    for (size_t done = 0; m_indexedEnd < messages.size() && done < maxRows; ++m_indexedEnd, ++done)
        index(int(m_indexedEnd));
    return m_indexedEnd >= messages.size();
}

const CausalChains::Node *CausalChains::node(int row) const
{
    if (row < 0 || size_t(row) < m_base || size_t(row) - m_base >= m_nodes.size())
        return nullptr;
    return &m_nodes[size_t(row) - m_base];
}

void CausalChains::remember(const QString &key, int row)
{
    if (m_open.size() >= kMaxOpenConversations && !m_open.contains(key)) {
        // Forget the half used longest ago.
        std::vector<quint64> uses;
        uses.reserve(size_t(m_open.size()));
        for (auto it = m_open.cbegin(); it != m_open.cend(); ++it)
            uses.push_back(it->used);
        std::nth_element(uses.begin(), uses.begin() + qsizetype(uses.size() / 2), uses.end());
        const quint64 median = uses[uses.size() / 2];
        for (auto it = m_open.begin(); it != m_open.end();)
            it = it->used <= median ? m_open.erase(it) : std::next(it);
    }
    m_open[key] = {row, ++m_clock};
}

void CausalChains::index(int row)
{
    const MessageLog &messages = m_store.messages();
    Node n;
    const auto kept = [this](int r) { return r >= 0 && size_t(r) >= m_base; };
    if (const QString parent = messages.parentRef(size_t(row)); !parent.isEmpty()) {
        int p = messages.find(parent);
        if (p < 0 || p >= row)
            p = messages.findByEnvelopeOrSpan(parent);
        if (kept(p) && p < row) {
            n.cause = p;
            n.link = Link::Parent;
        }
    }
    QString key;
    Link kind = Link::None;
    if (const QString correlation = messages.correlationId(size_t(row)); !correlation.isEmpty()) {
        key = QStringLiteral("c:") + correlation;
        kind = Link::Correlation;
    } else if (const QString &task = messages.taskId(size_t(row)); !task.isEmpty()) {
        key = QStringLiteral("t:") + task;
        kind = Link::Task;
    } else if (const QString trace = messages.traceId(size_t(row)); !trace.isEmpty()) {
        key = QStringLiteral("r:") + trace;
        kind = Link::Trace;
    }
    static const QChar kSeparator(0x1f);
    if (!key.isEmpty()) {
        if (n.cause < 0) {
            // What this message answers: the newest earlier one of its conversation sent to its
            // sender; else the conversation's newest.
            const QString &sender = messages.fromAgentId(size_t(row));
            auto answered = sender.isEmpty() ? m_open.constEnd() : m_open.constFind(key + kSeparator + sender);
            if (answered == m_open.constEnd() || !kept(answered->row))
                answered = m_open.constFind(key);
            if (answered != m_open.constEnd() && kept(answered->row)) {
                n.cause = answered->row;
                n.link = kind;
            }
        }
        remember(key, row);
        constexpr int kRecipientsRemembered = 16; // a broadcast's first few: enough to find its answers
        const int recipients = std::min(messages.recipientCount(size_t(row)), kRecipientsRemembered);
        for (int i = 0; i < recipients; ++i)
            remember(key + kSeparator + messages.recipient(size_t(row), i), row);
    }
    // A JSON-RPC response answers the request of its id that its recipient sent to its sender;
    // nothing else pairs them (every client numbers its requests from 0 or 1), so the key holds
    // the id, the requester and the responder, and there is no fallback.
    if (const QString rpc = messages.rpcRef(size_t(row)); !rpc.isEmpty()) {
        const QString rpcKey = QStringLiteral("j:") + QStringView(rpc).mid(1) + kSeparator;
        const QString &sender = messages.fromAgentId(size_t(row));
        const int recipients = std::min(messages.recipientCount(size_t(row)), 16);
        if (rpc.front() == QLatin1Char('<')) {
            // The requester as the response names it; or a requester the store could not
            // name (a sender that is not an agent it knows).
            for (int i = 0; i <= recipients && n.cause < 0 && !sender.isEmpty(); ++i) {
                const QString requester = i < recipients ? messages.recipient(size_t(row), i) : QString();
                const auto request = m_open.constFind(rpcKey + requester + kSeparator + sender);
                if (request != m_open.constEnd() && kept(request->row)) {
                    n.cause = request->row;
                    n.link = Link::Request;
                }
            }
        } else {
            for (int i = 0; i < recipients; ++i)
                remember(rpcKey + sender + kSeparator + messages.recipient(size_t(row), i), row);
        }
    }
    if (n.cause >= 0) {
        Node &cause = m_nodes[size_t(n.cause) - m_base];
        n.nextSibling = cause.firstEffect;
        cause.firstEffect = row;
    }
    m_nodes.push_back(n);
}

int CausalChains::causeOf(int row) const
{
    const Node *n = node(row);
    return n && node(n->cause) ? n->cause : -1;
}

CausalChains::Link CausalChains::linkOf(int row) const
{
    return causeOf(row) >= 0 ? node(row)->link : Link::None;
}

std::vector<int> CausalChains::effectsOf(int row) const
{
    std::vector<int> out;
    const Node *n = node(row);
    for (int e = n ? n->firstEffect : -1; e >= 0; e = node(e) ? node(e)->nextSibling : -1)
        out.push_back(e);
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<int> CausalChains::chainTo(int row, int max) const
{
    std::vector<int> out;
    for (int r = node(row) ? row : -1; r >= 0 && int(out.size()) < max; r = causeOf(r))
        out.push_back(r);
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<int> CausalChains::ledTo(int row, int max) const
{
    std::vector<int> out;
    if (!node(row))
        return out;
    out.push_back(row);
    for (size_t i = 0; i < out.size() && int(out.size()) < max; ++i)
        for (const int e : effectsOf(out[i])) {
            if (int(out.size()) >= max)
                break;
            out.push_back(e);
        }
    return out;
}

size_t CausalChains::memoryBytes() const
{
    size_t keys = 0;
    for (auto it = m_open.cbegin(); it != m_open.cend(); ++it)
        keys += size_t(it.key().size()) * 2;
    return m_nodes.size() * sizeof(Node) + size_t(m_open.size()) * (sizeof(QString) + sizeof(Open) + 32) + keys;
}

} // namespace mapi
