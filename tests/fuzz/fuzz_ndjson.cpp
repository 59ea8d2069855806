// fuzz_ndjson: one input is a byte stream as a launched MAP system (stdio:) or a local socket
// (unix:) sends it, framed by NdjsonFramer (core/client/NdjsonFramer). The first byte sets the
// line cap (16..271 bytes: small, so that lines past it are common), the second how the rest is
// cut into reads (1..256 bytes each: lines straddle reads).
//
// Invariants (an abort, i.e. a finding): the framer gives, read by read, exactly what splitting
// the whole stream at '\n' gives (each line without its '\r', blank lines skipped but numbered,
// the last line without '\n' at finish()); a line past the cap comes out as too long with its
// length and never its bytes; line numbers rise; linesSeen() counts every line.
#include "FuzzSupport.h"

#include "client/NdjsonFramer.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace mapi;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::NotNeeded);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const qint64 cap = 16 + data[0];
    const size_t readSize = 1 + data[1];
    const char *stream = reinterpret_cast<const char *>(data + 2);
    const size_t length = size - 2;

    NdjsonFramer framer(cap);
    std::vector<NdjsonFramer::Line> got;
    for (size_t at = 0; at < length; at += readSize)
        for (NdjsonFramer::Line &l : framer.feed(stream + at, qint64(std::min(readSize, length - at))))
            got.push_back(std::move(l));
    for (NdjsonFramer::Line &l : framer.finish())
        got.push_back(std::move(l));
    if (!fuzz::checkInvariants())
        return 0;

    // The reference: the whole stream split at '\n'.
    std::vector<NdjsonFramer::Line> expected;
    qint64 number = 0;
    size_t start = 0;
    for (size_t i = 0; i <= length; ++i) {
        if (i < length && stream[i] != '\n')
            continue;
        if (i == length && start == length)
            break; // nothing after the last '\n'
        ++number;
        QByteArray line(stream + start, qsizetype(i - start));
        const qint64 bytes = line.size();
        if (bytes > cap) {
            expected.push_back({QByteArray(), number, bytes, true});
        } else {
            if (line.endsWith('\r'))
                line.chop(1);
            if (!line.trimmed().isEmpty())
                expected.push_back({line, number, line.size(), false});
        }
        start = i + 1;
    }
    if (framer.linesSeen() != number)
        fuzz::invariantBroken("linesSeen() is not the number of lines",
                              QByteArray::number(framer.linesSeen()) + " != " + QByteArray::number(number));
    if (got.size() != expected.size())
        fuzz::invariantBroken("not the lines of the stream", QByteArray::number(qint64(got.size())) + " lines, expected "
                                                                 + QByteArray::number(qint64(expected.size())));
    qint64 previous = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const NdjsonFramer::Line &g = got[i], &e = expected[i];
        if (g.number <= previous)
            fuzz::invariantBroken("line numbers do not rise");
        previous = g.number;
        if (g.number != e.number || g.tooLong != e.tooLong || g.text != e.text || (g.tooLong && g.bytes != e.bytes))
            fuzz::invariantBroken("a line differs from the stream's", "line " + QByteArray::number(e.number) + ": got '"
                                                                         + g.text.left(300) + "', expected '" + e.text.left(300) + "'");
        if (g.tooLong && !g.text.isEmpty())
            fuzz::invariantBroken("a line past the cap kept its bytes");
    }
    return 0;
}
