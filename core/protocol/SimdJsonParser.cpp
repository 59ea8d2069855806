#include "protocol/SimdJsonParser.h"

#include "protocol/SimdJsonConvert.h"

#include <cmath>

namespace mapi {

Json jsonFromSimd(simdjson::dom::element element, bool *negativeZero)
{
    using simdjson::dom::element_type;
    switch (element.type()) {
    case element_type::OBJECT: {
        Json out = Json::object();
        auto &object = *out.get_ptr<Json::object_t *>();
        for (const auto field : simdjson::dom::object(element))
            object[std::string(field.key)] = jsonFromSimd(field.value, negativeZero); // last duplicate wins, as in nlohmann
        return out;
    }
    case element_type::ARRAY: {
        Json out = Json::array();
        auto &array = *out.get_ptr<Json::array_t *>();
        const simdjson::dom::array items(element);
        array.reserve(items.size());
        for (const simdjson::dom::element item : items)
            array.push_back(jsonFromSimd(item, negativeZero));
        return out;
    }
    case element_type::STRING: {
        const std::string_view s(element);
        return Json(std::string(s));
    }
    case element_type::INT64: {
        const int64_t v(element);
        if (v >= 0)
            return Json(uint64_t(v)); // nlohmann reads non-negative integers as unsigned
        return Json(v);
    }
    case element_type::UINT64: return Json(uint64_t(element));
    case element_type::DOUBLE: {
        const double v(element);
        if (v == 0 && std::signbit(v) && negativeZero)
            *negativeZero = true;
        return Json(v);
    }
    case element_type::BOOL: return Json(bool(element));
    case element_type::NULL_VALUE: return Json(nullptr);
    }
    return Json();
}

bool SimdJsonParser::parse(const QByteArray &text, Json &out, QString &error) const
{
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parseText(parser, text, root) == simdjson::SUCCESS) {
        // "-0" is an integer zero for nlohmann but may be a negative double for simdjson: such
        // rare documents go to nlohmann rather than differ.
        bool negativeZero = false;
        Json value = jsonFromSimd(root, &negativeZero);
        if (!negativeZero) {
            out = std::move(value);
            return true;
        }
    }
    // Refused: let the default parser decide, with its own words.
    static const NlohmannJsonParser fallback;
    return fallback.parse(text, out, error);
}

std::shared_ptr<const JsonParser> SimdJsonParser::instance()
{
    static const std::shared_ptr<const JsonParser> parser = std::make_shared<SimdJsonParser>();
    return parser;
}

} // namespace mapi
