// Trace loading and seeking: time to first view, time to fully loaded, memory, seek times.
//
//   bench_trace_load generate FILE [EVENTS] [--from TRACE]   write a trace of EVENTS (default 1,000,000)
//       map/event frames: the received events of TRACE (default: the sample trace recorded from
//       the demo system, resources/sample: 40 agents, heartbeats, tasks, usage reports),
//       replicated with fresh event, message and task ids, each copy shifted in time after the
//       previous one and in sequence numbers. The extension picks the compression (.jsonl,
//       .jsonl.zst, .jsonl.gz). `--from tests/data/scenario-deliver.ndjson`: the official server's
//       frames with 20 agents (the first benchmarks in docs/benchmarks.md). `--capture`: the
//       lines of a raw WebSocket recorder (../shared/captures: {"seq","dir","t","bytes","raw",
//       "iso"}, the frame as a JSON string) instead of the project's format. `--agents N`: the
//       recording's agents copied too, with fresh ids, for about N agents in all.
//   bench_trace_load load FILE [--nlohmann] [--single-thread] [--inline] [--keep-raw] [--no-timeline]
//       loads FILE into a SystemStore as the window does (TraceLoader: reader thread, decoding
//       thread, apply in the main thread) and prints: time to the first applied batch (first
//       view), time to fully loaded, CPU time, peak RSS (VmHWM) and per-event memory.
//       --single-thread: no reader thread; --inline: no threads at all (read, decode, apply here);
//       --batch N: records per batch; --in-flight N: records queued between threads.
//   bench_trace_load parsers FILE                the recv frames of FILE through FrameCodec::decode with
//       nlohmann and with SimdJsonParser (CPU time per frame).
//   bench_trace_load seek FILE [EVENTS]          loads, then times ReplayController: a seek to the
//       start (dropping the loaded model), a seek forward to the time of event EVENTS (default
//       100,000: the rebuild), a seek back to just before it (reset + rebuild), step() and
//       stepBack(); checks that the sought state equals a direct replay up to that time.
//
// One measurement per process: VmHWM is the peak of the whole process.
#include "ProcessStatus.h"
#include "model/StateJson.h"
#include "protocol/SimdJsonParser.h"
#include "trace/Trace.h"
#include "trace/TraceLoader.h"
#include "trace/TraceTimeline.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QTimeZone>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

#include <cstdio>
#include <ctime>
#include <functional>
#include <limits>

#ifdef Q_OS_UNIX
#include <sys/resource.h>
#endif

using namespace mapi;

namespace {

// CPU time of the process, all threads (on Windows: std::clock(), which is wall time there).
double cpuSeconds()
{
#ifdef Q_OS_UNIX
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
#else
    return double(std::clock()) / CLOCKS_PER_SEC;
#endif
}

// Fixed-length pieces of a template frame that change from copy to copy.
struct Varying
{
    enum Kind { Millis, IsoTime, Id, TaskNumber, Uuid, AgentId };
    qsizetype at = 0;
    Kind kind = Millis;
    qint64 value = 0; // Millis, IsoTime: the time; TaskNumber: the number
};

// `capture`: lines in the format of ../shared/captures ({"seq","dir","t","bytes","raw","iso"},
// the frame as a JSON string), as a raw WebSocket recorder writes them; else the project's own.
// `agentCount` > 0: the recording's agents are copied too (fresh ids per copy, the copies
// cycling through agentCount / the recording's agents sets), so that the trace has about that
// many agents.
int generate(const QString &path, qint64 target, const QString &from, bool capture, int agentCount)
{
    std::vector<QByteArray> templates;
    TraceReadStats stats;
    QString error;
    readTrace(from, [&](const TraceRecord &r) {
        if (r.dir == QLatin1String("recv") && r.raw.contains("\"map/event\""))
            templates.push_back(r.raw);
        return true;
    }, stats, &error);
    if (templates.empty()) {
        std::fprintf(stderr, "no map/event frames in %s %s\n", qPrintable(from), qPrintable(error));
        return 1;
    }
    CompressingWriter out;
    if (!out.open(path, compressionFromPath(path), &error)) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 1;
    }
    // Times: each copy of the recording follows the previous one (the recording's own spacing
    // inside a copy), so that times grow as in a long recording, as every view expects. Every
    // 13-digit number and every ISO 8601 time (payloads) within the recording's span (+-1 min)
    // is a time and is shifted. Ids: event and message ids (ULIDs) get a per-copy prefix, task
    // numbers ("task-000012") and payload message ids (UUIDs) per-copy values, so every copy
    // adds events, messages and tasks; agents and scopes stay the recording's.
    static const QRegularExpression millis(QStringLiteral("(?<=[:\\[,])\\d{13}(?=[,}\\]])"));
    static const QRegularExpression iso(QStringLiteral("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"));
    static const QRegularExpression ulid(QStringLiteral("\"(?:eventId|messageId)\":\"([0-9A-Z]{26})\"|\"message\":\\{\"id\":\"([0-9A-Z]{26})\""));
    static const QRegularExpression task(QStringLiteral("(?<=task-)\\d{6}"));
    static const QRegularExpression uuid(QStringLiteral("(?<=\"message_id\":\")[0-9a-f]{8}(?=-)"));
    static const QRegularExpression agentIdPattern(QStringLiteral("\"agentId\":\"([0-9A-Z]{26})\""));
    QSet<QString> agentIds;
    qint64 firstMs = std::numeric_limits<qint64>::max();
    qint64 lastMs = 0;
    qint64 tasksPerCopy = 0;
    std::vector<std::vector<Varying>> varying(templates.size());
    std::vector<qint64> frameTimes(templates.size(), -1); // params.timestamp: the first 13-digit time
    for (size_t i = 0; i < templates.size(); ++i) {
        const QString text = QString::fromLatin1(templates[i]);
        auto collect = [&](const QRegularExpression &re, Varying::Kind kind) {
            for (auto it = re.globalMatch(text); it.hasNext();) {
                const auto match = it.next();
                const int group = re.captureCount() > 0 ? 1 : 0; // the part to replace
                Varying v{match.capturedStart(group), kind, 0};
                if (kind == Varying::Millis || kind == Varying::TaskNumber)
                    v.value = match.captured(group).toLongLong();
                else if (kind == Varying::IsoTime)
                    v.value = QDateTime::fromString(match.captured(group), Qt::ISODateWithMs).toMSecsSinceEpoch();
                varying[i].push_back(v);
            }
        };
        collect(millis, Varying::Millis);
        collect(iso, Varying::IsoTime);
        // An event or message id, wherever it appears (the event's "id" repeats its eventId).
        QSet<QString> ids;
        for (auto it = ulid.globalMatch(text); it.hasNext();) {
            const auto match = it.next();
            ids.insert(match.captured(1).isEmpty() ? match.captured(2) : match.captured(1));
        }
        for (const QString &id : ids)
            for (qsizetype at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + id.size()))
                varying[i].push_back({at, Varying::Id, 0});
        collect(task, Varying::TaskNumber);
        collect(uuid, Varying::Uuid);
        if (agentCount > 0)
            for (auto it = agentIdPattern.globalMatch(text); it.hasNext();)
                agentIds.insert(it.next().captured(1));
        for (const Varying &v : varying[i]) {
            if (v.kind == Varying::Millis && frameTimes[i] < 0)
                frameTimes[i] = v.value;
            if (v.kind == Varying::TaskNumber)
                tasksPerCopy = std::max(tasksPerCopy, v.value + 1);
        }
        if (frameTimes[i] >= 0) {
            firstMs = std::min(firstMs, frameTimes[i]);
            lastMs = std::max(lastMs, frameTimes[i]);
        }
    }
    // Every place an agent id appears (senders, recipients, parents, payloads) gets its copy's prefix.
    for (size_t i = 0; i < templates.size() && !agentIds.isEmpty(); ++i) {
        const QString text = QString::fromLatin1(templates[i]);
        for (const QString &id : std::as_const(agentIds))
            for (qsizetype at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + id.size()))
                varying[i].push_back({at, Varying::AgentId, 0});
    }
    const qint64 agentSets = agentIds.isEmpty() ? 1 : std::max<qint64>(1, (agentCount + agentIds.size() - 1) / agentIds.size());
    for (auto &list : varying)
        list.erase(std::remove_if(list.begin(), list.end(), [&](const Varying &v) {
                       return (v.kind == Varying::Millis || v.kind == Varying::IsoTime)
                           && (v.value < firstMs - 60000 || v.value > lastMs + 60000);
                   }),
                   list.end());
    const qint64 span = lastMs - firstMs + 1;
    const qint64 t0 = firstMs - 1;
    if (!capture) {
        out.write(encodeHeaderLine(QStringLiteral("ws://bench/"), t0));
        out.write(encodeRecordLine({t0, QStringLiteral("open"), 1, "ws://bench/", false, Json()}));
    }
    qint64 written = 0;
    qint64 recordMs = t0;
    for (qint64 copy = 0; written < target; ++copy) {
        // In place of a ULID's first 6 characters (its time in units of about 17 minutes, the same
        // throughout a recording): the copies' ids ascend as a server's ULIDs do (an 8-character
        // prefix, before 2026-11-27, cut into the time and put ids out of order within a copy).
        // Crockford's base 32, 6 digits: a billion copies.
        QByteArray prefix(6, '0');
        for (qint64 rest = copy, at = 5; rest > 0 && at >= 0; rest /= 32, --at)
            prefix[at] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[rest % 32];
        const QByteArray copyHex = QByteArray::number(copy, 16).rightJustified(8, '0');
        const QByteArray agentPrefix = "A" + QByteArray::number(copy % agentSets, 36).toUpper().rightJustified(7, '0');
        const qint64 shift = copy * span;
        for (size_t i = 0; i < templates.size() && written < target; ++i) {
            QByteArray f = templates[i];
            for (const Varying &v : varying[i]) { // every replacement keeps the length
                switch (v.kind) {
                case Varying::Millis:
                    f.replace(v.at, 13, QByteArray::number(v.value + shift));
                    break;
                case Varying::IsoTime:
                    f.replace(v.at, 24, QDateTime::fromMSecsSinceEpoch(v.value + shift, QTimeZone::utc())
                                            .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"))
                                            .toLatin1());
                    break;
                case Varying::Id:
                    f.replace(v.at, 6, prefix);
                    break;
                case Varying::TaskNumber:
                    f.replace(v.at, 6, QByteArray::number(copy * tasksPerCopy + v.value).rightJustified(6, '0'));
                    break;
                case Varying::Uuid:
                    f.replace(v.at, 8, copyHex);
                    break;
                case Varying::AgentId:
                    f.replace(v.at, 8, agentPrefix);
                    break;
                }
            }
            // Sequence numbers go on from copy to copy, as one subscription's would.
            const QByteArray sequenceKey("\"sequenceNumber\":");
            if (const qsizetype at = f.indexOf(sequenceKey); at >= 0) {
                const qsizetype begin = at + sequenceKey.size();
                qsizetype end = begin;
                while (end < f.size() && f[end] >= '0' && f[end] <= '9')
                    ++end;
                const qint64 sequence = f.mid(begin, end - begin).toLongLong() + copy * qint64(templates.size());
                f.replace(begin, end - begin, QByteArray::number(sequence));
            }
            recordMs = std::max(recordMs, frameTimes[i] < 0 ? recordMs : frameTimes[i] + shift); // never back in time
            if (capture) {
                const Json line = {{"seq", written + 1},
                                   {"dir", "recv"},
                                   {"t", double(recordMs) + 0.25},
                                   {"bytes", f.size()},
                                   {"raw", f.toStdString()},
                                   {"iso", QDateTime::fromMSecsSinceEpoch(recordMs, QTimeZone::utc())
                                               .toString(Qt::ISODateWithMs).toStdString()}};
                out.write(QByteArray::fromStdString(line.dump()) + '\n');
            } else {
                out.write(encodeRecordLine({recordMs, QStringLiteral("recv"), 1, f, false, Json()}));
            }
            ++written;
        }
    }
    if (!out.close()) {
        std::fprintf(stderr, "%s\n", qPrintable(out.errorString()));
        return 1;
    }
    std::printf("wrote %lld events to %s (%lld bytes on disk, %lld uncompressed), copies of %zu events of %s\n",
                static_cast<long long>(written), qPrintable(path), static_cast<long long>(out.bytesOnDisk()),
                static_cast<long long>(out.bytesWritten()), templates.size(), qPrintable(QFileInfo(from).fileName()));
    return 0;
}

int load(const QString &path, const QStringList &flags)
{
    TraceLoadOptions options;
    options.fastParser = !flags.contains(QStringLiteral("--nlohmann"));
    options.readerThread = !flags.contains(QStringLiteral("--single-thread"));
    options.keepRawFrames = flags.contains(QStringLiteral("--keep-raw"));
    options.keepTimeline = !flags.contains(QStringLiteral("--no-timeline"));
    if (const qsizetype at = flags.indexOf(QStringLiteral("--batch")); at >= 0 && at + 1 < flags.size())
        options.batchRecords = flags[at + 1].toInt();
    if (const qsizetype at = flags.indexOf(QStringLiteral("--in-flight")); at >= 0 && at + 1 < flags.size())
        options.inFlightRecords = flags[at + 1].toInt();
    const qint64 rssBefore = statusKb("VmRSS:");
    SystemStore store;
    QElapsedTimer timer;
    timer.start();
    const double cpu0 = cpuSeconds();
    qint64 firstViewNs = -1;
    qint64 firstViewEvents = 0;
    const bool noFlush = flags.contains(QStringLiteral("--no-flush"));
    auto afterBatch = [&](const TraceLoadBatch &) {
        if (firstViewNs < 0) {
            if (noFlush) {
                firstViewNs = 0;
                return;
            }
            store.flushChanges();
            firstViewNs = timer.nsecsElapsed();
            firstViewEvents = qint64(store.events().size());
        }
    };
    TraceLoadResult r;
    if (flags.contains(QStringLiteral("--inline"))) {
        // Everything in this thread: read, decode, apply (for comparison).
        auto timeline = options.keepTimeline ? std::make_shared<TraceTimeline>() : nullptr;
        r = loadTraceBatches(path, options, [&](TraceLoadBatch &&batch) {
            applyTraceBatch(store, batch, timeline.get());
            afterBatch(batch);
            return true;
        }, timeline);
        store.advanceTime(r.lastTimeMs);
    } else {
        r = loadTraceInto(store, path, options, afterBatch);
    }
    const double total = double(timer.nsecsElapsed()) / 1e9;
    const double cpu = cpuSeconds() - cpu0;
    if (!r.ok) {
        std::fprintf(stderr, "%s\n", qPrintable(r.error));
        return 1;
    }
    const qint64 hwmKb = statusKb("VmHWM:");
    const qint64 rssKb = statusKb("VmRSS:");
    const qint64 fileBytes = QFileInfo(path).size();
    const qint64 events = store.counters().eventsApplied;
    const double perEvent = double(hwmKb * 1024) / double(std::max<qint64>(events, 1));
    const double beyondFile = double(hwmKb * 1024 - fileBytes) / double(std::max<qint64>(events, 1));
    std::printf("file: %s, %.1f MB (%s), %lld records, %lld events, %lld messages, %lld agents, %lld bad lines\n",
                qPrintable(QFileInfo(path).fileName()), double(fileBytes) / 1e6, qPrintable(r.stats.compression),
                static_cast<long long>(r.stats.records), static_cast<long long>(events),
                static_cast<long long>(store.counters().messages), static_cast<long long>(store.agents().size()),
                static_cast<long long>(r.stats.badLineCount));
    std::printf("options: parser %s, reader thread %s, raw frames %s, timeline %s, batches of %d records, %d in flight\n",
                options.fastParser ? "simdjson" : "nlohmann", options.readerThread ? "yes" : "no",
                options.keepRawFrames ? "kept" : "lazy", options.keepTimeline ? "kept" : "no", options.batchRecords,
                options.inFlightRecords);
    std::printf("first view:   %7.3f s (%lld events applied)\n", double(firstViewNs) / 1e9,
                static_cast<long long>(firstViewEvents));
    std::printf("fully loaded: %7.3f s (%.0f events/s), CPU %.2f s (%.0f%% of one core)\n", total,
                double(events) / total, cpu, cpu / total * 100);
    std::printf("memory: VmHWM %.1f MB (RSS before loading %.1f MB, after %.1f MB), %.0f B/event; beyond the file: "
                "%.0f B/event; timeline %.1f MB (frames %.1f MB uncompressed); event log %.1f MB, message log %.1f MB\n",
                double(hwmKb) / 1024, double(rssBefore) / 1024, double(rssKb) / 1024, perEvent, beyondFile,
                r.timeline ? double(r.timeline->memoryBytes()) / 1e6 : 0.0,
                r.timeline ? double(r.timeline->frameBytes()) / 1e6 : 0.0, double(store.events().memoryBytes()) / 1e6,
                double(store.messages().memoryBytes()) / 1e6);
    return 0;
}

int seek(const QString &path, qint64 targetEvents)
{
    SystemStore store;
    const TraceLoadResult r = loadTraceInto(store, path);
    if (!r.ok || !r.timeline) {
        std::fprintf(stderr, "%s\n", qPrintable(r.error));
        return 1;
    }
    const TraceTimeline &timeline = *r.timeline;
    const qint64 record = timeline.recordForEvent(int(std::min<qint64>(targetEvents, timeline.eventCount() - 1)));
    const qint64 t = timeline.recordTimeMs(record);
    ReplayController controller(&store, r.timeline);
    QElapsedTimer timer;
    auto measure = [&](const std::function<void()> &what, double &wall, double &cpu) {
        const double cpu0 = cpuSeconds();
        timer.restart();
        what();
        wall = double(timer.nsecsElapsed()) / 1e9;
        cpu = cpuSeconds() - cpu0;
    };
    double resetWall = 0, resetCpu = 0, forwardWall = 0, forwardCpu = 0, backWall = 0, backCpu = 0;
    double stepWall = 0, stepCpu = 0, stepBackWall = 0, stepBackCpu = 0;
    // 1. to the start: the loaded model is dropped (SystemStore::reset) and rebuilt empty.
    measure([&] { controller.seek(controller.startMs()); }, resetWall, resetCpu);
    // 2. forward from the start to T: decode and apply the records up to T.
    measure([&] { controller.seek(t); }, forwardWall, forwardCpu);
    const qint64 eventsAtT = qint64(store.events().size());
    // The same state, by replaying directly up to T.
    SystemStore direct;
    TraceLoadOptions until;
    until.untilTimeMs = t;
    loadTraceInto(direct, path, until);
    direct.advanceTime(t);
    const bool same = stateToJson(direct) == stateToJson(store);
    // 3. back to just before T: reset and rebuild.
    measure([&] { controller.seek(t - 1); }, backWall, backCpu);
    measure([&] { controller.step(); }, stepWall, stepCpu);
    measure([&] { controller.stepBack(); }, stepBackWall, stepBackCpu);

    std::printf("loaded %lld events; seeking to event %lld (t = %lld)\n", static_cast<long long>(r.timeline->eventCount()),
                static_cast<long long>(eventsAtT), static_cast<long long>(t));
    std::printf("seek to the start (drops the loaded model): %.3f s, CPU %.2f s\n", resetWall, resetCpu);
    std::printf("seek forward from the start to T (rebuild %lld events): %.3f s, CPU %.2f s (%.0f events/s); equals a "
                "direct replay: %s\n",
                static_cast<long long>(eventsAtT), forwardWall, forwardCpu, double(eventsAtT) / forwardWall, same ? "yes" : "NO");
    std::printf("seek back to T - 1 ms (reset + rebuild): %.3f s, CPU %.2f s\n", backWall, backCpu);
    std::printf("step: %.4f s; stepBack (reset + rebuild): %.3f s, CPU %.2f s\n", stepWall, stepBackWall, stepBackCpu);
    return same ? 0 : 2;
}

// Frame decoding alone, nlohmann vs simdjson, on the recv frames of FILE (CPU seconds).
int parsers(const QString &path)
{
    std::vector<QByteArray> frames;
    TraceReadStats stats;
    readTrace(path, [&](const TraceRecord &r) {
        if (r.dir == QLatin1String("recv"))
            frames.push_back(r.raw);
        return true;
    }, stats, nullptr);
    for (int round = 0; round < 2; ++round) {
        for (const bool simd : {false, true}) {
            const FrameCodec codec({}, simd ? SimdJsonParser::instance() : std::shared_ptr<const JsonParser>());
            const double cpu0 = cpuSeconds();
            qint64 ok = 0;
            for (const QByteArray &f : frames)
                ok += codec.decode(f).ok();
            const double cpu = cpuSeconds() - cpu0;
            std::printf("decode %zu frames with %s: CPU %.2f s (%.1f us/frame), %lld ok\n", frames.size(),
                        simd ? "simdjson" : "nlohmann", cpu, cpu / double(frames.size()) * 1e6, static_cast<long long>(ok));
        }
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments().mid(1);
    if (args.size() >= 2 && args[0] == QLatin1String("generate")) {
        QStringList rest = args.mid(2);
        QString from = QStringLiteral(MAPI_SAMPLE_TRACE);
        if (const qsizetype at = rest.indexOf(QStringLiteral("--from")); at >= 0 && at + 1 < rest.size()) {
            from = rest[at + 1];
            rest.remove(at, 2);
        }
        const bool capture = rest.removeAll(QStringLiteral("--capture")) > 0;
        int agentCount = 0;
        if (const qsizetype at = rest.indexOf(QStringLiteral("--agents")); at >= 0 && at + 1 < rest.size()) {
            agentCount = rest[at + 1].toInt();
            rest.remove(at, 2);
        }
        return generate(args[1], rest.isEmpty() ? 1000000 : rest[0].toLongLong(), from, capture, agentCount);
    }
    if (args.size() >= 2 && args[0] == QLatin1String("load"))
        return load(args[1], args.mid(2));
    if (args.size() >= 2 && args[0] == QLatin1String("parsers"))
        return parsers(args[1]);
    if (args.size() >= 2 && args[0] == QLatin1String("seek"))
        return seek(args[1], args.size() > 2 ? args[2].toLongLong() : 100000);
    std::fprintf(stderr, "usage: bench_trace_load generate FILE [EVENTS] [--from TRACE] [--capture] [--agents N] | load FILE [flags] | parsers FILE | seek FILE [EVENTS]\n");
    return 1;
}
