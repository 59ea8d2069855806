// The views of a large system (issue 44), on the realistic fleet of tools/fleet-trace (by default
// 10,000 agents, 25 teams, 411,000 events; a team silent, another's dependency failed):
//
//   bench_fleet_views [--agents N] [--frames F]
//
// Prints, in milliseconds of the GUI thread:
// - topology groups: the first frame after switching to groups (its counting included), then
//   the refreshes (once a second while shown; the message flows counted in 3 ms parts) and the
//   frames (a repaint while the mouse moves over the groups);
// - the graph opened on the largest troubled group: its first frame, then frames zoomed in with
//   the minimap shown, while panning and after a selection (the minimap drawn again);
// - timeline: the first frame after "collapse all" (the folded lanes' merge starts), then the
//   frames that follow while the folded lanes fill (60,000 times a paint), then at rest.
// Offscreen (QT_QPA_PLATFORM=offscreen), 1600×1000.
#include "FleetTrace.h"

#include "model/SystemStore.h"
#include "panels/TopologyPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"
#include "timeline/TimelineView.h"
#include "topology/GroupOverview.h"
#include "topology/TopologyView.h"
#include "trace/TraceLoader.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

using namespace mapi;
using namespace mapi::ui;

namespace {

struct Figures
{
    double p50 = 0, p99 = 0, max = 0;
};

Figures figures(std::vector<double> ms)
{
    if (ms.empty())
        return {};
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)], ms.back()};
}

double timed(const std::function<void()> &work)
{
    QElapsedTimer t;
    t.start();
    work();
    return double(t.nsecsElapsed()) / 1e6;
}

void row(const char *what, const Figures &f, size_t n)
{
    std::printf("| %-52s | %6.1f | %6.1f | %6.1f | %5zu |\n", what, f.p50, f.p99, f.max, n);
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    applyTheme(Theme::Light);
    int agents = 10000, frames = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        const QByteArray flag = argv[i];
        if (flag == "--agents")
            agents = std::atoi(argv[i + 1]);
        else if (flag == "--frames")
            frames = std::atoi(argv[i + 1]);
    }
    QTemporaryDir dir;
    fleet::FleetOptions options;
    options.agents = agents;
    const QString path = dir.filePath(QStringLiteral("fleet.jsonl.zst"));
    const auto fleet = fleet::writeFleetTrace(path, options);
    if (!fleet) {
        std::fprintf(stderr, "%s\n", qPrintable(fleet.error()));
        return 1;
    }
    InspectorSession session;
    SelectionHub hub;
    TraceLoadOptions load;
    load.readerThread = false;
    const TraceLoadResult loaded = loadTraceInto(*session.store(), path, load);
    if (!loaded.ok) {
        std::fprintf(stderr, "%s\n", qPrintable(loaded.error));
        return 1;
    }
    session.store()->advanceTime(loaded.lastTimeMs);
    session.store()->flushChanges();
    std::printf("fleet: %d agents, %d teams, %lld events, %lld messages\n\n", fleet->agents, fleet->teams,
                static_cast<long long>(fleet->events), static_cast<long long>(fleet->messages));
    std::printf("| %-52s | %6s | %6s | %6s | %5s |\n|---|---:|---:|---:|---:|\n", "GUI thread, ms", "p50", "p99", "max", "n");

    // ---- topology groups ----
    TopologyPanel panel(&session, &hub);
    panel.resize(1600, 1000);
    panel.show();
    QCoreApplication::processEvents();
    panel.showGroups(false);
    QCoreApplication::processEvents();
    GroupOverview *overview = panel.overview();
    const double first = timed([&] {
        panel.showGroups(true); // its showEvent counts
        overview->repaint();
    });
    row("topology: first frame after switching to groups", {first, first, first}, 1);
    std::vector<double> refreshes;
    size_t counted = 0;
    for (int i = 0; i < 1000; ++i) {
        refreshes.push_back(timed([&] { overview->refresh(); }));
        if (overview->countedMessageRows() == counted && i > 2)
            break;
        counted = overview->countedMessageRows();
    }
    row("topology groups: refresh (counting flows meanwhile)", figures(refreshes), refreshes.size());
    std::vector<double> paints;
    const auto &groups = overview->groups();
    for (int i = 0; i < frames && !groups.empty(); ++i) {
        const QPointF at = groups[size_t(i) % groups.size()].centre;
        QMouseEvent move(QEvent::MouseMove, at, overview->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(overview, &move);
        paints.push_back(timed([&] { overview->repaint(); }));
    }
    row("topology groups: frame (hover moving over the groups)", figures(paints), paints.size());
    const double open = timed([&] {
        panel.openGroup(groups.front().agents, groups.front().title);
        panel.view()->repaint();
    });
    row("topology: first frame after opening the largest troubled group", {open, open, open}, 1);
    // Zoomed in on it, the minimap shows: drawn from its image while the camera moves, drawn
    // again (a pass over the 10,000 agents) when the selection changes.
    TopologyView *view = panel.view();
    QElapsedTimer settling; // the camera's animation to the group
    settling.start();
    while (settling.elapsed() < 1000 || !view->isSettled())
        QCoreApplication::processEvents();
    std::vector<double> pans, reselections;
    for (int i = 0; i < frames; ++i)
        pans.push_back(timed([&] {
            view->panBy(QPointF(i % 2 ? -40 : 40, 0));
            view->repaint();
        }));
    const QStringList opened = groups.front().agents;
    for (int i = 0; i < frames; ++i)
        reselections.push_back(timed([&] {
            hub.selectAgents({opened[i % opened.size()]});
            view->repaint();
        }));
    if (view->minimapRect().isNull())
        std::fprintf(stderr, "the minimap was not shown\n");
    row("topology, zoomed in: frame while panning (minimap shown)", figures(pans), pans.size());
    row("topology, zoomed in: frame after a selection (minimap drawn again)", figures(reselections), reselections.size());

    // ---- timeline ----
    TimelineView timeline(session.store(), &hub);
    timeline.resize(1600, 600);
    timeline.show();
    QCoreApplication::processEvents();
    timeline.expandAll();
    timeline.repaint();
    const double collapse = timed([&] {
        timeline.collapseAll();
        timeline.repaint();
    });
    row("timeline: first frame after collapse all", {collapse, collapse, collapse}, 1);
    std::vector<double> filling, rest;
    for (int i = 0; i < frames; ++i) {
        const double ms = timed([&] { timeline.repaint(); });
        (i < frames / 2 ? filling : rest).push_back(ms);
    }
    row("timeline: frames while folded lanes fill (first half)", figures(filling), filling.size());
    row("timeline: frames after (second half)", figures(rest), rest.size());
    return 0;
}
