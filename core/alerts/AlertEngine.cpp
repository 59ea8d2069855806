#include "alerts/AlertEngine.h"

#include <QElapsedTimer>

#include "map/AgentStates.h"
#include "model/SystemStore.h"

#include <QHashFunctions>

#include <algorithm>
#include <array>
#include <cmath>

namespace mapi {

namespace {

bool isHeld(const QString &status)
{
    return status == QLatin1String("accepted") || status == QLatin1String("in-progress") || status == QLatin1String("assigned");
}

// A state that says the agent waits for a person: "input-required", "waiting_for_input",
// "awaiting-human", "pending_approval" (case and custom:/x- prefixes aside).
bool stateAsksForHuman(const QString &state)
{
    const QString s = state.toLower();
    return s.contains(QLatin1String("input")) || s.contains(QLatin1String("human")) || s.contains(QLatin1String("approval"));
}

bool metadataAsksForHuman(const Json &metadata)
{
    if (!metadata.is_object())
        return false;
    for (const char *key : {"needsHuman", "needs_human", "waitingForInput", "waiting_for_input", "awaitingInput",
                            "awaiting_input", "inputRequired", "input_required", "humanInputRequired"}) {
        const auto it = metadata.find(key);
        if (it == metadata.end())
            continue;
        if ((it->is_boolean() && it->get<bool>()) || (it->is_string() && !it->get<std::string>().empty()))
            return true;
    }
    return false;
}

QString seconds(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'f', ms % 1000 == 0 ? 0 : 1);
}

QString usd(double amount)
{
    return QString::number(amount, 'f', 2);
}

QStringList lastEvidence(QStringList ids)
{
    if (ids.size() > AlertEngine::kMaxEvidence)
        ids = ids.mid(ids.size() - AlertEngine::kMaxEvidence);
    return ids;
}

} // namespace

QString Alert::key() const
{
    if (!cachedKey.isEmpty())
        return cachedKey;
    QString k = alertKindName(kind);
    if (!subject.isEmpty())
        k += u'/' + subject;
    QStringList sorted = agents;
    std::sort(sorted.begin(), sorted.end());
    return k + u':' + sorted.join(u',');
}

Json alertChangeToJson(const AlertChange &change, const SystemStore *store)
{
    const Alert &a = change.alert;
    Json agents = Json::array();
    for (const QString &id : a.agents)
        agents.push_back(id.toStdString());
    Json evidence = Json::array();
    for (const QString &id : a.evidence)
        evidence.push_back(id.toStdString());
    Json out = {{"alert", alertKindName(a.kind).toStdString()},
                {"state", change.raised ? "raised" : "cleared"},
                {"severity", alertSeverityName(a.severity).toStdString()},
                {"agents", agents},
                {"agentId", a.agents.isEmpty() ? Json() : Json(a.agents.first().toStdString())},
                {"since", a.sinceMs},
                {"at", change.atMs},
                {"reason", a.reason.toStdString()},
                {"evidence", evidence}};
    if (!a.subject.isEmpty())
        out["subject"] = a.subject.toStdString();
    if (store) {
        Json names = Json::array();
        for (const QString &id : a.agents)
            names.push_back(store->agentName(id).toStdString());
        out["agentNames"] = std::move(names);
    }
    return out;
}

HealthPolicy healthPolicyForRules(const AlertRules &rules, const HealthPolicy &base)
{
    HealthPolicy policy = base;
    policy.intervalMs = rules.heartbeatIntervalMs;
    policy.unresponsiveAfterIntervals = rules.unresponsiveAfterIntervals;
    policy.lateAfterIntervals = std::min(policy.lateAfterIntervals, rules.unresponsiveAfterIntervals);
    return policy;
}

AlertEngine::AlertEngine(const AlertRules &rules)
    : m_rules(rules)
{
}

void AlertEngine::restartReading()
{
    m_step = Idle; // an evaluation under way read what is being forgotten
    m_current.clear();
    m_compare = {};
    m_nextMessage = 0;
    m_nextTask = 0;
    m_agents.clear();
    m_edges.clear();
    m_edgesFrom.clear();
    m_ids.clear();
    m_names.clear();
    m_loops.clear();
    m_openTasks.clear();
    m_settledTasks.clear();
    m_help.clear();
    m_helpCount = 0;
    m_systemErrors.clear();
}

void AlertEngine::reset()
{
    restartReading();
    m_open.clear();
    m_notTracked = 0;
}

const AlertEngine::AgentTrack &AlertEngine::trackOf(const QString &agentId) const
{
    static const AgentTrack none;
    const auto it = m_agents.constFind(agentId);
    return it == m_agents.cend() ? none : *it;
}

Alert AlertEngine::make(AlertKind kind, QStringList agents, qint64 since, QString reason, QStringList evidence,
                        QString subject) const
{
    Alert a;
    a.kind = kind;
    a.severity = m_rules.rule(kind).severity;
    a.agents = std::move(agents);
    a.sinceMs = since;
    a.reason = std::move(reason);
    a.evidence = lastEvidence(std::move(evidence));
    a.subject = std::move(subject);
    a.cachedKey = a.key();
    return a;
}

std::vector<AlertChange> AlertEngine::update(const SystemStore &store)
{
    QElapsedTimer slice;
    slice.start();
    const auto outOfTime = [&] { return m_evaluationSliceMs > 0 && slice.elapsed() >= m_evaluationSliceMs; };
    bool worked = false;
    if (m_step == Idle) { // an evaluation under way sees no new message: all its steps see one store
        const size_t readFrom = m_nextMessage;
        readMessages(store, slice);
        if (m_nextMessage < store.messages().size())
            return {}; // rules evaluated on half the news would raise what the other half clears
        m_step = Setup;
        worked = m_nextMessage != readFrom;
    }
    while (m_step != Idle) {
        if (worked && outOfTime())
            return {}; // the next call goes on from this step
        QElapsedTimer stepCost;
        stepCost.start();
        const qint64 now = m_evaluationNow;
        switch (m_step) {
        case Setup:
            readTasks(store);
            if (m_step == Idle)
                return {}; // the store was reset under it (readTasks started reading over)
            m_evaluationNow = store.now();
            pruneWindows(m_evaluationNow);
            m_pruneUnderWay = false;
            m_loopsUnderWay = false;
            m_current.clear();
            m_compare = {};
            m_evaluationNs = 0;
            break;
        case PruneLoopEdges:
            if (!pruneLoopEdges(now, outOfTime)) {
                m_evaluationNs += stepCost.nsecsElapsed();
                return {}; // the next call goes on from the next edge
            }
            break;
        case Agents: evaluateAgents(store, now, m_current); break;
        case Loops:
            // The candidate groups go in pieces: a random flood of one shape among 1,000 agents
            // fills them up to kMaxLoopGroups, each with its window of exchanges (one step of
            // 16–39 ms at 100,000 events/s).
            if (!evaluateLoops(store, now, m_current, outOfTime)) {
                m_evaluationNs += stepCost.nsecsElapsed();
                return {}; // the next call goes on from the next group
            }
            break;
        case Deadlocks: evaluateDeadlocks(store, now, m_current); break;
        case NeedsHuman: evaluateNeedsHuman(store, now, m_current); break;
        case ErrorStorms: evaluateErrorStorms(store, m_current); break;
        case Budgets: evaluateBudgets(store, now, m_current); break;
        case Compare: {
            // In slices too: at 10,000 open alerts, dropping the departed, merging the verdicts
            // and freeing the old one took 10-12 ms in one piece.
            std::optional<std::vector<AlertChange>> changes = compareInSlices(store, now, outOfTime);
            if (!changes) {
                m_evaluationNs += stepCost.nsecsElapsed();
                return {}; // the next call goes on from where the comparing stopped
            }
            m_step = Idle;
            m_lastEvaluationNs = m_evaluationNs + stepCost.nsecsElapsed();
            ++m_evaluationCount;
            return std::move(*changes);
        }
        default: break;
        }
        m_evaluationNs += stepCost.nsecsElapsed();
        m_step = m_step + 1;
        worked = true;
    }
    return {};
}

// ---- the rules --------------------------------------------------------------------------------

void AlertEngine::evaluateAgents(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    // Tasks each agent holds (accepted, in progress), for stalled.
    QHash<QString, QStringList> held;
    QHash<QString, qint64> heldMovedMs;
    if (enabled(AlertKind::Stalled)) {
        for (auto it = m_openTasks.cbegin(); it != m_openTasks.cend(); ++it) {
            const Task &task = store.tasks()[size_t(it.key())];
            if (!task.assigneeId.isEmpty() && isHeld(task.status)) {
                held[task.assigneeId] << task.id;
                qint64 &moved = heldMovedMs[task.assigneeId];
                moved = std::max(moved, task.updatedAtMs);
            }
        }
    }
    const HealthPolicy &policy = store.healthPolicy();
    for (const Agent &agent : store.agents()) {
        if (agent.unregistered)
            continue;
        const qint64 lastSign = std::max({agent.lastHeartbeatMs, agent.lastActivityMs, agent.registeredAtMs, agent.knownSinceMs});
        if (agent.health == Health::Unresponsive && !agent.placeholder && enabled(AlertKind::Unresponsive)) {
            Alert a = make(AlertKind::Unresponsive, {agent.id}, lastSign,
                           QStringLiteral("no heartbeat or activity for %1 s (unresponsive after %2 × %3 s)")
                               .arg(seconds(now - lastSign)).arg(policy.unresponsiveAfterIntervals).arg(seconds(policy.intervalMs)),
                           {QStringLiteral("agent:") + agent.id});
            out.emplace(a.key(), a);
        }
        if (agent.health == Health::Failed && enabled(AlertKind::Failed)) {
            const bool byState = classifyState(agent.state) == StateClass::Failed;
            Alert a = make(AlertKind::Failed, {agent.id}, byState ? std::max(agent.lastStateChangeMs, agent.knownSinceMs) : agent.lastErrorMs,
                           byState ? QStringLiteral("state \"%1\"").arg(agent.state)
                                   : QStringLiteral("%1 error report: %2").arg(agent.lastErrorSeverity, agent.lastErrorMessage),
                           {QStringLiteral("agent:") + agent.id});
            out.emplace(a.key(), a);
        }
        if (!enabled(AlertKind::Stalled) || agent.placeholder)
            continue;
        if (agent.health != Health::Healthy && agent.health != Health::Late)
            continue; // stopped, failed, suspended, gone or silent: other rules (or none) apply
        const QStringList tasks = held.value(agent.id);
        const AgentTrack &track = trackOf(agent.id);
        const bool busyState = classifyState(agent.state) == StateClass::Busy;
        // A BUSY report counts while it is the agent's newest word about its work: a later state
        // change (a busy state counts by itself) supersedes it, and so does progress on a task
        // (its end) unless the report said more tasks were queued behind it.
        const bool moreQueued = agent.tasksQueued.value_or(0) > 0;
        const bool busyHeartbeat = agent.heartbeatStatus.compare(QLatin1String("BUSY"), Qt::CaseInsensitive) == 0
            && agent.heartbeatStatusMs >= agent.lastStateChangeMs
            && (moreQueued || agent.heartbeatStatusMs >= track.lastTaskProgressMs);
        if (!busyState && !busyHeartbeat && tasks.isEmpty())
            continue;
        const qint64 lastProgress = std::max({track.lastWorkMs, track.lastTaskProgressMs, agent.lastStateChangeMs,
                                              agent.registeredAtMs, agent.knownSinceMs, heldMovedMs.value(agent.id)});
        if (now - lastProgress < m_rules.stalledAfterMs)
            continue;
        const QString what = !tasks.isEmpty()
            ? QStringLiteral("holds task%1 %2").arg(tasks.size() > 1 ? QStringLiteral("s") : QString(), tasks.mid(0, 3).join(QStringLiteral(", ")))
            : busyState ? QStringLiteral("is \"%1\"").arg(agent.state) : QStringLiteral("reports BUSY");
        QStringList evidence;
        for (const QString &task : tasks)
            evidence << QStringLiteral("task:") + task;
        evidence << QStringLiteral("agent:") + agent.id;
        Alert a = make(AlertKind::Stalled, {agent.id}, lastProgress,
                       QStringLiteral("%1 with no progress, status or message for %2 s").arg(what, seconds(now - lastProgress)),
                       evidence);
        out.emplace(a.key(), a);
    }
    evaluateServer(store, out);
}

void AlertEngine::evaluateServer(const SystemStore &store, std::map<QString, Alert> &out) const
{
    // The server itself, since its last handshake: it stopped answering, or its agent list
    // drifted from the model while no events came (ObservationNotes). Unresponsive, of the
    // "server" rather than of an agent; it clears at the next handshake that is not followed by
    // either (the client reconnects after a silence).
    if (!enabled(AlertKind::Unresponsive))
        return;
    const ObservationNotes &notes = store.observation();
    const qint64 handshake = store.connection().handshakeMs;
    const ProtocolProblem *said = notes.notAnsweringCount() > 0 && notes.lastNotAnswering().timeMs >= handshake
        ? &notes.lastNotAnswering()
        : notes.driftCount() > 0 && notes.lastDrift().timeMs >= handshake ? &notes.lastDrift()
                                                                           : nullptr;
    if (!said)
        return;
    Alert a = make(AlertKind::Unresponsive, {}, said->timeMs + store.connection().clockOffsetMs, said->detail, {},
                   QStringLiteral("server"));
    out.emplace(a.key(), a);
}

bool AlertEngine::evaluateLoops(const SystemStore &store, qint64 now, std::map<QString, Alert> &out,
                                const std::function<bool()> &outOfTime)
{
    if (!enabled(AlertKind::Loop))
        return true;
    const qint64 since = now - m_rules.loopWindowMs;
    // Resumed where the last slice stopped: nothing inserts into m_loops during an evaluation
    // (no message is read until it ends), so the iterator stays valid.
    if (!m_loopsUnderWay) {
        m_loopsUnderWay = true;
        m_nextLoop = m_loops.begin();
    }
    // A group loops when every edge of it repeats a small exchange (EdgeTally::repeats(): at most
    // kMaxLoopShapesPerEdge shapes, each seen at least twice on its edge, most of the edge's
    // messages) and those repeated messages, all edges together, reach the rule's count. Each
    // edge holds its newest loopExchanges messages, so a shape said once leaves after as many.
    TallyScratch scratch;
    std::vector<qint64> rows;
    std::vector<EdgeTally> tallies;
    // The clock is read once 256 units of work are done: a group passed over is one unit, an
    // alert built is 64 (its reason and 20 evidence strings). Counting groups alone let a slice
    // of 2 ms run 10-30 ms when most groups loop (three floods on a machine at half speed).
    int work = 0;
    for (auto &it = m_nextLoop; it != m_loops.end();) {
        if (work >= 256) {
            work = 0;
            if (outOfTime())
                return false;
        }
        ++work;
        const LoopGroup &group = it.value();
        const size_t n = group.ring.size();
        std::array<const Edge *, 3> edges{};
        size_t held = 0; // messages on its edges, whatever their shapes
        bool everyEdge = true;
        for (size_t i = 0; i < n && everyEdge; ++i) {
            const auto edge = m_edges.constFind(EdgeKey{group.ring[i], group.ring[(i + 1) % n]});
            everyEdge = edge != m_edges.cend() && !edge->sent.empty();
            if (everyEdge) {
                edges[i] = &*edge;
                held += edge->sent.size();
            }
        }
        if (!everyEdge) { // the window passed it by: forget it
            it = m_loops.erase(it);
            continue;
        }
        ++it;
        if (held < size_t((m_rules.loopExchanges + 1) / 2))
            continue; // below even the clearing level, whatever the shapes: no alert to build
        work += int(std::min<size_t>(held / 4, 64)); // the tally reads every held message
        bool everyEdgeRepeats = true;
        int exchanges = 0;
        qint64 first = now;
        rows.clear();
        tallies.clear();
        for (size_t i = 0; i < n && everyEdgeRepeats; ++i) {
            tallies.push_back(tallyEdge(*edges[i], since, scratch, rows));
            const EdgeTally &tally = tallies.back();
            everyEdgeRepeats = tally.repeats();
            exchanges += tally.repeated;
            first = std::min(first, tally.firstMs);
        }
        if (!everyEdgeRepeats || exchanges < (m_rules.loopExchanges + 1) / 2)
            continue; // not a small exchange repeated, or below even the clearing level: no alert to build
        bool progress = false;
        QStringList ring;
        for (const int agent : group.ring) {
            ring << m_names[agent];
            progress = progress || trackOf(m_names[agent]).lastTaskProgressMs >= since;
        }
        if (progress)
            continue;
        // Shown from its smallest id on, in sending order: the same ring reads the same way.
        const qsizetype smallest = std::min_element(ring.cbegin(), ring.cend()) - ring.cbegin();
        std::rotate(ring.begin(), ring.begin() + smallest, ring.end());
        std::rotate(tallies.begin(), tallies.begin() + smallest, tallies.end());
        // The exchange as the operator reads it: each edge's shapes in sending order
        // ("STATUS_QUERY" → "STATUS_RESPONSE"); one shape all around keeps the older wording.
        bool oneShape = true;
        QStringList exchange;
        for (const EdgeTally &tally : tallies) {
            oneShape = oneShape && tally.shapes.size() == 1 && tally.shapes.front().first == tallies.front().shapes.front().first;
            QStringList names;
            for (const auto &[shape, row] : tally.shapes)
                if (const QString name = shapeName(store, row, shape); !names.contains(name))
                    names << name;
            exchange << names.join(QStringLiteral(" / "));
        }
        std::sort(rows.begin(), rows.end());
        const QStringList evidence = newestMessageEvidence(store, rows.size(), [&rows](size_t i) { return rows[i]; });
        QStringList agents = ring;
        std::sort(agents.begin(), agents.end());
        const QString around = (ring + QStringList{ring.first()}).join(QStringLiteral(" → "));
        const QString reason = oneShape
            ? QStringLiteral("%1 %2 messages of one shape within %3 s around %4, no task progress")
                  .arg(exchanges).arg(exchange.first(), seconds(m_rules.loopWindowMs), around)
            : QStringLiteral("%1 messages repeating the exchange %2 within %3 s around %4, no task progress")
                  .arg(exchanges).arg(exchange.join(QStringLiteral(" → ")), seconds(m_rules.loopWindowMs), around);
        work += 64;
        Alert a = make(AlertKind::Loop, agents, first, reason, evidence, QString::fromLatin1(kLoopExchangeSubject));
        // Raised at loopExchanges, cleared below half of it (no flapping at the threshold).
        const int needed = m_open.count(a.key()) ? (m_rules.loopExchanges + 1) / 2 : m_rules.loopExchanges;
        if (exchanges >= needed)
            out.emplace(a.key(), a);
    }
    // One agent sending far above its usual rate.
    for (auto it = m_agents.cbegin(); it != m_agents.cend(); ++it) {
        const AgentTrack &track = it.value();
        if (track.bucketsClosed < m_rules.loopRateBaselineWindows)
            continue;
        const double threshold = std::max(double(m_rules.loopRateMinMessages), m_rules.loopRateFactor * std::max(track.usualCount, 1.0));
        if (track.bucketCount < threshold / 2)
            continue; // below even the clearing level: no alert to build
        const QString evidence = messageEvidence(store, track.rateRow);
        Alert a = make(AlertKind::Loop, {it.key()}, track.bucketStartMs,
                       QStringLiteral("%1 messages within %2 s, %3 times its usual %4")
                           .arg(track.bucketCount).arg(seconds(m_rules.loopWindowMs))
                           .arg(QString::number(double(track.bucketCount) / std::max(track.usualCount, 1.0), 'f', 0))
                           .arg(QString::number(track.usualCount, 'f', 1)),
                       evidence.isEmpty() ? QStringList{QStringLiteral("agent:") + it.key()} : QStringList{evidence},
                       QStringLiteral("rate"));
        const bool open = m_open.count(a.key()) > 0;
        if (track.bucketCount >= (open ? threshold / 2 : threshold))
            out.emplace(a.key(), a);
    }
    m_loopsUnderWay = false;
    return true;
}

void AlertEngine::evaluateDeadlocks(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::Deadlock))
        return;
    // Waits open long enough: waiter → awaited, with what it waits on.
    // What it waits on: a task (its row) or a help request; the evidence text is made only for a cycle's waits.
    struct Wait { QString on; int taskRow; const HelpRequest *help; qint64 sinceMs; };
    QHash<QString, std::vector<Wait>> waits;
    const qint64 before = now - m_rules.deadlockAfterMs;
    for (auto it = m_openTasks.cbegin(); it != m_openTasks.cend(); ++it) {
        const Task &task = store.tasks()[size_t(it.key())];
        if (task.updatedAtMs > before || task.assigneeId.isEmpty())
            continue;
        QString waiter;
        if (task.status == QLatin1String("requested") || task.status == QLatin1String("open"))
            waiter = task.requesterId;
        else if (task.status == QLatin1String("handed-off")) {
            const std::vector<TaskTransition> history = store.taskHistory(task);
            waiter = history.empty() ? task.requesterId : history.back().agentId;
        }
        if (!waiter.isEmpty() && waiter != task.assigneeId)
            waits[waiter].push_back({task.assigneeId, it.key(), nullptr, task.updatedAtMs});
    }
    for (const std::vector<HelpRequest> &requests : m_help)
        for (const HelpRequest &h : requests)
            if (!h.helper.isEmpty() && h.timeMs <= before && h.helper != h.requester)
                waits[h.requester].push_back({h.helper, -1, &h, h.timeMs});
    if (waits.isEmpty())
        return;

    // The knots of waiting agents: strongly connected components (Tarjan's algorithm, iterative:
    // a wait graph can be as deep as it is large). One alert per knot, showing its shortest cycle
    // through the knot's smallest id, found breadth-first: linear in the waits, whatever their number.
    QStringList nodes = waits.keys();
    for (const std::vector<Wait> &ws : std::as_const(waits))
        for (const Wait &w : ws)
            if (!waits.contains(w.on))
                nodes << w.on; // awaited, waiting on nobody: a node without edges
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    QHash<QString, int> index;
    for (int i = 0; i < nodes.size(); ++i)
        index.insert(nodes[i], i);
    std::vector<std::vector<int>> next(size_t(nodes.size()));
    for (auto it = waits.cbegin(); it != waits.cend(); ++it)
        for (const Wait &w : it.value())
            next[size_t(index.value(it.key()))].push_back(index.value(w.on));

    const int n = int(nodes.size());
    std::vector<int> order(size_t(n), -1), low(size_t(n), 0), component(size_t(n), -1);
    std::vector<int> stack;
    std::vector<char> onStack(size_t(n), 0);
    int counter = 0, components = 0;
    for (int root = 0; root < n; ++root) {
        if (order[size_t(root)] >= 0)
            continue;
        std::vector<std::pair<int, size_t>> call{{root, 0}};
        order[size_t(root)] = low[size_t(root)] = counter++;
        stack.push_back(root);
        onStack[size_t(root)] = 1;
        while (!call.empty()) {
            auto &[v, edge] = call.back();
            if (edge < next[size_t(v)].size()) {
                const int w = next[size_t(v)][edge++];
                if (order[size_t(w)] < 0) {
                    order[size_t(w)] = low[size_t(w)] = counter++;
                    stack.push_back(w);
                    onStack[size_t(w)] = 1;
                    call.emplace_back(w, 0);
                } else if (onStack[size_t(w)]) {
                    low[size_t(v)] = std::min(low[size_t(v)], order[size_t(w)]);
                }
                continue;
            }
            const int done = v;
            call.pop_back();
            if (!call.empty())
                low[size_t(call.back().first)] = std::min(low[size_t(call.back().first)], low[size_t(done)]);
            if (low[size_t(done)] == order[size_t(done)]) {
                int w;
                do {
                    w = stack.back();
                    stack.pop_back();
                    onStack[size_t(w)] = 0;
                    component[size_t(w)] = components;
                } while (w != done);
                ++components;
            }
        }
    }

    std::vector<int> size(size_t(components), 0), smallest(size_t(components), -1);
    for (int v = 0; v < n; ++v) { // nodes are sorted: the first seen is the smallest id
        ++size[size_t(component[size_t(v)])];
        if (smallest[size_t(component[size_t(v)])] < 0)
            smallest[size_t(component[size_t(v)])] = v;
    }
    for (int c = 0; c < components; ++c) {
        if (size[size_t(c)] < 2)
            continue;
        // Shortest cycle through the smallest node, inside the knot.
        const int start = smallest[size_t(c)];
        QHash<int, int> parent;
        std::deque<int> queue{start};
        int last = -1;
        while (!queue.empty() && last < 0) {
            const int v = queue.front();
            queue.pop_front();
            for (const int w : next[size_t(v)]) {
                if (component[size_t(w)] != c)
                    continue;
                if (w == start) {
                    last = v;
                    break;
                }
                if (!parent.contains(w)) {
                    parent.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        QStringList cycle;
        for (int v = last; v != start && v >= 0; v = parent.value(v, -1))
            cycle.prepend(nodes[v]);
        cycle.prepend(nodes[start]);
        QStringList evidence;
        qint64 since = 0;
        for (int i = 0; i < cycle.size(); ++i) {
            for (const Wait &x : waits.value(cycle[i]))
                if (x.on == cycle[(i + 1) % cycle.size()]) {
                    evidence << (x.help ? QStringLiteral("message:") + x.help->messageId
                                        : QStringLiteral("task:") + store.tasks()[size_t(x.taskRow)].id);
                    since = std::max(since, x.sinceMs);
                    break;
                }
        }
        QStringList shown; // by name: the reason is read by a person (the ids are the alert's agents)
        for (const QString &id : cycle)
            shown << store.agentName(id);
        shown << shown.first();
        const QString knot = size[size_t(c)] > cycle.size()
            ? QStringLiteral(" (%1 agents wait in this knot)").arg(size[size_t(c)]) : QString();
        Alert alert = make(AlertKind::Deadlock, cycle, since,
                           QStringLiteral("%1 wait on each other for %2 s: %3%4")
                               .arg(cycle.size() == 2 ? QStringLiteral("two agents") : QStringLiteral("%1 agents").arg(cycle.size()),
                                    seconds(now - since), shown.join(QStringLiteral(" waits on ")), knot),
                           evidence);
        out.emplace(alert.key(), alert);
    }
}

void AlertEngine::evaluateNeedsHuman(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::NeedsHuman))
        return;
    const qint64 before = now - m_rules.needsHumanAfterMs;
    for (auto it = m_help.cbegin(); it != m_help.cend(); ++it) {
        const std::vector<HelpRequest> &requests = it.value(); // oldest first
        if (requests.empty() || requests.front().timeMs > before)
            continue;
        if (const Agent *a = store.agent(it.key()); a && a->unregistered)
            continue;
        QStringList evidence;
        for (const HelpRequest &h : requests)
            if (h.timeMs <= before)
                evidence << QStringLiteral("message:") + h.messageId;
        Alert a = make(AlertKind::NeedsHuman, {it.key()}, requests.front().timeMs,
                       QStringLiteral("%1 help request%2 unanswered for %3 s")
                           .arg(evidence.size()).arg(evidence.size() > 1 ? QStringLiteral("s") : QString(),
                                                     seconds(now - requests.front().timeMs)),
                       evidence);
        out.emplace(a.key(), a);
    }
    for (const Agent &agent : store.agents()) {
        if (agent.unregistered)
            continue;
        const bool byState = !agent.state.isEmpty() && stateAsksForHuman(agent.state);
        if (!byState && !metadataAsksForHuman(agent.metadata))
            continue;
        const qint64 since = std::max(agent.lastStateChangeMs, agent.knownSinceMs);
        if (since > before)
            continue;
        Alert a = make(AlertKind::NeedsHuman, {agent.id}, since,
                       byState ? QStringLiteral("state \"%1\" for %2 s").arg(agent.state, seconds(now - since))
                               : QStringLiteral("its metadata says it waits for input (%1 s)").arg(seconds(now - since)),
                       {QStringLiteral("agent:") + agent.id}, QStringLiteral("state"));
        out.emplace(a.key(), a);
    }
}

void AlertEngine::evaluateErrorStorms(const SystemStore &store, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::ErrorStorm))
        return;
    auto evidenceOf = [&store](const std::deque<std::pair<qint64, qint64>> &errors) {
        return newestMessageEvidence(store, errors.size(), [&errors](size_t i) { return errors[i].second; });
    };
    for (auto it = m_agents.cbegin(); it != m_agents.cend(); ++it) {
        const auto &errors = it.value().errors;
        if (int(errors.size()) < (m_rules.errorStormCount + 1) / 2)
            continue; // below even the clearing level
        Alert a = make(AlertKind::ErrorStorm, {it.key()}, errors.front().first,
                       QStringLiteral("%1 error reports (%2 or worse) within %3 s")
                           .arg(int(errors.size()) >= m_rules.errorStormCount ? QStringLiteral("%1 or more").arg(errors.size())
                                                                              : QString::number(errors.size()),
                                m_rules.errorStormMinSeverity, seconds(m_rules.errorStormWindowMs)),
                       evidenceOf(errors));
        const int needed = m_open.count(a.key()) ? (m_rules.errorStormCount + 1) / 2 : m_rules.errorStormCount;
        if (int(errors.size()) >= needed)
            out.emplace(a.key(), a);
    }
    if (m_rules.errorStormSystemCount > 0 && int(m_systemErrors.size()) >= (m_rules.errorStormSystemCount + 1) / 2) {
        Alert a = make(AlertKind::ErrorStorm, {}, m_systemErrors.front().first,
                       QStringLiteral("%1 error reports (%2 or worse) across the system within %3 s")
                           .arg(int(m_systemErrors.size()) >= m_rules.errorStormSystemCount
                                    ? QStringLiteral("%1 or more").arg(m_systemErrors.size()) : QString::number(m_systemErrors.size()),
                                m_rules.errorStormMinSeverity, seconds(m_rules.errorStormWindowMs)),
                       evidenceOf(m_systemErrors), QStringLiteral("system"));
        const int needed = m_open.count(a.key()) ? (m_rules.errorStormSystemCount + 1) / 2 : m_rules.errorStormSystemCount;
        if (int(m_systemErrors.size()) >= needed)
            out.emplace(a.key(), a);
    }
}

void AlertEngine::evaluateBudgets(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::Budget))
        return;
    QHash<QString, double> subtreeCost;
    for (const Agent &agent : store.agents()) {
        const AgentTrack &track = trackOf(agent.id);
        auto evidence = [&] { // built only for an alert
            const QString e = messageEvidence(store, track.costRow);
            return e.isEmpty() ? QStringList{QStringLiteral("agent:") + agent.id} : QStringList{e};
        };
        if (agent.costUsd) {
            const double limit = m_rules.budgetUsdPerRole.value(agent.role, m_rules.budgetUsdPerAgent);
            if (limit > 0 && *agent.costUsd > limit) {
                Alert a = make(AlertKind::Budget, {agent.id}, track.costSamples.empty() ? now : track.costSamples.back().first,
                               QStringLiteral("reports %1 USD, over its limit of %2 USD%3")
                                   .arg(usd(*agent.costUsd), usd(limit),
                                        m_rules.budgetUsdPerRole.contains(agent.role) ? QStringLiteral(" (role %1)").arg(agent.role) : QString()),
                               evidence());
                out.emplace(a.key(), a);
            }
            if (m_rules.budgetUsdPerSubtree > 0) {
                // Add the cost to the agent and every agent above it (at most 64 levels: a parent cycle ends there).
                QString id = agent.id;
                QSet<QString> seen;
                for (int depth = 0; depth < 64 && !id.isEmpty() && !seen.contains(id); ++depth) {
                    seen.insert(id);
                    subtreeCost[id] += *agent.costUsd;
                    const Agent *a = store.agent(id);
                    id = a ? a->parentId : QString();
                }
            }
        }
        if (m_rules.budgetTokensPerAgent > 0 && agent.tokensUsed && *agent.tokensUsed > m_rules.budgetTokensPerAgent) {
            Alert a = make(AlertKind::Budget, {agent.id}, now,
                           QStringLiteral("reports %1 tokens used, over its limit of %2").arg(*agent.tokensUsed).arg(m_rules.budgetTokensPerAgent),
                           evidence(), QStringLiteral("tokens"));
            out.emplace(a.key(), a);
        }
        if (m_rules.budgetUsdPerHour > 0 && track.costSamples.size() >= 2) {
            // The spend over the rate window, from the oldest sample inside it to the newest.
            const auto &newest = track.costSamples.back();
            auto oldest = std::find_if(track.costSamples.begin(), track.costSamples.end(),
                                       [&](const auto &s) { return s.first >= now - m_rules.budgetRateWindowMs; });
            if (oldest != track.costSamples.end() && newest.first - oldest->first >= m_rules.budgetRateWindowMs / 2) {
                const double perHour = (newest.second - oldest->second) * 3600000.0 / double(newest.first - oldest->first);
                if (perHour > m_rules.budgetUsdPerHour) {
                    Alert a = make(AlertKind::Budget, {agent.id}, oldest->first,
                                   QStringLiteral("spends %1 USD per hour, over the limit of %2 USD per hour")
                                       .arg(usd(perHour), usd(m_rules.budgetUsdPerHour)),
                                   evidence(), QStringLiteral("rate"));
                    out.emplace(a.key(), a);
                }
            }
        }
    }
    for (auto it = subtreeCost.cbegin(); it != subtreeCost.cend(); ++it) {
        const QStringList below = store.subtree(it.key());
        if (below.size() < 2 || it.value() <= m_rules.budgetUsdPerSubtree)
            continue; // an agent alone is the per-agent rule's
        Alert a = make(AlertKind::Budget, {it.key()}, now,
                       QStringLiteral("its subtree (%1 agents) reports %2 USD, over the limit of %3 USD")
                           .arg(below.size()).arg(usd(it.value()), usd(m_rules.budgetUsdPerSubtree)),
                       {QStringLiteral("agent:") + it.key()}, QStringLiteral("subtree"));
        out.emplace(a.key(), a);
    }
}

} // namespace mapi
