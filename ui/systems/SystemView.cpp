#include "SystemView.h"

#include "alerts/AlertMonitor.h"
#include "controllers/AlertDeliveryController.h"
#include "controllers/ConnectionController.h"
#include "controllers/ControlController.h"
#include "controllers/ExportController.h"
#include "controllers/TelemetryController.h"
#include "controllers/TraceController.h"
#include "panels/ActionsPanel.h"
#include "panels/AgentWorkPanel.h"
#include "panels/AgentsPanel.h"
#include "panels/AlertsPanel.h"
#include "panels/ConversationsPanel.h"
#include "panels/HealthPanel.h"
#include "panels/InspectorPanel.h"
#include "panels/ProblemsPanel.h"
#include "panels/ProcessOutputPanel.h"
#include "panels/ConnectionsPanel.h"
#include "panels/FederationPanel.h"
#include "panels/ScopesPanel.h"
#include "panels/TasksPanel.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"

#include <QAction>
#include <QVBoxLayout>
#include <QWidget>

#include <algorithm>
#include <memory>
#include <utility>

namespace mapi::ui {

SystemView::SystemView(int number, QWidget *window, AlertNotifier *notifier)
    : QObject(window)
    , m_number(number)
    , m_session(new InspectorSession(this))
    , m_selection(new SelectionHub(this))
{
    setObjectName(QStringLiteral("system%1").arg(number));
    // The actions that act on this system; shortcuts carried here so that the menus show them
    // (they fire only while this view is in front: MainWindow::showSystem).
    const auto make = [this](const char *name, const QString &text, const QKeySequence &key = {}) {
        auto *a = new QAction(text, this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setShortcutContext(Qt::ApplicationShortcut);
        m_actions.insert(a->objectName(), a);
        return a;
    };
    // Connect, open a trace and the sample are the window's (they open a system beside this one
    // when this one shows something); the controllers get private ones that nothing shows.
    const auto hidden = [this] { return new QAction(this); };
    QAction *disconnect = make("disconnect", tr("&Disconnect"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    QAction *renew = make("renewCredential", tr("Re&new credential…"));
    renew->setToolTip(tr("Give the live connection a new token before the current one expires"));
    QAction *record = make("record", tr("&Record to file…"), QKeySequence(Qt::CTRL | Qt::Key_R));
    record->setCheckable(true);
    // Ctrl+Shift+S on every platform, shown in the menu (QKeySequence::SaveAs is empty on some).
    QAction *saveSession = make("saveSession", tr("&Save session as…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    QAction *saveRange = make("saveSessionRange", tr("Save &visible range as…"));
    QAction *compareRuns = make("compareRuns", tr("&Compare with another run…"));
    compareRuns->setToolTip(tr("Compare the run shown with another trace: agents, conversations, first divergence, counts"));
    QAction *exportIncident = make("exportIncident", tr("Export &incident…"));
    exportIncident->setToolTip(tr("One file to hand on: a time range of the run with your note, bookmarks, selection, "
                                  "alerts and pictures, redacted as you choose"));
    QAction *incidentInfo = make("incidentInfo", tr("Incident &details…"));
    incidentInfo->setToolTip(tr("What the incident bundle shown carries: range, note, redaction, alerts, pictures"));
    QAction *copyLink = make("copyLink", tr("Copy &link to this moment"));
    copyLink->setToolTip(tr("A map-inspector:// link to this trace, at the replay position, with the selected agent"));
    QAction *timeTravel = make("timeTravel", tr("&Travel back in time"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    QAction *backToLive = make("backToLive", tr("Back to &live"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    backToLive->setToolTip(tr("Show the live system again (it was followed all along)"));
    QAction *inject = make("inject", tr("&Inject message…"), QKeySequence(Qt::CTRL | Qt::Key_I));
    QAction *suspend = make("suspend", tr("&Suspend…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    QAction *resume = make("resume", tr("&Resume…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    QAction *stop = make("stop", tr("S&top…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_X));
    QAction *observer = make("observer", tr("&Observer only"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    observer->setCheckable(true);

    m_topology = new TopologyPanel(m_session, m_selection, window);
    m_replayBar = new ReplayBar(window);
    m_replayBar->addSpaceTarget(m_topology->view());
    m_replayBar->hide();
    for (QAction *a : m_replayBar->windowActions()) // play, step, seek, speed, bookmark
        m_actions.insert(a->objectName(), a);
    m_centre = new QWidget(window);
    m_centre->setObjectName(QStringLiteral("centreView"));
    auto *centreLayout = new QVBoxLayout(m_centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    centreLayout->addWidget(m_topology, 1);
    centreLayout->addWidget(m_replayBar);

    // The detectors run over the store the views show (live, a trace, the past); rules from the
    // file named in the settings (alerts/rulesFile; docs/alerts.md), else the defaults.
    m_alertMonitor = new AlertMonitor(this);
    m_alertMonitor->setStore(m_session->store());
    m_alertDelivery = new AlertDeliveryController(m_session, m_alertMonitor, window, notifier);
    m_alertDelivery->setSystemName([this] { return m_namedInNotifications ? label() : QString(); });
    m_alertDelivery->loadSettings();
    m_alertMonitor->start();
    m_control = new ControlController(m_session, m_selection, m_alertMonitor, {inject, stop, suspend, resume}, window);
    connect(m_alertDelivery, &AlertDeliveryController::rulesApplied, m_control, &ControlController::expectNewRules);
    m_connection = new ConnectionController(m_session, m_alertMonitor, {hidden(), disconnect, renew, observer}, window);
    connect(m_connection, &ConnectionController::connectionStarting, m_control, &ControlController::resetForConnection);
    // The profile's OpenTelemetry export goes with the connection it was chosen for.
    m_telemetry = new TelemetryController(m_session, m_alertMonitor, window);
    connect(m_connection, &ConnectionController::telemetryChosen, m_telemetry, &TelemetryController::setNextConnection);
    m_traces = new TraceController(m_session, m_selection, m_alertMonitor, m_replayBar,
                                   {hidden(), hidden(), record, saveSession, saveRange, timeTravel, backToLive, incidentInfo, copyLink},
                                   window);
    buildPanels(window);
    m_exports = new ExportController(m_session, m_selection, m_alertMonitor, m_replayBar, {m_topology->view(), m_timeline->view()},
                                     {exportIncident, compareRuns}, window);
    for (QAction *a : m_exports->exportActions()) {
        a->setParent(this); // they go with this system
        m_actions.insert(a->objectName(), a);
    }
    // The controllers too (their dialogs still open on the window).
    for (QObject *controller : std::initializer_list<QObject *>{m_alertDelivery, m_control, m_connection, m_traces, m_exports, m_telemetry})
        controller->setParent(this);
    m_traces->setVisibleRange([this] {
        const TimelineAxis &axis = m_timeline->view()->axis();
        return std::make_pair(qint64(std::floor(axis.startMs)), qint64(std::ceil(axis.endMs())));
    });

    // Reports go to the window, named when this system is not the one in front.
    const auto report = [this](const QString &text, int timeoutMs) {
        Q_EMIT statusMessage(m_namedInMessages ? QStringLiteral("%1: %2").arg(label(), text) : text, timeoutMs);
    };
    connect(m_alertDelivery, &AlertDeliveryController::statusMessage, this, report);
    connect(m_control, &ControlController::statusMessage, this, report);
    connect(m_connection, &ConnectionController::statusMessage, this, report);
    connect(m_traces, &TraceController::statusMessage, this, report);
    connect(m_exports, &ExportController::statusMessage, this, report);
    connect(m_telemetry, &TelemetryController::statusMessage, this, report);
    connect(m_control, &ControlController::actionsStarted, this, &SystemView::actionsStarted);
    connect(m_alertDelivery, &AlertDeliveryController::notificationActivated, this, &SystemView::alertsActivated);
    connect(m_replayBar, &ReplayBar::bookmarkSaveFailed, this, [report](const QString &error) {
        report(tr("Bookmarks kept for this session only: %1").arg(error), 15000);
    });
    connect(m_session, &InspectorSession::recordingChanged, record, &QAction::setChecked);
    connect(m_session, &InspectorSession::sourceChanged, this, &SystemView::labelChanged);
    connect(m_session, &InspectorSession::wentLive, this, &SystemView::labelChanged); // the server's name is known
    // What the views hold of the previous system or trace goes before the new one shows: its
    // alerts (not a second later, at the next evaluation), the selection and the evidence chain
    // lit in the timeline and topology, the inspector's item, the topology's search. Filters
    // (agents, tasks) are the operator's way of looking and stay.
    connect(m_session, &InspectorSession::sourceReplaced, this, [this] {
        m_alertMonitor->forgetAlerts();
        m_selection->clear();
        m_topology->clearSearch();
    });
    wireAlerts();
}

SystemView::~SystemView()
{
    // The session ends its connection (and recording) while the panels that show it are there
    // to hear it; then the panels go (the window's docks hold them), and only then, with this
    // object's connections, the session and the detectors they read.
    m_session->disconnectFromServer();
    m_alertMonitor->stop();
    qDeleteAll(m_panels);
    m_panels.clear();
    delete m_centre;
}

void SystemView::setInFront(bool front)
{
    m_session->store()->setChangesHeld(!front);
}

QString SystemView::sourceLabel() const
{
    const ConnectionInfo &c = m_session->store()->connection();
    const QString source = m_session->sourceLabel();
    if (m_session->source() == InspectorSession::Source::Live && !c.serverName.isEmpty())
        return QStringLiteral("%1 (%2)").arg(c.serverName, source);
    return source;
}

QString SystemView::label() const
{
    const QString source = sourceLabel();
    return QStringLiteral("%1 · %2").arg(m_number).arg(source.isEmpty() ? tr("empty") : source);
}

void SystemView::buildPanels(QWidget *window)
{
    m_agents = new AgentsPanel(m_session, m_selection, window);
    m_scopes = new ScopesPanel(m_session, m_selection, window);
    m_timeline = new TimelinePanel(m_session, m_selection, window);
    m_health = new HealthPanel(m_session, m_selection, window);
    m_tasks = new TasksPanel(m_session, m_selection, window);
    m_conversations = new ConversationsPanel(m_session, m_selection, window);
    m_work = new AgentWorkPanel(m_session, m_selection, window);
    m_inspector = new InspectorPanel(m_session, m_selection, window);
    m_actionsPanel = new ActionsPanel(m_session, m_selection, window);
    m_problems = new ProblemsPanel(m_session, m_selection, window);
    m_alerts = new AlertsPanel(m_session, m_selection, m_alertMonitor, window);
    m_processOutput = new ProcessOutputPanel(m_session, window);
    m_connections = new ConnectionsPanel(m_session, window);
    m_federation = new FederationPanel(m_session, window);
    m_panels = {{QStringLiteral("agentsDock"), m_agents},           {QStringLiteral("scopesDock"), m_scopes},
                {QStringLiteral("timelineDock"), m_timeline},       {QStringLiteral("healthDock"), m_health},
                {QStringLiteral("tasksDock"), m_tasks},             {QStringLiteral("inspectorDock"), m_inspector},
                {QStringLiteral("actionsDock"), m_actionsPanel},    {QStringLiteral("problemsDock"), m_problems},
                {QStringLiteral("alertsDock"), m_alerts},           {QStringLiteral("conversationsDock"), m_conversations},
                {QStringLiteral("workDock"), m_work},               {QStringLiteral("processOutputDock"), m_processOutput},
                {QStringLiteral("connectionsDock"), m_connections}, {QStringLiteral("federationDock"), m_federation}};
    connect(m_alerts, &AlertsPanel::injectRequested, m_control, &ControlController::injectIntoSelection);
    connect(m_alerts, &AlertsPanel::suspendRequested, m_control, &ControlController::suspendSelection);
    connect(m_alerts, &AlertsPanel::stopRequested, m_control, &ControlController::stopSelection);
    connect(m_alerts, &AlertsPanel::superviseRequested, m_control, &ControlController::superviseWithDialog);
    connect(m_alerts, &AlertsPanel::settingsRequested, m_alertDelivery, &AlertDeliveryController::editSettings);
    const auto follow = [this](const QString &dock) {
        return [this, dock](bool available) {
            m_available[dock] = available;
            Q_EMIT availabilityChanged(dock, available);
        };
    };
    connect(m_processOutput, &ProcessOutputPanel::availabilityChanged, this, follow(QStringLiteral("processOutputDock")));
    connect(m_conversations, &ConversationsPanel::availabilityChanged, this, follow(QStringLiteral("conversationsDock")));
    connect(m_work, &AgentWorkPanel::availabilityChanged, this, follow(QStringLiteral("workDock")));
    connect(m_connections, &ConnectionsPanel::availabilityChanged, this, follow(QStringLiteral("connectionsDock")));
    connect(m_federation, &FederationPanel::availabilityChanged, this, follow(QStringLiteral("federationDock")));
    connect(m_alerts, &AlertsPanel::attentionChanged, this, [this](int waiting, int critical) {
        m_alertsWaiting = waiting;
        m_alertsCritical = critical;
        Q_EMIT alertsAttention(waiting, critical);
    });
}

void SystemView::wireAlerts()
{
    // The timeline draws every alert as a bar on its agents' lanes; a click on one shows it in
    // the Alerts panel (the window raises its dock).
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, m_timeline->view(), &TimelineView::takeAlertChanges);
    connect(m_alertMonitor, &AlertMonitor::alertsReset, m_timeline->view(), &TimelineView::clearAlerts);
    connect(m_timeline->view(), &TimelineView::alertClicked, m_alerts, &AlertsPanel::selectKey);
    // The same spans along the replay scrubber: where in the run alerts were open. Their titles
    // are made on hover from a copy of the spans (10,000 titles made at each evaluation were 5 ms).
    const auto markAlertsOnScrubber = [this] {
        auto shown = std::make_shared<const std::vector<TimelineView::AlertSpan>>(m_timeline->view()->alertSpans());
        std::vector<ReplayBar::AlertMark> marks;
        marks.reserve(shown->size());
        for (size_t i = 0; i < shown->size(); ++i) {
            const TimelineView::AlertSpan &span = (*shown)[i];
            marks.push_back({span.sinceMs, span.untilMs, span.severity == AlertSeverity::Critical, QString(), int(i)});
        }
        m_replayBar->setAlertMarks(std::move(marks), [this, shown](int at) {
            if (at < 0 || size_t(at) >= shown->size())
                return QString();
            const TimelineView::AlertSpan &span = (*shown)[size_t(at)];
            const SystemStore *store = m_session->store();
            QStringList names;
            for (const QString &id : span.agents.mid(0, 3))
                names << (store->agent(id) ? store->agent(id)->name : id);
            if (span.agents.size() > 3)
                names << tr("%n more", nullptr, int(span.agents.size() - 3));
            return QStringLiteral("%1 · %2").arg(alertKindName(span.kind), names.join(QStringLiteral(", ")));
        });
    };
    // The topology's badges (each agent's most severe open alert) and the scrubber's marks are
    // drawn from the whole verdict: again once per evaluation that changed something, at its
    // `evaluated`, not at each part of a storm's changes. The badges come from open alerts
    // counted per agent and severity as the parts arrive (a walk over 10,000 open alerts at
    // each evaluation was 3 ms).
    connect(m_alertMonitor, &AlertMonitor::alertsChanged, this, [this](const std::vector<AlertChange> &changes) {
        m_alertViewsStale = true;
        for (const AlertChange &change : changes)
            for (const QString &id : change.alert.agents) {
                std::array<int, kAlertSeverityCount> &counts = m_openAlertsByAgent[id];
                counts[size_t(change.alert.severity)] += change.raised ? 1 : -1;
                if (std::all_of(counts.cbegin(), counts.cend(), [](int n) { return n <= 0; }))
                    m_openAlertsByAgent.remove(id);
            }
    });
    connect(m_alertMonitor, &AlertMonitor::evaluated, this, [this, markAlertsOnScrubber] {
        if (!std::exchange(m_alertViewsStale, false))
            return;
        QHash<QString, int> badges;
        badges.reserve(m_openAlertsByAgent.size());
        for (auto it = m_openAlertsByAgent.cbegin(); it != m_openAlertsByAgent.cend(); ++it)
            for (int severity = kAlertSeverityCount - 1; severity >= 0; --severity)
                if (it.value()[size_t(severity)] > 0) {
                    badges.insert(it.key(), severity);
                    break;
                }
        m_topology->setAlertBadges(badges);
        markAlertsOnScrubber();
    });
    connect(m_alertMonitor, &AlertMonitor::alertsReset, this, [this, markAlertsOnScrubber] {
        m_alertViewsStale = false;
        m_openAlertsByAgent.clear();
        m_topology->setAlertBadges({});
        markAlertsOnScrubber();
    });
}

} // namespace mapi::ui
