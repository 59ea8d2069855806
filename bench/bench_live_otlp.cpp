// The live OTLP export's own cost per message (issue 45: the export adds ≤ 15 % to the client's
// CPU on a flood): a store fed N message.sent events between A agents through the pipeline, in
// batches of 3,300 (what 100,000 events/s bring between two of the store's 33 ms change signals),
// timed for the pipeline's decode + apply alone, then for LiveOtlpBatcher::noteChanges and a
// take() every 5 s of the flood's time. One core, this process.
//
//   bench_live_otlp [MESSAGES=300000] [AGENTS=1000] [without|with]   (the last: one run only, for
//                                                                    perf stat's instruction counts)
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"
#include "protocol/SimdJsonParser.h"
#include "telemetry/LiveOtlpBatcher.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>
#include <string>
#include <vector>

using namespace mapi;

namespace {

QByteArray messageFrame(qint64 n, int agents, qint64 timeMs)
{
    const std::string from = "agent-" + std::to_string(n % agents);
    const std::string to = "agent-" + std::to_string((n + 1) % agents);
    const std::string id = std::to_string(n);
    return QByteArray::fromStdString(
        "{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"subscriptionId\":\"s\",\"sequenceNumber\":" + id
        + ",\"eventId\":\"ev-" + id + "\",\"timestamp\":" + std::to_string(timeMs) + ",\"event\":{\"id\":\"ev-" + id
        + "\",\"type\":\"message.sent\",\"timestamp\":" + std::to_string(timeMs) + ",\"source\":{\"agentId\":\"" + from
        + "\"},\"data\":{\"message\":{\"id\":\"flood-message-" + id + "\",\"from\":\"" + from + "\",\"to\":\"" + to
        + "\",\"timestamp\":" + std::to_string(timeMs) + ",\"payload\":{\"type\":\"chat\",\"text\":\"work item " + id
        + "\"}}}}}}");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 messages = argc > 1 ? std::atoll(argv[1]) : 300000;
    const int agents = argc > 2 ? std::atoi(argv[2]) : 1000;
    constexpr qint64 kStart = 1764000000000;
    constexpr int kBatch = 3300;
    constexpr qint64 kEventsPerSecond = 100000;

    // The frames first (the server's work, not measured).
    std::vector<QByteArray> frames;
    frames.reserve(size_t(messages));
    for (qint64 n = 0; n < messages; ++n)
        frames.push_back(messageFrame(n, agents, kStart + n * 1000 / kEventsPerSecond));

    const QByteArray only = argc > 3 ? QByteArray(argv[3]) : QByteArray();
    for (const bool withExport : {false, true}) {
        if ((only == "with" && !withExport) || (only == "without" && withExport))
            continue;
        SystemStore store;
        ProtocolPipeline pipeline(CodecLimits{}, SimdJsonParser::instance()); // the live client's
        LiveOtlpBatcher batcher(store, OtlpOptions{});
        qint64 applyNs = 0, noteNs = 0, takeNs = 0, bodies = 0, bytes = 0;
        QObject::connect(&store, &SystemStore::changed, &store, [&](const ChangeSet &changes) {
            if (!withExport)
                return;
            QElapsedTimer t;
            t.start();
            batcher.noteChanges(changes);
            noteNs += t.nsecsElapsed();
        });
        qint64 nextTakeMs = kStart + 5000;
        for (qint64 first = 0; first < messages; first += kBatch) {
            const qint64 end = std::min(messages, first + kBatch);
            const qint64 timeMs = kStart + end * 1000 / kEventsPerSecond;
            QElapsedTimer t;
            t.start();
            ModelInputs inputs;
            for (qint64 n = first; n < end; ++n)
                inputs = pipeline.frameReceived(frames[size_t(n)], timeMs, std::move(inputs)).inputs;
            store.apply(std::move(inputs));
            applyNs += t.nsecsElapsed();
            store.flushChanges();
            if (withExport && (timeMs >= nextTakeMs || end == messages)) {
                t.restart();
                for (const OtlpBody &body : batcher.take(timeMs, end == messages)) {
                    ++bodies;
                    bytes += body.json.size();
                }
                takeNs += t.nsecsElapsed();
                nextTakeMs += 5000;
            }
        }
        const double perMessage = 1.0 / double(messages);
        std::printf("%s: decode+apply %.2f us/message", withExport ? "with export" : "without    ", double(applyNs) * perMessage / 1000);
        if (withExport)
            std::printf(", noteChanges %.2f us, take %.2f us (%lld bodies, %.0f bytes/message): export %.0f %% of decode+apply",
                        double(noteNs) * perMessage / 1000, double(takeNs) * perMessage / 1000, static_cast<long long>(bodies),
                        double(bytes) * perMessage, 100.0 * double(noteNs + takeNs) / double(applyNs));
        std::printf("\n");
    }
    return 0;
}
