// A JSON string literal appended to any byte buffer with append(const char *, size) and
// push_back(char): QByteArray (trace records) and std::string (the OTLP writers, whose many
// small appends cost less on std::string than on QByteArray, whose append goes through insert).
// Escapes '"', '\\' and control characters (\n \r \t \b \f by name, the others as \u00XX); every
// other byte, UTF-8 or not, is copied as it is.
#pragma once

#include <cstddef>

namespace mapi {

template<typename Buffer>
void appendJsonStringTo(Buffer &out, const char *text, std::size_t size)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out.reserve(out.size() + size + 2);
    out.push_back('"');
    std::size_t run = 0; // start of the pending run of bytes that need no escaping
    for (std::size_t i = 0; i < size; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(text + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': out.append("\\\"", 2); break;
        case '\\': out.append("\\\\", 2); break;
        case '\n': out.append("\\n", 2); break;
        case '\r': out.append("\\r", 2); break;
        case '\t': out.append("\\t", 2); break;
        case '\b': out.append("\\b", 2); break;
        case '\f': out.append("\\f", 2); break;
        default: {
            const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            out.append(escaped, 6);
        }
        }
    }
    out.append(text + run, size - run);
    out.push_back('"');
}

} // namespace mapi
