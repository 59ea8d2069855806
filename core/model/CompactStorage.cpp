#include "model/CompactStorage.h"

#include <QAnyStringView>
#include <QUtf8StringView>

#include <array>
#include <cstring>

namespace mapi {

// ---- NameTable ------------------------------------------------------------------------------

NameTable::NameTable()
{
    clear();
}

int NameTable::intern(const QString &name)
{
    if (name.isEmpty())
        return 0;
    Recent &recent = m_recent[(quintptr(name.constData()) >> 4) % kRecent];
    if (recent.name.constData() == name.constData() && recent.name.size() == name.size())
        return recent.row;
    auto it = m_rows.constFind(name);
    int row;
    if (it != m_rows.constEnd()) {
        row = *it;
    } else {
        row = int(m_names.size());
        m_names.push_back(name);
        m_rows.insert(name, row);
    }
    recent.name = name;
    recent.row = row;
    return row;
}

void NameTable::clear()
{
    m_names.assign(1, QString());
    m_rows.clear();
    for (Recent &recent : m_recent)
        recent = Recent();
}

// ---- TextArena ------------------------------------------------------------------------------

namespace {

size_t varintSize(size_t value)
{
    size_t n = 1;
    while (value >= 0x80) {
        value >>= 7;
        ++n;
    }
    return n;
}

char *writeVarint(char *out, size_t value)
{
    while (value >= 0x80) {
        *out++ = char(quint8(value) | 0x80);
        value >>= 7;
    }
    *out++ = char(value);
    return out;
}

// Crockford's base32 as ULIDs are written: upper case, no I, L, O, U.
constexpr char kUlidDigits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr qsizetype kUlidChars = 26;
constexpr size_t kUlidBytes = 16;
constexpr char kPackedUlid = 0; // in place of a length: no kept text is empty
// A UUID in its usual form (36 characters, lower-case hex, dashes after 8, 12, 16 and 20), as
// agents write envelope ids: 16 bytes after these two, which no length writes (a varint never
// ends in a zero byte after a continued one). 18 bytes in place of 37.
constexpr char kPackedUuid[2] = {char(0x80), 0};
constexpr qsizetype kUuidChars = 36;
constexpr size_t kUuidBytes = 16;

bool isUuidDash(qsizetype i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// The value of a lower-case hex digit, 16 for any other character below 128.
constexpr std::array<quint8, 128> kHexValue = [] {
    std::array<quint8, 128> table{};
    for (size_t c = 0; c < table.size(); ++c)
        table[c] = c >= '0' && c <= '9' ? quint8(c - '0') : c >= 'a' && c <= 'f' ? quint8(c - 'a' + 10) : 16;
    return table;
}();
// Where each byte's two digits are in the text (the dashes skipped).
constexpr std::array<quint8, kUuidBytes> kUuidByteAt = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};

// The 16 bytes of a UUID of the usual form; false for any other text (upper case included:
// it would not be written back the same). Called for every id a message log keeps: the digits
// are read without a branch each, and a non-digit anywhere sets a bit that fails it at the end.
bool uuidBytes(QStringView text, quint8 *bytes)
{
    if (text.size() != kUuidChars || text[8] != u'-' || text[13] != u'-' || text[18] != u'-' || text[23] != u'-')
        return false;
    const char16_t *chars = text.utf16();
    unsigned invalid = 0;
    const auto digit = [&](qsizetype at) {
        const char16_t c = chars[at];
        const quint8 value = kHexValue[c & 0x7f];
        invalid |= unsigned(c >> 7) | unsigned(value >> 4);
        return value;
    };
    for (size_t i = 0; i < kUuidBytes; ++i)
        bytes[i] = quint8(digit(kUuidByteAt[i]) << 4 | (digit(kUuidByteAt[i] + 1) & 0xf));
    return invalid == 0;
}

// A packed UUID's text, lower case with dashes, into `out` (kUuidChars of Char).
template<typename Char>
void writeUuid(const char *bytes, Char *out)
{
    static constexpr char kHex[] = "0123456789abcdef";
    int nibble = 0;
    for (qsizetype i = 0; i < kUuidChars; ++i) {
        if (isUuidDash(i)) {
            out[i] = Char(u'-');
            continue;
        }
        const quint8 byte = quint8(bytes[nibble / 2]);
        out[i] = Char(char16_t(kHex[nibble % 2 == 0 ? byte >> 4 : byte & 0xf]));
        ++nibble;
    }
}

QString uuidText(const char *bytes)
{
    QString text(kUuidChars, Qt::Uninitialized);
    writeUuid(bytes, text.data());
    return text;
}

// Each character's digit, 0xff for any that is no digit (a compile-time table: no guard to
// check per call, which was a tenth of applying an event with its two ids).
constexpr std::array<quint8, 128> kUlidDigitOf = [] {
    std::array<quint8, 128> t{};
    for (quint8 &d : t)
        d = 0xff;
    for (int i = 0; i < 32; ++i)
        t[size_t(kUlidDigits[i])] = quint8(i);
    return t;
}();

// The value of `count` characters from `chars`; `bad` gains 0xe0 bits for any non-digit.
inline quint64 ulidDigits(const QChar *chars, int count, unsigned &bad)
{
    quint64 value = 0;
    for (int i = 0; i < count; ++i) {
        const char16_t c = chars[i].unicode();
        const unsigned digit = c < 128 ? kUlidDigitOf[c] : 0xffu;
        bad |= digit;
        value = (value << 5) | (digit & 31);
    }
    return value;
}

} // namespace

bool ulidValue(QStringView text, quint64 &high, quint64 &low)
{
    if (text.size() != kUlidChars)
        return false;
    // 130 bits in three parts that do not wait on each other: characters 0-1 (the top 8 bits,
    // the first character at most 7), 2-13 and 14-25 (60 bits each).
    const QChar *chars = text.data();
    unsigned bad = 0;
    const quint64 top = ulidDigits(chars, 2, bad);
    const quint64 middle = ulidDigits(chars + 2, 12, bad);
    const quint64 bottom = ulidDigits(chars + 14, 12, bad);
    if ((bad & 0xe0) || top > 0xff)
        return false;
    high = (top << 56) | (middle >> 4);
    low = (middle << 60) | bottom;
    return true;
}

namespace {

// The ULID of ulidValue() (high, low) as its text.
// A ULID's text (kUlidChars of Char) into `out`.
template<typename Char>
void writeUlid(quint64 high, quint64 low, Char *out)
{
    for (qsizetype i = kUlidChars - 1; i >= 0; --i) {
        out[i] = Char(char16_t(kUlidDigits[low & 31]));
        low = (low >> 5) | (high << 59);
        high >>= 5;
    }
}

QString ulidText(quint64 high, quint64 low)
{
    QString text(kUlidChars, Qt::Uninitialized);
    writeUlid(high, low, text.data());
    return text;
}

} // namespace

size_t TextArena::openSlot(size_t bytes)
{
    size_t slot;
    if (!m_freeSlots.empty()) {
        slot = m_freeSlots.back();
        m_freeSlots.pop_back();
    } else {
        slot = m_blocks.size();
        m_blocks.emplace_back();
    }
    Block &block = m_blocks[slot];
    block.data = std::make_unique<char[]>(bytes);
    block.size = bytes;
    m_liveBytes += bytes;
    return slot;
}

char *TextArena::reserve(size_t bytes, Ref &ref)
{
    if (bytes > m_blockBytes / 4) { // a large text gets a block of its own; the open block keeps filling
        const size_t slot = openSlot(bytes);
        m_blocks[slot].newestOwner = m_owner;
        ref = Ref(slot + 1) << kOffsetBits;
        return m_blocks[slot].data.get();
    }
    if (m_open < 0 || m_used + bytes > m_blockBytes) {
        m_open = qsizetype(openSlot(m_blockBytes));
        m_used = 0;
    }
    Block &block = m_blocks[size_t(m_open)];
    block.newestOwner = m_owner;
    ref = (Ref(m_open + 1) << kOffsetBits) | Ref(m_used);
    char *out = block.data.get() + m_used;
    m_used += bytes;
    return out;
}

void TextArena::releaseOwnersBefore(qint64 owner)
{
    for (size_t slot = 0; slot < m_blocks.size(); ++slot) {
        Block &block = m_blocks[slot];
        if (!block.data || block.newestOwner >= owner)
            continue;
        m_liveBytes -= block.size;
        block = Block();
        m_freeSlots.push_back(slot);
        if (qsizetype(slot) == m_open)
            m_open = -1;
    }
}

TextArena::Ref TextArena::appendUtf8(QByteArrayView utf8)
{
    if (utf8.isEmpty())
        return 0;
    const size_t size = size_t(utf8.size());
    Ref ref = 0;
    char *out = writeVarint(reserve(varintSize(size) + size, ref), size);
    std::memcpy(out, utf8.data(), size);
    return ref;
}

TextArena::Ref TextArena::append(QStringView text)
{
    if (text.isEmpty())
        return 0;
    // Ids are ASCII nearly always: written without a conversion buffer.
    const QChar *chars = text.data();
    const size_t size = size_t(text.size());
    bool ascii = true;
    for (size_t i = 0; i < size && ascii; ++i)
        ascii = chars[i].unicode() < 0x80;
    if (!ascii)
        return appendUtf8(text.toUtf8());
    if (quint64 high = 0, low = 0; ulidValue(text, high, low))
        return appendUlid(high, low);
    Ref ref = 0;
    if (quint8 uuid[kUuidBytes]; uuidBytes(text, uuid)) {
        char *out = reserve(sizeof(kPackedUuid) + kUuidBytes, ref);
        std::memcpy(out, kPackedUuid, sizeof(kPackedUuid));
        std::memcpy(out + sizeof(kPackedUuid), uuid, kUuidBytes);
        return ref;
    }
    char *out = writeVarint(reserve(varintSize(size) + size, ref), size);
    for (size_t i = 0; i < size; ++i)
        out[i] = char(chars[i].unicode());
    return ref;
}

TextArena::Ref TextArena::appendUlid(quint64 high, quint64 low)
{
    Ref ref = 0;
    char *out = reserve(1 + kUlidBytes, ref);
    out[0] = kPackedUlid;
    for (size_t i = 0; i < 8; ++i) {
        out[1 + i] = char(quint8(high >> (56 - 8 * i)));
        out[9 + i] = char(quint8(low >> (56 - 8 * i)));
    }
    return ref;
}

bool TextArena::ulidAt(Ref ref, quint64 &high, quint64 &low) const
{
    if (!ref)
        return false;
    const char *bytes = at(ref);
    if (*bytes != kPackedUlid)
        return false;
    high = 0;
    low = 0;
    for (size_t i = 1; i <= 8; ++i) {
        high = (high << 8) | quint8(bytes[i]);
        low = (low << 8) | quint8(bytes[8 + i]);
    }
    return true;
}

const char *TextArena::at(Ref ref) const
{
    const size_t slot = size_t(ref >> kOffsetBits) - 1;
    return m_blocks[slot].data.get() + (ref & ((Ref(1) << kOffsetBits) - 1));
}

const char *TextArena::uuidAt(Ref ref) const
{
    if (!ref)
        return nullptr;
    const char *bytes = at(ref);
    return bytes[0] == kPackedUuid[0] && bytes[1] == kPackedUuid[1] ? bytes + sizeof(kPackedUuid) : nullptr;
}

QString TextArena::text(Ref ref) const
{
    if (quint64 high = 0, low = 0; ulidAt(ref, high, low))
        return ulidText(high, low);
    if (const char *uuid = uuidAt(ref))
        return uuidText(uuid);
    return QString::fromUtf8(utf8(ref));
}

QByteArrayView TextArena::utf8(Ref ref) const
{
    if (!ref || *at(ref) == kPackedUlid || uuidAt(ref))
        return {};
    const char *at = this->at(ref);
    size_t size = 0;
    for (int shift = 0;; shift += 7) {
        const quint8 byte = quint8(*at++);
        size |= size_t(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            break;
    }
    return QByteArrayView(at, qsizetype(size));
}

QByteArrayView TextArena::utf8(Ref ref, Scratch &scratch) const
{
    static_assert(kUuidChars <= qsizetype(std::tuple_size_v<Scratch>) && kUlidChars <= qsizetype(std::tuple_size_v<Scratch>));
    if (quint64 high = 0, low = 0; ulidAt(ref, high, low)) {
        writeUlid(high, low, scratch.data());
        return QByteArrayView(scratch.data(), kUlidChars);
    }
    if (const char *uuid = uuidAt(ref)) {
        writeUuid(uuid, scratch.data());
        return QByteArrayView(scratch.data(), kUuidChars);
    }
    return utf8(ref);
}

bool TextArena::equals(Ref ref, QStringView text) const
{
    if (quint64 keptHigh = 0, keptLow = 0; ulidAt(ref, keptHigh, keptLow)) {
        quint64 high = 0;
        quint64 low = 0;
        return ulidValue(text, high, low) && high == keptHigh && low == keptLow;
    }
    if (const char *kept = uuidAt(ref)) {
        quint8 uuid[kUuidBytes];
        return uuidBytes(text, uuid) && std::memcmp(uuid, kept, kUuidBytes) == 0;
    }
    const QByteArrayView bytes = utf8(ref);
    if (bytes.size() == text.size()) { // ASCII on both sides is the common case
        const QChar *chars = text.data();
        qsizetype i = 0;
        while (i < bytes.size() && chars[i].unicode() == quint8(bytes[i]) && chars[i].unicode() < 0x80)
            ++i;
        if (i == bytes.size())
            return true;
    }
    return QAnyStringView::equal(QUtf8StringView(bytes.data(), bytes.size()), text);
}

size_t TextArena::memoryBytes() const
{
    return m_liveBytes + m_blocks.capacity() * sizeof(Block);
}

void TextArena::clear()
{
    m_blocks.clear();
    m_freeSlots.clear();
    m_liveBytes = 0;
    m_owner = 0;
    m_open = -1;
    m_used = 0;
}

// ---- IdIndex --------------------------------------------------------------------------------

namespace {

void placeSlot(std::vector<quint64> &table, quint64 slot)
{
    const size_t mask = table.size() - 1;
    size_t at = size_t(slot >> 32) & mask;
    while (table[at])
        at = (at + 1) & mask;
    table[at] = slot;
}

} // namespace

void IdIndex::placePending()
{
#if defined(__GNUC__) || defined(__clang__)
    // Where each slot goes, unless a new or grown table takes it: then only the fetch is wasted.
    if (!m_generations.empty() && !m_generations.back().table.empty()) {
        const std::vector<quint64> &table = m_generations.back().table;
        const size_t mask = table.size() - 1;
        for (const quint64 slot : m_pending)
            __builtin_prefetch(&table[size_t(slot >> 32) & mask], 1);
    }
#endif
    for (const quint64 slot : m_pending)
        place(slot);
    m_pending.clear();
}

void IdIndex::place(quint64 slot)
{
    if (m_generations.empty() || m_generations.back().count >= m_generationRows) {
        m_generations.emplace_back();
        if (m_preallocate) {
            size_t tableSize = 1024;
            while (tableSize < 2 * m_generationRows)
                tableSize *= 2;
            m_generations.back().table.assign(tableSize, 0);
        }
    }
    Generation &g = m_generations.back();
    if (g.table.size() < 2 * (g.count + 1)) {
        std::vector<quint64> grown(std::max<size_t>(1024, g.table.size() * 2), 0);
        for (const quint64 slot : g.table)
            if (slot)
                placeSlot(grown, slot);
        g.table.swap(grown);
    }
    placeSlot(g.table, slot);
    ++g.count;
    g.lastRow = int(quint32(slot) - 1);
}

void IdIndex::eraseRowsBefore(int row)
{
    placePending();
    m_firstRow = std::max(m_firstRow, row);
    size_t gone = 0;
    while (gone < m_generations.size() && m_generations[gone].lastRow < m_firstRow)
        ++gone;
    m_generations.erase(m_generations.begin(), m_generations.begin() + qsizetype(gone));
}

size_t IdIndex::size() const
{
    size_t rows = 0;
    for (const Generation &g : m_generations)
        rows += g.count;
    for (const quint64 slot : m_pending)
        rows += int(quint32(slot) - 1) >= m_firstRow ? 1 : 0;
    if (!m_generations.empty()) { // the oldest may hold trimmed rows
        const Generation &oldest = m_generations.front();
        for (const quint64 slot : oldest.table)
            if (slot && int(quint32(slot) - 1) < m_firstRow)
                --rows;
    }
    return rows;
}

size_t IdIndex::memoryBytes() const
{
    size_t bytes = m_generations.capacity() * sizeof(Generation) + m_pending.capacity() * sizeof(quint64);
    for (const Generation &g : m_generations)
        bytes += g.table.capacity() * sizeof(quint64);
    return bytes;
}

void IdIndex::clear()
{
    m_generations = {};
    m_pending = {};
    m_firstRow = 0;
}

} // namespace mapi
