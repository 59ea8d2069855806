// Streamed trajectory content (map-extensions.md §4.1): a trajectory/content answer with
// streaming:true names a stream, whose bytes then arrive as trajectory/content.chunk
// notifications {streamId, index, data (base64), final?, checksum? (SHA-256, hex, of the whole
// decoded content, on the final chunk)}. This reassembles them: in index order, checked,
// bounded, and given up when they stop coming.
//
// Chunks may come before anybody asked for their stream (the answer and the first chunks travel
// together), so every stream is kept from its first chunk, within the bounds: at most
// kMaxStreams at once (the oldest is dropped), kMaxBytes each (past it the stream fails), and
// kStallMs without a chunk fails it. Thread: any one (the session's).
#pragma once

#include "protocol/JsonRpc.h"

#include <QByteArray>
#include <QHash>
#include <QMap>
#include <QString>

#include <functional>

namespace mapi {

class ContentStreams
{
public:
    static constexpr int kMaxStreams = 8;
    static constexpr qint64 kMaxBytes = 32LL << 20; // decoded
    static constexpr qint64 kStallMs = 30000;

    // ok: the whole content (checked against the checksum when one came); else why not.
    using Done = std::function<void(bool ok, const QByteArray &content, const QString &error)>;

    // One trajectory/content.chunk notification's params, at local time `nowMs`.
    void addChunk(const Json &params, qint64 nowMs);
    // `done` runs once, when stream `streamId` is complete or fails (at once if it already did).
    void await(const QString &streamId, Done done);
    // Forgets the stream and its waiter (the answer is no longer wanted).
    void cancel(const QString &streamId);
    // Fails the streams that have waited kStallMs for a chunk.
    void expire(qint64 nowMs);
    int streamCount() const { return int(m_streams.size()); }

private:
    struct Stream
    {
        QMap<qint64, QByteArray> chunks; // index -> decoded bytes, in index order whatever the arrival
        qint64 bytes = 0;                // decoded, against kMaxBytes
        qint64 finalIndex = -1;          // the final chunk's index, once it came
        QString checksum;                // its SHA-256 (hex, lower case); empty: none sent
        qint64 firstMs = 0, lastMs = 0;  // local times of the first and the latest chunk (kStallMs)
        bool failed = false;
        QString error;                   // why it failed, for people
        Done done;                       // the waiter (await()), run once
    };
    void settle(const QString &streamId); // runs the waiter when the stream is complete or failed

    QHash<QString, Stream> m_streams;
};

} // namespace mapi
