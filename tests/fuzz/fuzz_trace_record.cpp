// fuzz_trace_record: the record lines of MAP Inspector traces and raw captures
// (RecordLineParser, core/trace/TraceRecord), which TraceFileReader runs on every line of such a
// file, and what the loader does with each record next (RecordDecoder: the frame into model
// inputs through ProtocolPipeline; action records through actionUpdateFromJson). fuzz_import
// covers the rest of the reader (decompression, format detection, seed-format logs).
//
// One input is one or more lines ('\n'); a header line changes how the lines after it are read
// (binary frames without "encoding" are base64 in a MAP Inspector trace), as it does in a file.
// Both parser modes run on every line: parsed whole (readTrace, the default), and the loader's
// (setFramesCheckedLater: a line of exactly our writer's shape is taken apart unparsed and its
// frame left to the decoder). Lines are parsed from a buffer with LineReader::kPadding bytes
// after them, as the reader gives them, and once from a copy of exactly their size (the lines it
// read while probing the format).
//
// Invariant (an abort, i.e. a finding): a record that encodeRecordLine() writes reads back as the
// same record — direction, connection, time, binary flag, and the frame's bytes as redacted —
// whichever mode reads it. Only records a recording can hold are checked (not action records,
// whose JSON is re-serialised; times from 0 to 2^53, connections below 10^9).
#include "FuzzSupport.h"

#include "protocol/SimdJsonParser.h"
#include "trace/CompressedFile.h"
#include "trace/Trace.h"
#include "trace/TraceRecord.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace mapi;

namespace {

constexpr qint64 kExactTimeMs = qint64(1) << 53; // "t" is read as a number: exact up to here
constexpr int kMaxConnection = 1000000000; // "conn" of our writer's shape: up to 9 digits

// Parses `size` bytes at `data` from a buffer of their own: followed by LineReader::kPadding
// readable bytes when `padded` (the parser may then skip its copy), else of exactly their size.
RecordLineParser::Result parseLine(RecordLineParser &parser, const char *data, qsizetype size, bool padded,
                                   TraceRecord &out)
{
    std::vector<char> buffer(size_t(size + (padded ? LineReader::kPadding : 0)));
    if (size > 0)
        std::memcpy(buffer.data(), data, size_t(size));
    return parser.parse(buffer.data(), size, qsizetype(buffer.size()), out);
}

void checkRoundTrip(const TraceRecord &record)
{
    if (!fuzz::checkInvariants() || recordDir(record.dir) == RecordDir::Action || record.timeMs < 0 ||
        record.timeMs > kExactTimeMs || record.connection < 0 || record.connection >= kMaxConnection)
        return;
    const QByteArray line = encodeRecordLine(record); // ends with '\n'
    const QByteArray expected = redactSecrets(record.raw);
    for (const bool framesCheckedLater : {false, true}) {
        RecordLineParser parser;
        parser.setFramesCheckedLater(framesCheckedLater);
        TraceRecord back;
        const RecordLineParser::Result result = parseLine(parser, line.constData(), line.size() - 1, true, back);
        if (result != RecordLineParser::Result::Record)
            fuzz::invariantBroken("a line written by encodeRecordLine() does not read as a record", line);
        if (back.dir != record.dir || back.connection != record.connection || back.timeMs != record.timeMs ||
            back.binary != record.binary || back.raw != expected)
            fuzz::invariantBroken("a line written by encodeRecordLine() reads back as another record", line);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::NotNeeded); // no QObject below
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Per input, as per file: a header seen on one input must not change how the next is read.
    RecordLineParser wholeParser; // readTrace, the CLI
    RecordLineParser loaderParser; // TraceLoader
    loaderParser.setFramesCheckedLater(true);
    RecordDecoder decoder({}, SimdJsonParser::instance()); // TraceLoader's
    ModelInputs inputs;

    const auto *text = reinterpret_cast<const char *>(data);
    qint64 lineNumber = 0;
    size_t begin = 0;
    while (begin < size) {
        const void *newline = std::memchr(text + begin, '\n', size - begin);
        const size_t end = newline ? size_t(static_cast<const char *>(newline) - text) : size;
        const auto *line = text + begin;
        const auto length = qsizetype(end - begin);
        ++lineNumber;
        begin = end + 1;

        TraceRecord record;
        if (parseLine(wholeParser, line, length, true, record) == RecordLineParser::Result::Record)
            checkRoundTrip(record);
        parseLine(wholeParser, line, length, false, record);

        if (parseLine(loaderParser, line, length, true, record) != RecordLineParser::Result::Record)
            continue;
        record.line = lineNumber;
        inputs.clear();
        decoder.decode(record, inputs); // a damaged frame: its line in decoder.damagedLines()
        checkRoundTrip(record);
    }
    return 0;
}
