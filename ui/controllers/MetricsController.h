// The window's Prometheus metrics (issue "Beyond one desk" item 2): off by default; when on
// (Systems → Serve Prometheus metrics), one MetricsServer on 127.0.0.1:port() answers GET /metrics
// with PrometheusMetrics' text over every open live system (MetricsSystem each, from
// TelemetryController::metricsSystem(): its redacted URL as the `system` label, its live model,
// open alerts, client state, OpenTelemetry counters when it exports) and GET /healthz (healthy
// while every live system is live). The rates are sampled every kSampleMs while it serves.
//
// Loopback only: the window offers no address (agent names and ids, the systems' URLs without
// their secrets, would reach the network; map-inspector-cli --metrics is for exposing them on
// purpose). Settings: metrics/serve (bool, default false) and metrics/port (default
// kDefaultPort, the OpenTelemetry Prometheus exporter's). A port that cannot be listened on is
// said in the status bar and leaves the option off for this session (the saved choice stays,
// unless the operator made it then).
//
// Window-wide (not one per system, unlike the other controllers): the window owns it. GUI thread.
#pragma once

#include "telemetry/MetricsServer.h"
#include "telemetry/PrometheusMetrics.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <vector>

class QAction;
class QWidget;

namespace mapi::ui {

class MetricsController : public QObject
{
    Q_OBJECT
public:
    static constexpr quint16 kDefaultPort = 9464;
    static constexpr int kSampleMs = 1000; // the rates' resolution, as map-inspector-cli's

    // `systems`: the window's open live systems, asked at each sample and scrape. `window`:
    // parent, and where the port's dialog opens.
    MetricsController(std::function<std::vector<MetricsSystem>()> systems, QWidget *window);
    ~MetricsController() override;

    // Checkable: "Serve Prometheus metrics on 127.0.0.1:PORT".
    QAction *serveAction() const { return m_serveAction; }
    // "Prometheus metrics port…": asks for the port (saved; listening again there when serving).
    QAction *portAction() const { return m_portAction; }

    // The saved choice: serves when it says so (a port taken is said, the option left off).
    void loadSettings();
    // Starts or stops serving, and saves the choice. False (and said) when the port cannot be
    // listened on: then off.
    bool setServing(bool on);
    bool isServing() const;
    // Saves `port` (1–65535) and, when serving, listens there instead.
    void setPort(quint16 port);
    quint16 port() const { return m_port; }
    // The port listened on; 0 when not serving.
    quint16 listeningPort() const;

Q_SIGNALS:
    void statusMessage(const QString &text, int timeoutMs);

private:
    bool listen(QString *error);
    void stop();
    void updateAction();
    std::pair<bool, QString> health() const;

    std::function<std::vector<MetricsSystem>()> m_systems;
    QPointer<QWidget> m_window;
    MetricsServer *m_server = nullptr; // a child, listening while serving
    PrometheusMetrics m_metrics;
    QTimer m_sampler;
    quint16 m_port = kDefaultPort;
    QAction *m_serveAction = nullptr;
    QAction *m_portAction = nullptr;
};

} // namespace mapi::ui
