#include "TraceController.h"

#include "alerts/AlertMonitor.h"
#include "common/TimeText.h"
#include "common/Warning.h"
#include "dialogs/ConnectionProfiles.h"
#include "dialogs/IncidentDialog.h"
#include "dialogs/RecoverDialog.h"
#include "replay/ReplayBar.h"
#include "replay/SampleTrace.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "session/SessionJournal.h"

#include <QAction>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QClipboard>
#include <QMessageBox>
#include <QPushButton>
#include <QThread>

#include <climits>

namespace mapi::ui {

TraceController::TraceController(InspectorSession *session, SelectionHub *selection, AlertMonitor *monitor,
                                 ReplayBar *replayBar, const Actions &actions, QWidget *dialogParent)
    : SessionController(session, monitor, dialogParent)
    , m_selection(selection)
    , m_replayBar(replayBar)
    , m_actions(actions)
{
    connect(m_actions.openTrace, &QAction::triggered, this, &TraceController::showOpenTraceDialog);
    connect(m_actions.openSample, &QAction::triggered, this, &TraceController::openSampleTrace);
    connect(m_actions.record, &QAction::triggered, this, &TraceController::chooseRecordingFile);
    connect(m_actions.saveSession, &QAction::triggered, this, [this] { saveSessionWithDialog(); });
    connect(m_actions.saveRange, &QAction::triggered, this, [this] {
        if (m_visibleRange) {
            const auto [from, to] = m_visibleRange();
            saveSessionWithDialog(from, to);
        }
    });
    connect(m_actions.timeTravel, &QAction::triggered, this, [this] {
        QString error;
        if (!m_session->startTimeTravel(&error)) {
            showWarning(m_dialogParent, tr("Cannot travel back in time"), error);
            return;
        }
        Q_EMIT loadingChanged(true, false);
        Q_EMIT statusMessage(tr("Reading the session's journal… the live system is still followed"), 5000);
    });
    connect(m_actions.backToLive, &QAction::triggered, session, &InspectorSession::returnToLive);
    connect(m_actions.incidentInfo, &QAction::triggered, this, [this] {
        if (!m_incident)
            return;
        auto *info = new IncidentInfoDialog(*m_incident, m_dialogParent);
        info->setAttribute(Qt::WA_DeleteOnClose);
        info->show();
    });
    connect(m_actions.copyLink, &QAction::triggered, this, [this] {
        const QString link = deepLinkHere();
        if (link.isEmpty())
            return;
        QGuiApplication::clipboard()->setText(link);
        Q_EMIT statusMessage(tr("Link copied: %1").arg(link), 8000);
    });

    connect(session, &InspectorSession::sourceChanged, this, [this] {
        m_incident.reset(); // a bundle's data goes with it (set again when a bundle has loaded)
        if (m_session->source() != InspectorSession::Source::Trace || !m_session->replay()) {
            m_replayBar->setController(nullptr, QString());
            m_replayBar->hide();
        }
        updateActionStates();
    });
    connect(session, &InspectorSession::stateChanged, this, &TraceController::updateActionStates);
    connect(session, &InspectorSession::traceLoadFinished, this, &TraceController::onTraceLoadFinished);
    connect(session, &InspectorSession::timeTravelReady, this, &TraceController::onTimeTravelReady);
    connect(session, &InspectorSession::timeTravelChanged, this, [this](bool on) {
        if (!on) {
            Q_EMIT loadingChanged(false, false);
            m_replayBar->setController(nullptr, QString());
            m_replayBar->setTrailingAction(nullptr);
            m_replayBar->setNote(QString());
            m_replayBar->hide();
        }
        updateActionStates();
    });
    connect(session, &InspectorSession::recordingChanged, m_actions.record, &QAction::setChecked);
    connect(session, &InspectorSession::recordingFinished, this,
            [this](const QStringList &files, qint64 records, const QString &error) {
                const QString where = files.isEmpty() ? QString() : QDir::toNativeSeparators(files.last());
                if (error.isEmpty())
                    Q_EMIT statusMessage(tr("Recording stopped: %n record(s) in %1", nullptr, int(records)).arg(where), 10000);
                else
                    showWarning(m_dialogParent, tr("Recording stopped"),
                                tr("The recording stopped early: %1\n%n record(s) were written to %2.", nullptr, int(records))
                                    .arg(error, where));
            });
    connect(session, &InspectorSession::sessionSaved, this, [this](bool ok, const QString &path, const QString &error) {
        if (path.startsWith(QDir::tempPath()) && path.endsWith(IncidentDialog::kLiveCopyName))
            return; // an incident dialog's own copy: it reports on it
        if (ok)
            Q_EMIT statusMessage(tr("Session saved to %1").arg(QDir::toNativeSeparators(path)), 10000);
        else
            showWarning(m_dialogParent, tr("Cannot save the session"), error);
    });
    updateActionStates();
}

// ---- opening ------------------------------------------------------------------------------

void TraceController::showOpenTraceDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        m_dialogParent, tr("Open trace"), QString(),
        tr("Traces and logs (*.jsonl *.jsonl.zst *.jsonl.gz *.ndjson *.ndjson.zst *.ndjson.gz *.json *.zst *.gz);;All files (*)"));
    if (path.isEmpty())
        return;
    if (TraceController *beside = targetForNewSource(); beside != this)
        beside->openTrace(path);
    else if (mayEndLiveConnection(path))
        openTrace(path);
}

TraceController *TraceController::targetForNewSource()
{
    if (!m_openBeside || (m_session->source() == InspectorSession::Source::None && !m_session->isLoadingTrace()))
        return this;
    TraceController *beside = m_openBeside();
    return beside ? beside : this;
}

bool TraceController::mayEndLiveConnection(const QString &tracePath)
{
    const ClientState state = m_session->clientState();
    if (m_session->source() != InspectorSession::Source::Live || state == ClientState::Closed || state == ClientState::Failed
        || state == ClientState::Idle)
        return true;
    // The window shows one system at a time: a trace takes the live connection's place. Said
    // before, never done silently; Cancel is the default.
    QMessageBox box(QMessageBox::Question, tr("End the live connection?"),
                    tr("Opening %1 ends the live connection to %2.").arg(QFileInfo(tracePath).fileName(), m_session->sourceLabel()),
                    QMessageBox::Cancel, m_dialogParent);
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

bool TraceController::openTrace(const QString &path)
{
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) {
        showWarning(m_dialogParent, tr("Cannot open trace"),
                    info.exists() ? tr("%1 is not a readable file.").arg(QDir::toNativeSeparators(path))
                                  : tr("%1 does not exist.").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    startTraceLoad(info.absoluteFilePath(), true);
    return true;
}

bool TraceController::openSampleTrace()
{
    if (TraceController *beside = targetForNewSource(); beside != this)
        return beside->openSampleTrace();
    QString error;
    const QString path = sampleTraceFile(&error);
    if (path.isEmpty()) {
        showWarning(m_dialogParent, tr("Cannot open the sample trace"), error);
        return false;
    }
    startTraceLoad(path, false); // the cached copy is not worth a place among the recent traces
    return true;
}

void TraceController::startTraceLoad(const QString &path, bool remember)
{
    m_replayBar->setController(nullptr, QString());
    m_replayBar->hide();
    // The detectors wait for the whole trace (then read it in slices): a load is not slowed by
    // reading messages it is still adding.
    m_monitor->stop();
    Q_EMIT loadingChanged(true, true);
    m_session->openTrace(path);
    if (remember) {
        ConnectionProfiles::addRecentTrace(path);
        Q_EMIT recentTracesChanged();
    }
}

void TraceController::onTraceLoadFinished(bool ok, bool cancelled, const QString &error)
{
    m_monitor->start();
    Q_EMIT loadingChanged(false, false);
    const std::optional<DeepLink> link = std::exchange(m_pendingLink, std::nullopt);
    if (ok) {
        m_replayBar->setController(m_session->replay(), m_session->tracePath());
        m_replayBar->show();
        m_incident = incidentFromHeader(m_session->traceStats().header);
        applyIncident();
        if (link)
            applyDeepLink(*link);
    } else if (cancelled) {
        Q_EMIT statusMessage(tr("Loading cancelled"), 5000);
    } else {
        showWarning(m_dialogParent, tr("Cannot open trace"), error);
    }
    updateActionStates();
}

void TraceController::onTimeTravelReady(bool ok, const QString &error)
{
    Q_EMIT loadingChanged(false, false);
    if (ok) {
        m_replayBar->setController(m_session->replay(), QString());
        m_replayBar->setTrailingAction(m_actions.backToLive);
        m_replayBar->setLiveEdge(true);
        if (const qint64 before = m_session->journalDroppedBeforeMs(); before > 0)
            m_replayBar->setNote(tr("history before %1 dropped by retention (%n record(s))", nullptr,
                                    int(std::min<qint64>(m_session->journalRecordsDropped(), INT_MAX)))
                                     .arg(timeOfDay(before, TimePrecision::Seconds, Clock::Local))); // an arrival time
        m_replayBar->show();
    } else {
        showWarning(m_dialogParent, tr("Cannot travel back in time"), error);
    }
    updateActionStates();
}

QString TraceController::traceDamageSummary() const
{
    if (m_session->source() != InspectorSession::Source::Trace)
        return QString();
    const TraceReadStats &stats = m_session->traceStats();
    if (stats.badLineCount == 0 && stats.streamError.isEmpty())
        return QString();
    return stats.streamError.isEmpty() ? tr("%n bad line(s)", nullptr, int(stats.badLineCount))
                                       : tr("truncated, %n bad line(s)", nullptr, int(stats.badLineCount));
}

void TraceController::reportTraceDamage()
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
    showWarning(m_dialogParent, tr("Damaged trace"), text);
}

// ---- incidents and links ------------------------------------------------------------------

void TraceController::applyIncident()
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
    auto *info = new IncidentInfoDialog(*m_incident, m_dialogParent);
    info->setAttribute(Qt::WA_DeleteOnClose);
    info->show(); // not modal: the run is right behind it
}

bool TraceController::openDeepLink(const QString &text)
{
    const ErrorOr<DeepLink> link = parseDeepLink(text);
    if (!link) {
        showWarning(m_dialogParent, tr("Cannot open link"), link.error());
        return false;
    }
    if (m_session->source() == InspectorSession::Source::Trace && !m_session->isLoadingTrace()
        && QFileInfo(m_session->tracePath()) == QFileInfo(link->file)) {
        applyDeepLink(*link); // already open: only go there
        return true;
    }
    if (TraceController *beside = targetForNewSource(); beside != this)
        return beside->openDeepLink(text);
    // A link comes from outside (a chat, a ticket): it does not end a live session or a
    // recording without asking.
    if (m_session->source() == InspectorSession::Source::Live || m_session->isRecording()) {
        const auto answer = QMessageBox::question(
            m_dialogParent, tr("Open link"),
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

void TraceController::applyDeepLink(const DeepLink &link)
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
        Q_EMIT statusMessage(tr("The link's %1 is not in this trace at that time").arg(missing.join(tr(" and "))), 10000);
}

QString TraceController::deepLinkHere() const
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

// ---- journals, recording, saving ------------------------------------------------------------

void TraceController::offerRecovery(bool always)
{
    const QString root = SessionJournal::sessionsRoot();
    if (!always && SessionJournal::abandonedSessions(root).isEmpty())
        return;
    auto *dialog = new RecoverDialog(root, m_dialogParent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RecoverDialog::openRequested, this, [this](const QStringList &parts) {
        targetForNewSource()->openJournalParts(parts);
    });
    dialog->open();
}

void TraceController::openJournalParts(const QStringList &parts)
{
    if (parts.isEmpty())
        return;
    if (parts.size() == 1) {
        openTrace(parts.first());
        return;
    }
    // Parts concatenated in order are one trace (every part is a sequence of whole zstd frames):
    // joined off the GUI thread, as large as the journal is.
    const QString joined = QFileInfo(parts.first()).absolutePath() + QStringLiteral("/recovered.jsonl.zst");
    Q_EMIT statusMessage(tr("Joining %n journal part(s)…", nullptr, int(parts.size())), 0);
    QPointer<TraceController> self(this);
    QThread *job = QThread::create([parts, joined, self] {
        QList<SessionJournal::PartExtent> extents; // a left-behind journal: each part whole
        for (const QString &part : parts)
            extents.push_back({part, QFileInfo(part).size()});
        QString error;
        const bool ok = SessionJournal::copyParts(extents, joined, &error);
        QMetaObject::invokeMethod(qApp, [self, joined, ok, error] {
            if (!self)
                return;
            if (ok)
                self->openTrace(joined);
            else
                Q_EMIT self->statusMessage(tr("Could not join the journal's parts into %1: %2").arg(joined, error), 15000);
        }, Qt::QueuedConnection);
    });
    connect(job, &QThread::finished, job, &QObject::deleteLater);
    job->start();
}

void TraceController::chooseRecordingFile(bool start)
{
    if (!start) {
        m_session->stopRecording();
        return;
    }
    m_actions.record->setChecked(false); // checked again by recordingChanged once it runs
    const QString suggested = QStringLiteral("map-%1.jsonl.zst").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    const QString path = QFileDialog::getSaveFileName(m_dialogParent, tr("Record to"), suggested,
                                                      tr("Compressed trace (*.jsonl.zst);;gzip trace (*.jsonl.gz);;Plain trace (*.jsonl)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!startRecording(path, &error))
        showWarning(m_dialogParent, tr("Cannot record"), error);
}

bool TraceController::startRecording(const QString &path, QString *error)
{
    if (!m_session->startRecording(path, error))
        return false;
    Q_EMIT statusMessage(m_session->recordingNote(), 8000);
    return true;
}

void TraceController::saveSessionWithDialog(std::optional<qint64> fromMs, std::optional<qint64> toMs)
{
    QString title = tr("Save session as");
    if (fromMs && toMs)
        title = tr("Save %1 – %2 as").arg(timeOfDay(*fromMs), timeOfDay(*toMs));
    const QString suggested = QStringLiteral("map-session-%1.jsonl.zst")
                                  .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = QFileDialog::getSaveFileName(m_dialogParent, title, suggested, tr("Compressed trace (*.jsonl.zst)"));
    if (path.isEmpty())
        return;
    if (!path.endsWith(QLatin1String(".jsonl.zst"))) // the journal is zstd: the name says so
        path += QStringLiteral(".jsonl.zst");
    QString error;
    if (m_session->saveSessionAs(path, &error, fromMs, toMs))
        Q_EMIT statusMessage(tr("Saving the session to %1…").arg(QDir::toNativeSeparators(path)), 0);
    else
        showWarning(m_dialogParent, tr("Cannot save the session"), error);
}

void TraceController::updateActionStates()
{
    const bool live = m_session->source() == InspectorSession::Source::Live;
    const bool journaled = !m_session->journalFolder().isEmpty();
    m_actions.record->setEnabled(live);
    m_actions.record->setToolTip(live ? tr("Record every frame of this connection to a trace file")
                                      : tr("Recording needs a live connection"));
    m_actions.saveSession->setEnabled(live && journaled);
    m_actions.saveSession->setToolTip(live ? tr("Save this connection's history, from its first frame, as a trace file")
                                           : tr("Saving a session needs a live connection"));
    m_actions.saveRange->setEnabled(live && journaled);
    m_actions.saveRange->setToolTip(live ? tr("Save the part of this connection's history that the timeline shows as a trace file")
                                         : tr("Saving a session needs a live connection"));
    const bool travelling = m_session->isTimeTravelling();
    m_actions.timeTravel->setEnabled(live && !travelling && journaled);
    m_actions.timeTravel->setToolTip(live ? tr("View this session as it was, from its journal, while the live system is still followed")
                                          : tr("Time travel while live needs a live connection"));
    m_actions.backToLive->setEnabled(travelling);
    const bool hasModel = m_session->source() != InspectorSession::Source::None && !m_session->isLoadingTrace();
    m_actions.incidentInfo->setEnabled(m_incident.has_value() && hasModel);
    m_actions.copyLink->setEnabled(hasModel && m_session->source() == InspectorSession::Source::Trace);
}

} // namespace mapi::ui
