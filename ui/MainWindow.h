// The operator window: dockable panels around the topology, menus and shortcuts for every
// frequent action, a status bar with the connection's health, and the control actions.
#pragma once

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
class ConnectionController;
class ControlController;
class ExportController;
class TraceController;
class ReplayBar;
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

    // The window composes controllers, each serving the system shown (ui/controllers).
    ConnectionController *connection() const { return m_connection; }
    TraceController *traces() const { return m_traces; }
    ExportController *exports() const { return m_exports; }
    ControlController *control() const { return m_control; }
    AlertDeliveryController *alertDelivery() const { return m_alertDelivery; }
    ReplayBar *replayBar() const { return m_replayBar; }

    // Panels and actions by object name, for tests and the screenshot script.
    QDockWidget *dock(const QString &name) const;
    QAction *action(const QString &name) const;

public Q_SLOTS:
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
    // The controllers (ui/controllers): the connection; traces and recording; exports and
    // bundles; control actions and automatic supervision; how alerts reach the operator.
    ConnectionController *m_connection = nullptr;
    TraceController *m_traces = nullptr;
    ExportController *m_exports = nullptr;
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
    QList<QAction *> m_chainActions;         // walk the focused message's causal chain (Alt+arrows)
    QAction *m_timeTravelAction = nullptr;   // live: view the past from the journal
    QAction *m_backToLiveAction = nullptr;
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
    QToolButton *m_traceDamageButton = nullptr; // the trace loaded was damaged: reportTraceDamage()
    QLabel *m_recordingLabel = nullptr;
    QLabel *m_journalLabel = nullptr;   // shown while the session journal cannot be written
    QLabel *m_silenceLabel = nullptr;   // the connected server stopped answering, or its events stopped
};

} // namespace mapi::ui
