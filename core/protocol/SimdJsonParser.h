// A JsonParser backed by simdjson (DOM API): several times faster than nlohmann's own parser
// on MAP frames, producing the same nlohmann::json values. Used where throughput matters
// (loading and seeking traces); the live client may use it too.
//
// Anything simdjson refuses (invalid JSON, integers beyond 64 bits, ...) is parsed again by
// NlohmannJsonParser, so accepted documents, values and error messages are exactly those of
// the default parser: swapping parsers never changes the model.
// Thread: parse() may be called from several threads at once (one simdjson parser per thread).
#pragma once

#include "protocol/JsonRpc.h"

namespace mapi {

class SimdJsonParser final : public JsonParser
{
public:
    bool parse(const QByteArray &text, Json &out, QString &error) const override;
    const char *name() const override { return "simdjson"; }

    // Shared instance (stateless).
    static std::shared_ptr<const JsonParser> instance();
};

} // namespace mapi
