// OTLP/JSON requests read into the spans the import keeps (OtlpImportSpans.h); OtlpImport.cpp
// makes them MAP events (trace/Otlp.h says how).
#include "trace/OtlpImportSpans.h"

#include "protocol/SimdJsonConvert.h"

#include <cmath>
#include <set>
#include <string_view>

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

// add() walks a request through one of these two: an nlohmann value, or simdjson's DOM, where no
// tree of the whole request is made (a request line is megabytes: making its tree took a third of
// the import). Leaves are read as nlohmann values (json()), small, so that both walks read alike.
// Not map/JsonViews.h's JsonView and SimdView: their views keep an object's members at its first
// lookup, which this walk of one lookup or two per object paid with 15 % of the import (measured).
struct NlohmannNode
{
    const Json *v = nullptr;
    explicit operator bool() const { return v != nullptr; }
    NlohmannNode operator[](std::string_view key) const { return {v ? jsonChild(*v, key) : nullptr}; }
    bool isArray() const { return v && v->is_array(); }
    bool isObject() const { return v && v->is_object(); }
    size_t size() const { return isArray() ? v->size() : 0; }
    template<typename F> void each(F &&f) const
    {
        if (isArray())
            for (const Json &x : *v)
                f(NlohmannNode{&x});
    }
    std::optional<std::string_view> string() const
    {
        return v && v->is_string() ? std::optional<std::string_view>(v->get_ref<const std::string &>()) : std::nullopt;
    }
    Json json() const { return v ? *v : Json(); }
};

struct SimdNode
{
    simdjson::dom::element e;
    bool valid = false;
    explicit operator bool() const { return valid; }
    SimdNode operator[](std::string_view key) const
    {
        simdjson::dom::object object;
        simdjson::dom::element value;
        if (!valid || e.get_object().get(object) != simdjson::SUCCESS || !lastMember(object, key, value))
            return {{}, false, differs};
        return {value, true, differs};
    }
    bool isArray() const { return valid && e.is_array(); }
    bool isObject() const { return valid && e.is_object(); }
    size_t size() const
    {
        simdjson::dom::array array;
        return valid && e.get_array().get(array) == simdjson::SUCCESS ? array.size() : 0;
    }
    template<typename F> void each(F &&f) const
    {
        simdjson::dom::array array;
        if (valid && e.get_array().get(array) == simdjson::SUCCESS)
            for (simdjson::dom::element x : array)
                f(SimdNode{x, true, differs});
    }
    std::optional<std::string_view> string() const
    {
        std::string_view text;
        return valid && e.get_string().get(text) == simdjson::SUCCESS ? std::optional<std::string_view>(text) : std::nullopt;
    }
    Json json() const { return valid ? jsonFromSimd(e, differs) : Json(); }
    bool *differs = nullptr; // set when a value reads otherwise through nlohmann (-0): add() reads the request again there
};

QString qstring(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

// A KeyValue list as an object {key: value}; with `wanted`, only the keys it names (what finish()
// reads: a span's other attributes would only take memory until the end).
template<typename Node> Json attributesOf(Node owner, bool (*wanted)(std::string_view) = nullptr)
{
    Json out = Json::object();
    owner["attributes"].each([&](Node kv) {
        const std::optional<std::string_view> key = kv["key"].string();
        if (key && (!wanted || wanted(*key)))
            out[std::string(*key)] = anyValue(kv["value"].json());
    });
    return out;
}

// The span attributes finish() reads.
bool isReadSpanAttribute(std::string_view key)
{
    static const std::set<std::string, std::less<>> keys = {
        "gen_ai.agent.id", "gen_ai.agent.name", "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system",
        "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens", "gen_ai.usage.cost", "map.cost.usd", "map.task.id", "map.task.type",
        "map.agent.messages_sent", "map.agent.parent_id", "map.agent.role", "map.agent.state", "map.agent.session_id",
        "map.agent.scopes", "map.agent.unregistered"};
    return keys.find(key) != keys.end();
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
template<typename Node> qint64 nanosToMs(Node node)
{
    const Json value = node.json();
    return nanosToMs(node ? &value : nullptr);
}

bool isLowerHex(std::string_view s, size_t length)
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

// One span event, its texts into `spool`, or nothing when finish() does not read its kind.
template<typename Node> std::optional<SpanEvent> spanEvent(Node e, qint64 spanStartMs, TextSpool &spool)
{
    const std::optional<std::string_view> name = e["name"].string();
    if (!name)
        return std::nullopt;
    SpanEvent event;
    if (*name == "map.message")
        event.kind = SpanEvent::Kind::Message;
    else if (*name == "map.task.transition")
        event.kind = SpanEvent::Kind::TaskTransition;
    else
        return std::nullopt;
    event.timeMs = nanosToMs(e["timeUnixNano"]);
    if (event.timeMs < 0)
        event.timeMs = spanStartMs;
    Json to; // map.message.to (null: absent)
    std::string address, id, payload, status, agent;
    e["attributes"].each([&](Node kv) {
        const std::optional<std::string_view> key = kv["key"].string();
        if (!key)
            return;
        const Node value = kv["value"]; // absent: null, which reads as nothing (as a later duplicate too)
        const std::string_view k = *key;
        if (event.kind == SpanEvent::Kind::Message) {
            if (k == "map.message.to")
                to = anyValue(value.json());
            else if (k == "map.message.address")
                address = textOf(anyValue(value.json()));
            else if (k == "map.message.id")
                id = textOf(anyValue(value.json()));
            else if (k == "map.message.payload")
                payload = textOf(anyValue(value.json()));
        } else if (k == "map.task.from_message") {
            event.fromMessage = anyValue(value.json()) == Json(true);
        } else if (k == "map.task.status") {
            status = textOf(anyValue(value.json()));
        } else if (k == "map.agent.id") {
            agent = textOf(anyValue(value.json()));
        }
    });
    if (event.kind == SpanEvent::Kind::TaskTransition) {
        event.texts = spool.append({status, agent});
        return event;
    }
    // The recipients as the event says them: the list, its one element, else the address, else everyone.
    if (!to.is_array() || to.empty())
        to = address.empty() ? Json("*") : Json(address);
    else if (to.size() == 1)
        to = Json(to.at(0));
    event.hasId = !id.empty();
    event.toIsJson = !to.is_string();
    const std::string toText = event.toIsJson ? to.dump(-1, ' ', false, Json::error_handler_t::replace) : std::string();
    event.texts = spool.append({id, event.toIsJson ? std::string_view(toText) : std::string_view(to.get_ref<const std::string &>()), payload});
    return event;
}

// What add() fills: the spans kept, and the counts of their events and of the spans dropped.
struct Kept
{
    std::vector<Span> &spans;
    std::vector<SpanEvent> &spanEvents;
    TextSpool &spool;
    qint64 &events;
    qint64 &dropped;
};

// One request's spans into `d`; false, with `why`, when it is none (no resourceSpans array).
template<typename Node> bool addRequest(Kept d, Node request, QString *why)
{
    const Node resourceSpans = request["resourceSpans"];
    if (!request.isObject() || !resourceSpans.isArray()) {
        if (why)
            *why = QStringLiteral("not an OTLP trace request (no resourceSpans array)");
        return false;
    }
    resourceSpans.each([&](Node rs) {
        if (!rs.isObject())
            return;
        QString service;
        if (const Node resource = rs["resource"]; resource.isObject())
            service = text(attributesOf(resource), "service.name");
        Node scopes = rs["scopeSpans"];
        if (!scopes.isArray())
            scopes = rs["instrumentationLibrarySpans"]; // before OTLP 1.0
        scopes.each([&](Node ss) {
            ss["spans"].each([&](Node s) {
                Span span;
                if (const auto v = s["traceId"].string())
                    span.traceId = std::string(*v);
                if (const auto v = s["spanId"].string())
                    span.spanId = std::string(*v);
                if (const auto v = s["parentSpanId"].string(); v && isLowerHex(*v, 16))
                    span.parentId = std::string(*v); // anything else: no parent
                const Node events = s["events"];
                const size_t eventCount = events.size();
                if (!isLowerHex(span.traceId, 32) || !isLowerHex(span.spanId, 16)
                    || qint64(d.spans.size()) >= OtlpImporter::kMaxSpans || d.events + qint64(eventCount) > OtlpImporter::kMaxEvents) {
                    ++d.dropped;
                    return;
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
                if (const auto v = s["name"].string())
                    span.name = qstring(*v);
                span.service = service;
                span.startMs = nanosToMs(s["startTimeUnixNano"]);
                span.endMs = nanosToMs(s["endTimeUnixNano"]);
                if (span.startMs < 0)
                    span.startMs = std::max<qint64>(0, span.endMs);
                span.endMs = std::max(span.startMs, span.endMs);
                span.attributes = attributesOf(s, isReadSpanAttribute);
                if (const Node status = s["status"]; status.isObject()) {
                    const Json code = status["code"].json();
                    if (code.is_number_integer())
                        span.statusCode = code.get<int>();
                    else if (code.is_string()) // an enum by name, as some writers give it
                        span.statusCode = code.get<std::string>() == "STATUS_CODE_ERROR" ? 2
                            : code.get<std::string>() == "STATUS_CODE_OK"                 ? 1
                                                                                          : 0;
                    if (const auto m = status["message"].string())
                        span.statusMessage = qstring(*m);
                }
                span.firstEvent = d.spanEvents.size();
                events.each([&](Node e) {
                    if (const std::optional<SpanEvent> event = spanEvent(e, span.startMs, d.spool))
                        d.spanEvents.push_back(*event);
                });
                span.eventCount = quint32(d.spanEvents.size() - span.firstEvent);
                d.events += qint64(eventCount);
                d.spans.push_back(std::move(span));
            });
        });
    });
    return true;
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
QString OtlpImporter::error() const { return d->spool.error(); }
void OtlpImporter::setSpoolFailsPastForTest(qint64 bytes) { d->spool.setFailWritesPastForTest(bytes); }
qint64 OtlpImporter::agents() const { return d->agentCount; }

bool OtlpImporter::add(const Json &request, QString *why)
{
    return addRequest(Kept{d->spans, d->spanEvents, d->spool, d->events, d->dropped}, NlohmannNode{&request}, why);
}

bool OtlpImporter::add(const QByteArray &text, QString *why)
{
    thread_local simdjson::dom::parser parser; // one per thread: trace loads run on several
    simdjson::dom::element root;
    if (parseText(parser, text, root) == simdjson::SUCCESS) {
        const size_t spansBefore = d->spans.size();
        const size_t spanEventsBefore = d->spanEvents.size();
        const qint64 eventsBefore = d->events;
        const qint64 droppedBefore = d->dropped;
        bool differs = false;
        const bool read = addRequest(Kept{d->spans, d->spanEvents, d->spool, d->events, d->dropped}, SimdNode{root, true, &differs}, why);
        if (!differs)
            return read;
        d->spans.resize(spansBefore); // read again through nlohmann, below
        d->spanEvents.resize(spanEventsBefore); // (their texts stay in the spool, unread)
        d->events = eventsBefore;
        d->dropped = droppedBefore;
    }
    // What simdjson refuses (an integer beyond 64 bits, say) or reads otherwise, nlohmann's parser reads.
    const Json request = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
    if (request.is_discarded()) {
        if (why)
            *why = QStringLiteral("not JSON");
        return false;
    }
    return add(request, why);
}

} // namespace mapi
