// The operator's control actions on one system: inject, stop, suspend and resume the selected
// agents (each through its confirmation, never directly), the notes a confirmation shows (the
// fallback where the server lacks a method, the caution after a server went deaf following our
// own action), and automatic supervision (the ladder: nudge, suspend, stop per alert kind).
//
// One controller serves one system: its session, selection and detectors. The window owns the
// QActions (menus, shortcuts) and hands them over; the controller enables them, words their
// tooltips and runs them. GUI thread.
#pragma once

#include "alerts/AlertEngine.h"
#include "alerts/SupervisionLadder.h"

#include "SessionController.h"

#include <vector>

class QTimer;

namespace mapi::ui {

class SelectionHub;

class ControlController : public SessionController
{
    Q_OBJECT
public:
    // The window's four control actions (menus, shortcuts), handed over to be run from here.
    struct Actions
    {
        QAction *inject = nullptr, *stop = nullptr, *suspend = nullptr, *resume = nullptr;
    };
    // `dialogParent`: where the confirmations open (the window). The ladder runs once a second.
    ControlController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor, const Actions &actions,
                      QWidget *dialogParent);

    // What the confirmation of `method` says beside its targets: the fallback used where the
    // server lacks it, and a caution when the server stopped answering right after one of our
    // own actions before. Empty: nothing to add.
    QString controlNote(const QString &method) const;
    // Enabled while the session allows actions and agents are selected; the tooltip says why not.
    void updateActionStates();

    void injectIntoSelection();
    void stopSelection();
    void suspendSelection();
    void resumeSelection();
    // Alerts → Supervise automatically…: the ladder's plans per alert kind (a dialog).
    // Opened on an inbox row: a storm's row ("group:" + its key) offers to supervise that storm only.
    void superviseWithDialog(const QString &alertRowKey = {});

    // A new connection: automatic supervision is enabled per connection, never carried over.
    void resetForConnection(bool observerOnly);
    // New alert rules were applied: at the detectors' first verdict under them, climbs of alerts
    // no longer raised end (a re-raised alert keeps its place on the ladder).
    void expectNewRules() { m_newRulesPending = true; }
    const SupervisionLadder &ladder() const { return m_ladder; }
    SupervisionLadder &ladder() { return m_ladder; }
    // Takes the ladder's due steps (live only, not while viewing the past).
    void runLadder();

Q_SIGNALS:
    // An operator action went out: the window shows the Actions panel, where it is followed.
    void actionsStarted();

private:
    void confirmAndRun(const QString &verb, const QString &method);

    SelectionHub *m_selection;
    Actions m_actions;
    SupervisionLadder m_ladder;
    bool m_newRulesPending = false;
};

} // namespace mapi::ui
