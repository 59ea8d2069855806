// MainWindow: where the model comes from (a server, a trace, an incident bundle, a deep link).
#include "MainWindow.h"
#include "controllers/ControlController.h"

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

// ---- sources ---------------------------------------------------------------------------

void MainWindow::showConnectDialog()
{
    ConnectDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted)
        connectTo(dialog.options(), dialog.observerOnly());
}

void MainWindow::connectTo(const ClientOptions &options, bool observerOnly)
{
    ClientOptions checked = options;
    if (credentialTravelsInClear(options)) {
        QMessageBox ask(QMessageBox::Warning, tr("Send the token unencrypted?"),
                        tr("%1 uses ws://, not wss://: the token would cross the network in clear text, readable by "
                           "anyone on the way.").arg(options.url.host()),
                        QMessageBox::Cancel, this);
        QPushButton *send = ask.addButton(tr("Send it unencrypted"), QMessageBox::AcceptRole);
        ask.setDefaultButton(QMessageBox::Cancel);
        ask.setInformativeText(tr("Use a wss:// URL if the server offers one."));
        ask.exec();
        if (ask.clickedButton() != send)
            return;
        checked.allowCredentialInClear = true; // for this connection only: the next one asks again
    }
    m_control->resetForConnection(observerOnly || m_forcedObserver); // supervision is per connection
    m_session->connectTo(checked, observerOnly || m_forcedObserver);
    m_alertMonitor->start(); // in case a trace load was under way (it stops the detectors)
    m_observerAction->setChecked(m_session->observerOnly());
}

void MainWindow::renewCredential()
{
    bool ok = false;
    const QString token = QInputDialog::getText(this, tr("Renew credential"),
                                                tr("A new token for %1 (sent with map/auth/refresh; kept in memory only):")
                                                    .arg(m_session->sourceLabel()),
                                                QLineEdit::Password, QString(), &ok);
    if (ok && !token.trimmed().isEmpty())
        m_session->refreshCredential(token.trimmed());
}

void MainWindow::showOpenTraceDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open trace"), QString(),
        tr("Traces and logs (*.jsonl *.jsonl.zst *.jsonl.gz *.ndjson *.ndjson.zst *.ndjson.gz *.json *.zst *.gz);;All files (*)"));
    if (!path.isEmpty() && mayEndLiveConnection(path))
        openTrace(path);
}

bool MainWindow::mayEndLiveConnection(const QString &tracePath)
{
    const ClientState state = m_session->clientState();
    if (m_session->source() != InspectorSession::Source::Live || state == ClientState::Closed || state == ClientState::Failed
        || state == ClientState::Idle)
        return true;
    // The window shows one system at a time: a trace takes the live connection's place. Said
    // before, never done silently; Cancel is the default.
    QMessageBox box(QMessageBox::Question, tr("End the live connection?"),
                    tr("Opening %1 ends the live connection to %2.").arg(QFileInfo(tracePath).fileName(), m_session->sourceLabel()),
                    QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("endLiveConnectionBox"));
    QStringList more;
    if (m_session->isRecording())
        more << tr("The recording to %1 stops (what it holds so far is kept).")
                    .arg(QDir::toNativeSeparators(m_session->recordingPath()));
    more << tr("The live session's history goes with it unless you save it first (File → Save session as…).");
    box.setInformativeText(more.join(u'\n'));
    QPushButton *open = box.addButton(tr("Disconnect and open"), QMessageBox::AcceptRole);
    open->setObjectName(QStringLiteral("disconnectAndOpen"));
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    return box.clickedButton() == open;
}

bool MainWindow::openTrace(const QString &path)
{
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) {
        showWarning(tr("Cannot open trace"), info.exists() ? tr("%1 is not a readable file.").arg(QDir::toNativeSeparators(path))
                                                           : tr("%1 does not exist.").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    startTraceLoad(info.absoluteFilePath(), true);
    return true;
}

bool MainWindow::openSampleTrace()
{
    QString error;
    const QString path = sampleTraceFile(&error);
    if (path.isEmpty()) {
        showWarning(tr("Cannot open the sample trace"), error);
        return false;
    }
    startTraceLoad(path, false); // the cached copy is not worth a place among the recent traces
    return true;
}

void MainWindow::startTraceLoad(const QString &path, bool remember)
{
    m_replayBar->setController(nullptr, QString());
    m_replayBar->hide();
    m_traceDamageButton->hide();
    m_loadProgress->setValue(0);
    m_loadProgress->show();
    // The detectors wait for the whole trace (then read it in slices): a load is not slowed by
    // reading messages it is still adding.
    m_alertMonitor->stop();
    m_loadCancel->show();
    m_session->openTrace(path);
    if (remember) {
        ConnectionProfiles::addRecentTrace(path);
        m_welcome->refreshRecent();
    }
}

void MainWindow::onTraceLoadFinished(bool ok, bool cancelled, const QString &error)
{
    m_alertMonitor->start();
    m_loadProgress->hide();
    m_loadCancel->hide();
    if (ok) {
        m_replayBar->setController(m_session->replay(), m_session->tracePath());
        m_replayBar->show();
        const TraceReadStats &stats = m_session->traceStats();
        const bool damaged = stats.badLineCount > 0 || !stats.streamError.isEmpty();
        m_traceDamageButton->setVisible(damaged);
        m_traceDamageButton->setText(stats.streamError.isEmpty()
                                         ? tr("%n bad line(s)", nullptr, int(stats.badLineCount))
                                         : tr("truncated, %n bad line(s)", nullptr, int(stats.badLineCount)));
        m_traceDamageButton->setToolTip(tr("Parts of this file could not be read; everything else was loaded. Click for details."));
        m_incident = incidentFromHeader(stats.header);
        applyIncident();
        if (m_pendingLink)
            applyDeepLink(*m_pendingLink);
        m_pendingLink.reset();
    } else if (cancelled) {
        m_pendingLink.reset();
        statusBar()->showMessage(tr("Loading cancelled"), 5000);
    } else {
        m_pendingLink.reset();
        showWarning(tr("Cannot open trace"), error);
    }
    updateActionStates();
    updateStatusBar();
}

void MainWindow::applyIncident()
{
    if (!m_incident)
        return;
    const IncidentContent &c = m_incident->content;
    m_replayBar->adoptBookmarks(c.bookmarks);
    const SystemStore *store = m_session->store();
    QStringList agents;
    for (const QString &id : c.selectedAgents)
        if (store->agentRow(id) >= 0)
            agents << id;
    if (!agents.isEmpty())
        m_selection->selectAgents(agents);
    if (!c.selectedMessage.isEmpty())
        if (const int row = store->messages().find(c.selectedMessage); row >= 0)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(row));
    if (!c.selectedTask.isEmpty() && c.selectedMessage.isEmpty())
        m_selection->focus(SelectionHub::Kind::Task, c.selectedTask);
    auto *info = new IncidentInfoDialog(*m_incident, this);
    info->setAttribute(Qt::WA_DeleteOnClose);
    info->show(); // not modal: the run is right behind it
}

bool MainWindow::openDeepLink(const QString &text)
{
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    if (!link) {
        showWarning(tr("Cannot open link"), link.error());
        return false;
    }
    if (m_session->source() == InspectorSession::Source::Trace && !m_session->isLoadingTrace()
        && QFileInfo(m_session->tracePath()) == QFileInfo(link->file)) {
        applyDeepLink(*link); // already open: only go there
        return true;
    }
    // A link comes from outside (a chat, a ticket): it does not end a live session or a
    // recording without asking.
    if (m_session->source() == InspectorSession::Source::Live || m_session->isRecording()) {
        const auto answer = QMessageBox::question(
            this, tr("Open link"),
            tr("Opening %1 ends the live session%2. Open it?")
                .arg(QDir::toNativeSeparators(link->file),
                     m_session->isRecording() ? tr(" and its recording") : QString()),
            QMessageBox::Open | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Open)
            return false;
    }
    if (!openTrace(link->file))
        return false;
    m_pendingLink = *link;
    return true;
}

void MainWindow::applyDeepLink(const DeepLink &link)
{
    if (link.timeMs && m_session->replay())
        m_session->replay()->seek(*link.timeMs);
    const SystemStore *store = m_session->store();
    QStringList missing;
    if (!link.agentId.isEmpty()) {
        if (store->agentRow(link.agentId) >= 0) {
            m_selection->selectAgents({link.agentId});
            m_selection->focus(SelectionHub::Kind::Agent, link.agentId);
        } else {
            missing << tr("agent %1").arg(link.agentId);
        }
    }
    if (!link.messageId.isEmpty()) {
        if (const int row = store->messages().find(link.messageId); row >= 0)
            m_selection->focus(SelectionHub::Kind::Message, QString::number(row));
        else
            missing << tr("message %1").arg(link.messageId);
    }
    if (!missing.isEmpty())
        statusBar()->showMessage(tr("The link's %1 is not in this trace at that time").arg(missing.join(tr(" and "))), 10000);
}

QString MainWindow::deepLinkHere() const
{
    if (m_session->source() != InspectorSession::Source::Trace || m_session->tracePath().isEmpty())
        return QString();
    DeepLink link;
    link.file = m_session->tracePath();
    if (m_session->replay())
        link.timeMs = m_session->replay()->positionMs();
    if (!m_selection->selectedAgents().isEmpty())
        link.agentId = m_selection->selectedAgents().first();
    return makeDeepLink(link);
}

IncidentDialog *MainWindow::exportIncident()
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
    for (const auto &[key, alert] : m_alertMonitor->openAlerts())
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
    auto *dialog = new IncidentDialog(context, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

void MainWindow::reportTraceDamage()
{
    const TraceReadStats &stats = m_session->traceStats();
    QStringList numbers;
    for (qint64 line : stats.badLines.mid(0, 50))
        numbers << QString::number(line);
    QString text = tr("Everything readable in this file was loaded.");
    if (stats.badLineCount > 0)
        text += QStringLiteral("\n\n") + tr("%n line(s) could not be read and were skipped: %1%2", nullptr, int(stats.badLineCount))
                                             .arg(numbers.join(QStringLiteral(", ")),
                                                  stats.badLineCount > numbers.size() ? QStringLiteral(", …") : QString());
    if (!stats.streamError.isEmpty())
        text += QStringLiteral("\n\n") + tr("Reading stopped early: %1").arg(stats.streamError);
    showWarning(tr("Damaged trace"), text);
}

void MainWindow::showWarning(const QString &title, const QString &text)
{
    // Window-modal but not blocking: the event loop (and the live model) keep running.
    auto *box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("warningBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace mapi::ui
