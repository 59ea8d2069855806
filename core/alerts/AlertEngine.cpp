#include "alerts/AlertEngine.h"

#include "map/AgentStates.h"
#include "model/SystemStore.h"

#include <QHashFunctions>

#include <algorithm>
#include <cmath>

namespace mapi {

namespace {

constexpr QChar kSep = QChar(0x1F);

// The shape of a payload: its type and the names of its keys two levels deep ("payload.task_id"),
// sorted, hashed. Values (ids, times, text) do not count: a loop repeats a shape, not bytes.
// Reads at most the first 64 KiB of the text.
quint64 payloadShape(QByteArrayView text, const QString &type, ConventionKind convention)
{
    std::vector<QByteArray> paths;
    const qsizetype end = std::min<qsizetype>(text.size(), 64 * 1024);
    int depth = 0;
    QByteArray topKey;
    for (qsizetype i = 0; i < end && paths.size() < 128; ++i) {
        const char c = text[i];
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        } else if (c == '"') {
            const qsizetype start = ++i;
            while (i < end && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            const QByteArrayView word = text.sliced(start, std::min(i, end) - start);
            qsizetype j = i + 1;
            while (j < end && (text[j] == ' ' || text[j] == '\n' || text[j] == '\t' || text[j] == '\r'))
                ++j;
            if (j < end && text[j] == ':') { // a key
                if (depth == 1) {
                    topKey = word.toByteArray();
                    paths.push_back(topKey);
                } else if (depth == 2) {
                    paths.push_back(topKey + '.' + word.toByteArray());
                }
            }
        }
    }
    std::sort(paths.begin(), paths.end());
    size_t h = qHash(type, 0) ^ (size_t(convention) * 0x9E3779B97F4A7C15ull);
    for (const QByteArray &p : paths)
        h = qHashMulti(h, p);
    return quint64(h);
}

bool isProgress(ConventionKind kind)
{
    switch (kind) {
    case ConventionKind::TaskAccept:
    case ConventionKind::TaskReject:
    case ConventionKind::TaskHandoff:
    case ConventionKind::TaskUpdate:
    case ConventionKind::TaskComplete:
    case ConventionKind::TaskFailed:
        return true;
    default:
        return false;
    }
}

bool isSettled(const QString &status)
{
    static const QSet<QString> settled = {QStringLiteral("completed"), QStringLiteral("failed"), QStringLiteral("rejected"),
                                          QStringLiteral("cancelled"), QStringLiteral("canceled"), QStringLiteral("done"),
                                          QStringLiteral("succeeded"), QStringLiteral("error")};
    return settled.contains(status.toLower());
}

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

int severityRank(const QString &severity)
{
    const QString s = severity.toUpper();
    if (s == QLatin1String("CRITICAL") || s == QLatin1String("FATAL"))
        return 3;
    if (s == QLatin1String("ERROR"))
        return 2;
    if (s == QLatin1String("WARNING"))
        return 1;
    return s.isEmpty() ? 2 : 0; // an error report without a severity counts as an error
}

QString seconds(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'f', ms % 1000 == 0 ? 0 : 1);
}

QString usd(double amount)
{
    return QString::number(amount, 'f', 2);
}

template<typename Deque>
void pushCapped(Deque &deque, typename Deque::value_type value, size_t cap)
{
    deque.push_back(std::move(value));
    while (deque.size() > cap)
        deque.pop_front();
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
    QString k = alertKindName(kind);
    if (!subject.isEmpty())
        k += u'/' + subject;
    QStringList sorted = agents;
    std::sort(sorted.begin(), sorted.end());
    return k + u':' + sorted.join(u',');
}

Json alertChangeToJson(const AlertChange &change)
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
    m_nextMessage = 0;
    m_nextTask = 0;
    m_agents.clear();
    m_edges.clear();
    m_edgesFrom.clear();
    m_loops.clear();
    m_openTasks.clear();
    m_help.clear();
    m_systemErrors.clear();
}

void AlertEngine::reset()
{
    restartReading();
    m_open.clear();
    m_notTracked = 0;
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
    return a;
}

std::vector<AlertChange> AlertEngine::update(const SystemStore &store)
{
    readMessages(store);
    readTasks(store);
    const qint64 now = store.now();
    pruneWindows(now);

    std::map<QString, Alert> current;
    evaluateAgents(store, now, current);
    evaluateLoops(now, current);
    evaluateDeadlocks(store, now, current);
    evaluateNeedsHuman(store, now, current);
    evaluateErrorStorms(now, current);
    evaluateBudgets(store, now, current);

    std::vector<AlertChange> changes;
    for (const auto &[key, alert] : m_open)
        if (!current.count(key))
            changes.push_back({alert, false, now});
    for (auto &[key, alert] : current) {
        auto open = m_open.find(key);
        if (open == m_open.end())
            changes.push_back({alert, true, now});
        else
            alert.sinceMs = std::min(alert.sinceMs, open->second.sinceMs); // an open alert keeps its start
    }
    m_open = std::move(current);
    return changes;
}

// ---- reading the store ------------------------------------------------------------------------

void AlertEngine::readMessages(const SystemStore &store)
{
    const MessageLog &log = store.messages();
    if (m_nextMessage > log.size()) // the store was reset without restartReading()
        restartReading();
    if (m_nextMessage < log.firstRow()) { // trimmed before they were read
        m_notTracked += qint64(log.firstRow() - m_nextMessage);
        m_nextMessage = log.firstRow();
    }
    for (; m_nextMessage < log.size(); ++m_nextMessage)
        readMessage(store, m_nextMessage);
}

void AlertEngine::readMessage(const SystemStore &store, size_t row)
{
    const MessageLog &log = store.messages();
    const QString &from = log.fromAgentId(row);
    if (from.isEmpty())
        return;
    const qint64 t = log.timestampMs(row);
    const ConventionKind convention = log.convention(row);
    AgentTrack &track = m_agents[from];
    const QString id = log.id(row);

    if (convention == ConventionKind::Heartbeat)
        return; // a sign of life, not of work (the health rules read heartbeats)
    track.lastWorkMs = std::max(track.lastWorkMs, t);
    if (isProgress(convention) || (convention == ConventionKind::StatusUpdate && !log.taskId(row).isEmpty()))
        track.lastTaskProgressMs = std::max(track.lastTaskProgressMs, t);

    // Sending rate.
    rollRateBucket(track, t);
    ++track.bucketCount;
    track.rateEvidence = id;

    // Cost reports.
    if (const std::optional<double> cost = log.costUsd(row)) {
        if (!track.costSamples.empty() && t < track.costSamples.back().first)
            track.costSamples.clear(); // time ran backwards: start the rate over
        track.costSamples.emplace_back(t, *cost);
        if (track.costSamples.size() > kMaxCostSamples) { // thin: keep every other one, the newest always
            std::deque<std::pair<qint64, double>> thinned;
            for (size_t i = 0; i < track.costSamples.size(); ++i)
                if (i % 2 == 1 || i + 1 == track.costSamples.size())
                    thinned.push_back(track.costSamples[i]);
            track.costSamples.swap(thinned);
        }
        track.costEvidence = id;
    }

    switch (convention) {
    case ConventionKind::ErrorReport: {
        // The severity is not in the row: read it from the payload (error reports are rare).
        const ConventionInfo info = interpretPayloadText(store.messagePayload(int(row)));
        if (severityRank(info.severity) >= severityRank(m_rules.errorStormMinSeverity)) {
            const QString evidence = QStringLiteral("message:") + id;
            pushCapped(track.errors, {t, evidence}, size_t(std::max(1, m_rules.errorStormCount)));
            if (m_rules.errorStormSystemCount > 0)
                pushCapped(m_systemErrors, {t, evidence}, size_t(m_rules.errorStormSystemCount));
        }
        break;
    }
    case ConventionKind::HelpRequest: {
        HelpRequest request;
        request.requester = from;
        if (log.recipientCount(row) == 1)
            request.helper = log.recipient(row, 0);
        request.messageId = id;
        request.taskId = log.taskId(row);
        request.timeMs = t;
        m_help.push_back(request);
        if (m_help.size() > size_t(kMaxOpenHelpRequests)) {
            m_help.pop_front();
            ++m_notTracked;
        }
        break;
    }
    case ConventionKind::HelpResponse: {
        // Answers the requester's oldest open request to this helper (or to no agent in particular,
        // or about the same task).
        const int recipients = log.recipientCount(row);
        const QString taskId = log.taskId(row);
        for (int r = 0; r < recipients; ++r) {
            const QString &requester = log.recipient(row, r);
            auto it = std::find_if(m_help.begin(), m_help.end(), [&](const HelpRequest &h) {
                return h.requester == requester
                    && (h.helper == from || h.helper.isEmpty() || (!taskId.isEmpty() && h.taskId == taskId));
            });
            if (it != m_help.end())
                m_help.erase(it);
        }
        break;
    }
    default:
        break;
    }

    // Loops: one sender, one recipient, a message that is not task progress.
    if (!isProgress(convention) && log.recipientCount(row) == 1) {
        const QString &to = log.recipient(row, 0);
        if (to != from) {
            const QByteArrayView payload = log.payloadText(row);
            const QString &type = log.payloadType(row);
            noteLoopEdge(from, to, payloadShape(payload, type, convention), type.isEmpty() ? conventionName(convention) : type,
                         t, id);
        }
    }
}

void AlertEngine::noteLoopEdge(const QString &from, const QString &to, quint64 shape, const QString &type, qint64 t,
                               const QString &id)
{
    const QString shapeKey = QString::number(shape, 16);
    const QString key = from + kSep + to + kSep + shapeKey;
    auto edge = m_edges.find(key);
    if (edge == m_edges.end()) {
        if (m_edges.size() >= kMaxLoopEdges) {
            ++m_notTracked;
            return;
        }
        edge = m_edges.insert(key, Edge());
        m_edgesFrom[from + kSep + shapeKey].insert(to);
    }
    pushCapped(edge->times, {t, id}, size_t(std::max(2, m_rules.loopExchanges)));
    if (!enabled(AlertKind::Loop))
        return;

    // A pair: the way back exists. A ring of three: to → x and x → from exist.
    auto remember = [&](QStringList ring) {
        // Shown from its smallest id on, in sending order: the same ring reads the same way.
        std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
        LoopGroup group;
        group.ring = ring;
        group.shape = shape;
        group.shapeText = type;
        std::sort(ring.begin(), ring.end());
        Alert probe;
        probe.kind = AlertKind::Loop;
        probe.agents = ring;
        probe.subject = shapeKey;
        m_loops.emplace(probe.key(), group);
    };
    if (m_edges.contains(to + kSep + from + kSep + shapeKey))
        remember({from, to});
    const auto next = m_edgesFrom.constFind(to + kSep + shapeKey);
    if (next != m_edgesFrom.cend()) {
        int looked = 0;
        for (const QString &x : *next) {
            if (++looked > 64) // a hub that talks to many: rings through it are looked for among the first 64
                break;
            if (x != from && x != to && m_edges.contains(x + kSep + from + kSep + shapeKey))
                remember({from, to, x});
        }
    }
}

void AlertEngine::rollRateBucket(AgentTrack &track, qint64 t) const
{
    const qint64 window = m_rules.loopWindowMs;
    if (track.bucketStartMs == 0) {
        track.bucketStartMs = t;
        return;
    }
    if (t < track.bucketStartMs + window)
        return;
    // Close the current window, and the empty ones after it (at most 50: the usual count has
    // decayed to nothing by then).
    constexpr double kWeight = 0.2; // each window's share of the usual count
    const qint64 windows = (t - track.bucketStartMs) / window;
    for (qint64 i = 0; i < std::min<qint64>(windows, 50); ++i) {
        const double count = i == 0 ? double(track.bucketCount) : 0.0;
        track.usualCount = track.bucketsClosed == 0 ? count : (1 - kWeight) * track.usualCount + kWeight * count;
        ++track.bucketsClosed;
    }
    track.bucketStartMs += windows * window;
    track.bucketCount = 0;
}

void AlertEngine::readTasks(const SystemStore &store)
{
    const std::vector<Task> &tasks = store.tasks();
    if (m_nextTask > tasks.size())
        restartReading();
    for (; m_nextTask < tasks.size(); ++m_nextTask)
        if (!isSettled(tasks[m_nextTask].status))
            m_openTasks.insert(int(m_nextTask), 0);
    for (auto it = m_openTasks.begin(); it != m_openTasks.end();) {
        const Task &task = tasks[size_t(it.key())];
        if (task.updatedAtMs > it.value()) {
            it.value() = task.updatedAtMs;
            if (!task.assigneeId.isEmpty() && task.status != QLatin1String("requested")) {
                AgentTrack &track = m_agents[task.assigneeId];
                track.lastTaskProgressMs = std::max(track.lastTaskProgressMs, task.updatedAtMs);
            }
        }
        if (isSettled(task.status))
            it = m_openTasks.erase(it);
        else
            ++it;
    }
}

void AlertEngine::pruneWindows(qint64 now)
{
    const qint64 since = now - m_rules.loopWindowMs;
    for (auto it = m_edges.begin(); it != m_edges.end();) {
        while (!it->times.empty() && it->times.front().first < since)
            it->times.pop_front();
        if (it->times.empty()) {
            const QStringList parts = it.key().split(kSep);
            auto from = m_edgesFrom.find(parts[0] + kSep + parts[2]);
            if (from != m_edgesFrom.end()) {
                from->remove(parts[1]);
                if (from->isEmpty())
                    m_edgesFrom.erase(from);
            }
            it = m_edges.erase(it);
        } else {
            ++it;
        }
    }
    const qint64 errorsSince = now - m_rules.errorStormWindowMs;
    for (AgentTrack &track : m_agents) {
        while (!track.errors.empty() && track.errors.front().first < errorsSince)
            track.errors.pop_front();
        rollRateBucket(track, now); // a quiet agent's window closes too
    }
    while (!m_systemErrors.empty() && m_systemErrors.front().first < errorsSince)
        m_systemErrors.pop_front();
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
        const bool busyState = classifyState(agent.state) == StateClass::Busy;
        const bool busyHeartbeat = agent.heartbeatStatus.compare(QLatin1String("BUSY"), Qt::CaseInsensitive) == 0;
        if (!busyState && !busyHeartbeat && tasks.isEmpty())
            continue;
        const AgentTrack track = m_agents.value(agent.id);
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
}

void AlertEngine::evaluateLoops(qint64 now, std::map<QString, Alert> &out)
{
    const qint64 since = now - m_rules.loopWindowMs;
    if (enabled(AlertKind::Loop)) {
        for (auto it = m_loops.begin(); it != m_loops.end();) {
            const LoopGroup &group = it->second;
            const QString shapeKey = QString::number(group.shape, 16);
            int exchanges = 0;
            bool everyEdge = true;
            qint64 first = now;
            QStringList evidence;
            for (int i = 0; i < group.ring.size(); ++i) {
                const auto edge = m_edges.constFind(group.ring[i] + kSep + group.ring[(i + 1) % group.ring.size()] + kSep + shapeKey);
                if (edge == m_edges.cend() || edge->times.empty()) {
                    everyEdge = false;
                    break;
                }
                for (const auto &[t, id] : edge->times) {
                    if (t >= since) {
                        ++exchanges;
                        first = std::min(first, t);
                        evidence << QStringLiteral("message:") + id;
                    }
                }
            }
            bool progress = false;
            for (const QString &agent : group.ring)
                progress = progress || m_agents.value(agent).lastTaskProgressMs >= since;
            // Raised at loopExchanges, cleared below half of it (no flapping at the threshold).
            const int needed = m_open.count(it->first) ? (m_rules.loopExchanges + 1) / 2 : m_rules.loopExchanges;
            if (!everyEdge || exchanges < needed || progress) {
                if (!everyEdge || exchanges == 0)
                    it = m_loops.erase(it);
                else
                    ++it;
                continue;
            }
            QStringList agents = group.ring;
            std::sort(agents.begin(), agents.end());
            const QStringList shown = group.ring + QStringList{group.ring.first()};
            Alert a = make(AlertKind::Loop, agents, first,
                           QStringLiteral("%1 \"%2\" messages of one shape within %3 s around %4, no task progress")
                               .arg(exchanges).arg(group.shapeText, seconds(m_rules.loopWindowMs), shown.join(QStringLiteral(" → "))),
                           evidence, shapeKey);
            out.emplace(it->first, a);
            ++it;
        }
    }
    if (!enabled(AlertKind::Loop))
        return;
    // One agent sending far above its usual rate.
    for (auto it = m_agents.cbegin(); it != m_agents.cend(); ++it) {
        const AgentTrack &track = it.value();
        if (track.bucketsClosed < m_rules.loopRateBaselineWindows)
            continue;
        const double threshold = std::max(double(m_rules.loopRateMinMessages), m_rules.loopRateFactor * std::max(track.usualCount, 1.0));
        Alert a = make(AlertKind::Loop, {it.key()}, track.bucketStartMs,
                       QStringLiteral("%1 messages within %2 s, %3 times its usual %4")
                           .arg(track.bucketCount).arg(seconds(m_rules.loopWindowMs))
                           .arg(QString::number(double(track.bucketCount) / std::max(track.usualCount, 1.0), 'f', 0))
                           .arg(QString::number(track.usualCount, 'f', 1)),
                       {QStringLiteral("message:") + track.rateEvidence}, QStringLiteral("rate"));
        const bool open = m_open.count(a.key()) > 0;
        if (track.bucketCount >= (open ? threshold / 2 : threshold))
            out.emplace(a.key(), a);
    }
}

void AlertEngine::evaluateDeadlocks(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::Deadlock))
        return;
    // Waits open long enough: waiter → awaited, with what it waits on.
    struct Wait { QString on; QString evidence; qint64 sinceMs; };
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
            waits[waiter].push_back({task.assigneeId, QStringLiteral("task:") + task.id, task.updatedAtMs});
    }
    for (const HelpRequest &h : m_help)
        if (!h.helper.isEmpty() && h.timeMs <= before && h.helper != h.requester)
            waits[h.requester].push_back({h.helper, QStringLiteral("message:") + h.messageId, h.timeMs});
    if (waits.isEmpty())
        return;

    // Find cycles: depth-first from each waiter, in sorted order so the same cycle reads the same way.
    QStringList starts = waits.keys();
    std::sort(starts.begin(), starts.end());
    QSet<QString> done;
    for (const QString &start : starts) {
        if (done.contains(start))
            continue;
        // Iterative DFS keeping the path.
        QStringList path;
        QHash<QString, int> onPath;
        std::vector<std::pair<QString, size_t>> stack{{start, 0}};
        path << start;
        onPath.insert(start, 0);
        while (!stack.empty()) {
            auto &[node, next] = stack.back();
            const std::vector<Wait> &out_ = waits.value(node);
            if (next >= out_.size()) {
                done.insert(node);
                onPath.remove(node);
                path.removeLast();
                stack.pop_back();
                continue;
            }
            const Wait &w = out_[next++];
            if (onPath.contains(w.on)) { // a cycle: path from w.on to node
                const QStringList cycle = path.mid(onPath.value(w.on));
                QStringList evidence;
                qint64 since = 0;
                for (int i = 0; i < cycle.size(); ++i) {
                    const QString &a = cycle[i];
                    const QString &b = cycle[(i + 1) % cycle.size()];
                    for (const Wait &x : waits.value(a))
                        if (x.on == b) {
                            evidence << x.evidence;
                            since = std::max(since, x.sinceMs);
                            break;
                        }
                }
                const QStringList shown = cycle + QStringList{cycle.first()};
                Alert alert = make(AlertKind::Deadlock, cycle, since,
                                   QStringLiteral("%1 wait on each other for %2 s: %3")
                                       .arg(cycle.size() == 2 ? QStringLiteral("two agents") : QStringLiteral("%1 agents").arg(cycle.size()),
                                            seconds(now - since), shown.join(QStringLiteral(" waits on "))),
                                   evidence);
                out.emplace(alert.key(), alert);
                continue;
            }
            if (done.contains(w.on) || !waits.contains(w.on))
                continue;
            onPath.insert(w.on, int(path.size()));
            path << w.on;
            stack.emplace_back(w.on, 0);
        }
    }
}

void AlertEngine::evaluateNeedsHuman(const SystemStore &store, qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::NeedsHuman))
        return;
    const qint64 before = now - m_rules.needsHumanAfterMs;
    QHash<QString, std::pair<qint64, QStringList>> asking; // requester → oldest request, evidence
    for (const HelpRequest &h : m_help) {
        if (h.timeMs > before)
            continue;
        if (const Agent *a = store.agent(h.requester); a && a->unregistered)
            continue;
        auto &entry = asking[h.requester];
        if (entry.second.isEmpty())
            entry.first = h.timeMs;
        entry.second << QStringLiteral("message:") + h.messageId;
    }
    for (auto it = asking.cbegin(); it != asking.cend(); ++it) {
        Alert a = make(AlertKind::NeedsHuman, {it.key()}, it.value().first,
                       QStringLiteral("%1 help request%2 unanswered for %3 s")
                           .arg(it.value().second.size()).arg(it.value().second.size() > 1 ? QStringLiteral("s") : QString(),
                                                               seconds(now - it.value().first)),
                       it.value().second);
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

void AlertEngine::evaluateErrorStorms(qint64 now, std::map<QString, Alert> &out)
{
    if (!enabled(AlertKind::ErrorStorm))
        return;
    Q_UNUSED(now);
    auto evidenceOf = [](const std::deque<std::pair<qint64, QString>> &errors) {
        QStringList ids;
        for (const auto &e : errors)
            ids << e.second;
        return ids;
    };
    for (auto it = m_agents.cbegin(); it != m_agents.cend(); ++it) {
        const auto &errors = it.value().errors;
        if (errors.empty())
            continue;
        Alert a = make(AlertKind::ErrorStorm, {it.key()}, errors.front().first,
                       QStringLiteral("%1 error reports (%2 or worse) within %3 s")
                           .arg(errors.size()).arg(m_rules.errorStormMinSeverity, seconds(m_rules.errorStormWindowMs)),
                       evidenceOf(errors));
        const int needed = m_open.count(a.key()) ? (m_rules.errorStormCount + 1) / 2 : m_rules.errorStormCount;
        if (int(errors.size()) >= needed)
            out.emplace(a.key(), a);
    }
    if (m_rules.errorStormSystemCount > 0 && !m_systemErrors.empty()) {
        Alert a = make(AlertKind::ErrorStorm, {}, m_systemErrors.front().first,
                       QStringLiteral("%1 error reports (%2 or worse) across the system within %3 s")
                           .arg(m_systemErrors.size()).arg(m_rules.errorStormMinSeverity, seconds(m_rules.errorStormWindowMs)),
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
        const AgentTrack track = m_agents.value(agent.id);
        const QStringList evidence = track.costEvidence.isEmpty() ? QStringList{QStringLiteral("agent:") + agent.id}
                                                                  : QStringList{QStringLiteral("message:") + track.costEvidence};
        if (agent.costUsd) {
            const double limit = m_rules.budgetUsdPerRole.value(agent.role, m_rules.budgetUsdPerAgent);
            if (limit > 0 && *agent.costUsd > limit) {
                Alert a = make(AlertKind::Budget, {agent.id}, track.costSamples.empty() ? now : track.costSamples.back().first,
                               QStringLiteral("reports %1 USD, over its limit of %2 USD%3")
                                   .arg(usd(*agent.costUsd), usd(limit),
                                        m_rules.budgetUsdPerRole.contains(agent.role) ? QStringLiteral(" (role %1)").arg(agent.role) : QString()),
                               evidence);
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
                           evidence, QStringLiteral("tokens"));
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
                                   evidence, QStringLiteral("rate"));
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
