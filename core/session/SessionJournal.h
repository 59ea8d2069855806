// A live session's journal: every frame received and sent (and the socket's opens, closes and
// the operator's actions) written to disk from the first frame on, in the trace format
// (docs/trace-format.md), so that the model keeps references instead of frames, a crash loses
// at most the last second, and the session can be saved or reopened as a trace.
//
// On disk: a folder per session (sessionsRoot()/<start time>-<server>-<64 random bits>), holding
// parts "journal.jsonl.zst", "journal.1.jsonl.zst", ... (each a trace on its own: header line, then
// records), "session.json" (server, start) and "session.lock" (held while the session runs: a
// folder whose lock is free belongs to a session that ended without closing, e.g. a crash).
//
// Privacy: the session folder is always created new (never an existing one); on Unix it is 0700,
// every file in it 0600, and the sessions folder 0700 when the journal creates it (on Windows no
// ACLs are set: the user's profile folder is already private). A sessions or session folder that
// is a symbolic link, or (Unix) another user's, is refused: journaling is off for that session
// (open() fails with the reason, journalStateChanged() says it, frames stay in memory).
//
// Each part is a sequence of independent zstd frames of at most kFrameBytes of content; a frame
// ends at the latest kFlushMs after its first record, so a kill loses at most that.
//
// Offsets: records are numbered by their place in the journal's content (the concatenated
// record lines, headers excluded), across parts; FrameRef names a record line by that offset.
//
// Retention: a new part starts every partBytes on disk; the oldest parts are deleted once the
// journal is over maxBytes or their newest record is older than maxAgeMs. historyDropped()
// says up to where.
//
// When a part cannot be written (disk full, folder gone), frames stay compressed in memory (at
// most memoryRingBytes; the oldest are dropped past that), journalStateChanged() says so, and
// every flush tries a new part, to which the frames still in memory go first.
//
// Thread: lives in the client's thread (writes, timers). read() and the getters marked so may
// be called from any thread.
#pragma once

#include "trace/TraceRecord.h"

#include <QElapsedTimer>
#include <QFile>
#include <QLockFile>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

namespace mapi {


struct JournalOptions
{
    qint64 maxBytes = 2LL * 1024 * 1024 * 1024;  // on disk, all parts
    qint64 maxAgeMs = 24LL * 3600 * 1000;         // of the newest record of the oldest part
    qint64 partBytes = 64LL * 1024 * 1024;        // on disk, per part (at least one frame)
    qint64 memoryRingBytes = 64LL * 1024 * 1024;  // compressed frames kept while the disk fails
};

// A journal left behind by a session that did not close (crash, kill), for the offer at start.
struct JournalInfo
{
    QString folder;
    QString url;               // redacted
    qint64 startedAtMs = 0;
    qint64 lastWriteMs = 0;    // the newest part's modification time
    qint64 bytes = 0;          // on disk, all parts
    QStringList parts;         // in order
};

class SessionJournal : public QObject, public TraceRecordSink
{
    Q_OBJECT
public:
    static constexpr qint64 kFrameBytes = 1024 * 1024; // content per zstd frame, at most (about)
    static constexpr int kFlushMs = 1000;              // a record reaches the disk within this

    explicit SessionJournal(QObject *parent = nullptr);
    ~SessionJournal() override;

    // <AppLocalDataLocation>/sessions (QStandardPaths); MAPI_SESSIONS_DIR overrides it.
    static QString sessionsRoot();
    // A folder name under `root`, free now, for a session with `url` started now
    // ("20261125-143000-host-port-<16 hex digits>"): unpredictable, so no two sessions share it
    // and no one can plant it. open() creates it.
    static QString newSessionFolder(const QString &root, const QString &url);
    // Sessions under `root` whose lock is free: they ended without close(), newest first. Links
    // and other users' folders are not offered.
    static QList<JournalInfo> abandonedSessions(const QString &root);

    void setOptions(const JournalOptions &options) { m_options = options; }
    // Creates `folder` (which must not exist; its parent is created if missing) and the first
    // part, takes the lock. `url` is written redacted. false (and `error`, a sentence for people):
    // the journal runs degraded (in memory) and tries the disk again at every flush; a folder
    // refused (it exists already, or it or its parent is a link or another user's) stays refused.
    bool open(const QString &folder, const QString &url, QString *error);
    // Writes the open frame, closes the part, frees the lock. `keepFiles` false: deletes the
    // folder if open() created it (a session that ended normally leaves nothing behind unless
    // saved; a refused folder is never touched).
    void close(bool keepFiles);

    // A frame sink (MapClient::addFrameSink, TraceRecordSink): every frame, socket open and
    // close and action step becomes a record; received frames are served back by reference.
    bool keepsFrames() const override { return true; }
    FrameRef write(const TraceRecord &record);
    // Ends the open frame and writes it (the timer does this every kFlushMs).
    void flush();

    // Any thread. The record line at `ref` (without its newline); empty when it is no longer
    // kept (dropped by retention, or lost while the disk failed) or was never written.
    QByteArray readLine(const FrameRef &ref) const;
    // Any thread. The frame text of the record at `ref` (empty: as readLine()).
    QByteArray readFrame(const FrameRef &ref) const;

    // "Save session as": the parts on disk and how many bytes of each are whole zstd frames,
    // after flushing the open frame. The journal's thread. What it names never changes (parts
    // only grow), so copyParts() can run on any thread while the journal goes on.
    struct PartExtent
    {
        QString path;
        qint64 bytes = 0;
    };
    QList<PartExtent> flushedParts();
    // Any thread: `parts` concatenated into `target` (a trace: every part is a sequence of whole
    // zstd frames that starts with a header line). Written to a temporary file and renamed;
    // false and `error` when a part cannot be read (retention dropped it meanwhile) or the
    // target cannot be written.
    static bool copyParts(const QList<PartExtent> &parts, const QString &target, QString *error);

    // Any thread.
    QString folder() const { return m_folder; }
    QStringList parts() const;
    qint64 bytesOnDisk() const { return m_bytesOnDisk.load(); }
    qint64 recordsWritten() const { return m_records.load(); }
    // Records that retention dropped, or that were lost while the disk failed (any thread).
    qint64 recordsDropped() const { return m_recordsDropped.load(); }
    qint64 contentBytes() const { return m_contentEnd.load(); }
    bool isDegraded() const { return m_degraded.load(); } // writing to memory only
    qint64 firstKeptOffset() const { return m_firstKept.load(); }

    // Tests: every write to disk fails while on (as a full disk does).
    void setFailWritesForTest(bool fail) { m_failWrites = fail; }

Q_SIGNALS:
    // Records before `offset` (their times before `timeMs`) are no longer kept.
    void historyDropped(qint64 offset, qint64 timeMs);
    // The disk could not be written (degraded: frames are kept in memory), or can be again.
    void journalStateChanged(bool degraded, const QString &reason);

protected:
    FrameRef writeRecord(const TraceRecord &record) override { return write(record); }

private:
    struct Frame
    {
        int part = -1;           // -1: not on disk (memory holds it, or it was dropped)
        qint64 fileOffset = 0;
        qint64 fileBytes = 0;
        qint64 contentStart = 0;
        qint64 contentSize = 0;
        qint64 lastTimeMs = 0;   // of its newest record
        qint64 records = 0;
        quint64 hash = 0;        // XXH3 of the content
        QByteArray memory;       // compressed, while the disk fails
    };
    struct Part
    {
        QString path;
        qint64 bytes = 0;
    };

    bool takeFolder(QString *error);
    bool openPart(QString *error);
    bool writeToPart(Frame &frame, const QByteArray &compressed);
    void enforceRetention();
    void setDegraded(bool degraded, const QString &reason);
    void writeSessionInfo();

    JournalOptions m_options;
    QString m_folder;
    QString m_url;
    qint64 m_startedAt = 0;
    std::unique_ptr<QLockFile> m_lock;
    QFile m_file;                 // the part being written
    int m_partNumber = -1;
    qint64 m_frameStartedMs = 0;  // when the open frame got its first record (m_sinceOpen)
    QElapsedTimer m_sinceOpen;
    QTimer m_flushTimer;
    bool m_failWrites = false;
    bool m_active = false;        // between open() and close()
    bool m_madeFolder = false;    // open() created m_folder (only then is it written or deleted)
    void *m_cctx = nullptr;       // ZSTD_CCtx

    // Shared with readers (m_mutex): the index of written frames, the parts and the open frame.
    mutable std::mutex m_mutex;
    std::deque<Frame> m_frames;
    std::deque<Part> m_parts;     // m_parts[i] is part number m_firstPartNumber + i
    int m_firstPartNumber = 0;
    QByteArray m_open;            // records not yet in a frame
    qint64 m_openStart = 0;       // content offset of m_open's first byte
    qint64 m_openLastTimeMs = 0;
    qint64 m_openRecords = 0;
    qint64 m_memoryBytes = 0;     // compressed bytes of frames kept in memory
    // The last frame read back (readers share it under m_mutex).
    mutable qint64 m_cachedFrame = -1;  // content start of the cached frame
    mutable QByteArray m_cache;
    mutable void *m_dctx = nullptr;     // ZSTD_DCtx
    mutable std::unique_ptr<QFile> m_readFile;
    mutable int m_readPart = -1;
    mutable std::unique_ptr<RecordLineParser> m_parser;

    std::atomic<qint64> m_contentEnd{0};
    std::atomic<qint64> m_firstKept{0};
    std::atomic<qint64> m_bytesOnDisk{0};
    std::atomic<qint64> m_records{0};
    std::atomic<qint64> m_recordsDropped{0};
    std::atomic<bool> m_degraded{false};
};

} // namespace mapi
