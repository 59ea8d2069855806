#include "trace/TraceTimeline.h"

#include "protocol/SimdJsonParser.h"
#include "trace/BoundedQueue.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <thread>
#include <utility>

namespace mapi {

// ---- timeline ----------------------------------------------------------------------------------

TraceTimeline::TraceTimeline(CodecLimits limits, bool fastParser)
    : m_limits(limits)
    , m_fastParser(fastParser)
{
}

TraceTimeline::~TraceTimeline()
{
    ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(m_cctx));
}

void TraceTimeline::seal(Chunk &chunk)
{
    std::vector<quint32>().swap(chunk.sourceOffsets); // its bytes stay here
    if (chunk.raw.isEmpty())
        return;
    if (!m_cctx)
        m_cctx = ZSTD_createCCtx();
    QByteArray out(qsizetype(ZSTD_compressBound(size_t(chunk.raw.size()))), Qt::Uninitialized);
    const size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx *>(m_cctx), out.data(), size_t(out.size()),
                                       chunk.raw.constData(), size_t(chunk.raw.size()), 1);
    if (ZSTD_isError(n))
        return; // keep it plain
    chunk.compressed = QByteArray(out.constData(), qsizetype(n)); // exact size
    chunk.raw = QByteArray();
}

void TraceTimeline::appendRecord(const TraceRecord &r)
{
    const RecordDir dir = recordDir(r.dir);
    std::string action;
    const char *bytes = r.raw.constData();
    qsizetype size = r.raw.size();
    if (dir == RecordDir::Action) {
        action = r.extra.dump(-1, ' ', false, Json::error_handler_t::replace);
        bytes = action.data();
        size = qsizetype(action.size());
    }
    const qint64 index = recordCount();
    if (m_chunks.empty() || m_chunks.back().closed || m_chunks.back().raw.size() + size > kChunkBytes) {
        if (!m_chunks.empty() && !m_chunks.back().closed)
            settle(quint32(m_chunks.size() - 1));
        m_chunks.emplace_back();
        m_chunks.back().raw.reserve(std::max(kChunkBytes, size));
        m_chunks.back().firstRecord = index;
    }
    Chunk &chunk = m_chunks.back();
    const quint32 offset = quint32(chunk.raw.size());
    chunk.raw.append(bytes, size);
    chunk.rawSize = chunk.raw.size();
    m_frameBytes += size;
    if (m_source) {
        const qint64 at = dir == RecordDir::Action ? -1 : r.contentOffset;
        const bool line = r.contentLineSize > 0;
        const qint64 sourceSize = line ? r.contentLineSize : size;
        if (at >= 0)
            m_contentEnd = std::max(m_contentEnd, at + sourceSize);
        if (chunk.sourceStart < 0) {
            chunk.sourceStart = at;
            chunk.sourceLines = line;
        }
        if (at < 0 || chunk.sourceEnd < 0 || line != chunk.sourceLines
            || at - chunk.sourceStart > std::numeric_limits<quint32>::max()) {
            chunk.sourceEnd = -1; // not all of it can come back from the source
            std::vector<quint32>().swap(chunk.sourceOffsets);
        } else {
            chunk.sourceEnd = at + sourceSize;
            const qint64 inChunk = index - chunk.firstRecord;
            const qint64 fromStart = at - chunk.sourceStart;
            if (inChunk == 1 && chunk.sourceOffsets.empty() && fromStart >= offset
                && fromStart - offset <= std::numeric_limits<qint32>::max())
                chunk.sourceGap = qint32(fromStart - offset);
            // A line's length is not its record's: a chunk of lines keeps every offset.
            const bool followsGap = !chunk.sourceLines && chunk.sourceOffsets.empty()
                && (inChunk == 0 || (chunk.sourceGap >= 0 && qint64(offset) + inChunk * chunk.sourceGap == fromStart));
            if (!followsGap && chunk.sourceOffsets.empty()) { // the gaps differ from here on: keep them all
                std::vector<quint32> kept;
                kept.reserve(size_t(inChunk) + 1);
                for (qint64 k = 0; k < inChunk; ++k)
                    kept.push_back(quint32(sourceOffsetOf(chunk.firstRecord + k, chunk)));
                chunk.sourceOffsets = std::move(kept);
            }
            if (!chunk.sourceOffsets.empty() || !followsGap)
                chunk.sourceOffsets.push_back(quint32(fromStart));
        }
        if (!m_waiting.empty())
            settleWaiting(false);
    }
    const qint64 previous = index == 0 ? r.timeMs : m_lastSortTimeMs;
    if (r.timeMs < previous)
        m_earlierTimes.emplace_back(index, r.timeMs);
    m_lastSortTimeMs = std::max(previous, r.timeMs);
    if (m_timeSpans.empty() || m_lastSortTimeMs - m_timeSpans.back().baseMs > qint64(std::numeric_limits<quint32>::max()))
        m_timeSpans.push_back({index, m_lastSortTimeMs});
    m_sortOffsets.push_back(quint32(m_lastSortTimeMs - m_timeSpans.back().baseMs));
    m_offsets.push_back(offset);
    m_flags.push_back(quint8((quint8(dir) & kDirMask) | (r.binary ? kBinary : 0)));
    if (m_connections.empty() || m_connections.back().second != qint32(r.connection))
        m_connections.emplace_back(index, qint32(r.connection));
}

void TraceTimeline::settle(quint32 index)
{
    m_chunks[index].closed = true;
    if (!m_source || !m_source->usable()) {
        seal(m_chunks[index]);
        return;
    }
    m_waiting.push_back(index);
    settleWaiting(false);
}

void TraceTimeline::settleWaiting(bool loadEnded)
{
    while (!m_waiting.empty()) {
        Chunk &chunk = m_chunks[m_waiting.front()];
        // Past the index's end lies the one frame being read, at least up to the newest record:
        // once that is larger than the index reads back, waiting would only hold the bytes.
        const qint64 indexed = m_source->completeEnd();
        const bool openFrameTooLarge = m_contentEnd - indexed > ContentIndex::kMaxFrameBytes;
        if (chunk.sourceEnd > indexed && !openFrameTooLarge && !loadEnded)
            return; // the file's index has not reached its last record yet
        // Records follow the file's order, so the chunk's records lie in [sourceStart, sourceEnd).
        if (chunk.sourceEnd >= 0 && chunk.sourceStart >= 0
            && m_source->covers(chunk.sourceStart, chunk.sourceEnd - chunk.sourceStart)) {
            chunk.raw = QByteArray();
            chunk.sourceOffsets.shrink_to_fit();
            chunk.inSource = true;
        } else {
            seal(chunk);
        }
        m_waiting.pop_front();
    }
}

void TraceTimeline::finishAppending()
{
    if (!m_chunks.empty() && !m_chunks.back().closed)
        settle(quint32(m_chunks.size() - 1));
    if (m_source)
        settleWaiting(true);
}

QString TraceTimeline::sourceError() const
{
    std::lock_guard<std::mutex> lock(m_errorMutex);
    return m_sourceError;
}

qint64 TraceTimeline::recordTimeMs(qint64 index) const
{
    const auto it = std::lower_bound(m_earlierTimes.begin(), m_earlierTimes.end(), index,
                                     [](const std::pair<qint64, qint64> &e, qint64 i) { return e.first < i; });
    return it != m_earlierTimes.end() && it->first == index ? it->second : sortTimeMs(index);
}

qint64 TraceTimeline::sortTimeMs(qint64 index) const
{
    const auto span = std::upper_bound(m_timeSpans.begin(), m_timeSpans.end(), index,
                                       [](qint64 i, const TimeSpan &s) { return i < s.firstRecord; });
    return std::prev(span)->baseMs + qint64(m_sortOffsets[size_t(index)]);
}

quint32 TraceTimeline::chunkOf(qint64 index) const
{
    const auto chunk = std::upper_bound(m_chunks.begin(), m_chunks.end(), index,
                                        [](qint64 i, const Chunk &c) { return i < c.firstRecord; });
    return quint32(std::prev(chunk) - m_chunks.begin());
}

bool TraceTimeline::lineRecordBytes(qint64 index, const Chunk &chunk, qint64 at, ChunkCache &cache, QByteArray &out,
                                    QString &error) const
{
    // The record's line runs to the next record's (skipped lines between end at its first
    // line break), the chunk's last to the chunk's end.
    const size_t inChunk = size_t(index - chunk.firstRecord);
    const qint64 end = inChunk + 1 < chunk.sourceOffsets.size() ? chunk.sourceStart + chunk.sourceOffsets[inChunk + 1]
                                                               : chunk.sourceEnd;
    const qsizetype span = qsizetype(end - at);
    constexpr qsizetype kParserPadding = 64; // RecordLineParser::parse(): no copy with 64 bytes past the line
    QByteArray &line = cache.line; // reused: one record after another in a replay
    line.resize(std::max<qsizetype>(span, 0) + kParserPadding);
    if (span <= 0 || !m_source->read(at, span, line.data(), cache.source, &error))
        return false;
    const qsizetype lineEnd = QByteArrayView(line.constData(), span).indexOf('\n');
    const qsizetype lineSize = lineEnd >= 0 ? lineEnd : span;
    if (!cache.lines)
        cache.lines = std::make_unique<RecordLineParser>(); // no header seen: as TraceRecord::contentLineSize says
    TraceRecord record;
    if (cache.lines->parse(line.constData(), lineSize, line.size(), record) != RecordLineParser::Result::Record)
        return false;
    out = std::move(record.raw);
    return true;
}

qint64 TraceTimeline::sourceOffsetOf(qint64 index, const Chunk &chunk) const
{
    const qint64 inChunk = index - chunk.firstRecord;
    return chunk.sourceOffsets.empty() ? qint64(m_offsets[size_t(index)]) + inChunk * std::max(chunk.sourceGap, 0)
                                       : qint64(chunk.sourceOffsets[size_t(inChunk)]);
}

quint32 TraceTimeline::recordSize(qint64 index, quint32 chunk) const
{
    const qint64 next = index + 1;
    const bool nextInChunk = next < recordCount()
        && (size_t(chunk) + 1 == m_chunks.size() || next < m_chunks[size_t(chunk) + 1].firstRecord);
    const quint32 offset = m_offsets[size_t(index)];
    return nextInChunk ? m_offsets[size_t(next)] - offset : quint32(m_chunks[chunk].rawSize - offset);
}

qint32 TraceTimeline::connectionOf(qint64 index) const
{
    const auto it = std::upper_bound(m_connections.begin(), m_connections.end(), index,
                                     [](qint64 i, const std::pair<qint64, qint32> &run) { return i < run.first; });
    return it == m_connections.begin() ? 0 : std::prev(it)->second;
}

void TraceTimeline::appendInputCount(int inputs)
{
    m_inputs.push_back(quint8(std::min(inputs, 255)));
}

void TraceTimeline::markDamaged(qint64 record)
{
    m_damaged.push_back(record);
}

void TraceTimeline::mapEvents(int firstEvent, int endEvent, qint64 record)
{
    if (firstEvent < 0 || endEvent <= firstEvent)
        return;
    // Events from firstEvent on are mapped again (a replay from an earlier point): forget them.
    while (!m_eventRuns.empty() && m_eventRuns.back().firstEvent >= firstEvent)
        m_eventRuns.pop_back();
    if (!m_eventRuns.empty())
        m_eventRuns.back().endEvent = std::min(m_eventRuns.back().endEvent, firstEvent);
    m_eventCount = endEvent;
    if (!m_eventRuns.empty()) {
        EventRun &last = m_eventRuns.back();
        const qint64 lastRecord = last.stepping ? qint64(last.firstRecord) + (last.endEvent - 1 - last.firstEvent)
                                                : qint64(last.firstRecord);
        const bool canStep = last.stepping || last.endEvent - last.firstEvent == 1;
        if (endEvent - firstEvent == 1 && last.endEvent == firstEvent && canStep && lastRecord + 1 == record) {
            last.stepping = true;
            last.endEvent = endEvent;
            return;
        }
    }
    m_eventRuns.push_back({firstEvent, endEvent, quint32(record), false});
}

const char *TraceTimeline::chunkData(quint32 index, ChunkCache &cache) const
{
    const Chunk &chunk = m_chunks[index];
    if (chunk.compressed.isEmpty())
        return chunk.raw.constData();
    if (cache.chunk != qint64(index)) {
        cache.data.resize(chunk.rawSize);
        const size_t n = ZSTD_decompress(cache.data.data(), size_t(cache.data.size()), chunk.compressed.constData(),
                                         size_t(chunk.compressed.size()));
        if (ZSTD_isError(n) || qsizetype(n) != chunk.rawSize)
            cache.data.fill('\0'); // cannot happen: we compressed it ourselves
        cache.chunk = index;
    }
    return cache.data.constData();
}

bool TraceTimeline::recordBytes(qint64 index, ChunkCache &cache, QByteArray &out) const
{
    const quint32 chunkIndex = chunkOf(index);
    const quint32 size = recordSize(index, chunkIndex);
    if (!size) {
        out = QByteArray();
        return true;
    }
    if (!m_chunks[chunkIndex].inSource) {
        out = QByteArray(chunkData(chunkIndex, cache) + m_offsets[size_t(index)], qsizetype(size));
        return true;
    }
    QString error;
    const Chunk &chunk = m_chunks[chunkIndex];
    const qint64 at = chunk.sourceStart + sourceOffsetOf(index, chunk);
    if (chunk.sourceLines) {
        if (lineRecordBytes(index, chunk, at, cache, out, error) && out.size() == qsizetype(size))
            return true;
        if (error.isEmpty())
            error = QStringLiteral("the line of record %1 no longer gives its frame back").arg(index + 1);
    } else {
        out.resize(qsizetype(size));
        if (m_source->read(at, qsizetype(size), out.data(), cache.source, &error))
            return true;
    }
    out = QByteArray();
    ++m_unreadable;
    std::lock_guard<std::mutex> lock(m_errorMutex);
    if (m_sourceError.isEmpty())
        m_sourceError = error;
    return false;
}

TraceRecord TraceTimeline::recordWith(qint64 index, ChunkCache &cache) const
{
    RecordDir dir = recordDirOf(index);
    if (std::binary_search(m_damaged.begin(), m_damaged.end(), index))
        dir = RecordDir::Other; // replay ignores it, as the load did
    TraceRecord r;
    r.timeMs = recordTimeMs(index);
    r.dir = recordDirName(dir);
    r.connection = connectionOf(index);
    r.binary = m_flags[size_t(index)] & kBinary;
    if (!recordBytes(index, cache, r.raw))
        r.dir = recordDirName(RecordDir::Other); // unavailable: skipped, reported by replay()
    else if (dir == RecordDir::Action)
        r.extra = Json::parse(std::exchange(r.raw, QByteArray()).toStdString(), nullptr, false);
    return r;
}

TraceRecord TraceTimeline::record(qint64 index) const
{
    std::lock_guard<std::mutex> lock(m_cacheMutex);
    return recordWith(index, m_cache);
}

qint64 TraceTimeline::recordsUpTo(qint64 timeMs) const
{
    // Sort times never decrease: records of later spans are all at or after their span's base.
    const auto next = std::upper_bound(m_timeSpans.begin(), m_timeSpans.end(), timeMs,
                                       [](qint64 t, const TimeSpan &s) { return t < s.baseMs; });
    if (next == m_timeSpans.begin())
        return 0;
    const TimeSpan &span = *std::prev(next);
    const qint64 spanEnd = next == m_timeSpans.end() ? recordCount() : next->firstRecord;
    const qint64 offset = timeMs - span.baseMs; // >= 0
    if (offset >= qint64(std::numeric_limits<quint32>::max()))
        return spanEnd;
    const auto begin = m_sortOffsets.begin() + span.firstRecord;
    return qint64(std::upper_bound(begin, m_sortOffsets.begin() + spanEnd, quint32(offset)) - m_sortOffsets.begin());
}

int TraceTimeline::inputsOf(qint64 index) const
{
    return index >= 0 && size_t(index) < m_inputs.size() ? m_inputs[size_t(index)] : 0;
}

qint64 TraceTimeline::nextChangingRecord(qint64 from) const
{
    for (qint64 i = std::max<qint64>(from, 0); i < qint64(m_inputs.size()); ++i)
        if (m_inputs[size_t(i)])
            return i;
    return -1;
}

qint64 TraceTimeline::previousChangingRecord(qint64 before) const
{
    for (qint64 i = std::min<qint64>(before, qint64(m_inputs.size())) - 1; i >= 0; --i)
        if (m_inputs[size_t(i)])
            return i;
    return -1;
}

qint64 TraceTimeline::recordForEvent(int eventIndex) const
{
    const auto next = std::upper_bound(m_eventRuns.begin(), m_eventRuns.end(), eventIndex,
                                       [](int e, const EventRun &run) { return e < run.firstEvent; });
    if (eventIndex < 0 || next == m_eventRuns.begin())
        return -1;
    const EventRun &run = *std::prev(next);
    if (eventIndex >= run.endEvent)
        return -1;
    return qint64(run.firstRecord) + (run.stepping ? eventIndex - run.firstEvent : 0);
}

QByteArray TraceTimeline::frameForEvent(int eventIndex) const
{
    const qint64 r = recordForEvent(eventIndex);
    if (r < 0 || r >= recordCount())
        return {};
    std::lock_guard<std::mutex> lock(m_cacheMutex);
    QByteArray frame;
    recordBytes(r, m_cache, frame);
    return frame;
}

size_t TraceTimeline::memoryBytes() const
{
    size_t bytes = m_sortOffsets.capacity() * sizeof(quint32) + m_timeSpans.capacity() * sizeof(TimeSpan)
        + m_offsets.capacity() * sizeof(quint32) + m_flags.capacity()
        + m_earlierTimes.capacity() * sizeof(m_earlierTimes[0]) + m_connections.capacity() * sizeof(m_connections[0])
        + m_inputs.capacity() + m_eventRuns.capacity() * sizeof(EventRun) + m_chunks.capacity() * sizeof(Chunk);
    for (const Chunk &c : m_chunks)
        bytes += size_t(c.raw.capacity() + c.compressed.size()) + c.sourceOffsets.capacity() * sizeof(quint32);
    return bytes;
}

RecordDecoder TraceTimeline::makeDecoder() const
{
    RecordDecoder decoder(m_limits, m_fastParser ? SimdJsonParser::instance() : nullptr);
    decoder.setKeepPayloadText(!m_dropRawFrames); // as the load did
    return decoder;
}

void TraceTimeline::replay(SystemStore &store, RecordDecoder &decoder, qint64 from, qint64 to) const
{
    from = std::max<qint64>(from, 0);
    to = std::min(to, recordCount());
    if (to <= from)
        return;
    // Records the source file no longer gives back are skipped; the store is told how many.
    const qint64 unreadableBefore = m_unreadable.load();
    auto reportUnreadable = [&] {
        const qint64 lost = m_unreadable.load() - unreadableBefore;
        if (lost <= 0)
            return;
        ProtocolProblem problem;
        problem.kind = ProblemKind::TraceUnreadable;
        problem.detail = QStringLiteral("%1 trace records could not be read back, so the view lacks them (and shows "
                                        "the gaps they leave): %2. Reopen the trace.")
                             .arg(lost)
                             .arg(sourceError());
        problem.timeMs = recordTimeMs(to - 1);
        ModelInputs inputs;
        inputs.push_back(ProblemInput{problem});
        store.apply(std::move(inputs));
    };
    constexpr qint64 kThreadedFrom = 4096; // below this a helper thread costs more than it saves
    constexpr qsizetype kBatch = 64;       // small batches, freed soon: far less CPU (TraceLoader.h)
    if (to - from < kThreadedFrom) {
        ChunkCache cache;
        for (qint64 i = from; i < to; ++i) {
            ModelInputs inputs;
            if (decoder.decode(recordWith(i, cache), inputs) > 0) {
                if (m_dropRawFrames)
                    dropRawFrames(inputs);
                store.apply(std::move(inputs));
            }
        }
        reportUnreadable();
        return;
    }
    // Decode on a helper thread, apply here: the store stays in its own thread.
    BoundedQueue<ModelInputs> queue(16);
    std::thread decoding([&] {
        ModelInputs batch;
        ChunkCache cache;
        for (qint64 i = from; i < to; ++i) {
            decoder.decode(recordWith(i, cache), batch);
            if (batch.size() >= kBatch) {
                if (m_dropRawFrames)
                    dropRawFrames(batch);
                if (!queue.push(std::move(batch)))
                    return;
                batch = ModelInputs();
            }
        }
        if (m_dropRawFrames)
            dropRawFrames(batch);
        if (!batch.empty())
            queue.push(std::move(batch));
        queue.close();
    });
    ModelInputs batch;
    while (queue.pop(batch)) {
        store.apply(std::move(batch));
        batch = ModelInputs();
    }
    decoding.join();
    reportUnreadable();
}

// ---- bookmarks ---------------------------------------------------------------------------------

QString bookmarksPath(const QString &tracePath)
{
    return tracePath + QStringLiteral(".bookmarks.json");
}

ErrorOr<QList<Bookmark>> loadBookmarks(const QString &tracePath)
{
    QList<Bookmark> bookmarks;
    QFile file(bookmarksPath(tracePath));
    if (!file.exists())
        return bookmarks;
    if (!file.open(QIODevice::ReadOnly))
        return Failure{QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString())};
    const QByteArray text = file.readAll();
    const Json doc = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
    const Json *list = doc.is_object() ? jsonChild(doc, "bookmarks") : nullptr;
    if (!list || !list->is_array())
        return Failure{QStringLiteral("%1 is not a bookmarks file").arg(file.fileName())};
    for (const Json &item : *list) {
        if (!item.is_object())
            continue;
        Bookmark b;
        b.timeMs = jsonInt(item, "t");
        b.title = jsonString(item, "title");
        b.note = jsonString(item, "note");
        bookmarks << b;
    }
    return bookmarks;
}

bool saveBookmarks(const QString &tracePath, const QList<Bookmark> &bookmarks, QString *error)
{
    Json list = Json::array();
    for (const Bookmark &b : bookmarks)
        list.push_back({{"t", b.timeMs}, {"title", b.title.toStdString()}, {"note", b.note.toStdString()}});
    const Json doc = {{"format", "map-inspector-bookmarks"},
                      {"version", 1},
                      {"trace", QFileInfo(tracePath).fileName().toStdString()},
                      {"bookmarks", list}};
    QSaveFile file(bookmarksPath(tracePath));
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString());
        return false;
    }
    file.write(QByteArray::fromStdString(doc.dump(2, ' ', false, Json::error_handler_t::replace)) + '\n');
    if (!file.commit()) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString());
        return false;
    }
    return true;
}

// ---- replay controller -------------------------------------------------------------------------

ReplayController::ReplayController(SystemStore *store, std::shared_ptr<const TraceTimeline> timeline,
                                   bool storeIsComplete, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_timeline(std::move(timeline))
    , m_decoder(m_timeline->makeDecoder())
    , m_decoderSynced(!storeIsComplete)
{
    m_timer.setInterval(kTickMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &ReplayController::tick);
    if (storeIsComplete) {
        m_applied = m_timeline->recordCount();
        m_positionMs = m_timeline->endTimeMs();
    } else {
        m_store->reset();
        m_positionMs = m_timeline->startTimeMs();
    }
}

ReplayController::~ReplayController() = default;

void ReplayController::applyUpTo(qint64 recordEnd)
{
    if (recordEnd < m_applied || (!m_decoderSynced && recordEnd != m_applied)) {
        // Back in time: rebuild from the start (the store has no undo).
        m_store->reset();
        m_decoder.reset();
        m_applied = 0;
        m_decoderSynced = true;
    }
    if (recordEnd > m_applied) {
        m_timeline->replay(*m_store, m_decoder, m_applied, recordEnd);
        m_applied = recordEnd;
    }
}

void ReplayController::settle(qint64 timeMs)
{
    m_positionMs = timeMs;
    m_store->advanceTime(timeMs);
    Q_EMIT positionChanged(timeMs);
}

void ReplayController::seek(qint64 timeMs)
{
    timeMs = std::clamp(timeMs, startMs(), std::max(startMs(), endMs()));
    applyUpTo(m_timeline->recordsUpTo(timeMs));
    settle(timeMs);
}

void ReplayController::step()
{
    const qint64 next = m_timeline->nextChangingRecord(m_applied);
    if (next < 0) {
        if (m_positionMs < endMs()) {
            applyUpTo(m_timeline->recordCount());
            settle(endMs());
        }
        return;
    }
    applyUpTo(next + 1);
    settle(std::max(m_positionMs, m_timeline->recordTimeMs(next)));
}

void ReplayController::stepBack()
{
    const qint64 last = m_timeline->previousChangingRecord(m_applied);
    if (last < 0) {
        seek(startMs());
        return;
    }
    applyUpTo(last);
    // The position: the newest record still applied (the model shows nothing after it).
    const qint64 previous = last > 0 ? m_timeline->recordTimeMs(last - 1) : startMs();
    settle(std::clamp(previous, startMs(), endMs()));
}

void ReplayController::play()
{
    if (m_timer.isActive())
        return;
    if (m_positionMs >= endMs())
        seek(startMs());
    m_clock.start();
    m_lastTickNs = 0;
    m_carryMs = 0;
    m_timer.start();
    Q_EMIT playingChanged(true);
}

void ReplayController::pause()
{
    if (!m_timer.isActive())
        return;
    m_timer.stop();
    Q_EMIT playingChanged(false);
}

void ReplayController::setSpeed(double speed)
{
    speed = std::clamp(speed, kMinSpeed, kMaxSpeed);
    if (qFuzzyCompare(speed, m_speed))
        return;
    m_speed = speed;
    Q_EMIT speedChanged(speed);
}

void ReplayController::tick()
{
    const qint64 nowNs = m_clock.nsecsElapsed();
    const double advance = double(nowNs - m_lastTickNs) / 1e6 * m_speed + m_carryMs;
    m_lastTickNs = nowNs;
    const qint64 whole = qint64(advance);
    m_carryMs = advance - double(whole);
    const qint64 target = std::min(m_positionMs + whole, endMs());
    applyUpTo(m_timeline->recordsUpTo(target));
    settle(target);
    if (target >= endMs()) {
        pause();
        Q_EMIT finished();
    }
}

} // namespace mapi
