// fuzz_frames: a sequence of frames on one live connection, with a drop and a reconnect, through
// the path of fuzz_frame (ProtocolPipeline with SimdJsonParser → dropRawFrames →
// SystemStore::apply), so that what spans frames runs: sequence numbers and their gaps, duplicate
// events, agents and scopes built up by events and then replaced by snapshots (a complete
// map/agents/list retires the agents it lacks), replayed events after the reconnect, tasks across
// messages, the history bound trimming old rows, health over time.
//
// Input:
//   byte 0   the frame before which the connection drops and is opened again (0xff: no drop).
//            As MapClient does: connectionClosed, connectionOpened, its requests sent again
//            (map/replay among them), and the reconnect gap once the snapshot is read.
//   byte 1   flags: bit 0  the window (frames kept by its journal and read back from it, payload
//                          text not kept) rather than the CLI (frames not kept at all)
//                   bit 1  a 64 KiB history budget, so the oldest events and messages are trimmed
//                   bit 2  a minute between frames rather than 10 ms (heartbeats late, agents silent)
//                   bit 3  at the drop, the journal also lets go of the frames before it
//                          (SystemStore::trimHistoryBefore)
//   the rest frames separated by '\n' or '\0' (empty ones skipped); a frame that starts with '>'
//            is one the client sent (the rest of it, e.g. a request the next response answers),
//            the others were received.
#include "FuzzSupport.h"

#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "protocol/SimdJsonParser.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace mapi;

namespace {

constexpr int kNoDrop = 0xff;
constexpr unsigned kWindow = 1u << 0;
constexpr unsigned kSmallHistoryBudget = 1u << 1;
constexpr unsigned kSlowClock = 1u << 2;
constexpr unsigned kJournalDropsAtReconnect = 1u << 3;
constexpr int kFlushEveryFrames = 16; // the store's flush timer, which no event loop fires here

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::Needed); // SystemStore's flush timer
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const int dropBefore = data[0];
    const unsigned flags = data[1];
    const bool window = flags & kWindow;
    const qint64 step = (flags & kSlowClock) ? 60'000 : 10;
    const QString url = QStringLiteral("ws://fuzz.invalid/map");

    std::vector<QByteArray> journal; // the window's session journal: received frames, by index
    SystemStore store;
    if (window)
        store.setJournalReader([&journal](const FrameRef &ref) {
            return ref.offset >= 0 && size_t(ref.offset) < journal.size() ? journal[size_t(ref.offset)] : QByteArray();
        });
    if (flags & kSmallHistoryBudget)
        store.setHistoryBudget(64 * 1024);

    ProtocolPipeline pipeline({}, SimdJsonParser::instance()); // MapClient's pipeline
    pipeline.setKeepPayloadText(!window); // the journal is the window's frame keeper
    qint64 now = fuzz::kStartMs;
    store.apply(pipeline.connectionOpened(url, now));
    fuzz::sendClientRequests(pipeline, now);

    // MapClient::onClosed, then (after its first backoff) onOpened and the requests of a
    // reconnect; goLive() reports the reconnect gap.
    const auto dropAndReconnect = [&] {
        store.apply(pipeline.connectionClosed(QStringLiteral("fuzz: connection reset"), now));
        if (flags & kJournalDropsAtReconnect)
            store.trimHistoryBefore(now);
        now += 500;
        store.apply(pipeline.connectionOpened(url, now));
        fuzz::sendClientRequests(pipeline, now);
        Gap gap;
        gap.kind = Gap::Kind::Reconnect;
        gap.timeMs = now;
        gap.detail = QStringLiteral("disconnected for 0.5 s (fuzz: connection reset); state re-read");
        store.apply(ModelInput(GapInput {gap}));
    };

    int frameIndex = 0;
    size_t begin = 2;
    while (begin <= size) {
        size_t end = begin;
        while (end < size && data[end] != '\n' && data[end] != '\0')
            ++end;
        if (end > begin) {
            if (frameIndex == dropBefore && dropBefore != kNoDrop)
                dropAndReconnect();
            ++frameIndex;
            const auto *text = reinterpret_cast<const char *>(data + begin);
            now += step;
            if (text[0] == '>') {
                pipeline.frameSent(QByteArray(text + 1, qsizetype(end - begin - 1)), now);
            } else {
                const QByteArray frame(text, qsizetype(end - begin));
                InterpretedFrame interpreted = pipeline.frameReceived(frame, now);
                if (window) { // MapClient::onText with the journal attached
                    journal.push_back(frame);
                    dropRawFrames(interpreted.inputs, FrameRef {qint64(journal.size() - 1), qint64(frame.size())});
                } else { // the CLI: no journal, frames not kept (MapClient::setKeepFrames(false))
                    dropRawFrames(interpreted.inputs);
                }
                store.apply(std::move(interpreted.inputs));
            }
            if (frameIndex % kFlushEveryFrames == 0) {
                store.advanceTime(now);
                store.flushChanges(); // enforces the history budget too
            }
        }
        begin = end + 1;
    }

    store.advanceTime(now + 60'000);
    store.flushChanges();
    fuzz::readModelBack(store);
    return 0;
}
