// Where a live connection's frames are kept on disk, as the client sees it: MapClient hands
// every frame it receives to its journal before interpreting it, and the events made of that
// frame carry the journal's reference to it (MapEvent::journalRef) instead of the frame's bytes.
// The store then reads a frame back only when someone looks at it (SystemStore::eventFrame).
//
// Thread: journalReceived() is called in the client's thread.
#pragma once

#include "map/MapTypes.h"

#include <QByteArray>

namespace mapi {

class FrameJournal
{
public:
    virtual ~FrameJournal() = default;
    // Writes a received frame; returns where it is kept (invalid: it is not).
    virtual FrameRef journalReceived(const QByteArray &frame, qint64 timeMs, bool binary) = 0;
};

} // namespace mapi
