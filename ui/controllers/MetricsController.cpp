#include "controllers/MetricsController.h"

#include "client/MapClient.h"

#include <QAction>
#include <QDateTime>
#include <QInputDialog>
#include <QSettings>
#include <QStringList>
#include <QWidget>

#include <algorithm>

namespace mapi::ui {

namespace {
const QString kServeKey = QStringLiteral("metrics/serve");
const QString kPortKey = QStringLiteral("metrics/port");

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch(); // the CLI's clock for the rates, too
}
} // namespace

MetricsController::MetricsController(std::function<std::vector<MetricsSystem>()> systems, QWidget *window)
    : QObject(window)
    , m_systems(std::move(systems))
    , m_window(window)
    , m_server(new MetricsServer(this))
{
    // Asked while a scrape is answered, in this thread: the stores are read where they live.
    m_server->setMetricsProvider([this] { return m_metrics.text(m_systems(), nowMs()); });
    m_server->setHealthProvider([this] { return health(); });
    m_sampler.setInterval(kSampleMs);
    connect(&m_sampler, &QTimer::timeout, this, [this] { m_metrics.sample(m_systems(), nowMs()); });

    m_serveAction = new QAction(this);
    m_serveAction->setObjectName(QStringLiteral("serveMetrics"));
    m_serveAction->setCheckable(true);
    m_serveAction->setToolTip(tr("Answer GET /metrics (Prometheus) and /healthz on this computer only: every live system's "
                                 "agents, health, alerts, rates and OpenTelemetry counters, sampled each second"));
    // triggered, not toggled: updateAction() checks it from code without coming back here.
    connect(m_serveAction, &QAction::triggered, this, [this](bool on) { setServing(on); });
    m_portAction = new QAction(tr("Prometheus metrics &port…"), this);
    m_portAction->setObjectName(QStringLiteral("metricsPort"));
    connect(m_portAction, &QAction::triggered, this, [this] {
        bool ok = false;
        const int port = QInputDialog::getInt(m_window, tr("Prometheus metrics"), tr("Serve /metrics on 127.0.0.1, port:"), m_port, 1,
                                              65535, 1, &ok);
        if (ok)
            setPort(quint16(port));
    });
    const uint saved = QSettings().value(kPortKey, uint(kDefaultPort)).toUInt();
    m_port = saved >= 1 && saved <= 65535 ? quint16(saved) : kDefaultPort;
    updateAction();
}

MetricsController::~MetricsController() = default;

void MetricsController::loadSettings()
{
    if (!QSettings().value(kServeKey, false).toBool())
        return;
    QString error;
    if (!listen(&error)) // another instance on the port: said; the saved choice stays for the next start
        Q_EMIT statusMessage(tr("Prometheus metrics not served: 127.0.0.1:%1 cannot be listened on (%2)").arg(m_port).arg(error), 15000);
    updateAction();
}

bool MetricsController::setServing(bool on)
{
    bool ok = true;
    if (on) {
        QString error;
        ok = listen(&error);
        if (!ok)
            Q_EMIT statusMessage(tr("Prometheus metrics not served: 127.0.0.1:%1 cannot be listened on (%2)").arg(m_port).arg(error),
                                 15000);
    } else if (isServing()) {
        stop();
        Q_EMIT statusMessage(tr("Prometheus metrics no longer served"), 5000);
    }
    QSettings().setValue(kServeKey, on && ok);
    updateAction();
    return ok;
}

bool MetricsController::isServing() const
{
    return m_server->isListening();
}

quint16 MetricsController::listeningPort() const
{
    return m_server->port();
}

void MetricsController::setPort(quint16 port)
{
    if (port == 0)
        return;
    m_port = port;
    QSettings().setValue(kPortKey, uint(port));
    if (isServing())
        setServing(true); // MetricsServer::listen() closes the old port first
    updateAction();
}

bool MetricsController::listen(QString *error)
{
    if (!m_server->listen(QHostAddress(QHostAddress::LocalHost), m_port, error))
        return false;
    m_metrics.sample(m_systems(), nowMs()); // the rates' first sample: a scrape a second later has rates
    m_sampler.start();
    Q_EMIT statusMessage(tr("Prometheus metrics on http://127.0.0.1:%1/metrics").arg(m_server->port()), 8000);
    return true;
}

void MetricsController::stop()
{
    m_sampler.stop();
    m_server->close();
}

void MetricsController::updateAction()
{
    m_serveAction->setText(tr("Serve Prometheus &metrics on 127.0.0.1:%1").arg(m_port));
    m_serveAction->setChecked(isServing());
}

// Healthy while every live system is live (one reconnecting has a hole in what it observes).
std::pair<bool, QString> MetricsController::health() const
{
    const std::vector<MetricsSystem> systems = m_systems();
    if (systems.empty())
        return {false, tr("no live system")};
    const QString live = clientStateName(ClientState::Live);
    QStringList down;
    for (const MetricsSystem &s : systems)
        if (s.clientState != live)
            down << tr("%1 is %2").arg(s.system, s.clientState);
    return {down.isEmpty(), down.join(QStringLiteral("; "))};
}

} // namespace mapi::ui
