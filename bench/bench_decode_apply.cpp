// Decode and decode+apply throughput of the live pipeline (ProtocolPipeline → SystemStore).
//
// Input: the received map/event frames of tests/data/scenario-deliver.ndjson (real frames from
// the official server), replicated until N events, each copy with a unique event id so the
// store's de-duplication does not short-circuit the work. Prints one line per measurement.
#include "pipeline/ProtocolPipeline.h"
#include "model/SystemStore.h"
#include "protocol/SimdJsonParser.h"
#include "trace/Trace.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QHashFunctions>

#include <simdjson.h>

#include <condition_variable>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

using namespace mapi;

namespace {

// CPU time of the calling thread, in seconds.
double threadCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Every member and value below `value` read with simdjson's on-demand parser: each string
// unescaped and hashed (what interning it would cost at least), each number converted. The
// floor of a decoder that reads a frame straight into the store's rows, without building
// anything (see stages() below).
quint64 readEverything(simdjson::ondemand::value value)
{
    using namespace simdjson::ondemand;
    json_type type;
    if (value.type().get(type) != simdjson::SUCCESS)
        return 0;
    quint64 sum = 0;
    switch (type) {
    case json_type::object: {
        object members;
        if (value.get_object().get(members) != simdjson::SUCCESS)
            return 0;
        for (auto member : members) {
            field f;
            std::string_view key;
            if (std::move(member).get(f) != simdjson::SUCCESS || f.unescaped_key().get(key) != simdjson::SUCCESS)
                return sum;
            sum += qHashBits(key.data(), key.size()) + readEverything(f.value());
        }
        break;
    }
    case json_type::array: {
        array elements;
        if (value.get_array().get(elements) != simdjson::SUCCESS)
            return 0;
        for (auto element : elements) {
            simdjson::ondemand::value v;
            if (std::move(element).get(v) != simdjson::SUCCESS)
                return sum;
            sum += readEverything(v);
        }
        break;
    }
    case json_type::string: {
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS)
            sum += qHashBits(text.data(), text.size());
        break;
    }
    case json_type::number: {
        double number = 0;
        if (value.get_double().get(number) == simdjson::SUCCESS)
            sum += quint64(number);
        break;
    }
    case json_type::boolean: {
        bool flag = false;
        if (value.get_bool().get(flag) == simdjson::SUCCESS)
            sum += flag;
        break;
    }
    case json_type::null: break;
    }
    return sum;
}

// readEverything() on simdjson's DOM: the same values read and strings hashed, after the DOM
// parser (the product's) has built its tape of the whole frame.
quint64 readEverything(simdjson::dom::element value)
{
    using namespace simdjson::dom;
    quint64 sum = 0;
    switch (value.type()) {
    case element_type::OBJECT:
        for (const key_value_pair member : object(value))
            sum += qHashBits(member.key.data(), member.key.size()) + readEverything(member.value);
        break;
    case element_type::ARRAY:
        for (const element e : array(value))
            sum += readEverything(e);
        break;
    case element_type::STRING: {
        const std::string_view text(value);
        sum += qHashBits(text.data(), text.size());
        break;
    }
    case element_type::INT64: sum += quint64(int64_t(value)); break;
    case element_type::UINT64: sum += uint64_t(value); break;
    case element_type::DOUBLE: sum += quint64(double(value)); break;
    case element_type::BOOL: sum += bool(value) ? 1 : 0; break;
    case element_type::NULL_VALUE: break;
    }
    return sum;
}

// The DOM parser on each frame as the product calls it (simdjson copies an unpadded frame into
// its own buffer); with `readAll`, then every value read as above.
double domParse(const std::vector<QByteArray> &frames, bool readAll, quint64 &sum, qint64 &failed)
{
    simdjson::dom::parser parser;
    QElapsedTimer timer;
    timer.start();
    for (const QByteArray &f : frames) {
        simdjson::dom::element root;
        if (parser.parse(f.constData(), size_t(f.size())).get(root) != simdjson::SUCCESS) {
            ++failed;
            continue;
        }
        sum += readAll ? readEverything(root) : quint64(root.type());
    }
    return double(timer.nsecsElapsed()) / 1e9;
}

// `frame` copied into `padded` with simdjson's padding after it, as a frame from the socket must
// be before the on-demand parser reads it; `padded` grows to the largest frame and is reused.
void copyPadded(const QByteArray &frame, std::vector<char> &padded)
{
    if (padded.size() < size_t(frame.size()) + simdjson::SIMDJSON_PADDING)
        padded.resize(size_t(frame.size()) + simdjson::SIMDJSON_PADDING);
    std::memcpy(padded.data(), frame.constData(), size_t(frame.size()));
}

// The floor's loop. simdjson compiles its on-demand parser for one kernel, chosen by the
// compiler's flags (a portable x86-64 build gets the scalar fallback; the DOM parser the product
// uses picks its kernel at run time): the line printed names it.
double onDemandFloor(const std::vector<QByteArray> &frames, quint64 &sum, qint64 &failed)
{
    simdjson::ondemand::parser parser;
    std::vector<char> padded;
    QElapsedTimer timer;
    timer.start();
    for (const QByteArray &f : frames) {
        copyPadded(f, padded);
        simdjson::ondemand::document document;
        simdjson::ondemand::value root;
        if (parser.iterate(padded.data(), size_t(f.size()), padded.size()).get(document) != simdjson::SUCCESS
            || document.get_value().get(root) != simdjson::SUCCESS) {
            ++failed;
            continue;
        }
        sum += readEverything(root);
    }
    return double(timer.nsecsElapsed()) / 1e9;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 target = argc > 1 ? QByteArray(argv[1]).toLongLong() : 200000;
    // --simdjson-only: skip the nlohmann measurements (for profiling the live client's path).
    const bool simdOnly = argc > 2 && QByteArray(argv[2]) == "--simdjson-only";

    std::vector<QByteArray> templates;
    TraceReadStats stats;
    QString error;
    readTrace(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), [&](const TraceRecord &r) {
        if (r.dir == QLatin1String("recv") && r.raw.contains("\"map/event\""))
            templates.push_back(r.raw);
        return true;
    }, stats, &error);
    if (templates.empty()) {
        std::fprintf(stderr, "no frames: %s\n", qPrintable(error));
        return 1;
    }

    // Replicate with unique ids: replace the 26-char ULID event id in both places.
    std::vector<QByteArray> frames;
    frames.reserve(size_t(target));
    qint64 bytes = 0;
    for (qint64 i = 0; qint64(frames.size()) < target; ++i) {
        for (const QByteArray &t : templates) {
            if (qint64(frames.size()) >= target)
                break;
            // Event and message ids get a per-copy prefix; agent and scope ids stay, so the
            // model keeps the scenario's 20 agents and grows only in events and messages.
            // The prefix takes the place of the ULIDs' first 6 characters (their time in units of
            // about 17 minutes, the same in the whole capture), so that the ids keep the order a
            // server's ULIDs have: ascending (8 characters, as before 2026-11-27, wrapped 10 times
            // a copy).
            QByteArray f = t;
            const QByteArray prefix = QByteArray::number(i).rightJustified(6, '0');
            for (const char *key : {"\"eventId\":\"", "\"messageId\":\"", "\"message\":{\"id\":\""}) {
                const QByteArray k(key);
                int at = t.indexOf(k);
                while (at >= 0) {
                    const QByteArray oldId = t.mid(at + k.size(), 26);
                    f.replace(oldId, QByteArray(prefix + oldId.right(20)));
                    at = t.indexOf(k, at + 1);
                }
            }
            bytes += f.size();
            frames.push_back(std::move(f));
        }
    }
    std::printf("frames: %zu, bytes: %lld (avg %.0f B/frame)\n", frames.size(), static_cast<long long>(bytes),
                double(bytes) / double(frames.size()));

    if (!simdOnly) {
        FrameCodec codec;
        QElapsedTimer timer;
        timer.start();
        qint64 ok = 0;
        for (const QByteArray &f : frames)
            ok += codec.decode(f).ok();
        const double s = double(timer.nsecsElapsed()) / 1e9;
        std::printf("decode only (nlohmann):      %9.0f frames/s  %6.1f MB/s  (%lld ok)\n", double(frames.size()) / s,
                    double(bytes) / s / 1e6, static_cast<long long>(ok));
    }
    // The general path (nlohmann) and the live client's (SimdJsonParser: map/event frames read
    // straight from simdjson's DOM).
    for (const bool simd : {false, true}) {
        if (simdOnly && !simd)
            continue;
        ProtocolPipeline pipeline({}, simd ? SimdJsonParser::instance() : nullptr);
        SystemStore store;
        QElapsedTimer timer;
        timer.start();
        // As the live client and a trace load do: each frame decoded into the pending batch,
        // the batch applied every 64 frames.
        ModelInputs batch;
        for (size_t i = 0; i < frames.size(); ++i) {
            batch = pipeline.frameReceived(frames[i], 0, std::move(batch)).inputs;
            if (batch.size() >= 64 || i + 1 == frames.size()) {
                store.apply(std::exchange(batch, {}));
                batch.reserve(72); // as TraceLoader and MapClient do
            }
        }
        const double s = double(timer.nsecsElapsed()) / 1e9;
        std::printf("decode + normalise + apply (%s): %9.0f events/s  %6.1f MB/s  (%lld applied, %lld messages)\n",
                    simd ? "simdjson" : "nlohmann", double(frames.size()) / s, double(bytes) / s / 1e6,
                    static_cast<long long>(store.counters().eventsApplied), static_cast<long long>(store.counters().messages));
    }
    // Where the simdjson path's time goes: frames decoded and normalised in batches of 64 (as a
    // trace load and the live client make them), each batch applied before the next is decoded,
    // the two stages timed apart. `journaled`: as in a live session, which keeps each frame in
    // its journal on disk (core/session/SessionJournal.h): the client leaves sent payloads' text
    // in the frame and empties the events' frames (dropRawFrames() with the journal's place).
    const auto stages = [&](bool journaled) {
        ProtocolPipeline pipeline({}, SimdJsonParser::instance());
        pipeline.setKeepPayloadText(!journaled);
        SystemStore store;
        QElapsedTimer timer;
        timer.start();
        qint64 decodeNs = 0;
        qint64 applyNs = 0;
        qint64 journalOffset = 0;
        ModelInputs batch;
        for (size_t i = 0; i < frames.size(); ++i) {
            const qsizetype first = batch.size();
            batch = pipeline.frameReceived(frames[i], 0, std::move(batch)).inputs;
            if (journaled) {
                dropRawFrames(batch, FrameRef{journalOffset, frames[i].size()}, first);
                journalOffset += frames[i].size();
            }
            if (batch.size() >= 64 || i + 1 == frames.size()) {
                const qint64 decoded = timer.nsecsElapsed();
                store.apply(std::exchange(batch, {}));
                batch.reserve(72);
                const qint64 applied = timer.nsecsElapsed();
                decodeNs += decoded - (decodeNs + applyNs);
                applyNs += applied - decoded;
            }
        }
        const double decodeS = double(decodeNs) / 1e9;
        const double applyS = double(applyNs) / 1e9;
        const double n = double(frames.size());
        std::printf("simdjson stages%s: decode + normalise %6.0f ns/event (%9.0f events/s), apply %6.0f ns/event "
                    "(%9.0f events/s), sum %6.0f ns/event (%9.0f events/s)\n",
                    journaled ? ", journaled" : "", decodeS * 1e9 / n, n / decodeS, applyS * 1e9 / n, n / applyS,
                    (decodeS + applyS) * 1e9 / n, n / (decodeS + applyS));
    };
    stages(false);
    stages(true);

    // As the product runs it live: the client's thread decodes and normalises, the store's
    // (GUI) thread applies, batches of 64 handed over through a queue of at most 16 (1,024
    // events, as a trace load's; the live client's queue is Qt's, unbounded). The decoder waits
    // while the queue is full. Throughput is then the slower stage's, if the machine has a core
    // for each thread (this one has two).
    {
        ProtocolPipeline pipeline({}, SimdJsonParser::instance());
        SystemStore store;
        std::mutex mutex;
        std::condition_variable changed;
        std::deque<ModelInputs> queue;
        bool decoded = false;
        constexpr size_t kMaxQueued = 16;
        QElapsedTimer timer;
        timer.start();
        double decoderCpuS = 0;
        double applyCpuS = -threadCpuSeconds();
        std::thread decoder([&] {
            const double cpuStart = threadCpuSeconds();
            ModelInputs batch;
            for (size_t i = 0; i < frames.size(); ++i) {
                batch = pipeline.frameReceived(frames[i], 0, std::move(batch)).inputs;
                if (batch.size() >= 64 || i + 1 == frames.size()) {
                    std::unique_lock lock(mutex);
                    changed.wait(lock, [&] { return queue.size() < kMaxQueued; });
                    queue.push_back(std::exchange(batch, {}));
                    changed.notify_all();
                    lock.unlock();
                    batch.reserve(72);
                }
            }
            std::lock_guard lock(mutex);
            decoderCpuS = threadCpuSeconds() - cpuStart;
            decoded = true;
            changed.notify_all();
        });
        for (;;) {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return !queue.empty() || decoded; });
            if (queue.empty())
                break;
            ModelInputs batch = std::move(queue.front());
            queue.pop_front();
            changed.notify_all();
            lock.unlock();
            store.apply(std::move(batch));
        }
        applyCpuS += threadCpuSeconds();
        decoder.join();
        const double s = double(timer.nsecsElapsed()) / 1e9;
        const double n = double(frames.size());
        std::printf("two threads (decode | apply, as live): %9.0f events/s; CPU per event: decoding thread %4.0f ns, "
                    "applying thread %4.0f ns (CPU time: waiting costs none)  (%lld applied)\n",
                    n / s, decoderCpuS * 1e9 / n, applyCpuS * 1e9 / n, static_cast<long long>(store.counters().eventsApplied));
    }

    // The floor of the decoder the issue names (simdjson on-demand straight into the store's
    // compact rows): each frame copied into a padded buffer, as a frame from the socket must be,
    // then every value read and every string hashed, nothing built. What is left for the store's
    // rows, ids and indexes is the budget minus this.
    const double n = double(frames.size());
    quint64 sum = 0;
    qint64 failed = 0;
    const double floorS = onDemandFloor(frames, sum, failed);
    // Of which the copy into a padded buffer alone (the first touch of each frame's bytes).
    double copyS = 0;
    {
        std::vector<char> padded;
        QElapsedTimer timer;
        timer.start();
        for (const QByteArray &f : frames) {
            copyPadded(f, padded);
            sum += quint8(padded[size_t(f.size()) / 2]);
        }
        copyS = double(timer.nsecsElapsed()) / 1e9;
    }
    // The same reading on the DOM the product parses into, and that parse alone: what the
    // on-demand floor is to be compared with (the DOM parser picks its kernel at run time).
    const double domS = domParse(frames, false, sum, failed);
    const double domReadS = domParse(frames, true, sum, failed);
    std::printf("DOM parse alone (%s kernel, at run time) %6.0f ns/event; DOM parse + every value read %6.0f ns/event\n",
                simdjson::get_active_implementation()->name().c_str(), domS * 1e9 / n, domReadS * 1e9 / n);
    std::printf("on-demand floor (%s kernel): every value read, nothing built %6.0f ns/event (%9.0f events/s; the copy "
                "into a padded buffer alone %4.0f ns; %lld failed, checksum %llu)\n",
                SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION), floorS * 1e9 / n, n / floorS, copyS * 1e9 / n,
                static_cast<long long>(failed), static_cast<unsigned long long>(sum % 1000));
    return 0;
}
