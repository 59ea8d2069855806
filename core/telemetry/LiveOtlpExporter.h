// The live OTLP export of one system: its store's changes batched by LiveOtlpBatcher into
// OTLP/HTTP JSON requests every interval, delivered by OtlpHttpSender (bounded queue, retry,
// backoff, drops counted). What `map-inspector-cli record|watch --otlp-endpoint` runs per system.
//
// Interval: kDefaultIntervalMs (5 s, the OpenTelemetry SDK's batch span processor's default
// schedule delay), and early whenever the batcher's pending bytes pass
// LiveOtlpBatcher::kFlushAtPendingBytes (a flood then sends 4 MiB requests as they fill).
// Memory: the batcher's pending bytes (≤ about kFlushAtPendingBytes) plus the sender's queue
// (OtlpSenderOptions::maxQueuedBytes): a receiver that is down costs that much, then drops.
// Thread: the store's (the main thread in the CLI, the GUI thread in the window).
#pragma once

#include "telemetry/LiveOtlpBatcher.h"
#include "telemetry/OtlpHttpSender.h"

#include <QObject>
#include <QTimer>

namespace mapi {

class LiveOtlpExporter : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 5000;

    // `store` must outlive the exporter. An unusable sender endpoint leaves the exporter off
    // (isOn() false; OtlpHttpSender::checkEndpoint says why): nothing is batched.
    LiveOtlpExporter(SystemStore &store, OtlpOptions otlp, OtlpSenderOptions sender, int intervalMs = kDefaultIntervalMs,
                     QObject *parent = nullptr);

    bool isOn() const { return m_sender.isOn(); }
    // Alerts raised and cleared by the owner's detectors: span events at the next batch.
    void noteAlerts(const std::vector<AlertChange> &changes);
    // Sends what is pending now (the timer does this every interval).
    void flush() { send(false); }
    // The run ends: the last batch (open tasks included) and the sender's drain within
    // `withinMs`; finished() follows once. Later changes of the store are not sent.
    void finish(int withinMs);
    bool isFinished() const { return m_finished; }

    OtlpHttpSender::Stats stats() const { return m_sender.stats(); }
    qint64 spansBatched() const { return m_spansBatched; } // handed to the sender, dropped or not
    qsizetype pendingBytes() const { return m_batcher.pendingBytes(); }
    QString target() const { return m_sender.target(); }
    const OtlpHttpSender &sender() const { return m_sender; }

Q_SIGNALS:
    void finished();

private:
    void send(bool final);

    SystemStore &m_store;
    LiveOtlpBatcher m_batcher;
    OtlpHttpSender m_sender;
    QTimer m_interval;
    qint64 m_spansBatched = 0;
    bool m_finishing = false;
    bool m_finished = false;
};

} // namespace mapi
