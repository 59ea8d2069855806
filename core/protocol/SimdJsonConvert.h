// Internal: simdjson DOM values to nlohmann::json. Include only from .cpp files.
#pragma once

#include "protocol/JsonRpc.h"

#include <simdjson.h>

namespace mapi {

// Converts a simdjson DOM element into the value nlohmann's parser would have produced
// (non-negative integers unsigned, negative ones signed, the last of duplicate keys wins).
// `negativeZero`, when given, is set if a -0 number was met (nlohmann reads "-0" as integer 0).
Json jsonFromSimd(simdjson::dom::element element, bool *negativeZero = nullptr);

} // namespace mapi
