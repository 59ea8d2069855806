// MainWindow: the systems it holds (issue 43 item 2). Each is a SystemView; one is in front: its
// panels are the docks' current pages, its actions are in the window and the menus, its session
// feeds the status bar. A new source opens beside what is shown; a system whose source went
// away (a cancelled or failed load) closes itself when others remain.
#include "MainWindow.h"

#include "alerts/AlertMonitor.h"
#include "common/AlertNotifier.h"
#include "controllers/AlertDeliveryController.h"
#include "controllers/ConnectionController.h"
#include "controllers/ExportController.h"
#include "controllers/TapController.h"
#include "controllers/TraceController.h"
#include "client/StreamTransports.h"
#include "dialogs/ConnectDialog.h"
#include "dialogs/ConnectionProfiles.h"
#include "dialogs/TapDialog.h"
#include "panels/ConnectionsPanel.h"
#include "panels/AlertsPanel.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "panels/WelcomePage.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "panels/InspectorPanel.h"
#include "systems/FederatedTwins.h"
#include "systems/AttentionHeader.h"
#include "systems/SystemView.h"
#include "systems/SystemsPanel.h"
#include "timeline/TimelineView.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>

namespace mapi::ui {

InspectorSession *MainWindow::session() const { return m_front->session(); }
SelectionHub *MainWindow::selection() const { return m_front->selection(); }
AlertMonitor *MainWindow::alertMonitor() const { return m_front->alertMonitor(); }
AlertsPanel *MainWindow::alertsPanel() const { return m_front->alerts(); }
ConnectionController *MainWindow::connection() const { return m_front->connection(); }
TraceController *MainWindow::traces() const { return m_front->traces(); }
ExportController *MainWindow::exports() const { return m_front->exports(); }
ControlController *MainWindow::control() const { return m_front->control(); }
AlertDeliveryController *MainWindow::alertDelivery() const { return m_front->alertDelivery(); }
ReplayBar *MainWindow::replayBar() const { return m_front->replayBar(); }

SystemView *MainWindow::addSystem()
{
    if (!m_notifier) { // one for every system: one tray icon, one pace of notifications
        m_notifier = new AlertNotifier(this);
        connect(m_notifier, &AlertNotifier::activated, this, [this] {
            // The system whose alert the notification showed, its alerts in front.
            for (SystemView *system : std::as_const(m_systems))
                if (m_systems.size() == 1 || system->label() == m_notifier->lastShownSystem())
                    showSystem(system);
            showNormal();
            raise();
            activateWindow();
            QDockWidget *alerts = dock(QStringLiteral("alertsDock"));
            alerts->show();
            alerts->raise();
        });
    }
    auto *system = new SystemView(++m_systemsOpened, this, m_notifier);
    m_systems << system;
    system->alertMonitor()->setTurnShare(&m_turnShare);
    for (auto it = system->panels().begin(); it != system->panels().end(); ++it)
        m_dockStacks.value(it.key())->addWidget(it.value());
    m_center->addWidget(system->centre());
    InspectorSession *session = system->session();
    session->setJournalOptions(m_journalOptions);
    system->connection()->setForcedObserver(m_forcedObserver);
    system->traces()->setOpenBeside([this] { return systemForNewSource()->traces(); });
    connect(system, &SystemView::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(system, &SystemView::alertsAttention, m_attention, &AttentionHeader::refreshSoon);
    connect(system, &SystemView::actionsStarted, this, [this, system] {
        if (system == m_front)
            revealActions();
    });
    connect(system, &SystemView::labelChanged, this, [this, system] {
        if (system == m_front)
            setWindowTitle(QStringLiteral("%1 — MAP Inspector").arg(system->sourceLabel()));
        Q_EMIT systemsChanged();
    });
    // New rules (Alerts → Settings…) are the window's: every system reads them again.
    connect(system->alertDelivery(), &AlertDeliveryController::rulesApplied, this, [this, system] {
        for (SystemView *other : std::as_const(m_systems))
            if (other != system)
                other->alertDelivery()->loadSettings();
    });
    connect(session, &InspectorSession::sourceChanged, this, [this, system] {
        splitMemoryBudget();
        closeIfEmptied(system);
    });
    connect(session, &InspectorSession::traceLoadFinished, this, [this, system] { closeIfEmptied(system); });
    // A federated agent's twin in another open system: the Inspector offers it, and choosing
    // it brings that system forward with the agent selected and inspected.
    system->inspector()->setTwinLookup([this, system](const QString &agentId) {
        QStringList labels;
        for (const FederatedTwin &twin : findFederatedTwins(m_systems, system, agentId))
            labels << twin.system->label();
        return labels;
    });
    connect(system->inspector(), &InspectorPanel::twinRequested, this, [this, system](const QString &agentId, const QString &label) {
        for (const FederatedTwin &twin : findFederatedTwins(m_systems, system, agentId)) {
            if (twin.system->label() != label)
                continue;
            showSystem(twin.system);
            twin.system->selection()->selectAgents({twin.agentId});
            twin.system->selection()->focus(SelectionHub::Kind::Agent, twin.agentId, nullptr);
            return;
        }
    });
    connect(this, &MainWindow::systemsChanged, system->inspector(), &InspectorPanel::refreshTwins);
    if (!m_twinRefresh.isActive()) {
        // Agents that come or go in any system (those behind the front one announce nothing)
        // can make or end a twin: the front Inspector looks again every 2 s, not at every
        // change (the lookup passes over the other systems' federated agents).
        m_twinRefresh.setInterval(2000);
        connect(&m_twinRefresh, &QTimer::timeout, this, [this] {
            if (m_front && m_front->inspector()->isVisible())
                m_front->inspector()->refreshTwins();
        });
        m_twinRefresh.start();
    }
    session->setMemoryBudget(m_memoryBudget);
    Q_EMIT systemsChanged();
    return system;
}

SystemView *MainWindow::openSystem()
{
    SystemView *system = addSystem();
    showSystem(system);
    return system;
}

SystemView *MainWindow::systemForNewSource()
{
    const InspectorSession *front = m_front->session();
    if (front->source() == InspectorSession::Source::None && !front->isLoadingTrace())
        return m_front;
    SystemView *system = openSystem();
    closeIfEmptied(system); // an open that fails (an unreadable file, a refused connection) leaves it empty
    return system;
}

void MainWindow::closeIfEmptied(SystemView *system)
{
    // Deferred: this runs from the system's own signals, or right after it was picked for a
    // source. And deferred again while a dialog is open: a question (a token over ws://) or a
    // warning (a file that cannot be read) runs its own event loop in the middle of the open.
    QTimer::singleShot(0, this, [this, system = QPointer<SystemView>(system)] {
        if (!system)
            return;
        if (QApplication::activeModalWidget()) {
            QTimer::singleShot(200, this, [this, system] { closeIfEmptied(system); });
            return;
        }
        if (m_systems.size() > 1 && system->session()->source() == InspectorSession::Source::None
            && !system->session()->isLoadingTrace())
            closeSystem(system);
    });
}

void MainWindow::closeSystem(SystemView *system)
{
    if (!m_systems.contains(system))
        return;
    if (m_systems.size() == 1) // the window always holds one: an empty one takes its place
        addSystem();
    if (system == m_front) {
        const qsizetype at = m_systems.indexOf(system);
        showSystem(m_systems.at(at + 1 < m_systems.size() ? at + 1 : at - 1));
    }
    m_systems.removeOne(system);
    delete system; // its connection ends, its panels leave the docks
    splitMemoryBudget();
    Q_EMIT systemsChanged();
    updateActionStates();
}

void MainWindow::showSystem(SystemView *system)
{
    if (!system || !m_systems.contains(system))
        return;
    if (system != m_front) {
        swapActions(m_front, system);
        m_front = system;
    }
    bindFront();
    Q_EMIT systemsChanged();
}

void MainWindow::swapActions(SystemView *from, SystemView *to)
{
    // The window and every menu hold the front system's actions: each of `from`'s is replaced,
    // in its place, by `to`'s of the same name (menus keep their order; shortcuts follow).
    if (!from) {
        addActions(to->actions());
        return;
    }
    const auto swapIn = [from, to](QWidget *holder) {
        for (QAction *old : holder->actions()) {
            if (old->objectName().isEmpty() || from->action(old->objectName()) != old)
                continue;
            if (QAction *replacement = to->action(old->objectName())) {
                holder->insertAction(old, replacement);
                holder->removeAction(old);
            }
        }
    };
    swapIn(this);
    for (QMenu *menu : menuBar()->findChildren<QMenu *>())
        swapIn(menu);
}

void MainWindow::bindFront()
{
    for (const QMetaObject::Connection &c : std::as_const(m_frontConnections))
        disconnect(c);
    m_frontConnections.clear();
    SystemView *front = m_front;
    InspectorSession *session = front->session();
    for (auto it = front->panels().begin(); it != front->panels().end(); ++it)
        m_dockStacks.value(it.key())->setCurrentWidget(it.value());
    for (SystemView *system : std::as_const(m_systems)) {
        system->setNaming(system != front && m_systems.size() > 1, m_systems.size() > 1);
        system->setInFront(system == front);
    }
    if (m_systems.size() > 1)
        dock(QStringLiteral("systemsDock"))->show();

    QList<QMetaObject::Connection> &c = m_frontConnections;
    const auto refresh = [this] {
        updateActionStates();
        updateStatusBar();
    };
    const auto showSource = [this, front, refresh] {
        InspectorSession *s = front->session();
        m_center->setCurrentWidget(s->source() == InspectorSession::Source::None ? static_cast<QWidget *>(m_welcome) : front->centre());
        setWindowTitle(s->source() == InspectorSession::Source::None ? QStringLiteral("MAP Inspector")
                                                                      : QStringLiteral("%1 — MAP Inspector").arg(front->sourceLabel()));
        if (!s->journalDegraded())
            m_journalLabel->hide();
        refresh();
    };
    c << connect(session, &InspectorSession::sourceChanged, this, showSource);
    c << connect(session, &InspectorSession::supportChanged, this, refresh);
    c << connect(session, &InspectorSession::traceLoadFinished, this, refresh);
    c << connect(session, &InspectorSession::timeTravelReady, this, refresh);
    c << connect(session, &InspectorSession::stateChanged, this, refresh);
    c << connect(session, &InspectorSession::observerOnlyChanged, this, refresh);
    c << connect(session, &InspectorSession::timeTravelChanged, this, refresh);
    c << connect(session, &InspectorSession::rateUpdated, this, &MainWindow::updateStatusBar);
    c << connect(session->store(), &SystemStore::changed, this, &MainWindow::updateStatusBar);
    c << connect(session, &InspectorSession::traceLoadProgress, this, [this](qint64 done, qint64 total) {
        // Percent of the file's bytes (compressed bytes for .zst/.gz): QProgressBar holds ints.
        m_loadProgress->setValue(total > 0 ? int(done * 100 / total) : 0);
    });
    // Loading a trace, or reading the journal for time travel: progress (and Cancel for a trace).
    const auto showLoading = [this, front](bool loading, bool cancellable) {
        m_loadProgress->setValue(0);
        m_loadProgress->setVisible(loading);
        m_loadCancel->setVisible(loading && cancellable);
        const QString damage = loading ? QString() : front->traces()->traceDamageSummary();
        m_traceDamageButton->setVisible(!damage.isEmpty());
        m_traceDamageButton->setText(damage);
        m_traceDamageButton->setToolTip(tr("Parts of this file could not be read; everything else was loaded. Click for details."));
    };
    c << connect(front->traces(), &TraceController::loadingChanged, this, showLoading);
    c << connect(front->exports(), &ExportController::exportStarted, this, [this] {
        m_exportProgress->setValue(0);
        m_exportProgress->show();
        m_exportCancel->show();
    });
    c << connect(front->exports(), &ExportController::exportProgress, m_exportProgress, &QProgressBar::setValue);
    c << connect(front->exports(), &ExportController::exportFinished, this, [this] {
        m_exportProgress->hide();
        m_exportCancel->hide();
    });
    const auto showRecording = [this, session](bool recording) {
        m_recordingLabel->setVisible(recording);
        m_recordingLabel->setText(tr("● Recording %1").arg(QFileInfo(session->recordingPath()).fileName()));
        m_recordingLabel->setToolTip(QDir::toNativeSeparators(session->recordingPath()));
    };
    c << connect(session, &InspectorSession::recordingChanged, this, showRecording);
    c << connect(session, &InspectorSession::journalStateChanged, this, [this](bool degraded, const QString &reason) {
        m_journalLabel->setVisible(degraded);
        m_journalLabel->setToolTip(reason);
        statusBar()->showMessage(degraded ? reason.contains(QLatin1String("kept in memory"))
                                              ? tr("Session journal: %1").arg(reason) // journaling refused for good: says so itself
                                              : tr("Session journal: %1; frames are kept in memory (bounded) until the disk can be written again").arg(reason)
                                          : tr("Session journal: written to disk again"),
                                 15000);
    });
    c << connect(front->selection(), &SelectionHub::agentSelectionChanged, this, &MainWindow::updateActionStates);
    QDockWidget *alertsDock = dock(QStringLiteral("alertsDock"));
    const auto alertsTitle = [alertsDock](int waiting, int critical) {
        alertsDock->setWindowTitle(waiting == 0 ? tr("Alerts")
                                   : critical > 0 ? tr("Alerts (%1, %2 critical)").arg(waiting).arg(critical)
                                                  : tr("Alerts (%1)").arg(waiting));
    };
    c << connect(front, &SystemView::alertsAttention, this, alertsTitle);
    const auto showWhenAvailable = [this](const QString &name, bool available) {
        QDockWidget *d = dock(name);
        if (available && d->isHidden())
            d->show();
        else if (!available && !d->isHidden())
            d->hide();
    };
    c << connect(front, &SystemView::availabilityChanged, this, showWhenAvailable);
    c << connect(front->timeline()->view(), &TimelineView::alertClicked, this, [alertsDock] {
        alertsDock->show();
        alertsDock->raise();
    });
    c << connect(front->alerts(), &AlertsPanel::timelineRequested, this, [this, front](qint64 atMs) {
        QDockWidget *timeline = dock(QStringLiteral("timelineDock"));
        timeline->show();
        timeline->raise();
        TimelineView *view = front->timeline()->view();
        const double span = view->axis().spanMs() > 0 ? view->axis().spanMs() : TimelineView::kDefaultSpanMs;
        view->showTimeRange(double(atMs) - span / 4, double(atMs) + span * 3 / 4); // the moment, and what came after
        const QStringList agents = front->selection()->selectedAgents();
        if (!agents.isEmpty())
            view->scrollRowIntoView(view->lanes().rowOfAgent(front->session()->store()->agentRow(agents.first())));
    });
    // An item focused from a panel of another group brings the inspector forward (the panel that
    // asked stays in view); from Health, which shares its group, it does not (Health would hide).
    QDockWidget *inspector = dock(QStringLiteral("inspectorDock"));
    c << connect(front->selection(), &SelectionHub::focusChanged, this,
                 [this, inspector](SelectionHub::Kind kind, const QString &, QObject *origin) {
                     if (kind == SelectionHub::Kind::None || !origin || !inspector->isVisible())
                         return;
                     for (auto *w = qobject_cast<QWidget *>(origin); w; w = w->parentWidget())
                         if (auto *from = qobject_cast<QDockWidget *>(w)) {
                             if (from != inspector && !tabifiedDockWidgets(inspector).contains(from))
                                 inspector->raise();
                             return;
                         }
                     inspector->raise(); // the topology, in the centre
                 });

    // What the new front system is doing now, said at once.
    showSource();
    showLoading(session->isLoadingTrace(), session->isLoadingTrace());
    m_exportProgress->setVisible(front->exports()->isExporting());
    m_exportCancel->setVisible(front->exports()->isExporting());
    showRecording(session->isRecording());
    m_journalLabel->setVisible(session->journalDegraded());
    alertsTitle(front->alertsWaiting(), front->alertsCritical());
    // The docks that show only where they apply follow the front system once it has a source
    // (an empty system keeps the operator's layout as it is).
    if (session->source() != InspectorSession::Source::None)
        for (const QString &name : {QStringLiteral("processOutputDock"), QStringLiteral("conversationsDock"), QStringLiteral("workDock"),
                                    QStringLiteral("connectionsDock"), QStringLiteral("federationDock")})
            showWhenAvailable(name, front->available(name));
}

void MainWindow::splitMemoryBudget()
{
    // The budget is the window's: each live system gets an even share (a trace is not bounded:
    // its history is the point). A system that connects takes its share from the others at once.
    // Likewise the time the GUI thread spends applying live inputs in one turn of its loop.
    qint64 live = 0;
    for (SystemView *system : std::as_const(m_systems))
        live += system->session()->source() == InspectorSession::Source::Live;
    const qint64 share = m_memoryBudget / std::max<qint64>(live, 1);
    for (SystemView *system : std::as_const(m_systems)) {
        if (system->session()->memoryBudget() != share)
            system->session()->setMemoryBudget(share);
        // The GUI thread's time too: the live systems' slices of applying add up to one.
        system->session()->setApplySliceMs(int(std::max<qint64>(2, InspectorSession::kApplySliceMs / std::max<qint64>(live, 1))));
        // And the detectors' slices: one system's piece runs a turn (m_turnShare), and a share of
        // the slice keeps that turn short; a round of one turn per live system adds up to one slice.
        system->alertMonitor()->setSliceMs(int(std::max<qint64>(2, AlertMonitor::kSliceMs / std::max<qint64>(live, 1))));
    }
}

void MainWindow::setMemoryBudget(qint64 bytes)
{
    m_memoryBudget = bytes;
    splitMemoryBudget();
}

void MainWindow::setJournalOptions(const JournalOptions &options)
{
    m_journalOptions = options;
    for (SystemView *system : std::as_const(m_systems))
        system->session()->setJournalOptions(options);
}

void MainWindow::setForcedObserver(bool on)
{
    m_forcedObserver = on;
    for (SystemView *system : std::as_const(m_systems))
        system->connection()->setForcedObserver(on);
}

void MainWindow::showTapDialog()
{
    // The system in front's address when it is a WebSocket one: the usual case is "tap this".
    const QUrl url = session()->connectionUrl();
    const QString scheme = url.scheme();
    TapDialog dialog(scheme == QLatin1String("ws") || scheme == QLatin1String("wss") ? url.toString(QUrl::RemoveUserInfo) : QString(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    if (!startTap(dialog.options(), &error))
        QMessageBox::warning(this, tr("Start a tap"), tr("The tap did not start: %1").arg(error));
}

SystemView *MainWindow::startTap(const TapOptions &options, QString *error)
{
    if (!m_taps)
        m_taps = new TapController(this);
    const std::weak_ptr<RunningTap> tap = m_taps->start(options, error);
    const std::shared_ptr<RunningTap> started = tap.lock();
    if (!started)
        return nullptr;
    // The window observes through the tap as one more participant, with the credential it
    // already holds for that server (the system in front's, when it is the same server).
    ClientOptions client = session()->connectionUrl().adjusted(QUrl::RemoveUserInfo) == options.upstream.adjusted(QUrl::RemoveUserInfo)
        ? session()->clientOptions() : ClientOptions{};
    client.url = started->listenUrl();
    SystemView *system = systemForNewSource();
    system->connection()->connectTo(client, true);
    system->connections()->followLive(
        [tap]() -> std::shared_ptr<const TapConnections> {
            const std::shared_ptr<RunningTap> running = tap.lock(); // a stopped tap: nothing new
            return running ? running->connections() : nullptr;
        },
        started->listenUrl().toString(), WebSocketTap::shownUrl(started->upstream()));
    // The tap goes with the system that shows it: closed, or turned to another source (a weak
    // reference: once stopped, it is no other tap's business).
    QPointer<TapController> taps(m_taps);
    const auto stopTap = [taps, tap] {
        if (taps)
            taps->stop(tap);
    };
    connect(system, &QObject::destroyed, m_taps, stopTap);
    connect(system->session(), &InspectorSession::sourceReplaced, m_taps, stopTap);
    return system;
}

void MainWindow::showConnectDialog(const QString &url)
{
    ConnectDialog dialog(this);
    if (!url.isEmpty())
        dialog.setUrl(url);
    if (dialog.exec() != QDialog::Accepted)
        return;
    systemForNewSource()->connection()->connectTo(dialog.options(), dialog.observerOnly(), dialog.otlp());
}

namespace {
// Where a profile connects, as the Connect dialog reads it ("stdio:COMMAND" launches).
QUrl profileTarget(const ConnectionProfile &profile)
{
    return profile.url.startsWith(QLatin1String("stdio:")) ? launchUrl(profile.url.mid(6)) : QUrl(profile.url, QUrl::StrictMode);
}
} // namespace

int MainWindow::openFleet(const QString &fleet)
{
    const QVector<ConnectionProfile> all = ConnectionProfiles::load();
    QVector<ConnectionProfile> members;
    QStringList missing;
    for (const QString &name : ConnectionProfiles::fleetProfiles(fleet)) {
        const auto it = std::find_if(all.begin(), all.end(), [&](const ConnectionProfile &p) { return p.name == name; });
        if (it != all.end())
            members << *it;
        else
            missing << name;
    }
    if (!missing.isEmpty())
        statusBar()->showMessage(tr("Fleet %1: no profile named %2 any more").arg(fleet, missing.join(QStringLiteral(", "))), 15000);
    openProfiles(members);
    return int(members.size());
}

void MainWindow::openProfiles(QVector<ConnectionProfile> queue)
{
    // One after the other: a token is read from the keychain first, and a question (a token over
    // ws://) comes for each in turn, never two at once.
    if (queue.isEmpty())
        return;
    const ConnectionProfile profile = queue.takeFirst();
    const auto connectWith = [this, profile, queue](const QString &credential) {
        ClientOptions options;
        options.url = profileTarget(profile);
        if (profile.authMethod == QLatin1String("api-key"))
            options.auth.method = AuthConfig::Method::ApiKey;
        else if (profile.authMethod == QLatin1String("bearer"))
            options.auth.method = AuthConfig::Method::Bearer;
        options.auth.credential = credential;
        if (const QString wrong = connectionTargetError(options.url); !wrong.isEmpty()) {
            statusBar()->showMessage(tr("Profile %1 not opened: %2").arg(profile.name, wrong), 15000);
            openProfiles(queue);
            return;
        }
        // Its OpenTelemetry export too, the header's value from the keychain (at once without one).
        ConnectionProfiles::readOtlpExport(profile, this, [this, profile, queue, options](const OtlpExportSettings &otlp, const QString &why) {
            if (!why.isEmpty())
                statusBar()->showMessage(tr("Profile %1: not sending to OpenTelemetry: %2").arg(profile.name, why), 15000);
            systemForNewSource()->connection()->connectTo(options, profile.observerOnly, otlp);
            openProfiles(queue);
        });
    };
    if (profile.authMethod == QLatin1String("none")) {
        connectWith(QString());
        return;
    }
    ConnectionProfiles::readSecret(profile.name, this, [this, profile, queue, connectWith](const QString &secret, const QString &error) {
        if (!error.isEmpty() || secret.isEmpty()) {
            statusBar()->showMessage(tr("Profile %1 not opened: its token is not in the OS keychain (connect it from the Connect "
                                        "dialog)").arg(profile.name), 15000);
            openProfiles(queue);
            return;
        }
        connectWith(secret);
    });
}

QStringList MainWindow::saveFleet(const QString &fleet, QStringList *left)
{
    // The live systems' profiles: the one whose target each connection has; a system connected
    // without a profile and without a credential gets one, named after its target (one with a
    // credential is left out: its token is saved only from the Connect dialog, when asked).
    QVector<ConnectionProfile> profiles = ConnectionProfiles::load();
    QStringList names;
    for (const SystemView *system : std::as_const(m_systems)) {
        const InspectorSession *s = system->session();
        if (s->source() != InspectorSession::Source::Live)
            continue;
        const auto it = std::find_if(profiles.begin(), profiles.end(),
                                     [&](const ConnectionProfile &p) { return profileTarget(p) == s->connectionUrl(); });
        if (it != profiles.end()) {
            names << it->name;
        } else if (!s->usesCredential()) {
            ConnectionProfile made;
            made.url = s->connectionUrl().scheme() == QLatin1String("stdio") ? QStringLiteral("stdio:") + s->connectionUrl().path()
                                                                               : s->connectionUrl().toString();
            made.name = made.url;
            made.observerOnly = s->observerOnly();
            ConnectionProfiles::upsert(made);
            profiles << made;
            names << made.name;
        } else if (left) {
            *left << s->sourceLabel();
        }
    }
    names.removeDuplicates();
    if (!names.isEmpty())
        ConnectionProfiles::saveFleet(fleet, names);
    return names;
}

bool MainWindow::openTraceBeside(const QString &path)
{
    return systemForNewSource()->traces()->openTrace(path);
}

bool MainWindow::openDeepLinkBeside(const QString &link)
{
    return traces()->openDeepLink(link); // TraceController::setOpenBeside picks where
}

} // namespace mapi::ui
