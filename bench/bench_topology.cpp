// The topology panel at scale: by default 1,000 agents (1 coordinator, 30 workers, 969 sub-agents)
// in 10 scopes, 100,000 messages between them, the panel offscreen at 1600×1000.
//
//   bench_topology [--agents N] [--messages M] [--png DIR]
//
// --agents scales the system (3 % workers, the rest sub-agents, the same 10 scopes).
//
// Prints a table: the full layout (run off the GUI thread), the store → topology update, and
// the repaint time of frames while panning and zooming, at fit-to-view zoom and at 1:1.
// A frame = one move of the camera + a synchronous repaint of the view (QWidget::repaint()); while
// the camera moves the view draws traffic cheaper, so "still frame" rows time the full-quality
// repaint that follows 150 ms after the last move.
// With --png, saves the panel (at rest) zoomed out, at 50 % and at 1:1 into DIR.
#include "panels/TopologyPanel.h"
#include "common/VectorStateGuard.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"
#include "topology/TopologyView.h"

#include <QApplication>
#include <QElapsedTimer>

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#ifdef Q_OS_WIN
#ifndef NOMINMAX // MinGW's own headers may have defined it already (as 1)
#define NOMINMAX // windows.h's min/max macros would break std::min( and std::max(
#endif
#include <windows.h>
#else
#include <ctime>
#endif

using namespace mapi;
using namespace mapi::ui;

namespace {

int kWorkers = 30;                   // set in main() from --agents (3 %)
int kAgents = 1000;                  // --agents
constexpr int kSquads = 9;           // + 1 top scope = 10 scopes
int kMessages = 100000;              // --messages
constexpr qint64 kStartMs = 1800000000000;
constexpr qint64 kTrafficSpanMs = 120000; // messages spread over two minutes of store time

// CPU time of the calling thread, milliseconds. Wall time is what an operator feels, but on a
// shared machine it also counts other processes; the GUI thread's CPU time is the frame's cost.
double threadCpuMs()
{
#ifdef Q_OS_WIN
    FILETIME created, exited, kernel, user;
    GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user);
    auto ms = [](const FILETIME &t) { return double((quint64(t.dwHighDateTime) << 32) | t.dwLowDateTime) / 1e4; };
    return ms(kernel) + ms(user);
#else
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
#endif
}

struct Sample
{
    double wallMs = 0;
    double cpuMs = 0;
};

struct Stats
{
    double average = 0;
    double p99 = 0;
    double max = 0;
};

Stats summarize(std::vector<double> values)
{
    Stats s;
    if (values.empty())
        return s;
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values)
        sum += v;
    s.average = sum / double(values.size());
    s.max = values.back();
    s.p99 = values[std::min(values.size() - 1, size_t(double(values.size()) * 0.99))];
    return s;
}

void printRow(const char *what, const std::vector<Sample> &samples)
{
    std::vector<double> wall, cpu;
    for (const Sample &s : samples) {
        wall.push_back(s.wallMs);
        cpu.push_back(s.cpuMs);
    }
    const Stats w = summarize(wall), c = summarize(cpu);
    std::printf("| %-50s | %8.2f | %8.2f | %8.2f | %8.2f | %8.2f | %8.2f |\n", what, w.average, w.p99, w.max, c.average, c.p99, c.max);
}

// Times `work` in wall-clock and GUI-thread CPU milliseconds.
template<typename Work>
Sample measure(Work &&work)
{
    QElapsedTimer wall;
    const double cpu = threadCpuMs();
    wall.start();
    work();
    return {double(wall.nsecsElapsed()) / 1e6, threadCpuMs() - cpu};
}

ModelInput agentRegistered(int index, const QString &id, const QString &name, const QString &role, const QString &state,
                           const QString &parent, const QStringList &scopes)
{
    EventInput input;
    input.event.kind = EventKind::AgentRegistered;
    input.event.type = QStringLiteral("agent.registered");
    input.event.eventId = QStringLiteral("bench-agent-%1").arg(index);
    input.event.agentId = id;
    input.event.timestampMs = kStartMs;
    AgentRecord record;
    record.id = id;
    record.name = name;
    record.role = role;
    record.state = state;
    if (!parent.isEmpty())
        record.parentId = parent;
    record.scopes = scopes;
    input.event.agent = record;
    input.receivedMs = kStartMs;
    return input;
}

ModelInput messageSent(int index, const QString &from, const QString &to, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::MessageSent;
    input.event.type = QStringLiteral("message.sent");
    input.event.eventId = QStringLiteral("bench-message-event-%1").arg(index);
    input.event.timestampMs = timeMs;
    MessageRecord message;
    message.id = QStringLiteral("bench-message-%1").arg(index);
    message.from = from;
    message.to = Json(to.toStdString());
    message.setPayload(Json::object({{"type", "TASK_UPDATE"}, {"progress", index % 100}}));
    message.timestampMs = timeMs;
    input.event.message = message;
    input.receivedMs = timeMs;
    return input;
}

// Runs the event loop until the view has no layout running or due and no animation.
void settle(TopologyView *view)
{
    while (!view->isSettled())
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
}

// 200 frames of panning: a slow circle, 12 px per frame.
std::vector<Sample> panFrames(TopologyView *view)
{
    std::vector<Sample> samples;
    for (int i = 0; i < 200; ++i) {
        const double angle = i * 0.0314159 * 2;
        samples.push_back(measure([&] {
            view->panBy(QPointF(12 * std::cos(angle), 12 * std::sin(angle)));
            view->repaint();
        }));
    }
    return samples;
}

// 200 frames of zooming around the view's centre: 100 steps in by 2 %, 100 steps back out.
std::vector<Sample> zoomFrames(TopologyView *view)
{
    std::vector<Sample> samples;
    const double start = view->zoom();
    for (int i = 0; i < 200; ++i) {
        samples.push_back(measure([&] {
            view->setZoom(start * std::pow(1.02, i < 100 ? i + 1 : 200 - i - 1));
            view->repaint();
        }));
    }
    return samples;
}

// 20 repaints after the view has been still long enough to draw at full quality (antialiased
// traffic, full edge budget): what an operator sees once a pan or zoom stops.
std::vector<Sample> stillFrames(TopologyView *view)
{
    QElapsedTimer wait;
    wait.start();
    while (wait.elapsed() < 300)
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    std::vector<Sample> samples;
    for (int i = 0; i < 20; ++i)
        samples.push_back(measure([&] { view->repaint(); }));
    return samples;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    installVectorStateGuard(); // as the application does
    applyTheme(Theme::Light);
    const QStringList args = QApplication::arguments();
    const int pngAt = int(args.indexOf(QStringLiteral("--png")));
    const QString pngDir = pngAt > 0 ? args.value(pngAt + 1) : QString();
    if (const int at = int(args.indexOf(QStringLiteral("--agents"))); at > 0)
        kAgents = std::max(100, args.value(at + 1).toInt());
    if (const int at = int(args.indexOf(QStringLiteral("--messages"))); at > 0)
        kMessages = std::max(1000, args.value(at + 1).toInt());
    kWorkers = std::max(30, kAgents * 3 / 100);

    // ---- the system ------------------------------------------------------------------
    std::mt19937 random(576);
    ModelInputs inputs;
    ScopesSnapshot scopes;
    scopes.timeMs = kStartMs;
    const QString top = QStringLiteral("scope-org");
    scopes.data.scopes.push_back(ScopeRecord{top, QStringLiteral("org"), std::nullopt, Json()});
    for (int s = 0; s < kSquads; ++s)
        scopes.data.scopes.push_back(ScopeRecord{QStringLiteral("scope-squad-%1").arg(s), QStringLiteral("squad-%1").arg(s + 1), top, Json()});
    inputs.push_back(scopes);

    QStringList ids;
    std::vector<int> parentOf;
    std::vector<int> squadOf;
    const QString coordinator = QStringLiteral("agent-coordinator");
    inputs.push_back(agentRegistered(0, coordinator, QStringLiteral("coordinator"), QStringLiteral("coordinator"),
                                     QStringLiteral("busy"), {}, {top}));
    ids << coordinator;
    parentOf.push_back(-1);
    squadOf.push_back(-1);
    // 45 % busy, 35 % idle, 10 % thinking, 5 % suspended, 3 % stopped, 2 % failed, spread evenly.
    auto stateFor = [](int i) {
        const int k = (i * 37) % 100;
        return k < 45 ? QStringLiteral("busy")
             : k < 80 ? QStringLiteral("idle")
             : k < 90 ? QStringLiteral("custom:thinking")
             : k < 95 ? QStringLiteral("suspended")
             : k < 98 ? QStringLiteral("stopped")
                      : QStringLiteral("custom:failed");
    };
    for (int w = 0; w < kWorkers; ++w) {
        const QString id = QStringLiteral("agent-worker-%1").arg(w);
        const int squad = w % kSquads;
        inputs.push_back(agentRegistered(int(ids.size()), id, QStringLiteral("worker-%1").arg(w + 1), QStringLiteral("worker"),
                                         stateFor(w), coordinator, {top, QStringLiteral("scope-squad-%1").arg(squad)}));
        ids << id;
        parentOf.push_back(0);
        squadOf.push_back(squad);
    }
    for (int i = 0; ids.size() < kAgents; ++i) {
        const int worker = 1 + i % kWorkers;
        const int squad = squadOf[size_t(worker)];
        const QString id = QStringLiteral("agent-sub-%1").arg(i);
        inputs.push_back(agentRegistered(int(ids.size()), id, QStringLiteral("worker-%1.sub-%2").arg(worker).arg(i / kWorkers + 1),
                                         QStringLiteral("subagent"), stateFor(i + 31), ids[worker],
                                         {QStringLiteral("scope-squad-%1").arg(squad)}));
        ids << id;
        parentOf.push_back(worker);
        squadOf.push_back(squad);
    }
    std::vector<std::vector<int>> childrenOf(static_cast<size_t>(kAgents));
    std::vector<std::vector<int>> squadSubs(kSquads);
    for (int a = 1; a < kAgents; ++a) {
        childrenOf[size_t(parentOf[size_t(a)])].push_back(a);
        if (a > kWorkers)
            squadSubs[size_t(squadOf[size_t(a)])].push_back(a);
    }
    // Traffic: 40 % sub-agent → its worker, 30 % worker → one of its sub-agents, 15 % worker ↔
    // coordinator, 15 % sub-agent → a sub-agent of the same squad.
    auto pick = [&](const std::vector<int> &from) { return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(random)]; };
    std::uniform_int_distribution<int> anySub(kWorkers + 1, kAgents - 1), anyWorker(1, kWorkers), percent(0, 99);
    for (int m = 0; m < kMessages; ++m) {
        const qint64 t = kStartMs + 1000 + kTrafficSpanMs * m / kMessages;
        const int kind = percent(random);
        int from = 0, to = 0;
        if (kind < 40) {
            from = anySub(random);
            to = parentOf[size_t(from)];
        } else if (kind < 70) {
            from = anyWorker(random);
            to = pick(childrenOf[size_t(from)]);
        } else if (kind < 85) {
            from = anyWorker(random);
            to = 0;
            if (kind % 2)
                std::swap(from, to);
        } else {
            from = anySub(random);
            to = pick(squadSubs[size_t(squadOf[size_t(from)])]);
            if (to == from)
                to = parentOf[size_t(from)];
        }
        inputs.push_back(messageSent(m, ids[from], ids[to], t));
    }

    InspectorSession session;
    SelectionHub hub;
    TopologyPanel panel(&session, &hub);
    panel.resize(1600, 1000);
    panel.show();
    TopologyView *view = panel.view();
    QApplication::processEvents();

    std::printf("topology benchmark: %d agents, %d scopes, %d messages, panel %dx%d (view %dx%d), Qt %s\n\n", kAgents,
                kSquads + 1, kMessages, panel.width(), panel.height(), view->width(), view->height(), qVersion());
    std::printf("| %-50s | %8s | %8s | %8s | %8s | %8s | %8s |\n", "measurement (ms)", "wall avg", "wall p99", "wall max",
                "cpu avg", "cpu p99", "cpu max");
    std::printf("|%s|", std::string(52, '-').c_str());
    for (int i = 0; i < 6; ++i)
        std::printf("%s|", std::string(10, '-').c_str());
    std::printf("\n");

    // ---- store → topology update, and the first layout ------------------------------------
    SystemStore *store = session.store();
    store->apply(inputs);
    store->advanceTime(kStartMs + 1000 + kTrafficSpanMs); // health from states and activity, as the live clock would
    // The view syncs its graph here: 1,000 nodes, 100,000 messages folded into traffic edges.
    printRow(qPrintable(QStringLiteral("store change → topology sync (%1 agents, %2 msgs)").arg(kAgents).arg(kMessages)),
             {measure([&] { store->flushChanges(); })});
    settle(view);
    printRow("first layout, pool thread (cpu = that thread's)", {{view->lastLayoutMs(), view->lastLayoutMs()}});

    // ---- full layouts on request (Re-layout) -----------------------------------------------
    std::vector<Sample> compute, roundTrip;
    for (int i = 0; i < 10; ++i) {
        view->relayout();
        settle(view);
        compute.push_back({view->lastLayoutMs(), view->lastLayoutMs()});
        roundTrip.push_back({view->lastLayoutRoundTripMs(), 0});
    }
    printRow("full layout (Re-layout), pool thread", compute);
    printRow("full layout, snapshot → applied (wall only)", roundTrip);

    // ---- a live-like batch: 300 new messages in one ChangeSet, then a frame ---------------
    std::vector<Sample> batches;
    for (int b = 0; b < 20; ++b) {
        ModelInputs batch;
        for (int m = 0; m < 300; ++m) {
            const int from = anySub(random);
            batch.push_back(messageSent(kMessages + b * 300 + m, ids[from], ids[parentOf[size_t(from)]],
                                        kStartMs + 1000 + kTrafficSpanMs + b * 33));
        }
        store->apply(batch);
        batches.push_back(measure([&] {
            store->flushChanges();
            view->repaint();
        }));
    }
    printRow("300-message batch: sync + repaint (at fit)", batches);

    // ---- frames -----------------------------------------------------------------------------
    auto savePicture = [&](const char *name) {
        if (!pngDir.isEmpty())
            panel.grab().save(pngDir + QLatin1Char('/') + QLatin1String(name));
    };
    view->zoomToFit(false);
    settle(view);
    const double fit = view->zoom();
    printRow(qPrintable(QStringLiteral("pan, fit to view (zoom %1 %)").arg(fit * 100, 0, 'f', 1)), panFrames(view));
    printRow("still frame, fit to view", stillFrames(view));
    savePicture("topo-bench-fit.png");
    view->zoomToFit(false);
    printRow("zoom in and out from fit (+2 % per frame)", zoomFrames(view));

    view->focusAgent(QStringLiteral("worker-15")); // centre on a busy family, then 1:1
    settle(view);
    view->setZoom(0.5);
    printRow("pan at 50 %", panFrames(view));
    printRow("still frame at 50 %", stillFrames(view));
    savePicture("topo-bench-50.png");
    view->setZoom(1.0);
    printRow("pan at 1:1", panFrames(view));
    printRow("still frame at 1:1", stillFrames(view));
    savePicture("topo-bench-100.png");
    view->setZoom(1.0);
    printRow("zoom in and out from 1:1 (+2 % per frame)", zoomFrames(view));

    // ---- a flood between random pairs: many edges, a few thousand changed per frame ---------
    // Last, since it changes the traffic the rows above drew. Each batch is what a 30 Hz frame
    // of a 100,000 events/s flood brings; the repaint ranks the edges again.
    view->zoomToFit(false);
    settle(view);
    std::uniform_int_distribution<int> anyAgent(0, kAgents - 1);
    int next = kMessages + 20 * 300;
    const qint64 floodStart = kStartMs + 2000 + kTrafficSpanMs;
    auto randomPairs = [&](int count, qint64 t) {
        ModelInputs batch;
        for (int m = 0; m < count; ++m) {
            const int from = anyAgent(random);
            int to = anyAgent(random);
            if (to == from)
                to = (to + 1) % kAgents;
            batch.push_back(messageSent(next++, ids[from], ids[to], t));
        }
        store->apply(batch);
    };
    randomPairs(kAgents * 60, floodStart);
    store->flushChanges();
    view->repaint();
    std::vector<Sample> floodBatches;
    for (int b = 0; b < 20; ++b) {
        randomPairs(3000, floodStart + 1 + b * 33);
        floodBatches.push_back(measure([&] {
            store->flushChanges();
            view->repaint();
        }));
    }
    printRow(qPrintable(QStringLiteral("3,000 msgs, random pairs (+%1 before): sync+repaint").arg(kAgents * 60)), floodBatches);
    return 0;
}
