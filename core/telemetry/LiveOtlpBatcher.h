// The live model as OTLP/JSON request bodies, in batches as things happen: what a live export
// (OtlpHttpSender) sends to an OpenTelemetry receiver while a session runs. Pure model → JSON: no
// network, no timer, no QObject. The caller (the glue) calls noteChanges() from
// SystemStore::changed, noteAlerts() with each alert evaluation's changes, take() every few
// seconds (and early once pendingBytes() passes kFlushAtPendingBytes), take(now, true) when the
// run ends, and reset() when the store resets.
//
// The mapping is the file export's (trace/Otlp.h, docs/interop.md "OpenTelemetry"), cut into
// windows (one window: what happened between two take() calls). Every text passes through
// redactSecrets(), as in the file export (otlp::Attributes does it).
//
// Traces: one per period of kTracePeriodMs (1 hour), because a collector may run for weeks and
// backends limit a trace's size (Grafana Tempo refuses traces past 5 MB by default, Jaeger's UI
// chokes on a million spans). Periods are aligned on the epoch: period index = nowMs / period of
// the take(). The first trace's id is fixed at the first take() with anything pending, derived as
// the file export derives it (otlp::traceIdOf(store.events())): a file export of the model as it
// was at that moment names the trace, the agents' first spans and the tasks with the same ids. (A
// file export of a later moment has another trace id: the file export's seed counts the events.)
// When the store holds no event yet (agents known from a snapshot only) the seed is
// "map-inspector:live:{url}:{session id}:{nowMs}" instead, so that two sessions never share a
// trace. A take() with something pending in a later period starts that period's trace, id
// hexId({first trace id} + ":period:" + {index}, 16) (the first id alone gives all the others),
// used for everything that take() sends and after, windows begun in the previous period included.
// In it, agents get roots again as they need them (below), "map.system" too; part counters go on,
// tasks are still sent once. Model time going back never returns to an earlier trace. The trace
// stays across reset(): a reconnect continues it.
//
// Spans (all kind INTERNAL):
//  - an agent's root: "invoke_agent {name}", the file export's first span of that agent (id
//    otlp::agentSpanId(trace, id, 0)), parent: its parent agent's root when the store knows that
//    agent; the file export's agent attributes as of the take() that sends it (its usage is the
//    baseline of the parts that follow); from its registration (else first sight) to its first
//    sight (Agent::knownSinceMs): the root covers the registration only, the work is in its
//    parts. Sent once per trace (by agent id, across reset()), in the first take() after the
//    agent is described (no longer a placeholder) or has something to send (a message, an
//    alert, a task): the agents' roots go first in a take (the system's right before its first
//    part), so a receiver has the parents early. A placeholder that never sends anything has no
//    span. An agent the store no longer knows when its root is due (the store reset) waits for
//    it; at the end it gets a root with its identity alone. In a later trace an agent whose root
//    went in an earlier one gets it again only with activity or a task there: from the period's
//    start (its registration if later, its window's first activity if earlier) to its first
//    activity (else nowMs); parent: its parent's root only when that parent has a root in this
//    trace (in this take or earlier), else none (map.agent.parent_id still names it).
//  - an agent's window part: "invoke_agent {name}" again, a child of the root, for every agent
//    with activity in the window (messages sent, usage or state changed, unregistered, an
//    alert). Id hexId(trace + ":agent:{id}:live:{n}") (not the file export's part ids: the
//    content differs), map.span.part = n (1, 2, … per agent, across takes and resets),
//    gen_ai.operation.name/provider.name/agent.id/agent.name, map.agent.state (at the window's
//    end), map.agent.messages_sent/received (cumulative); the window's last part also carries the
//    usage: gen_ai.usage.input_tokens/output_tokens = the increase since the last span that
//    carried usage (where reports split it; a counter that went down counts from 0), cumulative
//    map.usage.tokens_used and map.cost.usd, and map.agent.unregistered = true once the agent
//    unregistered; status ERROR with its last error when its state is failed. From the window's
//    first activity (else the previous take's time) to nowMs. A part holds at most
//    kOtlpMessagesPerSpan events and kPartEventBytes of them: more go to further parts of the
//    same take (a full part ends at its last event, the next starts at its first).
//  - messages: events "map.message" with the file export's attributes, on the part of their
//    sender, or of "map.system" (the file export's system span id, once per trace from its first
//    activity there, no parent; its parts as an agent's) when the sender is not a known agent.
//    Encoded when noted (the store trims history later): map.message.status is the status then.
//    A payload past kMaxPayloadBytes is cut (after redaction), with map.message.payload_truncated
//    = true; an event still past kMaxEventBytes goes without its payload, and past that with its
//    map.message.id alone and map.message.truncated = true.
//  - alerts: events "map.alert" at the change's time (map.alert.kind, .severity, .state raised|
//    cleared, .reason redacted and cut to 1 KiB, .subject, .agents) on the part of every agent
//    the alert names that the store knows (at most kMaxAlertAgents), else on "map.system"'s.
//  - a task: "task {type or id}" as the file export writes it (id spanIdFor(trace, "task", id),
//    parent: its assignee's, else requester's, root when the store knows that agent; status
//    ERROR when failed or rejected; transitions as events, at most kPartEventBytes of them, the
//    rest counted in map.task.transitions_not_sent), sent once, in the first take() after it
//    reached a terminal status (completed, failed, rejected, cancelled); later transitions of
//    the same task are not sent. take(now, true) also sends every open task the store holds
//    that was not sent, with its current status, ending at nowMs. Tasks that were already
//    terminal when the batcher began are history: not sent.
//  - final: no extra part for an agent without pending activity; roots still due are sent.
//
// Bodies: each at most kMaxBodyBytes, the spans in order (roots, parts, tasks). A span alone
// larger than a body (attributes of absurd size: thousands of scopes, a megabyte of agent name)
// goes as a stub with its ids, times, name cut to 256 bytes and map.span.truncated = true.
//
// History: messages that were in the store before the batcher began are not sent (live means
// from then on); agents already there get their roots in the first take().
//
// Memory: the pending windows hold encoded events, and terminal tasks wait encoded: that is
// pendingBytes(), which the caller keeps at most about kFlushAtPendingBytes by calling take()
// early. Beyond it, per agent seen: its id and ~100 B (flags, the number of the trace its root
// last went in, part counter, the usage and state last sent); per task sent: its id (so that it
// is sent once, also after a reconnect: ~30 B beside the id the store's TaskLedger holds anyway,
// so it grows as the store's tasks do, some 10-20 % on top); the current and the first trace ids.
// No per-period history.
// Thread: the store's. Not thread-safe.
#pragma once

#include "alerts/AlertEngine.h"
#include "model/SystemStore.h"
#include "trace/Otlp.h"
#include "trace/OtlpJson.h"

#include <QByteArray>
#include <QHash>
#include <QSet>
#include <QString>

#include <limits>
#include <optional>
#include <vector>

namespace mapi {

struct OtlpBody
{
    QByteArray json; // one ExportTraceServiceRequest (OTLP/HTTP JSON body)
    qint64 spans = 0;
    qint64 events = 0;
};

class LiveOtlpBatcher
{
public:
    static constexpr qsizetype kMaxBodyBytes = qsizetype(4) << 20;
    static constexpr qsizetype kFlushAtPendingBytes = qsizetype(8) << 20;
    // A part's events stop at this many bytes (at least one event each): two parts fill a body.
    static constexpr qsizetype kPartEventBytes = kMaxBodyBytes / 2;
    static constexpr qsizetype kMaxPayloadBytes = 512 << 10; // a message's payload, before escaping
    static constexpr qsizetype kMaxEventBytes = 1 << 20;     // one encoded message event
    static constexpr qsizetype kMaxAlertReasonBytes = 1024;
    static constexpr int kMaxAlertAgents = 16;
    // A trace's span of time (see above): 1 hour, aligned on the epoch.
    static constexpr qint64 kTracePeriodMs = 3600 * 1000;

    // `store` must outlive the batcher. Agents the store holds already are roots due; its
    // messages are not sent.
    LiveOtlpBatcher(const SystemStore &store, OtlpOptions options);

    // Notes what changed (call from SystemStore::changed). Reads the new message rows (from
    // changes.firstNewMessage) at once and encodes them as events in the pending window of their
    // sender; notes agents (described: root due; state, usage, unregistration: activity) and
    // tasks that reached a terminal status (encoded at once).
    void noteChanges(const ChangeSet &changes);
    // Alerts raised and cleared in an evaluation: events "map.alert" (see above).
    void noteAlerts(const std::vector<AlertChange> &changes);
    // Everything pending as request bodies, each at most kMaxBodyBytes, as of model time `nowMs`
    // (SystemStore::now()); empty when nothing is pending. `final`: the run ends (open tasks go).
    std::vector<OtlpBody> take(qint64 nowMs, bool final = false);
    // Encoded events and task spans waiting for take().
    qsizetype pendingBytes() const { return m_pendingBytes; }
    // Another trace period (tests), before the first take(); <= 0: one trace for the batcher's life.
    void setTracePeriodMs(qint64 ms) { m_tracePeriodMs = ms; }
    // The store reset (call on SystemStore::aboutToReset or wasReset: the store flushes its
    // changes before either; e.g. a reconnect's fresh snapshot): forgets the
    // message row it read up to (the new log numbers from 0). Keeps what is by id: the roots
    // sent, part counters, usage and state last sent, tasks sent, the trace id, and the pending
    // windows (already encoded). A store that comes back with messages already sent (a swap for
    // time travel announces every row as new) has them sent again: do not feed a swapped-in past.
    void reset();

private:
    struct AgentLive
    {
        std::optional<qint64> tokensUsed; // as last sent (root or last part)
        std::optional<qint64> inputTokens;
        std::optional<qint64> outputTokens;
        std::optional<double> costUsd;
        QString state;                    // shares the store's string
        int nextPart = 1;
        int rootTrace = -1;               // the trace (m_trace) its root last went in; -1: none yet
        bool rootDue = false;
        bool unregisteredSent = false;
    };
    struct Chunk // the events of one part
    {
        otlp::JsonText events; // comma-separated Event objects
        int count = 0;
        qint64 firstMs = std::numeric_limits<qint64>::max();
        qint64 lastMs = std::numeric_limits<qint64>::min();
    };
    struct Window // one agent's (or the system's) activity since the last take()
    {
        QString agentId;   // empty: the system's
        QString name;      // the agent's shown name when the window opened
        std::vector<Chunk> chunks;
        qint64 startMs = std::numeric_limits<qint64>::max(); // earliest activity with a time
    };
    struct PendingTask // encoded when noted, its ids added at take() (the trace id is fixed there)
    {
        QString taskId;
        QString ownerId;   // a known agent: its root is the span's parent; empty: none
        otlp::JsonText tail; // the span's JSON after its ids (otlp::SpanText::appendTail)
        int events = 0;
        QString name;      // for a stub, should the span not fit a body
        qint64 startMs = 0;
        qint64 endMs = 0;
    };

    void noteAgent(const Agent &agent);
    void noteTask(const Task &task, qint64 openEndMs);
    void rootDue(const QString &agentId);
    Window &agentWindow(const QString &agentId);
    Window &systemWindow();
    // The window of message `row`'s sender (the system's when the store knows no such agent).
    Window &senderWindow(const MessageLog &log, size_t row);
    void addEvent(Window &window, const otlp::JsonText &event, qint64 timeMs);
    void noteActivity(Window &window, qint64 timeMs);
    // The message of `row` as a "map.message" event, written straight into `window`'s last part.
    void addMessage(Window &window, size_t row);
    // An event `name` with attributes `a` written into `window`'s parts; false (nothing written)
    // when it would be larger than `maxBytes`.
    bool writeEvent(Window &window, const char *name, qint64 timeMs, const otlp::Attributes &a, qsizetype maxBytes);
    // An event of `eventBytes` (without its comma) just added to `chunk`: counted, timed.
    void noteEvent(Window &window, Chunk &chunk, qsizetype eventBytes, qint64 timeMs);
    // The part an event of `eventBytes` (before its comma) goes into: the last, else a new one.
    Chunk &chunkFor(Window &window, qsizetype eventBytes);
    void useTraceOf(qint64 nowMs);

    class Bodies;
    void sendRoots(Bodies &bodies, bool final, qint64 nowMs);
    void sendParts(Bodies &bodies, Window &window, qint64 nowMs);
    void sendTasks(Bodies &bodies);

    const SystemStore &m_store;
    OtlpOptions m_options;
    QByteArray m_traceId;          // empty until the first span is sent
    QByteArray m_firstTraceId;     // the seed of the later traces' ids
    int m_trace = 0;               // traces begun before this one
    qint64 m_period = 0;           // the current trace's period index
    qint64 m_tracePeriodMs = kTracePeriodMs;
    size_t m_nextMessage = 0;      // the message row to read next
    qint64 m_lastTakeMs = 0;       // nowMs of the last take() that sent something
    QHash<QString, AgentLive> m_agents;
    std::vector<QString> m_rootsDue; // in the order noted (parents usually first)
    int m_systemRootTrace = -1;    // as AgentLive::rootTrace
    int m_systemNextPart = 1;
    std::vector<Window> m_windows; // in the order they opened
    QHash<QString, int> m_windowOf; // agent id → index in m_windows
    // The same by the message log's name row of a sender (-1: not looked up yet; known agents
    // only: a store forgets no agent before it resets): a flood's messages skip two hashes of
    // the sender's id. Emptied by take() and reset(); at most one int per name of the log.
    std::vector<int> m_windowOfSender;
    int m_systemWindow = -1;
    std::vector<PendingTask> m_tasks;
    QSet<QString> m_tasksSent;     // noted terminal (or sent at the end), by task id
    qsizetype m_pendingBytes = 0;
    otlp::Attributes m_messageAttributes; // addMessage()'s, reused
    otlp::TextLiterals m_literals;        // the messages' names, each encoded once (bounded)
};

} // namespace mapi
