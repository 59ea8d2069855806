// The store's two long lists, in arrival order: applied events and messages. A loaded trace
// has a million events, so rows are compact (numbers, text in an arena, repeating strings in a
// name table: model/CompactStorage.h) and both logs find a row by id through a flat hash index.
//
// Rows are numbered from the first one appended since clear(): a row's number never changes.
// A live session trims the oldest rows (trimBefore(), when its history budget is spent or its
// journal dropped them): size() still counts every row appended, firstRow() is the oldest kept,
// and a trimmed row reads as an empty one (no id, no type, no agent, time 0), so an index kept
// elsewhere can never read freed memory. begin()/end() walk the kept rows.
// Limit: numbers are 32-bit (int), so one session holds 2^31 rows: about 7 hours of a flood at
// 80,000 events/s, 5 days at 5,000/s. Renumbering past that is not done yet.
//
// Thread: the store's thread. Views read them through SystemStore::events() / messages();
// only the store appends, changes and trims rows.
#pragma once

#include "model/CompactStorage.h"
#include "model/ModelTypes.h"

#include <array>
#include <deque>
#include <iterator>
#include <limits>
#include <optional>
#include <vector>

namespace mapi {

class EventLog
{
public:
    size_t size() const { return m_first + m_rows.size(); } // rows ever appended (kept or trimmed)
    bool empty() const { return m_rows.empty(); }            // no row kept
    size_t firstRow() const { return m_first; }              // the oldest kept row (size(): none)
    size_t keptCount() const { return m_rows.size(); }
    qint64 textsNotKept() const { return m_textsNotKept; } // ids past 4 GiB held at once (append())
    bool isKept(size_t row) const { return row >= m_first && row < size(); }
    const EventEntry &operator[](size_t row) const { return isKept(row) ? m_rows[row - m_first] : kTrimmed; }
    const EventEntry &front() const { return m_rows.front(); } // the oldest kept row
    const EventEntry &back() const { return m_rows.back(); }
    auto begin() const { return m_rows.begin(); }
    auto end() const { return m_rows.end(); }

    QString eventId(size_t row) const { return isKept(row) ? m_text.text(m_rows[row - m_first].idRef) : QString(); }
    const QString &type(const EventEntry &e) const { return typeName(typeRow(e)); }
    const QString &typeName(int typeRow) const { return typeRow >= 0 ? m_names.name(m_types[size_t(typeRow)].name) : m_names.name(0); }
    EventKind kind(const EventEntry &e) const { return e.subjectRow >= 0 ? m_types[size_t(subject(e).typeRow)].kind : EventKind::Other; }
    int typeRow(const EventEntry &e) const { return e.subjectRow >= 0 ? subject(e).typeRow : -1; } // -1: trimmed
    int typeCount() const { return int(m_types.size()); }
    int subjectCount() const { return int(m_subjects.size()); } // distinct (type, agent) pairs
    // Events of this type ever appended (trimmed ones too): counts stay when history goes.
    qint64 appendedOfType(int typeRow) const { return m_typeAppended[size_t(typeRow)]; }
    const QString &agentId(const EventEntry &e) const { return m_names.name(agentNameRow(e)); }
    int agentNameRow(const EventEntry &e) const { return e.subjectRow >= 0 ? subject(e).agentName : 0; }
    const QString &name(int nameRow) const { return m_names.name(nameRow); } // agentNameRow()
    // When the event arrived (the record's time in a trace), in ms since the epoch.
    qint64 receivedMs(size_t row) const;
    // The frame text kept with the event (live traffic); empty when none was kept.
    QByteArray keptFrame(size_t row) const
    {
        return isKept(row) && row - m_first < m_frames.size() ? m_frames[row - m_first] : QByteArray();
    }
    // Where the event's frame is in the live session's journal (invalid: not journaled).
    FrameRef journalRef(size_t row) const
    {
        return isKept(row) && row - m_first < m_journalRefs.size() ? m_journalRefs[row - m_first] : FrameRef();
    }
    // An event id read once for find() and append(): its hash (IdIndex::hashOf) and, when it is
    // a ULID, its value (ulidValue()). Views `eventId`, which must outlive it.
    struct IdKey
    {
        QStringView text;
        quint32 hash = 0;
        bool ulid = false;
        quint64 high = 0;
        quint64 low = 0;
    };
    static IdKey idKey(QStringView eventId);
    // The row of the event with this id (-1: none). `hash` from IdIndex::hashOf(id).
    int find(const IdKey &id) const;
    int find(QStringView eventId, quint32 hash) const;

    // The store's side. `entry`'s idRef, receivedDeltaMs and subjectRow are filled here.
    void append(EventEntry entry, const IdKey &eventId, const QString &type, EventKind kind,
                const QString &agentId, qint64 receivedMs, const QByteArray &frame, const FrameRef &journalRef = {});
    void setMessageIndex(size_t row, int message)
    {
        if (isKept(row))
            m_rows[row - m_first].setMessageIndex(message);
    }
    // MAP causedBy between events, for the events that name causes (sparse: about 56 bytes a
    // link with the reverse index, trimmed with the rows). `effect` is the newest row; `cause` an earlier kept one.
    static constexpr int kMaxCausesPerEvent = 16;
    void addCause(size_t effect, size_t cause)
    {
        m_causes.push_back({quint32(effect), quint32(cause)});
        m_effects[quint32(cause)].push_back(quint32(effect));
    }
    std::vector<int> causesOf(size_t row) const;   // oldest named first
    std::vector<int> effectsOf(size_t row) const;  // in order
    // Drops the rows before `row` (their ids, texts and frames); rows at and after keep their
    // numbers.
    void trimBefore(size_t row);
    // About how many rows the log keeps (`bounded`: a live session's budget, or 4 million for a
    // trace): the id index's generations follow it.
    void setExpectedRows(size_t rows, bool bounded) { m_ids.setGenerationRows(rows / 4, bounded); }
    size_t memoryBytes() const; // rows, texts and the id index (names: distinct strings only, not counted)
    // Kept rows whose ids are in the hash index: those not in an ascending run (find()).
    size_t indexedIdCount() const { return m_ids.size(); }
    void clear();

private:
    static const EventEntry kTrimmed;
    // Rows first, end (one past the last) whose ids are ULIDs each above every id appended
    // before it, as a server writes them: found by binary search on the ids (findAscending()),
    // so they take no place in the id index (17 bytes an event at a million). A row out of that
    // order (a text id, a ULID below the largest) ends a run and goes to the index. Runs are
    // trimmed with the rows: at most one per two rows (ids that alternate), usually one.
    struct AscendingRun
    {
        int first = 0;
        int end = 0;
    };
    int findAscending(quint64 high, quint64 low) const;
    bool keptUlid(int row, quint64 &high, quint64 &low) const
    {
        return m_text.ulidAt(m_rows[size_t(row) - m_first].idRef, high, low);
    }
    // An event type as received and the kind it was read as (a handful of them).
    struct TypeRow
    {
        int name = 0;
        EventKind kind = EventKind::Other;
    };
    // An event's type (a row of m_types) and the agent it is about (a row of m_names): the
    // pairs the log has seen, one row each (EventEntry::subjectRow). A few per agent (the types
    // of events about it): 8 bytes a pair, and 8 to 16 more in their index.
    struct SubjectRow
    {
        int typeRow = 0;
        int agentName = 0;
    };
    const SubjectRow &subject(const EventEntry &e) const { return m_subjects[size_t(e.subjectRow)]; }
    int subjectRowOf(int typeName, EventKind kind, int agentName); // names: rows of m_names
    static constexpr qint32 kFarReceipt = std::numeric_limits<qint32>::min();

    size_t m_first = 0;               // row number of m_rows.front()
    std::deque<EventEntry> m_rows;
    std::vector<TypeRow> m_types;
    std::vector<qint64> m_typeAppended; // per m_types row
    QHash<quint64, int> m_typeRows;   // (name << 8 | kind) -> row of m_types
    std::vector<SubjectRow> m_subjects;
    // Open addressing, at most half full: row of m_subjects + 1 (0: empty slot), by the pair's
    // hash. Never trimmed: it grows with distinct pairs, not with events.
    std::vector<quint32> m_subjectSlots;
    // Receipt times more than 24 days from the event's own time (receivedDeltaMs is then
    // kFarReceipt), by ascending row: rare (a server clock far off, a timestamp in seconds).
    std::deque<std::pair<int, qint64>> m_farReceipts;
    // Frames kept with events (live traffic), by kept row (row - m_first); stays empty while no
    // event has one, so a loaded trace (whose frames its timeline keeps) pays nothing here.
    std::deque<QByteArray> m_frames;
    size_t m_frameBytes = 0;          // their texts
    // The same for frames kept in a live session's journal: where each is (16 bytes a row).
    std::deque<FrameRef> m_journalRefs;
    std::deque<std::pair<quint32, quint32>> m_causes; // (effect row, cause row), by effect
    QHash<quint32, std::vector<quint32>> m_effects;   // cause row → effect rows (about 48 B a link more)
    qint64 m_textsNotKept = 0;
    TextArena m_text;
    NameTable m_names;
    IdIndex m_ids;
    UlidWatermark m_newestId;
    std::deque<AscendingRun> m_ascending;
};

class MessageLog
{
public:
    size_t size() const { return m_first + m_rows.size(); } // rows ever appended (kept or trimmed)
    bool empty() const { return m_rows.empty(); }            // no row kept
    size_t firstRow() const { return m_first; }
    size_t keptCount() const { return m_rows.size(); }
    bool isKept(size_t row) const { return row >= m_first && row < size(); }
    // A copy built from the compact row (about ten shared strings): cheap, but not free.
    Message operator[](size_t row) const;
    Message front() const { return (*this)[m_first]; }
    Message back() const { return (*this)[size() - 1]; }
    int find(QStringView messageId) const;
    bool contains(QStringView messageId) const { return find(messageId) >= 0; }
    // Single fields without building a Message, for loops over many rows.
    qint64 timestampMs(size_t row) const { return rowAt(row).timestampMs; }
    ConventionKind convention(size_t row) const { return ConventionKind(rowAt(row).convention); }
    // Messages of this convention ever appended (trimmed ones too): counts stay when history goes.
    qint64 appendedOfConvention(ConventionKind kind) const { return m_appendedByConvention[size_t(kind)]; }
    const QString &fromAgentId(size_t row) const { return m_names.name(rowAt(row).fromAgentId); }
    const QString &scopeId(size_t row) const { return m_names.name(rowAt(row).scopeId); }
    const QString &payloadType(size_t row) const { return m_names.name(rowAt(row).payloadType); }
    const QString &taskId(size_t row) const { return m_names.name(rowAt(row).taskId); }
    Severity severity(size_t row) const { return Severity(rowAt(row).severity); }
    QString id(size_t row) const { return m_text.text(rowAt(row).id); }
    int eventRow(size_t row) const { return rowAt(row).eventRow; }
    // The kept payload text (empty when none, or when payloadInFrame(): SystemStore::messagePayload()).
    QByteArrayView payloadText(size_t row) const { return m_text.utf8(rowAt(row).payload); }
    bool payloadInFrame(size_t row) const { return rowAt(row).payloadInFrame; }
    std::optional<qint64> tokensUsed(size_t row) const;
    std::optional<double> costUsd(size_t row) const;
    QString correlationId(size_t row) const { return m_text.text(rowAt(row).correlationId); }
    // The id and correlation id as UTF-8 without a QString (the OTLP export's path): views into
    // the log or `scratch` (TextArena::utf8), valid until the next change of either.
    QByteArrayView idUtf8(size_t row, TextArena::Scratch &scratch) const { return m_text.utf8(rowAt(row).id, scratch); }
    QByteArrayView correlationIdUtf8(size_t row, TextArena::Scratch &scratch) const
    {
        return m_text.utf8(rowAt(row).correlationId, scratch);
    }
    const QString &toDisplay(size_t row) const { return m_names.name(rowAt(row).toDisplay); }
    const QString &status(size_t row) const { return m_names.name(rowAt(row).status); }
    std::optional<int> priority(size_t row) const
    {
        const int p = rowAt(row).priority;
        return p != kNoPriority ? std::optional<int>(p) : std::nullopt;
    }
    // Causal links (Message::envelopeId, ...): empty when the message names none.
    QString envelopeId(size_t row) const { return linkText(row, &LinkRow::envelopeId); }
    QString spanId(size_t row) const { return linkText(row, &LinkRow::spanId); }
    QString parentRef(size_t row) const { return linkText(row, &LinkRow::parentRef); }
    QString traceId(size_t row) const { return linkText(row, &LinkRow::traceId); }
    QString rpcRef(size_t row) const { return linkText(row, &LinkRow::rpcRef); }
    // The oldest kept message whose envelope id or span id is `id` (-1: none).
    int findByEnvelopeOrSpan(QStringView id) const;
    int recipientCount(size_t row) const;
    bool hasRecipient(size_t row, const QString &agentId) const; // O(log recipients)
    qint64 recipientsNotKept(size_t row) const;
    const QString &recipient(size_t row, int index) const;
    // The sender and recipients as rows of the log's name table (name() gives the id back): a
    // view keeps what it derives from an id by row, instead of hashing the text at each message.
    // A row keeps its name while the log lives (a store reset makes a new log). Row 0: no name.
    int fromAgentNameRow(size_t row) const { return rowAt(row).fromAgentId; }
    int recipientNameRow(size_t row, int index) const;
    const QString &name(int nameRow) const { return m_names.name(nameRow); }

    class const_iterator
    {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Message;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Message;
        const_iterator(const MessageLog *log, size_t row) : m_log(log), m_row(row) {}
        Message operator*() const { return (*m_log)[m_row]; }
        const_iterator &operator++() { ++m_row; return *this; }
        bool operator==(const const_iterator &other) const { return m_row == other.m_row; }
        bool operator!=(const const_iterator &other) const { return m_row != other.m_row; }
    private:
        const MessageLog *m_log;
        size_t m_row;
    };
    const_iterator begin() const { return {this, m_first}; }
    const_iterator end() const { return {this, size()}; }

    // The store's side. `events` gives each message its eventId (Message::eventRow).
    explicit MessageLog(const EventLog *events = nullptr, size_t textBlockBytes = TextArena::kDefaultBlockBytes)
        : m_events(events), m_text(textBlockBytes)
    {
    }
    // Ids, payloads and correlation ids not kept: past 4 GiB held at once (narrowRef()).
    qint64 textsNotKept() const { return m_textsNotKept; }
    void setEventLog(const EventLog *events) { m_events = events; }
    int append(const Message &message); // its row
    void setStatus(size_t row, const QString &status);      // no-op for a trimmed row
    // false when the message already names kMaxRecipients: the agent is counted, not named.
    // No-op (true) for a trimmed row.
    bool addRecipient(size_t row, const QString &agentId);
    // The recipients one message names (sorted): a message to a million agents keeps the first
    // ten thousand in id order and counts the rest (issue 16: bounded memory, no quadratic step).
    static constexpr int kMaxRecipients = 10000;
    // Drops the rows before `row`; rows at and after keep their numbers.
    void trimBefore(size_t row);
    void setExpectedRows(size_t rows, bool bounded)
    {
        m_ids.setGenerationRows(rows / 4, bounded);
        m_linkIds.setGenerationRows(rows / 4, bounded);
    }
    size_t memoryBytes() const; // rows, texts and the id index (names: distinct strings only, not counted)
    void clear();

private:
    // 64 bytes. Recipients: 0 none, > 0 the name of the only one, < 0 -(index + 1) into m_lists.
    // Texts by 32 bits of TextArena::Ref: the first 4 GiB of ids, payloads and correlation ids
    // (past that, texts are not kept, and counted: narrowRef()).
    struct Row
    {
        qint64 timestampMs = 0;
        quint32 id = 0;
        quint32 payload = 0;
        quint32 correlationId = 0;
        int eventRow = -1;
        int fromAgentId = 0;
        int fromRaw = 0;
        int toDisplay = 0;
        int recipients = 0;
        int scopeId = 0;
        int payloadType = 0;
        int taskId = 0;
        int status = 0;
        int priority = kNoPriority;
        quint8 convention = quint8(ConventionKind::None);
        bool payloadInFrame = false;
        quint8 severity = 0;           // Message::severity
    };
    static_assert(sizeof(Row) == 64, "a million rows: keep them small");
    quint32 narrowRef(TextArena::Ref ref)
    {
        if (ref <= std::numeric_limits<quint32>::max())
            return quint32(ref);
        ++m_textsNotKept;
        return 0;
    }
    qint64 m_textsNotKept = 0;
    std::array<qint64, size_t(ConventionKind::SteeringAck) + 1> m_appendedByConvention{};
    static constexpr int kNoPriority = std::numeric_limits<int>::min();
    // Usage reports (tokens, cost), for the messages that carry one, by ascending row: most
    // messages carry none, so the 64-byte row does not hold them.
    struct UsageRow
    {
        quint32 row;
        qint64 tokensUsed;         // kNoTokens: none
        double costUsd;            // NaN: none
    };
    static constexpr qint64 kNoTokens = std::numeric_limits<qint64>::min();
    const UsageRow *usageOf(size_t row) const;
    // Causal link texts, for the messages that carry any, by ascending row (TextArena refs).
    struct LinkRow
    {
        quint32 row;
        quint32 envelopeId;
        quint32 spanId;
        quint32 parentRef;
        quint32 traceId;
        quint32 rpcRef;
    };
    const LinkRow *linksOf(size_t row) const;
    QString linkText(size_t row, quint32 LinkRow::*field) const;
    static const Row kTrimmed;
    const Row &rowAt(size_t row) const { return isKept(row) ? m_rows[row - m_first] : kTrimmed; }
    // Sorts, removes repeats and bounds `list`; its index in m_lists (a freed one when there is one).
    int keepList(QStringList ids, qint64 notKept);
    // What a list's names hold on the heap (their block and the allocator's header).
    static size_t listBytes(const std::vector<int> &names) { return names.capacity() ? names.capacity() * sizeof(int) + 16 : 0; }
    // Name rows in the order of their text (a list's order: recipient(row, 0) is the first id).
    struct NameOrder
    {
        const NameTable &names;
        bool operator()(int a, int b) const { return names.name(a) < names.name(b); }
        bool operator()(int a, const QString &b) const { return names.name(a) < b; }
        bool operator()(const QString &a, int b) const { return a < names.name(b); }
    };

    const EventLog *m_events;
    size_t m_first = 0;
    std::deque<Row> m_rows;
    // Recipients by name row (m_names: an agent id is kept once however many messages name
    // it; 4 bytes a recipient, where a QString each took about 50), in the order of their ids,
    // unique, at most kMaxRecipients.
    struct RecipientList
    {
        std::vector<int> names;
        qint64 notKept = 0;
    };
    std::vector<RecipientList> m_lists;
    size_t m_listBytes = 0;            // what the lists' ids hold (memoryBytes)
    std::vector<int> m_freeLists;      // indexes of m_lists whose message was trimmed
    std::deque<UsageRow> m_usage;
    std::deque<LinkRow> m_links;
    IdIndex m_linkIds;                 // envelope and span ids → row
    TextArena m_text;
    NameTable m_names;
    IdIndex m_ids;
    UlidWatermark m_newestId;          // messages' ids: find() answers ids above it without m_ids
};

// Every task's transitions in one log (a loaded trace has tens of thousands of tasks with about
// ten transitions each: a vector of QString-holding transitions per task cost several times
// this). Each row links to the previous transition of the same task.
class TaskHistoryLog
{
public:
    // Appends a transition after row `previous` of the same task (-1: its first); returns its row.
    int append(int previous, const TaskTransition &step);
    // The transitions of the task whose newest is row `last`, oldest first (the kept ones).
    std::vector<TaskTransition> chain(int last) const;
    size_t size() const { return m_first + m_rows.size(); }
    size_t firstRow() const { return m_first; }
    // Rows appended from now on came with event row `eventRow` of the store's events() (a
    // snapshot's: the row the next event will have).
    void setEventRow(int eventRow) { m_eventRow = eventRow; }
    // Drops the rows that came with events before `eventRow` (by arrival, not by the events' own
    // times, which a server may send in any order).
    void trimBeforeEvent(int eventRow);
    size_t memoryBytes() const { return m_rows.size() * sizeof(Row); }
    void clear();

private:
    struct Row
    {
        qint64 timeMs = 0;
        int previous = -1;
        int status = 0;
        int agentId = 0;
        int detail = 0;
        int messageRow = -1;
        int eventRow = 0;
    };
    size_t m_first = 0;
    int m_eventRow = 0;
    std::deque<Row> m_rows;
    NameTable m_names;
};

} // namespace mapi
