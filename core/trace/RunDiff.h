// Comparing two runs of a system (two traces): which agents are only in one, which changed,
// where their conversations first part, and how counts, task durations, tokens and cost moved.
//
// Agents get new ids in every run, so they are matched by what stays: the key
//   path/of/parent/names/name#role
// (names from the root of the agent tree down). Agents sharing a key (ten "worker"s under one
// coordinator) are paired in the order they registered: the first keeps the key, the k-th gets
// "[k]". Placeholders (agents only referenced,
// never described) are left out.
//
// Conversations: for every ordered pair of agents (sender key → recipient key; a message
// without a resolved recipient goes to its address, e.g. "*" or a scope), the sequence of its
// message types (the payload's "type", else its convention, else "message"). Sequences are
// aligned by their common start and end; the first index where a pair's sequences differ is a
// divergence, at the time (since its run's first event) of the first differing message. The
// first divergence of the runs is the earliest of those, of the agents only in one run (at their
// registration) and of the pairs only in one run.
//
// Memory: a profile keeps per message one entry per recipient pair (type row, time, row):
// 16 bytes; at most kMaxPairEntries, past which the rest is counted, not compared (the result
// says so in "truncated").
#pragma once

#include "model/SystemStore.h"

#include <map>
#include <vector>

namespace mapi {

struct RunProfile
{
    static constexpr qint64 kMaxPairEntries = 20'000'000;

    struct AgentEntry
    {
        QString key;           // path#role, with "[k]" when several share it
        QString id;
        QString name;
        qint64 registeredOffsetMs = 0;
        Json facts;            // compared: state, health, messagesSent, ...
    };
    struct MessageEntry
    {
        qint64 offsetMs = 0;   // since the run's first event
        int typeRow = 0;       // into types
        int row = 0;           // SystemStore::messages() row
    };
    static_assert(sizeof(MessageEntry) == 16, "kMaxPairEntries of them: 320 MB at most");

    QString name;              // the trace's file name, for people
    qint64 startMs = 0;        // the run's first event time
    std::vector<AgentEntry> agents;
    std::map<QString, int> agentByKey;   // key → agents row
    std::vector<QString> types;
    std::map<std::pair<QString, QString>, std::vector<MessageEntry>> pairs; // (from key, to key)
    // agents, messages, tasks, tasksCompleted, tasksFailed, errors, tokensUsed, costUsd,
    // conversations, turns, checkpoints, acpSessions, acpRequests (not events:
    // one run's events depend on how it was recorded, e.g. an import makes fewer)
    Json counts;
    std::vector<qint64> taskDurationsMs; // completed tasks
    qint64 pairEntriesNotKept = 0;
};

RunProfile profileRun(const SystemStore &store, const QString &name = {});

// The comparison as JSON:
//   {"equal": bool, "a": name, "b": name,
//    "agents": {"matched": n, "onlyA": [{key,id,name}], "onlyB": [...],
//               "changed": [{key, idA, idB, fields: {field: [a, b]}}]},
//    "firstDivergence": null | {"offsetMs", "timeA", "timeB", "kind": "agent"|"conversation",
//                               "agents": [keys], "index", "messageA": {id,type,offsetMs}|null, "messageB": ...},
//    "conversations": {"compared": n, "differing": [{from, to, lengthA, lengthB, commonStart, commonEnd,
//                      firstDifference, typeA, typeB}], "onlyA": [[from,to]], "onlyB": [...]},
//    "deltas": {count: {a, b, delta}, ..., "taskDurationMs": {meanA, meanB, medianA, medianB}},
//    "truncated": bool}
// Lists are cut at kMaxListed entries (their full sizes are in the "...Count" fields). With the
// stores the profiles came from, messages are named by their ids too.
Json diffRuns(const RunProfile &a, const RunProfile &b, const SystemStore *storeA = nullptr, const SystemStore *storeB = nullptr);
constexpr int kMaxListed = 1000;

} // namespace mapi
