// MainWindow: which actions are available now, and the Actions panel brought forward after one.
// The control actions themselves: ControlController; alert settings: AlertDeliveryController.
#include "MainWindow.h"

#include "controllers/ControlController.h"
#include "session/InspectorSession.h"

#include <QAction>
#include <QDockWidget>

namespace mapi::ui {

// ---- control ---------------------------------------------------------------------------

QString MainWindow::controlNote(const QString &method) const
{
    return m_control->controlNote(method);
}

void MainWindow::updateActionStates()
{
    // The control actions (inject, stop, suspend, resume): ControlController keeps them current.
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

void MainWindow::revealActions()
{
    // Shown and raised over the tabs it shares, the focus left where it is: the operator sees the
    // action go from sent to confirmed without looking for it.
    QDockWidget *actions = dock(QStringLiteral("actionsDock"));
    actions->show();
    actions->raise();
}

} // namespace mapi::ui
