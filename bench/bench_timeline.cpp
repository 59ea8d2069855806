// Frame times of the timeline panel on large synthetic systems.
//
// Data: 1,000 agents (--agents N) in 10 team scopes (under one "org" scope), each team a lead
// and its workers; N messages spread evenly over 10 minutes with ±20 ms of jitter (so some arrive out
// of order), 30 % heartbeats, 10 % task requests, 5 % error reports, 5 % steering, the rest
// plain traffic; 80 % of messages stay within the sender's team. Plus 5,000 state changes,
// 40 operator actions and 5 gaps. The store is filled through SystemStore::apply, the panel is
// built over it (that is the index build), then laid out offscreen at 1600×400.
//
// A frame = one view operation (pan, zoom, lane scroll) plus one full repaint of the view's
// viewport into an image. Printed: average, 99th percentile and maximum wall time over 200
// frames, and the average process CPU time per frame (on a busy machine the wall maxima include
// preemption).
//
// Usage: bench_timeline [--agents N] [--messages M] [--frames DIR]
//   DIR: PNGs of the panel at each measured window. Without --messages: 100,000 messages (all
//   operations), then 1,000,000 (scrolling only); with it, M messages and every operation.
// Runs on the offscreen platform unless QT_QPA_PLATFORM says otherwise.
#include "panels/TimelinePanel.h"
#include "common/VectorStateGuard.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QScrollBar>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

using namespace mapi;
using namespace mapi::ui;

namespace {

int kAgents = 1000; // --agents
constexpr int kTeams = 10;
constexpr qint64 kSpanMs = 10 * 60 * 1000;
constexpr qint64 kStartMs = 1795252123000;
constexpr int kStateChanges = 5000;
constexpr int kFrames = 200;

QString agentId(int i)
{
    return QStringLiteral("agent-%1").arg(i, kAgents > 10000 ? 6 : 5, 10, QLatin1Char('0'));
}

QString teamId(int team)
{
    return QStringLiteral("team-%1").arg(team);
}

// The frame an agent.state.changed event arrives in, as the official server sends it.
QByteArray stateFrame(const QString &eventId, const QString &agent, const QString &state, qint64 timeMs)
{
    return QStringLiteral("{\"jsonrpc\":\"2.0\",\"method\":\"map/event\",\"params\":{\"event\":{\"type\":"
                          "\"agent.state.changed\",\"id\":\"%1\",\"timestamp\":%2,\"data\":{\"agent\":{\"id\":\"%3\","
                          "\"state\":\"%4\"}}}}}")
        .arg(eventId)
        .arg(timeMs)
        .arg(agent, state)
        .toUtf8();
}

void fillStore(SystemStore &store, int messageCount)
{
    std::mt19937 random(42);
    ModelInputs inputs;

    ScopesSnapshot scopes;
    scopes.timeMs = kStartMs;
    ScopeRecord org;
    org.id = QStringLiteral("org");
    org.name = QStringLiteral("org");
    scopes.data.scopes.push_back(org);
    for (int team = 0; team < kTeams; ++team) {
        ScopeRecord scope;
        scope.id = teamId(team);
        scope.name = teamId(team);
        scope.parentId = QStringLiteral("org");
        scopes.data.scopes.push_back(scope);
    }
    inputs.push_back(scopes);

    AgentsSnapshot agents;
    agents.timeMs = kStartMs;
    const int perTeam = kAgents / kTeams;
    std::vector<QStringList> members(kTeams);
    for (int i = 0; i < kAgents; ++i) {
        const int team = i / perTeam;
        const bool lead = i % perTeam == 0;
        AgentRecord a;
        a.id = agentId(i);
        a.name = lead ? QStringLiteral("lead-%1").arg(team) : QStringLiteral("worker-%1.%2").arg(team).arg(i % perTeam);
        a.role = lead ? QStringLiteral("coordinator") : QStringLiteral("worker");
        a.state = QStringLiteral("idle");
        a.parentId = lead ? QString() : agentId(team * perTeam);
        a.registeredAtMs = kStartMs;
        agents.data.agents.push_back(a);
        members[size_t(team)] << a.id;
    }
    inputs.push_back(agents);
    for (int team = 0; team < kTeams; ++team)
        inputs.push_back(MembersSnapshot{SnapshotMembers{teamId(team), members[size_t(team)]}, kStartMs});
    store.apply(inputs);
    inputs.clear();

    const Json heartbeat = {{"type", "HEARTBEAT"}, {"status", "ACTIVE"}};
    const Json error = {{"type", "ERROR_REPORT"}, {"severity", "WARNING"}, {"message", "retrying"}};
    const Json steering = {{"type", "STEERING"}, {"content", "focus on the failing test"}};
    const Json chatter = {{"type", "chatter"}, {"text", "ok"}};
    std::uniform_int_distribution<int> anyAgent(0, kAgents - 1);
    std::uniform_int_distribution<int> inTeam(0, perTeam - 1);
    std::uniform_int_distribution<int> percent(0, 99);
    std::uniform_int_distribution<int> jitter(-20, 20);

    const QString states[] = {QStringLiteral("busy"), QStringLiteral("idle"), QStringLiteral("custom:thinking"),
                              QStringLiteral("suspended"), QStringLiteral("busy")};
    const int stateEvery = std::max(1, messageCount / kStateChanges);
    int stateChanges = 0;
    for (int i = 0; i < messageCount; ++i) {
        const qint64 t = kStartMs + qint64(i) * kSpanMs / messageCount + jitter(random);
        const int sender = anyAgent(random);
        const int senderTeam = sender / perTeam;
        const int roll = percent(random);
        int recipient = roll < 30 ? senderTeam * perTeam // heartbeats go to the lead
                                  : (percent(random) < 80 ? senderTeam * perTeam + inTeam(random) : anyAgent(random));
        if (recipient == sender)
            recipient = (recipient + 1) % kAgents;
        MapEvent e;
        e.eventId = QStringLiteral("e%1").arg(i);
        e.type = QStringLiteral("message.sent");
        e.kind = EventKind::MessageSent;
        e.timestampMs = t;
        e.sourceAgentId = agentId(sender);
        MessageRecord m;
        m.id = QStringLiteral("m%1").arg(i);
        m.from = agentId(sender);
        m.to = agentId(recipient).toStdString();
        m.timestampMs = t;
        if (roll < 30)
            m.setPayload(heartbeat);
        else if (roll < 40)
            m.setPayload({{"type", "TASK_REQUEST"}, {"task_id", QStringLiteral("t%1").arg(i).toStdString()}});
        else if (roll < 45)
            m.setPayload(error);
        else if (roll < 50)
            m.setPayload(steering);
        else
            m.setPayload(chatter);
        e.message = std::move(m);
        inputs.push_back(EventInput{std::move(e), t});

        if (i % stateEvery == 0 && stateChanges < kStateChanges) {
            MapEvent s;
            s.eventId = QStringLiteral("s%1").arg(stateChanges);
            s.type = QStringLiteral("agent.state.changed");
            s.kind = EventKind::AgentStateChanged;
            s.timestampMs = t;
            s.agentId = agentId(anyAgent(random));
            AgentRecord record;
            record.id = s.agentId;
            record.state = states[stateChanges % 5];
            s.agent = record;
            s.rawFrame = stateFrame(s.eventId, s.agentId, *record.state, t);
            inputs.push_back(EventInput{std::move(s), t});
            ++stateChanges;
        }
        if (i % (messageCount / 40) == 0) {
            ActionUpdate action;
            action.step = ActionUpdate::Step::Created;
            action.action.id = QStringLiteral("a%1").arg(i);
            action.action.kind = ActionKind::Suspend;
            action.action.agentId = agentId(anyAgent(random));
            action.timeMs = t;
            inputs.push_back(action);
        }
        if (i % (messageCount / 5) == messageCount / 10) {
            Gap gap;
            gap.timeMs = t;
            gap.fromSequence = i;
            gap.toSequence = i + 10;
            gap.detail = QStringLiteral("synthetic");
            inputs.push_back(GapInput{gap});
        }
        if (inputs.size() >= 20000) {
            store.apply(inputs);
            inputs.clear();
        }
    }
    store.apply(inputs);
    store.advanceTime(kStartMs + kSpanMs);
    store.flushChanges();
}

struct FrameStats
{
    double averageMs = 0;
    double p99Ms = 0;
    double maxMs = 0;
    double cpuMs = 0;   // process CPU time per frame, average
};

// Runs `step` then repaints the viewport, kFrames times.
FrameStats measure(TimelineView *view, const std::function<void(int)> &step)
{
    QImage image(view->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    FrameStats stats;
    double total = 0;
    QElapsedTimer timer;
    std::vector<double> frames;
    const std::clock_t cpuStart = std::clock();
    for (int i = 0; i < kFrames; ++i) {
        timer.start();
        step(i);
        view->viewport()->render(&image);
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        total += ms;
        frames.push_back(ms);
        stats.maxMs = std::max(stats.maxMs, ms);
    }
    std::sort(frames.begin(), frames.end());
    stats.p99Ms = frames[std::min(frames.size() - 1, size_t(double(frames.size()) * 0.99))];
    stats.averageMs = total / kFrames;
    stats.cpuMs = double(std::clock() - cpuStart) * 1000.0 / CLOCKS_PER_SEC / kFrames;
    return stats;
}

void printRow(int messages, const char *window, const char *operation, int frames, const FrameStats &stats)
{
    std::printf("| %9d | %-14s | %-31s | %6d | %8.2f | %8.2f | %8.2f | %8.2f |\n", messages, window, operation, frames,
                stats.averageMs, stats.p99Ms, stats.maxMs, stats.cpuMs);
    std::fflush(stdout);
}

void printRow(int messages, const char *window, const char *operation, const FrameStats &stats)
{
    printRow(messages, window, operation, kFrames, stats);
}

void saveFrame(const QString &dir, TimelinePanel &panel, const QString &name)
{
    if (!dir.isEmpty())
        panel.grab().save(QDir(dir).filePath(name));
}

void run(int messageCount, bool withZoom, const QString &framesDir)
{
    InspectorSession session;
    SelectionHub hub;
    QElapsedTimer timer;
    timer.start();
    fillStore(*session.store(), messageCount);
    const double fillSeconds = double(timer.elapsed()) / 1000;

    // The index is built in slices from the event loop (the window stays responsive): the
    // total and the longest slice.
    timer.start();
    TimelinePanel panel(&session, &hub);
    double longestSliceMs = double(timer.nsecsElapsed()) / 1e6;
    TimelineView *view = panel.view();
    QElapsedTimer slice;
    while (view->index().messages().size() < session.store()->messages().size()) {
        slice.start();
        QApplication::processEvents();
        longestSliceMs = std::max(longestSliceMs, double(slice.nsecsElapsed()) / 1e6);
    }
    const double indexMs = double(timer.nsecsElapsed()) / 1e6;
    panel.resize(1600, 400);
    panel.show();
    QApplication::processEvents();
    size_t marks = 0;
    for (int a = 0; a < view->index().laneCount(); ++a)
        marks += view->index().stateMarks(a).size();
    std::printf("\n%d agents, %d messages, %zu state marks, %zu actions, %zu gaps: store filled in %.1f s, "
                "index built in %.0f ms (longest slice %.0f ms); panel 1600×400, plot %d×%d px\n\n",
                view->index().laneCount(), int(view->index().messages().size()), marks, view->index().actions().size(),
                view->index().gaps().size(), fillSeconds, indexMs, longestSliceMs, view->plotRect().width(),
                view->plotRect().height());
    std::printf("| %9s | %-14s | %-31s | %6s | %8s | %8s | %8s | %8s |\n", "messages", "window", "operation", "frames",
                "avg ms", "p99 ms", "max ms", "cpu ms");
    std::printf("|-----------|----------------|---------------------------------|--------|----------|----------|----------|----------|\n");

    const double middle = double(kStartMs + kSpanMs / 2);
    const QString tag = messageCount >= 1000000 ? QStringLiteral("1m") : QStringLiteral("%1k").arg(messageCount / 1000);

    // A 10 s window in the middle of the data.
    auto tenSeconds = [&] { view->showTimeRange(middle - 5000, middle + 5000); };
    tenSeconds();
    saveFrame(framesDir, panel, QStringLiteral("timeline-%1-10s.png").arg(tag));
    printRow(messageCount, "10 s", "scroll (pan 5 % per frame)",
             measure(view, [&](int) { view->panByPixels(view->axis().width * 0.05); }));
    if (withZoom) {
        tenSeconds();
        printRow(messageCount, "10 s", "zoom (x1.15, in 10 / out 10)",
                 measure(view, [&](int i) { view->zoomBy((i / 10) % 2 ? 1 / 1.15 : 1.15); }));
        tenSeconds();
        printRow(messageCount, "10 s", "lane scroll (3 lanes per frame)", measure(view, [&](int i) {
                     QScrollBar *bar = view->verticalScrollBar();
                     bar->setValue(bar->value() + ((i / 50) % 2 ? -66 : 66));
                 }));
    }

    // Everything: 10 minutes across the plot.
    auto everything = [&] {
        view->setFollowLive(false);
        view->showAll();
    };
    everything();
    saveFrame(framesDir, panel, QStringLiteral("timeline-%1-all.png").arg(tag));
    printRow(messageCount, "all (10 min)", "scroll (pan 5 %, 10 each way)",
             measure(view, [&](int i) { view->panByPixels(view->axis().width * ((i / 10) % 2 ? -0.05 : 0.05)); }));
    if (withZoom) {
        everything();
        printRow(messageCount, "all (10 min)", "zoom (x1.15, in 10 / out 10)",
                 measure(view, [&](int i) { view->zoomBy((i / 10) % 2 ? 1 / 1.15 : 1.15); }));
        // Every group collapsed into one aggregated lane each (merged lanes).
        view->collapseAll();
        everything();
        saveFrame(framesDir, panel, QStringLiteral("timeline-%1-all-collapsed.png").arg(tag));
        printRow(messageCount, "all, collapsed", "scroll (pan 5 %, 10 each way)",
                 measure(view, [&](int i) { view->panByPixels(view->axis().width * ((i / 10) % 2 ? -0.05 : 0.05)); }));
        view->expandAll();

        // Live: batches of 1,000 new messages arriving while following (store apply excluded).
        tenSeconds();
        view->setFollowLive(true);
        SystemStore *store = session.store();
        int next = messageCount;
        std::mt19937 random(7);
        std::uniform_int_distribution<int> anyAgent(0, kAgents - 1);
        QImage image(view->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        FrameStats live;
        double cpuTotal = 0;
        constexpr int kBatches = 20;
        for (int b = 0; b < kBatches; ++b) {
            ModelInputs batch;
            for (int k = 0; k < 1000; ++k, ++next) {
                const qint64 t = kStartMs + kSpanMs + qint64(next - messageCount) * 10;
                MapEvent e;
                e.eventId = QStringLiteral("e%1").arg(next);
                e.type = QStringLiteral("message.sent");
                e.kind = EventKind::MessageSent;
                e.timestampMs = t;
                MessageRecord m;
                m.id = QStringLiteral("m%1").arg(next);
                m.from = agentId(anyAgent(random));
                m.to = agentId(anyAgent(random)).toStdString();
                m.timestampMs = t;
                m.setPayload({{"type", "chatter"}});
                e.message = std::move(m);
                batch.push_back(EventInput{std::move(e), t});
            }
            store->apply(batch);
            timer.start();
            const std::clock_t cpuStart = std::clock();
            store->flushChanges(); // changed() → the view ingests the batch
            view->viewport()->render(&image);
            const double ms = double(timer.nsecsElapsed()) / 1e6;
            cpuTotal += double(std::clock() - cpuStart) * 1000.0 / CLOCKS_PER_SEC;
            live.averageMs += ms / kBatches;
            live.maxMs = std::max(live.maxMs, ms);
            live.p99Ms = live.maxMs; // 20 batches: the 99th percentile is the maximum
        }
        live.cpuMs = cpuTotal / kBatches;
        printRow(messageCount, "live, 10 s", "ingest 1,000 new msgs + frame", kBatches, live);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    installVectorStateGuard(); // as the application does
    QString framesDir;
    const QStringList args = QApplication::arguments();
    if (const int at = int(args.indexOf(QStringLiteral("--frames"))); at >= 0 && at + 1 < args.size()) {
        framesDir = args.at(at + 1);
        QDir().mkpath(framesDir);
    }
    std::printf("Timeline frame times: one view operation + one full repaint of the view (wall ms: average, "
                "maximum; process CPU ms per frame)\n");
    if (const int at = int(args.indexOf(QStringLiteral("--agents"))); at >= 0)
        kAgents = std::max(100, args.value(at + 1).toInt() / 100 * 100); // whole teams
    if (const int at = int(args.indexOf(QStringLiteral("--messages"))); at >= 0) {
        run(std::max(100000, args.value(at + 1).toInt()), true, framesDir);
        return 0;
    }
    run(100000, true, framesDir);
    run(1000000, false, framesDir);
    return 0;
}
