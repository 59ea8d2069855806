// MainWindow: its actions, docks, menus and status bar (built once), and the status bar kept up to date.
#include "MainWindow.h"

#include "dialogs/ActionDialogs.h"
#include "dialogs/CommandPalette.h"
#include "controllers/AlertDeliveryController.h"
#include "controllers/ConnectionController.h"
#include "controllers/ControlController.h"
#include "controllers/ExportController.h"
#include "controllers/MetricsController.h"
#include "controllers/TraceController.h"
#include "dialogs/ConnectDialog.h"
#include "dialogs/ConnectionProfiles.h"
#include "dialogs/RecoverDialog.h"
#include "dialogs/IncidentDialog.h"
#include "dialogs/RunDiffDialog.h"
#include "panels/WelcomePage.h"
#include "panels/ActionsPanel.h"
#include "panels/AlertsPanel.h"
#include "alerts/AlertMonitor.h"
#include "alerts/AlertWebhook.h"
#include "common/AlertNotifier.h"
#include "dialogs/SupervisionDialog.h"
#include "panels/AgentsPanel.h"
#include "panels/HealthPanel.h"
#include "panels/InspectorPanel.h"
#include "panels/ProblemsPanel.h"
#include "panels/ProcessOutputPanel.h"
#include "panels/ScopesPanel.h"
#include "panels/TasksPanel.h"
#include "panels/ConversationsPanel.h"
#include "panels/AgentWorkPanel.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "common/PictureExport.h"
#include "common/TimeText.h"
#include "replay/ReplayBar.h"
#include "replay/SampleTrace.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "systems/SystemView.h"
#include "systems/SystemsPanel.h"
#include "style/Theme.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"
#include "trace/ModelExport.h"
#include "trace/Otlp.h"
#include "common/Redaction.h"
#include "trace/TraceTimeline.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <QAbstractScrollArea>
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QAbstractItemView>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace mapi::ui {

// ---- construction ----------------------------------------------------------------------

void MainWindow::buildActions()
{
    auto make = [this](const char *name, const QString &text, const QKeySequence &key) {
        auto *a = new QAction(text, this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setShortcutContext(Qt::ApplicationShortcut);
        addAction(a);
        return a;
    };
    // Connect, open a trace and the sample open a system beside the one in front when it
    // shows something (MainWindowSystems.cpp); the other actions on a system are its own
    // (SystemView) and join the window while it is in front.
    m_connectAction = make("connect", tr("&Connect…"), QKeySequence(Qt::CTRL | Qt::Key_K));
    m_openTraceAction = make("openTrace", tr("&Open trace…"), QKeySequence::Open);
    m_openSampleAction = make("openSampleTrace", tr("Open the &sample trace"), QKeySequence());
    m_closeSystemAction = make("closeSystem", tr("C&lose system"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W));
    m_closeSystemAction->setToolTip(tr("End this system's connection (or close its trace) and remove it from the window"));
    m_startTapAction = make("startTap", tr("Start a &tap…"), QKeySequence());
    m_startTapAction->setToolTip(tr("Relay and record every agent's and client's traffic to a MAP server, and observe it "
                                    "through the relay"));
    m_nextSystemAction = make("nextSystem", tr("&Next system"), QKeySequence(Qt::CTRL | Qt::Key_PageDown));
    m_previousSystemAction = make("previousSystem", tr("&Previous system"), QKeySequence(Qt::CTRL | Qt::Key_PageUp));
    // The focused message's causal chain, walked from the keyboard (InspectorPanel's Chain tab).
    const struct { const char *name; QString text; int key; int step; } walks[] = {
        {"goToCause", tr("Go to its &cause"), Qt::Key_Up, 0},
        {"goToEffect", tr("Go to its first &effect"), Qt::Key_Down, 1},
        {"goToPreviousSibling", tr("Previous effect of the same cause"), Qt::Key_Left, 2},
        {"goToNextSibling", tr("Next effect of the same cause"), Qt::Key_Right, 3},
    };
    for (const auto &w : walks) {
        QAction *a = make(w.name, w.text, QKeySequence(Qt::ALT | w.key));
        connect(a, &QAction::triggered, this, [this, step = w.step] {
            InspectorPanel *inspector = m_front->inspector();
            const bool moved = step == 0 ? inspector->goToCause()
                : step == 1              ? inspector->goToEffect()
                                         : inspector->goToSibling(step == 2 ? -1 : 1);
            if (!moved)
                statusBar()->showMessage(tr("No further link in this causal chain"), 3000);
        });
        m_chainActions << a;
    }
    m_quitAction = make("quit", tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_findAction = make("find", tr("&Filter agents"), QKeySequence::Find);
    m_darkAction = make("darkTheme", tr("&Dark theme"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    m_darkAction->setCheckable(true);
    m_resetLayoutAction = make("resetLayout", tr("Reset &layout"), QKeySequence());
    m_shortcutsAction = make("shortcuts", tr("&Keyboard shortcuts and commands"), QKeySequence(Qt::Key_F1));
    m_commandsAction = make("goToCommand", tr("&Go to a panel or a command…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    m_aboutAction = make("about", tr("&About MAP Inspector"), QKeySequence());

    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
    connect(m_connectAction, &QAction::triggered, this, [this] { showConnectDialog(); });
    connect(m_openTraceAction, &QAction::triggered, this, [this] { traces()->showOpenTraceDialog(); });
    connect(m_openSampleAction, &QAction::triggered, this, [this] { traces()->openSampleTrace(); });
    connect(m_closeSystemAction, &QAction::triggered, this, [this] { closeSystem(m_front); });
    connect(m_startTapAction, &QAction::triggered, this, &MainWindow::showTapDialog);
    const auto step = [this](int by) {
        const int at = int(m_systems.indexOf(m_front));
        showSystem(m_systems.at((at + by + int(m_systems.size())) % int(m_systems.size())));
    };
    connect(m_nextSystemAction, &QAction::triggered, this, [step] { step(1); });
    connect(m_previousSystemAction, &QAction::triggered, this, [step] { step(-1); });
    // record, export, inject…: the front system's own (SystemView), run by its controllers
    connect(m_findAction, &QAction::triggered, this, [this] {
        if (QDockWidget *d = dock(QStringLiteral("agentsDock"))) {
            d->show();
            d->raise();
        }
        m_front->agents()->focusFilter();
    });
    connect(m_darkAction, &QAction::toggled, this, [this](bool dark) { setTheme(dark ? QStringLiteral("dark") : QStringLiteral("light")); });
    connect(m_resetLayoutAction, &QAction::triggered, this, [this] {
        restoreState(m_defaultLayout, kLayoutVersion);
        for (QDockWidget *d : std::as_const(m_docks))
            d->show();
        applyDefaultSizes();
    });
    // One searchable list of every command, its menu and its shortcut, for both: F1 to learn
    // the keys, Ctrl+Shift+A to reach any panel (beyond the nine Alt+N) or command by typing.
    const auto openPalette = [this](const QString &title) {
        auto *palette = new CommandPalette(CommandPalette::commandsOf(menuBar()), title, this);
        palette->open();
    };
    connect(m_shortcutsAction, &QAction::triggered, this, [openPalette] { openPalette(tr("Keyboard shortcuts and commands")); });
    connect(m_commandsAction, &QAction::triggered, this, [openPalette] { openPalette(tr("Go to a panel or a command")); });
    connect(m_aboutAction, &QAction::triggered, this, [this] {
        QMessageBox::about(this, tr("About MAP Inspector"),
                           tr("<h3>MAP Inspector %1</h3><p>An operator console for multi-agent systems that speak "
                              "MAP (Multi-Agent Protocol).</p><p>Qt %2 · GPL-3.0-or-later</p>")
                               .arg(QStringLiteral(MAPI_VERSION), QString::fromLatin1(qVersion())));
    });
    m_darkAction->setChecked(isDarkTheme());
}

QDockWidget *MainWindow::addPanel(const QString &objectName, const QString &title, QWidget *panel, Qt::DockWidgetArea area,
                                  const QKeySequence &toggleShortcut)
{
    auto *d = new QDockWidget(title, this);
    d->setObjectName(objectName);
    d->setWidget(panel);
    addDockWidget(area, d);
    QAction *toggle = d->toggleViewAction(); // the View menu's check item (shows or hides)
    toggle->setObjectName(objectName + QStringLiteral("Toggle"));
    toggle->setText(tr("%1 panel").arg(title));
    // QDockWidget names its toggle after its title, which some panels use for counts ("Alerts
    // (1, 1 critical)"): the View menu and the command list keep the panel's plain name.
    connect(d, &QWidget::windowTitleChanged, toggle, [toggle, title] { toggle->setText(tr("%1 panel").arg(title)); });
    // The shortcut brings the panel forward, never hides it (issue 41): shown, raised over the
    // tabs it shares, and focused, however often it is pressed.
    auto *show = new QAction(tr("Show the %1 panel").arg(title), this);
    show->setObjectName(objectName + QStringLiteral("Show"));
    show->setShortcut(toggleShortcut);
    show->setShortcutContext(Qt::ApplicationShortcut);
    connect(show, &QAction::triggered, d, [d] {
        d->show();
        d->raise();
        QWidget *content = d->widget();
        if (!content)
            return;
        // Its search box or list takes the keys (typing filters at once), else the first
        // control that takes focus, else the panel itself.
        QWidget *target = nullptr;
        for (QWidget *w : content->findChildren<QWidget *>()) {
            if (!w->isVisible() || !w->isEnabled() || !(w->focusPolicy() & Qt::TabFocus))
                continue;
            if (qobject_cast<QLineEdit *>(w) || qobject_cast<QAbstractItemView *>(w)) {
                target = w;
                break;
            }
            if (!target)
                target = w;
        }
        (target ? target : content)->setFocus(Qt::ShortcutFocusReason);
    });
    addAction(show);
    m_docks << d;
    return d;
}

void MainWindow::buildDocks()
{
    // Each dock holds a stack with one page per system (MainWindowSystems.cpp adds them); the
    // front system's page shows.
    const auto stacked = [this](const QString &name, const QString &title, Qt::DockWidgetArea area, const QKeySequence &key) {
        auto *stack = new QStackedWidget(this);
        stack->setObjectName(name + QStringLiteral("Stack"));
        m_dockStacks.insert(name, stack);
        return addPanel(name, title, stack, area, key);
    };
    auto *agents = stacked(QStringLiteral("agentsDock"), tr("Agents"), Qt::LeftDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_1));
    auto *scopes = stacked(QStringLiteral("scopesDock"), tr("Scopes"), Qt::LeftDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_2));
    auto *timeline = stacked(QStringLiteral("timelineDock"), tr("Timeline"), Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_3));
    auto *health = stacked(QStringLiteral("healthDock"), tr("Health"), Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_4));
    auto *tasks = stacked(QStringLiteral("tasksDock"), tr("Tasks"), Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_5));
    auto *inspector = stacked(QStringLiteral("inspectorDock"), tr("Inspector"), Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_6));
    auto *actionsDock = stacked(QStringLiteral("actionsDock"), tr("Actions"), Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_7));
    auto *problems = stacked(QStringLiteral("problemsDock"), tr("Problems"), Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_8));
    auto *alertsDock = stacked(QStringLiteral("alertsDock"), tr("Alerts"), Qt::LeftDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_9));
    auto *conversations = stacked(QStringLiteral("conversationsDock"), tr("Conversations"), Qt::BottomDockWidgetArea,
                                  QKeySequence(Qt::ALT | Qt::Key_0));
    auto *work = stacked(QStringLiteral("workDock"), tr("Agent work"), Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_0));
    auto *processDock = stacked(QStringLiteral("processOutputDock"), tr("Process output"), Qt::BottomDockWidgetArea,
                                QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_9));
    auto *connectionsDock = stacked(QStringLiteral("connectionsDock"), tr("Connections"), Qt::BottomDockWidgetArea,
                                    QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_7));
    auto *federationDock = stacked(QStringLiteral("federationDock"), tr("Federation"), Qt::BottomDockWidgetArea,
                                   QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_6));
    // Every system the window holds, one row each; a click brings one to the front.
    m_systemsPanel = new SystemsPanel([this] { return m_systems; }, [this] { return m_front; }, this);
    connect(m_systemsPanel, &SystemsPanel::systemChosen, this, &MainWindow::showSystem);
    // A row of the every-system inbox: its system in front, the alert selected in its Alerts
    // panel, where the operator acknowledges, snoozes or acts (with that panel's confirmations).
    connect(m_systemsPanel, &SystemsPanel::alertChosen, this, [this](SystemView *system, const QString &key) {
        showSystem(system);
        QDockWidget *alerts = dock(QStringLiteral("alertsDock"));
        alerts->show();
        alerts->raise();
        system->alerts()->selectKey(key);
    });
    connect(this, &MainWindow::systemsChanged, m_systemsPanel, &SystemsPanel::systemsChanged);
    auto *systemsDock = addPanel(QStringLiteral("systemsDock"), tr("Systems"), m_systemsPanel, Qt::BottomDockWidgetArea,
                                 QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_8));
    // Shown where the source has them (a launched process; conversations or an agent's work the
    // server serves or a recording holds), hidden otherwise, so a core-only server shows no empty
    // panels; the Systems dock once a second system opens. The operator's own choice (View menu,
    // Alt+0) still opens them. bindFront() follows the front system's panels.
    processDock->hide();
    connectionsDock->hide(); // a tap's trace has them
    federationDock->hide();  // a server that says something of its federation has it
    conversations->hide(); // until a source has them (a saved layout may show them again)
    work->hide();
    systemsDock->hide();
    // Three tab groups, so that a panel never hides the one it opens: the lists that select
    // (Agents, Scopes, Alerts) on the left; what is selected (Inspector) with Health and the
    // agent's work on the right; time (Timeline) with Tasks, Actions, Problems, Conversations
    // and the systems at the bottom. The Alerts panel's Evidence and Inspect show the inspector
    // beside it.
    tabifyDockWidget(agents, scopes);
    tabifyDockWidget(scopes, alertsDock);
    tabifyDockWidget(timeline, tasks);
    tabifyDockWidget(tasks, actionsDock);
    tabifyDockWidget(actionsDock, problems);
    tabifyDockWidget(problems, conversations);
    tabifyDockWidget(conversations, processDock);
    tabifyDockWidget(processDock, connectionsDock);
    tabifyDockWidget(connectionsDock, federationDock);
    tabifyDockWidget(federationDock, systemsDock);
    tabifyDockWidget(health, inspector);
    tabifyDockWidget(inspector, work);
    agents->raise();
    timeline->raise();
    health->raise(); // nothing is inspected yet
    applyDefaultSizes();
}

void MainWindow::applyDefaultSizes()
{
    // Proportions of the window, bounded: at 1366×768 the left column is about 410 px (an
    // agent's name, health, state and role), the right 330 and the bottom 320 (ten task rows);
    // at 1920×1080, 560, 460 and 450.
    const int left = std::clamp(width() * 30 / 100, 300, 560);
    const int right = std::clamp(width() * 24 / 100, 280, 480);
    const int bottom = std::clamp(height() * 42 / 100, 260, 480);
    resizeDocks({dock(QStringLiteral("agentsDock")), dock(QStringLiteral("inspectorDock"))}, {left, right}, Qt::Horizontal);
    resizeDocks({dock(QStringLiteral("timelineDock"))}, {bottom}, Qt::Vertical);
}

void MainWindow::buildMenus()
{
    // The front system's actions (SystemView::action); swapActions() puts another system's in
    // their places when it comes to the front.
    const auto its = [this](const char *name) { return m_front->action(QLatin1String(name)); };
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_connectAction);
    file->addAction(its("disconnect"));
    file->addAction(its("renewCredential"));
    file->addSeparator();
    file->addAction(m_openTraceAction);
    file->addAction(m_openSampleAction);
    QMenu *recent = file->addMenu(tr("Open &recent"));
    connect(recent, &QMenu::aboutToShow, this, [this, recent] {
        recent->clear();
        for (const QString &url : ConnectionProfiles::recentServers())
            recent->addAction(url, this, [this, url] { showConnectDialog(url); });
        recent->addSeparator();
        for (const QString &path : ConnectionProfiles::recentTraces())
            recent->addAction(path, this, [this, path] { openTraceBeside(path); });
        if (recent->isEmpty())
            recent->addAction(tr("(nothing yet)"))->setEnabled(false);
    });
    file->addAction(its("saveSession"));
    file->addAction(its("saveSessionRange"));
    file->addAction(its("record"));
    file->addAction(tr("Recover &sessions…"), this, [this] { traces()->offerRecovery(true); });
    file->addAction(its("compareRuns"));
    file->addAction(its("exportIncident"));
    file->addAction(its("incidentInfo"));
    file->addAction(its("copyLink"));
    QMenu *exportMenu = file->addMenu(tr("&Export"));
    exportMenu->setObjectName(QStringLiteral("exportMenu"));
    exportMenu->addActions(exports()->exportActions());
    file->addSeparator();
    file->addAction(m_closeSystemAction);
    file->addAction(m_quitAction);

    QMenu *replay = menuBar()->addMenu(tr("&Replay"));
    replay->addAction(its("timeTravel"));
    replay->addAction(its("backToLive"));
    replay->addSeparator();
    replay->addActions(replayBar()->windowActions());

    QMenu *agent = menuBar()->addMenu(tr("&Agent"));
    agent->addAction(its("inject"));
    agent->addSeparator();
    agent->addAction(its("suspend"));
    agent->addAction(its("resume"));
    agent->addAction(its("stop"));
    agent->addSeparator();
    agent->addAction(its("observer"));

    // The systems the window holds: the one in front checked; Ctrl+PgDown/PgUp step through them.
    QMenu *systems = menuBar()->addMenu(tr("&Systems"));
    systems->setObjectName(QStringLiteral("systemsMenu"));
    // Fleets: profiles that open together, each a system beside the others.
    QMenu *fleets = new QMenu(tr("Open &fleet"), systems);
    fleets->setObjectName(QStringLiteral("fleetsMenu"));
    connect(fleets, &QMenu::aboutToShow, this, [this, fleets] {
        fleets->clear();
        for (const QString &fleet : ConnectionProfiles::fleets())
            fleets->addAction(fleet, this, [this, fleet] { openFleet(fleet); });
        if (fleets->isEmpty())
            fleets->addAction(tr("(none yet: Save the connected systems as a fleet…)"))->setEnabled(false);
    });
    connect(systems, &QMenu::aboutToShow, this, [this, systems, fleets] {
        systems->clear();
        systems->addAction(m_nextSystemAction);
        systems->addAction(m_previousSystemAction);
        systems->addAction(m_closeSystemAction);
        systems->addSeparator();
        systems->addAction(m_startTapAction);
        systems->addAction(m_metrics->serveAction()); // window-wide, like the tap
        systems->addAction(m_metrics->portAction());
        systems->addMenu(fleets);
        systems->addAction(tr("&Save the connected systems as a fleet…"), this, [this] {
            bool ok = false;
            const QString name = QInputDialog::getText(this, tr("Save as a fleet"),
                                                       tr("A name for the connected systems, to open them together later:"),
                                                       QLineEdit::Normal, QString(), &ok).trimmed();
            if (!ok || name.isEmpty())
                return;
            QStringList left;
            const QStringList saved = saveFleet(name, &left);
            statusBar()->showMessage(saved.isEmpty() ? tr("No connected system to save as a fleet")
                                     : left.isEmpty() ? tr("Fleet %1 saved: %2").arg(name, saved.join(QStringLiteral(", ")))
                                                      : tr("Fleet %1 saved: %2; not %3 (a token but no profile: save one in the Connect dialog)")
                                                            .arg(name, saved.join(QStringLiteral(", ")), left.join(QStringLiteral(", "))),
                                     15000);
        });
        systems->addSeparator();
        for (SystemView *system : std::as_const(m_systems)) {
            QAction *a = systems->addAction(system->label(), this, [this, system] { showSystem(system); });
            a->setCheckable(true);
            a->setChecked(system == m_front);
        }
    });

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_findAction);
    view->addAction(m_commandsAction);
    view->addSeparator();
    QMenu *chain = view->addMenu(tr("Causal &chain"));
    chain->addActions(m_chainActions);
    view->addSeparator();
    QMenu *goTo = view->addMenu(tr("&Go to panel")); // Alt+N: brought forward, never hidden
    for (QDockWidget *d : std::as_const(m_docks))
        if (QAction *show = findChild<QAction *>(d->objectName() + QStringLiteral("Show")))
            goTo->addAction(show);
    for (QDockWidget *d : std::as_const(m_docks))
        view->addAction(d->toggleViewAction());
    view->addSeparator();
    view->addAction(m_darkAction);
    view->addAction(m_resetLayoutAction);

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_shortcutsAction);
    help->addAction(m_aboutAction);
}

void MainWindow::buildStatusBar()
{
    m_stateLabel = new QLabel(this);
    m_stateLabel->setObjectName(QStringLiteral("connectionState"));
    m_serverLabel = new QLabel(this);
    m_serverLabel->setObjectName(QStringLiteral("serverName"));
    m_clockLabel = new QLabel(this);
    m_clockLabel->setObjectName(QStringLiteral("clockOffset"));
    m_clockLabel->hide();
    m_rateLabel = new QLabel(this);
    m_rateLabel->setObjectName(QStringLiteral("eventRate"));
    m_gapsButton = new QToolButton(this);
    m_gapsButton->setObjectName(QStringLiteral("gapsButton"));
    m_gapsButton->setAutoRaise(true);
    m_problemsButton = new QToolButton(this);
    m_problemsButton->setObjectName(QStringLiteral("problemsButton"));
    m_problemsButton->setAutoRaise(true);
    m_problemsButton->setToolTip(tr("Show the frames the inspector could not use"));
    m_gapsButton->setToolTip(tr("Show the gaps: events the server sent that never arrived"));
    auto showProblems = [this] {
        QDockWidget *d = dock(QStringLiteral("problemsDock"));
        d->show();
        d->raise();
    };
    connect(m_problemsButton, &QToolButton::clicked, this, showProblems);
    connect(m_gapsButton, &QToolButton::clicked, this, showProblems);
    // A long job's progress and Cancel button, shown while it runs.
    auto progressWidgets = [this](const char *name, const QString &format, const QString &cancelTip,
                                  QProgressBar *&bar, QToolButton *&cancel) {
        bar = new QProgressBar(this);
        bar->setObjectName(QLatin1String(name) + QStringLiteral("Progress"));
        bar->setRange(0, 100);
        bar->setMaximumWidth(160);
        bar->setFormat(format);
        bar->hide();
        cancel = new QToolButton(this);
        cancel->setObjectName(QLatin1String(name) + QStringLiteral("Cancel"));
        cancel->setText(tr("Cancel"));
        cancel->setToolTip(cancelTip);
        cancel->hide();
    };
    progressWidgets("traceLoad", tr("Loading %p%"), tr("Stop loading the trace"), m_loadProgress, m_loadCancel);
    connect(m_loadCancel, &QToolButton::clicked, this, [this] { session()->cancelTraceLoad(); });
    progressWidgets("export", tr("Exporting %p%"), tr("Stop the export (no file is written)"), m_exportProgress,
                    m_exportCancel);
    connect(m_exportCancel, &QToolButton::clicked, this, [this] { exports()->cancelExport(); });
    m_traceDamageButton = new QToolButton(this);
    m_traceDamageButton->setObjectName(QStringLiteral("traceDamageButton"));
    m_traceDamageButton->setAutoRaise(true);
    m_traceDamageButton->setStyleSheet(QStringLiteral("color: #d0312d; font-weight: bold"));
    m_traceDamageButton->hide();
    connect(m_traceDamageButton, &QToolButton::clicked, this, [this] { traces()->reportTraceDamage(); });
    m_recordingLabel = new QLabel(this);
    m_recordingLabel->setObjectName(QStringLiteral("recordingLabel"));
    m_recordingLabel->setStyleSheet(QStringLiteral("color: #d0312d"));
    m_recordingLabel->hide();
    m_journalLabel = new QLabel(tr("⚠ Journal in memory only"), this);
    m_journalLabel->setObjectName(QStringLiteral("journalLabel"));
    m_journalLabel->setStyleSheet(QStringLiteral("color: #b35c00; font-weight: bold"));
    m_journalLabel->hide();
    m_silenceLabel = new QLabel(this);
    m_silenceLabel->setObjectName(QStringLiteral("silenceLabel"));
    m_silenceLabel->setStyleSheet(QStringLiteral("color: #d0312d; font-weight: bold"));
    m_silenceLabel->hide();
    statusBar()->addWidget(m_stateLabel);
    statusBar()->addWidget(m_serverLabel);
    statusBar()->addPermanentWidget(m_loadProgress);
    statusBar()->addPermanentWidget(m_loadCancel);
    statusBar()->addPermanentWidget(m_exportProgress);
    statusBar()->addPermanentWidget(m_exportCancel);
    statusBar()->addPermanentWidget(m_traceDamageButton);
    statusBar()->addPermanentWidget(m_recordingLabel);
    statusBar()->addPermanentWidget(m_journalLabel);
    statusBar()->addPermanentWidget(m_silenceLabel);
    statusBar()->addPermanentWidget(m_clockLabel);
    statusBar()->addPermanentWidget(m_rateLabel);
    statusBar()->addPermanentWidget(m_gapsButton);
    statusBar()->addPermanentWidget(m_problemsButton);
}

// ---- status ----------------------------------------------------------------------------

void MainWindow::updateStatusBar()
{
    const SystemStore *store = session()->store();
    QString state;
    switch (session()->source()) {
    case InspectorSession::Source::None: state = tr("Not connected"); break;
    case InspectorSession::Source::Trace:
        state = session()->isLoadingTrace() ? tr("Loading trace")
                                            : tr("Trace · %n record(s)", nullptr, int(session()->traceStats().records));
        break;
    case InspectorSession::Source::Live:
        state = clientStateName(session()->clientState());
        if (session()->isTimeTravelling())
            state = tr("Viewing the past · connection %1, %n event(s) so far", nullptr,
                       int(std::min<qint64>(session()->liveStore()->counters().eventsApplied, INT_MAX)))
                        .arg(state);
        break;
    }
    if (session()->observerOnly())
        state += tr(" · observer");
    m_stateLabel->setText(state);
    const ConnectionInfo &c = store->connection();
    m_serverLabel->setText(c.serverName.isEmpty() ? session()->sourceLabel()
                                                  : QStringLiteral("%1 %2 · %3").arg(c.serverName, c.serverVersion, session()->sourceLabel()));
    m_rateLabel->setText(tr("%1 events/s").arg(session()->eventRate(), 0, 'f', 0));
    m_rateLabel->setVisible(session()->source() == InspectorSession::Source::Live);
    // The clock. Every time the window shows is on one clock, this computer's (common/TimeText.h):
    // the front system's server stamps less its measured offset (a trace: the offset its recorder
    // measured). Time travel reads the live store's, which keeps measuring. Until one is measured
    // the stamps are shown as the server wrote them, and the label says so.
    const bool live = session()->source() == InspectorSession::Source::Live;
    ConnectionInfo clock = live ? session()->liveStore()->connection() : c;
    // A trace's offset, once measured, holds for that trace: its replaying store starts again at
    // each seek back (nothing measured until the recorded clock comes by again), and the times
    // shown must not jump. Keyed by the session and the trace it shows. GUI thread only.
    static struct
    {
        QPointer<InspectorSession> session;
        QString source;
        qint64 offsetMs = 0;
        int samples = 0;
    } held;
    if (!live && clock.clockSamples > 0) {
        held = {session(), session()->sourceLabel(), clock.clockOffsetMs, clock.clockSamples};
    } else if (!live && held.session == session() && held.source == session()->sourceLabel() && held.samples > 0) {
        clock.clockOffsetMs = held.offsetMs; // scrubbed back before the recorded clock
        clock.clockSamples = held.samples;
    }
    const bool measured = clock.clockSamples > 0;
    const qint64 shownOffset = measured ? clock.clockOffsetMs : 0;
    if (shownOffset != shownClockOffset()) {
        setShownClockOffset(shownOffset);
        for (QAbstractScrollArea *view : findChildren<QAbstractScrollArea *>())
            view->viewport()->update(); // their times, read again on the new clock (charts: at their next second)
    }
    // Shown from one second of difference (transit alone is well under that).
    const bool skewed = measured && std::abs(clock.clockOffsetMs) >= 1000;
    const QString offset = QString::number(std::abs(double(clock.clockOffsetMs)) / 1000.0, 'f', 1);
    QString clockText = !measured ? tr("times: the server's clock") : live ? tr("times: this computer's clock") : tr("times: the recorder's clock");
    if (skewed)
        clockText += QStringLiteral(" · ") + (clock.clockOffsetMs < 0 ? tr("server %1 s behind").arg(offset) : tr("server %1 s ahead").arg(offset));
    m_clockLabel->setVisible(session()->source() != InspectorSession::Source::None);
    m_clockLabel->setText(clockText);
    m_clockLabel->setToolTip(
        (!measured ? tr("No live event has been timed yet: times are the server's own stamps.")
                   : tr("Every time shown is on %1: the server's stamps less the difference measured from %n live event(s) "
                        "(their timestamps against the time they arrived). Health ages and action timeouts are judged on the "
                        "server's clock, so the difference does not make agents look late.",
                        nullptr, clock.clockSamples)
                         .arg(live ? tr("this computer's clock") : tr("the clock of the computer that recorded the trace")))
        + (store->counters().futureTimestamps > 0
               ? QLatin1Char('\n') + tr("%n event(s) stamped far ahead of their arrival were taken as arriving when they arrived.", nullptr,
                                        int(std::min<qint64>(store->counters().futureTimestamps, INT_MAX)))
               : QString()));
    // A server that stopped answering, or whose agent list drifted from the model while no
    // events came (ObservationNotes), since this connection's handshake: said where the operator
    // looks, the whole sentence (and what our own action had to do with it) in the tooltip.
    const ObservationNotes &notes = store->observation();
    const auto noticedHere = [&](qint64 count, const ProtocolProblem &p) { return count > 0 && p.timeMs >= c.handshakeMs; };
    QString silence;
    QString silenceDetail;
    if (noticedHere(notes.notAnsweringCount(), notes.lastNotAnswering())) {
        silenceDetail = notes.lastNotAnswering().detail;
        static const QRegularExpression since(QStringLiteral("since (\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?(?:Z|[+-]\\d\\d:\\d\\d))"));
        const QRegularExpressionMatch m = since.match(silenceDetail);
        const QDateTime at = m.hasMatch() ? QDateTime::fromString(m.captured(1), Qt::ISODateWithMs) : QDateTime();
        silence = tr("⚠ not answering since %1")
                      .arg((at.isValid() ? at : QDateTime::fromMSecsSinceEpoch(notes.lastNotAnswering().timeMs))
                               .toLocalTime().toString(QStringLiteral("HH:mm:ss")));
    } else if (noticedHere(notes.driftCount(), notes.lastDrift())) {
        silenceDetail = notes.lastDrift().detail;
        silence = tr("⚠ events stopped since %1")
                      .arg(QDateTime::fromMSecsSinceEpoch(notes.lastDrift().timeMs).toLocalTime().toString(QStringLiteral("HH:mm:ss")));
    }
    m_silenceLabel->setText(silence);
    m_silenceLabel->setToolTip(silenceDetail);
    m_silenceLabel->setVisible(!silence.isEmpty());
    const auto &counters = store->counters();
    m_gapsButton->setText(tr("%n gap(s)", nullptr, int(counters.gaps)));
    m_problemsButton->setText(tr("%n problem(s)", nullptr, int(counters.problems)));
    const QString warn = QStringLiteral("color: #d0312d; font-weight: bold");
    m_gapsButton->setStyleSheet(counters.gaps ? warn : QString());
    m_problemsButton->setStyleSheet(counters.problems ? warn : QString());
}

} // namespace mapi::ui
