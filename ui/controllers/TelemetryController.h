// The live OpenTelemetry export of one system (issue "Beyond one desk" item 1): while its session
// is live on a connection whose profile names a receiver (ConnectionProfile::otlpEndpoint), the
// model's changes and its detectors' alerts go out as OTLP/HTTP JSON spans, batched every
// intervalMs() (core/telemetry: LiveOtlpBatcher, and OtlpHttpSender's bounded queue with retries
// and drops counted); the counters are for the Systems overview, the status bar and the window's
// metrics (metricsSystem()).
//
// Why not LiveOtlpExporter (what the CLI runs): it notes every change of its store and resets its
// batcher at every reset. The window's store shows the past while time travelling (the live model
// swapped out, the journal's past loaded in, the live model swapped back), and a swapped-in past
// would be sent again (LiveOtlpBatcher::reset()). This controller composes the same two parts
// with the same constants and feeds the batcher only what is live:
//  - Viewing the past (InspectorSession::timeTravelChanged): nothing is noted and nothing taken
//    (a take reads the store: agents' roots, the trace id). What is pending goes just before the
//    swap (the store's aboutToReset); the sender goes on delivering its queue. The past's alerts
//    are not sent.
//  - Back to live: the batcher is NOT reset. The live model kept following in the background with
//    its rows' numbers going on, and comes back whole; the batcher's message cursor is where it
//    stopped, so a catch-up naming every agent, task and message row sends exactly what happened
//    meanwhile: the messages past the cursor, the tasks that ended (once, by id), the agents
//    whose state or usage changed (against what was last sent). reset() is for a store that
//    numbers its rows from 0 again (a recording that reconnects): a reset not followed at once by
//    timeTravelChanged(true), applied just before the first messages of the new numbering are read.
//    (A disconnect while viewing the past ends the export without a last batch: the store holds
//    the past then.)
//  - A system behind the one in front holds its store's change announcements
//    (SystemStore::setChangesHeld): the controller then reads the store itself, the new messages
//    every second (before the history bound trims them) and the rest before each batch.
// Alerts: a raised alert is sent once per key while open (the detectors raise again what is open
// after new rules or the return from the past); a clearing only of what was sent raised; an
// evaluation whose verdict no longer holds an alert sent raised sends its clearing (one not seen
// while the past was shown).
// Ends when the connection ends for good (disconnect, a failure, another source, the system
// closed): the last batch, open tasks included, and the sender's drain within kFinishWithinMs,
// the sender re-parented to the window meanwhile so that closing the system does not cut it short.
// On quitting, the window waits for that drain (at most kFinishWithinMs: isDraining(),
// MainWindow::closeEvent) before it closes, so that a quit loses no span a receiver that is up
// would take.
// Secrets: the header's value is in memory here only (the keychain keeps it with the profile);
// nothing reported (statusText(), stateNote(), messages, metrics) holds it, nor the endpoint's
// path or query (OtlpHttpSender::target()).
//
// One controller serves one system (its session and AlertMonitor). GUI thread.
#pragma once

#include "alerts/AlertEngine.h"
#include "client/MapClient.h"
#include "dialogs/ConnectionProfiles.h"
#include "telemetry/LiveOtlpBatcher.h"
#include "telemetry/LiveOtlpExporter.h"
#include "telemetry/OtlpHttpSender.h"
#include "telemetry/PrometheusMetrics.h"

#include "SessionController.h"

#include <QPointer>
#include <QTimer>

#include <map>
#include <memory>
#include <optional>

namespace mapi::ui {

class TelemetryController : public SessionController
{
    Q_OBJECT
public:
    static constexpr int kFinishWithinMs = 3000;    // the last batch's drain when the connection ends
    static constexpr int kHeldReadMs = 1000;        // new messages read while the store's changes are held

    TelemetryController(InspectorSession *session, AlertMonitor *monitor, QWidget *window);
    ~TelemetryController() override;

    // The export of the connection that starts next (ConnectionController::telemetryChosen), off
    // when `settings` has no endpoint. What runs now finishes first, its last batch read from the
    // store before the new connection resets it; the new one begins with the connection
    // (InspectorSession::sourceReplaced), its history not sent (live means from then on).
    void setNextConnection(const OtlpExportSettings &settings);
    // Whether the store shows the past: InspectorSession::timeTravelChanged. Public for tests,
    // which swap a store's contents as the session does.
    void setViewingPast(bool past);
    // Batches (default LiveOtlpExporter::kDefaultIntervalMs, 5 s; at least 100 ms).
    void setIntervalMs(int ms);
    int intervalMs() const { return m_interval.interval(); }
    // Sends what is pending now (the interval does it otherwise); nothing while the past is shown.
    void flush();

    // A sender exists for the current (or last) connection: its counters mean something.
    bool hasExport() const { return !m_sender.isNull() || m_finishedStats.has_value(); }
    bool isExporting() const { return m_sender && m_sender->isOn() && !m_finished; }
    bool isFinished() const { return m_finished; }
    // The connection ended and its last spans are still on their way (at most kFinishWithinMs).
    bool isDraining() const { return m_finished && m_sender && m_sender->isOn() && !m_sender->isDrained(); }
    bool isViewingPast() const { return m_viewingPast; }
    OtlpHttpSender::Stats stats() const;
    qint64 spansBatched() const { return m_spansBatched; }
    // "http://127.0.0.1:4318" (AlertWebhook::describe() of the traces URL): no path, no secret.
    QString target() const { return m_target; }

    // One line for the Systems overview's tooltip: "OpenTelemetry: exporting to http://h:4318 —
    // 1,204 spans sent, 0 dropped"; empty without an export.
    QString statusText() const;
    // A word or two for the overview's State column: "OTLP", "OTLP paused", "OTLP dropping";
    // empty without a running export.
    QString stateNote() const;
    // What the window's /metrics says of this system (MetricsController): the live model (also
    // while the past is shown), its open alerts (none while the past is shown: the detectors
    // read the past then), its client state, drops, and this connection's export counters
    // (running or ended; none without an export).
    MetricsSystem metricsSystem() const;

private:
    void start(const OtlpExportSettings &settings);
    void finish();
    bool feeding() const { return m_batcher && !m_finished && !m_viewingPast; }
    // The batcher's reset() when a real reset is due and `changes` brings messages, then the note.
    void note(const ChangeSet &changes);
    // What the store holds, named as changed (LiveOtlpBatcher keeps what it sent by id and row):
    // new messages; `full`: every agent and task row too.
    void catchUp(bool full);
    void send(bool final);
    qint64 liveNow();
    void noteAlertChanges(const std::vector<AlertChange> &changes);
    void reconcileAlerts();
    void sayDrops();

    std::unique_ptr<LiveOtlpBatcher> m_batcher;
    QPointer<OtlpHttpSender> m_sender;       // a child, re-parented to the window while it drains
    std::optional<OtlpHttpSender::Stats> m_finishedStats; // the last connection's, once drained
    QString m_target;
    QTimer m_interval;
    QTimer m_heldRead;
    OtlpExportSettings m_next;               // armed by setNextConnection() until the connection starts
    bool m_nextArmed = false;
    bool m_finished = false;
    bool m_viewingPast = false;
    bool m_resetDue = false;                 // a reset of the store (not a swap): reset() at its first messages
    bool m_dropsSaid = false;                // the status bar said once that spans are dropped
    qint64 m_spansBatched = 0;
    qint64 m_lastNowMs = 0;                  // the live model's time at the last take
    qint64 m_drops = 0;                      // connections lost after being live (metrics)
    bool m_dropOpen = false;                 // lost, not live again yet
    std::map<QString, Alert> m_alertsSent;   // raised and sent, not cleared yet, by key
};

} // namespace mapi::ui
