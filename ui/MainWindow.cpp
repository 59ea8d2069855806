#include "MainWindow.h"

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
    {
        AlertRules rules;
        const QString rulesFile = QSettings().value(QStringLiteral("alerts/rulesFile")).toString();
        if (!rulesFile.isEmpty()) {
            const ErrorOr<AlertRules> read = readAlertRulesFile(rulesFile);
            if (read)
                rules = *read;
            else
                QTimer::singleShot(0, this, [this, why = read.error()] {
                    statusBar()->showMessage(tr("Alert rules: %1; the defaults apply").arg(why), 15000);
                });
        }
        m_alertMonitor->setRules(rules);
        m_session->store()->setHealthPolicy(healthPolicyForRules(rules, m_session->store()->healthPolicy()));
    }
    m_alertMonitor->setStore(m_session->store());
    m_alertMonitor->start();
    m_notifier = new AlertNotifier(this);
    m_webhook = new AlertWebhook(this);
    {
        QSettings settings;
        m_alertDelivery.desktop = settings.value(QStringLiteral("alerts/notify"), true).toBool();
        m_alertDelivery.sound = settings.value(QStringLiteral("alerts/sound"), false).toBool();
        m_alertDelivery.webhookOn = settings.value(QStringLiteral("alerts/webhookOn"), false).toBool();
        m_alertDelivery.webhookMinSeverity =
            alertSeverityFromName(settings.value(QStringLiteral("alerts/webhookMinSeverity")).toString()).value_or(AlertSeverity::Warning);
    }
    applyAlertDelivery();
    if (m_alertDelivery.webhookOn)
        ConnectionProfiles::readKeychain(QString::fromLatin1(kWebhookKeychainKey), this, [this](const QString &secret, const QString &error) {
            const Json stored = Json::parse(secret.toStdString(), nullptr, false);
            if (!error.isEmpty() || !stored.is_object()) {
                // Off for this session (the settings file still says on): the dialog shows it
                // off rather than on with no address, and nothing in the keychain is touched.
                m_alertDelivery.webhookOn = false;
                statusBar()->showMessage(error.isEmpty() ? tr("Alert webhook off: its address is not in the OS keychain (Alerts → Settings…)")
                                                         : tr("Alert webhook off: the OS keychain is not available (%1)").arg(error),
                                         15000);
                return;
            }
            m_alertDelivery.webhookUrl = QString::fromStdString(stored.value("url", std::string()));
            m_alertDelivery.webhookToken = QString::fromStdString(stored.value("token", std::string()));
            m_webhookInKeychain = true;
            applyAlertDelivery();
        });
    connect(m_webhook, &AlertWebhook::delivered, this, [this](bool ok, const QString &detail) {
        if (!ok)
            statusBar()->showMessage(tr("Alert webhook: not delivered (%1 so far): %2").arg(m_webhook->failed()).arg(detail), 15000);
    });
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, this, [this](const std::vector<AlertChange> &changes) {
        // Notifications and the webhook speak of now: not of a trace, nor of the live past. After
        // new rules, what is raised again was already said (the webhook skips what it sent).
        const bool now = m_session->source() == InspectorSession::Source::Live && !m_session->isTimeTravelling();
        if (now) {
            if (!m_applyingNewRules)
                m_notifier->offer(changes, isActiveWindow() && !isMinimized(), QDateTime::currentMSecsSinceEpoch());
            m_webhook->offer(changes);
        }
        m_ladder.alertsChanged(changes);
        runLadder();
        QHash<QString, int> badges; // each agent's most severe open alert
        for (const auto &[key, alert] : m_alertMonitor->openAlerts())
            for (const QString &id : alert.agents)
                badges[id] = std::max(badges.value(id, -1), int(alert.severity));
        m_topology->view()->setAlertBadges(badges);
    });
    connect(m_alertMonitor, &AlertMonitor::alertsReset, this, [this] { m_topology->view()->setAlertBadges({}); });
    connect(m_alertMonitor, &AlertMonitor::evaluated, this, [this] {
        if (m_session->source() == InspectorSession::Source::Live && !m_session->isTimeTravelling())
            m_webhook->reconcile(m_alertMonitor->openAlerts(), m_session->store()->now());
        if (m_applyingNewRules) { // the first verdict of new rules: climbs of alerts gone end
            m_ladder.retainOnly(m_alertMonitor->openAlerts());
            m_applyingNewRules = false;
        }
    });
    auto *ladderClock = new QTimer(this);
    ladderClock->setObjectName(QStringLiteral("ladderClock"));
    ladderClock->setInterval(1000); // the ladder's delays are seconds
    connect(ladderClock, &QTimer::timeout, this, &MainWindow::runLadder);
    ladderClock->start();
    connect(m_session, &InspectorSession::observerOnlyChanged, this, [this] { m_ladder.setObserverOnly(m_session->observerOnly()); });
    connect(m_notifier, &AlertNotifier::activated, this, [this] {
        showNormal();
        raise();
        activateWindow();
        if (QDockWidget *dock = findChild<QDockWidget *>(QStringLiteral("alertsDock"))) {
            dock->show();
            dock->raise();
        }
    });
    buildDocks();
    buildMenus();
    buildStatusBar();

    m_defaultLayout = saveState();
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("layout/geometry")).toByteArray());
    if (!restoreState(settings.value(QStringLiteral("layout/state")).toByteArray()))
        resize(1400, 900);

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
        statusBar()->showMessage(degraded ? tr("Session journal: %1; frames are kept in memory (bounded) until the disk can be written again").arg(reason)
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
    m_connectAction = make("connect", tr("&Connect…"), QKeySequence(Qt::CTRL | Qt::Key_K));
    m_disconnectAction = make("disconnect", tr("&Disconnect"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    m_renewCredentialAction = make("renewCredential", tr("Re&new credential…"), QKeySequence());
    m_renewCredentialAction->setToolTip(tr("Give the live connection a new token before the current one expires"));
    m_openTraceAction = make("openTrace", tr("&Open trace…"), QKeySequence::Open);
    m_openSampleAction = make("openSampleTrace", tr("Open the &sample trace"), QKeySequence());
    m_recordAction = make("record", tr("&Record to file…"), QKeySequence(Qt::CTRL | Qt::Key_R));
    m_recordAction->setCheckable(true);
    m_saveSessionAction = make("saveSession", tr("&Save session as…"), QKeySequence::SaveAs);
    m_saveRangeAction = make("saveSessionRange", tr("Save &visible range as…"), QKeySequence());
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
            const bool moved = step == 0 ? m_inspector->goToCause()
                : step == 1              ? m_inspector->goToEffect()
                                         : m_inspector->goToSibling(step == 2 ? -1 : 1);
            if (!moved)
                statusBar()->showMessage(tr("No further link in this causal chain"), 3000);
        });
        m_chainActions << a;
    }
    m_compareRunsAction = make("compareRuns", tr("&Compare with another run…"), QKeySequence());
    m_compareRunsAction->setToolTip(tr("Compare the run shown with another trace: agents, conversations, first divergence, counts"));
    connect(m_compareRunsAction, &QAction::triggered, this, [this] { compareRuns(); });
    m_exportIncidentAction = make("exportIncident", tr("Export &incident…"), QKeySequence());
    m_exportIncidentAction->setToolTip(tr("One file to hand on: a time range of the run with your note, bookmarks, selection, "
                                          "alerts and pictures, redacted as you choose"));
    connect(m_exportIncidentAction, &QAction::triggered, this, [this] { exportIncident(); });
    m_incidentInfoAction = make("incidentInfo", tr("Incident &details…"), QKeySequence());
    m_incidentInfoAction->setToolTip(tr("What the incident bundle shown carries: range, note, redaction, alerts, pictures"));
    connect(m_incidentInfoAction, &QAction::triggered, this, [this] {
        if (!m_incident)
            return;
        auto *info = new IncidentInfoDialog(*m_incident, this);
        info->setAttribute(Qt::WA_DeleteOnClose);
        info->show();
    });
    m_copyLinkAction = make("copyLink", tr("Copy &link to this moment"), QKeySequence());
    m_copyLinkAction->setToolTip(tr("A map-inspector:// link to this trace, at the replay position, with the selected agent"));
    connect(m_copyLinkAction, &QAction::triggered, this, [this] {
        const QString link = deepLinkHere();
        if (link.isEmpty())
            return;
        QGuiApplication::clipboard()->setText(link);
        statusBar()->showMessage(tr("Link copied: %1").arg(link), 8000);
    });
    m_timeTravelAction = make("timeTravel", tr("&Travel back in time"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    m_backToLiveAction = make("backToLive", tr("Back to &live"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    m_backToLiveAction->setToolTip(tr("Show the live system again (it was followed all along)"));
    const struct { const char *name; QString text; ExportKind kind; QString suffix; QString filter; } exports[] = {
        {"exportChromeTrace", tr("&Chrome trace (Perfetto)…"), ExportKind::ChromeTrace, QStringLiteral("json"), tr("Chrome trace (*.json)")},
        {"exportOpenTelemetry", tr("&OpenTelemetry (OTLP/JSON)…"), ExportKind::OpenTelemetry, QStringLiteral("otlp.json"), tr("OpenTelemetry OTLP/JSON (*.otlp.json)")},
        {"exportAgentsCsv", tr("&Agents table (CSV)…"), ExportKind::AgentsCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportMessagesCsv", tr("&Messages table (CSV)…"), ExportKind::MessagesCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportTasksCsv", tr("&Tasks table (CSV)…"), ExportKind::TasksCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportTopologyPicture", tr("T&opology picture (PNG, SVG)…"), ExportKind::TopologyPicture, QStringLiteral("png"), tr("PNG (*.png);;SVG (*.svg)")},
        {"exportTimelinePicture", tr("Time&line picture (PNG, SVG)…"), ExportKind::TimelinePicture, QStringLiteral("png"), tr("PNG (*.png);;SVG (*.svg)")},
    };
    for (const auto &e : exports) {
        QAction *a = make(e.name, e.text, QKeySequence());
        connect(a, &QAction::triggered, this, [this, kind = e.kind, suffix = e.suffix, filter = e.filter] {
            exportWithDialog(kind, suffix, filter);
        });
        m_exportActions << a;
    }
    m_quitAction = make("quit", tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_injectAction = make("inject", tr("&Inject message…"), QKeySequence(Qt::CTRL | Qt::Key_I));
    m_suspendAction = make("suspend", tr("&Suspend…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    m_resumeAction = make("resume", tr("&Resume…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_stopAction = make("stop", tr("S&top…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_X));
    m_observerAction = make("observer", tr("&Observer only"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_observerAction->setCheckable(true);
    m_findAction = make("find", tr("&Filter agents"), QKeySequence::Find);
    m_darkAction = make("darkTheme", tr("&Dark theme"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    m_darkAction->setCheckable(true);
    m_resetLayoutAction = make("resetLayout", tr("Reset &layout"), QKeySequence());
    m_shortcutsAction = make("shortcuts", tr("&Keyboard shortcuts"), QKeySequence(Qt::Key_F1));
    m_aboutAction = make("about", tr("&About MAP Inspector"), QKeySequence());

    connect(m_connectAction, &QAction::triggered, this, &MainWindow::showConnectDialog);
    connect(m_disconnectAction, &QAction::triggered, m_session, &InspectorSession::disconnectFromServer);
    connect(m_renewCredentialAction, &QAction::triggered, this, &MainWindow::renewCredential);
    connect(m_openTraceAction, &QAction::triggered, this, &MainWindow::showOpenTraceDialog);
    connect(m_openSampleAction, &QAction::triggered, this, &MainWindow::openSampleTrace);
    connect(m_recordAction, &QAction::triggered, this, [this](bool checked) { chooseRecordingFile(checked); });
    connect(m_saveSessionAction, &QAction::triggered, this, [this] { saveSessionWithDialog(false); });
    connect(m_saveRangeAction, &QAction::triggered, this, [this] { saveSessionWithDialog(true); });
    connect(m_timeTravelAction, &QAction::triggered, this, [this] {
        QString error;
        if (!m_session->startTimeTravel(&error)) {
            showWarning(tr("Cannot travel back in time"), error);
            return;
        }
        m_loadProgress->setValue(0);
        m_loadProgress->show();
        statusBar()->showMessage(tr("Reading the session's journal… the live system is still followed"), 5000);
    });
    connect(m_backToLiveAction, &QAction::triggered, m_session, &InspectorSession::returnToLive);
    connect(m_session, &InspectorSession::sessionSaved, this, [this](bool ok, const QString &path, const QString &error) {
        if (path.startsWith(QDir::tempPath()) && path.endsWith(IncidentDialog::kLiveCopyName))
            return; // an incident dialog's own copy: it reports on it
        if (ok)
            statusBar()->showMessage(tr("Session saved to %1").arg(QDir::toNativeSeparators(path)), 10000);
        else
            showWarning(tr("Cannot save the session"), error);
    });
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
    connect(m_injectAction, &QAction::triggered, this, &MainWindow::injectIntoSelection);
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stopSelection);
    connect(m_suspendAction, &QAction::triggered, this, &MainWindow::suspendSelection);
    connect(m_resumeAction, &QAction::triggered, this, &MainWindow::resumeSelection);
    connect(m_observerAction, &QAction::toggled, this, [this](bool on) {
        if (!on && m_forcedObserver) {
            m_observerAction->setChecked(true); // --observer cannot be switched off in the window
            return;
        }
        m_session->setObserverOnly(on);
    });
    connect(m_findAction, &QAction::triggered, this, [this] {
        if (QDockWidget *d = dock(QStringLiteral("agentsDock"))) {
            d->show();
            d->raise();
        }
        m_agents->focusFilter();
    });
    connect(m_darkAction, &QAction::toggled, this, [this](bool dark) { setTheme(dark ? QStringLiteral("dark") : QStringLiteral("light")); });
    connect(m_resetLayoutAction, &QAction::triggered, this, [this] {
        restoreState(m_defaultLayout);
        for (QDockWidget *d : std::as_const(m_docks))
            d->show();
    });
    connect(m_shortcutsAction, &QAction::triggered, this, [this] {
        ShortcutsDialog dialog(actions(), this);
        dialog.exec();
    });
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
    QAction *toggle = d->toggleViewAction();
    toggle->setObjectName(objectName + QStringLiteral("Toggle"));
    toggle->setText(tr("%1 panel").arg(title));
    toggle->setShortcut(toggleShortcut);
    toggle->setShortcutContext(Qt::ApplicationShortcut);
    addAction(toggle);
    m_docks << d;
    return d;
}

void MainWindow::buildDocks()
{
    m_agents = new AgentsPanel(m_session, m_selection, this);
    m_scopes = new ScopesPanel(m_session, m_selection, this);
    m_timeline = new TimelinePanel(m_session, m_selection, this);
    m_health = new HealthPanel(m_session, m_selection, this);
    m_tasks = new TasksPanel(m_session, m_selection, this);
    m_inspector = new InspectorPanel(m_session, m_selection, this);
    m_actions = new ActionsPanel(m_session, m_selection, this);
    m_problems = new ProblemsPanel(m_session, m_selection, this);
    m_alerts = new AlertsPanel(m_session, m_selection, m_alertMonitor, this);
    connect(m_alerts, &AlertsPanel::injectRequested, this, &MainWindow::injectIntoSelection);
    connect(m_alerts, &AlertsPanel::suspendRequested, this, &MainWindow::suspendSelection);
    connect(m_alerts, &AlertsPanel::stopRequested, this, &MainWindow::stopSelection);
    connect(m_alerts, &AlertsPanel::superviseRequested, this, &MainWindow::superviseWithDialog);
    connect(m_alerts, &AlertsPanel::settingsRequested, this, &MainWindow::editAlertSettings);
    // The timeline draws every alert as a bar on its agents' lanes; a click on one shows it here.
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, m_timeline->view(), &TimelineView::takeAlertChanges);
    connect(m_alertMonitor, &AlertMonitor::alertsReset, m_timeline->view(), &TimelineView::clearAlerts);

    auto *agents = addPanel(QStringLiteral("agentsDock"), tr("Agents"), m_agents, Qt::LeftDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_1));
    auto *scopes = addPanel(QStringLiteral("scopesDock"), tr("Scopes"), m_scopes, Qt::LeftDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_2));
    auto *timeline = addPanel(QStringLiteral("timelineDock"), tr("Timeline"), m_timeline, Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_3));
    auto *health = addPanel(QStringLiteral("healthDock"), tr("Health"), m_health, Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_4));
    auto *tasks = addPanel(QStringLiteral("tasksDock"), tr("Tasks"), m_tasks, Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_5));
    auto *inspector = addPanel(QStringLiteral("inspectorDock"), tr("Inspector"), m_inspector, Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_6));
    auto *actionsDock = addPanel(QStringLiteral("actionsDock"), tr("Actions"), m_actions, Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_7));
    auto *problems = addPanel(QStringLiteral("problemsDock"), tr("Problems"), m_problems, Qt::BottomDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_8));
    auto *alertsDock = addPanel(QStringLiteral("alertsDock"), tr("Alerts"), m_alerts, Qt::RightDockWidgetArea, QKeySequence(Qt::ALT | Qt::Key_9));
    connect(m_alerts, &AlertsPanel::attentionChanged, alertsDock, [alertsDock](int waiting, int critical) {
        alertsDock->setWindowTitle(waiting == 0 ? tr("Alerts")
                                   : critical > 0 ? tr("Alerts (%1, %2 critical)").arg(waiting).arg(critical)
                                                  : tr("Alerts (%1)").arg(waiting));
    });
    connect(m_timeline->view(), &TimelineView::alertClicked, this, [this, alertsDock](const QString &key) {
        alertsDock->show();
        alertsDock->raise();
        m_alerts->selectKey(key);
    });
    connect(m_alerts, &AlertsPanel::timelineRequested, this, [this, timeline](qint64 atMs) {
        timeline->show();
        timeline->raise();
        TimelineView *view = m_timeline->view();
        const double span = view->axis().spanMs() > 0 ? view->axis().spanMs() : TimelineView::kDefaultSpanMs;
        view->showTimeRange(double(atMs) - span / 4, double(atMs) + span * 3 / 4); // the moment, and what came after
        const QStringList agents = m_selection->selectedAgents();
        if (!agents.isEmpty())
            view->scrollRowIntoView(view->lanes().rowOfAgent(m_session->store()->agentRow(agents.first())));
    });
    tabifyDockWidget(agents, scopes);
    tabifyDockWidget(timeline, tasks);
    tabifyDockWidget(tasks, actionsDock);
    tabifyDockWidget(actionsDock, problems);
    tabifyDockWidget(health, inspector);
    tabifyDockWidget(inspector, alertsDock);
    agents->raise();
    timeline->raise();
    health->raise();
    resizeDocks({agents, health}, {420, 380}, Qt::Horizontal);
    resizeDocks({timeline}, {300}, Qt::Vertical);
}

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_connectAction);
    file->addAction(m_disconnectAction);
    file->addAction(m_renewCredentialAction);
    file->addSeparator();
    file->addAction(m_openTraceAction);
    file->addAction(m_openSampleAction);
    QMenu *recent = file->addMenu(tr("Open &recent"));
    connect(recent, &QMenu::aboutToShow, this, [this, recent] {
        recent->clear();
        for (const QString &url : ConnectionProfiles::recentServers())
            recent->addAction(url, this, [this, url] {
                ConnectDialog dialog(this);
                dialog.setUrl(url);
                if (dialog.exec() == QDialog::Accepted)
                    connectTo(dialog.options(), dialog.observerOnly());
            });
        recent->addSeparator();
        for (const QString &path : ConnectionProfiles::recentTraces())
            recent->addAction(path, this, [this, path] { openTrace(path); });
        if (recent->isEmpty())
            recent->addAction(tr("(nothing yet)"))->setEnabled(false);
    });
    file->addAction(m_saveSessionAction);
    file->addAction(m_saveRangeAction);
    file->addAction(m_recordAction);
    file->addAction(tr("Recover &sessions…"), this, [this] { offerRecovery(true); });
    file->addAction(m_compareRunsAction);
    file->addAction(m_exportIncidentAction);
    file->addAction(m_incidentInfoAction);
    file->addAction(m_copyLinkAction);
    QMenu *exportMenu = file->addMenu(tr("&Export"));
    exportMenu->setObjectName(QStringLiteral("exportMenu"));
    exportMenu->addActions(m_exportActions);
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu *replay = menuBar()->addMenu(tr("&Replay"));
    replay->addAction(m_timeTravelAction);
    replay->addAction(m_backToLiveAction);
    replay->addSeparator();
    replay->addActions(m_replayBar->windowActions());

    QMenu *agent = menuBar()->addMenu(tr("&Agent"));
    agent->addAction(m_injectAction);
    agent->addSeparator();
    agent->addAction(m_suspendAction);
    agent->addAction(m_resumeAction);
    agent->addAction(m_stopAction);
    agent->addSeparator();
    agent->addAction(m_observerAction);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_findAction);
    view->addSeparator();
    QMenu *chain = view->addMenu(tr("Causal &chain"));
    chain->addActions(m_chainActions);
    view->addSeparator();
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
    connect(m_loadCancel, &QToolButton::clicked, m_session, &InspectorSession::cancelTraceLoad);
    progressWidgets("export", tr("Exporting %p%"), tr("Stop the export (no file is written)"), m_exportProgress,
                    m_exportCancel);
    connect(m_exportCancel, &QToolButton::clicked, this, &MainWindow::cancelExport);
    m_traceDamageButton = new QToolButton(this);
    m_traceDamageButton->setObjectName(QStringLiteral("traceDamageButton"));
    m_traceDamageButton->setAutoRaise(true);
    m_traceDamageButton->setStyleSheet(QStringLiteral("color: #d0312d; font-weight: bold"));
    m_traceDamageButton->hide();
    connect(m_traceDamageButton, &QToolButton::clicked, this, &MainWindow::reportTraceDamage);
    m_recordingLabel = new QLabel(this);
    m_recordingLabel->setObjectName(QStringLiteral("recordingLabel"));
    m_recordingLabel->setStyleSheet(QStringLiteral("color: #d0312d"));
    m_recordingLabel->hide();
    m_journalLabel = new QLabel(tr("⚠ Journal in memory only"), this);
    m_journalLabel->setObjectName(QStringLiteral("journalLabel"));
    m_journalLabel->setStyleSheet(QStringLiteral("color: #b35c00; font-weight: bold"));
    m_journalLabel->hide();
    statusBar()->addWidget(m_stateLabel);
    statusBar()->addWidget(m_serverLabel);
    statusBar()->addPermanentWidget(m_loadProgress);
    statusBar()->addPermanentWidget(m_loadCancel);
    statusBar()->addPermanentWidget(m_exportProgress);
    statusBar()->addPermanentWidget(m_exportCancel);
    statusBar()->addPermanentWidget(m_traceDamageButton);
    statusBar()->addPermanentWidget(m_recordingLabel);
    statusBar()->addPermanentWidget(m_journalLabel);
    statusBar()->addPermanentWidget(m_clockLabel);
    statusBar()->addPermanentWidget(m_rateLabel);
    statusBar()->addPermanentWidget(m_gapsButton);
    statusBar()->addPermanentWidget(m_problemsButton);
}

// ---- sources ---------------------------------------------------------------------------

void MainWindow::showConnectDialog()
{
    ConnectDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted)
        connectTo(dialog.options(), dialog.observerOnly());
}

void MainWindow::connectTo(const ClientOptions &options, bool observerOnly)
{
    ClientOptions checked = options;
    if (credentialTravelsInClear(options)) {
        QMessageBox ask(QMessageBox::Warning, tr("Send the token unencrypted?"),
                        tr("%1 uses ws://, not wss://: the token would cross the network in clear text, readable by "
                           "anyone on the way.").arg(options.url.host()),
                        QMessageBox::Cancel, this);
        QPushButton *send = ask.addButton(tr("Send it unencrypted"), QMessageBox::AcceptRole);
        ask.setDefaultButton(QMessageBox::Cancel);
        ask.setInformativeText(tr("Use a wss:// URL if the server offers one."));
        ask.exec();
        if (ask.clickedButton() != send)
            return;
        checked.allowCredentialInClear = true; // for this connection only: the next one asks again
    }
    m_ladder.reset(); // automatic supervision is enabled per connection, never carried over
    m_ladder.setObserverOnly(observerOnly || m_forcedObserver);
    m_session->connectTo(checked, observerOnly || m_forcedObserver);
    m_alertMonitor->start(); // in case a trace load was under way (it stops the detectors)
    m_observerAction->setChecked(m_session->observerOnly());
}

void MainWindow::renewCredential()
{
    bool ok = false;
    const QString token = QInputDialog::getText(this, tr("Renew credential"),
                                                tr("A new token for %1 (sent with map/auth/refresh; kept in memory only):")
                                                    .arg(m_session->sourceLabel()),
                                                QLineEdit::Password, QString(), &ok);
    if (ok && !token.trimmed().isEmpty())
        m_session->refreshCredential(token.trimmed());
}

void MainWindow::showOpenTraceDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open trace"), QString(),
        tr("Traces and logs (*.jsonl *.jsonl.zst *.jsonl.gz *.ndjson *.ndjson.zst *.ndjson.gz *.json *.zst *.gz);;All files (*)"));
    if (!path.isEmpty())
        openTrace(path);
}

bool MainWindow::openTrace(const QString &path)
{
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) {
        showWarning(tr("Cannot open trace"), info.exists() ? tr("%1 is not a readable file.").arg(QDir::toNativeSeparators(path))
                                                           : tr("%1 does not exist.").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    startTraceLoad(info.absoluteFilePath(), true);
    return true;
}

bool MainWindow::openSampleTrace()
{
    QString error;
    const QString path = sampleTraceFile(&error);
    if (path.isEmpty()) {
        showWarning(tr("Cannot open the sample trace"), error);
        return false;
    }
    startTraceLoad(path, false); // the cached copy is not worth a place among the recent traces
    return true;
}

void MainWindow::startTraceLoad(const QString &path, bool remember)
{
    m_replayBar->setController(nullptr, QString());
    m_replayBar->hide();
    m_traceDamageButton->hide();
    m_loadProgress->setValue(0);
    m_loadProgress->show();
    // The detectors wait for the whole trace (then read it in slices): a load is not slowed by
    // reading messages it is still adding.
    m_alertMonitor->stop();
    m_loadCancel->show();
    m_session->openTrace(path);
    if (remember) {
        ConnectionProfiles::addRecentTrace(path);
        m_welcome->refreshRecent();
    }
}

void MainWindow::onTraceLoadFinished(bool ok, bool cancelled, const QString &error)
{
    m_alertMonitor->start();
    m_loadProgress->hide();
    m_loadCancel->hide();
    if (ok) {
        m_replayBar->setController(m_session->replay(), m_session->tracePath());
        m_replayBar->show();
        const TraceReadStats &stats = m_session->traceStats();
        const bool damaged = stats.badLineCount > 0 || !stats.streamError.isEmpty();
        m_traceDamageButton->setVisible(damaged);
        m_traceDamageButton->setText(stats.streamError.isEmpty()
                                         ? tr("%n bad line(s)", nullptr, int(stats.badLineCount))
                                         : tr("truncated, %n bad line(s)", nullptr, int(stats.badLineCount)));
        m_traceDamageButton->setToolTip(tr("Parts of this file could not be read; everything else was loaded. Click for details."));
        m_incident = incidentFromHeader(stats.header);
        applyIncident();
        if (m_pendingLink)
            applyDeepLink(*m_pendingLink);
        m_pendingLink.reset();
    } else if (cancelled) {
        m_pendingLink.reset();
        statusBar()->showMessage(tr("Loading cancelled"), 5000);
    } else {
        m_pendingLink.reset();
        showWarning(tr("Cannot open trace"), error);
    }
    updateActionStates();
    updateStatusBar();
}

void MainWindow::applyIncident()
{
    if (!m_incident)
        return;
    const IncidentContent &c = m_incident->content;
    m_replayBar->adoptBookmarks(c.bookmarks);
    const SystemStore *store = m_session->store();
    QStringList agents;
    for (const QString &id : c.selectedAgents)
        if (store->agentRow(id) >= 0)
            agents << id;
    if (!agents.isEmpty())
        m_selection->selectAgents(agents);
    if (!c.selectedMessage.isEmpty())
        if (const int row = store->messages().find(c.selectedMessage); row >= 0)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(row));
    if (!c.selectedTask.isEmpty() && c.selectedMessage.isEmpty())
        m_selection->focus(SelectionHub::Kind::Task, c.selectedTask);
    auto *info = new IncidentInfoDialog(*m_incident, this);
    info->setAttribute(Qt::WA_DeleteOnClose);
    info->show(); // not modal: the run is right behind it
}

bool MainWindow::openDeepLink(const QString &text)
{
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    if (!link) {
        showWarning(tr("Cannot open link"), link.error());
        return false;
    }
    if (m_session->source() == InspectorSession::Source::Trace && !m_session->isLoadingTrace()
        && QFileInfo(m_session->tracePath()) == QFileInfo(link->file)) {
        applyDeepLink(*link); // already open: only go there
        return true;
    }
    // A link comes from outside (a chat, a ticket): it does not end a live session or a
    // recording without asking.
    if (m_session->source() == InspectorSession::Source::Live || m_session->isRecording()) {
        const auto answer = QMessageBox::question(
            this, tr("Open link"),
            tr("Opening %1 ends the live session%2. Open it?")
                .arg(QDir::toNativeSeparators(link->file),
                     m_session->isRecording() ? tr(" and its recording") : QString()),
            QMessageBox::Open | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Open)
            return false;
    }
    if (!openTrace(link->file))
        return false;
    m_pendingLink = *link;
    return true;
}

void MainWindow::applyDeepLink(const DeepLink &link)
{
    if (link.timeMs && m_session->replay())
        m_session->replay()->seek(*link.timeMs);
    const SystemStore *store = m_session->store();
    QStringList missing;
    if (!link.agentId.isEmpty()) {
        if (store->agentRow(link.agentId) >= 0) {
            m_selection->selectAgents({link.agentId});
            m_selection->focus(SelectionHub::Kind::Agent, link.agentId);
        } else {
            missing << tr("agent %1").arg(link.agentId);
        }
    }
    if (!link.messageId.isEmpty()) {
        if (const int row = store->messages().find(link.messageId); row >= 0)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(row));
        else
            missing << tr("message %1").arg(link.messageId);
    }
    if (!missing.isEmpty())
        statusBar()->showMessage(tr("The link's %1 is not in this trace at that time").arg(missing.join(tr(" and "))), 10000);
}

QString MainWindow::deepLinkHere() const
{
    if (m_session->source() != InspectorSession::Source::Trace || m_session->tracePath().isEmpty())
        return QString();
    DeepLink link;
    link.file = m_session->tracePath();
    if (m_session->replay())
        link.timeMs = m_session->replay()->positionMs();
    if (!m_selection->selectedAgents().isEmpty())
        link.agentId = m_selection->selectedAgents().first();
    return makeDeepLink(link);
}

IncidentDialog *MainWindow::exportIncident()
{
    if (m_session->source() == InspectorSession::Source::None || m_session->isLoadingTrace())
        return nullptr;
    IncidentDialog::Context context;
    context.session = m_session;
    if (m_session->source() == InspectorSession::Source::Trace)
        context.tracePath = m_session->tracePath();
    context.bookmarks = m_replayBar->bookmarks();
    context.selectedAgents = m_selection->selectedAgents();
    const SystemStore *store = m_session->store();
    if (m_selection->focusKind() == SelectionHub::Kind::Message) {
        bool ok = false;
        const int row = m_selection->focusKey().toInt(&ok);
        if (ok && row >= 0 && size_t(row) < store->messages().size())
            context.selectedMessage = store->messages().id(size_t(row));
    } else if (m_selection->focusKind() == SelectionHub::Kind::Task) {
        context.selectedTask = m_selection->focusKey();
    }
    for (const auto &[key, alert] : m_alertMonitor->openAlerts())
        context.alerts.push_back(alertChangeToJson(AlertChange{alert, true, alert.sinceMs}));
    if (ReplayController *replay = m_session->replay()) {
        context.startMs = replay->startMs();
        context.endMs = replay->endMs();
        context.positionMs = replay->positionMs();
    } else {
        // Live: the retained history, to now.
        context.endMs = store->now();
        const MessageLog &messages = store->messages();
        context.startMs = messages.keptCount() > 0 ? std::min(messages.timestampMs(messages.firstRow()), context.endMs) : context.endMs;
        context.positionMs = context.endMs;
    }
    auto *dialog = new IncidentDialog(context, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

void MainWindow::reportTraceDamage()
{
    const TraceReadStats &stats = m_session->traceStats();
    QStringList numbers;
    for (qint64 line : stats.badLines.mid(0, 50))
        numbers << QString::number(line);
    QString text = tr("Everything readable in this file was loaded.");
    if (stats.badLineCount > 0)
        text += QStringLiteral("\n\n") + tr("%n line(s) could not be read and were skipped: %1%2", nullptr, int(stats.badLineCount))
                                             .arg(numbers.join(QStringLiteral(", ")),
                                                  stats.badLineCount > numbers.size() ? QStringLiteral(", …") : QString());
    if (!stats.streamError.isEmpty())
        text += QStringLiteral("\n\n") + tr("Reading stopped early: %1").arg(stats.streamError);
    showWarning(tr("Damaged trace"), text);
}

void MainWindow::showWarning(const QString &title, const QString &text)
{
    // Window-modal but not blocking: the event loop (and the live model) keep running.
    auto *box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("warningBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

// ---- recording and export ----------------------------------------------------------------

void MainWindow::saveSessionWithDialog(bool visibleRange)
{
    std::optional<qint64> fromMs, toMs;
    QString title = tr("Save session as");
    if (visibleRange) {
        const TimelineAxis &axis = m_timeline->view()->axis();
        fromMs = qint64(std::floor(axis.startMs));
        toMs = qint64(std::ceil(axis.endMs()));
        title = tr("Save %1 – %2 as").arg(QDateTime::fromMSecsSinceEpoch(*fromMs).toString(QStringLiteral("HH:mm:ss")),
                                          QDateTime::fromMSecsSinceEpoch(*toMs).toString(QStringLiteral("HH:mm:ss")));
    }
    const QString suggested = QStringLiteral("map-session-%1.jsonl.zst")
                                  .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = QFileDialog::getSaveFileName(this, title, suggested, tr("Compressed trace (*.jsonl.zst)"));
    if (path.isEmpty())
        return;
    if (!path.endsWith(QLatin1String(".jsonl.zst"))) // the journal is zstd: the name says so
        path += QStringLiteral(".jsonl.zst");
    QString error;
    if (m_session->saveSessionAs(path, &error, fromMs, toMs))
        statusBar()->showMessage(tr("Saving the session to %1…").arg(QDir::toNativeSeparators(path)));
    else
        showWarning(tr("Cannot save the session"), error);
}

void MainWindow::chooseRecordingFile(bool start)
{
    if (!start) {
        m_session->stopRecording();
        return;
    }
    m_recordAction->setChecked(false); // checked again by recordingChanged once it runs
    const QString suggested = QStringLiteral("map-%1.jsonl.zst").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    const QString path = QFileDialog::getSaveFileName(this, tr("Record to"), suggested,
                                                      tr("Compressed trace (*.jsonl.zst);;gzip trace (*.jsonl.gz);;Plain trace (*.jsonl)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!startRecording(path, &error))
        showWarning(tr("Cannot record"), error);
}

bool MainWindow::startRecording(const QString &path, QString *error)
{
    if (!m_session->startRecording(path, error))
        return false;
    statusBar()->showMessage(tr("Recording: reconnected so that the trace starts with the handshake and the snapshot"), 8000);
    return true;
}

RunDiffDialog *MainWindow::compareRuns(const QString &otherTrace)
{
    auto *dialog = new RunDiffDialog(m_session->store(), m_session->tracePath(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RunDiffDialog::showAgentsRequested, this, [this](const QStringList &ids) { m_selection->selectAgents(ids); });
    if (!otherTrace.isEmpty())
        dialog->setOtherTrace(otherTrace);
    dialog->show(); // not modal: the window stays usable beside the comparison
    return dialog;
}

void MainWindow::exportWithDialog(ExportKind kind, const QString &suffix, const QString &filter)
{
    QFileDialog dialog(this, tr("Export"), QString(), filter);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setDefaultSuffix(suffix);
    // Pictures: a name typed without an extension gets the chosen filter's (PNG or SVG).
    connect(&dialog, &QFileDialog::filterSelected, &dialog, [&dialog, suffix](const QString &chosen) {
        dialog.setDefaultSuffix(chosen.contains(QLatin1String("*.svg")) ? QStringLiteral("svg") : suffix);
    });
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    exportTo(kind, dialog.selectedFiles().first());
}

void MainWindow::exportTo(ExportKind kind, const QString &path)
{
    auto finish = [this, path](const JobOutcome &outcome) {
        if (outcome.ok())
            statusBar()->showMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(path)), 8000);
        else if (outcome.cancelled())
            statusBar()->showMessage(tr("Export cancelled: nothing was written"), 8000);
        else
            showWarning(tr("Export failed"), outcome.error);
        Q_EMIT exportFinished(outcome.ok(), outcome.error);
    };
    auto pictureDone = [](bool ok, const QString &error) { return ok ? JobOutcome::done() : JobOutcome::failed(error); };
    if (m_exportJob) {
        finish(JobOutcome::failed(tr("Another export is still running: wait for it or cancel it.")));
        return;
    }
    SystemStore *store = m_session->store();
    ExportJob::MakeWriter makeWriter;
    switch (kind) {
    case ExportKind::ChromeTrace: {
        ChromeTraceOptions options;
        options.timeline = m_session->replay() ? &m_session->replay()->timeline() : nullptr;
        const QStringList agents = m_selection->selectedAgents();
        options.agents = QSet<QString>(agents.cbegin(), agents.cend());
        makeWriter = [store, options](QIODevice &out) { return makeChromeTraceWriter(*store, out, options); };
        break;
    }
    case ExportKind::OpenTelemetry: {
        OtlpOptions options;
        const QString url = store->connection().url;
        if (!url.isEmpty())
            options.serviceName = QStringLiteral("MAP system (%1)").arg(redactSecrets(url));
        makeWriter = [store, options](QIODevice &out) { return makeOtlpWriter(*store, out, options); };
        break;
    }
    case ExportKind::AgentsCsv:
    case ExportKind::MessagesCsv:
    case ExportKind::TasksCsv: {
        const CsvTable table = kind == ExportKind::AgentsCsv ? CsvTable::Agents
            : kind == ExportKind::MessagesCsv              ? CsvTable::Messages
                                                           : CsvTable::Tasks;
        makeWriter = [store, table](QIODevice &out) { return makeCsvWriter(*store, table, out); };
        break;
    }
    case ExportKind::TopologyPicture: {
        TopologyView *view = m_topology->view();
        QString error;
        const bool ok = exportPicture(path, view->size(), view->devicePixelRatioF(), tr("MAP Inspector topology"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(pictureDone(ok, error));
        return;
    }
    case ExportKind::TimelinePicture: {
        TimelineView *view = m_timeline->view();
        QString error;
        const bool ok = exportPicture(path, view->viewport()->size(), view->devicePixelRatioF(), tr("MAP Inspector timeline"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(pictureDone(ok, error));
        return;
    }
    }
    // The job may end at once (a file that cannot be opened): the window's state is set first.
    m_exportJob = new ExportJob(store, path, std::move(makeWriter), this);
    m_exportProgress->setValue(0);
    m_exportProgress->show();
    m_exportCancel->show();
    updateActionStates();
    connect(m_exportJob, &ExportJob::progress, this, [this](qint64 done, qint64 total) {
        m_exportProgress->setValue(total > 0 ? int(done * 100 / total) : 0);
    });
    connect(m_exportJob, &ExportJob::finished, this, [this, finish](const JobOutcome &outcome) {
        m_exportJob->deleteLater();
        m_exportJob = nullptr;
        m_exportProgress->hide();
        m_exportCancel->hide();
        updateActionStates();
        finish(outcome);
    });
    m_exportJob->start();
}

void MainWindow::cancelExport()
{
    if (m_exportJob)
        m_exportJob->cancel();
}

void MainWindow::setForcedObserver(bool on)
{
    m_forcedObserver = on;
    if (on) {
        m_observerAction->setChecked(true);
        m_session->setObserverOnly(true);
    }
}

// ---- control ---------------------------------------------------------------------------

QString MainWindow::controlNote(const QString &method) const
{
    static const QHash<QString, QString> fallbacks = {
        {QStringLiteral("map/inject"), tr("This server does not support map/inject: the message is sent with map/send as a "
                                          "STEERING message instead, and only confirmed if the agent answers.")},
        {QStringLiteral("map/agents/stop"), tr("This server does not support map/agents/stop: the agent's state is set to "
                                               "\"stopped\" with map/agents/update. The registry changes; the agent process is not told.")},
        {QStringLiteral("map/agents/suspend"), tr("This server does not support map/agents/suspend: the state is set to "
                                                  "\"suspended\" with map/agents/update.")},
        {QStringLiteral("map/agents/resume"), tr("This server does not support map/agents/resume: the state is set to "
                                                 "\"idle\" with map/agents/update.")},
    };
    if (m_session->support(method) == Support::Absent)
        return fallbacks.value(method);
    return {};
}

void MainWindow::updateActionStates()
{
    const QString blocked = m_session->actionBlockedReason();
    const bool hasSelection = !m_selection->selectedAgents().isEmpty();
    const struct { QAction *action; QString method; QString help; } controls[] = {
        {m_injectAction, QStringLiteral("map/inject"), tr("Inject a steering message into the selected agents")},
        {m_stopAction, QStringLiteral("map/agents/stop"), tr("Stop the selected agents (asks first)")},
        {m_suspendAction, QStringLiteral("map/agents/suspend"), tr("Suspend the selected agents (asks first)")},
        {m_resumeAction, QStringLiteral("map/agents/resume"), tr("Resume the selected agents (asks first)")},
    };
    for (const auto &c : controls) {
        QString reason = blocked;
        if (reason.isEmpty() && !hasSelection)
            reason = tr("Select one or more agents first");
        c.action->setEnabled(reason.isEmpty());
        QString tip = reason.isEmpty() ? c.help : reason;
        const QString note = controlNote(c.method);
        if (reason.isEmpty() && !note.isEmpty())
            tip += QStringLiteral("\n") + note;
        c.action->setToolTip(tip);
        c.action->setStatusTip(tip);
    }
    const bool live = m_session->source() == InspectorSession::Source::Live;
    m_disconnectAction->setEnabled(live);
    m_renewCredentialAction->setEnabled(live && m_session->usesCredential());
    m_recordAction->setEnabled(live);
    m_saveSessionAction->setEnabled(live && !m_session->journalFolder().isEmpty());
    m_saveRangeAction->setEnabled(m_saveSessionAction->isEnabled());
    m_saveRangeAction->setToolTip(live ? tr("Save the part of this connection's history that the timeline shows as a trace file")
                                       : tr("Saving a session needs a live connection"));
    const bool travelling = m_session->isTimeTravelling();
    m_timeTravelAction->setEnabled(live && !travelling && !m_session->journalFolder().isEmpty());
    m_timeTravelAction->setToolTip(live ? tr("View this session as it was, from its journal, while the live system is still followed")
                                        : tr("Time travel while live needs a live connection"));
    m_backToLiveAction->setEnabled(travelling);
    m_saveSessionAction->setToolTip(live ? tr("Save this connection's history, from its first frame, as a trace file")
                                         : tr("Saving a session needs a live connection"));
    m_recordAction->setToolTip(live ? tr("Record every frame of this connection to a trace file")
                                    : tr("Recording needs a live connection"));
    const bool hasModel = m_session->source() != InspectorSession::Source::None && !m_session->isLoadingTrace();
    for (QAction *a : std::as_const(m_exportActions))
        a->setEnabled(hasModel && !m_exportJob);
    m_exportIncidentAction->setEnabled(hasModel);
    m_incidentInfoAction->setEnabled(m_incident.has_value() && hasModel);
    m_copyLinkAction->setEnabled(hasModel && m_session->source() == InspectorSession::Source::Trace);
}

void MainWindow::injectIntoSelection()
{
    const QStringList targets = m_selection->selectedAgents();
    if (targets.isEmpty() || !m_session->actionBlockedReason().isEmpty())
        return;
    InjectDialog dialog(m_session->store(), targets, controlNote(QStringLiteral("map/inject")), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_session->inject(targets, dialog.content(), dialog.delivery());
    statusBar()->showMessage(tr("Injected into %n agent(s); follow the outcome in Actions", nullptr, int(targets.size())), 5000);
}

void MainWindow::confirmAndRun(const QString &verb, const QString &method)
{
    const QStringList selection = m_selection->selectedAgents();
    if (selection.isEmpty() || !m_session->actionBlockedReason().isEmpty())
        return;
    ConfirmActionDialog dialog(m_session->store(), verb, selection, controlNote(method), this);
    if (dialog.exec() != QDialog::Accepted || dialog.targets().isEmpty())
        return;
    if (method == QLatin1String("map/agents/stop"))
        m_session->stop(dialog.targets(), dialog.reason());
    else if (method == QLatin1String("map/agents/suspend"))
        m_session->suspend(dialog.targets(), dialog.reason());
    else
        m_session->resume(dialog.targets());
    statusBar()->showMessage(tr("%1: %n agent(s); follow the outcome in Actions", nullptr, int(dialog.targets().size())).arg(verb), 5000);
}

void MainWindow::superviseWithDialog()
{
    SupervisionDialog dialog(m_ladder, m_alertMonitor->openAlerts(), m_session->store(), m_session->observerOnly(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QStringList enabled;
    for (int k = 0; k < kAlertKindCount; ++k) {
        const LadderPlan plan = dialog.plan(AlertKind(k));
        m_ladder.setPlan(AlertKind(k), plan);
        if (plan.enabled)
            enabled << alertKindName(AlertKind(k));
    }
    // Alerts already open start their climb from now: nothing fires for time already past.
    std::vector<AlertChange> open;
    const qint64 now = m_session->store()->now();
    for (const auto &[key, alert] : m_alertMonitor->openAlerts())
        open.push_back({alert, true, now});
    m_ladder.alertsChanged(open);
    statusBar()->showMessage(enabled.isEmpty() ? tr("Automatic supervision is off")
                                               : tr("Automatic supervision on for: %1").arg(enabled.join(QStringLiteral(", "))),
                             8000);
}

QString MainWindow::alertRulesPath() const
{
    const QString named = QSettings().value(QStringLiteral("alerts/rulesFile")).toString();
    return !named.isEmpty() ? named
                            : QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/alert-rules.json");
}

void MainWindow::applyAlertDelivery()
{
    m_notifier->setEnabled(m_alertDelivery.desktop);
    m_notifier->setSound(m_alertDelivery.sound);
    m_webhook->setTarget(m_alertDelivery.webhookOn ? QUrl(m_alertDelivery.webhookUrl) : QUrl(), m_alertDelivery.webhookToken,
                         m_alertDelivery.webhookMinSeverity);
}

void MainWindow::editAlertSettings()
{
    const QString path = alertRulesPath();
    AlertSettingsDialog dialog(m_alertMonitor->rules(), QDir::toNativeSeparators(path), m_alertDelivery, this);
    AlertWebhook tester; // "Send a test" posts to what the form says, before it is saved
    connect(&dialog, &AlertSettingsDialog::testWebhookRequested, &tester, [&tester](const QString &url, const QString &token) {
        tester.setTarget(QUrl(url), token, AlertSeverity::Info);
        tester.sendTest();
    });
    connect(&tester, &AlertWebhook::delivered, &dialog, &AlertSettingsDialog::showWebhookTestResult);
    if (dialog.exec() != QDialog::Accepted)
        return;

    const AlertRules rules = dialog.rules();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path);
    const QByteArray text = QByteArray::fromStdString(alertRulesToJson(rules).dump(2)) + '\n';
    const bool saved = file.open(QIODevice::WriteOnly) && file.write(text) == text.size() && file.commit();
    if (saved)
        QSettings().setValue(QStringLiteral("alerts/rulesFile"), path);
    // The detectors start over under the new rules (reading the store again in slices, as after a
    // trace load). When they have evaluated it, the ladder ends the climbs of alerts the new rules
    // no longer raise and keeps the others where they were (a re-raised alert does not climb
    // again), the webhook sends the clearing of what is gone, and the inbox keeps what the
    // operator acknowledged or snoozed. The health policy first: "unresponsive" reads it.
    m_session->store()->setHealthPolicy(healthPolicyForRules(rules, m_session->store()->healthPolicy()));
    m_applyingNewRules = true;
    m_alertMonitor->setRules(rules);

    const AlertDelivery before = m_alertDelivery;
    m_alertDelivery = dialog.delivery();
    QSettings settings;
    settings.setValue(QStringLiteral("alerts/notify"), m_alertDelivery.desktop);
    settings.setValue(QStringLiteral("alerts/sound"), m_alertDelivery.sound);
    settings.setValue(QStringLiteral("alerts/webhookOn"), m_alertDelivery.webhookOn);
    settings.setValue(QStringLiteral("alerts/webhookMinSeverity"), alertSeverityName(m_alertDelivery.webhookMinSeverity));
    const QString key = QString::fromLatin1(kWebhookKeychainKey);
    const bool wanted = m_alertDelivery.webhookOn && !m_alertDelivery.webhookUrl.isEmpty();
    const bool changed = before.webhookUrl != m_alertDelivery.webhookUrl || before.webhookToken != m_alertDelivery.webhookToken;
    if (wanted && (changed || !m_webhookInKeychain)) {
        const Json stored = {{"url", m_alertDelivery.webhookUrl.toStdString()}, {"token", m_alertDelivery.webhookToken.toStdString()}};
        ConnectionProfiles::writeKeychain(key, QString::fromStdString(stored.dump()), this, [this](const QString &error) {
            m_webhookInKeychain = error.isEmpty();
            if (!error.isEmpty())
                statusBar()->showMessage(tr("The webhook works for this session only: the OS keychain is not available (%1)").arg(error),
                                         15000);
        });
    } else if (!wanted && m_webhookInKeychain) {
        ConnectionProfiles::deleteKeychain(key); // off: nothing of it stays behind
        m_webhookInKeychain = false;
    }
    applyAlertDelivery();
    statusBar()->showMessage(saved ? tr("Alert rules saved to %1 and applied").arg(QDir::toNativeSeparators(path))
                                   : tr("Alert rules applied for this session; not saved: %1").arg(file.errorString()),
                             8000);
}

void MainWindow::runLadder()
{
    if (m_session->source() != InspectorSession::Source::Live || m_session->isTimeTravelling() || !m_ladder.anyEnabled())
        return;
    for (const LadderAction &step : m_ladder.due(m_session->store()->now())) {
        ActionStart started;
        switch (step.step) {
        case LadderStep::Nudge:
            started = m_session->inject(step.agents, Json(step.text.toStdString()), MapClient::Delivery::BestEffort);
            break;
        case LadderStep::Suspend:
            started = m_session->suspend(step.agents, step.text);
            break;
        case LadderStep::Stop:
            started = m_session->stop(step.agents, step.text);
            break;
        }
        m_session->setActionOrigin(started.actionIds, step.origin);
        statusBar()->showMessage(tr("%1: %2 for %n agent(s)", nullptr, int(step.agents.size()))
                                     .arg(step.origin, ladderStepName(step.step)),
                                 8000);
    }
}

void MainWindow::stopSelection()
{
    confirmAndRun(tr("Stop"), QStringLiteral("map/agents/stop"));
}

void MainWindow::suspendSelection()
{
    confirmAndRun(tr("Suspend"), QStringLiteral("map/agents/suspend"));
}

void MainWindow::resumeSelection()
{
    confirmAndRun(tr("Resume"), QStringLiteral("map/agents/resume"));
}

// ---- status ----------------------------------------------------------------------------

void MainWindow::updateStatusBar()
{
    const SystemStore *store = m_session->store();
    QString state;
    switch (m_session->source()) {
    case InspectorSession::Source::None: state = tr("Not connected"); break;
    case InspectorSession::Source::Trace:
        state = m_session->isLoadingTrace() ? tr("Loading trace")
                                            : tr("Trace · %n record(s)", nullptr, int(m_session->traceStats().records));
        break;
    case InspectorSession::Source::Live:
        state = clientStateName(m_session->clientState());
        if (m_session->isTimeTravelling())
            state = tr("Viewing the past · live %1, %n event(s) so far", nullptr,
                       int(std::min<qint64>(m_session->liveStore()->counters().eventsApplied, INT_MAX)))
                        .arg(state);
        break;
    }
    if (m_session->observerOnly())
        state += tr(" · observer");
    m_stateLabel->setText(state);
    const ConnectionInfo &c = store->connection();
    m_serverLabel->setText(c.serverName.isEmpty() ? m_session->sourceLabel()
                                                  : QStringLiteral("%1 %2 · %3").arg(c.serverName, c.serverVersion, m_session->sourceLabel()));
    m_rateLabel->setText(tr("%1 events/s").arg(m_session->eventRate(), 0, 'f', 0));
    m_rateLabel->setVisible(m_session->source() == InspectorSession::Source::Live);
    // The clock: shown from one second of difference (transit alone is well under that), with
    // what the model does about it; ages and timeouts are already corrected.
    const bool skewed = c.clockSamples > 0 && std::abs(c.clockOffsetMs) >= 1000;
    m_clockLabel->setVisible(skewed || store->counters().futureTimestamps > 0);
    const QString offset = QString::number(std::abs(double(c.clockOffsetMs)) / 1000.0, 'f', 1);
    m_clockLabel->setText(!skewed ? tr("clock ok")
                          : c.clockOffsetMs < 0 ? tr("server clock %1 s behind").arg(offset)
                                                : tr("server clock %1 s ahead").arg(offset));
    m_clockLabel->setToolTip(tr("Measured from %n live event(s): the server's timestamps against the time they arrived. "
                                "Health ages and action timeouts are on the server's clock, so the difference does not "
                                "make agents look late.", nullptr, c.clockSamples)
                             + (store->counters().futureTimestamps > 0
                                    ? QLatin1Char('\n') + tr("%n event(s) stamped far ahead of their arrival were taken as "
                                                               "arriving when they arrived.", nullptr,
                                                               int(std::min<qint64>(store->counters().futureTimestamps, INT_MAX)))
                                    : QString()));
    const auto &counters = store->counters();
    m_gapsButton->setText(tr("%n gap(s)", nullptr, int(counters.gaps)));
    m_problemsButton->setText(tr("%n problem(s)", nullptr, int(counters.problems)));
    const QString warn = QStringLiteral("color: #d0312d; font-weight: bold");
    m_gapsButton->setStyleSheet(counters.gaps ? warn : QString());
    m_problemsButton->setStyleSheet(counters.problems ? warn : QString());
}

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
    settings.setValue(QStringLiteral("layout/state"), saveState());
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
