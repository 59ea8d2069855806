// The operator window: dockable panels around the topology, menus and shortcuts for every
// frequent action, a status bar with the connection's health, and the control actions.
#pragma once

#include "client/MapClient.h"
#include "common/DeepLink.h"
#include "trace/IncidentBundle.h"

#include <QMainWindow>
#include <QPointer>

class QAction;
class QDockWidget;
class QLabel;
class QProgressBar;
class QStackedWidget;
class QToolButton;

namespace mapi {
class AlertMonitor;
class ExportJob;
class InspectorSession;
}

namespace mapi::ui {

class SelectionHub;
class ActionsPanel;
class AgentsPanel;
class HealthPanel;
class InspectorPanel;
class ProblemsPanel;
class AlertsPanel;
class AlertDeliveryController;
class ControlController;
class ReplayBar;
class RunDiffDialog;
class IncidentDialog;
class ScopesPanel;
class TasksPanel;
class ConversationsPanel;
class AgentWorkPanel;
class TimelinePanel;
class WelcomePage;
class TopologyPanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    InspectorSession *session() const { return m_session; }
    SelectionHub *selection() const { return m_selection; }
    AlertMonitor *alertMonitor() const { return m_alertMonitor; }
    AlertsPanel *alertsPanel() const { return m_alerts; }

    void connectTo(const ClientOptions &options, bool observerOnly);
    // Starts loading a trace in the background (progress and Cancel in the status bar; the views
    // fill as it loads; the replay bar appears once loaded). False, with a message, when the
    // file cannot be read at all; errors found while loading are reported when it ends.
    bool openTrace(const QString &path);
    // Before a trace takes a live connection's place (File → Open, the recent traces): asks while
    // connected, Cancel the default; true when it may. openTrace() itself does not ask.
    bool mayEndLiveConnection(const QString &tracePath);
    bool openSampleTrace();            // the trace embedded in the program (resources/sample)
    // Records the live connection to `path` (reconnects first, see InspectorSession::startRecording).
    bool startRecording(const QString &path, QString *error = nullptr);
    // Offers the journals of sessions that did not close (RecoverDialog), when there are any;
    // `always`: shows the dialog even when there are none (File → Recover sessions).
    void offerRecovery(bool always = false);
    // Opens a journal's parts as one trace (joined into one file off the GUI thread first).
    void openJournalParts(const QStringList &parts);
    // File → Compare with another run: the run shown against another trace (RunDiffDialog,
    // not modal, deleted on close); `otherTrace` fills its run B.
    RunDiffDialog *compareRuns(const QString &otherTrace = {});
    // File → Export incident…: an incident bundle of the run shown (IncidentDialog, not modal,
    // deleted on close), with the bookmarks, selection and open alerts of the window.
    IncidentDialog *exportIncident();
    // The incident bundle open in the window, if the trace is one (its header's "bundle").
    const std::optional<IncidentInfo> &openIncident() const { return m_incident; }
    // A map-inspector:// link (common/DeepLink.h): opens its file, then goes to its time and
    // selects its agent and message once loaded. False, with a message, for a link not valid.
    bool openDeepLink(const QString &link);
    // The link to the trace shown, at the replay position, with the selected agent (empty when
    // no trace file is shown: a live session has no file to point at).
    QString deepLinkHere() const;

    enum class ExportKind { ChromeTrace, OpenTelemetry, AgentsCsv, MessagesCsv, TasksCsv, TurnsCsv, CheckpointsCsv, AcpCsv, TopologyPicture, TimelinePicture };
    // Writes what the model holds now (a replayed trace: as it was at the replay position);
    // exportFinished() follows. ChromeTrace: only the selected agents' events when agents are
    // selected. Tables and Chrome traces are written a slice at a time (ExportJob: the window
    // stays live, progress and Cancel in the status bar; one export at a time, the export
    // actions are disabled meanwhile). Pictures, written at once: SVG when the path ends in .svg,
    // else PNG, of the view at its current size.
    void exportTo(ExportKind kind, const QString &path);
    bool isExporting() const { return m_exportJob != nullptr; }
    void cancelExport();

    ReplayBar *replayBar() const { return m_replayBar; }
    // What the confirmation of a control action says beside its targets: the fallback used where
    // the server lacks `method`, and a caution when the server stopped answering right after one
    // of our own actions before.
    QString controlNote(const QString &method) const;
    ControlController *control() const { return m_control; }
    AlertDeliveryController *alertDelivery() const { return m_alertDelivery; }
    void setForcedObserver(bool on);   // --observer: no control action whatever the profile says

    // Panels and actions by object name, for tests and the screenshot script.
    QDockWidget *dock(const QString &name) const;
    QAction *action(const QString &name) const;

Q_SIGNALS:
    void exportFinished(bool ok, const QString &error);

public Q_SLOTS:
    void showConnectDialog();
    void renewCredential();
    void showOpenTraceDialog();
    void revealActions(); // after an operator action: the Actions panel in front

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void buildActions();
    void buildMenus();
    void buildDocks();
    void buildStatusBar();
    void updateActionStates();
    void updateStatusBar();
    void startTraceLoad(const QString &path, bool remember);
    void onTraceLoadFinished(bool ok, bool cancelled, const QString &error);
    void applyIncident();                 // m_incident's bookmarks and selection; shows what it carries
    void applyDeepLink(const DeepLink &link);
    void reportTraceDamage();
    void showWarning(const QString &title, const QString &text); // non-blocking message box
    void chooseRecordingFile(bool start);
    // The whole retained session, or (`visibleRange`) the time range the timeline shows.
    void saveSessionWithDialog(bool visibleRange = false);
    void exportWithDialog(ExportKind kind, const QString &suffix, const QString &filter);
    QDockWidget *addPanel(const QString &objectName, const QString &title, QWidget *panel, Qt::DockWidgetArea area,
                          const QKeySequence &toggleShortcut);
    void setTheme(const QString &name);
    void saveLayout();
    // The docks' sizes of the default layout, from the window's size (first show without a
    // saved layout, View → Reset layout).
    void applyDefaultSizes();
    // A saved layout of another version is not restored: the default layout changed (3: Alerts
    // moved out of the inspector's tab group).
    static constexpr int kLayoutVersion = 3;
    bool m_sizeDocksOnShow = false;

    InspectorSession *m_session;
    SelectionHub *m_selection;
    bool m_forcedObserver = false;
    QByteArray m_defaultLayout; // the docks as first built: View → Reset layout goes back to it

    QStackedWidget *m_center = nullptr; // the welcome page; once a source is open, the topology over the replay bar
    WelcomePage *m_welcome = nullptr;
    ReplayBar *m_replayBar = nullptr;
    TopologyPanel *m_topology = nullptr;
    AgentsPanel *m_agents = nullptr;
    ScopesPanel *m_scopes = nullptr;
    TimelinePanel *m_timeline = nullptr;
    HealthPanel *m_health = nullptr;
    TasksPanel *m_tasks = nullptr;
    ConversationsPanel *m_conversations = nullptr;
    AgentWorkPanel *m_work = nullptr;
    InspectorPanel *m_inspector = nullptr;
    ActionsPanel *m_actions = nullptr;
    ProblemsPanel *m_problems = nullptr;
    AlertsPanel *m_alerts = nullptr;
    AlertMonitor *m_alertMonitor = nullptr; // the detectors over the store the views show
    // The window composes controllers, each serving the system shown (ui/controllers): control
    // actions and automatic supervision; how alerts reach the operator.
    ControlController *m_control = nullptr;
    AlertDeliveryController *m_alertDelivery = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_connectAction = nullptr;
    QAction *m_disconnectAction = nullptr;
    QAction *m_renewCredentialAction = nullptr; // live with a credential: map/auth/refresh
    QAction *m_openTraceAction = nullptr;
    QAction *m_openSampleAction = nullptr;
    QAction *m_recordAction = nullptr;
    QAction *m_saveSessionAction = nullptr;
    QAction *m_saveRangeAction = nullptr;
    QAction *m_compareRunsAction = nullptr;
    QAction *m_exportIncidentAction = nullptr;
    QAction *m_incidentInfoAction = nullptr;
    QAction *m_copyLinkAction = nullptr;
    std::optional<IncidentInfo> m_incident;
    std::optional<DeepLink> m_pendingLink;   // applied when the trace it opened has loaded
    QList<QAction *> m_chainActions;         // walk the focused message's causal chain (Alt+arrows)
    QAction *m_timeTravelAction = nullptr;   // live: view the past from the journal
    QAction *m_backToLiveAction = nullptr;
    QList<QAction *> m_exportActions;
    QAction *m_quitAction = nullptr;
    QAction *m_injectAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_suspendAction = nullptr;
    QAction *m_resumeAction = nullptr;
    QAction *m_observerAction = nullptr;
    QAction *m_findAction = nullptr;
    QAction *m_darkAction = nullptr;
    QAction *m_resetLayoutAction = nullptr;
    QAction *m_shortcutsAction = nullptr;
    QAction *m_commandsAction = nullptr;
    QAction *m_aboutAction = nullptr;

    QLabel *m_stateLabel = nullptr;
    QLabel *m_serverLabel = nullptr;
    QLabel *m_rateLabel = nullptr;
    QLabel *m_clockLabel = nullptr; // the server's clock against ours, when it matters
    QToolButton *m_gapsButton = nullptr;
    QToolButton *m_problemsButton = nullptr;
    QProgressBar *m_loadProgress = nullptr; // with m_loadCancel: while a trace loads
    QToolButton *m_loadCancel = nullptr;
    QProgressBar *m_exportProgress = nullptr; // with m_exportCancel: while m_exportJob runs
    QToolButton *m_exportCancel = nullptr;
    ExportJob *m_exportJob = nullptr;
    QToolButton *m_traceDamageButton = nullptr; // the trace loaded was damaged: reportTraceDamage()
    QLabel *m_recordingLabel = nullptr;
    QLabel *m_journalLabel = nullptr;   // shown while the session journal cannot be written
    QLabel *m_silenceLabel = nullptr;   // the connected server stopped answering, or its events stopped
};

} // namespace mapi::ui
