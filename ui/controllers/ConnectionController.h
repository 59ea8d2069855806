// The live connection to one system: connecting (the Connect dialog, and a question before a
// credential would cross the network in clear text), disconnecting, renewing the credential,
// observer mode (and --observer, which the window cannot switch off), and what the connection
// says that the operator must hear (failures, a credential about to expire, a renewal's answer).
//
// One controller serves one system: its session. The window owns the QActions and hands them
// over; the controller runs them and keeps them enabled as the session allows. GUI thread.
#pragma once

#include "client/MapClient.h"
#include "dialogs/ConnectionProfiles.h"

#include "SessionController.h"

namespace mapi::ui {

class ConnectionController : public SessionController
{
    Q_OBJECT
public:
    struct Actions
    {
        QAction *connect = nullptr, *disconnect = nullptr, *renewCredential = nullptr;
        QAction *observer = nullptr; // checkable
    };
    // `monitor`: the detectors are started with a connection (a trace load under way had
    // stopped them).
    ConnectionController(InspectorSession *session, AlertMonitor *monitor, const Actions &actions, QWidget *dialogParent);

    // The Connect dialog (modal), `url` filled in when given; connects when accepted.
    void showConnectDialog(const QString &url = QString());
    // Connects, replacing what the session showed. A token over ws:// is sent only when the
    // operator says so, for this connection only (Cancel, the default, connects nothing).
    // `otlp`: the connection's live OpenTelemetry export (off when its endpoint is empty), told
    // by telemetryChosen() once the connection is sure to start. False when nothing was started.
    bool connectTo(const ClientOptions &options, bool observerOnly, const OtlpExportSettings &otlp = {});
    // Asks for a new token (kept in memory only) and sends it with map/auth/refresh.
    void renewCredential();
    // --observer: every connection is observer-only, and the window cannot switch it off.
    void setForcedObserver(bool on);
    bool forcedObserver() const { return m_forcedObserver; }

    void updateActionStates();

Q_SIGNALS:
    // A connection is about to start (after any question): what is per connection starts over
    // (automatic supervision: ControlController::resetForConnection).
    void connectionStarting(bool observerOnly);
    // Right before connectionStarting(), while the store still shows the previous connection:
    // the new connection's OpenTelemetry export (TelemetryController::setNextConnection), off
    // when its endpoint is empty. The header's value is in it: direct connections only.
    void telemetryChosen(const mapi::ui::OtlpExportSettings &otlp);

private:
    Actions m_actions;
    bool m_forcedObserver = false;
};

} // namespace mapi::ui
