// mapi-screenshots: renders the window and every panel, in the light and the dark theme, into
// PNG files. Used by scripts/screenshots.sh (which starts the demo system first).
//
//   mapi-screenshots --out DIR (--connect URL [--wait S] | --trace FILE) [--inspect-message] [--export-progress]
//                    [--compare-with FILE] [--inspect-chain]
//   mapi-screenshots --out DIR (--connect URL [--wait S] | --trace FILE) --sizes 1024x700,1366x768,1920x1080
//       the whole window in its default layout at each size, light and dark:
//       window-<W>x<H>-<live|replay>-<light|dark>.png (docs/first-hour.md)
#include "MainWindow.h"
#include "controllers/ExportController.h"
#include "controllers/TraceController.h"
#include "controllers/ConnectionController.h"
#include "model/CausalChains.h"
#include "models/AlertModel.h"
#include "panels/AlertsPanel.h"
#include "panels/TopologyPanel.h"
#include "systems/SystemView.h"
#include "topology/GroupOverview.h"
#include "dialogs/IncidentDialog.h"
#include "dialogs/RunDiffDialog.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"

#include <QApplication>
#include <QTemporaryDir>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QSettings>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

#include <cstdio>

using namespace mapi;

static void settle(int ms)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms)
        QApplication::processEvents(QEventLoop::AllEvents, 20);
}

// A fresh window at each size (the default layout is sized when first shown), filled from the
// source, with a failed or late agent selected and inspected, shot in both themes.
// --fleet PREFIX: the views of a large system (issue 44) on a trace of tools/fleet-trace: the
// window, the topology as it opens (groups past 1,500 agents), as groups, with its most troubled
// group opened, the alert inbox with its storms and one listed, the timeline's folded lanes.
static int shootFleet(const QString &out, const QString &trace, const QString &prefix)
{
    ui::applyTheme(ui::Theme::Light);
    ui::MainWindow window;
    window.resize(1920, 1080); // the screen
    window.show();
    if (!window.traces()->openTrace(trace))
        return -1;
    while (window.session()->isLoadingTrace())
        settle(50);
    settle(3000); // the detectors' verdict, the header's and the overview's counts
    ui::SystemView *system = window.frontSystem();
    int written = 0;
    const auto save = [&](QWidget *w, const char *name) {
        w->grab().save(out + QLatin1Char('/') + prefix + QLatin1String(name) + QStringLiteral(".png"));
        ++written;
    };
    save(&window, "window");
    ui::TopologyPanel *topology = system->topology();
    const auto floated = [&](const char *dockName, const char *shot) {
        QDockWidget *dock = window.dock(QLatin1String(dockName));
        const bool wasFloating = dock->isFloating();
        dock->show();
        dock->setFloating(true);
        dock->resize(1100, 650);
        dock->raise();
        settle(400);
        save(dock->widget(), shot);
        dock->setFloating(wasFloating);
    };
    // The topology alone, floated large: as groups, then the most troubled group opened.
    topology->showGroups(true);
    settle(600);
    save(topology, "topology-groups");
    if (!topology->overview()->groups().empty()) {
        const ui::GroupOverview::Group first = topology->overview()->groups().front();
        topology->openGroup(first.agents, first.title);
        settle(1500); // the camera's animation
        save(topology, "topology-group-open");
    }
    // The inbox: the storms as rows, then the first listed.
    floated("alertsDock", "alerts");
    ui::AlertsPanel *alerts = system->alerts();
    const ui::AlertModel *model = alerts->model();
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->isGroupAt(row)) {
            alerts->selectKey(ui::AlertModel::groupRowKey(model->groupAt(row)));
            if (auto *list = alerts->findChild<QToolButton *>(QStringLiteral("alertExpand")))
                list->click();
            break;
        }
    floated("alertsDock", "alerts-listed");
    floated("timelineDock", "timeline");
    floated("agentsDock", "agents"); // counted by scope (past 300 agents), the most troubled first
    return written;
}

static int shootSizes(const QString &out, const QStringList &sizes, const QString &url, const QString &trace, int waitMs)
{
    int written = 0;
    for (const QString &text : sizes) {
        const QStringList wh = text.split(u'x');
        if (wh.size() != 2 || wh[0].toInt() < 640 || wh[1].toInt() < 480) {
            std::fprintf(stderr, "--sizes: %s is not WIDTHxHEIGHT\n", qPrintable(text));
            return -1;
        }
        QSettings().remove(QStringLiteral("layout")); // the default layout, not the last run's
        ui::applyTheme(ui::Theme::Light);
        ui::MainWindow window;
        window.resize(wh[0].toInt(), wh[1].toInt());
        window.show();
        if (!url.isEmpty()) {
            ClientOptions options;
            options.url = QUrl(url);
            window.connection()->connectTo(options, true);
            settle(waitMs);
        } else {
            if (!window.traces()->openTrace(trace))
                return -1;
            while (window.session()->isLoadingTrace())
                settle(50);
            settle(1500); // the detectors' first verdict
        }
        // The agent an operator would look at first: failed, else unresponsive or late.
        const Agent *pick = nullptr;
        for (const Health wanted : {Health::Failed, Health::Unresponsive, Health::Late})
            for (const Agent &a : window.session()->store()->agents())
                if (!pick && !a.unregistered && a.health == wanted)
                    pick = &a;
        if (pick)
            window.selection()->selectAgents({pick->id}, window.dock(QStringLiteral("agentsDock")));
        settle(600);
        const QString mode = url.isEmpty() ? QStringLiteral("replay") : QStringLiteral("live");
        for (const ui::Theme theme : {ui::Theme::Light, ui::Theme::Dark}) {
            ui::applyTheme(theme);
            for (QWidget *w : window.findChildren<QWidget *>())
                w->update();
            settle(400);
            const QString name = QStringLiteral("%1/window-%2-%3-%4.png")
                                     .arg(out, text, mode, theme == ui::Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light"));
            window.grab().save(name);
            ++written;
        }
    }
    ui::applyTheme(ui::Theme::Light);
    return written;
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("MAP Inspector screenshots")); // own settings, not the user's
    QApplication::setApplicationName(QStringLiteral("mapi-screenshots"));
    QCommandLineParser p;
    p.addOptions({{QStringLiteral("out"), QStringLiteral("Output folder."), QStringLiteral("DIR")},
                  {QStringLiteral("connect"), QStringLiteral("MAP server URL."), QStringLiteral("URL")},
                  {QStringLiteral("trace"), QStringLiteral("Trace file."), QStringLiteral("FILE")},
                  {QStringLiteral("wait"), QStringLiteral("Seconds to let a live system run first."), QStringLiteral("S"), QStringLiteral("8")},
                  {QStringLiteral("inspect-message"), QStringLiteral("Inspect the first message (its frame) instead of a worker.")},
                  {QStringLiteral("export-progress"), QStringLiteral("Also shoot the window during an export (a large trace), then cancel it.")},
                  {QStringLiteral("inspect-chain"), QStringLiteral("Inspect the message with the longest causal chain, its Chain tab shown.")},
                  {QStringLiteral("compare-with"), QStringLiteral("Also shoot File → Compare with another run against FILE (run-diff.png)."), QStringLiteral("FILE")},
                  {QStringLiteral("fleet"), QStringLiteral("Only the views of a large system (--trace of tools/fleet-trace), files named PREFIX*.png."), QStringLiteral("PREFIX")},
                  {QStringLiteral("sizes"), QStringLiteral("Only the whole window, at each WxH (comma-separated), light and dark."), QStringLiteral("LIST")},
                  {QStringLiteral("incident"), QStringLiteral("Also shoot File → Export incident… after a preview (incident-export.png), write the bundle "
                                                              "to DIR/incident.jsonl.zst, its pictures, and the bundle opened (incident-open.png).")}});
    p.process(app);
    const QString out = p.value(QStringLiteral("out"));
    if (out.isEmpty() || (!p.isSet(QStringLiteral("connect")) && !p.isSet(QStringLiteral("trace")))) {
        std::fprintf(stderr, "usage: mapi-screenshots --out DIR (--connect URL | --trace FILE)\n");
        return 1;
    }
    QDir().mkpath(out);
    if (p.isSet(QStringLiteral("fleet"))) {
        const int written = shootFleet(out, p.value(QStringLiteral("trace")), p.value(QStringLiteral("fleet")));
        if (written < 0)
            return 2;
        std::printf("%d screenshots in %s\n", written, qPrintable(out));
        return 0;
    }
    if (p.isSet(QStringLiteral("sizes"))) {
        const int written = shootSizes(out, p.value(QStringLiteral("sizes")).split(u',', Qt::SkipEmptyParts), p.value(QStringLiteral("connect")),
                                       p.value(QStringLiteral("trace")), int(p.value(QStringLiteral("wait")).toDouble() * 1000));
        if (written < 0)
            return 2;
        std::printf("%d screenshots in %s\n", written, qPrintable(out));
        return 0;
    }

    ui::applyTheme(ui::Theme::Light);
    ui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    if (p.isSet(QStringLiteral("connect"))) {
        ClientOptions options;
        options.url = QUrl(p.value(QStringLiteral("connect")));
        window.connection()->connectTo(options, true);
        settle(int(p.value(QStringLiteral("wait")).toDouble() * 1000));
    } else {
        if (!window.traces()->openTrace(p.value(QStringLiteral("trace"))))
            return 2;
        while (window.session()->isLoadingTrace())
            settle(50);
        if (!window.session()->replay())
            return 2;
    }
    settle(500);
    if (p.isSet(QStringLiteral("inspect-chain")) && !window.session()->store()->messages().empty()) {
        // The message in the middle of the longest chain: causes above it, effects below.
        CausalChains chains(*window.session()->store());
        chains.update();
        int best = -1;
        size_t bestLength = 0;
        for (size_t row = 0; row < window.session()->store()->messages().size(); ++row) {
            const size_t length = chains.chainTo(int(row)).size();
            if (length > bestLength) {
                bestLength = length;
                best = int(row);
            }
        }
        const std::vector<int> chain = chains.chainTo(best);
        window.selection()->focus(ui::SelectionHub::Kind::Message, QString::number(chain[chain.size() / 2]));
        if (auto *tabs = window.findChild<QTabWidget *>(QStringLiteral("inspectorTabs")))
            tabs->setCurrentIndex(tabs->count() - 1);
    } else if (p.isSet(QStringLiteral("inspect-message")) && !window.session()->store()->messages().empty()) {
        window.selection()->focus(ui::SelectionHub::Kind::Message, QStringLiteral("0"));
    } else {
        // Select a worker so the inspector and the selection highlights have something to show.
        for (const Agent &a : window.session()->store()->agents())
            if (a.role == QLatin1String("worker") && !a.unregistered) {
                window.selection()->selectAgents({a.id});
                break;
            }
    }
    settle(500);

    int written = 0;
    for (const ui::Theme theme : {ui::Theme::Light, ui::Theme::Dark}) {
        ui::applyTheme(theme);
        for (QWidget *w : window.findChildren<QWidget *>())
            w->update();
        settle(400);
        const QString suffix = theme == ui::Theme::Dark ? QStringLiteral("-dark") : QStringLiteral("-light");
        window.grab().save(out + QStringLiteral("/window") + suffix + QStringLiteral(".png"));
        ++written;
        for (QDockWidget *dock : window.findChildren<QDockWidget *>()) {
            // Float each panel at a readable size, shoot it, and put it back.
            const bool wasFloating = dock->isFloating();
            dock->show();
            dock->setFloating(true);
            dock->resize(1100, 650);
            dock->raise();
            settle(300);
            QString name = dock->objectName();
            name.remove(QStringLiteral("Dock"));
            dock->widget()->grab().save(out + QLatin1Char('/') + name + suffix + QStringLiteral(".png"));
            ++written;
            dock->setFloating(wasFloating);
        }
        QWidget *center = window.centralWidget();
        center->grab().save(out + QStringLiteral("/topology") + suffix + QStringLiteral(".png"));
        ++written;
    }
    if (p.isSet(QStringLiteral("export-progress"))) {
        QTemporaryDir dir;
        window.exports()->exportTo(ui::ExportController::Kind::ChromeTrace, dir.filePath(QStringLiteral("trace.json")));
        settle(700);
        window.grab().save(out + QStringLiteral("/window-exporting.png"));
        ++written;
        window.exports()->cancelExport();
        settle(100);
    }
    if (p.isSet(QStringLiteral("compare-with"))) {
        ui::applyTheme(ui::Theme::Light);
        ui::RunDiffDialog *dialog = window.exports()->compareRuns(p.value(QStringLiteral("compare-with")));
        dialog->resize(1100, 760);
        dialog->compare();
        while (dialog->isComparing())
            settle(50);
        settle(300);
        dialog->grab().save(out + QStringLiteral("/run-diff.png"));
        ++written;
        dialog->close();
    }
    if (p.isSet(QStringLiteral("incident"))) {
        ui::applyTheme(ui::Theme::Light);
        ReplayController *replay = window.session()->replay();
        const qint64 from = replay ? replay->startMs() + (replay->endMs() - replay->startMs()) / 4 : 0;
        const qint64 to = replay ? replay->endMs() - (replay->endMs() - replay->startMs()) / 4 : 0;
        if (replay)
            replay->seek(to);
        const SystemStore *store = window.session()->store();
        for (const Agent &a : store->agents())
            if (a.name.contains(QLatin1String("planner"), Qt::CaseInsensitive)) {
                window.selection()->selectAgents({a.id});
                break;
            }
        ui::IncidentDialog *dialog = window.exports()->exportIncident();
        if (replay)
            dialog->setRange(from, to);
        dialog->setNote(QStringLiteral("The planner re-requests the review twice after the handoff; look at the second TASK_REQUEST."));
        dialog->setRedaction({QStringLiteral("content"), QStringLiteral("prompt")}, {QStringLiteral("[\\w.+-]+@[\\w-]+\\.[\\w.]+"), QStringLiteral("acct-\\d+")});
        dialog->preview();
        while (dialog->isBusy())
            settle(50);
        settle(200);
        dialog->grab().save(out + QStringLiteral("/incident-export.png"));
        ++written;
        const QString bundle = out + QStringLiteral("/incident.jsonl.zst");
        bool done = false;
        QObject::connect(dialog, &ui::IncidentDialog::exported, dialog, [&done](bool ok, const QString &detail) {
            done = true;
            if (!ok)
                std::fprintf(stderr, "incident export failed: %s\n", qPrintable(detail));
        });
        dialog->exportTo(bundle);
        while (!done)
            settle(50);
        dialog->close();
        ui::MainWindow second;
        second.resize(1600, 1000);
        second.show();
        second.traces()->openTrace(bundle);
        while (second.session()->isLoadingTrace())
            settle(50);
        settle(700);
        if (second.traces()->openIncident())
            for (const BundlePicture &picture : second.traces()->openIncident()->content.pictures) {
                QFile file(out + QStringLiteral("/incident-picture-%1.png").arg(picture.view));
                if (file.open(QIODevice::WriteOnly))
                    file.write(picture.png);
            }
        if (auto *info = second.findChild<ui::IncidentInfoDialog *>()) {
            info->grab().save(out + QStringLiteral("/incident-open.png"));
            ++written;
        }
    }
    std::printf("%d screenshots in %s\n", written, qPrintable(out));
    return 0;
}
