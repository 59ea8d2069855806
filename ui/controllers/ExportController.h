// Exports and bundles of one system: its tables (CSV), Chrome and OpenTelemetry traces, pictures
// of the topology and the timeline, incident bundles (IncidentDialog), and the comparison with
// another run (RunDiffDialog).
//
// Tables and traces are written a slice at a time by an ExportJob (the window stays live;
// progress and Cancel are the window's, fed by exportProgress; one export at a time, the export
// actions disabled meanwhile). The controller makes its own export actions (one per format:
// exportActions(), for the window's menu), and runs the window's incident and comparison
// actions. GUI thread.
#pragma once

#include <QList>
#include "SessionController.h"

namespace mapi {
class ExportJob;
} // namespace mapi

namespace mapi::ui {

class ReplayBar;
class SelectionHub;
class TimelineView;
class TopologyView;
class IncidentDialog;
class RunDiffDialog;

class ExportController : public SessionController
{
    Q_OBJECT
public:
    enum class Kind { ChromeTrace, OpenTelemetry, AgentsCsv, MessagesCsv, TasksCsv, TurnsCsv, CheckpointsCsv, AcpCsv, TopologyPicture, TimelinePicture };
    struct Views // pictured as they are on screen, at their current size
    {
        TopologyView *topology = nullptr;
        TimelineView *timeline = nullptr;
    };
    struct Actions
    {
        QAction *exportIncident = nullptr, *compareRuns = nullptr;
    };
    // `replayBar`: its bookmarks go into an incident bundle. The export actions are made here,
    // children of `dialogParent`.
    ExportController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor, ReplayBar *replayBar,
                     const Views &views, const Actions &actions, QWidget *dialogParent);

    // One per Kind, named "export<Kind>" (exportAgentsCsv, …); each asks for a file, then exports.
    const QList<QAction *> &exportActions() const { return m_exportActions; }

    // Writes what the model holds now (a replayed trace: as it was at the replay position);
    // exportFinished() follows, also for a refusal. ChromeTrace: only the selected agents' events
    // when agents are selected. Pictures are written at once: SVG when the path ends in .svg,
    // else PNG.
    void exportTo(Kind kind, const QString &path);
    bool isExporting() const { return m_job != nullptr; }
    void cancelExport();
    // File → Export incident…: an incident bundle of the run shown (not modal, deleted on close),
    // with the replay bar's bookmarks and the selection and open alerts. Null when nothing is shown.
    IncidentDialog *exportIncident();
    // File → Compare with another run: the run shown against another trace (not modal, deleted
    // on close); `otherTrace` fills its run B.
    RunDiffDialog *compareRuns(const QString &otherTrace = QString());

    void updateActionStates();

Q_SIGNALS:
    void exportStarted();               // a sliced export began (pictures end at once)
    void exportProgress(int percent);
    void exportFinished(bool ok, const QString &error);

private:
    void exportWithDialog(Kind kind, const QString &suffix, const QString &filter);
    void finish(const QString &path, bool ok, bool cancelled, const QString &error);

    SelectionHub *m_selection;
    ReplayBar *m_replayBar;
    Views m_views;
    Actions m_actions;
    QList<QAction *> m_exportActions;
    ExportJob *m_job = nullptr;
};

} // namespace mapi::ui
