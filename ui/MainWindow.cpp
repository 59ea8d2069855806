#include "MainWindow.h"

#include "controllers/AlertDeliveryController.h"
#include "controllers/ControlController.h"

#include "dialogs/ActionDialogs.h"
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
#include "panels/ScopesPanel.h"
#include "panels/TasksPanel.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "common/PictureExport.h"
#include "replay/ReplayBar.h"
#include "replay/SampleTrace.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Theme.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"
#include "trace/ModelExport.h"
#include "trace/Otlp.h"
#include "common/Redaction.h"
#include "trace/TraceTimeline.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QTimer>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScreen>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QStackedWidget>
#include <QStatusBar>
#include <QThread>
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
    connect(m_welcome, &WelcomePage::connectRequested, this, [this](const QString &url) {
        ConnectDialog dialog(this);
        if (!url.isEmpty())
            dialog.setUrl(url);
        if (dialog.exec() == QDialog::Accepted)
            connectTo(dialog.options(), dialog.observerOnly());
    });
    connect(m_welcome, &WelcomePage::openTraceRequested, this, [this](const QString &path) {
        if (path.isEmpty())
            showOpenTraceDialog();
        else
            openTrace(path);
    });
    connect(m_welcome, &WelcomePage::openSampleRequested, this, &MainWindow::openSampleTrace);
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
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, this, [this] {
        QHash<QString, int> badges; // each agent's most severe open alert
        for (const auto &[key, alert] : m_alertMonitor->openAlerts())
            for (const QString &id : alert.agents)
                badges[id] = std::max(badges.value(id, -1), int(alert.severity));
        m_topology->view()->setAlertBadges(badges);
    });
    connect(m_alertMonitor, &AlertMonitor::alertsReset, this, [this] { m_topology->view()->setAlertBadges({}); });
    buildDocks();
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
        m_incident.reset(); // a bundle's data goes with it (set again when a bundle has loaded)
        m_center->setCurrentIndex(m_session->source() == InspectorSession::Source::None ? 0 : 1);
        if (m_session->source() != InspectorSession::Source::Trace || !m_session->replay()) {
            m_replayBar->setController(nullptr, QString());
            m_replayBar->hide();
        }
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
    connect(m_session, &InspectorSession::fatalError, this, [this](ClientFailure, const QString &message) {
        statusBar()->showMessage(message, 15000);
        QMessageBox::warning(this, tr("Connection failed"), message);
    });
    connect(m_session, &InspectorSession::credentialExpiring, this, [this](qint64, qint64 expiresInMs) {
        // Not a dialog: it comes at a moment the operator did not choose. The message stays until
        // about when the credential ends; File → Renew credential… gives a new one.
        const int minutes = int((expiresInMs + 59999) / 60000);
        statusBar()->showMessage(tr("The server says the credential expires in %n minute(s): File → Renew credential…", nullptr, minutes),
                                 int(std::clamp<qint64>(expiresInMs, 15000, 600000)));
    });
    connect(m_session, &InspectorSession::credentialRenewed, this, [this](bool accepted, const QString &why) {
        statusBar()->showMessage(accepted ? tr("The server accepted the new credential") : why, 15000);
    });
    connect(m_session->store(), &SystemStore::changed, this, &MainWindow::updateStatusBar);
    connect(m_session, &InspectorSession::traceLoadProgress, this, [this](qint64 done, qint64 total) {
        // Percent of the file's bytes (compressed bytes for .zst/.gz): QProgressBar holds ints.
        m_loadProgress->setValue(total > 0 ? int(done * 100 / total) : 0);
    });
    connect(m_session, &InspectorSession::traceLoadFinished, this, &MainWindow::onTraceLoadFinished);
    connect(m_session, &InspectorSession::timeTravelReady, this, [this](bool ok, const QString &error) {
        m_loadProgress->hide();
        if (ok) {
            m_replayBar->setController(m_session->replay(), QString());
            m_replayBar->setTrailingAction(m_backToLiveAction);
            m_replayBar->setLiveEdge(true);
            if (const qint64 before = m_session->journalDroppedBeforeMs(); before > 0)
                m_replayBar->setNote(tr("history before %1 dropped by retention (%n record(s))", nullptr,
                                        int(std::min<qint64>(m_session->journalRecordsDropped(), INT_MAX)))
                                         .arg(QDateTime::fromMSecsSinceEpoch(before).toString(QStringLiteral("HH:mm:ss"))));
            m_replayBar->show();
        } else {
            showWarning(tr("Cannot travel back in time"), error);
        }
        updateActionStates();
        updateStatusBar();
    });
    connect(m_session, &InspectorSession::timeTravelChanged, this, [this](bool on) {
        if (!on) {
            m_loadProgress->hide();
            m_replayBar->setController(nullptr, QString());
            m_replayBar->setTrailingAction(nullptr);
            m_replayBar->setNote(QString());
            m_replayBar->hide();
        }
        updateActionStates();
        updateStatusBar();
    });
    connect(m_session, &InspectorSession::recordingChanged, this, [this](bool recording) {
        m_recordAction->setChecked(recording);
        m_recordingLabel->setVisible(recording);
        m_recordingLabel->setText(tr("● Recording %1").arg(QFileInfo(m_session->recordingPath()).fileName()));
        m_recordingLabel->setToolTip(QDir::toNativeSeparators(m_session->recordingPath()));
    });
    connect(m_session, &InspectorSession::recordingFinished, this,
            [this](const QStringList &files, qint64 records, const QString &error) {
                const QString where = files.isEmpty() ? QString() : QDir::toNativeSeparators(files.last());
                if (error.isEmpty())
                    statusBar()->showMessage(tr("Recording stopped: %n record(s) in %1", nullptr, int(records)).arg(where), 10000);
                else
                    showWarning(tr("Recording stopped"), tr("The recording stopped early: %1\n%n record(s) were written to %2.",
                                                            nullptr, int(records)).arg(error, where));
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

namespace mapi::ui {

void MainWindow::offerRecovery(bool always)
{
    const QString root = SessionJournal::sessionsRoot();
    if (!always && SessionJournal::abandonedSessions(root).isEmpty())
        return;
    auto *dialog = new RecoverDialog(root, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RecoverDialog::openRequested, this, &MainWindow::openJournalParts);
    dialog->open();
}

void MainWindow::openJournalParts(const QStringList &parts)
{
    if (parts.isEmpty())
        return;
    if (parts.size() == 1) {
        openTrace(parts.first());
        return;
    }
    // Parts concatenated in order are one trace (every part is a sequence of whole zstd frames):
    // joined off the GUI thread, as large as the journal is.
    const QString joined = QFileInfo(parts.first()).absolutePath() + QStringLiteral("/recovered.jsonl.zst");
    statusBar()->showMessage(tr("Joining %n journal part(s)…", nullptr, int(parts.size())));
    QPointer<MainWindow> self(this);
    QThread *job = QThread::create([parts, joined, self] {
        QList<SessionJournal::PartExtent> extents; // a left-behind journal: each part whole
        for (const QString &part : parts)
            extents.push_back({part, QFileInfo(part).size()});
        QString error;
        const bool ok = SessionJournal::copyParts(extents, joined, &error);
        QMetaObject::invokeMethod(qApp, [self, joined, ok, error] {
            if (!self)
                return;
            if (ok)
                self->openTrace(joined);
            else
                self->statusBar()->showMessage(tr("Could not join the journal's parts into %1: %2").arg(joined, error), 15000);
        }, Qt::QueuedConnection);
    });
    connect(job, &QThread::finished, job, &QObject::deleteLater);
    job->start();
}

} // namespace mapi::ui
