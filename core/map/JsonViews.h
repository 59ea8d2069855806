// Internal: read-only views of a JSON value, one over nlohmann's tree and one over simdjson's
// DOM, so that code reading MAP frames and payloads is written once and runs on both (Dialect.cpp,
// PayloadConventions.cpp). Include only from .cpp files (it pulls in simdjson).
#pragma once

#include "protocol/FastHash.h"
#include "protocol/JsonRpc.h"
#include "protocol/SimdJsonConvert.h"

#include <QHash>
#include <QString>

#include <simdjson.h>

#include <cstring>
#include <memory>
#include <string_view>

namespace mapi {

// Two kinds of values: nlohmann's (snapshots, the default parser, tests) and simdjson's DOM (the
// hot path of map/event frames and their payloads: no nlohmann tree of the frame is built, only
// of the parts a record keeps). Both views answer every question alike, so code written against
// a view gives the same result on both.

// Whether a text field's values repeat from event to event (agent, session, scope ids, types,
// states) or are new each time (event and message ids).
enum class Text { Repeats, Unique };

// The QStrings of repeating values, per thread: a repeated agent id costs a hash and a compare
// instead of an allocation, a UTF-8 conversion and a free, and the copies the store keeps of it
// share one string. A direct-mapped cache of kSlots strings: a new value takes its slot from
// the one there before, so memory stays bounded whatever a server sends, and values that
// repeat stay (a run of many distinct values only costs conversions).
inline QString textOf(const char *data, size_t size, Text text)
{
    constexpr size_t kSlots = 4096;
    constexpr size_t kMaxBytes = 96;
    if (text == Text::Unique || size > kMaxBytes || size == 0)
        return QString::fromUtf8(data, qsizetype(size));
    struct Slot
    {
        QByteArray utf8;
        QString text;
    };
    thread_local std::unique_ptr<Slot[]> cache(new Slot[kSlots]);
    Slot &slot = cache[fastHash(data, size) & (kSlots - 1)];
    if (size_t(slot.utf8.size()) == size && std::memcmp(slot.utf8.constData(), data, size) == 0)
        return slot.text;
    slot.utf8 = QByteArray(data, qsizetype(size));
    slot.text = QString::fromUtf8(data, qsizetype(size));
    return slot.text;
}

// Whether `text` is `data` (UTF-8) for certain, without converting: ASCII compared byte for
// byte; any other byte answers false (the caller then converts, which gives the same text).
inline bool sameAsciiText(const QString &text, const char *data, size_t size)
{
    if (size_t(text.size()) != size)
        return false;
    const QChar *chars = text.constData();
    for (size_t i = 0; i < size; ++i)
        if (static_cast<unsigned char>(data[i]) >= 0x80 || chars[i].unicode() != static_cast<unsigned char>(data[i]))
            return false;
    return true;
}

// A view of an nlohmann value; `json` null means "absent".
struct JsonView
{
    const Json *json = nullptr;

    bool present() const { return json != nullptr; }
    bool isObject() const { return json && json->is_object(); }
    bool isArray() const { return json && json->is_array(); }
    bool isString() const { return json && json->is_string(); }
    bool isNull() const { return !json || json->is_null(); }
    bool isNumber() const { return json && json->is_number(); }
    bool isBoolean() const { return json && json->is_boolean(); }
    JsonView child(std::string_view key) const { return {jsonChild(*json, key)}; }
    QString string(Text text = Text::Repeats) const
    {
        const std::string &value = json->get_ref<const std::string &>();
        return textOf(value.data(), value.size(), text);
    }
    Json toJson() const { return *json; }
    bool isText(const QString &text) const // a string whose text is `text` (false: unsure)
    {
        if (!isString())
            return false;
        const std::string &value = json->get_ref<const std::string &>();
        return sameAsciiText(text, value.data(), value.size());
    }
    QByteArray text() const
    {
        const std::string text = json->dump(-1, ' ', false, Json::error_handler_t::replace);
        return QByteArray(text.data(), qsizetype(text.size()));
    }
    template<typename F>
    void forEachItem(F &&f) const
    {
        for (const Json &item : *json)
            f(JsonView{&item});
    }
    bool empty() const { return json->empty(); }
    JsonView front() const { return {&json->front()}; }
};

// A view of a simdjson DOM element. Lookups take the last of duplicate keys, as nlohmann does.
// Any number converted through toJson() that nlohmann would read differently (-0) sets
// `*differs`: the caller then decodes the frame again through nlohmann.
struct SimdView
{
    SimdView(simdjson::dom::element element = {}, bool exists = false, bool *differs = nullptr,
             bool keepPayloadText = true)
        : element(element), exists(exists), differs(differs), keepPayloadText(keepPayloadText)
    {
    }

    simdjson::dom::element element;
    bool exists = false;
    bool *differs = nullptr;
    // false: messages read through this view leave a sent payload's text in the frame as well
    // (a trace load that keeps no frames with its events: the text would be dropped unread).
    bool keepPayloadText = true;

    using Type = simdjson::dom::element_type;
    bool present() const { return exists; }
    bool isObject() const { return exists && element.type() == Type::OBJECT; }
    bool isArray() const { return exists && element.type() == Type::ARRAY; }
    bool isString() const { return exists && element.type() == Type::STRING; }
    bool isNull() const { return !exists || element.type() == Type::NULL_VALUE; }
    bool isNumber() const
    {
        if (!exists)
            return false;
        const Type t = element.type();
        return t == Type::INT64 || t == Type::UINT64 || t == Type::DOUBLE;
    }
    bool isBoolean() const { return exists && element.type() == Type::BOOL; }
    SimdView child(std::string_view key) const // literals: the length is known when compiling
    {
        SimdView out{{}, false, differs, keepPayloadText};
        if (!isObject())
            return out;
        if (m_memberCount == kUnread)
            readMembers();
        if (m_memberCount == kTooMany) {
            out.exists = lastMember(simdjson::dom::object(element), key, out.element);
            return out;
        }
        for (int i = m_memberCount - 1; i >= 0; --i) { // from the end: the last duplicate wins
            const Member &m = m_members.items[i];
            if (m.size == key.size() && (key.empty() || (m.key[0] == key[0] && std::memcmp(m.key, key.data(), key.size()) == 0))) {
                out.element = m.value;
                out.exists = true;
                break;
            }
        }
        return out;
    }
    QString string(Text text = Text::Repeats) const
    {
        const std::string_view value(element);
        return textOf(value.data(), value.size(), text);
    }
    Json toJson() const { return jsonFromSimd(element, differs); }
    bool isText(const QString &text) const // a string whose text is `text` (false: unsure)
    {
        if (!isString())
            return false;
        const std::string_view value(element);
        return sameAsciiText(text, value.data(), value.size());
    }
    // Minified by simdjson. As with toJson(), a frame with a negative zero goes through nlohmann
    // instead (the two parsers may read it differently). In minified JSON a number follows ':',
    // '[' or ','; a string holding such text only costs a fallback, never a wrong value.
    QByteArray text() const
    {
        const std::string text = simdjson::to_string(element);
        for (size_t at = text.find("-0"); differs && at != std::string::npos; at = text.find("-0", at + 2)) {
            const char before = at ? text[at - 1] : ':';
            if (before == ':' || before == '[' || before == ',') {
                *differs = true;
                break;
            }
        }
        return QByteArray(text.data(), qsizetype(text.size()));
    }
    template<typename F>
    void forEachItem(F &&f) const
    {
        for (const simdjson::dom::element item : simdjson::dom::array(element))
            f(SimdView{item, true, differs, keepPayloadText});
    }
    bool empty() const { return simdjson::dom::array(element).size() == 0; }
    SimdView front() const { return {*simdjson::dom::array(element).begin(), true, differs, keepPayloadText}; }

private:
    // An object's members, read once at its first lookup: a map/event frame's objects are each
    // asked for several members (the event some seven, a message ten), and walking simdjson's
    // tape for every lookup was the decoder's largest item (perf: lastMember, child, memcmp).
    // Objects of more members than kMaxMembers are walked at each lookup instead. Not
    // initialised until read (a view is made for every lookup, most of them of scalars).
    struct Member
    {
        const char *key;
        size_t size;
        simdjson::dom::element value;
    };
    static constexpr int kMaxMembers = 12;
    static constexpr int kUnread = -1;
    static constexpr int kTooMany = -2;
    union Members
    {
        Members() {}
        Member items[kMaxMembers];
    };
    void readMembers() const
    {
        const simdjson::dom::object object(element);
        int count = 0;
        for (auto it = object.begin(), end = object.end(); it != end; ++it) {
            if (count == kMaxMembers) {
                m_memberCount = kTooMany;
                return;
            }
            m_members.items[count++] = Member{it.key_c_str(), it.key_length(), it.value()};
        }
        m_memberCount = count;
    }
    mutable int m_memberCount = kUnread;
    mutable Members m_members;
};

template<typename View>
inline QString scalarText(const View &value, Text text = Text::Repeats)
{
    if (value.isString())
        return value.string(text);
    if (value.isNull())
        return {};
    return toQString(value.toJson());
}

} // namespace mapi
