// fuzz_frame: one input is one WebSocket text frame from a MAP server, taken the way the window
// takes a live frame (MapClient::onText with the session journal as its frame keeper):
//
//   ProtocolPipeline with SimdJsonParser   core/pipeline; the codec and its limits, core/protocol;
//                                          dialect normalisation (the map/event fast path on
//                                          simdjson's DOM, and the general one), core/map
//   dropRawFrames(journal reference)       the frame is kept by the journal, not by the model
//   SystemStore::apply, advanceTime        core/model: entities, events, messages, payload
//                                          conventions, tasks, health rules
//   reading it back                        the inspector's JSON (frames and payloads read back
//                                          from the journal, parsed again) and the CLI's `state`
//
// Before the frame, the pipeline is told the client sent its usual requests (FuzzSupport.h,
// ids 1–11), so that a response frame is interpreted as the answer it claims to be.
// A fresh pipeline and store per input: nothing carries over.
#include "FuzzSupport.h"

#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "protocol/SimdJsonParser.h"

#include <cstddef>
#include <cstdint>

using namespace mapi;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::Needed); // SystemStore's flush timer
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // A copy, as the socket hands a frame over (QByteArray, NUL after its end).
    const QByteArray frame(reinterpret_cast<const char *>(data), qsizetype(size));
    qint64 now = fuzz::kStartMs;

    // The journal of this connection holds the one frame, at offset 0.
    SystemStore store;
    store.setJournalReader([&frame](const FrameRef &ref) { return ref.offset == 0 ? frame : QByteArray(); });

    ProtocolPipeline pipeline({}, SimdJsonParser::instance()); // MapClient's pipeline
    pipeline.setKeepPayloadText(false); // a frame keeper is attached (addFrameSink)
    store.apply(pipeline.connectionOpened(QStringLiteral("ws://fuzz.invalid/map"), now));
    fuzz::sendClientRequests(pipeline, now);

    now += 10;
    InterpretedFrame interpreted = pipeline.frameReceived(frame, now);
    dropRawFrames(interpreted.inputs, FrameRef {0, qint64(frame.size())});
    store.apply(std::move(interpreted.inputs));

    // A minute later, the health rules have something to say (late heartbeats, silent agents).
    store.advanceTime(now + 60'000);
    store.flushChanges();
    fuzz::readModelBack(store);
    return 0;
}
