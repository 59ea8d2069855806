// A consumer of one live connection's traffic in wire order: the session journal, a trace
// recording, a test's collector. MapClient calls every sink it has in its own thread, before it
// interprets a received frame, so a sink sees each frame before any model input made of it.
//
// Thread: the client's thread (a sink must live there or be safe to call from it).
#pragma once

#include "map/MapTypes.h"
#include "model/ModelTypes.h"

#include <QByteArray>
#include <QString>

namespace mapi {

class FrameSink
{
public:
    virtual ~FrameSink() = default;

    // A socket opened (`redactedUrl`: no credential) or closed. Times: ms since the epoch.
    virtual void socketOpened(const QString &redactedUrl, qint64 timeMs) = 0;
    virtual void socketClosed(const QString &reason, qint64 timeMs) = 0;
    virtual void frameSent(const QByteArray &frame, qint64 timeMs) = 0;
    // Returns where the frame is kept for reading back (SystemStore::eventFrame); invalid when
    // this sink does not serve reads. Only a sink that keepsFrames() returns a valid one.
    virtual FrameRef frameReceived(const QByteArray &frame, qint64 timeMs, bool binary) = 0;
    // An operator action's step, as the model receives it.
    virtual void actionRecorded(const ActionUpdate &update) = 0;
    // The server named itself (map/connect's answer).
    virtual void serverIdentified(const QString &name, const QString &version)
    {
        Q_UNUSED(name);
        Q_UNUSED(version);
    }
    // true: events carry this sink's FrameRef instead of their frame, and message payloads the
    // decoder has read are not kept either (they are read back from the frame when asked for).
    virtual bool keepsFrames() const { return false; }
};

} // namespace mapi
