#include "session/ContentStreams.h"

#include <QCryptographicHash>

namespace mapi {

void ContentStreams::addChunk(const Json &params, qint64 nowMs)
{
    const QString id = jsonString(params, "streamId");
    if (id.isEmpty())
        return;
    if (!m_streams.contains(id) && m_streams.size() >= kMaxStreams) {
        auto oldest = m_streams.begin();
        for (auto it = m_streams.begin(); it != m_streams.end(); ++it)
            if (it->firstMs < oldest->firstMs)
                oldest = it;
        if (oldest->done)
            oldest->done(false, {}, QStringLiteral("dropped: more than %1 content streams at once").arg(kMaxStreams));
        m_streams.erase(oldest);
    }
    Stream &s = m_streams[id];
    if (s.firstMs == 0)
        s.firstMs = nowMs;
    s.lastMs = nowMs;
    if (s.failed)
        return;
    const qint64 index = jsonInt(params, "index", -1);
    const Json *text = jsonChild(params, "data");
    const auto decoded = QByteArray::fromBase64Encoding(
        text && text->is_string() ? QByteArray::fromStdString(text->get<std::string>()) : QByteArray(),
        QByteArray::AbortOnBase64DecodingErrors);
    const QByteArray &data = decoded.decoded;
    if (index < 0 || !text || !text->is_string() || decoded.decodingStatus != QByteArray::Base64DecodingStatus::Ok) {
        s.failed = true;
        s.error = QStringLiteral("chunk %1 is not readable (index or base64)").arg(index);
    } else if (!s.chunks.contains(index)) {
        s.bytes += data.size();
        s.chunks.insert(index, data);
        if (s.bytes > kMaxBytes) {
            s.failed = true;
            s.error = QStringLiteral("larger than %1 MiB: not fetched whole").arg(kMaxBytes >> 20);
            s.chunks.clear();
        }
    }
    if (const Json *final = jsonChild(params, "final"); final && final->is_boolean() && final->get<bool>()) {
        s.finalIndex = index;
        s.checksum = jsonString(params, "checksum").toLower();
    }
    settle(id);
}

void ContentStreams::await(const QString &streamId, Done done)
{
    // Awaited before any chunk came: expire() starts its clock at its next call.
    Stream &s = m_streams[streamId];
    s.done = std::move(done);
    settle(streamId);
}

void ContentStreams::cancel(const QString &streamId)
{
    m_streams.remove(streamId);
}

void ContentStreams::expire(qint64 nowMs)
{
    QStringList stalled;
    for (auto it = m_streams.begin(); it != m_streams.end(); ++it) {
        if (it->lastMs == 0) // awaited before any chunk came: the wait starts now
            it->lastMs = it->firstMs = nowMs;
        else if (nowMs - it->lastMs >= kStallMs && !it->failed) {
            it->failed = true;
            it->error = QStringLiteral("no chunk for %1 s: the stream stopped").arg(kStallMs / 1000);
            stalled << it.key();
        }
    }
    for (const QString &id : std::as_const(stalled))
        settle(id);
}

void ContentStreams::settle(const QString &streamId)
{
    const auto it = m_streams.find(streamId);
    if (it == m_streams.end() || !it->done)
        return;
    Stream &s = *it;
    if (s.failed) {
        const Done done = std::move(s.done);
        const QString error = s.error;
        m_streams.erase(it);
        done(false, {}, error);
        return;
    }
    if (s.finalIndex < 0 || s.chunks.size() != s.finalIndex + 1 || s.chunks.lastKey() != s.finalIndex)
        return; // not all there yet
    QByteArray content;
    content.reserve(qsizetype(s.bytes));
    for (const QByteArray &chunk : std::as_const(s.chunks))
        content += chunk;
    QString error;
    if (!s.checksum.isEmpty()
        && QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex()) != s.checksum)
        error = QStringLiteral("the content does not match its checksum (SHA-256)");
    const Done done = std::move(s.done);
    m_streams.erase(it);
    done(error.isEmpty(), error.isEmpty() ? content : QByteArray(), error);
}

} // namespace mapi
