#include "session/InspectorSession.h"

#include "trace/Trace.h"
#include "trace/TraceLoader.h"
#include "trace/TraceTimeline.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThread>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <memory>
#include <utility>

#ifdef Q_OS_LINUX
#include <cerrno>
#include <sys/resource.h>
#endif

namespace mapi {

namespace {

// Called in the client's worker thread. When a server sends more than the machine can take, the
// window must stay responsive and the backlog wait in the socket: the worker runs a little
// "nicer" than the GUI thread (Linux: per-thread nice +10, about a tenth of the GUI thread's
// share of a contended core; it still gets every idle cycle). Elsewhere, QThread::LowPriority.
void yieldToTheGuiThread()
{
#ifdef Q_OS_LINUX
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, 0); // 0: this thread (Linux threads have ids)
    if (errno == 0)
        setpriority(PRIO_PROCESS, 0, std::min(current + 10, 19));
#else
    QThread::currentThread()->setPriority(QThread::LowPriority);
#endif
}

} // namespace

QString describeActionBlock(ActionBlock block)
{
    switch (block) {
    case ActionBlock::None: return {};
    case ActionBlock::ObserverOnly: return InspectorSession::tr("Observer-only mode: control actions are disabled");
    case ActionBlock::Replaying: return InspectorSession::tr("Replaying a trace: nothing to control");
    case ActionBlock::TimeTravelling: return InspectorSession::tr("Viewing the past: return to live to act");
    case ActionBlock::NotLive: return InspectorSession::tr("Not connected to a live system");
    }
    return {};
}

InspectorSession::InspectorSession(QObject *parent, WorkerPriority workerPriority)
    : QObject(parent)
{
    m_worker.setObjectName(QStringLiteral("map-client"));
    // QThread::wait() (Qt 6.4 on Unix) returns when the thread's event loop has ended, before its
    // thread_local objects (the decoders' parsers and caches) are destroyed; a program that exits
    // then would destroy its statics under their feet. The first thread_local made in the worker
    // (made as it starts, before any other code runs there) is destroyed after every later one
    // and says so: the destructor waits for it.
    connect(&m_worker, &QThread::started, &m_worker, [gone = m_workerLocalsGone] {
        struct SaysWhenGone
        {
            std::shared_ptr<QSemaphore> gone;
            ~SaysWhenGone()
            {
                if (gone)
                    gone->release();
            }
        };
        thread_local SaysWhenGone last;
        last.gone = gone;
    }, Qt::DirectConnection);
    m_worker.start();
    m_workerContext = new QObject;
    m_workerContext->moveToThread(&m_worker);
    if (workerPriority == WorkerPriority::BelowTheOwner)
        QMetaObject::invokeMethod(m_workerContext, [] { yieldToTheGuiThread(); }, Qt::QueuedConnection);
    m_clock.setObjectName(QStringLiteral("sessionClock"));
    m_clock.setInterval(1000); // health is defined in tens of seconds; 1 Hz is plenty
    connect(&m_clock, &QTimer::timeout, this, [this] {
        if (m_source == Source::Live)
            liveStoreForInputs().advanceTime(QDateTime::currentMSecsSinceEpoch());
        const qint64 count = liveStore()->counters().eventsApplied;
        m_eventRate = double(count - m_lastEventCount);
        m_lastEventCount = count;
        Q_EMIT rateUpdated(m_eventRate);
    });
    m_clock.start();
    m_applyTimer.setObjectName(QStringLiteral("applyInputs"));
    m_applyTimer.setSingleShot(true);
    m_applyTimer.setInterval(0);
    connect(&m_applyTimer, &QTimer::timeout, this, &InspectorSession::applyPendingInputs);
}

InspectorSession::~InspectorSession()
{
    blockSignals(true); // its receivers (the window) may be half destroyed already
    // Nothing is applied from here on: a client waiting for room must not wait for this thread,
    // which is about to wait for the worker (found by a flood: the window hung at exit).
    m_backlog->hold(false);
    m_holdBacklog = false;
    returnToLive();     // removes the journal's copy
    shutdownClient();
    stopRecording();
    closeJournal();
    // The writer's close was queued to the worker: run everything queued there before it quits.
    runInWorker([] {});
    closeTrace();
    m_workerContext->deleteLater(); // deleted by the worker's event loop before it quits
    m_worker.quit();
    m_worker.wait();
    if (!m_workerLocalsGone->tryAcquire(1, 2000)) // its thread_locals too (the constructor says why); bounded
        qWarning("map-client: the worker thread's last objects were not destroyed within 2 s");
}

template<typename F> void InspectorSession::runInWorker(F &&f)
{
    // A client waiting for the backlog to shrink would wait for this thread, which waits for it.
    m_backlog->hold(false);
    QMetaObject::invokeMethod(m_workerContext, std::forward<F>(f), Qt::BlockingQueuedConnection);
    m_backlog->hold(m_holdBacklog);
}

template<typename F> void InspectorSession::onClient(F &&f)
{
    if (m_client)
        QMetaObject::invokeMethod(m_client, std::forward<F>(f), Qt::QueuedConnection);
}

void InspectorSession::shutdownClient()
{
    if (!m_client)
        return;
    MapClient *client = m_client;
    m_client = nullptr;
    disconnect(client, nullptr, this, nullptr);
    // inputsReady stays connected until the client is deleted: what it received up to its stop
    // (and wrote to a recording) reaches the store too; the store epoch drops it after a reset.
    // Stop and delete in the worker thread, where the client and its sockets live. Not blocking:
    // a client still working through a backlog of frames must not freeze the window.
    QMetaObject::invokeMethod(client, [client] {
        client->stop();
        // Its sinks (journal, recording) may go before the client's deferred delete.
        client->removeAllFrameSinks();
        client->deleteLater();
    }, Qt::QueuedConnection);
}

void InspectorSession::resetStore()
{
    ++m_storeEpoch;
    m_actionOrigins.clear(); // the actions they describe go with the store
    for (const ReadReply &reply : std::exchange(m_reads, {})) // their connection is gone
        reply(false, Json(), tr("the connection was closed"));
    m_pendingInputs.clear();
    m_pendingOffset = 0;
    m_backlog->clear();
    m_store.reset();
}

void InspectorSession::applyPendingInputs()
{
    QElapsedTimer slice;
    slice.start();
    int sinceCheck = 0;
    // Applied batches are freed in the worker, which allocated their JSON: freeing it here cost
    // the GUI thread about as much as applying it.
    std::vector<ModelInputs> applied;
    qint64 appliedInputs = 0;
    SystemStore &live = liveStoreForInputs();
    auto freeInWorker = [this, &applied, &appliedInputs, &live] {
        // Inputs that waited here while the journal dropped their frames' part (its news came
        // first) go too: no row may name a frame that cannot be read back.
        if (m_journalDroppedBeforeMs > 0)
            live.trimHistoryBefore(m_journalDroppedBeforeMs);
        m_backlog->remove(appliedInputs); // room for the client to read on
        if (!applied.empty())
            QMetaObject::invokeMethod(m_workerContext, [batches = std::move(applied)] {}, Qt::QueuedConnection);
    };
    while (!m_pendingInputs.empty()) {
        const ModelInputs &batch = m_pendingInputs.front();
        while (m_pendingOffset < size_t(batch.size())) {
            live.apply(batch[qsizetype(m_pendingOffset++)]);
            ++appliedInputs;
            if (++sinceCheck == 32) {
                sinceCheck = 0;
                if (slice.elapsed() >= m_applySliceMs) {
                    freeInWorker();
                    m_applyTimer.start(); // the rest in the next turn, after paints and input
                    return;
                }
            }
        }
        applied.push_back(std::move(m_pendingInputs.front()));
        m_pendingInputs.pop_front();
        m_pendingOffset = 0;
        if (m_liveWaitsForBatches > 0 && --m_liveWaitsForBatches == 0)
            QMetaObject::invokeMethod(this, &InspectorSession::wentLive, Qt::QueuedConnection); // after this slice
    }
    freeInWorker();
}

void InspectorSession::prepareLive(const ClientOptions &options, bool observerOnly)
{
    returnToLive();
    shutdownClient();
    stopRecording();
    closeTrace();
    closeJournal();
    resetStore();
    m_support.clear();
    m_lastEventCount = 0;
    m_source = Source::Live;
    m_options = options;
    m_options.observerOnly = observerOnly;
    m_label = redactedUrl(options.url);
    m_lastError.clear();
    m_processOutput.clear();
    m_processOutputTrimmed = 0;
    m_hasBeenLive = false;
    m_liveWaitsForBatches = 0;
    setObserverOnly(observerOnly);
    m_store.setHistoryBudget(size_t(liveHistoryBudget()));
    if (m_journaling)
        openJournal();
}

void InspectorSession::setMemoryBudget(qint64 bytes)
{
    m_memoryBudget = bytes;
    if (m_source != Source::Live)
        return; // a trace is not bounded; a connection to come takes the budget when it starts
    // The history trims to the new budget with the next inputs it applies (SystemStore).
    if (m_timeTravel) {
        m_background.setHistoryBudget(size_t(liveHistoryBudget() / 2));
        m_store.setHistoryBudget(size_t(liveHistoryBudget() / 2));
    } else {
        m_store.setHistoryBudget(size_t(liveHistoryBudget()));
    }
}

void InspectorSession::connectTo(const ClientOptions &options, bool observerOnly)
{
    prepareLive(options, observerOnly);
    startClient(nullptr);
    Q_EMIT sourceReplaced();
    Q_EMIT sourceChanged();
}

bool InspectorSession::connectAndRecord(const ClientOptions &options, const QString &path,
                                        const TraceWriterOptions &writerOptions, QString *error)
{
    TraceWriter *writer = openWriter(path, writerOptions, options.url, error); // nothing changes when it fails
    if (!writer)
        return false;
    prepareLive(options, options.observerOnly);
    adoptWriter(writer, path);
    startClient(writer);
    Q_EMIT sourceReplaced();
    Q_EMIT sourceChanged();
    Q_EMIT recordingChanged(true);
    return true;
}

// Creates the client in the worker (its timers and socket belong to that thread), attaches
// `writer` (already in the worker) before the first frame, and starts it.
void InspectorSession::startClient(TraceWriter *writer)
{
    MapClient *client = nullptr;
    const ClientOptions options = m_options;
    const bool keepFrames = m_journaling;
    const bool keepPayloadTexts = m_keepPayloadTexts;
    const std::shared_ptr<InputBacklog> backlog = m_backlog;
    runInWorker([&client, options, keepFrames, keepPayloadTexts, backlog] {
        client = new MapClient(options);
        client->setKeepFrames(keepFrames);
        client->setKeepPayloadTexts(keepPayloadTexts);
        client->setInputBacklog(backlog);
    });
    m_client = client;
    // Inputs still queued from a client of an earlier store (before a reset for a new
    // connection, a recording or a trace) must not leak into the new one; inputs queued before a
    // plain disconnect still belong to the store they came for and are applied.
    const quint64 epoch = m_storeEpoch;
    connect(client, &MapClient::inputsReady, &m_store, [this, epoch](const ModelInputs &inputs) {
        if (epoch != m_storeEpoch) {
            m_backlog->remove(inputs.size()); // counted by a client of an earlier store: dropped
            return;
        }
        m_pendingInputs.push_back(inputs); // shared, not copied (ModelInputs is a QList); m_backlog counted it
        if (!m_applyTimer.isActive())
            m_applyTimer.start();
    }, Qt::QueuedConnection);
    connect(client, &MapClient::lastErrorChanged, this, [this](const QString &error) { m_lastError = error; },
            Qt::QueuedConnection);
    connect(client, &MapClient::stateChanged, this, [this](ClientState state) {
        m_state = state;
        Q_EMIT stateChanged(state);
        if (state == ClientState::Live && !m_hasBeenLive) {
            m_hasBeenLive = true;
            // Told once the model holds what came before Live (the agents' snapshot waits here
            // in slices): a command acting on an agent by name then finds it.
            // Only the batches pending now are waited for: a flood arriving meanwhile does not
            // hold it back.
            if (m_pendingInputs.empty())
                Q_EMIT wentLive();
            else
                m_liveWaitsForBatches = m_pendingInputs.size();
        }
    }, Qt::QueuedConnection);
    connect(client, &MapClient::fatalError, this, [this](ClientFailure failure, const QString &message) {
        m_lastError = message;
        stopRecording(); // no retry will come: the recording is over
        Q_EMIT fatalError(failure, message);
    }, Qt::QueuedConnection);
    connect(client, &MapClient::processOutput, this, [this](const QStringList &lines, qint64 skipped) {
        m_processOutputTrimmed += skipped;
        m_processOutput << lines;
        if (const qsizetype over = m_processOutput.size() - kMaxProcessOutputLines; over > 0) {
            m_processOutput.remove(0, over);
            m_processOutputTrimmed += over;
        }
        Q_EMIT processOutputAdded(lines, skipped);
    }, Qt::QueuedConnection);
    connect(client, &MapClient::authExpiring, this, &InspectorSession::credentialExpiring, Qt::QueuedConnection);
    connect(client, &MapClient::authRefreshed, this, &InspectorSession::credentialRenewed, Qt::QueuedConnection);
    wireReads(client);
    connect(client, &MapClient::supportChanged, this, [this](const QString &method, Support support) {
        m_support.insert(method, support);
        Q_EMIT supportChanged();
    }, Qt::QueuedConnection);
    SessionJournal *journal = m_journal;
    onClient([client, writer, journal] {
        client->addFrameSink(journal);
        client->addFrameSink(writer);
        client->start();
    });
}

void InspectorSession::disconnectFromServer()
{
    shutdownClient();
    stopRecording(); // after the client stopped: its unsubscribe and close are in the trace
    m_state = ClientState::Closed;
    Q_EMIT stateChanged(m_state);
    Q_EMIT sourceChanged();
}

TraceWriter *InspectorSession::openWriter(const QString &path, const TraceWriterOptions &options, const QUrl &serverUrl,
                                          QString *error, const ConnectionInfo *server)
{
    // The writer lives in the worker, next to the client whose frames it writes: opening the
    // file, compressing and writing never happen in the session's thread.
    TraceWriter *writer = nullptr;
    QString why;
    const QString url = redactedUrl(serverUrl);
    const QString serverName = server ? server->serverName : QString();
    const QString serverVersion = server ? server->serverVersion : QString();
    runInWorker([&writer, &why, path, url, options, serverName, serverVersion] {
        auto w = std::make_unique<TraceWriter>();
        w->setOptions(options);
        if (!serverName.isEmpty() || !serverVersion.isEmpty())
            w->setServerInfo(serverName, serverVersion); // the header of a recording that starts late
        if (w->open(path, url, &why))
            writer = w.release();
    });
    if (!writer && error)
        *error = why;
    return writer;
}


void InspectorSession::openJournal()
{
    SessionJournal *journal = nullptr;
    const QString url = redactedUrl(m_options.url);
    const QString folder = SessionJournal::newSessionFolder(SessionJournal::sessionsRoot(), url);
    const JournalOptions options = m_journalOptions;
    QString why;
    runInWorker([&journal, &why, folder, url, options] {
        journal = new SessionJournal;
        journal->setOptions(options);
        journal->open(folder, url, &why); // fails only into the degraded state: reported below
    });
    m_journal = journal;
    m_journalFolder = folder;
    m_journalDegraded = journal->isDegraded();
    connect(journal, &SessionJournal::journalStateChanged, this, [this, journal](bool degraded, const QString &reason) {
        if (journal != m_journal)
            return;
        m_journalDegraded = degraded;
        Q_EMIT journalStateChanged(degraded, reason);
    }, Qt::QueuedConnection);
    // Retention dropped the oldest parts: their frames cannot be read back, so the model's
    // history before them goes too (the current state stays).
    connect(journal, &SessionJournal::historyDropped, this, [this, journal](qint64, qint64 timeMs) {
        if (journal != m_journal)
            return;
        m_journalDroppedBeforeMs = std::max(m_journalDroppedBeforeMs, timeMs + 1);
        liveStoreForInputs().trimHistoryBefore(timeMs + 1);
    });
    // Reads come from this thread (inspector, exports); the journal serves them under its lock.
    m_store.setJournalReader([journal](const FrameRef &ref) { return journal->readFrame(ref); });
    // The journal's own signal for this went out before the connection above: say it here, with
    // its reason (a folder it cannot create, or refuses: a link, another user's).
    if (m_journalDegraded)
        Q_EMIT journalStateChanged(true, tr("Journaling is off (%1): frames are kept in memory only")
                                             .arg(why.isEmpty() ? QDir::toNativeSeparators(folder) : why));
}


qint64 InspectorSession::journalRecordsDropped() const
{
    return m_journal ? m_journal->recordsDropped() : 0;
}

void InspectorSession::closeJournal()
{
    SessionJournal *journal = std::exchange(m_journal, nullptr);
    if (!journal)
        return;
    m_journalFolder.clear();
    m_journalDegraded = false;
    m_journalDroppedBeforeMs = 0;
    m_store.setJournalReader({});
    disconnect(journal, nullptr, this, nullptr);
    // In the worker, after the client (deleted there before, in queue order) wrote its last frame.
    QMetaObject::invokeMethod(journal, [journal] {
        journal->close(false);
        delete journal;
    }, Qt::QueuedConnection);
}

void InspectorSession::closeTrace()
{
    if (m_loadJob) {
        disconnect(m_loadJob, nullptr, this, nullptr);
        delete m_loadJob; // cancels and joins its worker, which stops at the next batch
        m_loadJob = nullptr;
        m_store.setFlushInterval(SystemStore::kFlushIntervalMs); // the job slowed it while loading
    }
    delete m_replay;
    m_replay = nullptr;
    m_store.setFrameSource({});
    m_tracePath.clear();
    m_traceStats = TraceReadStats();
}

void InspectorSession::openTrace(const QString &path)
{
    returnToLive();
    shutdownClient();
    stopRecording();
    closeTrace();
    closeJournal();
    m_support.clear();
    m_source = Source::Trace;
    m_label = QFileInfo(path).fileName();
    m_tracePath = QFileInfo(path).absoluteFilePath();
    m_state = ClientState::Closed;
    m_lastError.clear();
    m_lastEventCount = 0;

    m_store.setHistoryBudget(0);
    m_loadJob = new TraceLoadJob(&m_store, this);
    connect(m_loadJob, &TraceLoadJob::progress, this, &InspectorSession::traceLoadProgress);
    connect(m_loadJob, &TraceLoadJob::finished, this, [this](const JobOutcome &outcome) {
        onTraceLoadFinished(outcome.cancelled(), outcome.error);
    });
    TraceLoadOptions options; // frames stay in the timeline (compressed), read on demand below
    resetStore(); // now, not only in the job: late inputs of the last client are dropped
    m_loadJob->start(path, options);
    Q_EMIT sourceReplaced();
    Q_EMIT sourceChanged();
}

bool InspectorSession::openTraceAndWait(const QString &path, QString *error)
{
    QEventLoop loop;
    bool loaded = false;
    const auto connection = connect(this, &InspectorSession::traceLoadFinished, &loop,
                                    [&](bool ok, bool, const QString &why) {
                                        loaded = ok;
                                        if (error)
                                            *error = why;
                                        loop.quit();
                                    });
    openTrace(path);
    if (isLoadingTrace())
        loop.exec();
    disconnect(connection);
    return loaded;
}

void InspectorSession::cancelTraceLoad()
{
    if (m_loadJob)
        m_loadJob->cancel();
}

void InspectorSession::replayFrom(const std::shared_ptr<TraceTimeline> &timeline)
{
    // Frames are read from the timeline when asked for (the inspector), for the load and for
    // the rebuilds of seeks alike: the events a seek rebuilds have the rows they had.
    m_store.setFrameSource([weak = std::weak_ptr<TraceTimeline>(timeline)](int row) {
        const std::shared_ptr<TraceTimeline> t = weak.lock();
        return t ? t->frameForEvent(row) : QByteArray();
    }, {m_tracePath});
    m_replay = new ReplayController(&m_store, timeline, true, this);
    connect(m_replay, &ReplayController::positionChanged, this, &InspectorSession::replayPositionChanged);
}

void InspectorSession::onTraceLoadFinished(bool cancelled, const QString &error)
{
    TraceLoadJob *job = m_loadJob;
    m_loadJob = nullptr;
    disconnect(job, nullptr, this, nullptr);
    job->deleteLater(); // we are inside its signal
    const TraceLoadResult &result = job->result();
    m_traceStats = result.stats;
    const bool ok = result.ok && !cancelled;
    if (m_timeTravel) {
        if (!ok) {
            returnToLive();
            Q_EMIT timeTravelReady(false, cancelled ? tr("Time travel cancelled") : error);
            return;
        }
        replayFrom(result.timeline);
        Q_EMIT timeTravelReady(true, QString());
        return;
    }
    if (ok) {
        replayFrom(result.timeline);
        m_lastEventCount = m_store.counters().eventsApplied;
    } else {
        resetStore();
        m_source = Source::None;
        m_label.clear();
        m_tracePath.clear();
        Q_EMIT sourceChanged();
    }
    Q_EMIT traceLoadFinished(ok, cancelled, cancelled ? QString() : error);
}

bool InspectorSession::startTimeTravel(QString *error)
{
    auto refuse = [error](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    if (m_timeTravel)
        return true;
    if (m_source != Source::Live || !m_journal || m_loadJob)
        return refuse(tr("Time travel needs a live connection with its journal"));
    const qint64 records = m_journal->recordsWritten();
    const qint64 indexBytes = records * kTimeTravelBytesPerRecord;
    if (indexBytes > m_memoryBudget / 5)
        return refuse(tr("The journal holds %1 records: their index (%2 MB) would not fit in the memory budget (%3 MB). "
                         "Save the session and open it as a trace instead.")
                          .arg(records)
                          .arg(indexBytes >> 20)
                          .arg(m_memoryBudget >> 20));
    // The live model moves to the background and keeps following; the views show the past.
    // (Time travel starts after the swap: what the store's reset flushes is still live news.)
    m_background.swapContents(m_store);
    m_timeTravel = true;
    m_background.setHistoryBudget(size_t(liveHistoryBudget() / 2));
    m_store.setHistoryBudget(size_t(liveHistoryBudget() / 2));
    Q_EMIT timeTravelChanged(true);
    Q_EMIT sourceChanged();

    // The journal's parts as one trace, copied off this thread (up to the retention's 2 GiB).
    const QString copy = QDir(m_journalFolder).filePath(QStringLiteral("time-travel.jsonl.zst"));
    m_timeTravelCopy = copy;
    const QString folder = m_journalFolder;
    withFlushedParts([this, copy, folder](const QList<SessionJournal::PartExtent> &parts) {
        if (!m_timeTravel || m_timeTravelCopy != copy)
            return; // returned to live (or left) meanwhile
        if (parts.isEmpty()) {
            returnToLive();
            Q_EMIT timeTravelReady(false, tr("The session journal has nothing on disk (it cannot be written: %1)").arg(folder));
            return;
        }
        QPointer<InspectorSession> self(this);
        QThread *copier = QThread::create([parts, copy, self] {
            QString why;
            const bool ok = SessionJournal::copyParts(parts, copy, &why);
            QMetaObject::invokeMethod(qApp, [self, ok, copy, why] {
                if (!self || !self->m_timeTravel || self->m_timeTravelCopy != copy)
                    return; // returned to live (or left) meanwhile
                if (!ok) {
                    self->returnToLive();
                    Q_EMIT self->timeTravelReady(false, why);
                    return;
                }
                self->loadThePast(copy);
            }, Qt::QueuedConnection);
        });
        connect(copier, &QThread::finished, copier, &QObject::deleteLater);
        copier->start();
    });
    return true;
}

void InspectorSession::loadThePast(const QString &copyPath)
{
    m_loadJob = new TraceLoadJob(&m_store, this);
    connect(m_loadJob, &TraceLoadJob::progress, this, &InspectorSession::traceLoadProgress);
    connect(m_loadJob, &TraceLoadJob::finished, this, [this](const JobOutcome &outcome) {
        onTraceLoadFinished(outcome.cancelled(), outcome.error);
    });
    m_loadJob->start(copyPath, TraceLoadOptions());
}

void InspectorSession::returnToLive()
{
    if (!m_timeTravel)
        return;
    closeTrace(); // the past's load or replay, and its frame source
    m_store.swapContents(m_background); // still time travelling: the views see a swap, not a new source
    m_timeTravel = false;
    m_store.setHistoryBudget(size_t(liveHistoryBudget()));
    m_background.reset();
    m_background.setHistoryBudget(0);
    m_background.setFrameSource({});
    m_background.setJournalReader({});
    if (!m_timeTravelCopy.isEmpty())
        QFile::remove(m_timeTravelCopy);
    m_timeTravelCopy.clear();
    Q_EMIT timeTravelChanged(false);
    Q_EMIT sourceChanged();
}

QString InspectorSession::sourceLabel() const
{
    return m_label;
}

void InspectorSession::setObserverOnly(bool on)
{
    if (m_observerOnly == on)
        return;
    m_observerOnly = on;
    m_options.observerOnly = on; // the next client's map/connect
    onClient([client = m_client, on] { client->setObserverOnly(on); }); // enforced below the window too
    Q_EMIT observerOnlyChanged(on);
}

ActionBlock InspectorSession::actionBlock() const
{
    if (m_observerOnly)
        return ActionBlock::ObserverOnly;
    if (m_source == Source::Trace)
        return ActionBlock::Replaying;
    if (m_timeTravel)
        return ActionBlock::TimeTravelling;
    if (m_source != Source::Live || m_state != ClientState::Live || !m_client)
        return ActionBlock::NotLive;
    return ActionBlock::None;
}

ActionStart InspectorSession::startActions(
    const QStringList &agentIds, const std::function<void(MapClient *, const QString &, const QString &)> &send)
{
    ActionStart start;
    start.refused = actionBlock();
    if (start.refused != ActionBlock::None)
        return start;
    // Named here, so that the caller can follow them in the store before the worker sent them.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (int i = 0; i < agentIds.size(); ++i)
        start.actionIds << QStringLiteral("action-%1-s%2").arg(now).arg(++m_actionCounter);
    MapClient *client = m_client;
    const QStringList ids = start.actionIds;
    onClient([client, agentIds, ids, send] {
        for (int i = 0; i < agentIds.size(); ++i)
            send(client, agentIds[i], ids[i]);
    });
    return start;
}

void InspectorSession::reconcileNow(std::function<void(bool answered)> done)
{
    if (!m_client || m_source != Source::Live) {
        done(false);
        return;
    }
    onClient([client = m_client, self = QPointer<InspectorSession>(this), done = std::move(done)] {
        client->reconcile([self, done](bool answered) {
            QMetaObject::invokeMethod(self.data(), [self, done, answered] {
                if (self)
                    done(answered);
            }, Qt::QueuedConnection);
        });
    });
}

void InspectorSession::refreshCredential(const QString &credential)
{
    m_options.auth.credential = credential; // a client made later (a new connection) uses it too
    if (m_client)
        onClient([client = m_client, credential] { client->refreshAuth(credential); });
}

ActionStart InspectorSession::inject(const QStringList &agentIds, const Json &content, MapClient::Delivery delivery)
{
    return startActions(agentIds, [content, delivery](MapClient *client, const QString &agentId, const QString &actionId) {
        client->inject(agentId, content, delivery, actionId);
    });
}

ActionStart InspectorSession::stop(const QStringList &agentIds, const QString &reason, bool force)
{
    return startActions(agentIds, [reason, force](MapClient *client, const QString &agentId, const QString &actionId) {
        client->stopAgent(agentId, reason, force, actionId);
    });
}

ActionStart InspectorSession::suspend(const QStringList &agentIds, const QString &reason)
{
    return startActions(agentIds, [reason](MapClient *client, const QString &agentId, const QString &actionId) {
        client->suspendAgent(agentId, reason, actionId);
    });
}

void InspectorSession::setActionOrigin(const QStringList &actionIds, const QString &origin)
{
    for (const QString &id : actionIds)
        m_actionOrigins.insert(id, origin);
}

ActionStart InspectorSession::resume(const QStringList &agentIds)
{
    return startActions(agentIds, [](MapClient *client, const QString &agentId, const QString &actionId) {
        client->resumeAgent(agentId, actionId);
    });
}

} // namespace mapi
