// MainWindow: saving the session, recording, comparing runs and exporting.
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

// ---- recording and export ----------------------------------------------------------------

void MainWindow::saveSessionWithDialog(bool visibleRange)
{
    std::optional<qint64> fromMs, toMs;
    QString title = tr("Save session as");
    if (visibleRange) {
        const TimelineAxis &axis = m_timeline->view()->axis();
        fromMs = qint64(std::floor(axis.startMs));
        toMs = qint64(std::ceil(axis.endMs()));
        title = tr("Save %1 – %2 as").arg(QDateTime::fromMSecsSinceEpoch(*fromMs).toString(QStringLiteral("HH:mm:ss")),
                                          QDateTime::fromMSecsSinceEpoch(*toMs).toString(QStringLiteral("HH:mm:ss")));
    }
    const QString suggested = QStringLiteral("map-session-%1.jsonl.zst")
                                  .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = QFileDialog::getSaveFileName(this, title, suggested, tr("Compressed trace (*.jsonl.zst)"));
    if (path.isEmpty())
        return;
    if (!path.endsWith(QLatin1String(".jsonl.zst"))) // the journal is zstd: the name says so
        path += QStringLiteral(".jsonl.zst");
    QString error;
    if (m_session->saveSessionAs(path, &error, fromMs, toMs))
        statusBar()->showMessage(tr("Saving the session to %1…").arg(QDir::toNativeSeparators(path)));
    else
        showWarning(tr("Cannot save the session"), error);
}

void MainWindow::chooseRecordingFile(bool start)
{
    if (!start) {
        m_session->stopRecording();
        return;
    }
    m_recordAction->setChecked(false); // checked again by recordingChanged once it runs
    const QString suggested = QStringLiteral("map-%1.jsonl.zst").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    const QString path = QFileDialog::getSaveFileName(this, tr("Record to"), suggested,
                                                      tr("Compressed trace (*.jsonl.zst);;gzip trace (*.jsonl.gz);;Plain trace (*.jsonl)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!startRecording(path, &error))
        showWarning(tr("Cannot record"), error);
}

bool MainWindow::startRecording(const QString &path, QString *error)
{
    if (!m_session->startRecording(path, error))
        return false;
    statusBar()->showMessage(m_session->recordingNote(), 8000);
    return true;
}

RunDiffDialog *MainWindow::compareRuns(const QString &otherTrace)
{
    auto *dialog = new RunDiffDialog(m_session->store(), m_session->tracePath(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RunDiffDialog::showAgentsRequested, this, [this](const QStringList &ids) { m_selection->selectAgents(ids); });
    if (!otherTrace.isEmpty())
        dialog->setOtherTrace(otherTrace);
    dialog->show(); // not modal: the window stays usable beside the comparison
    return dialog;
}

void MainWindow::exportWithDialog(ExportKind kind, const QString &suffix, const QString &filter)
{
    QFileDialog dialog(this, tr("Export"), QString(), filter);
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

void MainWindow::exportTo(ExportKind kind, const QString &path)
{
    auto finish = [this, path](const JobOutcome &outcome) {
        if (outcome.ok())
            statusBar()->showMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(path)), 8000);
        else if (outcome.cancelled())
            statusBar()->showMessage(tr("Export cancelled: nothing was written"), 8000);
        else
            showWarning(tr("Export failed"), outcome.error);
        Q_EMIT exportFinished(outcome.ok(), outcome.error);
    };
    auto pictureDone = [](bool ok, const QString &error) { return ok ? JobOutcome::done() : JobOutcome::failed(error); };
    if (m_exportJob) {
        finish(JobOutcome::failed(tr("Another export is still running: wait for it or cancel it.")));
        return;
    }
    SystemStore *store = m_session->store();
    ExportJob::MakeWriter makeWriter;
    switch (kind) {
    case ExportKind::ChromeTrace: {
        ChromeTraceOptions options;
        options.timeline = m_session->replay() ? &m_session->replay()->timeline() : nullptr;
        const QStringList agents = m_selection->selectedAgents();
        options.agents = QSet<QString>(agents.cbegin(), agents.cend());
        makeWriter = [store, options](QIODevice &out) { return makeChromeTraceWriter(*store, out, options); };
        break;
    }
    case ExportKind::OpenTelemetry: {
        OtlpOptions options;
        const QString url = store->connection().url;
        if (!url.isEmpty())
            options.serviceName = QStringLiteral("MAP system (%1)").arg(redactSecrets(url));
        makeWriter = [store, options](QIODevice &out) { return makeOtlpWriter(*store, out, options); };
        break;
    }
    case ExportKind::AgentsCsv:
    case ExportKind::MessagesCsv:
    case ExportKind::TasksCsv:
    case ExportKind::TurnsCsv:
    case ExportKind::CheckpointsCsv:
    case ExportKind::AcpCsv: {
        static const QHash<ExportKind, CsvTable> tables = {
            {ExportKind::AgentsCsv, CsvTable::Agents},   {ExportKind::MessagesCsv, CsvTable::Messages},
            {ExportKind::TasksCsv, CsvTable::Tasks},     {ExportKind::TurnsCsv, CsvTable::Turns},
            {ExportKind::CheckpointsCsv, CsvTable::Checkpoints}, {ExportKind::AcpCsv, CsvTable::Acp}};
        const CsvTable table = tables.value(kind);
        makeWriter = [store, table](QIODevice &out) { return makeCsvWriter(*store, table, out); };
        break;
    }
    case ExportKind::TopologyPicture: {
        TopologyView *view = m_topology->view();
        QString error;
        const bool ok = exportPicture(path, view->size(), view->devicePixelRatioF(), tr("MAP Inspector topology"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(pictureDone(ok, error));
        return;
    }
    case ExportKind::TimelinePicture: {
        TimelineView *view = m_timeline->view();
        QString error;
        const bool ok = exportPicture(path, view->viewport()->size(), view->devicePixelRatioF(), tr("MAP Inspector timeline"),
                                      [view](QPainter &p) { view->renderTo(p); }, &error);
        finish(pictureDone(ok, error));
        return;
    }
    }
    // The job may end at once (a file that cannot be opened): the window's state is set first.
    m_exportJob = new ExportJob(store, path, std::move(makeWriter), this);
    m_exportProgress->setValue(0);
    m_exportProgress->show();
    m_exportCancel->show();
    updateActionStates();
    connect(m_exportJob, &ExportJob::progress, this, [this](qint64 done, qint64 total) {
        m_exportProgress->setValue(total > 0 ? int(done * 100 / total) : 0);
    });
    connect(m_exportJob, &ExportJob::finished, this, [this, finish](const JobOutcome &outcome) {
        m_exportJob->deleteLater();
        m_exportJob = nullptr;
        m_exportProgress->hide();
        m_exportCancel->hide();
        updateActionStates();
        finish(outcome);
    });
    m_exportJob->start();
}

void MainWindow::cancelExport()
{
    if (m_exportJob)
        m_exportJob->cancel();
}

void MainWindow::setForcedObserver(bool on)
{
    m_forcedObserver = on;
    if (on) {
        m_observerAction->setChecked(true);
        m_session->setObserverOnly(true);
    }
}

} // namespace mapi::ui
