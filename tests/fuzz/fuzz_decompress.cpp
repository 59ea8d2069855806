// fuzz_decompress: one input is a file as the trace readers open it (DecompressingReader,
// core/trace/CompressedFile): zstd or gzip by its magic bytes (ZSTD_decompressStream; inflate,
// concatenated gzip members included), anything else read as it is. The reader gets a
// ContentIndex, as TraceFileReader gives it one for a loaded trace, so that the frames it indexes
// (zstd frames, a plain file's pieces) are hashed and can be read back later by TraceTimeline.
//
// Bounded: at most kMaxContentBytes of content is read per input (a few bytes of zstd or gzip
// expand to gigabytes), in reads of 1 MiB as LineReader asks for them, into a buffer allocated once.
//
// Invariants (an abort, i.e. a finding), the file being unchanged: bytesProduced() counts what
// read() returned, and every range the index covers reads back (ContentIndex::read) as the
// stream gave it.
#include "FuzzSupport.h"

#include "trace/CompressedFile.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using namespace mapi;

namespace {

constexpr qint64 kMaxContentBytes = 16 << 20;
constexpr qint64 kReadBytes = 1 << 20;
constexpr qint64 kReadBackBytes = 65521; // a prime: the pieces read back straddle frame ends

fuzz::InputFile *inputFile = nullptr;
std::vector<char> *content = nullptr; // kMaxContentBytes, reused

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::NotNeeded); // no QObject below
    inputFile = new fuzz::InputFile;
    content = new std::vector<char>(size_t(kMaxContentBytes));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!inputFile->write(data, size))
        return 0;
    DecompressingReader reader;
    if (!reader.open(inputFile->path(), nullptr))
        return 0;
    auto index = std::make_shared<ContentIndex>();
    if (index->open(inputFile->path(), nullptr))
        reader.setContentIndex(index);

    char *const out = content->data();
    qint64 produced = 0;
    while (produced < kMaxContentBytes) {
        const qint64 n = reader.read(out + produced, std::min(kReadBytes, kMaxContentBytes - produced));
        if (n <= 0)
            break; // the end, or a damaged stream (errorString() says where)
        produced += n;
    }

    if (!fuzz::checkInvariants())
        return 0;
    if (reader.bytesProduced() != produced)
        fuzz::invariantBroken("DecompressingReader::bytesProduced() differs from what read() returned");
    ContentIndex::Cache cache;
    QByteArray back;
    const qint64 end = std::min(index->completeEnd(), produced);
    for (qint64 offset = 0; offset < end; offset += kReadBackBytes) {
        const qint64 length = std::min(kReadBackBytes, end - offset);
        if (!index->covers(offset, length))
            continue;
        back.resize(qsizetype(length));
        QString readError;
        if (!index->read(offset, qsizetype(length), back.data(), cache, &readError))
            fuzz::invariantBroken("ContentIndex::read() fails on a range it covers, the file unchanged",
                                  readError.toUtf8());
        if (std::memcmp(back.constData(), out + offset, size_t(length)) != 0)
            fuzz::invariantBroken("ContentIndex::read() gives other bytes than the stream gave");
    }
    return 0;
}
