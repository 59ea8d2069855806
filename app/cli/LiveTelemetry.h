// What record and watch send beyond their own output (issue "Beyond one desk"): a live OTLP
// export per system (--otlp-endpoint, core/telemetry/LiveOtlpExporter) and Prometheus metrics of
// every system on one small HTTP responder (--metrics, core/telemetry/MetricsServer: /metrics and
// /healthz). Main thread only.
#pragma once

#include "LiveRun.h"

#include "alerts/AlertEngine.h"
#include "telemetry/LiveOtlpExporter.h"
#include "telemetry/MetricsServer.h"
#include "telemetry/PrometheusMetrics.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QHostAddress>
#include <QTimer>

#include <memory>
#include <optional>
#include <vector>

namespace mapi::cli {

struct TelemetryOptions
{
    QUrl otlpEndpoint;                                       // empty: no live OTLP export
    std::vector<std::pair<QByteArray, QByteArray>> otlpHeaders; // from --otlp-header-env: values are secrets
    int otlpIntervalMs = LiveOtlpExporter::kDefaultIntervalMs;
    std::optional<std::pair<QHostAddress, quint16>> metrics; // --metrics HOST:PORT
    bool any() const { return !otlpEndpoint.isEmpty() || metrics.has_value(); }
};

// Every change of one evaluation of `engine` over `store`, read to its end (a CLI has nothing to
// keep responsive): a second evaluation follows the first when messages came meanwhile.
std::vector<AlertChange> evaluateToTheEnd(AlertEngine &engine, const SystemStore &store);

// --otlp-endpoint, --otlp-protocol, --otlp-header-env NAME=VAR (repeatable), --otlp-interval S,
// --metrics HOST:PORT: checked (a header's value read from its environment variable now).
ErrorOr<TelemetryOptions> telemetryOptions(const QCommandLineParser &p);
// The option lines for --help (main.cpp adds them).
QList<QCommandLineOption> telemetryCommandLineOptions();

class LiveTelemetry
{
public:
    // How long the last batch may take to go out when the run ends (OtlpHttpSender::drain).
    static constexpr int kFinishWithinMs = 5000;

    explicit LiveTelemetry(TelemetryOptions options);
    ~LiveTelemetry();

    // One system. `engine`: the command's detectors (watch), whose changes it hands to
    // noteAlerts(); null: without detectors of its own (record), alerts are evaluated here each
    // second with `rules` while telemetry is on, for the export and the metrics.
    void add(LiveRun &run, AlertEngine *engine, const AlertRules &rules = {});
    // Starts the metrics responder (before or after add(): a scrape reads the systems added so far); false with `error` when its address cannot be listened on.
    bool start(QString *error);
    // The alerts of system `index` (the order of add()) raised and cleared by its detectors.
    void noteAlerts(size_t index, const std::vector<AlertChange> &changes);
    // The runs ended: the last OTLP batches go out (within kFinishWithinMs; the event loop runs
    // meanwhile), the responder closes. Says on stderr what was sent and dropped.
    void finish();

    quint16 metricsPort() const { return m_server ? m_server->port() : 0; }

private:
    struct System;
    std::vector<MetricsSystem> metricsSystems() const;
    std::pair<bool, QString> health() const;

    TelemetryOptions m_options;
    std::vector<std::unique_ptr<System>> m_systems;
    std::unique_ptr<MetricsServer> m_server;
    PrometheusMetrics m_metrics;
    QTimer m_sampler;
    QElapsedTimer m_clock;
    bool m_finished = false;
};

} // namespace mapi::cli
