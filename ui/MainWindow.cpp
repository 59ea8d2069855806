#include "MainWindow.h"

#include "alerts/AlertMonitor.h"
#include "controllers/AlertDeliveryController.h"
#include "controllers/ConnectionController.h"
#include "controllers/ControlController.h"
#include "controllers/ExportController.h"
#include "controllers/TraceController.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "panels/WelcomePage.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"

#include <cmath>
#include <utility>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace mapi::ui {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_session(new InspectorSession(this))
    , m_selection(new SelectionHub(this))
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(QStringLiteral("MAP Inspector"));
    setDockNestingEnabled(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

    buildActions();
    m_center = new QStackedWidget(this);
    m_welcome = new WelcomePage(this);
    connect(m_welcome, &WelcomePage::connectRequested, this, [this](const QString &url) { m_connection->showConnectDialog(url); });
    connect(m_welcome, &WelcomePage::openTraceRequested, this, [this](const QString &path) {
        if (path.isEmpty())
            m_traces->showOpenTraceDialog();
        else
            m_traces->openTrace(path);
    });
    connect(m_welcome, &WelcomePage::openSampleRequested, this, [this] { m_traces->openSampleTrace(); });
    m_topology = new TopologyPanel(m_session, m_selection, this);
    m_replayBar = new ReplayBar(this);
    m_replayBar->addSpaceTarget(m_topology->view());
    m_replayBar->hide();
    addActions(m_replayBar->windowActions()); // play, step, seek, speed, bookmark: from every panel
    connect(m_replayBar, &ReplayBar::bookmarkSaveFailed, this, [this](const QString &error) {
        statusBar()->showMessage(tr("Bookmarks kept for this session only: %1").arg(error), 15000);
    });
    auto *viewer = new QWidget(this);
    viewer->setObjectName(QStringLiteral("centreView"));
    auto *viewerLayout = new QVBoxLayout(viewer);
    viewerLayout->setContentsMargins(0, 0, 0, 0);
    viewerLayout->setSpacing(0);
    viewerLayout->addWidget(m_topology, 1);
    viewerLayout->addWidget(m_replayBar);
    m_center->addWidget(m_welcome);
    m_center->addWidget(viewer);
    setCentralWidget(m_center);
    // The detectors run over the store the views show (live, a trace, the past); rules from the
    // file named in the settings (alerts/rulesFile; docs/alerts.md), else the defaults.
    m_alertMonitor = new AlertMonitor(this);
    m_alertMonitor->setStore(m_session->store());
    m_alertDelivery = new AlertDeliveryController(m_session, m_alertMonitor, this);
    connect(m_alertDelivery, &AlertDeliveryController::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_alertDelivery, &AlertDeliveryController::notificationActivated, this, [this] {
        showNormal();
        raise();
        activateWindow();
        if (QDockWidget *dock = findChild<QDockWidget *>(QStringLiteral("alertsDock"))) {
            dock->show();
            dock->raise();
        }
    });
    m_alertDelivery->loadSettings();
    m_alertMonitor->start();
    m_control = new ControlController(m_session, m_selection, m_alertMonitor,
                                      {m_injectAction, m_stopAction, m_suspendAction, m_resumeAction}, this);
    connect(m_control, &ControlController::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_control, &ControlController::actionsStarted, this, &MainWindow::revealActions);
    connect(m_alertDelivery, &AlertDeliveryController::rulesApplied, m_control, &ControlController::expectNewRules);
    m_connection = new ConnectionController(m_session, m_alertMonitor,
                                            {m_connectAction, m_disconnectAction, m_renewCredentialAction, m_observerAction}, this);
    connect(m_connection, &ConnectionController::connectionStarting, m_control, &ControlController::resetForConnection);
    connect(m_connection, &ConnectionController::statusMessage, statusBar(), &QStatusBar::showMessage);
    m_traces = new TraceController(m_session, m_selection, m_alertMonitor, m_replayBar,
                                   {m_openTraceAction, m_openSampleAction, m_recordAction, m_saveSessionAction, m_saveRangeAction,
                                    m_timeTravelAction, m_backToLiveAction, m_incidentInfoAction, m_copyLinkAction},
                                   this);
    connect(m_traces, &TraceController::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_traces, &TraceController::recentTracesChanged, m_welcome, &WelcomePage::refreshRecent);
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, this, [this] {
        QHash<QString, int> badges; // each agent's most severe open alert
        for (const auto &[key, alert] : m_alertMonitor->openAlerts())
            for (const QString &id : alert.agents)
                badges[id] = std::max(badges.value(id, -1), int(alert.severity));
        m_topology->view()->setAlertBadges(badges);
    });
    connect(m_alertMonitor, &AlertMonitor::alertsReset, this, [this] { m_topology->view()->setAlertBadges({}); });
    buildDocks();
    m_traces->setVisibleRange([this] {
        const TimelineAxis &axis = m_timeline->view()->axis();
        return std::make_pair(qint64(std::floor(axis.startMs)), qint64(std::ceil(axis.endMs())));
    });
    m_exports = new ExportController(m_session, m_selection, m_alertMonitor, m_replayBar,
                                     {m_topology->view(), m_timeline->view()}, {m_exportIncidentAction, m_compareRunsAction}, this);
    addActions(m_exports->exportActions()); // found by name, and by the command palette
    connect(m_exports, &ExportController::statusMessage, statusBar(), &QStatusBar::showMessage);
    buildMenus();
    buildStatusBar();

    m_defaultLayout = saveState(kLayoutVersion);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("layout/geometry")).toByteArray());
    if (!restoreState(settings.value(QStringLiteral("layout/state")).toByteArray(), kLayoutVersion)) {
        // 1400×900, within the screen where the screen can hold the window's minimum (a laptop's
        // 1366×768); the docks are sized for the size the window has when first shown.
        QSize initial(1400, 900);
        if (const QScreen *screen = this->screen()) {
            const QSize available = screen->availableGeometry().size();
            if (available.width() >= 1024 && available.height() >= 640)
                initial = initial.boundedTo(available);
        }
        resize(initial);
        m_sizeDocksOnShow = true;
    }

    // What the views hold of the previous system or trace goes before the new one shows: its
    // alerts (not a second later, at the next evaluation), the selection and the evidence chain
    // lit in the timeline and topology, the inspector's item, the topology's search. Filters
    // (agents, tasks) are the operator's way of looking and stay.
    connect(m_session, &InspectorSession::sourceReplaced, this, [this] {
        m_alertMonitor->forgetAlerts();
        m_selection->clear();
        m_topology->clearSearch();
    });
    connect(m_session, &InspectorSession::sourceChanged, this, [this] {
        m_center->setCurrentIndex(m_session->source() == InspectorSession::Source::None ? 0 : 1);
        setWindowTitle(m_session->source() == InspectorSession::Source::None
                           ? QStringLiteral("MAP Inspector")
                           : QStringLiteral("%1 — MAP Inspector").arg(m_session->sourceLabel()));
        updateActionStates();
        updateStatusBar();
    });
    connect(m_session, &InspectorSession::stateChanged, this, [this] {
        updateActionStates();
        updateStatusBar();
    });
    connect(m_session, &InspectorSession::supportChanged, this, &MainWindow::updateActionStates);
    connect(m_session, &InspectorSession::observerOnlyChanged, this, &MainWindow::updateActionStates);
    connect(m_session, &InspectorSession::rateUpdated, this, &MainWindow::updateStatusBar);
    connect(m_session->store(), &SystemStore::changed, this, &MainWindow::updateStatusBar);
    connect(m_session, &InspectorSession::traceLoadProgress, this, [this](qint64 done, qint64 total) {
        // Percent of the file's bytes (compressed bytes for .zst/.gz): QProgressBar holds ints.
        m_loadProgress->setValue(total > 0 ? int(done * 100 / total) : 0);
    });
    connect(m_session, &InspectorSession::traceLoadFinished, this, [this] { updateActionStates(); updateStatusBar(); });
    connect(m_session, &InspectorSession::timeTravelReady, this, [this] { updateActionStates(); updateStatusBar(); });
    connect(m_session, &InspectorSession::timeTravelChanged, this, [this] { updateActionStates(); updateStatusBar(); });
    // Loading a trace, or reading the journal for time travel: progress (and Cancel for a trace).
    connect(m_traces, &TraceController::loadingChanged, this, [this](bool loading, bool cancellable) {
        m_loadProgress->setValue(0);
        m_loadProgress->setVisible(loading);
        m_loadCancel->setVisible(loading && cancellable);
        const QString damage = loading ? QString() : m_traces->traceDamageSummary();
        m_traceDamageButton->setVisible(!damage.isEmpty());
        m_traceDamageButton->setText(damage);
        m_traceDamageButton->setToolTip(tr("Parts of this file could not be read; everything else was loaded. Click for details."));
    });
    connect(m_exports, &ExportController::exportStarted, this, [this] {
        m_exportProgress->setValue(0);
        m_exportProgress->show();
        m_exportCancel->show();
    });
    connect(m_exports, &ExportController::exportProgress, m_exportProgress, &QProgressBar::setValue);
    connect(m_exports, &ExportController::exportFinished, this, [this] {
        m_exportProgress->hide();
        m_exportCancel->hide();
    });
    connect(m_session, &InspectorSession::recordingChanged, this, [this](bool recording) {
        m_recordAction->setChecked(recording);
        m_recordingLabel->setVisible(recording);
        m_recordingLabel->setText(tr("● Recording %1").arg(QFileInfo(m_session->recordingPath()).fileName()));
        m_recordingLabel->setToolTip(QDir::toNativeSeparators(m_session->recordingPath()));
    });
    connect(m_session, &InspectorSession::journalStateChanged, this, [this](bool degraded, const QString &reason) {
        m_journalLabel->setVisible(degraded);
        m_journalLabel->setToolTip(reason);
        statusBar()->showMessage(degraded ? reason.contains(QLatin1String("kept in memory"))
                                              ? tr("Session journal: %1").arg(reason) // journaling refused for good: says so itself
                                              : tr("Session journal: %1; frames are kept in memory (bounded) until the disk can be written again").arg(reason)
                                          : tr("Session journal: written to disk again"),
                                 15000);
    });
    connect(m_session, &InspectorSession::sourceChanged, this, [this] {
        if (!m_session->journalDegraded())
            m_journalLabel->hide();
    });
    connect(m_selection, &SelectionHub::agentSelectionChanged, this, &MainWindow::updateActionStates);
    updateActionStates();
    updateStatusBar();
}

MainWindow::~MainWindow() = default;

// ---- misc ------------------------------------------------------------------------------

void MainWindow::updateActionStates()
{
    // Each controller keeps its own actions current from the session's signals; asked again here
    // where the window learns of a change first (a selection, a load's end).
    m_connection->updateActionStates();
    m_traces->updateActionStates();
    m_exports->updateActionStates();
}

void MainWindow::revealActions()
{
    // Shown and raised over the tabs it shares, the focus left where it is: the operator sees the
    // action go from sent to confirmed without looking for it.
    QDockWidget *actions = dock(QStringLiteral("actionsDock"));
    actions->show();
    actions->raise();
}


QDockWidget *MainWindow::dock(const QString &name) const
{
    return findChild<QDockWidget *>(name);
}

QAction *MainWindow::action(const QString &name) const
{
    for (QAction *a : actions())
        if (a->objectName() == name)
            return a;
    return nullptr;
}

void MainWindow::setTheme(const QString &name)
{
    applyTheme(themeFromName(name));
    QSettings().setValue(QStringLiteral("ui/theme"), name);
    // Views that paint themselves read the palette on their next paint.
    for (QWidget *w : findChildren<QWidget *>())
        w->update();
}

void MainWindow::saveLayout()
{
    QSettings settings;
    settings.setValue(QStringLiteral("layout/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("layout/state"), saveState(kLayoutVersion));
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (std::exchange(m_sizeDocksOnShow, false))
        applyDefaultSizes();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveLayout();
    m_session->disconnectFromServer(); // also stops a recording and closes its file
    event->accept();
}

} // namespace mapi::ui

