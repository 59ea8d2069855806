// Internal: the map/event normalisation of Dialect.h read straight from simdjson's DOM, without
// an nlohmann tree of the whole frame. Include only from .cpp files (it pulls in simdjson).
#pragma once

#include "map/MapTypes.h"

#include <simdjson.h>

#include <optional>

namespace mapi {

// The same record eventFromNotification(const Json &, ...) gives for these params.
// `differs` is set when the frame holds a value nlohmann reads otherwise (-0): then decode the
// frame through nlohmann instead and ignore this result.
// `keepPayloadText` false: a sent message's payload is read (its convention, its type) but its
// text is left in the frame (MessageRecord::payloadInFrame), for a load that drops frames.
// Fills `out` (default-constructed, where the event is to stay); false: not a map/event
// (`error` says why, `out` is partly filled).
bool eventFromNotification(simdjson::dom::element params, MapEvent &out, QString &error, bool &differs,
                           bool keepPayloadText = true);

// interpretPayload() read straight from simdjson's DOM; `*differs` as above.
ConventionInfo interpretPayload(simdjson::dom::element payload, bool *differs);

} // namespace mapi
