// The store's two long lists, in arrival order: applied events and messages. A loaded trace
// has a million events, so rows are compact (numbers, text in an arena, repeating strings in a
// name table: model/CompactStorage.h) and both logs find a row by id through a flat hash index.
//
// Thread: the store's thread. Views read them through SystemStore::events() / messages();
// only the store appends and changes rows. Rows are never removed (until clear()).
#pragma once

#include "model/CompactStorage.h"
#include "model/ModelTypes.h"

#include <deque>
#include <iterator>
#include <limits>
#include <optional>
#include <vector>

namespace mapi {

class EventLog
{
public:
    size_t size() const { return m_rows.size(); }
    bool empty() const { return m_rows.empty(); }
    const EventEntry &operator[](size_t row) const { return m_rows[row]; }
    const EventEntry &front() const { return m_rows.front(); }
    const EventEntry &back() const { return m_rows.back(); }
    auto begin() const { return m_rows.begin(); }
    auto end() const { return m_rows.end(); }

    QString eventId(size_t row) const { return m_text.text(m_rows[row].idRef); }
    const QString &type(const EventEntry &e) const { return typeName(e.typeRow); }
    const QString &typeName(int typeRow) const { return m_names.name(m_types[size_t(typeRow)].name); }
    EventKind kind(const EventEntry &e) const { return m_types[size_t(e.typeRow)].kind; }
    const QString &agentId(const EventEntry &e) const { return m_names.name(e.agentName); }
    const QString &name(int nameRow) const { return m_names.name(nameRow); } // EventEntry::agentName
    // When the event arrived (the record's time in a trace), in ms since the epoch.
    qint64 receivedMs(size_t row) const;
    // The frame text kept with the event (live traffic); empty when none was kept.
    QByteArray keptFrame(size_t row) const { return row < m_frames.size() ? m_frames[row] : QByteArray(); }
    // Where the event's frame is in the live session's journal (invalid: not journaled).
    FrameRef journalRef(size_t row) const { return row < m_journalRefs.size() ? m_journalRefs[row] : FrameRef(); }
    // The row of the event with this id (-1: none). `hash` from IdIndex::hashOf(id).
    int find(QStringView eventId, quint32 hash) const;

    // The store's side. `entry`'s idRef, receivedDeltaMs, typeRow and agentName are filled here.
    void append(EventEntry entry, const QString &eventId, quint32 idHash, const QString &type, EventKind kind,
                const QString &agentId, qint64 receivedMs, const QByteArray &frame, const FrameRef &journalRef = {});
    void setMessageIndex(size_t row, int message) { m_rows[row].messageIndex = message; }
    size_t memoryBytes() const; // rows, texts and the id index (names: distinct strings only, not counted)
    void clear();

private:
    // An event type as received and the kind it was read as (a handful of them).
    struct TypeRow
    {
        int name = 0;
        EventKind kind = EventKind::Other;
    };
    static constexpr qint32 kFarReceipt = std::numeric_limits<qint32>::min();

    std::deque<EventEntry> m_rows;
    std::vector<TypeRow> m_types;
    QHash<quint64, int> m_typeRows;   // (name << 8 | kind) -> row of m_types
    // Receipt times more than 24 days from the event's own time (receivedDeltaMs is then
    // kFarReceipt), by ascending row: rare (a server clock far off, a timestamp in seconds).
    std::vector<std::pair<int, qint64>> m_farReceipts;
    // Frames kept with events (live traffic), by row; stays empty while no event has one, so a
    // loaded trace (whose frames its timeline keeps) pays nothing here.
    std::deque<QByteArray> m_frames;
    // The same for frames kept in a live session's journal: where each is (16 bytes a row).
    std::deque<FrameRef> m_journalRefs;
    TextArena m_text;
    NameTable m_names;
    IdIndex m_ids;
};

class MessageLog
{
public:
    size_t size() const { return m_rows.size(); }
    bool empty() const { return m_rows.empty(); }
    // A copy built from the compact row (about ten shared strings): cheap, but not free.
    Message operator[](size_t row) const;
    Message front() const { return (*this)[0]; }
    Message back() const { return (*this)[m_rows.size() - 1]; }
    int find(QStringView messageId) const;
    bool contains(QStringView messageId) const { return find(messageId) >= 0; }
    // Single fields without building a Message, for loops over many rows.
    qint64 timestampMs(size_t row) const { return m_rows[row].timestampMs; }
    ConventionKind convention(size_t row) const { return ConventionKind(m_rows[row].convention); }
    const QString &fromAgentId(size_t row) const { return m_names.name(m_rows[row].fromAgentId); }
    const QString &scopeId(size_t row) const { return m_names.name(m_rows[row].scopeId); }
    const QString &payloadType(size_t row) const { return m_names.name(m_rows[row].payloadType); }
    QString id(size_t row) const { return m_text.text(m_rows[row].id); }
    int eventRow(size_t row) const { return m_rows[row].eventRow; }
    // The kept payload text (empty when none, or when payloadInFrame(): SystemStore::messagePayload()).
    QByteArrayView payloadText(size_t row) const { return m_text.utf8(m_rows[row].payload); }
    bool payloadInFrame(size_t row) const { return m_rows[row].payloadInFrame; }
    std::optional<qint64> tokensUsed(size_t row) const;
    std::optional<double> costUsd(size_t row) const;
    int recipientCount(size_t row) const;
    bool hasRecipient(size_t row, const QString &agentId) const;
    const QString &recipient(size_t row, int index) const;

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
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, m_rows.size()}; }

    // The store's side. `events` gives each message its eventId (Message::eventRow).
    explicit MessageLog(const EventLog *events = nullptr) : m_events(events) {}
    void setEventLog(const EventLog *events) { m_events = events; }
    int append(const Message &message); // its row
    void setStatus(size_t row, const QString &status);
    void addRecipient(size_t row, const QString &agentId);
    size_t memoryBytes() const; // rows, texts and the id index (names: distinct strings only, not counted)
    void clear();

private:
    // 64 bytes. Recipients: 0 none, > 0 the name of the only one, < 0 -(index + 1) into m_lists.
    // Texts by 32 bits of TextArena::Ref: the first 4 GiB of ids, payloads and correlation ids
    // (past that, texts are not kept: narrowRef()).
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
    };
    static_assert(sizeof(Row) == 64, "a million rows: keep them small");
    static quint32 narrowRef(TextArena::Ref ref)
    {
        return ref <= std::numeric_limits<quint32>::max() ? quint32(ref) : 0;
    }
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

    const EventLog *m_events;
    std::deque<Row> m_rows;
    std::vector<QStringList> m_lists;
    std::vector<UsageRow> m_usage;
    TextArena m_text;
    NameTable m_names;
    IdIndex m_ids;
};

// Every task's transitions in one log (a loaded trace has tens of thousands of tasks with about
// ten transitions each: a vector of QString-holding transitions per task cost several times
// this). Each row links to the previous transition of the same task.
class TaskHistoryLog
{
public:
    // Appends a transition after row `previous` of the same task (-1: its first); returns its row.
    int append(int previous, const TaskTransition &step);
    // The transitions of the task whose newest is row `last`, oldest first.
    std::vector<TaskTransition> chain(int last) const;
    size_t size() const { return m_rows.size(); }
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
    };
    std::deque<Row> m_rows;
    NameTable m_names;
};

} // namespace mapi
