// A realistic large MAP system, written as a trace the window and the CLI open like a recording
// (docs/trace-format.md): what issue 44's views, tests and screenshots are tried on. The demo
// system runs 40 agents; the copy-based generator (bench_trace_load generate) repeats those 40
// names thousands of times, fine for raw throughput, useless to look at.
//
// The system: a coordinator; teams of unequal size (one team about 12 % of all agents), each
// with a lead, workers under the lead and sub-agents under each worker, every name distinct
// ("payments-lead", "payments-w017", "payments-w017.sub-2"), each team in a scope of its own
// ("team/payments", a sub-scope of "fleet") and the leads in "fleet" too. Traffic has locality: heartbeats go to one's
// parent every 30 s; tasks go lead → worker → sub-agent and back (seed 000's TASK_REQUEST,
// TASK_ACCEPT, TASK_COMPLETE, with the state changes around them); leads ask each other's status
// now and then (the only traffic across teams, a few per cent). Two incidents hit many agents at
// once: at 55 % of the run a shared dependency fails for one team (most of its workers and
// sub-agents report a CRITICAL error and go to state "error": failed), and at 70 % the largest
// team falls silent within 20 s (no heartbeat, no message: unresponsive 90 s later).
//
// Deterministic: the same options give the same file, byte for byte. Thread: any.
#pragma once

#include "common/ErrorOr.h"

#include <QString>

namespace mapi::fleet {

struct FleetOptions
{
    int agents = 10000;             // in all, coordinator included; at least 10
    qint64 durationMs = 600000;     // from the first registration to the last event
    quint32 seed = 1;
    qint64 startMs = 1796083200000; // 2026-12-01 00:00 UTC: fixed, so that files repeat
    bool incidents = true;
};

struct FleetSummary
{
    int agents = 0;
    int teams = 0;
    int scopes = 0;
    qint64 events = 0;           // map/event frames written
    qint64 messages = 0;         // of which message.sent
    qint64 crossTeamMessages = 0; // messages between agents of two different teams
    QString failingTeam;         // the team whose shared dependency fails (empty: no incidents)
    int failedAgents = 0;
    qint64 failureAtMs = 0;
    QString silentTeam;          // the team that falls silent (the largest)
    int silentAgents = 0;
    qint64 silenceAtMs = 0;
};

// Writes the trace to `path` (.jsonl, .jsonl.zst or .jsonl.gz, replaced whole).
ErrorOr<FleetSummary> writeFleetTrace(const QString &path, const FleetOptions &options);

} // namespace mapi::fleet
