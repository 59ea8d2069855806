// The inspector's link to a MAP system, for the window and the CLI alike: one SystemStore (the
// single source of truth, in the session's thread: the GUI thread in the window) fed either by a
// live MapClient running in a worker thread (decode and normalisation off the session's thread)
// or by a trace replayed through the same pipeline (core/pipeline/).
//
// Traces load on a worker thread (TraceLoadJob): the store fills as batches arrive, and once the
// load ended a ReplayController (replay()) moves the same store through time. A live
// connection is journaled to disk (SessionJournal) and can be recorded (startRecording): both
// are frame sinks of the client, in its worker thread, so neither blocks the session's thread.
// Operator actions go through here, refused with a typed reason (ActionBlock) when they cannot
// be sent, and are tracked in the store by the ids they return.
#pragma once

#include "client/MapClient.h"
#include "model/SystemStore.h"
#include "pipeline/InputBacklog.h"
#include "session/ContentStreams.h"
#include "session/SessionJournal.h"
#include "trace/Trace.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSemaphore>
#include <QThread>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace mapi {

class TraceLoadJob;
class ReplayController;
class TraceWriter;
class SessionJournal;
class TraceTimeline;

// Why an operator action was not sent (InspectorSession::actionBlock()).
enum class ActionBlock { None, ObserverOnly, Replaying, TimeTravelling, NotLive };
QString describeActionBlock(ActionBlock block); // for people; empty for None

// What asking for an action did: refused (and why), or the ids of the actions it started, one
// per agent, each tracked in the store (SystemStore::action) as answers come.
struct ActionStart
{
    ActionBlock refused = ActionBlock::None;
    QStringList actionIds;
};

class InspectorSession : public QObject
{
    Q_OBJECT
public:
    // Model inputs decoded but not yet applied, at most (InputBacklog): about half a second of
    // applying at full rate, some tens of MB. Past it the client stops reading the socket.
    static constexpr qint64 kMaxPendingInputs = 50000;

    // The client's worker thread (decoding) against the thread that owns the session (applying,
    // and in the window painting). BelowTheOwner: the window's choice, so that a flood waits in
    // the socket rather than freezing the window (Linux: nice +10 for that thread only; elsewhere
    // QThread::LowPriority). SameAsTheOwner: a headless program (map-inspector-cli), which has
    // no window to protect (beside a two-job compile it took 18 % more events than at +10:
    // docs/benchmarks.md "A live flood with a busy neighbour").
    enum class WorkerPriority { BelowTheOwner, SameAsTheOwner };
    explicit InspectorSession(QObject *parent = nullptr, WorkerPriority workerPriority = WorkerPriority::BelowTheOwner);
    ~InspectorSession() override;

    SystemStore *store() { return &m_store; }
    const SystemStore *store() const { return &m_store; }

    // Live: resets the store and connects. `options.auth.credential` is held in memory only
    // (here too: startRecording() reconnects with the same options).
    // Every live connection is journaled from its first frame (core/session/SessionJournal.h):
    // frames live on disk, not in memory, and the journal's folder is removed when the store
    // is reset for another source or the session ends (it stays after a crash: the next start
    // offers it). `journalOptions` (retention) apply to the connections that follow.
    // `observerOnly`: control actions are refused by the session and by the client below it, and
    // map/connect asks for observation only (options.observerOnly is set from it).
    void connectTo(const ClientOptions &options, bool observerOnly);
    void setJournalOptions(const JournalOptions &options) { m_journalOptions = options; }
    // false: the connections that follow are not journaled and keep no frames at all (events
    // carry none, message payloads the decoder read are not kept): a one-shot command that
    // prints the model. Default true (the window).
    void setJournaling(bool on) { m_journaling = on; }
    // true: the connections that follow keep message payload texts even without a journal
    // (MapClient::setKeepPayloadTexts): a live OTLP export from the CLI reads every one.
    void setKeepPayloadTexts(bool keep) { m_keepPayloadTexts = keep; }
    // The window's memory budget for a live session (default kDefaultMemoryBudgetBytes): 40%
    // of it bounds the store's history (SystemStore::setHistoryBudget), which the timeline's
    // index follows (about a third as much again); the rest is the model, Qt, batches in
    // flight and the heap's slack (measured: docs/benchmarks.md, "Long live sessions").
    // A loaded trace is not bounded (its history is the point; it costs about 160 B/event).
    static constexpr qint64 kDefaultMemoryBudgetBytes = qint64(1) << 30;
    // Takes effect at once on a live session's history (a window that opens a second system
    // gives each live one its share: MainWindow).
    void setMemoryBudget(qint64 bytes);
    // Live inputs wait and are applied at most kApplySliceMs per event-loop turn, so that a burst
    // (a server at full rate, a reconnect's replay) never holds paints and input longer.
    static constexpr int kApplySliceMs = 8;
    // The longest a slice of applying live inputs runs in one turn of the event loop (default
    // kApplySliceMs). A window with several live systems gives each a share, so that their
    // slices together stay within one (MainWindow).
    void setApplySliceMs(int ms) { m_applySliceMs = std::max(1, ms); }
    qint64 memoryBudget() const { return m_memoryBudget; }
    QString journalFolder() const { return m_journalFolder; } // empty: no live journal
    // "Save session as": the journal's retained history (everything from the connection's
    // first frame that retention kept, so also what arrived before this call) as a trace at
    // `path`, copied off the GUI thread; sessionSaved() follows (also when the journal has
    // nothing on disk). false (and `error`) at once when there is no live journal. Frames the
    // journal could only keep in memory (a failing disk) are not in the copy.
    // With a range (record times, ms since the epoch): only the records from `fromMs` to `toMs`,
    // and before them what gives later frames their context (writeTraceSlice()).
    bool saveSessionAs(const QString &path, QString *error, std::optional<qint64> fromMs = std::nullopt,
                       std::optional<qint64> toMs = std::nullopt);
    bool journalDegraded() const { return m_journalDegraded; }
    // What the journal's retention dropped so far: the history before this time (0: nothing)
    // and how many records (frames received and sent, socket and action records) it held.
    qint64 journalDroppedBeforeMs() const { return m_journalDroppedBeforeMs; }
    qint64 journalRecordsDropped() const;

    // Time travel while live. The store (what the views show) becomes the session as it was,
    // rebuilt from the journal and driven by replay(), while the live connection keeps feeding a
    // background model (liveStore()). startTimeTravel() copies the journal's flushed parts next
    // to it, then loads them as a trace off this thread (traceLoadProgress, then
    // timeTravelReady; replay() is set then, at the moment of the call). returnToLive() brings
    // the live model back: exact, it never stopped following. Meanwhile actions are refused
    // (ActionBlock::TimeTravelling: nobody acts on a past they are looking at), and the two
    // stores share the live history budget (half each) next to the replay index.
    // false (and `error`) at once when not live, without a journal, or when indexing the
    // journal's records (kTimeTravelBytesPerRecord each) would take more than a fifth of the
    // memory budget: then Save session as… and open the trace. A journal with nothing on disk
    // (a failing disk) is reported by timeTravelReady(false), the live model back in view.
    static constexpr qint64 kTimeTravelBytesPerRecord = 24;
    bool startTimeTravel(QString *error);
    void returnToLive();
    bool isTimeTravelling() const { return m_timeTravel; }
    // The model the live connection feeds: store(), or the background one while time travelling.
    const SystemStore *liveStore() const { return m_timeTravel ? &m_background : &m_store; }
    void disconnectFromServer();
    // Compares the live server's agent list with the model now (MapClient::reconcile: a drift
    // or a silent server becomes a problem in the store); `done` runs in this thread with whether
    // the server answered. Without a live client, `done(false)` at once.
    void reconcileNow(std::function<void(bool answered)> done);

    // Trace: closes the live connection, resets the store and starts loading `path` on a worker
    // thread. The source is Trace at once (the views fill as batches arrive); traceLoadProgress
    // follows, then traceLoadFinished. A cancelled or unreadable load leaves Source::None.
    void openTrace(const QString &path);
    void cancelTraceLoad();              // finished(false, cancelled = true) follows
    // For tests and tools: openTrace(), then runs a local event loop until the load ended.
    bool openTraceAndWait(const QString &path, QString *error);
    bool isLoadingTrace() const { return m_loadJob != nullptr; }
    QString tracePath() const { return m_tracePath; } // absolute; empty unless a trace is open
    // What the last load read: records, bad lines (1-based numbers), a damaged stream's reason.
    const TraceReadStats &traceStats() const { return m_traceStats; }
    // Drives the store through the loaded trace; null unless a trace finished loading.
    ReplayController *replay() const { return m_replay; }

    // Recording the live connection to `path` (.jsonl, .jsonl.zst, .jsonl.gz; new part after
    // `rotateBytes`), on the running connection: the trace starts with the session's journal (every
    // connection's handshake, snapshot and frames so far, so it replays on its own), then the live
    // frames; the model, alerts and acknowledgements stay as they are. Where the journal cannot
    // give that history (retention dropped its start, or it has nothing on disk), it reconnects
    // instead, so that the trace starts with a handshake and a snapshot; recordingNote() says which.
    // Fails (error set, connection untouched) when not live or when the file cannot be created.
    // Stops on disconnect, on a fatal error, on another source.
    // The journal is copied in the worker before the first live frame: the socket waits meanwhile
    // (some 100 MB of journal a second; docs/benchmarks.md).
    static constexpr qint64 kDefaultRotateBytes = 256LL * 1024 * 1024;
    bool startRecording(const QString &path, QString *error, qint64 rotateBytes = kDefaultRotateBytes);
    // Connects (as connectTo) with a recording to `path` from the first frame (the CLI's record).
    bool connectAndRecord(const ClientOptions &options, const QString &path, const TraceWriterOptions &writerOptions,
                          QString *error);
    qint64 recordsWritten() const { return m_recordsWritten; } // by the last recording, once it finished
    void stopRecording();
    bool isRecording() const { return m_writer != nullptr; }
    QString recordingNote() const { return m_recordingNote; } // how the last recording began
    QString recordingPath() const { return m_recordingPath; } // the part being written

    enum class Source { None, Live, Trace };
    Source source() const { return m_source; }
    QString sourceLabel() const;         // URL (redacted) or trace file name
    ClientState clientState() const { return m_state; }
    bool hasBeenLive() const { return m_hasBeenLive; } // the live connection reached Live once
    QString lastError() const { return m_lastError; }
    // A launched MAP system's standard error (stdio:), its newest kMaxProcessOutputLines lines,
    // redacted; processOutputTrimmed() counts the older lines that went. Emptied by a new
    // connection.
    static constexpr qsizetype kMaxProcessOutputLines = 2000;
    const QStringList &processOutput() const { return m_processOutput; }
    qint64 processOutputTrimmed() const { return m_processOutputTrimmed; }

    bool observerOnly() const { return m_observerOnly; }
    void setObserverOnly(bool on);

    // Sends map/auth/refresh with a new credential for the live connection (and uses it for
    // reconnects); a refusal is reported through lastError(). No-op without a live client.
    void refreshCredential(const QString &credential);
    bool usesCredential() const { return m_options.auth.method != AuthConfig::Method::None; }
    // The live connection's target (ws://, wss://, unix:, stdio:); its credential is not in it.
    QUrl connectionUrl() const { return m_options.url; }
    // The live connection's options, its credential among them (in memory only): to connect
    // again the same way, through another address (a tap).
    const ClientOptions &clientOptions() const { return m_options; }

    // A read-only request to the live server: a method MethodTable calls Reads (conversation
    // history, trajectory content, workspace files); anything else is refused without being
    // sent. `done` runs once, in this thread, with the result or with why not (the server's
    // words, a timeout, not live, too many reads at once). The id it returns cancels it:
    // cancelRead() drops the answer when it comes. Reads are never journaled differently from
    // other frames: their answers are in the journal and in a recording like everything else.
    // SessionReads.cpp.
    using ReadReply = std::function<void(bool ok, const Json &result, const QString &error)>;
    static constexpr int kMaxReadsInFlight = 64;
    quint64 readFromServer(const QString &method, const Json &params, ReadReply done, int timeoutMs = -1);
    // map/federation/buffer/flush {systemId}: the server DELETES what its outage buffer holds for
    // `systemId` (the SDK's flush delivers nothing); `done(ok, how many, why not)` on this thread,
    // then the buffer is read again. Refused in observer mode and when not live. The window asks
    // the operator first (FederationPanel).
    void discardFederationBuffer(const QString &systemId, std::function<void(bool ok, qint64 discarded, const QString &error)> done);
    void cancelRead(quint64 id);
    // Streamed content (a trajectory/content answer with streaming:true names `streamId`):
    // `done` runs once, in this thread, with the reassembled and checked bytes or why not
    // (ContentStreams.h: bounded, given up after 30 s without a chunk). cancelStream() forgets it.
    void awaitContentStream(const QString &streamId, std::function<void(bool ok, const QByteArray &content, const QString &error)> done);
    void cancelStream(const QString &streamId);
    int readsInFlight() const { return int(m_reads.size()); }

    // Whether an action can be sent now, and if not, why.
    ActionBlock actionBlock() const;
    QString actionBlockedReason() const { return describeActionBlock(actionBlock()); }
    Support support(const QString &method) const { return m_support.value(method, Support::Unknown); }

    // Control actions, one per agent id. Refused as a whole when actionBlock() says so; else
    // each is tracked in the store's actions under the returned id (the client settles it:
    // answered, confirmed by the agent's state, failed, unsupported, timed out).
    ActionStart inject(const QStringList &agentIds, const Json &content, MapClient::Delivery delivery);
    ActionStart stop(const QStringList &agentIds, const QString &reason, bool force = false);
    ActionStart suspend(const QStringList &agentIds, const QString &reason);
    ActionStart resume(const QStringList &agentIds);
    // Marks actions taken by something other than the operator's hand (the supervision ladder:
    // "automatic (rule stalled)"); the Actions panel shows it beside the action.
    void setActionOrigin(const QStringList &actionIds, const QString &origin);
    QString actionOrigin(const QString &actionId) const { return m_actionOrigins.value(actionId); }

    // The bound between the client's decoding and this thread's applying (kMaxPendingInputs).
    const InputBacklog &inputBacklog() const { return *m_backlog; }

    // Events applied per second over the last second (status bar).
    double eventRate() const { return m_eventRate; }

Q_SIGNALS:
    void sourceChanged();
    // Another system (connectTo, connectAndRecord) or another trace (openTrace) takes the
    // session's place, just before the sourceChanged() that says so: what the views hold of the
    // previous one (alerts, selection, searches) goes. Not emitted for a disconnect, a reconnect
    // or time travel, which keep the same system.
    void sourceReplaced();
    void stateChanged(mapi::ClientState state);
    // The connection gave up for good (no retry will help): why, typed and for people.
    void fatalError(mapi::ClientFailure failure, const QString &message);
    void wentLive();                     // the live connection's first Live, once what came before it is in the store
    void supportChanged();
    void observerOnlyChanged(bool on);
    void rateUpdated(double eventsPerSecond);
    void traceLoadProgress(qint64 bytesRead, qint64 bytesTotal);
    // ok: the trace is loaded and replay() set (bad lines may have been skipped: traceStats()).
    void traceLoadFinished(bool ok, bool cancelled, const QString &error);
    // The replay moved the store to another instant (seek, step, playback), at most ~30 times a
    // second while playing (ReplayController::kTickMs).
    void replayPositionChanged(qint64 timeMs);
    void recordingChanged(bool recording);
    // The journal could not be written (frames wait in a bounded memory ring), or can be again.
    void journalStateChanged(bool degraded, const QString &reason);
    // After a recording stopped and its file was closed (in the worker): every part written,
    // the records, and the error that stopped it early (empty when none).
    void recordingFinished(const QStringList &files, qint64 records, const QString &error);
    void sessionSaved(bool ok, const QString &path, const QString &error);
    void timeTravelChanged(bool on);
    // The past is loaded (replay() set) or could not be (`error`; the live model is back).
    void timeTravelReady(bool ok, const QString &error);
    // The server said the live connection's credential expires (map/auth/expiring): at
    // `expiresAtMs` (ms since the epoch, 0 when not said), in `expiresInMs`. refreshCredential()
    // gives it a new one before then.
    void credentialExpiring(qint64 expiresAtMs, qint64 expiresInMs);
    // The server's answer to refreshCredential().
    void credentialRenewed(bool accepted, const QString &why);
    // A line of the launched process's standard error (processOutput()).
    // New lines of processOutput(), in order; `skipped` older ones came before them unseen (a
    // flood: the client keeps the newest of each batch).
    void processOutputAdded(const QStringList &lines, qint64 skipped);

private:
    void shutdownClient();
    void applyPendingInputs();           // one slice of m_pendingInputs (m_applyTimer)
    void resetStore();                   // a new store epoch: late inputs of old clients are dropped
    void closeTrace();                   // ends a load or a replay (before the store is reset)
    void openJournal();                  // a new journal for the live connection to come
    void closeJournal();                 // before the store is reset: its rows refer to it
    void startClient(TraceWriter *writer);
    // `serverUrl`: the header's (redacted); the connection's options may not be set yet.
    // `server`: the name and version for the trace's header, when the connection already said them.
    TraceWriter *openWriter(const QString &path, const TraceWriterOptions &options, const QUrl &serverUrl, QString *error,
                            const ConnectionInfo *server = nullptr);
    void adoptWriter(TraceWriter *writer, const QString &path);
    void prepareLive(const ClientOptions &options, bool observerOnly);
    // Runs `f` in the worker and waits: the client's backlog wait is released meanwhile.
    template<typename F> void runInWorker(F &&f);
    ActionStart startActions(const QStringList &agentIds,
                             const std::function<void(MapClient *, const QString &agentId, const QString &actionId)> &send);
    // A loaded trace (or the journal's past) becomes what the store reads frames from and what
    // the replay controller seeks in.
    void replayFrom(const std::shared_ptr<TraceTimeline> &timeline);
    void onTraceLoadFinished(bool cancelled, const QString &error);
    void loadThePast(const QString &copyPath);
    // The journal's parts as far as they are whole (flushed in the worker), then `then` here.
    void withFlushedParts(std::function<void(const QList<SessionJournal::PartExtent> &)> then);
    SystemStore &liveStoreForInputs() { return m_timeTravel ? m_background : m_store; }
    qint64 liveHistoryBudget() const { return std::max<qint64>(m_memoryBudget * 2 / 5, 1 << 20); }
    template<typename F> void onClient(F &&f);

    SystemStore m_store;
    SystemStore m_background;            // the live model while time travelling; empty otherwise
    bool m_timeTravel = false;
    QString m_timeTravelCopy;            // the journal's copy being replayed
    quint64 m_storeEpoch = 0;            // counts resets of m_store (GUI thread)
    int m_applySliceMs = kApplySliceMs;
    std::deque<ModelInputs> m_pendingInputs; // bounded by m_backlog (kMaxPendingInputs)
    std::shared_ptr<InputBacklog> m_backlog = std::make_shared<InputBacklog>(kMaxPendingInputs);
    bool m_holdBacklog = true;           // false once the session is being destroyed
    size_t m_pendingOffset = 0;          // inputs of m_pendingInputs.front() already applied
    QTimer m_applyTimer;                 // single shot, 0 ms
    QThread m_worker;
    QObject *m_workerContext = nullptr;  // lives in m_worker: runs code there
    // Released once m_worker's thread_local objects are destroyed (the constructor and destructor say why).
    std::shared_ptr<QSemaphore> m_workerLocalsGone = std::make_shared<QSemaphore>(0);
    MapClient *m_client = nullptr;       // lives in m_worker
    ClientOptions m_options;             // of the live connection (credential in memory only)
    TraceWriter *m_writer = nullptr;     // lives in m_worker; set while recording
    SessionJournal *m_journal = nullptr; // lives in m_worker; set while the store holds live rows
    JournalOptions m_journalOptions;
    bool m_journaling = true;
    bool m_keepPayloadTexts = false;
    bool m_hasBeenLive = false;
    size_t m_liveWaitsForBatches = 0; // Live came with these batches still to apply: wentLive() once they are
    qint64 m_recordsWritten = 0;
    int m_actionCounter = 0;
    qint64 m_memoryBudget = kDefaultMemoryBudgetBytes;
    QString m_journalFolder;
    bool m_journalDegraded = false;
    qint64 m_journalDroppedBeforeMs = 0;
    QString m_recordingPath;
    QString m_recordingNote;
    TraceLoadJob *m_loadJob = nullptr;   // while a trace loads
    ReplayController *m_replay = nullptr;
    QString m_tracePath;
    TraceReadStats m_traceStats;
    Source m_source = Source::None;
    QString m_label;
    ClientState m_state = ClientState::Idle;
    QString m_lastError;
    QStringList m_processOutput;
    qint64 m_processOutputTrimmed = 0;
    bool m_observerOnly = false;
    QHash<QString, Support> m_support;
    QHash<QString, QString> m_actionOrigins; // action id → origin, for automatic actions only; emptied with the store (resetStore), so bounded like its actions
    QHash<quint64, ReadReply> m_reads;   // readFromServer() calls waiting for their answer
    ContentStreams m_contentStreams;     // trajectory/content.chunk notifications, reassembled
    QTimer m_contentClock;               // gives stalled streams up (ContentStreams::expire)
    void wireReads(MapClient *client);   // SessionReads.cpp: a new client's notifications for the reads
    quint64 m_nextReadId = 0;
    QTimer m_clock;                      // 1 Hz: health and action timeouts follow wall time
    qint64 m_lastEventCount = 0;
    double m_eventRate = 0;
};

} // namespace mapi
