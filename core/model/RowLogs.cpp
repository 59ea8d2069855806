#include "model/RowLogs.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace mapi {

// ---- EventLog -------------------------------------------------------------------------------

const EventEntry EventLog::kTrimmed = [] {
    EventEntry e;
    e.subjectRow = -1;
    return e;
}();

EventLog::IdKey EventLog::idKey(QStringView eventId)
{
    IdKey key;
    key.text = eventId;
    key.hash = eventId.isEmpty() ? 0 : IdIndex::hashOf(eventId);
    key.ulid = ulidValue(eventId, key.high, key.low);
    return key;
}

int EventLog::find(QStringView eventId, quint32 hash) const
{
    IdKey key;
    key.text = eventId;
    key.hash = hash;
    key.ulid = ulidValue(eventId, key.high, key.low);
    return find(key);
}

int EventLog::find(const IdKey &id) const
{
    if (id.ulid && m_newestId.above(id.high, id.low))
        return -1; // never appended
    if (id.ulid)
        if (const int row = findAscending(id.high, id.low); row >= 0)
            return row;
    // The index holds kept rows only (trimBefore() erases the others).
    return m_ids.find(id.hash, [&](int row) { return m_text.equals(m_rows[size_t(row) - m_first].idRef, id.text); });
}

int EventLog::findAscending(quint64 high, quint64 low) const
{
    const std::pair<quint64, quint64> wanted(high, low);
    const auto idOf = [&](int row) { // rows of a run hold packed ULIDs
        std::pair<quint64, quint64> id;
        keptUlid(row, id.first, id.second);
        return id;
    };
    const auto below = [&](int row) { return idOf(row) < wanted; };
    const auto isId = [&](int row) { return idOf(row) == wanted; };
    // Ids ascend across runs too: the first run whose first id is not below the one sought
    // starts with it, or the id is in the run before (if anywhere).
    const auto next = std::partition_point(m_ascending.begin(), m_ascending.end(),
                                           [&](const AscendingRun &r) { return below(r.first); });
    if (next != m_ascending.end() && isId(next->first))
        return next->first;
    if (next == m_ascending.begin())
        return -1;
    const AscendingRun &run = *std::prev(next);
    int lo = run.first;
    int hi = run.end;
    while (lo < hi) { // the first row of the run whose id is not below
        const int mid = lo + (hi - lo) / 2;
        if (below(mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < run.end && isId(lo) ? lo : -1;
}

void EventLog::append(EventEntry entry, const IdKey &eventId, const QString &type, EventKind kind,
                      const QString &agentId, qint64 receivedMs, const QByteArray &frame, const FrameRef &journalRef)
{
    const int row = int(size());
    const size_t kept = m_rows.size();
    // Past 4 GiB of kept ids (some 150 million events) a reference no longer fits the row: the
    // id is not kept (the event still is, and its frame still has it).
    m_text.setOwner(row);
    const TextArena::Ref idRef = eventId.ulid ? m_text.appendUlid(eventId.high, eventId.low) : m_text.append(eventId.text);
    const bool ascending = eventId.ulid && m_newestId.above(eventId.high, eventId.low);
    if (eventId.ulid)
        m_newestId.note(eventId.high, eventId.low);
    entry.idRef = idRef <= std::numeric_limits<quint32>::max() ? quint32(idRef) : 0;
    if (idRef > std::numeric_limits<quint32>::max())
        ++m_textsNotKept;
    const qint64 delta = receivedMs - entry.timestampMs;
    if (delta > kFarReceipt && delta <= std::numeric_limits<qint32>::max()) {
        entry.receivedDeltaMs = qint32(delta);
    } else {
        entry.receivedDeltaMs = kFarReceipt;
        m_farReceipts.emplace_back(row, receivedMs);
    }
    entry.subjectRow = subjectRowOf(m_names.intern(type), kind, m_names.intern(agentId));
    ++m_typeAppended[size_t(m_subjects[size_t(entry.subjectRow)].typeRow)];
    m_rows.push_back(entry);
    if (ascending && entry.idRef) {
        if (!m_ascending.empty() && m_ascending.back().end == row)
            ++m_ascending.back().end;
        else
            m_ascending.push_back({row, row + 1});
    } else if (!eventId.text.isEmpty() && entry.idRef) {
        m_ids.insert(eventId.hash, row);
    }
    if (!frame.isEmpty()) {
        m_frames.resize(kept); // rows before it kept none
        m_frames.push_back(frame);
        m_frameBytes += size_t(frame.size());
    } else if (!m_frames.empty()) {
        m_frames.emplace_back();
    }
    if (journalRef.isValid()) {
        m_journalRefs.resize(kept); // rows before it had none
        m_journalRefs.push_back(journalRef);
    } else if (!m_journalRefs.empty()) {
        m_journalRefs.emplace_back();
    }
}

int EventLog::subjectRowOf(int typeName, EventKind kind, int agentName)
{
    // Both names are small row numbers and the kind a small one: a multiplicative hash spreads
    // them over the table.
    const auto slotOf = [](int type, EventKind kindOf, int name, size_t mask) {
        const quint64 key = (quint64(quint32(type)) << 40 | quint64(kindOf) << 32 | quint32(name)) * 0x9E3779B97F4A7C15ull;
        return size_t(key >> 32) & mask;
    };
    size_t mask = m_subjectSlots.size() - 1;
    size_t at = 0;
    if (!m_subjectSlots.empty())
        for (at = slotOf(typeName, kind, agentName, mask); m_subjectSlots[at]; at = (at + 1) & mask) {
            const SubjectRow &pair = m_subjects[m_subjectSlots[at] - 1];
            const TypeRow &t = m_types[size_t(pair.typeRow)];
            if (pair.agentName == agentName && t.name == typeName && t.kind == kind)
                return int(m_subjectSlots[at] - 1);
        }
    // A pair not seen before: its type's row (a type not seen before gets one).
    const quint64 typeKey = quint64(typeName) << 8 | quint64(kind);
    auto type = m_typeRows.constFind(typeKey);
    if (type == m_typeRows.constEnd()) {
        type = m_typeRows.insert(typeKey, int(m_types.size()));
        m_types.push_back({typeName, kind});
        m_typeAppended.push_back(0);
    }
    m_subjects.push_back({*type, agentName});
    if (m_subjects.size() * 2 > m_subjectSlots.size()) { // at most half full: grow, place all again
        std::vector<quint32> table(std::max<size_t>(64, m_subjectSlots.size() * 2), 0);
        mask = table.size() - 1;
        for (size_t row = 0; row < m_subjects.size(); ++row) {
            const TypeRow &t = m_types[size_t(m_subjects[row].typeRow)];
            for (at = slotOf(t.name, t.kind, m_subjects[row].agentName, mask); table[at]; at = (at + 1) & mask) {
            }
            table[at] = quint32(row + 1);
        }
        m_subjectSlots.swap(table);
    } else {
        m_subjectSlots[at] = quint32(m_subjects.size());
    }
    return int(m_subjects.size() - 1);
}

void EventLog::trimBefore(size_t row)
{
    row = std::min(row, size());
    if (row <= m_first)
        return;
    const size_t count = row - m_first;
    m_ids.eraseRowsBefore(int(row));
    while (!m_ascending.empty() && size_t(m_ascending.front().end) <= row)
        m_ascending.pop_front();
    if (!m_ascending.empty())
        m_ascending.front().first = std::max(m_ascending.front().first, int(row));
    m_rows.erase(m_rows.begin(), m_rows.begin() + qsizetype(count));
    const size_t framesGone = std::min(count, m_frames.size());
    for (size_t i = 0; i < framesGone; ++i)
        m_frameBytes -= size_t(m_frames[i].size());
    m_frames.erase(m_frames.begin(), m_frames.begin() + qsizetype(framesGone));
    m_journalRefs.erase(m_journalRefs.begin(), m_journalRefs.begin() + qsizetype(std::min(count, m_journalRefs.size())));
    while (!m_farReceipts.empty() && size_t(m_farReceipts.front().first) < row)
        m_farReceipts.pop_front();
    while (!m_causes.empty() && size_t(m_causes.front().first) < row)
        m_causes.pop_front();
    for (auto it = m_effects.begin(); it != m_effects.end();) // an effect is newer than its cause
        it = size_t(it.key()) < row ? m_effects.erase(it) : std::next(it);
    m_first = row;
    m_text.releaseOwnersBefore(qint64(row));
}

qint64 EventLog::receivedMs(size_t row) const
{
    if (!isKept(row))
        return 0;
    const EventEntry &e = m_rows[row - m_first];
    if (e.receivedDeltaMs != kFarReceipt)
        return e.timestampMs + e.receivedDeltaMs;
    const auto it = std::lower_bound(m_farReceipts.begin(), m_farReceipts.end(), std::make_pair(int(row), qint64(0)),
                                     [](const auto &a, const auto &b) { return a.first < b.first; });
    return it != m_farReceipts.end() && it->first == int(row) ? it->second : e.timestampMs;
}

size_t EventLog::memoryBytes() const
{
    return m_rows.size() * sizeof(EventEntry) + m_frames.size() * sizeof(QByteArray) + m_frameBytes
        + m_journalRefs.size() * sizeof(FrameRef) + m_text.memoryBytes()
        + m_subjects.capacity() * sizeof(SubjectRow) + m_subjectSlots.capacity() * sizeof(quint32)
        + m_ids.memoryBytes() + m_ascending.size() * sizeof(AscendingRun) + m_farReceipts.size() * sizeof(m_farReceipts[0]) + m_causes.size() * (sizeof(m_causes[0]) + 48);
}

std::vector<int> EventLog::causesOf(size_t row) const
{
    std::vector<int> out;
    auto it = std::lower_bound(m_causes.begin(), m_causes.end(), row,
                               [](const std::pair<quint32, quint32> &link, size_t r) { return size_t(link.first) < r; });
    for (; it != m_causes.end() && size_t(it->first) == row; ++it)
        if (isKept(it->second))
            out.push_back(int(it->second));
    return out;
}

std::vector<int> EventLog::effectsOf(size_t row) const
{
    std::vector<int> out;
    if (const auto it = m_effects.constFind(quint32(row)); it != m_effects.constEnd())
        for (const quint32 effect : it.value())
            out.push_back(int(effect));
    return out;
}

void EventLog::clear()
{
    m_first = 0;
    m_textsNotKept = 0;
    m_newestId.clear();
    m_ascending = {};
    m_rows = {};
    m_types.clear();
    m_typeAppended.clear();
    m_typeRows.clear();
    m_subjects = {};
    m_subjectSlots = {};
    m_farReceipts = {};
    m_frames = {};
    m_frameBytes = 0;
    m_journalRefs = {};
    m_causes = {};
    m_effects.clear();
    m_text.clear();
    m_names.clear();
    m_ids.clear();
}

// ---- MessageLog -----------------------------------------------------------------------------

const MessageLog::Row MessageLog::kTrimmed{};

Message MessageLog::operator[](size_t row) const
{
    const Row &r = rowAt(row);
    Message m;
    m.id = m_text.text(r.id);
    m.eventRow = r.eventRow;
    if (m_events && r.eventRow >= 0)
        m.eventId = m_events->eventId(size_t(r.eventRow));
    m.fromAgentId = m_names.name(r.fromAgentId);
    m.fromRaw = m_names.name(r.fromRaw);
    m.toDisplay = m_names.name(r.toDisplay);
    if (r.recipients > 0) {
        m.toAgentIds = QStringList{m_names.name(r.recipients)};
    } else if (r.recipients < 0) {
        const RecipientList &list = m_lists[size_t(-r.recipients - 1)];
        m.toAgentIds.reserve(qsizetype(list.names.size()));
        for (const int name : list.names)
            m.toAgentIds << m_names.name(name);
        m.recipientsNotKept = list.notKept;
    }
    m.scopeId = m_names.name(r.scopeId);
    const QByteArrayView payload = m_text.utf8(r.payload);
    m.payloadText = QByteArray(payload.data(), payload.size());
    m.payloadInFrame = r.payloadInFrame;
    m.payloadType = m_names.name(r.payloadType);
    if (r.priority != kNoPriority)
        m.priority = r.priority;
    m.correlationId = m_text.text(r.correlationId);
    if (const LinkRow *l = linksOf(row)) {
        m.envelopeId = m_text.text(l->envelopeId);
        m.spanId = m_text.text(l->spanId);
        m.parentRef = m_text.text(l->parentRef);
        m.traceId = m_text.text(l->traceId);
        m.rpcRef = m_text.text(l->rpcRef);
    }
    m.convention = ConventionKind(r.convention);
    m.severity = Severity(r.severity);
    m.taskId = m_names.name(r.taskId);
    m.status = m_names.name(r.status);
    m.timestampMs = r.timestampMs;
    if (const UsageRow *usage = usageOf(row)) {
        if (usage->tokensUsed != kNoTokens)
            m.tokensUsed = usage->tokensUsed;
        if (!std::isnan(usage->costUsd))
            m.costUsd = usage->costUsd;
    }
    return m;
}

const MessageLog::UsageRow *MessageLog::usageOf(size_t row) const
{
    const auto it = std::lower_bound(m_usage.begin(), m_usage.end(), row,
                                     [](const UsageRow &u, size_t r) { return size_t(u.row) < r; });
    return it != m_usage.end() && size_t(it->row) == row ? &*it : nullptr;
}

const MessageLog::LinkRow *MessageLog::linksOf(size_t row) const
{
    const auto it = std::lower_bound(m_links.begin(), m_links.end(), row,
                                     [](const LinkRow &l, size_t r) { return size_t(l.row) < r; });
    return it != m_links.end() && size_t(it->row) == row ? &*it : nullptr;
}

QString MessageLog::linkText(size_t row, quint32 LinkRow::*field) const
{
    const LinkRow *l = linksOf(row);
    return l ? m_text.text(l->*field) : QString();
}

int MessageLog::findByEnvelopeOrSpan(QStringView id) const
{
    if (id.isEmpty())
        return -1;
    return m_linkIds.find(IdIndex::hashOf(id), [&](int row) {
        const LinkRow *l = linksOf(size_t(row));
        return l && (m_text.equals(l->envelopeId, id) || m_text.equals(l->spanId, id));
    });
}

std::optional<qint64> MessageLog::tokensUsed(size_t row) const
{
    const UsageRow *usage = usageOf(row);
    return usage && usage->tokensUsed != kNoTokens ? std::optional<qint64>(usage->tokensUsed) : std::nullopt;
}

std::optional<double> MessageLog::costUsd(size_t row) const
{
    const UsageRow *usage = usageOf(row);
    return usage && !std::isnan(usage->costUsd) ? std::optional<double>(usage->costUsd) : std::nullopt;
}

int MessageLog::recipientCount(size_t row) const
{
    const int recipients = rowAt(row).recipients;
    return recipients > 0 ? 1 : recipients < 0 ? int(m_lists[size_t(-recipients - 1)].names.size()) : 0;
}

const QString &MessageLog::recipient(size_t row, int index) const
{
    return m_names.name(recipientNameRow(row, index));
}

int MessageLog::recipientNameRow(size_t row, int index) const
{
    const int recipients = rowAt(row).recipients;
    return recipients > 0 ? recipients : m_lists[size_t(-recipients - 1)].names.at(size_t(index));
}

qint64 MessageLog::recipientsNotKept(size_t row) const
{
    const int recipients = rowAt(row).recipients;
    return recipients < 0 ? m_lists[size_t(-recipients - 1)].notKept : 0;
}

bool MessageLog::hasRecipient(size_t row, const QString &agentId) const
{
    const int recipients = rowAt(row).recipients;
    if (recipients > 0)
        return m_names.name(recipients) == agentId;
    if (recipients >= 0)
        return false;
    const std::vector<int> &names = m_lists[size_t(-recipients - 1)].names;
    return std::binary_search(names.cbegin(), names.cend(), agentId, NameOrder{m_names});
}

int MessageLog::find(QStringView messageId) const
{
    if (messageId.isEmpty())
        return -1;
    if (quint64 high = 0, low = 0; ulidValue(messageId, high, low) && m_newestId.above(high, low))
        return -1; // never appended
    return m_ids.find(IdIndex::hashOf(messageId),
                      [&](int row) { return m_text.equals(m_rows[size_t(row) - m_first].id, messageId); });
}

int MessageLog::keepList(QStringList ids, qint64 notKept)
{
    // Bounded before interning: a message to a million agents adds ten thousand names, not all.
    ids.removeAll(QString());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() > kMaxRecipients) {
        notKept += ids.size() - kMaxRecipients;
        ids.resize(kMaxRecipients);
    }
    std::vector<int> names;
    names.reserve(size_t(ids.size()));
    for (const QString &id : std::as_const(ids))
        names.push_back(m_names.intern(id)); // in the order of their ids, as the list keeps them
    m_listBytes += listBytes(names);
    RecipientList kept{std::move(names), notKept};
    if (m_freeLists.empty()) {
        m_lists.push_back(std::move(kept));
        return int(m_lists.size()) - 1;
    }
    const int index = m_freeLists.back();
    m_freeLists.pop_back();
    m_lists[size_t(index)] = std::move(kept);
    return index;
}

int MessageLog::append(const Message &m)
{
    const int row = int(size());
    ++m_appendedByConvention[size_t(m.convention)];
    m_text.setOwner(row);
    Row r;
    if (quint64 high = 0, low = 0; ulidValue(m.id, high, low)) {
        r.id = narrowRef(m_text.appendUlid(high, low));
        m_newestId.note(high, low);
    } else {
        r.id = narrowRef(m_text.append(m.id));
    }
    r.payload = narrowRef(m_text.appendUtf8(m.payloadText));
    r.correlationId = narrowRef(m_text.append(m.correlationId));
    r.timestampMs = m.timestampMs;
    r.eventRow = m.eventRow;
    r.fromAgentId = m_names.intern(m.fromAgentId);
    r.fromRaw = m_names.intern(m.fromRaw);
    r.toDisplay = m_names.intern(m.toDisplay);
    if (m.toAgentIds.size() == 1 && !m.toAgentIds.front().isEmpty()) {
        r.recipients = m_names.intern(m.toAgentIds.front());
    } else if (!m.toAgentIds.isEmpty()) {
        r.recipients = -(keepList(m.toAgentIds, m.recipientsNotKept) + 1);
    }
    r.scopeId = m_names.intern(m.scopeId);
    r.payloadType = m_names.intern(m.payloadType);
    r.taskId = m_names.intern(m.taskId);
    r.status = m_names.intern(m.status);
    r.priority = m.priority.value_or(kNoPriority);
    r.convention = quint8(m.convention);
    r.severity = quint8(m.severity);
    r.payloadInFrame = m.payloadInFrame;
    m_rows.push_back(r);
    if (m.tokensUsed || m.costUsd)
        m_usage.push_back({quint32(row), m.tokensUsed.value_or(kNoTokens),
                           m.costUsd.value_or(std::numeric_limits<double>::quiet_NaN())});
    if (!m.id.isEmpty() && r.id)
        m_ids.insert(IdIndex::hashOf(m.id), row);
    if (!m.envelopeId.isEmpty() || !m.spanId.isEmpty() || !m.parentRef.isEmpty() || !m.traceId.isEmpty() || !m.rpcRef.isEmpty()) {
        const LinkRow link{quint32(row), narrowRef(m_text.append(m.envelopeId)), narrowRef(m_text.append(m.spanId)),
                           narrowRef(m_text.append(m.parentRef)), narrowRef(m_text.append(m.traceId)),
                           narrowRef(m_text.append(m.rpcRef))};
        m_links.push_back(link);
        // An id already indexed keeps its first message (a span id repeats over a span's
        // messages; inserting each would make long probe runs).
        if (!m.envelopeId.isEmpty() && link.envelopeId && findByEnvelopeOrSpan(m.envelopeId) < 0)
            m_linkIds.insert(IdIndex::hashOf(m.envelopeId), row);
        if (!m.spanId.isEmpty() && link.spanId && findByEnvelopeOrSpan(m.spanId) < 0)
            m_linkIds.insert(IdIndex::hashOf(m.spanId), row);
    }
    return row;
}

void MessageLog::setStatus(size_t row, const QString &status)
{
    if (isKept(row))
        m_rows[row - m_first].status = m_names.intern(status);
}

bool MessageLog::addRecipient(size_t row, const QString &agentId)
{
    if (agentId.isEmpty() || !isKept(row))
        return true;
    Row &r = m_rows[row - m_first];
    if (r.recipients == 0) {
        r.recipients = m_names.intern(agentId);
        return true;
    }
    if (r.recipients > 0) { // one becomes a list (built whole: the official server's deliveries
                            // name a second agent on most messages)
        r.recipients = -(keepList(QStringList{m_names.name(r.recipients), agentId}, 0) + 1);
        return true;
    }
    RecipientList &list = m_lists[size_t(-r.recipients - 1)];
    const auto at = std::lower_bound(list.names.begin(), list.names.end(), agentId, NameOrder{m_names});
    if (at != list.names.end() && m_names.name(*at) == agentId)
        return true;
    if (list.names.size() >= size_t(kMaxRecipients)) {
        ++list.notKept;
        return false;
    }
    m_listBytes -= listBytes(list.names);
    list.names.insert(at, m_names.intern(agentId));
    m_listBytes += listBytes(list.names);
    return true;
}

void MessageLog::trimBefore(size_t row)
{
    row = std::min(row, size());
    if (row <= m_first)
        return;
    const size_t count = row - m_first;
    for (size_t i = 0; i < count; ++i) {
        if (const int recipients = m_rows[i].recipients; recipients < 0) {
            RecipientList &list = m_lists[size_t(-recipients - 1)];
            m_listBytes -= listBytes(list.names);
            list = RecipientList();
            m_freeLists.push_back(-recipients - 1);
        }
    }
    m_ids.eraseRowsBefore(int(row));
    m_rows.erase(m_rows.begin(), m_rows.begin() + qsizetype(count));
    while (!m_usage.empty() && m_usage.front().row < row)
        m_usage.pop_front();
    while (!m_links.empty() && m_links.front().row < row)
        m_links.pop_front();
    m_linkIds.eraseRowsBefore(int(row));
    m_first = row;
    m_text.releaseOwnersBefore(qint64(row));
}

size_t MessageLog::memoryBytes() const
{
    return m_rows.size() * sizeof(Row) + m_lists.capacity() * sizeof(RecipientList) + m_listBytes + m_text.memoryBytes()
        + m_ids.memoryBytes() + m_usage.size() * sizeof(UsageRow) + m_links.size() * sizeof(LinkRow) + m_linkIds.memoryBytes();
}

void MessageLog::clear()
{
    m_first = 0;
    m_textsNotKept = 0;
    m_appendedByConvention = {};
    m_newestId.clear();
    m_rows = {};
    m_lists = {};
    m_listBytes = 0;
    m_freeLists = {};
    m_usage = {};
    m_links = {};
    m_linkIds.clear();
    m_text.clear();
    m_names.clear();
    m_ids.clear();
}

// ---- TaskHistoryLog -------------------------------------------------------------------------

int TaskHistoryLog::append(int previous, const TaskTransition &step)
{
    Row r;
    r.timeMs = step.timeMs;
    r.eventRow = m_eventRow;
    r.previous = previous;
    r.status = m_names.intern(step.status);
    r.agentId = m_names.intern(step.agentId);
    r.detail = m_names.intern(step.detail);
    r.messageRow = step.messageRow;
    m_rows.push_back(r);
    return int(size()) - 1;
}

std::vector<TaskTransition> TaskHistoryLog::chain(int last) const
{
    std::vector<TaskTransition> steps;
    for (int row = last; row >= int(m_first) && size_t(row) < size(); row = m_rows[size_t(row) - m_first].previous) {
        const Row &r = m_rows[size_t(row) - m_first];
        steps.push_back({r.timeMs, m_names.name(r.status), m_names.name(r.agentId), m_names.name(r.detail), r.messageRow});
    }
    std::reverse(steps.begin(), steps.end());
    return steps;
}

void TaskHistoryLog::trimBeforeEvent(int eventRow)
{
    while (!m_rows.empty() && m_rows.front().eventRow < eventRow) {
        m_rows.pop_front();
        ++m_first;
    }
}

void TaskHistoryLog::clear()
{
    m_first = 0;
    m_eventRow = 0;
    m_rows = {};
    m_names.clear();
}

} // namespace mapi
