#include "ExportController.h"

#include "alerts/AlertMonitor.h"
#include "common/PictureExport.h"
#include "common/Redaction.h"
#include "common/Warning.h"
#include "dialogs/IncidentDialog.h"
#include "dialogs/RunDiffDialog.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"
#include "trace/ModelExport.h"
#include "trace/Otlp.h"
#include "trace/TraceTimeline.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QHash>

#include <algorithm>

namespace mapi::ui {

ExportController::ExportController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor,
                                   ReplayBar *replayBar, const Views &views, const Actions &actions, QWidget *dialogParent)
    : SessionController(session, monitor, dialogParent)
    , m_selection(selection)
    , m_replayBar(replayBar)
    , m_views(views)
    , m_actions(actions)
{
    const struct { const char *name; QString text; Kind kind; QString suffix; QString filter; } formats[] = {
        {"exportChromeTrace", tr("&Chrome trace (Perfetto)…"), Kind::ChromeTrace, QStringLiteral("json"), tr("Chrome trace (*.json)")},
        {"exportOpenTelemetry", tr("&OpenTelemetry (OTLP/JSON)…"), Kind::OpenTelemetry, QStringLiteral("otlp.json"), tr("OpenTelemetry OTLP/JSON (*.otlp.json)")},
        {"exportAgentsCsv", tr("&Agents table (CSV)…"), Kind::AgentsCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportMessagesCsv", tr("&Messages table (CSV)…"), Kind::MessagesCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportTasksCsv", tr("&Tasks table (CSV)…"), Kind::TasksCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportTurnsCsv", tr("Conversation t&urns (CSV)…"), Kind::TurnsCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportCheckpointsCsv", tr("Trajectory c&heckpoints (CSV)…"), Kind::CheckpointsCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportAcpCsv", tr("AC&P sessions (CSV)…"), Kind::AcpCsv, QStringLiteral("csv"), tr("CSV (*.csv)")},
        {"exportTopologyPicture", tr("T&opology picture (PNG, SVG)…"), Kind::TopologyPicture, QStringLiteral("png"), tr("PNG (*.png);;SVG (*.svg)")},
        {"exportTimelinePicture", tr("Time&line picture (PNG, SVG)…"), Kind::TimelinePicture, QStringLiteral("png"), tr("PNG (*.png);;SVG (*.svg)")},
    };
    for (const auto &f : formats) {
        auto *a = new QAction(f.text, dialogParent);
        a->setObjectName(QString::fromLatin1(f.name));
        connect(a, &QAction::triggered, this, [this, kind = f.kind, suffix = f.suffix, filter = f.filter] {
            exportWithDialog(kind, suffix, filter);
        });
        m_exportActions << a;
    }
    connect(m_actions.exportIncident, &QAction::triggered, this, [this] { exportIncident(); });
    connect(m_actions.compareRuns, &QAction::triggered, this, [this] { compareRuns(); });
    connect(session, &InspectorSession::sourceChanged, this, &ExportController::updateActionStates);
    connect(session, &InspectorSession::traceLoadFinished, this, &ExportController::updateActionStates);
    updateActionStates();
}

void ExportController::exportWithDialog(Kind kind, const QString &suffix, const QString &filter)
{
    QFileDialog dialog(m_dialogParent, tr("Export"), QString(), filter);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setDefaultSuffix(suffix);
    // Pictures: a name typed without an extension gets the chosen filter's (PNG or SVG).
    connect(&dialog, &QFileDialog::filterSelected, &dialog, [&dialog, suffix](const QString &chosen) {
        dialog.setDefaultSuffix(chosen.contains(QLatin1String("*.svg")) ? QStringLiteral("svg") : suffix);
    });
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    exportTo(kind, dialog.selectedFiles().first());
}

void ExportController::finish(const QString &path, bool ok, bool cancelled, const QString &error)
{
    if (ok)
        Q_EMIT statusMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(path)), 8000);
    else if (cancelled)
        Q_EMIT statusMessage(tr("Export cancelled: nothing was written"), 8000);
    else
        showWarning(m_dialogParent, tr("Export failed"), error);
    Q_EMIT exportFinished(ok, error);
}

void ExportController::exportTo(Kind kind, const QString &path)
{
    if (m_job) {
        finish(path, false, false, tr("Another export is still running: wait for it or cancel it."));
        return;
    }
    SystemStore *store = m_session->store();
    ExportJob::MakeWriter makeWriter;
    switch (kind) {
    case Kind::ChromeTrace: {
        ChromeTraceOptions options;
        options.timeline = m_session->replay() ? &m_session->replay()->timeline() : nullptr;
        const QStringList agents = m_selection->selectedAgents();
        options.agents = QSet<QString>(agents.cbegin(), agents.cend());
        makeWriter = [store, options](QIODevice &out) { return makeChromeTraceWriter(*store, out, options); };
        break;
    }
    case Kind::OpenTelemetry: {
        OtlpOptions options;
        const QString url = store->connection().url;
        if (!url.isEmpty())
            options.serviceName = QStringLiteral("MAP system (%1)").arg(redactSecrets(url));
        makeWriter = [store, options](QIODevice &out) { return makeOtlpWriter(*store, out, options); };
        break;
    }
    case Kind::AgentsCsv:
    case Kind::MessagesCsv:
    case Kind::TasksCsv:
    case Kind::TurnsCsv:
    case Kind::CheckpointsCsv:
    case Kind::AcpCsv: {
        static const QHash<Kind, CsvTable> tables = {
            {Kind::AgentsCsv, CsvTable::Agents},   {Kind::MessagesCsv, CsvTable::Messages},
            {Kind::TasksCsv, CsvTable::Tasks},     {Kind::TurnsCsv, CsvTable::Turns},
            {Kind::CheckpointsCsv, CsvTable::Checkpoints}, {Kind::AcpCsv, CsvTable::Acp}};
        const CsvTable table = tables.value(kind);
        makeWriter = [store, table](QIODevice &out) { return makeCsvWriter(*store, table, out); };
        break;
    }
    case Kind::TopologyPicture: {
        TopologyView *view = m_views.topology;
        QString error;
        const bool ok = exportPicture(path, view->size(), view->devicePixelRatioF(), tr("MAP Inspector topology"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(path, ok, false, error);
        return;
    }
    case Kind::TimelinePicture: {
        TimelineView *view = m_views.timeline;
        QString error;
        const bool ok = exportPicture(path, view->viewport()->size(), view->devicePixelRatioF(), tr("MAP Inspector timeline"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(path, ok, false, error);
        return;
    }
    }
    // The job may end at once (a file that cannot be opened): the state is set first.
    m_job = new ExportJob(store, path, std::move(makeWriter), this);
    Q_EMIT exportStarted();
    updateActionStates();
    connect(m_job, &ExportJob::progress, this, [this](qint64 done, qint64 total) {
        Q_EMIT exportProgress(total > 0 ? int(done * 100 / total) : 0);
    });
    connect(m_job, &ExportJob::finished, this, [this, path](const JobOutcome &outcome) {
        m_job->deleteLater();
        m_job = nullptr;
        updateActionStates();
        finish(path, outcome.ok(), outcome.cancelled(), outcome.error);
    });
    m_job->start();
}

void ExportController::cancelExport()
{
    if (m_job)
        m_job->cancel();
}

IncidentDialog *ExportController::exportIncident()
{
    if (m_session->source() == InspectorSession::Source::None || m_session->isLoadingTrace())
        return nullptr;
    IncidentDialog::Context context;
    context.session = m_session;
    if (m_session->source() == InspectorSession::Source::Trace)
        context.tracePath = m_session->tracePath();
    context.bookmarks = m_replayBar->bookmarks();
    context.selectedAgents = m_selection->selectedAgents();
    const SystemStore *store = m_session->store();
    if (m_selection->focusKind() == SelectionHub::Kind::Message) {
        bool ok = false;
        const int row = m_selection->focusKey().toInt(&ok);
        if (ok && row >= 0 && size_t(row) < store->messages().size())
            context.selectedMessage = store->messages().id(size_t(row));
    } else if (m_selection->focusKind() == SelectionHub::Kind::Task) {
        context.selectedTask = m_selection->focusKey();
    }
    for (const auto &[key, alert] : m_monitor->openAlerts())
        context.alerts.push_back(alertChangeToJson(AlertChange{alert, true, alert.sinceMs}));
    if (ReplayController *replay = m_session->replay()) {
        context.startMs = replay->startMs();
        context.endMs = replay->endMs();
        context.positionMs = replay->positionMs();
    } else {
        // Live: the retained history, to now.
        context.endMs = store->now();
        const MessageLog &messages = store->messages();
        context.startMs = messages.keptCount() > 0 ? std::min(messages.timestampMs(messages.firstRow()), context.endMs) : context.endMs;
        context.positionMs = context.endMs;
    }
    auto *dialog = new IncidentDialog(context, m_dialogParent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

RunDiffDialog *ExportController::compareRuns(const QString &otherTrace)
{
    auto *dialog = new RunDiffDialog(m_session->store(), m_session->tracePath(), m_dialogParent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RunDiffDialog::showAgentsRequested, m_selection, [this](const QStringList &ids) { m_selection->selectAgents(ids); });
    if (!otherTrace.isEmpty())
        dialog->setOtherTrace(otherTrace);
    dialog->show(); // not modal: the window stays usable beside the comparison
    return dialog;
}

void ExportController::updateActionStates()
{
    const bool hasModel = m_session->source() != InspectorSession::Source::None && !m_session->isLoadingTrace();
    for (QAction *a : std::as_const(m_exportActions))
        a->setEnabled(hasModel && !m_job);
    m_actions.exportIncident->setEnabled(hasModel);
}

} // namespace mapi::ui
