// MainWindow: the operator's control actions (inject, stop, suspend, resume), supervision and alert settings.
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
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace mapi::ui {

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
    revealActions();
    statusBar()->showMessage(tr("Injected into %n agent(s); the outcome shows in Actions", nullptr, int(targets.size())), 5000);
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
    revealActions();
    statusBar()->showMessage(tr("%1: %n agent(s); the outcome shows in Actions", nullptr, int(dialog.targets().size())).arg(verb), 5000);
}

void MainWindow::revealActions()
{
    // Shown and raised over the tabs it shares, the focus left where it is: the operator sees the
    // action go from sent to confirmed without looking for it.
    QDockWidget *actions = dock(QStringLiteral("actionsDock"));
    actions->show();
    actions->raise();
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

} // namespace mapi::ui
