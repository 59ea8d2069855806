// Time travel over a loaded trace: the records kept compactly in memory, rebuilding the model
// "as it was at time T", stepping event by event, timed playback, and bookmarks.
//
// TraceTimeline holds every record of a trace (10 bytes of index per record: its offset, time,
// direction and model inputs; 4 more for a record read back from a file whose line ends vary;
// the frames' bytes in 1 MiB chunks), so a seek re-decodes records
// through the same ProtocolPipeline as live traffic into the same SystemStore: no second model,
// no snapshot format to keep in sync. Going back rebuilds from the start (store.reset(), then
// the records up to T); going forward applies only the records in between. Decoding runs on a helper thread while the calling thread applies, so
// both cores work (seek times: docs/benchmarks.md, bench_trace_load seek).
//
// A full chunk's bytes are dropped when the file they were read from can give them back
// (setSource(): a plain file, or a zstd file of small frames as this program writes them; the
// frames themselves, or for a capture's "raw" strings their lines, parsed again), and
// zstd-compressed otherwise (about a tenth of the frames' size). Reading them back checks that
// the file still holds the same bytes; when it does not, the records are reported unavailable
// (sourceError(), and a problem in the store after a replay), never misread.
//
// TraceLoader fills a TraceTimeline while it loads; ReplayController drives a store with it.
#pragma once

#include "common/ErrorOr.h"
#include "model/SystemStore.h"
#include "trace/CompressedFile.h"
#include "trace/Trace.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace mapi {

class TraceTimeline
{
public:
    explicit TraceTimeline(CodecLimits limits = {}, bool fastParser = true);
    ~TraceTimeline();
    Q_DISABLE_COPY(TraceTimeline)

    qint64 recordCount() const { return qint64(m_offsets.size()); }
    TraceRecord record(qint64 index) const;
    qint64 recordTimeMs(qint64 index) const;
    RecordDir recordDirOf(qint64 index) const { return RecordDir(m_flags[size_t(index)] & kDirMask); }
    qint64 startTimeMs() const { return m_offsets.empty() ? 0 : recordTimeMs(0); }
    qint64 endTimeMs() const { return m_offsets.empty() ? 0 : m_lastSortTimeMs; }
    // Number of records at or before `timeMs` (records are ordered as recorded; times are
    // taken as non-decreasing, a clock step back counts as no time passing).
    qint64 recordsUpTo(qint64 timeMs) const;
    // Model inputs the record produced when loaded (0: it changed nothing, e.g. a sent frame).
    int inputsOf(qint64 index) const;
    // The next record at or after `from` that changes the model (-1: none), and the last one before `before`.
    qint64 nextChangingRecord(qint64 from) const;
    qint64 previousChangingRecord(qint64 before) const;

    // The record an event of the store came from (store event index, as loaded), and its frame
    // text: EventEntry::rawFrame is left empty for loaded traces to save memory (TraceLoadOptions).
    qint64 recordForEvent(int eventIndex) const;
    QByteArray frameForEvent(int eventIndex) const;
    qint64 eventCount() const { return m_eventCount; }

    // Applies records [from, to) to `store` through `decoder` (whose pipelines must have seen
    // records [0, from)). Decodes on a helper thread when the range is large.
    void replay(SystemStore &store, RecordDecoder &decoder, qint64 from, qint64 to) const;
    RecordDecoder makeDecoder() const;

    // Whether replays leave EventEntry::rawFrame empty (as the loader did: TraceLoadOptions).
    void setDropRawFrames(bool drop) { m_dropRawFrames = drop; }
    size_t memoryBytes() const;      // index + frame chunks as held
    qint64 frameBytes() const { return m_frameBytes; } // frame bytes uncompressed
    // Why records could not be read back from the source file (empty: they all could).
    QString sourceError() const;

    // Building (TraceLoader): records from the reading thread, input counts from the decoding
    // thread, event origins from the applying thread. Read the timeline only once loading ended.
    // The file the records are read from, indexed while they are (TraceFileReader::
    // setContentIndex); call before the first appendRecord(). Records with a contentOffset are
    // then read back from it instead of being kept, once their chunk is full.
    void setSource(std::shared_ptr<const ContentIndex> source) { m_source = std::move(source); }
    void appendRecord(const TraceRecord &record);
    // After the last appendRecord(), in the same thread: settles the chunks still open or waiting
    // for the file's index to reach them.
    void finishAppending();
    void appendInputCount(int inputs);
    // From the decoding thread: the record's line was damaged (RecordDecoder::damagedLines);
    // replays skip it as the load did.
    void markDamaged(qint64 record);
    void mapEvents(int firstEvent, int endEvent, qint64 record);

private:
    static constexpr quint8 kDirMask = 0x7f;
    static constexpr quint8 kBinary = 0x80;
    struct Chunk
    {
        QByteArray raw;        // the open chunk (and oversized records until sealed)
        QByteArray compressed; // a sealed chunk
        qsizetype rawSize = 0;
        qint64 firstRecord = 0;
        // Where its records are in the source's content: [sourceStart, sourceEnd); sourceEnd -1:
        // some record is not a verbatim piece of it. A record's offset from sourceStart is its
        // offset in the chunk plus `sourceGap` bytes for each record before it in the chunk
        // (the line ends between records: 1 for "\n"), while every gap is the same; from the
        // first record where they differ (blank lines, mixed line ends), every record's offset
        // is kept in sourceOffsets (4 bytes a record, a million records: 4 MB).
        qint64 sourceStart = -1;
        qint64 sourceEnd = 0;
        qint32 sourceGap = -1;    // -1: not known yet (one record so far)
        std::vector<quint32> sourceOffsets;
        // Its records come back by parsing their lines again (TraceRecord::contentLineSize: a
        // capture's "raw" strings), each line from its offset to the next record's.
        bool sourceLines = false;
        bool closed = false;   // full (or the load ended): nothing more is appended
        bool inSource = false; // its bytes were dropped: read them from m_source
    };
    // A decompressed chunk kept by whoever reads (replay's thread, or the shared one).
    struct ChunkCache
    {
        qint64 chunk = -1;
        QByteArray data;
        ContentIndex::Cache source;
        std::unique_ptr<RecordLineParser> lines; // for chunks of lines, made when first needed
        QByteArray line;                         // the line being parsed again (grows to the longest read)
    };
    static constexpr qsizetype kChunkBytes = 1024 * 1024;

    void seal(Chunk &chunk);
    void settle(quint32 chunk);
    void settleWaiting(bool loadEnded);
    const char *chunkData(quint32 chunk, ChunkCache &cache) const;
    // The record's bytes; false (and sourceError() set) when the source no longer gives them.
    bool recordBytes(qint64 index, ChunkCache &cache, QByteArray &out) const;
    TraceRecord recordWith(qint64 index, ChunkCache &cache) const;
    quint32 chunkOf(qint64 index) const; // the chunk holding the record
    quint32 recordSize(qint64 index, quint32 chunk) const;
    qint64 sourceOffsetOf(qint64 index, const Chunk &chunk) const; // from chunk.sourceStart
    bool lineRecordBytes(qint64 index, const Chunk &chunk, qint64 at, ChunkCache &cache, QByteArray &out,
                         QString &error) const;
    qint64 sortTimeMs(qint64 index) const;
    qint32 connectionOf(qint64 index) const;

    CodecLimits m_limits;
    bool m_fastParser;
    bool m_dropRawFrames = true;
    // Per record, in parallel (a million records: 10 MB with m_inputs):
    // Where its bytes begin in its chunk (chunkOf()); its size is up to the next record's offset
    // in the same chunk.
    std::vector<quint32> m_offsets;
    // The running maximum of the record times (what seeks search), as an offset from the base of
    // its span of records: a span ends where the offset would pass 32 bits (49 days), so a
    // trace has one span unless its clock jumps by weeks. 4 bytes a record instead of 8.
    struct TimeSpan
    {
        qint64 firstRecord = 0;
        qint64 baseMs = 0;
    };
    std::vector<TimeSpan> m_timeSpans;
    std::vector<quint32> m_sortOffsets;
    qint64 m_lastSortTimeMs = 0;
    std::vector<quint8> m_flags;     // RecordDir | kBinary
    // Rare, so kept aside: records whose time is before an earlier record's (a clock stepped
    // back), with that time; and the connection of each run of records (first record, connection).
    std::vector<std::pair<qint64, qint64>> m_earlierTimes;
    std::vector<std::pair<qint64, qint32>> m_connections;
    std::vector<Chunk> m_chunks;
    qint64 m_frameBytes = 0;
    void *m_cctx = nullptr;            // ZSTD_CCtx, reused while loading
    mutable std::mutex m_cacheMutex;
    mutable ChunkCache m_cache;
    std::shared_ptr<const ContentIndex> m_source;
    std::deque<quint32> m_waiting;        // full chunks whose records the source has not indexed yet
    qint64 m_contentEnd = 0;              // end of the newest record in the source's content
    mutable std::mutex m_errorMutex;
    mutable QString m_sourceError;
    mutable std::atomic<qint64> m_unreadable{0}; // records the source failed to give back
    std::vector<quint8> m_inputs;      // per record, saturated at 255
    std::vector<qint64> m_damaged;     // records from damaged lines, ascending
    // Store events → their records, as runs: events [firstEvent, endEvent) came from records
    // firstRecord, firstRecord + 1, … (`stepping`: one event a record, as map/event frames give)
    // or all from firstRecord (a frame of many events). A trace of map/event frames is one run;
    // at most one run a record (16 bytes), where a vector of every event's record took 4 a event.
    struct EventRun
    {
        qint32 firstEvent = 0;
        qint32 endEvent = 0;
        quint32 firstRecord = 0;
        bool stepping = false;
    };
    std::vector<EventRun> m_eventRuns;
    qint64 m_eventCount = 0; // events mapped, or not, before the last mapped one
};

// Bookmarks with notes, kept next to the trace in "<trace>.bookmarks.json".
struct Bookmark
{
    qint64 timeMs = 0;
    QString title;
    QString note;
};

QString bookmarksPath(const QString &tracePath);
// The bookmarks kept beside a trace; a missing file is no error (no bookmarks yet).
ErrorOr<QList<Bookmark>> loadBookmarks(const QString &tracePath);
bool saveBookmarks(const QString &tracePath, const QList<Bookmark> &bookmarks, QString *error);

// Plays a loaded trace into a store: play/pause at 0.1×–100×, step, seek. QTimer-driven, in the
// store's thread (the GUI thread). Feeds the store through the same pipeline as live traffic.
class ReplayController : public QObject
{
    Q_OBJECT
public:
    static constexpr double kMinSpeed = 0.1;
    static constexpr double kMaxSpeed = 100.0;
    static constexpr int kTickMs = 33;

    // `storeIsComplete`: the store already holds the whole trace (as TraceLoader leaves it), so
    // the position starts at the end; otherwise it starts empty at the trace's start.
    ReplayController(SystemStore *store, std::shared_ptr<const TraceTimeline> timeline, bool storeIsComplete = true,
                     QObject *parent = nullptr);
    ~ReplayController() override;

    qint64 positionMs() const { return m_positionMs; }
    qint64 startMs() const { return m_timeline->startTimeMs(); }
    qint64 endMs() const { return m_timeline->endTimeMs(); }
    qint64 recordsApplied() const { return m_applied; }
    bool isPlaying() const { return m_timer.isActive(); }
    double speed() const { return m_speed; }
    const TraceTimeline &timeline() const { return *m_timeline; }

public Q_SLOTS:
    void play();
    void pause();
    void setSpeed(double speed);   // clamped to 0.1–100
    void step();                   // the next record that changes the model
    void stepBack();               // back to before the last record that changed the model
    void seek(qint64 timeMs);      // the model as it was at timeMs (clamped to the trace)

Q_SIGNALS:
    void positionChanged(qint64 timeMs);
    void playingChanged(bool playing);
    void speedChanged(double speed);
    void finished();               // playback reached the end

private:
    void tick();
    void applyUpTo(qint64 recordEnd);
    void settle(qint64 timeMs);

    SystemStore *m_store;
    std::shared_ptr<const TraceTimeline> m_timeline;
    RecordDecoder m_decoder;
    bool m_decoderSynced;          // m_decoder has seen exactly the records [0, m_applied)
    qint64 m_applied = 0;
    qint64 m_positionMs = 0;
    double m_speed = 1.0;
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastTickNs = 0;
    double m_carryMs = 0;
};

} // namespace mapi
