// The operator window: dockable panels around the topology, menus and shortcuts for every
// frequent action, a status bar with the connection's health, and the control actions.
//
// It holds several systems at once (issue 43): each open live connection or trace is a
// SystemView (ui/systems) with its own session, detectors, selection, controllers and panels;
// one is in front — its panels in the docks, its actions in the menus, its state in the status
// bar — and the Systems overview lists them all. A new source opens beside what is shown, never
// instead of it. MainWindowSystems.cpp.
#pragma once

#include "common/TurnShare.h"
#include "session/SessionJournal.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>
#include <QVector>

class QAction;
class QDockWidget;
class QLabel;
class QProgressBar;
class QStackedWidget;
class QToolButton;

namespace mapi {
class AlertMonitor;
class InspectorSession;
struct TapOptions;
}

namespace mapi::ui {

class SelectionHub;
class ActionsPanel;
class AttentionHeader;
class AgentsPanel;
class HealthPanel;
class InspectorPanel;
class ProblemsPanel;
class AlertsPanel;
class AlertDeliveryController;
class AlertNotifier;
class ConnectionController;
class ControlController;
class ExportController;
class MetricsController;
class TraceController;
class ReplayBar;
class SystemView;
class SystemsPanel;
class TapController;
struct ConnectionProfile;
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

    // The system in front: what the panels show and the actions act on.
    SystemView *frontSystem() const { return m_front; }
    const QList<SystemView *> &systems() const { return m_systems; }
    InspectorSession *session() const;
    SelectionHub *selection() const;
    AlertMonitor *alertMonitor() const;
    AlertsPanel *alertsPanel() const;

    // The controllers of the system in front (ui/controllers).
    ConnectionController *connection() const;
    TraceController *traces() const;
    ExportController *exports() const;
    ControlController *control() const;
    AlertDeliveryController *alertDelivery() const;
    ReplayBar *replayBar() const;

    // Systems (MainWindowSystems.cpp). openSystem(): a new, empty system in front.
    // systemForNewSource(): the system in front when it shows nothing, else a new one beside.
    // closeSystem(): ends its connection (and recording) and removes it; the last one stays,
    // emptied. showSystem(): brings a system to the front.
    SystemView *openSystem();
    SystemView *systemForNewSource();
    void closeSystem(SystemView *system);
    void showSystem(SystemView *system);
    SystemsPanel *systemsPanel() const { return m_systemsPanel; }
    // Systems → Serve Prometheus metrics: one responder on 127.0.0.1 over every live system.
    MetricsController *metrics() const { return m_metrics; }
    AttentionHeader *attentionHeader() const { return m_attention; }

    // For every system, open and to come: the memory budget in total (kDefaultMemoryBudgetBytes),
    // split evenly among the live systems; the journal's retention; --observer.
    void setMemoryBudget(qint64 bytes);
    void setJournalOptions(const JournalOptions &options);
    void setForcedObserver(bool on);

    // The Connect dialog (`url` filled in); connects in systemForNewSource() when accepted.
    void showConnectDialog(const QString &url = QString());
    // Fleets (ConnectionProfiles::fleets): every profile of `fleet` connected, each in a system
    // beside what is shown (tokens from the keychain); the number of profiles it holds.
    // saveFleet(): the live systems' profiles as `fleet` (a system without a profile and without
    // a credential gets one; those with a credential but no profile are named in `left`).
    int openFleet(const QString &fleet);
    QStringList saveFleet(const QString &fleet, QStringList *left = nullptr);
    // Systems → Start a tap…: the dialog, then startTap(). startTap(): runs a passive tap
    // (TapController) and observes the system through it in a system beside what is shown, its
    // Connections panel following the tap's participants; the tap stops with that system. The
    // new system, or nullptr (with `error`) when the tap cannot start.
    void showTapDialog();
    SystemView *startTap(const TapOptions &options, QString *error = nullptr);
    // Opens a trace or a map-inspector:// link beside what is shown.
    bool openTraceBeside(const QString &path);
    bool openDeepLinkBeside(const QString &link);

    // Panels and actions by object name, for tests and the screenshot script: a dock, and the
    // window's actions (the system in front's among them).
    QDockWidget *dock(const QString &name) const;
    QAction *action(const QString &name) const;

public Q_SLOTS:
    void revealActions(); // after an operator action: the Actions panel in front

Q_SIGNALS:
    void systemsChanged(); // a system opened or closed, or another came to the front

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
    // MainWindowSystems.cpp: a new system's panels into the docks' stacks and its reports to the
    // window; the front system's signals to the status bar, docks and actions (unbound first).
    SystemView *addSystem();
    void bindFront();
    void swapActions(SystemView *from, SystemView *to);
    void splitMemoryBudget();
    void closeIfEmptied(SystemView *system);
    void openProfiles(QVector<ConnectionProfile> queue);
    // A system's OpenTelemetry export is sending its last spans (TelemetryController::isDraining).
    bool telemetryDraining() const;
    // A saved layout of another version is not restored: the default layout changed (4: the
    // Systems dock).
    static constexpr int kLayoutVersion = 4;
    bool m_sizeDocksOnShow = false;
    bool m_closingAfterDrain = false;        // a close waits for the exports' last spans (closeEvent)
    QPointer<QTimer> m_drainPoll;            // meanwhile, whether they went (every 50 ms)

    QList<SystemView *> m_systems;
    SystemView *m_front = nullptr;
    int m_systemsOpened = 0;                 // numbers systems 1, 2, … (never reused)
    QTimer m_twinRefresh;                    // the front Inspector's federated twins looked at again (2 s)
    // Every system's detectors take their turns here, one piece a turn. A member: destroyed after
    // ~MainWindow's body has closed the systems; a monitor outliving it falls back to its own.
    TurnShare m_turnShare;
    QList<QMetaObject::Connection> m_frontConnections;
    AlertNotifier *m_notifier = nullptr;     // every system's notifications: one tray icon, one pace
    qint64 m_memoryBudget;
    JournalOptions m_journalOptions;
    bool m_forcedObserver = false;
    QByteArray m_defaultLayout; // the docks as first built: View → Reset layout goes back to it

    QStackedWidget *m_center = nullptr; // the welcome page, or the front system's topology over its replay bar
    AttentionHeader *m_attention = nullptr; // above the centre: counts per health and state, per system
    WelcomePage *m_welcome = nullptr;
    QHash<QString, QStackedWidget *> m_dockStacks; // dock name → one page per system
    SystemsPanel *m_systemsPanel = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_connectAction = nullptr;
    QAction *m_openTraceAction = nullptr;
    QAction *m_openSampleAction = nullptr;
    QAction *m_closeSystemAction = nullptr;
    QAction *m_startTapAction = nullptr;
    TapController *m_taps = nullptr;
    MetricsController *m_metrics = nullptr;
    QAction *m_nextSystemAction = nullptr;
    QAction *m_previousSystemAction = nullptr;
    QList<QAction *> m_chainActions;         // walk the focused message's causal chain (Alt+arrows)
    QAction *m_quitAction = nullptr;
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
    QProgressBar *m_exportProgress = nullptr; // with m_exportCancel: while the front system exports
    QToolButton *m_exportCancel = nullptr;
    QToolButton *m_traceDamageButton = nullptr; // the trace loaded was damaged: reportTraceDamage()
    QLabel *m_recordingLabel = nullptr;
    QLabel *m_journalLabel = nullptr;   // shown while the session journal cannot be written
    QLabel *m_silenceLabel = nullptr;   // the connected server stopped answering, or its events stopped
};

} // namespace mapi::ui
