// The operator window: dockable panels around the topology, menus and shortcuts for every
// frequent action, a status bar with the connection's health, and the control actions.
#pragma once

#include "client/MapClient.h"

#include <QMainWindow>
#include <QPointer>

class QAction;
class QDockWidget;
class QLabel;
class QStackedWidget;
class QToolButton;

namespace mapi::ui {

class LiveSession;
class SelectionHub;
class ActionsPanel;
class AgentsPanel;
class HealthPanel;
class InspectorPanel;
class ProblemsPanel;
class ScopesPanel;
class TasksPanel;
class TimelinePanel;
class TopologyPanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    LiveSession *session() const { return m_session; }
    SelectionHub *selection() const { return m_selection; }

    void connectTo(const ClientOptions &options, bool observerOnly);
    bool openTrace(const QString &path);
    void setForcedObserver(bool on);   // --observer: no control action whatever the profile says

    // Panels and actions by object name, for tests and the screenshot script.
    QDockWidget *dock(const QString &name) const;
    QAction *action(const QString &name) const;

public Q_SLOTS:
    void showConnectDialog();
    void showOpenTraceDialog();
    void injectIntoSelection();
    void stopSelection();
    void suspendSelection();
    void resumeSelection();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildActions();
    void buildMenus();
    void buildDocks();
    void buildStatusBar();
    QWidget *buildWelcomePage();
    void refreshWelcomePage();
    void updateActionStates();
    void updateStatusBar();
    void confirmAndRun(const QString &verb, const QString &method);
    QString controlNote(const QString &method) const;
    QDockWidget *addPanel(const QString &objectName, const QString &title, QWidget *panel, Qt::DockWidgetArea area,
                          const QKeySequence &toggleShortcut);
    void setTheme(const QString &name);
    void saveLayout();

    LiveSession *m_session;
    SelectionHub *m_selection;
    bool m_forcedObserver = false;
    QByteArray m_defaultLayout;

    QStackedWidget *m_center = nullptr;
    QWidget *m_welcome = nullptr;
    QWidget *m_recentBox = nullptr;
    TopologyPanel *m_topology = nullptr;
    AgentsPanel *m_agents = nullptr;
    ScopesPanel *m_scopes = nullptr;
    TimelinePanel *m_timeline = nullptr;
    HealthPanel *m_health = nullptr;
    TasksPanel *m_tasks = nullptr;
    InspectorPanel *m_inspector = nullptr;
    ActionsPanel *m_actions = nullptr;
    ProblemsPanel *m_problems = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_connectAction = nullptr;
    QAction *m_disconnectAction = nullptr;
    QAction *m_openTraceAction = nullptr;
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
    QAction *m_aboutAction = nullptr;

    QLabel *m_stateLabel = nullptr;
    QLabel *m_serverLabel = nullptr;
    QLabel *m_rateLabel = nullptr;
    QToolButton *m_gapsButton = nullptr;
    QToolButton *m_problemsButton = nullptr;
};

} // namespace mapi::ui
