#include "client/NdjsonFramer.h"

#include <algorithm>
#include <cstring>

namespace mapi {

NdjsonFramer::NdjsonFramer(qint64 maxLineBytes)
    : m_maxLineBytes(std::max<qint64>(1, maxLineBytes))
{
}

void NdjsonFramer::endLine(std::vector<Line> &out)
{
    ++m_lineNumber;
    const bool tooLong = m_partialBytes > m_maxLineBytes;
    if (!tooLong && m_partial.endsWith('\r')) {
        m_partial.chop(1);
        --m_partialBytes;
    }
    if (tooLong || !m_partial.trimmed().isEmpty()) {
        Line line;
        line.number = m_lineNumber;
        line.bytes = m_partialBytes;
        line.tooLong = tooLong;
        if (!tooLong)
            line.text = m_partial;
        out.push_back(std::move(line));
    }
    m_partial.clear();
    if (m_partial.capacity() > 64 * 1024)
        m_partial.squeeze(); // a long line's buffer is not kept for the short ones after it
    m_partialBytes = 0;
}

std::vector<NdjsonFramer::Line> NdjsonFramer::feed(const char *data, qint64 size)
{
    std::vector<Line> out;
    qint64 at = 0;
    while (at < size) {
        const void *nl = std::memchr(data + at, '\n', size_t(size - at));
        const qint64 end = nl ? qint64(static_cast<const char *>(nl) - data) : size;
        const qint64 n = end - at;
        // Kept while under the cap; past it, only its length counts.
        if (m_partialBytes <= m_maxLineBytes)
            m_partial.append(data + at, qsizetype(std::min(m_maxLineBytes + 1 - m_partialBytes, n)));
        m_partialBytes += n;
        if (m_partialBytes > m_maxLineBytes && !m_partial.isEmpty()) {
            m_partial.clear(); // what it is does not matter any more: only its length
            m_partial.squeeze();
        }
        at = end;
        if (nl) {
            endLine(out);
            ++at;
        }
    }
    return out;
}

std::vector<NdjsonFramer::Line> NdjsonFramer::finish()
{
    std::vector<Line> out;
    if (m_partialBytes > 0)
        endLine(out);
    return out;
}

} // namespace mapi
