// Traces and recording for one system: opening a trace (asking before it ends a live
// connection), the sample trace, the journals of sessions that did not close, incident bundles
// (their bookmarks and selection applied), map-inspector:// links (go to their time, agent and
// message), what a damaged trace lost; recording the live connection, saving its session (whole
// or a range), and travelling back in time through its journal.
//
// One controller serves one system: its session, selection, detectors and replay bar. The window
// owns the QActions and the status bar's widgets; the controller runs the actions, keeps them
// enabled as the session allows, attaches the replay bar, and says through its signals when a
// load starts and ends. GUI thread.
#pragma once

#include "common/DeepLink.h"
#include "trace/IncidentBundle.h"

#include "SessionController.h"

#include <functional>
#include <optional>
#include <utility>

namespace mapi::ui {

class ReplayBar;
class SelectionHub;

class TraceController : public SessionController
{
    Q_OBJECT
public:
    struct Actions
    {
        QAction *openTrace = nullptr, *openSample = nullptr;
        QAction *record = nullptr; // checkable: checked while recording
        QAction *saveSession = nullptr, *saveRange = nullptr;
        QAction *timeTravel = nullptr, *backToLive = nullptr;
        QAction *incidentInfo = nullptr, *copyLink = nullptr;
    };
    TraceController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor, ReplayBar *replayBar,
                    const Actions &actions, QWidget *dialogParent);

    // Save visible range: the time range (ms since the epoch) the window's timeline shows.
    void setVisibleRange(std::function<std::pair<qint64, qint64>()> range) { m_visibleRange = std::move(range); }

    // Where a trace, the sample, a link's file or a recovered journal opens when this system
    // already shows something (or is loading): the window gives the controller of a system
    // beside this one (MainWindow::systemForNewSource), so that nothing ends a live connection.
    // Unset (a controller on its own): here, asking before a live connection ends.
    void setOpenBeside(std::function<TraceController *()> pick) { m_openBeside = std::move(pick); }

    // File → Open trace: a file dialog, then mayEndLiveConnection(), then openTrace().
    void showOpenTraceDialog();
    // Before a trace takes a live connection's place: asks while connected (Cancel the default);
    // true when it may. openTrace() itself does not ask.
    bool mayEndLiveConnection(const QString &tracePath);
    // Starts loading a trace in the background (loadingChanged; the views fill as it loads; the
    // replay bar is attached once loaded). False, with a warning, when the file cannot be read at
    // all; errors found while loading are reported when it ends. Remembered among recent traces.
    bool openTrace(const QString &path);
    bool openSampleTrace(); // the trace embedded in the program (resources/sample)
    // A map-inspector:// link: opens its file (asking first if that ends a live session), then goes
    // to its time and selects its agent and message once loaded. False for a link not valid.
    bool openDeepLink(const QString &link);
    // The link to the trace shown, at the replay position, with the selected agent (empty when no
    // trace file is shown: a live session has no file to point at).
    QString deepLinkHere() const;
    // The incident bundle shown, if the trace is one (its header's "bundle").
    const std::optional<IncidentInfo> &openIncident() const { return m_incident; }
    // "3 bad lines", "truncated, 1 bad line": what the trace loaded lost; empty when whole.
    QString traceDamageSummary() const;
    void reportTraceDamage(); // the damage in full: which lines, where reading stopped

    // Offers the journals of sessions that did not close (RecoverDialog), when there are any;
    // `always`: shows the dialog even when there are none (File → Recover sessions).
    void offerRecovery(bool always = false);
    // Opens a journal's parts as one trace (joined into one file off the GUI thread first).
    void openJournalParts(const QStringList &parts);

    // Records the live connection to `path` without reconnecting (InspectorSession::startRecording).
    bool startRecording(const QString &path, QString *error = nullptr);
    // The whole retained session, or the range `fromMs`–`toMs`, saved as a trace the operator names.
    void saveSessionWithDialog(std::optional<qint64> fromMs = std::nullopt, std::optional<qint64> toMs = std::nullopt);

    void updateActionStates();

Q_SIGNALS:
    // A trace load or the reading of the journal for time travel began (true) or ended (false);
    // InspectorSession::traceLoadProgress tells how far it is. `cancellable`: a trace load
    // (InspectorSession::cancelTraceLoad); the journal's reading is not.
    void loadingChanged(bool loading, bool cancellable);
    void recentTracesChanged();

private:
    void startTraceLoad(const QString &path, bool remember);
    void onTraceLoadFinished(bool ok, bool cancelled, const QString &error);
    void onTimeTravelReady(bool ok, const QString &error);
    void applyIncident(); // m_incident's bookmarks and selection; shows what it carries
    void applyDeepLink(const DeepLink &link);
    void chooseRecordingFile(bool start);

    SelectionHub *m_selection;
    ReplayBar *m_replayBar;
    Actions m_actions;
    std::function<std::pair<qint64, qint64>()> m_visibleRange;
    std::optional<IncidentInfo> m_incident;
    std::optional<DeepLink> m_pendingLink; // applied when the trace it opened has loaded
    std::function<TraceController *()> m_openBeside;
    TraceController *targetForNewSource(); // this, or the system m_openBeside picks
};

} // namespace mapi::ui
