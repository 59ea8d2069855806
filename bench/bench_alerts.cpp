// bench_alerts: what the detectors (core/alerts) cost on the thread that runs them.
//
//   bench_alerts [AGENTS] [MESSAGES]      (defaults 10000 and 1000000)
//
// Builds a store through the live pipeline (AGENTS registered, then MESSAGES messages between
// random agents: status updates with cost, task requests and accepts, queries, heartbeats, a few
// error reports and help requests), then times AlertEngine::update():
//   - the first update, which reads every message (a trace just loaded, or a window that was
//     behind), in slices of AlertEngine's per-call budget;
//   - a steady update with nothing new (the once-a-second evaluation over every agent);
//   - an update after 100,000 new messages (a second of a heavy live flood).
// Results: docs/benchmarks.md, "Alert detectors".
#include "alerts/AlertEngine.h"
#include "alerts/AlertMonitor.h"
#include "model/SystemStore.h"
#include "pipeline/ProtocolPipeline.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>
#include <random>

using namespace mapi;

namespace {

QByteArray eventFrame(qint64 seq, const Json &event)
{
    const Json params = {{"subscriptionId", "s"}, {"sequenceNumber", seq}, {"eventId", event["id"]}, {"timestamp", event["timestamp"]},
                         {"event", event}};
    return QByteArray::fromStdString(Json{{"jsonrpc", "2.0"}, {"method", "map/event"}, {"params", params}}.dump());
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int agents = argc > 1 ? std::atoi(argv[1]) : 10000;
    const int messages = argc > 2 ? std::atoi(argv[2]) : 1000000;
    SystemStore store;
    ProtocolPipeline pipeline;
    store.apply(pipeline.connectionOpened(QStringLiteral("ws://bench"), 1));
    std::mt19937 rng(1);
    qint64 seq = 0;
    qint64 t = 1790000000000;
    auto id = [](int i) { return "agent-" + std::to_string(i); };
    for (int i = 0; i < agents; ++i) {
        const Json agent = {{"id", id(i)}, {"name", id(i)}, {"role", "worker"}, {"state", "idle"}};
        ++seq;
        store.apply(pipeline.frameReceived(eventFrame(seq, {{"id", "e" + std::to_string(seq)}, {"type", "agent.registered"},
                                                              {"timestamp", t}, {"data", {{"agent", agent}}}}),
                                           t).inputs);
    }
    const char *types[] = {"STATUS_UPDATE", "TASK_REQUEST", "TASK_ACCEPT", "STATUS_QUERY", "STATUS_RESPONSE", "HEARTBEAT",
                           "HEARTBEAT", "HEARTBEAT", "ERROR_REPORT", "HELP_REQUEST", "HELP_RESPONSE", "BROADCAST"};
    auto send = [&](int n) {
        for (int i = 0; i < n; ++i) {
            t += 1;
            const int from = int(rng() % unsigned(agents));
            const int to = int(rng() % unsigned(agents));
            const char *type = types[rng() % 12];
            Json payload = {{"task_id", "task-" + std::to_string(rng() % 100000)}};
            if (type[0] == 'S' && type[7] == 'U')
                payload["resource_usage"] = {{"cost_usd", double(rng() % 1000) / 100.0}};
            if (type[0] == 'E')
                payload["severity"] = (rng() % 3) ? "WARNING" : "ERROR";
            const Json envelope = {{"message_id", "m" + std::to_string(seq)}, {"type", type}, {"from", id(from)}, {"to", id(to)},
                                   {"payload", payload}};
            const Json message = {{"id", "msg-" + std::to_string(seq)}, {"from", id(from)}, {"to", id(to)}, {"payload", envelope},
                                  {"timestamp", t}};
            ++seq;
            store.apply(pipeline.frameReceived(eventFrame(seq, {{"id", "e" + std::to_string(seq)}, {"type", "message.sent"},
                                                                  {"timestamp", t}, {"data", {{"message", message}}}}),
                                               t).inputs);
        }
    };
    QElapsedTimer build;
    build.start();
    send(messages);
    store.advanceTime(t);
    std::printf("store: %d agents, %zu messages, %zu tasks, built in %.1f s\n", agents, store.messages().size(),
                store.tasks().size(), double(build.elapsed()) / 1000.0);

    AlertEngine engine;
    // Evaluation in slices as the window's AlertMonitor does; MAPI_BENCH_EVALUATION_SLICE_MS=0:
    // one call evaluates everything (before slicing existed, and the CLI's watch).
    const QByteArray sliceSetting = qgetenv("MAPI_BENCH_EVALUATION_SLICE_MS");
    const int sliceMs = sliceSetting.isEmpty() ? AlertMonitor::kSliceMs : sliceSetting.toInt();
    engine.setEvaluationSliceMs(sliceMs);
    std::printf("evaluation slices: %s\n", sliceMs > 0 ? qPrintable(QStringLiteral("%1 ms").arg(sliceMs)) : "off");
    QElapsedTimer timer;
    timer.start();
    int calls = 0;
    qint64 longest = 0;
    size_t raised = 0;
    do { // the first reading, a slice per call
        QElapsedTimer slice;
        slice.start();
        raised += engine.update(store).size();
        longest = std::max(longest, slice.nsecsElapsed());
        ++calls;
    } while (engine.isBehind(store));
    const double firstMs = double(timer.nsecsElapsed()) / 1e6;
    std::printf("first reading: %.1f ms in %d calls (longest %.1f ms), %.2f us per message; %zu changes, %zu open\n", firstMs,
                calls, double(longest) / 1e6, firstMs * 1000.0 / double(messages), raised, engine.openAlerts().size());

    double steady = 1e18;
    double steadyLongest = 0;
    int steadyCalls = 0;
    // MAPI_BENCH_STEADY_RUNS: more steady updates (e.g. 50, to profile the evaluation with perf).
    const int steadyRuns = std::max(5, qEnvironmentVariableIntValue("MAPI_BENCH_STEADY_RUNS"));
    for (int i = 0; i < steadyRuns; ++i) {
        timer.restart();
        double longestCall = 0;
        int callsNow = 0;
        do {
            QElapsedTimer call;
            call.start();
            engine.update(store);
            longestCall = std::max(longestCall, double(call.nsecsElapsed()) / 1e6);
            ++callsNow;
        } while (engine.isBehind(store));
        const double total = double(timer.nsecsElapsed()) / 1e6;
        if (total < steady) {
            steady = total;
            steadyLongest = longestCall;
            steadyCalls = callsNow;
        }
    }
    std::printf("steady evaluation, nothing new: %.2f ms in %d calls, longest %.2f ms (best of %d)\n", steady, steadyCalls,
                steadyLongest, steadyRuns);

    send(100000);
    store.advanceTime(t);
    timer.restart();
    calls = 0;
    longest = 0;
    do {
        QElapsedTimer slice;
        slice.start();
        engine.update(store);
        longest = std::max(longest, slice.nsecsElapsed());
        ++calls;
    } while (engine.isBehind(store));
    std::printf("after 100,000 new messages: %.1f ms in %d calls (longest %.1f ms)\n", double(timer.nsecsElapsed()) / 1e6, calls,
                double(longest) / 1e6);
    return 0;
}
