#include "LiveTelemetry.h"

#include <QDateTime>
#include <QEventLoop>

#include <cstdio>

namespace mapi::cli {

std::vector<AlertChange> evaluateToTheEnd(AlertEngine &engine, const SystemStore &store)
{
    std::vector<AlertChange> changes = engine.update(store);
    while (engine.isBehind(store)) {
        std::vector<AlertChange> more = engine.update(store);
        changes.insert(changes.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return changes;
}

QList<QCommandLineOption> telemetryCommandLineOptions()
{
    return {
        {QStringLiteral("otlp-endpoint"),
         QStringLiteral("record, watch: send the model live as OpenTelemetry spans (OTLP/HTTP, JSON) to this receiver, e.g. "
                        "http://127.0.0.1:4318 (\"/v1/traces\" is appended unless given)."),
         QStringLiteral("URL")},
        {QStringLiteral("otlp-protocol"), QStringLiteral("record, watch: http/json (the only one built)."), QStringLiteral("P"),
         QStringLiteral("http/json")},
        {QStringLiteral("otlp-header-env"),
         QStringLiteral("record, watch: send header NAME on every OTLP request, its value read from environment variable VAR "
                        "(repeatable; with a header, plain http only to this machine)."),
         QStringLiteral("NAME=VAR")},
        {QStringLiteral("otlp-interval"), QStringLiteral("record, watch: seconds between OTLP batches (default 5)."), QStringLiteral("S")},
        {QStringLiteral("metrics"),
         QStringLiteral("record, watch: serve Prometheus metrics on http://HOST:PORT/metrics and a health check on /healthz "
                        "(e.g. 127.0.0.1:9464; another address exposes agent names beyond this machine)."),
         QStringLiteral("HOST:PORT")},
    };
}

ErrorOr<TelemetryOptions> telemetryOptions(const QCommandLineParser &p)
{
    TelemetryOptions o;
    const QString protocol = p.value(QStringLiteral("otlp-protocol"));
    if (protocol != QLatin1String("http/json")) {
        if (protocol == QLatin1String("http/protobuf") || protocol == QLatin1String("grpc"))
            return Failure{QStringLiteral("--otlp-protocol %1 is not built into this program: use http/json (OTLP/HTTP with the JSON "
                                          "encoding, which every OpenTelemetry Collector's otlp receiver accepts)").arg(protocol)};
        return Failure{QStringLiteral("--otlp-protocol must be http/json")};
    }
    for (const QString &spec : p.values(QStringLiteral("otlp-header-env"))) {
        const qsizetype eq = spec.indexOf(u'=');
        const QString name = eq > 0 ? spec.left(eq).trimmed() : QString();
        const QString var = eq > 0 ? spec.mid(eq + 1).trimmed() : QString();
        if (name.isEmpty() || var.isEmpty())
            return Failure{QStringLiteral("--otlp-header-env takes NAME=VAR (a header name and an environment variable), not \"%1\"").arg(spec)};
        if (!qEnvironmentVariableIsSet(var.toLocal8Bit().constData()))
            return Failure{QStringLiteral("--otlp-header-env %1: the environment variable %2 is not set").arg(name, var)};
        const QByteArray value = qgetenv(var.toLocal8Bit().constData());
        if (!OtlpHttpSender::isValidHeader(name.toLatin1(), value)) // said now, not as an export that never starts
            return Failure{QStringLiteral("--otlp-header-env %1: not a header name, or the value of %2 has a line break").arg(name, var)};
        o.otlpHeaders.emplace_back(name.toLatin1(), value);
    }
    if (p.isSet(QStringLiteral("otlp-endpoint"))) {
        o.otlpEndpoint = QUrl(p.value(QStringLiteral("otlp-endpoint")), QUrl::StrictMode);
        if (const QString wrong = OtlpHttpSender::checkEndpoint(o.otlpEndpoint, !o.otlpHeaders.empty()); !wrong.isEmpty())
            return Failure{QStringLiteral("--otlp-endpoint: %1").arg(wrong)};
    } else if (!o.otlpHeaders.empty() || p.isSet(QStringLiteral("otlp-interval"))) {
        return Failure{QStringLiteral("--otlp-header-env and --otlp-interval go with --otlp-endpoint")};
    }
    if (p.isSet(QStringLiteral("otlp-interval"))) {
        bool ok = false;
        const double s = p.value(QStringLiteral("otlp-interval")).toDouble(&ok);
        if (!ok || !(s >= 0.1 && s <= 3600))
            return Failure{QStringLiteral("--otlp-interval must be a number of seconds from 0.1 to 3600")};
        o.otlpIntervalMs = int(s * 1000);
    }
    if (p.isSet(QStringLiteral("metrics"))) {
        ErrorOr<std::pair<QHostAddress, quint16>> listen = MetricsServer::parseListen(p.value(QStringLiteral("metrics")));
        if (!listen)
            return Failure{QStringLiteral("--metrics: %1").arg(listen.error())};
        o.metrics = *listen;
    }
    return o;
}

// One observed system: its run, its detectors (the command's or our own) and its exporter.
struct LiveTelemetry::System
{
    LiveRun *run = nullptr;
    AlertEngine *engine = nullptr;
    std::unique_ptr<AlertEngine> ownEngine; // record: evaluated here each second
    std::unique_ptr<QTimer> tick;
    std::unique_ptr<LiveOtlpExporter> exporter;
};

LiveTelemetry::LiveTelemetry(TelemetryOptions options)
    : m_options(std::move(options))
{
    m_clock.start(); // the rates' clock: monotonic, so that a step of the wall clock cannot freeze them
    m_sampler.setInterval(1000); // the rates' resolution; a scrape reads the last second's
    QObject::connect(&m_sampler, &QTimer::timeout, [this] { m_metrics.sample(metricsSystems(), m_clock.elapsed()); });
}

LiveTelemetry::~LiveTelemetry() = default;

void LiveTelemetry::add(LiveRun &run, AlertEngine *engine, const AlertRules &rules)
{
    auto s = std::make_unique<System>();
    s->run = &run;
    s->engine = engine;
    const size_t index = m_systems.size();
    if (!m_options.otlpEndpoint.isEmpty()) {
        OtlpOptions otlp;
        otlp.serviceName = run.label(); // the system's address without its secrets: one service per system
        OtlpSenderOptions sender;
        sender.endpoint = m_options.otlpEndpoint;
        sender.headers = m_options.otlpHeaders;
        s->exporter = std::make_unique<LiveOtlpExporter>(run.store(), otlp, sender, m_options.otlpIntervalMs);
        // The export sends every payload, and a CLI keeps no journal to read them back from.
        run.session.setKeepPayloadTexts(true);
        std::fprintf(stderr, "map-inspector-cli: %s: sending OpenTelemetry spans to %s every %.1f s\n", qPrintable(run.label()),
                     qPrintable(s->exporter->target()), double(m_options.otlpIntervalMs) / 1000.0);
    }
    if (!engine && m_options.any()) {
        s->ownEngine = std::make_unique<AlertEngine>(rules);
        s->engine = s->ownEngine.get();
        SystemStore &store = run.store();
        store.setHealthPolicy(healthPolicyForRules(rules, store.healthPolicy()));
        QObject::connect(&store, &SystemStore::wasReset, &store, [e = s->engine] { e->restartReading(); });
        s->tick = std::make_unique<QTimer>();
        s->tick->setInterval(1000); // the rules are in seconds, as watch evaluates them
        QObject::connect(s->tick.get(), &QTimer::timeout, &store, [this, index] {
            System &sys = *m_systems[index];
            SystemStore &st = sys.run->store();
            st.advanceTime(QDateTime::currentMSecsSinceEpoch());
            noteAlerts(index, evaluateToTheEnd(*sys.engine, st));
        });
        s->tick->start();
    }
    m_systems.push_back(std::move(s));
}

bool LiveTelemetry::start(QString *error)
{
    if (m_options.metrics) {
        m_server = std::make_unique<MetricsServer>();
        m_server->setMetricsProvider([this] { return m_metrics.text(metricsSystems(), m_clock.elapsed()); });
        m_server->setHealthProvider([this] { return health(); });
        if (!m_server->listen(m_options.metrics->first, m_options.metrics->second, error))
            return false;
        if (!MetricsServer::isLoopback(m_server->address()))
            std::fprintf(stderr, "map-inspector-cli: metrics on %s:%u are reachable from other machines, agent names included\n",
                         qPrintable(m_server->address().toString()), unsigned(m_server->port()));
        std::fprintf(stderr, "map-inspector-cli: metrics on http://%s:%u/metrics\n", qPrintable(m_server->address().toString()),
                     unsigned(m_server->port()));
        m_metrics.sample(metricsSystems(), m_clock.elapsed());
        m_sampler.start();
    }
    return true;
}

void LiveTelemetry::noteAlerts(size_t index, const std::vector<AlertChange> &changes)
{
    if (index < m_systems.size() && m_systems[index]->exporter && !changes.empty())
        m_systems[index]->exporter->noteAlerts(changes);
}

std::vector<MetricsSystem> LiveTelemetry::metricsSystems() const
{
    std::vector<MetricsSystem> out;
    out.reserve(m_systems.size());
    for (const auto &s : m_systems) {
        MetricsSystem m;
        m.system = s->run->label();
        m.store = &s->run->store();
        m.openAlerts = s->engine ? &s->engine->openAlerts() : nullptr;
        m.clientState = clientStateName(s->run->session.clientState());
        m.connectionDrops = qint64(s->run->drops.size()) + s->run->dropsNotListed;
        if (s->exporter) {
            const OtlpHttpSender::Stats st = s->exporter->stats();
            m.otlpSpansSent = st.spansSent;
            m.otlpSpansDropped = st.spansDropped;
            m.otlpQueueBytes = st.queuedBytes + s->exporter->pendingBytes();
        }
        out.push_back(m);
    }
    return out;
}

// Healthy while every system is live (a collector reconnecting is not: its data has a hole).
std::pair<bool, QString> LiveTelemetry::health() const
{
    QStringList down;
    for (const auto &s : m_systems)
        if (s->run->session.clientState() != ClientState::Live)
            down << QStringLiteral("%1 is %2").arg(s->run->label(), clientStateName(s->run->session.clientState()));
    if (m_systems.empty())
        return {false, QStringLiteral("no system")};
    return {down.isEmpty(), down.join(QStringLiteral("; "))};
}

void LiveTelemetry::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    m_sampler.stop();
    int waiting = 0;
    QEventLoop loop;
    for (const auto &s : m_systems) {
        if (s->tick)
            s->tick->stop();
        if (!s->exporter)
            continue;
        ++waiting;
        QObject::connect(s->exporter.get(), &LiveOtlpExporter::finished, &loop, [&] {
            if (--waiting == 0)
                loop.quit();
        });
        s->exporter->finish(kFinishWithinMs);
    }
    if (waiting > 0) {
        QTimer::singleShot(kFinishWithinMs + 1000, &loop, &QEventLoop::quit); // drained() always comes; this is a guard
        loop.exec();
    }
    for (const auto &s : m_systems) {
        if (!s->exporter)
            continue;
        const OtlpHttpSender::Stats st = s->exporter->stats();
        std::fprintf(stderr, "map-inspector-cli: %s: OpenTelemetry: %lld spans sent, %lld dropped, %lld rejected by the receiver%s%s\n",
                     qPrintable(s->run->label()), static_cast<long long>(st.spansSent), static_cast<long long>(st.spansDropped),
                     static_cast<long long>(st.spansRejected), st.lastError.isEmpty() ? "" : "; last error: ",
                     qPrintable(redactSecrets(st.lastError)));
    }
    if (m_server)
        m_server->close();
}

} // namespace mapi::cli
