// Trace files: JSON Lines, a header line and one record per frame (docs/trace-format.md).
//
//   {"format":"map-inspector-trace","version":2,"app":"0.1.0","startedAt":<ms>,"url":"ws://…"}
//   {"t":<ms>,"dir":"send"|"recv","conn":<n>,"frame":<the frame's JSON as it was>}
//   {"t":<ms>,"dir":"send"|"recv"|"open"|"close"|"action","conn":<n>,"raw":"<frame text>",...}
//
// Files may be compressed (.zst, .gz: detected by their magic bytes when read, chosen by the
// extension when written). The reader also accepts the raw capture format of shared/captures
// (seq/dir/t/raw) and message logs in the seed envelope formats (TraceImport.h), so every
// source replays through the same pipeline.
//
// Related headers: TraceRecord.h (records, redaction), CompressedFile.h, TraceLoader.h
// (threaded loading with progress and cancel), TraceTimeline.h (seek, replay controller,
// bookmarks), TraceImport.h, ModelExport.h.
#pragma once

#include "pipeline/FrameSink.h"
#include "pipeline/ProtocolPipeline.h"
#include "model/SystemStore.h"
#include "trace/CompressedFile.h"
#include "trace/TraceRecord.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <optional>

namespace mapi {

struct TraceWriterOptions
{
    qint64 maxBytes = 0;     // > 0: start a new part once this many bytes are on disk (compressed
                             // parts: as flushed by the compressor, which holds up to ~128 KiB)
    qint64 maxSeconds = 0;   // > 0: start a new part once a part spans this many seconds (record time)
    int compressionLevel = 0; // 0: the library default (zstd 3, gzip 6)
};

// Records a live connection's traffic: a frame sink of MapClient (addFrameSink). Thread: the
// client's thread.
//
// Rotation: part 0 is the given path, part n is partPath(path, n) ("s.jsonl.zst" →
// "s.1.jsonl.zst"); every part starts with its own header ("part": n), so each is readable
// alone, and the parts concatenated in order (cat, also for .gz and .zst) are one valid trace.
class TraceWriter : public QObject, public TraceRecordSink
{
    Q_OBJECT
public:
    explicit TraceWriter(QObject *parent = nullptr);
    ~TraceWriter() override;

    void setOptions(const TraceWriterOptions &options) { m_options = options; }
    const TraceWriterOptions &options() const { return m_options; }

    // Compression from the extension (.zst, .gz); anything else is plain JSON Lines.
    bool open(const QString &path, const QString &url, QString *error);
    void write(const TraceRecord &record);
    void flush();
    void close();
    // Adds "server":{name,version} to the headers of the parts that follow (serverIdentified()
    // sets it from the client's map/connect answer).
    void setServerInfo(const QString &name, const QString &version);
    // Members added to the header of every part from the next one opened (open() included), e.g.
    // a tap's "tap" object (docs/trace-format.md).
    void setHeaderExtra(const Json &extra) { m_headerExtra = extra; }

    void serverIdentified(const QString &name, const QString &version) override { setServerInfo(name, version); }

    qint64 recordsWritten() const { return m_records; }
    QStringList files() const { return m_files; }   // every part written so far, in order
    QString lastError() const { return m_error; }

    static QString partPath(const QString &path, int part);

Q_SIGNALS:
    void rotated(const QString &newPartPath);
    void writeFailed(const QString &error);

protected:
    FrameRef writeRecord(const TraceRecord &record) override
    {
        write(record);
        return {};
    }

private:
    bool openPart(int part, QString *error);
    void fail(const QString &error);

    TraceWriterOptions m_options;
    CompressingWriter m_out;
    // Flushed every second, so that a crash loses at most the last second: by the timer when no
    // record comes, and by write() itself once a second has passed (a busy event loop fires the
    // timer late; the records keep coming).
    static constexpr int kFlushIntervalMs = 1000;
    QTimer m_flushTimer;
    QElapsedTimer m_sinceFlush;
    QString m_path;
    QString m_url;
    Json m_server;
    Json m_headerExtra = Json::object();
    QStringList m_files;
    QString m_error;
    int m_part = 0;
    qint64 m_records = 0;
    qint64 m_partFirstTimeMs = -1;
    qint64 m_startedAt = 0;
};

struct TraceReadStats
{
    qint64 lines = 0;
    qint64 records = 0;
    QList<qint64> badLines; // 1-based line numbers that could not be read (the first 100,000)
    qint64 badLineCount = 0;
    QString format;         // "map-inspector-trace", "capture", "seed-000", "seed-002", "seed-003", "seed-004", "otlp"
    QString compression;    // "none", "gzip", "zstd"
    qint64 otlpSpansDropped = 0; // OTLP: spans without valid ids, or past OtlpImporter's bounds
    QString streamError;    // a damaged or truncated compressed stream: why reading stopped early
    qint64 bytesRead = 0;   // bytes of the file consumed (compressed bytes for .gz/.zst)
    qint64 bytesTotal = 0;  // size of the file
    std::array<qint64, size_t(RecordDir::Other) + 1> recordsByDir{}; // records read, by RecordDir
    qint64 firstTimeMs = 0; // of the records (0 when none)
    qint64 lastTimeMs = 0;
    bool cancelled = false;
    Json header;            // the trace header, if any

    static constexpr int kMaxListedBadLines = 100000;
    void addBadLine(qint64 line)
    {
        ++badLineCount;
        if (badLines.size() < kMaxListedBadLines)
            badLines << line;
    }
};

// Pulls records out of any supported file (trace, capture, seed-format log; plain, .gz, .zst).
// Reads line by line: memory does not grow with the file. Thread: any, one at a time.
class TraceFileReader
{
public:
    TraceFileReader();
    ~TraceFileReader();
    Q_DISABLE_COPY(TraceFileReader)

    // Opens the file and detects its format from the first objects. Fails on an unreadable
    // file or an unknown format (the error names the formats understood).
    bool open(const QString &path, QString *error);
    // The next record; false at the end.
    bool next(TraceRecord &record);
    const TraceReadStats &stats() const { return m_stats; }
    qint64 bytesRead() const;
    qint64 bytesTotal() const;
    // RecordLineParser::setFramesCheckedLater (call before open()): whoever decodes the
    // records reports the lines whose frame turns out damaged (RecordDecoder::damagedLines).
    void setFramesCheckedLater(bool later) { m_framesCheckedLater = later; }
    // Indexes the file's content in `index` while reading (call before open(); see
    // ContentIndex): records whose frame is a verbatim piece of the content say where it is
    // (TraceRecord::contentOffset), so that a timeline can read it back instead of keeping it.
    void setContentIndex(std::shared_ptr<ContentIndex> index) { m_contentIndex = std::move(index); }
    // The live codec's size and depth limits, applied to every line of a seed-format log before it
    // is parsed (call before open()): a longer or deeper line is an unreadable line, never a
    // parse that could exhaust the stack. Frames of traces and captures meet the same limits in
    // the pipeline that decodes them.
    void setLimits(const CodecLimits &limits) { m_limits = limits; }
    // Checked between lines where one next() reads many (an OTLP file is read whole before its
    // first record): set, next() returns false soon.
    void setCancel(const std::atomic<bool> *cancel) { m_cancel = cancel; }

private:
    bool withinLimits(const QByteArray &text) const;
    bool openWholeObject(QString *error);

    struct Impl;
    std::unique_ptr<Impl> d;
    CodecLimits m_limits;
    TraceReadStats m_stats;
    bool m_framesCheckedLater = false;
    const std::atomic<bool> *m_cancel = nullptr;
    std::shared_ptr<ContentIndex> m_contentIndex;
};

// A trace cut from any readable file (a trace, a capture, a seed-format log; a session
// journal's copy): the records from `fromMs` to `toMs` (record times, ms since the epoch; unset:
// open), written to `outPath` in the trace format (compression from its extension). Before the
// range only what gives later frames their context is kept (frames sent: the requests that
// responses answer; sockets opened and closed). The source's header is kept (its url, start and
// server), or one is made for the converted file.
struct TraceSlice
{
    // OutputIsInput: `outPath` is `inPath` (by identity, links included): refused before either opens.
    enum class Failure { None, InputUnreadable, OutputUnwritable, OutputIsInput };
    Failure failure = Failure::None;
    QString error;
    qint64 written = 0;      // records
    TraceReadStats stats;    // what reading the source met (format, damage)
    bool ok() const { return failure == Failure::None; }
};
TraceSlice writeTraceSlice(const QString &inPath, const QString &outPath, std::optional<qint64> fromMs,
                           std::optional<qint64> toMs);

struct TraceReadOptions
{
    const std::atomic<bool> *cancel = nullptr;               // set to stop early (stats.cancelled)
    std::function<void(qint64 bytesRead, qint64 bytesTotal)> progress; // about every 1 MiB
};

// Streams a trace file. `sink` returns false to stop early.
bool readTrace(const QString &path, const std::function<bool(const TraceRecord &)> &sink, TraceReadStats &stats,
               QString *error, const TraceReadOptions &options = {});

// Turns records into model inputs through one ProtocolPipeline per connection: the same path
// as live traffic. Thread: any (no QObject), one at a time.
class RecordDecoder
{
public:
    explicit RecordDecoder(CodecLimits limits = {}, std::shared_ptr<const JsonParser> parser = {});
    // Appends the inputs of `record` to `out`; returns how many were appended.
    // A record whose frame was left unchecked (TraceRecord::frameUnchecked) and is not JSON came
    // from a damaged line: it gives no inputs (not a protocol problem of the server's) and its
    // line is listed in damagedLines().
    int decode(const TraceRecord &record, ModelInputs &out);
    qint64 lastTimeMs() const { return m_lastTimeMs; }
    const std::vector<qint64> &damagedLines() const { return m_damagedLines; }
    // ProtocolPipeline::setKeepPayloadText() of every connection's pipeline.
    void setKeepPayloadText(bool keep);
    void reset();

private:
    CodecLimits m_limits;
    std::shared_ptr<const JsonParser> m_parser;
    QHash<int, ProtocolPipeline *> m_pipelines;
    std::vector<std::unique_ptr<ProtocolPipeline>> m_owned;
    qint64 m_lastTimeMs = 0;
    std::vector<qint64> m_damagedLines;
    bool m_keepPayloadText = true;
};

} // namespace mapi
