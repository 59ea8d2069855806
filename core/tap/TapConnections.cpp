#include "tap/TapConnections.h"

#include "protocol/JsonRpc.h"

#include <QUrl>

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
        return *it < 0 ? nullptr : &m_connections[size_t(*it)];
    if (int(m_connections.size()) >= kMaxConnections) {
        ++m_notFollowed;
        m_indexOfConn.insert(conn, -1);
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
        std::vector<TapActivityBucket> merged((c.buckets.size() + 1) / 2);
        for (size_t i = 0; i < c.buckets.size(); ++i) {
            TapActivityBucket &m = merged[i / 2];
            m.sent += c.buckets[i].sent;
            m.received += c.buckets[i].received;
            m.errors += c.buckets[i].errors;
        }
        c.buckets = std::move(merged);
    }
}

TapActivityBucket *TapConnections::bucketAt(TapConnection &c, qint64 timeMs)
{
    if (m_firstMs < 0)
        return nullptr;
    qint64 index = std::max<qint64>(0, timeMs - m_firstMs) / m_bucketMs;
    while (index >= kMaxBuckets) {
        widen();
        index = std::max<qint64>(0, timeMs - m_firstMs) / m_bucketMs;
    }
    if (qint64(c.buckets.size()) <= index)
        c.buckets.resize(size_t(index) + 1);
    return &c.buckets[size_t(index)];
}

void TapConnections::add(const TraceRecord &record)
{
    const RecordDir dir = recordDir(record.dir);
    if (m_firstMs < 0)
        m_firstMs = record.timeMs;
    m_lastMs = std::max(m_lastMs, record.timeMs);
    if (record.dir == QLatin1String("note")) {
        const QString text = QString::fromUtf8(record.raw);
        if (record.connection > 0)
            if (TapConnection *c = m_indexOfConn.contains(record.connection) ? connection(record.connection) : nullptr) {
                c->notes << text;
                return;
            }
        if (m_notes.size() < 100)
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
        c->openedMs = record.timeMs;
        c->url = QString::fromUtf8(record.raw);
        if (c->who.isEmpty())
            c->who = QUrl(c->url).path();
        break;
    case RecordDir::Close: {
        c->closedMs = record.timeMs;
        // "<by> closed (<code and reason>)", as WebSocketTap writes it; another recorder's reason whole.
        const QString text = QString::fromUtf8(record.raw);
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
        if (TapActivityBucket *b = bucketAt(*c, record.timeMs))
            ++b->sent;
        if (!has(record.raw, "\"method\""))
            break;
        const Json frame = Json::parse(record.raw.constBegin(), record.raw.constEnd(), nullptr, false);
        if (!frame.is_object())
            break;
        c->requests += frame.contains("id") && frame.contains("method");
        const Json *params = jsonChild(frame, "params");
        if (c->role.isEmpty() && frame.value("method", std::string()) == "map/connect" && params && params->is_object()) {
            const std::string name = params->value("name", std::string());
            const std::string type = params->value("participantType", std::string());
            c->role = QString::fromStdString(type);
            if (!name.empty())
                c->who = QString::fromStdString(name);
            else if (!type.empty())
                c->who = QString::fromStdString(type);
        }
        break;
    }
    case RecordDir::Recv: {
        ++c->received;
        bool error = false;
        if (has(record.raw, "\"method\"")) {
            // An event or a message (MAP's notifications); anything else with a method is parsed:
            // a request to the participant has an id of its own.
            if (has(record.raw, "\"map/event\"") || has(record.raw, "\"map/message\"")) {
                ++c->notifications;
            } else {
                const Json frame = Json::parse(record.raw.constBegin(), record.raw.constEnd(), nullptr, false);
                c->notifications += frame.is_object() && !frame.contains("id");
            }
        } else if (has(record.raw, "\"error\"")) { // only these are parsed: is "error" the answer's own member?
            const Json frame = Json::parse(record.raw.constBegin(), record.raw.constEnd(), nullptr, false);
            error = frame.is_object() && frame.contains("error");
        }
        c->errors += error;
        if (TapActivityBucket *b = bucketAt(*c, record.timeMs)) {
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
