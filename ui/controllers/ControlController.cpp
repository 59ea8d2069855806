#include "controllers/ControlController.h"

#include "alerts/AlertMonitor.h"
#include "dialogs/ActionDialogs.h"
#include "dialogs/SupervisionDialog.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"

#include <QAction>
#include <QHash>
#include <QTimer>
#include <QWidget>

#include <utility>

namespace mapi::ui {

ControlController::ControlController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor,
                                     const Actions &actions, QWidget *dialogParent)
    : SessionController(session, monitor, dialogParent)
    , m_selection(selection)
    , m_actions(actions)
{
    connect(m_actions.inject, &QAction::triggered, this, &ControlController::injectIntoSelection);
    connect(m_actions.stop, &QAction::triggered, this, &ControlController::stopSelection);
    connect(m_actions.suspend, &QAction::triggered, this, &ControlController::suspendSelection);
    connect(m_actions.resume, &QAction::triggered, this, &ControlController::resumeSelection);

    // Storms climb as one: their steps due together are one action (SupervisionLadder).
    m_ladder.setGroupOf([this](const QString &alertKey) { return m_monitor->groups().groupOf(alertKey); });
    connect(m_monitor, &AlertMonitor::alertsChanged, this, [this](const std::vector<AlertChange> &changes) {
        m_ladder.alertsChanged(changes);
        runLadder();
    });
    connect(m_monitor, &AlertMonitor::evaluated, this, [this] {
        if (std::exchange(m_newRulesPending, false))
            m_ladder.retainOnly(m_monitor->openAlerts());
    });
    auto *ladderClock = new QTimer(this);
    ladderClock->setObjectName(QStringLiteral("ladderClock"));
    ladderClock->setInterval(1000); // the ladder's delays are seconds
    connect(ladderClock, &QTimer::timeout, this, &ControlController::runLadder);
    ladderClock->start();

    connect(m_session, &InspectorSession::observerOnlyChanged, this, [this] { m_ladder.setObserverOnly(m_session->observerOnly()); });
    connect(m_session, &InspectorSession::sourceChanged, this, &ControlController::updateActionStates);
    connect(m_session, &InspectorSession::stateChanged, this, &ControlController::updateActionStates);
    connect(m_session, &InspectorSession::supportChanged, this, &ControlController::updateActionStates);
    connect(m_session, &InspectorSession::observerOnlyChanged, this, &ControlController::updateActionStates);
    connect(m_session, &InspectorSession::timeTravelChanged, this, &ControlController::updateActionStates);
    connect(m_selection, &SelectionHub::agentSelectionChanged, this, &ControlController::updateActionStates);
    updateActionStates();
}

QString ControlController::controlNote(const QString &method) const
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
    QString note = m_session->support(method) == Support::Absent ? fallbacks.value(method) : QString();
    // Issue 40: a server that stopped answering just after one of our own actions (the SDK's
    // stock WebSocket adapter when one request emits two events) may do so again: said before
    // the operator repeats it, with the time and the method it followed.
    const ObservationNotes &notes = m_session->store()->observation();
    if (notes.notAnsweringCount() > 0 && notes.lastNotAnswering().detail.contains(QLatin1String(" after our ")))
        note += (note.isEmpty() ? QString() : QStringLiteral("\n\n"))
            + tr("Careful: this server stopped answering right after one of our actions before (%1). Sending this may "
                 "make it stop again; the console will say so and reconnect.")
                  .arg(notes.lastNotAnswering().detail);
    return note;
}

void ControlController::updateActionStates()
{
    const QString blocked = m_session->actionBlockedReason();
    const bool hasSelection = !m_selection->selectedAgents().isEmpty();
    const struct { QAction *action; QString method; QString help; } controls[] = {
        {m_actions.inject, QStringLiteral("map/inject"), tr("Inject a steering message into the selected agents")},
        {m_actions.stop, QStringLiteral("map/agents/stop"), tr("Stop the selected agents (asks first)")},
        {m_actions.suspend, QStringLiteral("map/agents/suspend"), tr("Suspend the selected agents (asks first)")},
        {m_actions.resume, QStringLiteral("map/agents/resume"), tr("Resume the selected agents (asks first)")},
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
}

void ControlController::injectIntoSelection()
{
    const QStringList targets = m_selection->selectedAgents();
    if (targets.isEmpty() || !m_session->actionBlockedReason().isEmpty())
        return;
    InjectDialog dialog(m_session->store(), targets, controlNote(QStringLiteral("map/inject")), m_dialogParent);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_session->inject(targets, dialog.content(), dialog.delivery());
    Q_EMIT actionsStarted();
    Q_EMIT statusMessage(tr("Injected into %n agent(s); the outcome shows in Actions", nullptr, int(targets.size())), 5000);
}

void ControlController::confirmAndRun(const QString &verb, const QString &method)
{
    const QStringList selection = m_selection->selectedAgents();
    if (selection.isEmpty() || !m_session->actionBlockedReason().isEmpty())
        return;
    ConfirmActionDialog dialog(m_session->store(), verb, selection, controlNote(method), m_dialogParent);
    if (dialog.exec() != QDialog::Accepted || dialog.targets().isEmpty())
        return;
    if (method == QLatin1String("map/agents/stop"))
        m_session->stop(dialog.targets(), dialog.reason());
    else if (method == QLatin1String("map/agents/suspend"))
        m_session->suspend(dialog.targets(), dialog.reason());
    else
        m_session->resume(dialog.targets());
    Q_EMIT actionsStarted();
    Q_EMIT statusMessage(tr("%1: %n agent(s); the outcome shows in Actions", nullptr, int(dialog.targets().size())).arg(verb), 5000);
}

void ControlController::stopSelection()
{
    confirmAndRun(tr("Stop"), QStringLiteral("map/agents/stop"));
}

void ControlController::suspendSelection()
{
    confirmAndRun(tr("Suspend"), QStringLiteral("map/agents/suspend"));
}

void ControlController::resumeSelection()
{
    confirmAndRun(tr("Resume"), QStringLiteral("map/agents/resume"));
}

void ControlController::superviseWithDialog(const QString &alertRowKey)
{
    const QString groupPrefix = QStringLiteral("group:");
    const AlertGroup *storm = alertRowKey.startsWith(groupPrefix) ? m_monitor->groups().group(alertRowKey.mid(groupPrefix.size())) : nullptr;
    SupervisionDialog dialog(m_ladder, m_monitor->openAlerts(), m_session->store(), m_session->observerOnly(), storm, m_dialogParent);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QStringList enabled;
    for (int k = 0; k < kAlertKindCount; ++k) {
        const LadderPlan plan = dialog.plan(AlertKind(k));
        m_ladder.setPlan(AlertKind(k), plan);
        if (plan.enabled)
            enabled << (plan.onlyGroups.isEmpty() ? alertKindName(AlertKind(k))
                                                  : tr("%1 (%n storm(s))", nullptr, int(plan.onlyGroups.size())).arg(alertKindName(AlertKind(k))));
    }
    // Alerts already open start their climb from now: nothing fires for time already past.
    std::vector<AlertChange> open;
    const qint64 now = m_session->store()->now();
    for (const auto &[key, alert] : m_monitor->openAlerts())
        open.push_back({alert, true, now});
    m_ladder.alertsChanged(open);
    Q_EMIT statusMessage(enabled.isEmpty() ? tr("Automatic supervision is off")
                                           : tr("Automatic supervision on for: %1").arg(enabled.join(QStringLiteral(", "))),
                         8000);
}

void ControlController::resetForConnection(bool observerOnly)
{
    m_ladder.reset();
    m_ladder.setObserverOnly(observerOnly);
}

void ControlController::runLadder()
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
        Q_EMIT statusMessage(tr("%1: %2 for %n agent(s)", nullptr, int(step.agents.size())).arg(step.origin, ladderStepName(step.step)),
                             8000);
    }
}

} // namespace mapi::ui
