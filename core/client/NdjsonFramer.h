// NDJSON framing (one JSON text per line, as the MAP SDK's ndJsonStream writes it): bytes in,
// lines out, each with its 1-based line number in the stream. A line ends at '\n'; a '\r' before
// it is dropped; blank lines are counted but not handed out. A line longer than maxLineBytes is
// not kept: it comes out as `tooLong` with its length, and its bytes are skipped as they arrive,
// so a stream that never sends '\n' costs at most maxLineBytes of memory. At the end of the
// stream, finish() hands out a last line that had no '\n' (the SDK parses it too).
//
// Thread: any; one stream per framer, not shared.
#pragma once

#include <QByteArray>
#include <QtGlobal>

#include <vector>

namespace mapi {

class NdjsonFramer
{
public:
    struct Line
    {
        QByteArray text;     // without its '\n' (and '\r'); empty when tooLong
        qint64 number = 0;   // 1-based line number in the stream
        qint64 bytes = 0;    // the line's length (what a tooLong line had)
        bool tooLong = false;
    };

    explicit NdjsonFramer(qint64 maxLineBytes);

    // The complete lines in `data` (with what came before it).
    std::vector<Line> feed(const char *data, qint64 size);
    std::vector<Line> feed(const QByteArray &data) { return feed(data.constData(), data.size()); }
    // The end of the stream: the unterminated last line, if any.
    std::vector<Line> finish();

    qint64 linesSeen() const { return m_lineNumber; }
    qint64 maxLineBytes() const { return m_maxLineBytes; }

private:
    void endLine(std::vector<Line> &out);

    qint64 m_maxLineBytes;
    QByteArray m_partial;     // the line being read, at most m_maxLineBytes
    qint64 m_partialBytes = 0; // its length so far (past the cap too)
    qint64 m_lineNumber = 0;
};

} // namespace mapi
