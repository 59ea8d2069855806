// fuzz_import: one input is a whole file, opened the way the window and `map-inspector-cli
// --trace` open one (core/trace/TraceLoader: loadTraceBatches, here on one thread):
//
//   TraceFileReader      compression from the magic bytes (plain, gzip, zstd: DecompressingReader),
//                        lines (LineReader), the format from the first objects: a MAP Inspector
//                        trace, a raw capture, a seed envelope log 000/002/003/004 as lines or as
//                        one JSON array (SeedImporter, JsonArraySplitter), or none understood
//   ContentIndex         the file's frames indexed while read, so the timeline reads them back
//   RecordDecoder        every record through ProtocolPipeline (SimdJsonParser), damaged lines
//   applyTraceBatch      into a SystemStore, events mapped to their records (TraceTimeline)
//
// then what the window does with a loaded trace: frames and payloads read back from the file for
// the inspector (TraceTimeline::frameForEvent, through the store's frame source), `state`, and a
// seek back to the start (a fresh store rebuilt from the timeline's records: TraceTimeline::replay).
//
// The readers open a path: the input is written to a file in memory once per input (FuzzSupport.h).
// A compressed input whose content passes kMaxContentBytes is skipped: a few bytes of zstd expand to
// gigabytes, and reading them all is a matter of time, not of parsing (the loader streams any size);
// fuzz_decompress covers the decompressors with a bounded read.
#include "FuzzSupport.h"

#include "model/SystemStore.h"
#include "trace/CompressedFile.h"
#include "trace/Trace.h"
#include "trace/TraceLoader.h"
#include "trace/TraceTimeline.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

using namespace mapi;

namespace {

constexpr qint64 kMaxContentBytes = 8 << 20;
// A seek back replays at most this many records: below TraceTimeline::replay's threshold for a
// decoding thread (4,096), so the whole input runs on this thread.
constexpr qint64 kMaxReplayedRecords = 4000;

fuzz::InputFile *inputFile = nullptr;

// Whether the file's content (decompressed) is at most `limit` bytes.
bool contentWithin(const QString &path, qint64 limit)
{
    DecompressingReader reader;
    if (!reader.open(path, nullptr))
        return false;
    if (reader.compression() == Compression::None)
        return reader.fileSize() <= limit;
    static std::vector<char> buffer(1 << 20);
    qint64 total = 0;
    for (;;) {
        const qint64 n = reader.read(buffer.data(), qint64(buffer.size()));
        if (n <= 0)
            return true;
        total += n;
        if (total > limit)
            return false;
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::Needed); // SystemStore's flush timer
    inputFile = new fuzz::InputFile; // one per process, rewritten per input
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!inputFile->write(data, size) || !contentWithin(inputFile->path(), kMaxContentBytes))
        return 0;

    TraceLoadOptions options; // the window's and the CLI's defaults: simdjson, frames left in the file
    options.readerThread = false; // read and decode on this thread: the same work, reproducible
    SystemStore store;
    auto timeline = std::make_shared<TraceTimeline>(options.limits, options.fastParser);
    const auto applyBatch = [&](TraceLoadBatch &&batch) {
        applyTraceBatch(store, batch, timeline.get());
        return true;
    };
    const TraceLoadResult result = loadTraceBatches(inputFile->path(), options, applyBatch, timeline);
    if (!result.ok)
        return 0; // no format understood: the error names the formats that are

    // As loadTraceInto() ends: the clock at the last record, frames read from the timeline.
    store.advanceTime(result.lastTimeMs);
    store.setFrameSource([timeline](int row) { return timeline->frameForEvent(row); });
    store.flushChanges();
    fuzz::readModelBack(store);

    // A seek back to the start (ReplayController): a fresh store, the records decoded again, read
    // back from the file through the ContentIndex where the timeline dropped them.
    SystemStore replayed;
    RecordDecoder decoder = timeline->makeDecoder();
    timeline->replay(replayed, decoder, 0, std::min(timeline->recordCount(), kMaxReplayedRecords));
    replayed.flushChanges();
    return 0;
}
