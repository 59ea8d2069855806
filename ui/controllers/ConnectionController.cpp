#include "ConnectionController.h"

#include "alerts/AlertMonitor.h"
#include "common/Warning.h"
#include "dialogs/ConnectDialog.h"
#include "session/InspectorSession.h"

#include <QAction>
#include <QInputDialog>
#include <QMessageBox>
#include <QPushButton>

#include <algorithm>

namespace mapi::ui {

ConnectionController::ConnectionController(InspectorSession *session, AlertMonitor *monitor, const Actions &actions,
                                           QWidget *dialogParent)
    : SessionController(session, monitor, dialogParent), m_actions(actions)
{
    connect(m_actions.connect, &QAction::triggered, this, [this] { showConnectDialog(); });
    connect(m_actions.disconnect, &QAction::triggered, session, &InspectorSession::disconnectFromServer);
    connect(m_actions.renewCredential, &QAction::triggered, this, &ConnectionController::renewCredential);
    connect(m_actions.observer, &QAction::toggled, this, [this](bool on) {
        if (!on && m_forcedObserver) {
            m_actions.observer->setChecked(true); // --observer cannot be switched off in the window
            return;
        }
        m_session->setObserverOnly(on);
    });
    connect(session, &InspectorSession::observerOnlyChanged, this, [this] {
        m_actions.observer->setChecked(m_session->observerOnly());
    });
    connect(session, &InspectorSession::fatalError, this, [this](ClientFailure, const QString &message) {
        Q_EMIT statusMessage(message, 15000);
        showWarning(m_dialogParent, tr("Connection failed"), message);
    });
    connect(session, &InspectorSession::credentialExpiring, this, [this](qint64, qint64 expiresInMs) {
        // Not a dialog: it comes at a moment the operator did not choose. The message stays until
        // about when the credential ends; File → Renew credential… gives a new one.
        const int minutes = int((expiresInMs + 59999) / 60000);
        Q_EMIT statusMessage(tr("The server says the credential expires in %n minute(s): File → Renew credential…", nullptr, minutes),
                             int(std::clamp<qint64>(expiresInMs, 15000, 600000)));
    });
    connect(session, &InspectorSession::credentialRenewed, this, [this](bool accepted, const QString &why) {
        Q_EMIT statusMessage(accepted ? tr("The server accepted the new credential") : why, 15000);
    });
    connect(session, &InspectorSession::sourceChanged, this, &ConnectionController::updateActionStates);
    connect(session, &InspectorSession::stateChanged, this, &ConnectionController::updateActionStates);
    updateActionStates();
}

void ConnectionController::showConnectDialog(const QString &url)
{
    ConnectDialog dialog(m_dialogParent);
    if (!url.isEmpty())
        dialog.setUrl(url);
    if (dialog.exec() == QDialog::Accepted)
        connectTo(dialog.options(), dialog.observerOnly(), dialog.otlp());
}

bool ConnectionController::connectTo(const ClientOptions &options, bool observerOnly, const OtlpExportSettings &otlp)
{
    ClientOptions checked = options;
    if (credentialTravelsInClear(options)) {
        QMessageBox ask(QMessageBox::Warning, tr("Send the token unencrypted?"),
                        tr("%1 uses ws://, not wss://: the token would cross the network in clear text, readable by "
                           "anyone on the way.").arg(options.url.host()),
                        QMessageBox::Cancel, m_dialogParent);
        ask.setObjectName(QStringLiteral("credentialInClearBox"));
        QPushButton *send = ask.addButton(tr("Send it unencrypted"), QMessageBox::AcceptRole);
        send->setObjectName(QStringLiteral("sendUnencrypted"));
        ask.setDefaultButton(QMessageBox::Cancel);
        ask.setInformativeText(tr("Use a wss:// URL if the server offers one."));
        ask.exec();
        if (ask.clickedButton() != send)
            return false;
        checked.allowCredentialInClear = true; // for this connection only: the next one asks again
    }
    const bool observer = observerOnly || m_forcedObserver;
    Q_EMIT telemetryChosen(otlp);
    Q_EMIT connectionStarting(observer);
    m_session->connectTo(checked, observer);
    m_monitor->start(); // in case a trace load was under way (it stops the detectors)
    m_actions.observer->setChecked(m_session->observerOnly());
    return true;
}

void ConnectionController::renewCredential()
{
    bool ok = false;
    const QString token = QInputDialog::getText(m_dialogParent, tr("Renew credential"),
                                                tr("A new token for %1 (sent with map/auth/refresh; kept in memory only):")
                                                    .arg(m_session->sourceLabel()),
                                                QLineEdit::Password, QString(), &ok);
    if (ok && !token.trimmed().isEmpty())
        m_session->refreshCredential(token.trimmed());
}

void ConnectionController::setForcedObserver(bool on)
{
    m_forcedObserver = on;
    if (on) {
        m_actions.observer->setChecked(true);
        m_session->setObserverOnly(true);
    }
}

void ConnectionController::updateActionStates()
{
    const bool live = m_session->source() == InspectorSession::Source::Live;
    m_actions.disconnect->setEnabled(live);
    m_actions.renewCredential->setEnabled(live && m_session->usesCredential());
}

} // namespace mapi::ui
