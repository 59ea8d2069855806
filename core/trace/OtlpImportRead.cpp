// OTLP/JSON requests read into the spans the import keeps (OtlpImportSpans.h); OtlpImport.cpp
// makes them MAP events (trace/Otlp.h says how).
#include "trace/OtlpImportSpans.h"

#include <cmath>
#include <set>

namespace mapi {

bool isOtlpRequest(const Json &object)
{
    if (!object.is_object())
        return false;
    const auto it = object.find("resourceSpans");
    return it != object.end() && it->is_array();
}

namespace otlpimport {

QString text(const Json &attrs, const char *key)
{
    const auto it = attrs.find(key);
    if (it == attrs.end())
        return {};
    if (it->is_string())
        return toQString(*it);
    if (it->is_number() || it->is_boolean())
        return QString::fromStdString(it->dump());
    return {};
}

std::optional<double> number(const Json &attrs, const char *key)
{
    const auto it = attrs.find(key);
    if (it != attrs.end() && it->is_number())
        return it->get<double>();
    return std::nullopt;
}

} // namespace otlpimport

using namespace otlpimport;

namespace {

// An AnyValue ({"stringValue": …} and the others) as plain JSON; null when it is none.
Json anyValue(const Json &v)
{
    if (!v.is_object())
        return Json();
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &k = it.key();
        const Json &x = it.value();
        if (k == "stringValue" || k == "bytesValue")
            return x.is_string() ? x : Json();
        if (k == "boolValue")
            return x.is_boolean() ? x : Json();
        if (k == "intValue") { // int64: a decimal string in the JSON mapping, a number from some writers
            if (x.is_number_integer())
                return x;
            if (x.is_string()) {
                bool ok = false;
                const qint64 n = QByteArray::fromStdString(x.get<std::string>()).toLongLong(&ok);
                return ok ? Json(n) : Json();
            }
            return Json();
        }
        if (k == "doubleValue") {
            if (x.is_number())
                return x;
            if (x.is_string()) { // "NaN", "Infinity": not representable in JSON; dropped
                bool ok = false;
                const double d = QByteArray::fromStdString(x.get<std::string>()).toDouble(&ok);
                return ok && std::isfinite(d) ? Json(d) : Json();
            }
            return Json();
        }
        if (k == "arrayValue") {
            Json out = Json::array();
            if (const Json *values = jsonChild(x, "values"); values && values->is_array())
                for (const Json &item : *values)
                    out.push_back(anyValue(item));
            return out;
        }
        if (k == "kvlistValue") {
            Json out = Json::object();
            if (const Json *values = jsonChild(x, "values"); values && values->is_array())
                for (const Json &kv : *values)
                    if (const Json *key = jsonChild(kv, "key"); key && key->is_string())
                        out[key->get<std::string>()] = anyValue(kv.value("value", Json()));
            return out;
        }
    }
    return Json();
}

// A KeyValue list as an object {key: value}; with `wanted`, only the keys it names (what finish()
// reads: a span's other attributes would only take memory until the end).
Json attributesOf(const Json &owner, bool (*wanted)(const std::string &) = nullptr)
{
    Json out = Json::object();
    const Json *list = jsonChild(owner, "attributes");
    if (!list || !list->is_array())
        return out;
    for (const Json &kv : *list)
        if (const Json *key = jsonChild(kv, "key"); key && key->is_string() && (!wanted || wanted(key->get_ref<const std::string &>())))
            out[key->get<std::string>()] = anyValue(kv.value("value", Json()));
    return out;
}

// The span attributes finish() reads.
bool isReadSpanAttribute(const std::string &key)
{
    static const std::set<std::string, std::less<>> keys = {
        "gen_ai.agent.id", "gen_ai.agent.name", "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system",
        "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens", "gen_ai.usage.cost", "map.cost.usd", "map.task.id", "map.task.type",
        "map.agent.messages_sent", "map.agent.parent_id", "map.agent.role", "map.agent.state", "map.agent.session_id",
        "map.agent.scopes", "map.agent.unregistered"};
    return keys.count(key) > 0;
}

// ns since the epoch (a decimal string, or a number) as ms; -1 when absent or no time.
qint64 nanosToMs(const Json *v)
{
    if (!v)
        return -1;
    if (v->is_number_unsigned())
        return qint64(v->get<quint64>() / 1000000u);
    if (v->is_number())
        return qint64(v->get<double>() / 1e6);
    if (v->is_string()) {
        bool ok = false;
        const quint64 n = QByteArray::fromStdString(v->get<std::string>()).toULongLong(&ok);
        return ok ? qint64(n / 1000000u) : -1;
    }
    return -1;
}

bool isLowerHex(const std::string &s, size_t length)
{
    if (s.size() != length || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        return false;
    return s.find_first_not_of('0') != std::string::npos; // all zero: no id
}

// An attribute's value as text (a number or a boolean as its JSON); empty when absent or other.
std::string textOf(const Json &value)
{
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_number() || value.is_boolean())
        return value.dump();
    return {};
}

// One span event, or nothing when finish() does not read its kind.
std::optional<SpanEvent> spanEvent(const Json &e, qint64 spanStartMs)
{
    const Json *name = jsonChild(e, "name");
    if (!name || !name->is_string())
        return std::nullopt;
    SpanEvent event;
    const std::string &n = name->get_ref<const std::string &>();
    if (n == "map.message")
        event.kind = SpanEvent::Kind::Message;
    else if (n == "map.task.transition")
        event.kind = SpanEvent::Kind::TaskTransition;
    else
        return std::nullopt;
    event.timeMs = nanosToMs(jsonChild(e, "timeUnixNano"));
    if (event.timeMs < 0)
        event.timeMs = spanStartMs;
    const Json *list = jsonChild(e, "attributes");
    if (!list || !list->is_array())
        return event;
    for (const Json &kv : *list) {
        const Json *key = jsonChild(kv, "key");
        const Json *value = jsonChild(kv, "value");
        if (!key || !key->is_string() || !value)
            continue;
        const std::string &k = key->get_ref<const std::string &>();
        if (event.kind == SpanEvent::Kind::Message) {
            if (k == "map.message.to")
                event.to = anyValue(*value);
            else if (k == "map.message.address")
                event.address = textOf(anyValue(*value));
            else if (k == "map.message.id")
                event.id = textOf(anyValue(*value));
            else if (k == "map.message.payload")
                event.payload = textOf(anyValue(*value));
        } else if (k == "map.task.from_message") {
            event.fromMessage = anyValue(*value) == Json(true);
        } else if (k == "map.task.status") {
            event.status = textOf(anyValue(*value));
        } else if (k == "map.agent.id") {
            event.agent = textOf(anyValue(*value));
        }
    }
    return event;
}

} // namespace

OtlpImporter::OtlpImporter(QString sourceName)
    : d(std::make_unique<Impl>())
{
    d->source = std::move(sourceName);
}

OtlpImporter::~OtlpImporter() = default;
OtlpImporter::OtlpImporter(OtlpImporter &&) noexcept = default;
OtlpImporter &OtlpImporter::operator=(OtlpImporter &&) noexcept = default;

qint64 OtlpImporter::spans() const { return qint64(d->spans.size()); }
qint64 OtlpImporter::droppedSpans() const { return d->dropped; }
qint64 OtlpImporter::agents() const { return d->agentCount; }

bool OtlpImporter::add(const Json &request, QString *why)
{
    if (!isOtlpRequest(request)) {
        if (why)
            *why = QStringLiteral("not an OTLP trace request (no resourceSpans array)");
        return false;
    }
    for (const Json &rs : request.at("resourceSpans")) {
        if (!rs.is_object())
            continue;
        QString service;
        if (const Json *resource = jsonChild(rs, "resource"); resource && resource->is_object())
            service = text(attributesOf(*resource), "service.name");
        const Json *scopes = jsonChild(rs, "scopeSpans");
        if (!scopes || !scopes->is_array())
            scopes = jsonChild(rs, "instrumentationLibrarySpans"); // before OTLP 1.0
        if (!scopes || !scopes->is_array())
            continue;
        for (const Json &ss : *scopes) {
            const Json *list = jsonChild(ss, "spans");
            if (!list || !list->is_array())
                continue;
            for (const Json &s : *list) {
                Span span;
                if (const Json *v = jsonChild(s, "traceId"); v && v->is_string())
                    span.traceId = v->get<std::string>();
                if (const Json *v = jsonChild(s, "spanId"); v && v->is_string())
                    span.spanId = v->get<std::string>();
                if (const Json *v = jsonChild(s, "parentSpanId"); v && v->is_string() && isLowerHex(v->get<std::string>(), 16))
                    span.parentId = v->get<std::string>(); // anything else: no parent
                const Json *events = jsonChild(s, "events");
                const size_t eventCount = events && events->is_array() ? events->size() : 0;
                if (!isLowerHex(span.traceId, 32) || !isLowerHex(span.spanId, 16)
                    || qint64(d->spans.size()) >= kMaxSpans || d->events + qint64(eventCount) > kMaxEvents) {
                    ++d->dropped;
                    continue;
                }
                // Hex digits only (checked above): ASCII, so lower-casing byte by byte is safe.
                auto lower = [](std::string &id) {
                    for (char &c : id)
                        if (c >= 'A' && c <= 'F')
                            c = char(c - 'A' + 'a');
                };
                lower(span.traceId);
                lower(span.spanId);
                lower(span.parentId);
                if (const Json *v = jsonChild(s, "name"); v && v->is_string())
                    span.name = toQString(*v);
                span.service = service;
                span.startMs = nanosToMs(jsonChild(s, "startTimeUnixNano"));
                span.endMs = nanosToMs(jsonChild(s, "endTimeUnixNano"));
                if (span.startMs < 0)
                    span.startMs = std::max<qint64>(0, span.endMs);
                span.endMs = std::max(span.startMs, span.endMs);
                span.attributes = attributesOf(s, isReadSpanAttribute);
                if (const Json *status = jsonChild(s, "status"); status && status->is_object()) {
                    if (const Json *code = jsonChild(*status, "code"); code && code->is_number_integer())
                        span.statusCode = code->get<int>();
                    else if (code && code->is_string()) // an enum by name, as some writers give it
                        span.statusCode = code->get<std::string>() == "STATUS_CODE_ERROR" ? 2
                            : code->get<std::string>() == "STATUS_CODE_OK"                 ? 1
                                                                                           : 0;
                    if (const Json *m = jsonChild(*status, "message"); m && m->is_string())
                        span.statusMessage = toQString(*m);
                }
                for (size_t i = 0; i < eventCount; ++i)
                    if (std::optional<SpanEvent> event = spanEvent(events->at(i), span.startMs))
                        span.events.push_back(std::move(*event));
                d->events += qint64(eventCount);
                d->spans.push_back(std::move(span));
            }
        }
    }
    return true;
}

} // namespace mapi
