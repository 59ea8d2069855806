#include "protocol/Utf16Repair.h"

#include <cstring>

namespace mapi {

static int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The code unit of the `\uXXXX` escape at `at` (at[0] is the backslash), or -1.
static int escapeAt(const char *text, qsizetype size, qsizetype at)
{
    if (at + 6 > size || text[at] != '\\' || text[at + 1] != 'u')
        return -1;
    int unit = 0;
    for (int k = 2; k < 6; ++k) {
        const int v = hexValue(text[at + k]);
        if (v < 0)
            return -1;
        unit = unit * 16 + v;
    }
    return unit;
}

int repairLoneSurrogates(QByteArray &jsonText)
{
    const char *text = jsonText.constData();
    const qsizetype size = jsonText.size();
    int replaced = 0;
    // Backslashes only: most texts have few, and memchr finds them fast.
    for (qsizetype i = 0; i < size;) {
        const void *found = std::memchr(text + i, '\\', size_t(size - i));
        if (!found)
            break;
        i = static_cast<const char *>(found) - text;
        if (i + 1 >= size)
            break;
        if (text[i + 1] != 'u') {
            i += 2; // an escape of one character (\\ included): never the start of another
            continue;
        }
        const int unit = escapeAt(text, size, i);
        if (unit < 0xD800 || unit > 0xDFFF) {
            i += 2;
            continue;
        }
        const int next = unit <= 0xDBFF ? escapeAt(text, size, i + 6) : -1;
        if (next >= 0xDC00 && next <= 0xDFFF) {
            i += 12; // a pair: a character outside the BMP
            continue;
        }
        char *write = jsonText.data() + i; // detaches once, if shared
        text = jsonText.constData();
        std::memcpy(write, "\\ufffd", 6);
        ++replaced;
        i += 6;
    }
    return replaced;
}

} // namespace mapi
