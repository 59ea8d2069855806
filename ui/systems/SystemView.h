// One system the window shows: its session (store, journal, clock-skew estimate), detectors,
// selection, controllers, the panels that show it and the actions that act on it. The window
// holds one SystemView per open system (a live connection or a trace) and shows one at a time;
// the others keep following their source, their alerts and their actions (issue 43 item 2).
//
// A view's actions are its own QActions (the controllers enable and run them). Only the shown
// view's actions are in the window and its menus (MainWindow::showSystem swaps them), so a
// shortcut always acts on the system in front and never on one behind it. GUI thread.
#pragma once

#include "alerts/AlertRules.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QWidget>

#include <array>

namespace mapi {
class AlertMonitor;
class InspectorSession;
}
class QAction;

namespace mapi::ui {

class ActionsPanel;
class AgentWorkPanel;
class AgentsPanel;
class AlertNotifier;
class AlertDeliveryController;
class AlertsPanel;
class ConnectionController;
class ControlController;
class ConversationsPanel;
class ExportController;
class HealthPanel;
class InspectorPanel;
class ProblemsPanel;
class ProcessOutputPanel;
class ConnectionsPanel;
class FederationPanel;
class ReplayBar;
class ScopesPanel;
class SelectionHub;
class TasksPanel;
class TelemetryController;
class TimelinePanel;
class TopologyPanel;
class TraceController;

class SystemView : public QObject
{
    Q_OBJECT
public:
    // `window`: parent of the panels, dialogs and actions. `number`: 1, 2, … in the order the
    // systems were opened, never reused while the window lives (the operator's "system 2").
    // `notifier`: the window's one (every system's notifications in one tray icon, at one pace).
    SystemView(int number, QWidget *window, AlertNotifier *notifier);
    ~SystemView() override;

    int number() const { return m_number; }
    // "2 · demo-system 0.1.15 (ws://127.0.0.1:3000)", the trace's file name, or "2 · empty".
    QString label() const;
    // The source alone (URL redacted, or the trace's file name); "" before one is open.
    QString sourceLabel() const;

    InspectorSession *session() const { return m_session; }
    SelectionHub *selection() const { return m_selection; }
    AlertMonitor *alertMonitor() const { return m_alertMonitor; }

    ConnectionController *connection() const { return m_connection; }
    TraceController *traces() const { return m_traces; }
    ExportController *exports() const { return m_exports; }
    ControlController *control() const { return m_control; }
    AlertDeliveryController *alertDelivery() const { return m_alertDelivery; }
    // The connection's live OpenTelemetry export (the profile's), and what /metrics says of it.
    TelemetryController *telemetry() const { return m_telemetry; }

    // The centre: the topology over the replay bar.
    QWidget *centre() const { return m_centre; }
    TopologyPanel *topology() const { return m_topology; }
    ReplayBar *replayBar() const { return m_replayBar; }
    AgentsPanel *agents() const { return m_agents; }
    TimelinePanel *timeline() const { return m_timeline; }
    HealthPanel *health() const { return m_health; }
    InspectorPanel *inspector() const { return m_inspector; }
    AlertsPanel *alerts() const { return m_alerts; }
    ProcessOutputPanel *processOutput() const { return m_processOutput; }
    ConnectionsPanel *connections() const { return m_connections; }
    FederationPanel *federation() const { return m_federation; }
    ConversationsPanel *conversations() const { return m_conversations; }
    AgentWorkPanel *work() const { return m_work; }
    // Every dock's panel by the dock's object name ("agentsDock", …).
    const QHash<QString, QWidget *> &panels() const { return m_panels; }

    // The actions that act on this system, by object name (inject, record, exportAgentsCsv,
    // play, …): the window's menus and shortcuts show the front view's.
    QAction *action(const QString &name) const { return m_actions.value(name); }
    QList<QAction *> actions() const { return m_actions.values(); }

    // What the Alerts dock says in its title (AlertsPanel::attentionChanged), remembered so that
    // the window can say it again when this view comes to the front.
    int alertsWaiting() const { return m_alertsWaiting; }
    int alertsCritical() const { return m_alertsCritical; }

Q_SIGNALS:
    // A sentence for the status bar (a controller's), already naming the system when it is not
    // the one the window shows (setNamedInMessages).
    void statusMessage(const QString &text, int timeoutMs);
    void actionsStarted();        // an operator action went out: the Actions panel to the front
    void alertsActivated();       // a notification was clicked: this system's alerts to the front
    void alertsAttention(int waiting, int critical);
    void labelChanged();          // the source or the server's name changed

public:
    // Messages of a system behind the front one start with its label; notifications name their
    // system while the window holds several.
    void setNaming(bool inMessages, bool inNotifications)
    {
        m_namedInMessages = inMessages;
        m_namedInNotifications = inNotifications;
    }
    // In front: the views follow the store. Behind: the store's changes gather until this view
    // comes back (SystemStore::setChangesHeld), so three systems cost the GUI thread about what
    // one costs; the model, its journal and its detectors go on.
    void setInFront(bool front);
    // Whether the source has what a dock that shows only where it applies shows
    // ("processOutputDock", "conversationsDock", "workDock", "connectionsDock", "federationDock"): the panels' availabilityChanged.
    bool available(const QString &dock) const { return m_available.value(dock); }

Q_SIGNALS:
    void availabilityChanged(const QString &dock, bool available);

private:
    void buildPanels(QWidget *window);
    void wireAlerts();

    int m_number;
    bool m_namedInMessages = false;
    bool m_namedInNotifications = false;
    QHash<QString, bool> m_available;
    InspectorSession *m_session;
    SelectionHub *m_selection;
    AlertMonitor *m_alertMonitor = nullptr;
    bool m_alertViewsStale = false; // topology badges, scrubber marks: alerts changed since they were drawn
    // Open alerts per agent and severity (AlertSeverity's order), from the monitor's changes: the
    // topology's badges. An agent with none is not listed.
    static constexpr int kAlertSeverityCount = int(AlertSeverity::Critical) + 1;
    QHash<QString, std::array<int, kAlertSeverityCount>> m_openAlertsByAgent;
    ConnectionController *m_connection = nullptr;
    TraceController *m_traces = nullptr;
    ExportController *m_exports = nullptr;
    ControlController *m_control = nullptr;
    AlertDeliveryController *m_alertDelivery = nullptr;
    TelemetryController *m_telemetry = nullptr;

    QWidget *m_centre = nullptr;
    TopologyPanel *m_topology = nullptr;
    ReplayBar *m_replayBar = nullptr;
    AgentsPanel *m_agents = nullptr;
    ScopesPanel *m_scopes = nullptr;
    TimelinePanel *m_timeline = nullptr;
    HealthPanel *m_health = nullptr;
    TasksPanel *m_tasks = nullptr;
    ConversationsPanel *m_conversations = nullptr;
    AgentWorkPanel *m_work = nullptr;
    InspectorPanel *m_inspector = nullptr;
    ActionsPanel *m_actionsPanel = nullptr;
    ProblemsPanel *m_problems = nullptr;
    AlertsPanel *m_alerts = nullptr;
    ProcessOutputPanel *m_processOutput = nullptr;
    ConnectionsPanel *m_connections = nullptr;
    FederationPanel *m_federation = nullptr;
    QHash<QString, QWidget *> m_panels;
    QHash<QString, QAction *> m_actions;
    int m_alertsWaiting = 0;
    int m_alertsCritical = 0;
};

} // namespace mapi::ui
