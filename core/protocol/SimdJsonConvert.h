// Internal: simdjson DOM values to nlohmann::json. Include only from .cpp files.
#pragma once

#include "protocol/JsonRpc.h"

#include <simdjson.h>

#include <cstring>

namespace mapi {

// Converts a simdjson DOM element into the value nlohmann's parser would have produced
// (non-negative integers unsigned, negative ones signed, the last of duplicate keys wins).
// `negativeZero`, when given, is set if a -0 number was met (nlohmann reads "-0" as integer 0).
Json jsonFromSimd(simdjson::dom::element element, bool *negativeZero = nullptr);

// The last member named `key` of `object` (nlohmann keeps the last of duplicate keys, so every
// lookup on simdjson's DOM that must agree with it takes the last one). False when absent.
// Hot (a map/event takes some thirty lookups): the length and first byte of each key are
// compared before its bytes.
inline bool lastMember(simdjson::dom::object object, std::string_view key, simdjson::dom::element &value)
{
    bool found = false;
    for (auto it = object.begin(), end = object.end(); it != end; ++it) {
        if (it.key_length() != key.size())
            continue;
        const char *name = it.key_c_str();
        if (!key.empty() && (name[0] != key[0] || std::memcmp(name, key.data(), key.size()) != 0))
            continue;
        value = it.value();
        found = true;
    }
    return found;
}

// Parses `text` with `parser`. simdjson reads up to SIMDJSON_PADDING bytes past the end: when
// the array's own allocation has them (trace records are read with that much spare capacity)
// the text is parsed where it is, else simdjson copies it into a padded buffer first.
inline simdjson::error_code parseText(simdjson::dom::parser &parser, const QByteArray &text,
                                      simdjson::dom::element &out)
{
    // Bytes past size() within capacity() are ours to read (never written while shared: an
    // append by another owner detaches first); arrays over raw data report no capacity.
    const bool padded = text.capacity() - text.size() > qsizetype(simdjson::SIMDJSON_PADDING);
    return parser.parse(text.constData(), size_t(text.size()), !padded).get(out);
}

} // namespace mapi
