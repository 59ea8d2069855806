// What one reconciliation costs at 10,000 agents (issue 40): the client's map/agents/list walk,
// read by the pipeline and compared with the model by the store (SystemStore::checkDrift, then
// the list applied). Both shapes a server answers in: everything at once (MAPServer) and pages of
// `pageSize` agents (the spec's nextCursor). Agents are MAPServer-shaped (some 300 bytes each).
//
//   bench_reconcile [agents=10000] [pageSize=100] [rounds=20]
//
// Prints, per shape: bytes on the wire per reconciliation, and the median and worst time of the
// pipeline (decode) and of the store (compare + apply), in milliseconds, on the calling thread.
#include "pipeline/ProtocolPipeline.h"
#include "model/SystemStore.h"
#include "protocol/SimdJsonParser.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace mapi;

namespace {

Json agentJson(int i)
{
    const std::string id = "01M8GD5K7YHW" + std::to_string(1000000 + i);
    return {{"id", id},
            {"name", "worker-" + std::to_string(i)},
            {"role", "worker"},
            {"state", i % 3 ? "busy" : "idle"},
            {"metadata", {{"parentId", "01M8GD5K7YHW" + std::to_string(1000000 + i / 10)}, {"team", "team-" + std::to_string(i / 500)}}},
            {"capabilities", {"code:review", "code:write"}},
            {"visibility", "public"}};
}

struct Exchange { QByteArray request, response; };

// One walk's frames: requests and answers, ids from `firstId`.
std::vector<Exchange> walk(int agents, int pageSize, int &nextId)
{
    std::vector<Exchange> out;
    for (int from = 0; from < agents; from += pageSize) {
        const int id = nextId++;
        Json params = Json::object();
        if (from > 0)
            params["cursor"] = std::to_string(from);
        Json list = Json::array();
        for (int i = from; i < std::min(agents, from + pageSize); ++i)
            list.push_back(agentJson(i));
        Json result = {{"agents", std::move(list)}};
        if (from + pageSize < agents)
            result["nextCursor"] = std::to_string(from + pageSize);
        const Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", "map/agents/list"}, {"params", params}};
        const Json response = {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
        out.push_back({QByteArray::fromStdString(request.dump()), QByteArray::fromStdString(response.dump())});
    }
    return out;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

void measure(const char *shape, int agents, int pageSize, int rounds)
{
    ProtocolPipeline pipeline({}, std::make_shared<SimdJsonParser>());
    SystemStore store;
    pipeline.connectionOpened(QStringLiteral("ws://bench"), 1000);
    int nextId = 1;
    qint64 t = 1000;
    auto once = [&](double *decodeMs, double *applyMs, qint64 *bytes) {
        const std::vector<Exchange> frames = walk(agents, pageSize, nextId);
        QElapsedTimer timer;
        timer.start();
        ModelInputs inputs;
        qint64 wire = 0;
        for (const Exchange &e : frames) {
            pipeline.frameSent(e.request, ++t);
            inputs = pipeline.frameReceived(e.response, ++t, std::move(inputs)).inputs;
            wire += e.request.size() + e.response.size();
        }
        const double decoded = double(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        store.apply(inputs);
        const double applied = double(timer.nsecsElapsed()) / 1e6;
        if (decodeMs)
            *decodeMs = decoded, *applyMs = applied, *bytes = wire;
    };
    once(nullptr, nullptr, nullptr); // the snapshot
    std::vector<double> decode, apply;
    qint64 bytes = 0;
    for (int r = 0; r < rounds; ++r) {
        double d = 0, a = 0;
        once(&d, &a, &bytes);
        decode.push_back(d);
        apply.push_back(a);
    }
    std::printf("%-22s agents=%d pages=%d bytes=%lld decode median=%.1f ms worst=%.1f ms; compare+apply median=%.1f ms "
                "worst=%.1f ms; agents in model=%zu\n",
                shape, agents, (agents + pageSize - 1) / pageSize, static_cast<long long>(bytes), median(decode),
                *std::max_element(decode.begin(), decode.end()), median(apply),
                *std::max_element(apply.begin(), apply.end()), store.agents().size());
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int agents = argc > 1 ? std::atoi(argv[1]) : 10000;
    const int pageSize = argc > 2 ? std::atoi(argv[2]) : 100;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
    if (agents <= 0 || pageSize <= 0 || rounds <= 0) {
        std::fprintf(stderr, "usage: bench_reconcile [agents>0] [pageSize>0] [rounds>0]\n");
        return 2;
    }
    measure("one list (MAPServer)", agents, agents, rounds);
    measure("paged (spec)", agents, pageSize, rounds);
    return 0;
}
