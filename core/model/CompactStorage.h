// Building blocks of the store's event and message logs (model/RowLogs.h): a loaded trace holds a
// million rows, so each row keeps numbers, and its text lives once, here.
//
// Thread: none of these are thread-safe; they belong to the store's thread.
#pragma once

#include "protocol/FastHash.h"

#include <QByteArrayView>
#include <QHash>
#include <QString>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

namespace mapi {

// Strings that repeat (event types, agent ids, states, statuses): each distinct one kept once,
// rows keep its number. Row 0 is the empty string. A table only grows (until clear()).
class NameTable
{
public:
    NameTable();
    int intern(const QString &name);
    const QString &name(int row) const { return m_names[size_t(row)]; }
    void clear();

private:
    // The decoders share repeating strings (map/Dialect.cpp's text cache), so most calls pass a
    // string whose data was seen before: a small cache by data pointer skips the hash of its
    // text. It holds the string itself, so a cached pointer cannot be freed and reused.
    struct Recent
    {
        QString name;
        int row = 0;
    };
    static constexpr size_t kRecent = 64;
    std::vector<QString> m_names;
    QHash<FastString, int> m_rows;
    Recent m_recent[kRecent];
};

// The 128-bit number a ULID writes (26 characters of Crockford's base32, upper case, as MAP
// servers write event and message ids; the first 0–7), as its high and low 64 bits; false
// (`high` and `low` then undefined) when `text` is no such ULID.
bool ulidValue(QStringView text, quint64 &high, quint64 &low);

// The largest ULID among the ids a log appended (trimmed ones too): an id above it was never
// appended, so the log answers "not found" without a look into its IdIndex. A server's ULIDs grow
// with time, so nearly every new event's and message's id is above it; that look was a cache
// miss per id (one per generation of the index), a fifth of applying an event at a million.
class UlidWatermark
{
public:
    // Whether the ULID (high, low) is above every one noted: then it was never noted.
    bool above(quint64 high, quint64 low) const { return !m_any || high > m_high || (high == m_high && low > m_low); }
    void note(quint64 high, quint64 low)
    {
        if (above(high, low)) {
            m_any = true;
            m_high = high;
            m_low = low;
        }
    }
    void clear() { *this = UlidWatermark(); }

private:
    bool m_any = false;
    quint64 m_high = 0;
    quint64 m_low = 0;
};

// Text written once and read rarely (event and message ids, payloads): UTF-8 with a length
// prefix in 1 MiB blocks. A reference is 64 bits; 0 is the empty text. append() keeps a ULID (26
// characters of Crockford's base32, as MAP servers write event and message ids) as its 16 bytes
// behind a 0 byte (no text has length 0): 17 bytes instead of 27, and it reads back the same.
//
// Trimming: each text is appended for an owner (a log's row, ascending); a block remembers the
// newest owner written into it, and releaseOwnersBefore(row) frees the blocks that hold only
// older owners' texts. Freed block slots are used again, so a long live session stays within
// the 4095 slots a 32-bit reference can name as long as at most 4 GiB of text is kept at once
// (fewer for large texts, which take a slot each). Past that the logs keep no reference and count
// the text as not kept (EventLog/MessageLog::textsNotKept(), counts.textsNotKept).
class TextArena
{
public:
    using Ref = quint64;
    static constexpr size_t kDefaultBlockBytes = size_t(1) << 20;
    // Blocks of `blockBytes`, at most the default (offsets have 20 bits); smaller ones are for
    // tests that reach the slot limit without gigabytes.
    explicit TextArena(size_t blockBytes = kDefaultBlockBytes) : m_blockBytes(std::min(blockBytes, kDefaultBlockBytes)) {}
    // Texts appended from now on belong to `owner` (>= every earlier owner).
    void setOwner(qint64 owner) { m_owner = owner; }
    Ref append(QStringView text); // a ULID, or a UUID in lower case, kept packed in 17 or 18 bytes
    Ref appendUlid(quint64 high, quint64 low); // the ULID of ulidValue(): as append() of its text
    Ref appendUtf8(QByteArrayView utf8); // kept as given (payloads): utf8() reads it
    QByteArrayView utf8(Ref ref) const;  // texts of appendUtf8(); empty for a packed ULID or UUID
    // Any text as UTF-8 without a QString: a packed ULID or UUID written into `scratch`, any other
    // text where the arena keeps it. Valid while both live (and the text is not released).
    using Scratch = std::array<char, 36>;
    QByteArrayView utf8(Ref ref, Scratch &scratch) const;
    QString text(Ref ref) const;
    bool equals(Ref ref, QStringView text) const;
    // The value of a ULID kept packed (appendUlid(), or append() of a ULID's text); false for
    // any other text.
    bool ulidAt(Ref ref, quint64 &high, quint64 &low) const;
    // Frees every block whose texts all belong to owners before `owner`; their references
    // must not be read again.
    void releaseOwnersBefore(qint64 owner);
    size_t memoryBytes() const;
    void clear();

private:
    // A reference: (slot + 1) << 20 | offset in the block; below 2^32 for the first 4095 slots
    // (the logs keep 32 bits of it).
    static constexpr int kOffsetBits = 20;
    char *reserve(size_t bytes, Ref &ref);
    size_t openSlot(size_t bytes); // a free slot (or a new one) holding a block of `bytes`
    const char *at(Ref ref) const;
    const char *uuidAt(Ref ref) const; // a packed UUID's 16 bytes (append() packs them), else null

    struct Block
    {
        std::unique_ptr<char[]> data; // null: a free slot
        size_t size = 0;
        qint64 newestOwner = 0;
    };
    size_t m_blockBytes;
    std::vector<Block> m_blocks;
    std::vector<size_t> m_freeSlots;
    size_t m_liveBytes = 0;
    qint64 m_owner = 0;
    qsizetype m_open = -1; // the block small texts go to
    size_t m_used = 0;     // in the open block
};

// Rows by id, for ids kept elsewhere (an arena): open addressing, linear probing, at most half
// full; a slot holds 32 bits of the id's hash and the row + 1. The caller's `sameId(row)`
// compares the id itself on a hash match, so a collision never merges two ids. 8 bytes a slot:
// a QHash<QString, int> took a string and a node per id.
//
// Trimming (a live session's bounded history) must not stall the GUI thread, so rows go into
// generations of at most generationRows() rows each (in row order): eraseRowsBefore() drops the
// generations that hold only trimmed rows, whole, and find() skips the trimmed rows of the one
// that straddles the boundary (at most one generation is kept for them). A lookup probes each
// generation: one for a loaded trace's million rows (the default, 16 MiB a generation); a
// bounded log sets a quarter of the rows it keeps, so about five.
class IdIndex
{
public:
    // Seeded per process, as QHash: a hostile server cannot craft colliding ids.
    static quint32 hashOf(QStringView id) { return quint32(fastHash(id)); }
    static constexpr size_t kGenerationRows = size_t(1) << 20;
    // A bounded log (a live session) also sizes each generation's table for its rows when it
    // starts (`preallocate`): a table that doubles rehashes all it holds at once, which at a
    // million rows stalled the GUI thread for tens of milliseconds.
    void setGenerationRows(size_t rows, bool preallocate)
    {
        m_generationRows = std::max<size_t>(rows, 1024);
        m_preallocate = preallocate;
    }
    size_t generationRows() const { return m_generationRows; }

    template<typename SameId>
    int find(quint32 hash, SameId sameId) const
    {
        for (auto slot = m_pending.rbegin(); slot != m_pending.rend(); ++slot) {
            const int row = int(quint32(*slot) - 1);
            if (quint32(*slot >> 32) == hash && row >= m_firstRow && sameId(row))
                return row;
        }
        for (auto generation = m_generations.rbegin(); generation != m_generations.rend(); ++generation) {
            const std::vector<quint64> &table = generation->table;
            const size_t mask = table.size() - 1;
            for (size_t at = size_t(hash) & mask; table[at]; at = (at + 1) & mask) {
                const quint64 slot = table[at];
                const int row = int(quint32(slot) - 1);
                if (quint32(slot >> 32) == hash && row >= m_firstRow && sameId(row))
                    return row;
            }
        }
        return -1;
    }
    // Adds `row` under `hash` (the caller checked with find() that the id is new); rows come in
    // ascending order. Rows are placed in the table kPendingRows at a time, their slots fetched
    // from memory together first: placed one by one, each waited for its slot (a cache miss in a
    // table of 16 MiB at a million rows; a fifth of applying an event). find() sees them before.
    void insert(quint32 hash, int row)
    {
        m_pending.push_back((quint64(hash) << 32) | quint64(quint32(row) + 1));
        if (m_pending.size() >= kPendingRows)
            placePending();
    }
    static constexpr size_t kPendingRows = 32;
    // Forgets every row below `row` (the log trimmed them).
    void eraseRowsBefore(int row);
    size_t size() const;        // rows findable
    size_t memoryBytes() const;
    void clear();

private:
    void placePending();
    void place(quint64 slot);

    struct Generation
    {
        std::vector<quint64> table; // slots: a power of two, at least 1,024
        size_t count = 0;
        int lastRow = -1;
    };
    std::vector<Generation> m_generations; // oldest first
    size_t m_generationRows = kGenerationRows;
    bool m_preallocate = false;
    int m_firstRow = 0;                    // rows below are trimmed
    std::vector<quint64> m_pending;        // slots inserted and not placed yet, at most kPendingRows
};

} // namespace mapi
