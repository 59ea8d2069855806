#include "controllers/TelemetryController.h"

#include "alerts/AlertMonitor.h"
#include "alerts/AlertWebhook.h"
#include "common/Redaction.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"

#include <QDateTime>
#include <QLocale>
#include <QUrl>
#include <QWidget>

#include <algorithm>
#include <utility>

namespace mapi::ui {

TelemetryController::TelemetryController(InspectorSession *session, AlertMonitor *monitor, QWidget *window)
    : SessionController(session, monitor, window)
{
    m_interval.setInterval(LiveOtlpExporter::kDefaultIntervalMs);
    connect(&m_interval, &QTimer::timeout, this, &TelemetryController::flush);
    m_heldRead.setInterval(kHeldReadMs);
    connect(&m_heldRead, &QTimer::timeout, this, [this] {
        // Behind the front system the store announces nothing: its new messages are read here,
        // before the history bound can trim them (the rest waits for the batch: catchUp(true)).
        if (feeding() && m_session->store()->changesHeld())
            catchUp(false);
    });

    SystemStore *store = session->store();
    connect(store, &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (feeding())
            note(changes);
    });
    // Before the store empties or swaps (a new connection, a recording that reconnects, the past
    // coming in): what is pending goes now, read from the live model it was noted from.
    connect(store, &SystemStore::aboutToReset, this, [this] {
        if (!feeding())
            return;
        if (m_session->store()->changesHeld())
            catchUp(true);
        send(false);
    });
    // A swap into the past looks the same here; timeTravelChanged(true), right after it, takes the
    // reset back (setViewingPast). A swap back from the past comes while the past is shown.
    connect(store, &SystemStore::wasReset, this, [this] {
        if (m_batcher && !m_viewingPast)
            m_resetDue = true;
    });
    connect(session, &InspectorSession::timeTravelChanged, this, &TelemetryController::setViewingPast);
    connect(session, &InspectorSession::sourceReplaced, this, [this] {
        finish(); // one still running that no setNextConnection() ended (a trace, a tap's connection)
        m_sender = nullptr; // a draining one lives on in the window; its counters are the last connection's
        m_finishedStats.reset();
        m_target.clear();
        m_drops = 0;
        m_dropOpen = false;
        const OtlpExportSettings next = std::exchange(m_next, {});
        if (std::exchange(m_nextArmed, false) && next.isOn() && m_session->source() == InspectorSession::Source::Live)
            start(next);
    });
    connect(session, &InspectorSession::sourceChanged, this, [this] {
        if (m_session->source() != InspectorSession::Source::Live)
            finish();
    });
    connect(session, &InspectorSession::stateChanged, this, [this](ClientState state) {
        if (state == ClientState::Live) {
            m_dropOpen = false;
        } else if (state == ClientState::Backoff && m_session->hasBeenLive() && !m_dropOpen) {
            ++m_drops; // the CLI's count: a connection lost after it was live, once until it is back
            m_dropOpen = true;
        }
        if (state == ClientState::Closed || state == ClientState::Failed) // ended for good (a disconnect, a fatal error)
            finish();
    });
    connect(monitor, &AlertMonitor::alertsChanged, this, &TelemetryController::noteAlertChanges);
    connect(monitor, &AlertMonitor::evaluated, this, &TelemetryController::reconcileAlerts);
}

TelemetryController::~TelemetryController() = default; // a sender not finished is a child: aborted with it

void TelemetryController::setNextConnection(const OtlpExportSettings &settings)
{
    finish(); // the store still holds the connection that ends: its last batch is read from it
    m_next = settings;
    m_nextArmed = true;
}

void TelemetryController::setIntervalMs(int ms)
{
    m_interval.setInterval(std::max(100, ms));
}

void TelemetryController::start(const OtlpExportSettings &settings)
{
    OtlpSenderOptions options;
    options.endpoint = QUrl(settings.endpoint.trimmed(), QUrl::StrictMode);
    if (!settings.headerName.isEmpty()) // Latin-1: the Connect dialog admits nothing a header cannot carry
        options.headers = {{settings.headerName.trimmed().toLatin1(), settings.headerValue.toLatin1()}};
    m_sender = new OtlpHttpSender(options, this);
    m_finished = false;
    m_spansBatched = 0;
    m_lastNowMs = 0;
    m_dropsSaid = false;
    m_resetDue = false;
    m_alertsSent.clear();
    if (!m_sender->isOn()) {
        // The dialog checks the address; a profile edited by hand may still hold one that cannot be used.
        m_target = AlertWebhook::describe(options.endpoint);
        Q_EMIT statusMessage(tr("Not sending to OpenTelemetry: %1")
                                 .arg(OtlpHttpSender::checkEndpoint(options.endpoint, !options.headers.empty())),
                             15000);
        return;
    }
    m_target = m_sender->target();
    connect(m_sender, &OtlpHttpSender::delivered, this, [this](bool ok) {
        if (!ok)
            sayDrops();
    });
    OtlpOptions otlp;
    otlp.serviceName = m_session->sourceLabel(); // the system's address without its secrets: one service per system
    // The store was just reset for this connection: everything from now on is sent.
    m_batcher = std::make_unique<LiveOtlpBatcher>(*m_session->store(), otlp);
    m_interval.start();
    m_heldRead.start();
    Q_EMIT statusMessage(tr("Sending OpenTelemetry spans to %1 every %2 s")
                             .arg(m_target, QLocale().toString(double(m_interval.interval()) / 1000.0, 'g', 3)),
                         8000);
}

void TelemetryController::setViewingPast(bool past)
{
    if (m_viewingPast == past)
        return;
    m_viewingPast = past;
    if (past) {
        m_resetDue = false; // the reset just seen was the live model moving out, not new numbering
        return;
    }
    if (feeding())
        catchUp(true); // the live model is back, rows numbered as before: what happened meanwhile
}

void TelemetryController::flush()
{
    if (!feeding())
        return;
    if (m_session->store()->changesHeld())
        catchUp(true);
    send(false);
}

void TelemetryController::note(const ChangeSet &changes)
{
    if (m_resetDue && changes.firstNewMessage >= 0) {
        m_batcher->reset(); // the store numbers its messages from 0 again
        m_resetDue = false;
    }
    m_batcher->noteChanges(changes);
    if (m_batcher->pendingBytes() >= LiveOtlpBatcher::kFlushAtPendingBytes)
        send(false); // a flood: 4 MiB bodies as they fill, as LiveOtlpExporter does
}

void TelemetryController::catchUp(bool full)
{
    if (!feeding())
        return;
    const SystemStore &store = *m_session->store();
    ChangeSet all;
    if (!store.messages().empty())
        all.firstNewMessage = int(store.messages().firstRow()); // the batcher starts at its own cursor
    if (full) {
        // The batcher notes an agent's activity against what it last sent, a task once by id:
        // naming every row costs a pass over them, nothing more.
        all.agentRows.reserve(qsizetype(store.agents().size()));
        for (int row = 0; row < int(store.agents().size()); ++row)
            all.agentRows.insert(row);
        all.taskRows.reserve(qsizetype(store.tasks().size()));
        for (int row = 0; row < int(store.tasks().size()); ++row)
            all.taskRows.insert(row);
    }
    note(all);
}

qint64 TelemetryController::liveNow()
{
    // The live model's clock (the background one while the past is shown); after a reset it
    // reads 0 until the new connection's first events: the last time seen stands in.
    const qint64 now = m_session ? m_session->liveStore()->now() : 0;
    m_lastNowMs = std::max(m_lastNowMs, now);
    return m_lastNowMs > 0 ? m_lastNowMs : QDateTime::currentMSecsSinceEpoch();
}

void TelemetryController::send(bool final)
{
    if (!m_batcher || !m_sender)
        return;
    for (OtlpBody &body : m_batcher->take(liveNow(), final)) {
        m_spansBatched += body.spans;
        m_sender->enqueue(std::move(body.json), body.spans);
    }
    sayDrops();
}

void TelemetryController::finish()
{
    if (!m_sender || m_finished)
        return;
    if (feeding() && m_sender->isOn()) {
        catchUp(true); // what the store holds back for its next announcement goes too
        send(true);    // open tasks with their current status
    }
    m_finished = true;
    m_interval.stop();
    m_heldRead.stop();
    m_batcher.reset();
    // The sender finishes its queue within kFinishWithinMs, in the window: the system (and this
    // controller) may be going away right now. drained() always comes, also when it is idle.
    OtlpHttpSender *sender = m_sender;
    connect(sender, &OtlpHttpSender::drained, this, [this, sender] {
        if (m_sender == sender)
            m_finishedStats = sender->stats();
    });
    connect(sender, &OtlpHttpSender::drained, sender, &QObject::deleteLater);
    if (m_dialogParent)
        sender->setParent(m_dialogParent);
    sender->drain(kFinishWithinMs);
}

void TelemetryController::noteAlertChanges(const std::vector<AlertChange> &changes)
{
    // Of now only: the past's alerts are not news (AlertDeliveryController's rule too).
    if (!feeding())
        return;
    std::vector<AlertChange> out;
    for (const AlertChange &change : changes) {
        const QString key = change.alert.key();
        if (change.raised ? m_alertsSent.emplace(key, change.alert).second : m_alertsSent.erase(key) > 0)
            out.push_back(change);
    }
    if (!out.empty())
        m_batcher->noteAlerts(out);
}

void TelemetryController::reconcileAlerts()
{
    // An evaluation's verdict is on the whole store: an alert sent raised that it no longer holds
    // was cleared where this did not listen (the past was shown; the detectors started over).
    if (!feeding() || m_alertsSent.empty())
        return;
    const std::map<QString, Alert> &open = m_monitor->openAlerts();
    std::vector<AlertChange> cleared;
    for (auto it = m_alertsSent.begin(); it != m_alertsSent.end();) {
        if (open.count(it->first) > 0) {
            ++it;
            continue;
        }
        cleared.push_back({it->second, false, liveNow()});
        it = m_alertsSent.erase(it);
    }
    if (!cleared.empty())
        m_batcher->noteAlerts(cleared);
}

void TelemetryController::sayDrops()
{
    // Once per connection: a receiver that is down drops for as long as it is down, and the
    // overview's row says how many.
    if (m_dropsSaid || !m_sender)
        return;
    const OtlpHttpSender::Stats st = m_sender->stats();
    if (st.spansDropped <= 0)
        return;
    m_dropsSaid = true;
    Q_EMIT statusMessage(tr("OpenTelemetry: spans are being dropped on the way to %1 (%2 so far)%3")
                             .arg(m_target, QLocale().toString(st.spansDropped),
                                  st.lastError.isEmpty() ? QString() : tr(": %1").arg(redactSecrets(st.lastError))),
                         15000);
}

OtlpHttpSender::Stats TelemetryController::stats() const
{
    if (m_sender)
        return m_sender->stats();
    return m_finishedStats.value_or(OtlpHttpSender::Stats());
}

QString TelemetryController::statusText() const
{
    if (!hasExport())
        return {};
    const OtlpHttpSender::Stats st = stats();
    if (m_sender && !m_sender->isOn())
        return tr("OpenTelemetry: not sending to %1: %2").arg(m_target, redactSecrets(st.lastError));
    const QLocale locale;
    QString line = (m_finished ? tr("OpenTelemetry: sent to %1")
                    : m_viewingPast ? tr("OpenTelemetry: exporting to %1, paused while the past is shown")
                                    : tr("OpenTelemetry: exporting to %1"))
                       .arg(m_target)
        + tr(" — %1 spans sent, %2 dropped").arg(locale.toString(st.spansSent), locale.toString(st.spansDropped));
    if (st.spansRejected > 0)
        line += tr(", %1 rejected by the receiver").arg(locale.toString(st.spansRejected));
    if (!st.lastError.isEmpty())
        line += tr("; last error: %1").arg(redactSecrets(st.lastError));
    return line;
}

QString TelemetryController::stateNote() const
{
    if (!isExporting())
        return {};
    if (m_viewingPast)
        return tr("OTLP paused");
    return stats().spansDropped > 0 ? tr("OTLP dropping") : tr("OTLP");
}

MetricsSystem TelemetryController::metricsSystem() const
{
    MetricsSystem m;
    if (!m_session)
        return m;
    m.system = m_session->sourceLabel();
    m.store = m_session->liveStore();
    m.openAlerts = m_session->isTimeTravelling() ? nullptr : &m_monitor->openAlerts();
    m.clientState = clientStateName(m_session->clientState());
    m.connectionDrops = m_drops;
    // The counters of this connection's export, also once it ended (a series that vanished with a
    // disconnect would read as a reset); none for a receiver that could not be used.
    if (hasExport() && !(m_sender && !m_sender->isOn())) {
        const OtlpHttpSender::Stats st = stats();
        m.otlpSpansSent = st.spansSent;
        m.otlpSpansDropped = st.spansDropped;
        m.otlpQueueBytes = st.queuedBytes + (m_batcher ? m_batcher->pendingBytes() : 0);
    }
    return m;
}

} // namespace mapi::ui
