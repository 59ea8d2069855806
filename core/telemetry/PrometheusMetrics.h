// The model as Prometheus metrics: the text exposition format 0.0.4 that MetricsServer serves on
// GET /metrics (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
// Conventions (https://prometheus.io/docs/practices/naming/): names snake_case under `mapi_`,
// counters end in `_total`, base units in the name (`_seconds`, `_bytes`); every per-system
// series has the label `system`. Each family's `# HELP` and `# TYPE` come once, before its first
// sample; a family's samples are together (family by family, system by system within each); no
// label set repeats (two systems with the same label get " (2)", " (3)" appended); label values
// are escaped (\\, \", \n). A family with no sample is left out (the OTLP ones when the exporter
// is off, mapi_clock_offset_seconds until the offset is measured, mapi_alerts_open without
// detectors or with nothing open).
//
// Families, per system unless said:
//   mapi_build_info{version}                      gauge 1, once
//   mapi_client_state{system,state}               gauge: 1 for the current connection state, 0 for
//                                                 the other client states (clientStates())
//   mapi_agents{system,state}                     gauge: agents by the class of their state word
//                                                 (map/AgentStates.h: idle, busy, suspended, stopping,
//                                                 stopped, failed, other; an unregistered agent counts
//                                                 as stopped, as the views show it), every class listed
//   mapi_agents_health{system,health}             gauge: agents by health (every Health value listed)
//   mapi_alerts_open{system,kind,severity}        gauge: open alerts, only the pairs that are open
//   mapi_events_applied_total, mapi_messages_total, mapi_tasks_total, mapi_gaps_total,
//   mapi_sequence_gaps_total, mapi_problems_total, mapi_duplicate_events_total,
//   mapi_history_not_kept_total, mapi_agents_not_kept_total   counters: the store's StoreCounters
//   mapi_connection_drops_total                   counter, from the owner
//   mapi_events_per_second, mapi_messages_per_second   gauges over the last interval between two
//                                                 sample() calls (0 before the second)
//   mapi_clock_offset_seconds                     gauge: the server's clock minus ours, once measured
//   mapi_recorded_bytes, mapi_otlp_queue_bytes    gauges, when given (>= 0)
//   mapi_otlp_spans_sent_total, mapi_otlp_spans_dropped_total   counters, when given (>= 0)
//   mapi_agent_unhealthy{system,agent_id,agent_name,health}   gauge 1 per agent that is unhealthy
//   mapi_agent_series_omitted{system}             gauge: unhealthy agents left out by the bound
//
// Cardinality bound: every label but agent_id/agent_name takes a fixed set of values (or one per
// observed system). The per-agent family lists only unhealthy agents (isUnhealthy()), at most
// kMaxAgentSeries per system, the worst first (failed, unresponsive, disconnected, late; ties by
// agent id, so that the same agents are listed from one scrape to the next); the rest are counted
// in mapi_agent_series_omitted. A fleet of 100,000 failing agents is 250 series, not 100,000.
//
// Secrets: the `system` label is the caller's redacted URL (client/Transport.h, redactedUrl());
// agent ids and names come from the server and go through redactSecrets() (common/Redaction.h)
// like every other way out.
// Memory: text() builds one QByteArray (and, per system, a list of its unhealthy agents to pick
// the worst from); what is kept between calls is, per system, two counters, a time and the two
// rates they gave.
// Thread: the stores' (every store read here lives in the caller's thread). Not a QObject.
#pragma once

#include "alerts/AlertEngine.h"
#include "model/ModelTypes.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

namespace mapi {

class SystemStore;

// One observed system.
struct MetricsSystem
{
    // The `system` label: the system's URL without its secrets (redactedUrl()). Empty: the
    // store's connection().url (MapClient puts it there redacted).
    QString system;
    const SystemStore *store = nullptr;                   // a system without a store is left out
    const std::map<QString, Alert> *openAlerts = nullptr; // null: no detectors run
    // The client's state (clientStateName(), e.g. InspectorSession::clientState()). Empty: read
    // from store->connection().state (clientStateOf()).
    QString clientState;
    qint64 connectionDrops = 0;    // connections lost so far (the owner counts them)
    qint64 recordedBytes = -1;     // the trace's or journal's bytes on disk; -1: none
    // The live OTLP exporter's counters; -1: the exporter is off.
    qint64 otlpSpansSent = -1;
    qint64 otlpSpansDropped = -1;
    qint64 otlpQueueBytes = -1;
};

class PrometheusMetrics
{
public:
    static constexpr int kMaxAgentSeries = 250;    // per system: the cardinality bound above
    // A rate whose last sample() is older than this at text() is reported as 0: the sampler
    // stopped, and an old rate would read as a current one.
    static constexpr qint64 kStaleSampleMs = 60000;

    // Reads the counters of every system at `nowMs` (ms, any monotonic-enough clock: the CLI's
    // wall clock): each system's rates become (counter now - counter at its last sample) /
    // elapsed. A counter that went down (the store was reset: a new connection) counts from 0.
    // Systems not in `systems` are forgotten.
    void sample(const std::vector<MetricsSystem> &systems, qint64 nowMs);
    // The exposition text at `nowMs` (the time of the scrape, on sample()'s clock).
    QByteArray text(const std::vector<MetricsSystem> &systems, qint64 nowMs) const;

    // Unhealthy, for mapi_agent_unhealthy: failed, unresponsive, disconnected, late. Not:
    // healthy; suspended and stopped (an operator's or the agent's own choice, not a fault);
    // unknown (first seen less than a heartbeat interval ago: the health rules turn a silent
    // agent late, then unresponsive, in time).
    static bool isUnhealthy(Health health);
    // The client states mapi_client_state lists (clientStateName() of every ClientState).
    static QStringList clientStates();
    // The client state a store's connection().state stands for: a client state name as is;
    // "closed: why" closed; the pipeline's "open" (socket open, handshake under way) connecting
    // and "connected" (map/connect answered) subscribing; empty idle. Anything else: empty (no
    // state is 1).
    static QString clientStateOf(const QString &connectionState);
    // A label value as the text format writes it between its quotes: \ " and newline escaped.
    static QByteArray escapeLabelValue(const QString &value);

private:
    struct RateState
    {
        qint64 events = 0;         // counters at the last sample
        qint64 messages = 0;
        qint64 timeMs = 0;         // when it was taken
        double eventsPerSecond = 0;
        double messagesPerSecond = 0;
    };
    std::map<QString, RateState> m_rates; // by the system's label
};

} // namespace mapi
