#include "trace/TraceLoader.h"

#include "protocol/SimdJsonParser.h"
#include "trace/BoundedQueue.h"

#include <QElapsedTimer>

#include <algorithm>
#include <mutex>

namespace mapi {

// Work handed on between the loading threads goes back to the thread that made it, to be freed
// there: its strings and buffers came from that thread's malloc arena, and freeing them from
// another thread took that arena's lock against its owner's own allocations (perf: the threads
// then spent much of their time waiting on each other's arena locks).
template<typename T>
class SpentItems
{
public:
    void give(T &&item) // by the thread that used it
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_items.push_back(std::move(item));
    }
    void free() // by the thread that made them
    {
        std::vector<T> items;
        std::lock_guard<std::mutex> lock(m_mutex);
        items.swap(m_items);
        // `items` is destroyed after the lock is released (declared before it).
    }

private:
    std::mutex m_mutex;
    std::vector<T> m_items;
};

// Batches in flight between two threads: about options.inFlightRecords records.
static size_t queueCapacity(const TraceLoadOptions &options)
{
    return size_t(std::max(2, options.inFlightRecords / std::max(1, options.batchRecords)));
}

TraceLoadResult loadTraceBatches(const QString &path, const TraceLoadOptions &options, const TraceBatchSink &sink,
                                 std::shared_ptr<TraceTimeline> timeline)
{
    TraceLoadResult result;
    TraceFileReader reader;
    reader.setFramesCheckedLater(true); // the decoding thread checks them: one parse, not two
    reader.setLimits(options.limits);
    reader.setCancel(options.cancel);
    if (!timeline && options.keepTimeline)
        timeline = std::make_shared<TraceTimeline>(options.limits, options.fastParser);
    if (timeline && timeline->recordCount() == 0) {
        // The timeline reads the frames back from the file rather than keep a compressed copy.
        auto index = std::make_shared<ContentIndex>();
        reader.setContentIndex(index);
        timeline->setSource(index);
    }
    if (!reader.open(path, &result.error)) {
        result.stats = reader.stats();
        return result;
    }
    const bool keepRaw = options.keepRawFrames || !timeline;
    if (timeline)
        timeline->setDropRawFrames(!keepRaw);
    RecordDecoder decoder(options.limits, options.fastParser ? SimdJsonParser::instance() : nullptr);
    decoder.setKeepPayloadText(keepRaw); // dropRawFrames() would drop the text unread
    const qint64 bytesTotal = reader.bytesTotal();
    std::atomic<bool> stop{false};
    auto cancelled = [&] {
        return stop.load(std::memory_order_relaxed) || (options.cancel && options.cancel->load(std::memory_order_relaxed));
    };

    struct Block
    {
        std::vector<TraceRecord> records;
        qint64 firstIndex = 0;
        qint64 bytesRead = 0;
    };

    SpentItems<Block> spentBlocks; // decoded blocks, back to the reading thread

    // Reading: records in blocks (a small first one, for a fast first view).
    auto produce = [&](const std::function<bool(Block &&)> &emitBlock) {
        qint64 index = 0;
        size_t want = size_t(std::max(1, options.firstBatchRecords));
        Block block;
        TraceRecord record;
        while (!cancelled() && reader.next(record)) {
            if (options.untilTimeMs >= 0 && record.timeMs > options.untilTimeMs)
                break;
            if (timeline)
                timeline->appendRecord(record);
            if (block.records.empty()) {
                block.firstIndex = index;
                block.records.reserve(want);
            }
            block.records.push_back(std::move(record));
            ++index;
            if (block.records.size() >= want) {
                block.bytesRead = reader.bytesRead();
                spentBlocks.free();
                if (!emitBlock(std::move(block))) {
                    if (timeline)
                        timeline->finishAppending();
                    return;
                }
                block = Block();
                want = size_t(std::max(1, options.batchRecords));
            }
        }
        if (timeline)
            timeline->finishAppending();
        if (!block.records.empty()) {
            block.bytesRead = reader.bytesRead();
            emitBlock(std::move(block));
        }
    };

    // Decoding: one block into one batch of model inputs.
    qint64 lastTime = 0;
    auto consume = [&](Block &&block) -> bool {
        TraceLoadBatch batch;
        batch.inputs.reserve(block.records.size());
        qint64 index = block.firstIndex;
        for (const TraceRecord &r : block.records) {
            const size_t damagedBefore = decoder.damagedLines().size();
            const int n = decoder.decode(r, batch.inputs);
            if (timeline) {
                timeline->appendInputCount(n);
                if (decoder.damagedLines().size() != damagedBefore)
                    timeline->markDamaged(index);
            }
            if (n > 0)
                batch.records.emplace_back(index, n);
            lastTime = std::max(lastTime, r.timeMs);
            ++index;
        }
        if (!keepRaw)
            dropRawFrames(batch.inputs);
        batch.bytesRead = block.bytesRead;
        if (options.readerThread)
            spentBlocks.give(std::move(block));
        else
            block.records.clear();
        batch.bytesTotal = bytesTotal;
        batch.recordsRead = index;
        batch.lastTimeMs = lastTime;
        if (!sink(std::move(batch))) {
            stop = true;
            return false;
        }
        return !cancelled();
    };

    if (options.readerThread) {
        BoundedQueue<Block> queue(queueCapacity(options));
        std::thread reading([&] {
            produce([&](Block &&b) { return queue.push(std::move(b)); });
            queue.close();
        });
        Block block;
        while (queue.pop(block)) {
            if (!consume(std::move(block))) {
                queue.abandon();
                break;
            }
        }
        reading.join();
    } else {
        produce(consume);
    }

    result.stats = reader.stats();
    // Lines whose frame the decoder found damaged are bad lines, as if the reader had parsed them.
    if (!decoder.damagedLines().empty()) {
        for (const qint64 line : decoder.damagedLines())
            result.stats.addBadLine(line);
        std::sort(result.stats.badLines.begin(), result.stats.badLines.end());
        result.stats.records -= qint64(decoder.damagedLines().size());
    }
    result.cancelled = cancelled();
    result.stats.cancelled = result.cancelled;
    result.ok = true;
    result.lastTimeMs = decoder.lastTimeMs();
    result.timeline = std::move(timeline);
    return result;
}

void applyTraceBatch(SystemStore &store, TraceLoadBatch &batch, TraceTimeline *timeline)
{
    size_t k = 0;
    for (const auto &[record, count] : batch.records) {
        const int before = int(store.events().size());
        for (int i = 0; i < count && k < size_t(batch.inputs.size()); ++i)
            store.apply(std::move(batch.inputs[qsizetype(k++)])); // detaches nothing: the batch is ours
        if (timeline)
            timeline->mapEvents(before, int(store.events().size()), record);
    }
}

TraceLoadResult loadTraceInto(SystemStore &store, const QString &path, const TraceLoadOptions &options,
                              const std::function<void(const TraceLoadBatch &)> &afterBatch)
{
    std::shared_ptr<TraceTimeline> timeline =
        options.keepTimeline ? std::make_shared<TraceTimeline>(options.limits, options.fastParser) : nullptr;
    BoundedQueue<TraceLoadBatch> queue(queueCapacity(options));
    SpentItems<TraceLoadBatch> spent;
    TraceLoadResult result;
    std::thread worker([&] {
        result = loadTraceBatches(path, options, [&](TraceLoadBatch &&batch) {
            spent.free();
            return queue.push(std::move(batch));
        }, timeline);
        queue.close();
    });
    TraceLoadBatch batch;
    for (qint64 batches = 1; queue.pop(batch); ++batches) {
        applyTraceBatch(store, batch, timeline.get());
        // A store with a history budget trims at a flush, which no timer makes here.
        if (store.historyBudget() > 0 && batches % 64 == 0)
            store.flushChanges();
        if (afterBatch)
            afterBatch(batch);
        spent.give(std::move(batch));
        batch = TraceLoadBatch();
    }
    worker.join();
    if (result.ok)
        store.advanceTime(result.lastTimeMs);
    // What the load left in the trace (frames, payloads) is read from the timeline, which the
    // store keeps alive from now on (the window instead holds it weakly: InspectorSession).
    if (timeline && !options.keepRawFrames)
        store.setFrameSource([timeline](int row) { return timeline->frameForEvent(row); }, {path});
    store.flushChanges();
    return result;
}

// ---- the window's job ----------------------------------------------------------------------------

struct TraceLoadJob::Shared
{
    explicit Shared(size_t capacity)
        : queue(capacity)
    {
    }
    BoundedQueue<TraceLoadBatch> queue;
    SpentItems<TraceLoadBatch> spent; // applied batches, back to the decoding thread
    std::atomic<bool> cancel{false};
    std::atomic<bool> drainPosted{false};
    std::atomic<bool> done{false};
    TraceLoadResult result; // written by the worker before `done`
    std::shared_ptr<TraceTimeline> timeline;
};

TraceLoadJob::TraceLoadJob(SystemStore *store, QObject *parent)
    : BackgroundJob(parent)
    , m_store(store)
{
}

TraceLoadJob::~TraceLoadJob()
{
    requestStop();
    joinWorker();
}

void TraceLoadJob::requestStop()
{
    if (!m_shared)
        return;
    m_shared->cancel = true;
    m_shared->queue.abandon();
}

void TraceLoadJob::joinWorker()
{
    if (m_worker.joinable())
        m_worker.join();
}

void TraceLoadJob::start(const QString &path, const TraceLoadOptions &options)
{
    const quint64 ticket = beginAttempt(); // a running load is stopped and ends as cancelled
    joinWorker();
    m_result = TraceLoadResult();
    m_firstApplied = false;
    m_store->reset();
    m_store->setFlushInterval(kLoadingFlushIntervalMs);
    m_sinceProgress.start();
    auto shared = std::make_shared<Shared>(queueCapacity(options));
    if (options.keepTimeline)
        shared->timeline = std::make_shared<TraceTimeline>(options.limits, options.fastParser);
    m_shared = shared;
    TraceLoadOptions opts = options;
    opts.cancel = &shared->cancel;
    // The worker asks for a drain of what it queued; the drain carries the attempt's ticket, so
    // one posted for an attempt that ended does nothing.
    auto post = [this, shared, ticket] {
        if (!shared->drainPosted.exchange(true))
            QMetaObject::invokeMethod(this, [this, ticket] { drain(ticket); }, Qt::QueuedConnection);
    };
    m_worker = std::thread([shared, path, opts, post] {
        TraceLoadResult r = loadTraceBatches(path, opts, [&](TraceLoadBatch &&batch) {
            shared->spent.free();
            if (!shared->queue.push(std::move(batch)))
                return false;
            post();
            return true;
        }, shared->timeline);
        shared->result = std::move(r);
        shared->done = true;
        shared->queue.close();
        post();
    });
}

void TraceLoadJob::drain(quint64 ticket)
{
    const std::shared_ptr<Shared> shared = m_shared;
    if (!shared || !isCurrent(ticket))
        return;
    shared->drainPosted = false;
    QElapsedTimer budget;
    budget.start();
    TraceLoadBatch batch;
    while (!shared->cancel && shared->queue.tryPop(batch)) {
        applyTraceBatch(*m_store, batch, shared->timeline.get());
        const int interval = int(std::clamp<qint64>((kLoadingViewShare - 1) * (m_store->lastFlushNs() / 1000000),
                                                    kLoadingFlushIntervalMs, kMaxLoadingFlushIntervalMs));
        if (interval != m_store->flushInterval()) // setting it restarts a running timer
            m_store->setFlushInterval(interval);
        if (!m_firstApplied || m_sinceProgress.elapsed() >= kLoadingFlushIntervalMs) { // the first at once
            m_sinceProgress.restart();
            Q_EMIT progress(batch.bytesRead, batch.bytesTotal);
        }
        if (!m_firstApplied) {
            m_firstApplied = true;
            m_store->flushChanges();
            Q_EMIT firstBatchApplied();
        }
        shared->spent.give(std::move(batch));
        batch = TraceLoadBatch();
        // Let the event loop paint, then go on. 12 ms: a batch of the demo system's data takes up
        // to about as long again, and a store flush can fall in the same turn; with 25 ms the
        // window stalled 26–34 ms in that load, with 12 ms 23–28, and the load took as long.
        if (budget.elapsed() >= 12) {
            if (!shared->drainPosted.exchange(true))
                QMetaObject::invokeMethod(this, [this, ticket] { drain(ticket); }, Qt::QueuedConnection);
            return;
        }
    }
    if (shared->done && (shared->cancel || shared->queue.closedAndEmpty()))
        finish(ticket);
}

void TraceLoadJob::finish(quint64 ticket)
{
    if (!isCurrent(ticket))
        return; // the attempt ended meanwhile (started again from a signal of this drain)
    joinWorker();
    m_store->setFlushInterval(SystemStore::kFlushIntervalMs);
    m_result = std::move(m_shared->result);
    if (!m_result.timeline)
        m_result.timeline = m_shared->timeline;
    if (m_result.ok)
        m_store->advanceTime(m_result.lastTimeMs);
    m_store->flushChanges();
    m_result.cancelled = m_result.cancelled || m_shared->cancel;
    Q_EMIT progress(m_result.stats.bytesRead, m_result.stats.bytesTotal);
    endAttempt(ticket, m_result.cancelled ? JobOutcome::cancel()
                       : m_result.ok      ? JobOutcome::done()
                                          : JobOutcome::failed(m_result.error));
}

} // namespace mapi
