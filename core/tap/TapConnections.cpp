#include "tap/TapConnections.h"

#include "protocol/JsonRpc.h"

#include <QUrl>

#include <algorithm>

namespace mapi {

namespace {

// Only the frames that can name a participant are parsed: the rest are counted by their shape.
bool has(const QByteArray &frame, const char *text)
{
    return frame.contains(text);
}

} // namespace

TapConnection *TapConnections::connection(int conn)
{
    if (const auto it = m_indexOfConn.constFind(conn); it != m_indexOfConn.constEnd())
        return &m_connections[size_t(*it)];
    if (int(m_connections.size()) >= kMaxConnections) {
        ++m_notFollowed;
        return nullptr;
    }
    m_indexOfConn.insert(conn, int(m_connections.size()));
    TapConnection c;
    c.conn = conn;
    m_connections.push_back(std::move(c));
    return &m_connections.back();
}

void TapConnections::widen()
{
    m_bucketMs *= 2;
    for (TapConnection &c : m_connections) {
        if (c.buckets.empty()) {
            if (c.firstBucket >= 0)
                c.firstBucket /= 2;
            continue;
        }
        // Bucket g (global) becomes g / 2: the first one's half leads the merged list.
        const qint64 newFirst = c.firstBucket / 2;
        std::vector<TapActivityBucket> merged(size_t((c.firstBucket + qint64(c.buckets.size()) - 1) / 2 - newFirst + 1));
        for (size_t i = 0; i < c.buckets.size(); ++i) {
            TapActivityBucket &m = merged[size_t((c.firstBucket + qint64(i)) / 2 - newFirst)];
            m.sent += c.buckets[i].sent;
            m.received += c.buckets[i].received;
            m.errors += c.buckets[i].errors;
        }
        c.firstBucket = newFirst;
        c.buckets = std::move(merged);
    }
}

TapActivityBucket *TapConnections::bucketAt(TapConnection &c, qint64 timeMs)
{
    if (m_firstMs < 0)
        return nullptr;
    // Both clamped to [kEarliestMs, kLatestMs]: no overflow; a stamp before the first is the first's.
    const auto globalIndex = [&] { return std::max<qint64>(0, timeMs - m_firstMs) / m_bucketMs; };
    qint64 index = globalIndex();
    if (c.firstBucket < 0)
        c.firstBucket = index;
    while (index - c.firstBucket >= kMaxBuckets) {
        widen();
        index = globalIndex();
    }
    const qint64 local = std::max<qint64>(0, index - c.firstBucket); // out of order: its first bucket
    if (qint64(c.buckets.size()) <= local)
        c.buckets.resize(size_t(local) + 1);
    return &c.buckets[size_t(local)];
}

void TapConnections::add(const TraceRecord &record)
{
    const RecordDir dir = recordDir(record.dir);
    const qint64 timeMs = std::clamp(record.timeMs, kEarliestMs, kLatestMs);
    if (m_firstMs < 0)
        m_firstMs = timeMs;
    m_lastMs = std::max(m_lastMs, timeMs);
    if (record.dir == QLatin1String("note")) {
        const QString text = QString::fromUtf8(record.raw.left(kMaxNoteChars * 4)).left(kMaxNoteChars);
        if (record.connection > 0 && m_indexOfConn.contains(record.connection)) {
            TapConnection *c = connection(record.connection);
            if (c->notes.size() < kMaxNotes)
                c->notes << text;
            return;
        }
        if (m_notes.size() < kMaxNotes)
            m_notes << text;
        return;
    }
    if (dir != RecordDir::Open && dir != RecordDir::Close && dir != RecordDir::Send && dir != RecordDir::Recv)
        return;
    TapConnection *c = connection(record.connection);
    if (!c)
        return;
    switch (dir) {
    case RecordDir::Open:
        c->openedMs = timeMs;
        c->url = QString::fromUtf8(record.raw.left(kMaxNoteChars * 4)).left(kMaxNoteChars);
        if (c->who.isEmpty())
            c->who = QUrl(c->url).path();
        break;
    case RecordDir::Close: {
        c->closedMs = timeMs;
        // "<by> closed (<code and reason>)", as WebSocketTap writes it; another recorder's reason whole.
        const QString text = QString::fromUtf8(record.raw.left(kMaxNoteChars * 4)).left(kMaxNoteChars);
        const qsizetype at = text.indexOf(QLatin1String(" closed ("));
        if (at > 0 && text.endsWith(QLatin1Char(')'))) {
            c->closedBy = text.left(at);
            c->closeText = text.mid(at + 9, text.size() - at - 10);
        } else {
            c->closeText = text;
        }
        break;
    }
    case RecordDir::Send: {
        ++c->sent;
        if (TapActivityBucket *b = bucketAt(*c, timeMs))
            ++b->sent;
        if (!has(record.raw, "\"method\""))
            break;
        const Json frame = Json::parse(record.raw.constBegin(), record.raw.constEnd(), nullptr, false);
        if (!frame.is_object())
            break;
        c->requests += frame.contains("id") && frame.contains("method");
        const Json *params = jsonChild(frame, "params");
        if (c->role.isEmpty() && jsonString(frame, "method") == QLatin1String("map/connect") && params && params->is_object()) {
            const QString name = jsonString(*params, "name").left(kMaxNoteChars);
            c->role = jsonString(*params, "participantType").left(kMaxNoteChars);
            if (!name.isEmpty())
                c->who = name;
            else if (!c->role.isEmpty())
                c->who = c->role;
        }
        break;
    }
    case RecordDir::Recv: {
        ++c->received;
        bool error = false;
        const bool method = has(record.raw, "\"method\"");
        const bool errorWord = has(record.raw, "\"error\"");
        if (method && !errorWord && (has(record.raw, "\"map/event\"") || has(record.raw, "\"map/message\""))) {
            ++c->notifications; // the bulk of a trace: MAP's notifications, counted without a parse
        } else if (method || errorWord) { // the rest by their top-level members
            const Json frame = Json::parse(record.raw.constBegin(), record.raw.constEnd(), nullptr, false);
            if (frame.is_object()) {
                error = frame.contains("error");
                c->notifications += frame.contains("method") && !frame.contains("id");
            }
        }
        c->errors += error;
        if (TapActivityBucket *b = bucketAt(*c, timeMs)) {
            ++b->received;
            b->errors += error;
        }
        break;
    }
    default:
        break;
    }
}

} // namespace mapi
