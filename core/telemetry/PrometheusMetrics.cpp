#include "telemetry/PrometheusMetrics.h"

#include "client/MapClient.h"
#include "common/Redaction.h"
#include "map/AgentStates.h"
#include "model/SystemStore.h"

#include <QLocale>
#include <QSet>

#include <algorithm>
#include <array>
#include <cmath>

#ifndef MAPI_VERSION
#define MAPI_VERSION "unknown"
#endif

namespace mapi {

namespace {

// mapi_agents' classes and mapi_agents_health's values, in the order they are written.
constexpr std::array<StateClass, 7> kStateClasses = {StateClass::Idle,    StateClass::Busy,   StateClass::Suspended, StateClass::Stopping,
                                                     StateClass::Stopped, StateClass::Failed, StateClass::Other};
constexpr std::array<Health, 8> kHealths = {Health::Healthy,      Health::Late,    Health::Unresponsive, Health::Suspended,
                                            Health::Disconnected, Health::Stopped, Health::Failed,       Health::Unknown};
constexpr std::array<ClientState, 9> kClientStates = {ClientState::Idle,         ClientState::Connecting, ClientState::Authenticating,
                                                      ClientState::Subscribing,  ClientState::Snapshotting, ClientState::Live,
                                                      ClientState::Backoff,      ClientState::Failed,     ClientState::Closed};

// Worst first: the order mapi_agent_unhealthy keeps its kMaxAgentSeries in.
int unhealthyRank(Health health)
{
    switch (health) {
    case Health::Failed: return 0;
    case Health::Unresponsive: return 1;
    case Health::Disconnected: return 2;
    case Health::Late: return 3;
    default: break;
    }
    return 4;
}

QByteArray number(qint64 value)
{
    return QByteArray::number(value);
}

// Go's ParseFloat reads what this writes: the shortest text that reads back the same double.
QByteArray number(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    return QString::number(value, 'g', QLocale::FloatingPointShortest).toLatin1();
}

// `base`, or `base (2)`, `base (3)`, … : the first not in `used`, which it joins. Keeps label
// sets distinct when two values are written the same (two systems at one URL; two agent ids
// that read alike once redacted).
QString unique(QSet<QString> &used, const QString &base)
{
    QString candidate = base;
    for (int n = 2; used.contains(candidate); ++n)
        candidate = base + QStringLiteral(" (%1)").arg(n);
    used.insert(candidate);
    return candidate;
}

QByteArray label(const char *name, const QString &value)
{
    return name + QByteArray("=\"") + PrometheusMetrics::escapeLabelValue(value) + '"';
}

// Writes one family at a time: its HELP and TYPE before its first sample, none without samples.
// The HELP texts are this file's constants: no backslash, no newline (nothing to escape).
class Writer
{
public:
    explicit Writer(QByteArray &out)
        : m_out(out)
    {
    }

    void family(const char *name, const char *type, const char *help)
    {
        m_name = name;
        m_type = type;
        m_help = help;
        m_headerWritten = false;
    }
    // `labels`: name="value" pairs joined by commas, without braces (empty: none).
    void sample(const QByteArray &labels, const QByteArray &value)
    {
        if (!m_headerWritten) {
            m_out += QByteArray("# HELP ") + m_name + ' ' + m_help + '\n';
            m_out += QByteArray("# TYPE ") + m_name + ' ' + m_type + '\n';
            m_headerWritten = true;
        }
        m_out += m_name;
        if (!labels.isEmpty())
            m_out += '{' + labels + '}';
        m_out += ' ' + value + '\n';
    }

private:
    QByteArray &m_out;
    const char *m_name = "";
    const char *m_type = "";
    const char *m_help = "";
    bool m_headerWritten = false;
};

// What text() reads of one system before it writes, so that each family is one pass.
struct SystemView
{
    const MetricsSystem *system = nullptr;
    QByteArray systemLabel;                         // system="…"
    QString clientState;
    std::array<qint64, 8> byStateClass{};           // indexed by int(StateClass)
    std::array<qint64, 8> byHealth{};               // indexed by int(Health)
    std::map<std::pair<int, int>, qint64> alerts;   // (kind, severity) → open
    std::vector<const Agent *> unhealthy;           // the worst kMaxAgentSeries, in order
    qint64 omitted = 0;                             // unhealthy agents past the bound
};

// The `system` label of each system (empty for one without a store), distinct.
std::vector<QString> systemLabels(const std::vector<MetricsSystem> &systems)
{
    std::vector<QString> labels;
    labels.reserve(systems.size());
    QSet<QString> used;
    for (const MetricsSystem &s : systems) {
        if (!s.store) {
            labels.emplace_back();
            continue;
        }
        labels.push_back(unique(used, s.system.isEmpty() ? s.store->connection().url : s.system));
    }
    return labels;
}

SystemView viewOf(const MetricsSystem &system, const QString &systemLabel)
{
    SystemView view;
    view.system = &system;
    view.systemLabel = label("system", systemLabel);
    view.clientState = system.clientState.isEmpty() ? PrometheusMetrics::clientStateOf(system.store->connection().state) : system.clientState;
    for (const Agent &agent : system.store->agents()) {
        // Departed agents are stopped, as the views show them (HealthHistory's state groups).
        const StateClass stateClass = agent.unregistered ? StateClass::Stopped : classifyState(agent.state);
        ++view.byStateClass[size_t(stateClass)];
        ++view.byHealth[size_t(agent.health)];
        if (!agent.unregistered && PrometheusMetrics::isUnhealthy(agent.health))
            view.unhealthy.push_back(&agent);
    }
    const auto worse = [](const Agent *a, const Agent *b) {
        const int ra = unhealthyRank(a->health);
        const int rb = unhealthyRank(b->health);
        return ra != rb ? ra < rb : a->id < b->id;
    };
    const size_t kept = std::min(view.unhealthy.size(), size_t(PrometheusMetrics::kMaxAgentSeries));
    std::partial_sort(view.unhealthy.begin(), view.unhealthy.begin() + std::ptrdiff_t(kept), view.unhealthy.end(), worse);
    view.omitted = qint64(view.unhealthy.size() - kept);
    view.unhealthy.resize(kept);
    view.unhealthy.shrink_to_fit();
    if (system.openAlerts)
        for (const auto &entry : *system.openAlerts)
            ++view.alerts[{int(entry.second.kind), int(entry.second.severity)}];
    return view;
}

} // namespace

bool PrometheusMetrics::isUnhealthy(Health health)
{
    return unhealthyRank(health) < 4;
}

QStringList PrometheusMetrics::clientStates()
{
    QStringList names;
    for (ClientState state : kClientStates)
        names << clientStateName(state);
    return names;
}

QString PrometheusMetrics::clientStateOf(const QString &connectionState)
{
    if (connectionState.isEmpty())
        return clientStateName(ClientState::Idle);
    for (ClientState state : kClientStates)
        if (connectionState == clientStateName(state))
            return connectionState;
    // The pipeline's own words (ProtocolPipeline: connectionOpened, connectionClosed, a
    // map/connect answer), which the client's next state change replaces.
    if (connectionState.startsWith(QLatin1String("closed")))
        return clientStateName(ClientState::Closed);
    if (connectionState == QLatin1String("open"))
        return clientStateName(ClientState::Connecting);
    if (connectionState == QLatin1String("connected"))
        return clientStateName(ClientState::Subscribing);
    return {};
}

QByteArray PrometheusMetrics::escapeLabelValue(const QString &value)
{
    const QByteArray utf8 = value.toUtf8();
    QByteArray out;
    out.reserve(utf8.size() + 8);
    for (const char c : utf8) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default: out += c; break;
        }
    }
    return out;
}

void PrometheusMetrics::sample(const std::vector<MetricsSystem> &systems, qint64 nowMs)
{
    const std::vector<QString> labels = systemLabels(systems);
    std::map<QString, RateState> next;
    for (size_t i = 0; i < systems.size(); ++i) {
        if (!systems[i].store)
            continue;
        const StoreCounters &counters = systems[i].store->counters();
        RateState now;
        now.events = counters.eventsApplied;
        now.messages = counters.messages;
        now.timeMs = nowMs;
        const auto last = m_rates.find(labels[i]);
        if (last != m_rates.end()) {
            const RateState &before = last->second;
            const qint64 elapsedMs = nowMs - before.timeMs;
            if (elapsedMs <= 0) {
                now = before; // the same instant, or a clock that went back: nothing measured
            } else {
                // A counter that went down was reset (a new connection's model): it counts from 0.
                const qint64 events = now.events >= before.events ? now.events - before.events : now.events;
                const qint64 messages = now.messages >= before.messages ? now.messages - before.messages : now.messages;
                now.eventsPerSecond = double(events) * 1000.0 / double(elapsedMs);
                now.messagesPerSecond = double(messages) * 1000.0 / double(elapsedMs);
            }
        }
        next[labels[i]] = now;
    }
    m_rates.swap(next); // systems no longer observed are forgotten
}

QByteArray PrometheusMetrics::text(const std::vector<MetricsSystem> &systems, qint64 nowMs) const
{
    const std::vector<QString> labels = systemLabels(systems);
    std::vector<SystemView> views;
    views.reserve(systems.size());
    size_t agentSeries = 0;
    for (size_t i = 0; i < systems.size(); ++i) {
        if (!systems[i].store)
            continue;
        views.push_back(viewOf(systems[i], labels[i]));
        agentSeries += views.back().unhealthy.size();
    }

    QByteArray out;
    out.reserve(qsizetype(2048 + views.size() * 4096 + agentSeries * 192));
    Writer w(out);

    w.family("mapi_build_info", "gauge", "MAP Inspector's version, as a label; the value is always 1.");
    w.sample(label("version", QStringLiteral(MAPI_VERSION)), "1");

    w.family("mapi_client_state", "gauge", "The client's connection state: 1 for the current one, 0 for the others.");
    const QStringList states = clientStates();
    for (const SystemView &v : views)
        for (const QString &state : states)
            w.sample(v.systemLabel + ',' + label("state", state), state == v.clientState ? "1" : "0");

    w.family("mapi_agents", "gauge", "Agents by the class of their state (unregistered agents count as stopped).");
    for (const SystemView &v : views)
        for (StateClass c : kStateClasses)
            w.sample(v.systemLabel + ',' + label("state", stateClassName(c)), number(v.byStateClass[size_t(c)]));

    w.family("mapi_agents_health", "gauge", "Agents by health, as the health rules read heartbeats, states and sessions.");
    for (const SystemView &v : views)
        for (Health h : kHealths)
            w.sample(v.systemLabel + ',' + label("health", healthName(h)), number(v.byHealth[size_t(h)]));

    w.family("mapi_alerts_open", "gauge", "Open alerts by kind and severity (only the pairs that are open).");
    for (const SystemView &v : views)
        for (const auto &[key, count] : v.alerts)
            w.sample(v.systemLabel + ',' + label("kind", alertKindName(AlertKind(key.first))) + ','
                         + label("severity", alertSeverityName(AlertSeverity(key.second))),
                     number(count));

    // The store's counters: one family each, every system's sample together.
    struct Counter
    {
        const char *name;
        const char *help;
        qint64 StoreCounters::*field;
    };
    static const Counter counters[] = {
        {"mapi_events_applied_total", "MAP events applied to the model.", &StoreCounters::eventsApplied},
        {"mapi_messages_total", "Messages seen.", &StoreCounters::messages},
        {"mapi_tasks_total", "Tasks seen.", &StoreCounters::tasks},
        {"mapi_gaps_total", "Gaps in the event stream: reconnects and jumps in sequence numbers.", &StoreCounters::gaps},
        {"mapi_sequence_gaps_total", "Jumps in a subscription's sequence numbers.", &StoreCounters::sequenceGaps},
        {"mapi_problems_total", "Protocol problems: frames malformed, unexpected or refused.", &StoreCounters::problems},
        {"mapi_duplicate_events_total", "Events received again (an id already applied), not applied twice.", &StoreCounters::duplicateEvents},
        {"mapi_history_not_kept_total", "Events applied to the model but not listed (past the history row limit).", &StoreCounters::historyNotKept},
        {"mapi_agents_not_kept_total", "References to agents past the model's agent limit.", &StoreCounters::agentsNotKept},
    };
    for (const Counter &c : counters) {
        w.family(c.name, "counter", c.help);
        for (const SystemView &v : views)
            w.sample(v.systemLabel, number(v.system->store->counters().*(c.field)));
    }
    w.family("mapi_connection_drops_total", "counter", "Connections to the system lost.");
    for (const SystemView &v : views)
        w.sample(v.systemLabel, number(v.system->connectionDrops));

    // Each view's rates (null: none, or stale), found by the label sample() keyed them by: both
    // come from systemLabels() over the same systems.
    std::vector<const RateState *> rates;
    rates.reserve(views.size());
    for (size_t i = 0; i < systems.size(); ++i) {
        if (!systems[i].store)
            continue;
        const auto found = m_rates.find(labels[i]);
        const bool fresh = found != m_rates.end() && nowMs - found->second.timeMs <= kStaleSampleMs;
        rates.push_back(fresh ? &found->second : nullptr);
    }
    w.family("mapi_events_per_second", "gauge", "Events applied per second over the last sampling interval.");
    for (size_t i = 0; i < views.size(); ++i)
        w.sample(views[i].systemLabel, number(rates[i] ? rates[i]->eventsPerSecond : 0.0));
    w.family("mapi_messages_per_second", "gauge", "Messages per second over the last sampling interval.");
    for (size_t i = 0; i < views.size(); ++i)
        w.sample(views[i].systemLabel, number(rates[i] ? rates[i]->messagesPerSecond : 0.0));

    w.family("mapi_clock_offset_seconds", "gauge", "The server's clock minus ours, measured from live events.");
    for (const SystemView &v : views)
        if (v.system->store->connection().clockSamples > 0)
            w.sample(v.systemLabel, number(double(v.system->store->connection().clockOffsetMs) / 1000.0));

    // What the owner gives, when it has it (-1: none).
    struct Given
    {
        const char *name;
        const char *type;
        const char *help;
        qint64 MetricsSystem::*field;
    };
    static const Given given[] = {
        {"mapi_recorded_bytes", "gauge", "Bytes of the session's trace or journal on disk.", &MetricsSystem::recordedBytes},
        {"mapi_otlp_spans_sent_total", "counter", "Spans the live OTLP exporter sent.", &MetricsSystem::otlpSpansSent},
        {"mapi_otlp_spans_dropped_total", "counter", "Spans the live OTLP exporter dropped (queue full, sends failed).", &MetricsSystem::otlpSpansDropped},
        {"mapi_otlp_queue_bytes", "gauge", "Bytes waiting in the live OTLP exporter's queue.", &MetricsSystem::otlpQueueBytes},
    };
    for (const Given &g : given) {
        w.family(g.name, g.type, g.help);
        for (const SystemView &v : views)
            if (const qint64 value = (*v.system).*(g.field); value >= 0)
                w.sample(v.systemLabel, number(value));
    }

    w.family("mapi_agent_unhealthy", "gauge",
             "1 for each unhealthy agent (failed, unresponsive, disconnected, late), worst first, at most 250 per system.");
    for (const SystemView &v : views) {
        QSet<QString> ids; // distinct label sets, even if two ids read alike once redacted
        for (const Agent *agent : v.unhealthy)
            w.sample(v.systemLabel + ',' + label("agent_id", unique(ids, redactSecrets(agent->id))) + ','
                         + label("agent_name", redactSecrets(agent->name)) + ',' + label("health", healthName(agent->health)),
                     "1");
    }
    w.family("mapi_agent_series_omitted", "gauge", "Unhealthy agents left out of mapi_agent_unhealthy by its bound.");
    for (const SystemView &v : views)
        w.sample(v.systemLabel, number(v.omitted));
    return out;
}

} // namespace mapi
